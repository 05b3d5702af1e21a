-- refcore schema v1 for SQLite. Timestamps are RFC 3339 TEXT, flags are
-- INTEGER 0/1: the sqlx Any driver moves only integers and text portably.
CREATE TABLE users (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    login         TEXT NOT NULL,
    lower_login   TEXT NOT NULL UNIQUE,
    email         TEXT NOT NULL,
    password_hash TEXT,
    kind          TEXT NOT NULL CHECK (kind IN ('individual', 'bot')),
    is_admin      INTEGER NOT NULL DEFAULT 0 CHECK (is_admin IN (0, 1)),
    created_at    TEXT NOT NULL
);

CREATE TABLE access_tokens (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    scopes     TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (user_id, name)
);

CREATE TABLE repositories (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    owner_id         INTEGER NOT NULL REFERENCES users (id),
    name             TEXT NOT NULL,
    lower_name       TEXT NOT NULL,
    private          INTEGER NOT NULL DEFAULT 0 CHECK (private IN (0, 1)),
    last_issue_index INTEGER NOT NULL DEFAULT 0,
    created_at       TEXT NOT NULL,
    UNIQUE (owner_id, lower_name)
);

CREATE TABLE collaborators (
    repo_id    INTEGER NOT NULL REFERENCES repositories (id),
    user_id    INTEGER NOT NULL REFERENCES users (id),
    permission TEXT NOT NULL CHECK (permission IN ('read', 'write', 'admin')),
    PRIMARY KEY (repo_id, user_id)
);

CREATE TABLE agent_work_grants (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    repo_id        INTEGER NOT NULL REFERENCES repositories (id),
    agent_id       INTEGER NOT NULL REFERENCES users (id),
    prepared_by    INTEGER NOT NULL REFERENCES users (id),
    approved_by    INTEGER REFERENCES users (id),
    state          TEXT NOT NULL CHECK (state IN ('awaiting_agent', 'awaiting_human', 'active', 'revoked')),
    state_revision INTEGER NOT NULL,
    task           TEXT NOT NULL,
    summary        TEXT NOT NULL,
    digest         TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    confirmed_at   TEXT,
    approved_at    TEXT,
    revoked_at     TEXT
);
CREATE INDEX agent_work_grants_agent ON agent_work_grants (agent_id, id);
CREATE INDEX agent_work_grants_repo ON agent_work_grants (repo_id, id);

CREATE TABLE issues (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    repo_id     INTEGER NOT NULL REFERENCES repositories (id),
    idx         INTEGER NOT NULL,
    title       TEXT NOT NULL,
    body        TEXT NOT NULL,
    poster_id   INTEGER NOT NULL REFERENCES users (id),
    grant_id    INTEGER REFERENCES agent_work_grants (id),
    request_key TEXT,
    created_at  TEXT NOT NULL,
    UNIQUE (repo_id, idx)
);

-- Receipts. The issue_* columns are the historical binding, never updated;
-- issue_id deliberately has no foreign key: the Issue may be deleted.
CREATE TABLE agent_work_submissions (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    grant_id       INTEGER NOT NULL REFERENCES agent_work_grants (id),
    request_key    TEXT NOT NULL,
    title          TEXT NOT NULL,
    body           TEXT NOT NULL,
    submitted_by   INTEGER NOT NULL REFERENCES users (id),
    issue_id       INTEGER NOT NULL,
    issue_index    INTEGER NOT NULL,
    issue_repo_id  INTEGER NOT NULL,
    issue_html_url TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    UNIQUE (grant_id, request_key)
);

CREATE TABLE sessions (
    id_hash    TEXT PRIMARY KEY,
    user_id    INTEGER REFERENCES users (id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    expires_at INTEGER NOT NULL
);
