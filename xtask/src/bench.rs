//! `cargo xtask bench`: runs the criterion benchmarks (`cargo bench`) in several rounds, then
//! prints, for each group, the toolkit's median beside its baseline's (each measured in the same
//! run as the other), the median of the rounds' ratios and the target; and times
//! `cargo xtask regen --check` on the warm build.
//!
//! With `--schemastore DIR` (or `$PILOTAGE_SCHEMASTORE`), a snapshot of SchemaStore's catalogue
//! (its `*.json` files, as `https://json.schemastore.org/` serves them), it also times the
//! generated validators against jsonschema on real schemas: `cargo xtask agree DIR --base
//! https://json.schemastore.org/ --sample K --bench` (K = `--sample`, 120 by default: spread
//! over the catalogue; a release build of every one takes hours here), the row
//! `schemastore/is_valid`, its report in `target/agree-bench.md`. Without a snapshot the row says
//! it was not measured, and counts as a missed target.

use std::path::Path;
use std::process::{Command, ExitCode};
use std::time::Instant;

/// (group, target): ratio targets (`Ratio`), absolute targets in ns (`Nanos`), or none.
enum Target {
    Ratio(f64),
    Nanos(f64),
    Report,
}

const GROUPS: &[(&str, Target)] = &[
    // #33's goal (0.33 before).
    ("is_valid/execute_9_4", Target::Ratio(0.15)),
    ("is_valid/trace_100", Target::Ratio(0.33)),
    ("validate/execute_9_4", Target::Report),
    ("validate/trace_100", Target::Report),
    ("validate_invalid/execute_9_4", Target::Ratio(0.5)),
    ("validate_invalid/trace_100", Target::Ratio(0.5)),
    ("first_call/execute_9_4", Target::Report),
    // #33's goals for validation fused into parsing (1.3 and 2.0 before): from bytes the
    // toolkit checks each value as serde reads it (the stream program); from a `Value`
    // it runs the generated check, then serde.
    ("parse/execute_9_4_value", Target::Ratio(1.05)),
    ("parse/execute_9_4_bytes", Target::Ratio(1.2)),
    ("parse/trace_100_bytes", Target::Ratio(1.2)),
    ("tool_definition/run_workflow", Target::Nanos(50.0)),
    ("tools_list/six_tools", Target::Report),
    ("codegen/pilotage_schema", Target::Report),
    // The server framework's in-process cost per call (benches/server.rs): Engine::call
    // against the least a hand-written engine does for the same answer.
    ("server/manifest", Target::Report),
    ("server/guide_fetch", Target::Report),
    ("server/catalog_page", Target::Report),
    ("server/validate_dispatch", Target::Report),
    ("server/execute_dispatch", Target::Report),
    // A call with a verified JWT (keys cached) against one without authorization.
    ("server/jwt_call", Target::Report),
    // The official JSON-Schema-Test-Suite (tests/json-schema-suite/benches/suite.rs): every
    // test of every group both sides build, generated validators against jsonschema (with its
    // `idna` feature); #33's goals.
    ("suite/is_valid", Target::Ratio(0.5)),
    ("suite/is_valid_formats", Target::Ratio(1.0)),
    ("suite/is_valid_required", Target::Ratio(0.3)),
];

/// Where cargo puts build output, as cargo itself reports it (`cargo metadata`, run with
/// `cargo_target_dir` as its `CARGO_TARGET_DIR`: so the variable, `build.target-dir` and
/// `.cargo/config.toml` are all honoured); criterion writes its results under it. Falls back to
/// `cargo_target_dir` (relative to the workspace), then `<workspace>/target`.
pub fn target_dir(root: &Path, cargo_target_dir: Option<&std::ffi::OsStr>) -> std::path::PathBuf {
    let mut metadata = Command::new(env!("CARGO"));
    metadata
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root);
    match cargo_target_dir {
        Some(dir) => metadata.env("CARGO_TARGET_DIR", dir),
        None => metadata.env_remove("CARGO_TARGET_DIR"),
    };
    let reported = metadata
        .output()
        .ok()
        .filter(|output| output.status.success())
        .and_then(|output| serde_json::from_slice::<serde_json::Value>(&output.stdout).ok())
        .and_then(|metadata| metadata["target_directory"].as_str().map(std::path::PathBuf::from));
    match (reported, cargo_target_dir) {
        (Some(dir), _) => dir,
        (None, Some(dir)) if !dir.is_empty() => root.join(dir),
        _ => root.join("target"),
    }
}

fn median_ns(target: &Path, group: &str, function: &str) -> Option<f64> {
    let path = target
        .join("criterion")
        .join(group.replace('/', "_")) // criterion makes `/` in a group name `_`
        .join(function)
        .join("new/estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let estimates: serde_json::Value = serde_json::from_str(&text).ok()?;
    estimates["median"]["point_estimate"].as_f64()
}

fn show(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.1} ns")
    }
}

/// Rounds of measurement by default: on a shared machine one criterion run of a group can be
/// off by 2x, so each ratio is judged by its median over rounds.
const DEFAULT_ROUNDS: usize = 3;

/// The (toolkit, baseline) medians of every group, as the last criterion run left them.
fn read_round(target: &Path) -> Vec<Option<(f64, f64)>> {
    GROUPS
        .iter()
        .map(|(group, _)| median_ns(target, group, "toolkit").zip(median_ns(target, group, "baseline")))
        .collect()
}

/// The median of `values` (not empty).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// `cargo xtask bench [--rounds N] [--summary-only]`: runs the benchmarks N times (default 3;
/// criterion's measurement shortened to 2 s a function), then prints, for each group, the
/// toolkit's and the baseline's medians and the median of the rounds' ratios, against the
/// target. `--summary-only` prints the last run's results without measuring.
pub fn main(args: &[String]) -> ExitCode {
    let root = crate::codegen::workspace_root();
    let target = target_dir(&root, std::env::var_os("CARGO_TARGET_DIR").as_deref());
    let summary_only = args.iter().any(|a| a == "--summary-only");
    let rounds = match args.iter().position(|a| a == "--rounds").map(|i| args.get(i + 1)) {
        None => DEFAULT_ROUNDS,
        Some(Some(n)) => match n.parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => {
                eprintln!("error: --rounds takes a positive number, not {n:?}");
                return ExitCode::from(2);
            }
        },
        Some(None) => {
            eprintln!("error: --rounds takes a positive number");
            return ExitCode::from(2);
        }
    };
    let schemastore = match args.iter().position(|a| a == "--schemastore") {
        Some(i) => match args.get(i + 1) {
            Some(dir) => Some(std::path::PathBuf::from(dir)),
            None => {
                eprintln!("error: --schemastore takes a folder (a SchemaStore snapshot)");
                return ExitCode::from(2);
            }
        },
        None => std::env::var_os("PILOTAGE_SCHEMASTORE").map(std::path::PathBuf::from),
    };
    let sample = match args.iter().position(|a| a == "--sample").map(|i| args.get(i + 1)) {
        None => 120,
        Some(Some(n)) if n.parse::<usize>().is_ok_and(|n| n > 0) => n.parse().unwrap_or(120),
        Some(_) => {
            eprintln!("error: --sample takes a positive number");
            return ExitCode::from(2);
        }
    };
    let mut measured: Vec<Vec<Option<(f64, f64)>>> = Vec::new();
    if summary_only {
        measured.push(read_round(&target));
    } else {
        for round in 1..=rounds {
            eprintln!("bench: round {round} of {rounds}");
            let status = Command::new(env!("CARGO"))
                .args([
                    "bench",
                    "-p",
                    "pilotage-types",
                    "-p",
                    "pilotage-server",
                    "-p",
                    "pilotage-codegen",
                    "-p",
                    "pilotage-json-schema-suite",
                    "--bench",
                    "toolkit",
                    "--bench",
                    "codegen",
                    "--bench",
                    "server",
                    "--bench",
                    "auth",
                    "--features",
                    "pilotage-server/oauth",
                    "--bench",
                    "suite",
                    "--",
                ])
                .args(["--warm-up-time", "1", "--measurement-time", "2", "--noplot"])
                .current_dir(&root)
                .status();
            if !status.is_ok_and(|s| s.success()) {
                eprintln!("error: cargo bench failed");
                return ExitCode::from(1);
            }
            measured.push(read_round(&target));
        }
    }
    let mut failed = 0;
    println!("\ncriterion results: {}", target.join("criterion").display());
    println!(
        "{:<32} {:>12} {:>12} {:>8}  {:<24} rounds' ratios",
        "group", "toolkit", "baseline", "ratio", "target"
    );
    for (index, (group, target_of)) in GROUPS.iter().enumerate() {
        let rounds: Vec<(f64, f64)> = measured.iter().filter_map(|round| round[index]).collect();
        if rounds.is_empty() {
            println!("{group:<32} (no measurement: run `cargo xtask bench`)");
            failed += 1;
            continue;
        }
        let toolkit = median(&mut rounds.iter().map(|r| r.0).collect::<Vec<_>>());
        let baseline = median(&mut rounds.iter().map(|r| r.1).collect::<Vec<_>>());
        let ratios: Vec<f64> = rounds.iter().map(|(t, b)| t / b).collect();
        let ratio = median(&mut ratios.clone());
        let verdict = match target_of {
            Target::Ratio(limit) => format!("<= {limit} {}", if ratio <= *limit { "ok" } else { "MISSED" }),
            Target::Nanos(limit) => format!("< {limit} ns {}", if toolkit < *limit { "ok" } else { "MISSED" }),
            Target::Report => "(reported)".to_owned(),
        };
        failed += usize::from(verdict.ends_with("MISSED"));
        let each: Vec<String> = ratios.iter().map(|r| format!("{r:.3}")).collect();
        println!(
            "{group:<32} {:>12} {:>12} {ratio:>8.3}  {verdict:<24} {}",
            show(toolkit),
            show(baseline),
            each.join(" ")
        );
    }
    // Real schemas: SchemaStore, through `cargo xtask agree --bench` (one run, its own rounds).
    let row = "schemastore/is_valid";
    match (&schemastore, summary_only) {
        (_, true) => println!("{row:<32} (not measured with --summary-only)"),
        (None, false) => {
            println!(
                "{row:<32} NOT MEASURED: give a SchemaStore snapshot (--schemastore DIR or $PILOTAGE_SCHEMASTORE)"
            );
            failed += 1;
        }
        (Some(dir), false) => {
            let report = target.join("agree-bench.md");
            eprintln!("bench: SchemaStore, {sample} schemas of {}", dir.display());
            match crate::agree::speed(dir, "https://json.schemastore.org/", sample, &report) {
                Ok(Some(figures)) => {
                    let ratio = figures.ratio();
                    let verdict = if ratio <= 0.5 { "ok" } else { "MISSED" };
                    failed += usize::from(ratio > 0.5);
                    println!(
                        "{row:<32} {:>12} {:>12} {ratio:>8.3}  {:<24} {} schemas, {} instances; {}",
                        show(figures.ours_ns),
                        show(figures.theirs_ns),
                        format!("<= 0.5 {verdict}"),
                        figures.schemas,
                        figures.instances,
                        report.display()
                    );
                }
                Ok(None) => {
                    println!("{row:<32} NOT MEASURED: no schema of {} could be timed", dir.display());
                    failed += 1;
                }
                Err(error) => {
                    println!("{row:<32} NOT MEASURED: {error}");
                    failed += 1;
                }
            }
        }
    }
    // regen --check on the warm build: this binary, five runs, the median.
    let exe = std::env::current_exe().expect("the xtask binary");
    let mut times: Vec<f64> = (0..5)
        .map(|_| {
            let start = Instant::now();
            let ok = Command::new(&exe)
                .args(["regen", "--check"])
                .current_dir(&root)
                .output()
                .is_ok_and(|o| o.status.success());
            if !ok {
                failed += 1;
            }
            start.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let median = times[2];
    let verdict = if median < 1.0 { "ok" } else { "MISSED" };
    failed += usize::from(median >= 1.0);
    println!(
        "{:<32} {:>12} {:>12} {:>8}  < 1 s {verdict}",
        "regen --check (wall, warm)",
        format!("{:.0} ms", median * 1e3),
        "",
        ""
    );
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        println!("{failed} target(s) missed or not measured");
        ExitCode::from(1)
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;

    use super::target_dir;

    #[test]
    fn the_results_are_read_where_cargo_target_dir_puts_them() {
        let root = crate::codegen::workspace_root();
        let elsewhere = std::env::temp_dir().join("pilotage-bench-target");
        assert_eq!(target_dir(&root, Some(elsewhere.as_os_str())), elsewhere);
        assert_eq!(
            target_dir(&root, Some(OsStr::new("relative-target"))),
            root.join("relative-target")
        );
        assert_eq!(target_dir(&root, None), root.join("target"));
    }
}
