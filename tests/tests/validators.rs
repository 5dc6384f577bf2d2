//! The validators: every generated type validates against its own definition of the original
//! schema; `parse` and `validate` agree on every instance (nothing accepted by one and
//! rejected by the other); violations list every problem with both pointers.

use pilotage_tests::corpus;
use pilotage_types::*;
use serde_json::{json, Value};

/// JSON equality where numbers compare by value (`5.0` equals `5`): integer members read an
/// integral float and write it back as an integer.
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_json(a, b)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

/// Checks, for `T`, that parse succeeds exactly when validate passes; returns (accepted, rejected).
fn agreement<T: SchemaDef + serde::de::DeserializeOwned + serde::Serialize>(values: &[Value]) -> (usize, usize) {
    let mut counts = (0, 0);
    for value in values {
        let validated = T::validate(value);
        assert_eq!(
            validated.is_ok(),
            T::is_valid(value),
            "{}: validate and is_valid disagree on {value}",
            T::DEF
        );
        match (parse::<T>(value), validated) {
            (Ok(typed), Ok(())) => {
                let back = serde_json::to_value(typed).unwrap();
                assert!(
                    same_json(&back, value),
                    "{}: accepted value does not round-trip: {value} became {back}",
                    T::DEF
                );
                counts.0 += 1;
            }
            (Err(ParseError::Invalid(_)), Err(_)) => counts.1 += 1,
            (Err(error), Ok(())) => panic!("{}: the schema accepts {value} but parse fails: {error}", T::DEF),
            (Ok(_), Err(errors)) => panic!("{}: parse accepted an invalid value {value}: {errors}", T::DEF),
            (Err(error), Err(_)) => panic!("{}: an invalid value must fail as Invalid, not {error:?}", T::DEF),
        }
    }
    counts
}

macro_rules! every_def {
    ($values:expr, $($ty:ident),* $(,)?) => {{
        let mut seen = Vec::new();
        $(
            let (accepted, rejected) = agreement::<$ty>($values);
            seen.push((<$ty as SchemaDef>::DEF, accepted, rejected));
        )*
        seen
    }};
}

#[test]
fn parse_and_validate_agree_for_every_definition() {
    let values = corpus::nested_values();
    assert!(values.len() > 500, "corpus too small: {}", values.len());
    let seen = every_def!(
        &values,
        CapabilityDeclaration,
        CapabilitySettings,
        CapabilityValue,
        CatalogChangedResult,
        CatalogEntry,
        CatalogGetResult,
        CatalogListResult,
        CatalogToolOutput,
        Decision,
        Diagnostic,
        ExecuteRequest,
        ExecuteResponse,
        ExecuteToolOutput,
        GetGuideToolOutput,
        Guide,
        GuideFetchResult,
        GuideIndexResult,
        InitializeMetaValue,
        LanguageEntry,
        LanguageIdentifier,
        LoopObject,
        Manifest,
        ManifestToolOutput,
        Outcome,
        Plan,
        PlanStep,
        ProgramDeclaration,
        RequestError,
        Retention,
        RiskHints,
        TextPosition,
        TextRange,
        Trace,
        TraceFetchRequest,
        TraceFetchResponse,
        TraceStep,
        TraceToolOutput,
        ValidateResponse,
        ValidateToolOutput,
        VersionString,
    );
    let names: Vec<&str> = seen.iter().map(|(def, _, _)| *def).collect();
    assert_eq!(
        names, DEFS,
        "the test must cover every $defs entry: after a spec bump, add each new definition's type to the list above"
    );
    for (def, accepted, rejected) in seen {
        assert!(rejected > 0, "{def}: no invalid value in the corpus");
        // Request-only shapes have no seed of their own; every other definition has valid values.
        if !matches!(
            def,
            "ExecuteRequest" | "TraceFetchRequest" | "ProgramDeclaration" | "InitializeMetaValue"
        ) {
            assert!(
                accepted > 0,
                "{def}: no valid value in the corpus: after a spec bump, add a seed of the new shape to tests/src/corpus.rs"
            );
        }
    }
}

#[test]
fn violations_name_both_pointers_and_list_every_problem() {
    let value = json!({"pilotage": "one", "languages": [{"name": "no-slash", "title": 3, "guides": "pilotage_get_guide",
        "loop": {}, "locator": "json-pointer"}]});
    let errors = Manifest::validate(&value).unwrap_err();
    let found: Vec<(&str, &str)> = errors
        .violations
        .iter()
        .map(|v| (v.instance_pointer.as_str(), v.schema_pointer.as_str()))
        .collect();
    for expected in [
        ("/pilotage", "/$defs/VersionString/pattern"),
        ("/languages/0/name", "/$defs/LanguageIdentifier/pattern"),
        ("/languages/0/title", "/$defs/LanguageEntry/properties/title/type"),
        ("/languages/0/loop", "/$defs/LoopObject/required"),
    ] {
        assert!(found.contains(&expected), "missing {expected:?} in {found:?}");
    }
    assert!(errors.to_string().starts_with("not a valid Manifest: "));
}

#[test]
fn rules_the_types_cannot_carry_are_enforced_by_the_validators() {
    // Outcome: error is null iff ok (if/then/else, dropped from typify's copy).
    assert!(!Outcome::is_valid(
        &json!({"ok": true, "status": "success", "error": "x"})
    ));
    assert!(!Outcome::is_valid(
        &json!({"ok": false, "status": "failed", "error": null})
    ));
    // ExecuteResponse: diagnostics required when status is validation_error.
    assert!(!ExecuteResponse::is_valid(
        &json!({"run_id": "r", "outcome": {"ok": false, "status": "validation_error", "error": "e"}})
    ));
    // ExecuteRequest: exactly one of program and program_ref.
    assert!(!ExecuteRequest::is_valid(&json!({"program": {}, "program_ref": "p"})));
    assert!(!ExecuteRequest::is_valid(&json!({"input": {}})));
    assert!(ExecuteRequest::is_valid(&json!({"program": null})));
    // Manifest: every Language has a capability declaration (Part II 4.2).
    let entry = json!({"name": "a/b", "title": "t", "guides": "pilotage_get_guide", "loop": {"validate": "v"}, "locator": "json-pointer"});
    assert!(!Manifest::is_valid(&json!({"pilotage": "1.1", "languages": [entry]})));
    // InitializeMetaValue: manifest or manifest_uri.
    assert!(!InitializeMetaValue::is_valid(&json!({})));
    // Retention: the enum or an ISO 8601 duration.
    for bad in ["forever", "P", "PT", "P1H", ""] {
        assert!(!Retention::is_valid(&json!(bad)), "{bad}");
    }
    // Guide index entries never carry a body; fetched guides always do.
    let guide = json!({"id": "g", "title": "t", "level": "core", "topics": [], "language": "a/b", "version": "1", "size_bytes": 1});
    let mut with_body = guide.clone();
    with_body["body"] = json!("b");
    assert!(!GuideIndexResult::is_valid(&json!({"guides": [with_body]})));
    assert!(!GuideFetchResult::is_valid(&json!({"guide": guide})));
    assert!(parse::<GuideFetchResult>(&json!({"guide": with_body})).is_ok());
}

#[test]
fn parse_slice_reports_each_failure_kind() {
    assert!(matches!(parse_slice::<Outcome>(b"{"), Err(ParseError::Json(_))));
    assert!(matches!(
        parse_slice::<Outcome>(br#"{"ok": true}"#),
        Err(ParseError::Invalid(_))
    ));
    let outcome: Outcome = parse_slice(br#"{"ok": true, "status": "success", "error": null}"#).unwrap();
    assert!(outcome.ok);
}

#[test]
fn validators_are_shared_across_threads() {
    let handles: Vec<_> = (0..4)
        .map(|i| {
            std::thread::spawn(move || {
                Trace::is_valid(&json!({"run_id": format!("r{i}"), "level": "full", "steps": []}))
            })
        })
        .collect();
    assert!(handles.into_iter().all(|h| h.join().unwrap()));
}
