//! The structural checker behind `from_arguments` (`pilotage_types::structural`) agrees with
//! jsonschema, the oracle, on the derived inputSchema of every shape the derive emits: nested
//! structs, optional members, enum-typed members, `serde_json::Value`, arrays, maps, integers
//! and floats. Property-tested over instances built from each tool's own member names, so that
//! most instances reach the members' schemas rather than failing at the top.

use std::collections::BTreeMap;

use pilotage_types::PilotageTool;
use proptest::prelude::*;
use serde_json::{json, Map, Value};

/// A nested part of a program.
#[derive(serde::Deserialize, schemars::JsonSchema, Debug)]
pub struct Step {
    pub id: String,
    pub retries: Option<u8>,
    pub weight: f64,
    pub tags: Vec<String>,
}

/// A Rust enum argument.
#[derive(serde::Deserialize, schemars::JsonSchema, Debug)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    Low,
    High,
}

/// A typed program with nesting.
#[derive(serde::Deserialize, schemars::JsonSchema, Debug)]
pub struct Program {
    pub steps: Vec<Step>,
    pub meta: Option<BTreeMap<String, i64>>,
    pub first: Option<Box<Step>>,
}

/// Check a program of every shape.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool, Debug)]
#[pilotage(stage = "validate", name = "check_shapes", language = "shapes/v1")]
pub struct CheckShapes {
    #[pilotage(program)]
    pub program: Program,
    pub context: Option<Value>,
    pub priority: Option<Priority>,
    pub limits: Option<Vec<u32>>,
    /// An ordinary member of nested shape (a program member's schema is permissive by
    /// Part III 4.6; an ordinary member keeps its structure).
    pub outline: Option<Program>,
}

/// Execute a program of every shape.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool, Debug)]
#[pilotage(stage = "execute", name = "run_shapes", language = "shapes/v1")]
pub struct RunShapes {
    #[pilotage(program)]
    pub program: Option<Program>,
    pub program_ref: Option<String>,
    pub input: Option<Map<String, Value>>,
    pub trace_level: Option<String>,
    pub store: Option<bool>,
    pub priority: Priority,
    pub pair: Option<(String, i32)>,
    pub first_step: Option<Step>,
}

/// Fetch a trace.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool, Debug)]
#[pilotage(stage = "trace", name = "trace_shapes", language = "shapes/v1")]
pub struct TraceShapes {
    pub run_id: String,
    pub trace_level: Option<String>,
    pub depth: Option<i16>,
}

const NAMES: &[&str] = &[
    "program",
    "steps",
    "id",
    "retries",
    "weight",
    "tags",
    "meta",
    "first",
    "context",
    "priority",
    "limits",
    "program_ref",
    "input",
    "trace_level",
    "store",
    "pair",
    "run_id",
    "depth",
    "outline",
    "first_step",
    "x",
];

fn instance() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-300i64..300).prop_map(Value::from),
        prop_oneof![Just(1.5f64), Just(2.0), Just(-0.0), Just(1e20)].prop_map(|f| json!(f)),
        prop_oneof![Just("low"), Just("high"), Just("medium"), Just("")].prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(4, 48, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(NAMES), inner), 0..6)
                .prop_map(|members| Value::Object(members.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}

fn agrees<T: PilotageTool>(value: &Value) -> Result<(), TestCaseError> {
    let schema = &T::tool_definition().input_schema;
    let oracle = jsonschema::validator_for(schema).expect("a derived inputSchema compiles");
    let checker = pilotage_types::structural::faults(schema, value);
    prop_assert_eq!(
        checker.is_empty(),
        oracle.is_valid(value),
        "{} disagrees on {}: {:?}",
        T::tool_definition().name,
        value,
        checker
    );
    // The failing instance locations agree too.
    let oracle_at: std::collections::BTreeSet<String> = oracle
        .iter_errors(value)
        .map(|e| e.instance_path().as_str().to_owned())
        .collect();
    let checker_at: std::collections::BTreeSet<String> = checker.into_iter().map(|(at, _)| at).collect();
    prop_assert_eq!(checker_at, oracle_at, "{}: {}", T::tool_definition().name, value);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn the_structural_checker_agrees_with_jsonschema(value in instance()) {
        agrees::<CheckShapes>(&value)?;
        agrees::<RunShapes>(&value)?;
        agrees::<TraceShapes>(&value)?;
        // The same value as a program, so the nested shapes are reached.
        agrees::<CheckShapes>(&json!({"program": value.clone()}))?;
        agrees::<RunShapes>(&json!({"program": value.clone(), "priority": "low"}))?;
        agrees::<CheckShapes>(&json!({"program": {}, "outline": value.clone()}))?;
        agrees::<CheckShapes>(&json!({"program": {}, "outline": {"steps": [value.clone()], "first": value.clone()}}))?;
        agrees::<CheckShapes>(&json!({"program": {}, "outline": {"steps": [], "meta": value.clone()}}))?;
        agrees::<RunShapes>(&json!({"priority": "low", "pair": value.clone(), "first_step": value}))?;
    }
}

#[test]
fn the_derived_schemas_cover_every_shape() {
    // The property test is only as good as the schemas it runs on: each shape is present.
    let check = &CheckShapes::tool_definition().input_schema["properties"]["outline"];
    let text = check.to_string();
    for needle in [
        "\"integer\"",
        "\"number\"",
        "\"array\"",
        "\"object\"",
        "additionalProperties",
    ] {
        assert!(text.contains(needle), "{needle} missing from {text}");
    }
    let run = RunShapes::tool_definition().input_schema.to_string();
    assert!(run.contains("prefixItems") || run.contains("\"items\""), "{run}");
    assert_eq!(
        RunShapes::tool_definition().input_schema["required"],
        json!(["priority"]),
        "an enum-typed required member"
    );
}
