//! `pilotage check [--format text|json|junit] [--allow-execute] [--program LANG=FILE]...
//! [--invalid-program LANG=FILE]... [--failing-program LANG=FILE]... [--input LANG=FILE]...
//! [--stateless] [--timeout SECONDS]
//! [--baseline FILE] (--url URL | -- CMD [ARGS...])`: conformance of a running server, probed
//! over MCP (see [`crate::check`]). Exit 0 without error findings (warnings allowed), 1 with,
//! 2 when it cannot connect, the server is not a Pilotage server, or the usage is wrong.
//!
//! A baseline (`--baseline FILE`: `{"expected_failures": [{"rule": ID, "reason": TEXT}]}`)
//! lists known failures: their findings are still shown but do not fail the command; an entry
//! whose rule now passes is reported as stale.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use pilotage_client::ClientError;
use serde_json::{json, Value};

use super::remote::{block_on, connect, describe, ServerArgs};
use super::{read_json, Status, FAILED, SUCCESS, UNUSABLE};
use crate::check::{check, Report, Settings, Status as RuleStatus};
use crate::lint::{render_text, Severity};

/// How the report is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// Findings grouped by tool, then a line per rule that failed or was skipped, then counts.
    #[default]
    Text,
    /// `{"findings": [...], "results": [...], "stale_baseline": [...]}`.
    Json,
    /// JUnit XML: one test case per rule checked (passed, failed or skipped, with why).
    Junit,
}

/// The arguments of `pilotage check`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// The output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Let probes run programs (only with a --program for the Language).
    #[arg(long)]
    pub allow_execute: bool,
    /// A valid program for Language LANG, as LANG=FILE (repeatable).
    #[arg(long, value_name = "LANG=FILE")]
    pub program: Vec<String>,
    /// An invalid program for Language LANG, as LANG=FILE (repeatable).
    #[arg(long, value_name = "LANG=FILE")]
    pub invalid_program: Vec<String>,
    /// A program of Language LANG whose Run fails, as LANG=FILE (repeatable; run only with
    /// --allow-execute).
    #[arg(long, value_name = "LANG=FILE")]
    pub failing_program: Vec<String>,
    /// The input of Language LANG's runs, as LANG=FILE (repeatable).
    #[arg(long, value_name = "LANG=FILE")]
    pub input: Vec<String>,
    /// Known failures: {"expected_failures": [{"rule": ID, "reason": TEXT}]}.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// The server.
    #[command(flatten)]
    pub server: ServerArgs,
}

fn per_language(pairs: &[String], flag: &str) -> Result<BTreeMap<String, Value>, String> {
    pairs
        .iter()
        .map(|pair| {
            let (language, file) = pair
                .split_once('=')
                .ok_or_else(|| format!("{flag} {pair}: expected LANG=FILE"))?;
            Ok((language.to_owned(), read_json(std::path::Path::new(file))?))
        })
        .collect()
}

/// The baseline's expected failures: rule id → reason.
fn baseline(path: &std::path::Path) -> Result<BTreeMap<String, String>, String> {
    let document = read_json(path)?;
    let entries = document
        .get("expected_failures")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{}: expected {{\"expected_failures\": [...]}}", path.display()))?;
    entries
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            let rule = entry.get("rule").and_then(Value::as_str);
            let reason = entry.get("reason").and_then(Value::as_str);
            match (rule, reason) {
                (Some(rule), Some(reason)) if !reason.trim().is_empty() => Ok((rule.to_owned(), reason.to_owned())),
                _ => Err(format!(
                    "{}: /expected_failures/{i}: each entry needs a \"rule\" and a non-empty \"reason\"",
                    path.display()
                )),
            }
        })
        .collect()
}

fn junit(report: &Report, expected: &BTreeMap<String, String>) -> String {
    use quick_junit::{NonSuccessKind, Report as Junit, TestCase, TestCaseStatus, TestSuite};
    let mut suite = TestSuite::new("pilotage check");
    for result in &report.results {
        let status = match &result.status {
            RuleStatus::Passed => TestCaseStatus::success(),
            RuleStatus::Failed if expected.contains_key(result.rule) => {
                let mut skipped = TestCaseStatus::skipped();
                skipped.set_message(format!("expected failure (baseline): {}", expected[result.rule]));
                skipped
            }
            RuleStatus::Failed => {
                let mut failed = TestCaseStatus::non_success(NonSuccessKind::Failure);
                let messages: Vec<String> = report
                    .findings
                    .iter()
                    .filter(|f| f.rule == result.rule)
                    .map(|f| format!("{}: {}", f.tool.as_deref().unwrap_or("-"), f.message))
                    .collect();
                failed.set_message(messages.join("; "));
                failed.set_type(citation(result.section));
                failed
            }
            RuleStatus::Skipped { reason } => {
                let mut skipped = TestCaseStatus::skipped();
                skipped.set_message(reason.clone());
                skipped
            }
        };
        let mut case = TestCase::new(result.rule, status);
        case.set_classname(citation(result.section));
        suite.add_test_case(case);
    }
    let mut junit = Junit::new("pilotage");
    junit.add_test_suite(suite);
    junit.to_string().unwrap_or_default()
}

/// Runs `pilotage check`.
pub fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> Status {
    let prepared = (|| {
        let options = args.server.options()?;
        let settings = Settings {
            allow_execute: args.allow_execute,
            programs: per_language(&args.program, "--program")?,
            invalid_programs: per_language(&args.invalid_program, "--invalid-program")?,
            inputs: per_language(&args.input, "--input")?,
            failing_programs: per_language(&args.failing_program, "--failing-program")?,
        };
        let expected = args.baseline.as_deref().map(baseline).transpose()?.unwrap_or_default();
        Ok::<_, String>((options, settings, expected))
    })();
    let (options, settings, expected) = match prepared {
        Ok(prepared) => prepared,
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            return UNUSABLE;
        }
    };
    let outcome = block_on(async {
        let mut client = connect(&args.server, options, err).await?;
        let report = check(&mut client, &settings).await;
        let _ = client.close().await;
        report
    });
    let report = match outcome {
        Ok(Ok(report)) => report,
        Ok(Err(ClientError::NotPilotage(why))) => {
            let _ = writeln!(err, "error: {why}");
            return UNUSABLE;
        }
        Ok(Err(error)) => {
            let _ = writeln!(err, "error: {}", describe(&error));
            return UNUSABLE;
        }
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            return UNUSABLE;
        }
    };
    let failed = |rule: &str| {
        report
            .results
            .iter()
            .any(|r| r.rule == rule && r.status == RuleStatus::Failed)
    };
    let stale: Vec<&String> = expected.keys().filter(|rule| !failed(rule)).collect();
    let blocking = report
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error && !expected.contains_key(f.rule))
        .count();
    let _ = match args.format {
        Format::Json => writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&json!({
                "findings": report.findings,
                "results": report.results,
                "stale_baseline": stale,
            }))
            .unwrap_or_default()
        ),
        Format::Junit => write!(out, "{}", junit(&report, &expected)),
        Format::Text => {
            let mut text = render_text(&report.findings);
            for result in &report.results {
                match &result.status {
                    RuleStatus::Failed if expected.contains_key(result.rule) => {
                        text.push_str(&format!(
                            "expected failure {} (baseline: {})\n",
                            result.rule, expected[result.rule]
                        ));
                    }
                    RuleStatus::Skipped { reason } => text.push_str(&format!("skipped {}: {reason}\n", result.rule)),
                    _ => {}
                }
            }
            let count = |status: fn(&RuleStatus) -> bool| report.results.iter().filter(|r| status(&r.status)).count();
            text.push_str(&format!(
                "{} rules: {} passed, {} failed, {} skipped\n",
                report.results.len(),
                count(|s| *s == RuleStatus::Passed),
                count(|s| *s == RuleStatus::Failed),
                count(|s| matches!(s, RuleStatus::Skipped { .. })),
            ));
            write!(out, "{text}")
        }
    };
    for rule in &stale {
        let _ = writeln!(
            err,
            "warning: baseline entry {rule} is stale: the rule passes now; remove it"
        );
    }
    if blocking > 0 {
        FAILED
    } else {
        SUCCESS
    }
}

/// `Part III <section>`, unless the section already names its Part.
fn citation(section: &str) -> String {
    if section.starts_with("Part ") {
        section.to_owned()
    } else {
        format!("Part III {section}")
    }
}
