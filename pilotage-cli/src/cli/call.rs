//! `pilotage call --language L --stage validate|execute|trace [--program FILE] [--program-ref
//! REF] [--input FILE] [--context FILE] [--trace-level LEVEL] [--run-id ID] [--mode MODE]
//! [--expected-catalog-version V] [--format text|json] [--timeout SECONDS] [--stateless]
//! (--url URL | -- CMD [ARGS...])`: discovers, constructs the loop request as Part III 10.2-4
//! says (nothing guessed), calls, and prints the routed result (10.2-5 to 10.2-7).
//!
//! Exit 0 for the response channel (whatever `valid` or `ok` say), 1 for a request error, a
//! carrier error, or a result that breaks the machine contract (no `structuredContent`, ...),
//! 2 for usage, a Language or stage the server does not declare, a request the client refuses
//! to construct (nothing is sent), a connection failure, or a server that is not Pilotage.

use std::io::Write;
use std::path::PathBuf;

use pilotage_client::request::{construct, LoopCall};
use pilotage_client::routing::{route, Channel, RawResult};
use pilotage_client::ClientError;
use pilotage_types::{ExecuteResponse, Stage, TraceFetchResponse, ValidateResponse};
use serde_json::{json, Map, Value};

use super::remote::{block_on, connect, describe, ServerArgs};
use super::{read_json, Status, FAILED, SUCCESS, UNUSABLE};

/// A loop stage on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StageArg {
    /// validate (with plan).
    Validate,
    /// execute: starts a Run.
    Execute,
    /// trace fetch.
    Trace,
}

impl From<StageArg> for Stage {
    fn from(stage: StageArg) -> Self {
        match stage {
            StageArg::Validate => Stage::Validate,
            StageArg::Execute => Stage::Execute,
            StageArg::Trace => Stage::Trace,
        }
    }
}

/// How the result is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// Lines for a person.
    #[default]
    Text,
    /// One JSON object: tool, arguments, channel, kind, raw_kind, is_error,
    /// structured_content, error.
    Json,
}

/// The arguments of `pilotage call`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// The Language.
    #[arg(long, value_name = "L")]
    pub language: String,
    /// The loop stage.
    #[arg(long, value_enum)]
    pub stage: StageArg,
    /// A JSON file: the program (validate, execute).
    #[arg(long, value_name = "FILE")]
    pub program: Option<PathBuf>,
    /// A promoted program (execute).
    #[arg(long, value_name = "REF")]
    pub program_ref: Option<String>,
    /// A JSON file: the run's input (execute).
    #[arg(long, value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// A JSON file: the validation context (validate, execute).
    #[arg(long, value_name = "FILE")]
    pub context: Option<PathBuf>,
    /// The trace level (execute, trace), sent as given.
    #[arg(long, value_name = "LEVEL")]
    pub trace_level: Option<String>,
    /// The run (trace).
    #[arg(long, value_name = "ID")]
    pub run_id: Option<String>,
    /// immediate or deploy, for a Language whose execution is both (execute).
    #[arg(long, value_name = "MODE")]
    pub mode: Option<String>,
    /// The catalog version the program was written against (execute).
    #[arg(long, value_name = "VERSION")]
    pub expected_catalog_version: Option<String>,
    /// The output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// The server.
    #[command(flatten)]
    pub server: ServerArgs,
}

impl Args {
    fn loop_call(&self) -> Result<LoopCall, String> {
        let file = |path: &Option<PathBuf>| path.as_deref().map(read_json).transpose();
        Ok(LoopCall {
            language: self.language.clone(),
            program: file(&self.program)?,
            program_ref: self.program_ref.clone(),
            input: file(&self.input)?,
            context: file(&self.context)?,
            trace_level: self.trace_level.clone(),
            run_id: self.run_id.clone(),
            mode: self.mode.clone(),
            expected_catalog_version: self.expected_catalog_version.clone(),
            ..LoopCall::default()
        })
    }
}

/// The channel a call ended on, by name, with the effective and raw kinds of a request
/// error; or the contract violation.
type Routed = Result<(&'static str, Option<(String, String)>), String>;

/// What one call produced, for printing.
struct Report {
    tool: String,
    arguments: Map<String, Value>,
    raw: RawResult,
    /// The routed channel's name and, for a request error, the effective and raw kinds; or
    /// the contract violation.
    routed: Routed,
}

fn routed<T: pilotage_types::SchemaDef + serde::de::DeserializeOwned>(tool: &str, raw: &RawResult) -> Routed {
    match route::<T>(tool, raw.clone()) {
        Ok(Channel::Response(_)) => Ok(("response", None)),
        Ok(Channel::RequestError(error)) => {
            Ok(("request_error", Some((error.kind.as_str().to_owned(), error.raw_kind))))
        }
        Ok(Channel::Carrier { .. }) => Ok(("carrier", None)),
        Err(violation) => Err(violation.to_string()),
    }
}

fn to_json(report: &Report) -> Value {
    let (channel, kinds, violation) = match &report.routed {
        Ok((channel, kinds)) => (json!(channel), kinds.clone(), None),
        Err(message) => (json!("contract_violation"), None, Some(message.clone())),
    };
    let (is_error, content, error) = match &report.raw {
        RawResult::Result {
            is_error,
            structured_content,
        } => (
            json!(is_error),
            structured_content.clone().unwrap_or(Value::Null),
            violation.map(|message| json!({"message": message})),
        ),
        RawResult::Error { code, message } => (
            Value::Null,
            Value::Null,
            Some(json!({"code": code, "message": message})),
        ),
    };
    json!({
        "tool": report.tool,
        "arguments": report.arguments,
        "channel": channel,
        "kind": kinds.as_ref().map(|(kind, _)| kind),
        "raw_kind": kinds.as_ref().map(|(_, raw)| raw),
        "is_error": is_error,
        "structured_content": content,
        "error": error,
    })
}

fn to_text(report: &Report) -> String {
    let value = to_json(report);
    let mut text = format!(
        "{} {}\n",
        report.tool,
        serde_json::to_string(&report.arguments).unwrap_or_default()
    );
    match &report.routed {
        Ok(("request_error", Some((kind, raw)))) => {
            let raw = if kind == raw {
                String::new()
            } else {
                format!(" (sent as `{raw}`)")
            };
            text.push_str(&format!("request error: {kind}{raw}\n"));
        }
        Ok((channel, _)) => text.push_str(&format!("{channel}\n")),
        Err(message) => text.push_str(&format!("contract violation: {message}\n")),
    }
    if !value["structured_content"].is_null() {
        text.push_str(&serde_json::to_string_pretty(&value["structured_content"]).unwrap_or_default());
        text.push('\n');
    }
    if let Some(error) = value["error"].as_object().filter(|e| e.contains_key("code")) {
        text.push_str(&format!(
            "JSON-RPC error {}: {}\n",
            error["code"],
            error["message"].as_str().unwrap_or("")
        ));
    }
    text
}

/// Runs `pilotage call`.
pub fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> Status {
    let prepared = args
        .server
        .options()
        .and_then(|options| Ok((options, args.loop_call()?)));
    let (options, call) = match prepared {
        Ok(prepared) => prepared,
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            return UNUSABLE;
        }
    };
    let stage = Stage::from(args.stage);
    let outcome = block_on(async {
        let mut client = connect(&args.server, options, err).await?;
        let result = async {
            let discovery = client.discovery().await?;
            let (tool, arguments) = construct(discovery, stage, &call).map_err(ClientError::Refused)?;
            let raw = client.call_raw(&tool, arguments.clone()).await?;
            let routed = match stage {
                Stage::Validate => routed::<ValidateResponse>(&tool, &raw),
                Stage::Execute => routed::<ExecuteResponse>(&tool, &raw),
                Stage::Trace => routed::<TraceFetchResponse>(&tool, &raw),
            };
            Ok::<_, ClientError>(Report {
                tool,
                arguments,
                raw,
                routed,
            })
        }
        .await;
        let _ = client.close().await;
        result
    });
    let report = match outcome {
        Ok(Ok(report)) => report,
        Ok(Err(error)) => {
            let _ = writeln!(err, "error: {}", describe(&error));
            return UNUSABLE;
        }
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            return UNUSABLE;
        }
    };
    let _ = match args.format {
        Format::Json => writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&to_json(&report)).unwrap_or_default()
        ),
        Format::Text => write!(out, "{}", to_text(&report)),
    };
    match &report.routed {
        Ok(("response", _)) => SUCCESS,
        Ok(_) => FAILED,
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            FAILED
        }
    }
}
