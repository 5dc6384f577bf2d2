//! Lossless typed round trips: for instances the schema accepts, `from_value::<T>` then
//! `to_value` gives back an equal value. Covers the Part III wire examples (9.1, 9.3, 9.4,
//! 9.5) and the cases typify's defaults lose: explicit `null` in optional members, present
//! empty arrays and objects, unknown members at every depth.

use pilotage_tests::part_iii::vendored_blocks;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use pilotage_types::*;

/// Deserializes `value` as `T`, serializes it back, and asserts equality.
fn assert_round_trip<T: DeserializeOwned + Serialize>(value: &Value) -> T {
    let typed: T = serde_json::from_value(value.clone())
        .unwrap_or_else(|e| panic!("{} rejects {value}: {e}", std::any::type_name::<T>()));
    let back = serde_json::to_value(&typed).expect("typed values serialise");
    assert_eq!(&back, value, "{} does not round-trip", std::any::type_name::<T>());
    typed
}

/// The JSON-RPC message of section `section` whose `result` carries the content we want.
fn response_of(section: &str) -> Value {
    vendored_blocks()
        .into_iter()
        .filter(|b| b.section == section)
        .filter_map(|b| b.json.ok())
        .find(|v| v.get("result").is_some())
        .unwrap_or_else(|| panic!("Part III {section} has a response block"))
}

#[test]
fn manifest_of_9_1_round_trips() {
    let response = response_of("9.1");
    let manifest = &response["result"]["_meta"]["io.github.jafarsa0/pilotage"]["manifest"];
    let typed: Manifest = assert_round_trip(manifest);
    assert_eq!(typed.languages[0].name.as_str(), "workflow/v1");
    assert_round_trip::<ManifestToolOutput>(manifest);
    assert_round_trip::<InitializeMetaValue>(&response["result"]["_meta"]["io.github.jafarsa0/pilotage"]);
}

#[test]
fn structured_content_of_9_3_to_9_5_round_trips() {
    let validate = response_of("9.3")["result"]["structuredContent"].clone();
    assert!(matches!(
        assert_round_trip::<ValidateToolOutput>(&validate),
        ValidateToolOutput::ValidateResponse(_)
    ));
    assert_round_trip::<ValidateResponse>(&validate);

    let execute = response_of("9.4")["result"]["structuredContent"].clone();
    assert!(matches!(
        assert_round_trip::<ExecuteToolOutput>(&execute),
        ExecuteToolOutput::ExecuteResponse(_)
    ));
    assert_round_trip::<ExecuteResponse>(&execute);

    let error = response_of("9.5")["result"]["structuredContent"].clone();
    assert!(matches!(
        assert_round_trip::<TraceToolOutput>(&error),
        TraceToolOutput::RequestError(_)
    ));
    let typed: RequestError = assert_round_trip(&error);
    assert_eq!(typed.error.kind, RequestErrorKind::NotFound);
}

#[test]
fn explicit_null_in_optional_members_survives() {
    let step =
        json!({"id": "s", "outcome": {"ok": true, "status": "success", "error": null}, "output": null, "input": null});
    let typed: TraceStep = assert_round_trip(&step);
    assert_eq!(typed.output, Some(Value::Null));
    let absent: TraceStep =
        assert_round_trip(&json!({"id": "s", "outcome": {"ok": false, "status": "failed", "error": "x"}}));
    assert_eq!(absent.output, None);

    let entry = json!({"id": "c", "kind": "capability", "name": "n", "risk": "safe",
        "risk_hints": {"readOnly": true, "destructive": false, "openWorld": false}, "output_schema": null});
    let typed: CatalogEntry = assert_round_trip(&entry);
    assert_eq!(typed.output_schema, Some(None));
    let mut with_schema = entry.clone();
    with_schema["output_schema"] = json!({"type": "object"});
    assert!(matches!(
        assert_round_trip::<CatalogEntry>(&with_schema).output_schema,
        Some(Some(_))
    ));

    assert_round_trip::<ExecuteResponse>(
        &json!({"run_id": "r", "outcome": {"ok": true, "status": "success", "error": null}, "output": null}),
    );
    assert_round_trip::<TraceFetchResponse>(
        &json!({"run_id": "r", "outcome": {"ok": true, "status": "s", "error": null},
        "trace": {"run_id": "r", "level": "summary", "steps": []}, "output": null}),
    );
}

#[test]
fn present_empty_arrays_and_objects_survive() {
    let step = json!({"id": "s", "outcome": {"ok": true, "status": "success", "error": null}, "decisions": []});
    let typed: TraceStep = assert_round_trip(&step);
    assert_eq!(typed.decisions, Some(vec![]));
    assert_round_trip::<Trace>(&json!({"run_id": "r", "level": "full", "steps": [], "stats": {}}));
    assert_round_trip::<CatalogEntry>(&json!({"id": "c", "kind": "k", "name": "n", "risk": "r",
        "risk_hints": {"readOnly": true, "destructive": false, "openWorld": false},
        "input_schema": {}, "tags": [], "languages": []}));
    assert_round_trip::<ValidateResponse>(&json!({"valid": true, "diagnostics": [], "references": []}));
    assert_round_trip::<ExecuteResponse>(
        &json!({"run_id": "r", "outcome": {"ok": false, "status": "validation_error", "error": "bad"}, "diagnostics": []}),
    );
    assert_round_trip::<Guide>(
        &json!({"id": "g", "title": "t", "level": "core", "topics": [], "language": "a/b", "version": "1", "size_bytes": 0}),
    );
    assert_round_trip::<LanguageEntry>(&json!({"name": "a/b", "title": "t", "guides": "pilotage_get_guide",
        "loop": {"validate": "v"}, "locator": "text-range", "context_schema": {}, "capabilities": {}}));
}

#[test]
fn unknown_members_are_kept_at_every_depth() {
    let manifest = json!({
        "pilotage": "1.1",
        "x-top": {"anything": [1, 2]},
        "capabilities": {"validate": {"narrate": true, "x-sub": 1}, "x-cap": true},
        "languages": [{
            "name": "workflow/v1", "title": "W", "guides": "pilotage_get_guide", "locator": "json-pointer",
            "loop": {"validate": "v", "x-loop": "?"}, "x-lang": null
        }]
    });
    assert_round_trip::<Manifest>(&manifest);
    let error =
        json!({"error": {"kind": "internal", "message": "m", "x-detail": 1}, "catalog_version": "cv", "x-sibling": []});
    assert_round_trip::<RequestError>(&error);
    assert_round_trip::<CatalogToolOutput>(&error);
}

#[test]
fn every_alternative_shape_round_trips() {
    // ProgramDeclaration: both forms, and a value carrying both.
    assert_round_trip::<ProgramDeclaration>(&json!({"argument": "workflow", "language": "workflow/v1"}));
    assert_round_trip::<ProgramDeclaration>(&json!({"languages": [
        {"argument": "workflow", "language": "workflow/v1"}, {"argument": "query", "language": "sql/postgres-15"}]}));
    assert_round_trip::<ProgramDeclaration>(&json!({"argument": "a", "language": "x/y", "languages": []}));
    // Diagnostic.path: JSON Pointer string or TextRange.
    assert_round_trip::<Diagnostic>(&json!({"severity": "error", "code": "c", "path": "/steps/0", "message": "m"}));
    assert_round_trip::<Diagnostic>(&json!({"severity": "warning", "code": "c", "message": "m",
        "path": {"start": {"line": 1, "column": 1}, "end": {"line": 2, "column": 3}}, "hint": "h"}));
    // CapabilityValue: boolean or settings object.
    assert_round_trip::<CapabilityValue>(&json!(true));
    assert_round_trip::<CapabilityValue>(&json!({"search": true}));
    // Retention: enum values and durations.
    for retention in ["none", "session", "PT1H", "P1Y2M3W4DT5H6M7.5S"] {
        assert_round_trip::<Retention>(&json!(retention));
    }
    // Guide index and fetch forms, catalog verbs.
    assert_round_trip::<GetGuideToolOutput>(&json!({"guides": []}));
    assert_round_trip::<GetGuideToolOutput>(&json!({"guide": {"id": "g", "title": "t", "level": "examples",
        "topics": ["a"], "language": "a/b", "version": "1", "size_bytes": 10, "tokens_estimate": 3,
        "format": "text/markdown", "body": "# hi"}}));
    assert_round_trip::<CatalogToolOutput>(
        &json!({"catalog_version": "cv", "changes": [{"id": "x", "change": "removed"}]}),
    );
    assert_round_trip::<CatalogToolOutput>(&json!({"items": [], "catalog_version": "cv", "next_cursor": "n"}));
    // Requests.
    assert_round_trip::<ExecuteRequest>(
        &json!({"program_ref": "p", "trace_level": "none", "store": true, "test_run": false, "context": null}),
    );
    assert_round_trip::<TraceFetchRequest>(&json!({"run_id": "r", "trace_level": "full", "question": "why?"}));
    // Plan with arms and loops.
    let hints = json!({"readOnly": false, "destructive": true, "openWorld": false});
    assert_round_trip::<Plan>(&json!({"steps": [{"id": "a", "risk": "high", "risk_hints": hints,
        "arm": {"branch": "b", "label": "yes"}, "loop": "l", "calls": "c"}], "max_risk": "high", "max_risk_hints": hints}));
}

#[test]
fn constants_come_from_the_schema() {
    let schema: Value = serde_json::from_str(pilotage_types::validate::PILOTAGE_SCHEMA_JSON).unwrap();
    let id = schema["$id"].as_str().unwrap();
    assert!(
        id.contains(&format!("/{PILOTAGE_VERSION}/")),
        "{id} names version {PILOTAGE_VERSION}"
    );
    assert_eq!(GET_GUIDE_TOOL, "pilotage_get_guide", "Part III 4 binds this name");
    assert_eq!(CATALOG_TOOL, "pilotage_catalog", "Part III 4 binds this name");
    let kinds = &schema["$defs"]["RequestError"]["properties"]["error"]["properties"]["kind"]["enum"];
    assert_eq!(serde_json::to_value(REQUEST_ERROR_KINDS).unwrap(), *kinds);
    // The open enum knows exactly the schema's kinds, in the schema's order.
    let known: Vec<&str> = RequestErrorKind::KNOWN.iter().map(RequestErrorKind::as_str).collect();
    assert_eq!(known, REQUEST_ERROR_KINDS);
    assert_eq!(<Manifest as SchemaDef>::DEF, "Manifest");
    assert_eq!(DEFS.len(), schema["$defs"].as_object().unwrap().len());
    // The bound access-tool names are in the type: no other string deserialises.
    assert!(
        serde_json::from_value::<LanguageEntry>(json!({"name": "a/b", "title": "t", "guides": "other",
        "loop": {"validate": "v"}, "locator": "json-pointer"}))
        .is_err()
    );
}
