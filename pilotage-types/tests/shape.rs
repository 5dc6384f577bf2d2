//! `pilotage_types::shape` against realistic schemars program types, with `jsonschema` as the
//! oracle.
//!
//! Every schema is generated twice (`SchemaSettings::draft2020_12().for_deserialize()`, with
//! and without `inline_subschemas`). The differential tests run hand-written valid and invalid
//! programs plus mutations of the valid ones (each member dropped, an unknown member added,
//! each value replaced by one of another type, integers out of range, strings emptied,
//! arrays emptied or given a duplicate) through both checkers and require:
//!
//! - the same verdict. The oracle's schema is the schema with each integer `format` of
//!   schemars (`uint32`, ...) also written as `minimum`/`maximum` (in an added `allOf`): the
//!   shape checker asserts those ranges (the program is deserialized into that integer type),
//!   while `jsonschema` treats unknown formats as annotations. Nothing else differs.
//! - consistent locations. Two instance pointers are *related* when one is a token-wise prefix
//!   of the other (`/steps/0` and `/steps/0/tool`): both checkers then blame the same path from
//!   the root, one more precisely (`jsonschema` reports a failed `oneOf`, `required` or
//!   `additionalProperties` at the object; the shape checker at the variant's inner fault or
//!   at the unknown member). Each of our pointers must be related to one of `jsonschema`'s and
//!   each of `jsonschema`'s to one of ours: no fault is reported in a subtree the other checker
//!   finds clean, and none is missed.
#![cfg(feature = "derive")]

use std::collections::{BTreeSet, HashMap};

use pilotage_types::shape::{ShapeError, ShapeKeyword, ShapeSchema, ShapeViolation};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------------
// Program types.

/// A workflow: nested structs, an internally tagged enum (with a newtype variant and a
/// recursive variant), an externally tagged enum, `Option`s, bounded `Vec`, a set, a map, and
/// unknown members denied.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Workflow {
    #[schemars(length(min = 1, max = 64))]
    name: String,
    #[schemars(length(min = 1))]
    steps: Vec<Step>,
    retries: Option<u8>,
    timeout_ms: u32,
    #[serde(default)]
    env: HashMap<String, String>,
    on_error: Option<Handler>,
    #[serde(default)]
    tags: BTreeSet<String>,
    mode: Mode,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Handler {
    notify: String,
    #[schemars(range(min = 1, max = 10))]
    attempts: i32,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[allow(dead_code)]
enum Step {
    Call {
        tool: String,
        args: Option<HashMap<String, i64>>,
        timeout_s: Option<u16>,
    },
    Wait {
        ms: u64,
    },
    Branch(Branch),
    Repeat {
        times: u8,
        body: Vec<Step>,
    },
    Stop,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Branch {
    cond: String,
    then: Vec<String>,
    otherwise: Option<Vec<String>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum Mode {
    Fast,
    Slow(u16),
    Custom { level: i8 },
}

/// A recursive tree.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Tree {
    label: String,
    weight: Option<f64>,
    children: Vec<Tree>,
}

/// A flattened untagged enum (schemars writes `unevaluatedProperties: false`), an adjacently
/// tagged enum and a tuple (`prefixItems`). Only its schema is used (serde does not support
/// `deny_unknown_fields` with `flatten`).
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Pipeline {
    id: u64,
    stage: Stage,
    range: (u8, u8),
    #[serde(flatten)]
    source: Source,
}

#[derive(JsonSchema)]
#[serde(tag = "t", content = "c")]
#[allow(dead_code)]
enum Stage {
    Map(String),
    Filter { min: i16 },
    Done,
}

#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum Source {
    File { path: String },
    Inline { data: Vec<i32> },
}

/// A type whose schema has a `pattern` (refused).
#[derive(JsonSchema)]
#[allow(dead_code)]
struct Coded {
    #[schemars(regex(pattern = r"^[A-Z]{3}$"))]
    code: String,
}

fn schema_for<T: JsonSchema>(inline: bool) -> Value {
    let mut settings = schemars::generate::SchemaSettings::draft2020_12().for_deserialize();
    settings.inline_subschemas = inline;
    settings.into_generator().into_root_schema_for::<T>().to_value()
}

fn shape_for<T: JsonSchema>(inline: bool) -> ShapeSchema {
    ShapeSchema::new(schema_for::<T>(inline)).unwrap_or_else(|e| panic!("{e}"))
}

fn workflow_valid() -> Vec<Value> {
    vec![
        json!({
            "name": "deploy",
            "steps": [
                {"kind": "call", "tool": "build", "args": {"jobs": 4}, "timeout_s": 30},
                {"kind": "wait", "ms": 1000},
                {"kind": "branch", "cond": "ok", "then": ["a"], "otherwise": null},
                {"kind": "repeat", "times": 3, "body": [{"kind": "stop"}, {"kind": "wait", "ms": 2}]}
            ],
            "retries": 2,
            "timeout_ms": 60000,
            "env": {"A": "1"},
            "on_error": {"notify": "ops", "attempts": 3},
            "tags": ["x", "y"],
            "mode": {"custom": {"level": -5}}
        }),
        json!({"name": "x", "steps": [{"kind": "stop"}], "timeout_ms": 0, "mode": "fast"}),
        json!({
            "name": "é",
            "steps": [{"kind": "call", "tool": "t", "args": null}],
            "retries": null,
            "timeout_ms": 4294967295u64,
            "on_error": null,
            "mode": {"slow": 65535}
        }),
    ]
}

fn workflow_invalid() -> Vec<Value> {
    vec![
        json!(null),
        json!([]),
        json!({}),
        json!({"name": "x", "steps": [], "timeout_ms": 0, "mode": "fast"}),
        json!({"name": "", "steps": [{"kind": "stop"}], "timeout_ms": 0, "mode": "fast"}),
        json!({"name": "x", "steps": [{"kind": "jump"}], "timeout_ms": 0, "mode": "fast"}),
        json!({"name": "x", "steps": [{"tool": "t"}], "timeout_ms": 0, "mode": "fast"}),
        json!({"name": "x", "steps": ["stop"], "timeout_ms": 0, "mode": "fast"}),
        json!({"name": "x", "steps": [{"kind": "stop"}], "timeout_ms": 0, "mode": "medium"}),
        json!({"name": "x", "steps": [{"kind": "stop"}], "timeout_ms": 0, "mode": {"slow": 1, "fast": null}}),
        json!({"name": "x", "steps": [{"kind": "stop"}], "timeout_ms": 0, "mode": {"custom": {"level": 128}}}),
        json!({"name": "x", "steps": [{"kind": "stop"}], "timeout_ms": 0.5, "mode": "fast"}),
        json!({"name": "x", "steps": [{"kind": "stop"}], "timeout_ms": 1, "mode": "fast", "on_error": "page"}),
        json!({"name": "x", "steps": [{"kind": "stop"}], "timeout_ms": 1, "mode": "fast", "on_error": {"notify": "a", "attempts": 11}}),
        json!({"name": "x", "steps": [{"kind": "repeat", "times": 2, "body": [{"kind": "wait"}]}], "timeout_ms": 1, "mode": "fast"}),
        json!({"name": "x", "steps": [{"kind": "branch", "cond": 1, "then": "a"}], "timeout_ms": 1, "mode": "fast"}),
        json!({"name": "x", "steps": [{"kind": "stop"}], "timeout_ms": 1, "mode": "fast", "tags": ["a", "a"]}),
        json!({"name": "x", "steps": [{"kind": "stop"}], "timeout_ms": 1, "mode": "fast", "env": {"A": 1}}),
    ]
}

fn tree_valid() -> Vec<Value> {
    vec![
        json!({"label": "root", "children": []}),
        json!({"label": "root", "weight": 0.5, "children": [
            {"label": "a", "weight": null, "children": []},
            {"label": "b", "children": [{"label": "c", "weight": -1, "children": []}]}
        ]}),
    ]
}

fn tree_invalid() -> Vec<Value> {
    vec![
        json!({"label": "root"}),
        json!({"label": "root", "children": [{"label": 1, "children": []}, {"children": [{}]}]}),
        json!({"label": "root", "children": [], "colour": "red"}),
        json!({"label": "root", "children": [{"label": "a", "children": [], "weight": "heavy"}]}),
    ]
}

fn pipeline_valid() -> Vec<Value> {
    vec![
        json!({"id": 7, "stage": {"t": "Map", "c": "upper"}, "range": [1, 9], "path": "/tmp/x"}),
        json!({"id": 0, "stage": {"t": "Filter", "c": {"min": -3}}, "range": [0, 255], "data": [1, 2, -3]}),
        json!({"id": 1, "stage": {"t": "Done"}, "range": [5, 5], "path": "p", "data": []}),
    ]
}

fn pipeline_invalid() -> Vec<Value> {
    vec![
        json!({"id": 7, "stage": {"t": "Map", "c": "upper"}, "range": [1, 9]}),
        json!({"id": 7, "stage": {"t": "Map", "c": "upper"}, "range": [1, 9], "path": "p", "extra": 1}),
        json!({"id": 7, "stage": {"t": "Skip"}, "range": [1, 9], "path": "p"}),
        json!({"id": 7, "stage": {"t": "Filter", "c": {"min": 40000}}, "range": [1, 9], "path": "p"}),
        json!({"id": 7, "stage": {"t": "Done"}, "range": [1, 9, 3], "path": "p"}),
        json!({"id": 7, "stage": {"t": "Done"}, "range": [1, "9"], "data": [1.5]}),
        json!({"id": -7, "stage": {"c": 1}, "range": [256, -1], "data": [2147483648u64]}),
    ]
}

// ---------------------------------------------------------------------------------------------
// The oracle.

const INT_FORMATS: [(&str, i64, u64); 10] = [
    ("int8", i8::MIN as i64, i8::MAX as u64),
    ("int16", i16::MIN as i64, i16::MAX as u64),
    ("int32", i32::MIN as i64, i32::MAX as u64),
    ("int64", i64::MIN, i64::MAX as u64),
    ("int", i64::MIN, i64::MAX as u64),
    ("uint8", 0, u8::MAX as u64),
    ("uint16", 0, u16::MAX as u64),
    ("uint32", 0, u32::MAX as u64),
    ("uint64", 0, u64::MAX),
    ("uint", 0, u64::MAX),
];

/// The schema with each integer format's range also written as `minimum`/`maximum`, so that
/// `jsonschema` asserts what the shape checker asserts (data members are left alone).
fn with_format_ranges(schema: &Value) -> Value {
    let mut schema = schema.clone();
    add_ranges(&mut schema);
    schema
}

fn add_ranges(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            let range = map
                .get("format")
                .and_then(Value::as_str)
                .and_then(|f| INT_FORMATS.iter().find(|(name, ..)| *name == f));
            if let Some((_, lo, hi)) = range {
                let bounds = json!({"minimum": lo, "maximum": hi});
                match map.get_mut("allOf") {
                    Some(Value::Array(all)) => all.push(bounds),
                    _ => {
                        map.insert("allOf".to_owned(), json!([bounds]));
                    }
                }
            }
            for (key, value) in map.iter_mut() {
                if !matches!(key.as_str(), "const" | "enum" | "default" | "examples") {
                    add_ranges(value);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(add_ranges),
        _ => {}
    }
}

/// Whether two instance pointers are related: one is a token-wise prefix of the other.
fn related(a: &str, b: &str) -> bool {
    fn under(x: &str, prefix: &str) -> bool {
        x == prefix || (x.starts_with(prefix) && x[prefix.len()..].starts_with('/'))
    }
    under(a, b) || under(b, a)
}

#[derive(Default)]
struct Tally {
    instances: usize,
    invalid: usize,
    mismatches: Vec<String>,
}

impl Tally {
    /// Checks `instance` with both checkers; records any disagreement.
    fn compare(&mut self, label: &str, shape: &ShapeSchema, oracle: &jsonschema::Validator, instance: &Value) {
        self.instances += 1;
        let ours = shape.check(instance);
        let verdict = shape.is_valid(instance);
        let theirs: Vec<String> = oracle
            .iter_errors(instance)
            .map(|e| e.instance_path().as_str().to_owned())
            .collect();
        let expected = oracle.is_valid(instance);
        assert_eq!(expected, theirs.is_empty());
        if !ours.is_empty() {
            self.invalid += 1;
        }
        let problem = if verdict != ours.is_empty() {
            Some("is_valid disagrees with check".to_owned())
        } else if ours.is_empty() != expected {
            Some(format!(
                "verdict: ours valid={}, jsonschema valid={expected}",
                ours.is_empty()
            ))
        } else if let Some(v) = ours.iter().find(|v| !theirs.iter().any(|t| related(v.pointer(), t))) {
            Some(format!(
                "our `{}` ({}) is unrelated to jsonschema's",
                v.pointer(),
                v.code()
            ))
        } else {
            theirs
                .iter()
                .find(|t| !ours.iter().any(|v| related(v.pointer(), t)))
                .map(|t| format!("jsonschema's `{t}` is unrelated to ours"))
        };
        if let Some(problem) = problem {
            let ours: Vec<String> = ours.iter().map(ToString::to_string).collect();
            self.mismatches.push(format!(
                "{label}: {problem}\n  instance: {instance}\n  ours: {ours:?}\n  jsonschema: {theirs:?}"
            ));
        }
    }

    fn assert_clean(&self, what: &str) {
        println!("{what}: {} instances, {} invalid", self.instances, self.invalid);
        assert!(
            self.mismatches.is_empty(),
            "{} mismatches of {} instances:\n{}",
            self.mismatches.len(),
            self.instances,
            self.mismatches.join("\n")
        );
    }
}

/// Every pointer in `value`, with its value.
fn pointers(value: &Value, at: String, out: &mut Vec<(String, Value)>) {
    out.push((at.clone(), value.clone()));
    match value {
        Value::Object(map) => {
            for (key, member) in map {
                let token = key.replace('~', "~0").replace('/', "~1");
                pointers(member, format!("{at}/{token}"), out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                pointers(item, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn replaced(root: &Value, at: &str, new: Value) -> Value {
    let mut root = root.clone();
    *root.pointer_mut(at).unwrap() = new;
    root
}

/// Mutations of a (valid) instance: members dropped and added, types changed, integers out of
/// range or fractional, strings emptied, arrays emptied or given a duplicate.
fn mutations(valid: &Value) -> Vec<Value> {
    let mut all = Vec::new();
    pointers(valid, String::new(), &mut all);
    let mut out = Vec::new();
    for (at, value) in all {
        match &value {
            Value::Object(map) => {
                for key in map.keys() {
                    let mut smaller = map.clone();
                    smaller.remove(key);
                    out.push(replaced(valid, &at, Value::Object(smaller)));
                }
                let mut bigger = map.clone();
                bigger.insert("zz_unknown".to_owned(), json!(1));
                out.push(replaced(valid, &at, Value::Object(bigger)));
                out.push(replaced(valid, &at, json!([])));
            }
            Value::Array(items) => {
                out.push(replaced(valid, &at, json!([])));
                if let Some(first) = items.first() {
                    let mut doubled = items.clone();
                    doubled.push(first.clone());
                    out.push(replaced(valid, &at, Value::Array(doubled)));
                }
                out.push(replaced(valid, &at, json!({})));
            }
            Value::Number(_) => {
                for n in [
                    json!(256),
                    json!(-1),
                    json!(-129),
                    json!(65536),
                    json!(4294967296u64),
                    json!(1.5),
                    json!(2.0),
                    json!(-9223372036854775808i64),
                    json!(18446744073709551615u64),
                ] {
                    out.push(replaced(valid, &at, n));
                }
                out.push(replaced(valid, &at, json!("7")));
            }
            Value::String(_) => {
                out.push(replaced(valid, &at, json!("")));
                out.push(replaced(valid, &at, json!("x".repeat(65))));
                out.push(replaced(valid, &at, json!(7)));
            }
            Value::Bool(_) => out.push(replaced(valid, &at, json!("true"))),
            Value::Null => out.push(replaced(valid, &at, json!(0))),
        }
        if !at.is_empty() {
            out.push(replaced(valid, &at, Value::Null));
        }
    }
    out
}

fn differential<T: JsonSchema>(name: &str, valid: Vec<Value>, invalid: Vec<Value>, tally: &mut Tally) {
    for inline in [false, true] {
        let schema = schema_for::<T>(inline);
        let shape = ShapeSchema::new(schema.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let oracle = jsonschema::validator_for(&with_format_ranges(&schema)).unwrap();
        let label = format!("{name} (inline={inline})");
        for instance in &valid {
            assert!(
                shape.check(instance).is_empty(),
                "{label}: {instance}: {:?}",
                shape.check(instance)
            );
            tally.compare(&label, &shape, &oracle, instance);
            for mutated in mutations(instance) {
                tally.compare(&label, &shape, &oracle, &mutated);
            }
        }
        for instance in &invalid {
            assert!(!shape.is_valid(instance), "{label}: {instance} should be invalid");
            tally.compare(&label, &shape, &oracle, instance);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Tests.

#[test]
fn schemars_schemas_compile_and_accept_valid_programs() {
    for inline in [false, true] {
        let workflow = shape_for::<Workflow>(inline);
        for program in workflow_valid() {
            assert_eq!(workflow.check(&program), [], "{program}");
            // Schema-first, then serde: what passes the shape deserializes.
            serde_json::from_value::<Workflow>(program).unwrap();
        }
        let tree = shape_for::<Tree>(inline);
        for program in tree_valid() {
            assert_eq!(tree.check(&program), [], "{program}");
            serde_json::from_value::<Tree>(program).unwrap();
        }
        // JSON Schema's integer includes 2.0 (serde's u64 does not: deserialization reports it).
        let program = json!({"name": "x", "steps": [{"kind": "wait", "ms": 2.0}], "timeout_ms": 0, "mode": "fast"});
        assert_eq!(workflow.check(&program), []);
        let pipeline = shape_for::<Pipeline>(inline);
        for program in pipeline_valid() {
            assert_eq!(pipeline.check(&program), [], "{program}");
        }
    }
}

#[test]
fn five_independent_faults_give_five_violations() {
    let program = json!({
        "steps": [{"kind": "call", "tool": 5}, {"kind": "wait", "ms": 10}],
        "retries": 300,
        "timeout_ms": 10,
        "mode": "fast",
        "tags": ["a", "a"],
        "colour": "red"
    });
    for inline in [false, true] {
        let violations = shape_for::<Workflow>(inline).check(&program);
        let found: Vec<(&str, &str, ShapeKeyword, Option<&str>, &str)> = violations
            .iter()
            .map(|v| (v.pointer(), v.code(), v.keyword(), v.member(), v.message()))
            .collect();
        assert_eq!(
            found,
            [
                (
                    "",
                    "missing_member",
                    ShapeKeyword::Required,
                    Some("name"),
                    "missing required member `name`"
                ),
                (
                    "/colour",
                    "unknown_member",
                    ShapeKeyword::AdditionalProperties,
                    Some("colour"),
                    "unknown member `colour`"
                ),
                (
                    "/retries",
                    "out_of_range",
                    ShapeKeyword::Maximum,
                    None,
                    "`retries` must be at most 255, got 300"
                ),
                (
                    "/steps/0/tool",
                    "wrong_type",
                    ShapeKeyword::Type,
                    None,
                    "expected a string for `tool`, got an integer"
                ),
                (
                    "/tags",
                    "not_unique",
                    ShapeKeyword::UniqueItems,
                    None,
                    "`tags` must have unique items, but items 0 and 1 are equal"
                ),
            ],
            "inline={inline}"
        );
    }
}

#[test]
fn variants_are_explained_by_their_tag_or_type() {
    let base = |step: Value, mode: Value| json!({"name": "x", "steps": [step], "timeout_ms": 1, "mode": mode});
    let cases = [
        // Internally tagged, tag known: the variant's own faults.
        (
            base(json!({"kind": "wait"}), json!("fast")),
            vec![("/steps/0", "missing_member", Some("ms"))],
        ),
        (
            base(
                json!({"kind": "repeat", "times": 300, "body": [{"kind": "call"}]}),
                json!("fast"),
            ),
            vec![
                ("/steps/0/body/0", "missing_member", Some("tool")),
                ("/steps/0/times", "out_of_range", None),
            ],
        ),
        // Newtype variant (`$ref` beside the tag).
        (
            base(json!({"kind": "branch", "then": []}), json!("fast")),
            vec![("/steps/0", "missing_member", Some("cond"))],
        ),
        // Unknown or missing tag: at the tag.
        (
            base(json!({"kind": "jump"}), json!("fast")),
            vec![("/steps/0/kind", "no_variant", Some("kind"))],
        ),
        (
            base(json!({"ms": 3}), json!("fast")),
            vec![("/steps/0", "missing_member", Some("kind"))],
        ),
        // Not even an object: no variant takes a string.
        (
            base(json!("stop"), json!("fast")),
            vec![("/steps/0", "wrong_type", None)],
        ),
        // Externally tagged: by the member, or by type.
        (
            base(json!({"kind": "stop"}), json!({"slow": -1})),
            vec![("/mode/slow", "out_of_range", None)],
        ),
        (
            base(json!({"kind": "stop"}), json!("medium")),
            vec![("/mode", "not_allowed", None)],
        ),
        (
            base(json!({"kind": "stop"}), json!({"slow": 1, "custom": {"level": 1}})),
            vec![("/mode", "no_variant", None)],
        ),
    ];
    for inline in [false, true] {
        let shape = shape_for::<Workflow>(inline);
        for (program, expected) in &cases {
            let violations = shape.check(program);
            let found: Vec<(&str, &str, Option<&str>)> =
                violations.iter().map(|v| (v.pointer(), v.code(), v.member())).collect();
            assert_eq!(&found, expected, "inline={inline} {program}: {violations:?}");
        }
    }
    let shape = shape_for::<Workflow>(false);
    let messages =
        |program: Value| -> Vec<String> { shape.check(&program).iter().map(|v| v.message().to_owned()).collect() };
    assert_eq!(
        messages(base(json!({"kind": "jump"}), json!("fast"))),
        [r#"`kind` must be one of "call", "wait", "branch", "repeat" or "stop", got "jump": no variant has this tag"#]
    );
    assert_eq!(
        messages(
            json!({"name": "x", "steps": [{"kind": "stop"}], "timeout_ms": 1, "mode": "fast", "on_error": "page"})
        ),
        ["expected an object or null for `on_error`, got a string"]
    );
    assert_eq!(
        messages(base(
            json!({"kind": "call", "tool": "t", "timeout_s": "5"}),
            json!("fast")
        )),
        ["expected an integer or null for `timeout_s`, got a string"]
    );
    assert_eq!(
        messages(json!({"name": "x", "steps": [], "timeout_ms": 1, "mode": "fast"})),
        ["`steps` must have at least 1 item, got 0"]
    );
}

#[test]
fn flattened_enums_deny_unevaluated_members() {
    for inline in [false, true] {
        let shape = shape_for::<Pipeline>(inline);
        let violations =
            shape.check(&json!({"id": 7, "stage": {"t": "Done"}, "range": [1, 2], "path": "p", "pth": "q"}));
        let found: Vec<(&str, &str, ShapeKeyword, Option<&str>)> = violations
            .iter()
            .map(|v| (v.pointer(), v.code(), v.keyword(), v.member()))
            .collect();
        assert_eq!(
            found,
            [(
                "/pth",
                "unknown_member",
                ShapeKeyword::UnevaluatedProperties,
                Some("pth")
            )]
        );
        let violations = shape
            .check(&json!({"id": 7, "stage": {"t": "Filter", "c": {"min": "low"}}, "range": [1, 2, 3], "path": "p"}));
        let found: Vec<(&str, &str)> = violations.iter().map(|v| (v.pointer(), v.code())).collect();
        assert_eq!(found, [("/range", "wrong_length"), ("/stage/c/min", "wrong_type")]);
        // Untagged: the variant whose required members are present.
        let violations = shape.check(&json!({"id": 7, "stage": {"t": "Done"}, "range": [1, 2], "data": [1.5]}));
        let found: Vec<(&str, &str)> = violations.iter().map(|v| (v.pointer(), v.code())).collect();
        assert_eq!(found, [("/data/0", "wrong_type")]);
        let violations = shape.check(&json!({"id": 7, "stage": {"t": "Done"}, "range": [1, 2]}));
        let found: Vec<(&str, &str)> = violations.iter().map(|v| (v.pointer(), v.code())).collect();
        assert_eq!(found, [("", "no_variant")]);
    }
}

#[test]
fn differential_against_jsonschema_on_program_types() {
    let mut tally = Tally::default();
    differential::<Workflow>("Workflow", workflow_valid(), workflow_invalid(), &mut tally);
    differential::<Tree>("Tree", tree_valid(), tree_invalid(), &mut tally);
    differential::<Pipeline>("Pipeline", pipeline_valid(), pipeline_invalid(), &mut tally);
    assert!(
        tally.instances > 1000 && tally.invalid > 800,
        "{} / {}",
        tally.instances,
        tally.invalid
    );
    tally.assert_clean("program types");
}

#[test]
fn differential_against_jsonschema_on_every_supported_keyword() {
    let cases: Vec<(Value, Vec<Value>)> = vec![
        (
            json!({"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": false,
                   "contains": {"type": "string"}, "minContains": 1, "maxContains": 2}),
            vec![
                json!([1, "a"]),
                json!([1, "a", "b"]),
                json!([1]),
                json!(["a", "b"]),
                json!([]),
                json!([1.0, "x"]),
                json!([2.5, "x"]),
                json!(["a", "b", "c"]),
            ],
        ),
        (
            json!({"contains": {"const": 2}}),
            vec![json!([1, 2]), json!([1]), json!([]), json!([2.0]), json!("x")],
        ),
        (
            json!({"type": "object", "propertyNames": {"maxLength": 3}, "minProperties": 1, "maxProperties": 2,
                   "additionalProperties": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 10, "multipleOf": 0.5}}),
            vec![
                json!({}),
                json!({"a": 1}),
                json!({"abcd": 1}),
                json!({"a": 0}),
                json!({"a": 10}),
                json!({"a": 0.25}),
                json!({"a": 1, "b": 2, "c": 3}),
                json!({"a": "x"}),
                json!({"a": 9.5, "b": 0.5}),
            ],
        ),
        (
            json!({"if": {"properties": {"kind": {"const": "a"}}, "required": ["kind"]},
                   "then": {"required": ["x"]}, "else": {"required": ["y"]}}),
            vec![
                json!({"kind": "a", "x": 1}),
                json!({"kind": "a"}),
                json!({"kind": "b", "y": 1}),
                json!({"kind": "b"}),
                json!({}),
                json!(5),
            ],
        ),
        (
            json!({"not": {"type": "string"}, "enum": [1, "a", null, [1, 2], {"k": 1}]}),
            vec![
                json!(1),
                json!(1.0),
                json!("a"),
                json!(null),
                json!([1, 2]),
                json!([1.0, 2]),
                json!({"k": 1.0}),
                json!(3),
                json!({"k": 1, "j": 1}),
            ],
        ),
        (
            json!({"allOf": [{"minimum": 1}, {"maximum": 5}], "oneOf": [{"type": "integer"}, {"multipleOf": 0.5}]}),
            vec![
                json!(1.5),
                json!(2),
                json!(1.25),
                json!(0),
                json!(6),
                json!(3.0),
                json!("x"),
            ],
        ),
        (
            json!({"type": "string", "minLength": 2, "maxLength": 3}),
            vec![
                json!("a"),
                json!("ab"),
                json!("abcd"),
                json!("éé"),
                json!("😀😀"),
                json!("😀😀😀😀"),
                json!(""),
                json!(5),
            ],
        ),
        (
            json!({"properties": {"a": {}}, "allOf": [{"properties": {"b": {}}}],
                   "anyOf": [{"properties": {"c": {"type": "string"}}, "required": ["c"]}, {"properties": {"d": {}}, "required": ["d"]}],
                   "unevaluatedProperties": {"type": "integer"}}),
            vec![
                json!({"a": 1, "b": 1, "c": "x"}),
                json!({"c": "x", "e": 1}),
                json!({"c": "x", "e": "no"}),
                json!({"d": 1, "c": 2}),
                json!({"c": 2}),
                json!({"c": 2, "e": "no"}),
                json!({"d": 0, "x": 1.0}),
            ],
        ),
        (
            json!({"if": {"properties": {"a": {"type": "integer"}}}, "then": {"properties": {"b": {}}}, "else": {"properties": {"c": {}}},
                   "unevaluatedProperties": false}),
            vec![
                json!({"a": 1, "b": 2}),
                json!({"a": 1, "c": 2}),
                json!({"a": "x", "c": 2}),
                json!({"a": "x", "b": 2}),
                json!({}),
            ],
        ),
        (json!(true), vec![json!(1), json!({"a": [null]})]),
        (json!(false), vec![json!(1), json!(null)]),
        (
            json!({"properties": {"a": false, "b": true}}),
            vec![json!({"a": 1}), json!({"b": 1}), json!({}), json!([1])],
        ),
        (
            json!({"uniqueItems": true}),
            vec![
                json!([1, 1.0]),
                json!([1, 2]),
                json!([{"a": 1}, {"a": 1.0}]),
                json!([[1], [1]]),
                json!(["1", 1]),
                json!([{"a": 1, "b": 2}, {"b": 2, "a": 1}]),
                json!([]),
            ],
        ),
        (
            json!({"type": ["integer", "null"], "minimum": 0, "maximum": 18446744073709551615u64}),
            vec![
                json!(null),
                json!(0),
                json!(-1),
                json!(1.0),
                json!(1.5),
                json!("x"),
                json!(18446744073709551615u64),
                json!(1.8446744073709552e19),
                json!(2e19),
            ],
        ),
        (
            json!({"$ref": "#/$defs/list", "$defs": {"list": {"type": "object", "required": ["v"],
                   "properties": {"next": {"anyOf": [{"$ref": "#/$defs/list"}, {"type": "null"}]}, "v": {"const": 1}}}}}),
            vec![
                json!({"v": 1}),
                json!({"v": 1, "next": {"v": 1, "next": null}}),
                json!({"v": 1, "next": {"v": 2}}),
                json!({"v": 1, "next": {"v": 1, "next": {"next": 5}}}),
                json!({"v": 1.0, "next": []}),
            ],
        ),
        (
            json!({"$defs": {"a b": {"type": "integer"}, "x~y/z": {"type": "string"}},
                   "properties": {"p": {"$ref": "#/$defs/a%20b"}, "q": {"$ref": "#/$defs/x~0y~1z"}}}),
            vec![json!({"p": 1, "q": "s"}), json!({"p": "x", "q": 1}), json!({"p": 2.0})],
        ),
        (
            json!({"items": {"$ref": "#"}, "maxItems": 2}),
            vec![json!([[], [[]]]), json!([[], [[], [], []]]), json!([1, 2, 3])],
        ),
        (
            json!({"type": "object", "properties": {"n": {"type": "number", "multipleOf": 0.01}, "i": {"type": "integer", "multipleOf": 3}}}),
            vec![
                json!({"n": 0.07, "i": 9}),
                json!({"n": 0.075, "i": 10}),
                json!({"n": 1e-3}),
                json!({"i": 3.0}),
                json!({"i": -6}),
            ],
        ),
        (
            json!({"anyOf": [{"type": "string", "maxLength": 1}, {"type": "integer", "minimum": 5}, {"type": "boolean"}]}),
            vec![
                json!("a"),
                json!("ab"),
                json!(5),
                json!(4),
                json!(true),
                json!(null),
                json!([]),
            ],
        ),
    ];
    let mut tally = Tally::default();
    for (i, (schema, instances)) in cases.into_iter().enumerate() {
        let shape = ShapeSchema::new(schema.clone()).unwrap_or_else(|e| panic!("case {i}: {e}"));
        let oracle = jsonschema::validator_for(&schema).unwrap();
        for instance in &instances {
            tally.compare(&format!("case {i} {schema}"), &shape, &oracle, instance);
            for mutated in mutations(instance) {
                tally.compare(&format!("case {i} {schema}"), &shape, &oracle, &mutated);
            }
        }
    }
    tally.assert_clean("keywords");
}

#[test]
fn integer_formats_assert_their_range() {
    // schemars writes no `maximum` for u32: jsonschema accepts 2^32, the shape checker does not.
    let schema = schema_for::<Workflow>(false);
    let program = json!({"name": "x", "steps": [{"kind": "stop"}], "timeout_ms": 4294967296u64, "mode": "fast"});
    assert!(jsonschema::validator_for(&schema).unwrap().is_valid(&program));
    let violations = ShapeSchema::new(schema).unwrap().check(&program);
    assert_eq!(violations.len(), 1);
    assert_eq!(
        (violations[0].pointer(), violations[0].keyword(), violations[0].code()),
        ("/timeout_ms", ShapeKeyword::Format, "out_of_range")
    );
    assert_eq!(
        violations[0].message(),
        "`timeout_ms` must fit in uint32 (0 to 4294967295), got 4294967296"
    );
    assert_eq!(violations[0].schema_pointer(), "/properties/timeout_ms/format");
    assert!(serde_json::from_value::<Workflow>(program).is_err());
}

#[test]
fn violations_become_diagnostics() {
    let shape = shape_for::<Tree>(true);
    let program = json!({"label": "a", "children": [{"label": "b", "children": [], "why": 1}]});
    let violations: Vec<ShapeViolation> = shape.check(&program);
    let diagnostics = shape.check_diagnostics(&program);
    assert_eq!(diagnostics.len(), 1);
    assert_eq!(violations[0].to_diagnostic(), diagnostics[0]);
    assert_eq!(
        serde_json::to_value(&diagnostics[0]).unwrap(),
        json!({"severity": "error", "code": "unknown_member", "path": "/children/0/why", "message": "unknown member `why` in item 0 of `children`"})
    );
    assert_eq!(
        violations[0].to_string(),
        "unknown_member at `/children/0/why`: unknown member `why` in item 0 of `children`"
    );
}

#[test]
fn deep_instances_are_bounded() {
    fn nest(levels: usize) -> Value {
        let mut tree = json!({"label": "leaf", "children": []});
        for _ in 0..levels {
            tree = json!({"label": "n", "children": [tree]});
        }
        tree
    }
    for inline in [false, true] {
        let shape = shape_for::<Tree>(inline);
        // 2 pointer tokens a level: 120 levels are 240 deep.
        assert!(shape.is_valid(&nest(120)));
        let deep = nest(200);
        let violations = shape.check(&deep);
        assert!(!shape.is_valid(&deep));
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert_eq!(
            (violations[0].code(), violations[0].keyword()),
            ("too_deep", ShapeKeyword::Depth)
        );
        assert_eq!(violations[0].pointer().split('/').count() - 1, 256);
        assert_eq!(
            violations[0].message(),
            "item 0 of `children` is nested too deep (its members or items would be deeper than 256 levels)"
        );
    }
}

#[test]
fn keywords_it_cannot_judge_are_refused_with_their_pointer() {
    let refused = |schema: Value| -> ShapeError { ShapeSchema::new(schema).unwrap_err() };
    let e = refused(json!({"type": "object", "properties": {"a": {"type": "string", "frobnicate": 1}}}));
    assert_eq!(e.pointer(), "/properties/a/frobnicate");
    assert!(e.reason().contains("unknown keyword"), "{e}");
    assert_eq!(e.to_string(), "cannot check against the schema at `/properties/a/frobnicate`: `frobnicate`: unknown keyword: the shape checker cannot judge it");

    // A real schemars schema with a `pattern`: pilotage-types cannot compile one at run time.
    for inline in [false, true] {
        let e = refused(schema_for::<Coded>(inline));
        assert_eq!(e.pointer(), "/properties/code/pattern");
    }
    let e = refused(json!({"$defs": {"X": {"patternProperties": {"^a": {}}}}, "items": {"$ref": "#/$defs/X"}}));
    assert_eq!(e.pointer(), "/$defs/X/patternProperties");

    for (schema, pointer) in [
        (
            json!({"properties": {"a": {"$ref": "other.json#/a"}}}),
            "/properties/a/$ref",
        ),
        (
            json!({"properties": {"a": {"$ref": "#/$defs/missing"}}}),
            "/properties/a/$ref",
        ),
        (
            json!({"$schema": "http://json-schema.org/draft-07/schema#"}),
            "/$schema",
        ),
        (json!({"items": [{"type": "string"}]}), "/items"),
        (json!({"anyOf": [{"x-extension": true}]}), "/anyOf/0/x-extension"),
        (json!({"dependentRequired": {"a": ["b"]}}), "/dependentRequired"),
        (json!({"properties": {"a": {"$id": "a.json"}}}), "/properties/a/$id"),
        (json!({"minLength": -1}), "/minLength"),
        (json!({"type": "integr"}), "/type"),
        (json!({"properties": {"a": 5}}), "/properties/a"),
        (
            json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"anyOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}),
            "/$defs/a",
        ),
    ] {
        assert_eq!(refused(schema.clone()).pointer(), pointer, "{schema}");
    }

    // Annotations pass; unused definitions are never read.
    let shape = ShapeSchema::new(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "urn:x", "title": "t",
        "description": "d", "default": 1, "examples": [1], "deprecated": false, "readOnly": true,
        "writeOnly": false, "$comment": "c", "nullable": true, "format": "date-time",
        "contentEncoding": "base64", "contentMediaType": "text/plain",
        "$defs": {"unused": {"frobnicate": 1}}
    }))
    .unwrap();
    assert!(shape.is_valid(&json!("not a date")));
}

#[test]
fn shape_schema_is_shareable() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<ShapeSchema>();
    assert_send_sync::<ShapeViolation>();
    assert_send_sync::<ShapeError>();
}
