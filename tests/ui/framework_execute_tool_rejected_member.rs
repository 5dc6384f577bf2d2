// A derived execute tool named in a Language's declaration keeps the derive's rules: a member
// that would break Part III's permissive schema (a reserved member of the wrong JSON type) is a
// compile error, with the framework as with the derive alone.
use pilotage_server::prelude::*;

/// Run a text pipeline.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(stage = "execute", name = "text_run", language = "text/v1")]
pub struct TextRun {
    #[pilotage(program)]
    pub program: Option<serde_json::Value>,
    pub trace_level: Option<String>,
    pub store: Option<String>,
    pub dry_run: Option<bool>,
}

fn main() {
    let _ = Declaration::new("text/v1", "Text pipelines").with_execute_tool::<TextRun>();
}
