use pilotage_types::PilotageTool;

// Every violation is reported, each on its own token.
#[derive(PilotageTool)]
#[pilotage(stage = "execute", name = "run_workflow", catalog, execution = "both")]
pub struct RunWorkflow {
    #[pilotage(program)]
    pub workflow: serde_json::Value,
    pub trace_level: u8,
}

fn main() {}
