-- Per-viewer consent to an app block's scopes (the platform's app_user_scope_grants, read at every
-- block-token mint). One row per (viewer, app block); granted_scopes only grows (a grant is additive),
-- and a non-NULL revoked_at reads as no grant at all. The emulator's app block id is <appId>/<blockId>.
CREATE TABLE app_user_scope_grants (
    user_id         INTEGER NOT NULL,
    app_block_id    TEXT NOT NULL CHECK (length(app_block_id) BETWEEN 1 AND 200),
    version         TEXT NOT NULL DEFAULT '',            -- the block version the consent was taken against
    granted_scopes  TEXT NOT NULL DEFAULT '[]',          -- JSON array of block scope ids
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    revoked_at      TEXT,                                -- set: the grant is withdrawn (reads as empty)
    PRIMARY KEY (user_id, app_block_id)
) STRICT;
