use pilotage_types::PilotageTool;

#[derive(PilotageTool)]
#[pilotage(stage = "validate", name = "validate_workflow", language = "workflow/v1", colour = "blue")]
pub struct ValidateWorkflow {
    #[pilotage(program, strict)]
    pub workflow: serde_json::Value,
}

#[derive(PilotageTool)]
#[pilotage(stage = "plan", name = "plan_workflow")]
pub struct Plan {
    #[pilotage(program)]
    pub workflow: serde_json::Value,
}

fn main() {}
