//! Typed access-tool requests (Part III 4.1, 4.2): every rule's violation on its Part III 7.1
//! channel, checked against the declared sub-features, Language by Language.

use pilotage_types::{ArgumentFault, CatalogRequest, GuideRequest, Manifest, RequestErrorKind};
use serde_json::{json, Value};

/// Two Languages: `full/v1` declares every sub-feature at Language level; `bare/v1` inherits
/// the server's plain `guides` and has no catalog.
fn manifest() -> Manifest {
    serde_json::from_value(json!({
        "pilotage": "1.1",
        "capabilities": {"guides": true, "validate": true},
        "languages": [
            {"name": "full/v1", "title": "Full", "guides": "pilotage_get_guide", "catalog": "pilotage_catalog",
             "loop": {"validate": "v"}, "locator": "json-pointer",
             "capabilities": {"guides": {"topic_fetch": true}, "validate": true,
                 "catalog": {"search": true, "changed_since": true}}},
            {"name": "bare/v1", "title": "Bare", "guides": "pilotage_get_guide",
             "loop": {"validate": "v2"}, "locator": "json-pointer"}
        ]
    }))
    .unwrap()
}

#[derive(Debug, PartialEq)]
enum Expect {
    Carrier,
    Request(RequestErrorKind),
}

fn fault(result: Result<impl std::fmt::Debug, ArgumentFault>) -> Option<Expect> {
    match result {
        Ok(_) => None,
        Err(ArgumentFault::Carrier { message }) => {
            assert!(message.contains("argument"), "{message}");
            Some(Expect::Carrier)
        }
        Err(ArgumentFault::Request(error)) => Some(Expect::Request(error.error.kind)),
        Err(other) => panic!("an access tool has no program faults: {other:?}"),
    }
}

fn check(cases: &[(Value, Option<Expect>)], parse: impl Fn(&Value) -> Option<Expect>) {
    for (arguments, expected) in cases {
        let got = parse(arguments);
        assert_eq!(got.as_ref(), expected.as_ref(), "{arguments}");
    }
}

#[test]
fn guide_requests_follow_4_1() {
    use Expect::*;
    use RequestErrorKind::*;
    let manifest = manifest();
    assert_eq!(
        GuideRequest::from_arguments(
            &json!({"language": "full/v1", "id": "g", "topic": "t", "x-ext": 1}),
            &manifest
        ),
        Ok(GuideRequest::Topic {
            language: "full/v1".into(),
            id: "g".into(),
            topic: "t".into()
        })
    );
    assert_eq!(
        GuideRequest::from_arguments(&json!({"language": "bare/v1", "id": "g"}), &manifest),
        Ok(GuideRequest::Fetch {
            language: "bare/v1".into(),
            id: "g".into()
        })
    );
    check(
        &[
            (json!({"language": "full/v1"}), None),
            (json!({"language": "unknown/v9", "id": "g", "topic": "t"}), None),
            (json!({}), Some(Carrier)),
            (json!({"language": 1}), Some(Carrier)),
            (json!({"language": "full/v1", "id": null}), Some(Carrier)),
            (json!([]), Some(Carrier)),
            (
                json!({"language": "full/v1", "topic": "t"}),
                Some(Request(InvalidRequest)),
            ),
            (
                json!({"language": "bare/v1", "id": "g", "topic": "t"}),
                Some(Request(Unsupported)),
            ),
        ],
        |a| fault(GuideRequest::from_arguments(a, &manifest)),
    );
}

#[test]
fn catalog_requests_follow_4_2() {
    use Expect::*;
    use RequestErrorKind::*;
    let manifest = manifest();
    assert_eq!(
        CatalogRequest::from_arguments(
            &json!({"language": "full/v1", "verb": "list", "q": "user", "limit": 5.0, "cursor": "c1"}),
            &manifest
        ),
        Ok(CatalogRequest::List {
            language: "full/v1".into(),
            kind: None,
            tag: None,
            q: Some("user".into()),
            cursor: Some("c1".into()),
            limit: Some(5)
        })
    );
    check(
        &[
            (json!({"language": "full/v1", "verb": "get", "id": "e"}), None),
            (
                json!({"language": "full/v1", "verb": "changed_since", "catalog_version": "v"}),
                None,
            ),
            (json!({"language": "unknown/v9", "verb": "get", "id": "e"}), None),
            // Structural, against the strict schema: carrier.
            (json!({"language": "full/v1"}), Some(Carrier)),
            (json!({"verb": "list"}), Some(Carrier)),
            (json!({"language": "full/v1", "verb": "find"}), Some(Carrier)),
            (
                json!({"language": "full/v1", "verb": "list", "limit": 0}),
                Some(Carrier),
            ),
            (
                json!({"language": "full/v1", "verb": "list", "limit": "5"}),
                Some(Carrier),
            ),
            (
                json!({"language": "full/v1", "verb": "list", "limit": 1.5}),
                Some(Carrier),
            ),
            (json!({"language": "full/v1", "verb": "get", "id": 7}), Some(Carrier)),
            // A member not applicable to the verb.
            (
                json!({"language": "full/v1", "verb": "get", "id": "e", "limit": 3}),
                Some(Request(InvalidRequest)),
            ),
            (
                json!({"language": "full/v1", "verb": "list", "id": "e"}),
                Some(Request(InvalidRequest)),
            ),
            (
                json!({"language": "full/v1", "verb": "list", "catalog_version": "v"}),
                Some(Request(InvalidRequest)),
            ),
            (
                json!({"language": "full/v1", "verb": "changed_since", "catalog_version": "v", "q": "x"}),
                Some(Request(InvalidRequest)),
            ),
            // Required by the verb.
            (
                json!({"language": "full/v1", "verb": "get"}),
                Some(Request(InvalidRequest)),
            ),
            (
                json!({"language": "full/v1", "verb": "changed_since"}),
                Some(Request(InvalidRequest)),
            ),
            // Undeclared sub-features and capability.
            (
                json!({"language": "bare/v1", "verb": "list"}),
                Some(Request(Unsupported)),
            ),
        ],
        |a| fault(CatalogRequest::from_arguments(a, &manifest)),
    );
    // A Language that declares catalog without sub-features.
    let mut plain: Value = serde_json::to_value(&manifest).unwrap();
    plain["languages"][0]["capabilities"]["catalog"] = json!(true);
    let plain: Manifest = serde_json::from_value(plain).unwrap();
    check(
        &[
            (
                json!({"language": "full/v1", "verb": "list", "kind": "capability"}),
                None,
            ),
            (
                json!({"language": "full/v1", "verb": "list", "q": "x"}),
                Some(Request(Unsupported)),
            ),
            (
                json!({"language": "full/v1", "verb": "changed_since", "catalog_version": "v"}),
                Some(Request(Unsupported)),
            ),
        ],
        |a| fault(CatalogRequest::from_arguments(a, &plain)),
    );
    // The engine adds its catalog_version to a request error (Part III 7.2).
    let Err(ArgumentFault::Request(error)) =
        CatalogRequest::from_arguments(&json!({"language": "full/v1", "verb": "get"}), &manifest)
            .map_err(|f| f.with_catalog_version("cv_1"))
    else {
        panic!("a request error")
    };
    assert_eq!(error.catalog_version.as_deref(), Some("cv_1"));
}
