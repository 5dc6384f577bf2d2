//! `pilotage validate [--schema PATH] [--compatible] <DEF> <FILE>...`: validates each JSON
//! file against `$defs/<DEF>` of the Pilotage schema (or of the schema at PATH; `.` as DEF
//! means its root). Prints one line per file, `<FILE>: valid` or `<FILE>: invalid` followed by
//! one indented line per violation, `<instance pointer>: <message>`, to `out`; problems with
//! the input to `err`.
//!
//! The Pilotage schema is served by its generated validators; a schema given with `--schema`
//! is interpreted (jsonschema), since no code was generated for it.

use std::io::Write;
use std::path::{Path, PathBuf};

use pilotage_types::validate::{pilotage, SchemaError, SchemaValidators, ValidationErrors, Validators};

use super::{read_json, Status, FAILED, SUCCESS, UNUSABLE};

/// The arguments of `pilotage validate`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Validate against the JSON Schema document at PATH instead of the Pilotage schema.
    #[arg(long, value_name = "PATH")]
    pub schema: Option<PathBuf>,
    /// The compatible reading: every open enum widened to any string, every other rule kept,
    /// as a client reads a server (see `pilotage_types::validate`).
    #[arg(long)]
    pub compatible: bool,
    /// The `$defs` entry to validate against; `.` for the schema's root.
    #[arg(value_name = "DEF")]
    pub def: String,
    /// The JSON files to validate.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
}

/// Runs `pilotage validate`: 0 every file valid, 1 some file invalid, 2 unusable input.
pub fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> Status {
    let owned;
    let validators = match &args.schema {
        None if args.compatible => Source::Generated(pilotage().compatible()),
        None => Source::Generated(pilotage()),
        Some(path) => match read_json(path) {
            Ok(document) => {
                owned = SchemaValidators::new(document);
                Source::Interpreted(if args.compatible { owned.compatible() } else { &owned })
            }
            Err(message) => {
                let _ = writeln!(err, "error: schema {message}");
                return UNUSABLE;
            }
        },
    };
    let def = args.def.as_str();
    if let Err(error) = validators.ready(def) {
        let _ = match &error {
            SchemaError::UnknownDef(_) => {
                let known = validators.def_names();
                writeln!(err, "error: {error}; known definitions: {}", known.join(", "))
            }
            SchemaError::Invalid { .. } => writeln!(err, "error: {error}"),
        };
        return UNUSABLE;
    }
    args.files
        .iter()
        .map(|file| validate_file(&validators, def, file, out, err))
        .fold(SUCCESS, Status::max)
}

/// Validates one file: prints its verdict and violations; 2 when it cannot be read.
fn validate_file(validators: &Source<'_>, def: &str, file: &Path, out: &mut dyn Write, err: &mut dyn Write) -> Status {
    let value = match read_json(file) {
        Ok(value) => value,
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            return UNUSABLE;
        }
    };
    let file = file.display();
    match validators.validate(def, &value) {
        Ok(Ok(())) => {
            let _ = writeln!(out, "{file}: valid");
            SUCCESS
        }
        Ok(Err(errors)) => {
            let _ = writeln!(out, "{file}: invalid");
            for violation in &errors.violations {
                let _ = writeln!(out, "  {}: {}", violation.instance_pointer, violation.message);
            }
            if errors.truncated {
                let _ = writeln!(
                    out,
                    "  ... and more violations, not listed (the list stops at {} bytes)",
                    pilotage_types::validate::MAX_VIOLATIONS_BYTES
                );
            }
            FAILED
        }
        // The definition compiled above; a failure here is the schema's, reported as such.
        Err(error) => {
            let _ = writeln!(err, "error: {error}");
            UNUSABLE
        }
    }
}

/// Where the verdicts come from: the generated validators of the Pilotage schema, or the
/// interpreter for a schema given at run time.
enum Source<'a> {
    Generated(Validators),
    Interpreted(&'a SchemaValidators),
}

impl Source<'_> {
    /// Whether `def` can be validated against (it exists; for the interpreter, it compiles).
    fn ready(&self, def: &str) -> Result<(), SchemaError> {
        match self {
            Self::Generated(validators) => validators.check(def).map(drop),
            Self::Interpreted(validators) => validators.validator(def).map(drop),
        }
    }

    fn def_names(&self) -> Vec<&str> {
        match self {
            Self::Generated(validators) => validators.def_names().collect(),
            Self::Interpreted(validators) => validators.def_names().collect(),
        }
    }

    fn validate(&self, def: &str, value: &serde_json::Value) -> Result<Result<(), ValidationErrors>, SchemaError> {
        match self {
            Self::Generated(validators) => validators.validate(def, value),
            Self::Interpreted(validators) => validators.validate(def, value),
        }
    }
}
