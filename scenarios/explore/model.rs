//! Family 20, the model (issue #29): the contract as a small state machine
//! that predicts, for every operation of the explorer, the answer a Core
//! must give and the observable state after it. Written from `docs/spec.md`
//! (the clause ids name the rule each prediction comes from), never from
//! refcore. One agent (lab-bot) on one private repository (alice/lab): the
//! grants a sequence prepares, their submissions by key slot with where
//! their Issue is, whether lab-bot can see the repository and whether its
//! token still exists.

use std::collections::BTreeMap;

use grantgate_engine::prelude::*;
use proptest::prelude::*;

/// A grant's state (S2.states).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    AwaitingAgent,
    AwaitingHuman,
    Active,
    Revoked,
}

impl State {
    /// Its name in the contract.
    pub fn name(self) -> &'static str {
        match self {
            State::AwaitingAgent => state::AWAITING_AGENT,
            State::AwaitingHuman => state::AWAITING_HUMAN,
            State::Active => state::ACTIVE,
            State::Revoked => state::REVOKED,
        }
    }
}

/// One operation; grants are named by their order of preparation in the
/// sequence (taken modulo how many exist, so a shrunk sequence stays
/// meaningful), submissions by a key slot and a text variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// alice prepares a grant for lab-bot through the form (S4.prepare).
    Prepare,
    /// lab-bot confirms natively (S3.route.confirm).
    Confirm(usize),
    /// alice posts approve, with the current or a stale revision (S4.approve, S4.stale).
    Approve { grant: usize, stale: bool },
    /// alice posts withdraw (S4.withdraw, S4.stale).
    Withdraw { grant: usize, stale: bool },
    /// lab-bot submits natively under key `key` with text variant `text`
    /// (S3.route.submit, S3.replay.*).
    Submit { grant: usize, key: u8, text: u8 },
    /// lab-bot reads a key back (S3.route.readback).
    Readback { grant: usize, key: u8 },
    /// lab-bot lists every state (S3.route.list).
    List,
    /// The setup actor removes lab-bot from alice/lab (S3.access-loss).
    RemoveAgent,
    /// The setup actor adds lab-bot back as a writer (S10.restored).
    RestoreAgent,
    /// The setup actor deletes lab-bot's token (`token-delete`, S10.blocked).
    DeleteToken,
    /// The setup actor mints lab-bot a new token (S10.restored).
    MintToken,
    /// alice edits the Issue of a submission to text variant 2
    /// (`issue-edit`, S10.stored-input).
    EditIssue { grant: usize, key: u8 },
    /// The site admin moves the Issue of a submission to alice/archive
    /// (S3.receipt.status).
    MoveIssue { grant: usize, key: u8 },
    /// The setup actor deletes the Issue of a submission (S3.receipt.status).
    DeleteIssue { grant: usize, key: u8 },
}

/// One move of a sequence: an operation, or two in flight at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    One(Op),
    Both(Op, Op),
}

/// Grant indexes below this aim at a grant where the operation succeeds
/// (see [`Model::aim`]).
pub const AIMED: usize = 4;

/// The operations, weighted so most sequences reach `active`, replays,
/// edits and tombstones while access and tokens come and go.
pub fn op() -> impl Strategy<Value = Op> {
    let g = 0..AIMED + AIMED / 3; // three in four operations aim
    let k = 0..2u8;
    prop_oneof![
        3 => Just(Op::Prepare),
        1 => Just(Op::List),
        3 => Just(Op::RemoveAgent),
        10 => Just(Op::RestoreAgent),
        2 => Just(Op::DeleteToken),
        10 => Just(Op::MintToken),
        8 => (g.clone(), k.clone()).prop_map(|(grant, key)| Op::EditIssue { grant, key }),
        2 => (g.clone(), k.clone()).prop_map(|(grant, key)| Op::MoveIssue { grant, key }),
        3 => (g, k).prop_map(|(grant, key)| Op::DeleteIssue { grant, key }),
        40 => racing(),
    ]
}

/// The operations that may be in flight at once: the agent's and alice's
/// actions on grants.
pub fn racing() -> impl Strategy<Value = Op> {
    let g = 0..AIMED + AIMED / 3;
    let stale = prop::bool::weighted(0.15);
    prop_oneof![
        6 => g.clone().prop_map(Op::Confirm),
        6 => (g.clone(), stale).prop_map(|(grant, stale)| Op::Approve { grant, stale }),
        3 => (g.clone(), stale).prop_map(|(grant, stale)| Op::Withdraw { grant, stale }),
        8 => (g.clone(), 0..2u8, 0..2u8).prop_map(|(grant, key, text)| Op::Submit { grant, key, text }),
        3 => (g, 0..2u8).prop_map(|(grant, key)| Op::Readback { grant, key }),
    ]
}

/// A sequence of at most `steps` moves (one in eight a pair) after a
/// grant is prepared, confirmed and, in every other sequence, approved: so
/// half the sequences can submit from their first move and half can
/// decide on a confirmed grant; later preparations explore the earlier
/// states.
pub fn sequence(steps: usize) -> impl Strategy<Value = Vec<Move>> {
    let one = op().prop_map(Move::One);
    let both = (racing(), racing()).prop_map(|(a, b)| Move::Both(a, b));
    let step = prop_oneof![7 => one, 1 => both];
    let moves = prop::collection::vec(step, 1..=steps.max(1));
    (prop::bool::ANY, moves).prop_map(|(approved, moves)| {
        let approve = Op::Approve {
            grant: 0,
            stale: false,
        };
        let start = [Op::Prepare, Op::Confirm(0), approve].map(Move::One);
        let start = &start[..if approved { 3 } else { 2 }];
        start.iter().copied().chain(moves).collect()
    })
}

/// Where a submission's Issue is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Here,
    Deleted,
    Moved,
}

/// A submission the model remembers: its text variant, whether alice
/// edited its Issue, and where that Issue is.
#[derive(Debug, Clone, Copy)]
pub struct Sub {
    pub text: u8,
    pub edited: bool,
    pub place: Place,
}

impl Sub {
    /// The receipt's status now (S3.receipt.status).
    pub fn status(&self) -> &'static str {
        match self.place {
            Place::Here => "submitted",
            Place::Deleted => "issue_deleted",
            Place::Moved => "issue_binding_changed",
        }
    }

    /// The text variant its Issue holds now: alice's edit is variant 2,
    /// which no submission sends (S10.stored-input: a replay never
    /// rewrites it).
    pub fn issue_text(&self) -> u8 {
        if self.edited { 2 } else { self.text }
    }
}

/// One grant of the model.
#[derive(Debug, Clone)]
pub struct MGrant {
    pub state: State,
    pub revision: i64,
    pub subs: BTreeMap<u8, Sub>,
    /// The timestamps its state changes set (S2.grant.timestamps: each
    /// null until its event).
    pub stamped: Vec<&'static str>,
}

/// What the Core must answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// This HTTP status.
    Status(u16),
    /// Done: a browser form accepted (302/303 redirect or 200 with the
    /// page, S4.redirect.other), or a setup action that succeeded.
    Accepted,
    /// A readback or replay: 200 with this receipt status.
    Receipt(u16, &'static str),
    /// The list holds exactly these (grant, state) of the sequence's grants.
    Listed(Vec<(usize, &'static str)>),
    /// Not sent: the operation does not apply (no grant yet, nothing to
    /// act on, an extension the Core lacks, or a rule the spec leaves open).
    Skip,
}

/// An operation with what it acts on, fixed before it is sent (two
/// operations in flight were both aimed at the same model).
#[derive(Debug, Clone, Copy)]
pub struct Aimed {
    pub op: Op,
    /// The grant, by order of preparation.
    pub grant: Option<usize>,
    /// The `state_revision` a form sends.
    pub revision: i64,
}

impl Aimed {
    /// The key slot it acts on, if any.
    pub fn key(&self) -> Option<u8> {
        match self.op {
            Op::Submit { key, .. }
            | Op::Readback { key, .. }
            | Op::EditIssue { key, .. }
            | Op::MoveIssue { key, .. }
            | Op::DeleteIssue { key, .. } => Some(key),
            _ => None,
        }
    }

    /// The operation in words.
    pub fn describe(&self) -> String {
        let g = self.grant.map_or_else(|| "-".to_owned(), |t| t.to_string());
        let form = |what: &str, stale: bool| match stale {
            true => format!("alice {what} grant {g} with revision {}", self.revision),
            false => format!("alice {what} grant {g}"),
        };
        match self.op {
            Op::Prepare => "alice prepares a grant".into(),
            Op::Confirm(_) => format!("lab-bot confirms grant {g}"),
            Op::Approve { stale, .. } => form("approves", stale),
            Op::Withdraw { stale, .. } => form("withdraws", stale),
            Op::Submit { key, text, .. } => {
                format!("lab-bot submits key {key} (text {text}) to grant {g}")
            }
            Op::Readback { key, .. } => format!("lab-bot reads back key {key} of grant {g}"),
            Op::List => "lab-bot lists state=all".into(),
            Op::RemoveAgent => "lab-bot is removed from alice/lab".into(),
            Op::RestoreAgent => "lab-bot is added back to alice/lab".into(),
            Op::DeleteToken => "lab-bot's token is deleted".into(),
            Op::MintToken => "lab-bot gets a new token".into(),
            Op::EditIssue { key, .. } => format!("alice edits the Issue of key {key} of grant {g}"),
            Op::MoveIssue { key, .. } => format!("the Issue of key {key} of grant {g} is moved"),
            Op::DeleteIssue { key, .. } => {
                format!("the Issue of key {key} of grant {g} is deleted")
            }
        }
    }
}

/// The optional setup extensions the Core declares that the model uses.
#[derive(Debug, Clone, Copy, Default)]
pub struct Extensions {
    pub issue_edit: bool,
    pub token_delete: bool,
}

/// The model: the sequence's grants, whether lab-bot can see alice/lab and
/// whether its token exists.
#[derive(Debug, Clone)]
pub struct Model {
    pub grants: Vec<MGrant>,
    pub access: bool,
    pub token: bool,
    pub extensions: Extensions,
}

impl Model {
    /// A fresh model: no grants, access and a token.
    pub fn new(extensions: Extensions) -> Model {
        Model {
            grants: Vec::new(),
            access: true,
            token: true,
            extensions,
        }
    }

    /// Fixes what `op` acts on. A grant index names, modulo their number,
    /// either one of the grants where the operation would succeed (an index
    /// below [`AIMED`], so sequences get far: confirmed, approved, replayed)
    /// or one of all of them (any other index, so refusals in every state
    /// are explored too). Deterministic, so a shrunk sequence means the same.
    pub fn aim(&self, op: Op) -> Aimed {
        let (n, fits): (usize, fn(&MGrant) -> bool) = match op {
            Op::Confirm(n) => (n, |g| g.state == State::AwaitingAgent),
            Op::Approve { grant, .. } => (grant, |g| g.state == State::AwaitingHuman),
            Op::Withdraw { grant, .. } => (grant, |g| g.state != State::Revoked),
            Op::Submit { grant, .. } => (grant, |g| g.state == State::Active),
            Op::Readback { grant, .. } => (grant, |g| !g.subs.is_empty()),
            Op::EditIssue { grant, .. }
            | Op::MoveIssue { grant, .. }
            | Op::DeleteIssue { grant, .. } => {
                (grant, |g| g.subs.values().any(|s| s.place == Place::Here))
            }
            _ => (0, |_| false),
        };
        let all: Vec<usize> = (0..self.grants.len()).collect();
        let fitting: Vec<usize> = (all.iter().copied())
            .filter(|&i| fits(&self.grants[i]))
            .collect();
        let pool = if n < AIMED && !fitting.is_empty() {
            &fitting
        } else {
            &all
        };
        let grant = match op {
            Op::Prepare | Op::List | Op::RemoveAgent | Op::RestoreAgent => None,
            Op::DeleteToken | Op::MintToken => None,
            _ => (!pool.is_empty()).then(|| pool[n % pool.len()]),
        };
        // An aimed operation on a submission takes another key when its
        // own has nothing to act on.
        let op = match (grant, with_key(op, 0)) {
            (Some(g), Some(_)) if n < AIMED => {
                let subs = &self.grants[g].subs;
                let fits = |s: &Sub| s.place == Place::Here || matches!(op, Op::Readback { .. });
                let own = Aimed {
                    op,
                    grant,
                    revision: 1,
                }
                .key();
                match own.and_then(|k| subs.get(&k)).is_some_and(fits) {
                    true => op,
                    false => (subs.iter().find(|(_, s)| fits(s)))
                        .and_then(|(&k, _)| with_key(op, k))
                        .unwrap_or(op),
                }
            }
            _ => op,
        };
        let current = grant.map_or(1, |g| self.grants[g].revision);
        let stale = matches!(
            op,
            Op::Approve { stale: true, .. } | Op::Withdraw { stale: true, .. }
        );
        let revision = if stale && current > 1 {
            current - 1
        } else {
            current
        };
        Aimed {
            op,
            grant,
            revision,
        }
    }

    /// How a native call is refused before the grant is looked at: a
    /// deleted token (401, S3.statuses, S10.blocked) or lost access (404,
    /// S1.private-invisible, S3.access-loss).
    pub fn refused(&self) -> Option<Answer> {
        (!self.token)
            .then_some(Answer::Status(401))
            .or((!self.access).then_some(Answer::Status(404)))
    }

    /// The answer `a` must get, and the model after it.
    pub fn step(&mut self, a: &Aimed) -> Answer {
        let refused = self.refused();
        let ext = self.extensions;
        let (op, key) = (a.op, a.key());
        let Some(g) = a.grant else {
            return match op {
                // Preparing for an agent who cannot see the repository is a
                // rule the spec leaves open.
                Op::Prepare if self.access => {
                    self.grants.push(MGrant {
                        state: State::AwaitingAgent,
                        revision: 1,
                        subs: BTreeMap::new(),
                        stamped: Vec::new(),
                    });
                    Answer::Accepted
                }
                Op::List => refused
                    .filter(|r| *r == Answer::Status(401))
                    .unwrap_or_else(|| {
                        Answer::Listed(if self.access {
                            (self.grants.iter().enumerate())
                                .map(|(i, g)| (i, g.state.name()))
                                .collect()
                        } else {
                            Vec::new() // S3.access-loss: the list omits them
                        })
                    }),
                Op::RemoveAgent if self.access => flip(&mut self.access),
                Op::RestoreAgent if !self.access => flip(&mut self.access),
                Op::DeleteToken if ext.token_delete && self.token => flip(&mut self.token),
                Op::MintToken if ext.token_delete && !self.token => flip(&mut self.token),
                _ => Answer::Skip,
            };
        };
        let grant = &mut self.grants[g];
        match op {
            Op::Confirm(_) => {
                if let Some(r) = refused {
                    return r;
                }
                if grant.state != State::AwaitingAgent {
                    return Answer::Status(409); // S3.confirm.state, S3.withdrawn
                }
                transition(grant, State::AwaitingHuman)
            }
            Op::Approve { .. } | Op::Withdraw { .. } => {
                let approve = matches!(op, Op::Approve { .. });
                // Approving for an agent who lost access is left open by the spec.
                if approve && !self.access {
                    return Answer::Skip;
                }
                let allowed = match approve {
                    true => grant.state == State::AwaitingHuman, // S4.approve
                    false => grant.state != State::Revoked,      // S4.withdraw
                };
                if a.revision != grant.revision || !allowed {
                    return Answer::Status(409); // S4.stale
                }
                transition(
                    grant,
                    if approve {
                        State::Active
                    } else {
                        State::Revoked
                    },
                )
            }
            Op::Submit { key, text, .. } => {
                if let Some(r) = refused {
                    return r;
                }
                if grant.state != State::Active {
                    return Answer::Status(409); // S3.submit.active, replays included
                }
                match grant.subs.get(&key) {
                    // S3.replay.identical, S3.receipt.tombstone-key, S10.stored-input
                    Some(sub) if sub.text == text => Answer::Receipt(200, sub.status()),
                    Some(_) => Answer::Status(409), // S3.replay.conflict
                    None => {
                        let place = Place::Here;
                        (grant.subs).insert(
                            key,
                            Sub {
                                text,
                                edited: false,
                                place,
                            },
                        );
                        Answer::Receipt(201, "submitted")
                    }
                }
            }
            Op::Readback { .. } => match (refused, grant.subs.get(&key.unwrap_or(0))) {
                (Some(r), _) => r,
                (None, Some(sub)) => Answer::Receipt(200, sub.status()), // S3.receipt.historical
                (None, None) => Answer::Status(404),
            },
            Op::EditIssue { .. } | Op::MoveIssue { .. } | Op::DeleteIssue { .. } => {
                let sub = grant.subs.get_mut(&key.unwrap_or(0));
                match (op, sub) {
                    (_, Some(sub)) if sub.place != Place::Here => Answer::Skip,
                    (Op::EditIssue { .. }, Some(sub)) if ext.issue_edit => {
                        sub.edited = true;
                        Answer::Accepted
                    }
                    (Op::MoveIssue { .. }, Some(sub)) => {
                        sub.place = Place::Moved;
                        Answer::Accepted
                    }
                    (Op::DeleteIssue { .. }, Some(sub)) => {
                        sub.place = Place::Deleted;
                        Answer::Accepted
                    }
                    _ => Answer::Skip,
                }
            }
            _ => Answer::Skip,
        }
    }

    /// What lab-bot reads of grant `g` (S3.route.get, S3.withdrawn,
    /// S3.access-loss), in the words the explorer compares.
    pub fn grant_view(&self, g: usize) -> String {
        match self.refused() {
            Some(Answer::Status(s)) => format!("status {s}"),
            _ => {
                let m = &self.grants[g];
                let mut stamped = m.stamped.clone();
                stamped.sort_unstable();
                // alice is the only human who approves in a sequence.
                let approver = match stamped.contains(&"approved_at") {
                    true => "alice",
                    false => "nobody",
                };
                grant_words(m.state.name(), m.revision, &stamped, approver)
            }
        }
    }

    /// What the setup actor reads at the index of the Issue of key `key` of
    /// grant `g`: its text variant and marker while it is there (S1.issue.marker,
    /// S10.stored-input), else nothing (404).
    pub fn issue_view(&self, g: usize, key: u8) -> Option<String> {
        let sub = self.grants[g].subs.get(&key)?;
        Some(match sub.place {
            Place::Here => format!("Issue with text {} marked by key {key}", sub.issue_text()),
            Place::Deleted | Place::Moved => "status 404".into(),
        })
    }
}

/// `op` acting on key slot `key` instead, for the operations on an
/// existing submission.
fn with_key(op: Op, key: u8) -> Option<Op> {
    match op {
        Op::Readback { grant, .. } => Some(Op::Readback { grant, key }),
        Op::EditIssue { grant, .. } => Some(Op::EditIssue { grant, key }),
        Op::MoveIssue { grant, .. } => Some(Op::MoveIssue { grant, key }),
        Op::DeleteIssue { grant, .. } => Some(Op::DeleteIssue { grant, key }),
        _ => None,
    }
}

/// The timestamp member a change to `to` sets.
fn stamp(to: State) -> &'static str {
    match to {
        State::AwaitingHuman => "confirmed_at",
        State::Active => "approved_at",
        _ => "revoked_at",
    }
}

/// A state change: one more revision (S2.revision), its timestamp set.
fn transition(grant: &mut MGrant, to: State) -> Answer {
    grant.state = to;
    grant.revision += 1;
    grant.stamped.push(stamp(to));
    match to {
        State::AwaitingHuman => Answer::Status(200),
        _ => Answer::Accepted,
    }
}

/// A setup action that changes what lab-bot holds.
fn flip(flag: &mut bool) -> Answer {
    *flag = !*flag;
    Answer::Accepted
}

/// A grant in the words both the model and the reader use: its state and
/// revision, which timestamps are set, who approved.
pub fn grant_words(state: &str, revision: i64, stamped: &[&str], approver: &str) -> String {
    format!(
        "{state} at revision {revision}, stamped {}, approved by {approver}",
        stamped.join("+")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `ops` on a fresh model with every extension, aiming each.
    fn after(ops: &[Op]) -> (Model, Vec<Answer>) {
        let mut m = Model::new(Extensions {
            issue_edit: true,
            token_delete: true,
        });
        let answers = ops.iter().map(|&op| m.step(&m.aim(op))).collect();
        (m, answers)
    }

    #[test]
    fn every_state_change_adds_one_revision() {
        let withdraw = Op::Withdraw {
            grant: 0,
            stale: false,
        };
        let (m, answers) = after(&[Op::Prepare, Op::Confirm(0), withdraw, withdraw]);
        assert_eq!(
            m.grant_view(0),
            "revoked at revision 3, stamped confirmed_at+revoked_at, approved by nobody"
        );
        assert_eq!(answers[3], Answer::Status(409));
    }

    #[test]
    fn a_deleted_issue_keeps_its_key_spent() {
        let submit = Op::Submit {
            grant: 0,
            key: 1,
            text: 0,
        };
        let ops = [
            Op::Prepare,
            Op::Confirm(0),
            Op::Approve {
                grant: 0,
                stale: false,
            },
            submit,
            Op::DeleteIssue { grant: 0, key: 1 },
            submit,
        ];
        let (m, answers) = after(&ops);
        assert_eq!(answers[3], Answer::Receipt(201, "submitted"));
        assert_eq!(answers[5], Answer::Receipt(200, "issue_deleted"));
        assert_eq!(m.issue_view(0, 1).as_deref(), Some("status 404"));
    }

    #[test]
    fn a_deleted_token_is_refused_before_lost_access() {
        let ops = [
            Op::Prepare,
            Op::RemoveAgent,
            Op::DeleteToken,
            Op::Confirm(0),
            Op::List,
        ];
        let (_, answers) = after(&ops);
        assert_eq!(answers[3..], [Answer::Status(401), Answer::Status(401)]);
    }

    #[test]
    fn an_aimed_issue_operation_takes_the_key_that_has_an_issue() {
        let ops = [
            Op::Prepare,
            Op::Confirm(0),
            Op::Approve {
                grant: 0,
                stale: false,
            },
            Op::Submit {
                grant: 0,
                key: 1,
                text: 0,
            },
        ];
        let (m, _) = after(&ops);
        let aimed = m.aim(Op::MoveIssue { grant: 0, key: 0 });
        assert_eq!(aimed.op, Op::MoveIssue { grant: 0, key: 1 });
    }
}
