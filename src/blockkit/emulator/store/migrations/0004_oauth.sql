-- 0004: the OAuth provider and block tokens.
--
-- Every secret is stored as the sha256 hex digest of its raw value (client secrets,
-- authorization codes, refresh tokens, session ids), like the access tokens of 0002: a copy
-- of the database holds nothing a caller can present. Times are the store's timestamp form
-- (UTC, milliseconds, 'Z'), read from the emulator clock, so text order is time order.

-- Clients: what 'blockkit emulator client add' registers. secret_hash (0002) is NULL exactly
-- for a public client; is_confidential states it for readers.
ALTER TABLE oauth_clients ADD COLUMN is_confidential INTEGER NOT NULL DEFAULT 0
    CHECK (is_confidential BETWEEN 0 AND 1);
ALTER TABLE oauth_clients ADD COLUMN redirect_uris TEXT NOT NULL DEFAULT '[]';     -- JSON array, exact strings
ALTER TABLE oauth_clients ADD COLUMN allowed_origins TEXT NOT NULL DEFAULT '[]';   -- JSON array of origins

-- Authorization codes: single use (used_at), 10 minutes, bound to the client, the user,
-- the redirect_uri and the PKCE challenge (S256 only).
CREATE TABLE oauth_codes (
    id                     INTEGER PRIMARY KEY,
    code_hash              TEXT NOT NULL UNIQUE CHECK (length(code_hash) = 64),
    client_id              TEXT NOT NULL REFERENCES oauth_clients (id),
    user_id                INTEGER NOT NULL REFERENCES users (id),
    scope                  INTEGER NOT NULL CHECK (scope >= 0),
    redirect_uri           TEXT NOT NULL,
    code_challenge         TEXT NOT NULL,
    code_challenge_method  TEXT NOT NULL CHECK (code_challenge_method = 'S256'),
    created_at             TEXT NOT NULL,
    expires_at             TEXT NOT NULL,
    used_at                TEXT
) STRICT;

-- Refresh tokens. A grant (a code exchange) starts a family; each refresh rotates: the
-- presented token gets rotated_at and a child (parent_id) is issued in the same family.
-- Presenting a rotated token again revokes the whole family (reuse detection).
CREATE TABLE oauth_refresh_tokens (
    id          INTEGER PRIMARY KEY,
    token_hash  TEXT NOT NULL UNIQUE CHECK (length(token_hash) = 64),
    client_id   TEXT NOT NULL REFERENCES oauth_clients (id),
    user_id     INTEGER NOT NULL REFERENCES users (id),
    scope       INTEGER NOT NULL CHECK (scope >= 0),
    family_id   INTEGER NOT NULL,              -- id of the family's first token
    parent_id   INTEGER REFERENCES oauth_refresh_tokens (id),
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    rotated_at  TEXT,                          -- set: replaced by a child; presenting it is reuse
    revoked_at  TEXT
) STRICT;

CREATE INDEX oauth_refresh_tokens_family ON oauth_refresh_tokens (family_id);
CREATE INDEX oauth_access_tokens_refresh ON oauth_access_tokens (refresh_token_id);

-- Consent a user gave a client with 'remember': the scope they approved and the Buzz spend
-- limit (JSON: an array of budgets, or NULL for no limit).
CREATE TABLE oauth_consents (
    user_id     INTEGER NOT NULL REFERENCES users (id),
    client_id   TEXT NOT NULL REFERENCES oauth_clients (id),
    scope       INTEGER NOT NULL CHECK (scope >= 0),
    buzz_limit  TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (user_id, client_id)
) STRICT;

-- Browser sessions of the sign-in page (the session cookie holds the raw id). csrf_token
-- is the per-session token the consent form carries.
CREATE TABLE oauth_sessions (
    id            INTEGER PRIMARY KEY,
    session_hash  TEXT NOT NULL UNIQUE CHECK (length(session_hash) = 64),
    user_id       INTEGER NOT NULL REFERENCES users (id),
    csrf_token    TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    expires_at    TEXT NOT NULL,
    ended_at      TEXT
) STRICT;

-- Fixed-window rate-limit counters (one row per bucket and key), windows on the emulator clock.
CREATE TABLE rate_limits (
    bucket        TEXT NOT NULL,               -- authorize, token, revoke, block-tokens
    key           TEXT NOT NULL,               -- user id, client_id, IP
    window_start  INTEGER NOT NULL,            -- POSIX seconds, a multiple of the window
    count         INTEGER NOT NULL,
    PRIMARY KEY (bucket, key)
) STRICT, WITHOUT ROWID;

-- Block instances the emulated host may mint tokens for (blockkit dev registers its block;
-- tests register their own). enabled = 0: uninstalled or disabled.
CREATE TABLE block_instances (
    id                   TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 64),
    block_id             TEXT NOT NULL,
    app_id               TEXT NOT NULL,
    scopes               TEXT NOT NULL DEFAULT '[]',    -- JSON array of block scope ids
    buzz_budget_per_gen  INTEGER,                       -- NULL: the platform default
    slot_id              TEXT NOT NULL,
    model_id             INTEGER,                       -- a model slot's model; NULL on a page
    installed_by         INTEGER REFERENCES users (id),
    enabled              INTEGER NOT NULL DEFAULT 1 CHECK (enabled BETWEEN 0 AND 1),
    created_at           TEXT NOT NULL
) STRICT;

-- Per-instance revocation: tokens of the instance issued at or before revoked_at are refused.
CREATE TABLE block_token_revocations (
    block_instance_id  TEXT PRIMARY KEY,
    revoked_at         TEXT NOT NULL,
    reason             TEXT NOT NULL
) STRICT;

-- The block-token signing key: the private key is a file in the data directory (mode 0600);
-- this row names it and its key id (kid) as published in the JWKS.
CREATE TABLE block_signing_keys (
    kid         TEXT PRIMARY KEY,
    algorithm   TEXT NOT NULL CHECK (algorithm = 'RS256'),
    filename    TEXT NOT NULL,
    created_at  TEXT NOT NULL
) STRICT;
