//! Before a scenario's first step, each trial proves it gates the Core it
//! means to, on the backend it means to (spec §7.11): `/api/v1/version` names
//! the contract and the trial's backend, and, once the scenario has run, the
//! database the harness handed over holds the Core's tables and rows. A Core
//! that quietly ran on another database would otherwise pass both backends'
//! trials with one backend's behaviour.
//!
//! It is also where optional extensions are checked. A Core declares the
//! launch and setup extensions it supports as the array `extensions` of its
//! `/api/v1/version` answer (extra members are allowed by the contract); a
//! scenario that needs one the Core does not declare is *not applicable*.

use serde_json::Value;
use sqlx::{Connection, Row};

use super::catalogue::Scenario;
use crate::core_api::CONTRACT;
use crate::journal::Journal;
use crate::stack::Backend;
use crate::vocab::{Abort, Step};

/// Checks `contract` and `database` of the version answer, recording both.
pub fn expect_contract_and_backend(
    journal: &Journal,
    version: &Value,
    backend: Backend,
) -> Step<()> {
    let check = |what: &str, member: &str, expected: &str| {
        let actual = version.get(member).and_then(Value::as_str);
        let passed = actual == Some(expected);
        journal.assertion(
            what,
            &crate::journal::json_text(&expected),
            &crate::journal::json_text(&actual),
            passed,
        );
        if passed {
            Ok(())
        } else {
            Err(Abort::failed(format!(
                "{what}: /api/v1/version answered {member} = {}, expected {expected:?}",
                crate::journal::json_text(&actual)
            )))
        }
    };
    check("the Core gates this contract", "contract", CONTRACT)?;
    check(
        "the Core runs on the trial's backend",
        "database",
        backend.name(),
    )
}

/// Launch variables the contract itself defines (spec §9: a code expires
/// after `CORE_OAUTH_CODE_TTL_SECS`): every Core must honour them, so a
/// scenario that sets one is never "not applicable".
const CONTRACT_ENV: [&str; 1] = ["CORE_OAUTH_CODE_TTL_SECS"];

/// What a scenario needs beyond the contract: each `core_env` variable it
/// launches the Core with that the contract does not define, and each setup
/// extension it names.
pub fn needs(scenario: &Scenario) -> Vec<String> {
    scenario
        .core_env
        .iter()
        .map(|(k, _)| *k)
        .filter(|k| !CONTRACT_ENV.contains(k))
        .map(str::to_owned)
        .chain(scenario.extensions.iter().map(|e| (*e).to_owned()))
        .collect()
}

/// The need of a scenario only a real browser can run (`extensions =
/// ["real-browser"]`): not a Core's extension but the run's
/// `--browser chromium`.
pub const REAL_BROWSER: &str = "real-browser";

/// The not-applicable reason of a real-browser scenario in an HTTP-level run.
pub fn needs_real_browser() -> String {
    format!(
        "needs a real browser (HttpOnly, SameSite, clicks): Chromium and chromedriver are not \
         installed ({})",
        crate::browser::INSTALL
    )
}

/// The first of `needs` the Core does not declare, as the not-applicable
/// reason.
pub fn missing_extension(version: &Value, needs: &[String]) -> Option<String> {
    let declared: Vec<&str> = version
        .get("extensions")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    needs
        .iter()
        .filter(|n| n.as_str() != REAL_BROWSER)
        .find(|n| !declared.contains(&n.as_str()))
        .map(|n| {
            format!(
                "{UNDECLARED} `{n}`, which this Core does not declare \
             (a Core declares extensions in the `extensions` array of /api/v1/version)"
            )
        })
}

/// How the reason of a trial that needs an undeclared extension begins.
pub const UNDECLARED: &str = "needs the optional extension";

/// Checks that the database at `url` (the one the harness handed the Core)
/// holds at least one table with at least one row.
pub async fn expect_data_in(journal: &Journal, url: &str) -> Step<()> {
    journal.step("the Core's data is in the database the harness handed over");
    let (tables, rows) = count(url)
        .await
        .map_err(|e| Abort::errored(format!("reading the Core's database: {e}")))?;
    let passed = tables > 0 && rows > 0;
    let actual = format!("{tables} table(s), {rows} row(s)");
    journal.assertion(
        "the handed-over database holds the Core's rows",
        "tables with rows",
        &actual,
        passed,
    );
    if passed {
        Ok(())
    } else {
        Err(Abort::failed(format!(
            "the database the harness handed over holds {actual}: the Core keeps its data elsewhere"
        )))
    }
}

/// Tables (outside the catalogs) and their total rows.
async fn count(url: &str) -> Result<(usize, i64), sqlx::Error> {
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(url).await?;
    let list = if url.starts_with("sqlite:") {
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    } else {
        "SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) FROM information_schema.tables \
         WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')"
    };
    let tables: Vec<String> = sqlx::query(list)
        .fetch_all(&mut conn)
        .await?
        .iter()
        .map(|r| r.try_get::<String, _>(0))
        .collect::<Result<_, _>>()?;
    let mut rows = 0;
    for table in &tables {
        let quoted = if url.starts_with("sqlite:") {
            format!("\"{}\"", table.replace('"', "\"\""))
        } else {
            table.clone()
        };
        let n: i64 = sqlx::query(&format!("SELECT count(*) FROM {quoted}"))
            .fetch_one(&mut conn)
            .await?
            .try_get(0)?;
        rows += n;
    }
    let _ = conn.close().await;
    Ok((tables.len(), rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_launch_variable_of_the_contract_is_no_extension() {
        let scenario = Scenario {
            id: "s",
            family: crate::family::Family::Consent,
            claim: "c",
            fixture: "lab",
            core_env: &[
                ("CORE_OAUTH_CODE_TTL_SECS", "2"),
                ("CORE_CSRF_TTL_SECS", "3"),
            ],
            extensions: &["issue-edit"],
            clauses: &[],
            pristine: false,
            parity: false,
            run: |_| Box::pin(async { Ok(()) }),
        };
        assert_eq!(needs(&scenario), ["CORE_CSRF_TTL_SECS", "issue-edit"]);
    }
}
