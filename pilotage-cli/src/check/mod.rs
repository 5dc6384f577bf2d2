//! Live conformance (`pilotage check`): what only talking to a server shows of Part III 10.1.
//! The surface the client saw is linted with every rule of [`crate::lint`] (one
//! implementation), then the dynamic probes below run, each a [`Rule`] of [`PROBES`] with an
//! id citing its section, whose outcome is passed, failed (with findings) or skipped (with
//! why).
//!
//! Probes never start a Run unless the caller allows it (`--allow-execute` and a program for
//! the Language): without it, an execute tool only receives requests that carry no runnable
//! program, so a faulty server cannot be made to run anything.
//!
//! - 3.1 the manifest tool answers a valid manifest;
//! - 4.1 guide index and fetch, and, where `guides.topic_fetch` is declared, the topic form of
//!   every topic an index entry lists; unknown language / guide id → `not_found`;
//! - 4.2 catalog list; an unknown entry → `not_found` still carrying `catalog_version`;
//! - 4.4 `mode` missing or unknown where execution is `both` → `invalid_request`;
//! - 4.5 an execute tool's annotations against the risk the catalog declares;
//! - 4.6, 7.1 runnable selection, an unknown `trace_level` → `invalid_request`, never a
//!   carrier error; `program_ref` on an execute tool that does not declare it (alone, and
//!   beside a program) → a request error (`unsupported` or `invalid_request`), never a Run;
//!   an argument requiring an undeclared sub-feature (`test_run`, `idempotency_key`,
//!   `question`) → `unsupported` or `invalid_request`, never ignored nor a carrier error (the
//!   execute ones only with leave to send a program, the `question` about a run the probes
//!   kept when there is one); an invalid program → `valid: false`, never `isError: true`; with
//!   `--allow-execute` and `--failing-program`, a failed Run → `ok: false`, `isError: false`;
//! - 6, 10.1-8 every result carries `structuredContent` valid (pinned) against its tool's
//!   outputSchema union; 7.2, 10.1-9 request errors carry `isError: true` and a closed kind;
//! - 8.3, 10.1-12 resources equal the tool responses;
//! - 9.5 an unknown run → `not_found`; with `--allow-execute`, each trace level and the trace
//!   fetch of the run, at `min(requested, recorded)` detail.

mod probes;
pub mod rules;

use std::collections::BTreeMap;

use pilotage_client::{ClientError, DetectedBy, Discovery, ManifestSource, PilotageClient};
use pilotage_types::Manifest;
use serde::Serialize;
use serde_json::Value;

use crate::lint::{lint, Finding, Rule, Surface, RULES};
pub use rules::PROBES;

/// What `pilotage check` was asked to do beyond the defaults.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// Probes that run programs may run (with a program from [`Settings::programs`]).
    pub allow_execute: bool,
    /// A valid program per Language (for the probes that run one).
    pub programs: BTreeMap<String, Value>,
    /// An invalid program per Language (for the validate probe; else a value of the declared
    /// JSON type of the program argument is sent).
    pub invalid_programs: BTreeMap<String, Value>,
    /// An input per Language (for the probes that run one).
    pub inputs: BTreeMap<String, Value>,
    /// A program per Language whose Run fails (for the failed-Run probe, with
    /// [`Settings::allow_execute`]).
    pub failing_programs: BTreeMap<String, Value>,
}

/// The outcome of one rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum Status {
    /// Checked, and held.
    Passed,
    /// Checked, and broken (its findings say how).
    Failed,
    /// Not checked, for the reason given.
    Skipped {
        /// Why.
        reason: String,
    },
}

/// One rule's result.
#[derive(Debug, Clone, Serialize)]
pub struct RuleResult {
    /// The rule's id.
    pub rule: &'static str,
    /// Its Part III section.
    pub section: &'static str,
    /// What it requires.
    pub summary: &'static str,
    /// Passed, failed or skipped.
    #[serde(flatten)]
    pub status: Status,
}

/// Every finding, and the status of every rule (lint rules and probes).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The findings, lint's and the probes'.
    pub findings: Vec<Finding>,
    /// One entry per rule of [`RULES`] and [`PROBES`], in that order.
    pub results: Vec<RuleResult>,
}

/// Runs every lint rule on what `client` saw, then every probe.
pub async fn check(client: &mut PilotageClient, settings: &Settings) -> Result<Report, ClientError> {
    let found = client.discovery().await.cloned();
    let discovery = match found {
        Ok(discovery) => discovery,
        // A server that declares the extension but offers no readable manifest is a Pilotage
        // server that breaks 3.1 (and whatever else its manifest tool shows), not "not a
        // Pilotage server": it is checked with an empty manifest.
        Err(ClientError::NotPilotage(_)) if client.declares_extension() => Discovery {
            protocol_version: client.protocol_version().unwrap_or_default(),
            stateless: client.is_stateless(),
            detected_by: vec![DetectedBy::Extension],
            manifest_source: ManifestSource::Tool,
            manifest: Manifest::new(pilotage_types::VersionString(String::new()), Vec::new()),
            tools: client.list_tools().await?,
        },
        Err(error) => return Err(error),
    };
    let tools = Value::Array(discovery.tools.clone());
    let manifest = serde_json::to_value(&discovery.manifest).expect("a manifest serializes");
    let view = client.server_view();
    let mut findings = lint(Surface {
        tools: &tools,
        manifest: &manifest,
        initialize: (!discovery.stateless).then_some(&view),
        stateless: discovery.stateless,
    });
    let mut skipped: BTreeMap<&'static str, String> = BTreeMap::new();
    if discovery.stateless {
        // The welcome text travels with server/discover; its instructions are checked as the
        // initialize result's would be.
        findings.extend(
            lint(Surface {
                tools: &tools,
                manifest: &manifest,
                initialize: Some(&view),
                stateless: true,
            })
            .into_iter()
            .filter(|f| f.rule == crate::lint::rules::WELCOME_TEXT.id),
        );
    }
    let mut run = probes::Run::new(client, &discovery, settings);
    run.all().await?;
    findings.extend(run.findings);
    skipped.extend(run.skipped);
    let checked = run.checked;
    findings.sort_by(|a, b| (&a.tool, a.severity, a.rule, &a.pointer).cmp(&(&b.tool, b.severity, b.rule, &b.pointer)));
    findings.dedup();
    let results = RULES
        .iter()
        .chain(PROBES.iter())
        .map(|rule| {
            // A warning fails its rule too (a SHOULD not followed); only errors set the exit
            // status.
            let failed = findings.iter().any(|f| f.rule == rule.id);
            let status = match (
                failed,
                skipped.get(rule.id),
                PROBES.contains(rule) && !checked.contains(rule.id),
            ) {
                (true, _, _) => Status::Failed,
                (false, Some(reason), _) => Status::Skipped { reason: reason.clone() },
                (false, None, true) => Status::Skipped {
                    reason: "nothing on this server to probe".to_owned(),
                },
                (false, None, false) => Status::Passed,
            };
            result(rule, status)
        })
        .collect();
    Ok(Report { findings, results })
}

fn result(rule: &'static Rule, status: Status) -> RuleResult {
    RuleResult {
        rule: rule.id,
        section: rule.section,
        summary: rule.summary,
        status,
    }
}
