-- Orchestration money safety and WorkflowTemplate members the service now keeps.
--
-- workflows.external_id: WorkflowTemplate.externalId, unique per owner (the same key twice
-- answers the first workflow and charges once).
-- recipe_jobs: one row per paid recipe run (imageUpscaler). The row and its charge commit
-- together ('running'); the result's blob and 'succeeded' commit together. A row still
-- 'running' when the emulator starts was cut short by a crash: it is refunded ('refunded')
-- with a ledger row whose reference is the job id.
-- workflow_events: the callback outbox. A workflow's events are written with the workflow
-- (each due at its moment on the emulator clock); a background worker POSTs them to the
-- callback URLs, with retries, and marks them delivered or failed.

ALTER TABLE workflows ADD COLUMN external_id TEXT;

CREATE UNIQUE INDEX workflows_external_id ON workflows (user_id, external_id) WHERE external_id IS NOT NULL;

CREATE TABLE recipe_jobs (
    id           TEXT PRIMARY KEY,                              -- uuid4; the ledger reference
    user_id      INTEGER NOT NULL REFERENCES users (id),
    recipe       TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'refunded')),
    cost         INTEGER NOT NULL,
    debits       TEXT NOT NULL,                                 -- JSON {pool: amount}
    blob_id      TEXT,
    created_at   TEXT NOT NULL,
    finished_at  TEXT
) STRICT;

CREATE INDEX recipe_jobs_running ON recipe_jobs (status) WHERE status = 'running';

CREATE TABLE workflow_events (
    id           INTEGER PRIMARY KEY,
    workflow_id  TEXT NOT NULL,
    url          TEXT NOT NULL,
    event_type   TEXT NOT NULL,                                 -- workflow:succeeded, step:processing, ...
    body         TEXT NOT NULL,                                 -- the JSON the receiver gets
    due_at       TEXT NOT NULL,                                 -- emulator clock
    state        TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed', 'dropped')),
    attempts     INTEGER NOT NULL DEFAULT 0,
    next_try     REAL NOT NULL DEFAULT 0,                       -- wall-clock seconds (retry back-off)
    last_error   TEXT
) STRICT;

CREATE INDEX workflow_events_pending ON workflow_events (due_at) WHERE state = 'pending';
