//! Authorization for streamable HTTP servers, the client side of the MCP authorization spec
//! (2025-11-25, "Authorization"), for clients that run without a person at a browser.
//!
//! What the client sends is set by [`ClientAuth`] ([`ClientOptions::auth`](crate::ClientOptions)):
//!
//! - [`ClientAuth::Bearer`]: a token the caller already has, sent on every request;
//! - [`ClientAuth::ClientCredentials`], [`ClientAuth::JwtAssertion`]: the OAuth 2.1
//!   `client_credentials` grant (the `io.modelcontextprotocol/oauth-client-credentials`
//!   extension, SEP-1046), the client authenticated by its secret (`client_secret_basic`, else
//!   `client_secret_post`, as the authorization server's metadata lists) or by a JWT signed
//!   with its private key (`private_key_jwt`, RFC 7523 section 2.2);
//! - [`ClientAuth::JwtBearer`]: the RFC 7523 section 2.1 `jwt-bearer` grant, with an assertion
//!   issued to the workload by its identity provider (workload identity federation, SEP-1933).
//!
//! For the OAuth grants nothing is sent until the server asks: on a 401 from the MCP endpoint
//! the client reads the `WWW-Authenticate: Bearer` challenge ([`parse_www_authenticate`]),
//! fetches the protected resource metadata (RFC 9728) from its `resource_metadata` URL or, when
//! the challenge names none, from `/.well-known/oauth-protected-resource/<path>` then
//! `/.well-known/oauth-protected-resource`; refuses metadata whose `resource` is not the server
//! it talks to ([`resource_covers`]: a token is never requested for, nor sent to, a server it
//! was not issued for); fetches the first authorization server's metadata that loads (RFC 8414,
//! then OpenID Connect discovery, its `issuer` checked); requests a token at its token endpoint
//! with the RFC 8707 `resource` and the scope (the caller's, else the challenge's, else the
//! metadata's `scopes_supported`); and connects again with `Authorization: Bearer`.
//!
//! Every request is bounded by the client's timeout and every metadata or token answer by
//! [`MAX_AUTH_RESPONSE_BYTES`]; redirects are followed for metadata (same origin, a few hops)
//! and never for the token request. Credentials and tokens only travel over https, or plain
//! http to a loopback address. Secrets are held in [`Secret`], whose `Debug` never shows them,
//! and no error message carries one.
//!
//! Not supported: the authorization code flow with PKCE (it needs a person at a browser),
//! dynamic client registration, refresh tokens and a new token mid-session, step-up on 403
//! `insufficient_scope`, and DPoP-bound tokens.
//!
//! rmcp's own `auth` feature is not used: it brings the `oauth2` crate into the build, its
//! client-credentials exchange sends a client secret only in the request body
//! (`client_secret_post`), whereas `client_secret_basic` is the method every authorization
//! server must support (RFC 6749 2.3.1) and the only one many offer, and its HTTP waits are its
//! own fixed 30 s rather than the client's timeout. The exchange is a form POST; the token
//! travels through rmcp's transport by its `auth_header` setting.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use serde_json::{Map, Value};
use url::Url;

/// The largest metadata document or token endpoint answer read, in bytes.
pub const MAX_AUTH_RESPONSE_BYTES: usize = 1024 * 1024;

/// How many same-origin redirects a metadata request follows.
const MAX_METADATA_REDIRECTS: usize = 5;

/// How long a `private_key_jwt` assertion is valid, in seconds.
const ASSERTION_LIFETIME_SECS: u64 = 300;

/// The `client_assertion_type` of a JWT client assertion (RFC 7523 2.2).
const JWT_ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// The grant type of the JWT bearer grant (RFC 7523 2.1).
pub const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// A secret: a token, a client secret, a private key or an assertion. `Debug` shows
/// `Secret(<redacted>)`; the value is only read through [`Secret::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps `value`.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret itself, for sending it where it belongs.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Self(value.to_owned())
    }
}

/// The JWS algorithm of a `private_key_jwt` client assertion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum JwtAlgorithm {
    /// ECDSA on P-256 with SHA-256.
    ES256,
    /// ECDSA on P-384 with SHA-384.
    ES384,
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    RS256,
    /// RSASSA-PKCS1-v1_5 with SHA-384.
    RS384,
    /// RSASSA-PKCS1-v1_5 with SHA-512.
    RS512,
    /// Ed25519.
    EdDSA,
}

impl JwtAlgorithm {
    /// Every algorithm, in the order a key's algorithm is inferred.
    pub const ALL: [Self; 6] = [
        Self::ES256,
        Self::ES384,
        Self::RS256,
        Self::RS384,
        Self::RS512,
        Self::EdDSA,
    ];

    /// The JWS `alg` name.
    pub fn name(self) -> &'static str {
        match self {
            Self::ES256 => "ES256",
            Self::ES384 => "ES384",
            Self::RS256 => "RS256",
            Self::RS384 => "RS384",
            Self::RS512 => "RS512",
            Self::EdDSA => "EdDSA",
        }
    }
}

impl std::str::FromStr for JwtAlgorithm {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|alg| alg.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| format!("`{name}`: expected one of ES256, ES384, RS256, RS384, RS512, EdDSA"))
    }
}

/// How the client authorizes with a streamable HTTP server. The default sends nothing; a
/// server that then answers 401 fails the connection with [`AuthFailureKind::CredentialsNeeded`]
/// naming the authorization servers its metadata lists. Ignored for a child process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientAuth {
    /// No credentials.
    #[default]
    None,
    /// A bearer token the caller already has, sent on every request.
    Bearer(Secret),
    /// The `client_credentials` grant, the client authenticated by its secret
    /// (`client_secret_basic`, or `client_secret_post` where only that is offered).
    ClientCredentials {
        /// The client's id at the authorization server.
        client_id: String,
        /// Its secret.
        client_secret: Secret,
        /// The scope to ask for; `None`: the server's challenge, else its `scopes_supported`.
        scope: Option<String>,
    },
    /// The `client_credentials` grant, the client authenticated by a JWT it signs with its
    /// private key (`private_key_jwt`, RFC 7523 2.2): `iss` and `sub` its id, `aud` the
    /// authorization server's issuer, valid five minutes.
    JwtAssertion {
        /// The client's id at the authorization server.
        client_id: String,
        /// The private key, PEM (PKCS#8 `PRIVATE KEY`, or `EC PRIVATE KEY`, `RSA PRIVATE KEY`).
        private_key_pem: Secret,
        /// The signing algorithm; `None`: inferred from the key (P-256 ES256, P-384 ES384,
        /// RSA RS256, Ed25519 EdDSA).
        alg: Option<JwtAlgorithm>,
        /// The scope, as for [`ClientAuth::ClientCredentials`].
        scope: Option<String>,
    },
    /// The JWT bearer grant (RFC 7523 2.1): an assertion the workload's identity provider
    /// issued for the authorization server, exchanged for a token.
    JwtBearer {
        /// The assertion (a signed JWT).
        assertion: Secret,
        /// The client's id, sent when given.
        client_id: Option<String>,
        /// The scope, as for [`ClientAuth::ClientCredentials`].
        scope: Option<String>,
    },
}

impl ClientAuth {
    /// Whether this runs an OAuth grant (as opposed to no credentials or a given token).
    pub fn is_grant(&self) -> bool {
        !matches!(self, Self::None | Self::Bearer(_))
    }

    fn scope(&self) -> Option<&str> {
        match self {
            Self::ClientCredentials { scope, .. }
            | Self::JwtAssertion { scope, .. }
            | Self::JwtBearer { scope, .. } => scope.as_deref(),
            Self::None | Self::Bearer(_) => None,
        }
    }

    fn grant_type(&self) -> &'static str {
        match self {
            Self::JwtBearer { .. } => JWT_BEARER_GRANT,
            _ => "client_credentials",
        }
    }
}

/// What went wrong while authorizing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthFailureKind {
    /// The server requires authorization and no credentials are configured.
    CredentialsNeeded,
    /// The server refused the token: the one given, or the one just obtained.
    TokenRejected,
    /// The protected resource metadata describes another resource: no token was requested.
    ResourceMismatch,
    /// The protected resource or authorization server metadata is missing or unusable.
    Metadata,
    /// The authorization server refused the token request, or its answer is unusable.
    TokenRequest,
    /// The credentials cannot be used here: a URL that is neither https nor loopback, a grant
    /// or client authentication method the authorization server does not offer, an unusable key.
    Unsupported,
}

/// Why the client could not authorize. The message never carries a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuthFailure {
    /// What went wrong.
    pub kind: AuthFailureKind,
    /// What went wrong, for a person.
    pub message: String,
    /// The authorization servers the protected resource metadata lists (empty when none was
    /// read).
    pub authorization_servers: Vec<String>,
    /// Where the protected resource metadata was read.
    pub resource_metadata: Option<String>,
    /// The scope the server's challenge asked for.
    pub scope: Option<String>,
}

impl AuthFailure {
    /// A failure of `kind`, told by `message`, naming no server or scope (set the fields for
    /// those).
    pub fn new(kind: AuthFailureKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            authorization_servers: Vec::new(),
            resource_metadata: None,
            scope: None,
        }
    }

    pub(crate) fn about(mut self, protected: &Protected) -> Self {
        self.authorization_servers = protected.authorization_servers.clone();
        self.resource_metadata = Some(protected.metadata_url.to_string());
        self.scope = protected.challenge.as_ref().and_then(|c| c.scope.clone());
        self
    }
}

impl std::fmt::Display for AuthFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        if !self.authorization_servers.is_empty() {
            write!(f, " (authorization servers: {})", self.authorization_servers.join(", "))?;
        }
        Ok(())
    }
}

impl std::error::Error for AuthFailure {}

/// The parameters of a `Bearer` challenge in a `WWW-Authenticate` header (RFC 6750 3, RFC
/// 9728 5.1).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BearerChallenge {
    /// `resource_metadata`: where the protected resource metadata is (RFC 9728 5.1).
    pub resource_metadata: Option<String>,
    /// `scope`: the scope the request needs.
    pub scope: Option<String>,
    /// `error`, e.g. `invalid_token`, `insufficient_scope`.
    pub error: Option<String>,
    /// `error_description`.
    pub error_description: Option<String>,
}

/// Parses a `WWW-Authenticate` header value (RFC 9110 11.6.1: one or more challenges, each a
/// scheme and comma-separated `name=value` parameters, values tokens or quoted strings) and
/// returns the parameters of its `Bearer` challenge, if it has one. Scheme and parameter names
/// are case-insensitive; a repeated parameter keeps its first value.
pub fn parse_www_authenticate(header: &str) -> Option<BearerChallenge> {
    let mut challenges: Vec<(String, Vec<(String, String)>)> = Vec::new();
    let bytes = header.as_bytes();
    let mut at = 0;
    let is_tchar = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    let skip = |at: &mut usize, set: &[u8]| {
        while *at < bytes.len() && set.contains(&bytes[*at]) {
            *at += 1;
        }
    };
    while at < bytes.len() {
        skip(&mut at, b" \t,");
        let start = at;
        while at < bytes.len() && is_tchar(bytes[at]) {
            at += 1;
        }
        if at == start {
            // Not a token (a stray character): skip it.
            at += 1;
            continue;
        }
        let token = &header[start..at];
        let mut look = at;
        skip(&mut look, b" \t");
        let is_param = look < bytes.len() && bytes[look] == b'=' && !challenges.is_empty();
        if !is_param {
            challenges.push((token.to_ascii_lowercase(), Vec::new()));
            continue;
        }
        at = look + 1;
        skip(&mut at, b" \t");
        let value = if at < bytes.len() && bytes[at] == b'"' {
            at += 1;
            let mut value = String::new();
            let mut chars = header[at..].char_indices();
            let mut end = header.len();
            while let Some((offset, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, escaped)) = chars.next() {
                            value.push(escaped);
                        }
                    }
                    '"' => {
                        end = at + offset + 1;
                        break;
                    }
                    c => value.push(c),
                }
            }
            at = end;
            value
        } else {
            let start = at;
            // A token, or a token68-like value with `=` padding.
            while at < bytes.len() && (is_tchar(bytes[at]) || bytes[at] == b'=' || bytes[at] == b'/') {
                at += 1;
            }
            header[start..at].to_owned()
        };
        if let Some((_, params)) = challenges.last_mut() {
            params.push((token.to_ascii_lowercase(), value));
        }
    }
    let (_, params) = challenges.into_iter().find(|(scheme, _)| scheme == "bearer")?;
    let get = |name: &str| {
        params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    };
    Some(BearerChallenge {
        resource_metadata: get("resource_metadata"),
        scope: get("scope"),
        error: get("error"),
        error_description: get("error_description"),
    })
}

/// Whether the protected resource `resource` (the `resource` of its metadata, RFC 9728 2)
/// covers `server`, the URL the client talks to: the same scheme, host and port, no fragment,
/// and a path that is the server's or a whole-segment prefix of it (`https://h/` covers
/// `https://h/mcp`; `https://h/mc` does not). Returns the resource as a URL, or why not.
pub fn resource_covers(resource: &str, server: &Url) -> Result<Url, String> {
    let parsed = Url::parse(resource).map_err(|e| format!("`resource` {resource:?} is not a URL: {e}"))?;
    if parsed.fragment().is_some() {
        return Err(format!("`resource` {resource:?} has a fragment (RFC 8707 2)"));
    }
    let same_origin = parsed.scheme() == server.scheme()
        && parsed.host_str().map(str::to_ascii_lowercase) == server.host_str().map(str::to_ascii_lowercase)
        && parsed.port_or_known_default() == server.port_or_known_default();
    let resource_path = parsed.path().trim_end_matches('/');
    let server_path = server.path().trim_end_matches('/');
    let path_covers = server_path == resource_path
        || server_path
            .strip_prefix(resource_path)
            .is_some_and(|rest| rest.starts_with('/'));
    let query_covers = parsed.query().is_none() || parsed.query() == server.query();
    if same_origin && path_covers && query_covers {
        Ok(parsed)
    } else {
        Err(format!(
            "the protected resource metadata is for {resource}, not for {server}: no token is requested for it"
        ))
    }
}

/// Whether credentials or a token may travel to `url`: https, or plain http to a loopback
/// address.
pub fn may_carry_secrets(url: &Url) -> bool {
    match url.scheme() {
        "https" => true,
        "http" => match url.host() {
            Some(url::Host::Domain(domain)) => domain.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        },
        _ => false,
    }
}

/// What the protected resource metadata says about the server.
#[derive(Debug, Clone)]
pub(crate) struct Protected {
    /// The `resource`, checked to cover the server.
    resource: String,
    /// Where the metadata was read.
    metadata_url: Url,
    /// `authorization_servers`.
    authorization_servers: Vec<String>,
    /// `scopes_supported`.
    scopes_supported: Vec<String>,
    /// The challenge of the 401, if it had a Bearer one.
    challenge: Option<BearerChallenge>,
}

/// An authorization server's metadata (RFC 8414 2), what of it the grants use.
#[derive(Debug, Clone)]
struct ServerMetadata {
    issuer: String,
    token_endpoint: Url,
    grant_types: Option<Vec<String>>,
    auth_methods: Option<Vec<String>>,
    signing_algs: Option<Vec<String>>,
}

/// Runs the discovery and the token request for one server URL.
pub(crate) struct Authorizer {
    server: Url,
    metadata_http: reqwest::Client,
    token_http: reqwest::Client,
}

fn http_client(timeout: Duration, redirects: reqwest::redirect::Policy) -> Result<reqwest::Client, AuthFailure> {
    reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout)
        .redirect(redirects)
        .build()
        .map_err(|e| {
            AuthFailure::new(
                AuthFailureKind::Unsupported,
                format!("cannot build the HTTP client: {e}"),
            )
        })
}

fn same_origin_redirects(limit: usize) -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(move |attempt| {
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > limit {
            attempt.error(format!("more than {limit} redirects"))
        } else {
            attempt.follow()
        }
    })
}

/// Reads at most `limit` bytes of `response`'s body.
async fn read_bounded(mut response: reqwest::Response, limit: usize) -> Result<Vec<u8>, String> {
    if response.content_length().is_some_and(|length| length > limit as u64) {
        return Err(format!("the answer is larger than {limit} bytes"));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| describe_http_error(&e))? {
        if body.len() + chunk.len() > limit {
            return Err(format!("the answer is larger than {limit} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn describe_http_error(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        "no answer within the timeout".to_owned()
    } else if error.is_connect() {
        "cannot connect".to_owned()
    } else if error.is_redirect() {
        "too many redirects".to_owned()
    } else {
        // reqwest's text names the URL, never a body or header.
        error.to_string()
    }
}

/// A short, printable excerpt of text from a server.
fn excerpt(text: &str) -> String {
    let clean: String = text.chars().filter(|c| !c.is_control()).take(200).collect();
    if text.chars().count() > 200 {
        format!("{clean}...")
    } else {
        clean
    }
}

fn strings(value: Option<&Value>) -> Option<Vec<String>> {
    value
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).map(str::to_owned).collect())
}

impl Authorizer {
    /// For the server at `server`, each request bounded by `timeout`.
    pub(crate) fn new(server: &str, timeout: Duration) -> Result<Self, AuthFailure> {
        let server = Url::parse(server).map_err(|e| {
            AuthFailure::new(
                AuthFailureKind::Unsupported,
                format!("the server URL {server:?} is not a URL: {e}"),
            )
        })?;
        Ok(Self {
            server,
            metadata_http: http_client(timeout, same_origin_redirects(MAX_METADATA_REDIRECTS))?,
            token_http: http_client(timeout, reqwest::redirect::Policy::none())?,
        })
    }

    /// GETs a JSON object; `Ok(None)` for a 404 (look elsewhere).
    async fn get_json(&self, url: &Url) -> Result<Option<Map<String, Value>>, String> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!("{url}: not an http(s) URL"));
        }
        let response = self
            .metadata_http
            .get(url.clone())
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| format!("{url}: {}", describe_http_error(&e)))?;
        let status = response.status();
        if status == reqwest::StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !status.is_success() {
            return Err(format!("{url}: HTTP {status}"));
        }
        let body = read_bounded(response, MAX_AUTH_RESPONSE_BYTES)
            .await
            .map_err(|e| format!("{url}: {e}"))?;
        match serde_json::from_slice(&body) {
            Ok(Value::Object(object)) => Ok(Some(object)),
            Ok(_) => Err(format!("{url}: not a JSON object")),
            Err(e) => Err(format!("{url}: not JSON: {e}")),
        }
    }

    /// Reads the protected resource metadata the 401's `www_authenticate` points to (or the
    /// well-known locations) and checks that it describes this server.
    pub(crate) async fn discover(&self, www_authenticate: Option<&str>) -> Result<Protected, AuthFailure> {
        let challenge = www_authenticate.and_then(parse_www_authenticate);
        let metadata = |message: String| {
            let mut failure = AuthFailure::new(AuthFailureKind::Metadata, message);
            failure.scope = challenge.as_ref().and_then(|c| c.scope.clone());
            failure
        };
        let candidates: Vec<Url> = match challenge.as_ref().and_then(|c| c.resource_metadata.as_deref()) {
            Some(advertised) => vec![self.server.join(advertised).map_err(|e| {
                metadata(format!(
                    "the server's challenge names resource_metadata {advertised:?}, not a URL: {e}"
                ))
            })?],
            None => {
                let path = self.server.path().trim_end_matches('/');
                let mut urls = Vec::new();
                for suffix in [path, ""] {
                    let mut url = self.server.clone();
                    url.set_path(&format!("/.well-known/oauth-protected-resource{suffix}"));
                    url.set_query(None);
                    url.set_fragment(None);
                    if !urls.contains(&url) {
                        urls.push(url);
                    }
                }
                urls
            }
        };
        let mut found = None;
        let mut tried = Vec::new();
        for url in &candidates {
            match self.get_json(url).await {
                Ok(Some(document)) => {
                    found = Some((url.clone(), document));
                    break;
                }
                Ok(None) => tried.push(format!("{url}: HTTP 404")),
                Err(e) => tried.push(e),
            }
        }
        let Some((metadata_url, document)) = found else {
            return Err(metadata(format!(
                "no protected resource metadata (RFC 9728) could be read: {}",
                tried.join("; ")
            )));
        };
        let resource = document.get("resource").and_then(Value::as_str).ok_or_else(|| {
            metadata(format!(
                "{metadata_url}: the protected resource metadata has no `resource`"
            ))
        })?;
        let mut authorization_servers = strings(document.get("authorization_servers")).unwrap_or_default();
        authorization_servers.retain(|server| !server.is_empty());
        let protected = Protected {
            resource: resource.to_owned(),
            metadata_url: metadata_url.clone(),
            authorization_servers,
            scopes_supported: strings(document.get("scopes_supported")).unwrap_or_default(),
            challenge,
        };
        if let Err(why) = resource_covers(resource, &self.server) {
            return Err(
                AuthFailure::new(AuthFailureKind::ResourceMismatch, format!("{metadata_url}: {why}")).about(&protected),
            );
        }
        Ok(protected)
    }

    /// The metadata of the authorization server `issuer`: RFC 8414 first, then OpenID Connect
    /// discovery (the 2025-11-25 order), its `issuer` checked against `issuer`.
    async fn server_metadata(&self, issuer: &str) -> Result<ServerMetadata, String> {
        let base = Url::parse(issuer).map_err(|e| format!("{issuer:?} is not a URL: {e}"))?;
        if !may_carry_secrets(&base) {
            return Err(format!(
                "{issuer}: an authorization server must be https (or loopback http)"
            ));
        }
        let path = base.path().trim_end_matches('/');
        let at = |path: String| {
            let mut url = base.clone();
            url.set_path(&path);
            url.set_query(None);
            url.set_fragment(None);
            url
        };
        let candidates = if path.is_empty() {
            vec![
                at("/.well-known/oauth-authorization-server".into()),
                at("/.well-known/openid-configuration".into()),
            ]
        } else {
            vec![
                at(format!("/.well-known/oauth-authorization-server{path}")),
                at(format!("/.well-known/openid-configuration{path}")),
                at(format!("{path}/.well-known/openid-configuration")),
            ]
        };
        let mut tried = Vec::new();
        for url in candidates {
            let document = match self.get_json(&url).await {
                Ok(Some(document)) => document,
                Ok(None) => {
                    tried.push(format!("{url}: HTTP 404"));
                    continue;
                }
                Err(e) => {
                    tried.push(e);
                    continue;
                }
            };
            let published = document.get("issuer").and_then(Value::as_str).unwrap_or("");
            if published.trim_end_matches('/') != issuer.trim_end_matches('/') {
                return Err(format!(
                    "{url}: the metadata's issuer {published:?} is not {issuer:?} (RFC 8414 3.3): not used"
                ));
            }
            let endpoint = document
                .get("token_endpoint")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("{url}: no token_endpoint"))?;
            let token_endpoint = base
                .join(endpoint)
                .map_err(|e| format!("{url}: token_endpoint {endpoint:?} is not a URL: {e}"))?;
            return Ok(ServerMetadata {
                issuer: published.to_owned(),
                token_endpoint,
                grant_types: strings(document.get("grant_types_supported")),
                auth_methods: strings(document.get("token_endpoint_auth_methods_supported")),
                signing_algs: strings(document.get("token_endpoint_auth_signing_alg_values_supported")),
            });
        }
        Err(format!("no authorization server metadata: {}", tried.join("; ")))
    }

    /// Runs the grant of `auth` with the first authorization server whose metadata loads and
    /// returns the access token.
    pub(crate) async fn obtain_token(&self, auth: &ClientAuth, protected: &Protected) -> Result<Secret, AuthFailure> {
        let fail = |kind, message: String| AuthFailure::new(kind, message).about(protected);
        if protected.authorization_servers.is_empty() {
            return Err(fail(
                AuthFailureKind::Metadata,
                format!(
                    "{}: the protected resource metadata lists no authorization_servers",
                    protected.metadata_url
                ),
            ));
        }
        if !may_carry_secrets(&self.server) {
            return Err(fail(
                AuthFailureKind::Unsupported,
                format!(
                    "{}: a token is only sent over https (or plain http to a loopback address)",
                    self.server
                ),
            ));
        }
        let mut problems = Vec::new();
        let mut chosen = None;
        for issuer in &protected.authorization_servers {
            match self.server_metadata(issuer).await {
                Ok(metadata) => {
                    chosen = Some(metadata);
                    break;
                }
                Err(e) => problems.push(e),
            }
        }
        let Some(metadata) = chosen else {
            return Err(fail(
                AuthFailureKind::Metadata,
                format!(
                    "no authorization server metadata could be used: {}",
                    problems.join("; ")
                ),
            ));
        };
        if !may_carry_secrets(&metadata.token_endpoint) {
            return Err(fail(
                AuthFailureKind::Unsupported,
                format!(
                    "the token endpoint {} is neither https nor loopback: credentials are not sent there",
                    metadata.token_endpoint
                ),
            ));
        }
        let grant = auth.grant_type();
        if let Some(grants) = &metadata.grant_types {
            if !grants.iter().any(|g| g == grant) {
                return Err(fail(
                    AuthFailureKind::Unsupported,
                    format!(
                        "the authorization server {} does not offer the {grant} grant (grant_types_supported: {}); \
                         this client runs no interactive (browser) authorization",
                        metadata.issuer,
                        grants.join(", ")
                    ),
                ));
            }
        }
        let scope = auth
            .scope()
            .map(str::to_owned)
            .or_else(|| protected.challenge.as_ref().and_then(|c| c.scope.clone()))
            .or_else(|| (!protected.scopes_supported.is_empty()).then(|| protected.scopes_supported.join(" ")));
        let mut form: Vec<(&str, String)> = vec![("grant_type", grant.to_owned())];
        form.push(("resource", protected.resource.clone()));
        if let Some(scope) = &scope {
            form.push(("scope", scope.clone()));
        }
        let methods = metadata.auth_methods.clone();
        let offers = |method: &str| methods.as_ref().is_none_or(|m| m.iter().any(|x| x == method));
        let mut basic = None;
        match auth {
            ClientAuth::ClientCredentials {
                client_id,
                client_secret,
                ..
            } => {
                let listed = |method: &str| methods.as_ref().is_some_and(|m| m.iter().any(|x| x == method));
                // RFC 8414 2: an absent list means client_secret_basic.
                if methods.is_none() || listed("client_secret_basic") {
                    basic = Some((client_id.clone(), client_secret.clone()));
                } else if listed("client_secret_post") {
                    form.push(("client_id", client_id.clone()));
                    form.push(("client_secret", client_secret.expose().to_owned()));
                } else {
                    return Err(fail(
                        AuthFailureKind::Unsupported,
                        format!(
                            "the authorization server {} authenticates clients by {}, not by a client secret \
                             (client_secret_basic, client_secret_post)",
                            metadata.issuer,
                            methods.unwrap_or_default().join(", ")
                        ),
                    ));
                }
            }
            ClientAuth::JwtAssertion {
                client_id,
                private_key_pem,
                alg,
                ..
            } => {
                if !offers("private_key_jwt") {
                    return Err(fail(
                        AuthFailureKind::Unsupported,
                        format!(
                            "the authorization server {} does not accept private_key_jwt (it accepts {})",
                            metadata.issuer,
                            methods.unwrap_or_default().join(", ")
                        ),
                    ));
                }
                let key = SigningKey::from_pem(private_key_pem.expose(), *alg)
                    .map_err(|e| fail(AuthFailureKind::Unsupported, e))?;
                if let Some(algs) = &metadata.signing_algs {
                    if !algs.iter().any(|a| a == key.alg.name()) {
                        return Err(fail(
                            AuthFailureKind::Unsupported,
                            format!(
                                "the authorization server {} accepts assertions signed with {}, not {}",
                                metadata.issuer,
                                algs.join(", "),
                                key.alg.name()
                            ),
                        ));
                    }
                }
                let assertion = key
                    .client_assertion(client_id, &metadata.issuer)
                    .map_err(|e| fail(AuthFailureKind::Unsupported, e))?;
                form.push(("client_id", client_id.clone()));
                form.push(("client_assertion_type", JWT_ASSERTION_TYPE.to_owned()));
                form.push(("client_assertion", assertion));
            }
            ClientAuth::JwtBearer {
                assertion, client_id, ..
            } => {
                form.push(("assertion", assertion.expose().to_owned()));
                if let Some(client_id) = client_id {
                    form.push(("client_id", client_id.clone()));
                }
            }
            ClientAuth::None | ClientAuth::Bearer(_) => {
                return Err(fail(AuthFailureKind::CredentialsNeeded, "no grant configured".into()));
            }
        }
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form.iter().map(|(k, v)| (*k, v.as_str())))
            .finish();
        let mut request = self
            .token_http
            .post(metadata.token_endpoint.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(reqwest::header::ACCEPT, "application/json")
            .body(body);
        if let Some((id, secret)) = basic {
            // RFC 6749 2.3.1: each form-encoded, then joined by `:`.
            let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            let pair = format!("{}:{}", encode(&id), encode(secret.expose()));
            let value = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair));
            request = request.header(reqwest::header::AUTHORIZATION, value);
        }
        let endpoint = &metadata.token_endpoint;
        let response = request.send().await.map_err(|e| {
            fail(
                AuthFailureKind::TokenRequest,
                format!("token request to {endpoint}: {}", describe_http_error(&e)),
            )
        })?;
        let status = response.status();
        let answer = read_bounded(response, MAX_AUTH_RESPONSE_BYTES).await.map_err(|e| {
            fail(
                AuthFailureKind::TokenRequest,
                format!("token request to {endpoint}: {e}"),
            )
        })?;
        let json: Option<Map<String, Value>> = match serde_json::from_slice(&answer) {
            Ok(Value::Object(object)) => Some(object),
            _ => None,
        };
        if !status.is_success() {
            let error = json
                .as_ref()
                .and_then(|j| j.get("error"))
                .and_then(Value::as_str)
                .map(excerpt);
            let description = json
                .as_ref()
                .and_then(|j| j.get("error_description"))
                .and_then(Value::as_str)
                .map(|d| format!(": {}", excerpt(d)))
                .unwrap_or_default();
            return Err(fail(
                AuthFailureKind::TokenRequest,
                format!(
                    "the authorization server {} refused the token request (HTTP {status}, {}{description})",
                    metadata.issuer,
                    error.as_deref().unwrap_or("no OAuth error")
                ),
            ));
        }
        let json = json.ok_or_else(|| {
            fail(
                AuthFailureKind::TokenRequest,
                format!("token request to {endpoint}: the answer is not a JSON object"),
            )
        })?;
        let token_type = json.get("token_type").and_then(Value::as_str).unwrap_or("Bearer");
        if !token_type.eq_ignore_ascii_case("bearer") {
            return Err(fail(
                AuthFailureKind::Unsupported,
                format!(
                    "the authorization server {} issued a token of type {:?}; only Bearer tokens are supported",
                    metadata.issuer,
                    excerpt(token_type)
                ),
            ));
        }
        match json.get("access_token").and_then(Value::as_str) {
            Some(token) if !token.is_empty() && token.bytes().all(|b| b.is_ascii_graphic()) => Ok(Secret::new(token)),
            _ => Err(fail(
                AuthFailureKind::TokenRequest,
                format!("token request to {endpoint}: no usable access_token in the answer"),
            )),
        }
    }
}

/// A private key that signs `private_key_jwt` assertions.
struct SigningKey {
    alg: JwtAlgorithm,
    key: KeyPair,
}

enum KeyPair {
    Ecdsa(aws_lc_rs::signature::EcdsaKeyPair),
    Rsa(aws_lc_rs::signature::RsaKeyPair),
    Ed25519(aws_lc_rs::signature::Ed25519KeyPair),
}

/// The DER of the first PEM block of `pem`, with its label.
fn pem_der(pem: &str) -> Result<(String, Vec<u8>), String> {
    let begin = pem
        .find("-----BEGIN ")
        .ok_or("the private key is not PEM (no -----BEGIN line)")?;
    let rest = &pem[begin + "-----BEGIN ".len()..];
    let label_end = rest.find("-----").ok_or("the private key's PEM header is malformed")?;
    let label = rest[..label_end].to_owned();
    let body = &rest[label_end + 5..];
    let end = body
        .find("-----END ")
        .ok_or("the private key's PEM has no -----END line")?;
    let text: String = body[..end].chars().filter(|c| !c.is_whitespace()).collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|_| "the private key's PEM body is not base64".to_owned())?;
    Ok((label, der))
}

impl SigningKey {
    /// Loads a PEM private key, for `alg` or (`None`) the algorithm its type implies.
    fn from_pem(pem: &str, alg: Option<JwtAlgorithm>) -> Result<Self, String> {
        use aws_lc_rs::signature::{
            EcdsaKeyPair, Ed25519KeyPair, RsaKeyPair, ECDSA_P256_SHA256_FIXED_SIGNING, ECDSA_P384_SHA384_FIXED_SIGNING,
        };
        let (label, der) = pem_der(pem)?;
        if label.contains("ENCRYPTED") {
            return Err("the private key is encrypted; give it unencrypted (PKCS#8 PRIVATE KEY)".into());
        }
        let load = |alg: JwtAlgorithm| -> Option<KeyPair> {
            match alg {
                JwtAlgorithm::ES256 => EcdsaKeyPair::from_private_key_der(&ECDSA_P256_SHA256_FIXED_SIGNING, &der)
                    .ok()
                    .map(KeyPair::Ecdsa),
                JwtAlgorithm::ES384 => EcdsaKeyPair::from_private_key_der(&ECDSA_P384_SHA384_FIXED_SIGNING, &der)
                    .ok()
                    .map(KeyPair::Ecdsa),
                JwtAlgorithm::RS256 | JwtAlgorithm::RS384 | JwtAlgorithm::RS512 => RsaKeyPair::from_pkcs8(&der)
                    .or_else(|_| RsaKeyPair::from_der(&der))
                    .ok()
                    .map(KeyPair::Rsa),
                JwtAlgorithm::EdDSA => Ed25519KeyPair::from_pkcs8_maybe_unchecked(&der)
                    .ok()
                    .map(KeyPair::Ed25519),
            }
        };
        match alg {
            Some(alg) => load(alg)
                .map(|key| Self { alg, key })
                .ok_or_else(|| format!("the private key is not a {} key", alg.name())),
            None => [
                JwtAlgorithm::ES256,
                JwtAlgorithm::ES384,
                JwtAlgorithm::RS256,
                JwtAlgorithm::EdDSA,
            ]
            .into_iter()
            .find_map(|alg| load(alg).map(|key| Self { alg, key }))
            .ok_or_else(|| "the private key is not an EC (P-256, P-384), RSA or Ed25519 private key".to_owned()),
        }
    }

    /// A signed JWT.
    fn sign_jwt(&self, claims: &Value) -> Result<String, String> {
        use aws_lc_rs::signature::{RSA_PKCS1_SHA256, RSA_PKCS1_SHA384, RSA_PKCS1_SHA512};
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let header = serde_json::json!({"alg": self.alg.name(), "typ": "JWT"});
        let input = format!("{}.{}", b64.encode(header.to_string()), b64.encode(claims.to_string()));
        let rng = aws_lc_rs::rand::SystemRandom::new();
        let signature = match &self.key {
            KeyPair::Ecdsa(key) => key
                .sign(&rng, input.as_bytes())
                .map_err(|_| "signing the assertion failed".to_owned())?
                .as_ref()
                .to_vec(),
            KeyPair::Rsa(key) => {
                let padding = match self.alg {
                    JwtAlgorithm::RS384 => &RSA_PKCS1_SHA384,
                    JwtAlgorithm::RS512 => &RSA_PKCS1_SHA512,
                    _ => &RSA_PKCS1_SHA256,
                };
                let mut signature = vec![0; key.public_modulus_len()];
                key.sign(padding, &rng, input.as_bytes(), &mut signature)
                    .map_err(|_| "signing the assertion failed".to_owned())?;
                signature
            }
            KeyPair::Ed25519(key) => key.sign(input.as_bytes()).as_ref().to_vec(),
        };
        Ok(format!("{input}.{}", b64.encode(signature)))
    }

    /// The `private_key_jwt` client assertion for `audience` (RFC 7523 3): `iss` and `sub`
    /// the client id, valid for five minutes, a random `jti`.
    fn client_assertion(&self, client_id: &str, audience: &str) -> Result<String, String> {
        use aws_lc_rs::rand::SecureRandom;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_err(|_| "the system clock is before 1970".to_owned())?
            .as_secs();
        let mut nonce = [0u8; 16];
        aws_lc_rs::rand::SystemRandom::new()
            .fill(&mut nonce)
            .map_err(|_| "no randomness for the assertion's jti".to_owned())?;
        let jti: String = nonce.iter().map(|b| format!("{b:02x}")).collect();
        self.sign_jwt(&serde_json::json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME_SECS,
            "jti": jti,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_challenges_are_read_among_others() {
        let header = r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="files:read files:write""#;
        let challenge = parse_www_authenticate(header).unwrap();
        assert_eq!(
            challenge.resource_metadata.as_deref(),
            Some("https://mcp.example.com/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(challenge.scope.as_deref(), Some("files:read files:write"));
        assert_eq!(challenge.error, None);

        // Several challenges, case-insensitive names, token values, escapes, odd spacing.
        let header = r#"Basic realm="x", DPoP algs="ES256", bearer Error=invalid_token, error_description="say \"hi\", then go" ,RESOURCE_METADATA = "/prm""#;
        let challenge = parse_www_authenticate(header).unwrap();
        assert_eq!(challenge.error.as_deref(), Some("invalid_token"));
        assert_eq!(challenge.error_description.as_deref(), Some(r#"say "hi", then go"#));
        assert_eq!(challenge.resource_metadata.as_deref(), Some("/prm"));
        assert_eq!(challenge.scope, None);

        // A realm only, a bare scheme, no Bearer, garbage.
        assert_eq!(
            parse_www_authenticate(r#"Bearer realm="mcp""#),
            Some(BearerChallenge::default())
        );
        assert_eq!(parse_www_authenticate("Bearer"), Some(BearerChallenge::default()));
        assert_eq!(parse_www_authenticate(r#"Basic realm="x""#), None);
        assert_eq!(parse_www_authenticate(""), None);
        assert_eq!(
            parse_www_authenticate(r#"Bearer scope="unterminated"#)
                .unwrap()
                .scope
                .as_deref(),
            Some("unterminated")
        );
        assert!(parse_www_authenticate("=\u{1}, ,\"").is_none());
    }

    #[test]
    fn the_resource_must_cover_the_server() {
        let server = Url::parse("https://mcp.example.com/mcp").unwrap();
        for ok in [
            "https://mcp.example.com/mcp",
            "https://mcp.example.com/mcp/",
            "https://MCP.example.com:443/mcp",
            "https://mcp.example.com/",
            "https://mcp.example.com",
        ] {
            assert!(resource_covers(ok, &server).is_ok(), "{ok}");
        }
        for refused in [
            "https://evil.example.com/mcp",
            "http://mcp.example.com/mcp",
            "https://mcp.example.com:8443/mcp",
            "https://mcp.example.com/mc",
            "https://mcp.example.com/mcp/other",
            "https://mcp.example.com/other",
            "https://mcp.example.com/mcp#x",
            "not a url",
        ] {
            assert!(resource_covers(refused, &server).is_err(), "{refused}");
        }
        let why = resource_covers("https://evil.example.com/mcp", &server).unwrap_err();
        assert!(why.contains("evil.example.com") && why.contains("no token"), "{why}");
    }

    #[test]
    fn secrets_only_travel_over_https_or_loopback() {
        for ok in [
            "https://a.example/",
            "http://127.0.0.1:80/",
            "http://localhost:9/x",
            "http://[::1]:1/",
        ] {
            assert!(may_carry_secrets(&Url::parse(ok).unwrap()), "{ok}");
        }
        for refused in ["http://a.example/", "http://10.0.0.1/", "ftp://localhost/"] {
            assert!(!may_carry_secrets(&Url::parse(refused).unwrap()), "{refused}");
        }
    }

    #[test]
    fn secrets_are_redacted_in_debug_output() {
        let auth = ClientAuth::ClientCredentials {
            client_id: "id".into(),
            client_secret: Secret::new("hunter2"),
            scope: None,
        };
        let shown = format!("{auth:?} {:?}", ClientAuth::Bearer("tok3n".into()));
        assert!(!shown.contains("hunter2") && !shown.contains("tok3n"), "{shown}");
        assert!(shown.contains("<redacted>") && shown.contains("id"), "{shown}");
    }

    #[test]
    fn assertions_are_signed_with_the_key_given() {
        use aws_lc_rs::signature::{
            EcdsaKeyPair, KeyPair as _, UnparsedPublicKey, ECDSA_P256_SHA256_FIXED, ECDSA_P256_SHA256_FIXED_SIGNING,
        };
        let rng = aws_lc_rs::rand::SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pem = format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            base64::engine::general_purpose::STANDARD.encode(pkcs8.as_ref())
        );
        let key = SigningKey::from_pem(&pem, None).unwrap();
        assert_eq!(key.alg, JwtAlgorithm::ES256);
        let jwt = key.client_assertion("client-1", "https://as.example").unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let claims: Value = serde_json::from_slice(&b64.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(claims["iss"], "client-1");
        assert_eq!(claims["sub"], "client-1");
        assert_eq!(claims["aud"], "https://as.example");
        let header: Value = serde_json::from_slice(&b64.decode(parts[0]).unwrap()).unwrap();
        assert_eq!(header["alg"], "ES256");
        let public = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref()).unwrap();
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, public.public_key().as_ref())
            .verify(
                format!("{}.{}", parts[0], parts[1]).as_bytes(),
                &b64.decode(parts[2]).unwrap(),
            )
            .expect("the signature verifies");
        assert!(SigningKey::from_pem(&pem, Some(JwtAlgorithm::RS256)).is_err());
        assert!(SigningKey::from_pem("not pem", None).is_err());
    }
}
