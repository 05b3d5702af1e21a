-- The agent's grant list (db::grants::agent_page) counts the agent's grants
-- per repository on every page. With this index the count reads the index
-- alone, already grouped by repository, instead of every grant row (an
-- index-only scan on SQLite; on PostgreSQL once vacuum has marked the pages
-- all-visible). The page itself is found on agent_work_grants_agent.
CREATE INDEX agent_work_grants_agent_repo ON agent_work_grants (agent_id, repo_id, state);
