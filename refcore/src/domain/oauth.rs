//! Delegated consent (spec §9): the rules of refcore's OAuth 2.0
//! authorization server for public clients with PKCE (RFC 6749 §4.1,
//! RFC 7636), free of HTTP and SQL so the authorize page, the consent form
//! and the token endpoint, on both backends, share one definition.
//!
//! - An authorization request names a registered client, one of its
//!   redirect URIs byte for byte, an S256 `code_challenge`, and the scopes it
//!   wants out of [`OFFERED_SCOPES`].
//! - A code redeems once, before it expires, for its own client and exact
//!   redirect URI, with the verifier whose S256 hash is the challenge.

use base64::Engine;
use sha2::{Digest, Sha256};

use super::edges::edges;
use crate::domain::scopes::Scopes;

pub use super::model::{OFFERED_SCOPES, RESPONSE_TYPE, S256};

/// The only `grant_type` the token endpoint serves.
pub const GRANT_TYPE: &str = "authorization_code";

/// The stored method under the `oauth-plain-accepted` fault only.
pub const PLAIN: &str = "plain";

/// Longest redirect URI and `state` accepted, in bytes: far above any real
/// one, low enough that a URL carrying both stays a valid `Location`.
pub const MAX_URI_BYTES: usize = 2048;

/// Longest `client_id` looked up; refcore's are 36-byte UUIDs.
pub const MAX_CLIENT_ID_BYTES: usize = 64;

/// The authorize page's path.
pub const AUTHORIZE_PATH: &str = "/login/oauth/authorize";

/// What `name=value` takes in a query when `value` has at most `max_value`
/// bytes, every one percent-encoded (three bytes each) at worst.
const fn encoded_member(name: &str, max_value: usize) -> usize {
    name.len() + 1 + 3 * max_value
}

/// Room for `scope` and any parameter refcore ignores, in a longest query.
const QUERY_ALLOWANCE_BYTES: usize = 3 * 1024;

/// Longest authorize query served, in bytes: every member refcore reads at
/// its bound, percent-encoded at worst, with `&` between them, plus
/// [`QUERY_ALLOWANCE_BYTES`] for `scope` and the rest. A longer query is
/// refused, so whatever the authorize page serves fits the login form's
/// way back ([`MAX_AUTHORIZE_PATH_BYTES`]), and the login URL that carries
/// it encoded again (three times at most) stays within a URI that HTTP
/// servers accept (64 KiB).
pub const MAX_AUTHORIZE_QUERY_BYTES: usize = encoded_member("response_type", RESPONSE_TYPE.len())
    + encoded_member("client_id", MAX_CLIENT_ID_BYTES)
    + encoded_member("redirect_uri", MAX_URI_BYTES)
    + encoded_member("state", MAX_URI_BYTES)
    + encoded_member("code_challenge", 128)
    + encoded_member("code_challenge_method", S256.len())
    + 5
    + QUERY_ALLOWANCE_BYTES;

/// Longest authorize path and query the authorize page serves, so the
/// longest way back after signing in.
pub const MAX_AUTHORIZE_PATH_BYTES: usize = AUTHORIZE_PATH.len() + 1 + MAX_AUTHORIZE_QUERY_BYTES;

/// Whether a raw authorize query is short enough to serve
/// ([`MAX_AUTHORIZE_QUERY_BYTES`]).
pub fn query_within_bounds(query: &str) -> bool {
    query.len() <= MAX_AUTHORIZE_QUERY_BYTES
}

/// An authorization request as the authorize query or the consent form
/// carries it, before it is checked. Empty values count as absent.
#[derive(Debug, Clone, Copy, Default)]
pub struct RawRequest<'a> {
    /// `response_type`; `None` on the consent form, which does not carry it.
    pub response_type: Option<&'a str>,
    /// `client_id`.
    pub client_id: Option<&'a str>,
    /// `redirect_uri`.
    pub redirect_uri: Option<&'a str>,
    /// `state`, echoed to the client.
    pub state: Option<&'a str>,
    /// `code_challenge`.
    pub code_challenge: Option<&'a str>,
    /// `code_challenge_method`.
    pub code_challenge_method: Option<&'a str>,
    /// `scope`, space-separated.
    pub scope: Option<&'a str>,
}

/// A checked authorization request, bound to its client's redirect URIs.
/// The client is the application its `client_id` named (found before the
/// check), so the request does not repeat it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The redirect URI, exactly as registered.
    pub redirect_uri: String,
    /// The client's `state`, if it sent one.
    pub state: Option<String>,
    /// The challenge.
    pub code_challenge: String,
    /// `S256` (or `plain` under the `oauth-plain-accepted` fault).
    pub code_challenge_method: &'static str,
    /// The raw `scope` as requested, for the consent form to carry on.
    pub scope: Option<String>,
    /// What a token for this request will carry.
    pub scopes: Scopes,
}

/// Why an authorization request is refused: a 400 page, never a redirect.
pub type Refusal = &'static str;

fn present(value: Option<&str>) -> Option<&str> {
    value.filter(|v| !v.is_empty())
}

/// Whether `given` is one of the `registered` redirect URIs: byte equality,
/// so no prefix, case folding or normalisation lets another URI through.
pub fn redirect_uri_registered(registered: &[String], given: &str) -> bool {
    registered.iter().any(|r| redirect_uri_matches(r, given))
}

/// Whether the redirect URI a request names is `expected`, byte for byte
/// (its edge: [`Edges::redirect_uri_matches`](super::edges::Edges::redirect_uri_matches)).
pub fn redirect_uri_matches(expected: &str, given: &str) -> bool {
    edges().redirect_uri_matches(expected, given)
}

/// The challenge method to store: `S256`, which is required.
fn challenge_method(given: Option<&str>) -> Result<&'static str, Refusal> {
    match (edges().challenge_method(given), given) {
        (Some(method), _) => Ok(method),
        (None, None) => Err("code_challenge_method is required and must be S256"),
        (None, Some(_)) => Err("code_challenge_method must be S256"),
    }
}

/// RFC 7636 §4.1: 43 to 128 characters of `A-Z a-z 0-9 - . _ ~`, the form of
/// both a verifier and (for S256, exactly 43 of them) a challenge.
pub fn is_pkce_string(value: &str) -> bool {
    (43..=128).contains(&value.len())
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// `BASE64URL-NOPAD(SHA256(verifier))`, the S256 challenge of a verifier.
pub fn s256_challenge(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// Equality that takes as long whatever the first differing byte.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Whether `verifier` proves possession for a code with this challenge.
pub fn verifier_matches(verifier: &str, challenge: &str, method: &str) -> bool {
    if !edges().is_verifier(verifier, is_pkce_string(verifier)) {
        return false;
    }
    match method {
        S256 => constant_time_eq(s256_challenge(verifier).as_bytes(), challenge.as_bytes()),
        PLAIN => constant_time_eq(verifier.as_bytes(), challenge.as_bytes()),
        _ => false,
    }
}

/// The scopes a request gets: the requested ones that refcore offers
/// (unknown names are dropped); absent or empty means both offered scopes.
/// A request naming only scopes refcore does not offer is refused.
pub fn granted_scopes(requested: Option<&str>) -> Result<Scopes, Refusal> {
    let names: Vec<&str> = match present(requested) {
        None => OFFERED_SCOPES.to_vec(),
        Some(raw) => raw
            .split(' ')
            .filter(|name| edges().offered_scope(name))
            .collect(),
    };
    if names.is_empty() {
        return Err("scope names none of read:repository, write:issue");
    }
    Scopes::parse(&names).map_err(|_| "scope is not valid")
}

/// The scopes an issued token carries: the ones the code was granted (its
/// edge: [`Edges::token_scopes`](super::edges::Edges::token_scopes)).
pub fn token_scopes(granted: Scopes) -> Scopes {
    Scopes::from_stored(&edges().token_scopes(granted.stored()))
}

/// Checks an authorization request against its client's registered
/// redirect URIs. The client itself was found by its `client_id` first
/// (`service::oauth::authorize`), so `raw.client_id` is not read here. The
/// order is the order of the messages a client developer would want to fix
/// first.
pub fn check(raw: &RawRequest<'_>, registered: &[String]) -> Result<Request, Refusal> {
    let redirect_uri = present(raw.redirect_uri).ok_or("redirect_uri is required")?;
    let listed = redirect_uri_registered(registered, redirect_uri);
    if !edges().redirect_uri_allowed(raw.response_type, listed) {
        return Err("redirect_uri is not registered for this application");
    }
    if let Some(response_type) = raw.response_type
        && !edges().response_type_ok(response_type)
    {
        return Err("response_type must be code");
    }
    let code_challenge = present(raw.code_challenge).ok_or("code_challenge is required")?;
    if !is_pkce_string(code_challenge) {
        return Err("code_challenge must be 43-128 characters of A-Z a-z 0-9 - . _ ~");
    }
    let code_challenge_method = challenge_method(present(raw.code_challenge_method))?;
    let state = present(raw.state);
    if state.is_some_and(|s| s.len() > MAX_URI_BYTES) {
        return Err("state is too long");
    }
    let scopes = granted_scopes(raw.scope)?;
    Ok(Request {
        redirect_uri: redirect_uri.to_string(),
        state: state.map(str::to_string),
        code_challenge: code_challenge.to_string(),
        code_challenge_method,
        scope: present(raw.scope).map(str::to_string),
        scopes,
    })
}

/// A redirect URI a client may register: an absolute `http(s)` URL without
/// a fragment (RFC 6749 §3.1.2), at most [`MAX_URI_BYTES`], in printable
/// ASCII (as a URL on the wire is, so it can stand in a `Location` as is).
pub fn is_registrable_redirect_uri(uri: &str) -> bool {
    uri.len() <= MAX_URI_BYTES
        && uri.bytes().all(|b| b.is_ascii_graphic())
        && !uri.contains('#')
        && url::Url::parse(uri).is_ok_and(|u| matches!(u.scheme(), "http" | "https"))
}

/// `redirect_uri` with `params` added to its query, URL-encoded: after `&`
/// when it already has a query, else after `?`.
pub fn redirect_to_client(redirect_uri: &str, params: &[(&str, &str)]) -> String {
    let query = edges().redirect_query(params, encoded_query(params));
    let separator = edges().query_separator(redirect_uri, query_separator(redirect_uri));
    format!("{redirect_uri}{separator}{query}")
}

/// `params` URL-encoded as a query (the honest edge of [`redirect_to_client`]).
pub fn encoded_query(params: &[(&str, &str)]) -> String {
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    for (name, value) in params {
        query.append_pair(name, value);
    }
    query.finish()
}

/// What goes between a redirect URI and the query added to it: `?` when it
/// has none, nothing when it ends in `?` or `&`, else `&` (the honest edge
/// of [`redirect_to_client`]).
pub fn query_separator(redirect_uri: &str) -> &'static str {
    match redirect_uri.find('?') {
        None => "?",
        Some(_) if redirect_uri.ends_with('?') || redirect_uri.ends_with('&') => "",
        Some(_) => "&",
    }
}

/// The facts of a stored code that its redemption is checked against.
#[derive(Debug, Clone, Copy)]
pub struct StoredCode<'a> {
    /// The `client_id` of the application it was issued to.
    pub client_id: &'a str,
    /// The redirect URI of its authorization request.
    pub redirect_uri: &'a str,
    /// Its challenge.
    pub code_challenge: &'a str,
    /// Its challenge method.
    pub code_challenge_method: &'a str,
    /// Unix seconds from which it is expired.
    pub expires_at: i64,
}

/// What a token request presents with a code. Its `Debug` hides the
/// verifier, a secret.
#[derive(Clone, Copy)]
pub struct Redemption<'a> {
    /// `client_id`.
    pub client_id: &'a str,
    /// `redirect_uri`.
    pub redirect_uri: &'a str,
    /// `code_verifier`.
    pub code_verifier: &'a str,
}

impl std::fmt::Debug for Redemption<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redemption")
            .field("client_id", &self.client_id)
            .field("redirect_uri", &self.redirect_uri)
            .field("code_verifier", &"<hidden>")
            .finish()
    }
}

/// The latest `expires_at` that is dead at `now`: a code is expired from
/// its `expires_at` on, and the purge of dead codes uses the same line.
pub fn expiry_horizon(now: i64) -> i64 {
    edges().expiry_horizon(now)
}

/// Whether a code that expires at `expires_at` is dead at `now`.
pub fn code_expired(expires_at: i64, now: i64) -> bool {
    expires_at <= expiry_horizon(now)
}

/// Whether `redemption` may redeem `code` at `now` (it was found unspent):
/// its client, its exact redirect URI, alive, and the verifier of its
/// challenge. One answer for every failure, so nothing tells which failed.
pub fn redeems(code: &StoredCode<'_>, redemption: &Redemption<'_>, now: i64) -> bool {
    let client = edges().same_client(code.client_id, redemption.client_id);
    let redirect = redirect_uri_matches(code.redirect_uri, redemption.redirect_uri);
    let alive = !code_expired(code.expires_at, now);
    let proof = edges().proves(verifier_matches(
        redemption.code_verifier,
        code.code_challenge,
        code.code_challenge_method,
    ));
    client && redirect && alive && proof
}

#[cfg(test)]
mod tests {
    use super::*;

    const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

    fn registered() -> Vec<String> {
        vec!["http://127.0.0.1:9/mcp/oauth/callback".to_string()]
    }

    fn raw() -> RawRequest<'static> {
        RawRequest {
            response_type: Some("code"),
            client_id: Some("c"),
            redirect_uri: Some("http://127.0.0.1:9/mcp/oauth/callback"),
            state: Some("s"),
            code_challenge: Some(CHALLENGE),
            code_challenge_method: Some("S256"),
            scope: None,
        }
    }

    #[test]
    fn rfc7636_appendix_b_example() {
        assert_eq!(s256_challenge(VERIFIER), CHALLENGE);
        assert!(verifier_matches(VERIFIER, CHALLENGE, S256));
        assert!(!verifier_matches(
            &VERIFIER.replace('d', "e"),
            CHALLENGE,
            S256
        ));
        assert!(!verifier_matches(CHALLENGE, CHALLENGE, S256));
        assert!(!verifier_matches(VERIFIER, CHALLENGE, "S512"));
    }

    #[test]
    fn verifiers_are_43_to_128_unreserved_characters() {
        assert!(is_pkce_string(&"a".repeat(43)));
        assert!(is_pkce_string(&"~._-".repeat(32)));
        assert!(!is_pkce_string(&"a".repeat(42)));
        assert!(!is_pkce_string(&"a".repeat(129)));
        assert!(!is_pkce_string(&format!("{}+", "a".repeat(43))));
        assert!(!is_pkce_string(&format!("{}é", "a".repeat(43))));
    }

    #[test]
    fn a_valid_request_and_each_refusal() {
        let ok = check(&raw(), &registered()).unwrap();
        assert_eq!(ok.code_challenge_method, S256);
        assert_eq!(ok.scopes.names(), ["read:repository", "write:issue"]);
        let refused = |edit: fn(&mut RawRequest<'static>)| {
            let mut r = raw();
            edit(&mut r);
            check(&r, &registered()).is_err()
        };
        assert!(refused(
            |r| r.redirect_uri = Some("http://127.0.0.1:9/mcp/oauth/callbackx")
        ));
        assert!(refused(
            |r| r.redirect_uri = Some("http://127.0.0.1:9/mcp/oauth/")
        ));
        assert!(refused(
            |r| r.redirect_uri = Some("HTTP://127.0.0.1:9/mcp/oauth/callback")
        ));
        assert!(refused(|r| r.redirect_uri = None));
        assert!(refused(|r| r.response_type = Some("token")));
        assert!(refused(|r| r.code_challenge = None));
        assert!(refused(|r| r.code_challenge = Some("short")));
        assert!(refused(|r| r.code_challenge_method = None));
        assert!(refused(|r| r.code_challenge_method = Some("plain")));
        assert!(refused(|r| r.code_challenge_method = Some("s256")));
        assert!(refused(|r| r.scope = Some("read:admin write:admin")));
        // The consent form does not carry response_type.
        let mut form = raw();
        form.response_type = None;
        assert!(check(&form, &registered()).is_ok());
    }

    #[test]
    fn scopes_are_the_requested_ones_refcore_offers() {
        let names = |s: Option<&str>| granted_scopes(s).map(|s| s.names());
        assert_eq!(names(None).unwrap(), ["read:repository", "write:issue"]);
        assert_eq!(names(Some("")).unwrap(), names(None).unwrap());
        assert_eq!(
            names(Some("read:repository read:admin")).unwrap(),
            ["read:repository"]
        );
        assert_eq!(names(Some("write:issue")).unwrap(), ["write:issue"]);
        assert!(names(Some("write:admin")).is_err());
    }

    #[test]
    fn parameters_are_appended_encoded() {
        let params = [("code", "abc"), ("state", "a b&c=d/é")];
        assert_eq!(
            redirect_to_client("http://h/cb", &params),
            "http://h/cb?code=abc&state=a+b%26c%3Dd%2F%C3%A9"
        );
        assert_eq!(
            redirect_to_client("http://h/cb?x=1", &params[..1]),
            "http://h/cb?x=1&code=abc"
        );
        assert_eq!(
            redirect_to_client("http://h/cb?", &params[..1]),
            "http://h/cb?code=abc"
        );
    }

    #[test]
    fn registrable_redirect_uris() {
        assert!(is_registrable_redirect_uri(
            "http://127.0.0.1:8/mcp/oauth/callback"
        ));
        assert!(is_registrable_redirect_uri("https://example.test/cb?x=1"));
        assert!(!is_registrable_redirect_uri("https://example.test/cb#f"));
        assert!(!is_registrable_redirect_uri("/relative"));
        assert!(!is_registrable_redirect_uri("javascript:alert(1)"));
        assert!(!is_registrable_redirect_uri("http://h/café"));
        assert!(!is_registrable_redirect_uri("http://h/a b"));
    }

    #[test]
    fn the_longest_query_fits_a_login_url() {
        // The login URL carries the path encoded again, three bytes each at
        // worst, and must stay below the 65,534 bytes `http` parses.
        // docs/contract.md states both numbers.
        assert_eq!(MAX_AUTHORIZE_QUERY_BYTES, 16_045);
        assert_eq!(MAX_AUTHORIZE_PATH_BYTES, 16_068);
        let login = "/user/login?redirect_to=".len() + 3 * MAX_AUTHORIZE_PATH_BYTES;
        assert!(login < 65_534, "{login}");
        assert!(query_within_bounds(&"a".repeat(MAX_AUTHORIZE_QUERY_BYTES)));
        assert!(!query_within_bounds(
            &"a".repeat(MAX_AUTHORIZE_QUERY_BYTES + 1)
        ));
    }

    #[test]
    fn a_code_redeems_only_with_all_its_bindings() {
        let code = StoredCode {
            client_id: "c",
            redirect_uri: "http://h/cb",
            code_challenge: CHALLENGE,
            code_challenge_method: S256,
            expires_at: 100,
        };
        let good = Redemption {
            client_id: "c",
            redirect_uri: "http://h/cb",
            code_verifier: VERIFIER,
        };
        assert!(!format!("{good:?}").contains(VERIFIER));
        assert!(redeems(&code, &good, 99));
        assert!(!redeems(&code, &good, 100));
        assert!(!redeems(
            &code,
            &Redemption {
                client_id: "d",
                ..good
            },
            99
        ));
        assert!(!redeems(
            &code,
            &Redemption {
                redirect_uri: "http://h/cb/x",
                ..good
            },
            99
        ));
        assert!(!redeems(
            &code,
            &Redemption {
                code_verifier: CHALLENGE,
                ..good
            },
            99
        ));
    }
}
