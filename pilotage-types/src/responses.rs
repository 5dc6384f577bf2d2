//! Constructors for the responses a server builds most often from a program fault (Part III
//! 4.6, 7.1; Part II 6.4, 6.5): a validate response with `valid: false`, and an execute
//! response whose Run was refused by validation (`status: "validation_error"`). Neither is an
//! error channel: both travel with `isError: false`.

use crate::{Diagnostic, ExecuteResponse, Outcome, ValidateResponse};

/// The outcome status of a Run refused by validation (Part II 6.5: `diagnostics` is then
/// required).
pub const VALIDATION_ERROR_STATUS: &str = "validation_error";

impl ValidateResponse {
    /// `valid: false` with `diagnostics` (at least one should be an error).
    ///
    /// ```
    /// use pilotage_types::{SchemaDef, ValidateResponse};
    /// let response = ValidateResponse::invalid(Vec::new());
    /// assert!(!response.valid);
    /// assert!(ValidateResponse::validate(&serde_json::to_value(&response).unwrap()).is_ok());
    /// ```
    pub fn invalid(diagnostics: Vec<Diagnostic>) -> Self {
        Self {
            valid: false,
            diagnostics,
            catalog_version: None,
            plan: None,
            references: None,
            extra: Default::default(),
        }
    }
}

impl ExecuteResponse {
    /// A Run refused by validation: `outcome` `{ok: false, status: "validation_error"}` with
    /// the `diagnostics`, no output and no trace. `run_id` is returned in every case.
    pub fn validation_error(run_id: impl Into<String>, diagnostics: Vec<Diagnostic>) -> Self {
        let count = diagnostics.len();
        Self {
            run_id: run_id.into(),
            outcome: Outcome::failure(
                VALIDATION_ERROR_STATUS,
                format!(
                    "the program did not validate ({count} diagnostic{})",
                    if count == 1 { "" } else { "s" }
                ),
            ),
            output: None,
            diagnostics: Some(diagnostics),
            trace: None,
            extra: Default::default(),
        }
    }
}

impl crate::Diagnostic {
    /// An error-severity finding at `path` (a JSON Pointer into the program, or into the
    /// input or context for their findings; Part II 5.5).
    pub fn error(code: impl Into<String>, path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            severity: crate::DiagnosticSeverity::Error,
            code: code.into(),
            path: crate::DiagnosticPath::String(path.into()),
            range: None,
            message: message.into(),
            hint: None,
            extra: Default::default(),
        }
    }

    /// The same finding with a `hint` (a close match, the fix).
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl Outcome {
    /// The outcome of a Run that succeeded: `{ok: true, status: "success", error: null}`.
    pub fn success() -> Self {
        Self {
            ok: true,
            status: "success".to_owned(),
            error: None,
            extra: Default::default(),
        }
    }

    /// The outcome of a Run that did not succeed: `ok: false` with its `status` (for example
    /// `failed`, `validation_error`) and `error` (Part II 5.7: `error` is null iff `ok`).
    pub fn failure(status: impl Into<String>, error: impl Into<String>) -> Self {
        Self {
            ok: false,
            status: status.into(),
            error: Some(error.into()),
            extra: Default::default(),
        }
    }
}
