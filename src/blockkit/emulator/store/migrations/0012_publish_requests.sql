-- 0012: publish requests, the submissions of a block's bundle for review (the platform's
-- AppBlockPublishRequest). A request is pending until a moderator approves or rejects it, or its
-- submitter withdraws it. The bundle is kept here (the platform keeps it in object storage), so an
-- export carries it and an approved version can be served again.

CREATE TABLE publish_requests (
    id                     TEXT PRIMARY KEY,                           -- pubreq_<26 characters>
    slug                   TEXT NOT NULL,                              -- the manifest's blockId
    version                TEXT NOT NULL,                              -- the manifest's version
    name                   TEXT NOT NULL,                              -- the manifest's name
    submitted_by_user_id   INTEGER NOT NULL REFERENCES users (id),
    status                 TEXT NOT NULL
                           CHECK (status IN ('pending', 'approved', 'rejected', 'withdrawn')),
    manifest               TEXT NOT NULL,                              -- the bundle's manifest (JSON)
    bundle_base64          TEXT NOT NULL,                              -- the zip as submitted (base64, as sent:
                                                                       -- an export's JSON lines carry it as is)
    bundle_sha256          TEXT NOT NULL CHECK (length(bundle_sha256) = 64),
    bundle_size_bytes      INTEGER NOT NULL CHECK (bundle_size_bytes > 0),
    file_summary           TEXT NOT NULL,                              -- {added, removed, changed, ...} (JSON)
    manifest_diff_summary  TEXT NOT NULL,                              -- (JSON)
    rejection_reason       TEXT,
    approval_notes         TEXT,
    reviewed_at            TEXT,
    submitted_at           TEXT NOT NULL,
    updated_at             TEXT NOT NULL
) STRICT;

-- One pending request per slug at a time, as the platform's partial unique index.
CREATE UNIQUE INDEX publish_requests_one_pending_per_slug ON publish_requests (slug) WHERE status = 'pending';
