//! Adversarial input: property tests over arbitrary JSON (no panic, verdicts consistent) and
//! hostile documents (each answered with an error or a verdict within a stated bound, no
//! stack overflow). The bounds are generous ceilings for a debug build on 2 cores: they catch
//! hangs and blow-ups, not regressions (those are the benchmarks' job).

use std::time::{Duration, Instant};

use pilotage_tests::surface::{RunWorkflow, TraceRun, ValidateWorkflow};
use pilotage_types::*;
use proptest::prelude::*;
use serde_json::{json, Map, Value};

/// Member names that steer arbitrary objects into the shapes the schema knows.
const NAMES: &[&str] = &[
    "run_id",
    "outcome",
    "ok",
    "status",
    "error",
    "kind",
    "message",
    "trace",
    "steps",
    "id",
    "level",
    "output",
    "diagnostics",
    "valid",
    "severity",
    "code",
    "path",
    "guides",
    "guide",
    "title",
    "items",
    "catalog_version",
    "entry",
    "changes",
    "change",
    "pilotage",
    "languages",
    "workflow",
    "program_ref",
    "trace_level",
    "mode",
    "question",
    "test_run",
    "x",
];

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(|f| json!(f)),
        prop_oneof![
            Just("".to_owned()),
            Just("full".to_owned()),
            Just("not_found".to_owned()),
            "[a-z/]{0,8}"
        ]
        .prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(NAMES), inner), 0..6).prop_map(|members| Value::Object(
                members
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect::<Map<_, _>>()
            )),
        ]
    })
}

fn consistent<T: SchemaDef + serde::de::DeserializeOwned>(value: &Value) -> Result<(), TestCaseError> {
    let valid = T::validate(value).is_ok();
    prop_assert_eq!(valid, T::is_valid(value));
    match parse::<T>(value) {
        Ok(_) => prop_assert!(valid),
        Err(ParseError::Invalid(_)) => prop_assert!(!valid),
        Err(other) => return Err(TestCaseError::fail(format!("{}: {other} on {value}", T::DEF))),
    }
    Ok(())
}

fn routed<T: PilotageTool>(value: &Value) -> Result<(), TestCaseError> {
    let schema = &T::tool_definition().input_schema;
    let structural = !jsonschema::validator_for(schema).unwrap().is_valid(value);
    match T::from_arguments(value) {
        Err(ArgumentFault::Carrier { .. }) => {
            prop_assert!(structural, "carrier fault without a schema violation: {}", value)
        }
        _ => prop_assert!(!structural, "schema violation not routed to the carrier: {}", value),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn parse_succeeds_iff_validate_passes(value in arbitrary_json()) {
        consistent::<ManifestToolOutput>(&value)?;
        consistent::<GetGuideToolOutput>(&value)?;
        consistent::<CatalogToolOutput>(&value)?;
        consistent::<ValidateToolOutput>(&value)?;
        consistent::<ExecuteToolOutput>(&value)?;
        consistent::<TraceToolOutput>(&value)?;
        consistent::<Outcome>(&value)?;
        consistent::<Diagnostic>(&value)?;
    }

    #[test]
    fn from_arguments_never_panics_and_routes_schema_faults_to_the_carrier(value in arbitrary_json()) {
        routed::<ValidateWorkflow>(&value)?;
        routed::<RunWorkflow>(&value)?;
        routed::<TraceRun>(&value)?;
    }

    #[test]
    fn the_linter_never_panics(tools in arbitrary_json(), manifest in arbitrary_json(), initialize in arbitrary_json()) {
        let findings = pilotage_cli::lint::lint(pilotage_cli::lint::Surface {
            tools: &tools, manifest: &manifest, initialize: Some(&initialize), stateless: true,
        });
        // A manifest that is not even an object is always an error finding.
        if !manifest.is_object() {
            prop_assert!(pilotage_cli::lint::has_errors(&findings));
        }
    }
}

fn within<T>(bound: Duration, what: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    let took = start.elapsed();
    assert!(took < bound, "{what} took {took:?}, over its bound of {bound:?}");
    out
}

#[test]
fn nesting_100_000_deep_is_an_error_not_a_stack_overflow() {
    let text = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let result = within(Duration::from_secs(5), "deep nesting", || {
        parse_slice::<ExecuteToolOutput>(text.as_bytes())
    });
    assert!(matches!(result, Err(ParseError::Json(_))), "{result:?}");
    let objects = format!("{}1{}", "{\"a\":".repeat(100_000), "}".repeat(100_000));
    assert!(matches!(
        parse_slice::<Trace>(objects.as_bytes()),
        Err(ParseError::Json(_))
    ));
}

#[test]
fn a_50_mb_string_gets_a_verdict() {
    let body = "x".repeat(50 * 1024 * 1024);
    let guide = json!({"guide": {"id": "g", "title": "t", "level": "core", "topics": [], "language": "a/b",
        "version": "1", "size_bytes": body.len(), "body": body}});
    assert!(within(Duration::from_secs(30), "50 MB body", || {
        GetGuideToolOutput::is_valid(&guide)
    }));
    let mut wrong = guide.clone();
    wrong["guide"]["language"] = wrong["guide"]["body"].clone();
    let errors = within(Duration::from_secs(30), "50 MB wrong value", || {
        GetGuideToolOutput::validate(&wrong)
    })
    .unwrap_err();
    assert!(errors
        .violations
        .iter()
        .all(|v| v.message.len() <= pilotage_types::validate::MAX_MESSAGE_BYTES + 64));
}

#[test]
fn a_million_element_array_gets_a_verdict() {
    let steps = vec![json!({"id": "s", "outcome": {"ok": true, "status": "success", "error": null}}); 1_000_000];
    let trace = json!({"run_id": "r", "level": "summary", "steps": steps});
    assert!(within(Duration::from_secs(60), "1 000 000 steps", || Trace::is_valid(
        &trace
    )));
    let mut bad = vec![json!(1); 1_000_000];
    bad[999_999] = json!("x");
    let errors = within(Duration::from_secs(60), "1 000 000 wrong items", || {
        Trace::validate(&json!({"run_id": "r", "level": "full", "steps": bad}))
    })
    .unwrap_err();
    // About 150 bytes a violation: the list stops at its budget, and says so.
    let listed = errors.violations.len();
    assert!(
        errors.truncated && listed > 100_000 && listed < 1_000_000,
        "{listed} listed"
    );
    assert_eq!(errors.violations[0].instance_pointer, "/steps/0");
    assert_eq!(
        errors.violations[listed - 1].instance_pointer,
        format!("/steps/{}", listed - 1),
        "the first ones, in order"
    );
}

/// Violations whose pointers repeat a member name of 100 KB (2,000 wrong items under it: 200 MB
/// of pointers, from a 104 KB body) stop at the list's budget in the interpreter's list too
/// (the generated validators' runtime: `runtime.rs`, `a_full_list_of_violations_stops_the_search`);
/// the list says it is truncated. jsonschema builds its own errors in full first, so this
/// bounds what is returned, not what jsonschema allocates.
#[test]
fn violations_under_a_long_name_stay_within_the_budget() {
    let long = "k".repeat(100_000);
    let document = json!({"$defs": {"T": {"additionalProperties": {"items": {"type": "string"}}}}});
    let validators = pilotage_types::validate::SchemaValidators::new(document);
    let instance = json!({ long.clone(): vec![0; 2_000] });
    let errors = within(Duration::from_secs(30), "2,000 violations under a 100 KB name", || {
        validators.validate("T", &instance).unwrap()
    })
    .unwrap_err();
    let bytes: usize = errors
        .violations
        .iter()
        .map(|v| v.instance_pointer.len() + v.schema_pointer.len() + v.message.len())
        .sum();
    assert!(errors.truncated, "{} listed", errors.violations.len());
    assert!(
        bytes <= pilotage_types::validate::MAX_VIOLATIONS_BYTES,
        "{bytes} bytes listed"
    );
    assert!(errors.violations[0].instance_pointer.starts_with(&format!("/{long}/")));
}

#[test]
fn a_retention_of_100_000_digits_gets_a_verdict() {
    for text in [
        format!("P{}", "9".repeat(100_000)),
        format!("PT{}", "9".repeat(100_000)),
        format!("P{}D", "9".repeat(100_000)),
    ] {
        let verdict = within(Duration::from_secs(10), "100 000-digit retention", || {
            Retention::is_valid(&json!(text))
        });
        assert_eq!(verdict, text.ends_with('D'), "{}", &text[..4]);
    }
}

#[test]
fn duplicate_keys_invalid_utf8_and_nan_lexemes() {
    // Duplicate keys: serde_json keeps the last; the verdict is on that value.
    let duplicate = br#"{"ok": true, "status": "s", "error": "x", "error": null}"#;
    assert!(parse_slice::<Outcome>(duplicate).is_ok());
    let bytes: &[u8] = b"{\"run_id\": \"\xff\xfe\", \"level\": \"full\", \"steps\": []}";
    assert!(matches!(parse_slice::<Trace>(bytes), Err(ParseError::Json(_))));
    for lexeme in ["NaN", "Infinity", "-Infinity", "nan"] {
        let text = format!(r#"{{"ok": true, "status": {lexeme}, "error": null}}"#);
        assert!(
            matches!(parse_slice::<Outcome>(text.as_bytes()), Err(ParseError::Json(_))),
            "{lexeme}"
        );
    }
}

#[test]
fn hostile_files_through_the_command_lines_get_their_exact_exit_status() {
    let dir = std::env::temp_dir().join(format!("pilotage-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // (file, its bytes, `validate Retention` exit, `lint --tools F --manifest F` exit): 2 for
    // a file that is not usable JSON, 1 for JSON that is invalid / a surface with errors.
    let cases: Vec<(&str, Vec<u8>, u8, u8)> = vec![
        (
            "deep.json",
            format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)).into_bytes(),
            2,
            2,
        ),
        ("utf8.json", b"{\"a\": \"\xff\"}".to_vec(), 2, 2),
        ("nan.json", b"NaN".to_vec(), 2, 2),
        ("empty.json", Vec::new(), 2, 2),
        // JSON, but a duration with no designator and no tools list.
        ("long.json", format!("\"P{}\"", "9".repeat(100_000)).into_bytes(), 1, 2),
    ];
    for (name, bytes, validate_status, lint_status) in cases {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        let path = path.display().to_string();
        let run = |command: &[&str]| {
            let (mut out, mut err) = (Vec::new(), Vec::new());
            let status = pilotage_cli::cli::run(["pilotage"].iter().chain(command), &mut out, &mut err);
            (
                status,
                String::from_utf8_lossy(&out).into_owned() + &String::from_utf8_lossy(&err),
            )
        };
        let (status, output) = run(&["validate", "Retention", &path]);
        assert_eq!(status, validate_status, "{name}: validate exit {status}: {output}");
        let (status, output) = run(&["lint", "--tools", &path, "--manifest", &path]);
        assert_eq!(status, lint_status, "{name}: lint exit {status}: {output}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
