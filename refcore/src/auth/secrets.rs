//! Random secrets, their stored hashes, and password hashing.
//!
//! Tokens are 40 lowercase hex characters (Forgejo's `sha1` field) stored
//! only as SHA-256. Passwords use argon2id with parameters that keep one
//! verification well under 50 ms, run off the async threads.

use std::sync::OnceLock;

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use rand::RngCore;
use sha2::{Digest, Sha256};

/// `n` random bytes from the OS, as lowercase hex.
pub fn random_hex(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// A new access-token secret: 20 random bytes, 40 hex characters.
pub fn new_token() -> String {
    random_hex(20)
}

/// Lowercase hex SHA-256, the stored form of tokens and session ids.
pub fn sha256_hex(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

fn argon2() -> Argon2<'static> {
    // 8 MiB, 2 passes: measured well under 50 ms per verification here.
    let params = Params::new(8 * 1024, 2, 1, None).unwrap_or_default();
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// Hashes a password to a PHC string.
pub async fn hash_password(password: String) -> Result<String, String> {
    tokio::task::spawn_blocking(move || hash_now(&password))
        .await
        .map_err(|e| e.to_string())?
}

fn hash_now(password: &str) -> Result<String, String> {
    let mut salt = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut salt);
    let salt = SaltString::encode_b64(&salt).map_err(|e| e.to_string())?;
    argon2()
        .hash_password(password.as_bytes(), &salt)
        .map(|hash| hash.to_string())
        .map_err(|e| e.to_string())
}

/// Stands in for the hash of an account that has none (no such login, or
/// one that cannot sign in), so that refusing it costs one real verification.
static NO_ACCOUNT: OnceLock<String> = OnceLock::new();

/// Checks a password against a stored PHC string; false on any mismatch.
/// Without a stored hash it still verifies, against [`NO_ACCOUNT`], and
/// answers false: the time taken does not reveal which logins exist.
pub async fn verify_password(password: String, stored: Option<String>) -> bool {
    tokio::task::spawn_blocking(move || {
        let known = stored.is_some();
        let stored = stored.unwrap_or_else(|| {
            NO_ACCOUNT
                .get_or_init(|| hash_now(&random_hex(16)).unwrap_or_default())
                .clone()
        });
        let matches = PasswordHash::new(&stored).is_ok_and(|parsed| {
            argon2()
                .verify_password(password.as_bytes(), &parsed)
                .is_ok()
        });
        known && matches
    })
    .await
    .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn passwords_verify_at_a_bounded_cost() {
        let hash = hash_password("correct horse".into()).await.unwrap();
        assert!(verify_password("correct horse".into(), Some(hash.clone())).await);
        assert!(!verify_password("wrong horse".into(), Some(hash.clone())).await);
        // The cost is fixed by the parameters stored in the hash, not by a
        // wall clock (which a loaded CI machine would make flaky): argon2id,
        // at most 8 MiB and 2 passes on one lane, which verified well under
        // 50 ms on a quiet 2-core machine.
        let parsed = PasswordHash::new(&hash).unwrap();
        assert_eq!(parsed.algorithm.as_str(), "argon2id");
        let params = Params::try_from(&parsed).unwrap();
        assert!(params.m_cost() <= 8 * 1024, "{params:?}");
        assert!(params.t_cost() <= 2, "{params:?}");
        assert_eq!(params.p_cost(), 1, "{params:?}");
    }

    #[tokio::test]
    async fn no_account_is_refused_after_a_verification_of_equal_cost() {
        assert!(!verify_password("correct horse".into(), None).await);
        let real = hash_password("correct horse".into()).await.unwrap();
        let stand_in = NO_ACCOUNT.get().expect("the stand-in hash was made");
        let (real, stand_in) = (
            PasswordHash::new(&real).unwrap(),
            PasswordHash::new(stand_in).unwrap(),
        );
        assert_eq!(stand_in.algorithm, real.algorithm);
        assert_eq!(stand_in.params, real.params);
    }

    #[test]
    fn tokens_are_forty_hex() {
        let token = new_token();
        assert_eq!(token.len(), 40);
        assert!(
            token
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        assert_ne!(token, new_token());
    }
}
