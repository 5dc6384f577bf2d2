use pilotage_types::PilotageTool;

#[derive(PilotageTool)]
#[pilotage(stage = "validate", name = "validate_workflow", language = "workflow/v1")]
pub struct NoProgram {
    pub workflow: serde_json::Value,
}

#[derive(PilotageTool)]
#[pilotage(stage = "validate", name = "validate_workflow", language = "workflow/v1")]
pub struct TwoForOneLanguage {
    #[pilotage(program)]
    pub workflow: Option<serde_json::Value>,
    #[pilotage(program)]
    pub document: Option<serde_json::Value>,
}

fn main() {}
