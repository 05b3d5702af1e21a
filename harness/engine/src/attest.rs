//! Release evidence: the run's verdict as an in-toto Statement v1 with the
//! test-result predicate (`https://in-toto.io/attestation/test-result/v0.1`),
//! signed in a DSSE envelope with an Ed25519 key, and its verification.
//! A release pipeline's policy engine reads which Core was gated, against
//! which contract, by which harness, with what result, and knows the file
//! was not edited since: the signature covers the payload and its type.

use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ed25519_dalek::pkcs8::{DecodePrivateKey, DecodePublicKey};
use ed25519_dalek::{SigningKey, VerifyingKey};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::clauses::SPEC;
use crate::report::gate::Gate;
use crate::report::invocation::file_digest;
use crate::report::model::RunReport;
use crate::vocab::Verdict;

/// The DSSE payload type of an in-toto Statement.
pub const PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
/// The Statement layer's type.
pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
/// The test-result predicate's type.
pub const PREDICATE_TYPE: &str = "https://in-toto.io/attestation/test-result/v0.1";
/// The file written next to the reports.
pub const FILE_NAME: &str = "attestation.intoto.json";
/// The largest envelope `verify` reads: a whole catalogue's names are tens
/// of kilobytes, so anything near this is not ours.
const MAX_ENVELOPE_BYTES: u64 = 16 * 1024 * 1024;

/// Why signing or verifying failed, in words that never hold key material.
#[derive(Debug, thiserror::Error)]
pub enum AttestError {
    /// A key file is unreadable or not the expected PEM.
    #[error("{0}")]
    Key(String),
    /// The envelope or its statement is not what it must be.
    #[error("{0}")]
    Refused(String),
}

/// A signing key: an Ed25519 private key in PKCS#8 PEM.
pub struct Signer {
    key: SigningKey,
}

impl Signer {
    /// Reads the key from PEM text (`-----BEGIN PRIVATE KEY-----`).
    pub fn from_pem(pem: &str) -> Result<Signer, AttestError> {
        let key = SigningKey::from_pkcs8_pem(pem).map_err(|_| {
            // The parser's message could quote the input: say only what is wrong.
            AttestError::Key("the signing key is not an Ed25519 private key in PKCS#8 PEM".into())
        })?;
        Ok(Signer { key })
    }

    /// The envelope's `keyid`: lowercase hex SHA-256 of the raw public key.
    pub fn key_id(&self) -> String {
        key_id(&self.key.verifying_key())
    }

    /// Signs `statement` in a DSSE envelope, rendered as JSON.
    pub fn sign(&self, statement: &Value) -> Result<Vec<u8>, AttestError> {
        let payload = serde_json::to_vec(statement).expect("a statement serialises");
        let signer = dsse::Ed25519Signer::from_bytes(self.key.as_bytes())
            .map_err(|e| AttestError::Key(format!("the signing key is unusable: {e}")))?
            .with_key_id(self.key_id());
        let envelope = dsse::sign(PAYLOAD_TYPE, &payload, &signer)
            .map_err(|e| AttestError::Key(format!("signing failed: {e}")))?;
        envelope
            .to_json()
            .map_err(|e| AttestError::Refused(format!("the envelope does not serialise: {e}")))
    }
}

fn key_id(key: &VerifyingKey) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}

/// What was gated, what it was gated against, and where the run is seen.
pub struct Evidence {
    /// The Core: its binary path or image reference, and its digest
    /// (`sha256:<hex>`, a binary's SHA-256 or an image's id).
    pub core: (String, String),
    /// The adapter binary and its digest.
    pub adapter: (String, String),
    /// The harness binary's digest (`sha256:<hex>`).
    pub harness_digest: String,
    /// SHA-256 of the report's `manifest.json`, binding the statement to the
    /// report files it summarises.
    pub manifest_digest: Option<String>,
    /// The CI run's URL, when CI gives one.
    pub url: Option<String>,
}

impl Evidence {
    /// The evidence of `report`: the Core's and the adapter's digests as
    /// the run recorded them, the harness's read now, the manifest in `dir`, the
    /// URL from the CI's environment.
    pub fn of(report: &RunReport, dir: &Path) -> Evidence {
        let env = &report.environment;
        // A binary is named by its file name (the path is this machine's);
        // an image by its reference.
        let file_name = |path: &str| {
            Path::new(path)
                .file_name()
                .map_or_else(|| path.to_owned(), |n| n.to_string_lossy().into_owned())
        };
        let core_name = match (
            report.invocation.runtime.as_str(),
            report.invocation.core_arg.as_str(),
        ) {
            ("docker", "") => env.core_binary.clone(),
            ("docker", image) => image.to_owned(),
            _ => file_name(&env.core_binary),
        };
        let harness = std::env::current_exe()
            .map(|p| file_digest(&p))
            .unwrap_or_else(|e| format!("unknown ({e})"));
        let manifest = dir.join("manifest.json");
        // The adapter's digest as the run recorded it (a merge may run
        // where the shards' binaries are not); read now for older reports.
        let adapter_digest = match report.invocation.adapter_digest.as_str() {
            "" => file_digest(Path::new(&env.adapter_binary)),
            recorded => recorded.to_owned(),
        };
        Evidence {
            core: (core_name, report.invocation.core_digest.clone()),
            adapter: (file_name(&env.adapter_binary), adapter_digest),
            harness_digest: harness,
            manifest_digest: manifest.exists().then(|| file_digest(&manifest)),
            url: ci_url(),
        }
    }
}

/// The run's URL under GitHub Actions or GitLab CI, or as
/// `GRANTGATE_RUN_URL` says.
fn ci_url() -> Option<String> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    var("GRANTGATE_RUN_URL")
        .or_else(|| {
            Some(format!(
                "{}/{}/actions/runs/{}",
                var("GITHUB_SERVER_URL")?,
                var("GITHUB_REPOSITORY")?,
                var("GITHUB_RUN_ID")?
            ))
        })
        .or_else(|| var("CI_JOB_URL"))
}

/// A resource descriptor's `digest` for a `sha256:<hex>` value; `None` when
/// the value is no SHA-256 (an unreadable file).
fn digest_set(digest: &str) -> Option<Value> {
    let hex = digest.strip_prefix("sha256:")?;
    (hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| json!({ "sha256": hex.to_ascii_lowercase() }))
}

/// The in-toto Statement of `report`: subjects the Core and the adapter by
/// digest; the predicate's result (`WARNED` for a partial run), the trial
/// names by outcome, the configuration (the contract, the harness, the
/// invocation, the report's manifest) and the CI URL.
pub fn statement(report: &RunReport, evidence: &Evidence) -> Value {
    let subject = [&evidence.core, &evidence.adapter]
        .into_iter()
        .filter_map(|(name, digest)| Some(json!({"name": name, "digest": digest_set(digest)?})))
        .collect::<Vec<_>>();
    let result = match report.gate() {
        Gate::Passed => "PASSED",
        Gate::Failed => "FAILED",
        Gate::Partial { .. } | Gate::Waived { .. } => "WARNED",
    };
    let (mut passed, mut warned, mut failed) = (Vec::new(), Vec::new(), Vec::new());
    for r in &report.results {
        match r.verdict {
            Verdict::Passed => passed.push(&r.name),
            Verdict::NotApplicable { .. } | Verdict::NotRun { .. } => warned.push(&r.name),
            Verdict::Failed { .. } if report.waiver(&r.name).is_some() => warned.push(&r.name),
            Verdict::Failed { .. } | Verdict::Errored { .. } => failed.push(&r.name),
        }
    }
    let env = &report.environment;
    let mut configuration = vec![
        json!({
            "name": "docs/spec.md",
            "digest": {"sha256": hex::encode(Sha256::digest(SPEC.as_bytes()))},
            "mediaType": "text/markdown",
            "annotations": {"contract": "agent_work_grant.v1"},
        }),
        json!({
            "name": "grantgate",
            "digest": digest_set(&evidence.harness_digest),
            "annotations": {"version": env.harness_version, "gitRevision": env.git_revision},
        }),
        json!({
            "name": "invocation",
            "mediaType": "application/json",
            "annotations": serde_json::to_value(&report.invocation).expect("the invocation serialises"),
        }),
    ];
    if let Some(b) = &report.baseline {
        configuration.push(baseline_descriptor(b));
    }
    if let Some(manifest) = evidence.manifest_digest.as_deref().and_then(digest_set) {
        configuration.push(json!({"name": "manifest.json", "digest": manifest}));
    }
    let mut predicate = json!({
        "result": result,
        "configuration": configuration,
        "passedTests": passed,
        "warnedTests": warned,
        "failedTests": failed,
    });
    if let Some(url) = &evidence.url {
        predicate["url"] = json!(url);
    }
    json!({
        "_type": STATEMENT_TYPE,
        "subject": subject,
        "predicateType": PREDICATE_TYPE,
        "predicate": predicate,
    })
}

/// The baseline (`--expected-failures`) as a resource descriptor: its file
/// and digest, each waived check with its reason and expiry, and each stale
/// or expired entry, so a policy can refuse waivers or accept named ones.
fn baseline_descriptor(b: &crate::baseline::Judged) -> Value {
    let waived: Vec<Value> = (b.waived.iter())
        .map(|w| {
            json!({
                "trial": w.trial,
                "check": w.check,
                "reason": w.reason,
                "expires": b.entries[w.entry].expires,
            })
        })
        .collect();
    let problems = |list: &[crate::baseline::Problem]| -> Vec<Value> {
        (list.iter())
            .map(|p| json!({"entry": b.entries[p.entry].label(), "why": p.why}))
            .collect()
    };
    json!({
        "name": b.file,
        "digest": digest_set(&b.digest),
        "mediaType": "application/toml",
        "annotations": {
            "role": "expected-failures",
            "judgedOn": b.today,
            "waived": waived,
            "stale": problems(&b.stale),
            "expired": problems(&b.expired),
        },
    })
}

/// What a verified attestation says.
#[derive(Debug)]
pub struct Verified {
    /// `PASSED`, `WARNED` or `FAILED`.
    pub result: String,
    /// Trials by outcome: passed, warned, failed.
    pub counts: (usize, usize, usize),
    /// The subjects, `name sha256:<hex>`.
    pub subjects: Vec<String>,
    /// Each failure the run's baseline waived: `trial (step `s`): reason`.
    pub waived: Vec<String>,
}

/// Reads the envelope at `path` and checks, in order: its signature by the
/// Ed25519 public key `public_pem` (SPKI PEM), the payload type, the
/// statement and predicate types, the result, and that a subject has
/// `subject_digest` when one is given (`sha256:<hex>` or bare hex).
pub fn verify(
    path: &Path,
    public_pem: &str,
    subject_digest: Option<&str>,
) -> Result<Verified, AttestError> {
    let key = VerifyingKey::from_public_key_pem(public_pem)
        .map_err(|_| AttestError::Key("the key is not an Ed25519 public key in SPKI PEM".into()))?;
    let bytes = read_bounded(path)?;
    let envelope = dsse::Envelope::from_json(&bytes).map_err(|e| {
        AttestError::Refused(format!("{} is not a DSSE envelope: {e}", path.display()))
    })?;
    let verifier = dsse::Ed25519Verifier::from_bytes(key.as_bytes())
        .map_err(|e| AttestError::Key(format!("the key is unusable: {e}")))?
        .with_key_id(key_id(&key));
    let verified = dsse::verify(&envelope, &[&verifier], 1).map_err(|e| {
        AttestError::Refused(format!(
            "the signature does not verify with this key (the file was changed, or signed with another key): {e}"
        ))
    })?;
    if verified.payload_type != PAYLOAD_TYPE {
        return Err(AttestError::Refused(format!(
            "payload type {:?}, not {PAYLOAD_TYPE}",
            verified.payload_type
        )));
    }
    let statement: Value = serde_json::from_slice(&verified.payload)
        .map_err(|e| AttestError::Refused(format!("the payload is not JSON: {e}")))?;
    let field = |k: &str| statement.get(k).and_then(Value::as_str).unwrap_or_default();
    if field("_type") != STATEMENT_TYPE || field("predicateType") != PREDICATE_TYPE {
        return Err(AttestError::Refused(format!(
            "not a test-result statement: _type {:?}, predicateType {:?}",
            field("_type"),
            field("predicateType")
        )));
    }
    let predicate = &statement["predicate"];
    let result = predicate["result"].as_str().unwrap_or_default().to_owned();
    if !["PASSED", "WARNED", "FAILED"].contains(&result.as_str()) {
        return Err(AttestError::Refused(format!(
            "the predicate's result {result:?} is none of PASSED, WARNED, FAILED"
        )));
    }
    let count = |k: &str| predicate[k].as_array().map_or(0, Vec::len);
    let subjects: Vec<(String, String)> = (statement["subject"].as_array().into_iter().flatten())
        .map(|s| {
            let name = s["name"].as_str().unwrap_or_default().to_owned();
            let digest = s["digest"]["sha256"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            (name, digest)
        })
        .collect();
    if let Some(wanted) = subject_digest {
        let wanted = wanted.strip_prefix("sha256:").unwrap_or(wanted);
        if !subjects.iter().any(|(_, d)| d.eq_ignore_ascii_case(wanted)) {
            return Err(AttestError::Refused(format!(
                "no subject has digest sha256:{wanted}; the subjects are {}",
                subject_list(&subjects).join(", ")
            )));
        }
    }
    let waived = (predicate["configuration"].as_array().into_iter().flatten())
        .filter(|c| c["annotations"]["role"] == "expected-failures")
        .flat_map(|c| {
            c["annotations"]["waived"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|w| {
            let text = |k: &str| w[k].as_str().unwrap_or_default().to_owned();
            match w["check"].as_str() {
                Some(step) => format!("{} (step `{step}`): {}", text("trial"), text("reason")),
                None => format!("{}: {}", text("trial"), text("reason")),
            }
        })
        .collect();
    Ok(Verified {
        waived,
        result,
        counts: (
            count("passedTests"),
            count("warnedTests"),
            count("failedTests"),
        ),
        subjects: subject_list(&subjects),
    })
}

fn subject_list(subjects: &[(String, String)]) -> Vec<String> {
    subjects
        .iter()
        .map(|(n, d)| format!("{n} sha256:{d}"))
        .collect()
}

fn read_bounded(path: &Path) -> Result<Vec<u8>, AttestError> {
    use std::io::Read;
    let file = std::fs::File::open(path)
        .map_err(|e| AttestError::Refused(format!("cannot read {}: {e}", path.display())))?;
    let mut bytes = Vec::new();
    file.take(MAX_ENVELOPE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| AttestError::Refused(format!("cannot read {}: {e}", path.display())))?;
    if bytes.len() as u64 > MAX_ENVELOPE_BYTES {
        return Err(AttestError::Refused(format!(
            "{} is larger than {MAX_ENVELOPE_BYTES} bytes",
            path.display()
        )));
    }
    Ok(bytes)
}

/// The envelope's payload decoded, for tests and tools that inspect an
/// attestation they already verified.
pub fn payload_of(envelope_json: &[u8]) -> Option<Value> {
    let envelope: Value = serde_json::from_slice(envelope_json).ok()?;
    let bytes = STANDARD.decode(envelope["payload"].as_str()?).ok()?;
    serde_json::from_slice(&bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::tests::sample;
    use ed25519_dalek::pkcs8::spki::der::pem::LineEnding;
    use ed25519_dalek::pkcs8::{EncodePrivateKey, EncodePublicKey};

    fn keys(seed: u8) -> (String, String) {
        let key = SigningKey::from_bytes(&[seed; 32]);
        let private = key.to_pkcs8_pem(LineEnding::LF).unwrap().to_string();
        let public = key
            .verifying_key()
            .to_public_key_pem(LineEnding::LF)
            .unwrap();
        (private, public)
    }

    fn evidence() -> Evidence {
        Evidence {
            core: ("/x/refcore".into(), format!("sha256:{}", "ab".repeat(32))),
            adapter: ("/x/awg-mcp".into(), format!("sha256:{}", "cd".repeat(32))),
            harness_digest: format!("sha256:{}", "ef".repeat(32)),
            manifest_digest: None,
            url: Some("https://ci.example/run/1".into()),
        }
    }

    fn signed(seed: u8) -> (tempfile::TempDir, std::path::PathBuf, String) {
        let (private, public) = keys(seed);
        let statement = statement(&sample(), &evidence());
        let envelope = Signer::from_pem(&private)
            .unwrap()
            .sign(&statement)
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        std::fs::write(&path, envelope).unwrap();
        (dir, path, public)
    }

    #[test]
    fn the_statement_names_the_subjects_the_result_and_every_trial_by_outcome() {
        let s = statement(&sample(), &evidence());
        assert_eq!(s["_type"], STATEMENT_TYPE);
        assert_eq!(s["predicateType"], PREDICATE_TYPE);
        assert_eq!(s["subject"][0]["digest"]["sha256"], "ab".repeat(32));
        assert_eq!(s["subject"][1]["name"], "/x/awg-mcp");
        let p = &s["predicate"];
        assert_eq!(p["result"], "FAILED");
        assert_eq!(p["url"], "https://ci.example/run/1");
        let failed = p["failedTests"].as_array().unwrap();
        assert_eq!(failed.len(), sample().results.len());
        assert!(p["passedTests"].as_array().unwrap().is_empty());
        assert_eq!(
            p["configuration"][0]["digest"]["sha256"],
            hex::encode(Sha256::digest(SPEC.as_bytes()))
        );
    }

    #[test]
    fn a_signed_attestation_verifies_and_a_changed_one_or_another_key_does_not() {
        let (_dir, path, public) = signed(7);
        let v = verify(&path, &public, None).unwrap();
        assert_eq!(v.result, "FAILED");
        assert_eq!(v.counts.2, sample().results.len());
        verify(&path, &public, Some(&"AB".repeat(32))).unwrap();
        let e = verify(&path, &public, Some(&"00".repeat(32))).unwrap_err();
        assert!(e.to_string().contains("no subject"), "{e}");

        let (_other, _, other_public) = signed(9);
        let e = verify(&path, &other_public, None).unwrap_err();
        assert!(e.to_string().contains("does not verify"), "{e}");

        // A changed verdict inside the payload, the signature left as it was.
        let mut envelope: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let mut statement = payload_of(&std::fs::read(&path).unwrap()).unwrap();
        statement["predicate"]["result"] = json!("PASSED");
        envelope["payload"] = json!(STANDARD.encode(serde_json::to_vec(&statement).unwrap()));
        std::fs::write(&path, serde_json::to_vec(&envelope).unwrap()).unwrap();
        let e = verify(&path, &public, None).unwrap_err();
        assert!(e.to_string().contains("does not verify"), "{e}");
    }

    #[test]
    fn waived_failures_make_the_result_warned_and_are_listed_with_their_reasons() {
        use crate::baseline::{Baseline, Entry, judge};
        let mut report = sample();
        report.results.truncate(1);
        let baseline = Baseline {
            file: "known.toml".into(),
            digest: format!("sha256:{}", "12".repeat(32)),
            entries: vec![Entry {
                trial: Some("sqlite::full_lifecycle".into()),
                scenario: None,
                check: Some("x".into()),
                reason: "tracked in core#12".into(),
                expires: Some("2030-01-01".into()),
            }],
        };
        report.baseline = Some(judge(&report, &baseline, "2026-01-01"));
        let s = statement(&report, &evidence());
        let p = &s["predicate"];
        assert_eq!(p["result"], "WARNED");
        assert_eq!(p["warnedTests"], json!(["sqlite::full_lifecycle"]));
        assert!(p["failedTests"].as_array().unwrap().is_empty());
        let known = (p["configuration"].as_array().unwrap().iter())
            .find(|c| c["name"] == "known.toml")
            .unwrap();
        assert_eq!(known["digest"]["sha256"], "12".repeat(32));
        assert_eq!(
            known["annotations"]["waived"],
            json!([{"trial": "sqlite::full_lifecycle", "check": "x", "reason": "tracked in core#12", "expires": "2030-01-01"}])
        );

        let (private, public) = keys(3);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let envelope = Signer::from_pem(&private).unwrap().sign(&s).unwrap();
        std::fs::write(&path, envelope).unwrap();
        let v = verify(&path, &public, None).unwrap();
        assert_eq!(v.result, "WARNED");
        assert_eq!(
            v.waived,
            vec!["sqlite::full_lifecycle (step `x`): tracked in core#12"]
        );

        // A stale entry fails the gate, and the attestation says so.
        report.results[0].verdict = Verdict::Passed;
        report.baseline = Some(judge(&report, &baseline, "2026-01-01"));
        let s = statement(&report, &evidence());
        assert_eq!(s["predicate"]["result"], "FAILED");
        let known = (s["predicate"]["configuration"].as_array().unwrap().iter())
            .find(|c| c["name"] == "known.toml")
            .unwrap();
        assert_eq!(known["annotations"]["stale"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn a_key_that_is_not_pem_is_refused_without_quoting_it() {
        let e = Signer::from_pem("secret-bytes-not-a-key").err().unwrap();
        assert!(!e.to_string().contains("secret-bytes"), "{e}");
    }
}
