//! The official JSON-Schema-Test-Suite through the generated validators: every test of every
//! draft (2020-12, 2019-09, draft-07, draft-06, draft-04), required and `optional/`, must pass (a group the generator refused
//! counts as failed), in both evaluation modes (stop at the first violation, collect all). The
//! same tests are run through jsonschema, and the README's table of both is checked against
//! what this run measured (`PILOTAGE_BLESS=1` rewrites it).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod common;

use common::{jsonschema_verdicts, remotes};
use pilotage_json_schema_suite::{GROUPS, SUITE};
use serde_json::Value;

#[derive(Default, Clone, Copy)]
struct Count {
    tests: usize,
    ours: usize,
    refused: usize,
    jsonschema: usize,
}

fn readme() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md")
}

const BEGIN: &str = "<!-- json-schema-test-suite: begin (tests/json-schema-suite; PILOTAGE_BLESS=1 rewrites) -->";
const END: &str = "<!-- json-schema-test-suite: end -->";

/// Where the suite was read from; without it, a failure under `CI=true`, else `None` after saying
/// loudly what was skipped (`skipped`: what that means for the test).
fn suite_or_skip(skipped: &str) -> Option<&'static str> {
    if SUITE.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "the JSON-Schema-Test-Suite is missing (../shared/json-schema-test-suite or $JSON_SCHEMA_TEST_SUITE), and CI=true"
        );
        eprintln!(
            "SKIPPED: the official JSON-Schema-Test-Suite was not found (../shared/json-schema-test-suite or $JSON_SCHEMA_TEST_SUITE); {skipped}"
        );
    }
    SUITE
}

#[test]
fn every_test_of_the_official_suite_passes() {
    let Some(suite) = suite_or_skip("nothing was checked") else {
        return;
    };
    let suite = Path::new(suite);
    let remotes = remotes(suite);
    let mut files: BTreeMap<(&str, &str), Vec<Value>> = BTreeMap::new();
    let mut failures = Vec::new();
    // (draft, first path component or file) -> counts
    let mut table: BTreeMap<(String, String), Count> = BTreeMap::new();
    for group in GROUPS {
        let groups = files.entry((group.draft, group.file)).or_insert_with(|| {
            let path = Path::new(group.path);
            serde_json::from_slice(&std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        });
        let data = &groups[group.index];
        let tests = data["tests"].as_array().expect("a group has tests");
        let theirs = jsonschema_verdicts(group, &data["schema"], tests, &remotes);
        let key = (group.draft.to_owned(), group.file.trim_end_matches(".json").to_owned());
        let count = table.entry(key).or_default();
        for (test, theirs) in tests.iter().zip(theirs) {
            let expected = test["valid"].as_bool().expect("a test says whether it is valid");
            count.tests += 1;
            count.jsonschema += usize::from(theirs == Some(expected));
            if theirs != Some(expected) && group.file.starts_with("cases/") {
                eprintln!(
                    "jsonschema differs on this crate's case {}/{} #{} {:?}: {theirs:?}",
                    group.draft,
                    group.file,
                    group.index,
                    test["description"].as_str().unwrap_or("")
                );
            }
            let what = format!(
                "{}/{} #{} {:?} / {:?}",
                group.draft,
                group.file,
                group.index,
                data["description"].as_str().unwrap_or(""),
                test["description"].as_str().unwrap_or("")
            );
            let Some(check) = group.check else {
                count.refused += 1;
                failures.push(format!("{what}: refused: {}", group.refused.unwrap_or("?")));
                continue;
            };
            let stop = pilotage_types::validate::verdict(check, &test["data"], false);
            let collected = pilotage_types::validate::run(".", check, &test["data"], false).is_ok();
            if stop == expected && collected == expected {
                count.ours += 1;
            } else {
                failures.push(format!(
                    "{what}: expected {expected}, got {stop} (collecting all: {collected}); data {}",
                    test["data"]
                ));
            }
        }
    }
    let rendered = render(&table);
    eprintln!("{rendered}");
    let readme_path = readme();
    let text = std::fs::read_to_string(&readme_path).expect("the README is readable");
    let current = text
        .split_once(BEGIN)
        .and_then(|(_, rest)| rest.split_once(END))
        .map(|(table, _)| table.trim().to_owned());
    if current.as_deref() != Some(rendered.trim()) {
        if std::env::var("PILOTAGE_BLESS").as_deref() == Ok("1") {
            let (head, rest) = text.split_once(BEGIN).expect("the README has the table's markers");
            let (_, tail) = rest.split_once(END).expect("the README has the table's end marker");
            std::fs::write(&readme_path, format!("{head}{BEGIN}\n{}\n{END}{tail}", rendered.trim())).unwrap();
        } else {
            failures.push(format!(
                "the README's suite table differs from this run (PILOTAGE_BLESS=1 rewrites it):\n{rendered}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures of the official JSON-Schema-Test-Suite:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// This crate's own cases that list the violations collecting every one must report (a
/// test's `violations`: each `[instance pointer, schema pointer, message]`, in order) report
/// exactly those: which required members are missing is read from a pick, or from the bits a
/// pass sets, rather than from lookups of each name, and must still name each missing one once.
#[test]
fn own_cases_report_the_violations_they_list() {
    if suite_or_skip("no group was generated, so nothing was checked").is_none() {
        return;
    }
    let mut files: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    let (mut checked, mut failures) = (0usize, Vec::new());
    for group in GROUPS.iter().filter(|group| group.file.starts_with("cases/")) {
        let groups = files.entry(group.path).or_insert_with(|| {
            serde_json::from_slice(&std::fs::read(group.path).expect("the case file is readable"))
                .expect("the case file is JSON")
        });
        let data = &groups[group.index];
        for test in data["tests"].as_array().expect("a group has tests") {
            let Some(listed) = test.get("violations") else { continue };
            let expected: Vec<[&str; 3]> = listed
                .as_array()
                .expect("`violations` is an array")
                .iter()
                .map(|v| {
                    let parts: Vec<&str> = v
                        .as_array()
                        .and_then(|parts| parts.iter().map(Value::as_str).collect())
                        .expect("a violation is three strings");
                    [parts[0], parts[1], parts[2]]
                })
                .collect();
            let check = group.check.expect("this crate's cases all generate");
            let reported: Vec<[String; 3]> = match pilotage_types::validate::run(".", check, &test["data"], false) {
                Ok(()) => Vec::new(),
                Err(errors) => errors
                    .violations
                    .into_iter()
                    .map(|v| [v.instance_pointer, v.schema_pointer, v.message])
                    .collect(),
            };
            checked += 1;
            if reported
                .iter()
                .map(|r| [r[0].as_str(), r[1].as_str(), r[2].as_str()])
                .ne(expected.iter().copied())
            {
                failures.push(format!(
                    "{} #{} {:?}: expected {expected:?}, reported {reported:?}",
                    group.file, group.index, test["description"]
                ));
            }
        }
    }
    assert!(checked >= 9, "only {checked} tests list their violations");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The README's table: per draft and per keyword file, the tests, ours and jsonschema's passes.
fn render(table: &BTreeMap<(String, String), Count>) -> String {
    let mut out = String::new();
    let mut totals: BTreeMap<(&str, &str), Count> = BTreeMap::new();
    for ((draft, file), count) in table {
        let part = if file.starts_with("optional/") {
            "optional"
        } else if file.starts_with("cases/") {
            "(this crate's own cases)"
        } else {
            "required"
        };
        let total = totals.entry((draft.as_str(), part)).or_default();
        total.tests += count.tests;
        total.ours += count.ours;
        total.refused += count.refused;
        total.jsonschema += count.jsonschema;
    }
    out.push_str("| draft | tests | pilotage (generated) | refused | jsonschema 0.61 |\n|---|---:|---:|---:|---:|\n");
    for ((draft, part), c) in &totals {
        out.push_str(&format!(
            "| {draft} {part} | {} | {} | {} | {} |\n",
            c.tests, c.ours, c.refused, c.jsonschema
        ));
    }
    out.push_str("\n<details><summary>Per keyword file</summary>\n\n| draft | file | tests | pilotage | jsonschema |\n|---|---|---:|---:|---:|\n");
    for ((draft, file), c) in table {
        out.push_str(&format!(
            "| {draft} | {file} | {} | {} | {} |\n",
            c.tests, c.ours, c.jsonschema
        ));
    }
    out.push_str("\n</details>");
    out
}

/// Validation fused into deserialization (`pilotage_types::validate::stream`) never gives a
/// verdict the generated checks do not give: over every test of every draft, read from a
/// `Value` and from the JSON text, each answer it gives (it may say it cannot decide) is the
/// checks' answer, in both readings. It must decide most tests (a program that always said
/// "unknown" would agree vacuously).
#[test]
fn stream_verdicts_agree_with_the_generated_checks() {
    use pilotage_types::validate::stream::{check_slice, check_value};
    if suite_or_skip("nothing was checked").is_none() {
        return;
    }
    let mut files: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    let (mut tests, mut decided, mut valid_decided) = (0usize, 0usize, 0usize);
    let mut disagreements = Vec::new();
    for group in GROUPS {
        let (Some(check), Some(stream)) = (group.check, group.stream) else {
            continue;
        };
        let groups = files.entry(group.path).or_insert_with(|| {
            serde_json::from_slice(&std::fs::read(group.path).expect("the suite file is readable"))
                .expect("the suite file is JSON")
        });
        let data = &groups[group.index];
        for test in data["tests"].as_array().expect("a group has tests") {
            let instance = &test["data"];
            let text = serde_json::to_vec(instance).expect("a Value serializes");
            for compatible in [false, true] {
                tests += 1;
                let expected = pilotage_types::validate::verdict(check, instance, compatible);
                let from_value = check_value(stream, compatible, instance);
                let from_text = check_slice(stream, compatible, &text);
                if from_value != from_text {
                    disagreements.push(format!(
                        "{}/{} #{} {:?} (compatible: {compatible}): from a Value {from_value:?}, from text {from_text:?}",
                        group.draft, group.file, group.index, test["description"]
                    ));
                }
                if let Some(answer) = from_value {
                    decided += 1;
                    valid_decided += usize::from(answer);
                    if answer != expected {
                        disagreements.push(format!(
                            "{}/{} #{} {:?} (compatible: {compatible}): the stream says {answer}, the checks {expected}; data {instance}",
                            group.draft, group.file, group.index, test["description"]
                        ));
                    }
                }
            }
        }
    }
    eprintln!(
        "stream program: {decided} of {tests} verdicts decided ({valid_decided} valid), the rest left to the checks"
    );
    assert!(
        disagreements.is_empty(),
        "{} disagreements between the stream program and the generated checks:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
    assert!(
        decided * 2 > tests,
        "the stream program decided only {decided} of {tests} verdicts"
    );
}
