//! Serving an engine over streamable HTTP (rmcp's `StreamableHttpService`, with sessions or
//! stateless), as an `axum` [`Router`] to serve or to mount inside an existing application,
//! with what MCP's transport rules and a safe default ask and rmcp leaves out:
//!
//! - `Host` and `Origin`: the loopback names are served with any port, other names only when
//!   allowed; a refused request gets 403 with a JSON-RPC error body (`-32000`, `id: null`);
//! - bodies over [`HttpOptions::max_body_bytes`] get 413 (rmcp's bound);
//! - at most [`HttpOptions::max_sessions`] sessions, each closed after
//!   [`HttpOptions::idle_timeout`] without a request, its session-bound runs forgotten with
//!   it; nobody can hoard them: at the cap, the session idle longest gives way to the
//!   newcomer (closed as on expiry), and one peer holds at most
//!   [`HttpOptions::max_sessions_per_peer`], its own idle-longest giving way past that (the
//!   peer: the authorization identity when the engine has an identity function that finds
//!   one, else the client's IP address, read from `X-Forwarded-For` only when the connection
//!   comes from one of [`HttpOptions::trusted_proxies`]);
//! - a warning on standard error when bound beyond loopback with no allowed host;
//! - `GET /healthz` (200 while the process serves) and `GET /readyz` (200 when the run store
//!   answers within [`READY_TIMEOUT`], else 503), outside the Host and Origin checks and any
//!   authentication, for load balancers and orchestrators.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, Request, Response, StatusCode};
use axum::middleware::Next;
use axum::Router;
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, SessionConfig};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServerHandler;

use super::Engine;

/// How an engine is served over HTTP. Start from [`HttpOptions::default`] (sessions, loopback
/// only) and change what you need.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    /// Serve the stateless 2026-07-28 way: no sessions, a JSON response per POST.
    pub stateless: bool,
    /// Host names to accept besides the loopback ones (for a deployment behind a name).
    pub allowed_hosts: Vec<String>,
    /// Browser Origins to accept besides the loopback ones (e.g. `https://app.example.com`).
    pub allowed_origins: Vec<String>,
    /// The largest request body, in bytes (default 4 MiB).
    pub max_body_bytes: usize,
    /// The most sessions open at once (default 1,000). At the cap, the session idle longest
    /// is closed for the newcomer (its session-bound runs forgotten, as on expiry).
    pub max_sessions: usize,
    /// The most sessions one peer holds at once (default 100): past it, that peer's own
    /// session idle longest is closed for its newcomer, so that one peer's flood never
    /// pushes out another's sessions. The peer is the authorization identity when the
    /// engine's identity function finds one, else the client's IP address.
    pub max_sessions_per_peer: usize,
    /// A session without a request for this long is closed (default 10 minutes).
    pub idle_timeout: Duration,
    /// Reverse proxies whose `X-Forwarded-For` header names the client (default none: the
    /// header is ignored and the peer is the connection's address, so that a client cannot
    /// choose its own peer by sending the header).
    pub trusted_proxies: Vec<IpAddr>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            stateless: false,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            max_body_bytes: 4 * 1024 * 1024,
            max_sessions: 1000,
            max_sessions_per_peer: 100,
            idle_timeout: Duration::from_secs(600),
            trusted_proxies: Vec::new(),
        }
    }
}

impl HttpOptions {
    /// Stateless serving (2026-07-28): no sessions.
    pub fn stateless() -> Self {
        Self {
            stateless: true,
            ..Self::default()
        }
    }
}

/// How long `GET /readyz` waits for the run store before answering 503.
pub const READY_TIMEOUT: Duration = Duration::from_secs(2);

/// `GET /healthz` and `GET /readyz` (see the module docs).
fn health_routes(engine: Engine) -> Router {
    let health = || async {
        Response::builder()
            .status(StatusCode::OK)
            .header("content-type", "application/json")
            .body(Body::from(r#"{"status":"up"}"#))
            .expect("a static response builds")
    };
    let ready = move || {
        let engine = engine.clone();
        async move {
            let (status, body) = match tokio::time::timeout(READY_TIMEOUT, engine.core.runs.ping()).await {
                Ok(Ok(())) => (StatusCode::OK, serde_json::json!({"status": "ready"})),
                Ok(Err(error)) => (
                    StatusCode::SERVICE_UNAVAILABLE,
                    serde_json::json!({"status": "unavailable", "reason": error.to_string()}),
                ),
                Err(_) => (
                    StatusCode::SERVICE_UNAVAILABLE,
                    serde_json::json!({"status": "unavailable", "reason": format!(
                        "the run store did not answer within {} s", READY_TIMEOUT.as_secs()
                    )}),
                ),
            };
            Response::builder()
                .status(status)
                .header("content-type", "application/json")
                .body(Body::from(body.to_string()))
                .expect("a JSON response builds")
        }
    };
    Router::new()
        .route("/healthz", axum::routing::get(health))
        .route("/readyz", axum::routing::get(ready))
}

/// A JSON-RPC error response with `status`.
pub(crate) fn refused(status: StatusCode, message: &str) -> Response<Body> {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": message}});
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .expect("a static response builds")
}

/// The host of a `Host` header or an Origin's authority (brackets of IPv6 kept out), without
/// its port, lowercased.
fn host_of(authority: &str) -> String {
    let authority = authority.trim();
    let host = if let Some(rest) = authority.strip_prefix('[') {
        rest.split(']').next().unwrap_or_default()
    } else {
        authority.rsplit_once(':').map_or(authority, |(host, port)| {
            if port.chars().all(|c| c.is_ascii_digit()) {
                host
            } else {
                authority
            }
        })
    };
    host.to_ascii_lowercase()
}

fn is_loopback(host: &str) -> bool {
    pilotage_types::transport::LOOPBACK_HOSTS.contains(&host)
}

/// Whether `headers` pass the Host and Origin rules (see the module docs).
pub(crate) fn check_host_and_origin(headers: &HeaderMap, options: &HttpOptions) -> Result<(), &'static str> {
    let host = headers
        .get("host")
        .and_then(|h| h.to_str().ok())
        .map(host_of)
        .ok_or("Forbidden: missing or unreadable Host header")?;
    if !is_loopback(&host) && !options.allowed_hosts.iter().any(|h| h.eq_ignore_ascii_case(&host)) {
        return Err("Forbidden: Host header is not allowed");
    }
    let Some(origin) = headers.get("origin") else {
        return Ok(());
    };
    let origin = origin
        .to_str()
        .map_err(|_| "Forbidden: Invalid Origin header encoding")?;
    let allowed = match origin.split_once("://") {
        Some((scheme, authority)) if matches!(scheme, "http" | "https") && !authority.contains('/') => {
            is_loopback(&host_of(authority))
                || options
                    .allowed_origins
                    .iter()
                    .any(|o| o.trim_end_matches('/').eq_ignore_ascii_case(origin))
        }
        _ => false,
    };
    if allowed {
        Ok(())
    } else {
        Err("Forbidden: Origin header is not allowed")
    }
}

/// Hands the memory of closed sessions back to the operating system. glibc's allocator keeps
/// freed pages of its arenas for reuse, so without this an engine's resident size after a
/// burst of abandoned sessions stays at the burst's peak (about 50 KB a session) although the
/// sessions are gone; `malloc_trim` returns them. Elsewhere (musl, other systems) a no-op.
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        // SAFETY: malloc_trim only releases free memory of the allocator's own arenas; it
        // takes no pointer and touches no memory in use.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// One open session: when it was last used, and whose it is (when known).
struct Open {
    last_seen: Instant,
    peer: Option<String>,
}

/// The peer a request comes from (see [`HttpOptions::max_sessions_per_peer`]); `None` when
/// neither an identity nor the client's address is known (a router served without
/// `ConnectInfo`): then only the overall cap applies.
fn peer_of(request: &Request<Body>, engine: &Engine, options: &HttpOptions) -> Option<String> {
    if let Some(identity_fn) = &engine.identity_fn {
        let (parts, _) = Request::builder()
            .uri(request.uri().clone())
            .method(request.method().clone())
            .body(())
            .map(|r| r.into_parts())
            .unwrap_or_else(|_| Request::new(()).into_parts());
        let mut parts = parts;
        parts.headers = request.headers().clone();
        // What a middleware in front put there (feature oauth: the verified token).
        parts.extensions = request.extensions().clone();
        if let Some(identity) = identity_fn(&parts) {
            return Some(format!("auth:{identity}"));
        }
    }
    let mut address = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip())?;
    // The rightmost address a trusted proxy did not add is the client.
    if options.trusted_proxies.contains(&address) {
        let forwarded: Vec<IpAddr> = request
            .headers()
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .filter_map(|a| a.trim().parse().ok())
            .collect();
        for hop in forwarded.iter().rev() {
            address = *hop;
            if !options.trusted_proxies.contains(hop) {
                break;
            }
        }
    }
    Some(format!("address:{address}"))
}

/// The open sessions and when each was last used.
struct Sessions {
    last_seen: Mutex<HashMap<String, Open>>,
    manager: Arc<LocalSessionManager>,
    engine: Engine,
    options: HttpOptions,
    last_sweep: Mutex<Instant>,
}

impl Sessions {
    fn table(&self) -> std::sync::MutexGuard<'_, HashMap<String, Open>> {
        self.last_seen.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Makes room for a new session of `peer`: past the peer's bound its own session idle
    /// longest is closed, and at the cap the session idle longest of all.
    async fn make_room(&self, peer: Option<&str>) {
        let (own, oldest) = {
            let table = self.table();
            let idle_longest = |of_peer: bool| {
                table
                    .iter()
                    .filter(|(_, open)| !of_peer || open.peer.as_deref() == peer)
                    .min_by_key(|(_, open)| open.last_seen)
                    .map(|(id, _)| id.clone())
            };
            let held = match peer {
                Some(peer) => table.values().filter(|open| open.peer.as_deref() == Some(peer)).count(),
                None => 0,
            };
            let own = (held >= self.options.max_sessions_per_peer)
                .then(|| idle_longest(true))
                .flatten();
            let full = table.len() - usize::from(own.is_some()) >= self.options.max_sessions;
            (own, full.then(|| idle_longest(false)).flatten())
        };
        for id in own.into_iter().chain(oldest) {
            tracing::info!(
                reason = "session bound",
                "the session idle longest gives way to a newcomer (its session-bound runs are forgotten)"
            );
            self.close(&id).await;
        }
    }

    /// Closes every session idle past the timeout (its runs bound to the session go too), and
    /// sweeps expired runs from the store.
    async fn sweep(&self) {
        let now = Instant::now();
        {
            let mut last = self.last_sweep.lock().unwrap_or_else(|e| e.into_inner());
            if now.duration_since(*last) < self.options.idle_timeout / 4 {
                return;
            }
            *last = now;
        }
        let idle: Vec<String> = if self.options.stateless {
            Vec::new()
        } else {
            self.table()
                .iter()
                .filter(|(_, open)| now.duration_since(open.last_seen) >= self.options.idle_timeout)
                .map(|(id, _)| id.clone())
                .collect()
        };
        let closed = idle.len();
        for id in idle {
            self.close(&id).await;
        }
        if closed > 0 {
            release_freed_memory();
        }
        let _ = self.engine.core.runs.sweep().await;
    }

    async fn close(&self, id: &str) {
        self.table().remove(id);
        let session: rmcp::transport::common::server_side_http::SessionId = Arc::from(id);
        let _ = self.manager.close_session(&session).await;
        let _ = self.engine.core.runs.forget_session(&format!("session:{id}")).await;
    }
}

/// Logs a refusal the transport answered (403, 413, 503) as a `warn` event.
fn log_refusal(status: StatusCode, reason: &str) {
    tracing::warn!(http.response.status_code = status.as_u16(), error.type = %status.as_u16(), reason, "HTTP request refused");
}

async fn guard(State(sessions): State<Arc<Sessions>>, request: Request<Body>, next: Next) -> Response<Body> {
    if let Err(message) = check_host_and_origin(request.headers(), &sessions.options) {
        log_refusal(StatusCode::FORBIDDEN, message);
        return refused(StatusCode::FORBIDDEN, message);
    }
    if sessions.options.stateless {
        let response = next.run(request).await;
        if response.status() == StatusCode::PAYLOAD_TOO_LARGE {
            log_refusal(response.status(), "the request body is over max_body_bytes");
        }
        return response;
    }
    sessions.sweep().await;
    let session = request
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let deleting = request.method() == axum::http::Method::DELETE;
    let mut peer = None;
    match &session {
        Some(id) => {
            if let Some(open) = sessions.table().get_mut(id) {
                open.last_seen = Instant::now();
            }
        }
        None if request.method() == axum::http::Method::POST => {
            // A request without a session may open one: room is made for it first.
            let newcomer = peer_of(&request, &sessions.engine, &sessions.options);
            sessions.make_room(newcomer.as_deref()).await;
            if sessions.options.max_sessions == 0 || sessions.options.max_sessions_per_peer == 0 {
                log_refusal(StatusCode::SERVICE_UNAVAILABLE, "this server opens no sessions");
                return refused(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "Service Unavailable: this server opens no sessions",
                );
            }
            peer = Some(newcomer);
        }
        None => {}
    }
    let response = next.run(request).await;
    if response.status() == StatusCode::PAYLOAD_TOO_LARGE {
        log_refusal(response.status(), "the request body is over max_body_bytes");
    }
    if let (None, Some(id), Some(peer)) = (
        &session,
        response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()),
        peer,
    ) {
        sessions.table().insert(
            id.to_owned(),
            Open {
                last_seen: Instant::now(),
                peer,
            },
        );
    }
    if let (true, Some(id)) = (deleting, &session) {
        sessions.table().remove(id);
        let _ = sessions.engine.core.runs.forget_session(&format!("session:{id}")).await;
    }
    response
}

impl Engine {
    /// The engine as an `axum` [`Router`] serving MCP at `path` (e.g. `/mcp`), to serve with
    /// `axum::serve` or to nest in an application. Must be called inside a Tokio runtime when
    /// sessions are on (a task closes idle sessions). Serve it with
    /// `router.into_make_service_with_connect_info::<SocketAddr>()` (as
    /// [`Engine::serve_http`] does) so that [`HttpOptions::max_sessions_per_peer`] knows each
    /// client's address; without it, and without an identity, only the overall cap applies.
    pub fn http_router(&self, path: &str, options: HttpOptions) -> Result<Router, super::BuildError> {
        self.http_router_with(path, options, |server| server)
    }

    /// [`Engine::http_router`] serving `wrap` of each connection's handler: a handler of your
    /// own around the engine's (a middleware), which must delegate to it.
    pub fn http_router_with<H: ServerHandler>(
        &self,
        path: &str,
        options: HttpOptions,
        wrap: impl Fn(super::PilotageServer) -> H + Send + Sync + Clone + 'static,
    ) -> Result<Router, super::BuildError> {
        if options.stateless
            && self
                .core
                .languages
                .iter()
                .any(|l| l.declaration.retention == super::Retention::Session)
        {
            return Err(super::BuildError(
                "a stateless deployment cannot declare session retention (Part III 8.1, 10.1-11)".into(),
            ));
        }
        let hosts = pilotage_types::transport::allowed_hosts(options.allowed_hosts.iter().map(String::as_str));
        let origins = pilotage_types::transport::allowed_origins(options.allowed_origins.iter().map(String::as_str));
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(hosts)
            .with_allowed_origins(origins)
            .enforce_origin_validation()
            .with_max_request_body_bytes(options.max_body_bytes)
            .with_legacy_session_mode(!options.stateless)
            .with_json_response(options.stateless);
        let stateless = options.stateless;
        let engine = self.clone();
        let factory = move || Ok(wrap(engine.connection(stateless)));
        let mut session_config = SessionConfig::default();
        session_config.keep_alive = Some(options.idle_timeout);
        let mut local = LocalSessionManager::default();
        local.session_config = session_config;
        let manager = Arc::new(local);
        let sessions = Arc::new(Sessions {
            last_seen: Mutex::new(HashMap::new()),
            manager: manager.clone(),
            engine: self.clone(),
            options: options.clone(),
            last_sweep: Mutex::new(Instant::now()),
        });
        // One task closes idle sessions and sweeps expired runs (both also happen on the way,
        // in requests and in the store's writes), for as long as the router lives.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let weak = Arc::downgrade(&sessions);
            let every = (options.idle_timeout / 4).clamp(Duration::from_millis(50), Duration::from_secs(60));
            runtime.spawn(async move {
                loop {
                    tokio::time::sleep(every).await;
                    let Some(sessions) = weak.upgrade() else { break };
                    sessions.sweep().await;
                }
            });
        }
        let router = if stateless {
            let service = StreamableHttpService::new(factory, Arc::new(NeverSessionManager::default()), config);
            Router::new().nest_service(path, service)
        } else {
            let service = StreamableHttpService::new(factory, manager, config);
            Router::new().nest_service(path, service)
        };
        let router = router.layer(axum::middleware::from_fn_with_state(sessions, guard));
        // Feature oauth: the resource server's middleware in front of the guard (so that the
        // guard's peer is the verified identity), and its public metadata routes.
        #[cfg(feature = "oauth")]
        let router = match &self.oauth {
            Some(verifier) => super::auth::protected(router, verifier, path, &options),
            None => router,
        };
        // The health endpoints stay outside the guard: a load balancer names no allowed Host.
        Ok(router.merge(health_routes(self.clone())))
    }

    /// Serves the engine over HTTP at `http://ADDR/mcp` until Ctrl-C.
    ///
    /// Once listening it prints one line on standard error, `NAME: serving MCP over
    /// streamable HTTP at http://ADDR/mcp (MODE)`, where `NAME` is the engine's name, `ADDR`
    /// the bound address (the real port when you asked for port 0) and `MODE` `sessions` or
    /// `stateless`: scripts and tests read the URL from it. Bound beyond loopback with no
    /// allowed host, it first prints a line starting `warning: `.
    pub async fn serve_http(&self, addr: SocketAddr, options: HttpOptions) -> std::io::Result<()> {
        self.serve_http_with(addr, options, |server| server).await
    }

    /// [`Engine::serve_http`] serving `wrap` of each connection's handler (see
    /// [`Engine::http_router_with`]).
    pub async fn serve_http_with<H: ServerHandler>(
        &self,
        addr: SocketAddr,
        options: HttpOptions,
        wrap: impl Fn(super::PilotageServer) -> H + Send + Sync + Clone + 'static,
    ) -> std::io::Result<()> {
        if !addr.ip().is_loopback() && options.allowed_hosts.is_empty() {
            eprintln!(
                "warning: {} is bound to {addr}, beyond loopback, but allows no Host name: only requests naming a \
                 loopback host are served; add the names clients use (allowed_hosts)",
                self.core.settings.name
            );
        }
        let stateless = options.stateless;
        let router = self
            .http_router_with("/mcp", options, wrap)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))?;
        let listener = tokio::net::TcpListener::bind(addr).await?;
        eprintln!(
            "{}: serving MCP over streamable HTTP at http://{}/mcp ({})",
            self.core.settings.name,
            listener.local_addr()?,
            if stateless { "stateless" } else { "sessions" }
        );
        // The client's address reaches the session bounds (HttpOptions::max_sessions_per_peer).
        axum::serve(listener, router.into_make_service_with_connect_info::<SocketAddr>())
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(host: &str, origin: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert("host", host.parse().unwrap());
        if let Some(origin) = origin {
            headers.insert("origin", origin.parse().unwrap());
        }
        headers
    }

    #[test]
    fn loopback_is_served_with_any_port_and_foreign_names_only_when_allowed() {
        let options = HttpOptions::default();
        for (host, origin) in [
            ("127.0.0.1:8080", None),
            ("localhost", Some("http://localhost:3000")),
            ("[::1]:9", Some("https://[::1]:8443")),
            ("127.0.0.1:1", Some("http://127.0.0.1")),
        ] {
            assert_eq!(
                check_host_and_origin(&headers(host, origin), &options),
                Ok(()),
                "{host} {origin:?}"
            );
        }
        for (host, origin) in [
            ("evil.example", None),
            ("127.0.0.1:80", Some("http://evil.example")),
            ("127.0.0.1:80", Some("http://127.0.0.1.evil.example")),
            ("127.0.0.1:80", Some("null")),
            ("127.0.0.1:80", Some("file://localhost")),
        ] {
            assert!(
                check_host_and_origin(&headers(host, origin), &options).is_err(),
                "{host} {origin:?}"
            );
        }
        let mut allowing = HttpOptions::default();
        allowing.allowed_hosts.push("mcp.example.com".into());
        allowing.allowed_origins.push("https://app.example.com".into());
        assert_eq!(
            check_host_and_origin(&headers("mcp.example.com", Some("https://app.example.com")), &allowing),
            Ok(())
        );
    }
}
