//! `pilotage`: the toolkit's command line for downstream CI.
//!
//! - `pilotage lint --tools FILE [--manifest FILE] [--initialize FILE] [--stateless] [--format text|json]`
//! - `pilotage validate [--schema PATH] <DEF> <FILE>...`
//!
//! Exit status: 0 success, 1 a failed check, 2 unusable input or usage.

use std::process::ExitCode;

const USAGE: &str = "usage:
  pilotage lint --tools FILE [--manifest FILE] [--initialize FILE] [--stateless] [--format text|json]
      check a Pilotage server surface against Part III of the spec
  pilotage validate [--schema PATH] <DEF> <FILE>...
      validate JSON files against $defs/<DEF> of the Pilotage schema (or of PATH; `.` = its root)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let command: fn(&[String], &mut String, &mut String) -> u8 = match args.first().map(String::as_str) {
        Some("lint") => pilotage_codegen::cli::lint,
        Some("validate") => pilotage_codegen::cli::validate,
        Some("--help" | "-h" | "help") => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Some(other) => {
            eprintln!("error: unknown command `{other}`\n{USAGE}");
            return ExitCode::from(2);
        }
        None => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let (mut out, mut err) = (String::new(), String::new());
    let status = command(&args[1..], &mut out, &mut err);
    print!("{out}");
    eprint!("{err}");
    ExitCode::from(status)
}
