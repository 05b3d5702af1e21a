//! Probes: scenarios that test the engine itself, never part of the real catalogue:
//! they appear only when `GRANTGATE_ENGINE_SCENARIOS=1` is set, which the
//! engine's own tests do to prove cleanup after a panic and after Ctrl-C.

use crate::ctx::Ctx;
use crate::runner::catalogue::Scenario;
use crate::vocab::{Abort, Outcome};

/// The variable that makes these scenarios visible.
pub const ENV: &str = "GRANTGATE_ENGINE_SCENARIOS";

/// The variable that adds the pagination benchmark (`scripts/bench`): the
/// number of grants to prepare and list.
pub const BENCH_ENV: &str = "GRANTGATE_BENCH_GRANTS";

/// The engine probes, if enabled.
pub fn scenarios() -> Vec<Scenario> {
    let mut probes = Vec::new();
    if std::env::var(BENCH_ENV).is_ok() {
        probes.push(Scenario {
            id: "bench_list_grants",
            family: crate::family::Family::Engine,
            claim: "Listing N grants costs the same per grant whatever N (scripts/bench).",
            fixture: "lab",
            core_env: &[],
            extensions: &[],
            clauses: &[],
            pristine: false,
            parity: false,
            run: |ctx| Box::pin(bench_list_grants(ctx)),
        });
    }
    if std::env::var(ENV).as_deref() != Ok("1") {
        return probes;
    }
    probes.extend([
        Scenario {
            id: "engine_fails",
            family: crate::family::Family::Engine,
            claim: "A broken expectation is a failed trial: exit 1, a JUnit failure.",
            fixture: "lab",
            core_env: &[],
            extensions: &[],
            clauses: &[],
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
            clauses: &[],
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
            clauses: &[],
            pristine: false,
            parity: false,
            run: |ctx| Box::pin(hangs(ctx)),
        },
    ]);
    probes
}

/// Prepares `GRANTGATE_BENCH_GRANTS` grants for lab-bot, then lists them
/// all natively (pages of 50) and through the adapter (pages of 30), and
/// prints one `bench:` line with the time of each per grant.
async fn bench_list_grants(ctx: &mut Ctx) -> Outcome {
    let n: usize = std::env::var(BENCH_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| Abort::errored(format!("{BENCH_ENV} is not a number")))?;
    let alice = ctx.human("alice")?;
    alice.login().await?;
    ctx.step(&format!("alice prepares {n} grants"));
    let form = alice
        .prepare_form("alice/lab", "lab-bot", "bench", "summary")
        .await?;
    for _ in 0..n {
        alice.submit(&form).await?;
    }
    ctx.step("lab-bot lists them natively, 50 a page");
    let native = ctx.native("lab-bot")?;
    let started = std::time::Instant::now();
    let (mut page, mut seen) = (1, 0);
    while seen < n {
        let answer = native.list_grants(&format!("page={page}&limit=50")).await?;
        let got = answer.grants()?.len();
        if got == 0 {
            break;
        }
        seen += got;
        page += 1;
    }
    let native_ms = started.elapsed().as_secs_f64() * 1000.0;
    ctx.expect_eq("every grant listed natively", seen, n)?;
    ctx.step("lab-bot lists them through its adapter, 30 a page");
    let bot = ctx.bot("lab-bot").await?;
    let started = std::time::Instant::now();
    let (mut page, mut seen) = (Some(1), 0);
    while let Some(p) = page {
        // Bounded by the grants made (a page holds at least one): an
        // adapter promising pages forever must not keep the bench going.
        if p as usize > n + 1 {
            return Err(Abort::failed(format!(
                "the adapter offers page {p} of {n} grants"
            )));
        }
        let listed = bot.list_grants(Some(p), None).await?.list()?;
        seen += listed.grants.len();
        page = listed.next_page;
    }
    let adapter_ms = started.elapsed().as_secs_f64() * 1000.0;
    ctx.expect_eq("every grant listed through the adapter", seen, n)?;
    println!(
        "bench: grants={n} native_ms={native_ms:.1} adapter_ms={adapter_ms:.1} \
         native_us_per_grant={:.1} adapter_us_per_grant={:.1}",
        native_ms * 1000.0 / n as f64,
        adapter_ms * 1000.0 / n as f64
    );
    Ok(())
}

async fn fails(ctx: &mut Ctx) -> Outcome {
    ctx.step("wait out a clock");
    // The run's test reads this wait back as the report's `waited_ms`.
    ctx.wait_out(std::time::Duration::from_millis(50)).await;
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
