//! Command-line front ends shared by `cargo xtask` (in this workspace) and the installable
//! `pilotage` binary (for downstream CI). Each returns the process exit status: 0 success,
//! 1 a failed check (invalid data, drift, error findings), 2 unusable input or usage.

use std::fmt::Write as _;
use std::path::Path;

use pilotage_types::validate::{pilotage, SchemaError, SchemaValidators};
use serde_json::Value;

/// Exit status of a command.
pub type Status = u8;

/// `validate [--schema PATH] [--compatible] <DEF> <FILE>...`: validates each JSON file against
/// `$defs/<DEF>` of the Pilotage schema (or of the schema at PATH; `.` as DEF means its root);
/// with `--compatible`, in the compatible reading (every open enum widened to any string, as a
/// client reads a server: `pilotage_types::validate`). Prints one
/// line per file, `<FILE>: valid` or `<FILE>: invalid` followed by one indented line per
/// violation, `<instance pointer>: <message>`, to `out`; problems with the input to `err`.
pub fn validate(args: &[String], out: &mut String, err: &mut String) -> Status {
    const USAGE: &str = "usage: validate [--schema PATH] [--compatible] <DEF> <FILE>...";
    let mut schema_path: Option<&str> = None;
    let mut compatible = false;
    let mut positional = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--schema" => match args.next() {
                Some(path) => schema_path = Some(path),
                None => {
                    let _ = writeln!(err, "error: --schema needs a PATH\n{USAGE}");
                    return 2;
                }
            },
            "--compatible" => compatible = true,
            "--help" | "-h" => {
                let _ = writeln!(out, "{USAGE}");
                return 0;
            }
            other if other.starts_with("--") => {
                let _ = writeln!(err, "error: unknown option `{other}`\n{USAGE}");
                return 2;
            }
            other => positional.push(other),
        }
    }
    let Some((def, files)) = positional.split_first() else {
        let _ = writeln!(err, "error: missing <DEF>\n{USAGE}");
        return 2;
    };
    if files.is_empty() {
        let _ = writeln!(err, "error: missing <FILE>\n{USAGE}");
        return 2;
    }
    let owned;
    let validators: &SchemaValidators = match schema_path {
        None => pilotage(),
        Some(path) => match read_json(Path::new(path)) {
            Ok(document) => {
                owned = SchemaValidators::new(document);
                &owned
            }
            Err(message) => {
                let _ = writeln!(err, "error: schema {message}");
                return 2;
            }
        },
    };
    let validators = if compatible {
        validators.compatible()
    } else {
        validators
    };
    if let Err(error) = validators.validator(def) {
        let _ = match &error {
            SchemaError::UnknownDef(_) => {
                let known: Vec<&str> = validators.def_names().collect();
                writeln!(err, "error: {error}; known definitions: {}", known.join(", "))
            }
            SchemaError::Invalid { .. } => writeln!(err, "error: {error}"),
        };
        return 2;
    }
    let mut status = 0;
    for file in files {
        let value = match read_json(Path::new(file)) {
            Ok(value) => value,
            Err(message) => {
                let _ = writeln!(err, "error: {message}");
                status = 2;
                continue;
            }
        };
        match validators.validate(def, &value) {
            Ok(Ok(())) => {
                let _ = writeln!(out, "{file}: valid");
            }
            Ok(Err(errors)) => {
                let _ = writeln!(out, "{file}: invalid");
                for violation in &errors.violations {
                    let _ = writeln!(out, "  {}: {}", violation.instance_pointer, violation.message);
                }
                status = status.max(1);
            }
            Err(error) => {
                let _ = writeln!(err, "error: {error}");
                return 2;
            }
        }
    }
    status
}

/// Reads and parses a JSON file; the error names the file and says what is wrong.
pub fn read_json(path: &Path) -> Result<Value, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    serde_json::from_slice(&bytes).map_err(|e| {
        if e.to_string().starts_with("recursion limit exceeded") {
            format!(
                "{}: nested deeper than 128 levels, which is not read ({e})",
                path.display()
            )
        } else {
            format!("{}: not JSON: {e}", path.display())
        }
    })
}

/// Unwraps a JSON-RPC response (`{"result": ...}`) to its result.
fn rpc_result(value: Value) -> Value {
    match value {
        Value::Object(mut object)
            if object.contains_key("jsonrpc") || (object.len() <= 3 && object.contains_key("result")) =>
        {
            object.remove("result").unwrap_or(Value::Null)
        }
        other => other,
    }
}

/// `lint --tools FILE [--manifest FILE] [--initialize FILE] [--stateless] [--format text|json]`:
/// checks a Pilotage server surface against Part III (see `pilotage_types::conformance`).
/// Exit 0 when there is no error finding, 1 when there is, 2 for unusable input.
pub fn lint(args: &[String], out: &mut String, err: &mut String) -> Status {
    use pilotage_types::conformance::{has_errors, lint, render_text, Surface};
    const USAGE: &str =
        "usage: lint --tools FILE [--manifest FILE] [--initialize FILE] [--stateless] [--format text|json]";
    let (mut tools, mut manifest, mut initialize, mut stateless, mut json_format) = (None, None, None, false, false);
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut path = |slot: &mut Option<String>, err: &mut String| match args.next() {
            Some(value) => {
                *slot = Some(value.clone());
                true
            }
            None => {
                let _ = writeln!(err, "error: {arg} needs a value\n{USAGE}");
                false
            }
        };
        let ok = match arg.as_str() {
            "--tools" => path(&mut tools, err),
            "--manifest" => path(&mut manifest, err),
            "--initialize" => path(&mut initialize, err),
            "--format" => {
                let mut format = None;
                let ok = path(&mut format, err);
                match format.as_deref() {
                    Some("json") => json_format = true,
                    Some("text") => json_format = false,
                    Some(other) => {
                        let _ = writeln!(err, "error: unknown format `{other}`: text or json\n{USAGE}");
                        return 2;
                    }
                    None => {}
                }
                ok
            }
            "--stateless" => {
                stateless = true;
                true
            }
            "--help" | "-h" => {
                let _ = writeln!(out, "{USAGE}");
                return 0;
            }
            other => {
                let _ = writeln!(err, "error: unknown argument `{other}`\n{USAGE}");
                false
            }
        };
        if !ok {
            return 2;
        }
    }
    let Some(tools_path) = tools else {
        let _ = writeln!(err, "error: --tools is required\n{USAGE}");
        return 2;
    };
    let load = |path: &str, err: &mut String| match read_json(Path::new(path)) {
        Ok(value) => Some(rpc_result(value)),
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            None
        }
    };
    let Some(tools_value) = load(&tools_path, err) else {
        return 2;
    };
    let tool_list_ok = tools_value.is_array() || tools_value.get("tools").is_some_and(Value::is_array);
    if !tool_list_ok {
        let _ = writeln!(
            err,
            "error: {tools_path}: not a tools/list result: expected {{\"tools\": [...]}} or an array of tools"
        );
        return 2;
    }
    let initialize_value = match &initialize {
        Some(path) => match load(path, err) {
            Some(value) if value.is_object() => Some(value),
            Some(_) => {
                let _ = writeln!(err, "error: {path}: an initialize result is a JSON object");
                return 2;
            }
            None => return 2,
        },
        None => None,
    };
    let manifest_value = match &manifest {
        Some(path) => match load(path, err) {
            Some(value) => match value {
                Value::Object(mut object) if object.contains_key("structuredContent") => {
                    object.remove("structuredContent").unwrap_or(Value::Null)
                }
                other => other,
            },
            None => return 2,
        },
        None => match initialize_value
            .as_ref()
            .and_then(|i| i.get("_meta"))
            .and_then(|m| m.get(pilotage_types::META_KEY))
            .and_then(|v| v.get("manifest"))
        {
            Some(inline) => inline.clone(),
            None => {
                let _ = writeln!(
                    err,
                    "error: no manifest: give --manifest FILE, or an --initialize result carrying _meta[\"{}\"].manifest",
                    pilotage_types::META_KEY
                );
                return 2;
            }
        },
    };
    if !manifest_value.is_object() {
        let _ = writeln!(err, "error: the manifest must be a JSON object");
        return 2;
    }
    let findings = lint(Surface {
        tools: &tools_value,
        manifest: &manifest_value,
        initialize: initialize_value.as_ref(),
        stateless,
    });
    if json_format {
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&findings).expect("findings serialise")
        );
    } else {
        out.push_str(&render_text(&findings));
    }
    if has_errors(&findings) {
        1
    } else {
        0
    }
}
