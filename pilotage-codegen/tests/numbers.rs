//! Numbers keep their form in the types of any schema (`postpass::json_numbers`): over every
//! group of the official JSON Schema Test Suite (every draft, required and `optional/`) whose
//! schema types something `number`, the generated types hold no `f64` or `f32` anywhere a value
//! is stored (fields, variants, newtypes, collections), only `pilotage_types::Number`, which
//! writes `2` as `2` and `2.0` as `2.0` (its round trips: `pilotage-types/src/number.rs`; the
//! compiled round trips of every place a number takes: `tests/codegen-builder`,
//! `numbers_round_trip_as_written`).
//!
//! The suite is read in place from `$JSON_SCHEMA_TEST_SUITE`, by default
//! `<workspace>/../shared/json-schema-test-suite`; without it the test prints `SKIPPED:` (and
//! fails under `CI=true`).

use std::path::{Path, PathBuf};

use pilotage_codegen::validators::{Draft, Options};
use pilotage_codegen::{generate_types, TypesSettings};
use serde_json::Value;

fn suite() -> Option<PathBuf> {
    let root = match std::env::var_os("JSON_SCHEMA_TEST_SUITE") {
        Some(path) => PathBuf::from(path),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/json-schema-test-suite"),
    };
    if root.join("tests").is_dir() {
        return Some(root);
    }
    let message = format!(
        "the JSON Schema Test Suite is not at {} (set JSON_SCHEMA_TEST_SUITE)",
        root.display()
    );
    if std::env::var("CI").is_ok_and(|ci| ci == "true") {
        panic!("{message}");
    }
    eprintln!("SKIPPED: {message}");
    None
}

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

/// Whether `schema` says `"type": "number"` (alone or in a list) anywhere.
fn types_a_number(schema: &Value) -> bool {
    match schema {
        Value::Object(object) => {
            let here = match object.get("type") {
                Some(Value::String(t)) => t == "number",
                Some(Value::Array(types)) => types.iter().any(|t| t == "number"),
                _ => false,
            };
            here || object.values().any(types_a_number)
        }
        Value::Array(items) => items.iter().any(types_a_number),
        _ => false,
    }
}

/// Every field and variant type of a generated file that is (or holds) `f64` / `f32`, and
/// how many hold a `pilotage_types::Number`.
#[derive(Default)]
struct Floats {
    found: Vec<String>,
    numbers: usize,
}

impl Floats {
    fn fields<'a>(&mut self, fields: impl IntoIterator<Item = &'a syn::Field>) {
        for field in fields {
            let text = quote::quote!(#field).to_string();
            if text
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .any(|w| w == "f64" || w == "f32")
            {
                self.found.push(text.clone());
            }
            if text.contains("pilotage_types :: Number") {
                self.numbers += 1;
            }
        }
    }

    fn items(&mut self, items: &[syn::Item]) {
        for item in items {
            match item {
                syn::Item::Struct(s) => self.fields(&s.fields),
                syn::Item::Enum(e) => {
                    for variant in &e.variants {
                        self.fields(&variant.fields);
                    }
                }
                syn::Item::Mod(m) => {
                    if let Some((_, inner)) = &m.content {
                        self.items(inner);
                    }
                }
                _ => {}
            }
        }
    }
}

#[test]
fn no_generated_type_of_the_suite_stores_a_number_as_a_float() {
    let Some(root) = suite() else { return };
    let drafts = [
        ("draft2020-12", Draft::Draft2020),
        ("draft2019-09", Draft::Draft2019),
        ("draft7", Draft::Draft7),
        ("draft6", Draft::Draft6),
        ("draft4", Draft::Draft4),
    ];
    let (mut generated, mut with_numbers, mut refused) = (0usize, 0usize, 0usize);
    let mut failures = Vec::new();
    for (dir, draft) in drafts {
        let mut files = Vec::new();
        json_files(&root.join("tests").join(dir), &mut files);
        for file in files {
            let Ok(groups) = serde_json::from_slice::<Vec<Value>>(&std::fs::read(&file).unwrap_or_default()) else {
                continue;
            };
            for (index, group) in groups.iter().enumerate() {
                let schema = &group["schema"];
                if !types_a_number(schema) {
                    continue;
                }
                let name = format!("{}#{index}", file.strip_prefix(&root).unwrap_or(&file).display());
                let settings = TypesSettings::new(name.clone()).with_validators(Options::new().default_draft(draft));
                let bytes = serde_json::to_vec(schema).expect("a Value serializes");
                // A schema without a root type the generator can name (`true`, a bare `$ref`
                // to a remote) is refused with a reason: not this test's concern.
                let Ok(types) = generate_types(&bytes, &settings) else {
                    refused += 1;
                    continue;
                };
                generated += 1;
                let file: syn::File = match syn::parse_str(&types.code) {
                    Ok(file) => file,
                    Err(e) => {
                        failures.push(format!("{name}: generated code does not parse: {e}"));
                        continue;
                    }
                };
                let mut floats = Floats::default();
                floats.items(&file.items);
                if floats.numbers > 0 {
                    with_numbers += 1;
                }
                for found in floats.found {
                    failures.push(format!("{name}: {found}"));
                }
            }
        }
    }
    eprintln!(
        "suite: {generated} groups typing a number generated ({with_numbers} with a Number member), {refused} refused"
    );
    assert!(
        failures.is_empty(),
        "numbers stored as floats:\n{}",
        failures.join("\n")
    );
    assert!(
        with_numbers >= 20,
        "only {with_numbers} of the suite's generated types hold a number: the walk lost them"
    );
}
