//! [`ArgumentFault`]: why `tools/call` arguments could not become a Pilotage request, sorted
//! into the channels of Part III 7.1 (carrier, request error, diagnostics). Shared by the
//! loop tools (`from_arguments` of the derive) and the access tools ([`crate::access`]).

use crate::RequestError;

/// Why arguments could not be turned into a loop-tool request (Part III 7.1).
#[derive(Debug, Clone, PartialEq)]
pub enum ArgumentFault {
    /// A structural fault (a schema-required member missing, a member of the wrong JSON type):
    /// a carrier error; the server answers with JSON-RPC `-32602` (Invalid params).
    Carrier {
        /// What is wrong, naming the member.
        message: String,
    },
    /// A value or eligibility fault: a request error (`isError: true`, Part III 7.2).
    Request(RequestError),
    /// A fault of the program itself, or of the validation context: never a request error
    /// (Part III 4.6 "invalid program content MUST be reported through diagnostics", 4.4 rule
    /// 10 "supplying unsupported context is not an invalid_request"). A validate tool answers
    /// `valid: false` with these diagnostics; an execute tool answers an outcome with status
    /// `validation_error` and these diagnostics. Paths point into the program (or, for
    /// `context_binding`, into the context).
    Program(Vec<crate::Diagnostic>),
}

impl ArgumentFault {
    /// The same fault with the operation-mandated `catalog_version` sibling on a request
    /// error (Part III 7.2: a failed catalog operation still carries `catalog_version`).
    pub fn with_catalog_version(self, catalog_version: impl Into<String>) -> Self {
        match self {
            Self::Request(error) => Self::Request(error.with_catalog_version(catalog_version)),
            other => other,
        }
    }
}

impl std::fmt::Display for ArgumentFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Carrier { message } => write!(f, "invalid params: {message}"),
            Self::Request(error) => write!(f, "request error ({}): {}", error.error.kind, error.error.message),
            Self::Program(diagnostics) => {
                write!(f, "program fault:")?;
                for d in diagnostics {
                    write!(f, " [{}] {}", d.code, d.message)?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for ArgumentFault {}
