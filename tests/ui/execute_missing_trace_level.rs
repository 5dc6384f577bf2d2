use pilotage_types::PilotageTool;

/// Execute a workflow.
#[derive(PilotageTool)]
#[pilotage(stage = "execute", name = "run_workflow", language = "workflow/v1")]
pub struct RunWorkflow {
    #[pilotage(program)]
    pub workflow: Option<serde_json::Value>,
}

fn main() {}
