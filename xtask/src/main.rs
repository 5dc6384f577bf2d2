//! `cargo xtask`: the workspace's automation. Subcommands:
//!
//! - `regen [--check] [--schema PATH]`: write (or compare) every generated file;
//! - `validate [--schema PATH] <DEF> <FILE>...`: validate JSON files against a `$defs` entry;
//! - `lint --tools FILE ...`: check a server surface against Part III (also `pilotage lint`).
//!
//! Exit status: 0 success, 1 a failed check or invalid input data, 2 a usage error.

use xtask::codegen;

use std::process::ExitCode;

const USAGE: &str = "usage:
  cargo xtask regen [--check] [--schema PATH]
      write every generated file (with --check: write nothing, exit 1 on drift)
  cargo xtask validate [--schema PATH] <DEF> <FILE>...
      validate JSON files against $defs/<DEF> of the Pilotage schema (or of PATH; `.` = its root)
  cargo xtask lint --tools FILE [--manifest FILE] [--initialize FILE] [--stateless] [--format text|json]
      check a Pilotage server surface against Part III";

/// Runs a shared command that writes to strings, then prints them.
fn run(command: fn(&[String], &mut String, &mut String) -> u8, args: &[String]) -> ExitCode {
    let (mut out, mut err) = (String::new(), String::new());
    let status = command(args, &mut out, &mut err);
    print!("{out}");
    eprint!("{err}");
    ExitCode::from(status)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = args.split_first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    match command.as_str() {
        "regen" => codegen::main(rest),
        "validate" => run(pilotage_codegen::cli::validate, rest),
        "lint" => run(pilotage_codegen::cli::lint, rest),
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
