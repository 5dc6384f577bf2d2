//! The client side of Part III: a Pilotage client on the official Rust SDK's
//! client (rmcp), over a child process (stdio) or streamable HTTP, that does what Part III
//! 10.2 asks of a client and nothing it forbids:
//!
//! - **capability declaration** (10.2-1, 1.2): the extension declared on initialize; on the
//!   stateless 2026-07-28 revision, in every request's
//!   `_meta["io.modelcontextprotocol/clientCapabilities"]`, `tools/list` included (rmcp adds it);
//! - **detection and discovery** (1.2, 1.3, 3.1, 3.3): [`discovery`];
//! - **rediscovery** (10.2-3, 3.3): after `notifications/tools/list_changed`; on stateless
//!   deployments after `unknown_baseline`, `catalog_drift` and `not_found`; and on an interval
//!   the caller sets ([`ClientOptions::rediscover_every`]);
//! - **request construction** (10.2-4, 4.4, 5): [`request`];
//! - **machine contract and routing** (10.2-5 to 10.2-7, 6, 7): [`routing`].
//!
//! - **bounded answers**: every wait is bounded by [`ClientOptions::timeout`], and an answer
//!   larger than [`ClientOptions::max_result_bytes`] is refused at once with
//!   [`ClientError::TooLarge`], over stdio and HTTP alike (never taken for silence).
//! - **authorization** (streamable HTTP): a given bearer token, or the OAuth
//!   `client_credentials` and JWT bearer grants run when the server answers 401
//!   ([`ClientOptions::auth`], [`auth`]); a server that requires authorization the client
//!   cannot give fails with [`ClientError::Unauthorized`].
//!
//! The client never starts a Run on its own: only [`PilotageClient::execute`] does, when the
//! caller calls it.
//!
//! ```no_run
//! # async fn demo() -> Result<(), pilotage_client::ClientError> {
//! use pilotage_client::{Channel, ClientOptions, LoopCall, PilotageClient, Target};
//! let mut client = PilotageClient::connect(&Target::Url("http://127.0.0.1:8080/mcp".into()), ClientOptions::default()).await?;
//! let discovery = client.discover().await?;
//! let language = discovery.manifest.languages[0].name.0.clone();
//! let checked = client
//!     .validate(&LoopCall { language, program: Some(serde_json::json!({"steps": []})), ..LoopCall::default() })
//!     .await?;
//! if let Channel::Response(response) = checked.channel {
//!     println!("valid: {}", response.valid);
//! }
//! # Ok(()) }
//! ```

pub mod auth;
pub mod discovery;
pub mod request;
pub mod routing;
mod transport;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ExtensionCapabilities, Implementation, JsonObject,
    ProtocolVersion,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::{Map, Value};

pub use auth::{AuthFailure, AuthFailureKind, ClientAuth, JwtAlgorithm, Secret};
pub use discovery::{DetectedBy, Discovery, ManifestSource, NotPilotage};
pub use request::{LoopCall, Refusal};
pub use routing::{Channel, ContractViolation, RawResult, RoutedRequestError};

use pilotage_types::{
    CatalogRequest, CatalogToolOutput, ExecuteResponse, GetGuideToolOutput, GuideRequest, RequestErrorKind, SchemaDef,
    Stage, TraceFetchResponse, ValidateResponse, CATALOG_TOOL, EXTENSION_ID, GET_GUIDE_TOOL, MANIFEST_TOOL,
};

/// The server to talk to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A command that speaks MCP over stdio, started as a child process.
    Command {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
    /// A streamable HTTP endpoint, e.g. `http://127.0.0.1:8080/mcp`.
    Url(String),
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Command { program, args } => {
                f.write_str(program)?;
                args.iter().try_for_each(|arg| write!(f, " {arg}"))
            }
            Self::Url(url) => f.write_str(url),
        }
    }
}

/// Which MCP revision to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Revision {
    /// The initialize handshake (2025-06-18, 2025-11-25): every server of this binding speaks it.
    #[default]
    Handshake,
    /// The stateless 2026-07-28 revision: `server/discover`, capabilities in every request.
    Stateless,
}

/// How the client behaves.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// The longest any one step (connecting, one request) may take.
    pub timeout: Duration,
    /// Rediscover when the last discovery is older than this (Part III 3.3, a Host-defined
    /// policy interval); `None`: only on the triggers.
    pub rediscover_every: Option<Duration>,
    /// The revision to speak.
    pub revision: Revision,
    /// The client's name in `clientInfo`.
    pub client_name: String,
    /// The largest single message accepted from the server, in bytes (a tool result's
    /// `structuredContent` travels in it, often with a text copy beside it). An answer over it
    /// is refused at once with [`ClientError::TooLarge`] naming the limit, never waited for.
    /// Default [`DEFAULT_MAX_RESULT_BYTES`].
    pub max_result_bytes: usize,
    /// How to authorize with a streamable HTTP server (see [`auth`]); default
    /// [`ClientAuth::None`]. Ignored for a child process.
    pub auth: ClientAuth,
}

/// The default [`ClientOptions::max_result_bytes`]: 128 MiB, several times the largest
/// answers seen in practice (a 20,000-diagnostic validate answer is about 21 MB of
/// `structuredContent`).
pub const DEFAULT_MAX_RESULT_BYTES: usize = 128 * 1024 * 1024;

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(30),
            rediscover_every: None,
            revision: Revision::Handshake,
            client_name: "pilotage-client".to_owned(),
            max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
            auth: ClientAuth::None,
        }
    }
}

/// Why a client operation failed (the three channels of a completed call are not failures:
/// see [`Channel`]).
#[derive(Debug)]
#[non_exhaustive]
pub enum ClientError {
    /// The server could not be started or reached, or the connection broke.
    Connect(String),
    /// A step took longer than [`ClientOptions::timeout`].
    Timeout {
        /// What was being done.
        what: String,
        /// The bound.
        after: Duration,
    },
    /// The server is not a Pilotage server (Part III 1.3).
    NotPilotage(NotPilotage),
    /// The request was not constructed; nothing was sent.
    Refused(Refusal),
    /// A Pilotage tool result broke the machine contract (Part III 6, 7).
    Contract(ContractViolation),
    /// The server's answer is larger than [`ClientOptions::max_result_bytes`]: refused, not
    /// read.
    TooLarge {
        /// What was being done.
        what: String,
        /// The limit, in bytes.
        limit: usize,
    },
    /// The server requires authorization that the client could not give: no credentials, a
    /// token refused, metadata for another resource, a failed token request (see
    /// [`AuthFailure::kind`]).
    Unauthorized {
        /// The server.
        server: String,
        /// Why.
        failure: AuthFailure,
    },
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Connect(message) => write!(f, "cannot talk to the server: {message}"),
            Self::Timeout { what, after } => write!(f, "{what}: no answer within {} s", after.as_secs_f32()),
            Self::NotPilotage(e) => e.fmt(f),
            Self::Refused(e) => e.fmt(f),
            Self::Contract(e) => e.fmt(f),
            Self::TooLarge { what, limit } => write!(
                f,
                "{what}: the server's answer is larger than the limit of {limit} bytes (max_result_bytes, \
                 `--max-result-bytes` on the command line): refused, not read"
            ),
            Self::Unauthorized { server, failure } => write!(f, "{server}: {failure}"),
        }
    }
}

impl std::error::Error for ClientError {}

/// One completed call: what was sent and the channel it ended on.
#[derive(Debug, Clone, PartialEq)]
pub struct Called<T> {
    /// The tool called.
    pub tool: String,
    /// The arguments, exactly as sent.
    pub arguments: Map<String, Value>,
    /// The routed result.
    pub channel: Channel<T>,
}

/// The rmcp client handler: declares the extension, and marks discovery stale when the server
/// says its tools changed.
#[derive(Clone)]
struct Handler {
    config: ClientConfig,
    stale: Arc<AtomicBool>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.stale.store(true, Ordering::SeqCst);
    }
}

/// A connected Pilotage client.
pub struct PilotageClient {
    service: RunningService<RoleClient, Handler>,
    options: ClientOptions,
    oversize: Arc<transport::Oversize>,
    http: bool,
    discovery: Option<(Discovery, Instant)>,
    stale: Arc<AtomicBool>,
}

impl std::fmt::Debug for PilotageClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PilotageClient")
            .field("options", &self.options)
            .field("discovered", &self.discovery.is_some())
            .finish_non_exhaustive()
    }
}

/// A failed connection as a [`ClientError`]: [`ClientError::TooLarge`] when an answer went
/// over the limit.
fn connect_error(target: &str, oversize: &transport::Oversize, error: impl std::fmt::Display) -> ClientError {
    if oversize.is_tripped() {
        ClientError::TooLarge {
            what: format!("connecting to {target}"),
            limit: oversize.limit(),
        }
    } else {
        ClientError::Connect(format!("{target}: {error}"))
    }
}

/// The rmcp error text of an HTTP body over `max_json_response_size`.
const BODY_TOO_LARGE: &str = "exceeded the maximum size";

async fn bounded<T>(
    what: &str,
    after: Duration,
    future: impl std::future::Future<Output = T>,
) -> Result<T, ClientError> {
    tokio::time::timeout(after, future)
        .await
        .map_err(|_| ClientError::Timeout {
            what: what.to_owned(),
            after,
        })
}

impl PilotageClient {
    /// Connects to `target`, declaring the Pilotage extension (Part III 1.2, 10.2-1).
    pub async fn connect(target: &Target, options: ClientOptions) -> Result<Self, ClientError> {
        let mut capabilities = ClientCapabilities::default();
        capabilities.extensions = Some(ExtensionCapabilities::from([(
            EXTENSION_ID.to_owned(),
            JsonObject::new(),
        )]));
        let config = ClientConfig::new(
            capabilities,
            Implementation::new(options.client_name.clone(), env!("CARGO_PKG_VERSION")),
        );
        let stale = Arc::new(AtomicBool::new(false));
        let handler = Handler {
            config,
            stale: stale.clone(),
        };
        let lifecycle = match options.revision {
            Revision::Handshake => ClientLifecycleMode::Initialize,
            Revision::Stateless => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        };
        let connecting = format!("connecting to {target}");
        let oversize = transport::Oversize::new(options.max_result_bytes);
        let (program, args) = match target {
            Target::Command { program, args } => (program, args),
            Target::Url(url) => {
                return Self::connect_http(url, handler, lifecycle, options, oversize, stale).await;
            }
        };
        let mut command = tokio::process::Command::new(program);
        command.args(args);
        let transport = transport::ChildStdio::spawn(command, oversize.clone())
            .map_err(|e| ClientError::Connect(format!("cannot start `{program}`: {e}")))?;
        let served = bounded(
            &connecting,
            options.timeout,
            handler.serve_with_lifecycle(transport, lifecycle),
        )
        .await?;
        let service = served.map_err(|e| connect_error(&target.to_string(), &oversize, e))?;
        Ok(Self::ready(service, options, oversize, false, stale))
    }

    /// Connects over streamable HTTP, authorizing as [`ClientOptions::auth`] says when the
    /// server answers 401 (a given bearer token is sent from the first request).
    async fn connect_http(
        url: &str,
        handler: Handler,
        lifecycle: ClientLifecycleMode,
        options: ClientOptions,
        oversize: Arc<transport::Oversize>,
        stale: Arc<AtomicBool>,
    ) -> Result<Self, ClientError> {
        let unauthorized = |failure: AuthFailure| ClientError::Unauthorized {
            server: url.to_owned(),
            failure,
        };
        let given = match &options.auth {
            ClientAuth::Bearer(token) => {
                let parsed = url::Url::parse(url).map_err(|e| ClientError::Connect(format!("{url}: {e}")))?;
                if !auth::may_carry_secrets(&parsed) {
                    return Err(unauthorized(AuthFailure::new(
                        AuthFailureKind::Unsupported,
                        "a bearer token is only sent over https (or plain http to a loopback address)",
                    )));
                }
                Some(token.clone())
            }
            _ => None,
        };
        let attempt = |token: Option<Secret>| {
            let handler = handler.clone();
            let lifecycle = lifecycle.clone();
            let oversize = oversize.clone();
            let timeout = options.timeout;
            async move {
                let client = transport::HttpClient::new().map_err(|e| ClientError::Connect(format!("{url}: {e}")))?;
                let limit = options.max_result_bytes;
                // An SSE event counts its `data:` prefixes and framing too.
                let mut config =
                    rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
                        url.to_owned(),
                    )
                    .max_json_response_size(limit)
                    .max_sse_event_size(limit.saturating_add(64 * 1024));
                if let Some(token) = &token {
                    config = config.auth_header(token.expose());
                }
                let transport = rmcp::transport::StreamableHttpClientTransport::with_client(client.clone(), config);
                let served = bounded(
                    &format!("connecting to {url}"),
                    timeout,
                    handler.serve_with_lifecycle(transport, lifecycle),
                )
                .await?;
                Ok::<_, ClientError>(served.map_err(|e| (connect_error(url, &oversize, e), client.take_refused())))
            }
        };
        let refused = match attempt(given.clone()).await? {
            Ok(service) => return Ok(Self::ready(service, options, oversize, true, stale)),
            Err((error, None)) => return Err(error),
            Err((_, Some(refused))) => refused,
        };
        let authorizer = auth::Authorizer::new(url, options.timeout).map_err(unauthorized)?;
        let challenge = refused.www_authenticate.as_deref();
        if given.is_some() || !options.auth.is_grant() {
            // Nothing (more) to try: say what the server asks for, as far as its metadata tells.
            let (kind, what) = if given.is_some() {
                (
                    AuthFailureKind::TokenRejected,
                    format!("the server refused the bearer token given (HTTP {})", refused.status),
                )
            } else {
                (
                    AuthFailureKind::CredentialsNeeded,
                    format!(
                        "the server requires authorization (HTTP {}) and no credentials are configured",
                        refused.status
                    ),
                )
            };
            let mut failure = match authorizer.discover(challenge).await {
                Ok(protected) => AuthFailure::new(kind, what).about(&protected),
                Err(f) if f.kind == AuthFailureKind::ResourceMismatch => f,
                Err(f) => AuthFailure {
                    kind,
                    message: format!("{what}; {}", f.message),
                    ..f
                },
            };
            failure.scope = failure
                .scope
                .or_else(|| challenge.and_then(auth::parse_www_authenticate).and_then(|c| c.scope));
            return Err(unauthorized(failure));
        }
        let protected = authorizer.discover(challenge).await.map_err(unauthorized)?;
        let token = authorizer
            .obtain_token(&options.auth, &protected)
            .await
            .map_err(unauthorized)?;
        match attempt(Some(token)).await? {
            Ok(service) => Ok(Self::ready(service, options, oversize, true, stale)),
            Err((error, None)) => Err(error),
            Err((_, Some(again))) => Err(unauthorized(
                AuthFailure::new(
                    AuthFailureKind::TokenRejected,
                    format!(
                        "the server refused the token the authorization server issued (HTTP {}{})",
                        again.status,
                        again
                            .www_authenticate
                            .as_deref()
                            .and_then(auth::parse_www_authenticate)
                            .and_then(|c| c.error.map(|e| format!(", {e}")))
                            .unwrap_or_default()
                    ),
                )
                .about(&protected),
            )),
        }
    }

    fn ready(
        service: RunningService<RoleClient, Handler>,
        options: ClientOptions,
        oversize: Arc<transport::Oversize>,
        http: bool,
        stale: Arc<AtomicBool>,
    ) -> Self {
        Self {
            service,
            options,
            oversize,
            http,
            discovery: None,
            stale,
        }
    }

    /// Waits for the answer to one request, within [`ClientOptions::timeout`]; an answer over
    /// [`ClientOptions::max_result_bytes`] ends the wait at once.
    async fn answer<T>(
        &self,
        what: &str,
        request: impl std::future::Future<Output = Result<T, rmcp::ServiceError>>,
    ) -> Result<Result<T, rmcp::ServiceError>, ClientError> {
        let too_large = || ClientError::TooLarge {
            what: what.to_owned(),
            limit: self.oversize.limit(),
        };
        let raced = async {
            tokio::select! {
                answered = request => Ok(answered),
                () = self.oversize.tripped() => Err(too_large()),
            }
        };
        bounded(what, self.options.timeout, raced).await?
    }

    /// A request that failed in transport, as a [`ClientError`]: [`ClientError::TooLarge`]
    /// when the answer went over the limit.
    fn transport_error(&self, what: &str, error: rmcp::ServiceError) -> ClientError {
        let limit = self.oversize.limit();
        let text = error.to_string();
        if self.oversize.is_tripped() || text.contains(BODY_TOO_LARGE) {
            return ClientError::TooLarge {
                what: what.to_owned(),
                limit,
            };
        }
        if self.http && matches!(error, rmcp::ServiceError::TransportClosed) {
            // rmcp ends an SSE stream whose event is over the limit without saying why.
            return ClientError::Connect(format!(
                "{what}: the server closed the stream before its answer (an answer over the limit of \
                 {limit} bytes, max_result_bytes / `--max-result-bytes`, ends the stream this way)"
            ));
        }
        ClientError::Connect(format!("{what}: {text}"))
    }

    /// The negotiated MCP revision.
    pub fn protocol_version(&self) -> Option<String> {
        self.service.peer_info().map(|info| info.protocol_version.to_string())
    }

    /// Discovers (again): the extension declaration, the inline manifest, `tools/list` and
    /// `pilotage_manifest`, decided by [`discovery::decide`].
    pub async fn discover(&mut self) -> Result<&Discovery, ClientError> {
        let tools = self.list_tools().await?;
        let manifest_tool = if discovery::lists_manifest_tool(&tools) {
            Some(self.call_raw(MANIFEST_TOOL, Map::new()).await?)
        } else {
            None
        };
        let info = self.service.peer_info();
        let protocol_version = self.protocol_version().unwrap_or_default();
        let extensions = info
            .as_ref()
            .and_then(|i| i.capabilities.extensions.as_ref())
            .map(|e| serde_json::to_value(e).expect("extensions serialize"));
        let meta = info
            .as_ref()
            .and_then(|i| i.meta.as_ref())
            .map(|m| Value::Object(m.0.clone()));
        let found = discovery::decide(discovery::Observed {
            protocol_version: &protocol_version,
            stateless: self.is_stateless(),
            extensions: extensions.as_ref(),
            meta: meta.as_ref(),
            tools: &tools,
            manifest_tool,
        })
        .map_err(ClientError::NotPilotage)?;
        self.stale.store(false, Ordering::SeqCst);
        Ok(&self.discovery.insert((found, Instant::now())).0)
    }

    /// The current discovery, rediscovering first when it is missing or stale (a tools/list
    /// change, a stateless trigger, or the interval).
    pub async fn discovery(&mut self) -> Result<&Discovery, ClientError> {
        let expired = match (&self.discovery, self.options.rediscover_every) {
            (None, _) => true,
            (Some((_, at)), Some(every)) => at.elapsed() >= every,
            (Some(_), None) => false,
        };
        if expired || self.needs_rediscovery() {
            return self.discover().await;
        }
        Ok(&self.discovery.as_ref().expect("checked above").0)
    }

    /// Whether the next operation will rediscover first (Part III 3.3, 10.2-3).
    pub fn needs_rediscovery(&self) -> bool {
        self.stale.load(Ordering::SeqCst)
    }

    /// Calls `tool` with `arguments` and returns what it answered, transport aside.
    pub async fn call_raw(&self, tool: &str, arguments: Map<String, Value>) -> Result<RawResult, ClientError> {
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let what = format!("tools/call {tool}");
        let answered = self.answer(&what, self.service.call_tool(params)).await?;
        match answered {
            Ok(result) => Ok(RawResult::Result {
                is_error: result.is_error.unwrap_or(false),
                structured_content: result.structured_content,
            }),
            Err(rmcp::ServiceError::McpError(error)) => Ok(RawResult::Error {
                code: error.code.0,
                message: error.message.to_string(),
            }),
            Err(other) => Err(self.transport_error(&what, other)),
        }
    }

    async fn call<T: SchemaDef + serde::de::DeserializeOwned>(
        &mut self,
        tool: String,
        arguments: Map<String, Value>,
    ) -> Result<Called<T>, ClientError> {
        let raw = self.call_raw(&tool, arguments.clone()).await?;
        let channel = routing::route::<T>(&tool, raw).map_err(ClientError::Contract)?;
        self.note_triggers(&channel);
        Ok(Called {
            tool,
            arguments,
            channel,
        })
    }

    /// Part III 3.3: on a stateless deployment (no notifications), `unknown_baseline`,
    /// `catalog_drift` and `not_found` make the next operation rediscover; so does an unknown
    /// tool that the manifest named.
    fn note_triggers<T>(&self, channel: &Channel<T>) {
        let stateless = self.discovery.as_ref().is_some_and(|(d, _)| d.stateless);
        if rediscovery_trigger(stateless, channel) {
            self.stale.store(true, Ordering::SeqCst);
        }
    }

    /// A loop call of `stage`, constructed from the discovery (nothing guessed) and routed.
    pub async fn call_loop<T: SchemaDef + serde::de::DeserializeOwned>(
        &mut self,
        stage: Stage,
        call: &LoopCall,
    ) -> Result<Called<T>, ClientError> {
        let (tool, arguments) =
            request::construct(self.discovery().await?, stage, call).map_err(ClientError::Refused)?;
        self.call(tool, arguments).await
    }

    /// Validates a program (Part II 6.4).
    pub async fn validate(&mut self, call: &LoopCall) -> Result<Called<ValidateResponse>, ClientError> {
        self.call_loop(Stage::Validate, call).await
    }

    /// Executes a program or a promoted program: starts a Run (Part II 6.5). Only ever called
    /// on the caller's request.
    pub async fn execute(&mut self, call: &LoopCall) -> Result<Called<ExecuteResponse>, ClientError> {
        let called: Called<ExecuteResponse> = self.call_loop(Stage::Execute, call).await?;
        let drift = matches!(&called.channel, Channel::Response(r) if r.outcome.status == "catalog_drift");
        if drift && self.discovery.as_ref().is_some_and(|(d, _)| d.stateless) {
            self.stale.store(true, Ordering::SeqCst);
        }
        Ok(called)
    }

    /// Fetches a stored trace (Part II 6.6).
    pub async fn trace(&mut self, call: &LoopCall) -> Result<Called<TraceFetchResponse>, ClientError> {
        self.call_loop(Stage::Trace, call).await
    }

    /// `pilotage_get_guide` (Part III 4.1): the index, a guide, or a topic.
    pub async fn get_guide(&mut self, request: &GuideRequest) -> Result<Called<GetGuideToolOutput>, ClientError> {
        let discovery = self.discovery().await?;
        let arguments = match request {
            GuideRequest::Index { language } => object([("language", language)]),
            GuideRequest::Fetch { language, id } => object([("language", language), ("id", id)]),
            GuideRequest::Topic { language, id, topic } => {
                object([("language", language), ("id", id), ("topic", topic)])
            }
        };
        GuideRequest::from_arguments(&Value::Object(arguments.clone()), &discovery.manifest).map_err(|fault| {
            ClientError::Refused(Refusal {
                message: fault.to_string(),
            })
        })?;
        self.call(GET_GUIDE_TOOL.to_owned(), arguments).await
    }

    /// `pilotage_catalog` (Part III 4.2), refused before sending when the Language does not
    /// declare the sub-feature it needs.
    pub async fn catalog(&mut self, request: &CatalogRequest) -> Result<Called<CatalogToolOutput>, ClientError> {
        let discovery = self.discovery().await?;
        let mut arguments = Map::new();
        let mut put = |name: &str, value: Option<Value>| {
            if let Some(value) = value {
                arguments.insert(name.to_owned(), value);
            }
        };
        match request {
            CatalogRequest::List {
                language,
                kind,
                tag,
                q,
                cursor,
                limit,
            } => {
                put("language", Some(language.clone().into()));
                put("verb", Some("list".into()));
                put("kind", kind.clone().map(Value::from));
                put("tag", tag.clone().map(Value::from));
                put("q", q.clone().map(Value::from));
                put("cursor", cursor.clone().map(Value::from));
                put("limit", limit.map(Value::from));
            }
            CatalogRequest::Get { language, id } => {
                put("language", Some(language.clone().into()));
                put("verb", Some("get".into()));
                put("id", Some(id.clone().into()));
            }
            CatalogRequest::ChangedSince {
                language,
                catalog_version,
            } => {
                put("language", Some(language.clone().into()));
                put("verb", Some("changed_since".into()));
                put("catalog_version", Some(catalog_version.clone().into()));
            }
        }
        CatalogRequest::from_arguments(&Value::Object(arguments.clone()), &discovery.manifest).map_err(|fault| {
            ClientError::Refused(Refusal {
                message: fault.to_string(),
            })
        })?;
        self.call(CATALOG_TOOL.to_owned(), arguments).await
    }

    /// What the server said about itself, as the initialize result (or, on 2026-07-28, the
    /// `server/discover` result) reads: `protocolVersion`, `capabilities`, `serverInfo`,
    /// `instructions`, `_meta`. For the conformance linter.
    pub fn server_view(&self) -> Value {
        let Some(info) = self.service.peer_info() else {
            return Value::Object(Map::new());
        };
        let mut view = Map::new();
        view.insert(
            "protocolVersion".into(),
            Value::String(info.protocol_version.to_string()),
        );
        view.insert(
            "capabilities".into(),
            serde_json::to_value(&info.capabilities).expect("capabilities serialize"),
        );
        if let Some(server) = &info.server_info {
            view.insert(
                "serverInfo".into(),
                serde_json::to_value(server).expect("serverInfo serializes"),
            );
        }
        if let Some(instructions) = &info.instructions {
            view.insert("instructions".into(), Value::String(instructions.clone()));
        }
        if let Some(meta) = &info.meta {
            view.insert("_meta".into(), Value::Object(meta.0.clone()));
        }
        Value::Object(view)
    }

    /// Reads the resource at `uri` and parses its first text content as JSON (Part III 8.3:
    /// the guides and catalog resources carry what the tools answer).
    pub async fn read_json_resource(&self, uri: &str) -> Result<Value, ClientError> {
        let params = rmcp::model::ReadResourceRequestParams::new(uri.to_owned());
        let what = format!("resources/read {uri}");
        let read = self
            .answer(&what, self.service.read_resource(params))
            .await?
            .map_err(|e| self.transport_error(&what, e))?;
        let text = read.contents.iter().find_map(|content| match content {
            rmcp::model::ResourceContents::TextResourceContents { text, .. } => Some(text.clone()),
            _ => None,
        });
        let text = text.ok_or_else(|| ClientError::Connect(format!("resources/read {uri}: no text content")))?;
        serde_json::from_str(&text).map_err(|e| ClientError::Connect(format!("resources/read {uri}: not JSON: {e}")))
    }

    /// Whether the server declared the Pilotage extension (initialize or `server/discover`).
    pub fn declares_extension(&self) -> bool {
        self.service
            .peer_info()
            .and_then(|info| info.capabilities.extensions.clone())
            .is_some_and(|extensions| extensions.contains_key(EXTENSION_ID))
    }

    /// Whether the negotiated revision is the stateless one (no initialize).
    pub fn is_stateless(&self) -> bool {
        !self
            .service
            .peer_info()
            .is_some_and(|info| info.protocol_version.has_initialize())
    }

    /// The `tools/list` entries, as listed.
    pub async fn list_tools(&self) -> Result<Vec<Value>, ClientError> {
        let listed = self
            .answer("tools/list", self.service.list_all_tools())
            .await?
            .map_err(|e| self.transport_error("tools/list", e))?;
        Ok(listed
            .iter()
            .map(|tool| serde_json::to_value(tool).expect("an rmcp Tool serializes"))
            .collect())
    }

    /// Closes the connection (and stops a child process).
    pub async fn close(self) -> Result<(), ClientError> {
        self.service
            .cancel()
            .await
            .map(|_| ())
            .map_err(|e| ClientError::Connect(format!("closing: {e}")))
    }
}

/// Whether `channel` makes the next operation rediscover (Part III 3.3, 10.2-3): on a
/// stateless deployment, `unknown_baseline` and `not_found` (a name believed current); on any,
/// an unknown tool (the manifest named it). `catalog_drift` is an outcome, checked by
/// [`PilotageClient::execute`].
pub fn rediscovery_trigger<T>(stateless: bool, channel: &Channel<T>) -> bool {
    match channel {
        Channel::RequestError(error) => {
            stateless && (error.raw_kind == "unknown_baseline" || error.kind == RequestErrorKind::NotFound)
        }
        Channel::Carrier { message, .. } => message.starts_with("Unknown tool"),
        Channel::Response(_) => false,
    }
}

fn object<'a>(members: impl IntoIterator<Item = (&'a str, &'a String)>) -> Map<String, Value> {
    members
        .into_iter()
        .map(|(name, value)| (name.to_owned(), Value::String(value.clone())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request_error(kind: &str) -> Channel<Value> {
        let error: pilotage_types::RequestError =
            serde_json::from_value(json!({"error": {"kind": kind, "message": "m"}})).unwrap();
        Channel::RequestError(RoutedRequestError {
            kind: error.error.kind.effective(),
            raw_kind: kind.to_owned(),
            error,
        })
    }

    #[test]
    fn rediscovery_triggers_follow_part_iii_3_3() {
        assert!(rediscovery_trigger(true, &request_error("unknown_baseline")));
        assert!(rediscovery_trigger(true, &request_error("not_found")));
        assert!(
            !rediscovery_trigger(false, &request_error("not_found")),
            "sessions get notifications"
        );
        assert!(!rediscovery_trigger(true, &request_error("invalid_request")));
        let unknown_tool = Channel::<Value>::Carrier {
            code: -32602,
            message: "Unknown tool: run_workflow".into(),
        };
        assert!(rediscovery_trigger(false, &unknown_tool));
        assert!(!rediscovery_trigger(true, &Channel::Response(json!({}))));
    }
}
