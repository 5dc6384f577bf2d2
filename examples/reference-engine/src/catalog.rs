//! The catalog and guides of `workflow/v1` (Part III 4.1, 4.2; the
//! shapes of Part II 5.2, 5.4, 6.3): fixed data, so that every run of the demo and its tests
//! answers the same.

use pilotage_types::{CatalogEntry, Guide};
use serde_json::{json, Value};

/// The Language this engine serves.
pub const LANGUAGE: &str = "workflow/v1";
/// The current catalog version.
pub const CATALOG_VERSION: &str = "cv_9f2c41ab07de";
/// An older catalog version the engine still knows, for `changed_since`.
pub const PREVIOUS_CATALOG_VERSION: &str = "cv_1a2b3c4d5e6f";

fn hints(read_only: bool, destructive: bool, open_world: bool) -> Value {
    json!({"readOnly": read_only, "destructive": destructive, "openWorld": open_world})
}

/// Every catalog entry.
pub fn entries() -> Vec<CatalogEntry> {
    let entries = json!([
        {"id": "cap_read_user_profile", "kind": "capability", "name": "Read a user profile",
         "description": "The profile of one user: name and tier.",
         "input_schema": {"type": "object", "properties": {"user_id": {"type": "string"}}, "required": ["user_id"]},
         "output_schema": {"type": "object", "properties": {"name": {"type": "string"}, "tier": {"type": "string"}}},
         "risk": "safe", "risk_hints": hints(true, false, false), "tags": ["users"], "languages": [LANGUAGE], "revision": "3"},
        {"id": "cap_list_orders", "kind": "capability", "name": "List a user's orders",
         "description": "The orders of one user, newest first.",
         "input_schema": {"type": "object", "properties": {"user_id": {"type": "string"}}, "required": ["user_id"]},
         "output_schema": {"type": "object", "properties": {"orders": {"type": "array"}}},
         "risk": "safe", "risk_hints": hints(true, false, false), "tags": ["orders", "users"], "languages": [LANGUAGE], "revision": "1"},
        {"id": "cap_send_email", "kind": "capability", "name": "Send an email",
         "description": "Sends one email to a user; leaves this system.",
         "input_schema": {"type": "object", "properties": {"to": {"type": "string"}, "subject": {"type": "string"}}, "required": ["to", "subject"]},
         "output_schema": {"type": "object", "properties": {"sent": {"type": "boolean"}}},
         "risk": "moderate", "risk_hints": hints(false, false, true), "tags": ["messaging"], "languages": [LANGUAGE], "revision": "2"},
        {"id": "cap_delete_user", "kind": "capability", "name": "Delete a user",
         "description": "Deletes a user and their orders. Irreversible.",
         "input_schema": {"type": "object", "properties": {"user_id": {"type": "string"}}, "required": ["user_id"]},
         "output_schema": null,
         "risk": "high", "risk_hints": hints(false, true, false), "tags": ["users"], "languages": [LANGUAGE], "revision": "1"}
    ]);
    serde_json::from_value(entries).expect("the fixed catalog is well-formed")
}

/// Risk levels in increasing order.
pub const RISKS: &[&str] = &["safe", "moderate", "high"];

/// (metadata, body) of every guide. Bodies are Markdown with one `## <topic>` section per topic.
pub fn guides() -> Vec<(Guide, String)> {
    let intro = "# workflow/v1\n\nA workflow is a JSON document with `steps` and an `output`.\n\n\
## steps\nEach step is `{\"id\", \"kind\": \"call\", \"capability\", \"with\"}`: it calls one catalog \
capability with the arguments in `with`.\n\n\
## references\nA string `$.input.<name>` is the run's input; `$.steps.<id>.output.<name>` is an \
earlier step's output.\n\n\
## output\n`output` maps names to references; it is the run's output.\n";
    let capabilities = "# Capabilities\n\nLook capabilities up with pilotage_catalog (`verb: list`, `verb: get`).\n\n\
## risk\nEvery capability has a risk (`safe`, `moderate`, `high`) and risk hints; validate returns \
the plan's maximum risk.\n";
    let examples = "# Examples\n\n## profile\n```json\n{\"steps\": [{\"id\": \"profile\", \"kind\": \"call\", \
\"capability\": \"cap_read_user_profile\", \"with\": {\"user_id\": \"$.input.userId\"}}],\n \
\"output\": {\"name\": \"$.steps.profile.output.name\"}}\n```\n";
    [
        (
            "intro",
            "Writing workflows",
            "core",
            vec!["steps", "references", "output"],
            intro,
        ),
        (
            "capabilities",
            "Capabilities and risk",
            "reference",
            vec!["risk"],
            capabilities,
        ),
        ("examples", "Example workflows", "examples", vec!["profile"], examples),
    ]
    .into_iter()
    .map(|(id, title, level, topics, body)| {
        let guide = json!({"id": id, "title": title, "level": level, "topics": topics, "language": LANGUAGE,
            "version": "1", "size_bytes": body.len(), "tokens_estimate": body.len() / 4, "format": "text/markdown"});
        (
            serde_json::from_value(guide).expect("the fixed guides are well-formed"),
            body.to_owned(),
        )
    })
    .collect()
}
