//! A conformant Pilotage server surface built from the toolkit itself: the access tools and
//! derived loop tools for `workflow/v1` (the Language of Part III section 9), its manifest and
//! its initialize result. The conformance tests lint it clean, then break one rule at a time.
//! pilotage-tests includes this same file (`tests/src/lib.rs`) for its adversarial tests.

use pilotage_types::{AccessTool, PilotageTool};
use serde_json::{json, Map, Value};

/// Check a workflow document against the catalog and preview its plan.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(stage = "validate", name = "validate_workflow", language = "workflow/v1")]
pub struct ValidateWorkflow {
    /// The workflow document.
    #[pilotage(program)]
    pub workflow: Value,
    pub context: Option<Value>,
}

/// Execute a workflow document or a promoted workflow.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(
    stage = "execute",
    name = "run_workflow",
    language = "workflow/v1",
    catalog,
    destructive
)]
pub struct RunWorkflow {
    #[pilotage(program)]
    pub workflow: Option<Map<String, Value>>,
    pub program_ref: Option<String>,
    pub input: Option<Map<String, Value>>,
    pub trace_level: Option<String>,
    pub expected_catalog_version: Option<String>,
}

/// Fetch the stored trace of a run by its run_id.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(stage = "trace", name = "trace_run", language = "workflow/v1")]
pub struct TraceRun {
    pub run_id: String,
    pub trace_level: Option<String>,
}

/// The manifest of Part III 9.1.
pub fn manifest() -> Value {
    json!({
        "pilotage": pilotage_types::PILOTAGE_VERSION,
        "languages": [{
            "name": "workflow/v1",
            "title": "Workflow documents",
            "guides": "pilotage_get_guide",
            "catalog": "pilotage_catalog",
            "loop": {"validate": "validate_workflow", "execute": "run_workflow", "trace": "trace_run"},
            "capabilities": {"guides": true, "catalog": {"search": true}, "validate": true, "plan": true, "execute": true, "trace_fetch": true},
            "locator": "json-pointer",
            "execution": "immediate",
            "trace": "full",
            "retention": "PT1H"
        }]
    })
}

/// The `tools/list` result.
pub fn tools() -> Value {
    let mut tools: Vec<Value> = AccessTool::ALL
        .iter()
        .map(|tool| tool.definition().to_value())
        .collect();
    tools.push(ValidateWorkflow::tool_definition().to_value());
    tools.push(RunWorkflow::tool_definition().to_value());
    tools.push(TraceRun::tool_definition().to_value());
    json!({ "tools": tools })
}

/// The initialize result, with the extension, the inline manifest and the welcome text.
pub fn initialize() -> Value {
    json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}, "extensions": {"io.github.jafarsa0/pilotage": {"version": pilotage_types::PILOTAGE_VERSION}}},
        "serverInfo": {"name": "example", "version": "1"},
        "instructions": "This server speaks Pilotage: call pilotage_manifest first to learn its program Languages.",
        "_meta": {"io.github.jafarsa0/pilotage": {"manifest": manifest()}}
    })
}
