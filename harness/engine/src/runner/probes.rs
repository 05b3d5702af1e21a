//! Probes: scenarios that test the engine itself, never part of the real catalogue:
//! they appear only when `GRANTGATE_ENGINE_SCENARIOS=1` is set, which the
//! engine's own tests do to prove cleanup after a panic and after Ctrl-C.

use crate::ctx::Ctx;
use crate::runner::catalogue::Scenario;
use crate::vocab::Outcome;

/// The variable that makes these scenarios visible.
pub const ENV: &str = "GRANTGATE_ENGINE_SCENARIOS";

/// The engine probes, if enabled.
pub fn scenarios() -> Vec<Scenario> {
    if std::env::var(ENV).as_deref() != Ok("1") {
        return Vec::new();
    }
    vec![
        Scenario {
            id: "engine_fails",
            family: crate::family::Family::Engine,
            claim: "A broken expectation is a failed trial: exit 1, a JUnit failure.",
            fixture: "lab",
            core_env: &[],
            extensions: &[],
            pristine: false,
            parity: false,
            run: |ctx| Box::pin(fails(ctx)),
        },
        Scenario {
            id: "engine_panics",
            family: crate::family::Family::Engine,
            claim: "A scenario that panics mid-run is reported as errored and leaves nothing behind.",
            fixture: "lab",
            core_env: &[],
            extensions: &[],
            pristine: false,
            parity: false,
            run: |ctx| Box::pin(panics(ctx)),
        },
        Scenario {
            id: "engine_hangs",
            family: crate::family::Family::Engine,
            claim: "A run interrupted by Ctrl-C leaves no process, directory or database behind.",
            fixture: "lab",
            core_env: &[],
            extensions: &[],
            pristine: false,
            parity: false,
            run: |ctx| Box::pin(hangs(ctx)),
        },
    ]
}

async fn fails(ctx: &mut Ctx) -> Outcome {
    ctx.step("expect something false");
    ctx.expect_eq("one equals two", 1, 2)
}

async fn panics(ctx: &mut Ctx) -> Outcome {
    ctx.step("start an adapter, then panic");
    let _bot = ctx.bot("lab-bot").await?;
    panic!("deliberate panic from an engine probe");
}

async fn hangs(ctx: &mut Ctx) -> Outcome {
    ctx.step("start an adapter, then wait to be interrupted");
    let _bot = ctx.bot("lab-bot").await?;
    // The test watches for this line, then sends SIGINT.
    eprintln!("grantgate-probe: hanging");
    std::future::pending::<()>().await;
    Ok(())
}
