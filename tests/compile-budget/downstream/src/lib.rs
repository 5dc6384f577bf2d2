//! Three derived loop tools, as a downstream engine writes them.
use pilotage_types::PilotageTool;
use serde_json::Value;

/// Check a workflow document and preview its plan.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(stage = "validate", name = "validate_workflow", language = "workflow/v1")]
pub struct ValidateWorkflow {
    #[pilotage(program)]
    pub workflow: Value,
    pub context: Option<Value>,
}

/// Execute a workflow document or a promoted workflow.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(stage = "execute", name = "run_workflow", language = "workflow/v1", catalog, destructive)]
pub struct RunWorkflow {
    #[pilotage(program)]
    pub workflow: Option<Value>,
    pub program_ref: Option<String>,
    pub input: Option<Value>,
    pub trace_level: Option<String>,
    pub expected_catalog_version: Option<String>,
}

/// Fetch the stored trace of a run.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(stage = "trace", name = "trace_run", language = "workflow/v1")]
pub struct TraceRun {
    pub run_id: String,
    pub trace_level: Option<String>,
}

/// The tools/list of the three tools.
pub fn tools() -> Vec<Value> {
    vec![
        ValidateWorkflow::tool_definition().to_value(),
        RunWorkflow::tool_definition().to_value(),
        TraceRun::tool_definition().to_value(),
    ]
}
