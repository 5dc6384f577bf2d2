//! Forward compatibility (Part III 7.2; Part II 1.3 via the schema's description): documents of
//! a later minor version, with enum values 1.1 does not define, are read by the 1.1 types and
//! by the compatible reading, round-trip unchanged, and are still rejected by the pinned
//! validators. Binding-fixed constants stay closed.

use pilotage_types::*;
use serde_json::{json, Value};

/// A 1.2-style request error: a kind 1.1 does not define.
fn later_request_error() -> Value {
    json!({"error": {"kind": "x_later_minor_kind", "message": "slow down", "retry_after_ms": 500}})
}

/// A 1.2-style validate response: a diagnostic severity 1.1 does not define.
fn later_validate_response() -> Value {
    json!({"valid": true, "diagnostics": [
        {"severity": "x_later_severity", "code": "style", "path": "/steps/0", "message": "consider a title"}
    ]})
}

/// A 1.2-style manifest: a locator 1.1 does not define.
fn later_manifest() -> Value {
    json!({"pilotage": "1.2", "capabilities": {"guides": true, "validate": true},
        "languages": [{"name": "workflow/v1", "title": "Workflows", "guides": "pilotage_get_guide",
            "loop": {"validate": "validate_workflow"}, "locator": "x-later-locator",
            "execution": "x_later_execution", "trace": "x_later_level"}]})
}

#[test]
fn an_unknown_request_error_kind_is_kept_and_acted_on_as_internal() {
    let error: RequestError = serde_json::from_value(later_request_error()).unwrap();
    assert_eq!(error.error.kind, RequestErrorKind::Unknown("x_later_minor_kind".into()));
    assert!(!error.error.kind.is_known());
    assert_eq!(error.error.kind.as_str(), "x_later_minor_kind");
    assert_eq!(error.error.kind.effective(), RequestErrorKind::Internal);
    assert_eq!(error.effective_kind(), RequestErrorKind::Internal);
    assert_eq!(serde_json::to_value(&error).unwrap(), later_request_error(), "lossless");
    // Known kinds are themselves, and their own effective kind.
    for kind in RequestErrorKind::KNOWN {
        assert!(kind.is_known());
        assert_eq!(&kind.effective(), kind);
        assert_eq!(RequestErrorKind::from(kind.as_str()), *kind);
        assert_eq!(serde_json::to_value(kind).unwrap(), json!(kind.as_str()));
    }
}

#[test]
fn a_union_with_an_unknown_kind_is_still_a_request_error() {
    for union in [
        serde_json::from_value::<ExecuteToolOutput>(later_request_error())
            .map(|u| matches!(u, ExecuteToolOutput::RequestError(_))),
        serde_json::from_value::<ValidateToolOutput>(later_request_error())
            .map(|u| matches!(u, ValidateToolOutput::RequestError(_))),
        serde_json::from_value::<CatalogToolOutput>(later_request_error())
            .map(|u| matches!(u, CatalogToolOutput::RequestError(_))),
    ] {
        assert!(union.unwrap(), "read as the request-error channel");
    }
}

#[test]
fn later_severities_and_locators_are_read_and_written_back_unchanged() {
    let response: ValidateResponse = parse_compatible(&later_validate_response()).unwrap();
    assert_eq!(
        response.diagnostics[0].severity,
        DiagnosticSeverity::Unknown("x_later_severity".into())
    );
    assert_eq!(serde_json::to_value(&response).unwrap(), later_validate_response());

    let manifest: Manifest = parse_compatible(&later_manifest()).unwrap();
    let language = &manifest.languages[0];
    assert_eq!(language.locator, Locator::Unknown("x-later-locator".into()));
    assert_eq!(language.execution, Some(Execution::Unknown("x_later_execution".into())));
    assert_eq!(language.trace, Some(TraceLevel::Unknown("x_later_level".into())));
    assert_eq!(serde_json::to_value(&manifest).unwrap(), later_manifest());
}

#[test]
fn pinned_rejects_what_compatible_accepts_and_nothing_else_is_loosened() {
    for (def_name, value, pinned, compatible) in [
        (
            "RequestError",
            later_request_error(),
            RequestError::validate(&later_request_error()).is_ok(),
            RequestError::validate_compatible(&later_request_error()).is_ok(),
        ),
        (
            "ValidateResponse",
            later_validate_response(),
            ValidateResponse::is_valid(&later_validate_response()),
            ValidateResponse::is_valid_compatible(&later_validate_response()),
        ),
        (
            "Manifest",
            later_manifest(),
            parse::<Manifest>(&later_manifest()).is_ok(),
            parse_compatible::<Manifest>(&later_manifest()).is_ok(),
        ),
    ] {
        assert!(!pinned, "{def_name}: the pinned reading rejects {value}");
        assert!(compatible, "{def_name}: the compatible reading accepts {value}");
    }
    // The pinned violation names the enum.
    let errors = RequestError::validate(&later_request_error()).unwrap_err();
    assert_eq!(errors.violations[0].instance_pointer, "/error/kind");

    // Every other rule is kept: a missing member, a wrong type, a broken pattern, a bound
    // constant, a conditional.
    let still_invalid = [
        (
            "RequestError",
            json!({"error": {"kind": "x_later_minor_kind"}}),
            "/error",
        ),
        (
            "RequestError",
            json!({"error": {"kind": 7, "message": "m"}}),
            "/error/kind",
        ),
        (
            "Manifest",
            {
                let mut m = later_manifest();
                m["languages"][0]["name"] = json!("no-slash");
                m
            },
            "/languages/0/name",
        ),
        (
            "Manifest",
            {
                let mut m = later_manifest();
                m["languages"][0]["guides"] = json!("other_tool");
                m
            },
            "/languages/0/guides",
        ),
        (
            "Outcome",
            json!({"ok": true, "status": "ok", "error": "boom"}),
            "/error",
        ),
    ];
    for (def_name, value, pointer) in still_invalid {
        let errors = match def_name {
            "RequestError" => RequestError::validate_compatible(&value),
            "Manifest" => Manifest::validate_compatible(&value),
            _ => Outcome::validate_compatible(&value),
        }
        .expect_err(&format!("{def_name}: {value} stays invalid"));
        assert!(
            errors.violations.iter().any(|v| v.instance_pointer == pointer),
            "{def_name}: a violation at {pointer}: {errors}"
        );
    }
}

#[test]
fn binding_fixed_constants_stay_closed() {
    assert_eq!(
        serde_json::from_value::<GuidesTool>(json!("pilotage_get_guide")).unwrap(),
        GuidesTool::PilotageGetGuide
    );
    assert!(serde_json::from_value::<GuidesTool>(json!("other")).is_err());
    assert!(serde_json::from_value::<CatalogTool>(json!("other")).is_err());
    let error = "other".parse::<CatalogTool>().unwrap_err();
    assert!(!error.to_string().is_empty());
}

#[test]
fn one_trace_level_for_every_summary_full_set() {
    // Trace.level, TraceFetchRequest.trace_level and LanguageEntry.trace share one type; the
    // execute request's set, which adds `none`, is a type of its own.
    let trace: Trace = serde_json::from_value(json!({"run_id": "r", "level": "full", "steps": []})).unwrap();
    let request: TraceFetchRequest = serde_json::from_value(json!({"run_id": "r", "trace_level": "full"})).unwrap();
    let level: TraceLevel = trace.level;
    assert_eq!(Some(level), request.trace_level);
    assert_eq!(TraceLevel::KNOWN, [TraceLevel::Summary, TraceLevel::Full]);
    assert_eq!(
        ExecuteTraceLevel::KNOWN,
        [
            ExecuteTraceLevel::None,
            ExecuteTraceLevel::Summary,
            ExecuteTraceLevel::Full
        ]
    );
}

#[test]
fn program_declarations_name_their_two_forms() {
    let single: ProgramDeclaration =
        serde_json::from_value(json!({"argument": "workflow", "language": "workflow/v1"})).unwrap();
    assert!(matches!(single, ProgramDeclaration::Single { ref argument, .. } if argument == "workflow"));
    let shared: ProgramDeclaration = serde_json::from_value(json!({"languages": [
        {"argument": "a", "language": "x/1"}, {"argument": "b", "language": "y/1"}]}))
    .unwrap();
    let ProgramDeclaration::Shared { languages, .. } = shared else {
        panic!("the languages[] form is Shared")
    };
    let first: &ProgramArgument = &languages[0];
    assert_eq!((first.argument.as_str(), first.language.0.as_str()), ("a", "x/1"));
}

#[test]
fn servers_emit_only_known_kinds() {
    let error = RequestError::from_kind(RequestErrorKind::Unknown("made_up".into()), "m");
    assert_eq!(error.error.kind, RequestErrorKind::Internal);
    assert!(RequestError::validate(&serde_json::to_value(&error).unwrap()).is_ok());
}

#[test]
fn the_compatible_reading_widens_open_enums_only() {
    let schema: Value = serde_json::from_str(pilotage_types::validate::PILOTAGE_SCHEMA_JSON).unwrap();
    let mut widened = schema.clone();
    let count = pilotage_types::validate::widen_open_enums(&mut widened);
    let enums = pilotage_types::validate::PILOTAGE_SCHEMA_JSON
        .matches("\"enum\"")
        .count();
    assert_eq!(
        count, enums,
        "every `enum` of the schema is an enum of strings, widened"
    );
    assert_eq!(
        widened["$defs"]["LanguageEntry"]["properties"]["guides"],
        schema["$defs"]["LanguageEntry"]["properties"]["guides"]
    );
    assert_eq!(
        widened["$defs"]["RequestError"]["properties"]["error"]["properties"]["kind"]["type"],
        "string"
    );
}
