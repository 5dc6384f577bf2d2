// Part III 4.4 rule 1: a reserved member must keep its reserved name on the wire.
use pilotage_types::PilotageTool;

#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[serde(rename_all = "camelCase")]
#[pilotage(stage = "execute", name = "run_it", language = "workflow/v1")]
/// Execute a workflow.
pub struct RenamedAll {
    #[pilotage(program)]
    pub workflow: Option<serde_json::Value>,
    pub program_ref: Option<String>,
    pub trace_level: Option<String>,
}

#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(stage = "trace", name = "trace_it", language = "workflow/v1")]
/// Fetch a workflow trace.
pub struct RenamedOne {
    #[serde(rename = "runId")]
    pub run_id: String,
    #[serde(rename = "traceLevel")]
    pub level: Option<String>,
}

fn main() {}
