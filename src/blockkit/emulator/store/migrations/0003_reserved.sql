-- 0003: reserved for another part of the emulator (numbered migrations may not have gaps, and
-- the OAuth provider's tables are 0004). This file changes nothing; the branch that owns 0003
-- replaces it with its own migration.
SELECT 1;
