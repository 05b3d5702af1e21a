//! Family 20, the model (issue #29): the contract as a small state machine
//! that predicts, for every operation of the explorer, the answer a Core
//! must give and the observable state after it. Written from `docs/spec.md`
//! (the clause ids name the rule each prediction comes from), never from
//! refcore. One agent (lab-bot) on one private repository (alice/lab), the
//! grants a sequence prepares, their submissions by key slot, and whether
//! the agent can still see the repository.

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
    /// The setup actor adds lab-bot back as a writer.
    RestoreAgent,
    /// The setup actor deletes the Issue of a submission (S3.receipt.status).
    DeleteIssue { grant: usize, key: u8 },
}

impl Op {
    /// The operation in words, naming the grant it acted on (`target`, by
    /// order of preparation).
    pub fn describe(self, target: Option<usize>) -> String {
        let g = target.map_or_else(|| "-".to_owned(), |t| t.to_string());
        let stale = |s: bool| if s { " with a stale revision" } else { "" };
        match self {
            Op::Prepare => "alice prepares a grant".into(),
            Op::Confirm(_) => format!("lab-bot confirms grant {g}"),
            Op::Approve { stale: s, .. } => format!("alice approves grant {g}{}", stale(s)),
            Op::Withdraw { stale: s, .. } => format!("alice withdraws grant {g}{}", stale(s)),
            Op::Submit { key, text, .. } => {
                format!("lab-bot submits key {key} (text {text}) to grant {g}")
            }
            Op::Readback { key, .. } => format!("lab-bot reads back key {key} of grant {g}"),
            Op::List => "lab-bot lists state=all".into(),
            Op::RemoveAgent => "lab-bot is removed from alice/lab".into(),
            Op::RestoreAgent => "lab-bot is added back to alice/lab".into(),
            Op::DeleteIssue { key, .. } => {
                format!("the Issue of key {key} of grant {g} is deleted")
            }
        }
    }
}

/// Grant indexes below this aim at a grant where the operation succeeds
/// (see [`Model::target`]).
pub const AIMED: usize = 4;

/// The operations, weighted so most sequences reach `active`, replays and
/// deleted Issues while access comes and goes (measured: see docs).
pub fn op() -> impl Strategy<Value = Op> {
    // Three in four operations aim.
    let g = 0..AIMED + AIMED / 3;
    let stale = prop::bool::weighted(0.15);
    prop_oneof![
        1 => Just(Op::Prepare),
        4 => g.clone().prop_map(Op::Confirm),
        4 => (g.clone(), stale).prop_map(|(grant, stale)| Op::Approve { grant, stale }),
        1 => (g.clone(), stale).prop_map(|(grant, stale)| Op::Withdraw { grant, stale }),
        10 => (g.clone(), 0..2u8, 0..2u8).prop_map(|(grant, key, text)| Op::Submit { grant, key, text }),
        4 => (g.clone(), 0..2u8).prop_map(|(grant, key)| Op::Readback { grant, key }),
        1 => Just(Op::List),
        1 => Just(Op::RemoveAgent),
        4 => Just(Op::RestoreAgent),
        2 => (g, 0..2u8).prop_map(|(grant, key)| Op::DeleteIssue { grant, key }),
    ]
}

/// A sequence of at most `steps` operations after a first preparation (so
/// no sequence starts with operations on nothing).
pub fn sequence(steps: usize) -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op(), 1..=steps.max(1)).prop_map(|mut ops| {
        ops.insert(0, Op::Prepare);
        ops
    })
}

/// A submission the model remembers: its text variant and whether its
/// Issue was deleted.
#[derive(Debug, Clone, Copy)]
pub struct Sub {
    pub text: u8,
    pub deleted: bool,
}

/// One grant of the model.
#[derive(Debug, Clone)]
pub struct MGrant {
    pub state: State,
    pub revision: i64,
    pub subs: BTreeMap<u8, Sub>,
}

/// What the Core must answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// This HTTP status.
    Status(u16),
    /// A browser form accepted (302/303 redirect or 200 with the page, S4.redirect.other).
    Accepted,
    /// A readback or replay: 200 with this receipt status.
    Receipt(u16, &'static str),
    /// The list holds exactly these (grant, state) of the sequence's grants.
    Listed(Vec<(usize, &'static str)>),
    /// Not sent: the operation does not apply (no grant yet, nothing to
    /// delete, or a rule the spec leaves open).
    Skip,
}

/// The model: the sequence's grants and whether lab-bot can see alice/lab.
#[derive(Debug, Clone)]
pub struct Model {
    pub grants: Vec<MGrant>,
    pub access: bool,
}

impl Default for Model {
    fn default() -> Self {
        Model {
            grants: Vec::new(),
            access: true,
        }
    }
}

impl Model {
    /// The grant `op` acts on. Its index names, modulo their number, either
    /// one of the grants where the operation would succeed (an index below
    /// [`AIMED`], so sequences get far: confirmed, approved, replayed) or
    /// one of all of them (any other index, so refusals in every state are
    /// explored too). Deterministic, so a shrunk sequence means the same.
    pub fn target(&self, op: Op) -> Option<usize> {
        let (n, fits): (usize, fn(&MGrant) -> bool) = match op {
            Op::Confirm(n) => (n, |g| g.state == State::AwaitingAgent),
            Op::Approve { grant, .. } => (grant, |g| g.state == State::AwaitingHuman),
            Op::Withdraw { grant, .. } => (grant, |g| g.state != State::Revoked),
            Op::Submit { grant, .. } => (grant, |g| g.state == State::Active),
            Op::Readback { grant, .. } | Op::DeleteIssue { grant, .. } => {
                (grant, |g| !g.subs.is_empty())
            }
            _ => return None,
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
        (!pool.is_empty()).then(|| pool[n % pool.len()])
    }

    /// The answer `op` must get, and the model after it.
    pub fn step(&mut self, op: Op) -> Answer {
        match op {
            // Preparing for an agent who cannot see the repository is a rule
            // the spec leaves open.
            Op::Prepare if !self.access => Answer::Skip,
            Op::Prepare => {
                self.grants.push(MGrant {
                    state: State::AwaitingAgent,
                    revision: 1,
                    subs: BTreeMap::new(),
                });
                Answer::Accepted
            }
            Op::Confirm(_) => {
                let Some(g) = self.target(op) else {
                    return Answer::Skip;
                };
                if !self.access {
                    return Answer::Status(404); // S1.private-invisible, S3.access-loss
                }
                let grant = &mut self.grants[g];
                if grant.state != State::AwaitingAgent {
                    return Answer::Status(409); // S3.confirm.state
                }
                grant.state = State::AwaitingHuman;
                grant.revision += 1;
                Answer::Status(200)
            }
            Op::Approve { stale, .. } | Op::Withdraw { stale, .. } => {
                let Some(g) = self.target(op) else {
                    return Answer::Skip;
                };
                let approve = matches!(op, Op::Approve { .. });
                // Approving for an agent who lost access is left open by the spec.
                if approve && !self.access {
                    return Answer::Skip;
                }
                let grant = &mut self.grants[g];
                if stale && grant.revision > 1 {
                    return Answer::Status(409); // S4.stale
                }
                let allowed = if approve {
                    grant.state == State::AwaitingHuman // S4.approve
                } else {
                    grant.state != State::Revoked // S4.withdraw
                };
                if !allowed {
                    return Answer::Status(409);
                }
                grant.state = if approve {
                    State::Active
                } else {
                    State::Revoked
                };
                grant.revision += 1; // S2.revision
                Answer::Accepted
            }
            Op::Submit { key, text, .. } => {
                let Some(g) = self.target(op) else {
                    return Answer::Skip;
                };
                if !self.access {
                    return Answer::Status(404);
                }
                let grant = &mut self.grants[g];
                if grant.state != State::Active {
                    return Answer::Status(409); // S3.submit.active, replays included
                }
                match grant.subs.get(&key) {
                    Some(sub) if sub.text == text => Answer::Receipt(200, receipt(sub)), // S3.replay.identical, S3.receipt.tombstone-key
                    Some(_) => Answer::Status(409), // S3.replay.conflict
                    None => {
                        grant.subs.insert(
                            key,
                            Sub {
                                text,
                                deleted: false,
                            },
                        );
                        Answer::Receipt(201, "submitted")
                    }
                }
            }
            Op::Readback { key, .. } => {
                let Some(g) = self.target(op) else {
                    return Answer::Skip;
                };
                if !self.access {
                    return Answer::Status(404);
                }
                match self.grants[g].subs.get(&key) {
                    Some(sub) => Answer::Receipt(200, receipt(sub)), // S3.receipt.historical
                    None => Answer::Status(404),
                }
            }
            Op::List => Answer::Listed(if self.access {
                (self.grants.iter().enumerate())
                    .map(|(i, g)| (i, g.state.name()))
                    .collect()
            } else {
                Vec::new() // S3.access-loss: the list omits them
            }),
            Op::RemoveAgent if self.access => {
                self.access = false;
                Answer::Accepted
            }
            Op::RestoreAgent if !self.access => {
                self.access = true;
                Answer::Accepted
            }
            Op::RemoveAgent | Op::RestoreAgent => Answer::Skip,
            Op::DeleteIssue { key, .. } => {
                let sub = (self.target(op)).and_then(|g| self.grants[g].subs.get_mut(&key));
                match sub {
                    Some(sub) if !sub.deleted => {
                        sub.deleted = true;
                        Answer::Accepted
                    }
                    _ => Answer::Skip,
                }
            }
        }
    }
}

fn receipt(sub: &Sub) -> &'static str {
    if sub.deleted {
        "issue_deleted"
    } else {
        "submitted"
    }
}
