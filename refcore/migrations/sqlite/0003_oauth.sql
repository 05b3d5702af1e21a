-- Spec §9: refcore as an OAuth 2.0 authorization server with PKCE for public
-- clients. Applications are registered through the setup surface; their
-- redirect URIs are kept exactly as given (a JSON array of strings), since
-- authorization compares them byte for byte.
CREATE TABLE oauth_applications (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    client_id     TEXT NOT NULL UNIQUE,
    owner_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    redirect_uris TEXT NOT NULL,
    created_at    TEXT NOT NULL
);

-- Authorization codes: only the SHA-256 of a code is stored. A code is
-- deleted when it is exchanged (single use); expires_at is Unix seconds.
CREATE TABLE oauth_codes (
    code_hash             TEXT PRIMARY KEY,
    app_id                INTEGER NOT NULL REFERENCES oauth_applications (id) ON DELETE CASCADE,
    user_id               INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    redirect_uri          TEXT NOT NULL,
    code_challenge        TEXT NOT NULL,
    code_challenge_method TEXT NOT NULL,
    scopes                TEXT NOT NULL,
    created_at            TEXT NOT NULL,
    expires_at            INTEGER NOT NULL
);

-- Tokens issued by the token endpoint expire (Unix seconds); tokens minted
-- on the setup surface keep NULL and never expire.
ALTER TABLE access_tokens ADD COLUMN expires_at INTEGER;
