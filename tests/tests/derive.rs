//! `#[derive(PilotageTool)]`: derived definitions obey Part III rule by rule, reproduce the 9.2
//! listing, accept the 9.3 and 9.4 arguments, validate as MCP `Tool`s under all three
//! official schemas, and route every argument fault to its Part III 7.1 channel.

use pilotage_tests::mcp;
use pilotage_tests::part_iii::vendored_blocks;
use pilotage_types::{ArgumentFault, PilotageTool, RequestErrorKind, Stage, ToolKind};
use serde_json::{json, Map, Value};

/// A Rust enum for trace_level: the schema still says only `{"type": "string"}`.
#[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum TraceLevel {
    None,
    Summary,
    Full,
}

/// Execute a workflow document or a promoted workflow.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool, Debug)]
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
    /// How much of the run to record.
    pub trace_level: Option<TraceLevel>,
    pub expected_catalog_version: Option<String>,
}

/// The 9.2 listing, field for field.
///
/// Execute a workflow document or a promoted workflow.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(
    stage = "execute",
    name = "run_workflow",
    language = "workflow/v1",
    catalog,
    destructive,
    description = "Execute a workflow document or a promoted workflow."
)]
pub struct RunWorkflowAsListed {
    #[pilotage(program)]
    pub workflow: Option<Map<String, Value>>,
    pub program_ref: Option<String>,
    pub input: Option<Map<String, Value>>,
    pub trace_level: Option<String>,
    pub expected_catalog_version: Option<String>,
}

/// Check a workflow document and preview its plan.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(stage = "validate", name = "validate_workflow", language = "workflow/v1")]
#[serde(deny_unknown_fields)]
pub struct ValidateWorkflow {
    #[pilotage(program)]
    pub workflow: Value,
    pub context: Option<Value>,
}

/// Fetch the stored trace of a run.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(stage = "trace", name = "trace_run", language = "workflow/v1")]
pub struct TraceRun {
    pub run_id: String,
    pub trace_level: Option<String>,
}

/// Validates programs of either Language.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(stage = "validate", name = "validate_any")]
#[serde(rename_all = "camelCase")]
pub struct ValidateShared {
    #[pilotage(program, language = "workflow/v1")]
    pub workflow_doc: Option<Value>,
    #[pilotage(program, language = "sql/postgres-15")]
    #[serde(rename = "query")]
    pub sql_text: Option<String>,
}

/// Runs programs; deploys or runs immediately.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(
    stage = "execute",
    name = "run_both",
    language = "job/v2",
    execution = "both",
    idempotent,
    open_world
)]
pub struct RunBoth {
    #[pilotage(program)]
    pub job: Option<Value>,
    pub mode: Option<String>,
    pub trace_level: Option<String>,
    pub test_run: Option<bool>,
    /// Engine-specific knob: an ordinary argument keeps its schema.
    pub priority: u8,
}

/// The section 5 listing, whose program member is `{}`.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(stage = "execute", name = "run_workflow", language = "workflow/v1", catalog)]
pub struct RunWorkflowSection5 {
    #[pilotage(program)]
    pub workflow: Option<Value>,
    pub program_ref: Option<String>,
    pub input: Option<Map<String, Value>>,
    pub trace_level: Option<String>,
    pub expected_catalog_version: Option<String>,
}

fn definition<T: PilotageTool>() -> Value {
    T::tool_definition().to_value()
}

fn block(key: &str) -> Value {
    vendored_blocks()
        .into_iter()
        .find(|b| b.key() == key)
        .and_then(|b| b.json.ok())
        .expect("Part III block")
}

#[test]
fn reproduces_the_9_2_listing() {
    let listed = block("9.2#da27e2e3ce2e");
    let derived = definition::<RunWorkflowAsListed>();
    for member in ["name", "inputSchema", "annotations", "_meta"] {
        assert_eq!(derived[member], listed[member], "{member} differs from Part III 9.2");
    }
    let description = derived["description"].as_str().unwrap();
    assert!(description.starts_with(listed["description"].as_str().unwrap()));
    assert!(
        description.contains("workflow/v1"),
        "3.4: the Language is named: {description}"
    );
    assert_eq!(
        &derived["outputSchema"],
        ToolKind::Execute.output_schema(pilotage_types::Flavour::Inlined)
    );
}

#[test]
fn reproduces_the_section_5_and_4_6_schemas() {
    let listed = block("5#6310346e4690");
    let derived = definition::<RunWorkflowSection5>();
    assert_eq!(derived["inputSchema"], listed["inputSchema"]);
    assert_eq!(derived["_meta"], listed["_meta"]);
    let fragment = block("4.6#6ac54250d0c0");
    assert_eq!(
        derived["inputSchema"]["properties"]["trace_level"],
        fragment["trace_level"]
    );
}

#[test]
fn execute_tool_follows_part_iii() {
    let tool = definition::<RunWorkflow>();
    let schema = &tool["inputSchema"];
    assert_eq!(schema["type"], "object");
    assert!(
        schema.get("required").is_none(),
        "4.6: neither program nor program_ref required: {schema}"
    );
    assert_eq!(
        schema["properties"]["trace_level"],
        json!({"type": "string", "description": "How much of the run to record."})
    );
    assert_eq!(schema["properties"]["workflow"], json!({}), "program member permissive");
    assert_eq!(schema["properties"]["program_ref"], json!({"type": "string"}));
    assert_eq!(
        schema["properties"]["expected_catalog_version"],
        json!({"type": "string"})
    );
    assert_eq!(
        tool["_meta"],
        json!({"io.github.jafarsa0/pilotage": {"argument": "workflow", "language": "workflow/v1"}})
    );
    assert_eq!(
        tool["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": true})
    );
    assert_eq!(
        tool["description"],
        "Execute a workflow document or a promoted workflow. Pilotage execute tool for workflow/v1."
    );
    let text = schema.to_string();
    for forbidden in [
        "additionalProperties",
        "$ref",
        "$schema",
        "\"title\"",
        "enum",
        "nullable",
        "\"format\"",
    ] {
        assert!(!text.contains(forbidden), "{forbidden} in {text}");
    }
}

#[test]
fn validate_trace_and_shared_tools_follow_part_iii() {
    let validate = definition::<ValidateWorkflow>();
    assert_eq!(validate["inputSchema"]["required"], json!(["workflow"]), "4.4 rule 8");
    assert_eq!(validate["annotations"], json!({"readOnlyHint": true}));
    assert!(
        !validate["inputSchema"].to_string().contains("additionalProperties"),
        "deny_unknown_fields must not leak"
    );
    assert!(validate["description"].as_str().unwrap().contains("workflow/v1"));

    let trace = definition::<TraceRun>();
    assert_eq!(trace["inputSchema"]["required"], json!(["run_id"]), "4.4 rule 7");
    assert_eq!(trace["annotations"], json!({"readOnlyHint": true}));
    assert!(
        trace.get("_meta").is_none(),
        "a trace tool carries no program declaration"
    );
    assert_eq!(
        trace["description"],
        "Fetch the stored trace of a run. Pilotage trace fetch tool for workflow/v1."
    );

    let shared = definition::<ValidateShared>();
    assert!(shared["inputSchema"].get("required").is_none(), "4.4 rule 9");
    assert_eq!(shared["inputSchema"]["properties"]["workflowDoc"], json!({}));
    assert_eq!(shared["inputSchema"]["properties"]["query"], json!({"type": "string"}));
    assert_eq!(
        shared["_meta"],
        json!({"io.github.jafarsa0/pilotage": {"languages": [
            {"argument": "workflowDoc", "language": "workflow/v1"}, {"argument": "query", "language": "sql/postgres-15"}]}})
    );
    let description = shared["description"].as_str().unwrap();
    assert!(
        description.contains("workflow/v1") && description.contains("sql/postgres-15"),
        "{description}"
    );

    let both = definition::<RunBoth>();
    assert_eq!(both["inputSchema"]["properties"]["mode"], json!({"type": "string"}));
    assert_eq!(
        both["inputSchema"]["properties"]["test_run"],
        json!({"type": "boolean"})
    );
    assert_eq!(
        both["inputSchema"]["required"],
        json!(["priority"]),
        "ordinary arguments keep their requiredness"
    );
    assert_eq!(
        both["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": false, "idempotentHint": true, "openWorldHint": true})
    );
    assert_eq!(<RunBoth as PilotageTool>::tool_definition().name, "run_both");
    assert!(pilotage_types::names_stage("Runs programs", Stage::Execute));
    assert!(!pilotage_types::names_stage("Fetches things", Stage::Validate));
}

#[test]
fn derived_definitions_are_valid_mcp_tools() {
    let Some(schemas) = mcp::schemas("derived loop tools against the MCP Tool schemas") else {
        return;
    };
    for tool in [
        definition::<RunWorkflow>(),
        definition::<RunWorkflowAsListed>(),
        definition::<ValidateWorkflow>(),
        definition::<TraceRun>(),
        definition::<ValidateShared>(),
        definition::<RunBoth>(),
    ] {
        mcp::assert_valid_tool(&schemas, &tool);
        let program_declaration = &tool["_meta"]["io.github.jafarsa0/pilotage"];
        if !program_declaration.is_null() {
            assert!(pilotage_types::validate::pilotage()
                .is_valid("ProgramDeclaration", program_declaration)
                .unwrap());
        }
    }
}

#[test]
fn part_iii_arguments_are_accepted() {
    let validate_arguments = &block("9.3#ec2ef8bf3b48")["params"]["arguments"];
    let parsed = ValidateWorkflow::from_arguments(validate_arguments).expect("9.3 arguments");
    assert_eq!(parsed.workflow["steps"][0]["capability"], "cap_read_user_profil");
    let execute_arguments = &block("9.4#a7f05b29dc8e")["params"]["arguments"];
    let parsed = RunWorkflow::from_arguments(execute_arguments).expect("9.4 arguments");
    assert_eq!(parsed.trace_level, Some(TraceLevel::Full));
    assert_eq!(parsed.expected_catalog_version.as_deref(), Some("cv_9f2c41ab07de"));
    RunWorkflowAsListed::from_arguments(execute_arguments).expect("9.4 arguments against the 9.2 schema");
    let validator = jsonschema::validator_for(&definition::<RunWorkflowAsListed>()["inputSchema"]).unwrap();
    assert!(validator.is_valid(execute_arguments));
}

fn carrier<T: PilotageTool + std::fmt::Debug>(arguments: Value) {
    match T::from_arguments(&arguments) {
        Err(ArgumentFault::Carrier { message }) => assert!(!message.is_empty()),
        other => panic!("{arguments} must be a carrier fault, got {other:?}"),
    }
}

fn request<T: PilotageTool + std::fmt::Debug>(arguments: Value, kind: RequestErrorKind) {
    match T::from_arguments(&arguments) {
        Err(ArgumentFault::Request(error)) => {
            assert_eq!(error.error.kind, kind, "{arguments}: {}", error.error.message)
        }
        other => panic!("{arguments} must be a request error {kind}, got {other:?}"),
    }
}

impl std::fmt::Debug for ValidateWorkflow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ValidateWorkflow")
    }
}
impl std::fmt::Debug for TraceRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TraceRun")
    }
}
impl std::fmt::Debug for ValidateShared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ValidateShared")
    }
}
impl std::fmt::Debug for RunBoth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RunBoth")
    }
}

#[test]
fn faults_are_routed_to_their_channel() {
    use RequestErrorKind::{InvalidRequest, Unsupported};
    // Structural: not an object, a schema-required member missing, a wrong JSON type.
    carrier::<RunWorkflow>(json!([1]));
    carrier::<ValidateWorkflow>(json!({}));
    carrier::<TraceRun>(json!({"trace_level": "full"}));
    carrier::<TraceRun>(json!({"run_id": 7}));
    carrier::<RunWorkflow>(json!({"workflow": {}, "trace_level": 3}));
    carrier::<RunBoth>(json!({"job": {}, "mode": "deploy"}));
    // Value and eligibility: request errors.
    request::<RunWorkflow>(json!({"trace_level": "full"}), InvalidRequest);
    request::<RunWorkflow>(json!({"workflow": {}, "program_ref": "p"}), InvalidRequest);
    request::<RunWorkflow>(json!({"workflow": {}, "trace_level": "verbose"}), InvalidRequest);
    request::<RunWorkflow>(json!({"workflow": {}, "mode": "deploy"}), InvalidRequest);
    request::<RunWorkflow>(json!({"workflow": {}, "test_run": true}), Unsupported);
    request::<TraceRun>(json!({"run_id": "r", "trace_level": "none"}), InvalidRequest);
    request::<TraceRun>(json!({"run_id": "r", "question": "why?"}), Unsupported);
    request::<ValidateShared>(json!({}), InvalidRequest);
    request::<ValidateShared>(json!({"workflowDoc": {}, "query": "select 1"}), InvalidRequest);
    request::<RunBoth>(json!({"job": {}, "priority": 1}), InvalidRequest);
    request::<RunBoth>(json!({"job": {}, "priority": 1, "mode": "later"}), InvalidRequest);
    request::<RunBoth>(json!({"job": {}, "priority": 300, "mode": "deploy"}), InvalidRequest);
    // Accepted, unknown members ignored (even with deny_unknown_fields).
    assert!(ValidateWorkflow::from_arguments(&json!({"workflow": {"steps": []}, "x-unknown": 1})).is_ok());
    assert!(ValidateShared::from_arguments(&json!({"query": "select 1"})).is_ok());
    let both =
        RunBoth::from_arguments(&json!({"job": {}, "priority": 1, "mode": "immediate", "test_run": true})).unwrap();
    assert_eq!(both.test_run, Some(true));
    assert!(RunWorkflow::from_arguments(&json!({"program_ref": "promoted-1", "trace_level": "none"})).is_ok());
}

/// A Language whose programs have a Rust type of their own.
#[derive(serde::Deserialize, schemars::JsonSchema, Debug)]
pub struct TypedProgram {
    pub steps: Vec<TypedStep>,
}

/// One step of a [`TypedProgram`].
#[derive(serde::Deserialize, schemars::JsonSchema, Debug)]
pub struct TypedStep {
    pub id: String,
}

/// Check a typed program.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool, Debug)]
#[pilotage(stage = "validate", name = "check_typed", language = "typed/v1")]
pub struct ValidateTyped {
    #[pilotage(program)]
    pub program: TypedProgram,
}

/// Execute a typed program.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool, Debug)]
#[pilotage(stage = "execute", name = "run_typed", language = "typed/v1")]
pub struct RunTyped {
    #[pilotage(program)]
    pub program: Option<TypedProgram>,
    pub trace_level: Option<String>,
    pub context: Option<Value>,
}

/// The program faults of `T::from_arguments(arguments)`, as (code, path) pairs.
fn program_faults<T: PilotageTool + std::fmt::Debug>(arguments: Value) -> Vec<(String, String)> {
    match T::from_arguments(&arguments) {
        Err(ArgumentFault::Program(diagnostics)) => diagnostics
            .into_iter()
            .map(|d| {
                assert_eq!(d.severity, pilotage_types::DiagnosticSeverity::Error);
                let pilotage_types::DiagnosticPath::String(path) = d.path else {
                    panic!("a JSON Pointer path")
                };
                (d.code, path)
            })
            .collect(),
        other => panic!("{arguments} must be a program fault, got {other:?}"),
    }
}

#[test]
fn program_content_and_unsupported_context_are_diagnostics_not_request_errors() {
    // Part III 4.6: invalid program content is reported through diagnostics, at its path.
    assert_eq!(
        program_faults::<ValidateTyped>(json!({"program": {"steps": [{"id": "a"}, {"id": 5}]}})),
        [("invalid_program".to_owned(), "/steps/1/id".to_owned())]
    );
    assert_eq!(
        program_faults::<RunTyped>(json!({"program": {"steps": "none"}, "trace_level": "none"})),
        [("invalid_program".to_owned(), "/steps".to_owned())]
    );
    // Part III 4.4 rule 10: context a tool does not take reaches validation as context_binding.
    assert_eq!(
        program_faults::<ValidateTyped>(json!({"program": {"steps": []}, "context": {"user": "u"}})),
        [("context_binding".to_owned(), String::new())]
    );
    assert_eq!(
        program_faults::<ValidateTyped>(json!({"program": {"steps": [{}]}, "context": 1})),
        [
            ("context_binding".to_owned(), String::new()),
            ("invalid_program".to_owned(), "/steps/0".to_owned())
        ]
    );
    // A tool that takes context gets it; a well-typed program passes.
    let run = RunTyped::from_arguments(&json!({"program": {"steps": [{"id": "a"}]}, "context": {"k": 1}})).unwrap();
    assert_eq!(run.program.unwrap().steps[0].id, "a");
    assert_eq!(run.context, Some(json!({"k": 1})));
    // Every earlier channel keeps its routing: structural faults stay carrier faults, value
    // faults of other members stay request errors.
    carrier::<ValidateTyped>(json!({"program": "not an object"}));
    carrier::<ValidateTyped>(json!({}));
    request::<RunTyped>(json!({"trace_level": "full"}), RequestErrorKind::InvalidRequest);
    request::<RunTyped>(
        json!({"program": {"steps": []}, "trace_level": "loud"}),
        RequestErrorKind::InvalidRequest,
    );
}
