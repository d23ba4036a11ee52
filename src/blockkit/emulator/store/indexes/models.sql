-- Indexes for the models family (models, versions, files, hashes). Applied with IF NOT
-- EXISTS on every open and after a bulk seed; add the ones your queries need here.
CREATE INDEX IF NOT EXISTS models_user ON models (user_id);
CREATE INDEX IF NOT EXISTS models_published ON models (published_at, id);
CREATE INDEX IF NOT EXISTS model_metrics_period ON model_metrics (period, thumbs_up_count, model_id);
CREATE INDEX IF NOT EXISTS model_tags_tag ON model_tags (tag_id, model_id);
CREATE INDEX IF NOT EXISTS model_versions_model ON model_versions (model_id, position);
CREATE INDEX IF NOT EXISTS model_files_version ON model_files (version_id);
-- Hashes are upper-case in the table: look up with upper(?) against this index.
CREATE INDEX IF NOT EXISTS file_hashes_hash ON file_hashes (hash, kind);
CREATE INDEX IF NOT EXISTS early_access_purchases_version ON early_access_purchases (version_id);
CREATE INDEX IF NOT EXISTS hidden_models_model ON hidden_models (model_id);
-- GET /models sorts: each reads its period's metrics row in index order and stops after a
-- page (Highest Rated is the net rating, a generated column of migration 0009).
CREATE INDEX IF NOT EXISTS model_metrics_net_rating ON model_metrics (period, net_rating, model_id);
CREATE INDEX IF NOT EXISTS model_metrics_downloads ON model_metrics (period, download_count, model_id);
CREATE INDEX IF NOT EXISTS model_metrics_comments ON model_metrics (period, comment_count, model_id);
CREATE INDEX IF NOT EXISTS model_metrics_collected ON model_metrics (period, collected_count, model_id);
CREATE INDEX IF NOT EXISTS models_type ON models (type, id);
-- Preview images: a version's posts, then their images in post order (images_post).
CREATE INDEX IF NOT EXISTS posts_version_user ON posts (model_version_id, user_id);
-- Most Images (the image_count that migration 0009's triggers keep) and Newest / Oldest (the
-- generated column published_sort of migration 0009).
CREATE INDEX IF NOT EXISTS models_image_count ON models (image_count, id);
CREATE INDEX IF NOT EXISTS models_published_sort ON models (published_sort, id);
-- GET /models filters that can lead a page (store/models.py: list_model_ids) read these alone:
-- the published versions of some base models, and the names (a query's LIKE scans this
-- narrow index instead of the table).
CREATE INDEX IF NOT EXISTS model_versions_base_model ON model_versions (base_model, status, availability, model_id);
CREATE INDEX IF NOT EXISTS models_name ON models (name, id);
CREATE INDEX IF NOT EXISTS models_checkpoint_type ON models (checkpoint_type, type);
CREATE INDEX IF NOT EXISTS model_versions_early_access ON model_versions (availability, early_access_ends_at, status, model_id);
