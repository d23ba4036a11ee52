-- Idempotency keys (goods purchases' `idempotencyKey`): the first answer, stored in the same
-- write transaction as the purchase it answers, replayed to every retry until it expires.
-- One row per (scope, viewer, app, key); a stored answer is never overwritten.
CREATE TABLE idempotency_keys (
    scope        TEXT NOT NULL,                                 -- what the key names: 'goods.purchase'
    user_id      INTEGER NOT NULL,
    app_id       TEXT NOT NULL,
    key          TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,                                 -- JSON of the request's payload
    status       INTEGER NOT NULL,                              -- the first answer's HTTP status
    answer       TEXT NOT NULL,                                 -- the first answer's body, JSON
    created_at   TEXT NOT NULL,
    expires_at   TEXT NOT NULL,                                 -- emulator clock; the key is free after it
    PRIMARY KEY (scope, user_id, app_id, key)
) STRICT;

CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
