//! Hot paths of pilotage-types, each beside its baseline in the same run (the group's
//! `baseline` function); `cargo xtask bench` prints the ratios against the targets.
//!
//! The baseline of the validation groups is a raw `jsonschema` validator built directly from
//! the same schema with the crate's fastest settings for it (its defaults: 2020-12 does not
//! assert formats, and the look-ahead patterns need the fancy-regex engine); the toolkit's side
//! is the generated validators.
//!
//! - `is_valid/*`: `T::is_valid` on a valid value. Target <= 0.33.
//! - `validate/*`: `T::validate` on a valid value (reported).
//! - `validate_invalid/*`: `T::validate` on an invalid value (three violations), every
//!   violation collected by both. Target <= 0.5.
//! - `first_call/*`: the first check of a process: nothing to prepare for the generated
//!   validator; jsonschema compiles the schema first (reported).
//! - `parse/*`: `parse::<ExecuteToolOutput>` (validate + deserialize) vs deserializing alone
//!   (`parse/trace_100_bytes`: `parse_slice` on the 100-step trace),
//!   from a `Value` and from bytes. Target <= 1.3.
//! - `tool_definition/*`: a derived tool's definition after the first call vs reading a
//!   static. Target: under 50 ns.
//! - `tools_list/*`: serialising a six-tool tools/list vs serialising the same as a `Value`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use pilotage_types::{parse, parse_slice, AccessTool, ExecuteToolOutput, PilotageTool, SchemaDef, ToolDefinition};
use serde::Deserialize;
use serde_json::{json, Value};

/// Execute a workflow document or a promoted workflow.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(
    stage = "execute",
    name = "run_workflow",
    language = "workflow/v1",
    catalog,
    destructive
)]
pub struct RunWorkflow {
    #[pilotage(program)]
    pub workflow: Option<Value>,
    pub program_ref: Option<String>,
    pub input: Option<Value>,
    pub trace_level: Option<String>,
    pub expected_catalog_version: Option<String>,
}

/// Check a workflow document.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(stage = "validate", name = "validate_workflow", language = "workflow/v1")]
pub struct ValidateWorkflow {
    #[pilotage(program)]
    pub workflow: Value,
}

/// Fetch a stored trace.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(stage = "trace", name = "trace_run", language = "workflow/v1")]
pub struct TraceRun {
    pub run_id: String,
    pub trace_level: Option<String>,
}

/// The structuredContent of Part III 9.4.
fn execute_9_4() -> Value {
    json!({
        "run_id": "run_7d3f0a9c21be",
        "outcome": { "ok": true, "status": "success", "error": null },
        "output": { "name": "Amira Hassan" },
        "trace": {
            "run_id": "run_7d3f0a9c21be",
            "level": "full",
            "steps": [{
                "id": "profile",
                "calls": "cap_read_user_profile",
                "input": { "user_id": "42" },
                "output": { "name": "Amira Hassan", "tier": "gold" },
                "outcome": { "ok": true, "status": "success", "error": null },
                "t_ms": 84
            }]
        }
    })
}

/// An execute response whose trace has 100 steps.
fn trace_100() -> Value {
    let steps: Vec<Value> = (0..100)
        .map(|i| {
            json!({"id": format!("step{i}"), "calls": "cap_read_user_profile", "input": {"user_id": i},
                "output": {"name": "Amira Hassan", "tier": "gold"}, "outcome": {"ok": true, "status": "success", "error": null},
                "t_ms": i, "decisions": [{"at": "b", "took": "then", "because": "x > 1"}]})
        })
        .collect();
    json!({"run_id": "r", "outcome": {"ok": true, "status": "success", "error": null}, "output": {},
        "trace": {"run_id": "r", "level": "full", "steps": steps}})
}

fn raw_validator(def: &str) -> jsonschema::Validator {
    let mut schema: Value = serde_json::from_str(pilotage_types::validate::PILOTAGE_SCHEMA_JSON).unwrap();
    schema["$ref"] = json!(format!("#/$defs/{def}"));
    jsonschema::options().build(&schema).unwrap()
}

/// `value` broken in three places: the run id a number, the outcome without `ok`, and the
/// trace level outside its enum.
fn broken(mut value: Value) -> Value {
    value["run_id"] = json!(7);
    value["outcome"].as_object_mut().unwrap().remove("ok");
    value["trace"]["level"] = json!("verbose");
    value
}

fn validation(c: &mut Criterion) {
    let raw = raw_validator("ExecuteToolOutput");
    for (name, value) in [("execute_9_4", execute_9_4()), ("trace_100", trace_100())] {
        assert!(ExecuteToolOutput::is_valid(&value) && raw.is_valid(&value));
        let mut group = c.benchmark_group(format!("is_valid/{name}"));
        group.bench_function("toolkit", |b| b.iter(|| ExecuteToolOutput::is_valid(black_box(&value))));
        group.bench_function("baseline", |b| b.iter(|| raw.is_valid(black_box(&value))));
        group.finish();
        let mut group = c.benchmark_group(format!("validate/{name}"));
        group.bench_function("toolkit", |b| {
            b.iter(|| ExecuteToolOutput::validate(black_box(&value)).is_ok())
        });
        group.bench_function("baseline", |b| b.iter(|| raw.validate(black_box(&value)).is_ok()));
        group.finish();

        let invalid = broken(value);
        let ours = ExecuteToolOutput::validate(&invalid).unwrap_err().violations.len();
        let theirs = raw.iter_errors(&invalid).count();
        assert!(
            ours >= 1 && theirs >= 1,
            "both see the violations ({ours} and {theirs})"
        );
        let mut group = c.benchmark_group(format!("validate_invalid/{name}"));
        group.bench_function("toolkit", |b| {
            b.iter(|| {
                ExecuteToolOutput::validate(black_box(&invalid))
                    .unwrap_err()
                    .violations
                    .len()
            })
        });
        group.bench_function("baseline", |b| {
            b.iter(|| {
                raw.iter_errors(black_box(&invalid))
                    .map(|e| {
                        (
                            e.instance_path().as_str().to_owned(),
                            e.schema_path().as_str().to_owned(),
                            e.to_string(),
                        )
                    })
                    .collect::<Vec<_>>()
                    .len()
            })
        });
        group.finish();
    }
    // The first check of a process: jsonschema must compile the schema first.
    let value = execute_9_4();
    let mut group = c.benchmark_group("first_call/execute_9_4");
    group.bench_function("toolkit", |b| b.iter(|| ExecuteToolOutput::is_valid(black_box(&value))));
    group.bench_function("baseline", |b| {
        b.iter(|| raw_validator(black_box("ExecuteToolOutput")).is_valid(black_box(&value)))
    });
    group.finish();
}

fn parsing(c: &mut Criterion) {
    let value = execute_9_4();
    let bytes = serde_json::to_vec(&value).unwrap();
    let mut group = c.benchmark_group("parse/execute_9_4_value");
    group.bench_function("toolkit", |b| {
        b.iter(|| parse::<ExecuteToolOutput>(black_box(&value)).unwrap())
    });
    group.bench_function("baseline", |b| {
        b.iter(|| ExecuteToolOutput::deserialize(black_box(&value)).unwrap())
    });
    group.finish();
    let trace = serde_json::to_vec(&trace_100()).unwrap();
    let mut group = c.benchmark_group("parse/trace_100_bytes");
    group.bench_function("toolkit", |b| {
        b.iter(|| parse_slice::<ExecuteToolOutput>(black_box(&trace)).unwrap())
    });
    group.bench_function("baseline", |b| {
        b.iter(|| serde_json::from_slice::<ExecuteToolOutput>(black_box(&trace)).unwrap())
    });
    group.finish();
    let mut group = c.benchmark_group("parse/execute_9_4_bytes");
    group.bench_function("toolkit", |b| {
        b.iter(|| parse_slice::<ExecuteToolOutput>(black_box(&bytes)).unwrap())
    });
    group.bench_function("baseline", |b| {
        b.iter(|| serde_json::from_slice::<ExecuteToolOutput>(black_box(&bytes)).unwrap())
    });
    group.finish();
}

fn definitions(c: &mut Criterion) {
    static STATIC_DEFINITION: std::sync::OnceLock<ToolDefinition> = std::sync::OnceLock::new();
    let reference = STATIC_DEFINITION.get_or_init(|| RunWorkflow::tool_definition().clone());
    let _ = RunWorkflow::tool_definition();
    let mut group = c.benchmark_group("tool_definition/run_workflow");
    group.bench_function("toolkit", |b| {
        b.iter(|| black_box(RunWorkflow::tool_definition()).name.len())
    });
    group.bench_function("baseline", |b| {
        b.iter(|| black_box(STATIC_DEFINITION.get().unwrap_or(reference)).name.len())
    });
    group.finish();

    let tools: Vec<&ToolDefinition> = vec![
        AccessTool::Manifest.definition(),
        AccessTool::GetGuide.definition(),
        AccessTool::Catalog.definition(),
        ValidateWorkflow::tool_definition(),
        RunWorkflow::tool_definition(),
        TraceRun::tool_definition(),
    ];
    #[derive(serde::Serialize)]
    struct ToolsList<'a> {
        tools: &'a [&'a ToolDefinition],
    }
    let as_value = json!({"tools": tools.iter().map(|t| t.to_value()).collect::<Vec<_>>()});
    let mut group = c.benchmark_group("tools_list/six_tools");
    group.bench_function("toolkit", |b| {
        b.iter(|| {
            serde_json::to_vec(&ToolsList {
                tools: black_box(&tools),
            })
            .unwrap()
            .len()
        })
    });
    group.bench_function("baseline", |b| {
        b.iter(|| serde_json::to_vec(black_box(&as_value)).unwrap().len())
    });
    group.finish();
}

criterion_group!(benches, validation, parsing, definitions);
criterion_main!(benches);
