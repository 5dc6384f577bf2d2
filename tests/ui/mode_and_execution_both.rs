use pilotage_types::PilotageTool;

#[derive(PilotageTool)]
#[pilotage(stage = "execute", name = "run_job", language = "job/v1", execution = "both")]
pub struct MissingMode {
    #[pilotage(program)]
    pub job: Option<serde_json::Value>,
    pub trace_level: Option<String>,
}

#[derive(PilotageTool)]
#[pilotage(stage = "execute", name = "run_job", language = "job/v1")]
pub struct ModeWithoutBoth {
    #[pilotage(program)]
    pub job: Option<serde_json::Value>,
    pub trace_level: Option<String>,
    pub mode: Option<String>,
}

fn main() {}
