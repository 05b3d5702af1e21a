//! Family 20, exploration (issue #29): seeded random sequences of operations
//! by every actor — alice through the real forms, lab-bot natively, the
//! setup actor — generated with proptest and run against the Core, each
//! answer and then the touched grant's state compared with the model
//! (`explore_model.rs`). A difference is shrunk (proptest's value tree, each
//! candidate run again on fresh grants of the same stack) to a short
//! sequence given as numbered steps, with the seed that reproduces it:
//! `GRANTGATE_EXPLORE_SEED=S grantgate run --filter explore`.
//! `GRANTGATE_EXPLORE_CASES` and `GRANTGATE_EXPLORE_STEPS` raise the budget
//! for long runs.

use std::collections::BTreeMap;
use std::sync::{OnceLock, mpsc};

use grantgate_engine::prelude::*;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use crate::browser::accepted;
use crate::explore_model::{Answer, Model, Op, sequence};
use crate::flows::{LAB, LAB_BOT};

/// This family's scenarios, in catalogue order.
pub fn scenarios() -> Vec<Scenario> {
    vec![explored_sequences_match_the_model()]
}

/// The catalogue's budget: sequences per trial, operations per sequence.
const CASES: usize = 10;
const STEPS: usize = 40;
/// Shrinking stops after this many candidate runs.
const SHRINK_RUNS: usize = 64;

/// The run's seed: `GRANTGATE_EXPLORE_SEED`, else one drawn once per
/// process, so both backends (and parity) explore the same sequences.
fn seed() -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    *SEED.get_or_init(|| {
        std::env::var("GRANTGATE_EXPLORE_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                let key = NewIssue::new("", "").request_key.replace('-', "");
                u64::from_str_radix(&key[..16], 16).unwrap_or(1)
            })
    })
}

fn budget(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Seeded sequences of prepare, confirm, approve and withdraw (current and
/// stale revisions), submit and replay (same and changed text), readback,
/// list, access removed and restored and Issues deleted get, at every
/// step, the answer the model of the contract predicts, and each touched
/// grant then reads back in the predicted state and revision; a difference
/// is reported as the shortest sequence found that shows it.
#[scenario(Exploration, parity, clauses = ["S2.states", "S2.revision", "S3.confirm.state", "S3.submit.active", "S3.replay.identical", "S3.replay.conflict", "S3.receipt.status", "S3.receipt.tombstone-key", "S3.access-loss", "S3.withdrawn", "S4.approve", "S4.withdraw", "S4.stale"])]
async fn explored_sequences_match_the_model(ctx: &mut Ctx) -> Outcome {
    let seed = seed();
    let (cases, steps) = (
        budget("GRANTGATE_EXPLORE_CASES", CASES),
        budget("GRANTGATE_EXPLORE_STEPS", STEPS),
    );
    let generator = Generator::start(seed, steps);
    let alice = ctx.human("alice")?;
    alice.login().await?;
    let mut world = World { alice, run: 0 };
    let mut answered = Vec::new();
    for case in 1..=cases {
        let ops = generator.ask(Ask::Next)?;
        ctx.step(&format!(
            "sequence {case} of {cases}: {} operations",
            ops.len()
        ));
        let Err(first) = world.run(ctx, &ops, &mut answered).await? else {
            continue;
        };
        ctx.step(&format!("sequence {case}: shrinking a difference"));
        let (mut shortest, mut difference, mut runs) = (ops, first, 0);
        let mut candidate = generator.ask(Ask::Simplify)?;
        while !candidate.is_empty() && runs < SHRINK_RUNS {
            runs += 1;
            candidate = match world.run(ctx, &candidate, &mut Vec::new()).await? {
                Err(d) => {
                    (shortest, difference) = (candidate, d);
                    generator.ask(Ask::Simplify)?
                }
                Ok(()) => generator.ask(Ask::Complicate)?,
            };
        }
        return Err(Abort::failed(format!(
            "the Core differs from the model of the contract (seed {seed}, sequence \
             {case}, shrunk to {} operations in {runs} runs): {difference}; reproduce with \
             GRANTGATE_EXPLORE_SEED={seed}",
            shortest.len(),
        )));
    }
    ctx.observe("operations and answers", &answered);
    Ok(())
}

/// A request to the generator.
enum Ask {
    /// A new sequence.
    Next,
    /// A simpler version of the last one (none: fully shrunk).
    Simplify,
    /// Back towards the last failing one after a simplification passed.
    Complicate,
}

/// proptest's runner and value tree, on a thread of their own (a value
/// tree is not `Send`, and a scenario's future must be): each ask gets the
/// tree's current sequence, or an empty one when it cannot move.
struct Generator {
    ask: mpsc::Sender<Ask>,
    answer: mpsc::Receiver<Vec<Op>>,
}

impl Generator {
    fn start(seed: u64, steps: usize) -> Generator {
        let (ask, asked) = mpsc::channel::<Ask>();
        let (reply, answer) = mpsc::channel();
        std::thread::spawn(move || {
            let mut rng_seed = [0u8; 32];
            rng_seed[..8].copy_from_slice(&seed.to_le_bytes());
            let mut runner = TestRunner::new_with_rng(
                Config::default(),
                TestRng::from_seed(RngAlgorithm::ChaCha, &rng_seed),
            );
            let strategy = sequence(steps);
            let mut tree = None;
            // Ends when the scenario drops its sender.
            while let Ok(ask) = asked.recv() {
                let ops = match (ask, tree.as_mut()) {
                    (Ask::Next, _) => {
                        let t = strategy.new_tree(&mut runner).ok();
                        tree = t;
                        tree.as_ref().map(ValueTree::current)
                    }
                    (Ask::Simplify, Some(t)) => t.simplify().then(|| t.current()),
                    (Ask::Complicate, Some(t)) => t.complicate().then(|| t.current()),
                    (_, None) => None,
                };
                if reply.send(ops.unwrap_or_default()).is_err() {
                    break;
                }
            }
        });
        Generator { ask, answer }
    }

    /// The sequence the generator gives for `ask` (answered at once: the
    /// thread only computes).
    fn ask(&self, ask: Ask) -> Step<Vec<Op>> {
        self.ask
            .send(ask)
            .ok()
            .and_then(|()| self.answer.recv().ok())
            .ok_or_else(|| Abort::errored("the sequence generator stopped"))
    }
}

/// What one run of a sequence needs besides the model: alice's browser and
/// a counter that keeps each run's texts apart.
struct World {
    alice: Human,
    run: usize,
}

/// The Core's side of one model grant.
struct Live {
    grant: GrantRef,
    proposal: Proposal,
    keys: Vec<String>,
    issues: BTreeMap<u8, i64>,
}

impl World {
    /// Runs `ops` from a fresh model on fresh grants; `Ok(Err(why))` is a
    /// difference from the model (the numbered steps up to it, and what
    /// differed), `Err` a broken step (an unreadable answer
    /// fails the trial as always). Each answer is appended to `answered`.
    async fn run(
        &mut self,
        ctx: &Ctx,
        ops: &[Op],
        answered: &mut Vec<(String, String)>,
    ) -> Step<Result<(), String>> {
        self.run += 1;
        // lab-bot can see alice/lab at the start of every sequence.
        ctx.setup().add_collaborator(LAB, LAB_BOT, "write").await?;
        let native = ctx.native(LAB_BOT)?;
        let (mut model, mut live) = (Model::default(), Vec::<Live>::new());
        let mut steps = Vec::new();
        for (i, &op) in ops.iter().enumerate() {
            let target = model.target(op);
            let revision = target.map(|t| model.grants[t].revision);
            let expected = model.step(op);
            let got = self
                .apply(ctx, &native, op, target, revision, &mut live, &expected)
                .await?;
            steps.push(format!("{}. {}", i + 1, op.describe(target)));
            answered.push((op.describe(target), got.clone()));
            if got != show(&expected) {
                return Ok(Err(format!(
                    "{} → expected {}, got {got}",
                    steps.join("; "),
                    show(&expected)
                )));
            }
            // The touched grant reads back as the model says (while lab-bot
            // can see it).
            if let (Some(t), true) = (target, model.access) {
                let answer = native.get_grant(&live[t].grant).await?;
                let seen = match answer.status {
                    200 => answer
                        .grant()
                        .map(|g| format!("{} at revision {}", g.state, g.state_revision))?,
                    other => format!("status {other}"),
                };
                let m = &model.grants[t];
                let want = format!("{} at revision {}", m.state.name(), m.revision);
                if seen != want {
                    return Ok(Err(format!(
                        "{} → grant {t} then reads {seen}, the model says {want}",
                        steps.join("; ")
                    )));
                }
            }
        }
        Ok(Ok(()))
    }

    /// Sends `op` to the Core and says what came back, in the words of
    /// [`show`].
    #[allow(clippy::too_many_arguments)]
    async fn apply(
        &self,
        ctx: &Ctx,
        native: &NativeClient,
        op: Op,
        target: Option<usize>,
        revision: Option<i64>,
        live: &mut Vec<Live>,
        expected: &Answer,
    ) -> Step<String> {
        if *expected == Answer::Skip {
            return Ok(show(expected));
        }
        let answer = match (op, target) {
            (Op::Prepare, _) => {
                let task = format!("explore run {} grant {}", self.run, live.len());
                let (grant, page) = self.alice.prepare_grant(LAB, LAB_BOT, &task, "s").await?;
                let proposal = native.get_grant(&grant).await?.grant()?.proposal;
                live.push(Live {
                    grant,
                    proposal,
                    keys: (0..2).map(|_| NewIssue::new("", "").request_key).collect(),
                    issues: BTreeMap::new(),
                });
                return Ok(form_answer(&page));
            }
            (Op::Confirm(_), Some(t)) => native.confirm(&live[t].grant, &live[t].proposal).await?,
            (Op::Approve { stale, .. } | Op::Withdraw { stale, .. }, Some(t)) => {
                let decision = match op {
                    Op::Approve { .. } => Decision::Approve,
                    _ => Decision::Withdraw,
                };
                let revision = revision.unwrap_or(1);
                let sent = if stale && revision > 1 {
                    revision - 1
                } else {
                    revision
                };
                let path = core_api::grant_page(&live[t].grant);
                // A revoked grant's page may hold no form: the new-grant
                // page's `_csrf` is the session's too (S4.csrf.any-form).
                let csrf = (self.alice)
                    .session_csrf(&[&path, &core_api::new_grant_page(LAB)])
                    .await?;
                let form = Form::new(
                    "POST",
                    self.alice
                        .url(&core_api::decision(&live[t].grant, decision))?,
                    vec![
                        (fields::CSRF.into(), csrf),
                        (fields::STATE_REVISION.into(), sent.to_string()),
                    ],
                );
                return Ok(form_answer(&self.alice.submit(&form).await?));
            }
            (Op::Submit { key, text, .. }, Some(t)) => {
                let l = &live[t];
                let issue = NewIssue {
                    request_key: l.keys[key as usize].clone(),
                    title: format!("explored {key}"),
                    body: format!("text variant {text}"),
                };
                native.submit(&l.grant, &l.proposal, &issue).await?
            }
            (Op::Readback { key, .. }, Some(t)) => {
                native
                    .submission(&live[t].grant, &live[t].keys[key as usize])
                    .await?
            }
            (Op::List, _) => return list(native, live).await,
            (Op::RemoveAgent, _) => {
                ctx.setup().remove_collaborator(LAB, LAB_BOT).await?;
                return Ok(show(&Answer::Accepted));
            }
            (Op::RestoreAgent, _) => {
                ctx.setup().add_collaborator(LAB, LAB_BOT, "write").await?;
                return Ok(show(&Answer::Accepted));
            }
            (Op::DeleteIssue { key, .. }, Some(t)) => {
                let Some(index) = live[t].issues.get(&key) else {
                    // The model has a submission the Core never confirmed.
                    return Ok("no Issue index known".into());
                };
                let answer = ctx.setup().delete_issue(LAB, *index).await?;
                return Ok(if (200..300).contains(&answer.status) {
                    show(&Answer::Accepted)
                } else {
                    format!("status {}", answer.status)
                });
            }
            _ => return Ok(show(&Answer::Skip)),
        };
        Ok(match (answer.status, target) {
            (200 | 201, Some(t)) if matches!(op, Op::Submit { .. } | Op::Readback { .. }) => {
                let receipt = answer.submitted()?.receipt;
                let key = match op {
                    Op::Submit { key, .. } | Op::Readback { key, .. } => key,
                    _ => unreachable!("matched above"),
                };
                // A receipt is historical: a replay or readback names the
                // Issue the first submission created (S3.receipt.historical).
                let first = *live[t].issues.entry(key).or_insert(receipt.issue.index);
                let other = if receipt.issue.index == first {
                    ""
                } else {
                    " naming another Issue"
                };
                format!("{} with receipt {}{other}", answer.status, receipt.status)
            }
            (status, _) => format!("status {status}"),
        })
    }
}

/// The list's answer: the sequence's grants in it, with their states.
async fn list(native: &NativeClient, live: &[Live]) -> Step<String> {
    let mut listed = Vec::new();
    // Pages of 50 until one is short; bounded, whatever the Core says.
    for page in 1..=20 {
        let answer = native
            .list_grants(&format!("state=all&limit=50&page={page}"))
            .await?;
        if answer.status != 200 {
            return Ok(format!("status {}", answer.status));
        }
        let grants = answer.grants()?;
        for g in &grants {
            if let Some(i) = live.iter().position(|l| l.grant.id == g.id) {
                listed.push((i, g.state.clone()));
            }
        }
        if grants.len() < 50 {
            break;
        }
    }
    listed.sort();
    Ok(format!("listed {}", json_text(&listed)))
}

/// A form POST's answer: accepted, or its status.
fn form_answer(page: &Page) -> String {
    if accepted(page) {
        show(&Answer::Accepted)
    } else {
        format!("status {}", page.status)
    }
}

/// An answer in words, the same for the model's and the Core's.
fn show(answer: &Answer) -> String {
    match answer {
        Answer::Status(s) => format!("status {s}"),
        Answer::Accepted => "accepted".into(),
        Answer::Receipt(s, status) => format!("{s} with receipt {status}"),
        Answer::Listed(grants) => format!("listed {}", json_text(grants)),
        Answer::Skip => "not sent".into(),
    }
}
