//! The Pilotage reference engine: an MCP server on the official Rust SDK (rmcp) that serves the
//! `workflow/v1` Language of Part III section 9, written the way an engine author would write
//! one with `pilotage-types`:
//!
//! - the loop tools are structs with `#[derive(PilotageTool)]` ([`ValidateWorkflow`],
//!   [`RunWorkflow`], [`TraceRun`]): their definitions obey Part III by construction, and
//!   `from_arguments` routes every fault to its Part III 7.1 channel;
//! - the access tools come ready-made ([`AccessTool`]), their arguments parsed into typed
//!   requests ([`GuideRequest`], [`CatalogRequest`]) checked against the manifest;
//! - every response is a generated type (`Manifest`, `ValidateResponse`, `ExecuteResponse`,
//!   `TraceFetchResponse`, guide and catalog results), turned into a `CallToolResult` by
//!   `pilotage_types::mcp`;
//! - discovery (3.2, 3.4, 1.2): the extension in `capabilities.extensions`, the manifest inline
//!   in `_meta`, the welcome text in `instructions` — on initialize, and on `server/discover`
//!   for the stateless 2026-07-28 revision (rmcp builds it from the same information);
//! - optionally ([`Options::resources`]) the guides and the catalog as resources (8.3), at the
//!   URIs the manifest names, with content equal to the tool responses;
//! - optionally ([`Options::execution_both`]) workflow/v1 declared with `"execution": "both"`,
//!   its execute tool then [`RunWorkflowBoth`], which requires `mode` (4.4);
//! - for testing conformance checkers, one deliberate fault at a time ([`Options::fault`],
//!   a [`Fault`]); without one the engine is conformant.
//!
//! The binary (`src/main.rs`) serves it over stdio or streamable HTTP.

pub mod catalog;
pub mod language;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pilotage_types::{
    mcp, AccessTool, CapabilityDeclaration, CapabilitySettings, CapabilityValue, CatalogChangedResult,
    CatalogGetResult, CatalogListResult, CatalogRequest, CatalogTool, ExecuteResponse, ExecuteTraceLevel, Execution,
    GuideFetchResult, GuideIndexResult, GuideRequest, GuidesTool, LanguageEntry, LanguageIdentifier, Locator,
    LoopObject, Manifest, Outcome, PilotageTool, RequestError, Retention, Stage, ToolDefinition, TraceFetchResponse,
    TraceLevel, ValidateResponse, EXTENSION_ID, META_KEY,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, DiscoverResult, ErrorData, ExtensionCapabilities,
    Implementation, InitializeRequestParams, InitializeResult, JsonObject, ListResourcesResult, ListToolsResult,
    MetaObject, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ServerCapabilities,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use serde_json::{Map, Value};

use catalog::{CATALOG_VERSION, LANGUAGE};

/// Check a workflow/v1 document against the catalog and preview its plan (validate stage).
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(stage = "validate", name = "validate_workflow", language = "workflow/v1")]
pub struct ValidateWorkflow {
    /// The workflow document: `{"steps": [...], "output": {...}}`.
    #[pilotage(program)]
    pub workflow: Map<String, Value>,
}

/// Execute a workflow document or a promoted workflow. Execute stage of workflow/v1: runs the
/// steps and returns the output, the outcome and, at `trace_level` summary or full, the trace.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(
    stage = "execute",
    name = "run_workflow",
    language = "workflow/v1",
    catalog,
    destructive,
    open_world
)]
pub struct RunWorkflow {
    /// The workflow document.
    #[pilotage(program)]
    pub workflow: Option<Map<String, Value>>,
    /// A promoted workflow (this engine has none yet).
    pub program_ref: Option<String>,
    /// The run's input, read by `$.input...` references.
    pub input: Option<Map<String, Value>>,
    /// none, summary or full. The generated open enum; its schema is the JSON type only
    /// (Part III 4.6), and the derive refuses unknown levels as request errors.
    #[schemars(with = "Option<String>")]
    pub trace_level: Option<ExecuteTraceLevel>,
    /// The catalog version the program was written against.
    pub expected_catalog_version: Option<String>,
    /// Retain the run for trace fetch (default: retained for PT1H).
    pub store: Option<bool>,
}

/// Execute a workflow document or a promoted workflow, immediately or by deployment (`mode`).
/// Execute stage of workflow/v1 when the engine declares `"execution": "both"`
/// ([`Options::execution_both`]): the same arguments as [`RunWorkflow`], and `mode`.
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(
    stage = "execute",
    name = "run_workflow",
    language = "workflow/v1",
    catalog,
    execution = "both",
    destructive,
    open_world
)]
pub struct RunWorkflowBoth {
    /// The workflow document.
    #[pilotage(program)]
    pub workflow: Option<Map<String, Value>>,
    /// A promoted workflow (this engine has none yet).
    pub program_ref: Option<String>,
    /// immediate (run now) or deploy. This engine has no deployment target: a deployed
    /// workflow runs at once, as an immediate one does.
    pub mode: Option<String>,
    /// The run's input, read by `$.input...` references.
    pub input: Option<Map<String, Value>>,
    /// none, summary or full (the JSON type only, Part III 4.6).
    #[schemars(with = "Option<String>")]
    pub trace_level: Option<ExecuteTraceLevel>,
    /// The catalog version the program was written against.
    pub expected_catalog_version: Option<String>,
    /// Retain the run for trace fetch (default: retained for PT1H).
    pub store: Option<bool>,
}

impl From<RunWorkflowBoth> for RunWorkflow {
    fn from(request: RunWorkflowBoth) -> Self {
        // The derive has checked `mode` (required, immediate or deploy); both run now.
        Self {
            workflow: request.workflow,
            program_ref: request.program_ref,
            input: request.input,
            trace_level: request.trace_level,
            expected_catalog_version: request.expected_catalog_version,
            store: request.store,
        }
    }
}

/// Fetch the stored trace of a workflow/v1 run by run_id (trace fetch stage).
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(stage = "trace", name = "trace_run", language = "workflow/v1")]
pub struct TraceRun {
    /// The run_id an execute response returned.
    pub run_id: String,
    /// summary or full.
    #[schemars(with = "Option<String>")]
    pub trace_level: Option<TraceLevel>,
}

/// How long runs are retained (the manifest's `retention`, an ISO 8601 duration: never
/// `session`, so the same declaration holds on stateless deployments, Part III 8.1).
pub const RETENTION: Duration = Duration::from_secs(3600);
/// [`RETENTION`] as the manifest declares it.
pub const RETENTION_DECLARED: &str = "PT1H";

/// The welcome text of Part III 3.4 (initialize `instructions`; `server/discover` carries it
/// too).
pub const INSTRUCTIONS: &str =
    "This server speaks Pilotage (io.github.jafarsa0/pilotage): call pilotage_manifest first. \
It lists the program Language workflow/v1 and its loop: learn with pilotage_get_guide, look up capabilities with \
pilotage_catalog, then validate_workflow, run_workflow and trace_run.";

/// A deliberate conformance fault (`--break NAME`), to show that a conformance checker such as
/// `pilotage check` catches it. Each changes exactly one behaviour of the engine; the name on
/// the command line is the variant's in kebab case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Fault {
    /// A guide fetch (`pilotage_get_guide` with an `id`) answers the index form of the
    /// Language instead of the guide with its body (4.1).
    GuideFetchIndexForm,
    /// The catalog `list` verb answers without `catalog_version` (4.2, Part II 6.3).
    CatalogListNoVersion,
    /// A catalog `get` of an unknown id answers `not_found` without the `catalog_version`
    /// sibling (4.2, 7.2).
    NotFoundNoCatalogVersion,
    /// With `--execution-both`: a missing or unrecognized `mode` runs the workflow
    /// immediately instead of being refused as `invalid_request` (4.4).
    ModeIgnored,
    /// `run_workflow` is annotated `destructiveHint: false` although the catalog has a
    /// destructive entry (4.5).
    DestructiveHintFalse,
    /// `run_workflow` given both `workflow` and `program_ref` runs the workflow instead of
    /// refusing the request as `invalid_request` (4.6).
    BothRunnablesRun,
    /// `run_workflow` given neither `workflow` nor `program_ref` runs an empty workflow
    /// instead of refusing the request as `invalid_request` (4.6).
    NeitherRunnableRuns,
    /// A trace fetch of an unknown `run_id` answers `invalid_request` instead of `not_found`
    /// (9.5).
    UnknownRunInvalidRequest,
    /// With `--resources`: the catalog resource carries the previous catalog version, so it
    /// differs from the `pilotage_catalog` list (8.3).
    StaleCatalogResource,
    /// A trace fetch answers the recorded (full) trace whatever level is asked, not
    /// min(requested, recorded) (Part II 6.6, through 4.3).
    TraceFetchFull,
    /// An execute response whose outcome is `ok: false` (a failed Run) is sent with
    /// `isError: true` (same structuredContent) (6, 7.1).
    FailedRunIsError,
}

/// What the engine serves, beyond the required surface.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Serve the guides and the catalog as MCP resources too (Part III 8.3).
    pub resources: bool,
    /// Hide the Pilotage tools from a client that did not declare the extension (Part III 1.3
    /// rule 3 allows it; the default exposes them to every client, rule 2).
    pub hide_from_undeclared: bool,
    /// Served over stateless HTTP: a handshake client's initialize was answered by another
    /// request, so only capabilities carried by the request itself (2026-07-28 `_meta`) are
    /// known.
    pub stateless_http: bool,
    /// Declare workflow/v1 with `"execution": "both"`: `run_workflow` is then
    /// [`RunWorkflowBoth`] and requires `mode` (Part III 4.4).
    pub execution_both: bool,
    /// One deliberate conformance fault; `None` (the default) is conformant.
    pub fault: Option<Fault>,
}

/// `name` percent-encoded as one RFC 3986 path segment (Part III 8.3: `/` becomes `%2F`).
pub fn path_segment(name: &str) -> String {
    name.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => char::from(b).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// The resource URI of the guide index of `language` (Part III 8.3).
pub fn guides_uri(language: &str) -> String {
    format!("pilotage://guides/{}", path_segment(language))
}

/// The resource URI of one guide (Part III 8.3).
pub fn guide_uri(language: &str, id: &str) -> String {
    format!("{}/{}", guides_uri(language), path_segment(id))
}

/// The resource URI of the catalog of `language` (Part III 8.3).
pub fn catalog_uri(language: &str) -> String {
    format!("pilotage://catalog/{}", path_segment(language))
}

struct StoredRun {
    response: ExecuteResponse,
    steps: Vec<pilotage_types::TraceStep>,
    stored_at: Instant,
}

/// The engine. Cloning it shares its state (the retained runs), so every HTTP session or
/// stateless request sees the same runs.
#[derive(Clone, Default)]
pub struct Engine {
    options: Options,
    runs: Arc<Mutex<HashMap<String, StoredRun>>>,
    counter: Arc<AtomicU64>,
}

type Response<T> = Result<T, RequestError>;

impl Engine {
    /// An engine with `options`.
    pub fn new(options: Options) -> Self {
        Self {
            options,
            ..Self::default()
        }
    }

    /// The manifest (Part II 5.1; the Language of Part III 9.1).
    pub fn manifest(&self) -> Manifest {
        let capabilities = CapabilityDeclaration::new()
            .with_guides(CapabilityValue::CapabilitySettings(
                CapabilitySettings::new().with_topic_fetch(true),
            ))
            .with_catalog(CapabilityValue::CapabilitySettings(
                CapabilitySettings::new().with_search(true).with_changed_since(true),
            ))
            .with_validate(true)
            .with_plan(true)
            .with_execute(true)
            .with_trace_fetch(true);
        let loop_tools = LoopObject::new(ValidateWorkflow::tool_definition().name.clone())
            .with_execute(RunWorkflow::tool_definition().name.clone())
            .with_trace(TraceRun::tool_definition().name.clone());
        let mut language = LanguageEntry::new(
            LanguageIdentifier(LANGUAGE.to_owned()),
            "Workflow documents",
            GuidesTool::PilotageGetGuide,
            loop_tools,
            Locator::JsonPointer,
        )
        .with_catalog(CatalogTool::PilotageCatalog)
        .with_capabilities(capabilities)
        .with_execution(if self.options.execution_both {
            Execution::Both
        } else {
            Execution::Immediate
        })
        .with_trace(TraceLevel::Full)
        .with_retention(Retention(RETENTION_DECLARED.to_owned()));
        if self.options.resources {
            language = language
                .with_guides_resource(guides_uri(LANGUAGE))
                .with_catalog_resource(catalog_uri(LANGUAGE));
        }
        Manifest::new(
            pilotage_types::VersionString(pilotage_types::PILOTAGE_VERSION.to_owned()),
            vec![language],
        )
    }

    /// Every tool of the default engine, in `tools/list` order.
    pub fn tools() -> Vec<&'static ToolDefinition> {
        vec![
            AccessTool::Manifest.definition(),
            AccessTool::GetGuide.definition(),
            AccessTool::Catalog.definition(),
            ValidateWorkflow::tool_definition(),
            RunWorkflow::tool_definition(),
            TraceRun::tool_definition(),
        ]
    }

    /// Every tool this engine serves, in `tools/list` order: [`Engine::tools`], with
    /// [`RunWorkflowBoth`] as the execute tool when execution is `both` (and the
    /// [`Fault::DestructiveHintFalse`] annotation when that fault is on).
    pub fn served_tools(&self) -> Vec<ToolDefinition> {
        Self::tools()
            .into_iter()
            .map(|tool| {
                if tool.name != RunWorkflow::tool_definition().name {
                    return tool.clone();
                }
                let mut execute = if self.options.execution_both {
                    RunWorkflowBoth::tool_definition().clone()
                } else {
                    tool.clone()
                };
                if self.options.fault == Some(Fault::DestructiveHintFalse) {
                    if let Some(annotations) = execute.annotations.as_mut() {
                        annotations.destructive_hint = Some(false);
                    }
                }
                execute
            })
            .collect()
    }

    /// The initialize result (and, on 2026-07-28, the content of `server/discover`): the
    /// extension declared, the welcome text, the manifest inline.
    pub fn info(&self) -> InitializeResult {
        let mut settings = JsonObject::new();
        settings.insert("version".into(), pilotage_types::PILOTAGE_VERSION.into());
        let extensions = ExtensionCapabilities::from([(EXTENSION_ID.to_owned(), settings)]);
        let capabilities = if self.options.resources {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_extensions_with(extensions)
                .build()
        } else {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_extensions_with(extensions)
                .build()
        };
        let mut info = InitializeResult::new(capabilities)
            .with_server_info(Implementation::new(
                "pilotage-reference-engine",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS);
        let mut meta = JsonObject::new();
        let inline = pilotage_types::InitializeMetaValue::new().with_manifest(self.manifest());
        meta.insert(META_KEY.to_owned(), to_value(&inline));
        info.meta = Some(MetaObject::from(meta));
        info
    }

    /// Handles one `tools/call`: the result, or a carrier error (Part III 7.1, 9.6).
    pub fn call(&self, name: &str, arguments: &Value) -> Result<CallToolResult, ErrorData> {
        let run_id = || self.next_run_id();
        Ok(match name {
            n if n == AccessTool::Manifest.name() => mcp::call_tool_result(Ok::<_, RequestError>(self.manifest())),
            n if n == AccessTool::GetGuide.name() => match GuideRequest::from_arguments(arguments, &self.manifest()) {
                Ok(request) => self.get_guide(&request),
                Err(fault) => return mcp::argument_fault(fault, Stage::Validate, run_id),
            },
            n if n == AccessTool::Catalog.name() => match CatalogRequest::from_arguments(arguments, &self.manifest()) {
                Ok(request) => self.lookup(&request),
                Err(fault) => {
                    return mcp::argument_fault(fault.with_catalog_version(CATALOG_VERSION), Stage::Validate, run_id)
                }
            },
            n if n == ValidateWorkflow::tool_definition().name => match ValidateWorkflow::from_arguments(arguments) {
                Ok(request) => mcp::call_tool_result(validate(&request)),
                Err(fault) => return mcp::argument_fault(fault, Stage::Validate, run_id),
            },
            n if n == RunWorkflow::tool_definition().name => {
                let arguments = self.faulty_execute_arguments(arguments);
                let request = if self.options.execution_both {
                    RunWorkflowBoth::from_arguments(&arguments).map(RunWorkflow::from)
                } else {
                    RunWorkflow::from_arguments(&arguments)
                };
                match request {
                    Ok(request) => self.execute_result(self.execute(request)),
                    Err(fault) => return mcp::argument_fault(fault, Stage::Execute, run_id),
                }
            }
            n if n == TraceRun::tool_definition().name => match TraceRun::from_arguments(arguments) {
                Ok(request) => mcp::call_tool_result(self.fetch(&request)),
                Err(fault) => return mcp::argument_fault(fault, Stage::Trace, run_id),
            },
            other => return Err(mcp::carrier_error(format!("Unknown tool: {other}"))),
        })
    }

    /// The execute arguments as the engine reads them: unchanged, unless a [`Fault`] rewrites
    /// them past the runnable selection or `mode` rule it breaks.
    fn faulty_execute_arguments(&self, arguments: &Value) -> Value {
        let mut arguments = arguments.clone();
        let Some(members) = arguments.as_object_mut() else {
            return arguments;
        };
        let given = |members: &Map<String, Value>, name: &str| members.get(name).is_some_and(|v| !v.is_null());
        match self.options.fault {
            Some(Fault::BothRunnablesRun) if given(members, "workflow") && given(members, "program_ref") => {
                members.remove("program_ref");
            }
            Some(Fault::NeitherRunnableRuns) if !given(members, "workflow") && !given(members, "program_ref") => {
                members.insert("workflow".to_owned(), Value::Object(Map::new()));
            }
            Some(Fault::ModeIgnored)
                if !members
                    .get("mode")
                    .and_then(Value::as_str)
                    .is_some_and(|mode| ["immediate", "deploy"].contains(&mode)) =>
            {
                members.insert("mode".to_owned(), "immediate".into());
            }
            _ => {}
        }
        arguments
    }

    /// An execute result: a response or a request error, routed per Part III 7.1 (unless
    /// [`Fault::FailedRunIsError`] marks a failed Run as an error).
    fn execute_result(&self, response: Response<ExecuteResponse>) -> CallToolResult {
        let failed = response.as_ref().is_ok_and(|r| !r.outcome.ok);
        let mut result = mcp::call_tool_result(response);
        if failed && self.options.fault == Some(Fault::FailedRunIsError) {
            result.is_error = Some(true);
        }
        result
    }

    fn next_run_id(&self) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed) + 1;
        format!("run_{:012x}", 0x7d3f_0a9c_0000 + n)
    }

    fn get_guide(&self, request: &GuideRequest) -> CallToolResult {
        let mut response = self.guide_response(request);
        if let (Ok(GuideResponse::Fetch(_)), Some(Fault::GuideFetchIndexForm)) = (&response, self.options.fault) {
            response = self.guide_response(&GuideRequest::Index {
                language: request.language().to_owned(),
            });
        }
        match response {
            Ok(GuideResponse::Index(index)) => mcp::call_tool_result(Ok::<_, RequestError>(index)),
            Ok(GuideResponse::Fetch(fetch)) => mcp::call_tool_result(Ok::<_, RequestError>(fetch)),
            Err(error) => mcp::call_tool_result::<Value>(Err(error)),
        }
    }

    fn guide_response(&self, request: &GuideRequest) -> Response<GuideResponse> {
        known_language(request.language())?;
        let guides = catalog::guides();
        let (id, topic) = match request {
            GuideRequest::Index { .. } => {
                return Ok(GuideResponse::Index(GuideIndexResult::new(
                    guides.into_iter().map(|(guide, _)| guide),
                )))
            }
            GuideRequest::Fetch { id, .. } => (id, None),
            GuideRequest::Topic { id, topic, .. } => (id, Some(topic)),
        };
        let Some((mut guide, body)) = guides.into_iter().find(|(g, _)| &g.id == id) else {
            return Err(RequestError::not_found(format!("unknown guide '{id}'")));
        };
        guide.body = Some(match topic {
            None => body,
            Some(topic) => catalog::topic_section(&body, topic)
                .ok_or_else(|| RequestError::not_found(format!("unknown topic '{topic}' of guide '{id}'")))?,
        });
        Ok(GuideResponse::Fetch(Box::new(GuideFetchResult::new(guide))))
    }

    /// A page of the catalog list, as the tool and the resource answer it (without
    /// `catalog_version` under [`Fault::CatalogListNoVersion`]).
    fn list(
        &self,
        kind: &Option<String>,
        tag: &Option<String>,
        q: &Option<String>,
        cursor: &Option<String>,
        limit: Option<u64>,
    ) -> Value {
        let mut listed = to_value(&list(kind, tag, q, cursor, limit));
        if let (Some(members), Some(Fault::CatalogListNoVersion)) = (listed.as_object_mut(), self.options.fault) {
            members.remove("catalog_version");
        }
        listed
    }

    fn lookup(&self, request: &CatalogRequest) -> CallToolResult {
        let with_version = |error: RequestError| error.with_catalog_version(CATALOG_VERSION);
        let result = known_language(request.language()).map_err(with_version);
        match (result, request) {
            (Err(error), _) => mcp::call_tool_result::<Value>(Err(error)),
            (
                Ok(()),
                CatalogRequest::List {
                    kind,
                    tag,
                    q,
                    cursor,
                    limit,
                    ..
                },
            ) => mcp::call_tool_result(Ok::<_, RequestError>(self.list(kind, tag, q, cursor, *limit))),
            (Ok(()), CatalogRequest::Get { id, .. }) => mcp::call_tool_result(
                catalog::entries()
                    .into_iter()
                    .find(|e| &e.id == id)
                    .map(|entry| CatalogGetResult::new(entry, CATALOG_VERSION))
                    .ok_or_else(|| {
                        let error = RequestError::not_found(format!("unknown entry '{id}'"));
                        if self.options.fault == Some(Fault::NotFoundNoCatalogVersion) {
                            error
                        } else {
                            with_version(error)
                        }
                    }),
            ),
            (Ok(()), CatalogRequest::ChangedSince { catalog_version, .. }) => mcp::call_tool_result(
                catalog::changes_since(catalog_version)
                    .map(|changes| CatalogChangedResult::new(CATALOG_VERSION, changes)),
            ),
        }
    }

    fn execute(&self, request: RunWorkflow) -> Response<ExecuteResponse> {
        if let Some(reference) = &request.program_ref {
            return Err(RequestError::not_found(format!(
                "unknown program_ref '{reference}': no workflow is promoted"
            )));
        }
        // The derive has refused unknown levels already (a request error, Part III 7.1).
        let level = request.trace_level.clone().unwrap_or(ExecuteTraceLevel::Summary);
        let program = Value::Object(request.workflow.unwrap_or_default());
        let run_id = self.next_run_id();
        if let Some(expected) = &request.expected_catalog_version {
            if expected != CATALOG_VERSION {
                return Ok(ExecuteResponse::new(
                    run_id,
                    Outcome::failure(
                        "catalog_drift",
                        format!("the catalog is at {CATALOG_VERSION}, not {expected}: validate again"),
                    ),
                ));
            }
        }
        let checked = language::check(&program);
        if !checked.diagnostics.is_empty() {
            return Ok(ExecuteResponse::validation_error(run_id, checked.diagnostics));
        }
        let input = Value::Object(request.input.unwrap_or_default());
        let run = language::run(&program, &input);
        let mut response = ExecuteResponse::new(run_id.clone(), run.outcome);
        response.output = run.output;
        if request.store != Some(false) {
            let mut stored = response.clone();
            stored.trace = Some(language::trace(&run_id, TraceLevel::Full, &run.steps));
            self.runs.lock().unwrap_or_else(|e| e.into_inner()).insert(
                run_id.clone(),
                StoredRun {
                    response: stored,
                    steps: run.steps.clone(),
                    stored_at: Instant::now(),
                },
            );
        }
        response.trace = match level {
            ExecuteTraceLevel::Full => Some(language::trace(&run_id, TraceLevel::Full, &run.steps)),
            ExecuteTraceLevel::Summary => Some(language::trace(&run_id, TraceLevel::Summary, &run.steps)),
            _ => None,
        };
        Ok(response)
    }

    fn fetch(&self, request: &TraceRun) -> Response<TraceFetchResponse> {
        let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        runs.retain(|_, run| run.stored_at.elapsed() < RETENTION);
        let Some(run) = runs.get(&request.run_id) else {
            if self.options.fault == Some(Fault::UnknownRunInvalidRequest) {
                return Err(RequestError::invalid_request("unknown run"));
            }
            // Part III 9.5: one not_found for unknown and expired runs alike.
            return Err(RequestError::not_found("unknown run: it may have expired"));
        };
        // min(requested, recorded): every run is recorded at full.
        let level = match request.trace_level.clone() {
            _ if self.options.fault == Some(Fault::TraceFetchFull) => TraceLevel::Full,
            requested => requested.unwrap_or(TraceLevel::Full),
        };
        let mut response = TraceFetchResponse::new(
            request.run_id.clone(),
            run.response.outcome.clone(),
            language::trace(&request.run_id, level, &run.steps),
        );
        response.output = run.response.output.clone();
        Ok(response)
    }

    /// The resources (Part III 8.3): (URI, name, content), the content equal to the tool
    /// response it mirrors.
    pub fn resources(&self) -> Vec<(String, String, Value)> {
        if !self.options.resources {
            return Vec::new();
        }
        let index = GuideRequest::Index {
            language: LANGUAGE.to_owned(),
        };
        let mut out = Vec::new();
        if let Ok(GuideResponse::Index(index)) = self.guide_response(&index) {
            out.push((guides_uri(LANGUAGE), format!("{LANGUAGE} guides"), to_value(&index)));
        }
        for (guide, _) in catalog::guides() {
            let fetch = GuideRequest::Fetch {
                language: LANGUAGE.to_owned(),
                id: guide.id.clone(),
            };
            if let Ok(GuideResponse::Fetch(fetched)) = self.guide_response(&fetch) {
                out.push((guide_uri(LANGUAGE, &guide.id), guide.title.clone(), to_value(&fetched)));
            }
        }
        let mut catalog = self.list(&None, &None, &None, &None, None);
        if self.options.fault == Some(Fault::StaleCatalogResource) {
            catalog["catalog_version"] = catalog::PREVIOUS_CATALOG_VERSION.into();
        }
        out.push((catalog_uri(LANGUAGE), format!("{LANGUAGE} catalog"), catalog));
        out
    }
}

enum GuideResponse {
    Index(GuideIndexResult),
    Fetch(Box<GuideFetchResult>),
}

fn to_value(value: &impl serde::Serialize) -> Value {
    serde_json::to_value(value).expect("generated types serialize")
}

fn known_language(language: &str) -> Result<(), RequestError> {
    if language == LANGUAGE {
        Ok(())
    } else {
        Err(RequestError::not_found(format!(
            "unknown language '{language}': this server serves {LANGUAGE}"
        )))
    }
}

/// Default and maximum page size of `list` (Part III 4.2: the server MAY cap `limit`).
const PAGE: u64 = 50;

fn list(
    kind: &Option<String>,
    tag: &Option<String>,
    q: &Option<String>,
    cursor: &Option<String>,
    limit: Option<u64>,
) -> CatalogListResult {
    let limit = usize::try_from(limit.unwrap_or(PAGE).min(PAGE)).unwrap_or(1);
    let start: usize = cursor
        .as_deref()
        .and_then(|c| c.strip_prefix('c').and_then(|n| n.parse().ok()))
        .unwrap_or(0);
    let q = q.as_deref().map(str::to_lowercase);
    let matching: Vec<_> = catalog::entries()
        .into_iter()
        .filter(|e| kind.as_ref().is_none_or(|k| &e.kind == k))
        .filter(|e| {
            tag.as_ref()
                .is_none_or(|t| e.tags.as_ref().is_some_and(|tags| tags.contains(t)))
        })
        .filter(|e| {
            q.as_ref()
                .is_none_or(|q| e.name.to_lowercase().contains(q) || e.id.contains(q.as_str()))
        })
        .collect();
    let page = CatalogListResult::new(matching.iter().skip(start).take(limit).cloned(), CATALOG_VERSION);
    if start + limit < matching.len() {
        page.with_next_cursor(format!("c{}", start + limit))
    } else {
        page
    }
}

fn validate(request: &ValidateWorkflow) -> Response<ValidateResponse> {
    let checked = language::check(&Value::Object(request.workflow.clone()));
    let valid = checked.diagnostics.is_empty();
    let response = if valid {
        ValidateResponse::valid(language::plan(&checked.steps))
            .with_references(checked.steps.iter().map(|(_, c)| c.clone()))
    } else {
        ValidateResponse::invalid(checked.diagnostics)
    };
    Ok(response.with_catalog_version(CATALOG_VERSION))
}

/// Whether the client behind `context` declared the Pilotage extension: per request on
/// 2026-07-28 (`_meta["io.modelcontextprotocol/clientCapabilities"]`), from initialize on
/// earlier revisions (rmcp reads whichever applies). `None` when the capabilities are not
/// known to this request: a handshake client on a stateless HTTP deployment declared them on
/// an initialize that another request answered.
pub fn client_declared_pilotage(context: &RequestContext<RoleServer>, stateless_http: bool) -> Option<bool> {
    let known = if stateless_http {
        context.meta.client_capabilities()
    } else {
        context.client_capabilities()
    };
    known.map(|capabilities| {
        capabilities
            .extensions
            .as_ref()
            .is_some_and(|extensions| extensions.contains_key(EXTENSION_ID))
    })
}

impl Engine {
    /// [`Self::info`] for a client that declared Pilotage (`Some(true)`), did not
    /// (`Some(false)`), or is not known: with `--hide-from-undeclared`, a client the tools are
    /// hidden from gets no welcome text either, since it names tools it cannot see (Part III
    /// 1.3 rule 3, 3.4).
    fn info_for(&self, declared: Option<bool>) -> InitializeResult {
        let mut info = self.info();
        if self.options.hide_from_undeclared && declared == Some(false) {
            info.instructions = None;
        }
        info
    }
}

impl ServerHandler for Engine {
    fn get_info(&self) -> InitializeResult {
        self.info()
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let mut result = self.negotiate_initialize(&request)?;
        // Over stateless HTTP the tools stay visible to a handshake client (its capabilities
        // are not known to later requests), so its welcome text stays too.
        let declared = (!self.options.stateless_http).then(|| {
            request
                .capabilities
                .extensions
                .as_ref()
                .is_some_and(|extensions| extensions.contains_key(EXTENSION_ID))
        });
        result.instructions = self.info_for(declared).instructions;
        Ok(result)
    }

    async fn discover(&self, context: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        let declared = client_declared_pilotage(&context, self.options.stateless_http);
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.info_for(declared),
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // Hidden only from a client known not to have declared Pilotage (Part III 1.3 rule 3);
        // unknown capabilities expose the tools, as rule 2 recommends for every client.
        if self.options.hide_from_undeclared
            && client_declared_pilotage(&context, self.options.stateless_http) == Some(false)
        {
            return Ok(ListToolsResult::with_all_items(Vec::new()));
        }
        Ok(mcp::tools_list(&self.served_tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        self.call(&request.name, &arguments).map(Into::into)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(
            self.resources()
                .into_iter()
                .map(|(uri, name, _)| Resource::new(uri, name).with_mime_type("application/json"))
                .collect(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let Some((uri, _, content)) = self.resources().into_iter().find(|(uri, _, _)| *uri == request.uri) else {
            return Err(ErrorData::resource_not_found(
                format!("no resource {}", request.uri),
                None,
            ));
        };
        let text = serde_json::to_string(&content).expect("JSON serializes");
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, uri).with_mime_type("application/json")
        ])
        .into())
    }
}
