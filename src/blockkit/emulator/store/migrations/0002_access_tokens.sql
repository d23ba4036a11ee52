-- 0002: OAuth clients and access tokens (the first version of the emulator's auth), and the
-- columns the models family needs beyond 0001.
--
-- Tokens are never stored in the clear: token_hash is the sha256 hex digest of the raw
-- token, and a bearer token is looked up by that digest. The OAuth provider (issue 11)
-- extends these tables in a later migration (redirect URIs, codes, refresh tokens, ...).

CREATE TABLE oauth_clients (
    id              TEXT PRIMARY KEY,
    name            TEXT NOT NULL,
    secret_hash     TEXT,                                  -- NULL: a public client
    owner_user_id   INTEGER NOT NULL REFERENCES users (id),
    allowed_scopes  INTEGER NOT NULL CHECK (allowed_scopes >= 0),
    created_at      TEXT NOT NULL
) STRICT;

CREATE TABLE oauth_access_tokens (
    id                INTEGER PRIMARY KEY,
    token_hash        TEXT NOT NULL UNIQUE CHECK (length(token_hash) = 64),   -- sha256 hex of the raw token
    client_id         TEXT REFERENCES oauth_clients (id),                      -- NULL: minted by the CLI
    user_id           INTEGER NOT NULL REFERENCES users (id),
    scope             INTEGER NOT NULL CHECK (scope >= 0),                     -- OAuth bitmask
    created_at        TEXT NOT NULL,
    expires_at        TEXT NOT NULL,
    revoked_at        TEXT,                                                    -- set: revoked
    refresh_token_id  INTEGER                                                  -- the refresh token that minted it
) STRICT;

CREATE INDEX oauth_access_tokens_user ON oauth_access_tokens (user_id, client_id);
