-- 0009: what GET /models sorts and filters on, kept on the model row so that a page walks an
-- index instead of computing a subquery per model (issue 27).
--
-- image_count: the images "Most Images" sorts by. It counts exactly what this subquery counts
-- (the sort's old SQL, kept as the reference in tests/emulator/test_model_sort_keys.py): the
-- scanned, rated (nsfw_level <> 0) images of the published, unblocked, scanned, non-private
-- posts that the model's owner made about one of the model's Published versions.
--
--   SELECT count(*) FROM model_versions iv JOIN posts ip ON ip.model_version_id = iv.id
--   JOIN images ii ON ii.post_id = ip.id WHERE iv.model_id = m.id AND iv.status = 'Published'
--   AND ip.user_id = m.user_id AND ip.published_at IS NOT NULL AND ip.blocked = 0
--   AND ip.scanned = 1 AND ip.availability <> 'Private' AND ii.scanned_at IS NOT NULL
--   AND ii.nsfw_level <> 0
--
-- published_version_count: the model's versions the public sees (status Published, availability
-- not Private); a listed model needs one (it replaces an EXISTS over model_versions per model).
--
-- The triggers below keep both exact whatever writes the rows (control routes, import, any
-- endpoint). Each one moves the counts by what the changed row adds or takes away, read from
-- the rows as they are after the change: a row's share depends only on itself and on rows of
-- other tables, so this is exact also for statements that change many rows. A model row that is
-- inserted (or changes owner or id) is counted from scratch. The bulk seed drops the triggers
-- while it inserts and counts every model once at the end (seed/generate.py).

ALTER TABLE models ADD COLUMN image_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE models ADD COLUMN published_version_count INTEGER NOT NULL DEFAULT 0;

-- Sort keys that are expressions of a row, as virtual generated columns: an index on a column
-- (unlike one on an expression) lets a keyset cursor start the walk with a row value
-- (key, id) < (?, ?), so a page deep in a run of equal keys (a period's many zero ratings)
-- does not first skip the run. Highest Rated is the net rating; Newest and Oldest sort
-- unpublished models ('') before every date.
ALTER TABLE model_metrics ADD COLUMN net_rating INTEGER GENERATED ALWAYS AS (thumbs_up_count - thumbs_down_count) VIRTUAL;
ALTER TABLE models ADD COLUMN published_sort TEXT GENERATED ALWAYS AS (coalesce(published_at, '')) VIRTUAL;
-- Replaced by model_metrics_net_rating (store/indexes/models.sql).
DROP INDEX IF EXISTS model_metrics_rating;

UPDATE models SET
    published_version_count = (SELECT count(*) FROM model_versions v WHERE v.model_id = models.id
                               AND v.status = 'Published' AND v.availability <> 'Private'),
    image_count = (SELECT count(*) FROM model_versions iv JOIN posts ip ON ip.model_version_id = iv.id
                   JOIN images ii ON ii.post_id = ip.id WHERE iv.model_id = models.id AND iv.status = 'Published'
                   AND ip.user_id = models.user_id AND ip.published_at IS NOT NULL AND ip.blocked = 0
                   AND ip.scanned = 1 AND ip.availability <> 'Private' AND ii.scanned_at IS NOT NULL
                   AND ii.nsfw_level <> 0);

-- images: +1 / -1 for an image that counts, to the model its post's version belongs to.

CREATE TRIGGER model_counts_image_insert AFTER INSERT ON images
WHEN NEW.post_id IS NOT NULL AND NEW.scanned_at IS NOT NULL AND NEW.nsfw_level <> 0
BEGIN
    UPDATE models SET image_count = image_count + 1 WHERE id = (
        SELECT iv.model_id FROM posts ip JOIN model_versions iv ON iv.id = ip.model_version_id
        JOIN models im ON im.id = iv.model_id
        WHERE ip.id = NEW.post_id AND iv.status = 'Published' AND ip.user_id = im.user_id
        AND ip.published_at IS NOT NULL AND ip.blocked = 0 AND ip.scanned = 1 AND ip.availability <> 'Private');
END;

CREATE TRIGGER model_counts_image_delete AFTER DELETE ON images
WHEN OLD.post_id IS NOT NULL AND OLD.scanned_at IS NOT NULL AND OLD.nsfw_level <> 0
BEGIN
    UPDATE models SET image_count = image_count - 1 WHERE id = (
        SELECT iv.model_id FROM posts ip JOIN model_versions iv ON iv.id = ip.model_version_id
        JOIN models im ON im.id = iv.model_id
        WHERE ip.id = OLD.post_id AND iv.status = 'Published' AND ip.user_id = im.user_id
        AND ip.published_at IS NOT NULL AND ip.blocked = 0 AND ip.scanned = 1 AND ip.availability <> 'Private');
END;

CREATE TRIGGER model_counts_image_update AFTER UPDATE OF post_id, scanned_at, nsfw_level ON images
BEGIN
    UPDATE models SET image_count = image_count - 1
    WHERE OLD.post_id IS NOT NULL AND OLD.scanned_at IS NOT NULL AND OLD.nsfw_level <> 0 AND id = (
        SELECT iv.model_id FROM posts ip JOIN model_versions iv ON iv.id = ip.model_version_id
        JOIN models im ON im.id = iv.model_id
        WHERE ip.id = OLD.post_id AND iv.status = 'Published' AND ip.user_id = im.user_id
        AND ip.published_at IS NOT NULL AND ip.blocked = 0 AND ip.scanned = 1 AND ip.availability <> 'Private');
    UPDATE models SET image_count = image_count + 1
    WHERE NEW.post_id IS NOT NULL AND NEW.scanned_at IS NOT NULL AND NEW.nsfw_level <> 0 AND id = (
        SELECT iv.model_id FROM posts ip JOIN model_versions iv ON iv.id = ip.model_version_id
        JOIN models im ON im.id = iv.model_id
        WHERE ip.id = NEW.post_id AND iv.status = 'Published' AND ip.user_id = im.user_id
        AND ip.published_at IS NOT NULL AND ip.blocked = 0 AND ip.scanned = 1 AND ip.availability <> 'Private');
END;

-- posts: a post that counts adds its counted images (images_post finds them).

CREATE TRIGGER model_counts_post_insert AFTER INSERT ON posts
WHEN NEW.model_version_id IS NOT NULL AND NEW.published_at IS NOT NULL AND NEW.blocked = 0 AND NEW.scanned = 1
     AND NEW.availability <> 'Private'
BEGIN
    UPDATE models SET image_count = image_count + (
        SELECT count(*) FROM images ii WHERE ii.post_id = NEW.id AND ii.scanned_at IS NOT NULL AND ii.nsfw_level <> 0)
    WHERE user_id = NEW.user_id AND id = (
        SELECT iv.model_id FROM model_versions iv WHERE iv.id = NEW.model_version_id AND iv.status = 'Published');
END;

CREATE TRIGGER model_counts_post_delete AFTER DELETE ON posts
WHEN OLD.model_version_id IS NOT NULL AND OLD.published_at IS NOT NULL AND OLD.blocked = 0 AND OLD.scanned = 1
     AND OLD.availability <> 'Private'
BEGIN
    UPDATE models SET image_count = image_count - (
        SELECT count(*) FROM images ii WHERE ii.post_id = OLD.id AND ii.scanned_at IS NOT NULL AND ii.nsfw_level <> 0)
    WHERE user_id = OLD.user_id AND id = (
        SELECT iv.model_id FROM model_versions iv WHERE iv.id = OLD.model_version_id AND iv.status = 'Published');
END;

CREATE TRIGGER model_counts_post_update
AFTER UPDATE OF id, user_id, model_version_id, published_at, blocked, scanned, availability ON posts
BEGIN
    UPDATE models SET image_count = image_count - (
        SELECT count(*) FROM images ii WHERE ii.post_id = OLD.id AND ii.scanned_at IS NOT NULL AND ii.nsfw_level <> 0)
    WHERE OLD.model_version_id IS NOT NULL AND OLD.published_at IS NOT NULL AND OLD.blocked = 0 AND OLD.scanned = 1
    AND OLD.availability <> 'Private' AND user_id = OLD.user_id AND id = (
        SELECT iv.model_id FROM model_versions iv WHERE iv.id = OLD.model_version_id AND iv.status = 'Published');
    UPDATE models SET image_count = image_count + (
        SELECT count(*) FROM images ii WHERE ii.post_id = NEW.id AND ii.scanned_at IS NOT NULL AND ii.nsfw_level <> 0)
    WHERE NEW.model_version_id IS NOT NULL AND NEW.published_at IS NOT NULL AND NEW.blocked = 0 AND NEW.scanned = 1
    AND NEW.availability <> 'Private' AND user_id = NEW.user_id AND id = (
        SELECT iv.model_id FROM model_versions iv WHERE iv.id = NEW.model_version_id AND iv.status = 'Published');
END;

-- model_versions: a Published version adds the counted images of its owner's posts about it;
-- a public one adds 1 to published_version_count.

CREATE TRIGGER model_counts_version_insert AFTER INSERT ON model_versions
BEGIN
    UPDATE models SET
        published_version_count = published_version_count
            + (NEW.status = 'Published' AND NEW.availability <> 'Private'),
        image_count = image_count + (
            SELECT count(*) FROM posts ip JOIN images ii ON ii.post_id = ip.id
            WHERE NEW.status = 'Published' AND ip.model_version_id = NEW.id AND ip.user_id = models.user_id
            AND ip.published_at IS NOT NULL AND ip.blocked = 0 AND ip.scanned = 1 AND ip.availability <> 'Private'
            AND ii.scanned_at IS NOT NULL AND ii.nsfw_level <> 0)
    WHERE id = NEW.model_id;
END;

CREATE TRIGGER model_counts_version_delete AFTER DELETE ON model_versions
BEGIN
    UPDATE models SET
        published_version_count = published_version_count
            - (OLD.status = 'Published' AND OLD.availability <> 'Private'),
        image_count = image_count - (
            SELECT count(*) FROM posts ip JOIN images ii ON ii.post_id = ip.id
            WHERE OLD.status = 'Published' AND ip.model_version_id = OLD.id AND ip.user_id = models.user_id
            AND ip.published_at IS NOT NULL AND ip.blocked = 0 AND ip.scanned = 1 AND ip.availability <> 'Private'
            AND ii.scanned_at IS NOT NULL AND ii.nsfw_level <> 0)
    WHERE id = OLD.model_id;
END;

CREATE TRIGGER model_counts_version_update AFTER UPDATE OF id, model_id, status, availability ON model_versions
BEGIN
    UPDATE models SET
        published_version_count = published_version_count
            - (OLD.status = 'Published' AND OLD.availability <> 'Private'),
        image_count = image_count - (
            SELECT count(*) FROM posts ip JOIN images ii ON ii.post_id = ip.id
            WHERE OLD.status = 'Published' AND ip.model_version_id = OLD.id AND ip.user_id = models.user_id
            AND ip.published_at IS NOT NULL AND ip.blocked = 0 AND ip.scanned = 1 AND ip.availability <> 'Private'
            AND ii.scanned_at IS NOT NULL AND ii.nsfw_level <> 0)
    WHERE id = OLD.model_id;
    UPDATE models SET
        published_version_count = published_version_count
            + (NEW.status = 'Published' AND NEW.availability <> 'Private'),
        image_count = image_count + (
            SELECT count(*) FROM posts ip JOIN images ii ON ii.post_id = ip.id
            WHERE NEW.status = 'Published' AND ip.model_version_id = NEW.id AND ip.user_id = models.user_id
            AND ip.published_at IS NOT NULL AND ip.blocked = 0 AND ip.scanned = 1 AND ip.availability <> 'Private'
            AND ii.scanned_at IS NOT NULL AND ii.nsfw_level <> 0)
    WHERE id = NEW.model_id;
END;

-- models: a new row (its versions may be there already, e.g. an import in table order) or a
-- new owner or id is counted from scratch. These UPDATEs set only the counts, so they fire no
-- trigger of their own.

CREATE TRIGGER model_counts_model_insert AFTER INSERT ON models
BEGIN
    UPDATE models SET
        published_version_count = (SELECT count(*) FROM model_versions v WHERE v.model_id = NEW.id
                                   AND v.status = 'Published' AND v.availability <> 'Private'),
        image_count = (SELECT count(*) FROM model_versions iv JOIN posts ip ON ip.model_version_id = iv.id
                       JOIN images ii ON ii.post_id = ip.id WHERE iv.model_id = NEW.id AND iv.status = 'Published'
                       AND ip.user_id = NEW.user_id AND ip.published_at IS NOT NULL AND ip.blocked = 0
                       AND ip.scanned = 1 AND ip.availability <> 'Private' AND ii.scanned_at IS NOT NULL
                       AND ii.nsfw_level <> 0)
    WHERE id = NEW.id;
END;

CREATE TRIGGER model_counts_model_update AFTER UPDATE OF id, user_id ON models
BEGIN
    UPDATE models SET
        published_version_count = (SELECT count(*) FROM model_versions v WHERE v.model_id = NEW.id
                                   AND v.status = 'Published' AND v.availability <> 'Private'),
        image_count = (SELECT count(*) FROM model_versions iv JOIN posts ip ON ip.model_version_id = iv.id
                       JOIN images ii ON ii.post_id = ip.id WHERE iv.model_id = NEW.id AND iv.status = 'Published'
                       AND ip.user_id = NEW.user_id AND ip.published_at IS NOT NULL AND ip.blocked = 0
                       AND ip.scanned = 1 AND ip.availability <> 'Private' AND ii.scanned_at IS NOT NULL
                       AND ii.nsfw_level <> 0)
    WHERE id = NEW.id;
END;
