//! `pilotage discover` against a protected server on loopback: without credentials it exits 2
//! naming the authorization server and the flags; with a client secret from the environment it
//! runs the client_credentials grant and gets through (exit 1: the stub is not a Pilotage
//! server); a refused bearer token exits 2. No secret or token is ever printed.

use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;

const SECRET: &str = "top-secret-value";
const TOKEN: &str = "issued-token-value";

#[derive(Clone)]
struct Stub {
    base: String,
    /// The Authorization header of each token request.
    token_requests: Arc<Mutex<Vec<Option<String>>>>,
}

fn json(body: String) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

async fn mcp(State(stub): State<Stub>, headers: HeaderMap, body: Bytes) -> Response {
    if headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()) != Some(&format!("Bearer {TOKEN}")) {
        let challenge = format!(
            r#"Bearer resource_metadata="{}/.well-known/oauth-protected-resource/mcp""#,
            stub.base
        );
        return (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, challenge)]).into_response();
    }
    let message: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let Some(id) = message.get("id") else {
        return StatusCode::ACCEPTED.into_response();
    };
    let result = match message["method"].as_str() {
        Some("initialize") => serde_json::json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "stub", "version": "1"}
        }),
        Some("tools/list") => serde_json::json!({"tools": []}),
        _ => serde_json::json!({}),
    };
    json(serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string())
}

async fn start() -> (String, Arc<Mutex<Vec<Option<String>>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let stub = Stub {
        base: base.clone(),
        token_requests: Arc::default(),
    };
    let requests = stub.token_requests.clone();
    let app = Router::new()
        .route("/mcp", post(mcp).get(|| async { StatusCode::METHOD_NOT_ALLOWED }))
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(|State(stub): State<Stub>| async move {
                json(format!(
                    r#"{{"resource": "{0}/mcp", "authorization_servers": ["{0}"]}}"#,
                    stub.base
                ))
            }),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(|State(stub): State<Stub>| async move {
                json(format!(
                    r#"{{"issuer": "{0}", "token_endpoint": "{0}/token", "grant_types_supported": ["client_credentials"]}}"#,
                    stub.base
                ))
            }),
        )
        .route(
            "/token",
            post(|State(stub): State<Stub>, headers: HeaderMap| async move {
                let authorization = headers
                    .get(header::AUTHORIZATION)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                stub.token_requests.lock().unwrap().push(authorization);
                json(format!(r#"{{"access_token": "{TOKEN}", "token_type": "Bearer"}}"#))
            }),
        )
        .with_state(stub);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, requests)
}

fn pilotage(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_pilotage"));
    command
        .args(args)
        .env_remove("PILOTAGE_BEARER_TOKEN")
        .env_remove("PILOTAGE_CLIENT_SECRET");
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().expect("pilotage runs")
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn discover_against_a_protected_server() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (base, token_requests) = runtime.block_on(start());
    // The stub serves from the runtime, driven on a thread of its own.
    let driver = std::thread::spawn(move || {
        runtime.block_on(async { tokio::time::sleep(std::time::Duration::from_secs(60)).await })
    });
    let url = format!("{base}/mcp");
    let common = ["discover", "--format", "json", "--timeout", "10", "--url", url.as_str()];

    let refused = pilotage(&common, &[]);
    let said = text(&refused);
    assert_eq!(refused.status.code(), Some(2), "{said}");
    for wanted in [
        "requires authorization",
        base.as_str(),
        "PILOTAGE_BEARER_TOKEN",
        "--client-id",
        "PILOTAGE_CLIENT_SECRET",
    ] {
        assert!(said.contains(wanted), "{wanted}: {said}");
    }
    assert!(token_requests.lock().unwrap().is_empty());

    let authorized = pilotage(
        &[&common[..], &["--client-id", "ci"]].concat(),
        &[("PILOTAGE_CLIENT_SECRET", SECRET)],
    );
    let said = text(&authorized);
    assert_eq!(
        authorized.status.code(),
        Some(1),
        "through, to a server that is not Pilotage: {said}"
    );
    assert!(
        said.contains("\"pilotage\": false") || said.contains("\"pilotage\":false"),
        "{said}"
    );
    assert_eq!(token_requests.lock().unwrap().len(), 1);
    assert!(token_requests.lock().unwrap()[0]
        .as_deref()
        .is_some_and(|a| a.starts_with("Basic ")));

    let stale = pilotage(&common, &[("PILOTAGE_BEARER_TOKEN", "stale-token-value")]);
    let said = text(&stale);
    assert_eq!(stale.status.code(), Some(2), "{said}");
    assert!(said.contains("refused the bearer token"), "{said}");

    for output in [&refused, &authorized, &stale] {
        let said = text(output);
        for secret in [SECRET, TOKEN, "stale-token-value"] {
            assert!(!said.contains(secret), "{secret} printed: {said}");
        }
    }
    drop(driver);
}
