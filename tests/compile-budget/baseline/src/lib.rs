//! The same three structs with only serde and schemars derives: the baseline of the budget.
use serde_json::Value;

/// Check a workflow document and preview its plan.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct ValidateWorkflow {
    pub workflow: Value,
    pub context: Option<Value>,
}

/// Execute a workflow document or a promoted workflow.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct RunWorkflow {
    pub workflow: Option<Value>,
    pub program_ref: Option<String>,
    pub input: Option<Value>,
    pub trace_level: Option<String>,
    pub expected_catalog_version: Option<String>,
}

/// Fetch the stored trace of a run.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct TraceRun {
    pub run_id: String,
    pub trace_level: Option<String>,
}

/// The schemas of the three structs.
pub fn tools() -> Vec<Value> {
    vec![
        schemars::schema_for!(ValidateWorkflow).to_value(),
        schemars::schema_for!(RunWorkflow).to_value(),
        schemars::schema_for!(TraceRun).to_value(),
    ]
}
