//! The probes of `pilotage check`, one function per group, each recording the rules it
//! checked, its findings, and why it skipped what it could not check. Every result passes
//! through [`Run::call`], which checks the envelope (Part III 6, 7.2) on the way.

use std::collections::{BTreeMap, BTreeSet};

use pilotage_client::{ClientError, Discovery, PilotageClient, RawResult};
use pilotage_types::{
    parse, Capability, CatalogListResult, ExecuteResponse, Execution, Guide, GuideFetchResult, GuideIndexResult,
    LanguageEntry, Manifest, RequestError, RequestErrorKind, TraceFetchResponse, TraceLevel, CATALOG_TOOL,
    GET_GUIDE_TOOL, MANIFEST_TOOL,
};
use serde_json::{json, Value};

use super::rules::*;
use super::Settings;
use crate::lint::{Finding, Rule};

/// Values no server knows, so that the probes reach the not-found and invalid paths.
const UNKNOWN_LANGUAGE: &str = "pilotage-check/unknown";
const UNKNOWN_ID: &str = "pilotage-check-unknown-id";
const UNKNOWN_LEVEL: &str = "pilotage-check-unknown-level";
const UNKNOWN_MODE: &str = "pilotage-check-unknown-mode";
/// The `idempotency_key` sent to an execute tool whose Language does not declare
/// `execute.idempotency` (Part III 7.1).
const PROBE_IDEMPOTENCY_KEY: &str = "pilotage-check-idempotency-key";
/// The `question` sent to a trace tool whose Language does not declare `trace_fetch.narrate`.
const PROBE_QUESTION: &str = "pilotage check: what did this run do?";

/// The kinds that refuse an argument requiring an undeclared sub-feature, or `program_ref`
/// where it is not declared (Part III 4.6, 7.1).
const REFUSALS: &[RequestErrorKind] = &[RequestErrorKind::Unsupported, RequestErrorKind::InvalidRequest];

/// `value` as JSON, cut to about 200 characters for a finding.
fn abbreviated(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(200) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text,
    }
}

/// One run of the probes against one connected server.
pub(super) struct Run<'a> {
    client: &'a mut PilotageClient,
    discovery: &'a Discovery,
    settings: &'a Settings,
    pub findings: Vec<Finding>,
    pub skipped: BTreeMap<&'static str, String>,
    pub checked: BTreeSet<&'static str>,
    /// Per Language, a run the probes executed and fetched again (for the probes of the trace
    /// tool that need a run that exists).
    kept_runs: BTreeMap<String, String>,
}

/// What a tool answered, for the probes: the channel and the content.
enum Answer {
    Response(Value),
    RequestError(RequestError),
    Carrier(i32, String),
    /// No structuredContent (already a finding).
    Broken,
}

impl<'a> Run<'a> {
    pub(super) fn new(client: &'a mut PilotageClient, discovery: &'a Discovery, settings: &'a Settings) -> Self {
        Self {
            client,
            discovery,
            settings,
            findings: Vec::new(),
            skipped: BTreeMap::new(),
            checked: BTreeSet::new(),
            kept_runs: BTreeMap::new(),
        }
    }

    /// Whether `language` declares the sub-feature `name` of `capability` (Part II 4.2).
    fn declares_sub_feature(&self, language: &LanguageEntry, capability: Capability, name: &str) -> bool {
        self.discovery
            .manifest
            .effective_capabilities(language)
            .is_some_and(|c| c.declares_sub_feature(capability, name))
    }

    fn fail(&mut self, rule: &'static Rule, tool: &str, message: String) {
        self.checked.insert(rule.id);
        self.findings.push(Finding::new(rule, message).tool(tool));
    }

    fn skip(&mut self, rule: &'static Rule, reason: impl Into<String>) {
        if !self.checked.contains(rule.id) {
            self.skipped.entry(rule.id).or_insert_with(|| reason.into());
        }
    }

    /// Calls `tool` and checks the envelope: structuredContent present and valid (pinned)
    /// against the tool's outputSchema (10.1-8), a request error with isError true and a
    /// closed kind, no request error with isError false (10.1-9).
    async fn call(&mut self, tool: &str, arguments: Value) -> Result<Answer, ClientError> {
        let members = arguments.as_object().cloned().unwrap_or_default();
        let raw = self.client.call_raw(tool, members).await?;
        self.checked.insert(STRUCTURED_CONTENT.id);
        self.checked.insert(REQUEST_ERROR_CHANNEL.id);
        let (is_error, content) = match raw {
            RawResult::Error { code, message } => return Ok(Answer::Carrier(code, message)),
            RawResult::Result {
                structured_content: None,
                is_error,
            } => {
                self.fail(
                    &STRUCTURED_CONTENT,
                    tool,
                    format!("a result without structuredContent (isError: {is_error}) to {arguments}"),
                );
                return Ok(Answer::Broken);
            }
            RawResult::Result {
                is_error,
                structured_content: Some(content),
            } => (is_error, content),
        };
        // Part III 6: the union of the tool's kind, whatever outputSchema it declares (or
        // omits); a declared outputSchema is checked in addition.
        if let Some(kind) = self.discovery.tool_kind(tool) {
            if let Err(errors) = kind.validate_output(&content) {
                let violations: Vec<String> = errors.violations.iter().take(3).map(ToString::to_string).collect();
                self.fail(
                    &STRUCTURED_CONTENT,
                    tool,
                    format!(
                        "structuredContent is not a {} (Part III 6): {}; it was {}",
                        kind.output_def(),
                        violations.join("; "),
                        abbreviated(&content)
                    ),
                );
            }
        }
        if let Some(schema) = self.discovery.tool(tool).and_then(|t| t.get("outputSchema")) {
            match jsonschema::validator_for(schema) {
                Ok(validator) if !validator.is_valid(&content) => self.fail(
                    &STRUCTURED_CONTENT,
                    tool,
                    format!("structuredContent does not validate against the tool's outputSchema: {content}"),
                ),
                Ok(_) => {}
                Err(e) => self.fail(
                    &STRUCTURED_CONTENT,
                    tool,
                    format!("the outputSchema does not compile: {e}"),
                ),
            }
        }
        let request_error = parse::<RequestError>(&content);
        match (is_error, request_error) {
            (true, Ok(error)) => Ok(Answer::RequestError(error)),
            (true, Err(e)) => {
                let kind = content.pointer("/error/kind").cloned().unwrap_or(Value::Null);
                let message = if kind.is_string() {
                    format!("isError true with a request-error kind outside the closed set of Part III 7.2: {kind}")
                } else {
                    format!("isError true but structuredContent is not a request error: {e}")
                };
                self.fail(&REQUEST_ERROR_CHANNEL, tool, message);
                Ok(Answer::Broken)
            }
            (false, Ok(_)) => {
                self.fail(
                    &REQUEST_ERROR_CHANNEL,
                    tool,
                    format!("a request error with isError false: {content}"),
                );
                Ok(Answer::Broken)
            }
            (false, Err(_)) => Ok(Answer::Response(content)),
        }
    }

    /// Checks that `answer` is a request error of `kind` (never a carrier error).
    fn expect_request_error(
        &mut self,
        rule: &'static Rule,
        tool: &str,
        sent: &Value,
        answer: Answer,
        kind: RequestErrorKind,
    ) {
        self.checked.insert(rule.id);
        let problem = match answer {
            Answer::RequestError(error) if error.error.kind == kind => return,
            Answer::RequestError(error) => format!("a request error of kind {}, not {kind}", error.error.kind),
            Answer::Carrier(code, message) => format!("a JSON-RPC error {code} ({message}), not a request error"),
            Answer::Response(content) => format!("a response ({content}), not a request error"),
            Answer::Broken => return,
        };
        self.fail(
            rule,
            tool,
            format!("{sent} answered {problem}: expected {kind} with isError true"),
        );
    }

    /// Checks that `answer` refuses what `refused` describes (an argument the Language does
    /// not declare): a request error of one of `kinds`, never a response (the argument
    /// ignored: a Run, a trace) nor a carrier error.
    fn expect_refusal(
        &mut self,
        rule: &'static Rule,
        tool: &str,
        sent: &Value,
        answer: Answer,
        refused: &str,
        kinds: &[RequestErrorKind],
    ) {
        self.checked.insert(rule.id);
        let problem = match answer {
            Answer::RequestError(error) if kinds.contains(&error.error.kind) => return,
            Answer::RequestError(error) => {
                format!("a request error of kind {} ({})", error.error.kind, error.error.message)
            }
            Answer::Carrier(code, message) => format!("a JSON-RPC error {code} ({message}), not a request error"),
            Answer::Response(content) => {
                let what = match self.discovery.tool_kind(tool) {
                    Some(pilotage_types::ToolKind::Execute) => "an execute response (a Run)",
                    Some(pilotage_types::ToolKind::Trace) => "a trace fetch response",
                    _ => "a response",
                };
                format!("{what}, the argument ignored: {}", abbreviated(&content))
            }
            Answer::Broken => return,
        };
        let expected: Vec<String> = kinds.iter().map(ToString::to_string).collect();
        self.fail(
            rule,
            tool,
            format!(
                "{refused}: {sent} answered {problem}; expected a request error of kind {} with isError true",
                expected.join(" or ")
            ),
        );
    }

    pub(super) async fn all(&mut self) -> Result<(), ClientError> {
        self.manifest().await?;
        let languages = self.discovery.manifest.languages.clone();
        for language in &languages {
            self.guides(language).await?;
            self.catalog(language).await?;
            self.validate(language).await?;
            self.execute(language).await?;
            self.trace(language).await?;
            self.resources(language).await?;
        }
        for rule in [
            &RESOURCES_EQUAL,
            &CATALOG_LIST,
            &CATALOG_NOT_FOUND,
            &DESTRUCTIVE_HINT,
            &MODE_VALUE,
        ] {
            self.skip(rule, "no Language of this server has what this probe needs");
        }
        Ok(())
    }

    async fn manifest(&mut self) -> Result<(), ClientError> {
        self.checked.insert(MANIFEST_TOOL_ANSWERS.id);
        match self.call(MANIFEST_TOOL, json!({})).await? {
            Answer::Response(content) => {
                if let Err(e) = parse::<Manifest>(&content) {
                    self.fail(
                        &MANIFEST_TOOL_ANSWERS,
                        MANIFEST_TOOL,
                        format!("not a valid manifest: {e}"),
                    );
                }
            }
            Answer::Broken => {}
            _ => self.fail(
                &MANIFEST_TOOL_ANSWERS,
                MANIFEST_TOOL,
                "answered an error, not the manifest".to_owned(),
            ),
        }
        Ok(())
    }

    async fn guides(&mut self, language: &LanguageEntry) -> Result<(), ClientError> {
        let name = language.name.0.clone();
        self.checked.insert(GUIDE_FORMS.id);
        let index = self.call(GET_GUIDE_TOOL, json!({"language": name})).await?;
        let listed: Vec<Guide> = match index {
            Answer::Response(content) => match parse::<GuideIndexResult>(&content) {
                Ok(index) if index.guides.iter().all(|g| g.body.is_none()) => index.guides,
                Ok(_) => {
                    self.fail(
                        &GUIDE_FORMS,
                        GET_GUIDE_TOOL,
                        format!("the index of {name} carries a body"),
                    );
                    Vec::new()
                }
                Err(e) => {
                    self.fail(
                        &GUIDE_FORMS,
                        GET_GUIDE_TOOL,
                        format!("the index of {name} is not the index form: {e}"),
                    );
                    Vec::new()
                }
            },
            Answer::Broken => Vec::new(),
            _ => {
                self.fail(
                    &GUIDE_FORMS,
                    GET_GUIDE_TOOL,
                    format!("the index of {name} answered an error"),
                );
                Vec::new()
            }
        };
        if let Some(id) = listed.first().map(|g| g.id.clone()) {
            // A guide the index lists is fetched: an error here breaks the fetch form too.
            let problem = match self.call(GET_GUIDE_TOOL, json!({"language": name, "id": id})).await? {
                Answer::Response(content) => match parse::<GuideFetchResult>(&content) {
                    Ok(fetched) if fetched.guide.body.is_some() => None,
                    _ => Some(format!("not the fetch form with a body: {content}")),
                },
                Answer::RequestError(error) => Some(format!("a request error of kind {}", error.error.kind)),
                Answer::Carrier(code, message) => Some(format!("a JSON-RPC error {code} ({message})")),
                Answer::Broken => None,
            };
            if let Some(problem) = problem {
                self.fail(
                    &GUIDE_FORMS,
                    GET_GUIDE_TOOL,
                    format!("guide {id} of {name}, listed by its index, answered {problem}"),
                );
            }
        }
        if self.declares_sub_feature(language, Capability::Guides, "topic_fetch") {
            self.topics(&name, &listed).await?;
        }
        for arguments in [
            json!({"language": UNKNOWN_LANGUAGE}),
            json!({"language": name, "id": UNKNOWN_ID}),
        ] {
            let answer = self.call(GET_GUIDE_TOOL, arguments.clone()).await?;
            self.expect_request_error(
                &GUIDE_NOT_FOUND,
                GET_GUIDE_TOOL,
                &arguments,
                answer,
                RequestErrorKind::NotFound,
            );
        }
        Ok(())
    }

    /// With `guides.topic_fetch` declared, every topic an index entry lists is fetched in the
    /// topic form (Part III 4.1): the fetch form of that guide, with a body.
    async fn topics(&mut self, name: &str, listed: &[Guide]) -> Result<(), ClientError> {
        for guide in listed {
            for topic in &guide.topics {
                let sent = json!({"language": name, "id": guide.id, "topic": topic});
                let problem = match self.call(GET_GUIDE_TOOL, sent.clone()).await? {
                    Answer::Response(content) => match parse::<GuideFetchResult>(&content) {
                        Ok(fetched) if fetched.guide.id == guide.id && fetched.guide.body.is_some() => None,
                        Ok(fetched) if fetched.guide.id != guide.id => {
                            Some(format!("guide {} instead", fetched.guide.id))
                        }
                        _ => Some(format!("not the topic form with a body: {}", abbreviated(&content))),
                    },
                    Answer::RequestError(error) => Some(format!(
                        "a request error of kind {} ({})",
                        error.error.kind, error.error.message
                    )),
                    Answer::Carrier(code, message) => Some(format!("a JSON-RPC error {code} ({message})")),
                    Answer::Broken => None,
                };
                if let Some(problem) = problem {
                    self.fail(
                        &GUIDE_FORMS,
                        GET_GUIDE_TOOL,
                        format!(
                            "topic {topic:?} of guide {} of {name}, listed by the guide's index entry, \
                             answered {problem}; {name} declares guides.topic_fetch, so each listed topic \
                             is a `## {topic}` section it serves",
                            guide.id
                        ),
                    );
                }
            }
        }
        Ok(())
    }

    fn declares_catalog(&self, language: &LanguageEntry) -> bool {
        self.discovery
            .manifest
            .effective_capabilities(language)
            .is_some_and(|c| c.declares(pilotage_types::Capability::Catalog))
            && self.discovery.tool(CATALOG_TOOL).is_some()
    }

    async fn catalog(&mut self, language: &LanguageEntry) -> Result<(), ClientError> {
        if !self.declares_catalog(language) {
            return Ok(());
        }
        let name = language.name.0.clone();
        self.checked.insert(CATALOG_LIST.id);
        let list = match self
            .call(CATALOG_TOOL, json!({"language": name, "verb": "list"}))
            .await?
        {
            Answer::Response(content) => match parse::<CatalogListResult>(&content) {
                Ok(list) => Some(list),
                Err(e) => {
                    self.fail(&CATALOG_LIST, CATALOG_TOOL, format!("the list of {name}: {e}"));
                    None
                }
            },
            Answer::Broken => None,
            _ => {
                self.fail(
                    &CATALOG_LIST,
                    CATALOG_TOOL,
                    format!("the list of {name} answered an error"),
                );
                None
            }
        };
        let sent = json!({"language": name, "verb": "get", "id": UNKNOWN_ID});
        let answer = self.call(CATALOG_TOOL, sent.clone()).await?;
        if let Answer::RequestError(error) = &answer {
            if error.catalog_version.is_none() {
                self.fail(
                    &CATALOG_NOT_FOUND,
                    CATALOG_TOOL,
                    format!("{sent}: the request error carries no catalog_version"),
                );
            }
        }
        self.expect_request_error(
            &CATALOG_NOT_FOUND,
            CATALOG_TOOL,
            &sent,
            answer,
            RequestErrorKind::NotFound,
        );
        if let (Some(list), Some(execute)) = (list, language.loop_.execute.clone()) {
            self.checked.insert(DESTRUCTIVE_HINT.id);
            let destructive: Vec<String> = list
                .items
                .iter()
                .filter(|e| e.risk_hints.destructive)
                .map(|e| e.id.clone())
                .collect();
            let claims_safe = self
                .discovery
                .tool(&execute)
                .and_then(|t| t.pointer("/annotations/destructiveHint"))
                == Some(&Value::Bool(false));
            if claims_safe && !destructive.is_empty() {
                self.fail(
                    &DESTRUCTIVE_HINT,
                    &execute,
                    format!(
                        "destructiveHint is false, but {name} can call destructive entries: {}",
                        destructive.join(", ")
                    ),
                );
            }
        }
        Ok(())
    }

    /// The program argument of `tool` for the Language, and the JSON type its schema declares.
    fn program_argument(&self, tool: &str, language: &str) -> Option<(String, Value)> {
        let listed = self.discovery.tool(tool)?;
        let argument = pilotage_client::request::program_argument(listed, language)?;
        let ty = listed
            .pointer(&format!("/inputSchema/properties/{argument}/type"))
            .cloned()
            .unwrap_or(Value::Null);
        let probe = match ty
            .as_str()
            .or_else(|| ty.as_array().and_then(|a| a.iter().find_map(Value::as_str)))
        {
            Some("array") => json!([]),
            Some("string") => json!(""),
            Some("integer" | "number") => json!(0),
            Some("boolean") => json!(false),
            _ => json!({}),
        };
        Some((argument, probe))
    }

    async fn validate(&mut self, language: &LanguageEntry) -> Result<(), ClientError> {
        let name = language.name.0.clone();
        let tool = language.loop_.validate.clone();
        let Some((argument, probe)) = self.program_argument(&tool, &name) else {
            self.skip(
                &INVALID_PROGRAM,
                format!("{tool} declares no program argument for {name}"),
            );
            return Ok(());
        };
        let program = self.settings.invalid_programs.get(&name).cloned().unwrap_or(probe);
        let sent = json!({ argument: program });
        self.checked.insert(INVALID_PROGRAM.id);
        match self.call(&tool, sent.clone()).await? {
            Answer::Response(content) => {
                if let Err(e) = parse::<pilotage_types::ValidateResponse>(&content) {
                    self.fail(&INVALID_PROGRAM, &tool, format!("{sent}: not a ValidateResponse: {e}"));
                }
            }
            Answer::RequestError(error) => self.fail(
                &INVALID_PROGRAM,
                &tool,
                format!(
                    "{sent}: a request error ({}) where program findings belong in diagnostics",
                    error.error.kind
                ),
            ),
            Answer::Carrier(code, message) => self.fail(
                &INVALID_PROGRAM,
                &tool,
                format!("{sent}: a JSON-RPC error {code} ({message}) where program findings belong in diagnostics"),
            ),
            Answer::Broken => {}
        }
        Ok(())
    }

    /// Whether a probe may send `tool` a runnable program: only with `--allow-execute`, or
    /// when the tool claims no destructive effect.
    fn may_run(&self, tool: &str) -> bool {
        let claims_safe = self.discovery.tool(tool).is_some_and(|t| {
            t.pointer("/annotations/destructiveHint") == Some(&Value::Bool(false))
                || t.pointer("/annotations/readOnlyHint") == Some(&Value::Bool(true))
        });
        self.settings.allow_execute || claims_safe
    }

    async fn execute(&mut self, language: &LanguageEntry) -> Result<(), ClientError> {
        let name = language.name.0.clone();
        let Some(tool) = language.loop_.execute.clone() else {
            return Ok(());
        };
        let both = language.execution == Some(Execution::Both);
        let declares_ref = self
            .discovery
            .tool(&tool)
            .and_then(|t| t.pointer("/inputSchema/properties/program_ref"))
            .is_some();
        // The arguments that need a sub-feature of execute the Language does not declare
        // (Part III 7.1): each is sent with a program, so only with leave to run one.
        let undeclared: Vec<(&str, &str, Value)> = [
            ("test_run", "test_run", json!(true)),
            ("idempotency_key", "idempotency", json!(PROBE_IDEMPOTENCY_KEY)),
        ]
        .into_iter()
        .filter(|(_, feature, _)| !self.declares_sub_feature(language, Capability::Execute, feature))
        .collect();
        // No runnable at all: nothing can start, whatever the server does with the rest. Where
        // execution is both, a valid mode goes along, so that only the rule probed is broken
        // (a missing mode is an invalid_request of its own, 4.4).
        for (rule, mut sent) in [
            (&UNKNOWN_TRACE_LEVEL, json!({"trace_level": UNKNOWN_LEVEL})),
            (&RUNNABLE_SELECTION, json!({})),
        ] {
            if both {
                sent["mode"] = json!("immediate");
            }
            let answer = self.call(&tool, sent.clone()).await?;
            self.expect_request_error(rule, &tool, &sent, answer, RequestErrorKind::InvalidRequest);
        }
        if !declares_ref {
            // A reference no server knows, to a tool that does not take references: nothing
            // runnable is sent. Ignoring the member leaves "neither" (invalid_request);
            // refusing it is unsupported.
            let mut sent = json!({"program_ref": UNKNOWN_ID});
            if both {
                sent["mode"] = json!("immediate");
            }
            let answer = self.call(&tool, sent.clone()).await?;
            self.expect_refusal(
                &RUNNABLE_SELECTION,
                &tool,
                &sent,
                answer,
                &format!("program_ref alone, which {tool} does not declare"),
                REFUSALS,
            );
        }
        let argument = self.program_argument(&tool, &name);
        let Some((argument, probe)) = argument else {
            let why = format!("{tool} declares no program argument for {name}");
            self.skip(&MODE_VALUE, why.clone());
            if !undeclared.is_empty() {
                self.skip(&UNDECLARED_SUB_FEATURE, why);
            }
            return Ok(());
        };
        let program = self.settings.programs.get(&name).cloned().unwrap_or(probe);
        if !self.may_run(&tool) {
            let why = format!("{tool} may be destructive: run with --allow-execute to send it a program");
            self.skip(&MODE_VALUE, why.clone());
            self.skip(&FAILED_RUN, why.clone());
            if !undeclared.is_empty() {
                self.skip(&UNDECLARED_SUB_FEATURE, why.clone());
            }
            self.skip(&RUN_AND_TRACE, why);
            return Ok(());
        }
        if !declares_ref {
            // Both runnables, program_ref undeclared: never the program run with the reference
            // ignored.
            let mut sent = json!({ argument.clone(): program.clone(), "program_ref": UNKNOWN_ID });
            if both {
                sent["mode"] = json!("immediate");
            }
            let answer = self.call(&tool, sent.clone()).await?;
            self.expect_refusal(
                &RUNNABLE_SELECTION,
                &tool,
                &sent,
                answer,
                &format!("a program and program_ref, which {tool} does not declare"),
                REFUSALS,
            );
        }
        for (member, feature, value) in undeclared {
            let mut sent = json!({ argument.clone(): program.clone(), member: value });
            if both {
                sent["mode"] = json!("immediate");
            }
            let answer = self.call(&tool, sent.clone()).await?;
            self.expect_refusal(
                &UNDECLARED_SUB_FEATURE,
                &tool,
                &sent,
                answer,
                &format!("`{member}` needs execute.{feature}, which {name} does not declare"),
                REFUSALS,
            );
        }
        if declares_ref {
            let mut sent = json!({ argument.clone(): program.clone(), "program_ref": UNKNOWN_ID });
            if both {
                sent["mode"] = json!("immediate");
            }
            let answer = self.call(&tool, sent.clone()).await?;
            self.expect_request_error(
                &RUNNABLE_SELECTION,
                &tool,
                &sent,
                answer,
                RequestErrorKind::InvalidRequest,
            );
        }
        if both {
            for sent in [
                json!({ argument.clone(): program.clone() }),
                json!({ argument.clone(): program.clone(), "mode": UNKNOWN_MODE }),
            ] {
                let answer = self.call(&tool, sent.clone()).await?;
                self.expect_request_error(&MODE_VALUE, &tool, &sent, answer, RequestErrorKind::InvalidRequest);
            }
        }
        self.failed_run(language, &tool, &argument, both).await?;
        self.runs(language, &tool, &argument, both).await
    }

    /// The arguments of a Run of `program` at `level`: the Language's `--input` if any, and a
    /// valid `mode` where execution is both.
    fn run_arguments(&self, language: &str, argument: &str, program: Value, level: &str, both: bool) -> Value {
        let mut sent = json!({ argument: program, "trace_level": level });
        if let Some(input) = self.settings.inputs.get(language) {
            sent["input"] = input.clone();
        }
        if both {
            sent["mode"] = json!("immediate");
        }
        sent
    }

    /// With `--allow-execute` and a failing program for the Language: its failed Run is a
    /// response with `ok: false` and `isError: false` (Part III 6, 7.1).
    async fn failed_run(
        &mut self,
        language: &LanguageEntry,
        tool: &str,
        argument: &str,
        both: bool,
    ) -> Result<(), ClientError> {
        let name = language.name.0.clone();
        let Some(program) = self.settings.failing_programs.get(&name).cloned() else {
            self.skip(&FAILED_RUN, format!("no --failing-program {name}=FILE to run"));
            return Ok(());
        };
        if !self.settings.allow_execute {
            self.skip(&FAILED_RUN, "probes that run programs need --allow-execute");
            return Ok(());
        }
        let sent = self.run_arguments(&name, argument, program, "none", both);
        let problem = match self.call(tool, sent.clone()).await? {
            Answer::Response(content) => match parse::<ExecuteResponse>(&content) {
                Ok(response) if !response.outcome.ok => None,
                Ok(_) => {
                    self.skip(
                        &FAILED_RUN,
                        format!("the --failing-program of {name} did not fail: its Run answered ok: true"),
                    );
                    return Ok(());
                }
                Err(e) => Some(format!("a response that is not an ExecuteResponse ({e})")),
            },
            Answer::RequestError(error) => Some(format!("a request error of kind {}", error.error.kind)),
            Answer::Carrier(code, message) => Some(format!("a JSON-RPC error {code} ({message})")),
            // isError true on an outcome (a 10.1-9 finding), or no structuredContent at all.
            Answer::Broken => Some("no response with structuredContent and isError false".to_owned()),
        };
        self.checked.insert(FAILED_RUN.id);
        if let Some(problem) = problem {
            self.fail(
                &FAILED_RUN,
                tool,
                format!("{sent}: {problem}, where a failed Run is an outcome with ok: false and isError: false"),
            );
        }
        Ok(())
    }

    /// With `--allow-execute` and a program for the Language: a Run at each trace level, and
    /// the trace fetch of one.
    async fn runs(
        &mut self,
        language: &LanguageEntry,
        tool: &str,
        argument: &str,
        both: bool,
    ) -> Result<(), ClientError> {
        let name = language.name.0.clone();
        let Some(program) = self.settings.programs.get(&name).cloned() else {
            self.skip(&RUN_AND_TRACE, format!("no --program {name}=FILE to run"));
            return Ok(());
        };
        if !self.settings.allow_execute {
            self.skip(&RUN_AND_TRACE, "probes that run programs need --allow-execute");
            return Ok(());
        }
        self.checked.insert(RUN_AND_TRACE.id);
        let declared = language.trace.clone().unwrap_or(TraceLevel::Full);
        let mut stored = None;
        for level in ["none", "summary", "full"] {
            let sent = self.run_arguments(&name, argument, program.clone(), level, both);
            let Answer::Response(content) = self.call(tool, sent.clone()).await? else {
                self.fail(&RUN_AND_TRACE, tool, format!("{sent}: no execute response"));
                continue;
            };
            let Ok(response) = parse::<ExecuteResponse>(&content) else {
                self.fail(
                    &RUN_AND_TRACE,
                    tool,
                    format!("{sent}: not an ExecuteResponse: {content}"),
                );
                continue;
            };
            let expected = match level {
                "none" => None,
                "summary" => Some(TraceLevel::Summary),
                _ => Some(if declared == TraceLevel::Summary {
                    TraceLevel::Summary
                } else {
                    TraceLevel::Full
                }),
            };
            let started = response.outcome.status != pilotage_types::VALIDATION_ERROR_STATUS;
            let got = response.trace.as_ref().map(|t| t.level.clone());
            if started && got != expected {
                self.fail(
                    &RUN_AND_TRACE,
                    tool,
                    format!("trace_level {level}: the response's trace is {got:?}, expected {expected:?}"),
                );
            }
            if started {
                stored = Some(response.run_id.clone());
            }
        }
        let retains = language.retention.as_ref().is_none_or(|r| r.0 != "none");
        if let (Some(run_id), Some(trace_tool), true) = (stored, language.loop_.trace.clone(), retains) {
            let sent = json!({"run_id": run_id, "trace_level": "summary"});
            match self.call(&trace_tool, sent.clone()).await? {
                Answer::Response(content) => match parse::<TraceFetchResponse>(&content) {
                    Ok(fetched) if fetched.run_id == run_id && fetched.trace.level == TraceLevel::Summary => {
                        self.kept_runs.insert(name.clone(), run_id.clone());
                    }
                    Ok(fetched) => self.fail(
                        &RUN_AND_TRACE,
                        &trace_tool,
                        format!(
                            "{sent}: run {} at {}, expected run {run_id} at summary",
                            fetched.run_id, fetched.trace.level
                        ),
                    ),
                    Err(e) => self.fail(&RUN_AND_TRACE, &trace_tool, format!("{sent}: {e}")),
                },
                _ => self.fail(
                    &RUN_AND_TRACE,
                    &trace_tool,
                    format!("{sent}: the retained run was not found"),
                ),
            }
        }
        Ok(())
    }

    async fn trace(&mut self, language: &LanguageEntry) -> Result<(), ClientError> {
        let Some(tool) = language.loop_.trace.clone() else {
            return Ok(());
        };
        let sent = json!({"run_id": UNKNOWN_ID});
        let answer = self.call(&tool, sent.clone()).await?;
        self.expect_request_error(&UNKNOWN_RUN, &tool, &sent, answer, RequestErrorKind::NotFound);
        if !self.declares_sub_feature(language, Capability::TraceFetch, "narrate") {
            // A question about a run that exists (one the run probes kept), so that only the
            // undeclared argument can be refused; without one, about an unknown run, where
            // not_found is a fair answer too.
            let name = language.name.0.clone();
            let kept = self.kept_runs.get(&name).cloned();
            let sent = json!({
                "run_id": kept.as_deref().unwrap_or(UNKNOWN_ID),
                "question": PROBE_QUESTION,
            });
            let answer = self.call(&tool, sent.clone()).await?;
            let mut kinds = REFUSALS.to_vec();
            if kept.is_none() {
                kinds.push(RequestErrorKind::NotFound);
            }
            self.expect_refusal(
                &UNDECLARED_SUB_FEATURE,
                &tool,
                &sent,
                answer,
                &format!("`question` needs trace_fetch.narrate, which {name} does not declare"),
                &kinds,
            );
        }
        Ok(())
    }

    async fn resources(&mut self, language: &LanguageEntry) -> Result<(), ClientError> {
        let name = language.name.0.clone();
        let pairs = [
            (
                language.guides_resource.clone(),
                GET_GUIDE_TOOL,
                json!({"language": name}),
            ),
            (
                language.catalog_resource.clone(),
                CATALOG_TOOL,
                json!({"language": name, "verb": "list"}),
            ),
        ];
        for (uri, tool, arguments) in pairs {
            let Some(uri) = uri else { continue };
            self.checked.insert(RESOURCES_EQUAL.id);
            let read = match self.client.read_json_resource(&uri).await {
                Ok(read) => read,
                Err(ClientError::Timeout { what, after }) => return Err(ClientError::Timeout { what, after }),
                Err(e) => {
                    self.fail(&RESOURCES_EQUAL, tool, format!("{uri}: {e}"));
                    continue;
                }
            };
            if let Answer::Response(content) = self.call(tool, arguments.clone()).await? {
                if content != read {
                    self.fail(
                        &RESOURCES_EQUAL,
                        tool,
                        format!("{uri} differs from the {tool} response to {arguments}"),
                    );
                }
            }
        }
        Ok(())
    }
}
