-- Block tokens this store issued, by jti: a block token is valid only while its row is here, so a
-- reset, a re-seed or an import takes the tokens minted since with the rest of the rows (as it
-- does OAuth tokens), and an export carries the ones it holds. Rows are purged once expired.
CREATE TABLE block_tokens (
    jti                TEXT PRIMARY KEY,
    block_instance_id  TEXT NOT NULL,
    issued_at          INTEGER NOT NULL,   -- the token's iat (emulator clock, POSIX seconds)
    expires_at         INTEGER NOT NULL    -- its exp
) STRICT, WITHOUT ROWID;

CREATE INDEX block_tokens_expiry ON block_tokens (expires_at);
