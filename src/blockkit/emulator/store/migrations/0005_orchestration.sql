-- 0005: the orchestration service and the platform-side services of issue 12: orchestration API
-- keys, funds and their deposits, stored blobs (upscales, generations), Buzz pools and their
-- ledger, workflows, goods purchases (the sales ledger), app storage and shared boards.
--
-- Amounts are whole Buzz. Times are the store's timestamp form (clock.format_timestamp), so
-- text order is time order. Keys, like tokens, are stored as sha256 hex only.

CREATE TABLE orchestration_api_keys (
    id          INTEGER PRIMARY KEY,
    key_hash    TEXT NOT NULL UNIQUE CHECK (length(key_hash) = 64),
    user_id     INTEGER NOT NULL REFERENCES users (id),
    created_at  TEXT NOT NULL,
    revoked_at  TEXT
) STRICT;

CREATE TABLE funds (
    id                    TEXT PRIMARY KEY,                     -- uuid4
    owner_user_id         INTEGER NOT NULL REFERENCES users (id),
    allow_mature_content  INTEGER NOT NULL CHECK (allow_mature_content BETWEEN 0 AND 1),
    description           TEXT,
    created_at            TEXT NOT NULL,
    expires_at            TEXT NOT NULL
) STRICT;

CREATE TABLE fund_deposits (
    id             INTEGER PRIMARY KEY,
    fund_id        TEXT NOT NULL REFERENCES funds (id),
    user_id        INTEGER NOT NULL REFERENCES users (id),
    account_type   TEXT NOT NULL CHECK (account_type IN ('yellow', 'blue', 'green', 'fakeRed')),
    amount         INTEGER NOT NULL CHECK (amount > 0),
    created_at     TEXT NOT NULL
) STRICT;

CREATE TABLE blobs (
    id          TEXT PRIMARY KEY,                               -- also the file name stem
    user_id     INTEGER REFERENCES users (id),
    filename    TEXT NOT NULL,                                  -- under <data>/blobs/
    media_type  TEXT NOT NULL,
    width       INTEGER NOT NULL,
    height      INTEGER NOT NULL,
    created_at  TEXT NOT NULL
) STRICT;

CREATE TABLE buzz_accounts (
    user_id  INTEGER NOT NULL REFERENCES users (id),
    pool     TEXT NOT NULL CHECK (pool IN ('blue', 'green', 'yellow')),
    balance  INTEGER NOT NULL CHECK (balance >= 0),
    PRIMARY KEY (user_id, pool)
) STRICT;

CREATE TABLE buzz_transactions (
    id          INTEGER PRIMARY KEY,
    user_id     INTEGER NOT NULL REFERENCES users (id),
    pool        TEXT NOT NULL CHECK (pool IN ('blue', 'green', 'yellow')),
    amount      INTEGER NOT NULL,                               -- + credit, - debit
    kind        TEXT NOT NULL,                                  -- purchase, workflow, refund, good, seed, ...
    reference   TEXT,                                           -- workflow id, purchase id, ...
    description TEXT,
    created_at  TEXT NOT NULL
) STRICT;

CREATE INDEX buzz_transactions_user ON buzz_transactions (user_id, id);

CREATE TABLE workflows (
    id           TEXT PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES users (id),
    app_id       TEXT,
    block_id     TEXT,
    status       TEXT NOT NULL,                                 -- the stored terminal override (canceled) or 'timed'
    created_at   TEXT NOT NULL,
    canceled_at  TEXT,
    cost         INTEGER NOT NULL,
    document     TEXT NOT NULL                                  -- JSON: template, steps, schedule, debits
) STRICT;

CREATE INDEX workflows_user ON workflows (user_id, app_id, created_at);

CREATE TABLE goods_purchases (
    id              TEXT PRIMARY KEY,                           -- uuid4
    user_id         INTEGER NOT NULL REFERENCES users (id),
    app_id          TEXT NOT NULL,
    block_id        TEXT NOT NULL,
    good_id         TEXT NOT NULL,
    kind            TEXT NOT NULL CHECK (kind IN ('good', 'app_unlock')),
    title           TEXT NOT NULL,
    price           INTEGER NOT NULL CHECK (price > 0),
    platform_amount INTEGER NOT NULL,
    owner_amount    INTEGER NOT NULL,
    owner_user_id   INTEGER REFERENCES users (id),
    payload         TEXT,                                       -- the good's payload, JSON, verbatim
    debits          TEXT NOT NULL,                              -- JSON {pool: amount}
    created_at      TEXT NOT NULL,
    refund_state    TEXT NOT NULL DEFAULT 'none' CHECK (refund_state IN ('none', 'refunded')),
    refunded_at     TEXT
) STRICT;

CREATE INDEX goods_purchases_user ON goods_purchases (user_id, created_at);

CREATE TABLE app_storage (
    block_id    TEXT NOT NULL,
    user_id     INTEGER NOT NULL,
    key         TEXT NOT NULL,
    value       TEXT NOT NULL,                                  -- JSON
    size        INTEGER NOT NULL,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (block_id, user_id, key)
) STRICT;

CREATE TABLE shared_entries (
    id          INTEGER PRIMARY KEY,
    block_id    TEXT NOT NULL,
    board       TEXT NOT NULL,
    user_id     INTEGER NOT NULL REFERENCES users (id),
    value       TEXT NOT NULL,                                  -- JSON
    size        INTEGER NOT NULL,
    status      TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'withdrawn', 'hidden')),
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
) STRICT;

CREATE INDEX shared_entries_board ON shared_entries (block_id, board, status, id);

CREATE TABLE shared_votes (
    entry_id  INTEGER NOT NULL REFERENCES shared_entries (id),
    user_id   INTEGER NOT NULL REFERENCES users (id),
    PRIMARY KEY (entry_id, user_id)
) STRICT;

CREATE TABLE shared_reports (
    entry_id    INTEGER NOT NULL REFERENCES shared_entries (id),
    user_id     INTEGER NOT NULL REFERENCES users (id),
    reason      TEXT,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (entry_id, user_id)
) STRICT;
