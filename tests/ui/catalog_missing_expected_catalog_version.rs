use pilotage_types::PilotageTool;

#[derive(PilotageTool)]
#[pilotage(stage = "execute", name = "run_workflow", language = "workflow/v1", catalog)]
pub struct RunWorkflow {
    #[pilotage(program)]
    pub workflow: Option<serde_json::Value>,
    pub trace_level: Option<String>,
}

fn main() {}
