//! Permission of a user on a repository (spec §1): none < read < write <
//! admin. The owner and site admins have admin; a public repository gives
//! everyone read.

/// A permission level, ordered from weakest to strongest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Permission {
    /// Cannot see the repository: it answers 404.
    None,
    /// May read the repository and its Issues.
    Read,
    /// May also open Issues and act on grants as their agent.
    Write,
    /// May also manage collaborators, delete Issues and manage grants.
    Admin,
}

impl Permission {
    /// Parses a collaborator permission name.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "read" => Some(Permission::Read),
            "write" => Some(Permission::Write),
            "admin" => Some(Permission::Admin),
            _ => None,
        }
    }

    /// The collaborator permission name.
    pub fn name(self) -> &'static str {
        match self {
            Permission::None => "none",
            Permission::Read => "read",
            Permission::Write => "write",
            Permission::Admin => "admin",
        }
    }
}

/// Facts that decide a permission, gathered by the database layer.
#[derive(Debug, Clone, Copy)]
pub struct PermissionFacts {
    /// The caller owns the repository.
    pub is_owner: bool,
    /// The caller is a site admin.
    pub is_site_admin: bool,
    /// The repository is private.
    pub private: bool,
    /// The caller's collaborator level, if any.
    pub collaborator: Option<Permission>,
}

/// Decides the caller's permission; `facts` is `None` for anonymous callers
/// apart from the repository's visibility.
pub fn decide(facts: PermissionFacts) -> Permission {
    if facts.is_owner || facts.is_site_admin {
        return Permission::Admin;
    }
    let public = if facts.private {
        Permission::None
    } else {
        Permission::Read
    };
    facts.collaborator.unwrap_or(Permission::None).max(public)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(private: bool, collaborator: Option<Permission>) -> PermissionFacts {
        PermissionFacts {
            is_owner: false,
            is_site_admin: false,
            private,
            collaborator,
        }
    }

    #[test]
    fn private_repositories_are_invisible_without_permission() {
        assert_eq!(decide(facts(true, None)), Permission::None);
        assert_eq!(decide(facts(false, None)), Permission::Read);
        assert_eq!(
            decide(facts(true, Some(Permission::Read))),
            Permission::Read
        );
        assert_eq!(
            decide(facts(false, Some(Permission::Write))),
            Permission::Write
        );
    }

    #[test]
    fn owner_and_site_admin_are_admin() {
        let mut f = facts(true, None);
        f.is_owner = true;
        assert_eq!(decide(f), Permission::Admin);
        let mut f = facts(true, None);
        f.is_site_admin = true;
        assert_eq!(decide(f), Permission::Admin);
    }
}
