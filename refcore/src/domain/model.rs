//! The domain's small shared vocabulary: a grant's state and the fixed
//! values of the contract that both a rule and its edge (`edges`) state.
//! It names nothing else of the crate, so `edges` takes its types and
//! states its values without leading back into the rules that ask it. Each
//! item is also named where its rule lives (`grant`, `validate`,
//! `envelope`, `oauth`).

/// A grant's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrantState {
    /// Prepared by a human; the agent has not confirmed.
    AwaitingAgent,
    /// Confirmed by the agent; a human has not approved.
    AwaitingHuman,
    /// Approved: the agent may submit.
    Active,
    /// Withdrawn by a human; final.
    Revoked,
}

impl GrantState {
    /// The wire and storage name.
    pub fn as_str(self) -> &'static str {
        match self {
            GrantState::AwaitingAgent => "awaiting_agent",
            GrantState::AwaitingHuman => "awaiting_human",
            GrantState::Active => "active",
            GrantState::Revoked => "revoked",
        }
    }

    /// Parses a stored or requested state name.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "awaiting_agent" => Some(GrantState::AwaitingAgent),
            "awaiting_human" => Some(GrantState::AwaitingHuman),
            "active" => Some(GrantState::Active),
            "revoked" => Some(GrantState::Revoked),
            _ => None,
        }
    }
}

/// Largest Issue body, in bytes (spec §3).
pub const MAX_BODY_BYTES: usize = 262_144;
/// Largest Issue title, in characters (spec §3).
pub const MAX_TITLE_CHARS: usize = 255;

/// Largest `commit_count.max` of a repository grant envelope (spec §8).
pub const MAX_COMMITS: i64 = 32;

/// The scopes an OAuth token may carry: a person's ordinary activity, reading
/// repositories and writing Issues, nothing more (spec §9).
pub const OFFERED_SCOPES: [&str; 2] = ["read:repository", "write:issue"];
/// The only `response_type` refcore serves (spec §9).
pub const RESPONSE_TYPE: &str = "code";
/// The challenge method every authorization request must use (spec §9).
pub const S256: &str = "S256";
