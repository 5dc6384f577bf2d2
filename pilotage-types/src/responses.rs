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
            outcome: Outcome {
                ok: false,
                status: VALIDATION_ERROR_STATUS.to_owned(),
                error: Some(format!(
                    "the program did not validate ({count} diagnostic{})",
                    if count == 1 { "" } else { "s" }
                )),
                extra: Default::default(),
            },
            output: None,
            diagnostics: Some(diagnostics),
            trace: None,
            extra: Default::default(),
        }
    }
}
