//! The drift check as a test (rust-analyzer style), the vendored-spec checks, determinism,
//! and regen's behaviour on bad schemas.

use std::fs;
use std::path::Path;

use pilotage_tests::{read_workspace_file, workspace_root};
use xtask::codegen::{drift, generate_all, PILOTAGE_SCHEMA};

#[test]
fn checked_in_generated_files_match_regen() {
    let root = workspace_root();
    let files = generate_all(&root, Path::new(PILOTAGE_SCHEMA)).expect("regen succeeds on the vendored schema");
    let drifted = drift(&root, &files);
    assert!(
        drifted.is_empty(),
        "generated files differ from what regen writes: run `cargo xtask regen`\n{}",
        drifted
            .iter()
            .map(|(_, diff)| diff.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn regen_is_deterministic() {
    let root = workspace_root();
    let first = generate_all(&root, Path::new(PILOTAGE_SCHEMA)).unwrap();
    let second = generate_all(&root, Path::new(PILOTAGE_SCHEMA)).unwrap();
    assert_eq!(first.len(), second.len());
    for (a, b) in first.iter().zip(&second) {
        assert_eq!(a.path, b.path);
        assert!(
            a.contents == b.contents,
            "{} differs between two runs",
            a.path.display()
        );
    }
}

#[test]
fn vendored_schema_is_the_spec_version_and_parses() {
    let schema: serde_json::Value = serde_json::from_str(&read_workspace_file(PILOTAGE_SCHEMA)).expect("schema parses");
    assert_eq!(
        schema["$id"],
        format!(
            "https://pilotagespec.org/schemas/{}/pilotage.schema.json",
            pilotage_types::PILOTAGE_VERSION
        )
    );
    assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
    assert_eq!(schema["$defs"].as_object().unwrap().len(), pilotage_types::DEFS.len());
}

/// The shared spec directory: `PILOTAGE_SHARED_SPEC` or `../shared/spec` beside the workspace.
fn shared_spec_dir() -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("PILOTAGE_SHARED_SPEC")
        .map(Into::into)
        .unwrap_or_else(|| workspace_root().join("../shared/spec"));
    dir.is_dir().then_some(dir)
}

#[test]
fn vendored_spec_files_equal_the_shared_spec() {
    let Some(dir) = shared_spec_dir() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "../shared/spec is missing under CI=true"
        );
        pilotage_tests::report_skipped(
            "../shared/spec not found (set PILOTAGE_SHARED_SPEC); vendored-spec equality NOT checked",
        );
        return;
    };
    let mut pairs = vec![
        (PILOTAGE_SCHEMA.to_owned(), "pilotage.schema.json".to_owned()),
        (
            "schemas/pilotage-part-iii.txt".to_owned(),
            "part-iii-mcp-binding.txt".to_owned(),
        ),
    ];
    for peer in xtask::codegen::PEERS {
        let file = peer.schema.rsplit('/').next().unwrap();
        pairs.push((peer.schema.to_owned(), format!("peers/{file}")));
    }
    for (vendored, shared) in &pairs {
        let ours = fs::read(workspace_root().join(vendored)).unwrap();
        let theirs = fs::read(dir.join(shared)).unwrap();
        assert!(
            ours == theirs,
            "{vendored} is not a byte-for-byte copy of shared/spec/{shared}"
        );
    }
}
