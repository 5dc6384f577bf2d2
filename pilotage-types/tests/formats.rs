//! The `format` checkers (`pilotage_types::validate::format`) against the official JSON Schema
//! Test Suite: every test of `tests/draft7/optional/format/*.json` and
//! `tests/draft2020-12/optional/format/*.json` whose group schema is exactly
//! `{"$schema"?: ..., "format": NAME}` with a format JSON Schema defines, and whose data is a
//! string, must get the suite's verdict from the format's free function (what generated
//! validators call: `format::date_time`, ..., `format::idn::hostname`) and from `Format::check`.
//! Data of other types is not checked (generated validators check strings only); groups of
//! another form, or of an unknown format, are listed in the summary, so nothing is skipped
//! silently.
//!
//! Every mismatch is collected, and the test fails with the whole list. The suite is read in
//! place from `$JSON_SCHEMA_TEST_SUITE`, by default `<workspace>/../shared/json-schema-test-suite`;
//! without it the test prints `SKIPPED:` (and fails under `CI=true`).
//!
//! For information only, the test also prints where the `jsonschema` crate (format validation
//! on, the file's draft) disagrees with the suite (`cargo test --test formats -- --nocapture`).

use std::path::{Path, PathBuf};

use pilotage_types::validate::format::{self, Format};
use serde_json::Value;

/// The free function a generated validator calls for `format`.
fn free_function(format: Format) -> fn(&str) -> bool {
    match format {
        Format::Date => format::date,
        Format::DateTime => format::date_time,
        Format::Time => format::time,
        Format::Duration => format::duration,
        Format::Email => format::email,
        Format::Hostname => format::hostname,
        Format::Ipv4 => format::ipv4,
        Format::Ipv6 => format::ipv6,
        Format::Uri => format::uri,
        Format::UriReference => format::uri_reference,
        Format::Iri => format::iri,
        Format::IriReference => format::iri_reference,
        Format::UriTemplate => format::uri_template,
        Format::JsonPointer => format::json_pointer,
        Format::RelativeJsonPointer => format::relative_json_pointer,
        Format::Regex => format::regex,
        Format::Uuid => format::uuid,
        Format::IdnHostname => format::idn::hostname,
        Format::IdnEmail => format::idn::email,
    }
}

/// `Format::check` is the free function, for every format.
#[test]
fn format_check_is_the_free_function() {
    for &format in Format::ALL {
        let function = free_function(format);
        for s in [
            "",
            "example.com",
            "2024-02-29",
            "xn--bcher-kva.de",
            "a@b.c",
            "/a~0",
            "bücher.de",
        ] {
            assert_eq!(format.check(s), function(s), "{format} {s:?}");
        }
    }
}

fn suite_root() -> Option<PathBuf> {
    let root = match std::env::var_os("JSON_SCHEMA_TEST_SUITE") {
        Some(path) => PathBuf::from(path),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/json-schema-test-suite"),
    };
    if root.join("tests").is_dir() {
        return Some(root);
    }
    let message = format!(
        "the JSON Schema Test Suite is not at {} (set JSON_SCHEMA_TEST_SUITE): the format checkers were not run against it",
        root.display()
    );
    if std::env::var("CI").is_ok_and(|ci| ci == "true") {
        panic!("{message}");
    }
    eprintln!("SKIPPED: {message}");
    None
}

/// The format a group's schema asserts, if the schema is exactly `{"$schema"?, "format"}`.
fn format_of(schema: &Value) -> Result<Format, String> {
    let Value::Object(object) = schema else {
        return Err(format!("schema {schema} is not an object"));
    };
    if object.keys().any(|k| k != "$schema" && k != "format") {
        return Err(format!("schema {schema} has other keywords"));
    }
    let Some(Value::String(name)) = object.get("format") else {
        return Err(format!("schema {schema} has no string format"));
    };
    Format::from_name(name).ok_or_else(|| format!("unknown format {name:?}"))
}

#[derive(Default)]
struct Tally {
    files: usize,
    groups: usize,
    checked: usize,
    non_string: usize,
    mismatches: usize,
    jsonschema_differs: usize,
    not_checked: Vec<String>,
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

#[test]
fn official_suite_optional_format_tests() {
    let Some(root) = suite_root() else { return };
    let drafts = [
        ("draft7", jsonschema::Draft::Draft7),
        ("draft2020-12", jsonschema::Draft::Draft202012),
    ];
    let mut mismatches: Vec<String> = Vec::new();
    let mut information: Vec<String> = Vec::new();
    let mut summary: Vec<String> = Vec::new();
    for (draft, jsonschema_draft) in drafts {
        let dir = root.join("tests").join(draft).join("optional/format");
        let files = json_files(&dir);
        assert!(!files.is_empty(), "no format tests in {}", dir.display());
        let mut tally = Tally::default();
        for path in files {
            tally.files += 1;
            let file = path.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_owned();
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            let groups: Vec<Value> =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
            for group in &groups {
                tally.groups += 1;
                let description = group["description"].as_str().unwrap_or("?");
                let format = match format_of(&group["schema"]) {
                    Ok(format) => format,
                    Err(why) => {
                        tally.not_checked.push(format!("{file}: {description:?}: {why}"));
                        continue;
                    }
                };
                let oracle = jsonschema::options()
                    .with_draft(jsonschema_draft)
                    .should_validate_formats(true)
                    .build(&group["schema"])
                    .map_err(|e| e.to_string());
                for test in group["tests"].as_array().into_iter().flatten() {
                    let Value::String(data) = &test["data"] else {
                        tally.non_string += 1;
                        continue;
                    };
                    let expected = test["valid"].as_bool().expect("a test has a boolean `valid`");
                    let test_description = test["description"].as_str().unwrap_or("?");
                    let function = free_function(format);
                    tally.checked += 1;
                    let verdict = function(data);
                    if verdict != expected || format.check(data) != verdict {
                        tally.mismatches += 1;
                        mismatches.push(format!(
                            "{draft}/{file}: {description:?} / {test_description:?}: data {data:?}, expected {}, \
                             the function says {verdict}, Format::check {}",
                            if expected { "valid" } else { "invalid" },
                            format.check(data),
                        ));
                    }
                    match &oracle {
                        Ok(validator) if validator.is_valid(&test["data"]) == expected => {}
                        Ok(_) => {
                            tally.jsonschema_differs += 1;
                            information.push(format!(
                                "{draft}/{file}: {test_description:?}: data {data:?}: the suite says {}, jsonschema {}",
                                if expected { "valid" } else { "invalid" },
                                if expected { "invalid" } else { "valid" },
                            ));
                        }
                        Err(e) => {
                            information.push(format!("{draft}/{file}: jsonschema does not compile the schema: {e}"))
                        }
                    }
                }
            }
        }
        summary.push(format!(
            "{draft}: {} files, {} groups, {} string tests checked, {} mismatches; {} non-string tests not checked; \
             jsonschema differs from the suite on {}; \
             groups not checked: {}",
            tally.files,
            tally.groups,
            tally.checked,
            tally.mismatches,
            tally.non_string,
            tally.jsonschema_differs,
            if tally.not_checked.is_empty() {
                "none".to_owned()
            } else {
                tally.not_checked.join("; ")
            }
        ));
        assert!(tally.checked > 0, "{draft}: no string test checked");
    }
    if !information.is_empty() {
        eprintln!(
            "info: the workspace builds jsonschema without its `idna` feature, so it does not assert \
             idn-hostname and idn-email (it accepts every string)"
        );
    }
    for line in &information {
        eprintln!("info (jsonschema, not a failure): {line}");
    }
    for line in &summary {
        eprintln!("{line}");
    }
    assert!(
        mismatches.is_empty(),
        "{} format tests of the suite get the wrong verdict:\n  {}",
        mismatches.len(),
        mismatches.join("\n  ")
    );
}
