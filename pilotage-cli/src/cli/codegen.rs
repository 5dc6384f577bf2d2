//! `pilotage codegen SCHEMA... [--out FILE|DIR] [--names TABLE] [--map URI=FILE]...
//! [--draft D] [--assert-formats] [--tuning T] [--check]`: types and validators for your own JSON Schemas,
//! like `cargo typify`, through the same pipeline as `cargo xtask regen`
//! (`pilotage_codegen::Builder`). Each `NAME.schema.json` becomes `DIR/NAME.rs` (one module
//! `pub mod NAME`) and `DIR/NAME.schema.json` (the copy it embeds); with `--out FILE.rs`, every
//! module goes into that one file (the copies beside it). The schemas given are one set: a
//! `$ref` between them is resolved, and `--map` adds a document known by a URI. `--check`
//! writes nothing and exits 1, naming each file that differs from what would be written.

use std::io::Write;
use std::path::PathBuf;

use super::{Status, FAILED, SUCCESS, UNUSABLE};

/// The arguments of `pilotage codegen`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// The directory to write into (default: the current directory), or one `.rs` file to
    /// hold every module.
    #[arg(long, value_name = "FILE|DIR", default_value = ".")]
    pub out: PathBuf,
    /// A document of the schema set known by a URI: `$ref`s to `URI` resolve into `FILE`
    /// (repeatable).
    #[arg(long = "map", value_name = "URI=FILE")]
    pub map: Vec<String>,
    /// The dialect of a schema without `$schema`: `2020-12` (the default), `2019-09`, `7`, `6`, `4`.
    #[arg(long, value_name = "DRAFT", default_value = "2020-12")]
    pub draft: String,
    /// Assert `format` in 2019-09 and 2020-12 schemas (draft-07 always asserts the standard
    /// formats).
    #[arg(long)]
    pub assert_formats: bool,
    /// What the validators are tuned for: `one-set` (the default: a schema set validated often)
    /// or `many-sets` (one of many sets in a program, each validated now and then: a pass over
    /// an object's members steps by a shared call, less code a check).
    #[arg(long, value_name = "TUNING", default_value = "one-set")]
    pub tuning: String,
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
    let mut builder = pilotage_codegen::Builder::new().generated_by(pilotage_codegen::GeneratedBy::Cli);
    for schema in &args.schemas {
        builder = builder.schema(schema);
    }
    if let Some(names) = &args.names {
        builder = builder.names(names);
    }
    for map in &args.map {
        let Some((uri, file)) = map
            .split_once('=')
            .filter(|(uri, file)| !uri.is_empty() && !file.is_empty())
        else {
            let _ = writeln!(err, "error: --map {map:?}: expected URI=FILE");
            return UNUSABLE;
        };
        builder = builder.document(uri, file);
    }
    builder = match args.draft.trim_start_matches("draft").trim_start_matches('-') {
        "2020-12" => builder.default_draft(pilotage_codegen::validators::Draft::Draft2020),
        "2019-09" => builder.default_draft(pilotage_codegen::validators::Draft::Draft2019),
        "4" | "04" => builder.default_draft(pilotage_codegen::validators::Draft::Draft4),
        "6" | "06" => builder.default_draft(pilotage_codegen::validators::Draft::Draft6),
        "7" | "07" => builder.default_draft(pilotage_codegen::validators::Draft::Draft7),
        other => {
            let _ = writeln!(err, "error: --draft {other:?}: expected 2020-12, 2019-09, 7, 6 or 4");
            return UNUSABLE;
        }
    };
    if args.assert_formats {
        builder = builder.assert_formats(true);
    }
    builder = match args.tuning.as_str() {
        "one-set" => builder.tuning(pilotage_codegen::validators::Tuning::OneSet),
        "many-sets" => builder.tuning(pilotage_codegen::validators::Tuning::ManySets),
        other => {
            let _ = writeln!(err, "error: --tuning {other:?}: expected one-set or many-sets");
            return UNUSABLE;
        }
    };
    let file_mode = args.out.extension().is_some_and(|e| e == "rs");
    let scratch = std::env::temp_dir().join(format!("pilotage-codegen-check-{}", std::process::id()));
    let builder = match (file_mode, args.check) {
        (true, false) => builder.out_file(&args.out),
        (true, true) => builder.out_file(scratch.join(args.out.file_name().unwrap_or_default())),
        (false, false) => builder.out_dir(&args.out),
        (false, true) => builder.out_dir(&scratch),
    };
    let written = match builder.compile() {
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
    let out_dir = if file_mode {
        match args.out.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        }
    } else {
        args.out.clone()
    };
    for path in &written {
        let name = path.file_name().unwrap_or_default();
        let existing = out_dir.join(name);
        if std::fs::read(&existing).ok() != std::fs::read(path).ok() {
            drift += 1;
            let _ = writeln!(
                out,
                "{}: differs from what `pilotage codegen` would write",
                existing.display()
            );
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    if drift == 0 {
        let _ = writeln!(out, "{} generated file(s) up to date", written.len());
        SUCCESS
    } else {
        FAILED
    }
}
