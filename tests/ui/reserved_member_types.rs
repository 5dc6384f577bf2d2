use pilotage_types::PilotageTool;

#[derive(PilotageTool)]
#[pilotage(stage = "execute", name = "run_workflow", language = "workflow/v1")]
pub struct RunWorkflow {
    #[pilotage(program)]
    pub workflow: Option<serde_json::Value>,
    pub trace_level: Option<u8>,
    pub store: Option<String>,
    pub program_ref: Option<Vec<String>>,
}

fn main() {}
