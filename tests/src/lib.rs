//! Shared test support: the workspace paths and the extraction of the JSON examples of
//! Part III (`schemas/pilotage-part-iii.txt`). The tests themselves live in `tests/tests/`.

pub mod corpus;
pub mod instances;
pub mod mcp;
pub mod part_iii;
/// The conformant surface fixture, shared with pilotage-cli's conformance tests (one file).
#[path = "../../pilotage-cli/tests/common/surface.rs"]
pub mod surface;

use std::path::{Path, PathBuf};

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is inside the workspace")
        .to_path_buf()
}

/// Reads a workspace-relative file to a string, panicking with the path on failure.
pub fn read_workspace_file(relative: &str) -> String {
    let path = workspace_root().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Says, on the real stderr, that a check did not run. Written around the test harness's output
/// capture (which only intercepts `print!`/`eprint!`), so it shows even when the test passes.
pub fn report_skipped(what: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "SKIPPED: {what}");
}
