//! The schema set the validators are generated from, and where every identifier in it points:
//! each document's base URI, every schema resource (`$id`, draft-07's `$id` with a plain-name
//! fragment as an anchor), every `$anchor` and `$dynamicAnchor` (2019-09's `$recursiveAnchor`
//! as the dynamic anchor of the empty name), and the base URI in force at every schema
//! location, so a `$ref` is resolved as RFC 3986 section 5 and JSON Schema's "Base URI,
//! Anchors, and Dereferencing" say.
//!
//! Only subschemas under the keywords that hold schemas are walked: an `$id` inside an `enum`,
//! a `const`, an `examples` or an unknown keyword is not an identifier (the suite's
//! "`$id` inside an enum is not a real identifier"). In draft-04/06/07 a `$ref` hides its
//! siblings, `$id` included.

use std::collections::BTreeMap;

use serde_json::Value;
use url::Url;

use crate::error::escape_pointer_token;
use crate::CodegenError;

/// The dialect of a schema resource, which changes a few keywords' meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[non_exhaustive]
pub enum Draft {
    /// Draft-04: as draft-07 below, with `id` for `$id`, the boolean `exclusiveMinimum` /
    /// `exclusiveMaximum`, and no `const`, `contains`, `propertyNames` or `if`.
    Draft4,
    /// Draft-06: as draft-07, without `if` / `then` / `else`.
    Draft6,
    /// Draft-07: `$ref` hides its siblings; the standard formats assert; `dependencies`,
    /// array-form `items` and `additionalItems`.
    Draft7,
    /// Draft 2019-09: `$recursiveRef` / `$recursiveAnchor`, array-form `items` and
    /// `additionalItems`, `unevaluated*`.
    Draft2019,
    /// Draft 2020-12 (the default without `$schema`, as in jsonschema).
    #[default]
    Draft2020,
}

impl Draft {
    /// The dialect a `$schema` URI names, if it names one of the drafts.
    pub fn from_schema_uri(uri: &str) -> Option<Draft> {
        let uri = uri.trim_end_matches('#');
        if uri.contains("draft-04") {
            Some(Draft::Draft4)
        } else if uri.contains("draft-06") {
            Some(Draft::Draft6)
        } else if uri.contains("draft-07") {
            Some(Draft::Draft7)
        } else if uri.contains("draft/2019-09") {
            Some(Draft::Draft2019)
        } else if uri.contains("draft/2020-12") {
            Some(Draft::Draft2020)
        } else {
            None
        }
    }

    /// Draft-04, -06 or -07: `$ref` hides its siblings, formats assert, `dependencies`.
    pub fn is_legacy(self) -> bool {
        matches!(self, Draft::Draft4 | Draft::Draft6 | Draft::Draft7)
    }

    /// Whether `$ref` hides its siblings (draft-04/06/07).
    pub fn ref_hides_siblings(self) -> bool {
        self.is_legacy()
    }

    /// The keyword naming a schema resource: `id` in draft-04, `$id` after.
    pub fn id_keyword(self) -> &'static str {
        if self == Draft::Draft4 {
            "id"
        } else {
            "$id"
        }
    }

    /// Whether the dialect has `keyword` (for those draft-04 and draft-06 lack).
    pub(crate) fn has(self, keyword: &str) -> bool {
        match keyword {
            "const" | "contains" | "propertyNames" => self != Draft::Draft4,
            "if" | "then" | "else" => !matches!(self, Draft::Draft4 | Draft::Draft6),
            _ => true,
        }
    }
}

/// One document of a schema set.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Document {
    /// The URI the document is known by (its retrieval URI): `$ref`s naming it resolve to it,
    /// and its relative references resolve against it unless its root has an `$id`.
    pub uri: String,
    /// The document's display name in errors (normally its path).
    pub file: String,
    /// The document.
    pub value: Value,
}

impl Document {
    /// A document known by `uri`, named `file` in errors.
    pub fn new(uri: impl Into<String>, file: impl Into<String>, value: Value) -> Self {
        Self {
            uri: uri.into(),
            file: file.into(),
            value,
        }
    }
}

/// A schema location: a document of the set and a JSON Pointer inside it.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub struct Location {
    /// The document's index in the set.
    pub doc: usize,
    /// The JSON Pointer inside it.
    pub pointer: String,
}

impl Location {
    /// The location `pointer` in the set's document `doc`.
    pub fn new(doc: usize, pointer: impl Into<String>) -> Self {
        Self {
            doc,
            pointer: pointer.into(),
        }
    }
}

/// A schema resource: a document root or a subschema with its own `$id`.
#[derive(Debug, Clone)]
pub(crate) struct Resource {
    /// Where the resource's root is.
    pub root: Location,
    /// Its dialect.
    pub draft: Draft,
    /// Its dynamic anchors (`$dynamicAnchor`; `""` for `$recursiveAnchor: true`), by name.
    pub dynamic: BTreeMap<String, Location>,
}

/// The identifiers of a schema set.
#[derive(Debug, Default)]
pub(crate) struct Index {
    /// The resources; a resource's number is its index here.
    pub resources: Vec<Resource>,
    /// Resource by absolute URI (no fragment).
    by_uri: BTreeMap<String, usize>,
    /// The documents from this index on are built in (the drafts' metaschemas): a URI or an
    /// anchor one of the set's own documents declares is never taken by one of them.
    builtin_from: usize,
    /// Plain-name anchors: (resource URI, name) to location.
    anchors: BTreeMap<(String, String), Location>,
    /// The resource each walked schema location belongs to, and its base URI.
    scopes: BTreeMap<Location, (usize, String)>,
}

/// Records `key` in `table`: a later declaration wins, but a built-in document's never
/// displaces one the set's own documents made.
fn declare<K: Ord, V>(table: &mut BTreeMap<K, V>, builtin: bool, key: K, value: V) {
    if builtin {
        table.entry(key).or_insert(value);
    } else {
        table.insert(key, value);
    }
}

/// Resolves `reference` against `base` (RFC 3986 section 5).
pub(crate) fn join(base: &str, reference: &str) -> Option<String> {
    let base = Url::parse(base).ok()?;
    base.join(reference).ok().map(String::from)
}

/// A URI without its fragment.
pub(crate) fn strip_fragment(uri: &str) -> &str {
    uri.split_once('#').map_or(uri, |(base, _)| base)
}

/// The keywords whose value is one subschema.
const ONE: &[&str] = &[
    "additionalItems",
    "additionalProperties",
    "contains",
    "contentSchema",
    "else",
    "if",
    "items",
    "not",
    "propertyNames",
    "then",
    "unevaluatedItems",
    "unevaluatedProperties",
];
/// The keywords whose value is an array of subschemas (`items` in its array form too).
const MANY: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];
/// The keywords whose value is an object of subschemas (`dependencies` where a member is one).
const MAP: &[&str] = &[
    "$defs",
    "definitions",
    "dependentSchemas",
    "patternProperties",
    "properties",
    "dependencies",
];

impl Index {
    /// Walks every document of the set.
    pub(crate) fn build(docs: &[Document], default_draft: Draft) -> Result<Index, CodegenError> {
        Self::build_with_builtins(docs, default_draft, docs.len())
    }

    /// Walks every document of the set, those from `builtin_from` on being built in: where one
    /// of the set's own documents declares a URI (an `$id`) or an anchor that a built-in one
    /// declares too (a bundle with a copy of a metaschema under the metaschema's `$id`, edited
    /// or not), references to it reach the set's own, as jsonschema's registry resolves them.
    pub(crate) fn build_with_builtins(
        docs: &[Document],
        default_draft: Draft,
        builtin_from: usize,
    ) -> Result<Index, CodegenError> {
        let mut index = Index {
            builtin_from,
            ..Index::default()
        };
        for (doc, document) in docs.iter().enumerate() {
            let draft = document
                .value
                .get("$schema")
                .and_then(Value::as_str)
                .and_then(Draft::from_schema_uri)
                .unwrap_or(default_draft);
            let uri = strip_fragment(&document.uri).to_owned();
            let resource = index.resources.len();
            index.resources.push(Resource {
                root: Location {
                    doc,
                    pointer: String::new(),
                },
                draft,
                dynamic: BTreeMap::new(),
            });
            index.by_uri.entry(uri.clone()).or_insert(resource);
            index.walk(
                document,
                doc,
                &document.value,
                String::new(),
                &uri,
                resource,
                draft,
                true,
            )?;
        }
        Ok(index)
    }

    /// Records that the document `doc` declares `uri` as `resource`, as [`declare`] does.
    fn declare(&mut self, doc: usize, uri: String, resource: usize) {
        declare(&mut self.by_uri, doc >= self.builtin_from, uri, resource);
    }

    /// Records the anchor `key` (resource URI, name) of the document `doc`, as [`declare`]
    /// does.
    fn anchor(&mut self, doc: usize, key: (String, String), location: Location) {
        declare(&mut self.anchors, doc >= self.builtin_from, key, location);
    }

    #[allow(clippy::too_many_arguments)]
    fn walk(
        &mut self,
        document: &Document,
        doc: usize,
        schema: &Value,
        pointer: String,
        base: &str,
        mut resource: usize,
        mut draft: Draft,
        is_root: bool,
    ) -> Result<(), CodegenError> {
        let Value::Object(object) = schema else {
            if schema.is_boolean() {
                self.scopes
                    .insert(Location { doc, pointer }, (resource, base.to_owned()));
            }
            return Ok(());
        };
        let error = |at: &str, message: String| CodegenError::new(&document.file, at, message);
        let mut base = base.to_owned();
        let hidden = draft.ref_hides_siblings() && object.contains_key("$ref");
        if !hidden {
            if let Some(dialect) = object
                .get("$schema")
                .and_then(Value::as_str)
                .and_then(Draft::from_schema_uri)
            {
                if object.contains_key(dialect.id_keyword()) || is_root {
                    draft = dialect;
                }
            }
            if let Some(id) = object.get(draft.id_keyword()).and_then(Value::as_str) {
                let at = format!("{pointer}/{}", draft.id_keyword());
                let resolved =
                    join(&base, id).ok_or_else(|| error(&at, format!("`$id` {id:?} is not a URI reference")))?;
                let (uri, fragment) = match resolved.split_once('#') {
                    Some((uri, fragment)) => (uri.to_owned(), fragment.to_owned()),
                    None => (resolved.clone(), String::new()),
                };
                let location = Location {
                    doc,
                    pointer: pointer.clone(),
                };
                if id.starts_with('#') {
                    // Draft-07's plain-name `$id: "#foo"`: an anchor, not a new base.
                    if !fragment.is_empty() {
                        self.anchor(doc, (uri, fragment), location);
                    }
                } else {
                    if !is_root {
                        resource = self.resources.len();
                        self.resources.push(Resource {
                            root: location.clone(),
                            draft,
                            dynamic: BTreeMap::new(),
                        });
                    } else {
                        self.resources[resource].draft = draft;
                    }
                    self.declare(doc, uri.clone(), resource);
                    if !fragment.is_empty() && !fragment.starts_with('/') {
                        self.anchor(doc, (uri.clone(), fragment), location);
                    }
                    base = uri;
                }
            }
            let location = Location {
                doc,
                pointer: pointer.clone(),
            };
            if let Some(anchor) = object.get("$anchor").and_then(Value::as_str) {
                self.anchor(doc, (base.clone(), anchor.to_owned()), location.clone());
            }
            if draft == Draft::Draft2020 {
                if let Some(anchor) = object.get("$dynamicAnchor").and_then(Value::as_str) {
                    self.anchor(doc, (base.clone(), anchor.to_owned()), location.clone());
                    self.resources[resource]
                        .dynamic
                        .entry(anchor.to_owned())
                        .or_insert(location.clone());
                }
            }
            if draft == Draft::Draft2019 && object.get("$recursiveAnchor") == Some(&Value::Bool(true)) {
                // Only a resource's root may carry it; elsewhere it has no effect.
                if self.resources[resource].root == location {
                    self.resources[resource].dynamic.insert(String::new(), location);
                }
            }
        }
        self.scopes.insert(
            Location {
                doc,
                pointer: pointer.clone(),
            },
            (resource, base.clone()),
        );
        if hidden {
            return Ok(());
        }
        for (keyword, value) in object {
            let at = format!("{pointer}/{}", escape_pointer_token(keyword));
            let keyword = keyword.as_str();
            if MANY.contains(&keyword) {
                if let Value::Array(items) = value {
                    for (i, item) in items.iter().enumerate() {
                        self.walk(document, doc, item, format!("{at}/{i}"), &base, resource, draft, false)?;
                    }
                    continue;
                }
            }
            if ONE.contains(&keyword) {
                self.walk(document, doc, value, at, &base, resource, draft, false)?;
            } else if MAP.contains(&keyword) {
                if let Value::Object(members) = value {
                    for (name, member) in members {
                        if keyword == "dependencies" && member.is_array() {
                            continue;
                        }
                        let at = format!("{at}/{}", escape_pointer_token(name));
                        self.walk(document, doc, member, at, &base, resource, draft, false)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// The resource and base URI in force at `location`: its own when walked, else its
    /// nearest walked ancestor's (a `$ref` may point anywhere in a document).
    pub(crate) fn scope(&self, location: &Location) -> (usize, String) {
        let mut pointer = location.pointer.as_str();
        loop {
            let here = Location {
                doc: location.doc,
                pointer: pointer.to_owned(),
            };
            if let Some(scope) = self.scopes.get(&here) {
                return scope.clone();
            }
            match pointer.rfind('/') {
                Some(cut) => pointer = &pointer[..cut],
                None => {
                    return (
                        self.resources
                            .iter()
                            .position(|r| r.root.doc == location.doc && r.root.pointer.is_empty())
                            .unwrap_or(0),
                        String::new(),
                    )
                }
            }
        }
    }

    /// Whether `location` is the root of a resource other than its document's root, and
    /// which.
    pub(crate) fn resource_at(&self, location: &Location) -> Option<usize> {
        self.resources.iter().position(|r| r.root == *location)
    }

    /// The location an absolute URI (with its fragment) names: a resource, a JSON Pointer
    /// inside one, or an anchor. `Ok(None)` when its document is not in the set.
    pub(crate) fn locate(&self, docs: &[Document], uri: &str) -> Result<Option<Location>, String> {
        let (base, fragment) = match uri.split_once('#') {
            Some((base, fragment)) => (base, percent_decode(fragment)),
            None => (uri, String::new()),
        };
        let Some(&resource) = self.by_uri.get(base) else {
            return Ok(None);
        };
        let root = &self.resources[resource].root;
        if fragment.is_empty() {
            return Ok(Some(root.clone()));
        }
        if fragment.starts_with('/') {
            let pointer = format!("{}{fragment}", root.pointer);
            if docs[root.doc].value.pointer(&pointer).is_none() {
                return Err(format!("points to nothing in {}", docs[root.doc].file));
            }
            return Ok(Some(Location { doc: root.doc, pointer }));
        }
        match self.anchors.get(&(base.to_owned(), fragment.clone())) {
            Some(location) => Ok(Some(location.clone())),
            None => Err(format!("names the anchor {fragment:?}, which {base} does not define")),
        }
    }
}

/// Decodes `%XX` escapes (a URI fragment holding a JSON Pointer).
pub(crate) fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(byte) = u8::from_str_radix(&text[i + 1..i + 3], 16) {
                out.push(byte);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{join, Document, Draft, Index, Location};

    fn docs(value: serde_json::Value) -> Vec<Document> {
        vec![Document {
            uri: "json-schema:///root.json".to_owned(),
            file: "root.json".to_owned(),
            value,
        }]
    }

    #[test]
    fn nested_ids_anchors_and_pointers_resolve() {
        let set = docs(json!({
            "$id": "http://example.com/root.json",
            "$defs": {
                "a": {"$id": "nested/a.json", "$defs": {"b": {"$anchor": "bee", "type": "integer"}}},
                "e": {"enum": [{"$id": "http://example.com/not-an-id"}]}
            }
        }));
        let index = Index::build(&set, Draft::Draft2020).unwrap();
        let at = |pointer: &str| Location {
            doc: 0,
            pointer: pointer.to_owned(),
        };
        assert_eq!(
            index.locate(&set, "http://example.com/nested/a.json").unwrap(),
            Some(at("/$defs/a"))
        );
        assert_eq!(
            index.locate(&set, "http://example.com/nested/a.json#bee").unwrap(),
            Some(at("/$defs/a/$defs/b"))
        );
        assert_eq!(
            index.locate(&set, "http://example.com/nested/a.json#/$defs/b").unwrap(),
            Some(at("/$defs/a/$defs/b"))
        );
        assert_eq!(index.locate(&set, "http://example.com/not-an-id").unwrap(), None);
        assert!(index.locate(&set, "http://example.com/root.json#nope").is_err());
        let (resource, base) = index.scope(&at("/$defs/a/$defs/b/type"));
        assert_eq!(base, "http://example.com/nested/a.json");
        assert_eq!(index.resources[resource].root, at("/$defs/a"));
    }

    #[test]
    fn draft7_ref_hides_a_sibling_id_and_plain_name_ids_are_anchors() {
        let set = docs(json!({
            "definitions": {
                "a": {"$id": "#foo", "type": "string"},
                "b": {"$id": "http://example.com/b.json", "$ref": "#/definitions/a"}
            }
        }));
        let index = Index::build(&set, Draft::Draft7).unwrap();
        assert!(index.locate(&set, "json-schema:///root.json#foo").unwrap().is_some());
        assert_eq!(index.locate(&set, "http://example.com/b.json").unwrap(), None);
    }

    /// A document of the set that declares a built-in metaschema's URI (a bundle's copy of it,
    /// edited) is what that URI names, `#` inside it included: the built-in copy, walked after
    /// it, takes neither the URI nor its anchors. Among the set's own documents the later
    /// declaration still wins.
    #[test]
    fn the_sets_own_documents_keep_a_uri_a_builtin_declares_too() {
        let meta = "http://json-schema.org/draft-07/schema";
        let own = Document::new(
            "json-schema:///bundle.json",
            "bundle.json",
            json!({"$id": format!("{meta}#"), "$defs": {"a": {"$anchor": "x", "type": "string"}}}),
        );
        let builtin = Document::new(
            meta,
            "metaschema",
            json!({"$id": format!("{meta}#"), "$defs": {"a": {"$anchor": "x", "type": "integer"}}}),
        );
        let set = vec![own.clone(), builtin.clone()];
        let index = Index::build_with_builtins(&set, Draft::Draft2020, 1).unwrap();
        let at = |doc: usize, pointer: &str| Location {
            doc,
            pointer: pointer.to_owned(),
        };
        assert_eq!(index.locate(&set, meta).unwrap(), Some(at(0, "")));
        assert_eq!(
            index.locate(&set, &format!("{meta}#x")).unwrap(),
            Some(at(0, "/$defs/a"))
        );
        // Both the set's own: the later one declares the URI.
        let index = Index::build(&set, Draft::Draft2020).unwrap();
        assert_eq!(index.locate(&set, meta).unwrap(), Some(at(1, "")));
        assert_eq!(
            index.locate(&set, &format!("{meta}#x")).unwrap(),
            Some(at(1, "/$defs/a"))
        );
    }

    #[test]
    fn joins_follow_rfc_3986() {
        assert_eq!(join("http://a/b/c/d", "../g").as_deref(), Some("http://a/b/g"));
        assert_eq!(
            join("urn:uuid:deadbeef", "#/$defs/x").as_deref(),
            Some("urn:uuid:deadbeef#/$defs/x")
        );
        assert_eq!(
            join("http://a/b.json", "http://c/d.json#x").as_deref(),
            Some("http://c/d.json#x")
        );
    }
}
