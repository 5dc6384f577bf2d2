use pilotage_types::PilotageTool;

#[derive(PilotageTool)]
#[pilotage(stage = "trace", name = "trace_run", language = "workflow/v1")]
pub struct TraceRun {
    pub trace_level: Option<String>,
}

fn main() {}
