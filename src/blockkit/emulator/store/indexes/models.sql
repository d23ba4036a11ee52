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
