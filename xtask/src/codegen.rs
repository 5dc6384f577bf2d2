//! `cargo xtask regen`: the one generation function ([`generate_all`]) and the two ways of
//! using it, writing ([`write_all_atomically`]) and comparing ([`drift`]), in the manner of
//! rust-analyzer's `cargo xtask codegen`. `pilotage-tests` runs the check as a `#[test]`.
//!
//! Everything is generated in memory first; files are written only when all generation
//! succeeded, each through a temporary file and a rename, so a failure never leaves a
//! half-written or truncated file behind.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use pilotage_codegen::{ConstantSource, ConstantSpec, TypesSettings};

/// The vendored Pilotage schema, relative to the workspace root.
pub const PILOTAGE_SCHEMA: &str = "schemas/pilotage.schema.json";

/// The name table of the Pilotage types (`pilotage-codegen/src/names.rs`), relative to the
/// workspace root.
pub const PILOTAGE_NAMES: &str = "xtask/names/pilotage.json";

/// The copy of the schema that `pilotage-types` compiles in (its validators embed it), so
/// that the packaged crate is complete: byte-identical to the schema regen read.
pub const TYPES_SCHEMA_COPY: &str = "pilotage-types/schema/pilotage.schema.json";

/// The snapshot of the generated public API (`pilotage_codegen::api`).
pub const API_SNAPSHOT: &str = "pilotage-types/generated-api.txt";

/// One generated file: where it goes (workspace-relative) and its complete contents.
#[derive(Debug)]
pub struct GeneratedFile {
    pub path: PathBuf,
    pub contents: String,
}

/// The workspace root: `PILOTAGE_WORKSPACE_ROOT` when set (tests point regen at a scratch
/// copy with it), else the parent of this crate's directory.
pub fn workspace_root() -> PathBuf {
    if let Some(root) = std::env::var_os("PILOTAGE_WORKSPACE_ROOT") {
        return PathBuf::from(root);
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

fn pilotage_settings(source_name: &str, names: pilotage_codegen::NameTable) -> TypesSettings {
    TypesSettings::new(source_name)
        .with_generated_by(pilotage_codegen::GeneratedBy::Regen)
        .with_schema_def_trait("crate::SchemaDef")
        .with_constants([
            ConstantSpec::new(
                "PILOTAGE_VERSION",
                ConstantSource::IdVersion,
                "The Pilotage version these types implement (`major.minor`).",
            ),
            ConstantSpec::new(
                "GET_GUIDE_TOOL",
                ConstantSource::Pointer("/$defs/LanguageEntry/properties/guides/const".into()),
                "The fixed name of the guide access tool (Part III 4, 4.1).",
            ),
            ConstantSpec::new(
                "CATALOG_TOOL",
                ConstantSource::Pointer("/$defs/LanguageEntry/properties/catalog/const".into()),
                "The fixed name of the catalog access tool (Part III 4, 4.2).",
            ),
            ConstantSpec::new(
                "REQUEST_ERROR_KINDS",
                ConstantSource::Pointer("/$defs/RequestError/properties/error/properties/kind/enum".into()),
                "The closed set of request-error kinds of this version (Part III 7.2).",
            ),
        ])
        .with_names(names)
}

/// One neighbouring MCP schema generated through the same pipeline (issue: peer schemas).
pub struct PeerInput {
    /// The vendored schema, workspace-relative.
    pub schema: &'static str,
    /// The Rust module (file `pilotage-codegen/tests/golden/<module>.rs`).
    pub module: &'static str,
}

/// Where the peer schemas' generated modules go: golden outputs of the codegen, compiled and
/// exercised by `pilotage-codegen/tests/peers.rs`.
pub const GOLDEN_DIR: &str = "pilotage-codegen/tests/golden";

/// The peer schemas, vendored byte for byte from `../shared/spec/peers/`. Adding one is one
/// line here and one `pub mod` in `pilotage-codegen/tests/golden/mod.rs`.
pub const PEERS: &[PeerInput] = &[
    PeerInput {
        schema: "schemas/peers/pcp-tools-0.3.schema.json",
        module: "pcp_tools",
    },
    PeerInput {
        schema: "schemas/peers/mcec-agent-tool-result.schema.json",
        module: "mcec_agent_tool_result",
    },
    PeerInput {
        schema: "schemas/peers/majordomus-mcp.projection.input.schema.json",
        module: "majordomus_projection_input",
    },
    PeerInput {
        schema: "schemas/peers/majordomus-mcp.projection.output.schema.json",
        module: "majordomus_projection_output",
    },
];

/// Schemas that test the validator generator itself (not vendored: written for the tests),
/// generated into validators-only golden modules: (schema, module).
pub const VALIDATOR_TEST_SCHEMAS: &[(&str, &str)] =
    &[("pilotage-codegen/tests/schemas/keywords.schema.json", "keywords")];

fn validator_test_files(root: &Path) -> Result<Vec<GeneratedFile>, RegenError> {
    let mut files = Vec::new();
    for (schema, module) in VALIDATOR_TEST_SCHEMAS {
        let bytes = fs::read(root.join(schema)).map_err(|e| RegenError(format!("{schema}: cannot read: {e}")))?;
        let document = pilotage_codegen::parse_schema(&bytes, schema).map_err(|e| RegenError(e.to_string()))?;
        let embed = format!("../../../{schema}");
        let contents = pilotage_codegen::render::validators_module(&document, &bytes, schema, &embed)
            .map_err(|e| RegenError(e.to_string()))?;
        files.push(GeneratedFile {
            path: PathBuf::from(format!("{GOLDEN_DIR}/{module}.rs")),
            contents,
        });
    }
    Ok(files)
}

/// The generated module of one peer schema, and the warnings its generation gave.
fn peer_file(root: &Path, peer: &PeerInput) -> Result<(GeneratedFile, Vec<String>), RegenError> {
    let bytes =
        fs::read(root.join(peer.schema)).map_err(|e| RegenError(format!("{}: cannot read: {e}", peer.schema)))?;
    let settings = TypesSettings::new(peer.schema)
        .with_generated_by(pilotage_codegen::GeneratedBy::Regen)
        .with_schema_def_trait("::pilotage_types::SchemaDef")
        .with_embed_schema(format!("../../../{}", peer.schema));
    let generated = pilotage_codegen::generate_types(&bytes, &settings).map_err(|e| RegenError(e.to_string()))?;
    let warnings = generated.warnings.iter().map(ToString::to_string).collect();
    Ok((
        GeneratedFile {
            path: PathBuf::from(format!("{GOLDEN_DIR}/{}.rs", peer.module)),
            contents: generated.code,
        },
        warnings,
    ))
}

/// What one generation job gives: its files and its warnings, in the order they were made.
type JobOutput = Result<(Vec<GeneratedFile>, Vec<String>), RegenError>;

/// One generation job.
type Job<'a> = Box<dyn FnOnce() -> JobOutput + Send + 'a>;

/// Runs `jobs` on up to as many threads as the machine has cores (the jobs share nothing but
/// the files they read) and gives their outputs in the jobs' order, so the result, and the
/// order the warnings are printed in, does not depend on which job finished first.
fn run_jobs(jobs: Vec<Job<'_>>) -> Vec<JobOutput> {
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(jobs.len());
    if workers <= 1 {
        return jobs.into_iter().map(|job| job()).collect();
    }
    let queue: std::sync::Mutex<Vec<(usize, Job<'_>)>> =
        std::sync::Mutex::new(jobs.into_iter().enumerate().rev().collect());
    let mut outputs: Vec<(usize, JobOutput)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop();
                        let Some((index, job)) = next else { break };
                        done.push((index, job()));
                    }
                    done
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    });
    outputs.sort_by_key(|(index, _)| *index);
    outputs.into_iter().map(|(_, output)| output).collect()
}

/// A failure of [`generate_all`]: already formatted for the user.
#[derive(Debug)]
pub struct RegenError(pub String);

/// Generates every file `regen` owns, from the Pilotage schema at `schema` (workspace-relative
/// or absolute). Pure: reads the schema, writes nothing.
pub fn generate_all(root: &Path, schema: &Path) -> Result<Vec<GeneratedFile>, RegenError> {
    let schema_path = root.join(schema);
    let source_name = display_path(root, &schema_path);
    let bytes = fs::read(&schema_path).map_err(|e| RegenError(format!("{source_name}: cannot read: {e}")))?;
    let names_bytes =
        fs::read(root.join(PILOTAGE_NAMES)).map_err(|e| RegenError(format!("{PILOTAGE_NAMES}: cannot read: {e}")))?;
    let names =
        pilotage_codegen::NameTable::parse(&names_bytes, PILOTAGE_NAMES).map_err(|e| RegenError(e.to_string()))?;
    let schema_copy = String::from_utf8(bytes.clone())
        .map_err(|_| RegenError(format!("{source_name}: not UTF-8, so not a JSON document")))?;
    // Independent jobs, run in parallel: the Pilotage types and what derives from the schema,
    // then each peer schema, then the validator test schemas.
    let mut jobs: Vec<Job<'_>> = Vec::new();
    let (bytes, source_name) = (&bytes, source_name.as_str());
    jobs.push(Box::new(move || pilotage_files(bytes, source_name, names, schema_copy)));
    for peer in PEERS {
        jobs.push(Box::new(move || {
            peer_file(root, peer).map(|(file, warnings)| (vec![file], warnings))
        }));
    }
    jobs.push(Box::new(move || {
        validator_test_files(root).map(|files| (files, Vec::new()))
    }));
    let mut files = Vec::new();
    for output in run_jobs(jobs) {
        let (generated, warnings) = output?;
        for warning in warnings {
            eprintln!("warning: {warning}");
        }
        files.extend(generated);
    }
    Ok(files)
}

/// The files generated from the Pilotage schema itself: the types, the validators, the copy
/// of the schema, the API snapshot, the outputSchema unions and the value sets.
fn pilotage_files(
    bytes: &[u8],
    source_name: &str,
    names: pilotage_codegen::NameTable,
    schema_copy: String,
) -> JobOutput {
    let generated = pilotage_codegen::generate_types(bytes, &pilotage_settings(source_name, names))
        .map_err(|e| RegenError(e.to_string()))?;
    let warnings = generated.warnings.iter().map(ToString::to_string).collect();
    let validators = generated.validators.ok_or_else(|| {
        RegenError(format!(
            "{source_name}: the codegen wrote no validators file for pilotage-types"
        ))
    })?;
    let mut files = vec![
        GeneratedFile {
            path: PathBuf::from("pilotage-types/src/generated.rs"),
            contents: generated.code,
        },
        GeneratedFile {
            path: PathBuf::from("pilotage-types/src/validators.rs"),
            contents: validators,
        },
        GeneratedFile {
            path: PathBuf::from(TYPES_SCHEMA_COPY),
            contents: schema_copy,
        },
        GeneratedFile {
            path: PathBuf::from(API_SNAPSHOT),
            contents: format!(
                "# The public API of pilotage-types' generated types: written by `cargo xtask regen` from {source_name}\n# (sha256 {}); do not edit. One item a line: `<kind> <path>[: <detail>]`.\n{}",
                pilotage_codegen::render::sha256_hex(bytes),
                generated.api
            ),
        },
    ];
    files.extend(output_schema_files(bytes, source_name)?);
    files.push(spec_values_file(bytes, source_name)?);
    Ok((files, warnings))
}

/// The value sets of the schema that `pilotage-spec` carries for code that cannot link the
/// generated types (the derive, at compile time).
fn spec_values_file(bytes: &[u8], source_name: &str) -> Result<GeneratedFile, RegenError> {
    let schema = pilotage_codegen::parse_schema(bytes, source_name).map_err(|e| RegenError(e.to_string()))?;
    let specs = [ConstantSpec::new(
        "EXECUTION",
        ConstantSource::Pointer("/$defs/LanguageEntry/properties/execution/enum".into()),
        "The values of a Language's `execution` (Part II 5.1; `mode` follows from it, Part III 4.4).",
    )];
    let contents = pilotage_codegen::render::constants_file(
        &schema,
        bytes,
        source_name,
        "Value sets of the Pilotage schema, for code that cannot link the generated types.",
        &specs,
    )
    .map_err(|e| RegenError(e.to_string()))?;
    Ok(GeneratedFile {
        path: PathBuf::from("pilotage-spec/src/schema.rs"),
        contents,
    })
}

/// The Pilotage tools with an outputSchema union: (file stem, `*ToolOutput` definition).
/// Part III 6: one union per access tool and per loop stage.
pub const OUTPUT_UNIONS: &[(&str, &str)] = &[
    ("manifest", "ManifestToolOutput"),
    ("get_guide", "GetGuideToolOutput"),
    ("catalog", "CatalogToolOutput"),
    ("validate", "ValidateToolOutput"),
    ("execute", "ExecuteToolOutput"),
    ("trace", "TraceToolOutput"),
];

/// Directory of the generated outputSchema unions.
pub const OUTPUT_SCHEMA_DIR: &str = "pilotage-types/output-schemas";

fn output_schema_files(bytes: &[u8], source_name: &str) -> Result<Vec<GeneratedFile>, RegenError> {
    use pilotage_codegen::unions::{output_schema, Flavour};
    let schema = pilotage_codegen::parse_schema(bytes, source_name).map_err(|e| RegenError(e.to_string()))?;
    let digest = pilotage_codegen::render::sha256_hex(bytes);
    let mut files = Vec::new();
    for (stem, def) in OUTPUT_UNIONS {
        for (flavour, suffix) in [(Flavour::Bundled, "bundled"), (Flavour::Inlined, "inlined")] {
            let mut union = output_schema(&schema, def, flavour, source_name).map_err(|e| RegenError(e.to_string()))?;
            union["$comment"] = serde_json::Value::String(format!(
                "generated by `cargo xtask regen` from {source_name} (sha256 {digest}), $defs/{def}, {suffix} flavour; do not edit"
            ));
            files.push(GeneratedFile {
                path: PathBuf::from(format!("{OUTPUT_SCHEMA_DIR}/{stem}.{suffix}.json")),
                contents: pilotage_codegen::render::canonical_json(&union),
            });
        }
    }
    Ok(files)
}

fn display_path(root: &Path, path: &Path) -> String {
    path.strip_prefix(root).unwrap_or(path).display().to_string()
}

/// The temporary file `path` is first written to: hidden, beside it (same filesystem, so the
/// rename is atomic), with a fixed name, so a run killed before its rename leaves at most one
/// stale temporary per file, which the next run overwrites.
pub fn temp_path(path: &Path) -> PathBuf {
    let dir = path.parent().unwrap_or(Path::new("."));
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    dir.join(format!(".{file_name}.regen.tmp"))
}

/// Writes every `(path, contents)` atomically and all-or-nothing as far as the filesystem
/// allows: each is first written in full to its temporary file and flushed to disk; only
/// when every temporary is written are they renamed over their targets. On any error before
/// the renames, the temporaries are removed and no target has changed.
///
/// Fault injection for the tests (never set it otherwise): with
/// `PILOTAGE_REGEN_ABORT_BEFORE_RENAME=1` the process aborts after writing the temporaries,
/// as a kill between write and rename would.
pub fn write_all_atomically(files: &[(PathBuf, &[u8])]) -> std::io::Result<()> {
    let mut written: Vec<PathBuf> = Vec::new();
    let result = (|| {
        for (path, contents) in files {
            let temp = temp_path(path);
            fs::create_dir_all(path.parent().unwrap_or(Path::new(".")))?;
            let mut file = fs::File::create(&temp)?;
            written.push(temp);
            file.write_all(contents)?;
            file.sync_all()?;
        }
        Ok(())
    })();
    if let Err(error) = result {
        for temp in &written {
            let _ = fs::remove_file(temp);
        }
        return Err(error);
    }
    if std::env::var_os("PILOTAGE_REGEN_ABORT_BEFORE_RENAME").is_some() {
        std::process::abort();
    }
    for (path, _) in files {
        fs::rename(temp_path(path), path)?;
    }
    Ok(())
}

/// The files whose on-disk contents differ from `files`, with a short unified diff each.
pub fn drift(root: &Path, files: &[GeneratedFile]) -> Vec<(PathBuf, String)> {
    files
        .iter()
        .filter_map(|file| {
            let current = fs::read_to_string(root.join(&file.path)).unwrap_or_default();
            (current != file.contents).then(|| (file.path.clone(), short_diff(&current, &file.contents, &file.path)))
        })
        .collect()
}

fn short_diff(old: &str, new: &str, path: &Path) -> String {
    const MAX_LINES: usize = 40;
    let name = path.display().to_string();
    let diff = similar::TextDiff::from_lines(old, new);
    let text = diff
        .unified_diff()
        .context_radius(2)
        .header(&format!("{name} (checked in)"), &format!("{name} (regen)"))
        .to_string();
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= MAX_LINES {
        text
    } else {
        format!(
            "{}\n... ({} more diff lines)\n",
            lines[..MAX_LINES].join("\n"),
            lines.len() - MAX_LINES
        )
    }
}

/// The API change of the generated types, from the checked-in snapshot to the one regen
/// would write: one line per item, classed additive or breaking, then a summary line.
/// Empty when nothing changed.
pub fn api_change_report(root: &Path, files: &[GeneratedFile]) -> Vec<String> {
    let Some(new) = files.iter().find(|f| f.path == Path::new(API_SNAPSHOT)) else {
        return Vec::new();
    };
    let Ok(old) = fs::read_to_string(root.join(API_SNAPSHOT)) else {
        return vec![format!(
            "  (no snapshot at {API_SNAPSHOT} yet: this run writes the first one)"
        )];
    };
    let strip = |text: &str| {
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let changes = pilotage_codegen::api::diff(&strip(&old), &strip(&new.contents));
    if changes.is_empty() {
        return Vec::new();
    }
    let mut lines: Vec<String> = changes.iter().map(|c| format!("  {c}")).collect();
    lines.push(format!("regen: {}", pilotage_codegen::api::summary(&changes)));
    lines
}

fn report_api_change(root: &Path, files: &[GeneratedFile]) {
    let lines = api_change_report(root, files);
    if !lines.is_empty() {
        println!("regen: the public API of the generated types changes ({API_SNAPSHOT}):");
        for line in lines {
            println!("{line}");
        }
    }
}

struct Options {
    check: bool,
    schema: PathBuf,
}

fn parse_options(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        check: false,
        schema: PathBuf::from(PILOTAGE_SCHEMA),
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--check" => options.check = true,
            "--schema" => {
                let path = args.next().ok_or("--schema needs a PATH")?;
                options.schema = PathBuf::from(path);
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(options)
}

/// `cargo xtask regen [--check] [--schema PATH]`.
pub fn main(args: &[String]) -> ExitCode {
    let options = match parse_options(args) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("error: {message}\nusage: cargo xtask regen [--check] [--schema PATH]");
            return ExitCode::from(2);
        }
    };
    let root = workspace_root();
    // A relative --schema is taken from the current directory, as a user expects.
    let schema = std::env::current_dir()
        .map(|cwd| cwd.join(&options.schema))
        .unwrap_or(options.schema);
    let files = match generate_all(&root, &schema) {
        Ok(files) => files,
        Err(RegenError(message)) => {
            eprintln!("error: {message}\nno file was written");
            return ExitCode::from(1);
        }
    };
    let drifted = drift(&root, &files);
    report_api_change(&root, &files);
    if options.check {
        if drifted.is_empty() {
            println!("regen --check: {} generated file(s) up to date", files.len());
            return ExitCode::SUCCESS;
        }
        for (path, diff) in &drifted {
            eprintln!("{} is out of date:\n{diff}", path.display());
        }
        eprintln!(
            "{} generated file(s) differ from what regen writes: run `cargo xtask regen`",
            drifted.len()
        );
        return ExitCode::from(1);
    }
    if drifted.is_empty() {
        println!("regen: {} generated file(s), all unchanged", files.len());
        return ExitCode::SUCCESS;
    }
    let writes: Vec<(PathBuf, &[u8])> = drifted
        .iter()
        .map(|(path, _)| {
            let file = files
                .iter()
                .find(|f| &f.path == path)
                .expect("drifted files come from `files`");
            (root.join(path), file.contents.as_bytes())
        })
        .collect();
    if let Err(e) = write_all_atomically(&writes) {
        eprintln!(
            "error: cannot write the generated files: {e}
no generated file was changed"
        );
        return ExitCode::from(1);
    }
    for (path, _) in &drifted {
        println!("regen: wrote {}", path.display());
    }
    println!("regen: {} of {} generated file(s) changed", drifted.len(), files.len());
    ExitCode::SUCCESS
}
