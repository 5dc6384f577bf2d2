//! A minimal Pilotage engine: the `calc/v1` Language, whose programs are lists of arithmetic
//! steps applied to a number, served by `pilotage_server`. The whole engine is this file.
//!
//! It shows the whole story of the framework: a program type checked schema-first (it
//! derives `schemars::JsonSchema`, so a program with five faults gets five diagnostics), a
//! guide written as Markdown, a catalog of the four operations, and an execute tool of the
//! author's own (`#[derive(PilotageTool)]`) with a typed member beside the Part III ones
//! (`precision`).
//!
//! ```text
//! calc-engine                                # stdio
//! calc-engine --http 127.0.0.1:8080          # streamable HTTP with sessions
//! calc-engine --http 127.0.0.1:8080 --stateless --store sqlite:runs.db
//! RUST_LOG=debug calc-engine --log-format json   # logs on stderr: text (default) or JSON lines
//! calc-engine --max-runs-per-identity 100       # one requester's share of the run store
//! ```

use std::sync::Arc;

use pilotage_server::prelude::*;
use serde_json::{json, Value};

/// A program: `{"start": 1, "steps": [{"op": "add", "by": 2}, {"op": "mul", "by": 3}]}`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Program {
    /// The value the steps start from (default 0; a run's `input` number replaces it).
    #[serde(default)]
    start: f64,
    /// The steps, applied in order.
    steps: Vec<Step>,
}

/// One step: an operation of the catalog and its operand.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Step {
    op: Op,
    by: f64,
}

/// The operations (the catalog's entries).
#[derive(serde::Deserialize, schemars::JsonSchema, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

/// The execute tool, the author's own: the framework owns the Part III members (`input`,
/// `trace_level`, `store`, ...) and hands this struct to `execute` through the stage context.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(stage = "execute", name = "calc_run", language = "calc/v1")]
/// Run a calc/v1 program and return its value.
struct CalcRun {
    /// The program.
    #[pilotage(program)]
    #[allow(dead_code)] // read by the framework, as `ExecuteInput::program`
    program: Option<Value>,
    /// Digits after the decimal point of the result (default: all).
    precision: Option<u32>,
    /// none, summary or full: the inline trace (the framework reads it; the derive asks every
    /// execute tool to declare it, Part III 4.4).
    #[allow(dead_code)]
    trace_level: Option<String>,
}

struct Calc {
    catalog: Arc<Catalog>,
    guides: Arc<[GuideText]>,
}

impl Calc {
    fn new() -> Self {
        // Each operation is a catalog entry: its `kind` says what sort of name it is (here an
        // `operation`; engines use kinds such as `tool`, `function`, `table`), `risk` a word for
        // people and `risk_hints` the booleans hosts compare. None of these writes anything.
        let entry = |op: &str, what: &str| {
            CatalogEntry::new(op, "operation", op, "none", RiskHints::new().with_read_only(true))
                .with_description(what)
                .with_input_schema(serde_json::Map::from_iter([("type".to_owned(), json!("number"))]))
        };
        let catalog = Catalog::new(
            "1",
            [
                entry("add", "Adds `by` to the value."),
                entry("sub", "Subtracts `by` from the value."),
                entry("mul", "Multiplies the value by `by`."),
                entry("div", "Divides the value by `by`; by 0 fails the run."),
            ],
        );
        let guide = GuideText::from_markdown(
            "intro",
            "Writing calc programs",
            GuideLevel::Core,
            "# calc/v1\n\n## programs\n`{\"start\": 1, \"steps\": [{\"op\": \"add\", \"by\": 2}]}`\n\n\
             ## ops\n`add`, `sub`, `mul` and `div` apply `by` to the running value; dividing by 0 fails the run.\n",
        );
        Self {
            catalog: Arc::new(catalog),
            guides: vec![guide].into(),
        }
    }
}

impl Language for Calc {
    type Program = Program;

    fn declaration(&self) -> Declaration {
        Declaration::new("calc/v1", "Arithmetic programs")
            .with_tool_names("calc_check", "calc_run", "calc_trace")
            .with_execute_tool::<CalcRun>()
            .with_idempotent(true)
            .with_input_type(ProgramType::Any)
            .with_topic_fetch()
    }

    fn guides(&self) -> Arc<[GuideText]> {
        self.guides.clone()
    }

    fn catalog(&self) -> Option<Arc<Catalog>> {
        Some(self.catalog.clone())
    }

    fn program_schema(&self) -> Option<Value> {
        Some(program_schema::<Program>())
    }

    async fn validate(&self, program: &Program, _context: Option<&Value>, _cx: &StageContext) -> Validated {
        // The schema has checked the shape; what is left is meaning.
        let diagnostics: Vec<Diagnostic> = program
            .steps
            .iter()
            .enumerate()
            .filter(|(_, s)| matches!(s.op, Op::Div) && s.by == 0.0)
            .map(|(i, _)| {
                Diagnostic::warning("division_by_zero", format!("/steps/{i}/by"), "this step divides by 0")
                    .with_hint("the run will fail at this step")
            })
            .collect();
        let references = program.steps.iter().map(|s| op_name(s.op).to_owned());
        Validated::with_diagnostics(diagnostics).with_references(references)
    }

    async fn execute(&self, run: ExecuteInput<Program>, cx: &StageContext) -> Result<Ran, RequestError> {
        let precision = cx.arguments::<CalcRun>().and_then(|call| call.precision);
        let mut value = run.input.as_ref().and_then(Value::as_f64).unwrap_or(run.program.start);
        let mut steps = Vec::new();
        for (i, step) in run.program.steps.iter().enumerate() {
            let before = value;
            value = match step.op {
                Op::Add => value + step.by,
                Op::Sub => value - step.by,
                Op::Mul => value * step.by,
                Op::Div if step.by == 0.0 => {
                    let failed = TraceStep::new(format!("s{i}"), Outcome::failure("failed", "division by zero"))
                        .with_calls(op_name(step.op));
                    steps.push(failed.with_input(json!({"value": before, "by": step.by})));
                    return Ok(Ran::failure("failed", format!("step {i}: division by zero"), steps));
                }
                Op::Div => value / step.by,
            };
            let done = TraceStep::new(format!("s{i}"), Outcome::success("success"))
                .with_calls(op_name(step.op))
                .with_input(json!({"value": before, "by": step.by}))
                .with_output(value);
            steps.push(done);
        }
        if let Some(digits) = precision {
            let scale = 10f64.powi(digits.min(15) as i32);
            value = (value * scale).round() / scale;
        }
        Ok(Ran::success(json!({"value": value}), steps))
    }
}

fn op_name(op: Op) -> &'static str {
    match op {
        Op::Add => "add",
        Op::Sub => "sub",
        Op::Mul => "mul",
        Op::Div => "div",
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Logs on stderr (stdout is MCP over stdio): RUST_LOG (default `info,rmcp=warn`),
    // `--log-format json` for JSON lines.
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,rmcp=warn"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    match args
        .iter()
        .position(|a| a == "--log-format")
        .and_then(|at| args.get(at + 1))
    {
        Some(format) if format == "json" => logs.json().init(),
        _ => logs.init(),
    }
    // --store memory (the default) | sqlite:PATH | postgres://...: where runs are kept.
    let store = match args.iter().position(|a| a == "--store") {
        Some(at) => args
            .get(at + 1)
            .ok_or("--store needs memory, sqlite:PATH or postgres://...")?,
        None => "memory",
    };
    // One requester's share of the store (--max-runs-per-identity N, --max-bytes-per-identity B;
    // defaults 1,000 runs and 8 MiB): past it, its own oldest runs give way, nobody else's.
    let number = |flag: &str, default: usize| -> Result<usize, String> {
        match args.iter().position(|a| a == flag) {
            None => Ok(default),
            Some(at) => args
                .get(at + 1)
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| format!("{flag} needs a number")),
        }
    };
    let defaults = StoreLimits::default();
    let limits = defaults.with_identity_share(
        number("--max-runs-per-identity", defaults.max_runs_per_identity)?,
        number("--max-bytes-per-identity", defaults.max_bytes_per_identity)?,
    );
    let store = pilotage_server::open_store(store, limits).await?;
    let engine = Engine::builder("calc-engine", env!("CARGO_PKG_VERSION"))
        .language(Calc::new())
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
