//! The cost of a verified JWT per call (`cargo xtask bench` reads the group `server/jwt_call`):
//! the toolkit figure is one stateless `tools/call` through the HTTP router of an engine that
//! is an OAuth resource server (feature `oauth`), with a valid ES256 bearer token whose key
//! is cached (inline JWKS); the baseline is the same call through the router of the same
//! engine without authorization. Both in-process (`tower::ServiceExt::oneshot`), no socket.

use aws_lc_rs::signature::{EcdsaKeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use axum::body::Body;
use criterion::{criterion_group, criterion_main, Criterion};
use jsonwebtoken::jwk::{Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use pilotage_server::auth::ResourceServer;
use pilotage_server::prelude::*;
use serde_json::{json, Value};
use tower::ServiceExt;

struct Echo;

impl Language for Echo {
    type Program = Value;
    fn declaration(&self) -> Declaration {
        Declaration::new("echo/v1", "Echo").with_destructive(false)
    }
    async fn validate(&self, _: &Value, _: Option<&Value>, _: &StageContext) -> Validated {
        Validated::valid()
    }
    async fn execute(&self, run: ExecuteInput<Value>, _: &StageContext) -> Result<Ran, RequestError> {
        Ok(Ran::success(run.program, []))
    }
}

const RESOURCE: &str = "http://127.0.0.1:9/mcp";
const ISSUER: &str = "http://127.0.0.1:9";

fn request(token: Option<&str>) -> axum::http::Request<Body> {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo_v1_validate", "arguments": {"program": {"a": 1}}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.github.jafarsa0/pilotage": {}}},
            "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"}
        }}
    });
    let mut builder = axum::http::Request::post("/mcp")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "echo_v1_validate");
    if let Some(token) = token {
        builder = builder.header("authorization", format!("Bearer {token}"));
    }
    builder.body(Body::from(body.to_string())).unwrap()
}

fn jwt_call(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let rng = aws_lc_rs::rand::SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
    let key = EncodingKey::from_ec_der(pkcs8.as_ref());
    let mut jwk = Jwk::from_encoding_key(&key, Algorithm::ES256).unwrap();
    jwk.common.key_id = Some("bench".into());
    jwk.common.public_key_use = Some(PublicKeyUse::Signature);
    let jwks = json!({"keys": [jwk]}).to_string();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("bench".into());
    let claims =
        json!({"iss": ISSUER, "sub": "bench", "aud": RESOURCE, "iat": now, "exp": now + 3600, "scope": "pilotage"});
    let token = jsonwebtoken::encode(&header, &claims, &key).unwrap();

    let open = Engine::builder("bench", "1").language(Echo).build().unwrap();
    let protected = Engine::builder("bench", "1")
        .language(Echo)
        .oauth(
            ResourceServer::new(RESOURCE)
                .with_issuer(ISSUER)
                .with_scope("pilotage")
                .with_jwks(jwks),
        )
        .build()
        .unwrap();
    let (open, protected) = runtime.block_on(async {
        (
            open.http_router("/mcp", HttpOptions::stateless()).unwrap(),
            protected.http_router("/mcp", HttpOptions::stateless()).unwrap(),
        )
    });
    // Both answer, before timing.
    for (router, token) in [(&open, None), (&protected, Some(token.as_str()))] {
        let response = runtime.block_on(router.clone().oneshot(request(token))).unwrap();
        assert_eq!(response.status(), 200, "the bench's call is answered");
    }
    let mut group = c.benchmark_group("server/jwt_call");
    group.bench_function("toolkit", |b| {
        b.iter(|| {
            runtime
                .block_on(protected.clone().oneshot(request(Some(&token))))
                .unwrap()
        })
    });
    group.bench_function("baseline", |b| {
        b.iter(|| runtime.block_on(open.clone().oneshot(request(None))).unwrap())
    });
    group.finish();
}

criterion_group!(benches, jwt_call);
criterion_main!(benches);
