-- Indexes for the images and posts family.
CREATE INDEX IF NOT EXISTS images_post ON images (post_id, post_position);
CREATE INDEX IF NOT EXISTS images_user ON images (user_id, id);
CREATE INDEX IF NOT EXISTS images_created ON images (created_at, id);
CREATE INDEX IF NOT EXISTS image_metrics_period ON image_metrics (period, reaction_count, image_id);
CREATE INDEX IF NOT EXISTS image_tags_tag ON image_tags (tag_id, image_id);
CREATE INDEX IF NOT EXISTS image_resources_version ON image_resources (model_version_id, image_id);
CREATE INDEX IF NOT EXISTS posts_user ON posts (user_id);
CREATE INDEX IF NOT EXISTS posts_version ON posts (model_version_id);
CREATE INDEX IF NOT EXISTS post_tags_tag ON post_tags (tag_id, post_id);
-- The feed's metric sorts walk (period, metric, image_id) backwards from a keyset position
-- (store/images.py: feed_candidates); reactions has its index above.
CREATE INDEX IF NOT EXISTS image_metrics_comments ON image_metrics (period, comment_count, image_id);
CREATE INDEX IF NOT EXISTS image_metrics_collected ON image_metrics (period, collected_count, image_id);
-- Rare media types and base models narrow the feed by these (store/images.py: _image_access).
CREATE INDEX IF NOT EXISTS images_type ON images (type, id);
CREATE INDEX IF NOT EXISTS images_base_model ON images (base_model COLLATE NOCASE, id);
-- Random walks the shuffle hash (store/images.py: SHUFFLE_SQL, the same expression exactly).
CREATE INDEX IF NOT EXISTS images_shuffle ON images (((id * 2654435761) % 4294967296), id);
