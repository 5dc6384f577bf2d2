//! Generates validators for every group of the official JSON-Schema-Test-Suite (see the
//! crate docs). A group the generator refuses is recorded with its error (the test counts it
//! as failed); generation never stops the build.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use pilotage_codegen::validators::{generate_with, Draft, Options, Tuning};
use serde_json::Value;

/// Every draft the generator accepts, each with its whole official suite (required and
/// `optional/` files, formats asserted in `optional/format/`).
const DRAFTS: &[(&str, Draft)] = &[
    ("draft2020-12", Draft::Draft2020),
    ("draft2019-09", Draft::Draft2019),
    ("draft7", Draft::Draft7),
    ("draft6", Draft::Draft6),
    ("draft4", Draft::Draft4),
];

/// This crate's own cases, in the suite's format, for what the suite here does not cover
/// (draft 2019-09: `$recursiveRef`, array-form `items`, ...; draft-04 and -06's differences).
const OWN: &[(&str, Draft, &str)] = &[
    ("draft2019-09", Draft::Draft2019, "cases/draft2019-09.json"),
    ("draft4", Draft::Draft4, "cases/draft4.json"),
];

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            json_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}

fn relative(path: &Path, base: &Path) -> String {
    path.strip_prefix(base)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    println!("cargo:rerun-if-env-changed=JSON_SCHEMA_TEST_SUITE");
    let suite = std::env::var_os("JSON_SCHEMA_TEST_SUITE")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../../../shared/json-schema-test-suite"));
    println!("cargo:rerun-if-changed={}", suite.display());
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("suite.rs");
    let mut code = String::new();
    if !suite.join("tests").is_dir() {
        code.push_str(
            "/// Where the suite was read from (`None`: it was not found).\npub const SUITE: Option<&str> = None;\n",
        );
        code.push_str("/// Every group of the suite.\npub static GROUPS: &[Group] = &[];\n");
        code.push_str(
            "/// How many schema locations got a check function of their own.\npub const LOCATIONS: usize = 0;\n",
        );
        std::fs::write(&out, code).expect("OUT_DIR is writable");
        return;
    }
    let suite = suite.canonicalize().unwrap_or(suite);
    let mut remotes = Vec::new();
    let mut remote_files = Vec::new();
    json_files(&suite.join("remotes"), &mut remote_files);
    for path in &remote_files {
        let rel = relative(path, &suite.join("remotes"));
        if let Some(value) = std::fs::read(path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        {
            remotes.push((format!("http://localhost:1234/{rel}"), format!("remotes/{rel}"), value));
        }
    }
    let _ = writeln!(
        code,
        "/// Where the suite was read from (`None`: it was not found).\npub const SUITE: Option<&str> = Some({:?});",
        suite.display().to_string()
    );
    let mut entries = String::new();
    let mut modules = String::new();
    let mut n = 0usize;
    let mut locations = 0usize;
    let mut functions = 0usize;
    let started = std::time::Instant::now();
    let mut sources: Vec<(&str, Draft, PathBuf, PathBuf)> = Vec::new();
    for (draft_dir, draft) in DRAFTS {
        let base = suite.join("tests").join(draft_dir);
        let mut files = Vec::new();
        json_files(&base, &mut files);
        for path in files {
            sources.push((draft_dir, *draft, base.clone(), path));
        }
    }
    for (draft_dir, draft, file) in OWN {
        println!("cargo:rerun-if-changed={file}");
        sources.push((draft_dir, *draft, manifest.clone(), manifest.join(file)));
    }
    for (draft_dir, draft, base, path) in sources {
        {
            let rel = relative(&path, &base);
            let Some(groups) = std::fs::read(&path)
                .ok()
                .and_then(|b| serde_json::from_slice::<Vec<Value>>(&b).ok())
            else {
                continue;
            };
            for (index, group) in groups.iter().enumerate() {
                let schema = group.get("schema").cloned().unwrap_or(Value::Bool(true));
                // 1,769 schema sets in one crate, each run on a few instances: tuned for many
                // sets (shared steps through an object's members; README, "Many schema sets
                // in one crate").
                let mut options = Options::new().default_draft(draft).tuning(Tuning::ManySets);
                if rel.starts_with("optional/format/") {
                    // The suite's format files are written for format assertion.
                    options = options.assert_formats(true);
                }
                for (uri, file, value) in &remotes {
                    options = options.document(uri.clone(), file.clone(), value.clone());
                }
                let name = format!("{draft_dir}/{rel}#{index}");
                let schema = match schema {
                    // A boolean schema: the generator takes documents, so it is wrapped.
                    Value::Bool(true) => serde_json::json!({}),
                    Value::Bool(false) => serde_json::json!({"not": {}}),
                    other => other,
                };
                let generated = std::panic::catch_unwind(|| generate_with(&schema, &name, true, &options));
                let (check, stream, refused) = match generated {
                    Ok(Ok(validators)) => {
                        locations += validators.locations;
                        functions += validators.functions;
                        let module = format!("g{n}");
                        let root = validators.checks.get(".").expect("the root was asked for").to_string();
                        let _ = writeln!(
                            modules,
                            "#[allow(unused, clippy::all, clippy::pedantic, non_snake_case)]\nmod {module} {{\n{}\n}}",
                            validators.tokens
                        );
                        let stream = match validators.streams.get(".") {
                            Some(node) => format!(
                                "Some(pilotage_types::validate::stream::Stream::new({module}::STREAM_PROGRAM, {node}))"
                            ),
                            None => "None".to_owned(),
                        };
                        (
                            format!("Some(pilotage_types::validate::runtime::Check::new({module}::{root}, {module}::{root}))"),
                            stream,
                            "None".to_owned(),
                        )
                    }
                    Ok(Err(error)) => (
                        "None".to_owned(),
                        "None".to_owned(),
                        format!("Some({:?})", error.to_string()),
                    ),
                    Err(_) => (
                        "None".to_owned(),
                        "None".to_owned(),
                        format!("Some({:?})", format!("{name}: the generator panicked")),
                    ),
                };
                let _ = writeln!(
                    entries,
                    "    Group {{ draft: {draft_dir:?}, file: {rel:?}, path: {:?}, index: {index}, check: {check}, stream: {stream}, refused: {refused} }},",
                    path.display().to_string()
                );
                n += 1;
            }
        }
    }
    let _ = writeln!(
        code,
        "/// Every group of the suite.\npub static GROUPS: &[Group] = &[\n{entries}];\n{modules}"
    );
    let _ = writeln!(code, "/// How many schema locations got a check function of their own, over every group.\npub const LOCATIONS: usize = {locations};");
    // For BENCHMARKS.md: how long generation took, apart from compiling what it wrote.
    let _ = std::fs::write(
        out.with_file_name("generation.txt"),
        format!(
            "{n} groups, {locations} schema locations, {functions} functions, generated in {:.2} s\n",
            started.elapsed().as_secs_f64()
        ),
    );
    std::fs::write(&out, code).expect("OUT_DIR is writable");
}
