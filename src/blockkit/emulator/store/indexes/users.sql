-- Indexes for the users family (users, subscriptions, vaults).
CREATE INDEX IF NOT EXISTS subscriptions_user ON subscriptions (user_id, status);
CREATE INDEX IF NOT EXISTS vault_items_vault ON vault_items (vault_id, added_at);
