use pilotage_types::PilotageTool;

#[derive(PilotageTool)]
#[pilotage(stage = "execute", name = "run_workflow", language = "workflow/v1")]
pub struct RequiredProgram {
    #[pilotage(program)]
    pub workflow: serde_json::Value,
    pub program_ref: String,
    pub trace_level: Option<String>,
}

#[derive(PilotageTool)]
#[pilotage(stage = "validate", name = "validate_any")]
pub struct RequiredOnSharedValidate {
    #[pilotage(program, language = "workflow/v1")]
    pub workflow: serde_json::Value,
    #[pilotage(program, language = "sql/postgres-15")]
    pub query: Option<String>,
}

fn main() {}
