//! `reference-engine`: the Pilotage reference engine over stdio (the default) or streamable
//! HTTP (`--http ADDR`, endpoint `http://ADDR/mcp`).
//!
//! ```text
//! cargo run -p pilotage-reference-engine                                  # stdio
//! cargo run -p pilotage-reference-engine -- --http 127.0.0.1:8080         # HTTP, sessions
//! cargo run -p pilotage-reference-engine -- --http 127.0.0.1:8080 --stateless
//! ```
//!
//! Every revision rmcp speaks is served: 2025-06-18 and 2025-11-25 through initialize, the
//! stateless 2026-07-28 through `server/discover` and per-request `_meta`. Over HTTP, the
//! framework validates `Host` and `Origin` as the MCP transport rules say (`pilotage_types::transport`):
//! the loopback names with any port are served, a foreign Host or Origin is refused unless
//! allowed with `--allow-host` / `--allow-origin`; request bodies are bounded
//! (`--max-body-bytes`, 4 MiB by default).
//!
//! With `--oauth-resource URI` and `--oauth-issuer URL` (feature `oauth`, on by default), the
//! HTTP endpoint is an OAuth resource server (MCP authorization): every request needs a bearer
//! JWT that the issuer signed for URI (`aud`), with every `--oauth-scope`; the keys come from
//! `--oauth-jwks-uri` or the issuer's metadata; the protected resource metadata is served at
//! `/.well-known/oauth-protected-resource/mcp`. Runs are then the token subject's. With
//! `--oauth-introspection-endpoint URL --oauth-client-id ID` and the secret in
//! `PILOTAGE_OAUTH_CLIENT_SECRET`, opaque tokens are introspected (RFC 7662).
//!
//! ```text
//! cargo run -p pilotage-reference-engine -- --http 127.0.0.1:8080 \
//!     --oauth-resource http://127.0.0.1:8080/mcp --oauth-issuer https://auth.example.com --oauth-scope pilotage
//! ```
//!
//! `--execution-both` declares workflow/v1 with `"execution": "both"`: `run_workflow` then
//! requires `mode` (`immediate` or `deploy`; this engine has no deployment target, so a
//! deployed workflow runs at once).
//!
//! Fault injection, to show that a conformance checker (`pilotage check`) catches each fault:
//! `--break NAME` (one at a time, with any transport) changes exactly one behaviour; without
//! it the engine is conformant. An unknown NAME is a usage error (exit status 2), and so is a
//! fault without the option it needs.
//!
//! - guide-fetch-index-form: a guide fetch (`pilotage_get_guide` with `id`) answers the index
//!   form instead of the guide with its body (4.1);
//! - catalog-list-no-version: the catalog `list` answers without `catalog_version` (4.2);
//! - not-found-no-catalog-version: a catalog `get` of an unknown id answers `not_found`
//!   without the `catalog_version` sibling (4.2, 7.2);
//! - mode-ignored (needs --execution-both): a missing or unrecognized `mode` runs the workflow
//!   immediately instead of being refused as `invalid_request` (4.4);
//! - destructive-hint-false: `run_workflow` is annotated `destructiveHint: false` although
//!   the catalog has a destructive entry (4.5);
//! - both-runnables-run: `run_workflow` with both `workflow` and `program_ref` runs the
//!   workflow instead of refusing the request as `invalid_request` (4.6);
//! - neither-runnable-runs: `run_workflow` with neither runs an empty workflow instead of
//!   refusing the request as `invalid_request` (4.6);
//! - unknown-run-invalid-request: a trace fetch of an unknown `run_id` answers
//!   `invalid_request` instead of `not_found` (9.5);
//! - stale-catalog-resource (needs --resources): the catalog resource carries the previous
//!   catalog version, unlike the `pilotage_catalog` list (8.3);
//! - trace-fetch-full: a trace fetch answers the recorded full trace whatever level is asked,
//!   not min(requested, recorded) (Part II 6.6, through 4.3);
//! - failed-run-is-error: an execute response with `ok: false` (a failed Run) is sent with
//!   `isError: true` (6, 7.1).

use std::net::SocketAddr;

use clap::Parser;
use pilotage_reference_engine::faults::Faulty;
use pilotage_reference_engine::{engine, Fault, Options};
use pilotage_server::HttpOptions;

/// The Pilotage reference engine (workflow/v1) over stdio or streamable HTTP.
#[derive(Parser, Debug)]
#[command(name = "reference-engine", version)]
struct Args {
    /// Serve streamable HTTP at ADDR (endpoint http://ADDR/mcp) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// Over HTTP: no sessions; every POST is answered on its own (JSON responses).
    #[arg(long, requires = "http")]
    stateless: bool,
    /// Serve the guides and the catalog as MCP resources too (Part III 8.3).
    #[arg(long)]
    resources: bool,
    /// Hide the Pilotage tools from clients that did not declare the extension (Part III 1.3).
    #[arg(long)]
    hide_from_undeclared: bool,
    /// Declare workflow/v1 with "execution": "both": run_workflow requires `mode` (Part III 4.4).
    #[arg(long)]
    execution_both: bool,
    /// One deliberate conformance fault, to test conformance checkers (see the crate docs).
    #[arg(long = "break", value_name = "NAME", value_enum)]
    fault: Option<Fault>,
    /// Over HTTP: a Host name to accept besides the loopback names (repeatable).
    #[arg(long, value_name = "HOST", requires = "http")]
    allow_host: Vec<String>,
    /// Over HTTP: a foreign browser Origin to accept besides the loopback ones (which are
    /// accepted with any port), e.g. `https://app.example.com` (repeatable).
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    allow_origin: Vec<String>,
    /// Over HTTP: the largest request body accepted, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 4 * 1024 * 1024, requires = "http")]
    max_body_bytes: usize,
    /// Over HTTP with sessions: the most sessions open at once.
    #[arg(long, value_name = "N", default_value_t = 1000, requires = "http")]
    max_sessions: usize,
    /// Where runs are kept: `memory` (the default, gone with the process), `sqlite:PATH` (one
    /// file, shared by the engines of one host, survives a restart) or a Postgres connection
    /// string `postgres://USER@HOST:PORT/DB` (shared by engines on several hosts).
    #[arg(long, value_name = "STORE", default_value = "memory")]
    store: String,
    /// The most runs the whole store keeps (a backstop: over it, the requester holding the
    /// most gives way its oldest).
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    max_runs: usize,
    /// The most bytes of runs the whole store keeps.
    #[arg(long, value_name = "BYTES", default_value_t = 64 * 1024 * 1024)]
    max_bytes: usize,
    /// One requester's share: the most runs it keeps (its own oldest evicted past it).
    #[arg(long, value_name = "N", default_value_t = 1_000)]
    max_runs_per_identity: usize,
    /// One requester's share: the most bytes of runs it keeps.
    #[arg(long, value_name = "BYTES", default_value_t = 8 * 1024 * 1024)]
    max_bytes_per_identity: usize,
    /// The most idempotency records one requester keeps.
    #[arg(long, value_name = "N", default_value_t = 1_000)]
    max_idempotency_per_identity: usize,
    /// The most executes of one requester in flight at once (beyond: bounds_exceeded).
    #[arg(long, value_name = "N", default_value_t = 8)]
    max_executes_per_identity: usize,
    /// Over HTTP with sessions: the most sessions one peer (identity or client address) holds.
    #[arg(long, value_name = "N", default_value_t = 100, requires = "http")]
    max_sessions_per_peer: usize,
    /// Over HTTP: a reverse proxy whose X-Forwarded-For names the client (repeatable).
    #[arg(long, value_name = "IP", requires = "http")]
    trusted_proxy: Vec<std::net::IpAddr>,
    /// How long runs are kept, in seconds (the manifest's retention; default 3600, PT1H).
    #[arg(long, value_name = "SECONDS")]
    retention: Option<u64>,
    /// Logs on stderr: `text` (the default) or `json` (one JSON object a line). What is
    /// logged is chosen by RUST_LOG (default `info,rmcp=warn`).
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = ["text", "json"])]
    log_format: String,
    /// Over HTTP with sessions: close a session idle this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 600, requires = "http")]
    idle_timeout: u64,
    /// Over HTTP: accept bearer JWTs of the authorization server with this issuer URL
    /// (https://, or http:// on loopback; repeatable). Needs --oauth-resource.
    #[cfg(feature = "oauth")]
    #[arg(long, value_name = "URL", requires_all = ["http", "oauth_resource"])]
    oauth_issuer: Vec<String>,
    /// Over HTTP: the endpoint as an OAuth resource server with this canonical URI (e.g.
    /// `https://mcp.example.com/mcp`), which tokens must name in `aud`. Needs --oauth-issuer.
    #[cfg(feature = "oauth")]
    #[arg(long, value_name = "URI", requires_all = ["http", "oauth_issuer"])]
    oauth_resource: Option<String>,
    /// The authorization servers' JWK Set URL (default: `jwks_uri` of each issuer's metadata).
    #[cfg(feature = "oauth")]
    #[arg(long, value_name = "URL", requires = "oauth_resource")]
    oauth_jwks_uri: Option<String>,
    /// A scope every token must grant (repeatable).
    #[cfg(feature = "oauth")]
    #[arg(long, value_name = "SCOPE", requires = "oauth_resource")]
    oauth_scope: Vec<String>,
    /// The authorization server's RFC 7662 introspection endpoint: opaque tokens are checked
    /// there (and every token, without --oauth-jwks-uri). Needs --oauth-client-id and the
    /// client secret in the environment variable PILOTAGE_OAUTH_CLIENT_SECRET (never a flag).
    #[cfg(feature = "oauth")]
    #[arg(long, value_name = "URL", requires_all = ["oauth_resource", "oauth_client_id"])]
    oauth_introspection_endpoint: Option<String>,
    /// This engine's client id at the introspection endpoint.
    #[cfg(feature = "oauth")]
    #[arg(long, value_name = "ID", requires = "oauth_introspection_endpoint")]
    oauth_client_id: Option<String>,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    // stderr, never stdout: stdout is the MCP channel over stdio.
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,rmcp=warn"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    if args.log_format == "json" {
        logs.json().init();
    } else {
        logs.init();
    }
    if let Some(fault) = args.fault {
        let name = clap::ValueEnum::to_possible_value(&fault)
            .map(|v| v.get_name().to_owned())
            .unwrap_or_default();
        let missing = match fault {
            Fault::ModeIgnored if !args.execution_both => Some("--execution-both"),
            Fault::StaleCatalogResource if !args.resources => Some("--resources"),
            _ => None,
        };
        if let Some(option) = missing {
            <Args as clap::CommandFactory>::command()
                .error(
                    clap::error::ErrorKind::MissingRequiredArgument,
                    format!("--break {name} needs {option}"),
                )
                .exit();
        }
        eprintln!("reference-engine: --break {name}: deliberately NOT conformant");
    }
    let limits = pilotage_server::StoreLimits::new(args.max_runs, args.max_bytes)
        .with_identity_share(args.max_runs_per_identity, args.max_bytes_per_identity)
        .with_max_idempotency_per_identity(args.max_idempotency_per_identity);
    let store = match pilotage_server::open_store(&args.store, limits).await {
        Ok(store) => store,
        Err(error) => {
            <Args as clap::CommandFactory>::command()
                .error(
                    clap::error::ErrorKind::InvalidValue,
                    format!("--store {}: {error}", args.store),
                )
                .exit();
        }
    };
    #[cfg(feature = "oauth")]
    let oauth = args.oauth_resource.as_ref().map(|resource| {
        let mut server = pilotage_server::auth::ResourceServer::new(resource);
        for issuer in &args.oauth_issuer {
            server = server.with_issuer(issuer);
        }
        for scope in &args.oauth_scope {
            server = server.with_scope(scope);
        }
        if let Some(uri) = &args.oauth_jwks_uri {
            server = server.with_jwks_uri(uri);
        }
        if let (Some(endpoint), Some(client_id)) = (&args.oauth_introspection_endpoint, &args.oauth_client_id) {
            let Ok(secret) = std::env::var("PILOTAGE_OAUTH_CLIENT_SECRET") else {
                <Args as clap::CommandFactory>::command()
                    .error(
                        clap::error::ErrorKind::MissingRequiredArgument,
                        "--oauth-introspection-endpoint: set the client secret in PILOTAGE_OAUTH_CLIENT_SECRET",
                    )
                    .exit();
            };
            server = server.with_introspection(pilotage_server::auth::Introspection::new(endpoint, client_id, secret));
        }
        if let Err(error) = server.check() {
            <Args as clap::CommandFactory>::command()
                .error(clap::error::ErrorKind::InvalidValue, format!("--oauth-*: {}", error.0))
                .exit();
        }
        server
    });
    let engine = engine(&Options {
        resources: args.resources,
        hide_from_undeclared: args.hide_from_undeclared,
        execution_both: args.execution_both,
        retention: args.retention.map(|secs| std::time::Duration::from_secs(secs.max(1))),
        store: Some(store),
        max_executes_per_identity: Some(args.max_executes_per_identity),
        #[cfg(feature = "oauth")]
        oauth,
    });
    let fault = args.fault;
    let Some(addr) = args.http else {
        match fault {
            Some(fault) => engine.serve_stdio_with(|server| Faulty::new(server, fault)).await?,
            None => engine.serve_stdio().await?,
        }
        return Ok(());
    };
    let mut options = if args.stateless {
        HttpOptions::stateless()
    } else {
        HttpOptions::default()
    };
    options.allowed_hosts = args.allow_host;
    options.allowed_origins = args.allow_origin;
    options.max_body_bytes = args.max_body_bytes;
    options.max_sessions = args.max_sessions;
    options.max_sessions_per_peer = args.max_sessions_per_peer;
    options.trusted_proxies = args.trusted_proxy;
    options.idle_timeout = std::time::Duration::from_secs(args.idle_timeout.max(1));
    match fault {
        Some(fault) => {
            engine
                .serve_http_with(addr, options, move |server| Faulty::new(server, fault))
                .await?
        }
        None => engine.serve_http(addr, options).await?,
    }
    Ok(())
}
