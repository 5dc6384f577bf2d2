//! `cargo xtask`: the workspace's automation. Subcommands:
//!
//! - `regen [--check] [--schema PATH]`: write (or compare) every generated file;
//! - `validate [--schema PATH] [--compatible] <DEF> <FILE>...`: validate JSON files against a `$defs` entry;
//! - `lint --tools FILE ...`: check a server surface against Part III (also `pilotage lint`);
//! - `corpus DIR [--compile N] [--report FILE]`: the codegen over a directory of schemas ([`xtask::corpus`]);
//! - `agree DIR [--instances N] [--limit K] [--report FILE]`: the generated validators against
//!   jsonschema on a directory of schemas ([`xtask::agree`]).
//!
//! `validate` and `lint` are `pilotage_cli`'s commands, run in-process (feature `cli`, on by
//! default). That feature links the checked-in generated types, so when they do not compile
//! (after a spec bump) regen still runs without it:
//!
//! ```sh
//! cargo run -p xtask --no-default-features -- regen
//! ```
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
      run the criterion benchmarks and print each ratio against its baseline and target
  cargo xtask soak [--clients N] [--loops N] [--sessions N] [--release] [--quick] [--bin-dir DIR]
      load, isolation, memory and fault traffic against the served reference engine (loopback only),
      and the framework's overhead against a bare rmcp server; exit 1 when a bound is broken
  cargo xtask corpus DIR [--compile N] [--report FILE] [--jobs N] [--timeout S] [--memory MIB] [--no-typify]
      run `pilotage codegen` (and typify alone) over every schema of DIR in limited child processes,
      class each (generated, refused, crashed, timeout, oom), and compile the first N generated modules
  cargo xtask agree DIR [--instances N] [--limit K] [--report FILE] [--filter SUBSTRING] [--batch B]
      generate validators for every schema of DIR, derive instances from each, and compare the
      generated validators' verdicts with jsonschema's; exit 1 on a disagreement
(if the generated types do not compile: cargo run -p xtask --no-default-features -- regen)";

/// Runs `pilotage <command> <args>` in-process, named `cargo xtask` in its usage messages.
/// Relative FILE and --schema paths are the user's: cargo runs xtask in the current directory.
#[cfg(feature = "cli")]
fn pilotage(command: &str, args: &[String]) -> ExitCode {
    let line = ["cargo xtask", command]
        .into_iter()
        .map(str::to_owned)
        .chain(args.iter().cloned());
    let status = pilotage_cli::cli::run(line, &mut std::io::stdout().lock(), &mut std::io::stderr().lock());
    ExitCode::from(status)
}

#[cfg(not(feature = "cli"))]
fn pilotage(command: &str, _args: &[String]) -> ExitCode {
    eprintln!("error: `{command}` needs xtask's `cli` feature (on by default); this build has it off");
    ExitCode::from(2)
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
        "agree" => xtask::agree::main(rest),
        "bench" => xtask::bench::main(rest),
        "corpus" => xtask::corpus::main(rest),
        "corpus-typify" => xtask::corpus::typify_one(rest),
        #[cfg(feature = "cli")]
        "soak" => xtask::soak::main(rest),
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
