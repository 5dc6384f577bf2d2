//! Constructors for the request-error shape of Part III 7.2 (`{"error": {"kind", "message"}}`).

use crate::{RequestError, RequestErrorError, RequestErrorErrorKind};

impl RequestError {
    /// A request error of `kind` with a server-authored `message` (Part III 7.2; clients
    /// branch on `kind`, never on `message`).
    pub fn new(kind: RequestErrorErrorKind, message: impl Into<String>) -> Self {
        Self {
            catalog_version: None,
            error: RequestErrorError {
                kind,
                message: message.into(),
                extra: Default::default(),
            },
            extra: Default::default(),
        }
    }

    /// `invalid_request` (Part III 4.3, 4.4, 7.1: both-or-neither runnable, bad `mode`, ...).
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(RequestErrorErrorKind::InvalidRequest, message)
    }

    /// `unsupported` (Part III 7.1: unsupported `test_run`, `store: true` without retention, ...).
    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(RequestErrorErrorKind::Unsupported, message)
    }

    /// `not_found` (for example an unknown or expired run, Part III 9.5).
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(RequestErrorErrorKind::NotFound, message)
    }

    /// The same error with the operation-mandated `catalog_version` sibling (Part III 7.2).
    pub fn with_catalog_version(mut self, catalog_version: impl Into<String>) -> Self {
        self.catalog_version = Some(catalog_version.into());
        self
    }
}
