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
