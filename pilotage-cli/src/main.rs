//! `pilotage`: the toolkit's command line for Pilotage servers and their CI.
//!
//! - `pilotage validate [--schema PATH] [--compatible] <DEF> <FILE>...`
//! - `pilotage lint --tools FILE [--manifest FILE] [--initialize FILE] [--stateless] [--format text|json]`
//! - `pilotage discover [--format text|json] [--timeout SECONDS] [--stateless] (--url URL | -- CMD [ARGS...])`
//! - `pilotage call --language L --stage validate|execute|trace [--program FILE] ... (--url URL | -- CMD [ARGS...])`
//! - `pilotage check [--allow-execute] [--program LANG=FILE]... (--url URL | -- CMD [ARGS...])`
//! - `pilotage codegen SCHEMA... [--out FILE|DIR]`
//! - `pilotage new NAME --language ID [--dir PATH] [--path-to-workspace DIR]`
//!
//! `discover`, `call` and `check` authorize with a server at `--url` that requires it: a token
//! (`PILOTAGE_BEARER_TOKEN`, `--bearer-token-file PATH`) or OAuth client credentials
//! (`--client-id ID` with `PILOTAGE_CLIENT_SECRET` or `--client-assertion-key PEM`, `--assertion-file
//! JWT`, `--scope S`).
//!
//! Exit status: 0 success, 1 a failed check, 2 unusable input or usage.

use std::process::ExitCode;

fn main() -> ExitCode {
    let status = pilotage_cli::cli::run(
        std::env::args_os(),
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    ExitCode::from(status)
}
