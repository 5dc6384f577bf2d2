//! Generates validators for every group of the official JSON-Schema-Test-Suite (see the
//! crate docs). A group the generator refuses is recorded with its error (the test counts it
//! as failed); generation never stops the build.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use pilotage_codegen::validators::{generate_with, Draft, Options};
use serde_json::Value;

const DRAFTS: &[(&str, Draft)] = &[("draft2020-12", Draft::Draft2020), ("draft7", Draft::Draft7)];

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
    path.strip_prefix(base).unwrap_or(path).to_string_lossy().replace('\\', "/")
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
        code.push_str("/// Where the suite was read from (`None`: it was not found).\npub const SUITE: Option<&str> = None;\n");
        code.push_str("/// Every group of the suite.\npub static GROUPS: &[Group] = &[];\n");
        std::fs::write(&out, code).expect("OUT_DIR is writable");
        return;
    }
    let suite = suite.canonicalize().unwrap_or(suite);
    let mut remotes = Vec::new();
    let mut remote_files = Vec::new();
    json_files(&suite.join("remotes"), &mut remote_files);
    for path in &remote_files {
        let rel = relative(path, &suite.join("remotes"));
        if let Some(value) = std::fs::read(path).ok().and_then(|b| serde_json::from_slice::<Value>(&b).ok()) {
            remotes.push((format!("http://localhost:1234/{rel}"), format!("remotes/{rel}"), value));
        }
    }
    let _ = writeln!(code, "/// Where the suite was read from (`None`: it was not found).\npub const SUITE: Option<&str> = Some({:?});", suite.display().to_string());
    let mut entries = String::new();
    let mut modules = String::new();
    let mut n = 0usize;
    for (draft_dir, draft) in DRAFTS {
        let base = suite.join("tests").join(draft_dir);
        let mut files = Vec::new();
        json_files(&base, &mut files);
        for path in files {
            let rel = relative(&path, &base);
            let Some(groups) = std::fs::read(&path).ok().and_then(|b| serde_json::from_slice::<Vec<Value>>(&b).ok()) else {
                continue;
            };
            for (index, group) in groups.iter().enumerate() {
                let schema = group.get("schema").cloned().unwrap_or(Value::Bool(true));
                let mut options = Options::new().default_draft(*draft);
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
                let (check, refused) = match generated {
                    Ok(Ok(validators)) => {
                        let module = format!("g{n}");
                        let root = validators.checks.get(".").expect("the root was asked for").to_string();
                        let _ = writeln!(
                            modules,
                            "#[allow(unused, clippy::all, clippy::pedantic, non_snake_case)]\nmod {module} {{\n{}\n}}",
                            validators.tokens
                        );
                        (format!("Some({module}::{root})"), "None".to_owned())
                    }
                    Ok(Err(error)) => ("None".to_owned(), format!("Some({:?})", error.to_string())),
                    Err(_) => ("None".to_owned(), format!("Some({:?})", format!("{name}: the generator panicked"))),
                };
                let _ = writeln!(
                    entries,
                    "    Group {{ draft: {draft_dir:?}, file: {rel:?}, index: {index}, check: {check}, refused: {refused} }},"
                );
                n += 1;
            }
        }
    }
    let _ = writeln!(code, "/// Every group of the suite.\npub static GROUPS: &[Group] = &[\n{entries}];\n{modules}");
    std::fs::write(&out, code).expect("OUT_DIR is writable");
}
