//! Constants of the MCP binding that the schema does not carry. Those it does carry (the
//! version, the access-tool names bound in `LanguageEntry`, the request-error kinds) are
//! generated from it into `generated.rs`.

/// The extension identifier, used in `capabilities.extensions` (Part III 1.1, 1.2).
pub const EXTENSION_ID: &str = "io.github.jafarsa0/pilotage";

/// The one Pilotage `_meta` key (Part III 2). Equal to [`EXTENSION_ID`]; a sender never
/// emits a shorthand key such as `pilotage`.
pub const META_KEY: &str = EXTENSION_ID;

/// The fixed name of the manifest access tool (Part III 3.1).
pub const MANIFEST_TOOL: &str = "pilotage_manifest";

/// Escapes one reference token for a JSON Pointer (RFC 6901 section 3): `~` as `~0`, `/` as
/// `~1`. Every pointer the validators, the linter and the loop-tool runtime report is built
/// with it.
pub fn escape_pointer_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// The recommended URI of the manifest resource (Part III 3.2).
pub const MANIFEST_URI: &str = "pilotage://manifest";
