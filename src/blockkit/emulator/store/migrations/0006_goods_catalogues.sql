-- The goods catalogue each app sells (its manifest's `goods`) and the app's owner, so the
-- purchase route can price a good from the server side, as the platform does.
CREATE TABLE goods_catalogues (
    app_id         TEXT PRIMARY KEY,
    block_id       TEXT NOT NULL,
    owner_user_id  INTEGER REFERENCES users (id),
    goods          TEXT NOT NULL,                               -- JSON: the manifest's goods array
    updated_at     TEXT NOT NULL
) STRICT;
