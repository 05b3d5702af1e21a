//! The secret registry: every credential the run mints or sees is registered
//! here, every writer redacts through it, and the finished report directory is
//! scanned for it.
//!
//! Why a registry rather than careful writers: a transcript can catch a secret
//! anywhere (a form body, a JSON answer, a Core log line). Redacting by value
//! catches all of them, and the final scan proves it did.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::error::{HarnessError, Result, SecretRefused};
use crate::limits::{RUN_SECRET_BYTES, SECRET_MAX_LEN, SECRETS_PER_TRIAL};

/// What a redacted secret is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Secrets shorter than this are not registered: redacting them would shred
/// ordinary text, and nothing the run mints is that short.
const MIN_SECRET_LEN: usize = 8;

/// A shared, append-only set of secret values. Cloning shares the set.
///
/// A run has one registry; each trial redacts through a [`scoped`] one,
/// which holds the trial's own secrets and sees the run's. Why: a trial registers secrets all along (every cookie, every
/// `_csrf`), and a matcher over the whole run's values, rebuilt after each,
/// made the harness's redaction grow with the square of the catalogue. A
/// trial's secrets cannot reach another trial's isolated stack; the run's
/// registry still holds every value, for the final scan of the report.
///
/// [`scoped`]: SecretRegistry::scoped
#[derive(Clone, Default)]
pub struct SecretRegistry {
    /// Registered here (a trial's, or the run's own).
    own: Arc<Mutex<Values>>,
    /// The run's registry, for a trial's.
    run: Option<Box<SecretRegistry>>,
    /// Every trial's values, kept by the run's registry for its own
    /// redaction and the final scan. A trial's redaction does not use them.
    trials: Arc<Mutex<Values>>,
    /// The first value refused here (a trial's registry): the trial fails
    /// with it, and its records, which may hold that value, are left out.
    refused: Arc<Mutex<Option<SecretRefused>>>,
}

/// Registered values, longest first, and the matcher built from them.
///
/// Why the matcher is cached: every transcript field is redacted, a run
/// redacts many thousands of times; building the automaton per call made
/// the harness itself the bottleneck. It is rebuilt only after a
/// registration.
#[derive(Default)]
struct Values {
    list: Vec<String>,
    set: std::collections::HashSet<String>,
    matcher: Option<Arc<aho_corasick::AhoCorasick>>,
    /// Bytes of `list`.
    bytes: usize,
}

impl Values {
    fn add(&mut self, value: String) {
        if self.set.insert(value.clone()) {
            self.bytes += value.len();
            // Longest first: a secret that contains another is replaced whole.
            let at = self.list.partition_point(|v| v.len() >= value.len());
            self.list.insert(at, value);
            self.matcher = None;
        }
    }

    /// The values of `forms` not held yet, and their bytes.
    fn new_of<'a>(&self, forms: &'a [String]) -> (Vec<&'a String>, usize) {
        let new: Vec<&String> = forms.iter().filter(|f| !self.set.contains(*f)).collect();
        let bytes = new.iter().map(|f| f.len()).sum();
        (new, bytes)
    }

    /// The leftmost-longest matcher over every value (None if it cannot be
    /// built, in which case callers fall back to one search per value).
    fn matcher(&mut self) -> Option<Arc<aho_corasick::AhoCorasick>> {
        if self.matcher.is_none() && !self.list.is_empty() {
            self.matcher = aho_corasick::AhoCorasick::builder()
                .match_kind(aho_corasick::MatchKind::LeftmostLongest)
                .build(self.list.iter())
                .ok()
                .map(Arc::new);
        }
        self.matcher.clone()
    }

    /// One pass, longest match first; should two secrets overlap so that a
    /// piece of one survives, the value-by-value loop decides.
    fn redact(&mut self, text: &str) -> String {
        if self.list.is_empty() {
            return text.to_owned();
        }
        if let Some(automaton) = self.matcher() {
            if !automaton.is_match(text) {
                return text.to_owned();
            }
            let out = automaton.replace_all(text, &vec![REDACTED; self.list.len()]);
            if !automaton.is_match(&out) {
                return out;
            }
        }
        let mut out = text.to_owned();
        for v in self.list.iter() {
            if out.contains(v.as_str()) {
                out = out.replace(v.as_str(), REDACTED);
            }
        }
        out
    }
}

fn lock(values: &Mutex<Values>) -> std::sync::MutexGuard<'_, Values> {
    values.lock().expect("secret registry poisoned")
}

impl std::fmt::Debug for SecretRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the values themselves.
        write!(f, "SecretRegistry({} values)", self.len())
    }
}

impl SecretRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// A trial's registry: what is registered there is registered in this
    /// (the run's) registry too; it redacts its own values and this one's
    /// own, not other trials'.
    pub fn scoped(&self) -> SecretRegistry {
        SecretRegistry {
            own: Arc::default(),
            run: Some(Box::new(self.clone())),
            trials: Arc::default(),
            refused: Arc::default(),
        }
    }

    /// Registers a secret and the encodings it travels in (form-urlencoded,
    /// percent-encoded), so that a password inside a form body is caught too.
    ///
    /// Bounded by construction: in a trial's registry, a value longer than
    /// [`SECRET_MAX_LEN`], or past [`SECRETS_PER_TRIAL`] or the run's
    /// [`RUN_SECRET_BYTES`], is not kept; the first such is remembered
    /// ([`SecretRegistry::refused`]) and fails the trial.
    pub fn register(&self, secret: &str) {
        if secret.len() < MIN_SECRET_LEN {
            return;
        }
        let trial = self.run.is_some();
        if trial && secret.len() > SECRET_MAX_LEN {
            return self.refuse(SecretRefused::TooLong {
                len: secret.len(),
                max: SECRET_MAX_LEN,
            });
        }
        let form: String = url::form_urlencoded::byte_serialize(secret.as_bytes()).collect();
        let mut forms = vec![secret.to_owned(), form.replace('+', "%20"), form];
        forms.dedup();
        {
            let mut own = lock(&self.own);
            let (new, _) = own.new_of(&forms);
            if trial && own.list.len() + new.len() > SECRETS_PER_TRIAL {
                drop(own);
                return self.refuse(SecretRefused::TooMany {
                    max: SECRETS_PER_TRIAL,
                });
            }
            for f in new {
                own.add(f.clone());
            }
        }
        if let Some(run) = &self.run {
            let mut all = lock(&run.trials);
            let (new, bytes) = all.new_of(&forms);
            if all.bytes + bytes > RUN_SECRET_BYTES {
                drop(all);
                return self.refuse(SecretRefused::RunBudget {
                    max: RUN_SECRET_BYTES,
                });
            }
            for f in new {
                all.add(f.clone());
            }
        }
    }

    /// Remembers the first refusal.
    fn refuse(&self, why: SecretRefused) {
        let mut refused = self.refused.lock().unwrap_or_else(|e| e.into_inner());
        refused.get_or_insert(why);
    }

    /// The first value this registry refused, if any: the trial fails with
    /// it (see [`SecretRegistry::register`]).
    pub fn refused(&self) -> Option<SecretRefused> {
        self.refused
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Every value registered here and in trials scoped from here.
    fn all(&self) -> Vec<String> {
        let mut all = lock(&self.own).list.clone();
        all.extend(lock(&self.trials).list.iter().cloned());
        all
    }

    /// Registers every value of `other` here too: the self-test scans one
    /// report directory for the secrets of many runs.
    pub fn absorb(&self, other: &SecretRegistry) {
        if Arc::ptr_eq(&self.own, &other.own) {
            return;
        }
        let theirs = other.all();
        let mut values = lock(&self.own);
        for v in theirs {
            values.add(v);
        }
    }

    /// A fresh random secret (a password, a key), already registered.
    pub fn mint(&self, prefix: &str) -> String {
        let secret = format!("{prefix}-{}", uuid::Uuid::new_v4().simple());
        self.register(&secret);
        secret
    }

    /// How many values (secrets and their encodings) are registered, here
    /// and in trials scoped from here.
    pub fn len(&self) -> usize {
        lock(&self.own).list.len() + lock(&self.trials).list.len()
    }

    /// True when nothing is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Replaces every registered secret in `text` with [`REDACTED`]: a
    /// trial's own and the run's, or, in the run's registry, every trial's
    /// too.
    pub fn redact(&self, text: &str) -> String {
        let text = lock(&self.own).redact(text);
        match &self.run {
            Some(run) => lock(&run.own).redact(&text),
            None => lock(&self.trials).redact(&text),
        }
    }

    /// Counts registered secrets occurring in `bytes` (each occurrence of
    /// each value, overlapping ones included), here and in trials scoped
    /// from here.
    ///
    /// Why one automaton rather than a search per value: a whole run
    /// registers thousands of values and its report is megabytes; a search
    /// per value made the final scan take minutes.
    pub fn occurrences(&self, bytes: &[u8]) -> usize {
        self.scanner().count(bytes)
    }

    /// A counter of every value registered here and in trials scoped from
    /// here, built once for many texts (a report's files).
    fn scanner(&self) -> Scanner {
        let values = self.all();
        // Overlapping search needs the standard match kind, so this is not
        // the redaction matcher.
        let automaton = match values.is_empty() {
            true => None,
            false => aho_corasick::AhoCorasick::new(values.iter()).ok(),
        };
        Scanner { values, automaton }
    }

    /// Scans every file under `dir`; fails with the first file that holds a
    /// registered secret. This runs after the report is written, so a writer
    /// that forgot to redact fails the run instead of leaking quietly. One
    /// matcher serves every file.
    pub fn scan_dir(&self, dir: &Path) -> Result<()> {
        let scanner = self.scanner();
        let mut leaks: Vec<(PathBuf, usize)> = Vec::new();
        for path in files_under(dir)? {
            let bytes = std::fs::read(&path).map_err(|e| HarnessError::io(&path, e))?;
            let n = scanner.count(&bytes);
            if n > 0 {
                leaks.push((path, n));
            }
        }
        match leaks.first() {
            None => Ok(()),
            Some((path, _)) => Err(HarnessError::SecretLeak {
                path: path.clone(),
                count: leaks.iter().map(|(_, n)| n).sum(),
            }),
        }
    }
}

/// Every registered value, and one overlapping matcher over them.
struct Scanner {
    values: Vec<String>,
    /// `None` when there are no values, or the matcher cannot be built (then
    /// one search per value).
    automaton: Option<aho_corasick::AhoCorasick>,
}

impl Scanner {
    /// Occurrences of every value in `bytes`, overlapping ones included.
    fn count(&self, bytes: &[u8]) -> usize {
        match &self.automaton {
            Some(automaton) => automaton.find_overlapping_iter(bytes).count(),
            None => (self.values.iter())
                .map(|v| count_occurrences(bytes, v.as_bytes()))
                .sum(),
        }
    }
}

fn count_occurrences(haystack: &[u8], needle: &[u8]) -> usize {
    if needle.is_empty() || haystack.len() < needle.len() {
        return 0;
    }
    haystack
        .windows(needle.len())
        .filter(|w| *w == needle)
        .count()
}

/// Every regular file below `dir`, in a stable order.
pub fn files_under(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(d) = todo.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| HarnessError::io(&d, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| HarnessError::io(&d, e))?;
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Whether `needle` (never empty) occurs in `haystack`.
pub(crate) fn contains_bytes(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_replaces_the_secret_and_its_form_encoding() {
        let reg = SecretRegistry::new();
        reg.register("s3cr3t/va+lue=");
        let text = "password=s3cr3t%2Fva%2Blue%3D&raw=s3cr3t/va+lue=";
        let out = reg.redact(text);
        assert_eq!(out, "password=[redacted]&raw=[redacted]");
    }

    #[test]
    fn overlapping_secrets_leave_no_piece_behind() {
        let reg = SecretRegistry::new();
        reg.register("abcdefgh12");
        reg.register("12345678xyz");
        let out = reg.redact("<abcdefgh12345678xyz> abcdefgh12 12345678xyz");
        assert!(
            !out.contains("abcdefgh12") && !out.contains("12345678xyz"),
            "{out}"
        );
        assert!(out.ends_with("[redacted] [redacted]"), "{out}");
    }

    #[test]
    fn a_trial_redacts_its_own_and_the_runs_and_the_run_keeps_them_all() {
        let run = SecretRegistry::new();
        run.register("run-secret-1");
        let trial = run.scoped();
        trial.register("trial-secret-1");
        run.register("run-secret-2");
        assert_eq!(
            trial.redact("run-secret-1 trial-secret-1 run-secret-2"),
            "[redacted] [redacted] [redacted]"
        );
        assert_eq!(run.redact("trial-secret-1"), "[redacted]");
        assert_eq!(run.occurrences(b"trial-secret-1 run-secret-2"), 2);
        // Plain values: each encoding is the value itself, kept once.
        assert_eq!((run.len(), trial.len()), (3, 1));
        let merged = SecretRegistry::new();
        merged.absorb(&run);
        assert_eq!(merged.redact("trial-secret-1"), "[redacted]");
    }

    #[test]
    fn a_trial_refuses_a_secret_over_the_cap_without_keeping_or_naming_it() {
        let run = SecretRegistry::new();
        let trial = run.scoped();
        let huge = "c".repeat(SECRET_MAX_LEN + 1);
        trial.register(&huge);
        assert!(trial.is_empty() && run.is_empty(), "nothing of it is kept");
        let why = trial.refused().expect("refused").to_string();
        assert!(why.contains(&format!("{} bytes", huge.len())), "{why}");
        assert!(!why.contains("cccccccc"), "the value is never printed");
        // The run's own values (minted by the harness) are not capped, and
        // another trial is not refused for this one's.
        assert!(run.refused().is_none() && run.scoped().refused().is_none());
    }

    #[test]
    fn a_trial_refuses_secrets_past_its_count_and_the_run_past_its_bytes() {
        let run = SecretRegistry::new();
        let trial = run.scoped();
        for i in 0..SECRETS_PER_TRIAL {
            trial.register(&format!("secret-{i:08}"));
        }
        assert!(trial.refused().is_none());
        assert_eq!(trial.len(), SECRETS_PER_TRIAL);
        trial.register("one-secret-too-many");
        assert!(matches!(
            trial.refused(),
            Some(SecretRefused::TooMany { .. })
        ));
        assert_eq!(
            trial.len(),
            SECRETS_PER_TRIAL,
            "the one too many is not kept"
        );
        let value = |t: usize, i: usize| format!("{t:04}-{i:04}-{}", "v".repeat(1000));
        let (mut t, mut refused) = (0, None);
        while refused.is_none() && t < 10 * RUN_SECRET_BYTES / 1000 / 1000 {
            let trial = run.scoped();
            for i in 0..1000 {
                trial.register(&value(t, i));
            }
            refused = trial.refused();
            t += 1;
        }
        assert!(matches!(refused, Some(SecretRefused::RunBudget { .. })));
        assert!(lock(&run.trials).bytes <= RUN_SECRET_BYTES);
    }

    #[test]
    fn short_values_are_not_registered() {
        let reg = SecretRegistry::new();
        reg.register("abc");
        assert!(reg.is_empty());
        assert_eq!(reg.redact("abc"), "abc");
    }

    #[test]
    fn the_scan_fails_a_directory_holding_a_secret_and_passes_a_clean_one() {
        let reg = SecretRegistry::new();
        let secret = reg.mint("token");
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("clean.txt"), "nothing here").unwrap();
        reg.scan_dir(dir.path()).expect("a clean directory passes");
        std::fs::write(dir.path().join("sub/leak.html"), format!("<p>{secret}</p>")).unwrap();
        match reg.scan_dir(dir.path()) {
            Err(HarnessError::SecretLeak { path, count }) => {
                assert!(path.ends_with("sub/leak.html"));
                assert_eq!(count, 1);
            }
            other => panic!("expected a leak, got {other:?}"),
        }
    }

    #[test]
    fn occurrences_count_every_value_and_overlaps_like_a_search_per_value() {
        let reg = SecretRegistry::new();
        reg.register("aaaaaaaa");
        reg.register("token-0123456789");
        let text = b"xaaaaaaaaay token-0123456789 token-0123456789";
        // "aaaaaaaaa" (9 a's) holds two overlapping 8-a windows.
        assert_eq!(reg.occurrences(text), 4);
        assert_eq!(reg.occurrences(b"nothing"), 0);
        assert_eq!(SecretRegistry::new().occurrences(text), 0);
    }
}
