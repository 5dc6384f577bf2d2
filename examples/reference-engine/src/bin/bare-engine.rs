//! The baseline of `cargo xtask soak`'s overhead figures: the same workflow/v1 stage functions
//! ([`language::check`], [`language::run`]) served by a bare rmcp `#[tool_router]` server, with
//! none of the framework (no manifest, guides, catalog, argument routing, identities, bounds).
//! Not an engine to copy: it is not conformant.
//!
//! ```text
//! bare-engine --http 127.0.0.1:0 [--stateless]
//! ```

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use pilotage_reference_engine::language;
use pilotage_types::{ExecuteResponse, TraceFetchResponse, TraceLevel, TraceStep, ValidateResponse};
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{CallToolResult, ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler};
use serde_json::{Map, Value};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Validate {
    workflow: Map<String, Value>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Run {
    workflow: Map<String, Value>,
    input: Option<Map<String, Value>>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Fetch {
    run_id: String,
}

/// The runs kept: each response and its full steps, by run id.
type Runs = Arc<Mutex<HashMap<String, (ExecuteResponse, Vec<TraceStep>)>>>;

#[derive(Clone)]
struct Bare {
    #[allow(dead_code, reason = "the tool_handler macro reads it")]
    tool_router: ToolRouter<Self>,
    runs: Runs,
}

fn structured(value: &impl serde::Serialize) -> CallToolResult {
    CallToolResult::structured(serde_json::to_value(value).expect("generated types serialize"))
}

#[tool_router]
impl Bare {
    #[tool(description = "Validate a workflow/v1 document.")]
    async fn validate_workflow(&self, Parameters(args): Parameters<Validate>) -> Result<CallToolResult, ErrorData> {
        let checked = language::check(&Value::Object(args.workflow));
        let response = if checked.diagnostics.is_empty() {
            ValidateResponse::valid(language::plan(&checked.steps))
        } else {
            ValidateResponse::invalid(checked.diagnostics)
        };
        Ok(structured(&response))
    }

    #[tool(description = "Run a workflow/v1 document.")]
    async fn run_workflow(&self, Parameters(args): Parameters<Run>) -> Result<CallToolResult, ErrorData> {
        let run_id = pilotage_server::new_run_id();
        let program = Value::Object(args.workflow);
        let checked = language::check(&program);
        if !checked.diagnostics.is_empty() {
            return Ok(structured(&ExecuteResponse::validation_error(
                run_id,
                checked.diagnostics,
            )));
        }
        let done = language::run(&program, &Value::Object(args.input.unwrap_or_default()));
        let mut response = ExecuteResponse::new(run_id.clone(), done.outcome);
        response.output = done.output;
        response.trace = Some(language::trace(&run_id, TraceLevel::Summary, &done.steps));
        self.runs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(run_id, (response.clone(), done.steps));
        Ok(structured(&response))
    }

    #[tool(description = "Fetch a run's trace.")]
    async fn trace_run(&self, Parameters(args): Parameters<Fetch>) -> Result<CallToolResult, ErrorData> {
        let runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        let Some((response, steps)) = runs.get(&args.run_id) else {
            return Ok(CallToolResult::error(vec![rmcp::model::ContentBlock::text(
                "unknown run",
            )]));
        };
        let trace = language::trace(&args.run_id, TraceLevel::Full, steps);
        let mut fetched = TraceFetchResponse::new(args.run_id.clone(), response.outcome.clone(), trace);
        fetched.output = response.output.clone();
        Ok(structured(&fetched))
    }
}

#[tool_handler]
impl ServerHandler for Bare {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let addr: std::net::SocketAddr = args
        .iter()
        .position(|a| a == "--http")
        .and_then(|at| args.get(at + 1))
        .ok_or("usage: bare-engine --http ADDR [--stateless]")?
        .parse()?;
    let stateless = args.iter().any(|a| a == "--stateless");
    let bare = Bare {
        tool_router: Bare::tool_router(),
        runs: Arc::default(),
    };
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(!stateless)
        .with_json_response(stateless);
    let factory = move || Ok(bare.clone());
    let router = if stateless {
        axum::Router::new().nest_service(
            "/mcp",
            StreamableHttpService::new(factory, Arc::new(NeverSessionManager::default()), config),
        )
    } else {
        axum::Router::new().nest_service(
            "/mcp",
            StreamableHttpService::new(factory, Arc::new(LocalSessionManager::default()), config),
        )
    };
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!(
        "bare-engine: serving MCP over streamable HTTP at http://{}/mcp",
        listener.local_addr()?
    );
    axum::serve(listener, router).await?;
    Ok(())
}
