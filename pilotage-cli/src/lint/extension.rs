//! Part III 1.2 (negotiation: the extension declared in `capabilities.extensions`), 2 (the
//! full `_meta` key only) and 3.2 (the initialize result's `_meta` value).

use pilotage_types::validate::pilotage;
use pilotage_types::{escape_pointer_token, EXTENSION_ID, META_KEY};
use serde_json::{Map, Value};

use super::rules::{EXTENSION_UNDECLARED, INITIALIZE_META_INVALID, SHORTHAND_META_KEY};
use super::{Finding, Linter};

/// `_meta` keys that a sender must not use for Pilotage metadata (Part III 1.1, 2).
const SHORTHAND_KEYS: &[&str] = &[
    "pilotage",
    "io.github.jafarsa0.pilotage",
    "jafarsa0/pilotage",
    "jafarsa0.pilotage",
];

/// 1.2, 2 and 3.2 on the initialize result.
pub(super) fn initialize(linter: &mut Linter<'_>, initialize: &Value) {
    let settings = initialize
        .pointer("/capabilities/extensions")
        .and_then(|e| e.get(EXTENSION_ID));
    if settings.is_none_or(|settings| !settings.is_object()) {
        linter.push(
            Finding::new(
                &EXTENSION_UNDECLARED,
                format!("the initialize result does not declare `{EXTENSION_ID}` in capabilities.extensions"),
            )
            .at(Some("/capabilities/extensions".into())),
        );
    }
    if let Some(Value::Object(meta)) = initialize.get("_meta") {
        shorthand_meta_keys(linter, meta, None, "/_meta");
        if let Some(value) = meta.get(META_KEY) {
            initialize_meta(linter, value);
        }
    }
}

/// 3.2: the initialize `_meta` value validates against `InitializeMetaValue`.
fn initialize_meta(linter: &mut Linter<'_>, value: &Value) {
    let violations = pilotage()
        .validate("InitializeMetaValue", value)
        .expect("InitializeMetaValue exists");
    let Err(errors) = violations else {
        return;
    };
    // The inline manifest is the one linted by the manifest rules: its problems are reported
    // once, there.
    let inline_is_linted = value.get("manifest") == Some(linter.surface.manifest);
    for violation in errors.violations {
        if inline_is_linted && violation.instance_pointer.starts_with("/manifest") {
            continue;
        }
        linter.push(
            Finding::new(
                &INITIALIZE_META_INVALID,
                format!("the initialize _meta value is invalid: {}", violation.message),
            )
            .at(Some(format!(
                "/_meta/{}{}",
                escape_pointer_token(META_KEY),
                violation.instance_pointer
            ))),
        );
    }
}

/// 2: the shorthands Part III 2 forbids, and the dotted identifier of earlier documents (1.1,
/// compatibility note), in the `_meta` object at `at`; other vendors' keys are none of
/// Pilotage's business.
pub(super) fn shorthand_meta_keys(linter: &mut Linter<'_>, meta: &Map<String, Value>, tool: Option<&str>, at: &str) {
    for key in meta.keys() {
        let lower = key.to_lowercase();
        if key == META_KEY || !SHORTHAND_KEYS.contains(&lower.as_str()) {
            continue;
        }
        let mut finding = Finding::new(
            &SHORTHAND_META_KEY,
            format!("`_meta` key \"{key}\" is a shorthand; receivers must not read it as Pilotage metadata"),
        )
        .at(Some(format!("{at}/{}", escape_pointer_token(key))));
        if let Some(tool) = tool {
            finding = finding.tool(tool);
        }
        linter.push(finding);
    }
}
