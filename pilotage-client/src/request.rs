//! Request construction (Part III 10.2-4, 4.4, 5): a loop request is formed from the manifest
//! (the loop tool of each stage), the tool's `inputSchema`, its program declaration under the
//! full `_meta` key (never a shorthand), and the reserved-name table. Nothing is guessed: a
//! stage the Language lacks, a program with no declaration, a reserved member the tool does not
//! declare, `mode` where execution is not `both` (or its absence where it is) are refusals the
//! caller sees before anything is sent.

use serde_json::{Map, Value};

use super::discovery::Discovery;
use pilotage_types::{parse_compatible, reserved_member, Execution, ProgramDeclaration, Stage, META_KEY};

/// The arguments of one loop request, by meaning; [`construct`] names them as the server does.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoopCall {
    /// The Language.
    pub language: String,
    /// The program (validate, execute), sent under the argument the declaration names.
    pub program: Option<Value>,
    /// A promoted program (execute).
    pub program_ref: Option<String>,
    /// The run's input (execute).
    pub input: Option<Value>,
    /// The validation context (validate, execute).
    pub context: Option<Value>,
    /// The trace level (execute, trace fetch), as given: the server judges its value.
    pub trace_level: Option<String>,
    /// The run (trace fetch).
    pub run_id: Option<String>,
    /// `immediate` or `deploy`, exactly when the Language's execution is `both` (execute).
    pub mode: Option<String>,
    /// The catalog version the program was written against (execute).
    pub expected_catalog_version: Option<String>,
    /// Retain or not (execute).
    pub store: Option<bool>,
    /// A test run (execute, `execute.test_run`).
    pub test_run: Option<bool>,
    /// An idempotency key (execute, `execute.idempotency`).
    pub idempotency_key: Option<String>,
    /// A question about the run (trace fetch, `trace_fetch.narrate`).
    pub question: Option<String>,
}

/// Why a request was not constructed; nothing was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// What is missing or not allowed, naming the Language, stage, tool or member.
    pub message: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "request not constructed: {}", self.message)
    }
}

impl std::error::Error for Refusal {}

fn refuse(message: String) -> Refusal {
    Refusal { message }
}

/// The program argument `tool` declares for `language` (Part III 5), read under the full
/// `_meta` key only.
pub fn program_argument(tool: &Value, language: &str) -> Option<String> {
    let declaration: ProgramDeclaration = parse_compatible(tool.get("_meta")?.get(META_KEY)?).ok()?;
    match declaration {
        ProgramDeclaration::Single {
            argument,
            language: declared,
            ..
        } => (declared.0 == language).then_some(argument),
        ProgramDeclaration::Shared { languages, .. } => languages
            .into_iter()
            .find(|entry| entry.language.0 == language)
            .map(|entry| entry.argument),
    }
}

/// The loop tool of `stage` for `language`, from the manifest's `loop` object.
pub fn loop_tool(discovery: &Discovery, language: &str, stage: Stage) -> Result<String, Refusal> {
    let entry = discovery.manifest.language(language).ok_or_else(|| {
        let served: Vec<&str> = discovery.manifest.languages.iter().map(|l| l.name.0.as_str()).collect();
        refuse(format!(
            "the server does not declare Language {language} (it declares {})",
            served.join(", ")
        ))
    })?;
    let name = match stage {
        Stage::Validate => Some(entry.loop_.validate.clone()),
        Stage::Execute => entry.loop_.execute.clone(),
        Stage::Trace => entry.loop_.trace.clone(),
    };
    name.ok_or_else(|| {
        refuse(format!(
            "Language {language} declares no {} tool (its loop object has no `{}`)",
            stage.label(),
            stage.loop_member()
        ))
    })
}

/// Forms the `tools/call` of `stage`: the tool name and the arguments, exactly as they will
/// be sent.
pub fn construct(
    discovery: &Discovery,
    stage: Stage,
    call: &LoopCall,
) -> Result<(String, Map<String, Value>), Refusal> {
    let language = call.language.as_str();
    let tool_name = loop_tool(discovery, language, stage)?;
    let tool = discovery.tool(&tool_name).ok_or_else(|| {
        refuse(format!(
            "the manifest names {tool_name}, but tools/list does not list it"
        ))
    })?;
    let declared: Vec<&str> = tool
        .pointer("/inputSchema/properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let mut arguments = Map::new();
    if let Some(program) = &call.program {
        if !stage.carries_programs() {
            return Err(refuse(format!("a {} request carries no program", stage.label())));
        }
        let argument = program_argument(tool, language).ok_or_else(|| {
            refuse(format!(
                "{tool_name} carries no program declaration for {language} under _meta[\"{META_KEY}\"] (Part III 5): the program argument cannot be named"
            ))
        })?;
        arguments.insert(argument, program.clone());
    }
    let reserved: [(&str, Option<Value>); 11] = [
        ("program_ref", call.program_ref.clone().map(Value::from)),
        ("input", call.input.clone()),
        ("context", call.context.clone()),
        ("trace_level", call.trace_level.clone().map(Value::from)),
        ("run_id", call.run_id.clone().map(Value::from)),
        ("mode", call.mode.clone().map(Value::from)),
        (
            "expected_catalog_version",
            call.expected_catalog_version.clone().map(Value::from),
        ),
        ("store", call.store.map(Value::from)),
        ("test_run", call.test_run.map(Value::from)),
        ("idempotency_key", call.idempotency_key.clone().map(Value::from)),
        ("question", call.question.clone().map(Value::from)),
    ];
    let both = discovery
        .manifest
        .language(language)
        .is_some_and(|entry| entry.execution == Some(Execution::Both));
    if stage == Stage::Execute {
        match (both, &call.mode) {
            (true, None) => {
                return Err(refuse(format!(
                    "{language} executes both immediately and by deployment: `mode` is required (Part III 4.4)"
                )))
            }
            (false, Some(_)) => {
                return Err(refuse(format!(
                    "`mode` applies only to a Language whose execution is \"both\"; {language}'s is not (Part III 4.4)"
                )))
            }
            _ => {}
        }
    }
    for (name, value) in reserved {
        let Some(value) = value else { continue };
        let applies = reserved_member(name).is_some_and(|member| member.applies_to(stage));
        if !applies {
            return Err(refuse(format!(
                "`{name}` is not a member of a {} request",
                stage.label()
            )));
        }
        if !declared.contains(&name) {
            return Err(refuse(format!(
                "{tool_name} does not declare `{name}` in its inputSchema: it is not sent (Part III 4.4)"
            )));
        }
        arguments.insert(name.to_owned(), value);
    }
    if stage == Stage::Trace && !arguments.contains_key("run_id") {
        return Err(refuse("a trace fetch needs the run_id of a started Run".to_owned()));
    }
    Ok((tool_name, arguments))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::{DetectedBy, ManifestSource};
    use serde_json::json;

    fn discovery(execution: &str, meta: Value) -> Discovery {
        Discovery {
            protocol_version: "2025-11-25".into(),
            stateless: false,
            detected_by: vec![DetectedBy::ManifestTool],
            manifest_source: ManifestSource::Tool,
            manifest: serde_json::from_value(json!({"pilotage": "1.1", "capabilities": {"guides": true,
                "validate": true, "execute": true},
                "languages": [{"name": "rules/v2", "title": "Rules", "guides": "pilotage_get_guide",
                    "loop": {"validate": "check_rules", "execute": "apply_rules"}, "locator": "json-pointer",
                    "execution": execution}]}))
            .unwrap(),
            tools: vec![
                json!({"name": "check_rules", "inputSchema": {"type": "object", "properties": {"ruleset": {}, "context": {}}},
                    "_meta": meta}),
                json!({"name": "apply_rules", "inputSchema": {"type": "object", "properties": {"ruleset": {},
                    "trace_level": {"type": "string"}, "mode": {"type": "string"}}},
                    "_meta": {META_KEY: {"argument": "ruleset", "language": "rules/v2"}}}),
            ],
        }
    }

    fn declared() -> Value {
        json!({META_KEY: {"argument": "ruleset", "language": "rules/v2"}})
    }

    #[test]
    fn requests_use_the_declared_names() {
        let d = discovery("immediate", declared());
        let call = LoopCall {
            language: "rules/v2".into(),
            program: Some(json!({"rules": []})),
            context: Some(json!({"user": "u"})),
            ..LoopCall::default()
        };
        let (tool, arguments) = construct(&d, Stage::Validate, &call).unwrap();
        assert_eq!(tool, "check_rules");
        assert_eq!(
            Value::Object(arguments),
            json!({"ruleset": {"rules": []}, "context": {"user": "u"}})
        );
        let shared = discovery(
            "immediate",
            json!({META_KEY: {"languages": [{"argument": "a", "language": "x/1"}, {"argument": "ruleset", "language": "rules/v2"}]}}),
        );
        assert_eq!(construct(&shared, Stage::Validate, &call).unwrap().0, "check_rules");
    }

    #[test]
    fn nothing_is_guessed() {
        let call = |f: fn(&mut LoopCall)| {
            let mut call = LoopCall {
                language: "rules/v2".into(),
                program: Some(json!({})),
                ..LoopCall::default()
            };
            f(&mut call);
            call
        };
        let d = discovery("immediate", declared());
        let refused = |stage, c: LoopCall, expected: &str| {
            let refusal = construct(&d, stage, &c).unwrap_err();
            assert!(refusal.message.contains(expected), "{refusal}");
        };
        refused(Stage::Trace, call(|_| {}), "declares no trace fetch tool");
        refused(
            Stage::Validate,
            call(|c| c.language = "other/v1".into()),
            "does not declare Language other/v1",
        );
        refused(
            Stage::Execute,
            call(|c| c.expected_catalog_version = Some("cv".into())),
            "does not declare `expected_catalog_version`",
        );
        refused(
            Stage::Execute,
            call(|c| c.test_run = Some(true)),
            "does not declare `test_run`",
        );
        refused(Stage::Execute, call(|c| c.mode = Some("deploy".into())), "applies only");
        refused(
            Stage::Validate,
            call(|c| c.run_id = Some("r".into())),
            "not a member of a validate request",
        );
        // No declaration, or one under a shorthand key only.
        let shorthand = discovery(
            "immediate",
            json!({"pilotage": {"argument": "ruleset", "language": "rules/v2"}}),
        );
        let refusal = construct(&shorthand, Stage::Validate, &call(|_| {})).unwrap_err();
        assert!(refusal.message.contains("no program declaration"), "{refusal}");
        // mode exactly when execution is both.
        let both = discovery("both", declared());
        let refusal = construct(&both, Stage::Execute, &call(|_| {})).unwrap_err();
        assert!(refusal.message.contains("`mode` is required"), "{refusal}");
        let (_, sent) = construct(&both, Stage::Execute, &call(|c| c.mode = Some("deploy".into()))).unwrap();
        assert_eq!(sent["mode"], "deploy");
    }
}
