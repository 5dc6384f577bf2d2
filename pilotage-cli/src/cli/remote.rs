//! What the commands that talk to a server share: the target (`--url URL` or `-- CMD
//! [ARGS...]`), the timeout, the revision, the authorization (a bearer token, or OAuth client
//! credentials for a server that answers 401), connecting with a progress line on stderr while
//! a slow server has not answered, and the async runtime.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use pilotage_client::{
    AuthFailureKind, ClientAuth, ClientError, ClientOptions, JwtAlgorithm, PilotageClient, Revision, Secret, Target,
};

/// The environment variable read for a bearer token when neither `--bearer-token` nor
/// `--bearer-token-file` is given.
pub const BEARER_TOKEN_ENV: &str = "PILOTAGE_BEARER_TOKEN";
/// The environment variable read for the client secret when `--client-secret` is not given.
pub const CLIENT_SECRET_ENV: &str = "PILOTAGE_CLIENT_SECRET";

/// The server to talk to and how.
#[derive(Debug, Clone, clap::Args)]
pub struct ServerArgs {
    /// A streamable HTTP endpoint, e.g. http://127.0.0.1:8080/mcp.
    #[arg(
        long,
        value_name = "URL",
        conflicts_with = "command",
        required_unless_present = "command"
    )]
    pub url: Option<String>,
    /// The longest any one step may take (connecting, one request), in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub timeout: f64,
    /// Speak the stateless MCP revision 2026-07-28 (server/discover, capabilities in every
    /// request) instead of the initialize handshake.
    #[arg(long)]
    pub stateless: bool,
    /// The largest answer accepted from the server, in bytes (a suffix K, M or G counts
    /// KiB, MiB, GiB); a larger one is refused with an error naming this limit.
    #[arg(long, value_name = "BYTES", default_value = "128M", value_parser = parse_bytes)]
    pub max_result_bytes: usize,
    /// A bearer token for the server (--url). Prefer the environment variable
    /// PILOTAGE_BEARER_TOKEN or --bearer-token-file: a command line is visible to other users.
    #[arg(long, value_name = "TOKEN", help_heading = "Authorization (--url)")]
    pub bearer_token: Option<String>,
    /// A file holding the bearer token.
    #[arg(
        long,
        value_name = "PATH",
        conflicts_with = "bearer_token",
        help_heading = "Authorization (--url)"
    )]
    pub bearer_token_file: Option<PathBuf>,
    /// The OAuth client id, for the client_credentials grant run when the server answers 401
    /// (with --client-secret or --client-assertion-key), or sent with --assertion-file.
    #[arg(long, value_name = "ID", help_heading = "Authorization (--url)")]
    pub client_id: Option<String>,
    /// The client secret (client_secret_basic, or client_secret_post where only that is
    /// offered). Prefer the environment variable PILOTAGE_CLIENT_SECRET.
    #[arg(long, value_name = "SECRET", help_heading = "Authorization (--url)")]
    pub client_secret: Option<String>,
    /// A PEM private key: the client authenticates with a JWT it signs (private_key_jwt, RFC 7523).
    #[arg(
        long,
        value_name = "PATH",
        conflicts_with = "client_secret",
        help_heading = "Authorization (--url)"
    )]
    pub client_assertion_key: Option<PathBuf>,
    /// The algorithm of --client-assertion-key (ES256, ES384, RS256, RS384, RS512, EdDSA);
    /// default: the key's type decides.
    #[arg(long, value_name = "ALG", requires = "client_assertion_key", value_parser = parse_alg, help_heading = "Authorization (--url)")]
    pub client_assertion_alg: Option<JwtAlgorithm>,
    /// A file holding a JWT issued to this workload for the authorization server: exchanged by
    /// the JWT bearer grant (RFC 7523) when the server answers 401.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["client_secret", "client_assertion_key"], help_heading = "Authorization (--url)")]
    pub assertion_file: Option<PathBuf>,
    /// The scope to ask for; default: the one the server's 401 names, else its metadata's
    /// scopes_supported.
    #[arg(long, value_name = "SCOPE", help_heading = "Authorization (--url)")]
    pub scope: Option<String>,
    /// A command that serves MCP over stdio, after `--`.
    #[arg(last = true, value_name = "CMD [ARGS...]")]
    pub command: Vec<String>,
}

fn parse_alg(text: &str) -> Result<JwtAlgorithm, String> {
    text.parse()
}

/// A secret read from a file, its trailing whitespace dropped; the error never shows it.
fn read_secret(path: &Path, what: &str) -> Result<Secret, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{what} {}: cannot read: {e}", path.display()))?;
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(format!("{what} {}: the file is empty", path.display()));
    }
    Ok(Secret::new(trimmed))
}

impl ServerArgs {
    /// The target.
    pub fn target(&self) -> Target {
        match (&self.url, self.command.split_first()) {
            (Some(url), _) => Target::Url(url.clone()),
            (None, Some((program, args))) => Target::Command {
                program: program.clone(),
                args: args.to_vec(),
            },
            (None, None) => Target::Url(String::new()),
        }
    }

    /// The authorization the arguments ask for, reading the environment through `env`
    /// (PILOTAGE_BEARER_TOKEN, PILOTAGE_CLIENT_SECRET) where a flag is absent; or a usage error.
    pub fn auth_with(&self, env: impl Fn(&str) -> Option<String>) -> Result<ClientAuth, String> {
        let env = |name: &str| env(name).filter(|value| !value.trim().is_empty());
        let grant = self.client_id.is_some() || self.assertion_file.is_some();
        let token = match (&self.bearer_token, &self.bearer_token_file) {
            (Some(token), _) => Some(Secret::new(token.trim())),
            (None, Some(path)) => Some(read_secret(path, "--bearer-token-file")?),
            // The variable yields to OAuth flags: they say what this command is to use.
            (None, None) if !grant => env(BEARER_TOKEN_ENV).map(|token| Secret::new(token.trim())),
            (None, None) => None,
        };
        let auth = if let Some(token) = token {
            if grant || self.client_secret.is_some() || self.client_assertion_key.is_some() {
                return Err(
                    "a bearer token and OAuth client credentials (--client-id, --client-secret, \
                            --client-assertion-key, --assertion-file) exclude each other"
                        .into(),
                );
            }
            ClientAuth::Bearer(token)
        } else if let Some(path) = &self.assertion_file {
            ClientAuth::JwtBearer {
                assertion: read_secret(path, "--assertion-file")?,
                client_id: self.client_id.clone(),
                scope: self.scope.clone(),
            }
        } else if let Some(client_id) = &self.client_id {
            if let Some(path) = &self.client_assertion_key {
                ClientAuth::JwtAssertion {
                    client_id: client_id.clone(),
                    private_key_pem: read_secret(path, "--client-assertion-key")?,
                    alg: self.client_assertion_alg,
                    scope: self.scope.clone(),
                }
            } else if let Some(secret) = self.client_secret.clone().or_else(|| env(CLIENT_SECRET_ENV)) {
                ClientAuth::ClientCredentials {
                    client_id: client_id.clone(),
                    client_secret: Secret::new(secret),
                    scope: self.scope.clone(),
                }
            } else {
                return Err(format!(
                    "--client-id needs the client's credentials: --client-secret (or {CLIENT_SECRET_ENV}), \
                     --client-assertion-key PATH or --assertion-file PATH"
                ));
            }
        } else if self.client_secret.is_some() || self.client_assertion_key.is_some() {
            return Err("--client-secret and --client-assertion-key need --client-id".into());
        } else {
            ClientAuth::None
        };
        if self.scope.is_some() && !auth.is_grant() {
            return Err("--scope is for the OAuth grants (--client-id, --assertion-file)".into());
        }
        if auth != ClientAuth::None && self.url.is_none() {
            return Err("authorization applies to a server at --url, not to a command over stdio".into());
        }
        Ok(auth)
    }

    /// The client options, or a usage error.
    pub fn options(&self) -> Result<ClientOptions, String> {
        if !(self.timeout.is_finite() && self.timeout > 0.0 && self.timeout <= 86_400.0) {
            return Err(format!(
                "--timeout {}: expected seconds between 0 and 86400",
                self.timeout
            ));
        }
        Ok(ClientOptions {
            timeout: Duration::from_secs_f64(self.timeout),
            revision: if self.stateless {
                Revision::Stateless
            } else {
                Revision::Handshake
            },
            client_name: "pilotage-cli".to_owned(),
            max_result_bytes: self.max_result_bytes,
            auth: self.auth_with(|name| std::env::var(name).ok())?,
            ..ClientOptions::default()
        })
    }
}

/// The error text of a failed client operation, with what to do about a server that requires
/// authorization: the authorization servers its metadata names, and the flags to use.
pub fn describe(error: &ClientError) -> String {
    let ClientError::Unauthorized { failure, .. } = error else {
        return error.to_string();
    };
    let mut text = error.to_string();
    if let Some(scope) = &failure.scope {
        text.push_str(&format!("\n  the server asks for the scope \"{scope}\""));
    }
    match failure.kind {
        AuthFailureKind::CredentialsNeeded => text.push_str(&format!(
            "\n  give a token: {BEARER_TOKEN_ENV}=TOKEN (or --bearer-token-file PATH),\
             \n  or OAuth client credentials for the client_credentials grant: --client-id ID with \
             {CLIENT_SECRET_ENV}=SECRET (or --client-secret) or --client-assertion-key KEY.pem [--scope SCOPE],\
             \n  or a workload's JWT for the jwt-bearer grant: --assertion-file PATH"
        )),
        AuthFailureKind::TokenRejected => {
            text.push_str("\n  check that the token is current and was issued for this server and scope")
        }
        _ => {}
    }
    text
}

/// A byte count: digits, optionally followed by `K`, `M` or `G` (powers of 1024, an optional
/// `iB` or `B` after them); at least 1 KiB, so that no handshake is refused.
pub fn parse_bytes(text: &str) -> Result<usize, String> {
    let trimmed = text.trim();
    let digits = trimmed.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = trimmed[digits.len()..].to_ascii_uppercase();
    let factor: usize = match unit.as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        _ => return Err(format!("`{text}`: expected bytes, e.g. 1048576, 512K, 64M or 1G")),
    };
    let count: usize = digits
        .parse()
        .map_err(|_| format!("`{text}`: expected bytes, e.g. 1048576, 512K, 64M or 1G"))?;
    let bytes = count
        .checked_mul(factor)
        .ok_or_else(|| format!("`{text}`: too large"))?;
    if bytes < 1024 {
        return Err(format!("`{text}`: at least 1K (1024 bytes)"));
    }
    Ok(bytes)
}

/// Runs `future` on a single-threaded runtime.
pub fn block_on<T>(future: impl std::future::Future<Output = T>) -> Result<T, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    Ok(runtime.block_on(future))
}

/// How long to wait before saying that the server is slow.
const PROGRESS_AFTER: Duration = Duration::from_secs(1);

/// Connects, printing a progress line to `err` when the server takes longer than a second.
pub async fn connect(
    args: &ServerArgs,
    options: ClientOptions,
    err: &mut dyn Write,
) -> Result<PilotageClient, ClientError> {
    let target = args.target();
    let timeout = options.timeout;
    let connecting = PilotageClient::connect(&target, options);
    tokio::pin!(connecting);
    tokio::select! {
        result = &mut connecting => result,
        () = tokio::time::sleep(PROGRESS_AFTER) => {
            let _ = writeln!(err, "pilotage: waiting for {target} to answer (timeout {} s)...", timeout.as_secs_f32());
            connecting.await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{describe, parse_bytes, ServerArgs, BEARER_TOKEN_ENV, CLIENT_SECRET_ENV};
    use clap::Parser;
    use pilotage_client::{ClientAuth, Secret};

    #[derive(Parser)]
    struct Args {
        #[command(flatten)]
        server: ServerArgs,
    }

    fn auth(args: &[&str], env: &[(&str, &str)]) -> Result<ClientAuth, String> {
        let parsed =
            Args::try_parse_from(std::iter::once("pilotage").chain(args.iter().copied())).map_err(|e| e.to_string())?;
        parsed
            .server
            .auth_with(|name| env.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned()))
    }

    #[test]
    fn authorization_flags_and_environment() {
        fn with<'a>(more: &[&'a str]) -> Vec<&'a str> {
            [&["--url", "https://mcp.example/mcp"][..], more].concat()
        }
        let url = with(&[]);
        assert_eq!(auth(&url, &[]), Ok(ClientAuth::None));
        assert_eq!(
            auth(&url, &[(BEARER_TOKEN_ENV, "from-env\n")]),
            Ok(ClientAuth::Bearer(Secret::new("from-env")))
        );
        assert_eq!(
            auth(&with(&["--bearer-token", "flag"]), &[(BEARER_TOKEN_ENV, "env")]),
            Ok(ClientAuth::Bearer(Secret::new("flag"))),
            "the flag wins"
        );
        assert_eq!(
            auth(
                &with(&["--client-id", "ci", "--scope", "a b"]),
                &[(CLIENT_SECRET_ENV, "sec"), (BEARER_TOKEN_ENV, "t")]
            ),
            Ok(ClientAuth::ClientCredentials {
                client_id: "ci".into(),
                client_secret: Secret::new("sec"),
                scope: Some("a b".into())
            }),
            "OAuth flags: the token variable is not used"
        );
        for (args, wanted) in [
            (with(&["--client-id", "ci"]), "--client-secret"),
            (with(&["--client-secret", "hunter2"]), "need --client-id"),
            (with(&["--scope", "s"]), "--scope is for"),
            (
                with(&["--bearer-token", "t", "--client-id", "c", "--client-secret", "s"]),
                "exclude each other",
            ),
            (with(&["--bearer-token-file", "/nonexistent/token"]), "cannot read"),
            (vec!["--bearer-token", "t", "--", "engine"], "--url"),
        ] {
            let error = auth(&args, &[]).unwrap_err();
            assert!(error.contains(wanted), "{args:?}: {error}");
            assert!(!error.contains("hunter"), "{error}");
        }
        let dir = std::env::temp_dir().join(format!("pilotage-auth-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("assertion.jwt");
        std::fs::write(&file, "a.b.c\n").unwrap();
        assert_eq!(
            auth(&with(&["--assertion-file", file.to_str().unwrap()]), &[]),
            Ok(ClientAuth::JwtBearer {
                assertion: Secret::new("a.b.c"),
                client_id: None,
                scope: None
            })
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_unauthorized_error_says_what_to_pass() {
        let error = pilotage_client::ClientError::Unauthorized {
            server: "https://mcp.example/mcp".into(),
            failure: {
                let mut failure = pilotage_client::AuthFailure::new(
                    pilotage_client::AuthFailureKind::CredentialsNeeded,
                    "the server requires authorization",
                );
                failure.authorization_servers = vec!["https://as.example".into()];
                failure
            },
        };
        let text = describe(&error);
        for wanted in [
            "https://as.example",
            BEARER_TOKEN_ENV,
            "--client-id",
            "--client-assertion-key",
        ] {
            assert!(text.contains(wanted), "{wanted}: {text}");
        }
    }

    #[test]
    fn byte_counts_with_binary_suffixes() {
        assert_eq!(parse_bytes("1048576"), Ok(1 << 20));
        assert_eq!(parse_bytes("512K"), Ok(512 << 10));
        assert_eq!(parse_bytes("64M"), Ok(64 << 20));
        assert_eq!(parse_bytes("64MiB"), Ok(64 << 20));
        assert_eq!(parse_bytes("1g"), Ok(1 << 30));
        for bad in ["", "M", "12X", "-5", "100", "99999999999999999999G"] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
    }
}
