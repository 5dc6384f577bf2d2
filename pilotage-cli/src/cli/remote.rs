//! What the commands that talk to a server share: the target (`--url URL` or `-- CMD
//! [ARGS...]`), the timeout, the revision, connecting with a progress line on stderr while a
//! slow server has not answered, and the async runtime.

use std::io::Write;
use std::time::Duration;

use pilotage_types::client::{ClientError, ClientOptions, PilotageClient, Revision, Target};

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
    /// A command that serves MCP over stdio, after `--`.
    #[arg(last = true, value_name = "CMD [ARGS...]")]
    pub command: Vec<String>,
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
            ..ClientOptions::default()
        })
    }
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
