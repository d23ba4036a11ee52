-- publish_requests: a submitter's list (newest first) and a slug's approved versions.
CREATE INDEX IF NOT EXISTS publish_requests_submitter ON publish_requests (submitted_by_user_id, submitted_at);
CREATE INDEX IF NOT EXISTS publish_requests_slug_status ON publish_requests (slug, status, reviewed_at);
