//! Typed requests of the fixed access tools (Part III 4.1 `pilotage_get_guide`, 4.2
//! `pilotage_catalog`), parsed from `tools/call` arguments and checked against the manifest,
//! every fault on its Part III 7.1 channel:
//!
//! - **carrier** ([`ArgumentFault::Carrier`], JSON-RPC `-32602`): a violation of the strict
//!   binding-defined input schemas (7.1: "for the fixed access tools, their binding-defined
//!   schemas are intentionally strict"): `language` (and `verb`) missing, a member of the wrong
//!   JSON type, a `verb` outside the enum, `limit` below 1;
//! - **request error** ([`ArgumentFault::Request`]): a member not applicable to the verb or
//!   form (`invalid_request`), a verb or member needing a sub-feature the Language does not
//!   declare (`unsupported`), `get` without `id` or `changed_since` without
//!   `catalog_version` (`invalid_request`), a Language without the capability (`unsupported`).
//!
//! An unknown Language, guide `id`, topic or catalog entry is left to the engine, which alone
//! knows its content: it answers `not_found` (Part III 4.1 "Errors", 7.2). For an unknown
//! Language nothing can be checked against its declaration, so the request is returned as
//! parsed. Unknown members are ignored (receivers ignore unknown members).
//!
//! ```
//! use pilotage_types::{parse, GuideRequest, Manifest, CatalogRequest, ArgumentFault, RequestErrorKind};
//! let manifest: Manifest = serde_json::from_value(serde_json::json!({
//!     "pilotage": "1.1",
//!     "capabilities": {"guides": true, "validate": true, "catalog": {"search": true}},
//!     "languages": [{"name": "workflow/v1", "title": "Workflows", "guides": "pilotage_get_guide",
//!         "catalog": "pilotage_catalog", "loop": {"validate": "validate_workflow"}, "locator": "json-pointer"}]
//! }))?;
//! let index = GuideRequest::from_arguments(&serde_json::json!({"language": "workflow/v1"}), &manifest);
//! assert_eq!(index, Ok(GuideRequest::Index { language: "workflow/v1".into() }));
//! let topic = GuideRequest::from_arguments(&serde_json::json!({"language": "workflow/v1", "id": "g", "topic": "t"}), &manifest);
//! assert!(matches!(topic, Err(ArgumentFault::Request(e)) if e.error.kind == RequestErrorKind::Unsupported));
//! let changed = CatalogRequest::from_arguments(
//!     &serde_json::json!({"language": "workflow/v1", "verb": "changed_since", "catalog_version": "v1"}), &manifest);
//! assert!(matches!(changed, Err(ArgumentFault::Request(e)) if e.error.kind == RequestErrorKind::Unsupported));
//! # Ok::<(), serde_json::Error>(())
//! ```

use serde_json::{Map, Value};

use crate::capabilities::Capability;
use crate::{ArgumentFault, Manifest, RequestError};

/// A `pilotage_get_guide` request (Part III 4.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuideRequest {
    /// The index form: `id` absent.
    Index {
        /// The Language.
        language: String,
    },
    /// The fetch form: one guide with its body.
    Fetch {
        /// The Language.
        language: String,
        /// The guide.
        id: String,
    },
    /// The topic form (`guides.topic_fetch`): the guide's shape, `body` holding only the topic.
    Topic {
        /// The Language.
        language: String,
        /// The guide.
        id: String,
        /// The topic within it.
        topic: String,
    },
}

/// A `pilotage_catalog` request (Part III 4.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CatalogRequest {
    /// `list`, with its filters and paging.
    List {
        /// The Language.
        language: String,
        /// Only entries of this kind.
        kind: Option<String>,
        /// Only entries with this tag.
        tag: Option<String>,
        /// A search query (`catalog.search`).
        q: Option<String>,
        /// The `next_cursor` of a previous page.
        cursor: Option<String>,
        /// At most this many entries (the server MAY cap it).
        limit: Option<u64>,
    },
    /// `get` of one entry.
    Get {
        /// The Language.
        language: String,
        /// The entry.
        id: String,
    },
    /// `changed_since` a catalog version (`catalog.changed_since`).
    ChangedSince {
        /// The Language.
        language: String,
        /// The baseline.
        catalog_version: String,
    },
}

impl GuideRequest {
    /// The Language the request names.
    pub fn language(&self) -> &str {
        match self {
            Self::Index { language } | Self::Fetch { language, .. } | Self::Topic { language, .. } => language,
        }
    }

    /// Parses `pilotage_get_guide` arguments and checks them against `manifest` (see the
    /// [module docs](self) for the channel of each fault).
    pub fn from_arguments(arguments: &Value, manifest: &Manifest) -> Result<Self, ArgumentFault> {
        let members = object(arguments)?;
        let language = required_string(members, "language")?;
        let id = optional_string(members, "id")?;
        let topic = optional_string(members, "topic")?;
        let topic_fetch = manifest.language(&language).map(|entry| {
            manifest
                .effective_capabilities(entry)
                .is_some_and(|c| c.declares_sub_feature(Capability::Guides, "topic_fetch"))
        });
        match (id, topic) {
            (None, None) => Ok(Self::Index { language }),
            (None, Some(_)) => Err(request(RequestError::invalid_request(
                "`topic` applies to the fetch form: supply the guide `id` with it (Part III 4.1)",
            ))),
            (Some(id), None) => Ok(Self::Fetch { language, id }),
            (Some(_), Some(_)) if topic_fetch == Some(false) => Err(request(RequestError::unsupported(format!(
                "`topic` needs the guides.topic_fetch sub-feature, which {language} does not declare (Part III 4.1)"
            )))),
            (Some(id), Some(topic)) => Ok(Self::Topic { language, id, topic }),
        }
    }
}

/// The members each verb may use (Part III 4.2), besides `language` and `verb`.
fn applicable(verb: &str) -> &'static [&'static str] {
    match verb {
        "list" => &["kind", "tag", "q", "cursor", "limit"],
        "get" => &["id"],
        _ => &["catalog_version"],
    }
}

/// Every member of the `pilotage_catalog` input schema but `language` and `verb`.
const CATALOG_MEMBERS: &[&str] = &["kind", "tag", "q", "cursor", "limit", "id", "catalog_version"];

impl CatalogRequest {
    /// The Language the request names.
    pub fn language(&self) -> &str {
        match self {
            Self::List { language, .. } | Self::Get { language, .. } | Self::ChangedSince { language, .. } => language,
        }
    }

    /// Parses `pilotage_catalog` arguments and checks them against `manifest` (see the
    /// [module docs](self) for the channel of each fault). A request error here carries no
    /// `catalog_version`; an engine adds its own with [`ArgumentFault::with_catalog_version`].
    pub fn from_arguments(arguments: &Value, manifest: &Manifest) -> Result<Self, ArgumentFault> {
        let members = object(arguments)?;
        let language = required_string(members, "language")?;
        let verb = required_string(members, "verb")?;
        if !matches!(verb.as_str(), "list" | "get" | "changed_since") {
            return Err(carrier(format!(
                "argument /verb: \"{verb}\" is not one of \"list\", \"get\", \"changed_since\""
            )));
        }
        let strings: Vec<(&str, Option<String>)> = ["kind", "tag", "q", "cursor", "id", "catalog_version"]
            .into_iter()
            .map(|name| optional_string(members, name).map(|value| (name, value)))
            .collect::<Result<_, _>>()?;
        let take = |name: &str| strings.iter().find(|(n, _)| *n == name).and_then(|(_, v)| v.clone());
        let limit = match members.get("limit") {
            None => None,
            Some(value) => match value.as_u64().or_else(|| integral(value)) {
                Some(limit) if limit >= 1 => Some(limit),
                _ => {
                    return Err(carrier(format!(
                        "argument /limit: {value} is not an integer of at least 1"
                    )))
                }
            },
        };
        if let Some(extra) = CATALOG_MEMBERS
            .iter()
            .find(|m| members.contains_key(**m) && !applicable(&verb).contains(m))
        {
            return Err(request(RequestError::invalid_request(format!(
                "`{extra}` does not apply to verb {verb} (Part III 4.2)"
            ))));
        }
        if let Some(entry) = manifest.language(&language) {
            let declared = manifest.effective_capabilities(entry);
            if !declared.is_some_and(|c| c.declares(Capability::Catalog)) {
                return Err(request(RequestError::unsupported(format!(
                    "{language} declares no catalog (Part III 4.2)"
                ))));
            }
            let sub = |name| declared.is_some_and(|c| c.declares_sub_feature(Capability::Catalog, name));
            if verb == "changed_since" && !sub("changed_since") {
                return Err(request(RequestError::unsupported(format!(
                    "verb changed_since needs the catalog.changed_since sub-feature, which {language} does not declare (Part III 4.2)"
                ))));
            }
            if members.contains_key("q") && !sub("search") {
                return Err(request(RequestError::unsupported(format!(
                    "`q` needs the catalog.search sub-feature, which {language} does not declare (Part III 4.2)"
                ))));
            }
        }
        match verb.as_str() {
            "get" => match take("id") {
                Some(id) => Ok(Self::Get { language, id }),
                None => Err(request(RequestError::invalid_request(
                    "verb get requires `id` (Part III 4.2)",
                ))),
            },
            "changed_since" => match take("catalog_version") {
                Some(catalog_version) => Ok(Self::ChangedSince {
                    language,
                    catalog_version,
                }),
                None => Err(request(RequestError::invalid_request(
                    "verb changed_since requires `catalog_version` (Part III 4.2)",
                ))),
            },
            _ => Ok(Self::List {
                language,
                kind: take("kind"),
                tag: take("tag"),
                q: take("q"),
                cursor: take("cursor"),
                limit,
            }),
        }
    }
}

fn carrier(message: String) -> ArgumentFault {
    ArgumentFault::Carrier { message }
}

fn request(error: RequestError) -> ArgumentFault {
    ArgumentFault::Request(error)
}

/// A JSON number that is an integer to JSON Schema (`5.0` is).
fn integral(value: &Value) -> Option<u64> {
    value
        .as_f64()
        .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 9_007_199_254_740_992.0)
        .map(|f| f as u64)
}

fn object(arguments: &Value) -> Result<&Map<String, Value>, ArgumentFault> {
    arguments
        .as_object()
        .ok_or_else(|| carrier("arguments must be a JSON object".to_owned()))
}

fn required_string(members: &Map<String, Value>, name: &str) -> Result<String, ArgumentFault> {
    optional_string(members, name)?.ok_or_else(|| carrier(format!("argument /{name}: required, and missing")))
}

fn optional_string(members: &Map<String, Value>, name: &str) -> Result<Option<String>, ArgumentFault> {
    match members.get(name) {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(other) => Err(carrier(format!("argument /{name}: {other} is not a string"))),
    }
}
