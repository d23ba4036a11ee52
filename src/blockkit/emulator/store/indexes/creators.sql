-- Indexes for /creators (store/creators.py): each user's published models are counted from
-- this index alone, without reading the model rows (90 ms -> a few ms on the large seed).
CREATE INDEX IF NOT EXISTS models_user_status ON models (user_id, status);
