//! `pilotage discover [--format text|json] [--timeout SECONDS] [--stateless] (--url URL | --
//! CMD [ARGS...])`: connects as a Pilotage client would and prints how Pilotage was detected,
//! where the manifest came from, the protocol revision, and each Language with its loop tools
//! and program argument names (Part III 1.2, 1.3, 3, 4.3, 5). Exit 0 for a Pilotage server, 1
//! for a server that is not one (1.3), 2 when it cannot connect or the usage is wrong.

use std::io::Write;

use pilotage_client::request::program_argument;
use pilotage_client::{ClientError, Discovery};
use pilotage_types::Stage;
use serde_json::{json, Map, Value};

use super::remote::{block_on, connect, describe, ServerArgs};
use super::{Status, FAILED, SUCCESS, UNUSABLE};

/// How the result is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// Lines for a person.
    #[default]
    Text,
    /// One JSON object.
    Json,
}

/// The arguments of `pilotage discover`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// The output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// The server.
    #[command(flatten)]
    pub server: ServerArgs,
}

/// The report of a discovery, as `--format json` prints it.
pub fn report(discovery: &Discovery) -> Value {
    let languages: Vec<Value> = discovery
        .manifest
        .languages
        .iter()
        .map(|language| {
            let name = &language.name.0;
            let mut stages = Map::new();
            for stage in Stage::ALL {
                let tool = match stage {
                    Stage::Validate => Some(&language.loop_.validate),
                    Stage::Execute => language.loop_.execute.as_ref(),
                    Stage::Trace => language.loop_.trace.as_ref(),
                };
                let Some(tool) = tool else { continue };
                let argument = discovery
                    .tool(tool)
                    .filter(|_| stage.carries_programs())
                    .and_then(|listed| program_argument(listed, name));
                stages.insert(
                    stage.loop_member().to_owned(),
                    json!({"tool": tool, "program_argument": argument}),
                );
            }
            json!({"name": name, "loop": stages})
        })
        .collect();
    json!({
        "protocol_version": discovery.protocol_version,
        "detected_by": discovery.detected_by,
        "manifest_source": discovery.manifest_source,
        "manifest": discovery.manifest,
        "languages": languages,
    })
}

fn render_text(report: &Value) -> String {
    let list = |v: &Value| {
        v.as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", "))
            .unwrap_or_default()
    };
    let mut text = format!(
        "Pilotage server (MCP {}), detected by: {}\nmanifest from: {} (Pilotage {})\n",
        report["protocol_version"].as_str().unwrap_or("?"),
        list(&report["detected_by"]),
        report["manifest_source"].as_str().unwrap_or("?"),
        report["manifest"]["pilotage"].as_str().unwrap_or("?"),
    );
    for language in report["languages"].as_array().into_iter().flatten() {
        text.push_str(&format!("Language {}\n", language["name"].as_str().unwrap_or("?")));
        let stages = Stage::ALL
            .iter()
            .filter_map(|stage| Some((stage.loop_member(), language["loop"].get(stage.loop_member())?)));
        for (stage, tool) in stages {
            let argument = match tool["program_argument"].as_str() {
                Some(argument) => format!(" (program argument `{argument}`)"),
                None if stage != "trace" => " (no program declaration)".to_owned(),
                None => String::new(),
            };
            text.push_str(&format!(
                "  {stage:<8} {}{argument}\n",
                tool["tool"].as_str().unwrap_or("?")
            ));
        }
    }
    text
}

/// Runs `pilotage discover`.
pub fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> Status {
    let options = match args.server.options() {
        Ok(options) => options,
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            return UNUSABLE;
        }
    };
    let outcome = block_on(async {
        let mut client = connect(&args.server, options, err).await?;
        let found = client.discover().await.map(report);
        let _ = client.close().await;
        found
    });
    match outcome {
        Ok(Ok(report)) => {
            let _ = match args.format {
                Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&report).unwrap_or_default()),
                Format::Text => write!(out, "{}", render_text(&report)),
            };
            SUCCESS
        }
        Ok(Err(ClientError::NotPilotage(why))) => {
            let _ = writeln!(err, "{why}");
            if args.format == Format::Json {
                let _ = writeln!(out, "{}", json!({"pilotage": false, "reason": why.reason}));
            }
            FAILED
        }
        Ok(Err(error)) => {
            let _ = writeln!(err, "error: {}", describe(&error));
            UNUSABLE
        }
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            UNUSABLE
        }
    }
}
