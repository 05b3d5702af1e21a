//! Repository visibility and permission for a (possibly anonymous) user.

use sqlx::AnyConnection;

use crate::db::repos::{self, RepoRow};
use crate::db::users::UserRow;
use crate::domain::permission::{self, Permission, PermissionFacts};
use crate::domain::validate;
use crate::error::AppError;

/// The user's permission on `repo`, looked up now.
pub async fn permission(
    conn: &mut AnyConnection,
    user: Option<&UserRow>,
    repo: &RepoRow,
) -> Result<Permission, sqlx::Error> {
    let collaborator = match user {
        Some(user) => repos::collaborator(conn, repo.id, user.id).await?,
        None => None,
    };
    Ok(permission::decide(PermissionFacts {
        is_owner: user.is_some_and(|u| u.id == repo.owner_id),
        is_site_admin: user.is_some_and(|u| u.is_admin),
        private: repo.private,
        collaborator,
    }))
}

/// Resolves `owner/name` for `user`: 404 if it does not exist or the user
/// cannot see it, otherwise the repository and the user's permission.
pub async fn visible_repo(
    conn: &mut AnyConnection,
    user: Option<&UserRow>,
    owner: &str,
    name: &str,
) -> Result<(RepoRow, Permission), AppError> {
    if !validate::is_name(owner) || !validate::is_name(name) {
        return Err(AppError::NotFound);
    }
    let repo = repos::by_name(conn, owner, name)
        .await?
        .ok_or(AppError::NotFound)?;
    let perm = permission(conn, user, &repo).await?;
    if perm == Permission::None {
        return Err(AppError::NotFound);
    }
    Ok((repo, perm))
}

/// Like [`visible_repo`], then 403 unless the permission reaches `needed`.
pub async fn repo_with(
    conn: &mut AnyConnection,
    user: Option<&UserRow>,
    owner: &str,
    name: &str,
    needed: Permission,
) -> Result<RepoRow, AppError> {
    let (repo, perm) = visible_repo(conn, user, owner, name).await?;
    if perm < needed {
        return Err(AppError::forbidden(format!(
            "{} permission on the repository is required",
            needed.name()
        )));
    }
    Ok(repo)
}
