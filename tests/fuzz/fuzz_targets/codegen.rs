//! Bytes as a schema document → the whole codegen pipeline: an error or code, never a panic
//! (typify's own panics are caught and reported by the pipeline).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let settings = pilotage_codegen::TypesSettings::new("fuzz.json");
    let _ = pilotage_codegen::generate_types(data, &settings);
});
