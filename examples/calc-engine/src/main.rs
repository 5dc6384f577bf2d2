//! A minimal Pilotage engine: the `calc/v1` Language, whose programs are lists of arithmetic
//! steps applied to a number, served by `pilotage_server`. The whole engine is this file.
//!
//! ```text
//! calc-engine                                # stdio
//! calc-engine --http 127.0.0.1:8080          # streamable HTTP with sessions
//! calc-engine --http 127.0.0.1:8080 --stateless --store sqlite:runs.db
//! ```

use pilotage_server::prelude::*;
use serde_json::{json, Value};

/// A program: `{"start": 1, "steps": [{"op": "add", "by": 2}, {"op": "mul", "by": 3}]}`.
#[derive(serde::Deserialize)]
struct Program {
    #[serde(default)]
    start: f64,
    steps: Vec<Step>,
}

#[derive(serde::Deserialize)]
struct Step {
    op: String,
    by: f64,
}

const OPS: &[&str] = &["add", "sub", "mul", "div"];

struct Calc;

impl Language for Calc {
    type Program = Program;

    fn declaration(&self) -> Declaration {
        Declaration::new("calc/v1", "Arithmetic programs")
            .with_tool_names("calc_check", "calc_run", "calc_trace")
            .with_effects(false, true, false)
            .with_input_type(ProgramType::Any)
            .with_topic_fetch()
    }

    fn guides(&self) -> std::sync::Arc<[GuideText]> {
        let body = "# calc/v1\n\n## programs\n`{\"start\": 1, \"steps\": [{\"op\": \"add\", \"by\": 2}]}`\n\n\
## ops\n`add`, `sub`, `mul` and `div` apply `by` to the running value; dividing by 0 fails the run.\n";
        let guide = Guide::new(
            "intro",
            "Writing calc programs",
            GuideLevel::Core,
            ["programs".to_owned(), "ops".to_owned()],
            LanguageIdentifier("calc/v1".to_owned()),
            "1",
            0u64,
        );
        vec![GuideText::new(guide, body)].into()
    }

    async fn validate(&self, program: &Program, _context: Option<&Value>, _cx: &StageContext) -> Validated {
        let unknown = program
            .steps
            .iter()
            .enumerate()
            .filter(|(_, s)| !OPS.contains(&s.op.as_str()));
        let diagnostics: Vec<Diagnostic> = unknown
            .map(|(i, s)| {
                Diagnostic::error("unknown_op", format!("/steps/{i}/op"), format!("unknown op '{}'", s.op))
                    .with_hint("one of add, sub, mul, div")
            })
            .collect();
        Validated::with_diagnostics(diagnostics)
    }

    async fn execute(&self, run: ExecuteInput<Program>, _cx: &StageContext) -> Result<Ran, RequestError> {
        let mut value = run.input.as_ref().and_then(Value::as_f64).unwrap_or(run.program.start);
        let mut steps = Vec::new();
        for (i, step) in run.program.steps.iter().enumerate() {
            let before = value;
            value = match step.op.as_str() {
                "add" => value + step.by,
                "sub" => value - step.by,
                "mul" => value * step.by,
                _ if step.by == 0.0 => {
                    let failed = TraceStep::new(format!("s{i}"), Outcome::failure("failed", "division by zero"));
                    steps.push(failed.with_input(json!({"value": before, "by": step.by})));
                    return Ok(Ran::failure("failed", format!("step {i}: division by zero"), steps));
                }
                _ => value / step.by,
            };
            let done = TraceStep::new(format!("s{i}"), Outcome::success("success"))
                .with_input(json!({"value": before, "by": step.by}))
                .with_output(value);
            steps.push(done);
        }
        Ok(Ran::success(json!({"value": value}), steps))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // --store memory (the default) | sqlite:PATH | postgres://...: where runs are kept.
    let store = match args.iter().position(|a| a == "--store") {
        Some(at) => args
            .get(at + 1)
            .ok_or("--store needs memory, sqlite:PATH or postgres://...")?,
        None => "memory",
    };
    let store = pilotage_server::open_store(store, StoreLimits::default()).await?;
    let engine = Engine::builder("calc-engine", env!("CARGO_PKG_VERSION"))
        .language(Calc)
        .run_store(store)
        .build()?;
    match args.iter().position(|a| a == "--http") {
        Some(at) => {
            let addr = args.get(at + 1).ok_or("--http needs ADDR")?.parse()?;
            let stateless = args.iter().any(|a| a == "--stateless");
            let options = if stateless {
                HttpOptions::stateless()
            } else {
                HttpOptions::default()
            };
            engine.serve_http(addr, options).await?;
        }
        None => engine.serve_stdio().await?,
    }
    Ok(())
}
