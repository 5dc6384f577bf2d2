//! A downstream crate, written against the Pilotage 1.1 types the way an engine (which builds
//! responses) and a client (which reads them) are written: only constructors, setters and
//! `..` patterns, never a struct literal. It is a separate crate, so `#[non_exhaustive]`
//! applies to it as to any user's.
//!
//! `xtask/tests/regen_cli.rs` compiles it unchanged against the types regenerated from an
//! additive 1.2 schema: what the bump report's "additive" promises.

use pilotage_types::{
    BranchArm, CapabilityDeclaration, CapabilitySettings, CatalogChange, CatalogChangeKind, CatalogEntry,
    CatalogListResult, Decision, Diagnostic, DiagnosticSeverity, ExecuteResponse, Execution, Guide, GuideIndexResult,
    GuideLevel, GuidesTool, LanguageEntry, LanguageIdentifier, Locator, LoopObject, Manifest, Outcome, Plan, PlanStep,
    ProgramArgument, ProgramDeclaration, RequestError, RequestErrorKind, RiskHints, Trace, TraceLevel, TraceStep,
    ValidateResponse, VersionString,
};
use serde_json::json;

/// The manifest of a one-Language engine.
pub fn manifest() -> Manifest {
    let capabilities = CapabilityDeclaration::new()
        .with_guides(true)
        .with_validate(true)
        .with_execute(true)
        .with_catalog(pilotage_types::CapabilityValue::CapabilitySettings(
            CapabilitySettings::new().with_search(true),
        ));
    let language = LanguageEntry::new(
        LanguageIdentifier("calc/v1".to_owned()),
        "Calculator",
        GuidesTool::PilotageGetGuide,
        LoopObject::new("calc_validate").with_execute("calc_run"),
        Locator::JsonPointer,
    )
    .with_capabilities(capabilities)
    .with_catalog(pilotage_types::CatalogTool::PilotageCatalog)
    .with_execution(Execution::Immediate)
    .with_trace(TraceLevel::Full);
    Manifest::new(VersionString("1.1".to_owned()), [language])
}

/// A guide index with one guide.
pub fn guides() -> GuideIndexResult {
    let guide = Guide::new(
        "intro",
        "Getting started",
        GuideLevel::Core,
        ["syntax".to_owned()],
        LanguageIdentifier("calc/v1".to_owned()),
        "1",
        120u64,
    );
    GuideIndexResult::new([guide])
}

/// A catalog page and a change record.
pub fn catalog() -> (CatalogListResult, CatalogChange) {
    let entry = CatalogEntry::new("add", "function", "Add", "safe", RiskHints::new().with_read_only(true))
        .with_description("adds two numbers")
        .with_tags(["math".to_owned()]);
    (
        CatalogListResult::new([entry], "v1").with_next_cursor("c1"),
        CatalogChange::new("add", CatalogChangeKind::Added),
    )
}

/// Validate responses: a valid program with its plan, and an invalid one.
pub fn validate_responses() -> (ValidateResponse, ValidateResponse) {
    let step = PlanStep::new("s1", "safe", RiskHints::new().with_read_only(true))
        .with_calls("add")
        .with_arm(BranchArm::new("b", "then"));
    let plan = Plan::new([step], "safe", RiskHints::new().with_read_only(true));
    let valid = ValidateResponse::valid(plan).with_catalog_version("v1");
    let invalid = ValidateResponse::invalid([
        Diagnostic::error("unknown_op", "/op", "no such operation").with_hint("did you mean `add`?")
    ]);
    (valid, invalid)
}

/// Execute responses: a Run that succeeded with its trace, one refused by validation, one
/// that failed.
pub fn execute_responses() -> Vec<ExecuteResponse> {
    let step = TraceStep::new("s1", Outcome::success("success"))
        .with_calls("add")
        .with_input(json!({"a": 1, "b": 2}))
        .with_output(3)
        .with_t_ms(1u64)
        .with_decisions([Decision::new("s1", "then", "a < b")]);
    let ok = ExecuteResponse::new("run_1", Outcome::success("success"))
        .with_output(json!({"sum": 3}))
        .with_trace(Trace::new("run_1", TraceLevel::Full, [step]));
    let refused = ExecuteResponse::validation_error("run_2", [Diagnostic::error("bad", "/op", "bad operation")]);
    let failed = ExecuteResponse::new("run_3", Outcome::failure("failed", "division by zero")).with_trace(Trace::new(
        "run_3",
        TraceLevel::Summary,
        [],
    ));
    vec![ok, refused, failed]
}

/// A request error, and a program declaration of each form (a shared one names at least two
/// Languages).
pub fn other_values() -> (RequestError, ProgramDeclaration, ProgramDeclaration) {
    (
        RequestError::not_found("unknown run").with_catalog_version("v1"),
        ProgramDeclaration::single("program", LanguageIdentifier("calc/v1".to_owned())),
        ProgramDeclaration::shared([
            ProgramArgument::new("calc", LanguageIdentifier("calc/v1".to_owned())),
            ProgramArgument::new("sheet", LanguageIdentifier("sheet/v1".to_owned())),
        ]),
    )
}

/// What a client reads out of an execute response: only through `..` patterns and `_` arms,
/// so that members and values a later minor version adds break nothing.
pub fn describe(response: &ExecuteResponse) -> String {
    let ExecuteResponse {
        run_id, outcome, trace, ..
    } = response;
    let Outcome { ok, status, .. } = outcome;
    let steps = trace.as_ref().map_or(0, |Trace { steps, .. }| steps.len());
    let level = match trace.as_ref().map(|t| &t.level) {
        Some(TraceLevel::Full) => "full",
        Some(TraceLevel::Summary) => "summary",
        Some(_) => "a later level",
        None => "none",
    };
    format!("{run_id}: ok={ok} status={status} steps={steps} trace={level}")
}

/// How a client branches on a request error's kind and a diagnostic's severity.
pub fn classify(error: &RequestError, diagnostic: &Diagnostic) -> (&'static str, &'static str) {
    let kind = match error.effective_kind() {
        RequestErrorKind::NotFound => "not found",
        RequestErrorKind::InvalidRequest => "invalid request",
        _ => "other",
    };
    let severity = match diagnostic.severity {
        DiagnosticSeverity::Error => "error",
        DiagnosticSeverity::Warning => "warning",
        _ => "later severity",
    };
    (kind, severity)
}

/// The program argument of a declaration, read with `..`.
pub fn program_argument(declaration: &ProgramDeclaration) -> Option<&str> {
    match declaration {
        ProgramDeclaration::Single { argument, .. } => Some(argument),
        ProgramDeclaration::Shared { languages, .. } => languages.first().map(|l| l.argument.as_str()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pilotage_types::SchemaDef;

    fn valid<T: SchemaDef + serde::Serialize>(value: &T) {
        let json = serde_json::to_value(value).unwrap();
        if let Err(errors) = T::validate(&json) {
            panic!("{} is invalid: {errors}\n{json:#}", T::DEF);
        }
    }

    #[test]
    fn every_value_built_here_is_valid_against_the_schema() {
        valid(&manifest());
        valid(&guides());
        let (page, change) = catalog();
        valid(&page);
        valid(&pilotage_types::CatalogChangedResult::new("v2", [change]));
        let (ok, invalid) = validate_responses();
        valid(&ok);
        valid(&invalid);
        for response in execute_responses() {
            valid(&response);
        }
        let (error, single, shared) = other_values();
        valid(&error);
        valid(&single);
        valid(&shared);
    }

    #[test]
    fn values_read_back_as_built() {
        let responses = execute_responses();
        assert_eq!(
            describe(&responses[0]),
            "run_1: ok=true status=success steps=1 trace=full"
        );
        assert_eq!(
            describe(&responses[1]),
            "run_2: ok=false status=validation_error steps=0 trace=none"
        );
        assert_eq!(responses[1].diagnostics.as_ref().map(Vec::len), Some(1));
        let (error, single, shared) = other_values();
        let (_, invalid) = validate_responses();
        assert_eq!(classify(&error, &invalid.diagnostics[0]), ("not found", "error"));
        assert_eq!(program_argument(&single), Some("program"));
        assert_eq!(program_argument(&shared), Some("calc"));
        let json = serde_json::to_value(&responses[0]).unwrap();
        assert_eq!(json["trace"]["steps"][0]["output"], json!(3));
        assert_eq!(json["outcome"], json!({"ok": true, "status": "success", "error": null}));
    }
}
