//! Every limit on what the harness reads from a Core, named once.
//!
//! A gate runs against Cores broken in every way, hostile ones included: an
//! answer of a gigabyte, JSON nested a hundred thousand deep, a page of a
//! hundred thousand nested `<div>`s, a log line that never ends. Each limit
//! here sits far above anything an honest Core sends, and crossing one is a
//! named contract failure of the trial (never a crash, a hang or a report
//! of gigabytes). Values that go into reports are cut by [`cut`].

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use sha2::{Digest, Sha256};

/// The default largest body the harness reads from one answer: far above
/// any honest answer (a full list page is a few hundred KiB), small enough
/// that a few at once cannot exhaust memory. `grantgate run --max-body`.
pub const DEFAULT_BODY_LIMIT: usize = 16 * 1024 * 1024;

static BODY_LIMIT: AtomicUsize = AtomicUsize::new(DEFAULT_BODY_LIMIT);

/// The largest body read from one answer, in bytes.
pub fn body_limit() -> usize {
    BODY_LIMIT.load(Ordering::Relaxed)
}

/// Sets [`body_limit`] for the whole process (`--max-body`), once at start.
pub fn set_body_limit(bytes: usize) {
    BODY_LIMIT.store(bytes.max(1), Ordering::Relaxed);
}

/// The longest one exchange may take, from sending the request to the last
/// byte of the answer. Why a whole-exchange bound rather than a connect or
/// idle timeout: a Core that never answers, or answers one byte a second,
/// must fail its trial in bounded time instead of hanging the run. Every
/// contract request is answered in well under a second; this leaves room
/// for a loaded machine. The default of [`exchange_timeout`].
pub const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(30);

static EXCHANGE_TIMEOUT_MS: AtomicU64 = AtomicU64::new(EXCHANGE_TIMEOUT.as_millis() as u64);

/// The longest one exchange with the Core may take
/// ([`EXCHANGE_TIMEOUT`] unless `--exchange-timeout`).
pub fn exchange_timeout() -> Duration {
    Duration::from_millis(EXCHANGE_TIMEOUT_MS.load(Ordering::Relaxed))
}

/// Sets [`exchange_timeout`] for the whole process, once at start. Only the
/// harness's own tests shorten it, to meet a silent Core in seconds.
pub fn set_exchange_timeout(timeout: Duration) {
    let ms = timeout.max(Duration::from_secs(1)).as_millis() as u64;
    EXCHANGE_TIMEOUT_MS.store(ms, Ordering::Relaxed);
}

/// How long a Core process may take to print its listening line, and then
/// again to answer `/api/healthz` with 200: an honest Core takes well under
/// a second; a Core that never does costs each trial this, not a minute.
/// The default of [`launch_step_timeout`].
pub const LAUNCH_STEP_TIMEOUT: Duration = Duration::from_secs(20);

static LAUNCH_STEP_MS: AtomicU64 = AtomicU64::new(LAUNCH_STEP_TIMEOUT.as_millis() as u64);

/// How long a Core process may take to print its listening line, and again
/// to become healthy ([`LAUNCH_STEP_TIMEOUT`] unless
/// `--launch-step-timeout`).
pub fn launch_step_timeout() -> Duration {
    Duration::from_millis(LAUNCH_STEP_MS.load(Ordering::Relaxed))
}

/// Sets [`launch_step_timeout`] for the whole process, once at start. Only
/// the harness's own tests shorten it, to meet a Core that never starts in
/// seconds.
pub fn set_launch_step_timeout(timeout: Duration) {
    let ms = timeout.max(Duration::from_secs(1)).as_millis() as u64;
    LAUNCH_STEP_MS.store(ms, Ordering::Relaxed);
}

/// Header fields in one answer: hyper's default, which every client of the
/// harness keeps. More is refused by the HTTP parser as "message head is
/// too large", which [`crate::actors::http`] reports by this name.
pub const MAX_HEADERS: usize = 100;

/// Bytes of one answer's status line and headers: hyper's default read
/// buffer (8 KiB + 100 × 4 KiB), kept by every client of the harness.
pub const MAX_HEAD_BYTES: usize = 8192 + 4096 * 100;

/// JSON nesting: serde_json's own recursion limit, left on everywhere
/// (nothing in the workspace calls `disable_recursion_limit`), so every
/// parse of a Core's JSON, the adapter's included, stops at this depth
/// with "recursion limit exceeded". Every walker over a parsed `Value` is
/// bounded by it too.
pub const JSON_DEPTH: usize = 128;

/// Requests one trial has in flight to its Core at once; more wait their
/// turn. Spec §3 names no capacity, and a Core on a small listen backlog
/// (Python's `http.server`: 5) is honest; every race of the catalogue needs
/// only two requests at once, and 16 still makes each one likely to meet.
pub const REQUESTS_IN_FLIGHT: usize = 16;

/// The largest HTML page parsed: pages of the contract are a few KiB.
pub const HTML_LIMIT: usize = 4 * 1024 * 1024;

/// The deepest element nesting a page may have before it is parsed; the
/// contract's pages nest a dozen deep, a variant's extra wrappers a few more.
pub const HTML_DEPTH: usize = 512;

/// How long a Core has to stop after SIGTERM before it is killed (spec §5:
/// a Core "stops cleanly on SIGTERM"; an honest one takes milliseconds).
/// The first stack of a run that does not fails its trial; later stacks of
/// that run are killed at once, so a Core that ignores SIGTERM does not
/// make every trial wait this out.
pub const SIGTERM_GRACE: Duration = Duration::from_secs(5);

/// The longest one HTML parse may take (off the async workers).
pub const HTML_PARSE_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest line kept from a Core's or adapter's output; a longer one is
/// cut, and the rest of it up to its newline dropped and counted.
pub const LINE_LIMIT: usize = 8 * 1024;

/// Text that goes into a report (a failure message, an assertion's value,
/// a body in a transcript) is cut after this many bytes.
pub const VALUE_LIMIT: usize = 4096;

/// `text` cut after [`VALUE_LIMIT`] bytes at a character boundary, followed
/// by its full length and SHA-256, so a report stays small whatever the
/// Core sent and the whole value can still be recognised.
pub fn cut(text: &str) -> String {
    cut_at(text, VALUE_LIMIT)
}

/// [`cut`] at `limit` bytes.
pub fn cut_at(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}… [cut: {} bytes in all, sha256 {}]",
        &text[..end],
        text.len(),
        hex::encode(Sha256::digest(text.as_bytes()))
    )
}

/// Bytes of one process's log kept in a report (its first and last half):
/// an honest trial's logs fit whole; a Core logging 16 MiB/s adds at most
/// this per trial, whatever the catalogue's size.
pub const REPORT_LOG_LIMIT: usize = 32 * 1024;

/// `text` whole if it fits in `limit` bytes, else its first and last
/// halves around a line naming its full length and SHA-256.
pub fn head_and_tail(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    let mut head = limit / 2;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - limit / 2;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{}\n… [cut: {} bytes in all, sha256 {}; the first and last {} KiB kept] …\n{}",
        &text[..head],
        text.len(),
        hex::encode(Sha256::digest(text.as_bytes())),
        limit / 2 / 1024,
        &text[tail..]
    )
}

/// How deep elements nest in `html`, read cheaply from its tags before any
/// parser sees it: start tags minus end tags, not counting void elements,
/// self-closing tags, comments, doctypes, or elements whose end tag HTML
/// lets a page leave out (`<p>`, `<li>`, `<td>` …), so an honest page that
/// omits them is never taken for a deep one. Returns the deepest point.
pub fn html_depth(html: &str) -> usize {
    const UNCOUNTED: &[&str] = &[
        // void elements
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
        "source", "track", "wbr", // end tag optional
        "html", "head", "body", "p", "li", "dt", "dd", "option", "optgroup", "tr", "td", "th",
        "thead", "tbody", "tfoot", "colgroup", "caption", "rb", "rt", "rp", "rtc",
    ];
    let bytes = html.as_bytes();
    let (mut depth, mut deepest, mut i) = (0usize, 0usize, 0usize);
    while let Some(at) = memchr(b'<', &bytes[i..]) {
        i += at + 1;
        if bytes[i..].starts_with(b"!--") {
            match html[i..].find("-->") {
                Some(e) => i += e,
                None => break,
            }
            continue;
        }
        let closing = bytes.get(i) == Some(&b'/');
        let start = if closing { i + 1 } else { i };
        let name_len = bytes[start..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        if name_len == 0 || !bytes[start].is_ascii_alphabetic() {
            continue; // `<!--`, `<!DOCTYPE`, `<?`, or a bare `<` in text
        }
        let name = html[start..start + name_len].to_ascii_lowercase();
        if UNCOUNTED.contains(&name.as_str()) {
            continue;
        }
        let tag_end = memchr(b'>', &bytes[start..]).map(|e| start + e);
        if closing {
            depth = depth.saturating_sub(1);
        } else if tag_end.is_none_or(|e| bytes[e - 1] != b'/') {
            depth += 1;
            deepest = deepest.max(depth);
        }
        // `<script>`/`<style>` hold text, not tags: skip to their end.
        if !closing && matches!(name.as_str(), "script" | "style") {
            let close = format!("</{name}");
            match html[start..].to_ascii_lowercase().find(&close) {
                Some(e) => i = start + e,
                None => break,
            }
        }
    }
    deepest
}

fn memchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|b| *b == needle)
}

/// The longest value registered as a secret (a cookie, a `_csrf` field, a
/// token), as the Core sent it: honest ones are tens of bytes, a signed
/// token a few hundred. A longer one is refused as the Core's failure
/// ([`crate::error::SecretRefused`]): held, encoded three ways and matched
/// in every report field, a 1 MiB `_csrf` made the harness grow by
/// gigabytes.
pub const SECRET_MAX_LEN: usize = 1024;

/// Distinct values (encodings included) one trial may register; more is
/// refused likewise. An honest trial registers a few hundred at most.
pub const SECRETS_PER_TRIAL: usize = 4096;

/// Bytes of secret values (encodings included) a whole run keeps for its
/// redaction and the final scan of its report; a trial that would pass it
/// is refused likewise. The honest catalogue on both backends keeps a few
/// hundred KiB.
pub const RUN_SECRET_BYTES: usize = 8 * 1024 * 1024;

/// Bytes of exchanges a whole report keeps, across its trials. An honest
/// run of the catalogue records about this much; when a Core makes the
/// transcripts larger (junk in every answer, a loop of the harness kept
/// going), every trial is cut to one common size, the largest that fits,
/// keeping each transcript's start and end, so the report stays within
/// about 20 MB whatever the Core sends and a small transcript stays whole.
pub const REPORT_EXCHANGE_BUDGET: usize = 8 * 1024 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_value_keeps_its_length_and_digest() {
        assert_eq!(cut("short"), "short");
        let long = "é".repeat(VALUE_LIMIT);
        let c = cut(&long);
        assert!(c.len() < VALUE_LIMIT + 120, "{}", c.len());
        assert!(c.contains(&format!("{} bytes in all", long.len())), "{c}");
        assert!(
            c.contains(&hex::encode(Sha256::digest(long.as_bytes()))),
            "{c}"
        );
    }

    #[test]
    fn a_long_log_keeps_its_head_and_tail() {
        let log = format!("start\n{}\nend", "é".repeat(100_000));
        let kept = head_and_tail(&log, 1024);
        assert!(kept.len() < 1200, "{}", kept.len());
        assert!(
            kept.starts_with("start\n") && kept.ends_with("\nend"),
            "{kept}"
        );
        assert!(kept.contains(&format!("{} bytes in all", log.len())));
        assert_eq!(head_and_tail("short", 1024), "short");
    }

    #[test]
    fn depth_counts_nesting_not_tags_an_honest_page_may_leave_open() {
        assert_eq!(html_depth("<div><div><span>x</span></div></div>"), 3);
        assert_eq!(html_depth("<ul><li>a<li>b<li>c</ul><p>x<p>y"), 1);
        assert_eq!(html_depth("<br><img src=x><input/><div/><!-- <div> -->"), 0);
        assert_eq!(
            html_depth("<script>for(i=0;i<9;i++){'<div>'}</script><b>x</b>"),
            1
        );
        assert_eq!(html_depth("a < b, <3"), 0);
        assert_eq!(html_depth(&"<div>".repeat(100_000)), 100_000);
    }
}
