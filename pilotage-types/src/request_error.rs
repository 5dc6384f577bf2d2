//! The request-error shape of Part III 7.2 (`{"error": {"kind", "message"}}`): constructors
//! for servers, and the client's reading of a kind (Part III 7.2: a kind a Client does not
//! recognise is treated as `internal`).

use crate::{RequestError, RequestErrorBody, RequestErrorKind};

impl RequestErrorKind {
    /// The kind a Client acts on (Part III 7.2): the kind itself when this version defines
    /// it, [`RequestErrorKind::Internal`] for a kind added by a later minor version. The raw
    /// kind stays available in the value itself.
    ///
    /// ```
    /// use pilotage_types::RequestErrorKind;
    /// let later: RequestErrorKind = serde_json::from_value(serde_json::json!("x_later_minor_kind")).unwrap();
    /// assert!(!later.is_known());
    /// assert_eq!(later.as_str(), "x_later_minor_kind");
    /// assert_eq!(later.effective(), RequestErrorKind::Internal);
    /// assert_eq!(RequestErrorKind::NotFound.effective(), RequestErrorKind::NotFound);
    /// ```
    pub fn effective(&self) -> RequestErrorKind {
        if self.is_known() {
            self.clone()
        } else {
            RequestErrorKind::Internal
        }
    }
}

impl RequestError {
    /// A request error of `kind` with a server-authored `message` (Part III 7.2; clients
    /// branch on `kind`, never on `message`). The generated [`RequestError::new`] takes the
    /// body as it is; this one keeps Part III 7.2 and 10.1: a Server emits only the kinds of
    /// this version, so a kind this version does not define ([`RequestErrorKind::Unknown`])
    /// is sent as `internal`.
    ///
    /// ```
    /// use pilotage_types::{RequestError, RequestErrorKind};
    /// let error = RequestError::from_kind(RequestErrorKind::NotFound, "unknown run");
    /// assert_eq!(error.error.kind, RequestErrorKind::NotFound);
    /// ```
    pub fn from_kind(kind: RequestErrorKind, message: impl Into<String>) -> Self {
        Self::new(RequestErrorBody::new(kind.effective(), message))
    }

    /// `invalid_request` (Part III 4.3, 4.4, 7.1: both-or-neither runnable, bad `mode`, ...).
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::from_kind(RequestErrorKind::InvalidRequest, message)
    }

    /// `unsupported` (Part III 7.1: unsupported `test_run`, `store: true` without retention, ...).
    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::from_kind(RequestErrorKind::Unsupported, message)
    }

    /// `not_found` (for example an unknown or expired run, Part III 9.5).
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::from_kind(RequestErrorKind::NotFound, message)
    }

    /// `internal` (Part III 7.2: a fault of the server).
    pub fn internal(message: impl Into<String>) -> Self {
        Self::from_kind(RequestErrorKind::Internal, message)
    }

    /// The kind a Client acts on: [`RequestErrorKind::effective`] of `error.kind`.
    pub fn effective_kind(&self) -> RequestErrorKind {
        self.error.kind.effective()
    }
}
