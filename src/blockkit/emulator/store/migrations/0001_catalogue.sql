-- 0001: every catalogue resource of spec/catalogue-and-oauth.md, normalised.
--
-- Conventions (every later migration keeps them):
--   * STRICT tables; ids are the platform's integers (the seed chooses them; user -1 is
--     the system user).
--   * Timestamps are TEXT in one exact form, 'YYYY-MM-DDTHH:MM:SS.sssZ' (UTC, what
--     JavaScript's toISOString writes), so they sort as text and go out unchanged.
--   * Booleans are INTEGER 0/1. Free-form objects and ordered string lists are JSON TEXT
--     (meta, early access config, training details, trained words).
--   * Closed state sets the spec names carry CHECKs; open, growing enums (ModelType,
--     base models, file formats) do not. The sets are spelled `x = 'a' OR x = 'b'` and
--     booleans `x BETWEEN 0 AND 1` (STRICT keeps them integers): SQLite 3.40 builds a
--     temporary index for `x IN (...)` on every row inserted, which tripled bulk seeding.
--   * URLs that begin with '/' are relative to the catalogue origin ({base_url}); the
--     response layer makes them absolute.
--   * Secondary indexes are not here: they live in store/indexes/<family>.sql and are
--     (re)applied on every open, after a bulk seed.

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL              -- JSON
) STRICT;

CREATE TABLE base_models (
    name      TEXT PRIMARY KEY,
    position  INTEGER NOT NULL UNIQUE,   -- the order /enums lists them in
    ecosystem TEXT NOT NULL,             -- AIR ecosystem segment
    kind      TEXT NOT NULL CHECK (kind = 'image' OR kind = 'video'),
    active    INTEGER NOT NULL CHECK (active BETWEEN 0 AND 1)   -- ActiveBaseModel
) STRICT;

-- Users ---------------------------------------------------------------------------------

CREATE TABLE users (
    id              INTEGER PRIMARY KEY,
    username        TEXT NOT NULL UNIQUE COLLATE NOCASE,
    email           TEXT,
    email_verified  INTEGER NOT NULL DEFAULT 0 CHECK (email_verified BETWEEN 0 AND 1),
    image           TEXT,                                  -- avatar URL
    avatar_nsfw     TEXT NOT NULL DEFAULT 'None' CHECK (avatar_nsfw = 'None' OR avatar_nsfw = 'Soft' OR avatar_nsfw = 'Mature' OR avatar_nsfw = 'X'),
    tier            TEXT NOT NULL DEFAULT 'free'
                    CHECK (tier = 'free' OR tier = 'founder' OR tier = 'bronze' OR tier = 'silver' OR tier = 'gold'),
    status          TEXT NOT NULL DEFAULT 'active' CHECK (status = 'active' OR status = 'muted' OR status = 'banned'),
    is_moderator    INTEGER NOT NULL DEFAULT 0 CHECK (is_moderator BETWEEN 0 AND 1),
    browsing_level  INTEGER NOT NULL DEFAULT 1 CHECK (browsing_level BETWEEN 0 AND 63),
    created_at      TEXT NOT NULL,
    deleted_at      TEXT                                   -- set: a deleted account
) STRICT;

CREATE TABLE subscriptions (
    id          INTEGER PRIMARY KEY,
    user_id     INTEGER NOT NULL REFERENCES users (id),
    product     TEXT NOT NULL,                             -- product name, as /me lists it
    tier        TEXT NOT NULL CHECK (tier = 'founder' OR tier = 'bronze' OR tier = 'silver' OR tier = 'gold'),
    status      TEXT NOT NULL CHECK (status = 'active' OR status = 'canceled' OR status = 'expired'),
    started_at  TEXT NOT NULL,
    ends_at     TEXT
) STRICT;

-- Tags ----------------------------------------------------------------------------------

CREATE TABLE tags (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE COLLATE NOCASE,
    kind         TEXT NOT NULL CHECK (kind = 'model' OR kind = 'article' OR kind = 'image' OR kind = 'post' OR kind = 'collection'),
    is_category  INTEGER NOT NULL DEFAULT 0 CHECK (is_category BETWEEN 0 AND 1),
    created_at   TEXT NOT NULL
) STRICT;

-- Models --------------------------------------------------------------------------------

CREATE TABLE models (
    id                       INTEGER PRIMARY KEY,
    user_id                  INTEGER NOT NULL REFERENCES users (id),
    name                     TEXT NOT NULL,
    description              TEXT,                         -- HTML
    type                     TEXT NOT NULL,                -- ModelType
    status                   TEXT NOT NULL,                -- Draft, Published, Unpublished, ...
    availability             TEXT NOT NULL DEFAULT 'Public',
    mode                     TEXT CHECK (mode = 'Archived' OR mode = 'TakenDown'),   -- NULL: healthy
    checkpoint_type          TEXT CHECK (checkpoint_type = 'Standard' OR checkpoint_type = 'Trained' OR checkpoint_type = 'Merge'),
    from_platform            INTEGER NOT NULL DEFAULT 0 CHECK (from_platform BETWEEN 0 AND 1),
    nsfw                     INTEGER NOT NULL DEFAULT 0 CHECK (nsfw BETWEEN 0 AND 1),
    nsfw_level               INTEGER NOT NULL DEFAULT 1,   -- bitmask
    supports_generation      INTEGER NOT NULL DEFAULT 0 CHECK (supports_generation BETWEEN 0 AND 1),
    allow_no_credit          INTEGER NOT NULL DEFAULT 1 CHECK (allow_no_credit BETWEEN 0 AND 1),
    allow_commercial_use     TEXT NOT NULL DEFAULT '{}',   -- brace-delimited set, e.g. {Image,Sell}
    allow_derivatives        INTEGER NOT NULL DEFAULT 1 CHECK (allow_derivatives BETWEEN 0 AND 1),
    allow_different_license  INTEGER NOT NULL DEFAULT 1 CHECK (allow_different_license BETWEEN 0 AND 1),
    minor                    INTEGER NOT NULL DEFAULT 0 CHECK (minor BETWEEN 0 AND 1),
    poi                      INTEGER NOT NULL DEFAULT 0 CHECK (poi BETWEEN 0 AND 1),
    sfw_only                 INTEGER NOT NULL DEFAULT 0 CHECK (sfw_only BETWEEN 0 AND 1),
    created_at               TEXT NOT NULL,
    updated_at               TEXT NOT NULL,
    published_at             TEXT,
    last_version_at          TEXT
) STRICT;

-- Metrics are precomputed per timeframe, as the platform does; `period` sorts read the row
-- of their period, so a sort does not depend on the wall clock.
CREATE TABLE model_metrics (
    model_id             INTEGER NOT NULL REFERENCES models (id),
    period               TEXT NOT NULL CHECK (period = 'AllTime' OR period = 'Year' OR period = 'Month' OR period = 'Week' OR period = 'Day'),
    download_count       INTEGER NOT NULL DEFAULT 0,
    thumbs_up_count      INTEGER NOT NULL DEFAULT 0,
    thumbs_down_count    INTEGER NOT NULL DEFAULT 0,
    comment_count        INTEGER NOT NULL DEFAULT 0,
    collected_count      INTEGER NOT NULL DEFAULT 0,
    tipped_amount_count  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (model_id, period)
) STRICT, WITHOUT ROWID;

CREATE TABLE model_tags (
    model_id  INTEGER NOT NULL REFERENCES models (id),
    tag_id    INTEGER NOT NULL REFERENCES tags (id),
    PRIMARY KEY (model_id, tag_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE model_versions (
    id                          INTEGER PRIMARY KEY,
    model_id                    INTEGER NOT NULL REFERENCES models (id),
    position                    INTEGER NOT NULL,          -- 0 = newest, as the model lists them
    name                        TEXT NOT NULL,
    description                 TEXT,                      -- HTML
    base_model                  TEXT NOT NULL REFERENCES base_models (name),
    base_model_type             TEXT CHECK (base_model_type = 'Standard' OR base_model_type = 'Inpainting' OR base_model_type = 'Refiner' OR base_model_type = 'Pix2Pix'),
    air_ecosystem               TEXT NOT NULL,             -- urn:air:<ecosystem>:<type>:<source>:<model>@<version>
    air_type                    TEXT NOT NULL,
    air_source                  TEXT NOT NULL DEFAULT 'civitai',
    status                      TEXT NOT NULL,             -- Draft, Training, Published, Scheduled, Unpublished, ...
    availability                TEXT NOT NULL DEFAULT 'Public',   -- Public, EarlyAccess, Private, Unsearchable
    nsfw_level                  INTEGER NOT NULL DEFAULT 1,
    upload_type                 TEXT NOT NULL DEFAULT 'Created' CHECK (upload_type = 'Created' OR upload_type = 'Trained'),
    usage_control               TEXT NOT NULL DEFAULT 'Download',  -- Download, Generation, InternalGeneration
    trained_words               TEXT NOT NULL DEFAULT '[]',        -- JSON string[]
    early_access_config         TEXT,                      -- JSON object or NULL
    early_access_ends_at        TEXT,
    training_status             TEXT,                      -- Pending, Submitted, Processing, InReview, Approved, Failed, ...
    training_details            TEXT,                      -- JSON object or NULL
    require_auth                INTEGER NOT NULL DEFAULT 0 CHECK (require_auth BETWEEN 0 AND 1),
    free_trial_limit            INTEGER,
    additional_resource_charge  INTEGER NOT NULL DEFAULT 0 CHECK (additional_resource_charge BETWEEN 0 AND 1),
    is_featured                 INTEGER NOT NULL DEFAULT 0 CHECK (is_featured BETWEEN 0 AND 1),
    supports_generation         INTEGER NOT NULL DEFAULT 0 CHECK (supports_generation BETWEEN 0 AND 1),  -- covered by on-site generation
    clip_skip                   INTEGER,
    download_count              INTEGER NOT NULL DEFAULT 0,
    thumbs_up_count             INTEGER NOT NULL DEFAULT 0,
    thumbs_down_count           INTEGER NOT NULL DEFAULT 0,
    created_at                  TEXT NOT NULL,
    updated_at                  TEXT NOT NULL,
    published_at                TEXT
) STRICT;

CREATE TABLE model_files (
    id                  INTEGER PRIMARY KEY,
    version_id          INTEGER NOT NULL REFERENCES model_versions (id),
    name                TEXT NOT NULL,
    type                TEXT NOT NULL,                     -- ModelFileType
    size_kb             REAL NOT NULL,
    format              TEXT,                              -- metadata.format: SafeTensor, PickleTensor, GGUF, ...
    size                TEXT,                              -- metadata.size: full, pruned
    fp                  TEXT,                              -- metadata.fp: fp16, fp32, bf16, fp8, nf4
    pickle_scan_result  TEXT NOT NULL DEFAULT 'Success',   -- Pending, Success, Danger, Error
    virus_scan_result   TEXT NOT NULL DEFAULT 'Success',
    scanned_at          TEXT,
    visibility          TEXT NOT NULL DEFAULT 'Public' CHECK (visibility = 'Public' OR visibility = 'Private'),
    is_primary          INTEGER NOT NULL DEFAULT 0 CHECK (is_primary BETWEEN 0 AND 1),
    epoch               INTEGER,                           -- training-result files: the epoch
    created_at          TEXT NOT NULL
) STRICT;

-- Hashes are stored upper-case, so a case-insensitive lookup is an upper() of the input
-- against a plain index (store/indexes/models.sql).
CREATE TABLE file_hashes (
    file_id  INTEGER NOT NULL REFERENCES model_files (id),
    kind     TEXT NOT NULL CHECK (kind = 'AutoV1' OR kind = 'AutoV2' OR kind = 'AutoV3' OR kind = 'SHA256' OR kind = 'CRC32' OR kind = 'BLAKE3'),
    hash     TEXT NOT NULL CHECK (hash = upper(hash)),
    PRIMARY KEY (file_id, kind)
) STRICT, WITHOUT ROWID;

CREATE TABLE early_access_purchases (
    user_id       INTEGER NOT NULL REFERENCES users (id),
    version_id    INTEGER NOT NULL REFERENCES model_versions (id),
    buzz_amount   INTEGER NOT NULL DEFAULT 0,
    purchased_at  TEXT NOT NULL,
    PRIMARY KEY (user_id, version_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE hidden_models (
    user_id     INTEGER NOT NULL REFERENCES users (id),
    model_id    INTEGER NOT NULL REFERENCES models (id),
    created_at  TEXT NOT NULL,
    PRIMARY KEY (user_id, model_id)
) STRICT, WITHOUT ROWID;

-- Posts and images ----------------------------------------------------------------------

CREATE TABLE posts (
    id                INTEGER PRIMARY KEY,
    user_id           INTEGER NOT NULL REFERENCES users (id),
    title             TEXT,
    detail            TEXT,                                -- HTML
    model_version_id  INTEGER REFERENCES model_versions (id),
    availability      TEXT NOT NULL DEFAULT 'Public'
                      CHECK (availability = 'Public' OR availability = 'Unlisted' OR availability = 'EarlyAccess' OR availability = 'Private'),
    nsfw_level        INTEGER NOT NULL DEFAULT 0,          -- OR of its images' levels
    scanned           INTEGER NOT NULL DEFAULT 1 CHECK (scanned BETWEEN 0 AND 1),   -- moderation scan done
    blocked           INTEGER NOT NULL DEFAULT 0 CHECK (blocked BETWEEN 0 AND 1),
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    published_at      TEXT                                 -- NULL: not published
) STRICT;

CREATE TABLE post_tags (
    post_id  INTEGER NOT NULL REFERENCES posts (id),
    tag_id   INTEGER NOT NULL REFERENCES tags (id),
    PRIMARY KEY (post_id, tag_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE images (
    id                      INTEGER PRIMARY KEY,
    user_id                 INTEGER NOT NULL REFERENCES users (id),
    post_id                 INTEGER REFERENCES posts (id),   -- NULL: not in a post (article covers)
    post_position           INTEGER,                         -- order within the post
    type                    TEXT NOT NULL CHECK (type = 'image' OR type = 'video' OR type = 'audio'),
    url                     TEXT NOT NULL,                   -- the file itself (the video for videos)
    name                    TEXT,
    blurhash                TEXT,
    width                   INTEGER,
    height                  INTEGER,
    duration                REAL,                            -- seconds, video and audio
    nsfw_level              INTEGER NOT NULL DEFAULT 0,      -- one NSFW bit; 0 until rated
    scanned_at              TEXT,                            -- NULL: not yet scanned
    meta                    TEXT,                            -- JSON object or NULL (uploader gave none)
    base_model              TEXT,
    thumbnail_url           TEXT,                            -- custom video thumbnail (WebP)
    thumbnail_nsfw_level    INTEGER,                         -- its rating
    thumbnail_width         INTEGER,
    thumbnail_height        INTEGER,
    created_at              TEXT NOT NULL,
    CHECK (thumbnail_url IS NULL OR (type = 'video' AND thumbnail_nsfw_level IS NOT NULL))
) STRICT;

CREATE TABLE image_metrics (
    image_id         INTEGER NOT NULL REFERENCES images (id),
    period           TEXT NOT NULL CHECK (period = 'AllTime' OR period = 'Year' OR period = 'Month' OR period = 'Week' OR period = 'Day'),
    cry_count        INTEGER NOT NULL DEFAULT 0,
    laugh_count      INTEGER NOT NULL DEFAULT 0,
    like_count       INTEGER NOT NULL DEFAULT 0,
    dislike_count    INTEGER NOT NULL DEFAULT 0,
    heart_count      INTEGER NOT NULL DEFAULT 0,
    comment_count    INTEGER NOT NULL DEFAULT 0,
    collected_count  INTEGER NOT NULL DEFAULT 0,
    reaction_count   INTEGER NOT NULL DEFAULT 0,             -- cry+laugh+like+dislike+heart, for sorting
    PRIMARY KEY (image_id, period)
) STRICT, WITHOUT ROWID;

CREATE TABLE image_tags (
    image_id  INTEGER NOT NULL REFERENCES images (id),
    tag_id    INTEGER NOT NULL REFERENCES tags (id),
    PRIMARY KEY (image_id, tag_id)
) STRICT, WITHOUT ROWID;

-- The resources an image was made with (meta.civitaiResources mirrors these rows; the spec calls it platformResources).
CREATE TABLE image_resources (
    image_id          INTEGER NOT NULL REFERENCES images (id),
    model_version_id  INTEGER NOT NULL REFERENCES model_versions (id),
    resource_type     TEXT NOT NULL,                         -- checkpoint, lora, embedding, ...
    weight            REAL,
    PRIMARY KEY (image_id, model_version_id)
) STRICT, WITHOUT ROWID;

-- Articles ------------------------------------------------------------------------------

CREATE TABLE articles (
    id                    INTEGER PRIMARY KEY,
    user_id               INTEGER NOT NULL REFERENCES users (id),
    title                 TEXT NOT NULL,
    content               TEXT NOT NULL,                     -- the body (HTML)
    cover_image_id        INTEGER REFERENCES images (id),
    status                TEXT NOT NULL CHECK (status = 'Draft' OR status = 'Published' OR status = 'Unpublished'),
    availability          TEXT NOT NULL DEFAULT 'Public' CHECK (availability = 'Public' OR availability = 'Private' OR availability = 'Unsearchable'),
    nsfw_level            INTEGER NOT NULL DEFAULT 1,
    user_nsfw_level       INTEGER NOT NULL DEFAULT 0,
    moderator_nsfw_level  INTEGER,                           -- moderator-only, never served
    scanned_at            TEXT,                              -- NULL: not yet scanned
    favorite_count        INTEGER NOT NULL DEFAULT 0,
    collected_count       INTEGER NOT NULL DEFAULT 0,
    comment_count         INTEGER NOT NULL DEFAULT 0,
    like_count            INTEGER NOT NULL DEFAULT 0,
    heart_count           INTEGER NOT NULL DEFAULT 0,
    view_count            INTEGER NOT NULL DEFAULT 0,
    tipped_amount_count   INTEGER NOT NULL DEFAULT 0,
    reaction_count        INTEGER NOT NULL DEFAULT 0,
    created_at            TEXT NOT NULL,
    updated_at            TEXT NOT NULL,
    published_at          TEXT
) STRICT;

CREATE TABLE article_tags (
    article_id  INTEGER NOT NULL REFERENCES articles (id),
    tag_id      INTEGER NOT NULL REFERENCES tags (id),
    PRIMARY KEY (article_id, tag_id)
) STRICT, WITHOUT ROWID;

-- Collections ---------------------------------------------------------------------------

CREATE TABLE collections (
    id              INTEGER PRIMARY KEY,
    user_id         INTEGER NOT NULL REFERENCES users (id),
    name            TEXT NOT NULL,
    description     TEXT,
    type            TEXT NOT NULL CHECK (type = 'Model' OR type = 'Image' OR type = 'Article' OR type = 'Post'),
    read            TEXT NOT NULL CHECK (read = 'Public' OR read = 'Private' OR read = 'Unlisted'),
    write           TEXT NOT NULL DEFAULT 'Private' CHECK (write = 'Public' OR write = 'Private' OR write = 'Review'),
    mode            TEXT CHECK (mode = 'Bookmark' OR mode = 'Contest'),   -- Bookmark: the user's favorites
    cover_image_id  INTEGER REFERENCES images (id),
    nsfw_level      INTEGER NOT NULL DEFAULT 0,
    follower_count  INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
) STRICT;

CREATE TABLE collection_items (
    id             INTEGER PRIMARY KEY,
    collection_id  INTEGER NOT NULL REFERENCES collections (id),
    kind           TEXT NOT NULL CHECK (kind = 'model' OR kind = 'image' OR kind = 'article' OR kind = 'post'),
    model_id       INTEGER REFERENCES models (id),
    image_id       INTEGER REFERENCES images (id),
    article_id     INTEGER REFERENCES articles (id),
    post_id        INTEGER REFERENCES posts (id),
    status         TEXT NOT NULL DEFAULT 'ACCEPTED' CHECK (status = 'ACCEPTED' OR status = 'REVIEW' OR status = 'REJECTED'),
    added_by_id    INTEGER REFERENCES users (id),
    created_at     TEXT NOT NULL,
    CHECK ((kind = 'model') = (model_id IS NOT NULL)
       AND (kind = 'image') = (image_id IS NOT NULL)
       AND (kind = 'article') = (article_id IS NOT NULL)
       AND (kind = 'post') = (post_id IS NOT NULL))
) STRICT;

CREATE TABLE collection_tags (
    collection_id  INTEGER NOT NULL REFERENCES collections (id),
    tag_id         INTEGER NOT NULL REFERENCES tags (id),
    PRIMARY KEY (collection_id, tag_id)
) STRICT, WITHOUT ROWID;

-- Vault ---------------------------------------------------------------------------------

CREATE TABLE vaults (
    user_id     INTEGER PRIMARY KEY REFERENCES users (id),
    storage_kb  INTEGER NOT NULL,
    meta        TEXT NOT NULL DEFAULT '{}',                  -- JSON, reserved
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
) STRICT;

-- Items are snapshots: they keep the names and ids of what was vaulted (no foreign keys to
-- the catalogue), so they survive deletion of the original.
CREATE TABLE vault_items (
    id                INTEGER PRIMARY KEY,
    vault_id          INTEGER NOT NULL REFERENCES vaults (user_id),
    status            TEXT NOT NULL CHECK (status = 'Pending' OR status = 'Stored' OR status = 'Failed'),
    model_version_id  INTEGER NOT NULL,
    model_id          INTEGER NOT NULL,
    model_name        TEXT NOT NULL,
    version_name      TEXT NOT NULL,
    creator_id        INTEGER NOT NULL,
    creator_name      TEXT NOT NULL,
    type              TEXT NOT NULL,
    base_model        TEXT NOT NULL,
    category          TEXT NOT NULL DEFAULT '',
    model_size_kb     INTEGER NOT NULL DEFAULT 0,
    details_size_kb   INTEGER NOT NULL DEFAULT 0,
    images_size_kb    INTEGER NOT NULL DEFAULT 0,
    created_at        TEXT NOT NULL,                         -- the version's createdAt
    added_at          TEXT NOT NULL,
    refreshed_at      TEXT,
    notes             TEXT,
    meta              TEXT NOT NULL DEFAULT '{"failures": 0}',   -- JSON
    cover_image_url   TEXT,                                  -- NULL while pending
    UNIQUE (vault_id, model_version_id)
) STRICT;

CREATE TABLE vault_item_files (
    id             INTEGER NOT NULL,                         -- the model file's id
    vault_item_id  INTEGER NOT NULL REFERENCES vault_items (id) ON DELETE CASCADE,
    size_kb        REAL NOT NULL,
    url            TEXT NOT NULL,
    display_name   TEXT NOT NULL,
    PRIMARY KEY (vault_item_id, id)
) STRICT, WITHOUT ROWID;
