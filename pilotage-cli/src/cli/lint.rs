//! `pilotage lint --tools FILE [--manifest FILE] [--initialize FILE] [--stateless]
//! [--format text|json]`: checks a Pilotage server surface against Part III (see
//! [`crate::lint`]). Exit 0 when there is no error finding, 1 when there is, 2 for unusable
//! input.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{read_json, Status, FAILED, SUCCESS, UNUSABLE};
use crate::lint::{has_errors, lint, render_text, Surface};

/// How findings are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// Grouped by tool, each with its fix, then a count line.
    #[default]
    Text,
    /// A JSON array of findings (rule, severity, tool, pointer, message, remedy).
    Json,
}

/// The arguments of `pilotage lint`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// The tools/list result: a JSON-RPC response, {"tools": [...]} or the array of tools.
    #[arg(long, value_name = "FILE")]
    pub tools: PathBuf,
    /// The manifest, or a pilotage_manifest result (its structuredContent is read). Default:
    /// the manifest inlined in the --initialize result's _meta.
    #[arg(long, value_name = "FILE")]
    pub manifest: Option<PathBuf>,
    /// The initialize result (or its JSON-RPC response).
    #[arg(long, value_name = "FILE")]
    pub initialize: Option<PathBuf>,
    /// The deployment is stateless (MCP 2026-07-28 without sessions).
    #[arg(long)]
    pub stateless: bool,
    /// The output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Runs `pilotage lint`.
pub fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> Status {
    let documents = load_tools(&args.tools).and_then(|tools| {
        let initialize = args.initialize.as_deref().map(load_initialize).transpose()?;
        let manifest = load_manifest(args.manifest.as_deref(), initialize.as_ref())?;
        Ok((tools, manifest, initialize))
    });
    let (tools, manifest, initialize) = match documents {
        Ok(documents) => documents,
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            return UNUSABLE;
        }
    };
    let findings = lint(Surface {
        tools: &tools,
        manifest: &manifest,
        initialize: initialize.as_ref(),
        stateless: args.stateless,
    });
    let _ = match args.format {
        Format::Json => writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&findings).expect("findings serialise")
        ),
        Format::Text => out.write_all(render_text(&findings).as_bytes()),
    };
    if has_errors(&findings) {
        FAILED
    } else {
        SUCCESS
    }
}

/// Reads a JSON file, unwrapping a JSON-RPC response (`{"result": ...}`) to its result.
fn load(path: &Path) -> Result<Value, String> {
    read_json(path).map(|value| match value {
        Value::Object(mut object)
            if object.contains_key("jsonrpc") || (object.len() <= 3 && object.contains_key("result")) =>
        {
            object.remove("result").unwrap_or(Value::Null)
        }
        other => other,
    })
}

fn load_tools(path: &Path) -> Result<Value, String> {
    let tools = load(path)?;
    if tools.is_array() || tools.get("tools").is_some_and(Value::is_array) {
        Ok(tools)
    } else {
        Err(format!(
            "{}: not a tools/list result: expected {{\"tools\": [...]}} or an array of tools",
            path.display()
        ))
    }
}

fn load_initialize(path: &Path) -> Result<Value, String> {
    let initialize = load(path)?;
    if initialize.is_object() {
        Ok(initialize)
    } else {
        Err(format!("{}: an initialize result is a JSON object", path.display()))
    }
}

/// The manifest from its file (a `pilotage_manifest` result's `structuredContent`, or the
/// manifest itself), else inlined in the initialize result.
fn load_manifest(path: Option<&Path>, initialize: Option<&Value>) -> Result<Value, String> {
    let manifest = match path {
        Some(path) => match load(path)? {
            Value::Object(mut object) if object.contains_key("structuredContent") => {
                object.remove("structuredContent").unwrap_or(Value::Null)
            }
            other => other,
        },
        None => initialize
            .and_then(|i| i.get("_meta"))
            .and_then(|m| m.get(pilotage_types::META_KEY))
            .and_then(|v| v.get("manifest"))
            .cloned()
            .ok_or_else(|| {
                format!(
                    "no manifest: give --manifest FILE, or an --initialize result carrying _meta[\"{}\"].manifest",
                    pilotage_types::META_KEY
                )
            })?,
    };
    if manifest.is_object() {
        Ok(manifest)
    } else {
        Err("the manifest must be a JSON object".to_owned())
    }
}
