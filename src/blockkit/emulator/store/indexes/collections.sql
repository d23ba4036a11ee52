-- Indexes for the collections family.
CREATE INDEX IF NOT EXISTS collections_user ON collections (user_id, mode);
CREATE INDEX IF NOT EXISTS collection_items_collection ON collection_items (collection_id, status, id);
CREATE INDEX IF NOT EXISTS collection_items_model ON collection_items (model_id) WHERE model_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS collection_tags_tag ON collection_tags (tag_id, collection_id);
