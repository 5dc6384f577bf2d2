//! Writing an engine with `pilotage_server` as its docs say (issue #30): runnable selection
//! when `program_ref` is not declared (Part III 4.6, 7.1), the author's derived loop tools
//! served as the Language's loop tools, programs checked schema-first (every violation), and
//! what the build refuses (guide topics without a section, effect hints the catalog
//! contradicts, derived tools that disagree with their declaration).

use std::sync::Arc;

use pilotage_server::prelude::*;
use serde_json::{json, Value};

/// A program: a list of text operations.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Pipeline {
    /// The operations, in order.
    #[schemars(length(min = 1))]
    steps: Vec<Step>,
    /// How many times to repeat the whole pipeline.
    repeat: Option<u8>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
enum Step {
    Upper,
    Replace { from: String, to: String },
    Truncate { at: u32 },
}

/// Run a text pipeline.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(stage = "execute", name = "text_run", language = "text/v1")]
struct TextRun {
    #[pilotage(program)]
    #[allow(dead_code)]
    program: Option<Pipeline>,
    /// Answer what would happen, change nothing.
    dry_run: Option<bool>,
    /// Read by the framework (Part III 4.4 rule 5: the derive asks every execute tool for it).
    #[allow(dead_code)]
    trace_level: Option<String>,
}

/// Check a text pipeline.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(stage = "validate", name = "text_check", language = "text/v1")]
struct TextCheck {
    #[pilotage(program)]
    #[allow(dead_code)]
    program: Pipeline,
    /// The locale rules are checked for.
    locale: Option<String>,
}

/// A trace tool for another Language's program argument: disagrees with text/v1.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(stage = "execute", name = "other_run", language = "other/v1")]
struct OtherRun {
    #[pilotage(program)]
    #[allow(dead_code)]
    script: Option<Value>,
    #[allow(dead_code)]
    trace_level: Option<String>,
}

/// An execute tool listing `test_run`, which text/v1 does not declare.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(stage = "execute", name = "text_run", language = "text/v1")]
struct TestRunTool {
    #[pilotage(program)]
    #[allow(dead_code)]
    program: Option<Value>,
    #[allow(dead_code)]
    test_run: Option<bool>,
    #[allow(dead_code)]
    trace_level: Option<String>,
}

struct Text {
    declaration: Declaration,
    guides: Arc<[GuideText]>,
    catalog: Option<Arc<Catalog>>,
    schema: bool,
}

impl Text {
    fn new(declaration: Declaration) -> Self {
        let guide = GuideText::from_markdown(
            "intro",
            "Text pipelines",
            GuideLevel::Core,
            "# Text pipelines\n\n## steps\n`upper`, `replace`, `truncate`.\n\n## repeat\nRuns the steps again.\n",
        );
        Self {
            declaration,
            guides: vec![guide].into(),
            catalog: None,
            schema: true,
        }
    }
}

impl Language for Text {
    type Program = Pipeline;

    fn declaration(&self) -> Declaration {
        self.declaration.clone()
    }

    fn guides(&self) -> Arc<[GuideText]> {
        self.guides.clone()
    }

    fn catalog(&self) -> Option<Arc<Catalog>> {
        self.catalog.clone()
    }

    fn program_schema(&self) -> Option<Value> {
        self.schema.then(program_schema::<Pipeline>)
    }

    fn program_diagnostic(&self, violation: &ShapeViolation, diagnostic: Diagnostic) -> Diagnostic {
        if violation.code() == "missing_member" {
            diagnostic.with_hint("see the guide's `steps` topic")
        } else {
            diagnostic
        }
    }

    async fn validate(&self, _program: &Pipeline, _context: Option<&Value>, cx: &StageContext) -> Validated {
        match cx.arguments::<TextCheck>().and_then(|check| check.locale.as_deref()) {
            Some("xx") => Validated::with_diagnostics([Diagnostic::error("unknown_locale", "", "no locale xx")]),
            _ => Validated::valid(),
        }
    }

    async fn execute(&self, run: ExecuteInput<Pipeline>, cx: &StageContext) -> Result<Ran, RequestError> {
        let dry_run = cx.arguments::<TextRun>().and_then(|call| call.dry_run).unwrap_or(false);
        let mut text = run
            .input
            .as_ref()
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        for _ in 0..=run.program.repeat.unwrap_or(0) {
            for step in &run.program.steps {
                text = match step {
                    Step::Upper => text.to_uppercase(),
                    Step::Replace { from, to } => text.replace(from.as_str(), to),
                    Step::Truncate { at } => text.chars().take(*at as usize).collect(),
                };
            }
        }
        let output = if dry_run {
            json!({"steps": run.program.steps.len(), "dry_run": true})
        } else {
            json!({"steps": run.program.steps.len(), "text": text})
        };
        Ok(Ran::success(output, []))
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// `tool(arguments)`: (isError, structuredContent); a carrier error is `Err(message)`.
fn call(engine: &Engine, tool: &str, arguments: Value) -> Result<(bool, Value), String> {
    let result = runtime()
        .block_on(engine.call(tool, &arguments, "someone"))
        .unwrap_or_else(|| panic!("{tool} is a Pilotage tool"))
        .map_err(|error| error.message.to_string())?;
    Ok((
        result.is_error.unwrap_or(false),
        result.structured_content.unwrap_or(Value::Null),
    ))
}

fn engine(language: Text) -> Engine {
    Engine::builder("text-engine", "1.0")
        .language(language)
        .build()
        .unwrap()
}

fn build_error(language: Text) -> String {
    match Engine::builder("text-engine", "1.0").language(language).build() {
        Ok(_) => panic!("the build should have been refused"),
        Err(error) => error.to_string(),
    }
}

const GOOD: fn() -> Value = || json!({"steps": [{"op": "upper"}]});

#[test]
fn both_runnables_without_program_ref_are_a_request_error_never_a_run() {
    let engine = engine(Text::new(Declaration::new("text/v1", "Text")));
    let (is_error, content) = call(
        &engine,
        "text_v1_execute",
        json!({"program": GOOD(), "program_ref": "x"}),
    )
    .unwrap();
    assert!(is_error, "{content:#}");
    assert!(content.get("ok").is_none(), "no Run: {content:#}");
    let message = content["error"]["message"].as_str().unwrap();
    assert_eq!(content["error"]["kind"], "unsupported", "{content:#}");
    assert!(
        message.contains("`program` and `program_ref`"),
        "names what was given: {message}"
    );
    assert!(
        message.contains("inline in `program`"),
        "names what is accepted: {message}"
    );

    let (is_error, content) = call(&engine, "text_v1_execute", json!({"program_ref": "x"})).unwrap();
    assert!(is_error, "{content:#}");
    let message = content["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("given: `program_ref`") && message.contains("`program`"),
        "{message}"
    );

    let (is_error, content) = call(&engine, "text_v1_execute", json!({})).unwrap();
    assert!(is_error);
    assert_eq!(content["error"]["kind"], "invalid_request");
    assert!(
        content["error"]["message"].as_str().unwrap().contains("given: none"),
        "{content:#}"
    );
}

#[test]
fn both_runnables_with_program_ref_declared_are_invalid_request() {
    let engine = engine(Text::new(Declaration::new("text/v1", "Text").with_program_ref()));
    let (is_error, content) = call(
        &engine,
        "text_v1_execute",
        json!({"program": GOOD(), "program_ref": "x"}),
    )
    .unwrap();
    assert!(is_error, "{content:#}");
    assert_eq!(content["error"]["kind"], "invalid_request");
    assert!(content["error"]["message"]
        .as_str()
        .unwrap()
        .contains("`program` or `program_ref`"));
}

#[test]
fn undeclared_sub_features_are_refused_naming_the_feature() {
    let engine = engine(Text::new(Declaration::new("text/v1", "Text")));
    for (member, value) in [("test_run", json!(true)), ("idempotency_key", json!("k"))] {
        let (is_error, content) = call(&engine, "text_v1_execute", json!({"program": GOOD(), member: value})).unwrap();
        assert!(is_error, "{member}: {content:#}");
        assert_eq!(content["error"]["kind"], "unsupported", "{member}");
        assert!(content["error"]["message"].as_str().unwrap().contains(member));
    }
}

#[test]
fn a_program_with_five_faults_gets_five_diagnostics() {
    let engine = engine(Text::new(Declaration::new("text/v1", "Text")));
    let program = json!({
        "steps": [
            {"op": "replace", "from": "a"},            // 1: `to` missing
            {"op": "truncate", "at": -1},              // 2: out of range for u32
            {"op": "upper", "loud": true}              // 3: unknown member
        ],
        "repeat": 300,                                 // 4: out of range for u8
        "colour": "red"                                // 5: unknown member
    });
    for tool in ["text_v1_validate", "text_v1_execute"] {
        let (is_error, content) = call(&engine, tool, json!({"program": program})).unwrap();
        assert!(
            !is_error,
            "{tool}: program faults are never request errors: {content:#}"
        );
        let diagnostics = content["diagnostics"]
            .as_array()
            .unwrap_or_else(|| panic!("{content:#}"));
        assert_eq!(diagnostics.len(), 5, "{tool}: {content:#}");
        let paths: Vec<&str> = diagnostics.iter().map(|d| d["path"].as_str().unwrap()).collect();
        // An unknown member is pointed at itself; a missing one at its object.
        for expected in ["/steps/0", "/steps/1/at", "/steps/2/loud", "/repeat", "/colour"] {
            assert!(paths.contains(&expected), "{tool}: {expected:?} in {paths:?}");
        }
        assert!(diagnostics
            .iter()
            .all(|d| d["severity"] == "error" && !d["message"].as_str().unwrap().is_empty()));
        let missing = diagnostics
            .iter()
            .find(|d| d["code"] == "missing_member")
            .expect("a missing_member");
        assert_eq!(missing["hint"], "see the guide's `steps` topic", "the Language's hint");
    }
    // An empty pipeline breaks `minItems`; a valid one passes to the stage.
    let (_, content) = call(&engine, "text_v1_validate", json!({"program": {"steps": []}})).unwrap();
    assert_eq!(content["valid"], false);
    assert_eq!(content["diagnostics"].as_array().unwrap().len(), 1, "{content:#}");
    let (_, content) = call(&engine, "text_v1_validate", json!({"program": GOOD()})).unwrap();
    assert_eq!(content["valid"], true, "{content:#}");
}

#[test]
fn without_a_schema_serde_answers_its_first_fault() {
    let mut text = Text::new(Declaration::new("text/v1", "Text"));
    text.schema = false;
    let engine = engine(text);
    let (_, content) = call(
        &engine,
        "text_v1_validate",
        json!({"program": {"steps": [], "colour": 1, "repeat": 300}}),
    )
    .unwrap();
    let diagnostics = content["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{content:#}");
    assert_eq!(diagnostics[0]["code"], "invalid_program");
}

#[test]
fn derived_loop_tools_are_the_languages_loop_tools() {
    let declaration = Declaration::new("text/v1", "Text")
        .with_validate_tool::<TextCheck>()
        .with_execute_tool::<TextRun>();
    let engine = engine(Text::new(declaration));
    let manifest = serde_json::to_value(engine.manifest()).unwrap();
    assert_eq!(
        manifest["languages"][0]["loop"]["validate"], "text_check",
        "{manifest:#}"
    );
    assert_eq!(manifest["languages"][0]["loop"]["execute"], "text_run");
    let run = engine
        .tools()
        .iter()
        .find(|t| t.name == "text_run")
        .expect("text_run listed");
    let properties = &run.input_schema["properties"];
    assert!(
        properties["dry_run"]["type"].to_string().contains("boolean"),
        "{properties:#}"
    );
    for member in ["input", "trace_level", "store"] {
        assert!(
            properties.get(member).is_some(),
            "the framework's {member}: {properties:#}"
        );
    }
    assert_eq!(
        run.meta.as_ref().unwrap()[pilotage_types::META_KEY]["argument"],
        "program"
    );

    let (is_error, content) = call(&engine, "text_run", json!({"program": GOOD(), "dry_run": true})).unwrap();
    assert!(!is_error, "{content:#}");
    assert_eq!(
        content["output"],
        json!({"steps": 1, "dry_run": true}),
        "the stage got the struct"
    );
    // The struct's own member, mistyped: a structural fault (carrier), as the derive routes it.
    assert!(call(&engine, "text_run", json!({"program": GOOD(), "dry_run": "yes"})).is_err());
    let (_, content) = call(&engine, "text_check", json!({"program": GOOD(), "locale": "xx"})).unwrap();
    assert_eq!(content["diagnostics"][0]["code"], "unknown_locale", "{content:#}");
    // Schema-first through the derived tool as well.
    let (_, content) = call(&engine, "text_check", json!({"program": {"steps": [{"op": "nope"}]}})).unwrap();
    assert_eq!(content["valid"], false, "{content:#}");
    // Both runnables, still refused.
    let (is_error, _) = call(&engine, "text_run", json!({"program": GOOD(), "program_ref": "x"})).unwrap();
    assert!(is_error);
}

#[test]
fn the_build_refuses_what_it_could_not_serve_right() {
    let contradicting = |declaration: Declaration, hints: RiskHints| {
        let mut text = Text::new(declaration);
        let entry = CatalogEntry::new("wipe", "operation", "Wipe", "destroys", hints);
        text.catalog = Some(Arc::new(Catalog::new("1", [entry])));
        build_error(text)
    };
    let destructive = RiskHints::new().with_destructive(true);
    let error = contradicting(
        Declaration::new("text/v1", "Text").with_destructive(false),
        destructive.clone(),
    );
    assert!(error.contains("`wipe`") && error.contains("destructive"), "{error}");
    let error = contradicting(Declaration::new("text/v1", "Text").with_read_only(true), destructive);
    assert!(error.contains("`wipe`") && error.contains("read-only"), "{error}");

    let mut text = Text::new(Declaration::new("text/v1", "Text"));
    let guide = Guide::new(
        "intro",
        "Intro",
        GuideLevel::Core,
        ["steps".to_owned(), "missing".to_owned()],
        LanguageIdentifier(String::new()),
        "1",
        0u64,
    );
    text.guides = vec![GuideText::new(guide, "# Intro\n\n## steps\nSome.\n")].into();
    let error = build_error(text);
    assert!(
        error.contains("`intro`") && error.contains("`missing`") && error.contains("## missing"),
        "{error}"
    );

    let error = build_error(Text::new(
        Declaration::new("text/v1", "Text").with_execute_tool::<OtherRun>(),
    ));
    assert!(error.contains("OtherRun") && error.contains("`script`"), "{error}");
    let error = build_error(Text::new(
        Declaration::new("text/v1", "Text").with_execute_tool::<TextCheck>(),
    ));
    assert!(
        error.contains("TextCheck") && error.contains("validate tool"),
        "{error}"
    );
    let error = build_error(Text::new(
        Declaration::new("text/v1", "Text").with_execute_tool::<TestRunTool>(),
    ));
    assert!(error.contains("TestRunTool") && error.contains("`test_run`"), "{error}");
    // Declared, the same struct builds.
    let declaration = Declaration::new("text/v1", "Text")
        .with_test_run()
        .with_execute_tool::<TestRunTool>();
    assert!(Engine::builder("e", "1")
        .language(Text::new(declaration))
        .build()
        .is_ok());
}

#[test]
fn effect_hints_follow_from_the_catalog() {
    let hints = |entries: Vec<RiskHints>| {
        let mut text = Text::new(Declaration::new("text/v1", "Text"));
        let entries = entries
            .into_iter()
            .enumerate()
            .map(|(i, h)| CatalogEntry::new(format!("e{i}"), "operation", "E", "r", h));
        text.catalog = Some(Arc::new(Catalog::new("1", entries)));
        let engine = engine(text);
        let tool = engine
            .tools()
            .iter()
            .find(|t| t.name == "text_v1_execute")
            .unwrap()
            .clone();
        let annotations = serde_json::to_value(tool.annotations.unwrap()).unwrap();
        (
            annotations["readOnlyHint"].clone(),
            annotations["destructiveHint"].clone(),
        )
    };
    let read_only = RiskHints::new().with_read_only(true);
    let writes = RiskHints::new();
    let destroys = RiskHints::new().with_destructive(true);
    assert_eq!(
        hints(vec![read_only.clone(), read_only.clone()]),
        (json!(true), json!(false))
    );
    assert_eq!(
        hints(vec![read_only.clone(), writes.clone()]),
        (json!(false), json!(false))
    );
    assert_eq!(hints(vec![writes, destroys]), (json!(false), json!(true)));
}

#[test]
fn guides_from_markdown_carry_their_topics_and_the_serving_language() {
    let engine = engine(Text::new(Declaration::new("text/v1", "Text").with_topic_fetch()));
    let (_, index) = call(&engine, "pilotage_get_guide", json!({"language": "text/v1"})).unwrap();
    let guide = &index["guides"][0];
    assert_eq!(guide["topics"], json!(["steps", "repeat"]), "{index:#}");
    assert_eq!(guide["language"], "text/v1");
    assert!(guide["version"].as_str().unwrap().starts_with("sha-"));
    let (_, topic) = call(
        &engine,
        "pilotage_get_guide",
        json!({"language": "text/v1", "id": "intro", "topic": "repeat"}),
    )
    .unwrap();
    assert_eq!(topic["guide"]["body"], "## repeat\nRuns the steps again.", "{topic:#}");
}
