//! The authorization flows end to end, on loopback: one axum server plays a protected MCP
//! endpoint (401 with a `WWW-Authenticate: Bearer resource_metadata=...` challenge until a
//! request carries the token it issued), its protected resource metadata (RFC 9728) and an
//! authorization server at a path issuer (`/as`: RFC 8414 metadata at
//! `/.well-known/oauth-authorization-server/as`, a token endpoint that records every request).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use base64::Engine as _;
use pilotage_client::{AuthFailureKind, ClientAuth, ClientError, ClientOptions, PilotageClient, Secret, Target};
use serde_json::{json, Value};

const TOKEN: &str = "issued-token-1";

/// A form's fields, in order.
type Form = Vec<(String, String)>;

#[derive(Default)]
struct Log {
    /// Each token request: its form fields and Authorization header.
    token_requests: Vec<(Form, Option<String>)>,
    /// The Authorization header of each MCP request (None: none sent).
    mcp_authorizations: Vec<Option<String>>,
}

#[derive(Clone)]
struct Stub {
    base: String,
    /// The `resource` the protected resource metadata names; None: the MCP endpoint.
    resource: Option<String>,
    /// `token_endpoint_auth_methods_supported`.
    methods: Vec<&'static str>,
    log: Arc<Mutex<Log>>,
}

impl Stub {
    fn challenge(&self) -> String {
        format!(
            r#"Bearer resource_metadata="{}/.well-known/oauth-protected-resource/mcp", scope="pilotage:use""#,
            self.base
        )
    }
}

async fn mcp(State(stub): State<Stub>, headers: HeaderMap, body: Bytes) -> Response {
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    stub.log.lock().unwrap().mcp_authorizations.push(authorization.clone());
    if authorization.as_deref() != Some(&format!("Bearer {TOKEN}")) {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, stub.challenge())],
            "unauthorized",
        )
            .into_response();
    }
    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let Some(id) = message.get("id").cloned() else {
        return StatusCode::ACCEPTED.into_response();
    };
    let result = match message["method"].as_str() {
        Some("initialize") => json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "protected-stub", "version": "1.0.0"}
        }),
        Some("tools/list") => json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}),
        _ => json!({}),
    };
    (
        [(header::CONTENT_TYPE, "application/json")],
        json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
    )
        .into_response()
}

fn json_response(value: Value) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], value.to_string()).into_response()
}

async fn protected_resource(State(stub): State<Stub>) -> Response {
    let resource = stub.resource.clone().unwrap_or(format!("{}/mcp", stub.base));
    json_response(json!({
        "resource": resource,
        "authorization_servers": [format!("{}/as", stub.base)],
        "scopes_supported": ["pilotage:use", "other"]
    }))
}

async fn server_metadata(State(stub): State<Stub>) -> Response {
    json_response(json!({
        "issuer": format!("{}/as", stub.base),
        "authorization_endpoint": format!("{}/as/authorize", stub.base),
        "token_endpoint": format!("{}/as/token", stub.base),
        "grant_types_supported": ["client_credentials", "urn:ietf:params:oauth:grant-type:jwt-bearer"],
        "token_endpoint_auth_methods_supported": stub.methods,
        "response_types_supported": ["code"]
    }))
}

async fn token(State(stub): State<Stub>, headers: HeaderMap, body: Bytes) -> Response {
    let form: Form = url::form_urlencoded::parse(&body).into_owned().collect();
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    stub.log.lock().unwrap().token_requests.push((form, authorization));
    json_response(json!({"access_token": TOKEN, "token_type": "Bearer", "expires_in": 3600}))
}

/// Starts the stub on a free loopback port; returns its base URL and the log.
async fn start(resource: Option<&str>, methods: Vec<&'static str>) -> (String, Arc<Mutex<Log>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let log = Arc::new(Mutex::new(Log::default()));
    let stub = Stub {
        base: base.clone(),
        resource: resource.map(str::to_owned),
        methods,
        log: log.clone(),
    };
    let app = Router::new()
        .route("/mcp", post(mcp).get(|| async { StatusCode::METHOD_NOT_ALLOWED }))
        .route("/.well-known/oauth-protected-resource/mcp", get(protected_resource))
        .route("/.well-known/oauth-authorization-server/as", get(server_metadata))
        .route("/as/token", post(token))
        .with_state(stub);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, log)
}

fn options(auth: ClientAuth) -> ClientOptions {
    ClientOptions {
        timeout: Duration::from_secs(10),
        auth,
        ..ClientOptions::default()
    }
}

fn field<'a>(form: &'a [(String, String)], name: &str) -> Option<&'a str> {
    form.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

#[tokio::test]
async fn client_credentials_flow_sends_the_resource_and_retries_with_the_bearer() {
    let (base, log) = start(None, vec!["client_secret_basic", "client_secret_post"]).await;
    let target = Target::Url(format!("{base}/mcp"));
    let client = PilotageClient::connect(
        &target,
        options(ClientAuth::ClientCredentials {
            client_id: "pilotage ci".into(),
            client_secret: Secret::new("s3cret:x"),
            scope: None,
        }),
    )
    .await
    .expect("connects after authorizing");
    let tools = client.list_tools().await.expect("tools/list with the token");
    assert_eq!(tools[0]["name"], "echo");
    client.close().await.unwrap();

    let log = log.lock().unwrap();
    assert_eq!(log.token_requests.len(), 1, "one token request");
    let (form, authorization) = &log.token_requests[0];
    assert_eq!(field(form, "grant_type"), Some("client_credentials"));
    assert_eq!(
        field(form, "resource"),
        Some(format!("{base}/mcp").as_str()),
        "RFC 8707 resource"
    );
    assert_eq!(field(form, "scope"), Some("pilotage:use"), "the challenge's scope");
    assert_eq!(
        field(form, "client_secret"),
        None,
        "client_secret_basic: not in the body"
    );
    let basic = authorization
        .as_deref()
        .and_then(|a| a.strip_prefix("Basic "))
        .expect("Basic");
    let decoded = base64::engine::general_purpose::STANDARD.decode(basic).unwrap();
    // RFC 6749 2.3.1: each part form-encoded before joining.
    assert_eq!(String::from_utf8(decoded).unwrap(), "pilotage+ci:s3cret%3Ax");
    assert_eq!(
        log.mcp_authorizations.first(),
        Some(&None),
        "the first request carries nothing"
    );
    let bearer = format!("Bearer {TOKEN}");
    assert!(
        log.mcp_authorizations
            .iter()
            .skip(1)
            .all(|a| a.as_deref() == Some(bearer.as_str())),
        "every retry carries the bearer: {:?}",
        log.mcp_authorizations
    );
    assert!(log.mcp_authorizations.len() >= 2);
}

#[tokio::test]
async fn client_secret_post_when_only_that_is_offered_and_the_scope_given_wins() {
    let (base, log) = start(None, vec!["client_secret_post"]).await;
    let client = PilotageClient::connect(
        &Target::Url(format!("{base}/mcp")),
        options(ClientAuth::ClientCredentials {
            client_id: "id".into(),
            client_secret: Secret::new("secret"),
            scope: Some("other".into()),
        }),
    )
    .await
    .expect("connects");
    client.close().await.unwrap();
    let log = log.lock().unwrap();
    let (form, authorization) = &log.token_requests[0];
    assert_eq!(authorization, &None);
    assert_eq!(field(form, "client_id"), Some("id"));
    assert_eq!(field(form, "client_secret"), Some("secret"));
    assert_eq!(field(form, "scope"), Some("other"));
}

#[tokio::test]
async fn private_key_jwt_assertion_is_addressed_to_the_issuer() {
    use aws_lc_rs::signature::{EcdsaKeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
    let (base, log) = start(None, vec!["private_key_jwt"]).await;
    let rng = aws_lc_rs::rand::SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        base64::engine::general_purpose::STANDARD.encode(pkcs8.as_ref())
    );
    let client = PilotageClient::connect(
        &Target::Url(format!("{base}/mcp")),
        options(ClientAuth::JwtAssertion {
            client_id: "jwt-client".into(),
            private_key_pem: Secret::new(pem),
            alg: None,
            scope: None,
        }),
    )
    .await
    .expect("connects");
    client.close().await.unwrap();
    let log = log.lock().unwrap();
    let (form, _) = &log.token_requests[0];
    assert_eq!(
        field(form, "client_assertion_type"),
        Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
    );
    let jwt = field(form, "client_assertion").expect("an assertion");
    let claims = jwt.split('.').nth(1).unwrap();
    let claims: Value =
        serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(claims).unwrap()).unwrap();
    assert_eq!(claims["iss"], "jwt-client");
    assert_eq!(claims["aud"], format!("{base}/as"));
    assert_eq!(field(form, "resource"), Some(format!("{base}/mcp").as_str()));
}

#[tokio::test]
async fn metadata_for_another_resource_is_refused_and_nothing_is_sent() {
    let (base, log) = start(Some("https://evil.example.com/mcp"), vec!["client_secret_basic"]).await;
    let error = PilotageClient::connect(
        &Target::Url(format!("{base}/mcp")),
        options(ClientAuth::ClientCredentials {
            client_id: "id".into(),
            client_secret: Secret::new("secret"),
            scope: None,
        }),
    )
    .await
    .expect_err("refused");
    let ClientError::Unauthorized { failure, .. } = &error else {
        panic!("{error}");
    };
    assert_eq!(failure.kind, AuthFailureKind::ResourceMismatch, "{error}");
    assert!(error.to_string().contains("evil.example.com"), "{error}");
    let log = log.lock().unwrap();
    assert!(log.token_requests.is_empty(), "no token requested");
    assert!(log.mcp_authorizations.iter().all(Option::is_none), "no token sent");
}

#[tokio::test]
async fn without_credentials_the_error_names_the_authorization_servers() {
    let (base, log) = start(None, vec!["client_secret_basic"]).await;
    let error = PilotageClient::connect(&Target::Url(format!("{base}/mcp")), options(ClientAuth::None))
        .await
        .expect_err("needs credentials");
    let ClientError::Unauthorized { failure, .. } = &error else {
        panic!("{error}");
    };
    assert_eq!(failure.kind, AuthFailureKind::CredentialsNeeded);
    assert_eq!(failure.authorization_servers, vec![format!("{base}/as")]);
    assert_eq!(failure.scope.as_deref(), Some("pilotage:use"));
    assert!(log.lock().unwrap().token_requests.is_empty());
}

#[tokio::test]
async fn a_given_bearer_token_is_sent_from_the_first_request_and_a_wrong_one_is_reported() {
    let (base, log) = start(None, vec!["client_secret_basic"]).await;
    let target = Target::Url(format!("{base}/mcp"));
    let client = PilotageClient::connect(&target, options(ClientAuth::Bearer(Secret::new(TOKEN))))
        .await
        .expect("connects with the token");
    client.close().await.unwrap();
    assert_eq!(
        log.lock().unwrap().mcp_authorizations.first(),
        Some(&Some(format!("Bearer {TOKEN}")))
    );
    let error = PilotageClient::connect(&target, options(ClientAuth::Bearer(Secret::new("stale"))))
        .await
        .expect_err("refused");
    let ClientError::Unauthorized { failure, .. } = &error else {
        panic!("{error}");
    };
    assert_eq!(failure.kind, AuthFailureKind::TokenRejected);
    assert!(
        !error.to_string().contains("stale"),
        "the token is never printed: {error}"
    );
    assert!(log.lock().unwrap().token_requests.is_empty());
}
