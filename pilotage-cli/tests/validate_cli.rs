//! `pilotage validate [--schema PATH] [--compatible] <DEF> <FILE>...` (also `cargo xtask
//! validate`), run as the installed binary: output format and exit statuses.

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output};

fn scratch(name: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pilotage-validate-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn validate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pilotage"))
        .arg("validate")
        .args(args)
        .output()
        .expect("pilotage runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn valid_and_invalid_files_with_one_line_per_violation() {
    let dir = scratch("verdicts");
    let valid = dir.join("valid.json");
    let invalid = dir.join("invalid.json");
    fs::write(
        &valid,
        r#"{"run_id": "r", "outcome": {"ok": true, "status": "success", "error": null}}"#,
    )
    .unwrap();
    fs::write(
        &invalid,
        r#"{"run_id": 7, "outcome": {"ok": true, "status": "success"}}"#,
    )
    .unwrap();

    let ok = validate(&["ExecuteResponse", valid.to_str().unwrap()]);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stderr));
    assert_eq!(text(&ok.stdout), format!("{}: valid\n", valid.display()));

    let bad = validate(&["ExecuteResponse", valid.to_str().unwrap(), invalid.to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(1));
    let stdout = text(&bad.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], format!("{}: valid", valid.display()));
    assert_eq!(lines[1], format!("{}: invalid", invalid.display()));
    let mut violations: Vec<&str> = lines[2..].to_vec();
    violations.sort();
    assert_eq!(
        violations,
        [
            "  /outcome: \"error\" is a required property",
            "  /run_id: 7 is not of type \"string\""
        ]
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unusable_input_exits_2_saying_which() {
    let dir = scratch("unusable");
    let file = dir.join("x.json");
    fs::write(&file, "{}").unwrap();
    let not_json = dir.join("broken.json");
    fs::write(&not_json, "{\"a\": ").unwrap();

    let unknown = validate(&["NoSuchDef", file.to_str().unwrap()]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(text(&unknown.stderr).contains("unknown definition `NoSuchDef`"));

    let broken = validate(&["Trace", not_json.to_str().unwrap()]);
    assert_eq!(broken.status.code(), Some(2));
    assert!(text(&broken.stderr).contains("broken.json: not JSON"));

    let missing = validate(&["Trace", dir.join("absent.json").to_str().unwrap()]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(text(&missing.stderr).contains("absent.json: cannot read"));

    let usage = validate(&["Trace"]);
    assert_eq!(usage.status.code(), Some(2));
    assert!(text(&usage.stderr).contains("<FILE>..."), "{}", text(&usage.stderr));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn another_schema_and_its_root() {
    let dir = scratch("schema");
    let schema = dir.join("s.json");
    fs::write(
        &schema,
        r#"{"type": "object", "required": ["a"], "$defs": {"N": {"type": "integer"}}}"#,
    )
    .unwrap();
    let number = dir.join("n.json");
    fs::write(&number, "3").unwrap();
    let s = schema.to_str().unwrap();
    assert_eq!(
        validate(&["--schema", s, "N", number.to_str().unwrap()]).status.code(),
        Some(0)
    );
    let root = validate(&["--schema", s, ".", number.to_str().unwrap()]);
    assert_eq!(root.status.code(), Some(1));
    assert!(
        text(&root.stdout).contains("  : 3 is not of type \"object\""),
        "{}",
        text(&root.stdout)
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_compatible_reading_accepts_a_later_enum_value_and_nothing_else() {
    let dir = scratch("compatible");
    let later = dir.join("later.json");
    fs::write(&later, r#"{"error": {"kind": "x_later_minor_kind", "message": "m"}}"#).unwrap();
    let missing = dir.join("missing.json");
    fs::write(&missing, r#"{"error": {"kind": "x_later_minor_kind"}}"#).unwrap();

    let pinned = validate(&["RequestError", later.to_str().unwrap()]);
    assert_eq!(pinned.status.code(), Some(1), "pinned: a later kind is invalid");
    assert!(text(&pinned.stdout).contains("/error/kind"), "{}", text(&pinned.stdout));

    let compatible = validate(&["--compatible", "RequestError", later.to_str().unwrap()]);
    assert_eq!(compatible.status.code(), Some(0), "{}", text(&compatible.stdout));
    assert_eq!(text(&compatible.stdout), format!("{}: valid\n", later.display()));

    let still = validate(&["--compatible", "RequestError", missing.to_str().unwrap()]);
    assert_eq!(still.status.code(), Some(1), "a missing member stays invalid");
    assert!(
        text(&still.stdout).contains("\"message\" is a required property"),
        "{}",
        text(&still.stdout)
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// A file with more violations than the list holds: the listed ones, then a line saying the
/// list stops there; the exit status is still 1.
#[test]
fn a_list_that_stops_short_says_so() {
    let dir = scratch("truncated");
    let file = dir.join("steps.json");
    // 200,000 wrong steps (about 150 bytes a violation: past the list's 16 MiB).
    let steps = vec!["1"; 200_000].join(",");
    fs::write(
        &file,
        format!(r#"{{"run_id": "r", "level": "full", "steps": [{steps}]}}"#),
    )
    .unwrap();
    let out = validate(&["Trace", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    assert!(last.starts_with("  ... and more violations, not listed"), "{last}");
    let listed = stdout.lines().filter(|line| line.starts_with("  /steps/")).count();
    assert!(listed > 50_000 && listed < 200_000, "{listed} listed");
}
