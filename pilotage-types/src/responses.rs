//! Hand-written constructors beside the generated `new` / `with_*` ones, where a rule of the
//! schema that the types cannot express makes a plain constructor error-prone (Part II 5.7,
//! 6.4, 6.5 via the schema's descriptions; Part III 4.6, 7.1). Each names the rule it keeps:
//!
//! - [`Outcome::success`] / [`Outcome::failure`]: `error` is null iff `ok` is true;
//! - [`ValidateResponse::valid`] / [`ValidateResponse::invalid`]: `diagnostics` always present,
//!   `plan` only when `valid` is true;
//! - [`ExecuteResponse::validation_error`]: `diagnostics` required when the status is
//!   `validation_error`, no output and no trace for a refused Run;
//! - [`Diagnostic::error`] / [`Diagnostic::warning`]: a finding at a JSON Pointer.
//!
//! None of these is an error channel: every response here travels with `isError: false`.

use crate::{Diagnostic, DiagnosticPath, DiagnosticSeverity, ExecuteResponse, Outcome, Plan, ValidateResponse};

/// The outcome status of a Run refused by validation (Part II 6.5: `diagnostics` is then
/// required).
pub const VALIDATION_ERROR_STATUS: &str = "validation_error";

impl ValidateResponse {
    /// `valid: true` with no findings, and the `plan` when the Language declares `plan`
    /// (Part II 6.4: `plan` is present only when `valid` is true; `diagnostics` is always
    /// present, empty for no findings). Warnings go in `diagnostics` afterwards.
    ///
    /// ```
    /// use pilotage_types::{SchemaDef, ValidateResponse};
    /// let response = ValidateResponse::valid(None);
    /// assert!(response.valid && response.diagnostics.is_empty() && response.plan.is_none());
    /// assert!(ValidateResponse::validate(&serde_json::to_value(&response).unwrap()).is_ok());
    /// ```
    pub fn valid(plan: impl Into<Option<Plan>>) -> Self {
        let response = Self::new(true, Vec::new());
        match plan.into() {
            Some(plan) => response.with_plan(plan),
            None => response,
        }
    }

    /// `valid: false` with `diagnostics` (at least one should be an error) and no plan
    /// (Part II 6.4: a plan only for a valid program).
    ///
    /// ```
    /// use pilotage_types::{Diagnostic, SchemaDef, ValidateResponse};
    /// let response = ValidateResponse::invalid(vec![Diagnostic::error("unknown_step", "/steps/0", "no such step")]);
    /// assert!(!response.valid);
    /// assert!(ValidateResponse::validate(&serde_json::to_value(&response).unwrap()).is_ok());
    /// ```
    pub fn invalid(diagnostics: impl IntoIterator<Item = Diagnostic>) -> Self {
        Self::new(false, diagnostics)
    }
}

impl ExecuteResponse {
    /// A Run refused by validation: `outcome` `{ok: false, status: "validation_error"}` with
    /// the `diagnostics` (required for that status, Part II 6.5), no output and no trace.
    /// `run_id` is returned in every case.
    ///
    /// ```
    /// use pilotage_types::{Diagnostic, ExecuteResponse, SchemaDef};
    /// let refused = ExecuteResponse::validation_error("run_1", vec![Diagnostic::error("bad", "/x", "bad step")]);
    /// assert_eq!(refused.outcome.status, "validation_error");
    /// assert!(ExecuteResponse::validate(&serde_json::to_value(&refused).unwrap()).is_ok());
    /// ```
    pub fn validation_error(run_id: impl Into<String>, diagnostics: impl IntoIterator<Item = Diagnostic>) -> Self {
        let diagnostics: Vec<Diagnostic> = diagnostics.into_iter().collect();
        let count = diagnostics.len();
        let outcome = Outcome::failure(
            VALIDATION_ERROR_STATUS,
            format!(
                "the program did not validate ({count} diagnostic{})",
                if count == 1 { "" } else { "s" }
            ),
        );
        Self::new(run_id, outcome).with_diagnostics(diagnostics)
    }
}

impl Diagnostic {
    /// An error-severity finding at `path` (a JSON Pointer into the program, or into the
    /// input or context for their findings; Part II 5.5).
    pub fn error(code: impl Into<String>, path: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(
            DiagnosticSeverity::Error,
            code,
            DiagnosticPath::String(path.into()),
            message,
        )
    }

    /// A warning-severity finding at `path` (a JSON Pointer, as for [`Diagnostic::error`]).
    pub fn warning(code: impl Into<String>, path: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(
            DiagnosticSeverity::Warning,
            code,
            DiagnosticPath::String(path.into()),
            message,
        )
    }
}

impl Outcome {
    /// The outcome of a Run that succeeded: `{ok: true, status, error: null}` (Part II 5.7:
    /// `error` is null iff `ok`). `status` is the Language's word for it, for example
    /// `"success"`.
    ///
    /// ```
    /// use pilotage_types::Outcome;
    /// let done = Outcome::success("success");
    /// assert!(done.ok && done.error.is_none());
    /// ```
    pub fn success(status: impl Into<String>) -> Self {
        Self::new(true, status, None)
    }

    /// The outcome of a Run that did not succeed: `ok: false` with its `status` (for example
    /// `failed`, `validation_error`) and `error` (Part II 5.7: `error` is null iff `ok`).
    ///
    /// ```
    /// use pilotage_types::Outcome;
    /// let failed = Outcome::failure("failed", "step 2 timed out");
    /// assert!(!failed.ok && failed.error.as_deref() == Some("step 2 timed out"));
    /// ```
    pub fn failure(status: impl Into<String>, error: impl Into<String>) -> Self {
        Self::new(false, status, Some(error.into()))
    }
}
