//! `_csrf` tokens: `ISSUED.MAC` where MAC is HMAC-SHA256 over the session id
//! and the issue time, keyed with `CORE_SECRET_KEY`. A token is valid only
//! for the session it was issued to and for `CORE_CSRF_TTL_SECS` seconds.

use std::time::Duration;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::edges::{Edge, Edges};

type HmacSha256 = Hmac<Sha256>;

fn mac(key: &[u8], session_id: &str, issued: i64) -> HmacSha256 {
    // HMAC accepts keys of any length; this cannot fail.
    let mut mac = HmacSha256::new_from_slice(key).expect("hmac accepts any key length");
    mac.update(b"refcore-csrf\0");
    if Edge::csrf_binds_session() {
        mac.update(session_id.as_bytes());
    }
    mac.update(b"\0");
    mac.update(issued.to_string().as_bytes());
    mac
}

/// Issues a token for `session_id` at time `now`.
pub fn issue(key: &[u8], session_id: &str, now: i64) -> String {
    let tag = mac(key, session_id, now).finalize().into_bytes();
    format!("{now}.{}", hex::encode(tag))
}

/// Whether `token` was issued for `session_id` no longer than `ttl` ago.
/// Garbled, foreign, future-dated and expired tokens are all refused; the
/// comparison is constant-time.
pub fn verify(key: &[u8], session_id: &str, token: &str, now: i64, ttl: Duration) -> bool {
    let Some((issued, tag)) = token.split_once('.') else {
        return false;
    };
    let Ok(issued) = issued.parse::<i64>() else {
        return false;
    };
    let Ok(tag) = hex::decode(tag) else {
        return false;
    };
    let age = now - issued;
    if age < -5 || age > ttl.as_secs() as i64 {
        return false;
    }
    mac(key, session_id, issued).verify_slice(&tag).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";
    const TTL: Duration = Duration::from_secs(60);

    #[test]
    fn valid_for_its_session_within_the_ttl() {
        let token = issue(KEY, "s1", 1000);
        assert!(verify(KEY, "s1", &token, 1000, TTL));
        assert!(verify(KEY, "s1", &token, 1060, TTL));
    }

    #[test]
    fn refused_when_foreign_expired_garbled_or_other_key() {
        let token = issue(KEY, "s1", 1000);
        assert!(!verify(KEY, "s2", &token, 1000, TTL));
        assert!(!verify(KEY, "s1", &token, 1061, TTL));
        assert!(!verify(
            b"another key entirely....",
            "s1",
            &token,
            1000,
            TTL
        ));
        assert!(!verify(KEY, "s1", "garbage", 1000, TTL));
        assert!(!verify(
            KEY,
            "s1",
            &token.replacen("1000", "1001", 1),
            1001,
            TTL
        ));
        assert!(!verify(KEY, "s1", "", 1000, TTL));
    }
}
