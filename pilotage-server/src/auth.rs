//! A resource server (feature `oauth`): MCP authorization on the HTTP endpoint, as the MCP
//! specification's "Authorization" (2025-06-18, 2025-11-25) asks of a protected MCP server.
//!
//! This module owns:
//!
//! - [`ResourceServer`], the configuration: the resource's canonical URI, the authorization
//!   servers (issuers), the required scopes and the signing keys, checked when the engine is
//!   built ([`crate::EngineBuilder::oauth`]): HTTPS everywhere, plain `http://` only for
//!   loopback hosts (127.0.0.0/8, `::1`, `localhost`);
//! - the signing keys: a JWK Set given inline, or fetched from a JWKS URL (given, or read as
//!   `jwks_uri` from each issuer's metadata, RFC 8414 `/.well-known/oauth-authorization-server`
//!   then OpenID Connect `/.well-known/openid-configuration`), each fetch bounded in time
//!   ([`FETCH_TIMEOUT`]) and size ([`MAX_DOCUMENT_BYTES`]), cached, refetched when a token
//!   names an unknown key or the keys are older than [`KEYS_MAX_AGE`], at most once per
//!   [`REFRESH_INTERVAL`] per key set; each issuer's tokens are checked against that issuer's
//!   own keys;
//! - opaque tokens, through the authorization server's RFC 7662 introspection endpoint
//!   ([`Introspection`], [`ResourceServer::with_introspection`]): the resource server
//!   authenticates to it (HTTP Basic, RFC 6749 2.3.1), and takes a token only when the answer is
//!   `active` with an `iss` of the issuers (or none, with exactly one issuer), an `aud` naming the
//!   resource, `exp` and `nbf` within [`LEEWAY`], a `sub` and the required scopes; each call
//!   bounded by [`FETCH_TIMEOUT`] and [`MAX_DOCUMENT_BYTES`], nothing cached (a revoked token is
//!   refused on its next request). A JWT is still verified locally when signing keys are
//!   configured or discoverable; with introspection and no key source given, every token is
//!   introspected;
//! - the verification of every request to the MCP endpoint: a bearer JWT in the
//!   `Authorization` header (never the query string), its signature under an allowed algorithm
//!   (RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, EdDSA: never `none`, never
//!   HMAC), its `iss` one of the issuers, its `aud` the resource (RFC 8707), `exp` and `nbf`
//!   with a leeway of [`LEEWAY`] (60 s), a `sub`, and the required scopes (`scope`, space
//!   separated, or `scp`, an array or a string);
//! - the answers to a refused request: 401 with `WWW-Authenticate: Bearer` naming the metadata
//!   document (`resource_metadata`), the scopes (`scope`) and, when a token was presented,
//!   `error="invalid_token"` with an `error_description`; 403 `insufficient_scope` for a valid
//!   token without a required scope; 503 while no signing key could ever be fetched; each with
//!   a JSON-RPC error body, as the transport's other refusals;
//! - the protected resource metadata (RFC 9728) at `/.well-known/oauth-protected-resource`
//!   and its path-suffixed forms, public;
//! - the requester (Part III 8.4): a verified request carries a [`VerifiedToken`] in its
//!   extensions, and the engine's identity is `<iss>#<sub>`, so that a subject's runs follow it
//!   across sessions and engine processes on one store.
//!
//! Tokens are never logged nor stored: the `Authorization` header is removed from the request
//! once verified, so that neither the MCP handler nor an engine's own tools see it. `/healthz`
//! and `/readyz` stay outside; stdio is not concerned (MCP: a stdio server takes its
//! credentials from the environment). Not here: DPoP and
//! mutual-TLS bound tokens, the authorization server itself.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, Request, Response, StatusCode};
use axum::middleware::Next;
use axum::Router;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, Validation};
use reqwest::Url;
use serde::Deserialize;
use serde_json::Value;

use crate::{BuildError, HttpOptions, IdentityFn};

/// The clock skew allowed on `exp` and `nbf`: a token is taken until 60 s after its `exp`
/// and from 60 s before its `nbf`.
pub const LEEWAY: Duration = Duration::from_secs(60);
/// How long one fetch of an issuer's metadata or of a JWK Set may take.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// The largest metadata document or JWK Set fetched (1 MiB); a larger one is refused.
pub const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;
/// The least time between two fetches of one key set: a token naming an unknown key (`kid`)
/// refetches the keys at most this often, so that forged `kid`s cannot make the engine hammer
/// the authorization server.
pub const REFRESH_INTERVAL: Duration = Duration::from_secs(30);
/// Fetched keys older than this are refetched on the next request (a key the authorization
/// server withdrew stops verifying), keeping the old ones if the fetch fails.
pub const KEYS_MAX_AGE: Duration = Duration::from_secs(15 * 60);
/// The path of the protected resource metadata document (RFC 9728), served as is and with the
/// MCP endpoint's path appended (`/.well-known/oauth-protected-resource/mcp`).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";
/// The signing algorithms a token may use: RSA (PKCS#1 v1.5 and PSS), ECDSA P-256 and P-384,
/// and Ed25519. Never `none`, never HMAC (`HS*`: a resource server holds no shared secret).
const ALLOWED_ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];
/// The most keys kept from one JWK Set.
const MAX_KEYS: usize = 64;

/// The configuration of a resource server: the MCP endpoint accepts only bearer JWTs that one of
/// its authorization servers issued for this resource. Give it to
/// [`crate::EngineBuilder::oauth`], which checks it ([`ResourceServer::check`]).
///
/// ```
/// use pilotage_server::auth::ResourceServer;
///
/// let resource = ResourceServer::new("https://mcp.example.com/mcp")
///     .with_issuer("https://auth.example.com")
///     .with_scope("pilotage:run");
/// assert!(resource.check().is_ok());
/// // Plain http:// only on loopback.
/// let foreign = ResourceServer::new("https://mcp.example.com/mcp").with_issuer("http://auth.example.com");
/// assert!(foreign.check().unwrap_err().0.contains("http://auth.example.com"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResourceServer {
    resource: String,
    issuers: Vec<String>,
    scopes: Vec<String>,
    jwks_uri: Option<String>,
    jwks: Option<String>,
    introspection: Option<Introspection>,
}

/// An RFC 7662 token introspection endpoint of the authorization server, and the resource
/// server's own client credentials for it ([`ResourceServer::with_introspection`]). The secret
/// never appears in `Debug` output nor in a log.
///
/// ```
/// use pilotage_server::auth::{Introspection, ResourceServer};
///
/// let introspection = Introspection::new("https://auth.example.com/introspect", "mcp-server", "s3cret");
/// assert!(!format!("{introspection:?}").contains("s3cret"));
/// let resource = ResourceServer::new("https://mcp.example.com/mcp")
///     .with_issuer("https://auth.example.com")
///     .with_introspection(introspection);
/// assert!(resource.check().is_ok());
/// ```
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Introspection {
    endpoint: String,
    client_id: String,
    client_secret: String,
}

impl Introspection {
    /// The endpoint (`https://`, or `http://` on loopback) and the client id and secret the
    /// resource server authenticates with (HTTP Basic).
    pub fn new(endpoint: impl Into<String>, client_id: impl Into<String>, client_secret: impl Into<String>) -> Self {
        Self {
            endpoint: endpoint.into(),
            client_id: client_id.into(),
            client_secret: client_secret.into(),
        }
    }

    /// The introspection endpoint.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The resource server's client id at the authorization server.
    pub fn client_id(&self) -> &str {
        &self.client_id
    }
}

impl std::fmt::Debug for Introspection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Introspection")
            .field("endpoint", &self.endpoint)
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .finish()
    }
}

impl ResourceServer {
    /// A resource server for the canonical URI `resource` of the MCP endpoint (e.g.
    /// `https://mcp.example.com/mcp`): tokens must name it in `aud` (RFC 8707), and the metadata
    /// document names it as `resource`. Compared as given, character for character.
    pub fn new(resource: impl Into<String>) -> Self {
        Self {
            resource: resource.into(),
            issuers: Vec::new(),
            scopes: Vec::new(),
            jwks_uri: None,
            jwks: None,
            introspection: None,
        }
    }

    /// Accepts tokens of the authorization server whose issuer identifier is `issuer` (its
    /// `iss`, an `https://` URL); repeat for several. Listed in the metadata document's
    /// `authorization_servers`.
    pub fn with_issuer(mut self, issuer: impl Into<String>) -> Self {
        let issuer = issuer.into();
        if !self.issuers.contains(&issuer) {
            self.issuers.push(issuer);
        }
        self
    }

    /// Requires `scope` of every token (a valid token without it is answered 403
    /// `insufficient_scope`); repeat for several. Listed in `scopes_supported`.
    pub fn with_scope(mut self, scope: impl Into<String>) -> Self {
        let scope = scope.into();
        if !self.scopes.contains(&scope) {
            self.scopes.push(scope);
        }
        self
    }

    /// Fetches the signing keys of every issuer from this JWK Set URL, instead of the
    /// `jwks_uri` of each issuer's metadata (the default).
    pub fn with_jwks_uri(mut self, uri: impl Into<String>) -> Self {
        self.jwks_uri = Some(uri.into());
        self
    }

    /// Takes the signing keys of every issuer from this JWK Set (`{"keys": [...]}`) and fetches
    /// none. Symmetric (`oct`) keys are ignored: HMAC tokens are never accepted.
    pub fn with_jwks(mut self, jwks: impl Into<String>) -> Self {
        self.jwks = Some(jwks.into());
        self
    }

    /// Takes opaque (non-JWT) tokens by asking the authorization server's RFC 7662
    /// introspection endpoint about each (see the module docs). Without a key source
    /// ([`with_jwks`](Self::with_jwks), [`with_jwks_uri`](Self::with_jwks_uri)), every token is
    /// introspected, JWTs too.
    pub fn with_introspection(mut self, introspection: Introspection) -> Self {
        self.introspection = Some(introspection);
        self
    }

    /// The resource's canonical URI.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The accepted issuers.
    pub fn issuers(&self) -> &[String] {
        &self.issuers
    }

    /// The required scopes.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// Whether the configuration can be served: absolute URLs, HTTPS (plain `http://` only for
    /// 127.0.0.0/8, `::1` and `localhost`), at least one issuer, no fragment nor query in the
    /// resource and the issuers, scopes that are RFC 6749 scope tokens, at most one key source,
    /// and inline keys that parse into at least one usable key.
    pub fn check(&self) -> Result<(), BuildError> {
        self.checked().map(|_| ())
    }

    /// The protected resource metadata document (RFC 9728): `resource`,
    /// `authorization_servers`, `scopes_supported` (left out when no scope is required) and
    /// `bearer_methods_supported` (`["header"]`).
    pub fn metadata(&self) -> Value {
        let mut document = serde_json::json!({
            "resource": self.resource,
            "authorization_servers": self.issuers,
            "bearer_methods_supported": ["header"],
        });
        if !self.scopes.is_empty() {
            document["scopes_supported"] = serde_json::json!(self.scopes);
        }
        document
    }

    /// The URL of the metadata document that `WWW-Authenticate` names: the resource's origin,
    /// [`METADATA_PATH`], then the resource's path (RFC 9728 3.1), e.g.
    /// `https://mcp.example.com/.well-known/oauth-protected-resource/mcp`.
    pub fn metadata_url(&self) -> Result<String, BuildError> {
        let resource = checked_url("resource URI", &self.resource)?;
        Ok(format!(
            "{}{METADATA_PATH}{}",
            resource.origin().ascii_serialization(),
            path_suffix(resource.path())
        ))
    }

    /// The parsed configuration, or why it cannot be served.
    fn checked(&self) -> Result<Checked, BuildError> {
        let resource = checked_url("resource URI", &self.resource)?;
        if resource.fragment().is_some() || resource.query().is_some() {
            return Err(BuildError(format!(
                "the resource URI {} must have neither a fragment nor a query (RFC 8707)",
                self.resource
            )));
        }
        if self.issuers.is_empty() {
            return Err(BuildError(
                "a resource server needs at least one authorization server (with_issuer)".into(),
            ));
        }
        for issuer in &self.issuers {
            let url = checked_url("issuer", issuer)?;
            if url.fragment().is_some() || url.query().is_some() {
                return Err(BuildError(format!(
                    "the issuer {issuer} must have neither a fragment nor a query (RFC 8414)"
                )));
            }
        }
        for scope in &self.scopes {
            // RFC 6749 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
            if scope.is_empty() || !scope.bytes().all(|b| matches!(b, 0x21 | 0x23..=0x5B | 0x5D..=0x7E)) {
                return Err(BuildError(format!(
                    "the scope {scope:?} is not a scope token (RFC 6749 3.3: printable ASCII without \
                     space, '\"' or '\\')"
                )));
            }
        }
        let source = match (&self.jwks, &self.jwks_uri) {
            (Some(_), Some(_)) => {
                return Err(BuildError(
                    "give the signing keys either inline (with_jwks) or by URL (with_jwks_uri), not both".into(),
                ))
            }
            (Some(jwks), None) => {
                let document: Value = serde_json::from_str(jwks)
                    .map_err(|e| BuildError(format!("the inline JWK Set is not JSON: {e}")))?;
                let keys = parse_jwks(&document).map_err(|e| BuildError(format!("the inline JWK Set: {e}")))?;
                Source::Inline(keys)
            }
            (None, Some(uri)) => Source::Uri(checked_url("JWKS URL", uri)?),
            (None, None) if self.introspection.is_some() => Source::None,
            (None, None) => Source::Discover,
        };
        let introspection = match &self.introspection {
            None => None,
            Some(introspection) => {
                let url = checked_url("introspection endpoint", &introspection.endpoint)?;
                if url.fragment().is_some() {
                    return Err(BuildError(format!(
                        "the introspection endpoint {} must have no fragment",
                        introspection.endpoint
                    )));
                }
                if introspection.client_id.is_empty() || introspection.client_id.chars().any(char::is_control) {
                    return Err(BuildError(
                        "the introspection client id must be non-empty, without control characters".into(),
                    ));
                }
                Some(url)
            }
        };
        Ok(Checked {
            metadata_url: self.metadata_url()?,
            resource_path: path_suffix(resource.path()).to_owned(),
            source,
            introspection,
        })
    }
}

/// What [`ResourceServer::checked`] parsed.
struct Checked {
    metadata_url: String,
    resource_path: String,
    source: Source,
    introspection: Option<Url>,
}

enum Source {
    Inline(Vec<Key>),
    Uri(Url),
    Discover,
    /// Introspection only.
    None,
}

/// The verified token of a request, in its extensions (`parts.extensions.get::<VerifiedToken>()`
/// in an identity function, or `RequestContext::extensions` through the request's
/// `http::request::Parts`). Holds no token.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct VerifiedToken {
    /// The authorization server that issued it (`iss`, one of the configured issuers).
    pub issuer: String,
    /// Whom it was issued for (`sub`).
    pub subject: String,
    /// The scopes it grants (`scope` or `scp`).
    pub scopes: Vec<String>,
}

impl VerifiedToken {
    /// The requester of Part III 8.4: `<iss>#<sub>` (the engine's identity is then
    /// `auth:<iss>#<sub>`). An issuer has no fragment, so the first `#` separates the two.
    pub fn identity(&self) -> String {
        format!("{}#{}", self.issuer, self.subject)
    }
}

/// The identity function [`crate::EngineBuilder::oauth`] installs: the verified token's
/// identity, else what `fallback` (the builder's own identity function) finds.
pub(crate) fn identity_fn(fallback: Option<IdentityFn>) -> IdentityFn {
    Arc::new(move |parts: &http::request::Parts| {
        parts
            .extensions
            .get::<VerifiedToken>()
            .map(VerifiedToken::identity)
            .or_else(|| fallback.as_ref().and_then(|f| f(parts)))
    })
}

/// One signing key of a JWK Set.
struct Key {
    kid: Option<String>,
    /// The only algorithm the key may verify, when the JWK names one (`alg`).
    alg: Option<Algorithm>,
    family: AlgorithmFamily,
    key: DecodingKey,
}

/// The usable signing keys of a JWK Set document: public keys of the allowed families, for
/// signatures (`use` absent or `sig`), with an allowed `alg` when they name one. Others are
/// skipped (a set may carry encryption keys); a document without a `keys` array is an error.
fn parse_jwks(document: &Value) -> Result<Vec<Key>, String> {
    let entries = document
        .get("keys")
        .and_then(Value::as_array)
        .ok_or("not a JWK Set (no \"keys\" array)")?;
    let mut keys = Vec::new();
    for entry in entries {
        if keys.len() == MAX_KEYS {
            break;
        }
        let Ok(jwk) = serde_json::from_value::<Jwk>(entry.clone()) else {
            continue;
        };
        if matches!(
            jwk.common.public_key_use,
            Some(PublicKeyUse::Encryption | PublicKeyUse::Other(_))
        ) {
            continue;
        }
        let family = match &jwk.algorithm {
            AlgorithmParameters::RSA(_) => AlgorithmFamily::Rsa,
            AlgorithmParameters::EllipticCurve(p) if matches!(p.curve, EllipticCurve::P256 | EllipticCurve::P384) => {
                AlgorithmFamily::Ec
            }
            AlgorithmParameters::OctetKeyPair(p) if p.curve == EllipticCurve::Ed25519 => AlgorithmFamily::Ed,
            // Symmetric keys above all: an HMAC key is never built.
            _ => continue,
        };
        let alg = match jwk.common.key_algorithm {
            None => None,
            Some(named) => match Algorithm::try_from(named) {
                Ok(alg) if ALLOWED_ALGORITHMS.contains(&alg) && alg.family() == family => Some(alg),
                _ => continue,
            },
        };
        let Ok(key) = DecodingKey::from_jwk(&jwk) else {
            continue;
        };
        keys.push(Key {
            kid: jwk.common.key_id.clone(),
            alg,
            family,
            key,
        });
    }
    if keys.is_empty() {
        return Err("no usable signing key (RSA, EC P-256/P-384 or Ed25519, for signatures)".into());
    }
    Ok(keys)
}

/// `url` parsed, if it is HTTPS, or plain HTTP on a loopback host.
fn checked_url(what: &str, url: &str) -> Result<Url, BuildError> {
    let parsed = Url::parse(url).map_err(|e| BuildError(format!("the {what} {url:?} is not an absolute URL: {e}")))?;
    if parsed.host().is_none() {
        return Err(BuildError(format!("the {what} {url} names no host")));
    }
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" if is_loopback(&parsed) => Ok(parsed),
        "http" => Err(BuildError(format!(
            "the {what} {url} is plain http:// on a host that is not loopback: use https:// (plain http:// is \
             accepted only for 127.0.0.0/8, ::1 and localhost)"
        ))),
        scheme => Err(BuildError(format!(
            "the {what} {url} must be an https:// URL, not {scheme}:"
        ))),
    }
}

/// Whether `url`'s host is loopback: 127.0.0.0/8, `::1` or `localhost`.
fn is_loopback(url: &Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// A URL path as the suffix of a well-known path: empty for `/` (RFC 9728 3.1, RFC 8414 3.1).
fn path_suffix(path: &str) -> &str {
    if path == "/" {
        ""
    } else {
        path
    }
}

/// The places of an issuer's metadata, in the order MCP's authorization spec tries them:
/// RFC 8414 with the path inserted, OpenID Connect with the path inserted, then appended.
fn metadata_locations(issuer: &Url) -> Vec<String> {
    let origin = issuer.origin().ascii_serialization();
    let path = path_suffix(issuer.path()).trim_end_matches('/');
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// GETs `url` and parses it as JSON: a success status, at most [`MAX_DOCUMENT_BYTES`], within
/// the client's [`FETCH_TIMEOUT`].
async fn fetch_json(client: &reqwest::Client, url: &Url) -> Result<Value, String> {
    let response = client
        .get(url.clone())
        .header(http::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    if !response.status().is_success() {
        return Err(format!("{url} answered {}", response.status()));
    }
    read_json(response, url).await
}

/// Reads `response`'s body as JSON, at most [`MAX_DOCUMENT_BYTES`].
async fn read_json(mut response: reqwest::Response, url: &Url) -> Result<Value, String> {
    if response.content_length().is_some_and(|n| n > MAX_DOCUMENT_BYTES as u64) {
        return Err(format!("{url} is over {MAX_DOCUMENT_BYTES} bytes"));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| format!("{url}: {e}"))? {
        if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
            return Err(format!("{url} is over {MAX_DOCUMENT_BYTES} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).map_err(|e| format!("{url} is not JSON: {e}"))
}

/// The JWKS URL of `issuer`, from its metadata (whose `issuer` must be `issuer`, RFC 8414 3.3).
async fn discover_jwks_uri(client: &reqwest::Client, issuer: &str) -> Result<Url, String> {
    let parsed = Url::parse(issuer).map_err(|e| e.to_string())?;
    let mut faults = Vec::new();
    for location in metadata_locations(&parsed) {
        let Ok(url) = Url::parse(&location) else { continue };
        let document = match fetch_json(client, &url).await {
            Ok(document) => document,
            Err(fault) => {
                faults.push(fault);
                continue;
            }
        };
        if document.get("issuer").and_then(Value::as_str) != Some(issuer) {
            faults.push(format!("{location} names another issuer"));
            continue;
        }
        let Some(jwks_uri) = document.get("jwks_uri").and_then(Value::as_str) else {
            faults.push(format!("{location} has no jwks_uri"));
            continue;
        };
        return checked_url("JWKS URL", jwks_uri).map_err(|e| format!("{location}: {}", e.0));
    }
    Err(format!("no metadata of the issuer {issuer}: {}", faults.join("; ")))
}

/// The keys of one key set as last fetched.
struct Cached {
    keys: Arc<Vec<Key>>,
    fetched_at: Option<Instant>,
}

/// Where a key set's keys come from, and when they were last asked for.
struct Fetching {
    /// The JWKS URL: given, or discovered once from the issuer's metadata.
    jwks_uri: Option<Url>,
    /// The issuer whose metadata names the JWKS URL (discovery).
    issuer: Option<String>,
    last_attempt: Option<Instant>,
}

/// The keys of one issuer (discovery), or of every issuer (inline keys, a given JWKS URL).
struct KeySet {
    cached: RwLock<Arc<Cached>>,
    fetching: tokio::sync::Mutex<Fetching>,
    inline: bool,
}

impl KeySet {
    fn new(keys: Vec<Key>, jwks_uri: Option<Url>, issuer: Option<String>) -> Self {
        let inline = !keys.is_empty();
        Self {
            cached: RwLock::new(Arc::new(Cached {
                keys: Arc::new(keys),
                fetched_at: None,
            })),
            fetching: tokio::sync::Mutex::new(Fetching {
                jwks_uri,
                issuer,
                last_attempt: None,
            }),
            inline,
        }
    }

    fn snapshot(&self) -> Arc<Cached> {
        self.cached.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Whether the keys should be fetched before verifying: never fetched, or too old.
    fn wants_fetch(&self) -> bool {
        !self.inline && self.snapshot().fetched_at.is_none_or(|at| at.elapsed() >= KEYS_MAX_AGE)
    }

    /// Fetches the keys again, unless a fetch was attempted within [`REFRESH_INTERVAL`] (a
    /// concurrent caller's fetch included: with `wait`, callers wait for it and then use its
    /// keys; without, they go on with the keys there are). A failed fetch keeps the keys there
    /// were.
    async fn refresh(&self, client: &reqwest::Client, wait: bool) {
        if self.inline {
            return;
        }
        let mut fetching = if wait {
            self.fetching.lock().await
        } else {
            match self.fetching.try_lock() {
                Ok(fetching) => fetching,
                Err(_) => return,
            }
        };
        if fetching.last_attempt.is_some_and(|at| at.elapsed() < REFRESH_INTERVAL) {
            return;
        }
        fetching.last_attempt = Some(Instant::now());
        let uri = match (&fetching.jwks_uri, &fetching.issuer) {
            (Some(uri), _) => uri.clone(),
            (None, Some(issuer)) => match discover_jwks_uri(client, issuer).await {
                Ok(uri) => {
                    fetching.jwks_uri = Some(uri.clone());
                    uri
                }
                Err(fault) => {
                    tracing::warn!(reason = %fault, "the signing keys of an authorization server could not be found");
                    return;
                }
            },
            (None, None) => return,
        };
        match fetch_json(client, &uri)
            .await
            .and_then(|document| parse_jwks(&document))
        {
            Ok(keys) => {
                *self.cached.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(Cached {
                    keys: Arc::new(keys),
                    fetched_at: Some(Instant::now()),
                });
            }
            Err(fault) => {
                tracing::warn!(jwks_uri = %uri, reason = %fault, "the signing keys could not be fetched");
            }
        }
    }
}

/// Why a request was refused.
#[derive(Debug)]
enum Refusal {
    /// No bearer token: 401 without an error code.
    Missing,
    /// A token that does not verify: 401 `invalid_token`, with this description.
    Invalid(String),
    /// A valid token without the required scopes: 403 `insufficient_scope`.
    InsufficientScope,
    /// No signing key could be fetched yet, or the introspection endpoint failed: 503.
    Unavailable,
}

/// An introspection answer (RFC 7662 2.2): what the resource server reads of it.
#[derive(Deserialize)]
struct Introspected {
    active: bool,
    iss: Option<String>,
    sub: Option<String>,
    aud: Option<Audience>,
    exp: Option<u64>,
    nbf: Option<u64>,
    scope: Option<String>,
}

/// `aud`: one string or an array of them.
#[derive(Deserialize)]
#[serde(untagged)]
enum Audience {
    One(String),
    Many(Vec<String>),
}

/// `text` in `application/x-www-form-urlencoded`: every byte but the unreserved ones of RFC
/// 3986 percent-encoded.
fn form_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The claims read from a verified token.
#[derive(Deserialize)]
struct Claims {
    iss: Option<String>,
    sub: Option<String>,
    scope: Option<String>,
    scp: Option<Scp>,
}

/// `scp`: an array (most servers) or a space-separated string.
#[derive(Deserialize)]
#[serde(untagged)]
enum Scp {
    Many(Vec<String>),
    One(String),
}

/// A resource server in service: its configuration, key sets and HTTP client.
pub(crate) struct Verifier {
    config: ResourceServer,
    metadata_url: String,
    resource_path: String,
    /// One key set per issuer (discovery), or one for all.
    sets: Vec<(Option<String>, KeySet)>,
    client: Option<reqwest::Client>,
    /// The introspection endpoint, parsed.
    introspection: Option<Url>,
    /// The claim checks, one per key family (jsonwebtoken takes only algorithms of the key's
    /// family): the allowed algorithms of that family.
    validations: Vec<(AlgorithmFamily, Validation)>,
}

impl std::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Verifier")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Verifier {
    /// Checks `config` and readies its key sets and client.
    pub(crate) fn new(config: ResourceServer) -> Result<Self, BuildError> {
        let checked = config.checked()?;
        // One crypto provider for jsonwebtoken: aws-lc-rs, unless the process chose one.
        if jsonwebtoken::crypto::CryptoProvider::try_get_default().is_none() {
            let _ = jsonwebtoken::crypto::aws_lc::DEFAULT_PROVIDER.install_default();
        }
        let mut client = None;
        let sets = match checked.source {
            Source::Inline(keys) => vec![(None, KeySet::new(keys, None, None))],
            Source::Uri(uri) => vec![(None, KeySet::new(Vec::new(), Some(uri), None))],
            Source::None => Vec::new(),
            Source::Discover => config
                .issuers
                .iter()
                .map(|issuer| {
                    (
                        Some(issuer.clone()),
                        KeySet::new(Vec::new(), None, Some(issuer.clone())),
                    )
                })
                .collect(),
        };
        if sets.iter().any(|(_, set)| !set.inline) || checked.introspection.is_some() {
            client = Some(
                reqwest::Client::builder()
                    .timeout(FETCH_TIMEOUT)
                    .connect_timeout(FETCH_TIMEOUT)
                    .redirect(reqwest::redirect::Policy::custom(|attempt| {
                        if attempt.previous().len() >= 5 {
                            attempt.error("too many redirects")
                        } else if checked_url("redirect", attempt.url().as_str()).is_err() {
                            attempt.error("a redirect to a URL that is not https:// (nor loopback)")
                        } else {
                            attempt.follow()
                        }
                    }))
                    .build()
                    .map_err(|e| BuildError(format!("the HTTP client for the authorization servers: {e}")))?,
            );
        }
        let validations = [AlgorithmFamily::Rsa, AlgorithmFamily::Ec, AlgorithmFamily::Ed]
            .into_iter()
            .map(|family| {
                let mut validation = Validation::new(Algorithm::RS256);
                validation.algorithms = ALLOWED_ALGORITHMS
                    .into_iter()
                    .filter(|a| a.family() == family)
                    .collect();
                validation.leeway = LEEWAY.as_secs();
                validation.validate_exp = true;
                validation.validate_nbf = true;
                validation.validate_aud = true;
                validation.set_audience(&[config.resource.as_str()]);
                validation.set_issuer(&config.issuers);
                validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
                (family, validation)
            })
            .collect();
        Ok(Self {
            metadata_url: checked.metadata_url,
            resource_path: checked.resource_path,
            config,
            sets,
            client,
            introspection: checked.introspection,
            validations,
        })
    }

    /// Verifies `token` (signature, algorithm, issuer, audience, times, subject) and reads its
    /// scopes; the required scopes are not checked here.
    async fn verify(&self, token: &str) -> Result<VerifiedToken, Refusal> {
        let invalid = |description: &str| Refusal::Invalid(description.to_owned());
        if let Some(endpoint) = &self.introspection {
            if self.sets.is_empty() || token.split('.').count() != 3 {
                return self.introspect(token, endpoint).await;
            }
        }
        let mut segments = token.split('.');
        let (Some(header), Some(_), Some(_), None) =
            (segments.next(), segments.next(), segments.next(), segments.next())
        else {
            return Err(invalid("the token is not a JWT (three base64url segments)"));
        };
        let header: Value = base64url(header)
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .ok_or_else(|| invalid("the token's header is not base64url JSON"))?;
        let Some(alg) = header.get("alg").and_then(Value::as_str) else {
            return Err(invalid("the token's header names no algorithm (alg)"));
        };
        let Some(alg) = ALLOWED_ALGORITHMS.iter().copied().find(|a| format!("{a:?}") == alg) else {
            let named: String = alg.chars().take(16).collect();
            return Err(Refusal::Invalid(format!(
                "the signing algorithm {named} is not allowed (allowed: RS256, RS384, RS512, PS256, PS384, PS512, \
                 ES256, ES384, EdDSA)"
            )));
        };
        let kid = header.get("kid").and_then(Value::as_str);
        // The claimed issuer only picks the key set; the verification checks it again.
        let claimed = jsonwebtoken::dangerous::insecure_decode_claims::<Value>(token)
            .map_err(|_| invalid("the token's claims are not base64url JSON"))?;
        let Some(claimed) = claimed.get("iss").and_then(Value::as_str) else {
            return Err(invalid("the token has no iss claim"));
        };
        if !self.config.issuers.iter().any(|i| i == claimed) {
            return Err(invalid(
                "the token's issuer is not an authorization server of this resource",
            ));
        }
        let set = self
            .sets
            .iter()
            .find(|(issuer, _)| issuer.as_deref().is_none_or(|i| i == claimed))
            .map(|(_, set)| set)
            .ok_or_else(|| invalid("the token's issuer is not an authorization server of this resource"))?;
        let client = self.client.as_ref();
        if let (true, Some(client)) = (set.wants_fetch(), client) {
            // Keys never fetched are waited for; keys grown old are refreshed by one request
            // while the others go on with them.
            set.refresh(client, set.snapshot().keys.is_empty()).await;
        }
        let mut cached = set.snapshot();
        let named = |keys: &[Key]| kid.is_none_or(|kid| keys.iter().any(|k| k.kid.as_deref() == Some(kid)));
        if !named(&cached.keys) {
            if let Some(client) = client {
                set.refresh(client, true).await;
                cached = set.snapshot();
            }
        }
        if cached.keys.is_empty() {
            return Err(Refusal::Unavailable);
        }
        if !named(&cached.keys) {
            return Err(invalid("the token's signing key (kid) is unknown"));
        }
        let candidates = cached.keys.iter().filter(|k| {
            kid.is_none_or(|kid| k.kid.as_deref() == Some(kid))
                && k.family == alg.family()
                && k.alg.is_none_or(|a| a == alg)
        });
        let Some((_, validation)) = self.validations.iter().find(|(family, _)| *family == alg.family()) else {
            return Err(invalid("the token's algorithm does not match its signing key"));
        };
        let mut fault = None;
        for key in candidates {
            match jsonwebtoken::decode::<Claims>(token, &key.key, validation) {
                Ok(data) => return Self::verified(data.claims),
                Err(error) => {
                    fault.get_or_insert(error);
                }
            }
        }
        Err(match fault {
            Some(error) => Refusal::Invalid(describe(&error)),
            None => invalid("the token's algorithm does not match its signing key"),
        })
    }

    /// Asks the introspection endpoint about `token` (RFC 7662 2.1) and checks the answer as a
    /// JWT's claims are checked.
    async fn introspect(&self, token: &str, endpoint: &Url) -> Result<VerifiedToken, Refusal> {
        let (Some(client), Some(config)) = (&self.client, &self.config.introspection) else {
            return Err(Refusal::Unavailable);
        };
        // RFC 6749 2.3.1: the client id and secret are form-encoded before the Basic scheme.
        let response = client
            .post(endpoint.clone())
            .basic_auth(form_encode(&config.client_id), Some(form_encode(&config.client_secret)))
            .header(http::header::ACCEPT, "application/json")
            .header(http::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(format!("token={}&token_type_hint=access_token", form_encode(token)))
            .send()
            .await;
        let answer = match response {
            Ok(response) if response.status().is_success() => read_json(response, endpoint).await,
            Ok(response) => Err(format!("{endpoint} answered {}", response.status())),
            Err(error) => Err(format!("{endpoint}: {error}")),
        };
        let answer = answer.map_err(|fault| {
            tracing::warn!(introspection_endpoint = %endpoint, reason = %fault, "token introspection failed");
            Refusal::Unavailable
        })?;
        let introspected: Introspected = serde_json::from_value(answer).map_err(|error| {
            tracing::warn!(introspection_endpoint = %endpoint, reason = %error, "token introspection answered malformed JSON");
            Refusal::Unavailable
        })?;
        if !introspected.active {
            return Err(Refusal::Invalid("the token is not active (introspection)".into()));
        }
        let issuer = match introspected.iss {
            Some(issuer) if self.config.issuers.contains(&issuer) => issuer,
            Some(_) => {
                return Err(Refusal::Invalid(
                    "the token's issuer is not an authorization server of this resource".into(),
                ))
            }
            None if self.config.issuers.len() == 1 => self.config.issuers[0].clone(),
            None => {
                return Err(Refusal::Invalid(
                    "the introspection answer names no issuer (iss)".into(),
                ))
            }
        };
        let audiences = match introspected.aud {
            Some(Audience::One(one)) => vec![one],
            Some(Audience::Many(many)) => many,
            None => Vec::new(),
        };
        if !audiences.contains(&self.config.resource) {
            return Err(Refusal::Invalid(
                "the token was issued for another resource (aud)".into(),
            ));
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let leeway = LEEWAY.as_secs();
        if introspected.exp.is_some_and(|exp| now > exp.saturating_add(leeway)) {
            return Err(Refusal::Invalid("the token has expired (exp)".into()));
        }
        if introspected.nbf.is_some_and(|nbf| now.saturating_add(leeway) < nbf) {
            return Err(Refusal::Invalid("the token is not valid yet (nbf)".into()));
        }
        Self::verified(Claims {
            iss: Some(issuer),
            sub: introspected.sub,
            scope: introspected.scope,
            scp: None,
        })
    }

    fn verified(claims: Claims) -> Result<VerifiedToken, Refusal> {
        let (Some(issuer), Some(subject)) = (claims.iss, claims.sub) else {
            return Err(Refusal::Invalid("the token lacks iss or sub".into()));
        };
        if subject.is_empty() {
            return Err(Refusal::Invalid("the token's subject is empty".into()));
        }
        let mut scopes: Vec<String> = Vec::new();
        let words = claims
            .scope
            .iter()
            .flat_map(|s| s.split_whitespace().map(str::to_owned));
        let listed = match claims.scp {
            Some(Scp::Many(list)) => list,
            Some(Scp::One(text)) => text.split_whitespace().map(str::to_owned).collect(),
            None => Vec::new(),
        };
        for scope in words.chain(listed) {
            if !scopes.contains(&scope) {
                scopes.push(scope);
            }
        }
        Ok(VerifiedToken {
            issuer,
            subject,
            scopes,
        })
    }

    /// The `WWW-Authenticate` value and the response of a refusal.
    fn refuse(&self, refusal: &Refusal) -> Response<Body> {
        let scope = self.config.scopes.join(" ");
        let mut parameters: Vec<(&str, String)> = Vec::new();
        let (status, message) = match refusal {
            Refusal::Missing => (
                StatusCode::UNAUTHORIZED,
                "Unauthorized: a bearer token is required".to_owned(),
            ),
            Refusal::Invalid(description) => {
                parameters.push(("error", "invalid_token".into()));
                parameters.push(("error_description", description.clone()));
                (StatusCode::UNAUTHORIZED, format!("Unauthorized: {description}"))
            }
            Refusal::InsufficientScope => {
                let description = format!("the token lacks a required scope (required: {scope})");
                parameters.push(("error", "insufficient_scope".into()));
                parameters.push(("error_description", description.clone()));
                (StatusCode::FORBIDDEN, format!("Forbidden: {description}"))
            }
            Refusal::Unavailable => {
                let response = crate::http::refused(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "Service Unavailable: the authorization server could not be reached to verify the token",
                );
                log(
                    response.status(),
                    "no signing key could be fetched, or introspection failed",
                );
                return response;
            }
        };
        if !scope.is_empty() {
            parameters.push(("scope", scope));
        }
        parameters.push(("resource_metadata", self.metadata_url.clone()));
        let challenge = parameters
            .iter()
            .map(|(name, value)| format!("{name}=\"{}\"", quoted(value)))
            .collect::<Vec<_>>()
            .join(", ");
        let mut response = crate::http::refused(status, &message);
        if let Ok(value) = HeaderValue::from_str(&format!("Bearer {challenge}")) {
            response.headers_mut().insert(http::header::WWW_AUTHENTICATE, value);
        }
        log(status, &message);
        response
    }

    /// The public routes of the metadata document: [`METADATA_PATH`] alone, with the MCP
    /// endpoint's `path` appended, and with the resource URI's path appended.
    fn metadata_routes(&self, path: &str) -> Router {
        let document = self.config.metadata().to_string();
        let serve = move || {
            let document = document.clone();
            async move {
                Response::builder()
                    .status(StatusCode::OK)
                    .header(http::header::CONTENT_TYPE, "application/json")
                    .body(Body::from(document))
                    .expect("a JSON response builds")
            }
        };
        let path = format!("/{}", path.trim_matches('/'));
        let mut paths = vec![METADATA_PATH.to_owned()];
        for suffix in [path_suffix(&path), self.resource_path.as_str()] {
            let route = format!("{METADATA_PATH}{}", suffix.trim_end_matches('/'));
            // A path axum would read as a parameter or a wildcard is not served.
            if !paths.contains(&route) && !route.contains(['{', '}', '*']) {
                paths.push(route);
            }
        }
        paths.into_iter().fold(Router::new(), |router, route| {
            router.route(&route, axum::routing::get(serve.clone()))
        })
    }
}

/// Logs a refusal (never the token): a request without a token is the first step of every
/// authorization flow (`debug`), a bad token or scope is `info`, keys that cannot be fetched
/// are `warn`.
fn log(status: StatusCode, reason: &str) {
    let status_code = status.as_u16();
    match status {
        StatusCode::SERVICE_UNAVAILABLE => {
            tracing::warn!(http.response.status_code = status_code, reason, "HTTP request refused")
        }
        _ if reason.ends_with("a bearer token is required") => {
            tracing::debug!(http.response.status_code = status_code, reason, "HTTP request refused")
        }
        _ => tracing::info!(http.response.status_code = status_code, reason, "HTTP request refused"),
    }
}

/// `value` made fit for a quoted-string of `WWW-Authenticate` (RFC 6750 3: no `"` nor `\`,
/// printable ASCII).
fn quoted(value: &str) -> String {
    value
        .chars()
        .map(|c| {
            if c == '"' || c == '\\' || !(' '..='~').contains(&c) {
                '\''
            } else {
                c
            }
        })
        .collect()
}

/// What a jsonwebtoken fault says to the client.
fn describe(error: &jsonwebtoken::errors::Error) -> String {
    use jsonwebtoken::errors::ErrorKind;
    match error.kind() {
        ErrorKind::ExpiredSignature => "the token has expired (exp)".into(),
        ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)".into(),
        ErrorKind::InvalidIssuer => "the token's issuer is not an authorization server of this resource".into(),
        ErrorKind::InvalidAudience => "the token was issued for another resource (aud)".into(),
        ErrorKind::InvalidSignature => "the token's signature does not verify".into(),
        ErrorKind::InvalidAlgorithm => "the token's algorithm does not match its signing key".into(),
        ErrorKind::MissingRequiredClaim(claim) => format!("the token has no {claim} claim"),
        ErrorKind::InvalidClaimFormat(claim) => format!("the token's {claim} claim is malformed"),
        _ => "the token is malformed".into(),
    }
}

/// Decodes base64url (padding tolerated); `None` for any other character.
fn base64url(text: &str) -> Option<Vec<u8>> {
    let mut bytes = Vec::with_capacity(text.len() * 3 / 4);
    let (mut buffer, mut bits) = (0u32, 0u32);
    for c in text.trim_end_matches('=').bytes() {
        let value = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return None,
        };
        buffer = (buffer << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            bytes.push((buffer >> bits) as u8);
            buffer &= (1 << bits) - 1;
        }
    }
    Some(bytes)
}

/// The bearer token of `headers`: `Ok(None)` when there is none (no `Authorization` header, or
/// another scheme), `Err` for a malformed one (several headers, an empty or non-token value).
fn bearer(headers: &http::HeaderMap) -> Result<Option<String>, Refusal> {
    let mut values = headers.get_all(http::header::AUTHORIZATION).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return if headers.contains_key(http::header::AUTHORIZATION) {
            Err(Refusal::Invalid("several Authorization headers".into()))
        } else {
            Ok(None)
        };
    };
    let value = value
        .to_str()
        .map_err(|_| Refusal::Invalid("the Authorization header is not ASCII".into()))?;
    let (scheme, token) = value.trim().split_once(' ').unwrap_or((value.trim(), ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Ok(None);
    }
    let token = token.trim();
    // RFC 6750 2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
    let body = token.trim_end_matches('=');
    if body.is_empty()
        || !body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
    {
        return Err(Refusal::Invalid("the bearer token is empty or malformed".into()));
    }
    Ok(Some(token.to_owned()))
}

/// The state of the middleware: the verifier and the transport's Host and Origin rules.
struct Protection {
    verifier: Arc<Verifier>,
    options: HttpOptions,
}

/// The middleware in front of the MCP endpoint (see the module docs).
async fn protect(State(protection): State<Arc<Protection>>, mut request: Request<Body>, next: Next) -> Response<Body> {
    // A request the Host and Origin rules refuse goes on to the transport's guard, which
    // answers it 403 whether or not it carries a token.
    if crate::http::check_host_and_origin(request.headers(), &protection.options).is_err() {
        return next.run(request).await;
    }
    let verifier = &protection.verifier;
    let verified = match bearer(request.headers()) {
        Ok(Some(token)) => verifier.verify(&token).await,
        Ok(None) => Err(Refusal::Missing),
        Err(refusal) => Err(refusal),
    };
    let verified = match verified {
        Ok(verified) => verified,
        Err(refusal) => return verifier.refuse(&refusal),
    };
    if !verifier.config.scopes.iter().all(|s| verified.scopes.contains(s)) {
        return verifier.refuse(&Refusal::InsufficientScope);
    }
    // The token goes no further: the handler and the engine's own tools read the identity.
    request.headers_mut().remove(http::header::AUTHORIZATION);
    request.extensions_mut().insert(verified);
    next.run(request).await
}

/// `router` (the MCP endpoint at `path`, behind the transport's guard) behind the resource
/// server's middleware, with the public metadata routes beside it.
pub(crate) fn protected(router: Router, verifier: &Arc<Verifier>, path: &str, options: &HttpOptions) -> Router {
    let protection = Arc::new(Protection {
        verifier: verifier.clone(),
        options: options.clone(),
    });
    router
        .layer(axum::middleware::from_fn_with_state(protection, protect))
        .merge(verifier.metadata_routes(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_is_accepted_only_on_loopback() {
        for issuer in [
            "https://auth.example.com",
            "http://127.0.0.1:8080",
            "http://127.1.2.3",
            "http://[::1]:9000/tenant",
            "http://localhost:3000",
            "http://LOCALHOST",
        ] {
            let server = ResourceServer::new("https://mcp.example.com/mcp").with_issuer(issuer);
            assert_eq!(server.check(), Ok(()), "{issuer}");
        }
        for issuer in [
            "http://auth.example.com",
            "http://10.0.0.1",
            "http://localhost.example.com",
            "http://[::2]",
            "ftp://auth.example.com",
            "auth.example.com",
        ] {
            let server = ResourceServer::new("https://mcp.example.com/mcp").with_issuer(issuer);
            let error = server.check().expect_err(issuer);
            assert!(error.0.contains("issuer"), "{issuer}: {error}");
        }
        let jwks = ResourceServer::new("https://mcp.example.com/mcp")
            .with_issuer("https://auth.example.com")
            .with_jwks_uri("http://keys.example.com/jwks");
        assert!(jwks
            .check()
            .unwrap_err()
            .0
            .contains("JWKS URL http://keys.example.com/jwks"));
        let resource = ResourceServer::new("http://mcp.example.com/mcp").with_issuer("https://auth.example.com");
        assert!(resource.check().unwrap_err().0.contains("resource URI"));
        assert!(
            ResourceServer::new("https://mcp.example.com/mcp").check().is_err(),
            "no issuer"
        );
    }

    #[test]
    fn the_metadata_url_inserts_the_well_known_path() {
        let server = ResourceServer::new("https://mcp.example.com/public/mcp").with_issuer("https://a.example");
        assert_eq!(
            server.metadata_url().unwrap(),
            "https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp"
        );
        let root = ResourceServer::new("https://mcp.example.com").with_issuer("https://a.example");
        assert_eq!(
            root.metadata_url().unwrap(),
            "https://mcp.example.com/.well-known/oauth-protected-resource"
        );
        let issuer = Url::parse("https://auth.example.com/tenant1").unwrap();
        assert_eq!(
            metadata_locations(&issuer),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn bearer_tokens_are_read_from_one_authorization_header() {
        let headers = |values: &[&str]| {
            let mut headers = http::HeaderMap::new();
            for value in values {
                headers.append(http::header::AUTHORIZATION, value.parse().unwrap());
            }
            headers
        };
        assert!(matches!(bearer(&headers(&[])), Ok(None)));
        assert!(matches!(bearer(&headers(&["Basic dXNlcjpwdw=="])), Ok(None)));
        assert!(matches!(bearer(&headers(&["bearer a.b.c"])), Ok(Some(t)) if t == "a.b.c"));
        for bad in [&["Bearer"][..], &["Bearer a b"], &["Bearer a.b.c", "Bearer a.b.c"]] {
            assert!(matches!(bearer(&headers(bad)), Err(Refusal::Invalid(_))), "{bad:?}");
        }
        assert_eq!(base64url("eyJhbGciOiJub25lIn0").unwrap(), br#"{"alg":"none"}"#);
    }

    #[test]
    fn symmetric_and_encryption_keys_are_never_used() {
        let only_bad = serde_json::json!({"keys": [
            {"kty": "oct", "k": "c2VjcmV0", "alg": "HS256", "kid": "h"},
            {"kty": "RSA", "use": "enc", "n": "sXch", "e": "AQAB", "kid": "e"},
        ]});
        assert!(parse_jwks(&only_bad).is_err());
        let server = ResourceServer::new("https://mcp.example.com/mcp")
            .with_issuer("https://auth.example.com")
            .with_jwks(only_bad.to_string());
        assert!(server.check().unwrap_err().0.contains("no usable signing key"));
    }
}
