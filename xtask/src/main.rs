//! `cargo xtask`: the workspace's automation. Subcommands:
//!
//! - `regen [--check] [--schema PATH]`: write (or compare) every generated file;
//! - `validate [--schema PATH] [--compatible] <DEF> <FILE>...`: validate JSON files against a `$defs` entry;
//! - `lint --tools FILE ...`: check a server surface against Part III (also `pilotage lint`).
//!
//! Exit status: 0 success, 1 a failed check or invalid input data, 2 a usage error.

use xtask::codegen;

use std::process::ExitCode;

const USAGE: &str = "usage:
  cargo xtask regen [--check] [--schema PATH]
      write every generated file (with --check: write nothing, exit 1 on drift)
  cargo xtask validate [--schema PATH] [--compatible] <DEF> <FILE>...
      validate JSON files against $defs/<DEF> of the Pilotage schema (or of PATH; `.` = its root)
  cargo xtask lint --tools FILE [--manifest FILE] [--initialize FILE] [--stateless] [--format text|json]
      check a Pilotage server surface against Part III
  cargo xtask bench [--summary-only]
      run the criterion benchmarks and print each ratio against its baseline and target";

/// Runs `pilotage <command> <args>` (the installable binary of pilotage-cli) through
/// cargo, so that this binary never links the generated types: regen must build even when
/// they do not.
fn pilotage(command: &str, args: &[String]) -> ExitCode {
    // The user's current directory is kept, so relative FILE and --schema paths mean what
    // they say; the manifest path finds the workspace from anywhere.
    let manifest = xtask::codegen::workspace_root().join("Cargo.toml");
    let status = std::process::Command::new(env!("CARGO"))
        .args(["run", "--quiet", "--manifest-path"])
        .arg(manifest)
        .args(["--package", "pilotage-cli", "--bin", "pilotage", "--", command])
        .args(args)
        .status();
    match status.map(|s| s.code()) {
        Ok(Some(code)) => ExitCode::from(u8::try_from(code).unwrap_or(2)),
        Ok(None) => ExitCode::from(2),
        Err(e) => {
            eprintln!("error: cannot run the pilotage binary through cargo: {e}");
            ExitCode::from(2)
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = args.split_first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    match command.as_str() {
        "regen" => codegen::main(rest),
        "validate" | "lint" => pilotage(command, rest),
        "bench" => xtask::bench::main(rest),
        "help" | "--help" | "-h" => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        other => {
            eprintln!("error: unknown command `{other}`\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
