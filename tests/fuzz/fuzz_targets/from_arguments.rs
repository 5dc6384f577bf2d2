//! Bytes → JSON → `from_arguments` of the derived tools: never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;
use pilotage_tests::surface::{RunWorkflow, TraceRun, ValidateWorkflow};
use pilotage_types::PilotageTool;

fuzz_target!(|data: &[u8]| {
    if let Ok(arguments) = serde_json::from_slice::<serde_json::Value>(data) {
        let _ = ValidateWorkflow::from_arguments(&arguments);
        let _ = RunWorkflow::from_arguments(&arguments);
        let _ = TraceRun::from_arguments(&arguments);
    }
});
