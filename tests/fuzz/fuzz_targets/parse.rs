//! Bytes → `parse_slice` for every tool union: never panics; parse succeeds iff validate passes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use pilotage_types::*;

fn check<T: SchemaDef + serde::de::DeserializeOwned>(data: &[u8]) {
    let parsed = parse_slice::<T>(data);
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) {
        assert_eq!(parsed.is_ok(), T::is_valid(&value), "parse and validate disagree");
    }
}

fuzz_target!(|data: &[u8]| {
    check::<ManifestToolOutput>(data);
    check::<GetGuideToolOutput>(data);
    check::<CatalogToolOutput>(data);
    check::<ValidateToolOutput>(data);
    check::<ExecuteToolOutput>(data);
    check::<TraceToolOutput>(data);
});
