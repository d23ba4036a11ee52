-- Media serving looks a seed path up by URL (orchestration/media.py).
CREATE INDEX IF NOT EXISTS images_url ON images (url);
CREATE INDEX IF NOT EXISTS images_thumbnail_url ON images (thumbnail_url) WHERE thumbnail_url IS NOT NULL;
