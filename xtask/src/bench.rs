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
    ("validate/execute_9_4", Target::Ratio(1.05)),
    ("validate/trace_100", Target::Ratio(1.05)),
    ("is_valid/execute_9_4", Target::Ratio(1.05)),
    ("is_valid/trace_100", Target::Ratio(1.05)),
    ("parse/execute_9_4_value", Target::Ratio(2.5)),
    ("parse/execute_9_4_bytes", Target::Ratio(2.5)),
    ("tool_definition/run_workflow", Target::Nanos(50.0)),
    ("tools_list/six_tools", Target::Report),
    ("codegen/pilotage_schema", Target::Report),
];

fn median_ns(root: &Path, group: &str, function: &str) -> Option<f64> {
    let path = root
        .join("target/criterion")
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

/// `cargo xtask bench [--no-run-benches]`.
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
    for (group, target) in GROUPS {
        let (Some(toolkit), Some(baseline)) = (median_ns(&root, group, "toolkit"), median_ns(&root, group, "baseline"))
        else {
            println!("{group:<32} (no measurement: run `cargo bench`)");
            failed += 1;
            continue;
        };
        let ratio = toolkit / baseline;
        let verdict = match target {
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
