//! Fixtures: the world a scenario starts in (humans, bots and their scopes,
//! repositories, collaborators), declared as TOML data in `fixtures/` and
//! applied through the setup API with the admin credential.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::actors::setup::SetupClient;
use crate::error::{HarnessError, Result};
use crate::vocab::Step;

/// The fixture files, embedded so the binary runs anywhere.
const FILES: &[(&str, &str)] = &[("lab", include_str!("../../../fixtures/lab.toml"))];

/// One fixture world.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fixture {
    /// Humans (individual users who log in through the browser).
    #[serde(default)]
    pub humans: Vec<HumanSpec>,
    /// Bots (users of type `bot`, with one token each).
    #[serde(default)]
    pub bots: Vec<BotSpec>,
    /// Repositories.
    #[serde(default)]
    pub repositories: Vec<RepoSpec>,
    /// Collaborators on repositories.
    #[serde(default)]
    pub collaborators: Vec<CollaboratorSpec>,
}

/// A human.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HumanSpec {
    /// Login.
    pub login: String,
}

/// A bot and the scopes of its token.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BotSpec {
    /// Login.
    pub login: String,
    /// Scopes of the token the bot's adapter holds.
    pub scopes: Vec<String>,
}

/// A repository.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepoSpec {
    /// Owner's login.
    pub owner: String,
    /// Name.
    pub name: String,
    /// Whether it is private.
    #[serde(default)]
    pub private: bool,
}

/// A collaborator.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollaboratorSpec {
    /// `owner/name`.
    pub repo: String,
    /// Collaborator's login.
    pub login: String,
    /// `read`, `write` or `admin`.
    pub permission: String,
}

/// What applying a fixture produced: the credentials of its actors. Only the
/// engine sees these; scenarios get actors, not credentials.
#[derive(Default, Clone)]
pub struct Applied {
    /// Password per human login.
    pub passwords: BTreeMap<String, String>,
    /// Token per bot login.
    pub tokens: BTreeMap<String, String>,
    /// Scopes per bot login, for minting more tokens later.
    pub scopes: BTreeMap<String, Vec<String>>,
    /// Password per bot login: bots have one (the API accepts Basic
    /// `login:password`), and scenarios prove it never signs in a browser.
    pub bot_passwords: BTreeMap<String, String>,
}

impl Fixture {
    /// Loads the fixture named `name` (a file `fixtures/<name>.toml`).
    pub fn named(name: &str) -> Result<Fixture> {
        let (_, text) =
            FILES
                .iter()
                .find(|(n, _)| *n == name)
                .ok_or_else(|| HarnessError::Fixture {
                    file: format!("fixtures/{name}.toml"),
                    message: "no such fixture".into(),
                })?;
        toml::from_str(text).map_err(|e| HarnessError::Fixture {
            file: format!("fixtures/{name}.toml"),
            message: e.to_string(),
        })
    }

    /// Names of every fixture file.
    pub fn names() -> Vec<&'static str> {
        FILES.iter().map(|(n, _)| *n).collect()
    }

    /// Creates the world through the setup client: users (with minted
    /// passwords), bot tokens, repositories, then collaborators.
    pub async fn apply(&self, setup: &SetupClient) -> Step<Applied> {
        let secrets = setup_secrets(setup);
        let mut applied = Applied::default();
        for h in &self.humans {
            // Every password holds a `:` (RFC 7617: the user-id ends at the
            // first colon, the password may hold more): every Basic
            // `login:password` of the catalogue meets that edge.
            let password = secrets.mint(&format!("pw:{}", h.login));
            setup.create_user(&h.login, "individual", &password).await?;
            applied.passwords.insert(h.login.clone(), password);
        }
        for b in &self.bots {
            let password = secrets.mint(&format!("pw:{}", b.login));
            setup.create_user(&b.login, "bot", &password).await?;
            let token = setup
                .mint_token(&b.login, "grantgate-adapter", &b.scopes)
                .await?;
            applied.tokens.insert(b.login.clone(), token);
            applied.scopes.insert(b.login.clone(), b.scopes.clone());
            applied.bot_passwords.insert(b.login.clone(), password);
        }
        for r in &self.repositories {
            setup.create_repo(&r.owner, &r.name, r.private).await?;
        }
        for c in &self.collaborators {
            setup
                .add_collaborator(&c.repo, &c.login, &c.permission)
                .await?;
        }
        Ok(applied)
    }
}

fn setup_secrets(setup: &SetupClient) -> crate::secrets::SecretRegistry {
    setup.secrets().clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fixture_file_parses() {
        for name in Fixture::names() {
            let f = Fixture::named(name).unwrap_or_else(|e| panic!("{e}"));
            assert!(
                !f.humans.is_empty() || !f.bots.is_empty(),
                "{name} is empty"
            );
        }
    }

    #[test]
    fn the_lab_fixture_has_alice_her_repo_and_the_lab_bot() {
        let f = Fixture::named("lab").unwrap();
        assert!(f.humans.iter().any(|h| h.login == "alice"));
        assert!(f.bots.iter().any(|b| b.login == "lab-bot"));
        assert!(
            f.repositories
                .iter()
                .any(|r| r.owner == "alice" && r.name == "lab")
        );
    }

    #[test]
    fn an_unknown_fixture_is_an_error_naming_its_file() {
        let err = Fixture::named("nope").unwrap_err().to_string();
        assert!(err.contains("fixtures/nope.toml"), "{err}");
    }
}
