-- Spec §8: the repository grant envelope a human may attach when preparing
-- a grant. All three columns are NULL for a grant without one. The envelope
-- is stored in canonical form (allowed_paths sorted by byte order, JCS text)
-- with its digest and path count, and never changes after preparation.
ALTER TABLE agent_work_grants ADD COLUMN repository_grant TEXT;
ALTER TABLE agent_work_grants ADD COLUMN repository_grant_digest TEXT;
ALTER TABLE agent_work_grants ADD COLUMN repository_grant_paths INTEGER;
