//! Every JSON block of Part III (`schemas/pilotage-part-iii.txt`), checked.
//!
//! [`TABLE`] classifies each block, keyed by `section#hash` (the first 12 hex digits of the
//! SHA-256 of its exact text), into the checks it must pass. The test fails on a block that is
//! not in the table and on a table row whose block no longer exists, so a spec bump that edits
//! an example forces a fresh look at it. Abbreviated examples (they omit required members) are
//! recorded as *rejected*, with the violations expected and why; the schema is never loosened.
//!
//! Loop-tool arguments, listings and schema fragments (4.6, 5, 9.2, 9.3, 9.4) are recorded
//! here and checked against derived tools in `tests/derive.rs`.

use pilotage_tests::mcp;
use pilotage_tests::part_iii::{vendored_blocks, Block};
use pilotage_types::validate::pilotage;
use pilotage_types::{AccessTool, Flavour, ToolKind, EXTENSION_ID, PILOTAGE_VERSION};
use serde_json::{json, Value};

/// JSON Pointer of the Pilotage `_meta` value inside a block whose root holds `_meta`.
const META: &str = "/_meta/io.github.jafarsa0~1pilotage";

/// What a block must satisfy. `at` is a JSON Pointer into the block.
#[derive(Debug)]
enum Check {
    /// A tool's structuredContent: valid against that tool's union (both flavours, and the
    /// schema's own definition), and round-trips through the typed union.
    StructuredContent { tool: ToolKind, at: &'static str },
    /// A Pilotage `_meta` value: valid against `def` (`InitializeMetaValue` or `ProgramDeclaration`).
    Meta { def: &'static str, at: &'static str },
    /// An abbreviated example: rejected by `def`, with exactly these violations
    /// (instance pointer, message), because `why`.
    Rejected {
        def: &'static str,
        at: &'static str,
        violations: &'static [(&'static str, &'static str)],
        why: &'static str,
    },
    /// An access tool's inputSchema: equal to the toolkit's definition.
    AccessInputSchema { tool: AccessTool, at: &'static str },
    /// Members of a `LanguageEntry`: merged into a valid entry, the entry stays valid.
    LanguageEntryMembers,
    /// MCP tool annotations: valid MCP `ToolAnnotations`, and only hints Pilotage uses.
    Annotations,
    /// Loop-tool arguments, a listing or a schema fragment: recorded for the derive tests.
    LoopTool { at: &'static str },
    /// A protocol envelope: must parse, and `at` must equal `expected`.
    Envelope { at: &'static str, expected: fn() -> Value },
}

fn extension_declaration() -> Value {
    json!({"io.github.jafarsa0/pilotage": {}})
}
fn extension_settings_with_version() -> Value {
    json!({"io.github.jafarsa0/pilotage": {"version": PILOTAGE_VERSION}})
}
fn version() -> Value {
    json!(PILOTAGE_VERSION)
}
fn is_error_true() -> Value {
    json!(true)
}
fn is_error_false() -> Value {
    json!(false)
}
fn invalid_params() -> Value {
    json!(-32602)
}

/// The classification of every block of Part III.
const TABLE: &[(&str, &[Check])] = &[
    // 1.2: capability declarations of client and server (identical blocks), and the settings.
    (
        "1.2#30ac79567e68",
        &[Check::Envelope {
            at: "/capabilities/extensions",
            expected: extension_declaration,
        }],
    ),
    (
        "1.2#25f8137263cc",
        &[Check::Envelope {
            at: "/version",
            expected: version,
        }],
    ),
    // 3.2: the initialize accelerator. Its manifest holds a placeholder string where Language
    // entries go, so the `_meta` value is rejected; the manifest_uri form is valid.
    (
        "3.2#81a986b372a9",
        &[Check::Rejected {
            def: "InitializeMetaValue",
            at: META,
            violations: &[(
                "/manifest/languages/0",
                "\"… one or more Language entries (Part II 5.1) …\" is not of type \"object\"",
            )],
            why: "abbreviated: a prose placeholder stands where Language entries (objects) go",
        }],
    ),
    (
        "3.2#172bf5573f09",
        &[Check::Meta {
            def: "InitializeMetaValue",
            at: "",
        }],
    ),
    // 4.1 / 4.2: access-tool input schemas, and the guide tool's two result forms.
    (
        "4.1#38e923380185",
        &[Check::AccessInputSchema {
            tool: AccessTool::GetGuide,
            at: "",
        }],
    ),
    (
        "4.1#b101c2623e4d",
        &[Check::StructuredContent {
            tool: ToolKind::GetGuide,
            at: "",
        }],
    ),
    (
        "4.1#2a98e79a2916",
        &[Check::Rejected {
            def: "GuideFetchResult",
            at: "",
            violations: &[
                ("/guide", "\"title\" is a required property"),
                ("/guide", "\"level\" is a required property"),
                ("/guide", "\"topics\" is a required property"),
                ("/guide", "\"language\" is a required property"),
                ("/guide", "\"version\" is a required property"),
                ("/guide", "\"size_bytes\" is a required property"),
            ],
            why: "abbreviated: shows only id and body; the fetch form carries every guide metadata field (4.1)",
        }],
    ),
    (
        "4.2#94c28775341d",
        &[Check::AccessInputSchema {
            tool: AccessTool::Catalog,
            at: "",
        }],
    ),
    // 4.3, 4.4, 8.1: members of a Language entry.
    ("4.3#11f013630e54", &[Check::LanguageEntryMembers]),
    ("4.4#75b2acf01c07", &[Check::LanguageEntryMembers]),
    ("8.1#b51e270bf86f", &[Check::LanguageEntryMembers]),
    // 4.5: annotations.
    ("4.5#df266e164018", &[Check::Annotations]),
    ("4.5#98ba8178459e", &[Check::Annotations]),
    // 4.6: a loop-tool inputSchema properties fragment, and the permissive program schema.
    ("4.6#6ac54250d0c0", &[Check::LoopTool { at: "" }]),
    ("4.6#44136fa355b3", &[Check::LoopTool { at: "" }]),
    // 5: the execute tool listing, and the multi-Language declaration.
    (
        "5#6310346e4690",
        &[
            Check::LoopTool { at: "" },
            Check::Meta {
                def: "ProgramDeclaration",
                at: META,
            },
        ],
    ),
    (
        "5#29ed40d7a739",
        &[Check::Meta {
            def: "ProgramDeclaration",
            at: "",
        }],
    ),
    // 6: the two "successful tool result" fragments, abbreviated.
    (
        "6#d14437df402b",
        &[Check::Rejected {
            def: "ValidateResponse",
            at: "",
            violations: &[("", "\"diagnostics\" is a required property")],
            why: "abbreviated: a validate response always carries diagnostics (an empty array means none)",
        }],
    ),
    (
        "6#f722f841120d",
        &[Check::Rejected {
            def: "Outcome",
            at: "",
            violations: &[
                ("", "\"status\" is a required property"),
                ("", "\"error\" is a required property"),
            ],
            why: "abbreviated: an outcome always carries status and error (null iff ok)",
        }],
    ),
    // 7.1: envelopes; the request error's structuredContent is abbreviated to `{"error": {}}`.
    (
        "7.1#5c2f287b587e",
        &[
            Check::Envelope {
                at: "/isError",
                expected: is_error_true,
            },
            Check::Rejected {
                def: "RequestError",
                at: "/structuredContent",
                violations: &[
                    ("/error", "\"kind\" is a required property"),
                    ("/error", "\"message\" is a required property"),
                ],
                why: "abbreviated: a request error always carries kind and message (7.2)",
            },
        ],
    ),
    (
        "7.1#79636c17c8e7",
        &[Check::Envelope {
            at: "/isError",
            expected: is_error_false,
        }],
    ),
    // 7.2: request errors, the second with the catalog's mandated sibling.
    (
        "7.2#ae37830d35f0",
        &[Check::StructuredContent {
            tool: ToolKind::Trace,
            at: "",
        }],
    ),
    (
        "7.2#70681ef9ce51",
        &[Check::StructuredContent {
            tool: ToolKind::Catalog,
            at: "",
        }],
    ),
    // 9.1: initialize request and response.
    (
        "9.1#102ba604d852",
        &[Check::Envelope {
            at: "/params/capabilities/extensions",
            expected: extension_declaration,
        }],
    ),
    (
        "9.1#d986bcba2757",
        &[
            Check::Envelope {
                at: "/result/capabilities/extensions",
                expected: extension_settings_with_version,
            },
            Check::Meta {
                def: "InitializeMetaValue",
                at: "/result/_meta/io.github.jafarsa0~1pilotage",
            },
            Check::StructuredContent {
                tool: ToolKind::Manifest,
                at: "/result/_meta/io.github.jafarsa0~1pilotage/manifest",
            },
        ],
    ),
    // 9.2: the execute tool in tools/list.
    (
        "9.2#da27e2e3ce2e",
        &[
            Check::LoopTool { at: "" },
            Check::Meta {
                def: "ProgramDeclaration",
                at: META,
            },
        ],
    ),
    // 9.3 to 9.5: tools/call requests (loop-tool arguments) and results.
    (
        "9.3#ec2ef8bf3b48",
        &[Check::LoopTool {
            at: "/params/arguments",
        }],
    ),
    (
        "9.3#e588ce3bdad1",
        &[
            Check::Envelope {
                at: "/result/isError",
                expected: is_error_false,
            },
            Check::StructuredContent {
                tool: ToolKind::Validate,
                at: "/result/structuredContent",
            },
        ],
    ),
    (
        "9.4#a7f05b29dc8e",
        &[Check::LoopTool {
            at: "/params/arguments",
        }],
    ),
    (
        "9.4#95f6d39ed27c",
        &[
            Check::Envelope {
                at: "/result/isError",
                expected: is_error_false,
            },
            Check::StructuredContent {
                tool: ToolKind::Execute,
                at: "/result/structuredContent",
            },
        ],
    ),
    (
        "9.5#d6b24a30caab",
        &[
            Check::Envelope {
                at: "/result/isError",
                expected: is_error_true,
            },
            Check::StructuredContent {
                tool: ToolKind::Trace,
                at: "/result/structuredContent",
            },
        ],
    ),
    // 9.6: a carrier error (JSON-RPC invalid params), not a Pilotage result.
    (
        "9.6#00a0e95c9beb",
        &[Check::Envelope {
            at: "/error/code",
            expected: invalid_params,
        }],
    ),
];

fn at<'a>(block: &'a Block, pointer: &str) -> &'a Value {
    let value = block
        .json
        .as_ref()
        .unwrap_or_else(|e| panic!("block {} (line {}) is not JSON: {e}", block.key(), block.line));
    value
        .pointer(pointer)
        .unwrap_or_else(|| panic!("block {} has nothing at {pointer:?}", block.key()))
}

fn valid_language_entry() -> Value {
    json!({"name": "workflow/v1", "title": "Workflows", "guides": "pilotage_get_guide",
        "loop": {"validate": "validate_workflow"}, "locator": "json-pointer"})
}

fn typed_round_trip(tool: ToolKind, value: &Value) {
    fn check<T: pilotage_types::SchemaDef + serde::de::DeserializeOwned + serde::Serialize>(value: &Value) {
        let typed: T = pilotage_types::parse_slice(value.to_string().as_bytes())
            .unwrap_or_else(|e| panic!("{} rejects {value}: {e}", std::any::type_name::<T>()));
        assert_eq!(
            &serde_json::to_value(typed).unwrap(),
            value,
            "{} does not round-trip",
            std::any::type_name::<T>()
        );
    }
    use pilotage_types::*;
    match tool {
        ToolKind::Manifest => check::<ManifestToolOutput>(value),
        ToolKind::GetGuide => check::<GetGuideToolOutput>(value),
        ToolKind::Catalog => check::<CatalogToolOutput>(value),
        ToolKind::Validate => check::<ValidateToolOutput>(value),
        ToolKind::Execute => check::<ExecuteToolOutput>(value),
        ToolKind::Trace => check::<TraceToolOutput>(value),
    }
}

fn run_check(
    block: &Block,
    check: &Check,
    mcp_schemas: Option<&[(&'static str, pilotage_types::validate::SchemaValidators)]>,
) {
    let key = block.key();
    match check {
        Check::StructuredContent { tool, at: pointer } => {
            let value = at(block, pointer);
            let own = pilotage().validate(tool.output_def(), value).unwrap();
            assert!(
                own.is_ok(),
                "{key}: {} rejects it: {}",
                tool.output_def(),
                own.unwrap_err()
            );
            for flavour in [Flavour::Bundled, Flavour::Inlined] {
                let union = jsonschema::validator_for(tool.output_schema(flavour)).unwrap();
                assert!(
                    union.is_valid(value),
                    "{key}: the {flavour:?} union of {tool:?} rejects it"
                );
            }
            typed_round_trip(*tool, value);
        }
        Check::Meta { def, at: pointer } => {
            let verdict = pilotage().validate(def, at(block, pointer)).unwrap();
            assert!(
                verdict.is_ok(),
                "{key}: {def} rejects the _meta value: {}",
                verdict.unwrap_err()
            );
        }
        Check::Rejected {
            def,
            at: pointer,
            violations,
            why,
        } => {
            let value = at(block, pointer);
            let errors = pilotage()
                .validate(def, value)
                .unwrap()
                .expect_err(&format!("{key} ({why}) must be rejected by {def}"));
            let mut found: Vec<(String, String)> = errors
                .violations
                .iter()
                .map(|v| (v.instance_pointer.clone(), v.message.clone()))
                .collect();
            let mut expected: Vec<(String, String)> =
                violations.iter().map(|(p, m)| (p.to_string(), m.to_string())).collect();
            found.sort();
            expected.sort();
            assert_eq!(found, expected, "{key}: {def} violations differ from the table ({why})");
        }
        Check::AccessInputSchema { tool, at: pointer } => {
            assert_eq!(
                at(block, pointer),
                &tool.input_schema(),
                "{key}: the toolkit's {} inputSchema differs",
                tool.name()
            );
        }
        Check::LanguageEntryMembers => {
            let mut entry = valid_language_entry();
            for (member, value) in at(block, "").as_object().unwrap() {
                entry[member] = value.clone();
            }
            let verdict = pilotage().validate("LanguageEntry", &entry).unwrap();
            assert!(
                verdict.is_ok(),
                "{key}: a Language entry with these members is invalid: {}",
                verdict.unwrap_err()
            );
        }
        Check::Annotations => {
            let value = at(block, "");
            let known = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"];
            assert!(
                value.as_object().unwrap().keys().all(|k| known.contains(&k.as_str())),
                "{key}: unknown hint"
            );
            if let Some(schemas) = mcp_schemas {
                for (revision, validators) in schemas {
                    assert!(
                        validators.is_valid("ToolAnnotations", value).unwrap(),
                        "{key}: not MCP {revision} ToolAnnotations"
                    );
                }
            }
        }
        Check::LoopTool { at: pointer } => {
            assert!(
                at(block, pointer).is_object(),
                "{key}: loop-tool block is not an object"
            );
        }
        Check::Envelope { at: pointer, expected } => {
            assert_eq!(at(block, pointer), &expected(), "{key}: envelope member {pointer}");
        }
    }
}

#[test]
fn every_part_iii_block_is_classified_and_checked() {
    let blocks = vendored_blocks();
    assert!(
        blocks.len() >= 30,
        "Part III has dozens of JSON blocks; found {}",
        blocks.len()
    );
    let mcp_schemas = mcp::schemas("Part III annotations against MCP ToolAnnotations");
    let mut unclassified = Vec::new();
    for block in &blocks {
        assert!(
            block.json.is_ok(),
            "block {} at line {} does not parse: {:?}",
            block.key(),
            block.line,
            block.json
        );
        match TABLE.iter().find(|(key, _)| *key == block.key()) {
            Some((_, checks)) => {
                for check in *checks {
                    run_check(block, check, mcp_schemas.as_deref());
                }
                println!(
                    "checked {} (line {}): {} check(s)",
                    block.key(),
                    block.line,
                    checks.len()
                );
            }
            None => unclassified.push(format!("{} at line {}:\n{}", block.key(), block.line, block.text)),
        }
    }
    assert!(
        unclassified.is_empty(),
        "unclassified Part III blocks (new or edited: classify them in TABLE):\n{}",
        unclassified.join("\n\n")
    );
    let stale: Vec<&str> = TABLE
        .iter()
        .map(|(key, _)| *key)
        .filter(|key| !blocks.iter().any(|b| b.key() == *key))
        .collect();
    assert!(
        stale.is_empty(),
        "TABLE rows whose block no longer exists in Part III: {stale:?}"
    );
}

#[test]
fn rejected_rows_say_why() {
    for (key, checks) in TABLE {
        for check in *checks {
            if let Check::Rejected { why, violations, .. } = check {
                assert!(
                    why.starts_with("abbreviated"),
                    "{key}: a rejected example must be explained as abbreviated"
                );
                assert!(!violations.is_empty(), "{key}: list the violations expected");
            }
        }
    }
}

#[test]
fn the_extension_identifier_matches_the_examples() {
    let blocks = vendored_blocks();
    let initialize = blocks.iter().find(|b| b.key() == "9.1#102ba604d852").unwrap();
    assert!(at(initialize, "/params/capabilities/extensions")
        .get(EXTENSION_ID)
        .is_some());
}
