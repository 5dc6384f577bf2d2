//! The rmcp `ServerHandler` of an engine ([`PilotageServer`]): the extension declaration, the
//! inline manifest and the welcome text on `initialize` and `server/discover` (Part III 1.2,
//! 3.2, 3.4), hiding from undeclared clients when asked (1.3 rule 3), `tools/list` and
//! `tools/call` through the engine, the resources of 8.3, and the engine's own MCP tools
//! beside the Pilotage ones (1.3 rule 1: core MCP behaviour is rmcp's, unchanged).
//!
//! Who may see a run (8.4) is decided here, per request: the authorization identity when the
//! engine supplies one from the HTTP request, else the MCP session (`Mcp-Session-Id` over HTTP,
//! the connection over stdio); on stateless HTTP without an authorization identity, runs are
//! shared by everyone who holds their (unguessable) id.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, DiscoverResult, ErrorData,
    ExtensionCapabilities, Implementation, InitializeRequestParams, InitializeResult, JsonObject, ListResourcesResult,
    ListToolsResult, MetaObject, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, ServerCapabilities, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use serde_json::Value;

use tracing::Instrument;

use super::engine::{Answer, Core};
use super::telemetry;

/// Emits a request's event when the handler returns (requests answered without an error).
struct Finish<'a>(&'a telemetry::Request);

impl Drop for Finish<'_> {
    fn drop(&mut self) {
        self.0.finish(None);
    }
}
use pilotage_types::{EXTENSION_ID, META_KEY};

/// The engine's own MCP tools, served beside the Pilotage surface: an rmcp [`ToolRouter`] over
/// [`PilotageServer`] (its handlers get the server, whose [`PilotageServer::identity`] tells
/// who asks).
///
/// Write them with rmcp's `#[tool_router]` / `#[tool]` macros through the re-export
/// [`crate::rmcp`] (rmcp `=3.11.0`): your crate then needs `rmcp = { version = "=3.11.0",
/// features = ["server", "macros"] }` for the macros' expansion, and `schemars` for their
/// arguments. These are tools of your own, not loop tools: for a loop tool with typed members
/// of its own, derive it and name it in the declaration
/// ([`crate::Declaration::with_execute_tool`]), and the framework serves it as the manifest's
/// loop tool.
pub type OwnTools = ToolRouter<PilotageServer>;

/// Maps an HTTP request to the authorization identity it carries (for example an OAuth
/// subject from a token your middleware verified), or `None`.
pub type IdentityFn = Arc<dyn Fn(&http::request::Parts) -> Option<String> + Send + Sync>;

/// One connection's handler: the shared engine, and who is connected. Created by the serving
/// functions (once per stdio connection, per HTTP session, or per stateless request).
#[derive(Clone)]
pub struct PilotageServer {
    pub(crate) core: Arc<Core>,
    pub(crate) own_tools: Option<Arc<OwnTools>>,
    pub(crate) identity_fn: Option<IdentityFn>,
    /// This connection's identity when no other is known (a random id).
    connection: String,
    stateless: bool,
}

impl std::fmt::Debug for PilotageServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PilotageServer")
            .field("languages", &self.core.manifest.languages.len())
            .field("stateless", &self.stateless)
            .finish_non_exhaustive()
    }
}

impl PilotageServer {
    pub(crate) fn new(
        core: Arc<Core>,
        own_tools: Option<Arc<OwnTools>>,
        identity_fn: Option<IdentityFn>,
        stateless: bool,
    ) -> Self {
        Self {
            core,
            own_tools,
            identity_fn,
            connection: format!("connection:{}", super::runs::new_run_id()),
            stateless,
        }
    }

    /// The identity `context`'s request is made under (Part III 8.4): `auth:<id>` when the
    /// engine's identity function finds one in the HTTP request, else `session:<id>` for an
    /// HTTP session, else `stateless` for an HTTP request outside a session, else this
    /// connection (stdio).
    pub fn identity(&self, context: &RequestContext<RoleServer>) -> String {
        let parts = context.extensions.get::<http::request::Parts>();
        if let (Some(identity_fn), Some(parts)) = (&self.identity_fn, parts) {
            if let Some(identity) = identity_fn(parts) {
                return format!("auth:{identity}");
            }
        }
        if let Some(session) = parts
            .and_then(|p| p.headers.get("mcp-session-id"))
            .and_then(|v| v.to_str().ok())
        {
            return format!("session:{session}");
        }
        // An HTTP request outside a session (a stateless deployment, or the stateless
        // revision on a deployment with sessions): no session to bind to.
        if self.stateless || parts.is_some() {
            "stateless".to_owned()
        } else {
            self.connection.clone()
        }
    }

    /// Whether the client behind `context` declared the Pilotage extension: per request on
    /// 2026-07-28, from initialize on earlier revisions; `None` when not known (a handshake
    /// client on stateless HTTP declared it on an initialize another request answered).
    pub fn client_declared_pilotage(&self, context: &RequestContext<RoleServer>) -> Option<bool> {
        let known = if self.stateless {
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

    fn hidden_from(&self, declared: Option<bool>) -> bool {
        self.core.settings.hide_from_undeclared && declared == Some(false)
    }

    /// The initialize result (and the content of `server/discover`): the extension declared,
    /// the welcome text, the manifest inline.
    pub(crate) fn info(&self, declared: Option<bool>) -> InitializeResult {
        let mut settings = JsonObject::new();
        settings.insert("version".into(), pilotage_types::PILOTAGE_VERSION.into());
        let extensions = ExtensionCapabilities::from([(EXTENSION_ID.to_owned(), settings)]);
        let resources = self.core.settings.resources;
        let capabilities = match resources {
            true => ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_extensions_with(extensions)
                .build(),
            false => ServerCapabilities::builder()
                .enable_tools()
                .enable_extensions_with(extensions)
                .build(),
        };
        let mut info = InitializeResult::new(capabilities).with_server_info(Implementation::new(
            self.core.settings.name.clone(),
            self.core.settings.version.clone(),
        ));
        // A client the tools are hidden from gets no welcome text naming them (1.3, 3.4).
        if !self.hidden_from(declared) {
            info = info.with_instructions(self.core.instructions.clone());
        }
        let mut meta = JsonObject::new();
        let inline = pilotage_types::InitializeMetaValue::new().with_manifest(self.core.manifest.clone());
        meta.insert(
            META_KEY.to_owned(),
            serde_json::to_value(&inline).expect("generated types serialize"),
        );
        info.meta = Some(MetaObject::from(meta));
        info
    }
}

/// An [`Answer`] as rmcp's result: structuredContent with its summary text, or the -32602
/// carrier error.
pub(crate) fn result(answer: Answer) -> Result<CallToolResult, ErrorData> {
    match answer {
        Answer::Carrier(message) => Err(pilotage_types::mcp::carrier_error(message)),
        Answer::Result { content, is_error } => {
            let text = pilotage_types::mcp::summary(&content);
            let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
            result.structured_content = Some(content);
            result.is_error = Some(is_error);
            Ok(result)
        }
    }
}

impl ServerHandler for PilotageServer {
    fn get_info(&self) -> InitializeResult {
        self.info(None)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let traced = telemetry::request_span("initialize", None, &context);
        let mut result = match self.negotiate_initialize(&request) {
            Ok(result) => result,
            Err(error) => {
                traced.finish(Some(&error));
                return Err(error);
            }
        };
        let _finish = Finish(&traced);
        // Over stateless HTTP a handshake client's capabilities are not known to later
        // requests, so the tools (and the welcome text) stay visible to it.
        let declared = (!self.stateless).then(|| {
            request
                .capabilities
                .extensions
                .as_ref()
                .is_some_and(|extensions| extensions.contains_key(EXTENSION_ID))
        });
        result.instructions = self.info(declared).instructions;
        Ok(result)
    }

    async fn discover(&self, context: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        let declared = self.client_declared_pilotage(&context);
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.info(declared),
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let traced = telemetry::request_span("tools/list", None, &context);
        let _finish = Finish(&traced);
        let mut tools = if self.hidden_from(self.client_declared_pilotage(&context)) {
            Vec::new()
        } else {
            self.core.mcp_tools.clone()
        };
        if let Some(own) = &self.own_tools {
            tools.extend(own.list_all());
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.core
            .mcp_tools
            .iter()
            .find(|t| t.name == name)
            .cloned()
            .or_else(|| self.own_tools.as_ref().and_then(|own| own.get(name).cloned()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let mut traced = telemetry::request_span("tools/call", Some(&request.name), &context);
        let hidden = self.hidden_from(self.client_declared_pilotage(&context));
        if !hidden {
            let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
            let identity = self.identity(&context);
            let (language, stage) = self.core.describe(&request.name, &arguments);
            traced.describe(&identity, language.as_deref(), stage);
            tracing::debug!(parent: &traced.span, arguments = %arguments, "tools/call arguments");
            let answer = self
                .core
                .call(&request.name, &arguments, &identity)
                .instrument(traced.span.clone())
                .await;
            if let Some(answer) = answer {
                let answer = result(answer);
                traced.finish_call(&answer);
                return answer.map(Into::into);
            }
        }
        if let Some(own) = self.own_tools.clone() {
            if own.has_route(&request.name) {
                let answer = own.call(ToolCallContext::new(self, request, context)).await;
                traced.finish(answer.as_ref().err());
                return answer;
            }
        }
        // Part III 9.6: an unknown tool is a carrier error.
        traced.unknown_tool();
        let unknown = Err(pilotage_types::mcp::carrier_error(format!(
            "Unknown tool: {}",
            request.name
        )));
        traced.finish_call(&unknown);
        unknown.map(Into::into)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(
            self.core
                .resources()
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
        let Some((uri, _, content)) = self
            .core
            .resources()
            .into_iter()
            .find(|(uri, _, _)| *uri == request.uri)
        else {
            return Err(ErrorData::resource_not_found(
                format!("no resource {}", request.uri),
                Some(serde_json::json!({"uri": request.uri})),
            ));
        };
        let text = serde_json::to_string(&content).expect("JSON serializes");
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, uri).with_mime_type("application/json")
        ])
        .into())
    }
}
