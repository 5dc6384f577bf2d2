//! A test-only fault layer: an rmcp `ServerHandler` around the served engine that breaks one
//! Part III rule at a time (`reference-engine --break NAME`), so that a conformance checker
//! such as `pilotage check` can be shown to catch each. The framework itself cannot be made to
//! break them: every fault here rewrites a request on its way in or an answer on its way out.

use pilotage_server::PilotageServer;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, DiscoverResult, ErrorData, InitializeRequestParams, InitializeResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ResourceContents,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use serde_json::{Map, Value};

/// A deliberate conformance fault. Each changes exactly one behaviour of the engine; the name
/// on the command line is the variant's in kebab case.
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

/// The engine's handler with one [`Fault`].
#[derive(Clone, Debug)]
pub struct Faulty {
    inner: PilotageServer,
    fault: Fault,
}

impl Faulty {
    /// `inner` with `fault`.
    pub fn new(inner: PilotageServer, fault: Fault) -> Self {
        Self { inner, fault }
    }

    /// The arguments as the faulty engine reads them.
    fn arguments(&self, tool: &str, arguments: &mut Map<String, Value>) {
        let given = |members: &Map<String, Value>, name: &str| members.get(name).is_some_and(|v| !v.is_null());
        match (self.fault, tool) {
            (Fault::BothRunnablesRun, "run_workflow")
                if given(arguments, "workflow") && given(arguments, "program_ref") =>
            {
                arguments.remove("program_ref");
            }
            (Fault::NeitherRunnableRuns, "run_workflow")
                if !given(arguments, "workflow") && !given(arguments, "program_ref") =>
            {
                arguments.insert("workflow".to_owned(), Value::Object(Map::new()));
            }
            (Fault::ModeIgnored, "run_workflow")
                if !arguments
                    .get("mode")
                    .and_then(Value::as_str)
                    .is_some_and(|mode| ["immediate", "deploy"].contains(&mode)) =>
            {
                arguments.insert("mode".to_owned(), "immediate".into());
            }
            (Fault::GuideFetchIndexForm, "pilotage_get_guide") => {
                arguments.remove("id");
                arguments.remove("topic");
            }
            (Fault::TraceFetchFull, "trace_run") => {
                arguments.insert("trace_level".to_owned(), "full".into());
            }
            _ => {}
        }
    }

    /// The answer as the faulty engine sends it.
    fn answer(&self, tool: &str, arguments: &Map<String, Value>, result: &mut rmcp::model::CallToolResult) {
        let Some(content) = result.structured_content.as_mut() else {
            return;
        };
        match (self.fault, tool) {
            (Fault::CatalogListNoVersion, "pilotage_catalog") if arguments.get("verb") == Some(&"list".into()) => {
                if let Some(members) = content.as_object_mut() {
                    members.remove("catalog_version");
                }
            }
            (Fault::NotFoundNoCatalogVersion, "pilotage_catalog")
                if content.pointer("/error/kind") == Some(&"not_found".into()) =>
            {
                if let Some(members) = content.as_object_mut() {
                    members.remove("catalog_version");
                }
            }
            (Fault::UnknownRunInvalidRequest, "trace_run")
                if content.pointer("/error/kind") == Some(&"not_found".into()) =>
            {
                content["error"]["kind"] = "invalid_request".into();
            }
            (Fault::FailedRunIsError, "run_workflow") if content.pointer("/outcome/ok") == Some(&false.into()) => {
                result.is_error = Some(true);
            }
            _ => {}
        }
    }
}

impl ServerHandler for Faulty {
    fn get_info(&self) -> InitializeResult {
        self.inner.get_info()
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        self.inner.initialize(request, context).await
    }

    async fn discover(&self, context: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        self.inner.discover(context).await
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut listed = self.inner.list_tools(request, context).await?;
        if self.fault == Fault::DestructiveHintFalse {
            for tool in listed.tools.iter_mut().filter(|t| t.name == "run_workflow") {
                if let Some(annotations) = tool.annotations.as_mut() {
                    annotations.destructive_hint = Some(false);
                }
            }
        }
        Ok(listed)
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.inner.get_tool(name)
    }

    async fn call_tool(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let tool = request.name.to_string();
        let mut arguments = request.arguments.take().unwrap_or_default();
        let sent = arguments.clone();
        self.arguments(&tool, &mut arguments);
        request.arguments = Some(arguments);
        let mut response = self.inner.call_tool(request, context).await?;
        if let CallToolResponse::Complete(result) = &mut response {
            self.answer(&tool, &sent, result);
        }
        Ok(response)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.inner.list_resources(request, context).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let catalog = request.uri.starts_with("pilotage://catalog/");
        let mut response = self.inner.read_resource(request, context).await?;
        if let (Fault::StaleCatalogResource, true, ReadResourceResponse::Complete(result)) =
            (self.fault, catalog, &mut response)
        {
            for content in result.contents.iter_mut() {
                if let ResourceContents::TextResourceContents { text, .. } = content {
                    if let Ok(mut value) = serde_json::from_str::<Value>(text) {
                        value["catalog_version"] = crate::catalog::PREVIOUS_CATALOG_VERSION.into();
                        *text = value.to_string();
                    }
                }
            }
        }
        Ok(response)
    }
}
