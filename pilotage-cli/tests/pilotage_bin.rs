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
