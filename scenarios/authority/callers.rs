//! The callers of the authority matrix (issue #27 §3): who calls, by their
//! standing on the `lab` fixture's private `alice/lab`, and the scopes of
//! a token of their own; and spec §1's scope rule, read by the harness.
//! `native_matrix.rs` and `setup_matrix.rs` call every route
//! with each of them.

use grantgate_engine::prelude::*;

use crate::support::flows::LAB_BOT;

/// The bot that is not the grant's agent (fixture `lab`).
pub(crate) const OTHER_BOT: &str = "other-bot";

/// What the fixture bots hold.
pub(crate) const FIXTURE: &[&str] = &["read:repository", "write:issue"];
/// Every scope of spec §1: the site admin's full token.
pub(crate) const FULL: &[&str] = &[
    "read:repository",
    "write:repository",
    "read:issue",
    "write:issue",
    "read:user",
    "write:user",
    "read:admin",
    "write:admin",
];
/// Every scope of spec §1 but the admin ones: a person's full token.
pub(crate) const USER_FULL: &[&str] = FULL.split_at(6).0;
/// Every `read:` scope and no `write:` one: whatever scope a write route
/// needs, this token lacks it.
pub(crate) const READS: &[&str] = &["read:repository", "read:issue", "read:user", "read:admin"];
/// A scope no grant route names.
pub(crate) const UNRELATED: &[&str] = &["read:user"];

/// Whether a token holding `held` holds `needed`: spec §1, `write:X`
/// implies `read:X` (and nothing else implies anything).
pub(crate) fn holds(held: &[&str], needed: &str) -> bool {
    held.contains(&needed)
        || needed
            .strip_prefix("read:")
            .is_some_and(|area| held.iter().any(|h| *h == format!("write:{area}")))
}

/// Who calls, by their standing on `alice/lab` (fixture `lab`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Who {
    /// No `Authorization` at all.
    Anonymous,
    /// lab-bot, the agent of every grant here (a write collaborator).
    Agent,
    /// other-bot, a write collaborator that is not the agent.
    OtherBot,
    /// rita, a read collaborator.
    Reader,
    /// wendy, a write collaborator.
    Writer,
    /// alice, the owner: repository admin.
    Owner,
    /// The site admin the harness made.
    SiteAdmin,
    /// mallory, no permission: the private repository is invisible to her.
    Stranger,
}

/// A permission on `alice/lab` (spec §1), weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Permission {
    None,
    Read,
    Write,
    Admin,
}

impl Who {
    /// The caller's permission on `alice/lab`: the fixture's collaborators,
    /// the owner, and the site admin (who administers every repository).
    pub(crate) fn permission(self) -> Permission {
        match self {
            Who::Anonymous | Who::Stranger => Permission::None,
            Who::Reader => Permission::Read,
            Who::Agent | Who::OtherBot | Who::Writer => Permission::Write,
            Who::Owner | Who::SiteAdmin => Permission::Admin,
        }
    }

    /// The fixture login (the site admin's is the harness's own).
    pub(crate) fn login(self, ctx: &Ctx) -> String {
        match self {
            Who::Anonymous => "anonymous",
            Who::Agent => LAB_BOT,
            Who::OtherBot => OTHER_BOT,
            Who::Reader => "rita",
            Who::Writer => "wendy",
            Who::Owner => "alice",
            Who::Stranger => "mallory",
            Who::SiteAdmin => ctx.setup().admin_login(),
        }
        .to_owned()
    }
}

/// One caller: who, the scopes of its token, and its client.
pub(crate) struct Caller {
    pub(crate) label: String,
    pub(crate) who: Who,
    pub(crate) scopes: &'static [&'static str],
    pub(crate) client: NativeClient,
}

impl Caller {
    /// `who` with a token of their own holding `scopes` (the bots' fixture
    /// tokens for [`FIXTURE`]); anonymous sends no `Authorization`.
    pub(crate) async fn new(ctx: &Ctx, who: Who, scopes: &'static [&'static str]) -> Step<Caller> {
        let login = who.login(ctx);
        let held = match scopes {
            FIXTURE => "its fixture token".to_owned(),
            USER_FULL | FULL => "every scope".to_owned(),
            READS => "every read scope".to_owned(),
            _ => format!("only {}", scopes.join(" ")),
        };
        let label = match who {
            Who::Anonymous => "anonymous".to_owned(),
            Who::SiteAdmin => format!("the site admin with {held}"),
            _ => format!("{login} with {held}"),
        };
        let client = match who {
            Who::Anonymous => ctx.native(LAB_BOT)?.with_authorization("anonymous", None),
            Who::Agent | Who::OtherBot if scopes == FIXTURE => ctx.native(&login)?,
            Who::Agent | Who::OtherBot => ctx.native_with_scopes(&login, scopes).await?,
            _ => {
                let token = ctx.tokens().mint_human_token(&login, scopes).await?;
                ctx.native_with_token(&token)?
            }
        };
        Ok(Caller {
            label,
            who,
            scopes,
            client,
        })
    }

    /// Every caller in `classes`, minted at once.
    pub(crate) async fn all(
        ctx: &Ctx,
        classes: &[(Who, &'static [&'static str])],
    ) -> Step<Vec<Caller>> {
        join_all(
            classes
                .iter()
                .map(|(who, scopes)| Caller::new(ctx, *who, scopes)),
        )
        .await
        .into_iter()
        .collect()
    }
}
