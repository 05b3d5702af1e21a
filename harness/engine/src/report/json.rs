//! `report.json`: the whole run report as JSON, for machines, with the
//! gate's verdict (`"gate": {"gate": "passed" | "failed" | "partial", ...}`)
//! and its banner computed from it, so a machine need not re-derive them.

use super::model::RunReport;
use crate::secrets::SecretRegistry;

/// Renders the report as compact JSON (a third smaller than pretty, for a
/// report that must stay small), redacted.
pub fn render(report: &RunReport, secrets: &SecretRegistry) -> String {
    let mut value = serde_json::to_value(report).expect("the report model always serialises");
    let gate = report.gate();
    value["banner"] = gate.banner().into();
    value["gate"] = serde_json::to_value(gate).expect("a gate serialises");
    value["coverage"] =
        serde_json::to_value(super::coverage::coverage(report)).expect("coverage serialises");
    let text = serde_json::to_string(&value).expect("JSON values serialise") + "\n";
    secrets.redact(&text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::tests::sample;

    #[test]
    fn json_round_trips_and_is_redacted() {
        let secrets = SecretRegistry::new();
        secrets.register("sekrit-value-1");
        let text = render(&sample(), &secrets);
        assert!(!text.contains("sekrit-value-1"));
        let back: RunReport = serde_json::from_str(&text).unwrap();
        assert!(text.contains("\"banner\":\"GATE FAILED\""), "{text}");
        assert_eq!(back.results.len(), 3);
        assert_eq!(back.counts().failed, 2);
        assert_eq!(
            back.results[2].comparison,
            sample().results[2].comparison,
            "the parity table survives the round trip"
        );
    }
}
