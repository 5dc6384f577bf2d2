//! Command-line front ends shared by `cargo xtask` (in this workspace) and the installable
//! `pilotage` binary (for downstream CI). Each returns the process exit status: 0 success,
//! 1 a failed check (invalid data, drift, error findings), 2 unusable input or usage.

use std::fmt::Write as _;
use std::path::Path;

use pilotage_types::validate::{pilotage, SchemaError, SchemaValidators};
use serde_json::Value;

/// Exit status of a command.
pub type Status = u8;

/// `validate [--schema PATH] <DEF> <FILE>...`: validates each JSON file against `$defs/<DEF>`
/// of the Pilotage schema (or of the schema at PATH; `.` as DEF means its root). Prints one
/// line per file, `<FILE>: valid` or `<FILE>: invalid` followed by one indented line per
/// violation, `<instance pointer>: <message>`, to `out`; problems with the input to `err`.
pub fn validate(args: &[String], out: &mut String, err: &mut String) -> Status {
    const USAGE: &str = "usage: validate [--schema PATH] <DEF> <FILE>...";
    let mut schema_path: Option<&str> = None;
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
    serde_json::from_slice(&bytes).map_err(|e| format!("{}: not JSON: {e}", path.display()))
}
