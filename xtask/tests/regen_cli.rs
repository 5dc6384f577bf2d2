//! `cargo xtask regen` as a user runs it: bad schemas get exit status 1, one message naming
//! the file and the JSON Pointer, no panic text, and leave the generated files untouched;
//! `--check` reports drift; a schema with one more `$def` regenerates with that type.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// A scratch copy of the parts of the workspace regen reads and writes.
fn scratch_root(name: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("pilotage-regen-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&root);
    fs::create_dir_all(root.join("schemas")).unwrap();
    fs::create_dir_all(root.join("pilotage-types/src")).unwrap();
    fs::copy(
        workspace().join("schemas/pilotage.schema.json"),
        root.join("schemas/pilotage.schema.json"),
    )
    .unwrap();
    fs::copy(
        workspace().join("pilotage-types/src/generated.rs"),
        root.join("pilotage-types/src/generated.rs"),
    )
    .unwrap();
    // The API snapshot regen compares with.
    fs::copy(
        workspace().join("pilotage-types/generated-api.txt"),
        root.join("pilotage-types/generated-api.txt"),
    )
    .unwrap();
    // The name table regen reads.
    fs::create_dir_all(root.join("xtask/names")).unwrap();
    fs::copy(
        workspace().join("xtask/names/pilotage.json"),
        root.join("xtask/names/pilotage.json"),
    )
    .unwrap();
    // The peer schemas regen also reads.
    fs::create_dir_all(root.join("schemas/peers")).unwrap();
    for entry in fs::read_dir(workspace().join("schemas/peers")).unwrap() {
        let entry = entry.unwrap();
        fs::copy(entry.path(), root.join("schemas/peers").join(entry.file_name())).unwrap();
    }
    // And the schemas that test the validator generator.
    for (schema, _) in xtask::codegen::VALIDATOR_TEST_SCHEMAS {
        let target = root.join(schema);
        fs::create_dir_all(target.parent().unwrap()).unwrap();
        fs::copy(workspace().join(schema), target).unwrap();
    }
    root
}

fn regen(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("regen")
        .args(args)
        .env("PILOTAGE_WORKSPACE_ROOT", root)
        .current_dir(root)
        .output()
        .expect("xtask runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn generated(root: &Path) -> Vec<u8> {
    fs::read(root.join("pilotage-types/src/generated.rs")).unwrap()
}

fn assert_rejected(root: &Path, schema_text: &str, expected_in_message: &[&str]) {
    let schema = root.join("bad.schema.json");
    fs::write(&schema, schema_text).unwrap();
    let before = generated(root);
    let output = regen(root, &["--schema", "bad.schema.json"]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "exit status; stderr: {message}");
    assert!(!message.contains("panicked"), "panic text in: {message}");
    assert!(message.contains("bad.schema.json"), "file not named in: {message}");
    for expected in expected_in_message {
        assert!(message.contains(expected), "`{expected}` missing from: {message}");
    }
    assert_eq!(generated(root), before, "generated file changed");
}

#[test]
fn bad_schemas_fail_cleanly_and_touch_nothing() {
    let root = scratch_root("bad");
    let original = fs::read_to_string(root.join("schemas/pilotage.schema.json")).unwrap();
    // Truncated JSON.
    assert_rejected(&root, &original[..original.len() / 2], &["not valid JSON", "line"]);
    // A `$ref` to a missing `$def`.
    let missing = original.replacen("\"#/$defs/RiskHints\"", "\"#/$defs/NoSuchDef\"", 1);
    assert_rejected(
        &root,
        &missing,
        &["/$defs/CatalogEntry/properties/risk_hints/$ref", "#/$defs/NoSuchDef"],
    );
    // A schema whose validation would never end: it refers back to itself on the same instance
    // (refused with the pointer).
    let mut endless: serde_json::Value = serde_json::from_str(&original).unwrap();
    endless["$defs"]["Closed"] = serde_json::json!({"type": "object", "allOf": [{"$ref": "#/$defs/Closed"}]});
    assert_rejected(
        &root,
        &endless.to_string(),
        &["/$defs/Closed", "applies itself to the same value"],
    );
    // Not a schema document at all.
    assert_rejected(&root, "[1, 2]", &["must be a JSON object"]);
    fs::remove_dir_all(&root).unwrap();
}

#[test]
fn an_extra_def_is_drift_until_regen_adds_its_type() {
    let root = scratch_root("extra");
    let mut schema: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(root.join("schemas/pilotage.schema.json")).unwrap()).unwrap();
    schema["$defs"]["ExtraThing"] = serde_json::json!({"type": "object", "properties": {"a": {"type": "string"}}});
    fs::write(
        root.join("extra.schema.json"),
        serde_json::to_string_pretty(&schema).unwrap(),
    )
    .unwrap();

    let check = regen(&root, &["--check", "--schema", "extra.schema.json"]);
    assert_eq!(check.status.code(), Some(1));
    let message = stderr(&check);
    assert!(message.contains("pilotage-types/src/generated.rs"), "{message}");
    assert!(message.contains("run `cargo xtask regen`"), "{message}");

    let write = regen(&root, &["--schema", "extra.schema.json"]);
    assert!(write.status.success(), "{}", stderr(&write));
    assert!(String::from_utf8_lossy(&write.stdout).contains("wrote pilotage-types/src/generated.rs"));
    let code = String::from_utf8(generated(&root)).unwrap();
    assert!(code.contains("pub struct ExtraThing {"), "type not generated");
    assert!(code.contains("impl crate::SchemaDef for ExtraThing"));
    syn_like_balance(&code);

    let again = regen(&root, &["--check", "--schema", "extra.schema.json"]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(!root.join("pilotage-types/src").read_dir().unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .contains(".tmp")));
    fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_spec_bump_names_each_api_change_and_classes_it() {
    let root = scratch_root("bump");
    let path = root.join("bump.schema.json");
    let mut schema: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(root.join("schemas/pilotage.schema.json")).unwrap()).unwrap();
    let defs = &mut schema["$defs"];
    // Additive: a new definition, a new optional member, new values of open enums.
    defs["BumpProbe"] =
        serde_json::json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]});
    defs["Diagnostic"]["properties"]["bump_probe"] = serde_json::json!({"type": "string"});
    defs["RequestError"]["properties"]["error"]["properties"]["kind"]["enum"]
        .as_array_mut()
        .unwrap()
        .push("bump_probe_kind".into());
    defs["LanguageEntry"]["properties"]["locator"]["enum"]
        .as_array_mut()
        .unwrap()
        .push("bump-probe-locator".into());
    // Breaking: a member that became required, a removed member.
    defs["Decision"]["properties"]["bump_note"] = serde_json::json!({"type": "string"});
    defs["Decision"]["required"]
        .as_array_mut()
        .unwrap()
        .push("bump_note".into());
    defs["Guide"]["properties"]
        .as_object_mut()
        .unwrap()
        .remove("tokens_estimate");
    fs::write(&path, serde_json::to_string_pretty(&schema).unwrap()).unwrap();

    let check = regen(&root, &["--check", "--schema", "bump.schema.json"]);
    assert_eq!(check.status.code(), Some(1), "{}", stderr(&check));
    let report = String::from_utf8_lossy(&check.stdout).into_owned();
    for line in [
        "additive new type BumpProbe (struct, 3 items)",
        "additive new optional member Diagnostic.bump_probe: String",
        "additive new setter Diagnostic::with_bump_probe(value: impl Into<String>)",
        "breaking constructor Decision::new takes other arguments: (at: impl Into<String>, took: impl Into<String>, because: impl Into<String>) -> (at: impl Into<String>, took: impl Into<String>, because: impl Into<String>, bump_note: impl Into<String>)",
        "breaking removed setter Guide::with_tokens_estimate",
        "additive new value RequestErrorKind \"bump_probe_kind\" of open enum",
        "additive new value Locator \"bump-probe-locator\" of open enum",
        "breaking new required member Decision.bump_note: String",
        "breaking removed member Guide.tokens_estimate",
        "additive new element DEFS \"BumpProbe\" of constant list",
        "additive new element REQUEST_ERROR_KINDS \"bump_probe_kind\" of constant list",
        "regen: 11 API change(s) of the generated types: 7 additive, 4 breaking (breaking for downstream code)",
    ] {
        assert!(report.contains(line), "`{line}` missing from:\n{report}");
    }
    // Writing prints the same report, then nothing once written.
    let write = regen(&root, &["--schema", "bump.schema.json"]);
    assert!(write.status.success(), "{}", stderr(&write));
    assert!(String::from_utf8_lossy(&write.stdout).contains("7 additive, 4 breaking"));
    let again = regen(&root, &["--schema", "bump.schema.json"]);
    assert!(!String::from_utf8_lossy(&again.stdout).contains("API change"));
    // The copy pilotage-types compiles in is the schema regen read, byte for byte.
    assert_eq!(
        fs::read(root.join("pilotage-types/schema/pilotage.schema.json")).unwrap(),
        fs::read(&path).unwrap()
    );
    fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_stale_name_table_entry_is_an_error_naming_it() {
    let root = scratch_root("stale-name");
    let mut schema: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(root.join("schemas/pilotage.schema.json")).unwrap()).unwrap();
    schema["$defs"]["PlanStep"]["properties"]
        .as_object_mut()
        .unwrap()
        .remove("arm");
    fs::write(
        root.join("stale.schema.json"),
        serde_json::to_string_pretty(&schema).unwrap(),
    )
    .unwrap();
    let before = generated(&root);
    let output = regen(&root, &["--schema", "stale.schema.json"]);
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert!(message.contains("xtask/names/pilotage.json"), "{message}");
    assert!(message.contains("/$defs/PlanStep/properties/arm"), "{message}");
    assert!(message.contains("stale entry"), "{message}");
    assert_eq!(generated(&root), before, "nothing written");
    fs::remove_dir_all(&root).unwrap();
}

/// A cheap sanity check that the written file is whole (balanced braces, ends in a newline).
fn syn_like_balance(code: &str) {
    assert!(code.ends_with('\n'));
    let opens = code.matches('{').count();
    let closes = code.matches('}').count();
    assert_eq!(opens, closes, "unbalanced braces in written file");
}

#[test]
fn unknown_arguments_are_usage_errors() {
    let root = scratch_root("usage");
    let output = regen(&root, &["--frobnicate"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("unknown argument `--frobnicate`"));
    fs::remove_dir_all(&root).unwrap();
}

/// A scratch root whose schema has one more `$def`, so that regen has a change to write.
fn root_with_a_change(name: &str) -> (PathBuf, Vec<u8>) {
    let root = scratch_root(name);
    let path = root.join("schemas/pilotage.schema.json");
    let mut schema: serde_json::Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    schema["$defs"]["ExtraThing"] = serde_json::json!({"type": "string"});
    fs::write(&path, serde_json::to_string_pretty(&schema).unwrap()).unwrap();
    let before = generated(&root);
    (root, before)
}

fn leftover_temporaries(root: &Path) -> Vec<String> {
    fs::read_dir(root.join("pilotage-types/src"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

#[test]
fn an_unwritable_output_directory_changes_nothing() {
    use std::os::unix::fs::PermissionsExt;
    let (root, before) = root_with_a_change("readonly");
    let dir = root.join("pilotage-types/src");
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o555)).unwrap();
    // Root ignores permission bits: a directory where the temporary file must go makes the
    // directory unusable for regen all the same.
    let blocker = dir.join(".generated.rs.regen.tmp");
    let _ = fs::create_dir(&blocker);
    let output = regen(&root, &[]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{message}");
    assert!(message.contains("no generated file was changed"), "{message}");
    assert!(!message.contains("panicked"));
    assert_eq!(generated(&root), before);
    assert!(
        !root.join("pilotage-types/output-schemas").exists(),
        "no other file was written either"
    );
    let _ = fs::remove_dir(&blocker);
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_full_disk_changes_nothing() {
    let (root, before) = root_with_a_change("full");
    // Writes to the temporary file land on /dev/full: ENOSPC, as on a full disk.
    std::os::unix::fs::symlink("/dev/full", root.join("pilotage-types/src/.generated.rs.regen.tmp")).unwrap();
    let output = regen(&root, &[]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{message}");
    assert!(message.contains("No space left on device"), "{message}");
    assert_eq!(generated(&root), before);
    assert!(
        leftover_temporaries(&root).is_empty(),
        "temporaries removed: {:?}",
        leftover_temporaries(&root)
    );
    fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_kill_between_write_and_rename_leaves_the_previous_files() {
    let (root, before) = root_with_a_change("kill");
    let killed = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("regen")
        .env("PILOTAGE_WORKSPACE_ROOT", &root)
        .env("PILOTAGE_REGEN_ABORT_BEFORE_RENAME", "1")
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(
        !killed.status.success() && killed.status.code().is_none(),
        "the process was killed by a signal"
    );
    assert_eq!(generated(&root), before, "the previous generated file is intact");
    // Both files the new definition changes (its type and its validator) were written aside.
    assert_eq!(
        leftover_temporaries(&root),
        [".generated.rs.regen.tmp", ".validators.rs.regen.tmp"]
    );
    // The next run overwrites the stale temporary and completes.
    let output = regen(&root, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(String::from_utf8(generated(&root))
        .unwrap()
        .contains("pub struct ExtraThing"));
    assert!(leftover_temporaries(&root).is_empty());
    fs::remove_dir_all(&root).unwrap();
}

/// A scratch copy of the whole workspace's sources (everything but build output, installed
/// packages and version control), for a bump that must be built.
fn scratch_workspace(name: &str) -> PathBuf {
    fn copy_tree(from: &Path, to: &Path) {
        fs::create_dir_all(to).unwrap();
        for entry in fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                if matches!(name.to_str(), Some("target" | "node_modules" | ".venv" | ".git")) {
                    continue;
                }
                copy_tree(&entry.path(), &to.join(&name));
            } else if kind.is_file() {
                fs::copy(entry.path(), to.join(&name)).unwrap();
            }
        }
    }
    let root = std::env::temp_dir().join(format!("pilotage-bump-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&root);
    copy_tree(&workspace(), &root);
    root
}

/// The schema of a minor version that only adds: a new definition, optional members on
/// definitions, on nested object types and on an alternative of an enum, and new values of
/// open enums.
fn additive_minor(schema: &mut serde_json::Value) {
    let id = schema["$id"].as_str().unwrap().replace("/1.1/", "/1.2/");
    schema["$id"] = id.into();
    let defs = &mut schema["$defs"];
    defs["Usage"] = serde_json::json!({"type": "object", "description": "Resources a Run used.",
        "properties": {"tokens": {"type": "integer", "minimum": 0}, "cost": {"type": "number"}}, "required": ["tokens"]});
    defs["ExecuteResponse"]["properties"]["usage"] = serde_json::json!({"$ref": "#/$defs/Usage"});
    defs["Diagnostic"]["properties"]["source"] = serde_json::json!({"type": "string"});
    defs["Outcome"]["properties"]["retryable"] = serde_json::json!({"type": "boolean"});
    defs["TraceStep"]["properties"]["attempt"] = serde_json::json!({"type": "integer", "minimum": 1});
    defs["LanguageEntry"]["properties"]["homepage"] = serde_json::json!({"type": "string"});
    defs["Manifest"]["properties"]["server_notes"] = serde_json::json!({"type": "string"});
    defs["CapabilitySettings"]["properties"]["streaming"] = serde_json::json!({"type": "boolean"});
    defs["RequestError"]["properties"]["error"]["properties"]["detail"] = serde_json::json!({"type": "string"});
    defs["PlanStep"]["properties"]["arm"]["properties"]["note"] = serde_json::json!({"type": "string"});
    defs["ProgramDeclaration"]["anyOf"][0]["properties"]["note"] = serde_json::json!({"type": "string"});
    for (pointer, value) in [
        ("/RequestError/properties/error/properties/kind/enum", "rate_limited"),
        ("/Diagnostic/properties/severity/enum", "info"),
        ("/LanguageEntry/properties/locator/enum", "line-column"),
    ] {
        defs.pointer_mut(pointer)
            .and_then(serde_json::Value::as_array_mut)
            .unwrap_or_else(|| panic!("{pointer}"))
            .push(value.into());
    }
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|d| if d.is_absolute() { d } else { workspace().join(d) })
        .unwrap_or_else(|| workspace().join("target"))
}

/// `cargo check` of the scratch workspace, every target, in a target directory of its own
/// that later runs reuse.
fn check_workspace(root: &Path) -> Output {
    Command::new(env!("CARGO"))
        .args(["check", "--quiet", "--offline", "--workspace", "--all-targets"])
        .env("CARGO_TARGET_DIR", target_dir().join("bump-check"))
        .env_remove("RUSTFLAGS")
        .current_dir(root)
        .output()
        .expect("cargo runs")
}

/// The promise of "additive": code written against the earlier types still compiles. An
/// additive 1.2 put in place of the vendored schema is reported additive line by line, and
/// then the whole workspace, the downstream fixture crate (`tests/downstream`: responses built
/// with `new` / `with_*`, values read with `..`) among it, compiles unchanged.
#[test]
fn an_additive_bump_is_additive_for_code_that_builds_and_code_that_reads() {
    let root = scratch_workspace("additive");
    let path = root.join("schemas/pilotage.schema.json");
    let mut schema: serde_json::Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    additive_minor(&mut schema);
    fs::write(&path, serde_json::to_string_pretty(&schema).unwrap()).unwrap();

    let output = regen(&root, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let report = String::from_utf8_lossy(&output.stdout).into_owned();
    for line in [
        "additive new type Usage (struct, ",
        "additive new optional member ExecuteResponse.usage: Usage",
        "additive new setter ExecuteResponse::with_usage(value: impl Into<Usage>)",
        "additive new optional member RequestErrorBody.detail: String",
        "additive new setter BranchArm::with_note(value: impl Into<String>)",
        "additive new value DiagnosticSeverity \"info\" of open enum",
        "additive new value RequestErrorKind \"rate_limited\" of open enum",
        " 0 breaking (additive only)",
    ] {
        assert!(report.contains(line), "`{line}` missing from:\n{report}");
    }
    assert!(
        !report.lines().any(|l| l.trim_start().starts_with("breaking")),
        "{report}"
    );
    let generated = fs::read_to_string(root.join("pilotage-types/src/generated.rs")).unwrap();
    assert!(
        generated.contains("pub usage: ::std::option::Option<Usage>"),
        "the bump reached the types"
    );

    let built = check_workspace(&root);
    assert!(
        built.status.success(),
        "code written against 1.1 does not compile against the additive 1.2:\n{}",
        stderr(&built)
    );
    fs::remove_dir_all(&root).unwrap();
}

/// A new required member changes what `new` takes: reported breaking, naming the
/// constructor, and the downstream fixture indeed stops compiling, at that constructor.
#[test]
fn a_new_required_member_is_breaking_and_names_the_constructor() {
    let root = scratch_workspace("breaking");
    let path = root.join("schemas/pilotage.schema.json");
    let mut schema: serde_json::Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    let execute = &mut schema["$defs"]["ExecuteResponse"];
    execute["properties"]["usage"] = serde_json::json!({"type": "integer"});
    execute["required"].as_array_mut().unwrap().push("usage".into());
    fs::write(&path, serde_json::to_string_pretty(&schema).unwrap()).unwrap();

    let output = regen(&root, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let report = String::from_utf8_lossy(&output.stdout).into_owned();
    for line in [
        "breaking new required member ExecuteResponse.usage: i64",
        "breaking constructor ExecuteResponse::new takes other arguments: (run_id: impl Into<String>, outcome: impl Into<Outcome>) -> (run_id: impl Into<String>, outcome: impl Into<Outcome>, usage: impl Into<i64>)",
    ] {
        assert!(report.contains(line), "`{line}` missing from:\n{report}");
    }
    let built = Command::new(env!("CARGO"))
        .args(["check", "--quiet", "--offline", "-p", "pilotage-downstream-fixture"])
        .env("CARGO_TARGET_DIR", target_dir().join("bump-check"))
        .env_remove("RUSTFLAGS")
        .current_dir(&root)
        .output()
        .expect("cargo runs");
    let message = stderr(&built);
    assert!(!built.status.success(), "a breaking bump must break the fixture");
    assert!(
        message.contains("this function takes 3 arguments but 2 arguments were supplied"),
        "{message}"
    );
    fs::remove_dir_all(&root).unwrap();
}

/// The wire types' rule on the codegen library's own public API: its settings, options and
/// reports are `#[non_exhaustive]` and built with constructors, so that a new setting (as
/// `TypesSettings::validators` was) breaks no build script; its enums are `#[non_exhaustive]`
/// unless listed as closed with a reason ([`xtask::public_api`]).
#[test]
fn the_codegen_library_follows_the_wire_types_rule() {
    let violations = xtask::public_api::violations(
        &workspace().join("pilotage-codegen/src"),
        "pilotage_codegen",
        xtask::public_api::CODEGEN_CLOSED_ENUMS,
    )
    .unwrap();
    assert!(
        violations.is_empty(),
        "pilotage-codegen's public API breaks the rule:\n{}",
        violations.join("\n")
    );
}

/// The rule's check fails, naming the item, on each thing it forbids, and passes what it
/// allows.
#[test]
fn the_public_api_rule_names_what_it_forbids() {
    let source = r#"
        pub use hidden::Reexported;
        pub mod settings {
            /// A struct literal of this breaks when a field is added.
            #[derive(Default)]
            pub struct Open { pub name: String }
            #[non_exhaustive]
            pub struct Fine { pub name: String }
            impl Fine { pub fn new(name: String) -> Self { Self { name } } }
            #[non_exhaustive]
            pub struct Unbuildable { pub name: String }
            #[non_exhaustive]
            pub struct Output { pub code: String }
            pub struct Private { name: String }
            pub(crate) struct Internal { pub name: String }
            pub enum Grows { A, B }
            #[non_exhaustive]
            pub enum Open2 { A }
            pub enum Closed { Yes, No }
            pub fn run(fine: &Fine, unbuildable: impl Into<Unbuildable>) -> Output { todo!() }
        }
        mod hidden {
            pub struct Reexported(pub u8);
            pub struct NotReexported(pub u8);
        }
        #[cfg(test)]
        mod tests { pub struct InTests { pub a: u8 } }
    "#;
    let closed = [
        ("settings::Closed", "yes or no"),
        ("settings::Open2", "listed although open"),
        ("settings::Gone", "no longer there"),
    ];
    let violations = xtask::public_api::source_violations(source, "krate", &closed).unwrap();
    let expected = [
        "krate::settings::Open: a pub struct with pub fields is not #[non_exhaustive]",
        "krate::hidden::Reexported: a pub struct with pub fields is not #[non_exhaustive]",
        "krate::settings::Grows: a pub enum is not #[non_exhaustive]",
        "krate::settings::Open2: listed as a closed enum, but it is #[non_exhaustive]",
        "krate::settings::Gone: listed as a closed enum, but the crate has no such pub enum",
        "krate::settings::Unbuildable: users pass it in, but #[non_exhaustive] leaves them no way to build it",
    ];
    for line in expected {
        assert!(
            violations.iter().any(|v| v.starts_with(line)),
            "`{line}` missing from:\n{}",
            violations.join("\n")
        );
    }
    assert_eq!(violations.len(), expected.len(), "{}", violations.join("\n"));

    // Fixed, the same crate passes.
    let fixed = source
        .replace("#[derive(Default)]\n            pub struct Open", "#[derive(Default)] #[non_exhaustive]\n            pub struct Open")
        .replace("pub struct Reexported(pub u8)", "pub struct Reexported(u8)")
        .replace("pub enum Grows", "#[non_exhaustive] pub enum Grows")
        .replace(
            "pub struct Unbuildable { pub name: String }",
            "pub struct Unbuildable { pub name: String } impl Unbuildable { pub fn new() -> Result<Self, ()> { todo!() } }",
        );
    let violations = xtask::public_api::source_violations(&fixed, "krate", &closed[..1]).unwrap();
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}
