//! The outputSchema unions (Part III 6): both flavours accept and reject exactly what the
//! schema's own `*ToolOutput` definition does, on a corpus of hundreds of valid and invalid
//! instances; both are valid `Tool.outputSchema` values under all three official MCP schemas;
//! the access tools are valid MCP `Tool`s.

use pilotage_tests::{corpus, mcp};
use pilotage_types::validate::{pilotage, SchemaValidators};
use pilotage_types::{AccessTool, Flavour, ToolKind};
use serde_json::{json, Value};

#[test]
fn both_flavours_agree_with_the_tool_output_definition() {
    let instances = corpus::corpus();
    for kind in ToolKind::ALL {
        let mut accepted = 0;
        for flavour in [Flavour::Bundled, Flavour::Inlined] {
            let union = kind.output_schema(flavour);
            assert_eq!(union["type"], "object", "{kind:?} {flavour:?} has no root type");
            assert!(union["anyOf"].is_array());
            let validator = jsonschema::validator_for(union).expect("union compiles");
            for instance in &instances {
                let expected = pilotage().is_valid(kind.output_def(), instance).unwrap();
                assert_eq!(
                    validator.is_valid(instance),
                    expected,
                    "{kind:?} {flavour:?} disagrees with {} on {instance}",
                    kind.output_def()
                );
                accepted += usize::from(expected);
            }
        }
        assert!(
            accepted > 0 && accepted < 2 * instances.len(),
            "{kind:?}: the corpus must hold valid and invalid instances"
        );
    }
}

#[test]
fn inlined_flavour_has_no_ref_and_bundled_only_reachable_defs() {
    for kind in ToolKind::ALL {
        let inlined = kind.output_schema(Flavour::Inlined).to_string();
        assert!(!inlined.contains("\"$ref\""), "{kind:?} inlined has a $ref");
        let bundled = kind.output_schema(Flavour::Bundled);
        let defs = bundled["$defs"].as_object().unwrap();
        for name in defs.keys() {
            let reference = format!("\"#/$defs/{name}\"");
            let elsewhere = bundled.to_string().matches(&reference).count();
            assert!(elsewhere > 0, "{kind:?} bundles {name}, which nothing references");
        }
        assert!(
            !defs.contains_key(kind.output_def()),
            "the union itself is the root, not a def"
        );
    }
}

#[test]
fn unions_are_valid_mcp_output_schemas_and_access_tools_valid_mcp_tools() {
    let Some(schemas) = mcp::schemas("outputSchema and access tools against the MCP Tool schemas") else {
        return;
    };
    for kind in ToolKind::ALL {
        for flavour in [Flavour::Bundled, Flavour::Inlined] {
            let tool =
                json!({"name": "t", "inputSchema": {"type": "object"}, "outputSchema": kind.output_schema(flavour)});
            mcp::assert_valid_tool(&schemas, &tool);
        }
    }
    // A union without the root type is rejected by the older revisions: the check can fail.
    let mut untyped = ToolKind::Validate.output_schema(Flavour::Inlined).clone();
    untyped.as_object_mut().unwrap().remove("type");
    let tool = json!({"name": "t", "inputSchema": {"type": "object"}, "outputSchema": untyped});
    let (_, older) = &schemas[0];
    assert!(
        older.validate("Tool", &tool).unwrap().is_err(),
        "2025-06-18 must reject an outputSchema without type"
    );

    for access in AccessTool::ALL {
        mcp::assert_valid_tool(&schemas, &access.definition().to_value());
        mcp::assert_valid_tool(&schemas, &access.definition_with(Flavour::Bundled).to_value());
    }
}

#[test]
fn access_tools_follow_part_iii() {
    let manifest = AccessTool::Manifest.definition().to_value();
    assert_eq!(manifest["name"], "pilotage_manifest");
    assert_eq!(manifest["inputSchema"]["type"], "object");
    assert!(
        manifest["inputSchema"].get("required").is_none(),
        "3.1: no required members"
    );
    let description = manifest["description"].as_str().unwrap().to_lowercase();
    assert!(description.contains("call this first") && description.contains("pilotage"));
    for access in AccessTool::ALL {
        let tool = access.definition().to_value();
        assert_eq!(tool["annotations"]["readOnlyHint"], true, "4.5");
        assert_eq!(&tool["outputSchema"], access.kind().output_schema(Flavour::Inlined));
    }
    let guide = AccessTool::GetGuide.definition().to_value();
    assert!(guide["description"]
        .as_str()
        .unwrap()
        .to_lowercase()
        .contains("learn stage"));
    assert!(guide["description"].as_str().unwrap().contains("guides"));
    let catalog = AccessTool::Catalog.definition().to_value();
    assert!(catalog["description"]
        .as_str()
        .unwrap()
        .to_lowercase()
        .contains("lookup stage"));
    assert!(catalog["description"].as_str().unwrap().contains("catalog"));
}

#[test]
fn union_files_parse_and_validate_as_json_schema() {
    let meta = SchemaValidators::new(json!({"$defs": {}}));
    assert_eq!(meta.def_names().count(), 0);
    for kind in ToolKind::ALL {
        for flavour in [Flavour::Bundled, Flavour::Inlined] {
            let union: &Value = kind.output_schema(flavour);
            assert!(
                jsonschema::meta::is_valid(union),
                "{kind:?} {flavour:?} is not a valid 2020-12 schema"
            );
        }
    }
}
