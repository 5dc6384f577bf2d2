//! A union of the generated types converts from its string (or number) alternative
//! (`pilotage_codegen::constructors::union_conversions`): a JSON Pointer is written as a string
//! wherever a `DiagnosticPath` is wanted, never as `DiagnosticPath::String(..)`.

use std::num::NonZeroU64;

use pilotage_types::{Diagnostic, DiagnosticPath, DiagnosticSeverity, TextPosition, TextRange};

#[test]
fn a_diagnostic_path_is_built_from_a_string() {
    assert_eq!(DiagnosticPath::from("x"), DiagnosticPath::String("x".to_owned()));
    assert_eq!(
        DiagnosticPath::from(String::from("/steps/1")),
        DiagnosticPath::String("/steps/1".to_owned())
    );

    let error = Diagnostic::error("c", "/steps/0", "m");
    assert_eq!(error.path, DiagnosticPath::String("/steps/0".to_owned()));
    assert_eq!((error.code.as_str(), error.message.as_str()), ("c", "m"));
    assert_eq!(error.severity, DiagnosticSeverity::Error);

    // `new` takes `impl Into<DiagnosticPath>`: a `&str`, a `String` or a `TextRange`.
    let by_str = Diagnostic::new(DiagnosticSeverity::Warning, "c", "/steps/0", "m");
    assert_eq!(by_str.path, error.path);
    let by_string = Diagnostic::new(DiagnosticSeverity::Warning, "c", format!("/steps/{}", 0), "m");
    assert_eq!(by_string.path, error.path);
    let at = |line, column| TextPosition::new(NonZeroU64::new(line).unwrap(), NonZeroU64::new(column).unwrap());
    let range = TextRange::new(at(1, 2), at(3, 4));
    let by_range = Diagnostic::new(DiagnosticSeverity::Error, "c", range.clone(), "m");
    assert_eq!(by_range.path, DiagnosticPath::TextRange(range));

    // The value is the one the wire gives.
    let wire: Diagnostic = serde_json::from_value(
        serde_json::json!({"severity": "warning", "code": "c", "path": "/steps/0", "message": "m"}),
    )
    .unwrap();
    assert_eq!(wire, by_str);
}
