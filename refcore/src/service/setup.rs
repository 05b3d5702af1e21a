//! The setup surface of spec §5: users, tokens, repositories and
//! collaborators, for the harness's fixture step.

use super::access;
use super::edges::{Edge, Edges};
use crate::auth::{Caller, secrets};
use crate::db::{self, Db, repos::RepoRow, users::UserRow};
use crate::domain::json::{RepoJson, UserRef};
use crate::domain::permission::Permission;
use crate::domain::scopes::Scopes;
use crate::domain::validate;
use crate::error::AppError;
use crate::state::AppState;

/// The repository JSON.
pub fn repo_json(state: &AppState, repo: &RepoRow) -> RepoJson {
    RepoJson {
        id: repo.id,
        owner: UserRef {
            id: repo.owner_id,
            login: repo.owner_login.clone(),
        },
        name: repo.name.clone(),
        full_name: repo.full_name(),
        private: repo.private,
        html_url: state.repo_url(&repo.owner_login, &repo.name),
    }
}

/// Creates a user; `password` `None` means no password login.
pub async fn create_user(
    db: &Db,
    login: &str,
    email: &str,
    password: Option<&str>,
    kind: &str,
    is_admin: bool,
) -> Result<UserRow, AppError> {
    validate::new_login(login)?;
    validate::no_nul("email", email)?;
    if !matches!(kind, "individual" | "bot") {
        return Err(AppError::invalid("type must be individual or bot"));
    }
    if email.len() > 254 || !email.contains('@') {
        return Err(AppError::invalid("email must be an e-mail address"));
    }
    let hash = match password {
        Some(p) if p.is_empty() || p.len() > 1024 => {
            return Err(AppError::invalid("password must be 1-1024 bytes"));
        }
        Some(p) => Some(
            secrets::hash_password(p.to_string())
                .await
                .map_err(AppError::Internal)?,
        ),
        None => None,
    };
    let mut tx = db.begin_write().await?;
    let inserted = db::users::insert(
        &mut tx,
        login,
        email,
        hash.as_deref(),
        kind,
        is_admin,
        &db::now(),
    )
    .await;
    let id = match inserted {
        Ok(id) => id,
        Err(err) if db::is_unique_violation(&err) => {
            return Err(AppError::invalid("user already exists"));
        }
        Err(err) => return Err(err.into()),
    };
    let user = db::users::by_id(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::Internal("user vanished in its transaction".into()))?;
    tx.commit().await?;
    Ok(user)
}

/// 404 unless `login` exists.
pub async fn user_named(db: &Db, login: &str) -> Result<UserRow, AppError> {
    if !validate::is_name(login) {
        return Err(AppError::NotFound);
    }
    let mut conn = db.conn().await?;
    db::users::by_login(&mut conn, login)
        .await?
        .ok_or(AppError::NotFound)
}

/// Token management is allowed to the user itself signed in with its
/// password (as Forgejo requires) or to a site admin with `write:admin`.
pub fn may_manage_tokens(caller: &Caller, target: &UserRow) -> Result<(), AppError> {
    if caller.user.id == target.id && Edge::manages_own_tokens(caller.by_password) {
        return Ok(());
    }
    if caller.user.is_admin && caller.scopes.allows("write:admin") {
        return Ok(());
    }
    Err(AppError::forbidden(
        "tokens are managed with the user's password (Basic auth) or by a site admin",
    ))
}

/// A minted token: the secret appears only here.
#[derive(Debug, serde::Serialize)]
pub struct MintedToken {
    /// Token id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// The secret (Forgejo's field name).
    pub sha1: String,
    /// Its last eight characters, as Forgejo reports.
    pub token_last_eight: String,
    /// Granted scopes.
    pub scopes: Vec<String>,
}

/// Mints a token for `user`.
pub async fn mint_token(
    db: &Db,
    user: &UserRow,
    name: &str,
    scopes: &[String],
) -> Result<MintedToken, AppError> {
    validate::name_label(name)?;
    if scopes.is_empty() {
        return Err(AppError::invalid("at least one scope is required"));
    }
    let scopes = Scopes::parse(scopes).map_err(|bad| {
        AppError::invalid(format!(
            "unknown scope {:?}",
            bad.chars().take(64).collect::<String>()
        ))
    })?;
    let mut tx = db.begin_write().await?;
    let inserted = insert_token(&mut tx, user.id, name, &scopes, None).await;
    let (id, secret) = match inserted {
        Ok(minted) => minted,
        Err(err) if db::is_unique_violation(&err) => {
            return Err(AppError::invalid("access token name has been used already"));
        }
        Err(err) => return Err(err.into()),
    };
    tx.commit().await?;
    Ok(MintedToken {
        id,
        name: name.to_string(),
        token_last_eight: secret[secret.len() - 8..].to_string(),
        sha1: secret,
        scopes: scopes.names(),
    })
}

/// Inserts a new token of `user_id` (only its SHA-256 is stored) in the
/// caller's transaction; returns its id and its secret. Every token is
/// minted here: on the setup surface and by an OAuth exchange.
pub async fn insert_token(
    conn: &mut sqlx::AnyConnection,
    user_id: i64,
    name: &str,
    scopes: &Scopes,
    expires_at: Option<i64>,
) -> Result<(i64, String), sqlx::Error> {
    let secret = secrets::new_token();
    let id = db::users::insert_token(
        conn,
        user_id,
        &db::users::NewToken {
            name,
            token_hash: &secrets::sha256_hex(&secret),
            scopes: &scopes.stored(),
            now: &db::now(),
            expires_at,
        },
    )
    .await?;
    Ok((id, secret))
}

/// Deletes one of `user`'s tokens; 404 if it has no such token.
pub async fn delete_token(db: &Db, user: &UserRow, token_id: i64) -> Result<(), AppError> {
    let mut tx = db.begin_write().await?;
    if !db::users::delete_token(&mut tx, user.id, token_id).await? {
        return Err(AppError::NotFound);
    }
    tx.commit().await?;
    Ok(())
}

/// Creates a repository owned by `owner`.
pub async fn create_repo(
    state: &AppState,
    owner: &UserRow,
    name: &str,
    private: bool,
) -> Result<RepoJson, AppError> {
    validate::new_repo_name(name)?;
    let mut tx = state.db.begin_write().await?;
    let inserted = db::repos::insert(&mut tx, owner.id, name, private, &db::now()).await;
    let id = match inserted {
        Ok(id) => id,
        Err(err) if db::is_unique_violation(&err) => {
            return Err(AppError::conflict("repository already exists"));
        }
        Err(err) => return Err(err.into()),
    };
    let repo = db::repos::by_id(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::Internal("repository vanished in its transaction".into()))?;
    tx.commit().await?;
    Ok(repo_json(state, &repo))
}

/// Changes a repository's visibility (repository admin).
pub async fn set_private(
    state: &AppState,
    user: &UserRow,
    owner: &str,
    repo: &str,
    private: bool,
) -> Result<RepoJson, AppError> {
    let mut tx = state.db.begin_write().await?;
    let mut repo = access::repo_with(&mut tx, Some(user), owner, repo, Permission::Admin).await?;
    db::repos::set_private(&mut tx, repo.id, private).await?;
    tx.commit().await?;
    repo.private = private;
    Ok(repo_json(state, &repo))
}

/// Adds, changes (`Some`) or removes (`None`) a collaborator.
pub async fn set_collaborator(
    db: &Db,
    user: &UserRow,
    owner: &str,
    repo: &str,
    login: &str,
    permission: Option<Permission>,
) -> Result<(), AppError> {
    let mut tx = db.begin_write().await?;
    let repo = access::repo_with(
        &mut tx,
        Some(user),
        owner,
        repo,
        Edge::manages_collaborators(),
    )
    .await?;
    let target = if validate::is_name(login) {
        db::users::by_login(&mut tx, login).await?
    } else {
        None
    };
    let target = target.ok_or(AppError::NotFound)?;
    match permission {
        Some(_) if target.id == repo.owner_id => {
            return Err(AppError::invalid("the owner cannot be a collaborator"));
        }
        Some(level) => db::repos::set_collaborator(&mut tx, repo.id, target.id, level).await?,
        None => {
            db::repos::remove_collaborator(&mut tx, repo.id, target.id).await?;
        }
    }
    tx.commit().await?;
    Ok(())
}

/// Reads a repository visible to `user`.
pub async fn get_repo(
    state: &AppState,
    user: Option<&UserRow>,
    owner: &str,
    repo: &str,
) -> Result<RepoJson, AppError> {
    let mut conn = state.db.conn().await?;
    let (repo, _) = access::visible_repo(&mut conn, user, owner, repo).await?;
    Ok(repo_json(state, &repo))
}
