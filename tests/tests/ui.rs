//! Compile-fail tests of `#[derive(PilotageTool)]`: each rule a struct can break is a compile
//! error on the offending token, and all errors are reported at once (`tests/ui/*.stderr`).

#[test]
fn derive_rejects_non_conformant_structs() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/*.rs");
}
