//! `pilotage codegen SCHEMA... [--out DIR] [--names TABLE] [--check]`: types and validators
//! for your own JSON Schemas, like `cargo typify`, through the same pipeline as `cargo xtask
//! regen` (`pilotage_codegen::Builder`). Each `NAME.schema.json` becomes `DIR/NAME.rs` (one
//! module `pub mod NAME`) and `DIR/NAME.schema.json` (the copy it embeds). `--check` writes
//! nothing and exits 1, naming each file that differs from what would be written.

use std::io::Write;
use std::path::PathBuf;

use super::{Status, FAILED, SUCCESS, UNUSABLE};

/// The arguments of `pilotage codegen`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// The directory to write into (default: the current directory).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub out: PathBuf,
    /// A name table for the schema (`{"types": {POINTER: NAME}}`); with one schema only.
    #[arg(long, value_name = "TABLE")]
    pub names: Option<PathBuf>,
    /// Write nothing; exit 1 when a file differs from what would be written.
    #[arg(long)]
    pub check: bool,
    /// The JSON Schema files.
    #[arg(value_name = "SCHEMA", required = true)]
    pub schemas: Vec<PathBuf>,
}

/// Runs `pilotage codegen`: 0 written (or up to date), 1 drift under `--check`, 2 a schema
/// that cannot be generated (the error names the file and the JSON Pointer).
pub fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> Status {
    if args.names.is_some() && args.schemas.len() > 1 {
        let _ = writeln!(
            err,
            "error: --names applies to one schema; give the schemas one command each"
        );
        return UNUSABLE;
    }
    let mut builder = pilotage_codegen::Builder::new();
    for schema in &args.schemas {
        builder = builder.schema(schema);
    }
    if let Some(names) = &args.names {
        builder = builder.names(names);
    }
    let target = if args.check {
        std::env::temp_dir().join(format!("pilotage-codegen-check-{}", std::process::id()))
    } else {
        args.out.clone()
    };
    let written = match builder.out_dir(&target).compile() {
        Ok(written) => written,
        Err(error) => {
            let _ = writeln!(err, "error: {error}");
            return UNUSABLE;
        }
    };
    if !args.check {
        for path in &written {
            let _ = writeln!(out, "wrote {}", path.display());
        }
        return SUCCESS;
    }
    let mut drift = 0;
    for path in &written {
        let name = path.file_name().unwrap_or_default();
        let existing = args.out.join(name);
        if std::fs::read(&existing).ok() != std::fs::read(path).ok() {
            drift += 1;
            let _ = writeln!(
                out,
                "{}: differs from what `pilotage codegen` would write",
                existing.display()
            );
        }
    }
    let _ = std::fs::remove_dir_all(&target);
    if drift == 0 {
        let _ = writeln!(out, "{} generated file(s) up to date", written.len());
        SUCCESS
    } else {
        FAILED
    }
}
