//! Forgejo access-token scopes. `write:X` implies `read:X`; a password
//! (Basic auth) carries every scope, as in Forgejo.

use super::edges::edges;

/// The scope names a token may carry (spec §1).
pub const ALL: [&str; 8] = [
    "read:repository",
    "write:repository",
    "read:issue",
    "write:issue",
    "read:user",
    "write:user",
    "read:admin",
    "write:admin",
];

/// A normalised set of scopes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scopes {
    names: Vec<String>,
    all: bool,
}

impl Scopes {
    /// Every scope: what a password login grants.
    pub fn everything() -> Self {
        Scopes {
            names: Vec::new(),
            all: true,
        }
    }

    /// Parses the names a client asked for; an unknown name is an error
    /// carrying that name. `all` is accepted as Forgejo does.
    pub fn parse<S: AsRef<str>>(requested: &[S]) -> Result<Self, String> {
        let mut names: Vec<String> = Vec::new();
        for raw in requested {
            let name = raw.as_ref();
            if name == "all" {
                return Ok(Scopes::everything());
            }
            if !ALL.contains(&name) {
                return Err(name.to_string());
            }
            if !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
        names.sort();
        Ok(Scopes { names, all: false })
    }

    /// Restores scopes stored with [`Scopes::stored`].
    pub fn from_stored(stored: &str) -> Self {
        if stored == "all" {
            return Scopes::everything();
        }
        let names: Vec<&str> = stored.split(',').filter(|s| !s.is_empty()).collect();
        Scopes::parse(&names).unwrap_or(Scopes {
            names: Vec::new(),
            all: false,
        })
    }

    /// The storage form: comma-separated names, or `all`.
    pub fn stored(&self) -> String {
        if self.all {
            "all".to_string()
        } else {
            self.names.join(",")
        }
    }

    /// The names as the token API reports them.
    pub fn names(&self) -> Vec<String> {
        if self.all {
            vec!["all".to_string()]
        } else {
            self.names.clone()
        }
    }

    /// Whether `scope` is held directly or implied by its `write:` twin.
    pub fn allows(&self, scope: &str) -> bool {
        if self.all || self.names.iter().any(|n| n == scope) {
            return true;
        }
        match scope.strip_prefix("read:") {
            Some(area) => {
                edges().write_implies_read(area)
                    && self.names.iter().any(|n| n == &format!("write:{area}"))
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_implies_read_but_not_the_reverse() {
        let scopes = Scopes::parse(&["write:issue", "read:repository"]).unwrap();
        assert!(scopes.allows("read:issue"));
        assert!(scopes.allows("write:issue"));
        assert!(scopes.allows("read:repository"));
        assert!(!scopes.allows("write:repository"));
        assert!(!scopes.allows("read:admin"));
    }

    #[test]
    fn unknown_names_are_refused_and_storage_round_trips() {
        assert_eq!(
            Scopes::parse(&["write:everything"]).unwrap_err(),
            "write:everything"
        );
        let scopes = Scopes::parse(&["write:issue", "read:repository", "write:issue"]).unwrap();
        assert_eq!(Scopes::from_stored(&scopes.stored()), scopes);
        assert!(Scopes::from_stored("all").allows("write:admin"));
    }
}
