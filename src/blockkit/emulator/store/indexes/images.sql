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
