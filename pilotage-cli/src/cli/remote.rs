//! What the commands that talk to a server share: the target (`--url URL` or `-- CMD
//! [ARGS...]`), the timeout, the revision, connecting with a progress line on stderr while a
//! slow server has not answered, and the async runtime.

use std::io::Write;
use std::time::Duration;

use pilotage_client::{ClientError, ClientOptions, PilotageClient, Revision, Target};

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
            max_result_bytes: self.max_result_bytes,
            ..ClientOptions::default()
        })
    }
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
    use super::parse_bytes;

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
