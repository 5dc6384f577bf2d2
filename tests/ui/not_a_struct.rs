use pilotage_types::PilotageTool;

#[derive(PilotageTool)]
#[pilotage(stage = "validate", name = "validate_workflow", language = "workflow/v1")]
pub enum Arguments {
    Workflow(serde_json::Value),
}

#[derive(PilotageTool)]
#[pilotage(stage = "validate", name = "validate_workflow", language = "workflow/v1")]
pub union Raw {
    workflow: u64,
}

#[derive(PilotageTool)]
#[pilotage(stage = "validate", name = "validate_workflow", language = "workflow/v1")]
pub struct Tuple(serde_json::Value);

fn main() {}
