//! Family 20, exploration (issue #29): seeded random sequences of operations
//! by every actor — alice through the real forms, lab-bot natively, the
//! setup actor — generated with proptest and run against the Core, some two
//! at once. Each answer, then what the operation touched (the grant as
//! lab-bot reads it, the receipt, the Issue), and at the end of a sequence
//! everything the model knows, is compared with the model
//! (`model.rs`). A difference is shrunk (proptest's value tree, each
//! candidate run again on fresh grants of the same stack) to a short
//! sequence given as numbered steps, with the seed that reproduces it:
//! `grantgate explore --seed S` (or `GRANTGATE_EXPLORE_SEED=S` for a
//! catalogue run). [`configure`] or `GRANTGATE_EXPLORE_CASES` and
//! `GRANTGATE_EXPLORE_STEPS` raise the budget for long runs.

use std::sync::{OnceLock, mpsc};

use grantgate_engine::prelude::*;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use super::model::{Extensions, Move, sequence};
use super::run::{ARCHIVE_NAME, World};

/// The catalogue's budget: sequences per trial, moves per sequence.
pub const CASES: usize = 8;
pub const STEPS: usize = 30;
/// Shrinking stops after this many candidate runs.
const SHRINK_RUNS: usize = 150;

/// A run's exploration: the seed (none: drawn once per process) and budget.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub seed: Option<u64>,
    pub cases: usize,
    pub steps: usize,
}

static CONFIGURED: OnceLock<Budget> = OnceLock::new();

/// Sets this process's exploration (`grantgate explore`), before any trial
/// runs; later calls change nothing.
pub fn configure(budget: Budget) {
    let _ = CONFIGURED.set(budget);
}

/// The seed and budget of this process: [`configure`]d, else
/// `GRANTGATE_EXPLORE_*`, else the catalogue's with a seed drawn once, so
/// both backends (and parity) explore the same sequences. Each trial
/// records its seed in the report, so a run in a process of its own
/// (nextest) is reproducible too.
fn budget() -> (u64, usize, usize) {
    static DRAWN: OnceLock<Budget> = OnceLock::new();
    let b = CONFIGURED.get().unwrap_or_else(|| {
        DRAWN.get_or_init(|| Budget {
            seed: env(SEED_ENV),
            cases: env("GRANTGATE_EXPLORE_CASES").map_or(CASES, |n| n as usize),
            steps: env("GRANTGATE_EXPLORE_STEPS").map_or(STEPS, |n| n as usize),
        })
    });
    let seed = b.seed.unwrap_or_else(|| {
        static SEED: OnceLock<u64> = OnceLock::new();
        *SEED.get_or_init(|| {
            let key = NewIssue::new("", "").request_key.replace('-', "");
            u64::from_str_radix(&key[..16], 16).unwrap_or(1)
        })
    });
    (seed, b.cases, b.steps)
}

fn env(var: &str) -> Option<u64> {
    std::env::var(var).ok().and_then(|s| s.parse().ok())
}

/// Seeded sequences of the contract's operations, some two at once, get the
/// answers the model of the contract predicts, reported as the shortest
/// failing sequence.
#[scenario(Exploration, parity, clauses = ["S2.states", "S2.revision", "S3.confirm.state", "S3.submit.active", "S3.replay.identical", "S3.replay.conflict", "S3.receipt.status", "S3.receipt.tombstone-key", "S3.access-loss", "S3.withdrawn", "S4.approve", "S4.withdraw", "S4.stale", "S10.stored-input", "S10.blocked", "S10.restored"])]
async fn explored_sequences_match_the_model(ctx: &mut Ctx) -> Outcome {
    // Operations: prepare, confirm, approve and withdraw (current and stale
    // revisions), submit and replay (same and changed text), readback, list,
    // access removed and restored, tokens deleted and minted, Issues edited,
    // moved and deleted. For a pair, the answers of one serial order; the
    // grant, receipt and Issue they touched then read as the model says. A
    // difference is reported as the shortest sequence found that shows it.
    let (seed, cases, steps) = budget();
    ctx.step(&format!(
        "seed {seed}: {cases} sequences of up to {steps} moves"
    ));
    // The engine's reproduce command carries a recorded seed.
    ctx.observe(SEED_OBSERVATION, &seed.to_string());
    let extensions = declared(ctx).await?;
    ctx.setup().create_repo("alice", ARCHIVE_NAME, true).await?;
    let generator = Generator::start(seed, steps);
    let alice = ctx.human("alice")?;
    alice.login().await?;
    let mut world = World::new(alice, extensions);
    let (mut answered, mut operations) = (Vec::new(), 0);
    for case in 1..=cases {
        let moves = generator.ask(Ask::Next)?;
        ctx.step(&format!(
            "sequence {case} of {cases}: {} moves",
            moves.len()
        ));
        let Err(first) = world.run(ctx, &moves, &mut answered).await? else {
            operations += count(&moves);
            continue;
        };
        operations += first.operations;
        ctx.step(&format!("sequence {case}: shrinking a difference"));
        let (mut shortest, mut difference, mut runs) = (moves, first, 0);
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
        for line in &difference.steps {
            ctx.step(&format!("shrunk: {line}"));
        }
        ctx.observe("shrunk sequence", &difference.steps);
        return Err(Abort::failed(format!(
            "the Core differs from the model of the contract (seed {seed}, sequence {case}, \
             found after {operations} operations, shrunk to {} moves in {runs} runs): {} → {}; \
             reproduce with `grantgate explore --seed {seed} --cases {case} --steps {steps}`",
            shortest.len(),
            difference.steps.join("; "),
            difference.what,
        )));
    }
    ctx.observe("answers before each sequence's first pair", &answered);
    Ok(())
}

/// The operations in `moves`.
fn count(moves: &[Move]) -> usize {
    (moves.iter())
        .map(|m| if matches!(m, Move::Both(..)) { 2 } else { 1 })
        .sum()
}

/// The setup extensions the Core declares that the model uses (an
/// undeclared one's operations are not sent).
async fn declared(ctx: &Ctx) -> Step<Extensions> {
    let version = ctx.setup().version().await?;
    let has = |name: &str| {
        (version["extensions"].as_array())
            .is_some_and(|all| all.iter().any(|e| e.as_str() == Some(name)))
    };
    Ok(Extensions {
        issue_edit: has("issue-edit"),
        token_delete: has("token-delete"),
    })
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
    answer: mpsc::Receiver<Vec<Move>>,
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
                let moves = match (ask, tree.as_mut()) {
                    (Ask::Next, _) => {
                        tree = strategy.new_tree(&mut runner).ok();
                        tree.as_ref().map(ValueTree::current)
                    }
                    (Ask::Simplify, Some(t)) => t.simplify().then(|| t.current()),
                    (Ask::Complicate, Some(t)) => t.complicate().then(|| t.current()),
                    (_, None) => None,
                };
                if reply.send(moves.unwrap_or_default()).is_err() {
                    break;
                }
            }
        });
        Generator { ask, answer }
    }

    /// The sequence the generator gives for `ask` (answered at once: the
    /// thread only computes).
    fn ask(&self, ask: Ask) -> Step<Vec<Move>> {
        self.ask
            .send(ask)
            .ok()
            .and_then(|()| self.answer.recv().ok())
            .ok_or_else(|| Abort::errored("the sequence generator stopped"))
    }
}
