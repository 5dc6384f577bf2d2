//! The `pilotage` command line: argument parsing (clap) and one module per subcommand.
//!
//! Each subcommand is a function of its parsed arguments that writes its report to `out`,
//! its complaints about the input to `err`, and returns the exit status: [`SUCCESS`] (0),
//! [`FAILED`] (1: invalid data, error findings) or [`UNUSABLE`] (2: unusable input, or a usage
//! error, clap's own status for those; `--help` and `--version` exit 0). [`run`] parses a
//! whole command line and dispatches; the binary, `cargo xtask` and the tests call it
//! in-process. A new subcommand is a new module with an `Args` struct and a `run` function,
//! and one variant of [`Command`].

pub mod call;
pub mod check;
pub mod codegen;
pub mod discover;
pub mod lint;
pub mod new;
pub mod remote;
pub mod validate;

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;

use clap::{Parser, Subcommand};
use serde_json::Value;

/// Exit status of a command.
pub type Status = u8;

/// The command succeeded: valid data, no error finding.
pub const SUCCESS: Status = 0;
/// A check failed: invalid data, or error findings.
pub const FAILED: Status = 1;
/// The input is unusable (unreadable, not JSON, not the document expected), or the command
/// line is wrong.
pub const UNUSABLE: Status = 2;

/// The toolkit's command line for Pilotage servers and their CI.
#[derive(Debug, Parser)]
#[command(name = "pilotage", version, arg_required_else_help = true)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// `pilotage validate`: validate JSON files against a `$defs` entry.
    #[command(about = "Validate JSON files against $defs/<DEF> of the Pilotage schema (or of --schema PATH)")]
    Validate(validate::Args),
    /// Check a Pilotage server surface against Part III (the MCP binding) of the spec.
    Lint(lint::Args),
    /// Connect to a server as a Pilotage client and print what discovery finds.
    Discover(discover::Args),
    /// Discover, construct one loop request (validate, execute or trace), call, and print the routed result.
    Call(Box<call::Args>),
    /// Check a running server's conformance to Part III: lint its surface, then probe it over MCP.
    Check(Box<check::Args>),
    /// Generate Rust types and validators from your own JSON Schema files.
    Codegen(codegen::Args),
    /// Create a new engine crate on the server framework, serving one Language.
    New(new::Args),
}

impl Command {
    /// Runs the subcommand.
    pub fn run(&self, out: &mut dyn Write, err: &mut dyn Write) -> Status {
        match self {
            Self::Validate(args) => validate::run(args, out, err),
            Self::Lint(args) => lint::run(args, out, err),
            Self::Discover(args) => discover::run(args, out, err),
            Self::Call(args) => call::run(args, out, err),
            Self::Check(args) => check::run(args, out, err),
            Self::Codegen(args) => codegen::run(args, out, err),
            Self::New(args) => new::run(args, out, err),
        }
    }
}

/// Parses the command line `args` (the program name first) and runs its subcommand. A usage
/// error is written to `err` with status 2; help and the version go to `out` with status 0.
pub fn run<I, T>(args: I, out: &mut dyn Write, err: &mut dyn Write) -> Status
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    match Cli::try_parse_from(args) {
        Ok(cli) => cli.command.run(out, err),
        Err(error) => {
            let text = error.render().to_string();
            let _ = if error.use_stderr() {
                err.write_all(text.as_bytes())
            } else {
                out.write_all(text.as_bytes())
            };
            Status::try_from(error.exit_code()).unwrap_or(UNUSABLE)
        }
    }
}

/// Reads and parses a JSON file; the error names the file and says what is wrong.
pub fn read_json(path: &Path) -> Result<Value, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    serde_json::from_slice(&bytes).map_err(|e| {
        if e.to_string().starts_with("recursion limit exceeded") {
            format!(
                "{}: nested deeper than 128 levels, which is not read ({e})",
                path.display()
            )
        } else {
            format!("{}: not JSON: {e}", path.display())
        }
    })
}
