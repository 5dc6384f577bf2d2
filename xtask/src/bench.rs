//! `cargo xtask bench`: runs the criterion benchmarks (`cargo bench`), then prints, for each
//! group, the toolkit's median beside its baseline's median from the same run, the ratio and
//! the target; and times `cargo xtask regen --check` on the warm build.

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
    ("is_valid/execute_9_4", Target::Ratio(0.33)),
    ("is_valid/trace_100", Target::Ratio(0.33)),
    ("validate/execute_9_4", Target::Report),
    ("validate/trace_100", Target::Report),
    ("validate_invalid/execute_9_4", Target::Ratio(0.5)),
    ("validate_invalid/trace_100", Target::Ratio(0.5)),
    ("first_call/execute_9_4", Target::Report),
    ("parse/execute_9_4_value", Target::Ratio(1.3)),
    // From bytes the toolkit must build a `Value` to validate; the baseline deserializes the
    // text straight into the struct. The 1.3 is for `parse` (above).
    ("parse/execute_9_4_bytes", Target::Ratio(1.5)),
    ("tool_definition/run_workflow", Target::Nanos(50.0)),
    ("tools_list/six_tools", Target::Report),
    ("codegen/pilotage_schema", Target::Report),
];

/// Where cargo puts build output, as cargo itself reports it (`cargo metadata`: honours
/// `CARGO_TARGET_DIR`, `--config build.target-dir` and `.cargo/config.toml`); criterion writes
/// its results under it. Falls back to `CARGO_TARGET_DIR`, then `<workspace>/target`.
fn target_dir(root: &Path) -> std::path::PathBuf {
    let reported = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root)
        .output()
        .ok()
        .filter(|output| output.status.success())
        .and_then(|output| serde_json::from_slice::<serde_json::Value>(&output.stdout).ok())
        .and_then(|metadata| metadata["target_directory"].as_str().map(std::path::PathBuf::from));
    match (reported, std::env::var_os("CARGO_TARGET_DIR")) {
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

/// `cargo xtask bench [--summary-only]`: runs the benchmarks (unless `--summary-only`), then
/// prints the table.
pub fn main(args: &[String]) -> ExitCode {
    let root = crate::codegen::workspace_root();
    if !args.iter().any(|a| a == "--summary-only") {
        let status = Command::new(env!("CARGO"))
            .args(["bench", "-p", "pilotage-types", "-p", "pilotage-codegen"])
            .current_dir(&root)
            .status();
        if !status.is_ok_and(|s| s.success()) {
            eprintln!("error: cargo bench failed");
            return ExitCode::from(1);
        }
    }
    let mut failed = 0;
    println!(
        "\n{:<32} {:>12} {:>12} {:>8}  target",
        "group", "toolkit", "baseline", "ratio"
    );
    let target = target_dir(&root);
    println!("criterion results: {}", target.join("criterion").display());
    for (group, target_of) in GROUPS {
        let (Some(toolkit), Some(baseline)) = (
            median_ns(&target, group, "toolkit"),
            median_ns(&target, group, "baseline"),
        ) else {
            println!("{group:<32} (no measurement: run `cargo bench`)");
            failed += 1;
            continue;
        };
        let ratio = toolkit / baseline;
        let verdict = match target_of {
            Target::Ratio(limit) => format!("<= {limit} {}", if ratio <= *limit { "ok" } else { "MISSED" }),
            Target::Nanos(limit) => format!("< {limit} ns {}", if toolkit < *limit { "ok" } else { "MISSED" }),
            Target::Report => "(reported)".to_owned(),
        };
        failed += usize::from(verdict.ends_with("MISSED"));
        println!(
            "{group:<32} {:>12} {:>12} {ratio:>8.3}  {verdict}",
            show(toolkit),
            show(baseline)
        );
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
