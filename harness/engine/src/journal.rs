//! The journal of one scenario: its steps, assertions and exchanges, recorded
//! as they happen and already redacted.
//!
//! Actors share the journal of their scenario, so an exchange lands in the
//! step that was current when it happened, whichever actor made it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::secrets::SecretRegistry;
use crate::vocab::{AssertionRecord, Exchange, Observation, Picture, StepRecord};

/// Bodies in transcripts are cut after this many bytes: enough to read an
/// answer, small enough that a report of forty scenarios stays readable.
pub const BODY_LIMIT: usize = crate::limits::VALUE_LIMIT;

/// Bytes of bodies one scenario's transcript holds at [`BODY_LIMIT`] each;
/// after that, bodies are cut after [`BODY_LIMIT_SPENT`] bytes. An honest
/// trial's bodies fit several times over; a Core that answers 4 KiB of junk
/// to every request still leaves a report of a few MiB per hundred trials.
pub const BODY_BUDGET: usize = 32 * 1024;

/// The cut of a body once the scenario's [`BODY_BUDGET`] is spent.
pub const BODY_LIMIT_SPENT: usize = 512;

/// Exchanges one scenario's transcript records; later ones are counted, not
/// kept. An honest trial makes a few dozen; a Core that keeps a loop of the
/// harness going (an Issue for every index) must not make the report grow
/// with it.
pub const MAX_EXCHANGES: u64 = 1000;

/// The `kind` of the marker that stands for the exchanges not recorded.
const OMITTED: &str = "omitted";

/// Headers whose values are credentials and never enter a transcript.
const CREDENTIAL_HEADERS: &[&str] = &[
    "authorization",
    "cookie",
    "set-cookie",
    "x-csrf-token",
    "proxy-authorization",
];

/// A shared, redacting record of one scenario.
#[derive(Clone)]
pub struct Journal {
    steps: Arc<Mutex<Vec<StepRecord>>>,
    observations: Arc<Mutex<Vec<Observation>>>,
    waited_ms: Arc<AtomicU64>,
    body_bytes: Arc<AtomicU64>,
    exchanges: Arc<AtomicU64>,
    /// Whether a request got no complete answer (see [`Journal::unanswered`]).
    unanswered: Arc<std::sync::atomic::AtomicBool>,
    pictures: Arc<Mutex<Vec<Picture>>>,
    secrets: SecretRegistry,
    in_flight: Arc<tokio::sync::Semaphore>,
}

/// Pages a browser trail keeps; later ones are not recorded.
pub const TRAIL_PAGES: usize = 40;

/// Screenshots a trail keeps of pages that did not fail: the last ones (a
/// failed step's and a failed trial's are always kept).
pub const TRAIL_SCREENSHOTS: usize = 4;

impl Journal {
    /// A journal that redacts through `secrets`. It starts with a `setup`
    /// step so that fixture traffic has somewhere to go.
    pub fn new(secrets: SecretRegistry) -> Self {
        let journal = Journal {
            steps: Arc::default(),
            observations: Arc::default(),
            waited_ms: Arc::default(),
            body_bytes: Arc::default(),
            exchanges: Arc::default(),
            unanswered: Arc::default(),
            pictures: Arc::default(),
            secrets,
            in_flight: Arc::new(tokio::sync::Semaphore::new(
                crate::limits::REQUESTS_IN_FLIGHT,
            )),
        };
        journal.step("the Core names its contract and backend");
        journal
    }

    /// A turn to send one request to the Core and read its answer: at most
    /// [`crate::limits::REQUESTS_IN_FLIGHT`] at once per trial.
    pub async fn request_turn(&self) -> tokio::sync::OwnedSemaphorePermit {
        let permits = self.in_flight.clone();
        // Never closed: the journal holds the semaphore for its lifetime.
        permits
            .acquire_owned()
            .await
            .expect("the semaphore is never closed")
    }

    /// Records a page of a real browser's trail, in the current step, its
    /// URL and title redacted. Only the last [`TRAIL_SCREENSHOTS`]
    /// screenshots of pages that did not fail are kept.
    pub fn picture(&self, mut picture: Picture) {
        picture.step = self.current_step();
        picture.url = self.secrets.redact(&picture.url);
        picture.title = self.secrets.redact(&picture.title);
        let mut pictures = self.pictures.lock().unwrap_or_else(|e| e.into_inner());
        if pictures.len() >= TRAIL_PAGES && !picture.failed {
            return;
        }
        pictures.push(picture);
        let kept: Vec<usize> = (pictures.iter().enumerate())
            .filter(|(_, p)| !p.failed && p.png.is_some())
            .map(|(i, _)| i)
            .collect();
        for i in kept.iter().rev().skip(TRAIL_SCREENSHOTS) {
            pictures[*i].png = None;
        }
    }

    /// The browser trail so far, URLs and titles redacted again with every
    /// secret known now.
    pub fn pictures(&self) -> Vec<Picture> {
        let mut pictures = self
            .pictures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        for p in &mut pictures {
            p.url = self.secrets.redact(&p.url);
            p.title = self.secrets.redact(&p.title);
        }
        pictures
    }

    /// The registry this journal redacts through.
    pub fn secrets(&self) -> &SecretRegistry {
        &self.secrets
    }

    /// Marks that a request got no complete answer: none, none in time, or
    /// one that is not HTTP. A trial that fails so counts toward the run's
    /// `--unanswered-after` stop; an answer that merely breaks the contract
    /// (a wrong status, a body over the limit) does not.
    pub fn unanswered(&self) {
        self.unanswered.store(true, Ordering::Relaxed);
    }

    /// Whether [`Journal::unanswered`] was marked.
    pub fn was_unanswered(&self) -> bool {
        self.unanswered.load(Ordering::Relaxed)
    }

    /// Counts `d` as waited out for a clock (the report's `waited_ms`).
    pub fn waited(&self, d: Duration) {
        self.waited_ms
            .fetch_add(d.as_millis() as u64, Ordering::Relaxed);
    }

    /// Milliseconds waited out so far.
    pub fn waited_ms(&self) -> u64 {
        self.waited_ms.load(Ordering::Relaxed)
    }

    /// How many exchanges the trial has recorded so far: a turn that
    /// rotates what a client may spell freely, reproducibly per trial.
    pub(crate) fn exchanges_so_far(&self) -> u64 {
        self.exchanges.load(Ordering::Relaxed)
    }

    /// Starts a new step; later assertions and exchanges belong to it.
    pub fn step(&self, name: &str) {
        self.lock().push(StepRecord {
            name: name.to_owned(),
            ..StepRecord::default()
        });
    }

    /// Records an assertion in the current step.
    pub fn assertion(&self, what: &str, expected: &str, actual: &str, passed: bool) {
        let record = AssertionRecord {
            what: self.secrets.redact(what),
            expected: self.secrets.redact(&truncate(expected)),
            actual: self.secrets.redact(&truncate(actual)),
            passed,
        };
        self.current(|s| s.assertions.push(record));
    }

    /// Records an observation for the backend-parity check.
    pub fn observe(&self, key: &str, value: String) {
        let step = self.current_step();
        self.observations
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Observation {
                step,
                key: key.to_owned(),
                value: self.secrets.redact(&value),
            });
    }

    /// The observations recorded so far.
    pub fn observations(&self) -> Vec<Observation> {
        self.observations
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Records an exchange in the current step, redacting every field and
    /// dropping credential headers.
    pub fn exchange(&self, mut ex: Exchange) {
        let made = self.exchanges.fetch_add(1, Ordering::Relaxed);
        if made == MAX_EXCHANGES {
            // Where the transcript stops; [`Journal::steps`] adds the count.
            let marker = Exchange {
                actor: "journal".into(),
                kind: OMITTED.into(),
                ..Exchange::default()
            };
            self.current(|s| s.exchanges.push(marker));
        }
        if made >= MAX_EXCHANGES {
            return;
        }
        let spent = self.body_bytes.load(Ordering::Relaxed) as usize > BODY_BUDGET;
        let limit = if spent { BODY_LIMIT_SPENT } else { BODY_LIMIT };
        let redact = |s: &str| crate::limits::cut_at(&self.secrets.redact(s), limit);
        ex.target = self.secrets.redact(&ex.target);
        ex.request_body = redact(&ex.request_body);
        ex.response_body = redact(&ex.response_body);
        self.body_bytes.fetch_add(
            (ex.request_body.len() + ex.response_body.len()) as u64,
            Ordering::Relaxed,
        );
        for headers in [&mut ex.request_headers, &mut ex.response_headers] {
            for (name, value) in headers.iter_mut() {
                if CREDENTIAL_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
                    *value = crate::secrets::REDACTED.to_owned();
                } else {
                    *value = self.secrets.redact(value);
                }
            }
        }
        self.current(|s| s.exchanges.push(ex));
    }

    /// The steps recorded so far, redacted again with every secret known
    /// now: a CSRF token or cookie is often registered only after the answer
    /// that carried it was recorded.
    pub fn steps(&self) -> Vec<StepRecord> {
        let r = |s: &mut String| *s = self.secrets.redact(s);
        let mut steps = self.lock().clone();
        let omitted = self
            .exchanges
            .load(Ordering::Relaxed)
            .saturating_sub(MAX_EXCHANGES);
        for ex in steps.iter_mut().flat_map(|s| s.exchanges.iter_mut()) {
            if ex.kind == OMITTED {
                ex.target = format!(
                    "{omitted} further exchanges not recorded (a transcript keeps the first {MAX_EXCHANGES})"
                );
            }
        }
        for step in &mut steps {
            for a in &mut step.assertions {
                r(&mut a.what);
                r(&mut a.expected);
                r(&mut a.actual);
            }
            for ex in &mut step.exchanges {
                r(&mut ex.target);
                r(&mut ex.request_body);
                r(&mut ex.response_body);
                for (_, v) in ex
                    .request_headers
                    .iter_mut()
                    .chain(ex.response_headers.iter_mut())
                {
                    r(v);
                }
            }
        }
        steps
    }

    /// The name of the current step.
    pub fn current_step(&self) -> String {
        self.lock()
            .last()
            .map(|s| s.name.clone())
            .unwrap_or_default()
    }

    fn current(&self, f: impl FnOnce(&mut StepRecord)) {
        let mut steps = self.lock();
        if steps.is_empty() {
            steps.push(StepRecord::default());
        }
        f(steps.last_mut().expect("a step exists"));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<StepRecord>> {
        // A panicking scenario must not hide its own journal.
        self.steps.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Cuts text after [`BODY_LIMIT`] bytes at a character boundary, naming its
/// full length and SHA-256 ([`crate::limits::cut`]).
pub fn truncate(text: &str) -> String {
    crate::limits::cut(text)
}

/// `value` as compact JSON, for an assertion's expected and actual text.
pub fn json_text<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|e| format!("unserialisable value: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::Digest;

    #[test]
    fn exchanges_are_redacted_and_credential_headers_dropped() {
        let secrets = SecretRegistry::new();
        let token = secrets.mint("tok");
        let journal = Journal::new(secrets);
        journal.step("bot reads");
        journal.exchange(Exchange {
            actor: "bot".into(),
            kind: "http".into(),
            method: "GET".into(),
            target: format!("http://x/?t={token}"),
            request_headers: vec![("Authorization".into(), format!("token {token}"))],
            request_body: format!("{{\"token\":\"{token}\"}}"),
            status: 200,
            response_headers: vec![("content-type".into(), "text/plain".into())],
            response_body: "x".repeat(BODY_LIMIT + 10),
            elapsed_ms: 1,
        });
        let steps = journal.steps();
        let ex = &steps[1].exchanges[0];
        assert_eq!(ex.target, "http://x/?t=[redacted]");
        assert_eq!(ex.request_headers[0].1, "[redacted]");
        assert_eq!(ex.request_body, "{\"token\":\"[redacted]\"}");
        for _ in 0..BODY_BUDGET / BODY_LIMIT {
            journal.exchange(steps[1].exchanges[0].clone());
        }
        let last = journal.steps()[1]
            .exchanges
            .last()
            .unwrap()
            .response_body
            .len();
        assert!(last < BODY_LIMIT_SPENT + 120, "budget spent: {last} bytes");
        assert!(
            ex.response_body.ends_with(&format!(
                "bytes in all, sha256 {}]",
                hex::encode(sha2::Sha256::digest("x".repeat(BODY_LIMIT + 10)))
            )),
            "{}",
            ex.response_body
        );
    }
}
