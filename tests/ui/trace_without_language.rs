use pilotage_types::PilotageTool;

/// Fetch a stored trace.
#[derive(PilotageTool)]
#[pilotage(stage = "trace", name = "trace_run")]
pub struct TraceRun {
    pub run_id: String,
}

fn main() {}
