//! Which trials run where and when: shards across machines, and the order
//! within a run.
//!
//! - A shard (`--shard K/N`) keeps the scenarios whose id hashes to K: a
//!   stable partition that does not move a scenario when others are added,
//!   and that keeps a scenario's backend trials (and so its parity check)
//!   together.
//! - Within a run, the trials the last report in the report directory
//!   found slowest start first, so no straggler (a trial that waits out a
//!   CSRF lifetime) starts last and ends the run alone; its wait overlaps
//!   the other trials. Without a previous report, the catalogue's order
//!   stands.

use std::collections::HashMap;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::catalogue::Trial;
use crate::report::model::RunReport;

/// One shard of N: `K/N` with 1 ≤ K ≤ N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This shard, from 1.
    pub index: usize,
    /// How many shards.
    pub count: usize,
}

impl std::str::FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (k, n) = s
            .split_once('/')
            .ok_or_else(|| format!("--shard {s}: expected K/N, e.g. 2/4"))?;
        let (index, count) = match (k.trim().parse::<usize>(), n.trim().parse::<usize>()) {
            (Ok(k), Ok(n)) if n >= 1 && (1..=n).contains(&k) => (k, n),
            _ => return Err(format!("--shard {s}: expected K/N with 1 <= K <= N")),
        };
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// Whether the scenario `id` belongs to this shard.
    pub fn holds(&self, id: &str) -> bool {
        let hash = Sha256::digest(id.as_bytes());
        let n = u64::from_be_bytes(hash[..8].try_into().expect("8 bytes"));
        (n % self.count as u64) as usize == self.index - 1
    }
}

/// Trial durations of the newest `report.json` under `report_dir`
/// (run ids sort by time), by trial name; empty when there is none.
pub fn history(report_dir: &Path) -> HashMap<String, u64> {
    let newest = std::fs::read_dir(report_dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("report.json"))
        .filter(|p| p.is_file())
        .max();
    newest
        .and_then(|p| std::fs::read(p).ok())
        .and_then(|b| serde_json::from_slice::<RunReport>(&b).ok())
        .map(|r| {
            r.results
                .into_iter()
                .map(|t| (t.name, t.duration_ms))
                .collect()
        })
        .unwrap_or_default()
}

/// `trials` with the slowest known first; unknown trials keep their order
/// after the known ones that took longer than the median.
pub fn longest_first(mut trials: Vec<Trial>, history: &HashMap<String, u64>) -> Vec<Trial> {
    if history.is_empty() {
        return trials;
    }
    let mut known: Vec<u64> = history.values().copied().collect();
    known.sort_unstable();
    let median = known[known.len() / 2];
    // A stable sort: equal estimates keep the catalogue's order.
    trials.sort_by_key(|t| std::cmp::Reverse(*history.get(&t.name()).unwrap_or(&median)));
    trials
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::catalogue::{Scenario, trials};
    use crate::stack::Backend;

    fn scenario(id: &'static str) -> Scenario {
        Scenario {
            id,
            family: crate::family::Family::Browser,
            claim: "c",
            fixture: "lab",
            core_env: &[],
            extensions: &[],
            clauses: &[],
            pristine: false,
            parity: true,
            run: |_| Box::pin(async { Ok(()) }),
        }
    }

    #[test]
    fn shards_partition_the_scenarios_and_keep_backends_together() {
        let ids: Vec<String> = (0..200).map(|i| format!("scenario_{i}")).collect();
        let shards: Vec<Shard> = (1..=4).map(|k| format!("{k}/4").parse().unwrap()).collect();
        for id in &ids {
            let holders = shards.iter().filter(|s| s.holds(id)).count();
            assert_eq!(holders, 1, "{id} is in exactly one shard");
        }
        for s in &shards {
            let n = ids.iter().filter(|id| s.holds(id)).count();
            assert!((30..=70).contains(&n), "shard {s} holds {n} of 200");
        }
        assert!("0/4".parse::<Shard>().is_err());
        assert!("5/4".parse::<Shard>().is_err());
        assert!("2".parse::<Shard>().is_err());
    }

    #[test]
    fn the_slowest_known_trials_start_first() {
        let catalogue = vec![scenario("a"), scenario("b"), scenario("c")];
        let all = trials(&catalogue, &[Backend::Sqlite], None);
        let history: HashMap<String, u64> = [
            ("sqlite::a".to_owned(), 100),
            ("sqlite::b".to_owned(), 4000),
        ]
        .into();
        let order: Vec<String> = longest_first(all.clone(), &history)
            .iter()
            .map(Trial::name)
            .collect();
        assert_eq!(order, ["sqlite::b", "sqlite::c", "sqlite::a"]);
        let unchanged: Vec<String> = longest_first(all, &HashMap::new())
            .iter()
            .map(Trial::name)
            .collect();
        assert_eq!(unchanged, ["sqlite::a", "sqlite::b", "sqlite::c"]);
    }
}
