//! The installable `pilotage` binary dispatches to `lint` and `validate` with their exit codes.

use std::process::Command;

fn pilotage(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_pilotage"))
        .args(args)
        .output()
        .expect("pilotage runs")
}

#[test]
fn dispatches_and_reports_usage() {
    assert_eq!(pilotage(&[]).status.code(), Some(2));
    assert_eq!(pilotage(&["frobnicate"]).status.code(), Some(2));
    let help = pilotage(&["--help"]);
    assert!(help.status.success());
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("validate") && help.contains("lint"), "{help}");
    assert!(pilotage(&["validate", "--help"]).status.success());
    assert!(pilotage(&["--version"]).status.success());
    let lint = pilotage(&["lint"]);
    assert_eq!(lint.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&lint.stderr);
    assert!(
        stderr.contains("required") && stderr.contains("--tools <FILE>"),
        "{stderr}"
    );
    let dir = std::env::temp_dir().join(format!("pilotage-bin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("retention.json");
    std::fs::write(&file, "\"PT1H\"").unwrap();
    let validate = pilotage(&["validate", "Retention", file.to_str().unwrap()]);
    assert!(validate.status.success());
    assert_eq!(
        String::from_utf8_lossy(&validate.stdout),
        format!("{}: valid\n", file.display())
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn codegen_writes_a_module_checks_drift_and_names_a_bad_schema() {
    let dir = std::env::temp_dir().join(format!("pilotage-cli-codegen-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let schema = dir.join("thing.schema.json");
    std::fs::write(
        &schema,
        r#"{"$defs": {"Thing": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}}}"#,
    )
    .unwrap();
    let out = dir.join("out");
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_pilotage"))
            .arg("codegen")
            .args(args)
            .output()
            .unwrap()
    };
    let (schema_arg, out_arg) = (schema.display().to_string(), out.display().to_string());
    let written = run(&["--out", &out_arg, &schema_arg]);
    assert!(written.status.success(), "{}", String::from_utf8_lossy(&written.stderr));
    let code = std::fs::read_to_string(out.join("thing.rs")).unwrap();
    assert!(
        code.contains("pub mod thing {") && code.contains("pub fn new("),
        "{code}"
    );
    let check = run(&["--check", "--out", &out_arg, &schema_arg]);
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stdout));
    std::fs::write(out.join("thing.rs"), "// edited by hand\n").unwrap();
    let drift = run(&["--check", "--out", &out_arg, &schema_arg]);
    assert_eq!(drift.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&drift.stdout).contains("thing.rs: differs"));
    std::fs::write(&schema, r##"{"$defs": {"Thing": {"$ref": "#/$defs/Missing"}}}"##).unwrap();
    let bad = run(&["--out", &out_arg, &schema_arg]);
    assert_eq!(bad.status.code(), Some(2));
    let message = String::from_utf8_lossy(&bad.stderr);
    assert!(
        message.contains("thing.schema.json") && message.contains("/$defs/Thing"),
        "{message}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("thing.rs")).unwrap(),
        "// edited by hand\n",
        "left intact"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--out FILE.rs` puts every module in one file; the schemas of one command are a set, and
/// `--map` adds a document by URI: nothing is left "any value", so no warning; an unmapped
/// document is warned about; a bad `--map` or `--draft` is a usage error.
#[test]
fn codegen_writes_one_file_for_a_schema_set() {
    let dir = std::env::temp_dir().join(format!("pilotage-cli-codegen-set-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let a = dir.join("a.schema.json");
    let b = dir.join("b.schema.json");
    let c = dir.join("c.json");
    std::fs::write(
        &a,
        r#"{"$defs": {"A": {"type": "object", "properties": {"b": {"$ref": "b.schema.json#/$defs/B"}, "c": {"$ref": "urn:example:c"}}}}}"#,
    )
    .unwrap();
    std::fs::write(&b, r#"{"$defs": {"B": {"type": "integer", "maximum": 2.0}}}"#).unwrap();
    std::fs::write(
        &c,
        r#"{"$schema": "http://json-schema.org/draft-07/schema#", "type": "string", "format": "ipv4"}"#,
    )
    .unwrap();
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_pilotage"))
            .arg("codegen")
            .args(args)
            .output()
            .unwrap()
    };
    let file = dir.join("types.rs");
    let (a_arg, b_arg, file_arg) = (
        a.display().to_string(),
        b.display().to_string(),
        file.display().to_string(),
    );
    let map = format!("urn:example:c={}", c.display());
    let written = run(&["--out", &file_arg, "--map", &map, &a_arg, &b_arg]);
    let stderr = String::from_utf8_lossy(&written.stderr);
    assert!(written.status.success(), "{stderr}");
    assert!(!stderr.contains("unresolved"), "every reference resolved: {stderr}");
    let code = std::fs::read_to_string(&file).unwrap();
    assert!(code.contains("pub mod a {") && code.contains("pub mod b {"), "{code}");
    assert!(
        code.contains("format::ipv4"),
        "the mapped draft-07 document asserts its format: {code}"
    );
    assert!(dir.join("a.schema.json").exists() && dir.join("b.schema.json").exists());
    let check = run(&["--check", "--out", &file_arg, "--map", &map, &a_arg, &b_arg]);
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stdout));
    let unmapped = run(&["--out", &file_arg, &a_arg, &b_arg]);
    assert!(unmapped.status.success());
    assert!(
        String::from_utf8_lossy(&unmapped.stderr).contains("urn:example:c"),
        "an unresolved document is warned about"
    );
    assert_eq!(run(&["--map", "nothing", &a_arg]).status.code(), Some(2));
    assert_eq!(run(&["--draft", "5", &a_arg]).status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}
