//! The codegen's one error type: every failure names the schema file and the JSON Pointer
//! inside it where the problem sits, so a maintainer can go straight to it.

use std::fmt;

/// A failure of the generation pipeline, located in the input schema.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CodegenError {
    /// The schema's display name (normally its path), as given in [`crate::TypesSettings::source_name`].
    pub file: String,
    /// JSON Pointer (RFC 6901) of the offending location; empty for the whole document.
    pub pointer: String,
    /// What is wrong there, in one sentence.
    pub message: String,
}

impl CodegenError {
    pub(crate) fn new(file: &str, pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            file: file.to_owned(),
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for CodegenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() {
            "(document root)"
        } else {
            &self.pointer
        };
        write!(f, "{}: at {}: {}", self.file, pointer, self.message)
    }
}

impl std::error::Error for CodegenError {}

/// Escapes one reference token for use in a JSON Pointer (RFC 6901 section 3).
pub fn escape_pointer_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Unescapes one JSON Pointer reference token (RFC 6901 section 4).
pub fn unescape_pointer_token(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}
