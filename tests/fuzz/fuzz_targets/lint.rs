//! Bytes → JSON → the conformance linter, as tools, manifest and initialize: never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;
use pilotage_cli::lint::{lint, Surface};

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) {
        let _ = lint(Surface { tools: &value, manifest: &value, initialize: Some(&value), stateless: true });
    }
});
