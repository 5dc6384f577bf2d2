//! Part III 6 (result envelope, output schemas): every Pilotage tool declares an
//! outputSchema (a SHOULD: warning), and a declared one accepts every structuredContent shape
//! of its tool, the request error included.

use pilotage_types::validate::pilotage;
use pilotage_types::{AccessTool, ToolKind};
use serde_json::{json, Value};

use super::rules::{OUTPUT_SCHEMA_INCOMPLETE, OUTPUT_SCHEMA_MISSING};
use super::{Finding, Linter};

/// 6 for the listed access tools.
pub(super) fn access_tools(linter: &mut Linter<'_>) {
    for access in AccessTool::ALL {
        if let Some((_, tool)) = linter.tools.get(access.name()).copied() {
            output_schema(linter, access.name(), tool, access.kind());
        }
    }
}

/// 6: the outputSchema of the tool `name` (a tool of `kind`) is present and accepts every
/// shape of the tool's union.
pub(super) fn output_schema(linter: &mut Linter<'_>, name: &str, tool: &Value, kind: ToolKind) {
    let Some(schema) = tool.get("outputSchema") else {
        linter.push(
            Finding::new(&OUTPUT_SCHEMA_MISSING, format!("`{name}` declares no outputSchema"))
                .tool(name)
                .at(linter.tool_pointer(name, "")),
        );
        return;
    };
    let at = linter.tool_pointer(name, "/outputSchema");
    let validator = match jsonschema::validator_for(schema) {
        Ok(validator) => validator,
        Err(error) => {
            let message = format!("the outputSchema does not compile: {error}");
            linter.push(Finding::new(&OUTPUT_SCHEMA_INCOMPLETE, message).tool(name).at(at));
            return;
        }
    };
    let mut samples = shape_samples(kind);
    // The server's own manifest is a shape this tool returns (when it is valid at all; an
    // invalid manifest is reported by the manifest rules).
    let manifest = linter.surface.manifest;
    if kind == ToolKind::Manifest && pilotage().is_valid("Manifest", manifest).unwrap_or(false) {
        samples.push(("the manifest itself", manifest.clone()));
    }
    let rejected: Vec<&str> = samples
        .iter()
        .filter(|(_, sample)| !validator.is_valid(sample))
        .map(|(shape, _)| *shape)
        .collect();
    if !rejected.is_empty() {
        linter.push(
            Finding::new(
                &OUTPUT_SCHEMA_INCOMPLETE,
                format!(
                    "the outputSchema rejects shapes this tool can return: {}",
                    rejected.join(", ")
                ),
            )
            .tool(name)
            .at(at)
            .hint("make it an anyOf of every response shape and the request error"),
        );
    }
}

/// One valid instance of every shape a tool of `kind` can return, the request error last.
fn shape_samples(kind: ToolKind) -> Vec<(&'static str, Value)> {
    let mut samples = match kind {
        ToolKind::Manifest => vec![(
            "a manifest",
            json!({"pilotage": "1.1", "capabilities": {"validate": true},
            "languages": [{"name": "a/b", "title": "t", "guides": "pilotage_get_guide", "loop": {"validate": "v"}, "locator": "json-pointer"}]}),
        )],
        ToolKind::GetGuide => guide_samples(),
        ToolKind::Catalog => catalog_samples(),
        ToolKind::Validate => validate_samples(),
        ToolKind::Execute => execute_samples(),
        ToolKind::Trace => vec![(
            "a fetched trace",
            json!({"run_id": "r", "outcome": outcome(), "trace": trace()}),
        )],
    };
    samples.push((
        "a request error",
        json!({"error": {"kind": "not_found", "message": "m"}, "catalog_version": "cv"}),
    ));
    samples
}

fn hints() -> Value {
    json!({"readOnly": true, "destructive": false, "openWorld": false})
}

fn outcome() -> Value {
    json!({"ok": true, "status": "success", "error": null})
}

fn trace() -> Value {
    json!({"run_id": "r", "level": "summary", "steps": [{"id": "s", "outcome": outcome()}]})
}

fn guide_samples() -> Vec<(&'static str, Value)> {
    let guide = json!({"id": "g", "title": "t", "level": "core", "topics": [], "language": "a/b", "version": "1", "size_bytes": 1});
    let mut fetched = guide.clone();
    fetched["body"] = json!("text");
    vec![
        ("a guide index", json!({"guides": [guide]})),
        ("a fetched guide", json!({"guide": fetched})),
    ]
}

fn catalog_samples() -> Vec<(&'static str, Value)> {
    let entry = json!({"id": "c", "kind": "capability", "name": "n", "risk": "safe", "risk_hints": hints()});
    vec![
        ("a catalog list", json!({"items": [entry], "catalog_version": "cv"})),
        ("a catalog get", json!({"entry": entry, "catalog_version": "cv"})),
        (
            "a catalog changed_since",
            json!({"catalog_version": "cv", "changes": [{"id": "c", "change": "added"}]}),
        ),
    ]
}

fn validate_samples() -> Vec<(&'static str, Value)> {
    vec![
        (
            "a valid result",
            json!({"valid": true, "diagnostics": [], "catalog_version": "cv",
                "plan": {"steps": [], "max_risk": "safe", "max_risk_hints": hints()}}),
        ),
        (
            "diagnostics",
            json!({"valid": false, "catalog_version": "cv",
                "diagnostics": [{"severity": "error", "code": "c", "path": "/x", "message": "m"}]}),
        ),
    ]
}

fn execute_samples() -> Vec<(&'static str, Value)> {
    vec![
        (
            "a run outcome",
            json!({"run_id": "r", "outcome": outcome(), "output": {}, "trace": trace()}),
        ),
        (
            "a failed run",
            json!({"run_id": "r", "outcome": {"ok": false, "status": "validation_error", "error": "e"}, "diagnostics": []}),
        ),
    ]
}
