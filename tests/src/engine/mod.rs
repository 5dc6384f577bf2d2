//! The reference engine: a real MCP server on the official Rust SDK (rmcp) serving the
//! `workflow/v1` Language of Part III section 9 through the toolkit's access tools and derived
//! loop tools. Run it with `cargo run -p pilotage-tests --bin reference-engine` (stdio).
//!
//! - initialize (3.2, 3.4, 1.2): the extension in `capabilities.extensions`, the manifest
//!   inline in `_meta`, the welcome text in `instructions`;
//! - guides (4.1: index, fetch, topic fetch) and a catalog (4.2: list with search, get,
//!   changed_since, `catalog_version`);
//! - validate: diagnostics with JSON Pointers and close-match hints, a plan with risk;
//! - execute: runs steps against the catalog, honours `expected_catalog_version`,
//!   `trace_level` and `store`; trace fetch by `run_id` with retention `PT1H`, in memory;
//! - every argument parsed with `from_arguments`, every fault routed as Part III 7 says.

pub mod catalog;
pub mod workflow;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use pilotage_types::{mcp, AccessTool, PilotageTool, RequestError, Stage, ToolDefinition, EXTENSION_ID, META_KEY};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorData, InitializeResult, ListToolsResult,
    PaginatedRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use serde_json::{json, Map, Value};

use catalog::{CATALOG_VERSION, LANGUAGE};

/// Check a workflow/v1 document against the catalog and preview its plan (validate stage).
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(stage = "validate", name = "validate_workflow", language = "workflow/v1")]
pub struct ValidateWorkflow {
    /// The workflow document: `{"steps": [...], "output": {...}}`.
    #[pilotage(program)]
    pub workflow: Value,
}

/// Execute a workflow/v1 document (execute stage): runs its steps and returns the output,
/// the outcome and, at `trace_level` summary or full, the trace.
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
    pub workflow: Option<Value>,
    /// A promoted workflow (this engine has none yet).
    pub program_ref: Option<String>,
    /// The run's input, read by `$.input...` references.
    pub input: Option<Map<String, Value>>,
    /// none, summary or full.
    pub trace_level: Option<String>,
    /// The catalog version the program was written against.
    pub expected_catalog_version: Option<String>,
    /// Retain the run for trace fetch (default: retained for PT1H).
    pub store: Option<bool>,
}

/// Fetch the stored trace of a workflow/v1 run by run_id (trace fetch stage).
#[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
#[pilotage(stage = "trace", name = "trace_run", language = "workflow/v1")]
pub struct TraceRun {
    /// The run_id an execute response returned.
    pub run_id: String,
    /// summary or full.
    pub trace_level: Option<String>,
}

/// How long runs are retained (the manifest's `retention`).
pub const RETENTION: Duration = Duration::from_secs(3600);

/// The welcome text of Part III 3.4.
pub const INSTRUCTIONS: &str =
    "This server speaks Pilotage (io.github.jafarsa0/pilotage): call pilotage_manifest first. \
It lists the program Language workflow/v1 and its loop: learn with pilotage_get_guide, look up capabilities with \
pilotage_catalog, then validate_workflow, run_workflow and trace_run.";

/// The manifest of Part III 9.1.
pub fn manifest() -> Value {
    json!({
        "pilotage": pilotage_types::PILOTAGE_VERSION,
        "languages": [{
            "name": LANGUAGE,
            "title": "Workflow documents",
            "guides": pilotage_types::GET_GUIDE_TOOL,
            "catalog": pilotage_types::CATALOG_TOOL,
            "loop": {"validate": "validate_workflow", "execute": "run_workflow", "trace": "trace_run"},
            "capabilities": {"guides": {"topic_fetch": true}, "catalog": {"search": true, "changed_since": true},
                "validate": true, "plan": true, "execute": true, "trace_fetch": true},
            "locator": "json-pointer",
            "execution": "immediate",
            "trace": "full",
            "retention": "PT1H"
        }]
    })
}

/// Every tool of the engine, in tools/list order.
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

/// The initialize result.
pub fn initialize_result() -> Value {
    json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}, "extensions": {EXTENSION_ID: {"version": pilotage_types::PILOTAGE_VERSION}}},
        "serverInfo": {"name": "pilotage-reference-engine", "version": env!("CARGO_PKG_VERSION")},
        "instructions": INSTRUCTIONS,
        "_meta": {META_KEY: {"manifest": manifest()}}
    })
}

struct StoredRun {
    response: Value,
    steps: Vec<Value>,
    stored_at: Instant,
}

/// The engine: stateless but for the runs it retains.
#[derive(Default)]
pub struct Engine {
    runs: Mutex<HashMap<String, StoredRun>>,
    counter: AtomicU64,
}

type Response = Result<Value, RequestError>;

impl Engine {
    /// Handles one `tools/call`: the structured result, or a carrier error.
    pub fn call(&self, name: &str, arguments: &Value) -> Result<CallToolResult, ErrorData> {
        let response = match name {
            n if n == AccessTool::Manifest.name() => Ok(manifest()),
            n if n == AccessTool::GetGuide.name() => {
                access(AccessTool::GetGuide, arguments)?;
                get_guide(arguments)
            }
            n if n == AccessTool::Catalog.name() => {
                access(AccessTool::Catalog, arguments)?;
                lookup(arguments)
            }
            // Every argument fault goes to its Part III 7.1 channel: carrier, request error, or
            // (a program fault) a response with diagnostics.
            "validate_workflow" => match ValidateWorkflow::from_arguments(arguments) {
                Ok(request) => validate(request),
                Err(fault) => return mcp::argument_fault(fault, Stage::Validate, || self.next_run_id()),
            },
            "run_workflow" => match RunWorkflow::from_arguments(arguments) {
                Ok(request) => self.execute(request),
                Err(fault) => return mcp::argument_fault(fault, Stage::Execute, || self.next_run_id()),
            },
            "trace_run" => match TraceRun::from_arguments(arguments) {
                Ok(request) => self.fetch(request),
                Err(fault) => return mcp::argument_fault(fault, Stage::Trace, || self.next_run_id()),
            },
            other => return Err(mcp::carrier_error(format!("Unknown tool: {other}"))),
        };
        Ok(mcp::call_tool_result(response))
    }

    fn next_run_id(&self) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed) + 1;
        format!("run_{:012x}", 0x7d3f_0a9c_0000 + n)
    }

    fn execute(&self, request: RunWorkflow) -> Response {
        if let Some(reference) = &request.program_ref {
            return Err(RequestError::not_found(format!(
                "unknown program_ref '{reference}': no workflow is promoted"
            )));
        }
        let level = request.trace_level.as_deref().unwrap_or("summary").to_owned();
        let program = Value::Object(
            request
                .workflow
                .unwrap_or_default()
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
        let run_id = self.next_run_id();
        if let Some(expected) = &request.expected_catalog_version {
            if expected != CATALOG_VERSION {
                return Ok(
                    json!({"run_id": run_id, "outcome": {"ok": false, "status": "catalog_drift",
                    "error": format!("the catalog is at {CATALOG_VERSION}, not {expected}: validate again")}}),
                );
            }
        }
        let checked = workflow::check(&program);
        if !checked.diagnostics.is_empty() {
            let count = checked.diagnostics.len();
            return Ok(
                json!({"run_id": run_id, "outcome": {"ok": false, "status": "validation_error",
                "error": format!("{count} diagnostic(s)")}, "diagnostics": checked.diagnostics}),
            );
        }
        let input = Value::Object(request.input.unwrap_or_default());
        let run = workflow::run(&program, &input);
        let mut response = json!({"run_id": run_id, "outcome": run.outcome});
        if let Some(output) = &run.output {
            response["output"] = output.clone();
        }
        if request.store != Some(false) {
            let mut stored = response.clone();
            stored["trace"] = workflow::trace(&run_id, "full", &run.steps);
            self.runs.lock().expect("runs lock").insert(
                run_id.clone(),
                StoredRun {
                    response: stored,
                    steps: run.steps.clone(),
                    stored_at: Instant::now(),
                },
            );
        }
        if level != "none" {
            response["trace"] = workflow::trace(&run_id, &level, &run.steps);
        }
        Ok(response)
    }

    fn fetch(&self, request: TraceRun) -> Response {
        let mut runs = self.runs.lock().expect("runs lock");
        runs.retain(|_, run| run.stored_at.elapsed() < RETENTION);
        let Some(run) = runs.get(&request.run_id) else {
            // Part III 9.5: one not_found for unknown and expired runs alike.
            return Err(RequestError::not_found("unknown run: it may have expired"));
        };
        let level = request.trace_level.as_deref().unwrap_or("full");
        let mut response = json!({"run_id": request.run_id, "outcome": run.response["outcome"], "trace": workflow::trace(&request.run_id, level, &run.steps)});
        if let Some(output) = run.response.get("output") {
            response["output"] = output.clone();
        }
        Ok(response)
    }
}

/// The access tools' schemas are strict (Part III 7.1): a violation is a carrier fault.
fn access(tool: AccessTool, arguments: &Value) -> Result<(), ErrorData> {
    use std::sync::LazyLock;
    // Full JSON Schema semantics here (enum of verb, minimum of limit): every violation of these
    // strict schemas is carrier-level.
    static VALIDATORS: LazyLock<Vec<(AccessTool, jsonschema::Validator)>> = LazyLock::new(|| {
        AccessTool::ALL
            .iter()
            .map(|tool| {
                (
                    *tool,
                    jsonschema::validator_for(&tool.input_schema()).expect("Part III's access schemas compile"),
                )
            })
            .collect()
    });
    let (_, validator) = VALIDATORS
        .iter()
        .find(|(t, _)| *t == tool)
        .expect("every access tool has a validator");
    let messages: Vec<String> = validator
        .iter_errors(arguments)
        .map(|e| format!("{}: {e}", e.instance_path().as_str()))
        .collect();
    if messages.is_empty() {
        return Ok(());
    }
    Err(mcp::carrier_error(format!(
        "invalid arguments for {}: {}",
        tool.name(),
        messages.join("; ")
    )))
}

fn validate(request: ValidateWorkflow) -> Response {
    let checked = workflow::check(&request.workflow);
    let valid = checked.diagnostics.is_empty();
    let mut response = json!({"valid": valid, "diagnostics": checked.diagnostics, "catalog_version": CATALOG_VERSION});
    if valid {
        response["plan"] = workflow::plan(&checked.steps);
        response["references"] = json!(checked.steps.iter().map(|(_, c)| c.clone()).collect::<Vec<_>>());
    }
    Ok(response)
}

fn check_language(arguments: &Value) -> Result<(), RequestError> {
    match arguments.get("language").and_then(Value::as_str) {
        Some(LANGUAGE) => Ok(()),
        Some(other) => Err(RequestError::not_found(format!(
            "unknown language '{other}': this server serves {LANGUAGE}"
        ))),
        None => Err(RequestError::invalid_request("language is required")),
    }
}

fn get_guide(arguments: &Value) -> Response {
    check_language(arguments)?;
    let guides = catalog::guides();
    let Some(id) = arguments.get("id").and_then(Value::as_str) else {
        if arguments.get("topic").is_some() {
            return Err(RequestError::invalid_request("`topic` goes with `id`"));
        }
        return Ok(json!({"guides": guides.iter().map(|(g, _)| g).collect::<Vec<_>>()}));
    };
    let Some((guide, body)) = guides.into_iter().find(|(g, _)| g.id == id) else {
        return Err(RequestError::not_found(format!("unknown guide '{id}'")));
    };
    let body = match arguments.get("topic").and_then(Value::as_str) {
        None => body,
        Some(topic) => catalog::topic_section(&body, topic)
            .ok_or_else(|| RequestError::not_found(format!("unknown topic '{topic}' of guide '{id}'")))?,
    };
    let mut guide = serde_json::to_value(guide).expect("guides serialise");
    guide["body"] = json!(body);
    Ok(json!({"guide": guide}))
}

/// Members each catalog verb accepts (Part III 4.2, "Invalid combinations").
fn applicable(verb: &str) -> &'static [&'static str] {
    match verb {
        "list" => &["language", "verb", "kind", "tag", "q", "cursor", "limit"],
        "get" => &["language", "verb", "id"],
        _ => &["language", "verb", "catalog_version"],
    }
}

fn lookup(arguments: &Value) -> Response {
    check_language(arguments)?;
    let verb = arguments["verb"].as_str().unwrap_or("list");
    if let Some(extra) = arguments
        .as_object()
        .and_then(|m| m.keys().find(|k| !applicable(verb).contains(&k.as_str())))
    {
        return Err(
            RequestError::invalid_request(format!("`{extra}` does not apply to verb {verb}"))
                .with_catalog_version(CATALOG_VERSION),
        );
    }
    let entries = catalog::entries();
    match verb {
        "get" => {
            let id = arguments.get("id").and_then(Value::as_str).ok_or_else(|| {
                RequestError::invalid_request("verb get requires `id`").with_catalog_version(CATALOG_VERSION)
            })?;
            let entry = entries
                .into_iter()
                .find(|e| e.id == id)
                .ok_or_else(|| RequestError::not_found("unknown entry").with_catalog_version(CATALOG_VERSION))?;
            Ok(json!({"entry": entry, "catalog_version": CATALOG_VERSION}))
        }
        "changed_since" => {
            let baseline = arguments
                .get("catalog_version")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    RequestError::invalid_request("verb changed_since requires `catalog_version`")
                        .with_catalog_version(CATALOG_VERSION)
                })?;
            Ok(json!({"catalog_version": CATALOG_VERSION, "changes": catalog::changes_since(baseline)?}))
        }
        _ => {
            let kind = arguments.get("kind").and_then(Value::as_str);
            let tag = arguments.get("tag").and_then(Value::as_str);
            let q = arguments.get("q").and_then(Value::as_str).map(str::to_lowercase);
            let limit = arguments.get("limit").and_then(Value::as_u64).unwrap_or(50) as usize;
            let start: usize = arguments
                .get("cursor")
                .and_then(Value::as_str)
                .and_then(|c| c.strip_prefix("c").and_then(|n| n.parse().ok()))
                .unwrap_or(0);
            let matching: Vec<_> = entries
                .into_iter()
                .filter(|e| kind.is_none_or(|k| e.kind == k))
                .filter(|e| tag.is_none_or(|t| e.tags.as_ref().is_some_and(|tags| tags.iter().any(|x| x == t))))
                .filter(|e| {
                    q.as_ref()
                        .is_none_or(|q| e.name.to_lowercase().contains(q) || e.id.contains(q.as_str()))
                })
                .collect();
            let page: Vec<_> = matching.iter().skip(start).take(limit).cloned().collect();
            let mut response = json!({"items": page, "catalog_version": CATALOG_VERSION});
            if start + limit < matching.len() {
                response["next_cursor"] = json!(format!("c{}", start + limit));
            }
            Ok(response)
        }
    }
}

impl ServerHandler for Engine {
    fn get_info(&self) -> InitializeResult {
        serde_json::from_value(initialize_result()).expect("the initialize result is an MCP InitializeResult")
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(mcp::tools_list(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        self.call(&request.name, &arguments).map(CallToolResponse::from)
    }
}
