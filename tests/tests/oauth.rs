//! The resource server (pilotage-server's feature `oauth`), over HTTP, with sessions and
//! stateless: an authorization server of the test's own (key pairs made at test time, its
//! metadata and JWK Set served on loopback) issues tokens good and bad, and every answer of the
//! MCP endpoint is checked (status, `WWW-Authenticate`, the JSON-RPC body); the protected
//! resource metadata documents; the signing keys fetched once, not again for forged `kid`s;
//! each issuer's tokens checked against its own keys; runs that follow the token's subject
//! across sessions and engines on one store, and that no other subject sees; a non-loopback
//! `http://` issuer refused at build.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_lc_rs::signature::{EcdsaKeyPair, Ed25519KeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use jsonwebtoken::jwk::{Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use pilotage_server::auth::{Introspection, ResourceServer};
use pilotage_server::prelude::*;
use serde_json::{json, Value};

const SCOPE: &str = "pilotage:run";

/// A Language whose execute answers its program.
struct Echo;

impl Language for Echo {
    type Program = Value;

    fn declaration(&self) -> Declaration {
        Declaration::new("echo/v1", "Echo programs")
    }

    async fn validate(&self, _: &Value, _: Option<&Value>, _: &StageContext) -> Validated {
        Validated::valid()
    }

    async fn execute(&self, run: ExecuteInput<Value>, _: &StageContext) -> Result<Ran, RequestError> {
        Ok(Ran::success(run.program, []))
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// An authorization server of the test's own: an ES256 and an Ed25519 key pair, its RFC 8414
/// metadata and its JWK Set on loopback, and how often the JWK Set was fetched.
struct Authority {
    issuer: String,
    jwks: Value,
    es256: EncodingKey,
    ed25519: EncodingKey,
    /// The raw public key of the ES256 pair (what an HS256 forgery keys its HMAC with).
    public_key: Vec<u8>,
    kid: String,
    jwks_fetches: Arc<AtomicUsize>,
    /// The answers of its RFC 7662 introspection endpoint (`/introspect`, for the client
    /// `rs` / `rs-secret`), by token; any other token is inactive.
    introspections: Arc<Mutex<BTreeMap<String, Value>>>,
    /// The form bodies the introspection endpoint received.
    introspected: Arc<Mutex<Vec<String>>>,
}

impl Authority {
    fn start(runtime: &tokio::runtime::Runtime, name: &str) -> Self {
        let rng = aws_lc_rs::rand::SystemRandom::new();
        let ec = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let public_key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, ec.as_ref())
            .unwrap()
            .public_key()
            .as_ref()
            .to_vec();
        let ed = Ed25519KeyPair::generate_pkcs8v1(&rng).unwrap();
        let es256 = EncodingKey::from_ec_der(ec.as_ref());
        let ed25519 = EncodingKey::from_ed_der(ed.as_ref());
        let jwk = |key: &EncodingKey, alg: Algorithm, kid: String| {
            let mut jwk = Jwk::from_encoding_key(key, alg).unwrap();
            jwk.common.key_id = Some(kid);
            jwk.common.public_key_use = Some(PublicKeyUse::Signature);
            jwk
        };
        let kid = format!("{name}-es256");
        let jwks = json!({"keys": [
            jwk(&es256, Algorithm::ES256, kid.clone()),
            jwk(&ed25519, Algorithm::EdDSA, format!("{name}-ed25519")),
            // Never used: a symmetric key and an encryption key beside the signing keys.
            {"kty": "oct", "k": "c2VjcmV0", "alg": "HS256", "kid": format!("{name}-hmac")},
        ]});
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let issuer = format!("http://{}", listener.local_addr().unwrap());
        let jwks_fetches = Arc::new(AtomicUsize::new(0));
        let metadata = json!({"issuer": issuer, "jwks_uri": format!("{issuer}/jwks")}).to_string();
        let served = jwks.to_string();
        let fetches = jwks_fetches.clone();
        let introspections: Arc<Mutex<BTreeMap<String, Value>>> = Arc::default();
        let introspected: Arc<Mutex<Vec<String>>> = Arc::default();
        let (answers, bodies) = (introspections.clone(), introspected.clone());
        let router = axum::Router::new()
            .route(
                "/introspect",
                axum::routing::post(move |headers: axum::http::HeaderMap, body: String| {
                    let (answers, bodies) = (answers.clone(), bodies.clone());
                    async move {
                        // RFC 7662 2.1: the resource server authenticates (rs:rs-secret).
                        let expected = format!("Basic {}", base64_standard(b"rs:rs-secret"));
                        if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(expected.as_str()) {
                            return (axum::http::StatusCode::UNAUTHORIZED, String::new());
                        }
                        bodies.lock().unwrap().push(body.clone());
                        let token = body
                            .split('&')
                            .find_map(|pair| pair.strip_prefix("token="))
                            .map(percent_decode)
                            .unwrap_or_default();
                        let answer = answers
                            .lock()
                            .unwrap()
                            .get(&token)
                            .cloned()
                            .unwrap_or_else(|| json!({"active": false}));
                        (axum::http::StatusCode::OK, answer.to_string())
                    }
                }),
            )
            .route(
                "/.well-known/oauth-authorization-server",
                axum::routing::get(move || {
                    let metadata = metadata.clone();
                    async move { ([("content-type", "application/json")], metadata) }
                }),
            )
            .route(
                "/jwks",
                axum::routing::get(move || {
                    fetches.fetch_add(1, Ordering::SeqCst);
                    let served = served.clone();
                    async move { ([("content-type", "application/json")], served) }
                }),
            );
        runtime.spawn(async move { axum::serve(listener, router).await });
        Self {
            issuer,
            jwks,
            es256,
            ed25519,
            public_key,
            kid,
            jwks_fetches,
            introspections,
            introspected,
        }
    }

    /// Makes the introspection endpoint answer `answer` for `token`.
    fn introspects(&self, token: &str, answer: Value) {
        self.introspections.lock().unwrap().insert(token.to_owned(), answer);
    }

    /// Claims for `resource`, valid for ten minutes, with the required scope; `changes` replaces
    /// members (`null` removes one).
    fn claims(&self, resource: &str, sub: &str, changes: Value) -> Value {
        let mut claims = json!({
            "iss": self.issuer, "sub": sub, "aud": resource, "iat": now(), "exp": now() + 600,
            "scope": format!("openid {SCOPE}"),
        });
        for (name, value) in changes.as_object().unwrap() {
            if value.is_null() {
                claims.as_object_mut().unwrap().remove(name);
            } else {
                claims[name] = value.clone();
            }
        }
        claims
    }

    /// `claims` signed ES256 with this authority's key, under its `kid`.
    fn token(&self, claims: &Value) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.es256).unwrap()
    }

    fn jwks_fetches(&self) -> usize {
        self.jwks_fetches.load(Ordering::SeqCst)
    }
}

/// Standard base64 with padding (HTTP Basic).
fn base64_standard(bytes: &[u8]) -> String {
    let url = base64url(bytes).replace('-', "+").replace('_', "/");
    let padding = (4 - url.len() % 4) % 4;
    format!("{url}{}", "=".repeat(padding))
}

/// Decodes `%XX` escapes and `+` of a form value.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                out.push(u8::from_str_radix(&text[i + 1..i + 3], 16).unwrap());
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            byte => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap()
}

fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut text = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().fold(0u32, |n, b| (n << 8) | u32::from(*b)) << (8 * (3 - chunk.len()));
        for i in 0..=chunk.len() {
            text.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    text
}

/// A served engine: its address and resource URI.
struct Served {
    addr: String,
    resource: String,
}

impl Served {
    fn metadata_url(&self) -> String {
        format!("http://{}/.well-known/oauth-protected-resource/mcp", self.addr)
    }
}

/// Serves an engine protected by `configure(ResourceServer::new(its URI))` on a free loopback
/// port (the URI names the port, so the port is bound first).
fn serve(
    runtime: &tokio::runtime::Runtime,
    options: HttpOptions,
    configure: impl FnOnce(ResourceServer) -> ResourceServer,
    tweak: impl FnOnce(EngineBuilder) -> EngineBuilder,
) -> Served {
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let resource = format!("http://{addr}/mcp");
    let engine = tweak(Engine::builder("oauth-engine", "1").language(Echo))
        .oauth(configure(ResourceServer::new(&resource)))
        .build()
        .expect("the protected engine builds");
    let router = runtime.block_on(async { engine.http_router("/mcp", options) }).unwrap();
    runtime.spawn(async move {
        axum::serve(
            listener,
            router.into_make_service_with_connect_info::<std::net::SocketAddr>(),
        )
        .await
    });
    Served { addr, resource }
}

/// One HTTP answer.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The parameters of the `WWW-Authenticate: Bearer` challenge.
    fn challenge(&self) -> BTreeMap<String, String> {
        let value = self.header("www-authenticate").expect("a WWW-Authenticate header");
        let parameters = value.strip_prefix("Bearer ").expect("the Bearer scheme");
        let mut map = BTreeMap::new();
        let mut rest = parameters;
        while let Some((name, after)) = rest.split_once("=\"") {
            let (value, after) = after.split_once('"').expect("a closed quoted-string");
            map.insert(name.trim().to_owned(), value.to_owned());
            rest = after.trim_start_matches([',', ' ']);
        }
        map
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {self:?}"))
    }
}

/// A raw HTTP/1.1 request to `addr`.
fn raw(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: {addr}\r\n"));
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    let (head, mut body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let mut decoded = String::new();
    let chunked = headers
        .iter()
        .any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    if chunked {
        while let Some((size, rest)) = body.split_once("\r\n") {
            let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            if size == 0 || rest.len() < size {
                break;
            }
            decoded.push_str(&rest[..size]);
            body = rest[size..].trim_start_matches("\r\n");
        }
    } else {
        decoded = body.to_owned();
    }
    Answer {
        status,
        headers,
        body: decoded,
    }
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

/// POSTs `body` to the MCP endpoint with `token` (when given).
fn post(served: &Served, token: Option<&str>, body: &str) -> Answer {
    let authorization = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    if let Some(authorization) = &authorization {
        headers.push(("Authorization", authorization));
    }
    raw(&served.addr, "POST", "/mcp", &headers, body)
}

/// Checks a refusal: status, the challenge's parameters, the JSON-RPC body.
fn assert_refused(answer: &Answer, status: u16, error: Option<&str>, description: &str, served: &Served, what: &str) {
    assert_eq!(answer.status, status, "{what}: {answer:?}");
    let challenge = answer.challenge();
    let mut expected: BTreeMap<String, String> = BTreeMap::from([
        ("resource_metadata".to_owned(), served.metadata_url()),
        ("scope".to_owned(), SCOPE.to_owned()),
    ]);
    if let Some(error) = error {
        expected.insert("error".into(), error.into());
        let got = challenge
            .get("error_description")
            .map(String::as_str)
            .unwrap_or_default();
        assert!(got.contains(description), "{what}: {got:?} should say {description:?}");
        expected.insert("error_description".into(), got.to_owned());
    }
    assert_eq!(challenge, expected, "{what}: {answer:?}");
    assert_eq!(answer.header("content-type"), Some("application/json"), "{what}");
    let body = answer.json();
    assert_eq!(body["jsonrpc"], "2.0", "{what}");
    assert_eq!(body["id"], Value::Null, "{what}");
    assert_eq!(body["error"]["code"], -32000, "{what}");
    let message = body["error"]["message"].as_str().unwrap();
    let prefix = if status == 401 { "Unauthorized: " } else { "Forbidden: " };
    assert!(
        message.starts_with(prefix) && message.contains(description),
        "{what}: {message}"
    );
}

#[test]
fn every_bad_token_is_refused_with_its_challenge_with_sessions_and_stateless() {
    let runtime = runtime();
    let authority = Authority::start(&runtime, "main");
    for options in [HttpOptions::default(), HttpOptions::stateless()] {
        let stateless = options.stateless;
        let fetched_before = authority.jwks_fetches();
        let served = serve(
            &runtime,
            options,
            |r| r.with_issuer(&authority.issuer).with_scope(SCOPE),
            |b| b,
        );
        let resource = served.resource.clone();
        let claims = |changes: Value| authority.claims(&resource, "alice", changes);
        let good = authority.token(&claims(json!({})));

        // No token: 401 naming the metadata and the scope, without an error code.
        let answer = post(&served, None, INITIALIZE);
        assert_refused(&answer, 401, None, "a bearer token is required", &served, "no token");
        let basic = raw(
            &served.addr,
            "POST",
            "/mcp",
            &[
                ("Authorization", "Basic dXNlcjpwdw=="),
                ("Content-Type", "application/json"),
            ],
            INITIALIZE,
        );
        assert_refused(
            &basic,
            401,
            None,
            "a bearer token is required",
            &served,
            "another scheme",
        );

        // Tokens that do not verify: 401 invalid_token, each with its description.
        let unsigned = format!(
            "{}.{}.",
            base64url(br#"{"alg":"none","typ":"JWT"}"#),
            base64url(claims(json!({})).to_string().as_bytes())
        );
        let hs256 = jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &claims(json!({})),
            &EncodingKey::from_secret(&authority.public_key).unwrap(),
        )
        .unwrap();
        let mut unknown_kid = Header::new(Algorithm::ES256);
        unknown_kid.kid = Some("forged-kid".into());
        let unknown_kid = jsonwebtoken::encode(&unknown_kid, &claims(json!({})), &authority.es256).unwrap();
        // One character of the signature changed (its first: all six bits of it count).
        let at = good.rfind('.').unwrap() + 1;
        let first = if good[at..].starts_with('A') { "B" } else { "A" };
        let altered = format!("{}{first}{}", &good[..at], &good[at + 1..]);
        let mut ed_under_es_kid = Header::new(Algorithm::EdDSA);
        ed_under_es_kid.kid = Some(authority.kid.clone());
        let ed_under_es_kid = jsonwebtoken::encode(&ed_under_es_kid, &claims(json!({})), &authority.ed25519).unwrap();
        let bad: Vec<(&str, String, &str)> = vec![
            ("not a JWT", "not-a-jwt".into(), "not a JWT"),
            (
                "expired",
                authority.token(&claims(json!({"exp": now() - 3600}))),
                "expired",
            ),
            (
                "not yet valid",
                authority.token(&claims(json!({"nbf": now() + 3600}))),
                "not valid yet",
            ),
            (
                "another audience",
                authority.token(&claims(json!({"aud": "https://other.example.com/mcp"}))),
                "another resource",
            ),
            (
                "another issuer",
                authority.token(&claims(json!({"iss": "https://evil.example.com"}))),
                "issuer is not an authorization server of this resource",
            ),
            (
                "no subject",
                authority.token(&claims(json!({"sub": null}))),
                "no sub claim",
            ),
            (
                "no expiry",
                authority.token(&claims(json!({"exp": null}))),
                "no exp claim",
            ),
            ("alg none", unsigned, "algorithm none is not allowed"),
            (
                "HS256 keyed with the public key",
                hs256,
                "algorithm HS256 is not allowed",
            ),
            ("unknown kid", unknown_kid.clone(), "signing key (kid) is unknown"),
            ("signature altered", altered, "signature does not verify"),
            (
                "EdDSA under the ES256 key's kid",
                ed_under_es_kid,
                "algorithm does not match its signing key",
            ),
        ];
        for (what, token, description) in &bad {
            let what = format!("{what} ({})", if stateless { "stateless" } else { "sessions" });
            let answer = post(&served, Some(token), INITIALIZE);
            assert_refused(&answer, 401, Some("invalid_token"), description, &served, &what);
        }
        // Forged kids do not make the engine refetch the keys within REFRESH_INTERVAL.
        for _ in 0..5 {
            assert_eq!(post(&served, Some(&unknown_kid), INITIALIZE).status, 401);
        }
        assert_eq!(
            authority.jwks_fetches() - fetched_before,
            1,
            "the keys are fetched once, not once per forged kid"
        );

        // A valid token without the required scope: 403 insufficient_scope.
        let narrow = authority.token(&claims(json!({"scope": "openid"})));
        let answer = post(&served, Some(&narrow), INITIALIZE);
        assert_refused(
            &answer,
            403,
            Some("insufficient_scope"),
            "lacks a required scope",
            &served,
            "scope missing",
        );

        // Valid tokens: `scope`, `scp` (an array), an `exp` within the leeway, EdDSA.
        let mut ed_header = Header::new(Algorithm::EdDSA);
        ed_header.kid = Some("main-ed25519".into());
        for (what, token) in [
            ("scope", good.clone()),
            ("scp", authority.token(&claims(json!({"scope": null, "scp": [SCOPE]})))),
            ("exp 30 s ago", authority.token(&claims(json!({"exp": now() - 30})))),
            (
                "EdDSA",
                jsonwebtoken::encode(&ed_header, &claims(json!({})), &authority.ed25519).unwrap(),
            ),
        ] {
            let answer = post(&served, Some(&token), INITIALIZE);
            assert_eq!(answer.status, 200, "{what}: {answer:?}");
            assert!(answer.header("www-authenticate").is_none(), "{what}");
            assert_eq!(
                answer.header("mcp-session-id").is_some(),
                !stateless,
                "{what}: a session with sessions"
            );
        }

        // The Host rule still comes first; health and metadata need no token.
        let foreign = raw(
            &served.addr,
            "POST",
            "/mcp",
            &[("Host", "evil.example"), ("Content-Type", "application/json")],
            INITIALIZE,
        );
        assert_eq!(foreign.status, 403, "{foreign:?}");
        assert!(foreign.header("www-authenticate").is_none());
        for path in ["/healthz", "/readyz"] {
            assert_eq!(raw(&served.addr, "GET", path, &[], "").status, 200, "{path}");
        }
        let expected = json!({
            "resource": served.resource,
            "authorization_servers": [authority.issuer],
            "scopes_supported": [SCOPE],
            "bearer_methods_supported": ["header"],
        });
        for path in [
            "/.well-known/oauth-protected-resource",
            "/.well-known/oauth-protected-resource/mcp",
        ] {
            let answer = raw(&served.addr, "GET", path, &[], "");
            assert_eq!(answer.status, 200, "{path}: {answer:?}");
            assert_eq!(answer.header("content-type"), Some("application/json"));
            assert_eq!(answer.json(), expected, "{path}");
        }
        assert_eq!(
            served.metadata_url(),
            format!("http://{}/.well-known/oauth-protected-resource/mcp", served.addr)
        );
    }
}

/// Calls `tool` over stateless HTTP with `token`: the structured content.
fn call_stateless(served: &Served, token: &str, tool: &str, arguments: Value) -> Value {
    let body =
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": tool, "arguments": arguments}});
    let answer = post(served, Some(token), &body.to_string());
    assert_eq!(answer.status, 200, "{answer:?}");
    answer.json()["result"]["structuredContent"].clone()
}

#[test]
fn runs_follow_the_subject_across_sessions_and_engines_and_no_other_subject_sees_them() {
    use rmcp::ServiceExt;
    let runtime = runtime();
    let authority = Authority::start(&runtime, "runs");
    let store: Arc<dyn RunStore> = Arc::new(pilotage_server::MemoryStore::new(StoreLimits::default()));
    let configure = |r: ResourceServer| r.with_issuer(&authority.issuer).with_scope(SCOPE);
    let on_store = |b: EngineBuilder| b.run_store(store.clone());
    let first = serve(&runtime, HttpOptions::default(), configure, on_store);
    let second = serve(&runtime, HttpOptions::default(), configure, on_store);
    let stateless = serve(&runtime, HttpOptions::stateless(), configure, on_store);
    // Each engine has its own resource URI: a subject's token for each.
    let token = |served: &Served, sub: &str| authority.token(&authority.claims(&served.resource, sub, json!({})));
    runtime.block_on(async {
        let connect = |served: &Served, sub: &str| {
            let config = rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
                format!("http://{}/mcp", served.addr),
            )
            .auth_header(token(served, sub));
            async move {
                ().serve(rmcp::transport::StreamableHttpClientTransport::from_config(config))
                    .await
                    .expect("a session")
            }
        };
        let call = |client: &rmcp::service::RunningService<rmcp::RoleClient, ()>, tool: &str, arguments: Value| {
            let params = rmcp::model::CallToolRequestParams::new(tool.to_owned())
                .with_arguments(arguments.as_object().cloned().unwrap_or_default());
            let peer = client.peer().clone();
            async move { peer.call_tool(params).await.expect("an answer") }
        };
        let alice = connect(&first, "alice").await;
        let done = call(&alice, "echo_v1_execute", json!({"program": {"n": 1}})).await;
        let run_id = done.structured_content.unwrap()["run_id"].as_str().unwrap().to_owned();
        for (what, again) in [
            ("another session", connect(&first, "alice").await),
            ("another engine on the store", connect(&second, "alice").await),
        ] {
            let own = call(&again, "echo_v1_trace", json!({"run_id": run_id})).await;
            assert_eq!(own.is_error, Some(false), "alice sees her run from {what}");
            again.cancel().await.unwrap();
        }
        for served in [&first, &second] {
            let bob = connect(served, "bob").await;
            let answer = call(&bob, "echo_v1_trace", json!({"run_id": run_id})).await;
            assert_eq!(answer.is_error, Some(true));
            assert_eq!(answer.structured_content.unwrap()["error"]["kind"], "not_found");
            bob.cancel().await.unwrap();
        }
        alice.cancel().await.unwrap();
    });
    // Stateless: no session at all, the subject alone decides.
    let alice = token(&stateless, "alice");
    let bob = token(&stateless, "bob");
    let seen = call_stateless(
        &stateless,
        &alice,
        "echo_v1_trace",
        json!({"run_id": run_id_of(&first, &authority)}),
    );
    assert_eq!(
        seen["outcome"]["ok"], true,
        "alice's run from a session engine, stateless: {seen}"
    );
    let done = call_stateless(&stateless, &alice, "echo_v1_execute", json!({"program": {"n": 2}}));
    let run_id = done["run_id"].as_str().unwrap();
    let own = call_stateless(&stateless, &alice, "echo_v1_trace", json!({"run_id": run_id}));
    assert_eq!(own["run_id"], run_id, "{own}");
    assert_eq!(own["outcome"]["ok"], true, "{own}");
    let other = call_stateless(&stateless, &bob, "echo_v1_trace", json!({"run_id": run_id}));
    assert_eq!(other["error"]["kind"], "not_found", "{other}");
}

/// A run of alice's started on `served` (sessions) over raw HTTP: its id.
fn run_id_of(served: &Served, authority: &Authority) -> String {
    let token = authority.token(&authority.claims(&served.resource, "alice", json!({})));
    let opened = post(served, Some(&token), INITIALIZE);
    let session = opened.header("mcp-session-id").expect("a session").to_owned();
    let authorization = format!("Bearer {token}");
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Mcp-Session-Id", session.as_str()),
        ("Authorization", authorization.as_str()),
    ];
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(raw(&served.addr, "POST", "/mcp", &headers, initialized).status, 202);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "echo_v1_execute", "arguments": {"program": {"n": 3}}}});
    let answer = raw(&served.addr, "POST", "/mcp", &headers, &call.to_string());
    assert_eq!(answer.status, 200, "{answer:?}");
    // An SSE stream: the JSON-RPC response is the data of one event.
    let data = answer
        .body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .find(|d| d.contains("run_id"))
        .unwrap_or_else(|| panic!("a response event: {answer:?}"));
    let response: Value = serde_json::from_str(data).unwrap();
    response["result"]["structuredContent"]["run_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn each_issuer_s_tokens_verify_with_its_own_keys_from_every_key_source() {
    let runtime = runtime();
    let a = Authority::start(&runtime, "a");
    let b = Authority::start(&runtime, "b");
    let served = serve(
        &runtime,
        HttpOptions::stateless(),
        |r| r.with_issuer(&a.issuer).with_issuer(&b.issuer),
        |b| b,
    );
    let resource = served.resource.clone();
    for authority in [&a, &b] {
        let token = authority.token(&authority.claims(&resource, "carol", json!({"scope": null})));
        assert_eq!(post(&served, Some(&token), INITIALIZE).status, 200);
    }
    // b's key under b's kid, claiming a: a's keys do not have it.
    let forged = b.token(&a.claims(&resource, "carol", json!({})));
    let answer = post(&served, Some(&forged), INITIALIZE);
    assert_eq!(answer.status, 401);
    assert!(
        answer.challenge()["error_description"].contains("unknown"),
        "{answer:?}"
    );
    // b's key under a's kid, claiming a: the signature does not verify.
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some(a.kid.clone());
    let forged = jsonwebtoken::encode(&header, &a.claims(&resource, "carol", json!({})), &b.es256).unwrap();
    let answer = post(&served, Some(&forged), INITIALIZE);
    assert_eq!(answer.status, 401);
    assert!(
        answer.challenge()["error_description"].contains("signature"),
        "{answer:?}"
    );
    // Without a required scope, the challenge names no scope.
    assert!(!answer.challenge().contains_key("scope"));

    // The keys given by URL, and inline: the metadata is not read.
    let by_url = serve(
        &runtime,
        HttpOptions::stateless(),
        |r| r.with_issuer(&a.issuer).with_jwks_uri(format!("{}/jwks", a.issuer)),
        |b| b,
    );
    let inline = serve(
        &runtime,
        HttpOptions::stateless(),
        |r| r.with_issuer(&a.issuer).with_jwks(a.jwks.to_string()),
        |b| b,
    );
    for served in [&by_url, &inline] {
        let token = a.token(&a.claims(&served.resource, "carol", json!({})));
        assert_eq!(post(served, Some(&token), INITIALIZE).status, 200);
        let foreign = b.token(&b.claims(&served.resource, "carol", json!({"iss": a.issuer})));
        assert_eq!(post(served, Some(&foreign), INITIALIZE).status, 401);
    }

    // An authorization server that cannot be reached: 503, the token may be good.
    let down = serve(
        &runtime,
        HttpOptions::stateless(),
        |r| r.with_issuer("http://127.0.0.1:9"),
        |b| b,
    );
    let token = a.token(&a.claims(&down.resource, "carol", json!({"iss": "http://127.0.0.1:9"})));
    let answer = post(&down, Some(&token), INITIALIZE);
    assert_eq!(answer.status, 503, "{answer:?}");
    assert_eq!(answer.json()["error"]["code"], -32000);
}

#[test]
fn a_plain_http_issuer_beyond_loopback_is_refused_at_build() {
    let build = |issuer: &str| {
        Engine::builder("oauth-engine", "1")
            .language(Echo)
            .oauth(ResourceServer::new("https://mcp.example.com/mcp").with_issuer(issuer))
            .build()
    };
    let error = build("http://auth.example.com").expect_err("a plain http:// issuer beyond loopback");
    assert!(
        error.0.contains("http://auth.example.com") && error.0.contains("https://"),
        "{error}"
    );
    for loopback in ["http://127.0.0.1:8080", "http://localhost:3000", "http://[::1]:9000"] {
        assert!(build(loopback).is_ok(), "{loopback}");
    }
    assert!(build("https://auth.example.com").is_ok());
    let no_issuer = Engine::builder("oauth-engine", "1")
        .language(Echo)
        .oauth(ResourceServer::new("https://mcp.example.com/mcp"))
        .build();
    assert!(no_issuer.is_err());
}

#[test]
fn opaque_tokens_are_introspected_and_taken_only_when_active_for_this_resource() {
    let runtime = runtime();
    let authority = Authority::start(&runtime, "introspecting");
    let endpoint = format!("{}/introspect", authority.issuer);
    let served = serve(
        &runtime,
        HttpOptions::stateless(),
        |r| {
            r.with_issuer(&authority.issuer)
                .with_scope(SCOPE)
                .with_introspection(Introspection::new(&endpoint, "rs", "rs-secret"))
        },
        |b| b,
    );
    let answer = |changes: Value| {
        let mut answer = json!({
            "active": true, "iss": authority.issuer, "sub": "alice", "aud": served.resource,
            "scope": format!("openid {SCOPE}"), "exp": now() + 600, "token_type": "Bearer",
        });
        for (name, value) in changes.as_object().unwrap() {
            if value.is_null() {
                answer.as_object_mut().unwrap().remove(name);
            } else {
                answer[name] = value.clone();
            }
        }
        answer
    };
    // Opaque tokens (RFC 6750 b64token, `+` and `/` among them: form-encoded on the way).
    authority.introspects("alice+opaque/token==", answer(json!({})));
    authority.introspects(
        "bob-opaque",
        answer(json!({"sub": "bob", "aud": [served.resource, "https://other.example/mcp"]})),
    );
    authority.introspects("no-issuer", answer(json!({"iss": null, "sub": "carol"})));
    authority.introspects("inactive", json!({"active": false, "sub": "alice"}));
    authority.introspects("other-audience", answer(json!({"aud": "https://other.example/mcp"})));
    authority.introspects("no-audience", answer(json!({"aud": null})));
    authority.introspects("other-issuer", answer(json!({"iss": "https://evil.example"})));
    authority.introspects("expired", answer(json!({"exp": now() - 3600})));
    authority.introspects("not-yet", answer(json!({"nbf": now() + 3600})));
    authority.introspects("no-subject", answer(json!({"sub": null})));
    authority.introspects("no-scope", answer(json!({"scope": "openid"})));

    let alice = "alice+opaque/token==";
    let done = call_stateless(&served, alice, "echo_v1_execute", json!({"program": {"n": 1}}));
    assert_eq!(done["outcome"]["ok"], true, "{done}");
    let run_id = done["run_id"].as_str().unwrap();
    let own = call_stateless(&served, alice, "echo_v1_trace", json!({"run_id": run_id}));
    assert_eq!(own["outcome"]["ok"], true, "alice sees her run: {own}");
    let other = call_stateless(&served, "bob-opaque", "echo_v1_trace", json!({"run_id": run_id}));
    assert_eq!(other["error"]["kind"], "not_found", "bob does not: {other}");
    let carol = call_stateless(&served, "no-issuer", "echo_v1_trace", json!({"run_id": run_id}));
    assert_eq!(
        carol["error"]["kind"], "not_found",
        "one issuer: an answer without iss is its: {carol}"
    );
    let bodies = authority.introspected.lock().unwrap().clone();
    assert!(
        bodies
            .iter()
            .any(|b| b == "token=alice%2Bopaque%2Ftoken%3D%3D&token_type_hint=access_token"),
        "the token form-encoded, with its type hint: {bodies:?}"
    );

    for (token, description) in [
        ("inactive", "not active"),
        ("never-issued", "not active"),
        ("other-audience", "another resource"),
        ("no-audience", "another resource"),
        ("other-issuer", "issuer is not an authorization server"),
        ("expired", "expired"),
        ("not-yet", "not valid yet"),
        ("no-subject", "lacks iss or sub"),
    ] {
        let refused = post(&served, Some(token), INITIALIZE);
        assert_refused(&refused, 401, Some("invalid_token"), description, &served, token);
    }
    let refused = post(&served, Some("no-scope"), INITIALIZE);
    assert_refused(
        &refused,
        403,
        Some("insufficient_scope"),
        "lacks a required scope",
        &served,
        "no-scope",
    );

    // A resource server whose credentials the authorization server refuses cannot verify: 503,
    // and the token is not taken.
    let misconfigured = serve(
        &runtime,
        HttpOptions::stateless(),
        |r| {
            r.with_issuer(&authority.issuer)
                .with_scope(SCOPE)
                .with_introspection(Introspection::new(&endpoint, "rs", "wrong-secret"))
        },
        |b| b,
    );
    let refused = post(&misconfigured, Some(alice), INITIALIZE);
    assert_eq!(refused.status, 503, "{refused:?}");

    // With signing keys too, a JWT is verified locally and an opaque token introspected.
    let both = serve(
        &runtime,
        HttpOptions::stateless(),
        |r| {
            r.with_issuer(&authority.issuer)
                .with_scope(SCOPE)
                .with_jwks(authority.jwks.to_string())
                .with_introspection(Introspection::new(&endpoint, "rs", "rs-secret"))
        },
        |b| b,
    );
    let jwt = authority.token(&authority.claims(&both.resource, "dave", json!({})));
    let before = authority.introspected.lock().unwrap().len();
    let done = call_stateless(&both, &jwt, "echo_v1_execute", json!({"program": {"n": 2}}));
    assert_eq!(done["outcome"]["ok"], true, "{done}");
    assert_eq!(
        authority.introspected.lock().unwrap().len(),
        before,
        "a JWT is not introspected"
    );
    // alice's opaque token names the first engine's resource: refused here.
    let refused = post(&both, Some(alice), INITIALIZE);
    assert_refused(
        &refused,
        401,
        Some("invalid_token"),
        "another resource",
        &both,
        "alice on another resource",
    );
    assert_eq!(authority.introspected.lock().unwrap().len(), before + 1);
}

#[test]
fn an_introspection_secret_never_shows_and_a_bad_endpoint_is_refused_at_build() {
    let introspection = Introspection::new("https://auth.example.com/introspect", "rs", "the-secret");
    let resource = ResourceServer::new("https://mcp.example.com/mcp")
        .with_issuer("https://auth.example.com")
        .with_introspection(introspection);
    assert!(!format!("{resource:?}").contains("the-secret"), "{resource:?}");
    assert!(resource.check().is_ok());
    for (endpoint, client, fault) in [
        (
            "http://auth.example.com/introspect",
            "rs",
            "http://auth.example.com/introspect",
        ),
        ("not a url", "rs", "introspection endpoint"),
        ("https://auth.example.com/introspect#x", "rs", "fragment"),
        ("https://auth.example.com/introspect", "", "client id"),
    ] {
        let error = ResourceServer::new("https://mcp.example.com/mcp")
            .with_issuer("https://auth.example.com")
            .with_introspection(Introspection::new(endpoint, client, "s"))
            .check()
            .unwrap_err();
        assert!(error.0.contains(fault), "{endpoint:?}: {}", error.0);
    }
}
