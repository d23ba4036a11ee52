-- Indexes for the articles family.
CREATE INDEX IF NOT EXISTS articles_user ON articles (user_id);
CREATE INDEX IF NOT EXISTS articles_published ON articles (published_at, id);
CREATE INDEX IF NOT EXISTS article_tags_tag ON article_tags (tag_id, article_id);
