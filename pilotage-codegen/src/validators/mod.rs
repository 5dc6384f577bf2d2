//! Validators generated from a schema set: one Rust function per schema location a `$ref` or
//! an applicator needs on its own (and per `$defs` entry), checking the original schema's every
//! keyword directly, for both readings (pinned, and compatible: open enums accept any string,
//! as `pilotage_types::validate::widen_open_enums` rewrites them). The functions call
//! `pilotage_types::validate::runtime`; patterns are compiled by [`regex`], and formats are
//! checked by `pilotage_types::validate::format`.
//!
//! What is compiled: every keyword of draft 2020-12 (core, applicator, unevaluated, validation,
//! and format where it asserts), of 2019-09 (`$recursiveRef`, array-form `items`,
//! `additionalItems`) and of draft-04/06/07 (`definitions`, `dependencies`, `$ref` hiding its
//! siblings, asserted formats). Identifiers are resolved at generation time across the whole set
//! ([`resources`]): nested `$id`s, `$anchor`s, JSON Pointer fragments, other documents given
//! with [`Options::document`], and the drafts' own metaschemas, which are built in.
//!
//! - `unevaluatedProperties` / `unevaluatedItems`: the locations that must report what they
//!   evaluated get a second function, which also fills an annotation record
//!   (`runtime::Ev`); everything else is checked exactly as without them.
//! - `$dynamicRef` / `$recursiveRef`: when a set uses them, each function enters its schema
//!   resource in the evaluation's dynamic scope, and a dynamic reference picks, among the
//!   resources defining its anchor (known at generation time), the outermost one in scope.
//! - A custom metaschema's `$vocabulary` switches off the vocabularies it leaves out, and turns
//!   format assertion on when it names `format-assertion`.
//!
//! A keyword the generator cannot honour (a pattern the runtime cannot match exactly, a `$ref`
//! that points to nothing, a `$ref` cycle that never descends into the instance) is an error
//! naming its schema pointer: never a silent pass. A reference to a document not in the set
//! accepts any value, and is listed in [`Validators::unresolved`]. Keywords no vocabulary
//! defines are annotations, as JSON Schema says.

pub mod regex;
pub mod resources;
mod stream;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};
use serde_json::{Number, Value};

use resources::{join, strip_fragment, Index};
pub use resources::{Document, Draft, Location};

use crate::error::{escape_pointer_token, unescape_pointer_token};
use crate::CodegenError;

/// The formats JSON Schema defines, and the function of `pilotage_types::validate::format`
/// checking each .
const FORMATS: &[(&str, &str)] = &[
    ("date", "date"),
    ("date-time", "date_time"),
    ("time", "time"),
    ("duration", "duration"),
    ("email", "email"),
    ("idn-email", "idn::email"),
    ("hostname", "hostname"),
    ("idn-hostname", "idn::hostname"),
    ("ipv4", "ipv4"),
    ("ipv6", "ipv6"),
    ("uri", "uri"),
    ("uri-reference", "uri_reference"),
    ("iri", "iri"),
    ("iri-reference", "iri_reference"),
    ("uri-template", "uri_template"),
    ("json-pointer", "json_pointer"),
    ("relative-json-pointer", "relative_json_pointer"),
    ("regex", "regex"),
    ("uuid", "uuid"),
];

/// Whether `format` is a format of `draft` (as jsonschema's table has it: the later drafts
/// added `duration` and `uuid` (2019-09), `iri`, `iri-reference`, `idn-hostname` and
/// `relative-json-pointer` (draft-07), `json-pointer`, `uri-reference` and `uri-template`
/// (draft-06)); in an earlier draft it is an unknown format, an annotation.
fn format_in(draft: Draft, format: &str) -> bool {
    match format {
        "duration" | "uuid" => draft >= Draft::Draft2019,
        "iri" | "iri-reference" | "idn-hostname" | "relative-json-pointer" => draft >= Draft::Draft7,
        "json-pointer" | "uri-reference" | "uri-template" => draft >= Draft::Draft6,
        _ => true,
    }
}

/// Keywords that only annotate: a subschema of `const` and these is a discriminator.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "$comment",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// A member a schema pins to a few values ([`Gen::pins`]).
#[derive(Debug, Clone)]
struct Pin {
    /// The member's name.
    name: String,
    /// The values it may take.
    values: Vec<Value>,
    /// Whether the pin is an `enum` of strings, which the compatible reading opens.
    open: bool,
}

/// Above how many strings an `enum` is checked by a binary search of them, sorted when the
/// validators are generated (`runtime::is_one_of_sorted`), rather than by one `matches!`.
const SORTED_ENUM: usize = 16;

/// The prefixes of the numbered locals ([`Gen::fresh`]): no check function may be named one
/// of them followed by digits (`holds_4`), as a local of that name would hide it.
const FRESH: &[&str] = &["ev", "holds", "kept", "seen"];

/// Keywords of later editions that `syn` (which parses as of 2021) still takes for identifiers:
/// generated code must compile in a crate of any edition.
const EDITION_KEYWORDS: &[&str] = &["gen"];

/// Local names of the generated functions' bodies, which no check function may be named.
const RESERVED: &[&str] = &[
    "a",
    "at",
    "compatible",
    "count",
    "cx",
    "e",
    "entered",
    "ev",
    "found",
    "holds",
    "index",
    "inner",
    "item",
    "k",
    "mark",
    "n",
    "name",
    "names",
    "o",
    "ok",
    "present",
    "s",
    "seen",
    "tag",
    "unexpected",
    "v",
];

/// The keywords of 2020-12's validation vocabulary (switched off by a metaschema without it).
pub(crate) const VALIDATION: &[&str] = &[
    "type",
    "const",
    "enum",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
];
/// The keywords of 2020-12's applicator vocabulary.
pub(crate) const APPLICATOR: &[&str] = &[
    "prefixItems",
    "items",
    "contains",
    "additionalProperties",
    "properties",
    "patternProperties",
    "dependentSchemas",
    "propertyNames",
    "if",
    "then",
    "else",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
];

/// The drafts' metaschemas, built into every set (as jsonschema has them): a `$ref` to a
/// metaschema validates schemas, and a custom metaschema may extend them.
const METASCHEMAS: &[(&str, &str)] = &[
    (
        "http://json-schema.org/draft-04/schema",
        include_str!("../../metaschemas/draft4.json"),
    ),
    (
        "http://json-schema.org/draft-06/schema",
        include_str!("../../metaschemas/draft6.json"),
    ),
    (
        "http://json-schema.org/draft-07/schema",
        include_str!("../../metaschemas/draft7.json"),
    ),
    (
        "https://json-schema.org/draft/2019-09/schema",
        include_str!("../../metaschemas/draft2019-09/schema.json"),
    ),
    (
        "https://json-schema.org/draft/2019-09/meta/applicator",
        include_str!("../../metaschemas/draft2019-09/meta/applicator.json"),
    ),
    (
        "https://json-schema.org/draft/2019-09/meta/content",
        include_str!("../../metaschemas/draft2019-09/meta/content.json"),
    ),
    (
        "https://json-schema.org/draft/2019-09/meta/core",
        include_str!("../../metaschemas/draft2019-09/meta/core.json"),
    ),
    (
        "https://json-schema.org/draft/2019-09/meta/format",
        include_str!("../../metaschemas/draft2019-09/meta/format.json"),
    ),
    (
        "https://json-schema.org/draft/2019-09/meta/meta-data",
        include_str!("../../metaschemas/draft2019-09/meta/meta-data.json"),
    ),
    (
        "https://json-schema.org/draft/2019-09/meta/validation",
        include_str!("../../metaschemas/draft2019-09/meta/validation.json"),
    ),
    (
        "https://json-schema.org/draft/2020-12/schema",
        include_str!("../../metaschemas/draft2020-12/schema.json"),
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/applicator",
        include_str!("../../metaschemas/draft2020-12/meta/applicator.json"),
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/content",
        include_str!("../../metaschemas/draft2020-12/meta/content.json"),
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/core",
        include_str!("../../metaschemas/draft2020-12/meta/core.json"),
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/format-annotation",
        include_str!("../../metaschemas/draft2020-12/meta/format-annotation.json"),
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/format-assertion",
        include_str!("../../metaschemas/draft2020-12/meta/format-assertion.json"),
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/meta-data",
        include_str!("../../metaschemas/draft2020-12/meta/meta-data.json"),
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/unevaluated",
        include_str!("../../metaschemas/draft2020-12/meta/unevaluated.json"),
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/validation",
        include_str!("../../metaschemas/draft2020-12/meta/validation.json"),
    ),
];

fn metaschemas() -> &'static [Document] {
    static PARSED: OnceLock<Vec<Document>> = OnceLock::new();
    PARSED.get_or_init(|| {
        METASCHEMAS
            .iter()
            .filter_map(|(uri, text)| {
                let value = serde_json::from_str(text).ok()?;
                Some(Document {
                    uri: (*uri).to_owned(),
                    file: format!("metaschema {uri}"),
                    value,
                })
            })
            .collect()
    })
}

/// How validators are generated: the set's other documents, the default dialect, format
/// assertion.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Options {
    /// The dialect of a document without `$schema` (2020-12 unless set).
    pub default_draft: Draft,
    /// Whether `format` asserts in 2019-09 and 2020-12 (`None`: as the metaschema's
    /// vocabularies say, else not). Draft-04/06/07 always assert the standard formats, as
    /// jsonschema does.
    pub assert_formats: Option<bool>,
    /// The URI the main document is known by (relative `$ref`s resolve against it unless its
    /// root has an `$id`); `json-schema:///<file>` unless set.
    pub base_uri: Option<String>,
    /// The other documents of the set: a `$ref` naming one is resolved into it.
    pub documents: Vec<Document>,
    /// What the generated code is tuned for: one schema set validated often (the default), or
    /// one of many in a program.
    pub tuning: Tuning,
}

/// What generated validators are tuned for ([`Options::tuning`]). Both give the same verdicts
/// and violations; they differ in the code a check takes and so in where they are fastest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Tuning {
    /// One schema set (or a few) validated often, whose code stays in the CPU's caches: a pass
    /// over an object's members steps through the map inline. The fastest on a warm cache:
    /// Pilotage's `ExecuteResponse` in 65 ns where `ManySets` takes 110.
    #[default]
    OneSet,
    /// One of many schema sets in a program (a catalogue of other people's schemas, a test
    /// suite), each validated now and then, whose code, taken together, does not stay cached:
    /// a pass over an object's members steps through the map by a shared call
    /// (`runtime::members`), which saves 300 to 500 bytes of code a pass. Over the official
    /// JSON-Schema-Test-Suite's 1,769 schema sets in one crate, a pass of the required tests
    /// ran 1.5% more instructions with 17% fewer instruction-cache misses and 28% fewer
    /// instruction misses of the last-level cache (callgrind's model); the wall clock of the
    /// project's machine (1 MiB of L2 a core, 32 MiB of L3) did not show a difference
    /// (`BENCHMARKS.md`). For machines with smaller caches, or far more sets.
    ManySets,
}

impl Options {
    /// The defaults: 2020-12, formats as the dialect says, no other documents.
    pub fn new() -> Self {
        Self::default()
    }

    /// The dialect of a document without `$schema`.
    #[must_use]
    pub fn default_draft(mut self, draft: Draft) -> Self {
        self.default_draft = draft;
        self
    }

    /// Whether `format` asserts in 2019-09 and 2020-12.
    #[must_use]
    pub fn assert_formats(mut self, assert: bool) -> Self {
        self.assert_formats = Some(assert);
        self
    }

    /// What the generated code is tuned for ([`Tuning`]).
    #[must_use]
    pub fn tuning(mut self, tuning: Tuning) -> Self {
        self.tuning = tuning;
        self
    }

    /// The URI the main document is known by.
    #[must_use]
    pub fn base_uri(mut self, uri: impl Into<String>) -> Self {
        self.base_uri = Some(uri.into());
        self
    }

    /// Adds a document to the set, known by `uri`, named `file` in errors.
    #[must_use]
    pub fn document(mut self, uri: impl Into<String>, file: impl Into<String>, value: Value) -> Self {
        self.documents.push(Document::new(uri, file, value));
        self
    }
}

/// The function of `pilotage_types::validate::format` asserting `format` at a location of
/// `draft` with the vocabularies `vocab`, or `None` where it is an annotation.
fn format_check(draft: Draft, vocab: Vocab, format: &str) -> Option<&'static str> {
    // Draft-04/06/07: the standard formats assert (as jsonschema does by default);
    // 2019-09 and 2020-12: an annotation, unless assertion is on. An unknown format
    // (`byte`, `uint`) is an annotation everywhere.
    let asserts = (draft.is_legacy() || vocab.format) && format_in(draft, format);
    let (name, function) = FORMATS.iter().find(|(name, _)| *name == format).filter(|_| asserts)?;
    // Draft-04 and -06 define `hostname` by RFC 1034 alone; draft-07 added IDNA2008's
    // A-label rules (RFC 5891).
    Some(match (*name, draft) {
        ("hostname", Draft::Draft4 | Draft::Draft6) => "hostname_rfc1034",
        _ => function,
    })
}

/// The output of [`generate`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Validators {
    /// The items: statics (patterns), the functions, and `VALIDATORS`, the table
    /// of `(definition, check)` sorted by definition (`.` is the document's root).
    pub tokens: TokenStream,
    /// Each definition's check function, by definition name (`.` for the root).
    pub checks: BTreeMap<String, Ident>,
    /// Each definition's node in `STREAM_PROGRAM`, the stream program (validation fused into
    /// deserialization); empty for a set using dynamic references.
    pub streams: BTreeMap<String, u32>,
    /// References to documents not in the set, each validated as accepting any value.
    pub unresolved: Vec<String>,
    /// How many schema locations got a function of their own.
    pub functions: usize,
    /// How many schema locations the generated code checks (in a function of their own or
    /// inline in another's).
    pub locations: usize,
    /// Notes for the generation report: each pattern that needed ECMA-262 Annex B's syntax
    /// (`file: pointer: ...`), read as Annex B reads it.
    pub notes: Vec<String>,
    /// The patterns run by the Pike VM rather than a DFA compiled at generation time:
    /// (`file: pointer`, pattern, why), for the generated file's header.
    pub pike_vm: Vec<(String, String, &'static str)>,
    /// The locations the stream program leaves to the checks (`file: pointer`, the keyword):
    /// `parse_slice` on a document reaching one validates it the two-pass way.
    pub stream_opaque: Vec<(String, String)>,
}

/// A function to generate: a location, and whether it reports annotations.
type Key = (Location, bool);

/// The vocabularies in force in a resource (all, unless a custom metaschema says otherwise).
#[derive(Debug, Clone, Copy)]
struct Vocab {
    validation: bool,
    applicator: bool,
    unevaluated: bool,
    /// Whether `format` asserts.
    format: bool,
}

/// A generated function, before it is rendered: whether it enters its schema resource is only
/// known once every function is generated (every call of it seen).
struct FunctionItem {
    doc: String,
    vis: TokenStream,
    ident: Ident,
    signature: TokenStream,
    args: TokenStream,
    body: TokenStream,
    /// Its schema resource, in a set with a dynamic reference (`None` otherwise).
    resource: Option<u32>,
}

impl FunctionItem {
    /// The function's tokens. In a set with a dynamic reference, it enters its resource in the
    /// dynamic scope when `entered_elsewhere` says some call may come from elsewhere (another
    /// resource, or the table of definitions); called only from its own resource, that
    /// resource is innermost already and the scope is left as it is (`Cx::enter` would
    /// return without pushing).
    fn render(self, entered_elsewhere: &BTreeSet<Ident>) -> TokenStream {
        let Self {
            doc,
            vis,
            ident,
            signature,
            args,
            body,
            resource,
        } = self;
        let checked = quote! {
            let mark = cx.mark();
            #body
            cx.passed(mark)
        };
        match resource.filter(|_| entered_elsewhere.contains(&ident)) {
            Some(resource) => quote! {
                #[doc = #doc]
                #vis fn #ident #signature {
                    fn inner #signature { #checked }
                    let entered = cx.enter(#resource);
                    let ok = inner #args;
                    cx.leave(entered);
                    ok
                }
            },
            None => quote! {
                #[doc = #doc]
                #vis fn #ident #signature { #checked }
            },
        }
    }
}

struct Gen<'a> {
    docs: &'a [Document],
    index: Index,
    vocabs: Vec<Vocab>,
    /// The document and location being generated.
    cur: Location,
    /// Whether functions enter their resource in the dynamic scope.
    dynamic: bool,
    /// Whether a dynamic reference was met (so the set must be generated with `dynamic`).
    saw_dynamic: bool,
    functions: BTreeMap<Key, Ident>,
    used_names: BTreeSet<String>,
    queue: Vec<(Key, Ident)>,
    items: Vec<TokenStream>,
    patterns: BTreeMap<String, Ident>,
    /// The `static`s of fractional `multipleOf`s, by the multiple's text.
    multiples: BTreeMap<String, Ident>,
    unresolved: BTreeSet<String>,
    notes: Vec<String>,
    pike_vm: Vec<(String, String, &'static str)>,
    /// The stream program's opaque locations (`file: pointer`, the keyword).
    stream_opaque: Vec<(String, String)>,
    /// How deep inside child instances the current statements are (0: the function's own).
    descent: usize,
    /// Calls on the function's own instance: (caller, callee), for the cycle check.
    same_instance: BTreeSet<(Ident, Ident)>,
    current_fn: Option<Ident>,
    /// The functions called with another resource innermost in the dynamic scope, or from
    /// outside (the table of definitions): those that must enter their own resource. A
    /// function only ever called from its own resource finds that resource innermost already,
    /// where `Cx::enter` would return without pushing. Read only in `dynamic` sets.
    entered_elsewhere: BTreeSet<Ident>,
    /// What the code is tuned for ([`Options::tuning`]).
    tuning: Tuning,
    fresh: usize,
    /// Schema locations compiled (each `body`).
    compiled: usize,
}

/// The type names of a `type` keyword: its string, or its array of strings; `None` for
/// anything else.
fn type_names(types: &Value) -> Option<Vec<&str>> {
    match types {
        Value::String(one) => Some(vec![one.as_str()]),
        Value::Array(many) if many.iter().all(Value::is_string) => {
            Some(many.iter().filter_map(Value::as_str).collect())
        }
        _ => None,
    }
}

/// A test of the instance's JSON type, ending in `&&`, that a branch of `anyOf` / `oneOf`
/// fails without: `matches!(v, Value::Number(_) | Value::Object(_)) &&` for a branch
/// `{"type": ["integer", "object"], ...}`, so that the branch is not called on a value it must
/// fail (on a string, for one). Empty (no test) unless the branch's own `type` asserts and is
/// all that decides its type: the branch is an object in this location's resource (no `$id`,
/// `id` or `$schema`) read with the validation vocabulary on, with no `$ref` (which hides
/// `type` in draft-04 to -07) and nothing the compatible reading widens (an `enum` of strings
/// or an alternative of string constants, which then accepts any string).
fn type_guard(branch: &Value, draft: Draft, vocab: Vocab) -> TokenStream {
    let Value::Object(object) = branch else {
        return TokenStream::new();
    };
    let own = |key: &str| object.contains_key(key);
    let widening = Widening::of(object, draft, vocab);
    if !vocab.validation
        || own("$id")
        || own("id")
        || own("$schema")
        || own("$ref")
        || widening.enum_of_strings
        || widening.any_of_consts
        || widening.one_of_consts
    {
        return TokenStream::new();
    }
    let Some(names) = object.get("type").and_then(type_names) else {
        return TokenStream::new();
    };
    let mut variants: Vec<TokenStream> = Vec::new();
    let mut seen = BTreeSet::new();
    for name in names {
        let variant = match name {
            "string" => quote!(Value::String(_)),
            "number" | "integer" => quote!(Value::Number(_)),
            "object" => quote!(Value::Object(_)),
            "array" => quote!(Value::Array(_)),
            "boolean" => quote!(Value::Bool(_)),
            "null" => quote!(Value::Null),
            // An unknown type is refused where the branch is compiled.
            _ => return TokenStream::new(),
        };
        if seen.insert(variant.to_string()) {
            variants.push(variant);
        }
    }
    if variants.len() >= 6 {
        return TokenStream::new();
    }
    quote!(matches!(v, #(#variants)|*) &&)
}

/// The compatible reading's rewrites of one location (see the module docs), for both the
/// generated checks (`body`) and the stream program: an `enum` of strings, and an `anyOf` or
/// `oneOf` whose branches are each a string `const` alone.
struct Widening {
    enum_of_strings: bool,
    any_of_consts: bool,
    one_of_consts: bool,
}

impl Widening {
    /// The rewrites of the schema object `object` (its keywords in effect), read by its
    /// location's `draft` and `vocab`.
    fn of(object: &serde_json::Map<String, Value>, draft: Draft, vocab: Vocab) -> Self {
        // A branch of `const` alone shares this location's resource (it has no `$id`): its
        // `const` asserts only where this draft has it and the validation vocabulary is on;
        // otherwise the branch holds on anything, and there is nothing to widen.
        let consts_assert = vocab.validation && draft.has("const");
        let consts_of = |keyword: &str| {
            consts_assert
                && matches!(object.get(keyword), Some(Value::Array(branches)) if !branches.is_empty() && branches.iter().all(is_string_const_branch))
        };
        Widening {
            enum_of_strings: matches!(object.get("enum"), Some(Value::Array(values)) if !values.is_empty() && values.iter().all(Value::is_string)),
            any_of_consts: consts_of("anyOf"),
            one_of_consts: consts_of("oneOf"),
        }
    }
}

/// An `if` / `then` / `else` read during the member pass of the object it sits on, instead of
/// in passes of its own (one for `if`, one for `then` or `else`): when each of the three is made
/// of `properties` and `required` alone in the same resource, the `if` only asks about a few
/// members and `then` / `else` only check a few (their `required` names are looked up). Outcome's
/// `{"if": {"properties": {"ok": {"const": true}}, "required": ["ok"]}, "then": {"properties":
/// {"error": {"type": "null"}}}, "else": ...}` read the object three times. During the pass, each
/// member the `if` names is tested (quietly: the `if` reports nothing) and counted, and each
/// member `then` or `else` checks is kept; after it, the branch the `if` chose checks the kept
/// members. On anything but an object, all three are vacuous, as `properties` and `required`
/// are. Not with annotations to collect (`unevaluated*`) nor in a set with dynamic references.
struct Fused {
    /// Whether the `if`'s tested members all held so far.
    holds: Ident,
    /// The `if`'s required members seen (`None`: it requires none), and how many it requires.
    seen: Option<(Ident, usize)>,
    /// What the pass does with each member the three name.
    members: BTreeMap<String, FusedMember>,
    /// The statements `then` and `else` run after the pass, on the kept members.
    then: TokenStream,
    otherwise: TokenStream,
}

impl Fused {
    /// The statements after the pass: the members were tested and kept during it. On anything
    /// but an object, `seen` stays below the count, or the `if` holds with nothing kept: both
    /// branches are then vacuous, as their `properties` are.
    fn after_pass(self) -> TokenStream {
        let Fused {
            holds,
            seen,
            then,
            otherwise,
            ..
        } = self;
        let condition = match seen {
            Some((seen, count)) => quote!(#holds && #seen == #count),
            None => quote!(#holds),
        };
        quote!({ if #condition { #then } else { #otherwise } })
    }
}

/// An `if`, `then` or `else` made of `properties` and `required` alone ([`Gen::members_only`]).
#[derive(Default)]
struct MembersOnly {
    properties: Vec<(String, Value)>,
    required: Vec<String>,
}

/// One member of a [`Fused`] conditional.
#[derive(Default)]
struct FusedMember {
    /// The `if`'s test of it (an expression on `v`, the member).
    test: Option<TokenStream>,
    /// Where it is kept for `then` / `else`.
    kept: Option<Ident>,
    /// Whether the `if` requires it.
    required: bool,
}

/// The names `object`'s `required` lists, each once, in order (none without `required`):
/// `None` when it is no array of strings (the general path reports that as an error).
fn required_names(object: &serde_json::Map<String, Value>) -> Option<Vec<&str>> {
    match object.get("required") {
        None => Some(Vec::new()),
        Some(names) => Some(distinct(
            names
                .as_array()?
                .iter()
                .map(Value::as_str)
                .collect::<Option<Vec<&str>>>()?,
        )),
    }
}

/// `names` without repeats, each where it first stands.
fn distinct<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for name in names {
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

fn is_string_const_branch(schema: &Value) -> bool {
    let Value::Object(object) = schema else { return false };
    object.get("const").is_some_and(Value::is_string)
        && object.keys().all(|k| {
            matches!(
                k.as_str(),
                "const" | "type" | "title" | "description" | "$comment" | "examples" | "deprecated"
            )
        })
        && object.get("type").is_none_or(|t| t == "string")
}

/// The names each branch of an `anyOf` or `oneOf` requires, when every branch says only
/// `required` (beside annotations); `None` when a branch says more. Such a branch holds on
/// anything but an object (`required` says nothing of it), and on an object that has each of
/// its names; it holds no annotation, so the keyword can be decided as one test, with no
/// function a branch, whether or not annotations are collected.
fn required_only(branches: &[Value]) -> Option<Vec<Vec<&str>>> {
    let mut sets: Vec<Vec<&str>> = Vec::with_capacity(branches.len());
    for branch in branches {
        let Value::Object(object) = branch else { return None };
        if !object
            .keys()
            .all(|k| k == "required" || ANNOTATIONS.contains(&k.as_str()))
        {
            return None;
        }
        let Some(Value::Array(names)) = object.get("required") else {
            return None;
        };
        sets.push(names.iter().map(Value::as_str).collect::<Option<_>>()?);
    }
    (!sets.is_empty()).then_some(sets)
}

/// The most members `properties` checks (or `unevaluatedProperties` records) that are picked
/// out of an object by a shared call (`runtime::pick`, `runtime::has_member`) rather than read
/// in a pass over the object's members inlined in the check.
const LOOKED_UP_AT_MOST: usize = 2;

/// The most names one `runtime::pick` reads where it answers `required` (or a dependency's
/// names): one pass over the members, each compared with every name (by length, most of the
/// time), where a lookup a name was a call and a pass each. Beyond this, each name is looked up
/// (`runtime::has_member`).
const PICKED_AT_MOST: usize = 8;

/// The check, on the object `o`, that it has each of `names` (distinct): `fail` for each one
/// missing, in the order of `names`, with `name` bound to it. Two to [`PICKED_AT_MOST`] names
/// are read in one pass over the members (`runtime::pick`: the official suite's `required.json#3`
/// asks for six names, `dependentRequired.json#2` for two), one name or more than that looked up
/// one by one.
fn require_members(names: &[&str], fail: &TokenStream) -> TokenStream {
    if (2..=PICKED_AT_MOST).contains(&names.len()) {
        quote! {{
            let found = ::pilotage_types::validate::runtime::pick(o, [#(#names),*]);
            if found.iter().any(Option::is_none) {
                for (name, found) in [#(#names),*].into_iter().zip(found) {
                    if found.is_none() { #fail }
                }
            }
        }}
    } else {
        quote! {
            for name in [#(#names),*] {
                if !::pilotage_types::validate::runtime::has_member(o, name) { #fail }
            }
        }
    }
}

/// An expression: whether the object `members` has every name of `names`.
fn has_members(names: &[&str]) -> TokenStream {
    match names {
        [] => quote!(true),
        [name] => quote!(::pilotage_types::validate::runtime::has_member(members, #name)),
        names => quote!((#(::pilotage_types::validate::runtime::has_member(members, #names))&&*)),
    }
}

/// The check of an `anyOf` whose branches each say only `required` ([`required_only`]).
/// SchemaStore's renovate says "none of these 96 options" as `not: {anyOf: [{"required":
/// ["a"]}, {"required": ["b"]}, ...]}`: each branch was a call and a map lookup, most of its
/// time. With more than a few branches of one name each, the names are sorted here and
/// searched at run time (`runtime::has_any_member`).
fn any_of_required(sets: &[Vec<&str>], fail: TokenStream) -> TokenStream {
    if sets.iter().any(Vec::is_empty) {
        // A branch that requires nothing always holds: so does the `anyOf`.
        return TokenStream::new();
    }
    let test = if sets.len() > 4 && sets.iter().all(|names| names.len() == 1) {
        let mut names: Vec<&str> = sets.iter().map(|names| names[0]).collect();
        names.sort_unstable_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
        names.dedup();
        quote!(::pilotage_types::validate::runtime::has_any_member(members, &[#(#names),*]))
    } else {
        let tests = sets.iter().map(|names| has_members(names));
        quote!(#(#tests)||*)
    };
    quote!(if let Value::Object(members) = v { if !(#test) { #fail } })
}

/// The check of a `oneOf` whose branches each say only `required` ([`required_only`]): on an
/// object, the branches whose names are all there are counted; anything else satisfies every
/// branch (so the `oneOf` holds only with a single branch). Pilotage's `ExecuteRequest` is
/// `oneOf: [{"required": ["program"]}, {"required": ["program_ref"]}]`.
/// With two to [`PICKED_AT_MOST`] names in all, they are read in one pass over the members
/// (`runtime::pick`), each branch then decided from what it found: the official suite's
/// `oneOf.json#8` (`[{"required": ["foo", "bar"]}, {"required": ["foo", "baz"]}]`) looked `foo`
/// up twice.
fn one_of_required(sets: &[Vec<&str>], none: TokenStream, many: TokenStream) -> TokenStream {
    let names = distinct(sets.iter().flatten().copied());
    let all = sets.len();
    let count = if (2..=PICKED_AT_MOST).contains(&names.len()) {
        let tests = sets.iter().map(|set| {
            let indices: Vec<usize> = set
                .iter()
                .map(|name| names.iter().position(|n| n == name).unwrap_or_default())
                .collect();
            if indices.is_empty() {
                quote!(true)
            } else {
                quote!(#(found[#indices].is_some())&&*)
            }
        });
        quote! {
            let found = ::pilotage_types::validate::runtime::pick(members, [#(#names),*]);
            #(usize::from(#tests))+*
        }
    } else {
        let tests = sets.iter().map(|names| has_members(names));
        quote!(#(usize::from(#tests))+*)
    };
    quote! {
        let holds: usize = if let Value::Object(members) = v { #count } else { #all };
        if holds == 0 { #none } else if holds > 1 { #many }
    }
}

fn number(n: &Number) -> TokenStream {
    if let Some(u) = n.as_u64() {
        quote!(::pilotage_types::validate::runtime::Num::U(#u))
    } else if let Some(i) = n.as_i64() {
        quote!(::pilotage_types::validate::runtime::Num::I(#i))
    } else {
        let f = Literal::f64_unsuffixed(n.as_f64().unwrap_or(0.0));
        quote!(::pilotage_types::validate::runtime::Num::F(#f))
    }
}

/// A new `static` of type `ty` holding `value`, named `{prefix}_{n}` after the `n` statics
/// `made` already names, pushed to `items` and named in `made` under `key` (the text it was
/// made from, which the caller looked up first: one static for each distinct text).
fn new_static(
    items: &mut Vec<TokenStream>,
    made: &mut BTreeMap<String, Ident>,
    key: &str,
    prefix: &str,
    ty: TokenStream,
    value: TokenStream,
) -> Ident {
    let ident = format_ident!("{prefix}_{}", made.len());
    items.push(quote!(static #ident: #ty = #value;));
    made.insert(key.to_owned(), ident.clone());
    ident
}

/// A count keyword's value (`maxItems`, `minLength`, ...): a non-negative integer, which JSON
/// Schema lets be written with a zero fraction (`2.0`).
fn count(value: &Value) -> Option<u64> {
    value.as_u64().or_else(|| {
        let f = value.as_f64()?;
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        (f.is_finite() && f >= 0.0 && f.fract() == 0.0 && f <= 9_007_199_254_740_992.0).then_some(f as u64)
    })
}

/// A location's pointer joined with one more token.
fn child(pointer: &str, token: &str) -> String {
    format!("{pointer}/{}", escape_pointer_token(token))
}

fn snake(name: &str) -> String {
    let mut out = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            if c.is_ascii_uppercase() && previous_lower {
                out.push('_');
            }
            previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
            out.push(c.to_ascii_lowercase());
        } else {
            if !out.ends_with('_') {
                out.push('_');
            }
            previous_lower = false;
        }
    }
    out.trim_matches('_').to_owned()
}

/// Whether `value` uses `$dynamicRef` or `$recursiveRef` anywhere.
fn uses_dynamic(value: &Value) -> bool {
    match value {
        Value::Object(object) => object
            .iter()
            .any(|(k, v)| k == "$dynamicRef" || k == "$recursiveRef" || uses_dynamic(v)),
        Value::Array(items) => items.iter().any(uses_dynamic),
        _ => false,
    }
}

impl<'a> Gen<'a> {
    /// What a generated pass over the members of the object `o` iterates ([`Tuning`]).
    fn members(&self) -> TokenStream {
        match self.tuning {
            Tuning::OneSet => quote!(o),
            Tuning::ManySets => quote!(::pilotage_types::validate::runtime::members(o)),
        }
    }

    /// The head of a generated loop over the names of the object `o`, each as `k` ([`Tuning`]).
    fn names_loop(&self) -> TokenStream {
        match self.tuning {
            Tuning::OneSet => quote!(for k in o.keys()),
            Tuning::ManySets => quote!(for (k, _) in ::pilotage_types::validate::runtime::members(o)),
        }
    }

    fn file(&self) -> &str {
        &self.docs[self.cur.doc].file
    }

    /// The checks of a minimum and a maximum count keyword (`minItems` and `maxItems`, ...) of
    /// the schema object at `pointer`, on `length` (the instance's count, a `u64` expression).
    /// A minimum of 0 always holds and gets no check (`length < 0u64` would also warn, as
    /// `unused_comparisons`, in the crate that includes the generated code).
    fn count_checks(
        &self,
        object: &serde_json::Map<String, Value>,
        pointer: &str,
        [minimum, maximum]: [(&str, TokenStream); 2],
        length: &TokenStream,
    ) -> Result<TokenStream, CodegenError> {
        let mut out = TokenStream::new();
        for ((keyword, why), is_minimum) in [(minimum, true), (maximum, false)] {
            let Some(limit) = object.get(keyword) else { continue };
            let at = child(pointer, keyword);
            let limit =
                count(limit).ok_or_else(|| self.error(&at, format!("`{keyword}` must be a non-negative integer")))?;
            if is_minimum && limit == 0 {
                continue;
            }
            let op = if is_minimum { quote!(<) } else { quote!(>) };
            let fail = fail(&at, quote!(Why::#why(v, #limit)));
            out.extend(quote!(if #length #op #limit { #fail }));
        }
        Ok(out)
    }

    fn error(&self, pointer: &str, message: impl Into<String>) -> CodegenError {
        CodegenError::new(self.file(), pointer, message)
    }

    fn here(&self, pointer: &str) -> Location {
        Location {
            doc: self.cur.doc,
            pointer: pointer.to_owned(),
        }
    }

    fn draft(&self, pointer: &str) -> Draft {
        let (resource, _) = self.index.scope(&self.here(pointer));
        self.index.resources[resource].draft
    }

    fn vocab(&self, pointer: &str) -> Vocab {
        let (resource, _) = self.index.scope(&self.here(pointer));
        self.vocabs[resource]
    }

    /// The keywords of the schema object at `pointer` that take effect: those of its draft,
    /// and of the vocabularies its metaschema turns on.
    fn effective<'o>(
        &self,
        object: &'o serde_json::Map<String, Value>,
        pointer: &str,
    ) -> std::borrow::Cow<'o, serde_json::Map<String, Value>> {
        let draft = self.draft(pointer);
        let vocab = self.vocab(pointer);
        if vocab.validation && vocab.applicator && vocab.unevaluated && object.keys().all(|k| draft.has(k)) {
            return std::borrow::Cow::Borrowed(object);
        }
        let mut kept = object.clone();
        kept.retain(|k, _| {
            (vocab.validation || !VALIDATION.contains(&k.as_str()))
                && (vocab.applicator || !APPLICATOR.contains(&k.as_str()))
                && (vocab.unevaluated || !k.starts_with("unevaluated"))
                && draft.has(k)
        });
        std::borrow::Cow::Owned(kept)
    }

    /// The members the schema at `location` pins to a few values: each member of its
    /// `properties` whose schema has a `const` or an `enum` that takes effect, as each branch of
    /// a tagged union does (`{"properties": {"type": {"const": "TextLine"}, ...}}`, or
    /// `"enum": ["receive"]`). An object whose member is none of them fails the schema, whatever
    /// else it says. A schema that is a `$ref` (or, in 2019-09 and later, has one beside) adds
    /// its target's pins, `hops` deep. Each member's keywords are read by the draft and
    /// vocabularies of its own resource (a member may declare its own `$schema`). An `enum` of strings is open in the compatible reading
    /// (it accepts any string): such a pin is marked, and holds only in the pinned reading.
    fn pins(&self, location: &Location, hops: usize) -> Vec<Pin> {
        let Some(Value::Object(object)) = self.docs[location.doc].value.pointer(&location.pointer) else {
            return Vec::new();
        };
        let (resource, base) = self.index.scope(location);
        let draft = self.index.resources[resource].draft;
        let vocab = self.vocabs[resource];
        let mut pins = Vec::new();
        if let Some(Value::String(reference)) = object.get("$ref") {
            if hops > 0 {
                let target = join(&base, reference).and_then(|uri| self.index.locate(self.docs, &uri).ok().flatten());
                if let Some(target) = target {
                    pins = self.pins(&target, hops - 1);
                }
            }
            if draft.ref_hides_siblings() {
                return pins;
            }
        }
        // Each member of an `allOf` must hold, so its pins are this schema's too (Backstage's
        // `catalog-info.json` chooses among ten `{"allOf": [{"$ref": entity}, {"properties":
        // {"kind": {"enum": ["API"]}, ...}}]}` branches by `kind`).
        if let (true, Some(Value::Array(members))) = (vocab.applicator, object.get("allOf")) {
            let within = child(&location.pointer, "allOf");
            for index in 0..members.len() {
                let member = Location {
                    doc: location.doc,
                    pointer: child(&within, &index.to_string()),
                };
                pins.extend(self.pins(&member, hops));
            }
        }
        let Some(Value::Object(properties)) = object.get("properties") else {
            return pins;
        };
        if !vocab.applicator {
            return pins;
        }
        let within = child(&location.pointer, "properties");
        for (name, subschema) in sorted(properties) {
            let Value::Object(subschema) = subschema else { continue };
            // The member's `const` and `enum` take effect by its own resource's draft and
            // vocabularies: a member with its own `$schema` (and `$id`) may have none of them.
            let (resource, _) = self.index.scope(&Location {
                doc: location.doc,
                pointer: child(&within, name),
            });
            let draft = self.index.resources[resource].draft;
            if !self.vocabs[resource].validation || (draft.ref_hides_siblings() && subschema.contains_key("$ref")) {
                continue;
            }
            match (subschema.get("const"), subschema.get("enum")) {
                (Some(expected), _) if draft.has("const") => pins.push(Pin {
                    name: name.clone(),
                    values: vec![expected.clone()],
                    open: false,
                }),
                // A long `enum` is no tag (its test, written at each branch, would be long).
                (_, Some(Value::Array(values))) if values.len() <= SORTED_ENUM => pins.push(Pin {
                    name: name.clone(),
                    values: values.clone(),
                    open: !values.is_empty() && values.iter().all(Value::is_string),
                }),
                _ => {}
            }
        }
        pins
    }

    /// The tag of a tagged union: the member most of `branches` (at least two) pin
    /// ([`Self::pins`]), and each branch's pin of it. A branch none of whose values is the
    /// instance's member fails, so it is not called: SchemaStore's enonic schemas choose among
    /// 21 `{"$ref": ...}` branches by `type` (a `const`), abc-inventory's among 9 by
    /// `transactionType` (an `enum` of one string), and every branch was a call. Among names
    /// pinned as often, the one whose pins tell the most branches apart (the most distinct
    /// value lists) is the tag (`kind` rather than `apiVersion` in Backstage's catalog); where a
    /// branch pins the name more than once (an `allOf` member and its `$ref`), its pin with the
    /// fewest values is kept: each one alone is a condition of the branch.
    fn tag(&self, branches: &[Value], pointer: &str) -> Option<(String, Vec<Option<Pin>>)> {
        let pins: Vec<Vec<Pin>> = (0..branches.len())
            .map(|index| self.pins(&self.here(&child(pointer, &index.to_string())), 1))
            .collect();
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for branch in &pins {
            let names: BTreeSet<&str> = branch.iter().map(|pin| pin.name.as_str()).collect();
            for name in names {
                *counts.entry(name).or_default() += 1;
            }
        }
        // A branch's pin of `name`: its narrowest, the first among equals.
        let pin_of = |branch: &[Pin], name: &str| -> Option<Pin> {
            branch
                .iter()
                .filter(|pin| pin.name == name)
                .fold(None, |best: Option<&Pin>, pin| match best {
                    Some(kept) if kept.values.len() <= pin.values.len() => best,
                    _ => Some(pin),
                })
                .cloned()
        };
        // How many branches `name`'s pins tell apart: the distinct value lists among them.
        let distinct = |name: &str| -> usize {
            let mut lists: Vec<String> = pins
                .iter()
                .filter_map(|branch| pin_of(branch, name))
                .map(|pin| serde_json::to_string(&pin.values).unwrap_or_default())
                .collect();
            lists.sort_unstable();
            lists.dedup();
            lists.len()
        };
        // The most pinned name, then the most telling; the first in order among equals (the
        // output is deterministic).
        let (name, count, _) = counts
            .iter()
            .map(|(&name, &count)| (name, count, distinct(name)))
            .fold(None, |best: Option<(&str, usize, usize)>, candidate| match best {
                Some((_, most, apart)) if (most, apart) >= (candidate.1, candidate.2) => best,
                _ => Some(candidate),
            })?;
        if count < 2 {
            return None;
        }
        let values = pins.iter().map(|branch| pin_of(branch, name)).collect();
        Some((name.to_owned(), values))
    }

    /// The `static` holding the fractional `multipleOf` written `text` (`runtime::Multiple`),
    /// one for each distinct multiple.
    fn multiple(&mut self, text: &str, fraction: f64) -> Ident {
        if let Some(ident) = self.multiples.get(text) {
            return ident.clone();
        }
        let value = Literal::f64_unsuffixed(fraction);
        new_static(
            &mut self.items,
            &mut self.multiples,
            text,
            "MULTIPLE",
            quote!(::pilotage_types::validate::runtime::Multiple),
            quote!(::pilotage_types::validate::runtime::Multiple::new(#value)),
        )
    }

    /// A new local `prefix_N` (`prefix` one of [`FRESH`]).
    fn fresh(&mut self, prefix: &str) -> Ident {
        debug_assert!(FRESH.contains(&prefix), "{prefix} is not in FRESH");
        self.fresh += 1;
        format_ident!("{}_{}", prefix, self.fresh)
    }

    /// The function checking the schema at `location` (annotating: also filling `ev`),
    /// generated once.
    fn function(&mut self, location: &Location, annotating: bool, hint: &str) -> Ident {
        let ident = self.function_named(location, annotating, hint);
        // Called from a function of another resource, or from outside any function (a
        // definition's check): it must enter its resource ([`Gen::entered_elsewhere`]). Only a
        // dynamic set enters resources, and only there are their scopes looked up.
        if self.dynamic {
            let own_resource =
                self.current_fn.is_some() && self.index.scope(&self.cur).0 == self.index.scope(location).0;
            if !own_resource {
                self.entered_elsewhere.insert(ident.clone());
            }
        }
        ident
    }

    /// [`Gen::function`]'s name for `location`, generated (queued) the first time.
    fn function_named(&mut self, location: &Location, annotating: bool, hint: &str) -> Ident {
        let key = (location.clone(), annotating);
        if let Some(ident) = self.functions.get(&key) {
            return ident.clone();
        }
        let base = if hint.is_empty() { "s".to_owned() } else { snake(hint) };
        let base = if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit()) {
            format!("s_{base}")
        } else {
            base
        };
        let base = if annotating { format!("{base}_ev") } else { base };
        // `holds_2`, `holds_3`, ... are all numbered locals: a base that is a `FRESH` prefix
        // numbers another way, or no name would ever be free.
        let base = if FRESH.contains(&base.as_str()) {
            format!("{base}_fn")
        } else {
            base
        };
        let mut name = base.clone();
        let mut n = 1;
        let reserved = |name: &str| {
            RESERVED.contains(&name)
                || FRESH.iter().any(|prefix| {
                    name.strip_prefix(prefix)
                        .and_then(|rest| rest.strip_prefix('_'))
                        .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
                })
        };
        while self.used_names.contains(&name)
            || reserved(&name)
            || EDITION_KEYWORDS.contains(&name.as_str())
            || syn::parse_str::<Ident>(&name).is_err()
        {
            n += 1;
            name = format!("{base}_{n}");
        }
        self.used_names.insert(name.clone());
        let ident = format_ident!("{}", name);
        self.functions.insert(key.clone(), ident.clone());
        self.queue.push((key, ident.clone()));
        ident
    }

    /// The function for a subschema used on its own (an `anyOf` branch, a `not`, an `if`):
    /// the referenced location's own function when the subschema is only a local `$ref`.
    fn branch(&mut self, pointer: &str, annotating: bool) -> Result<Ident, CodegenError> {
        let doc = &self.docs[self.cur.doc].value;
        let only_ref = doc.pointer(pointer).and_then(Value::as_object).and_then(|object| {
            let reference = object.get("$ref")?.as_str()?;
            let annotations_only = object
                .keys()
                .all(|k| matches!(k.as_str(), "$ref" | "description" | "title" | "$comment"));
            annotations_only.then(|| reference.to_owned())
        });
        let ident = match only_ref {
            Some(reference) => match self.resolve(&reference, &child(pointer, "$ref"))? {
                Some(target) => self.referenced(&target, annotating),
                None => {
                    let n = self.functions.len();
                    self.function(&self.here(pointer), annotating, &format!("s{n}"))
                }
            },
            None => {
                let n = self.functions.len();
                self.function(&self.here(pointer), annotating, &format!("s{n}"))
            }
        };
        self.note_call(&ident);
        Ok(ident)
    }

    /// Records a call on the current function's own instance (for the cycle check).
    fn note_call(&mut self, callee: &Ident) {
        if self.descent == 0 {
            if let Some(caller) = &self.current_fn {
                self.same_instance.insert((caller.clone(), callee.clone()));
            }
        }
    }

    /// The function of a `$ref`'s target, named after its last pointer token.
    fn referenced(&mut self, target: &Location, annotating: bool) -> Ident {
        let hint = target
            .pointer
            .rsplit('/')
            .next()
            .map(unescape_pointer_token)
            .unwrap_or_default();
        let hint = if hint.is_empty() && target.doc != 0 {
            snake(
                strip_fragment(&self.docs[target.doc].uri)
                    .rsplit('/')
                    .next()
                    .unwrap_or("doc"),
            )
        } else {
            hint
        };
        let ident = self.function(target, annotating, &hint);
        self.note_call(&ident);
        ident
    }

    fn pattern(&mut self, source: &str, pointer: &str) -> Result<Ident, CodegenError> {
        if let Some(ident) = self.patterns.get(source) {
            return Ok(ident.clone());
        }
        let written = regex::write(source).map_err(|e| self.error(pointer, e.0))?;
        if !written.annex_b.is_empty() {
            self.notes.push(format!(
                "{}: {pointer}: the pattern {source:?} is no ECMA-262 pattern under the `u` flag; read as ECMA-262 Annex B reads it ({}), with the `u` flag's meaning otherwise",
                self.file(),
                written.annex_b.join("; ")
            ));
        }
        if let Some(why) = written.vm_reason {
            self.pike_vm
                .push((format!("{}: {pointer}", self.file()), source.to_owned(), why));
        }
        let compiled = written.tokens;
        Ok(new_static(
            &mut self.items,
            &mut self.patterns,
            source,
            "PATTERN",
            quote!(::pilotage_types::validate::pattern::Pattern),
            compiled,
        ))
    }

    /// The absolute URI `reference` (written at `pointer`) names.
    fn absolute(&self, reference: &str, pointer: &str) -> Result<String, CodegenError> {
        let (_, base) = self.index.scope(&self.here(pointer));
        join(&base, reference).ok_or_else(|| self.error(pointer, format!("{reference:?} is not a URI reference")))
    }

    /// Resolves a `$ref` (written at `pointer`) to a location of the set, or `None` for a
    /// document not in it.
    fn resolve(&self, reference: &str, pointer: &str) -> Result<Option<Location>, CodegenError> {
        let uri = self.absolute(reference, pointer)?;
        self.index
            .locate(self.docs, &uri)
            .map_err(|e| self.error(pointer, format!("`$ref` {reference:?} {e}")))
    }

    /// A call of `target`'s function on the current instance.
    fn call(&mut self, target: &Location, ann: Option<&Ident>) -> TokenStream {
        let function = self.referenced(target, ann.is_some());
        match ann {
            Some(ev) => quote!(if !#function(cx, v, at, #ev) && cx.stops() { return false; }),
            None => quote!(if !#function(cx, v, at) && cx.stops() { return false; }),
        }
    }

    /// A `$dynamicRef` (2020-12) or `$recursiveRef` (2019-09, anchor `""`): the statically
    /// resolved target, or the outermost resource in the dynamic scope that defines the
    /// anchor, when the target defines it too.
    fn dynamic_ref(
        &mut self,
        reference: &str,
        anchor: Option<String>,
        pointer: &str,
        ann: Option<&Ident>,
    ) -> Result<TokenStream, CodegenError> {
        let Some(target) = self.resolve(reference, pointer)? else {
            self.unresolved.insert(reference.to_owned());
            return Ok(TokenStream::new());
        };
        let target_resource = self.index.scope(&target).0;
        let bookended = anchor.as_ref().is_some_and(|name| {
            self.index.resources[target_resource]
                .dynamic
                .get(name)
                .is_some_and(|at| *at == target)
        });
        let Some(name) = anchor.filter(|_| bookended) else {
            return Ok(self.call(&target, ann));
        };
        self.saw_dynamic = true;
        let candidates: Vec<(u32, Location)> = self
            .index
            .resources
            .iter()
            .enumerate()
            .filter_map(|(i, r)| Some((u32::try_from(i).ok()?, r.dynamic.get(&name)?.clone())))
            .collect();
        let ids: Vec<u32> = candidates.iter().map(|(id, _)| *id).collect();
        let fallback = self.referenced(&target, ann.is_some());
        let mut arms = TokenStream::new();
        for (id, location) in &candidates {
            let function = self.referenced(location, ann.is_some());
            let call = match ann {
                Some(ev) => quote!(#function(cx, v, at, #ev)),
                None => quote!(#function(cx, v, at)),
            };
            arms.extend(quote!(Some(#id) => #call,));
        }
        let call = match ann {
            Some(ev) => quote!(#fallback(cx, v, at, #ev)),
            None => quote!(#fallback(cx, v, at)),
        };
        Ok(quote! {
            let ok = match cx.outermost(&[#(#ids),*]) { #arms _ => #call };
            if !ok && cx.stops() { return false; }
        })
    }

    /// The statements checking `v` against a subschema on the same or a child instance:
    /// inline, unless it starts a resource of its own and the set is dynamic (its function
    /// then enters that resource).
    fn inline(&mut self, schema: &Value, pointer: &str, ann: Option<&Ident>) -> Result<TokenStream, CodegenError> {
        let location = self.here(pointer);
        if self.dynamic && !pointer.is_empty() && self.index.resource_at(&location).is_some() {
            return Ok(self.call(&location, ann));
        }
        self.body(schema, pointer, ann)
    }

    /// `inline` for a child instance (an item, a member): its annotations are its own.
    fn descend(&mut self, schema: &Value, pointer: &str) -> Result<TokenStream, CodegenError> {
        self.descent += 1;
        let body = self.inline(schema, pointer, None);
        self.descent -= 1;
        body
    }

    /// The `properties` and the `required` names of the schema at `pointer` (the `if`, `then`
    /// or `else` of an object), when it is made of those alone (and annotations), in the resource
    /// of `parent`: `None` otherwise (read by the general path). No schema: none of either.
    fn members_only(&self, schema: Option<&Value>, pointer: &str, parent: &str) -> Option<MembersOnly> {
        let Some(schema) = schema else {
            return Some(MembersOnly::default());
        };
        let Value::Object(object) = schema else { return None };
        if self.index.scope(&self.here(pointer)).0 != self.index.scope(&self.here(parent)).0 {
            return None;
        }
        let object = self.effective(object, pointer);
        let allowed = |k: &str| k == "properties" || k == "required" || ANNOTATIONS.contains(&k);
        if !object.keys().all(|k| allowed(k)) {
            return None;
        }
        let properties = match object.get("properties") {
            Some(Value::Object(properties)) => sorted(properties)
                .into_iter()
                .map(|(name, sub)| (name.clone(), sub.clone()))
                .collect(),
            Some(_) => return None,
            None => Vec::new(),
        };
        let required = required_names(&object)?.into_iter().map(str::to_owned).collect();
        Some(MembersOnly { properties, required })
    }

    /// An expression on `v`: whether it holds the schema at `pointer`, for a schema made of
    /// `const`, `properties` and `required` alone (and annotations), in the resource of `parent`,
    /// whose members are such schemas too (down `depth` levels): an `if`'s test of a member
    /// (ExecuteResponse's `{"properties": {"status": {"const": "validation_error"}}, "required":
    /// ["status"]}`) is then a lookup or two, not a function's pass over the member's members.
    /// `None` for anything else. Nothing is reported, so it serves quiet tests only.
    fn expression(&self, schema: &Value, pointer: &str, parent: &str, depth: usize) -> Option<TokenStream> {
        let object = match schema {
            Value::Bool(holds) => return Some(quote!(#holds)),
            Value::Object(object) => object,
            _ => return None,
        };
        if self.index.scope(&self.here(pointer)).0 != self.index.scope(&self.here(parent)).0 {
            return None;
        }
        let object = self.effective(object, pointer);
        let simple = |k: &str| matches!(k, "const" | "properties" | "required") || ANNOTATIONS.contains(&k);
        if !object.keys().all(|k| simple(k)) {
            return None;
        }
        let mut tests = Vec::new();
        if let Some(expected) = object.get("const") {
            tests.push(equals(expected));
        }
        let required = required_names(&object)?;
        let mut members = Vec::new();
        if let Some(properties) = object.get("properties") {
            for (name, sub) in sorted(properties.as_object()?) {
                if depth == 0 {
                    return None;
                }
                let test = self.expression(sub, &child(&child(pointer, "properties"), name), pointer, depth - 1)?;
                let member = quote!(::pilotage_types::validate::runtime::member(o, #name));
                members.push(if required.contains(&name.as_str()) {
                    quote!(#member.is_some_and(|v| #test))
                } else {
                    quote!(#member.is_none_or(|v| #test))
                });
            }
        }
        for name in &required {
            if !object
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(|p| p.contains_key(*name))
            {
                members.push(quote!(::pilotage_types::validate::runtime::has_member(o, #name)));
            }
        }
        if !members.is_empty() {
            tests.push(quote!(match v { Value::Object(o) => #(#members)&&*, _ => true }));
        }
        Some(match tests.len() {
            0 => quote!(true),
            1 => tests.remove(0),
            _ => quote!((#(#tests)&&*)),
        })
    }

    /// The plan of [`Fused`] for the schema object at `pointer`, when its `if` / `then` / `else`
    /// can be read during its member pass.
    fn fuse(&mut self, object: &serde_json::Map<String, Value>, pointer: &str) -> Result<Option<Fused>, CodegenError> {
        if self.dynamic || !object.contains_key("if") || !(object.contains_key("then") || object.contains_key("else")) {
            return Ok(None);
        }
        let at = |keyword: &str| child(pointer, keyword);
        let Some(MembersOnly {
            properties: tested,
            required,
        }) = self.members_only(object.get("if"), &at("if"), pointer)
        else {
            return Ok(None);
        };
        let Some(then) = self.members_only(object.get("then"), &at("then"), pointer) else {
            return Ok(None);
        };
        let Some(otherwise) = self.members_only(object.get("else"), &at("else"), pointer) else {
            return Ok(None);
        };
        // What asserts nothing (`true`, annotations alone) is left out before anything is
        // generated: an `if` left with nothing to test but `required` names, or with nothing at
        // all, is read by the general path (looked up, not passed over).
        let asserts = |this: &Self, name: &str, sub: &Value| match sub {
            Value::Object(member) => {
                let member = this.effective(member, &child(&child(&at("if"), "properties"), name));
                !member.keys().all(|k| ANNOTATIONS.contains(&k.as_str()))
            }
            other => other != &Value::Bool(true),
        };
        let tested: Vec<(String, Value)> = tested
            .into_iter()
            .filter(|(name, sub)| asserts(self, name, sub))
            .collect();
        if tested.is_empty() {
            return Ok(None);
        }
        let mut members: BTreeMap<String, FusedMember> = BTreeMap::new();
        for (name, sub) in &tested {
            let within = child(&child(&at("if"), "properties"), name);
            let test = match self.expression(sub, &within, pointer, 2) {
                Some(test) => test,
                None if sub.is_object() => {
                    self.descent += 1;
                    let function = self.branch(&within, false);
                    self.descent -= 1;
                    let function = function?;
                    quote!(cx.quiet(#function, v, at))
                }
                None => return Err(self.error(&within, "a schema must be an object or a boolean")),
            };
            members.entry(name.clone()).or_default().test = Some(test);
        }
        let mut branches = [TokenStream::new(), TokenStream::new()];
        for (branch, (keyword, schema)) in [("then", &then), ("else", &otherwise)].into_iter().enumerate() {
            let MembersOnly {
                properties,
                required: names,
            } = schema;
            for (name, sub) in properties {
                let body = self.descend(sub, &child(&child(&at(keyword), "properties"), name))?;
                if body.is_empty() {
                    continue;
                }
                let kept = match members.get(name).and_then(|member| member.kept.clone()) {
                    Some(kept) => kept,
                    None => {
                        let ident = self.fresh("kept");
                        members.entry(name.clone()).or_default().kept = Some(ident.clone());
                        ident
                    }
                };
                let body = match member_fails_lazily(&body, name) {
                    Some(lazy) => lazy,
                    None => quote!(let at = &at.key(#name); #body),
                };
                branches[branch].extend(quote!(if let Some(v) = #kept { #body }));
            }
            // `then` / `else`'s `required`: looked up, as where nothing else reads the members.
            if !names.is_empty() {
                let fail = fail(&child(&at(keyword), "required"), quote!(Why::Required(name)));
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                let check = require_members(&names, &fail);
                branches[branch].extend(quote!(if let Value::Object(o) = v { #check }));
            }
        }
        for name in &required {
            members.entry(name.clone()).or_default().required = true;
        }
        let holds = self.fresh("holds");
        let seen = (!required.is_empty()).then(|| (self.fresh("seen"), required.len()));
        let [then, otherwise] = branches;
        Ok(Some(Fused {
            holds,
            seen,
            members,
            then,
            otherwise,
        }))
    }

    /// The statements checking `v` (at `at`) against `schema` (at `pointer`): each failure
    /// sets the evaluation failed: it records a violation, or returns at once. With `ann`,
    /// what this location evaluates of `v` is also recorded in that annotation record.
    #[allow(clippy::too_many_lines)]
    fn body(&mut self, schema: &Value, pointer: &str, ann: Option<&Ident>) -> Result<TokenStream, CodegenError> {
        self.compiled += 1;
        let object = match schema {
            Value::Bool(true) => {
                // `true` evaluates nothing: it reports no annotation.
                return Ok(TokenStream::new());
            }
            Value::Bool(false) => {
                let fail = fail(pointer, quote!(Why::False(v)));
                return Ok(quote!(#fail));
            }
            Value::Object(object) => object,
            _ => return Err(self.error(pointer, "a schema must be an object or a boolean")),
        };
        let draft = self.draft(pointer);
        let vocab = self.vocab(pointer);
        let object = &*self.effective(object, pointer);
        let at = |keyword: &str| child(pointer, keyword);
        let mut out = TokenStream::new();

        // `unevaluated*` (2019-09, 2020-12): this location keeps its own annotation record.
        let owns = !draft.is_legacy()
            && (object.contains_key("unevaluatedProperties") || object.contains_key("unevaluatedItems"));
        let local = owns.then(|| self.fresh("ev"));
        let inner: Option<Ident> = local.clone().or_else(|| ann.cloned());
        let inner = inner.as_ref();

        if let Some(reference) = object.get("$ref") {
            let Some(reference) = reference.as_str() else {
                return Err(self.error(&at("$ref"), "`$ref` must be a string"));
            };
            match self.resolve(reference, &at("$ref"))? {
                Some(target) => out.extend(self.call(&target, inner)),
                None => {
                    self.unresolved.insert(reference.to_owned());
                }
            }
            if draft.ref_hides_siblings() {
                return Ok(out);
            }
        }
        if draft == Draft::Draft2020 {
            if let Some(reference) = object.get("$dynamicRef") {
                let Some(reference) = reference.as_str() else {
                    return Err(self.error(&at("$dynamicRef"), "`$dynamicRef` must be a string"));
                };
                let anchor = reference
                    .split_once('#')
                    .map(|(_, f)| f.to_owned())
                    .filter(|f| !f.is_empty() && !f.starts_with('/'));
                out.extend(self.dynamic_ref(reference, anchor, &at("$dynamicRef"), inner)?);
            }
        }
        if draft == Draft::Draft2019 {
            if let Some(reference) = object.get("$recursiveRef") {
                let Some(reference) = reference.as_str() else {
                    return Err(self.error(&at("$recursiveRef"), "`$recursiveRef` must be a string"));
                };
                out.extend(self.dynamic_ref(reference, Some(String::new()), &at("$recursiveRef"), inner)?);
            }
        }

        // The compatible reading's rewrite of this location (see the module docs).
        let Widening {
            enum_of_strings,
            any_of_consts,
            one_of_consts,
        } = Widening::of(object, draft, vocab);
        let widened = enum_of_strings || any_of_consts || one_of_consts;
        let mut pinned_only = TokenStream::new();

        if let Some(types) = object.get("type") {
            let names = type_names(types)
                .ok_or_else(|| self.error(&at("type"), "`type` must be a string or an array of strings"))?;
            let mut tests = Vec::new();
            for name in &names {
                tests.push(match *name {
                    "string" => quote!(v.is_string()),
                    "number" => quote!(v.is_number()),
                    // Draft-04: an integer is written without a fraction (`1.0` is not one).
                    "integer" if draft == Draft::Draft4 => {
                        quote!(::pilotage_types::validate::runtime::is_integer_draft4(v))
                    }
                    "integer" => quote!(::pilotage_types::validate::runtime::is_integer(v)),
                    "object" => quote!(v.is_object()),
                    "array" => quote!(v.is_array()),
                    "boolean" => quote!(v.is_boolean()),
                    "null" => quote!(v.is_null()),
                    other => return Err(self.error(&at("type"), format!("unknown type {other:?}"))),
                });
            }
            let fail = fail(&at("type"), quote!(Why::Type(v, &[#(#names),*])));
            let check = quote!(if !(#(#tests)||*) { #fail });
            if widened {
                pinned_only.extend(check);
            } else {
                out.extend(check);
            }
        }
        if let Some(expected) = object.get("const") {
            let test = equals(expected);
            let text = expected.to_string();
            let fail = fail(&at("const"), quote!(Why::Const(#text)));
            out.extend(quote!(if !(#test) { #fail }));
        }
        if let Some(values) = object.get("enum") {
            let Value::Array(values) = values else {
                return Err(self.error(&at("enum"), "`enum` must be an array"));
            };
            let test = if values.iter().all(Value::is_string) && values.len() > SORTED_ENUM {
                // Many strings: a binary search of them sorted here (a `matches!` compares
                // them one by one: SchemaStore's ruff.json lists 900 rule codes).
                let mut strings: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
                strings.sort_unstable_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
                strings.dedup();
                quote!(::pilotage_types::validate::runtime::is_one_of_sorted(v, &[#(#strings),*]))
            } else if values.iter().all(Value::is_string) && !values.is_empty() {
                let strings = values.iter().filter_map(Value::as_str);
                quote!(matches!(v.as_str(), Some(#(#strings)|*)))
            } else if values.is_empty() {
                quote!(false)
            } else {
                let tests: Vec<TokenStream> = values.iter().map(equals).collect();
                quote!(#(#tests)||*)
            };
            let options = values.iter().map(Value::to_string).collect::<Vec<_>>().join(", ");
            let fail = fail(&at("enum"), quote!(Why::Enum(v, #options)));
            let check = quote!(if !(#test) { #fail });
            if enum_of_strings {
                pinned_only.extend(check);
            } else {
                out.extend(check);
            }
        }

        // Strings.
        let mut strings = TokenStream::new();
        strings.extend(self.count_checks(
            object,
            pointer,
            [("minLength", quote!(MinLength)), ("maxLength", quote!(MaxLength))],
            &quote!(::pilotage_types::validate::runtime::length(s)),
        )?);
        if let Some(pattern) = object.get("pattern") {
            let source = pattern
                .as_str()
                .ok_or_else(|| self.error(&at("pattern"), "`pattern` must be a string"))?;
            let ident = self.pattern(source, &at("pattern"))?;
            let fail = fail(&at("pattern"), quote!(Why::Pattern(v, #ident.source())));
            strings.extend(quote!(if !#ident.is_match(s) { #fail }));
        }
        if let Some(format) = object.get("format").and_then(Value::as_str) {
            if let Some(function) = format_check(draft, vocab, format) {
                let path: syn::Path = syn::parse_str(&format!("::pilotage_types::validate::format::{function}"))
                    .map_err(|e| self.error(&at("format"), e.to_string()))?;
                let fail = fail(&at("format"), quote!(Why::Format(v, #format)));
                strings.extend(quote!(if !#path(s) { #fail }));
            }
        }
        if matches!(draft, Draft::Draft6 | Draft::Draft7) {
            // Draft-07's content keywords, asserted for what the runtime decodes (base64,
            // JSON); other encodings and media types are annotations. Draft-04 has no content
            // keywords; draft-06 has none either, but jsonschema asserts them there, and the
            // verdicts follow it (a `contentMediaType` in a draft-06 schema is read as draft-07
            // writes it).
            let base64 = object.get("contentEncoding").and_then(Value::as_str) == Some("base64");
            let json = object.get("contentMediaType").and_then(Value::as_str) == Some("application/json");
            if base64 || json {
                let keyword = if json { "contentMediaType" } else { "contentEncoding" };
                let fail = fail(&at(keyword), quote!(Why::Content(v)));
                strings.extend(quote! {
                    if !::pilotage_types::validate::runtime::content(s, #base64, #json) { #fail }
                });
            }
        }
        if !strings.is_empty() {
            out.extend(quote!(if let Value::String(s) = v { #strings }));
        }

        // Numbers.
        let mut numbers = TokenStream::new();
        for keyword in [
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
        ] {
            let Some(limit) = object.get(keyword) else { continue };
            if draft.is_legacy() && limit.is_boolean() && keyword.starts_with("exclusive") {
                // Draft-04's boolean form modifies `minimum` / `maximum`, below.
                continue;
            }
            let Value::Number(limit_number) = limit else {
                return Err(self.error(&at(keyword), format!("`{keyword}` must be a number")));
            };
            let num = number(limit_number);
            let text = limit.to_string();
            let exclusive = |name: &str| object.get(name) == Some(&Value::Bool(true));
            let (test, why) = match keyword {
                "minimum" if exclusive("exclusiveMinimum") => {
                    (quote!(!= Some(::std::cmp::Ordering::Greater)), quote!(ExclusiveMinimum))
                }
                "maximum" if exclusive("exclusiveMaximum") => {
                    (quote!(!= Some(::std::cmp::Ordering::Less)), quote!(ExclusiveMaximum))
                }
                "minimum" => (quote!(== Some(::std::cmp::Ordering::Less)), quote!(Minimum)),
                "maximum" => (quote!(== Some(::std::cmp::Ordering::Greater)), quote!(Maximum)),
                "exclusiveMinimum" => (quote!(!= Some(::std::cmp::Ordering::Greater)), quote!(ExclusiveMinimum)),
                "exclusiveMaximum" => (quote!(!= Some(::std::cmp::Ordering::Less)), quote!(ExclusiveMaximum)),
                _ => {
                    if limit_number.as_f64().is_none_or(|f| f <= 0.0) {
                        return Err(self.error(&at(keyword), "`multipleOf` must be greater than 0"));
                    }
                    let fail = fail(&at(keyword), quote!(Why::MultipleOf(v, #text)));
                    let test = match limit_number
                        .as_f64()
                        .filter(|f| limit_number.is_f64() && f.fract() != 0.0)
                    {
                        // A fraction: its decimal parts read once, in a `static` (`Multiple`).
                        Some(fraction) => {
                            let multiple = self.multiple(&text, fraction);
                            quote!(#multiple.divides(n))
                        }
                        None => quote!(::pilotage_types::validate::runtime::is_multiple_of(n, #num)),
                    };
                    numbers.extend(quote!(if !#test { #fail }));
                    continue;
                }
            };
            let fail = fail(&at(keyword), quote!(Why::#why(v, #text)));
            if keyword == "minimum" && !exclusive("exclusiveMinimum") && limit_number.as_u64() == Some(0) {
                // `"minimum": 0`, the most common bound: a sign test, not a comparison.
                numbers.extend(quote!(if ::pilotage_types::validate::runtime::is_negative(n) { #fail }));
                continue;
            }
            numbers.extend(quote!(if ::pilotage_types::validate::runtime::compare(n, #num) #test { #fail }));
        }
        if !numbers.is_empty() {
            out.extend(quote!(if let Value::Number(n) = v { #numbers }));
        }

        // Arrays.
        let mut arrays = TokenStream::new();
        let mut prefix = 0usize;
        let tuple = match (object.get("prefixItems"), object.get("items")) {
            (Some(Value::Array(items)), _) if draft == Draft::Draft2020 => Some(("prefixItems", items)),
            (_, Some(Value::Array(items))) if draft != Draft::Draft2020 => Some(("items", items)),
            (Some(prefix), _) if draft == Draft::Draft2020 && !prefix.is_array() => {
                return Err(self.error(&at("prefixItems"), "`prefixItems` must be an array"))
            }
            (_, Some(Value::Array(_))) => {
                return Err(self.error(
                    &at("items"),
                    "`items` must be a schema in 2020-12 (`prefixItems` is the array form)",
                ))
            }
            _ => None,
        };
        if let Some((keyword, items)) = tuple {
            prefix = items.len();
            for (index, item) in items.iter().enumerate() {
                let body = self.descend(item, &child(&at(keyword), &index.to_string()))?;
                if !body.is_empty() {
                    arrays.extend(quote! {
                        if let Some(v) = a.get(#index) { let at = &at.index(#index); #body }
                    });
                }
            }
            if let Some(ev) = inner {
                arrays.extend(quote!(#ev.items_upto(#prefix);));
            }
        }
        let rest = match (tuple.map(|t| t.0), object.get("items"), object.get("additionalItems")) {
            (Some("items"), _, Some(additional)) => Some((additional, at("additionalItems"))),
            (Some("items"), _, None) => None,
            (_, Some(items), _) if !items.is_array() => Some((items, at("items"))),
            _ => None,
        };
        if let Some((schema, item_pointer)) = rest {
            let body = self.descend(schema, &item_pointer)?;
            if !body.is_empty() {
                let skip = (prefix > 0).then(|| quote!(.skip(#prefix)));
                arrays.extend(quote! {
                    for (index, v) in a.iter().enumerate() #skip { let at = &at.index(index); #body }
                });
            }
            if let Some(ev) = inner {
                arrays.extend(quote!(#ev.all_items();));
            }
        }
        arrays.extend(self.count_checks(
            object,
            pointer,
            [("minItems", quote!(MinItems)), ("maxItems", quote!(MaxItems))],
            &quote!((a.len() as u64)),
        )?);
        if object.get("uniqueItems") == Some(&Value::Bool(true)) {
            let fail = fail(&at("uniqueItems"), quote!(Why::Unique(v)));
            arrays.extend(quote!(if !::pilotage_types::validate::runtime::all_unique(a) { #fail }));
        }
        if object.contains_key("contains") {
            self.descent += 1;
            let function = self.branch(&at("contains"), false);
            self.descent -= 1;
            let function = function?;
            let bounded = !draft.is_legacy();
            let min = match object.get("minContains").filter(|_| bounded) {
                Some(min) => count(min)
                    .ok_or_else(|| self.error(&at("minContains"), "`minContains` must be a non-negative integer"))?,
                None => 1,
            };
            let fail_min = fail(&at("contains"), quote!(Why::Contains(v)));
            let record = inner.map(|ev| quote!(#ev.item(index);));
            let max = object.get("maxContains").filter(|_| bounded);
            if min > 0 || max.is_some() {
                arrays.extend(quote! {
                    let mut count = 0u64;
                    for (index, item) in a.iter().enumerate() {
                        if cx.quiet(#function, item, &at.index(index)) { count += 1; #record }
                    }
                });
            } else if record.is_some() {
                // `minContains: 0`: nothing to assert, only the items it evaluated.
                arrays.extend(quote! {
                    for (index, item) in a.iter().enumerate() {
                        if cx.quiet(#function, item, &at.index(index)) { #record }
                    }
                });
            }
            if min > 0 {
                arrays.extend(quote!(if count < #min { #fail_min }));
            }
            if let Some(max) = max {
                let max = count(max)
                    .ok_or_else(|| self.error(&at("maxContains"), "`maxContains` must be a non-negative integer"))?;
                let fail_max = fail(&at("maxContains"), quote!(Why::Contains(v)));
                arrays.extend(quote!(if count > #max { #fail_max }));
            }
        }
        if !arrays.is_empty() {
            out.extend(quote!(if let Value::Array(a) = v { #arrays }));
        }

        // Objects: one pass over the instance's members, dispatching on the name (cheaper
        // than one lookup per declared property), noting the required members seen (a bit
        // each, so that those missing are named without a lookup). A location that checks at
        // most `LOOKED_UP_AT_MOST` members and nothing else of the others (or only that there
        // are none: `additionalProperties: false`) picks them out by a shared call instead
        // (`runtime::pick`, below), `required`'s names with them.
        let mut objects = TokenStream::new();
        // This location's own conditional, and those of its `allOf` members that are nothing
        // else (Outcome's `allOf: [{"if": ..., "then": ..., "else": ...}]`), keyed by the member.
        let mut fused: Vec<(Option<usize>, Fused)> = Vec::new();
        if inner.is_none() {
            if let Some(own) = self.fuse(object, pointer)? {
                fused.push((None, own));
            }
            if let Some(Value::Array(members)) = object.get("allOf") {
                for (index, member) in members.iter().enumerate() {
                    let within = child(&at("allOf"), &index.to_string());
                    let Value::Object(member) = member else { continue };
                    if self.index.scope(&self.here(&within)).0 != self.index.scope(&self.here(pointer)).0 {
                        continue;
                    }
                    let member = self.effective(member, &within);
                    let conditional = |k: &str| matches!(k, "if" | "then" | "else") || ANNOTATIONS.contains(&k);
                    if member.keys().all(|k| conditional(k)) {
                        if let Some(conditional) = self.fuse(&member, &within)? {
                            fused.push((Some(index), conditional));
                        }
                    }
                }
            }
        }
        let required = required_names(object)
            .ok_or_else(|| self.error(&at("required"), "`required` must be an array of strings"))?;
        let properties = match object.get("properties") {
            Some(Value::Object(properties)) => sorted(properties),
            Some(_) => return Err(self.error(&at("properties"), "`properties` must be an object")),
            None => Vec::new(),
        };
        let known: Vec<&str> = properties.iter().map(|(name, _)| name.as_str()).collect();
        // Discriminators first: stopping at the first violation, a member whose schema is only a
        // `const` is compared before the others are read (the branches of a tagged union, each
        // `{"properties": {"type": {"const": "TextLine"}, "label": {"$ref": ...}, ...}}`,
        // fail on `type` without checking `label`: SchemaStore's enonic schemas, 21 branches).
        // The member loop compares it again; collecting every violation, nothing changes.
        if properties.len() >= 3 {
            let mut early = TokenStream::new();
            for (name, subschema) in &properties {
                let Value::Object(sub) = subschema else { continue };
                let sub = self.effective(sub, &child(&at("properties"), name));
                let Some(expected) = sub.get("const") else { continue };
                if sub.keys().all(|k| k == "const" || ANNOTATIONS.contains(&k.as_str())) {
                    let test = equals(expected);
                    early.extend(quote!(if let Some(v) = ::pilotage_types::validate::runtime::member(o, #name) { if !(#test) { return false; } }));
                }
            }
            if !early.is_empty() {
                objects.extend(quote!(if cx.stops() { #early }));
            }
        }
        // Each pattern of `patternProperties` and the check of the members it matches.
        let mut pattern_bodies = Vec::new();
        if let Some(patterns) = object.get("patternProperties") {
            let Value::Object(patterns) = patterns else {
                return Err(self.error(&at("patternProperties"), "`patternProperties` must be an object"));
            };
            for (source, subschema) in sorted(patterns) {
                let pointer = child(&at("patternProperties"), source);
                let ident = self.pattern(source, &pointer)?;
                let body = self.descend(subschema, &pointer)?;
                pattern_bodies.push((ident, body));
            }
        }
        let pattern_idents: Vec<&Ident> = pattern_bodies.iter().map(|(ident, _)| ident).collect();
        let matched_pattern: Vec<TokenStream> = pattern_idents.iter().map(|ident| quote!(#ident.is_match(k))).collect();
        let mut after = TokenStream::new();
        let mut before = TokenStream::new();
        // `additionalProperties: false` beside one or two names of `properties` and nothing
        // else read of the members (no pattern, no fused conditional): the names are picked
        // (`runtime::pick`, below) and the object has a member of another name exactly when it
        // has more members than were picked (names in an object are distinct). No pass.
        let closed = matches!(object.get("additionalProperties"), Some(Value::Bool(false)))
            && pattern_bodies.is_empty()
            && fused.is_empty()
            && (1..=LOOKED_UP_AT_MOST).contains(&known.len());
        let other = match object.get("additionalProperties") {
            None | Some(Value::Bool(true)) => TokenStream::new(),
            Some(Value::Bool(false)) if known.is_empty() && pattern_idents.is_empty() => {
                // No member is allowed: the object must be empty (no pass over the members
                // for this: quicktype's `keyword-unions` has 277 such objects, each a loop).
                let fail = fail(&at("additionalProperties"), quote!(Why::Additional(v, &[], &[])));
                after.extend(quote!(if !o.is_empty() { #fail }));
                TokenStream::new()
            }
            Some(Value::Bool(false)) => {
                let fail = fail(
                    &at("additionalProperties"),
                    quote!(Why::Additional(v, &[#(#known),*], &[#(&#pattern_idents),*])),
                );
                if closed {
                    after.extend(quote!(if o.len() > found.iter().flatten().count() { #fail }));
                    TokenStream::new()
                } else {
                    before.extend(quote!(let mut unexpected = false;));
                    after.extend(quote!(if unexpected { #fail }));
                    quote!(if !(false #(|| #matched_pattern)*) { unexpected = true; })
                }
            }
            Some(subschema) => {
                let body = self.descend(subschema, &at("additionalProperties"))?;
                if body.is_empty() {
                    TokenStream::new()
                } else {
                    quote!(if !(false #(|| #matched_pattern)*) { let at = &at.key(k); #body })
                }
            }
        };
        let mut arms = TokenStream::new();
        let mut arm_names: Vec<&str> = known.clone();
        for name in &required {
            if !arm_names.contains(name) {
                arm_names.push(name);
            }
        }
        for (_, fused) in &fused {
            for name in fused.members.keys() {
                if !arm_names.contains(&name.as_str()) {
                    arm_names.push(name);
                }
            }
        }
        arm_names.sort_unstable();
        let mut bodies = Vec::with_capacity(arm_names.len());
        for name in &arm_names {
            bodies.push(match properties.iter().find(|(n, _)| n.as_str() == *name) {
                Some((_, subschema)) => Some(self.descend(subschema, &child(&at("properties"), name))?),
                None => None,
            });
        }
        // How the members are read: picked (below), in a pass, or not at all. When nothing but
        // `required` needs them, each required name is looked up (a few lookups) rather than
        // every member read: a `{"required": ["x"]}` branch of a 96-branch `anyOf` (SchemaStore's
        // renovate) read every member 96 times.
        // The names of `properties` whose subschema checks something, with that check.
        let checked: Vec<(&str, &TokenStream)> = arm_names
            .iter()
            .zip(&bodies)
            .filter_map(|(name, body)| body.as_ref().filter(|body| !body.is_empty()).map(|body| (*name, body)))
            .collect();
        // Whether the few members `properties` checks are picked out by a shared call
        // (`runtime::pick`, one pass over the members out of line) instead of the pass inlined
        // here: when nothing else is done with the other members (no `additionalProperties`,
        // `patternProperties` or fused conditional), or when only their absence is checked
        // (`closed`, above: every name of `properties` is picked then). The inlined pass is the
        // map's iteration, about 600 bytes of code at every such location; the official suite's
        // 1,404 required groups, most with one or two properties, did not fit in a core's 1 MiB
        // cache with it.
        // Their violations come in the order of the names, which is the map's order (with
        // serde_json's `preserve_order`, a pass reports in the instance's order instead).
        let looked_up = closed
            || (other.is_empty()
                && fused.is_empty()
                && pattern_bodies.is_empty()
                && (1..=LOOKED_UP_AT_MOST).contains(&checked.len()));
        let pass =
            !looked_up && (!other.is_empty() || !fused.is_empty() || !pattern_bodies.is_empty() || !checked.is_empty());
        // Where `unevaluatedProperties` needs the members `properties` and `patternProperties`
        // evaluated (without `additionalProperties`, which evaluates them all), the pass records
        // them as it reads them, not in a second pass of its own; the pick records those it
        // picks, and the others (names whose subschema checks nothing) are looked up below.
        let marked = match inner {
            Some(ev) if (looked_up || pass) && !object.contains_key("additionalProperties") => Some(ev),
            _ => None,
        };
        let pattern_mark = marked.filter(|_| pass).map(|ev| quote!(#ev.prop(k);));
        let pattern_checks: TokenStream = pattern_bodies
            .iter()
            .map(|(ident, body)| quote!(if #ident.is_match(k) { #pattern_mark let at = &at.key(k); #body }))
            .collect();
        // The members picked, each recorded as evaluated for `unevaluatedProperties` when it is
        // one of `properties`.
        // Closed, every name of `properties` is picked, those that check nothing too: the
        // count of members found is what tells whether there is another.
        let mut looked: Vec<&str> = if closed {
            known.clone()
        } else if looked_up {
            checked.iter().map(|(name, _)| *name).collect()
        } else {
            Vec::new()
        };
        // Without a pass, `required` reads the pick too: its names are picked with the others
        // (up to `PICKED_AT_MOST` in all; two or more when there is no other to pick), rather
        // than each looked up after the pick. Not when closed: there, the count of members
        // picked is what tells whether there is one of another name.
        let extra: Vec<&str> = required.iter().copied().filter(|name| !looked.contains(name)).collect();
        let picks_required = !pass
            && !closed
            && !extra.is_empty()
            && (looked_up || required.len() >= 2)
            && looked.len() + extra.len() <= PICKED_AT_MOST;
        if picks_required {
            looked.extend(extra);
        }
        let picked = looked_up || picks_required;
        // `required` answered from the pick: every name it lists was picked.
        let required_picked = picked && !required.is_empty() && required.iter().all(|name| looked.contains(name));
        let mut lookups = TokenStream::new();
        if picked {
            lookups.extend(quote!(let found = ::pilotage_types::validate::runtime::pick(o, [#(#looked),*]);));
            for (index, name) in looked.iter().enumerate() {
                let body = checked
                    .iter()
                    .find(|(checked, _)| checked == name)
                    .map(|(_, body)| *body);
                let scoped = body.map(|body| match member_fails_lazily(body, name) {
                    Some(lazy) => lazy,
                    None => quote!(let at = &at.key(#name); #body),
                });
                // Only a name of `properties` is evaluated (not one only `required` lists).
                let mark = marked
                    .filter(|_| known.contains(name))
                    .map(|ev| quote!(#ev.prop(#name);));
                match scoped {
                    Some(scoped) => lookups.extend(quote! {
                        if let Some(v) = found[#index] { #mark #scoped }
                    }),
                    None if mark.is_some() => {
                        lookups.extend(quote!(if found[#index].is_some() { #mark }));
                    }
                    None => {}
                }
            }
        }
        for (name, body) in arm_names.iter().zip(bodies) {
            // The pass notes each required member it reads: a bit each (up to 64 names, so that
            // the names missing are known without looking them up), else a count.
            let count = match required.iter().position(|r| r == name) {
                Some(bit) if pass && required.len() <= 64 => {
                    let bit = u32::try_from(bit).unwrap_or_default();
                    Some(quote!(seen |= 1u64 << #bit;))
                }
                Some(_) if pass => Some(quote!(seen += 1;)),
                _ => None,
            };
            // A name of `properties` (not one only `required` lists) is evaluated.
            let mark = marked.filter(|_| pass && body.is_some()).map(|ev| quote!(#ev.prop(k);));
            // A name only `required` lists is not one of `properties`: `additionalProperties`
            // applies to it as to any other member.
            let undeclared = if body.is_none() {
                other.clone()
            } else {
                TokenStream::new()
            };
            let body = body.unwrap_or_default();
            // What the fused conditional does with the member (before `at` names the member).
            let mut conditional = TokenStream::new();
            for (_, fused) in &fused {
                if let Some(member) = fused.members.get(*name) {
                    if member.required {
                        let (seen, _) = fused.seen.as_ref().expect("a required member is counted");
                        conditional.extend(quote!(#seen += 1;));
                    }
                    if let Some(test) = &member.test {
                        let holds = &fused.holds;
                        conditional.extend(quote!(if #holds && !(#test) { #holds = false; }));
                    }
                    if let Some(kept) = &member.kept {
                        conditional.extend(quote!(#kept = Some(v);));
                    }
                }
            }
            // With nothing to do, an arm is still needed when `_` must see only the others.
            if body.is_empty() && count.is_none() && mark.is_none() && conditional.is_empty() && other.is_empty() {
                continue;
            }
            let scoped = (!body.is_empty()).then(|| match member_fails_lazily(&body, name) {
                Some(lazy) => lazy,
                None => quote!(let at = &at.key(k); #body),
            });
            arms.extend(quote!(#name => { #count #mark #conditional #scoped #undeclared }));
        }
        if !required.is_empty() {
            let fail = fail(&at("required"), quote!(Why::Required(name)));
            let look_up = require_members(&required, &fail);
            if required_picked {
                // Read from the pick: the names missing are those it did not find (named in
                // `required`'s order).
                let indices: Vec<usize> = required
                    .iter()
                    .map(|name| looked.iter().position(|picked| picked == name).unwrap_or_default())
                    .collect();
                after.extend(quote! {
                    if #(found[#indices].is_none())||* {
                        for (name, present) in [#(#required),*].into_iter().zip([#(found[#indices].is_some()),*]) {
                            if !present { #fail }
                        }
                    }
                });
            } else if pass && required.len() <= 64 {
                // Noted by the pass, a bit a name: those missing are the bits not set, named
                // without a lookup (a `oneOf` branch's `required` is missing on most instances of
                // the official suite's `unevaluatedProperties.json#35`, and a lookup each was a
                // fifth of its time).
                before.extend(quote!(let mut seen = 0u64;));
                let all = u64::MAX >> (64 - required.len());
                after.extend(quote! {
                    if seen != #all {
                        for (bit, name) in [#(#required),*].into_iter().enumerate() {
                            if seen & (1u64 << bit) == 0 { #fail }
                        }
                    }
                });
            } else if pass {
                // Counted during the pass: looked up (to name them) only when some are missing,
                // by the shared `runtime::pick` or `runtime::has_member`. The map's own search,
                // inlined here, was 150 to 250 bytes of code run only on invalid input, in each
                // of 120 checks of the official suite.
                before.extend(quote!(let mut seen = 0usize;));
                let count = required.len();
                after.extend(quote!(if seen < #count { #look_up }));
            } else {
                after.extend(look_up);
            }
        }
        if pass {
            let dispatch = if arms.is_empty() {
                other
            } else {
                quote!(match k.as_str() { #arms _ => { #other } })
            };
            let members = self.members();
            objects.extend(quote! {
                #before
                for (k, v) in #members { #dispatch #pattern_checks }
                #after
            });
        } else {
            objects.extend(quote!(#before #lookups #after));
        }
        if let Some(ev) = inner {
            // The members `properties`, `patternProperties` and `additionalProperties`
            // evaluated (all of them, with `additionalProperties`).
            if object.contains_key("additionalProperties") {
                objects.extend(quote!(#ev.all_props();));
            } else if !(pass && marked.is_some()) {
                // Not recorded by a pass: patterns always take one, so only names are left here,
                // those the pick did not record.
                let unmarked: Vec<&str> = known
                    .iter()
                    .copied()
                    .filter(|name| marked.is_none() || !looked.contains(name))
                    .collect();
                // A name `required` also lists is recorded without a lookup: stopping at the
                // first violation, the member is there whenever this point is reached (the
                // check of `required` above returned otherwise); collecting, an absent name
                // recorded changes nothing, as only the object's own members are ever asked
                // about (`Ev::unevaluated`). A lookup each was a tenth of the time of the
                // official suite's `unevaluatedProperties.json#35`, whose branches are
                // `{"required": [x], "properties": {x: true}}`.
                let (sure, unmarked): (Vec<&str>, Vec<&str>) =
                    unmarked.into_iter().partition(|name| required.contains(name));
                objects.extend(quote!(#(#ev.prop(#sure);)*));
                if unmarked.len() <= LOOKED_UP_AT_MOST {
                    // A few names: each looked up (a shared call) rather than every member read.
                    objects.extend(quote! {
                        #(if ::pilotage_types::validate::runtime::has_member(o, #unmarked) { #ev.prop(#unmarked); })*
                    });
                } else {
                    let names = self.names_loop();
                    objects.extend(quote! {
                        #names { if matches!(k.as_str(), #(#unmarked)|*) { #ev.prop(k); } }
                    });
                }
            }
        }
        if object.contains_key("propertyNames") {
            self.descent += 1;
            let function = self.branch(&at("propertyNames"), false);
            self.descent -= 1;
            let function = function?;
            let fail = fail(&at("propertyNames"), quote!(Why::PropertyName(k)));
            let each = self.names_loop();
            objects.extend(quote! {
                let mut names = ::pilotage_types::validate::runtime::NameBuffer::new();
                #each {
                    if !cx.quiet(#function, names.holding(k), at) { #fail }
                }
            });
        }
        objects.extend(self.count_checks(
            object,
            pointer,
            [
                ("minProperties", quote!(MinProperties)),
                ("maxProperties", quote!(MaxProperties)),
            ],
            &quote!((o.len() as u64)),
        )?);
        // `dependentRequired`, and draft-07's `dependencies` in its array form.
        let mut dependent_required = Vec::new();
        let mut dependent_schemas = Vec::new();
        if let Some(dependent) = object.get("dependentRequired").filter(|_| !draft.is_legacy()) {
            let Value::Object(dependent) = dependent else {
                return Err(self.error(&at("dependentRequired"), "`dependentRequired` must be an object"));
            };
            for (member, names) in sorted(dependent) {
                dependent_required.push((member, names, child(&at("dependentRequired"), member)));
            }
        }
        if let Some(dependent) = object.get("dependentSchemas").filter(|_| !draft.is_legacy()) {
            let Value::Object(dependent) = dependent else {
                return Err(self.error(&at("dependentSchemas"), "`dependentSchemas` must be an object"));
            };
            for (member, subschema) in sorted(dependent) {
                dependent_schemas.push((member, subschema, child(&at("dependentSchemas"), member)));
            }
        }
        if let Some(dependent) = object.get("dependencies") {
            let Value::Object(dependent) = dependent else {
                return Err(self.error(&at("dependencies"), "`dependencies` must be an object"));
            };
            for (member, value) in sorted(dependent) {
                let pointer = child(&at("dependencies"), member);
                if value.is_array() {
                    dependent_required.push((member, value, pointer));
                } else {
                    dependent_schemas.push((member, value, pointer));
                }
            }
        }
        for (member, names, pointer) in dependent_required {
            let names = names
                .as_array()
                .and_then(|names| names.iter().map(Value::as_str).collect::<Option<Vec<&str>>>())
                .ok_or_else(|| self.error(&pointer, "a dependency must be an array of strings"))?;
            let check = require_members(&distinct(names), &fail(&pointer, quote!(Why::Dependent(#member, name))));
            objects.extend(quote!(if ::pilotage_types::validate::runtime::has_member(o, #member) { #check }));
        }
        for (member, subschema, pointer) in dependent_schemas {
            // The subschema applies to the object itself (`v` is still it here).
            let body = self.inline(subschema, &pointer, inner)?;
            objects.extend(quote!(if ::pilotage_types::validate::runtime::has_member(o, #member) { #body }));
        }
        for (_, fused) in &fused {
            let holds = &fused.holds;
            out.extend(quote!(let mut #holds = true;));
            if let Some((seen, _)) = &fused.seen {
                out.extend(quote!(let mut #seen = 0usize;));
            }
            for kept in fused.members.values().filter_map(|member| member.kept.as_ref()) {
                out.extend(quote!(let mut #kept: Option<&Value> = None;));
            }
        }
        if !objects.is_empty() {
            out.extend(quote!(if let Value::Object(o) = v { #objects }));
        }

        // Applicators on the instance itself.
        if let Some(branches) = object.get("allOf") {
            let branches = branches
                .as_array()
                .ok_or_else(|| self.error(&at("allOf"), "`allOf` must be an array"))?;
            for (index, branch) in branches.iter().enumerate() {
                if let Some(found) = fused.iter().position(|(member, _)| *member == Some(index)) {
                    let (_, conditional) = fused.swap_remove(found);
                    out.extend(conditional.after_pass());
                    continue;
                }
                let body = self.inline(branch, &child(&at("allOf"), &index.to_string()), inner)?;
                out.extend(quote!({ #body }));
            }
        }
        for keyword in ["anyOf", "oneOf"] {
            let Some(branches) = object.get(keyword) else { continue };
            let branches = branches
                .as_array()
                .ok_or_else(|| self.error(&at(keyword), format!("`{keyword}` must be an array")))?;
            // The branches share this location's resource (`required_only` admits no `$id`):
            // their `required` asserts only with the validation vocabulary on.
            if let Some(sets) = required_only(branches).filter(|_| vocab.validation) {
                let check = if keyword == "anyOf" {
                    any_of_required(&sets, fail(&at(keyword), quote!(Why::AnyOf(v))))
                } else {
                    let none = fail(&at(keyword), quote!(Why::OneOfNone(v)));
                    let many = fail(&at(keyword), quote!(Why::OneOfMany(v)));
                    one_of_required(&sets, none, many)
                };
                out.extend(quote!({ #check }));
                continue;
            }
            let functions: Vec<Ident> = (0..branches.len())
                .map(|index| self.branch(&child(&at(keyword), &index.to_string()), inner.is_some()))
                .collect::<Result<_, _>>()?;
            // A tagged union: the branches whose tag differs from the instance's are not called
            // (they would fail on it); `tag` is the instance's member, `None` on anything else.
            let (tag, guards): (TokenStream, Vec<TokenStream>) = match self.tag(branches, &at(keyword)) {
                Some((name, pins)) => {
                    let open = pins.iter().flatten().any(|pin| pin.open);
                    let compatible = open.then(|| quote!(let compatible = cx.compatible();));
                    let guards = pins
                        .iter()
                        .map(|pin| {
                            let Some(pin) = pin else { return TokenStream::new() };
                            let tests: Vec<TokenStream> = pin.values.iter().map(equals).collect();
                            let test = if tests.is_empty() {
                                quote!(false)
                            } else {
                                quote!(#(#tests)||*)
                            };
                            if pin.open {
                                quote!(tag.is_none_or(|v| compatible || #test) &&)
                            } else {
                                quote!(tag.is_none_or(|v| #test) &&)
                            }
                        })
                        .collect();
                    (
                        quote!(#compatible let tag = match v { Value::Object(o) => ::pilotage_types::validate::runtime::lookup(o, #name), _ => None };),
                        guards,
                    )
                }
                None => (
                    TokenStream::new(),
                    branches.iter().map(|branch| type_guard(branch, draft, vocab)).collect(),
                ),
            };
            let check = match (keyword, inner) {
                ("anyOf", None) => {
                    let fail = fail(&at(keyword), quote!(Why::AnyOf(v)));
                    quote!(#tag if !(#(#guards cx.quiet(#functions, v, at))||*) { #fail })
                }
                ("anyOf", Some(ev)) => {
                    // Every branch is evaluated: each that holds reports its annotations.
                    let fail = fail(&at(keyword), quote!(Why::AnyOf(v)));
                    quote! {
                        #tag
                        let mut holds = false;
                        #( if #guards true {
                            let mut e = ::pilotage_types::validate::runtime::Ev::new();
                            if cx.quiet_ev(#functions, v, at, &mut e) { holds = true; #ev.merge(&e); }
                        } )*
                        if !holds { #fail }
                    }
                }
                (_, None) => {
                    let none = fail(&at(keyword), quote!(Why::OneOfNone(v)));
                    let many = fail(&at(keyword), quote!(Why::OneOfMany(v)));
                    quote! {
                        #tag
                        let mut holds = 0usize;
                        #( if holds < 2 && #guards cx.quiet(#functions, v, at) { holds += 1; } )*
                        if holds == 0 { #none } else if holds > 1 { #many }
                    }
                }
                (_, Some(ev)) => {
                    let none = fail(&at(keyword), quote!(Why::OneOfNone(v)));
                    let many = fail(&at(keyword), quote!(Why::OneOfMany(v)));
                    quote! {
                        #tag
                        let mut holds = 0usize;
                        #( if holds < 2 && #guards true {
                            let mut e = ::pilotage_types::validate::runtime::Ev::new();
                            if cx.quiet_ev(#functions, v, at, &mut e) { holds += 1; #ev.merge(&e); }
                        } )*
                        if holds == 0 { #none } else if holds > 1 { #many }
                    }
                }
            };
            let check = quote!({ #check });
            if (keyword == "anyOf" && any_of_consts) || (keyword == "oneOf" && one_of_consts) {
                pinned_only.extend(check);
            } else {
                out.extend(check);
            }
        }
        if let Some(not) = object.get("not") {
            let text = not.to_string();
            let fail = fail(&at("not"), quote!(Why::Not(v, #text)));
            // `not: {"pattern": ...}` is the match itself, with no function: SchemaStore's
            // venvironment schemas refuse 40 keywords a name as `allOf` of such `not`s. The
            // pattern says nothing of a value that is not a string, so `not` fails on one.
            let only_pattern = match not {
                Value::Object(sub) => {
                    let sub = self.effective(sub, &at("not"));
                    match sub.get("pattern") {
                        Some(Value::String(source))
                            if sub.keys().all(|k| k == "pattern" || ANNOTATIONS.contains(&k.as_str())) =>
                        {
                            Some(source.clone())
                        }
                        _ => None,
                    }
                }
                _ => None,
            };
            match only_pattern {
                Some(source) => {
                    let ident = self.pattern(&source, &child(&at("not"), "pattern"))?;
                    out.extend(quote! {
                        if match v { Value::String(s) => #ident.is_match(s), _ => true } { #fail }
                    });
                }
                None => {
                    let function = self.branch(&at("not"), false)?;
                    out.extend(quote!(if cx.quiet(#function, v, at) { #fail }));
                }
            }
        }
        if let Some(own) = fused.iter().position(|(member, _)| member.is_none()) {
            out.extend(fused.swap_remove(own).1.after_pass());
        } else if object.contains_key("if")
            && (object.contains_key("then") || object.contains_key("else") || inner.is_some())
        {
            let condition = self.branch(&at("if"), inner.is_some())?;
            let then = match object.get("then") {
                Some(then) => self.inline(then, &at("then"), inner)?,
                None => TokenStream::new(),
            };
            let otherwise = match object.get("else") {
                Some(otherwise) => self.inline(otherwise, &at("else"), inner)?,
                None => TokenStream::new(),
            };
            out.extend(match inner {
                None => quote!(if cx.quiet(#condition, v, at) { #then } else { #otherwise }),
                Some(ev) => quote! {
                    let mut e = ::pilotage_types::validate::runtime::Ev::new();
                    if cx.quiet_ev(#condition, v, at, &mut e) { #ev.merge(&e); #then } else { #otherwise }
                },
            });
        }

        if widened {
            let fail = fail(&at("type"), quote!(Why::Type(v, &["string"])));
            out = quote! {
                if cx.compatible() {
                    if !v.is_string() { #fail }
                } else {
                    #pinned_only
                }
                #out
            };
        }

        // `unevaluatedItems` / `unevaluatedProperties`: after every other keyword here.
        if let Some(local) = &local {
            let mut tail = TokenStream::new();
            if let Some(schema) = object.get("unevaluatedItems") {
                let body = self.descend(schema, &at("unevaluatedItems"))?;
                let body = if body.is_empty() {
                    TokenStream::new()
                } else {
                    quote! {
                        if let Value::Array(a) = v {
                            for (index, v) in a.iter().enumerate() {
                                if !#local.has_item(index) { let at = &at.index(index); #body }
                            }
                        }
                    }
                };
                tail.extend(quote!(#body #local.all_items();));
            }
            if let Some(schema) = object.get("unevaluatedProperties") {
                let body = self.descend(schema, &at("unevaluatedProperties"))?;
                let body = if body.is_empty() {
                    TokenStream::new()
                } else {
                    quote! {
                        if let Value::Object(o) = v {
                            for (k, v) in #local.unevaluated(o) { let at = &at.key(k); #body }
                        }
                    }
                };
                tail.extend(quote!(#body #local.all_props();));
            }
            let merge = ann.map(|outer| quote!(#outer.merge(#local);));
            out = quote! {
                let #local = &mut ::pilotage_types::validate::runtime::Ev::new();
                #out
                #tail
                #merge
            };
        }
        Ok(out)
    }

    /// The function item of `key`, rendered once every call is known ([`FunctionItem::render`]).
    fn function_item(&mut self, key: &Key, ident: &Ident, public: bool) -> Result<FunctionItem, CodegenError> {
        let (location, annotating) = key;
        self.cur = location.clone();
        self.current_fn = Some(ident.clone());
        self.descent = 0;
        let node = self.docs[location.doc]
            .value
            .pointer(&location.pointer)
            .ok_or_else(|| self.error(&location.pointer, "nothing at this location"))?
            .clone();
        let ev = format_ident!("ev");
        let body = self.body(&node, &location.pointer, annotating.then_some(&ev))?;
        let doc = if location.doc == 0 {
            format!(" The schema at `{}`.", location.pointer)
        } else {
            format!(
                " The schema at `{}` of {}.",
                location.pointer, self.docs[location.doc].uri
            )
        };
        let vis = if public { quote!(pub) } else { quote!() };
        // Generic over the mode (`runtime::Mode`): a verdict runs the instance that stops at the
        // first violation, compiled without the code that records violations; the table holds
        // both instances (`runtime::Check::new(f, f)`), and `cx.quiet` takes the first.
        let (signature, args) = if *annotating {
            (
                quote!(<'v, M: Mode>(cx: &mut Cx<M>, v: &'v Value, at: &Loc<'_>, ev: &mut ::pilotage_types::validate::runtime::Ev<'v>) -> bool),
                quote!((cx, v, at, ev)),
            )
        } else {
            (
                quote!(<M: Mode>(cx: &mut Cx<M>, v: &Value, at: &Loc<'_>) -> bool),
                quote!((cx, v, at)),
            )
        };
        let resource = self
            .dynamic
            .then(|| u32::try_from(self.index.scope(location).0).unwrap_or(u32::MAX));
        Ok(FunctionItem {
            doc,
            vis,
            ident: ident.clone(),
            signature,
            args,
            body,
            resource,
        })
    }

    /// Refuses a cycle of checks on one instance (`$defs: {a: {$ref: "#/$defs/a"}}`): its
    /// evaluation would never end.
    fn check_cycles(&self) -> Result<(), CodegenError> {
        let mut edges: BTreeMap<&Ident, Vec<&Ident>> = BTreeMap::new();
        for (caller, callee) in &self.same_instance {
            edges.entry(caller).or_default().push(callee);
        }
        // Depth-first search with colours: 1 on the path, 2 done.
        let mut colour: BTreeMap<&Ident, u8> = BTreeMap::new();
        for start in edges.keys() {
            if colour.contains_key(start) {
                continue;
            }
            let mut stack: Vec<(&Ident, usize)> = vec![(start, 0)];
            colour.insert(start, 1);
            while let Some((node, next)) = stack.pop() {
                let targets = edges.get(node).map_or(&[][..], Vec::as_slice);
                if let Some(&target) = targets.get(next) {
                    stack.push((node, next + 1));
                    match colour.get(target) {
                        Some(1) => {
                            let (location, _) = self
                                .functions
                                .iter()
                                .find(|(_, ident)| *ident == target)
                                .map(|(key, _)| key)
                                .cloned()
                                .unwrap_or_default();
                            return Err(CodegenError::new(
                                &self.docs[location.doc].file,
                                location.pointer,
                                "this schema refers back to itself without descending into the instance \
                                 (a `$ref` cycle): its validation would never end",
                            ));
                        }
                        Some(_) => {}
                        None => {
                            colour.insert(target, 1);
                            stack.push((target, 0));
                        }
                    }
                } else {
                    colour.insert(node, 2);
                }
            }
        }
        Ok(())
    }
}

/// A failure of the keyword at `pointer`: the evaluation records the
/// violation or stops.
fn fail(pointer: &str, why: TokenStream) -> TokenStream {
    quote! {
        if cx.fail(at, #pointer, #why) { return false; }
    }
}

/// `body` (a member's checks, `at` its parent's location) naming the member's location only
/// where a violation is recorded: each `cx.fail(at, ...)` becomes `cx.fail(&at.key(name), ...)`.
/// `None` when `body` uses `at` anywhere else (a call, a quiet test, an item's location): the
/// arm then binds `let at = &at.key(k);` first. Binding it up front cost four stores a member
/// on every passing value; a violation is the rare path.
fn member_fails_lazily(body: &TokenStream, name: &str) -> Option<TokenStream> {
    use proc_macro2::{Delimiter, Group, TokenTree};
    let tokens: Vec<TokenTree> = body.clone().into_iter().collect();
    let mut out = TokenStream::new();
    let mut index = 0;
    while index < tokens.len() {
        let token = &tokens[index];
        // `cx . fail (at , ...)`: the four trees, `at` first in the parentheses.
        if let [TokenTree::Ident(cx), TokenTree::Punct(dot), TokenTree::Ident(fail), TokenTree::Group(args)] =
            &tokens[index..(index + 4).min(tokens.len())]
        {
            let inner: Vec<TokenTree> = args.stream().into_iter().collect();
            let first_is_at = matches!(inner.first(), Some(TokenTree::Ident(at)) if at == "at")
                && matches!(inner.get(1), Some(TokenTree::Punct(comma)) if comma.as_char() == ',');
            if cx == "cx"
                && dot.as_char() == '.'
                && fail == "fail"
                && args.delimiter() == Delimiter::Parenthesis
                && first_is_at
            {
                let rest: TokenStream = inner[1..].iter().cloned().collect();
                let rest = member_fails_lazily(&rest, name)?;
                let mut group = Group::new(Delimiter::Parenthesis, quote!(&at.key(#name) #rest));
                group.set_span(args.span());
                out.extend([
                    tokens[index].clone(),
                    tokens[index + 1].clone(),
                    tokens[index + 2].clone(),
                ]);
                out.extend([TokenTree::Group(group)]);
                index += 4;
                continue;
            }
        }
        match token {
            TokenTree::Ident(ident) if ident == "at" => return None,
            TokenTree::Group(group) => {
                let mut inner = Group::new(group.delimiter(), member_fails_lazily(&group.stream(), name)?);
                inner.set_span(group.span());
                out.extend([TokenTree::Group(inner)]);
            }
            other => out.extend([other.clone()]),
        }
        index += 1;
    }
    Some(out)
}

/// The members of `object` sorted by key, so that the output does not depend on whether
/// `serde_json` keeps insertion order in this build.
fn sorted(object: &serde_json::Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut members: Vec<(&String, &Value)> = object.iter().collect();
    members.sort_by(|a, b| a.0.cmp(b.0));
    members
}

/// An expression: whether `v` equals `value` (JSON Schema equality: numbers by value, objects
/// regardless of member order), written out structurally so nothing is parsed at run time.
fn equals(value: &Value) -> TokenStream {
    match value {
        Value::Null => quote!(v.is_null()),
        Value::Bool(b) => quote!(v.as_bool() == Some(#b)),
        Value::String(s) => quote!(v.as_str() == Some(#s)),
        Value::Number(n) => {
            let n = number(n);
            quote!(::pilotage_types::validate::runtime::is_number(v, #n))
        }
        Value::Array(items) => {
            let count = items.len();
            let checks = items.iter().enumerate().map(|(index, item)| {
                let check = equals(item);
                quote!({ let v = &a[#index]; #check })
            });
            quote!(v.as_array().is_some_and(|a| a.len() == #count #(&& #checks)*))
        }
        Value::Object(members) => {
            let count = members.len();
            let checks = sorted(members).into_iter().map(|(name, member)| {
                let check = equals(member);
                quote!(::pilotage_types::validate::runtime::lookup(o, #name).is_some_and(|v| #check))
            });
            quote!(v.as_object().is_some_and(|o| o.len() == #count #(&& #checks)*))
        }
    }
}

/// The vocabularies of every resource: all of them, unless its `$schema` names a custom
/// metaschema of the set whose `$vocabulary` leaves some out.
fn vocabularies(index: &Index, docs: &[Document], assert_formats: Option<bool>) -> Vec<Vocab> {
    index
        .resources
        .iter()
        .map(|resource| {
            let mut vocab = Vocab {
                validation: true,
                applicator: true,
                unevaluated: true,
                format: assert_formats.unwrap_or(false),
            };
            let root = docs[resource.root.doc].value.pointer(&resource.root.pointer);
            let meta_uri = root.and_then(|r| r.get("$schema")).and_then(Value::as_str);
            let meta = meta_uri
                .filter(|uri| Draft::from_schema_uri(uri).is_none())
                .and_then(|uri| index.locate(docs, strip_fragment(uri)).ok().flatten())
                .and_then(|at| docs[at.doc].value.pointer(&at.pointer));
            if let Some(Value::Object(vocabularies)) = meta.and_then(|m| m.get("$vocabulary")) {
                let has = |name: &str| vocabularies.keys().any(|k| k.ends_with(&format!("/vocab/{name}")));
                vocab.validation = has("validation");
                vocab.applicator = has("applicator");
                vocab.unevaluated = has("unevaluated") || resource.draft == Draft::Draft2019 && has("applicator");
                if has("format-assertion") {
                    vocab.format = assert_formats.unwrap_or(true);
                }
            }
            vocab
        })
        .collect()
}

/// Generates the validators of every definition of `schema` (`$defs`, draft-07
/// `definitions`, and `.` for the root when `root` is set), as items for one module.
pub fn generate(schema: &Value, file: &str, root: bool) -> Result<Validators, CodegenError> {
    generate_with(schema, file, root, &Options::default())
}

/// [`generate`] with [`Options`]: the set's other documents, the default dialect, format
/// assertion.
pub fn generate_with(schema: &Value, file: &str, root: bool, options: &Options) -> Result<Validators, CodegenError> {
    let uri = options
        .base_uri
        .clone()
        .unwrap_or_else(|| format!("json-schema:///{}", file.replace(['\\', ' ', '#', '?'], "_")));
    let mut docs = vec![Document {
        uri,
        file: file.to_owned(),
        value: schema.clone(),
    }];
    docs.extend(options.documents.iter().cloned());
    let builtin_from = docs.len();
    for meta in metaschemas() {
        if !docs.iter().any(|d| strip_fragment(&d.uri) == meta.uri) {
            docs.push(meta.clone());
        }
    }
    let dynamic = uses_dynamic(schema);
    let (validators, saw_dynamic) = generate_set(&docs, builtin_from, root, options, dynamic)?;
    if saw_dynamic && !dynamic {
        // A dynamic reference reached through a `$ref` (a metaschema's `#meta`): again,
        // with the dynamic scope.
        return Ok(generate_set(&docs, builtin_from, root, options, true)?.0);
    }
    Ok(validators)
}

/// The validators of the set `docs`, those from `builtin_from` on built in (the metaschemas).
fn generate_set(
    docs: &[Document],
    builtin_from: usize,
    root: bool,
    options: &Options,
    dynamic: bool,
) -> Result<(Validators, bool), CodegenError> {
    let index = Index::build_with_builtins(docs, options.default_draft, builtin_from)?;
    let vocabs = vocabularies(&index, docs, options.assert_formats);
    let schema = &docs[0].value;
    let mut gen = Gen {
        docs,
        index,
        vocabs,
        cur: Location::default(),
        dynamic,
        saw_dynamic: false,
        functions: BTreeMap::new(),
        used_names: BTreeSet::new(),
        queue: Vec::new(),
        items: Vec::new(),
        patterns: BTreeMap::new(),
        multiples: BTreeMap::new(),
        unresolved: BTreeSet::new(),
        notes: Vec::new(),
        pike_vm: Vec::new(),
        stream_opaque: Vec::new(),
        descent: 0,
        same_instance: BTreeSet::new(),
        current_fn: None,
        entered_elsewhere: BTreeSet::new(),
        tuning: options.tuning,
        fresh: 0,
        compiled: 0,
    };
    let mut checks = BTreeMap::new();
    let mut roots = BTreeMap::new();
    for container in ["$defs", "definitions"] {
        if let Some(Value::Object(defs)) = schema.get(container) {
            for (name, def) in sorted(defs) {
                // A member that is no schema (a string, a number) has no check; a `$ref` to it
                // is still an error naming its pointer.
                if checks.contains_key(name) || !(def.is_object() || def.is_boolean()) {
                    continue;
                }
                let location = Location {
                    doc: 0,
                    pointer: format!("/{container}/{}", escape_pointer_token(name)),
                };
                let ident = gen.function(&location, false, name);
                checks.insert(name.clone(), ident);
                roots.insert(name.clone(), location);
            }
        }
    }
    if root {
        let ident = gen.function(&Location::default(), false, "root");
        checks.insert(".".to_owned(), ident);
        roots.insert(".".to_owned(), Location::default());
    }
    let mut functions = Vec::new();
    while let Some((key, ident)) = gen.queue.pop() {
        let public = checks.values().any(|c| *c == ident);
        let item = gen.function_item(&key, &ident, public)?;
        functions.push((key, item));
    }
    gen.check_cycles()?;
    let (stream, streams) = gen.stream_program(&roots);
    gen.stream_opaque.sort();
    gen.stream_opaque.dedup();
    let with_streams = (!streams.is_empty()).then(|| {
        let entries = streams.iter().map(|(name, id)| quote!((#name, #id)));
        quote!(.with_streams(STREAM_PROGRAM, &[#(#entries),*]))
    });
    // Deterministic order: by schema location.
    functions.sort_by(|a, b| a.0.cmp(&b.0));
    let count = functions.len();
    let table = checks
        .iter()
        .map(|(name, ident)| quote!((#name, Check::new(#ident, #ident))));
    let functions = functions
        .into_iter()
        .map(|(_, item)| item.render(&gen.entered_elsewhere));
    let items = &gen.items;
    let unresolved: Vec<&String> = gen.unresolved.iter().collect();
    let tokens = quote! {
        use ::pilotage_types::validate::runtime::{Check, Cx, Loc, Mode, Why};
        use ::serde_json::Value;

        /// Every definition's check, sorted by definition (`.` is the document's root).
        pub static VALIDATORS: ::pilotage_types::validate::Validators =
            ::pilotage_types::validate::Validators::new(&[#(#table),*], &[#(#unresolved),*])#with_streams;

        #(#items)*
        #stream
        #(#functions)*
    };
    Ok((
        Validators {
            tokens,
            checks,
            streams,
            unresolved: gen.unresolved.into_iter().collect(),
            functions: count,
            locations: gen.compiled,
            notes: gen.notes,
            pike_vm: gen.pike_vm,
            stream_opaque: gen.stream_opaque,
        },
        gen.saw_dynamic,
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::generate;

    /// A generated pass over an object's members, as the tokens print (`Tuning::OneSet`).
    const PASS: &str = "for (k , v) in o";

    /// A generated pass over an object's member names alone (`Tuning::OneSet`).
    const NAMES: &str = "for k in o . keys ()";

    /// Tuned for many sets, every pass over an object's members (with or without their
    /// values) steps by the shared `runtime::members`, and no map is iterated inline; the
    /// default inlines them.
    #[test]
    fn many_sets_step_through_members_by_a_shared_call() {
        use super::{generate_with, Options, Tuning};
        let schema = json!({
            "properties": {"a": {"type": "string"}, "b": true, "c": {"type": "integer"}},
            "patternProperties": {"^x": {"type": "number"}},
            "propertyNames": {"maxLength": 3},
            "additionalProperties": false
        });
        let text = |tuning| {
            generate_with(&schema, "t.json", true, &Options::new().tuning(tuning))
                .unwrap()
                .tokens
                .to_string()
        };
        let many = text(Tuning::ManySets);
        let shared = ":: pilotage_types :: validate :: runtime :: members (o)";
        assert!(many.contains(&format!("for (k , v) in {shared}")), "{many}");
        assert!(many.contains(&format!("for (k , _) in {shared}")), "{many}");
        assert!(!many.contains(PASS) && !many.contains(NAMES), "{many}");
        let one = text(Tuning::OneSet);
        assert!(one.contains(PASS) && one.contains(NAMES), "{one}");
        assert!(!one.contains(shared), "{one}");
        assert_eq!(Options::new().tuning, Tuning::OneSet);
    }

    /// The generated code of `schema`, as the tokens print.
    fn text_of(schema: &serde_json::Value) -> String {
        generate(schema, "t.json", true).unwrap().tokens.to_string()
    }

    /// `required`'s names are answered from one pass over the members (a pick, or the bits a
    /// pass sets) wherever there is one, and picked together when there is none; a single
    /// name alone, or more than `PICKED_AT_MOST`, is looked up. (That the names missing are
    /// each reported, once, in `required`'s order: the suite crate's own cases.)
    #[test]
    fn required_names_are_read_in_one_pass_over_the_members() {
        const PICK: &str = ":: pilotage_types :: validate :: runtime :: pick (";
        const LOOKUP: &str = "has_member";
        let with_properties = text_of(&json!({"properties": {"a": {"type": "string"}}, "required": ["a", "b"]}));
        assert!(
            with_properties.contains(&format!("{PICK}o , [\"a\" , \"b\"])")),
            "{with_properties}"
        );
        assert!(!with_properties.contains(LOOKUP), "{with_properties}");
        let alone = text_of(&json!({"required": ["x", "y", "z"]}));
        assert!(
            alone.contains(&format!("{PICK}o , [\"x\" , \"y\" , \"z\"])")),
            "{alone}"
        );
        assert!(!alone.contains(LOOKUP), "{alone}");
        let one = text_of(&json!({"required": ["x"]}));
        assert!(one.contains(LOOKUP) && !one.contains(PICK), "{one}");
        let names: Vec<String> = (0..=super::PICKED_AT_MOST).map(|i| format!("n{i}")).collect();
        let many = text_of(&json!({ "required": names }));
        assert!(many.contains(LOOKUP) && !many.contains(PICK), "{many}");
        let pass = text_of(&json!({"patternProperties": {"^x": {"type": "string"}}, "required": ["a", "xy"]}));
        assert!(pass.contains("seen |= 1u64 << 1u32"), "{pass}");
        assert!(!pass.contains(LOOKUP) && !pass.contains(PICK), "{pass}");
        let one_of = text_of(&json!({"oneOf": [{"required": ["foo", "bar"]}, {"required": ["foo", "baz"]}]}));
        assert!(
            one_of.contains(&format!("{PICK}members , [\"foo\" , \"bar\" , \"baz\"])")),
            "{one_of}"
        );
        assert!(!one_of.contains(LOOKUP), "{one_of}");
        let dependent = text_of(&json!({"dependentRequired": {"a": ["b", "b", "c"]}}));
        assert!(
            dependent.contains(&format!("{PICK}o , [\"b\" , \"c\"])")),
            "{dependent}"
        );
    }

    /// The generated function documented as the schema at `pointer` (its text, up to the next
    /// function's documentation).
    fn function_text<'t>(text: &'t str, pointer: &str) -> &'t str {
        let marker = format!("The schema at `{pointer}`.");
        let start = text
            .find(&marker)
            .unwrap_or_else(|| panic!("no function for {pointer}: {text}"));
        let rest = &text[start..];
        let end = rest[marker.len()..]
            .find("# [doc = ")
            .map_or(rest.len(), |end| end + marker.len());
        &rest[..end]
    }

    /// In a schema set with a dynamic reference, a function enters its schema resource in the
    /// dynamic scope only when some call may come from elsewhere: a definition's check (from
    /// the table), or a call from another resource. A subschema only ever called from its own
    /// resource (an `if`, its `propertyNames`) finds that resource innermost already.
    #[test]
    fn only_functions_called_from_elsewhere_enter_their_resource() {
        const ENTER: &str = "cx . enter (";
        let text = text_of(&json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://example.com/tree",
            "$dynamicAnchor": "node",
            "properties": {"children": {"items": {"$dynamicRef": "#node"}}},
            "if": {"propertyNames": {"pattern": "^a"}},
            "then": {"$ref": "leaf"},
            "$defs": {
                "leaf": {"$id": "leaf", "$dynamicAnchor": "node", "minProperties": 1},
                "shared": {"not": {"required": ["z"]}}
            }
        }));
        for own in ["/if", "/if/propertyNames"] {
            let function = function_text(&text, own);
            assert!(!function.contains(ENTER), "{own} enters: {function}");
        }
        // The root and `leaf`: definitions' checks (and `leaf` is called from the root's
        // resource); `shared` too, from the table, though its resource is the root's.
        for entered in ["", "/$defs/leaf", "/$defs/shared"] {
            let function = function_text(&text, entered);
            assert!(function.contains(ENTER), "{entered:?} does not enter: {function}");
        }
        // Without a dynamic reference, nothing enters.
        let plain = text_of(&json!({"if": {"propertyNames": {"pattern": "^a"}}, "then": {"minProperties": 1}}));
        assert!(!plain.contains(ENTER), "{plain}");
    }

    /// A fractional `multipleOf` is checked through one `static` (`runtime::Multiple`) for each
    /// distinct multiple, which reads its decimal parts once; an integer one (`2`, and `2.0`,
    /// which is whole) by `is_multiple_of`.
    #[test]
    fn a_fractional_multiple_is_read_once() {
        let text = text_of(&json!({
            "properties": {
                "a": {"multipleOf": 0.01},
                "b": {"multipleOf": 0.01},
                "c": {"multipleOf": 1.5},
                "d": {"multipleOf": 2},
                "e": {"multipleOf": 2.0}
            }
        }));
        let statics = text
            .matches(":: pilotage_types :: validate :: runtime :: Multiple :: new (")
            .count();
        assert_eq!(statics, 2, "{text}");
        assert!(
            text.contains("Multiple :: new (0.01)") && text.contains("Multiple :: new (1.5)"),
            "{text}"
        );
        assert_eq!(text.matches("MULTIPLE_0 . divides (n)").count(), 2, "{text}");
        assert_eq!(text.matches("is_multiple_of (n").count(), 2, "{text}");
    }

    fn error_of(schema: serde_json::Value) -> crate::CodegenError {
        generate(&schema, "test.json", false).expect_err("must be a generation error")
    }

    #[test]
    fn a_reference_to_nothing_or_a_cycle_is_an_error_naming_its_pointer() {
        let error = error_of(json!({"$defs": {"a": {"$ref": "#anchor"}}}));
        assert_eq!(error.pointer, "/$defs/a/$ref");
        assert!(error.message.contains("anchor"), "{error}");
        let error = error_of(json!({"$defs": {"a": {"$ref": "#/$defs/missing"}}}));
        assert!(error.message.contains("points to nothing"), "{error}");
        let error = error_of(json!({"$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}]}, "b": {"$ref": "#/$defs/a"}}}));
        assert!(error.message.contains("cycle"), "{error}");
        // Descending into the instance is not a cycle.
        generate(
            &json!({"$defs": {"a": {"items": {"$ref": "#/$defs/a"}}}}),
            "t.json",
            false,
        )
        .unwrap();
    }

    #[test]
    fn a_pattern_the_runtime_cannot_honour_is_an_error_naming_its_pointer() {
        for pattern in [r"(a)\1", r"\k<x>", "(unclosed", "a**", "[z-a]", "x{3,1}"] {
            let error = error_of(json!({"$defs": {"a": {"pattern": pattern}}}));
            assert_eq!(error.pointer, "/$defs/a/pattern", "{pattern}");
            assert!(error.message.contains("pattern"), "{pattern}: {error}");
        }
        let error = error_of(json!({"$defs": {"a": {"patternProperties": {"(x)\\1": {}}}}}));
        assert_eq!(error.pointer, "/$defs/a/patternProperties/(x)\\1");
    }

    #[test]
    fn simple_patterns_become_sequences_and_others_automata_or_programs() {
        for (pattern, form) in [
            (r"^[0-9]+\.[0-9]+$", "Sequence"),
            (r"^[^/]+/[^/]+$", "Sequence"),
            (r"^[a-f0-9]{64}$", "Sequence"),
            (r"^[a-z]+[a-c]$", "Automaton"),
            (r"\p{L}cole", "Automaton"),
            (r"^P(?!$)(T(?=[0-9]))?$", "Program"),
            (r"(?<=a)b", "Program"),
            // A Unicode property under a counted repetition: no DFA within the size limits.
            (r"(\p{L}|\d){1,40}x\p{Lu}{1,40}", "Program"),
            (r"abc", "Literal"),
            (r"^x-", "Literal"),
            (r"\.json$", "Literal"),
        ] {
            let tokens = super::regex::compile(pattern).unwrap().to_string();
            assert!(tokens.contains(&format!("Pattern :: {form}")), "{pattern}: {tokens}");
        }
    }

    #[test]
    fn the_stream_program_holds_what_it_can_and_names_what_it_leaves_to_the_checks() {
        let schema = json!({
            "$defs": {
                "plain": {"type": "object", "properties": {"a": {"$ref": "#/$defs/leaf"}}, "required": ["a", "b"]},
                "leaf": {"type": "string", "maxLength": 3},
                "unique": {"type": "array", "uniqueItems": true},
                "later": {"unevaluatedProperties": false},
                "open": {"enum": ["x", "y"]}
            }
        });
        let generated = generate(&schema, "s.json", false).unwrap();
        assert_eq!(
            generated.stream_opaque,
            vec![
                ("s.json: /$defs/later".to_owned(), "unevaluatedProperties".to_owned()),
                ("s.json: /$defs/unique".to_owned(), "uniqueItems".to_owned()),
            ]
        );
        let text = generated.tokens.to_string().replace(' ', "");
        // Every definition has an entry; `a`'s subschema, only a `$ref`, is the target's node.
        for def in ["plain", "leaf", "unique", "later", "open"] {
            assert!(generated.streams.contains_key(def), "{def}");
        }
        let leaf = generated.streams["leaf"];
        assert!(text.contains(&format!("(\"a\",{leaf}u32,0u8)")), "{text}");
        // `b`, only required, has no subschema.
        assert!(text.contains("(\"b\",4294967295u32,1u8)"), "{text}");
        // The open enum is marked for the compatible reading (widened, enum).
        let open = "::pilotage_types::validate::stream::open::";
        assert!(text.contains(&format!(".open({open}WIDENED|{open}ENUM)")), "{text}");
    }

    #[test]
    fn a_set_with_dynamic_references_has_no_stream_program_and_says_so() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$dynamicAnchor": "node",
            "$defs": {"list": {"type": "array", "items": {"$dynamicRef": "#node"}}}
        });
        let generated = generate(&schema, "d.json", true).unwrap();
        assert!(generated.streams.is_empty());
        assert!(generated
            .stream_opaque
            .iter()
            .any(|(_, why)| why.contains("$dynamicRef")));
        assert!(!generated.tokens.to_string().contains("STREAM_PROGRAM"));
    }

    #[test]
    fn a_definition_named_like_a_local_gets_another_function_name() {
        let schema = json!({"$defs": {
            "count": {"type": "integer"},
            "ev_1": {"type": "string"},
            "names": {"maxLength": 3},
            "gen": {"type": "string"},
            "holds": {"type": "string"},
            "seen": {"type": "string"},
            "ev": {"type": "string"},
            "tag": {"properties": {"kind": {"const": "tag"}}, "required": ["kind"]},
            "compatible": {"properties": {"kind": {"const": "compatible"}}, "required": ["kind"]},
            "d": {"oneOf": [{"$ref": "#/$defs/tag"}, {"$ref": "#/$defs/compatible"}]},
            "holds_1": {"type": "string"},
            "seen_2": {"type": "string"},
            "kept_3": {"type": "string"},
            "a": {"contains": {"$ref": "#/$defs/count"}, "items": {"$ref": "#/$defs/ev_1"}, "unevaluatedItems": false},
            "b": {"propertyNames": {"$ref": "#/$defs/names"}},
            "c": {
                "if": {"properties": {"k": {"$ref": "#/$defs/holds_1"}}, "required": ["k"]},
                "then": {"properties": {"m": {"$ref": "#/$defs/seen_2"}}},
                "else": {"properties": {"m": {"$ref": "#/$defs/kept_3"}}}
            }
        }});
        let generated = generate(&schema, "t.json", false).unwrap();
        for (def, function) in &generated.checks {
            assert!(
                !super::RESERVED.contains(&function.to_string().as_str()),
                "{def}: {function}"
            );
        }
        for (def, function) in [
            // Fixed locals.
            ("count", "count_2"),
            ("names", "names_2"),
            // A tagged union binds `tag` and `compatible` while it calls its branches.
            ("tag", "tag_2"),
            ("compatible", "compatible_2"),
            // `gen` is a keyword of edition 2024.
            ("gen", "gen_2"),
            // Numbered locals (`ev_N`, and a fused conditional's `holds_N`, `seen_N`, `kept_N`).
            ("ev_1", "ev_1_2"),
            ("holds_1", "holds_1_2"),
            ("seen_2", "seen_2_2"),
            ("kept_3", "kept_3_2"),
            // A base that is a numbered local's prefix (every `holds_N` is taken) numbers another way.
            ("holds", "holds_fn"),
            ("seen", "seen_fn"),
            ("ev", "ev_fn"),
        ] {
            assert_eq!(generated.checks[def].to_string(), function, "{def}");
        }
        let code = generated.tokens.to_string();
        assert!(
            code.contains("cx . quiet (names_2 , names . holding (k) , at)"),
            "{code}"
        );
    }

    #[test]
    fn a_definition_that_is_no_schema_has_no_check_unless_referenced() {
        let generated = generate(
            &json!({"$defs": {"a": {"type": "string"}, "note": "text"}}),
            "t.json",
            false,
        )
        .unwrap();
        assert_eq!(generated.checks.keys().collect::<Vec<_>>(), ["a"]);
        let error = error_of(json!({"$defs": {"a": {"$ref": "#/$defs/note"}, "note": "text"}}));
        assert_eq!(error.pointer, "/$defs/note");
    }

    #[test]
    fn formats_assert_in_the_drafts_that_define_them() {
        let tokens = |schema| generate(&schema, "t.json", false).unwrap().tokens.to_string();
        let draft4 = "http://json-schema.org/draft-04/schema#";
        let text = tokens(json!({"$schema": draft4, "$defs": {"a": {"format": "uuid"}, "b": {"format": "ipv4"}}}));
        assert!(
            !text.contains("format :: uuid") && text.contains("format :: ipv4"),
            "{text}"
        );
        let text = tokens(json!({"$schema": draft4, "$defs": {"a": {"type": "integer"}}}));
        assert!(
            text.contains("is_integer_draft4") && !text.contains("is_integer ("),
            "draft-04: 1.0 is no integer: {text}"
        );
    }

    #[test]
    fn a_tag_pinned_in_an_all_of_member_chooses_the_branches() {
        // Backstage's catalog: each branch is `allOf: [{$ref: entity}, {properties: {kind,
        // apiVersion}}]`; `kind` tells the three apart, `apiVersion` only two.
        let branch = |kind: &str, versions: serde_json::Value| {
            json!({"allOf": [
                {"$ref": "#/$defs/entity"},
                {"properties": {"kind": {"enum": [kind]}, "apiVersion": {"enum": versions}}}
            ]})
        };
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$defs": {
                "entity": {"required": ["kind"], "properties": {"kind": {"enum": ["API", "Group", "User", "Other"]}}},
                "catalog": {"anyOf": [
                    branch("API", json!(["v1", "v2"])),
                    branch("Group", json!(["v1", "v2"])),
                    branch("User", json!(["v3"])),
                ]}
            }
        });
        let text = generate(&schema, "t.json", false).unwrap().tokens.to_string();
        assert!(
            text.contains(r#"runtime :: lookup (o , "kind")"#),
            "the tag is `kind`: {text}"
        );
        assert!(!text.contains(r#"runtime :: lookup (o , "apiVersion")"#), "{text}");
        // Each branch is guarded by its own narrowest pin, not the entity's four kinds.
        for (kind, function) in [("API", "s2"), ("Group", "s3"), ("User", "s4")] {
            let guard = format!(
                r#"tag . is_none_or (| v | compatible || v . as_str () == Some ("{kind}")) && cx . quiet ({function} , v , at)"#
            );
            assert!(text.contains(&guard), "{guard} in {text}");
        }
        assert!(!text.contains(r#"Some ("Other")) && cx . quiet"#), "{text}");
        // Without `allOf`'s pins there is no tag at all.
        let plain = json!({"$defs": {"catalog": {"anyOf": [{"required": ["a"]}, {"required": ["b"]}]}}});
        let text = generate(&plain, "t.json", false).unwrap().tokens.to_string();
        assert!(!text.contains("let tag"), "{text}");
    }

    #[test]
    fn alternatives_are_not_called_on_a_value_their_own_type_excludes() {
        let tokens = |schema| generate(&schema, "t.json", false).unwrap().tokens.to_string();
        let one_of = tokens(json!({"$defs": {"u": {"oneOf": [
            {"type": "number"},
            {"type": ["object", "null"], "additionalProperties": false},
            {"type": "integer", "minimum": 3}
        ]}}}));
        assert!(
            one_of.contains("matches ! (v , Value :: Number (_)) && cx . quiet"),
            "{one_of}"
        );
        assert!(
            one_of.contains("matches ! (v , Value :: Object (_) | Value :: Null) && cx . quiet"),
            "{one_of}"
        );
        // No guard where `type` is not all that decides: no `type`, a `$ref` beside it (draft-07
        // hides it), a resource of its own, an `enum` of strings (the compatible reading widens
        // it to any string), the validation vocabulary off.
        for (dialect, branch) in [
            ("https://json-schema.org/draft/2020-12/schema", json!({"minimum": 3})),
            (
                "http://json-schema.org/draft-07/schema#",
                json!({"$ref": "#/$defs/n", "type": "string"}),
            ),
            (
                "https://json-schema.org/draft/2020-12/schema",
                json!({"$id": "http://example.com/x", "type": "string"}),
            ),
            (
                "https://json-schema.org/draft/2020-12/schema",
                json!({"type": "integer", "enum": ["a", "b"]}),
            ),
        ] {
            let text = tokens(json!({"$schema": dialect, "$defs": {
                "n": {"type": "number"},
                "u": {"anyOf": [branch.clone(), {"type": "boolean"}]}}}));
            assert_eq!(text.matches("matches ! (v ,").count(), 1, "{branch}: {text}");
        }
    }

    #[test]
    fn string_consts_are_widened_only_where_they_assert() {
        // The compatible reading widens an `anyOf` of string `const`s to "a string"; where
        // `const` asserts nothing (draft-04, or the validation vocabulary off) the branches
        // hold on anything, and the widened check would be narrower than the pinned one.
        let tokens = |schema| generate(&schema, "t.json", false).unwrap().tokens.to_string();
        let consts =
            |dialect: &str| json!({"$schema": dialect, "$defs": {"a": {"anyOf": [{"const": "a"}, {"const": "b"}]}}});
        let widened = tokens(consts("https://json-schema.org/draft/2020-12/schema"));
        assert!(widened.contains("cx . compatible ()"), "{widened}");
        let draft4 = tokens(consts("http://json-schema.org/draft-04/schema#"));
        assert!(!draft4.contains("cx . compatible ()"), "{draft4}");
        let applicator_only = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$defs": {
                "meta": {
                    "$id": "http://example.com/applicator-only",
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "$vocabulary": {
                        "https://json-schema.org/draft/2020-12/vocab/core": true,
                        "https://json-schema.org/draft/2020-12/vocab/applicator": true
                    }
                },
                "k": {
                    "$id": "http://example.com/k",
                    "$schema": "http://example.com/applicator-only",
                    "anyOf": [{"const": "a"}, {"const": "b"}]
                }
            }
        });
        let off = tokens(applicator_only);
        assert!(!off.contains("cx . compatible ()"), "{off}");
    }

    #[test]
    fn a_conditional_of_members_is_read_during_the_member_pass() {
        // Outcome's shape: `properties`, and an `allOf` member that is an `if` / `then` / `else`
        // of members alone. One pass over the members, no function for the `if`.
        let tokens = |schema| generate(&schema, "t.json", false).unwrap().tokens.to_string();
        let passes = |code: &str| code.matches(PASS).count();
        let conditional = json!({
            "if": {"properties": {"ok": {"const": true}}, "required": ["ok"]},
            "then": {"properties": {"error": {"type": "null"}}},
            "else": {"properties": {"error": {"type": "string"}}, "required": ["error"]}
        });
        let outcome = tokens(json!({"$defs": {"a": {
            "properties": {"ok": {"type": "boolean"}, "error": {"type": ["string", "null"]}},
            "allOf": [conditional]
        }}}));
        assert_eq!(passes(&outcome), 1, "{outcome}");
        assert!(!outcome.contains("fn s"), "no function for the `if`: {outcome}");
        assert!(
            outcome.contains("/$defs/a/allOf/0/then/properties/error/type"),
            "{outcome}"
        );
        assert!(outcome.contains("/$defs/a/allOf/0/else/required"), "{outcome}");
        // An `if` testing a member's own members (ExecuteResponse's): an expression, no function.
        let nested = tokens(json!({"$defs": {"a": {
            "properties": {"outcome": {"type": "object"}},
            "if": {"properties": {"outcome": {"properties": {"status": {"const": "failed"}}, "required": ["status"]}}},
            "then": {"required": ["diagnostics"]}
        }}}));
        assert_eq!(passes(&nested), 1, "{nested}");
        assert!(!nested.contains("fn s"), "{nested}");
        assert!(nested.contains("runtime :: member (o , \"status\")"), "{nested}");
        // Anything else beside them in the `if` (here `minProperties`) keeps the general path:
        // the `if` is a function of its own, with its own pass.
        let mut general = conditional.clone();
        general["if"]["minProperties"] = json!(1);
        let general = tokens(json!({"$defs": {"a": {"properties": {"ok": {"type": "boolean"}}, "allOf": [general]}}}));
        assert!(general.contains("fn s"), "{general}");
        // Its own read of the members: a pass, or a pick of its few members (`runtime::pick`).
        let reads = |code: &str| passes(code) + code.matches("runtime :: pick (o").count();
        assert!(reads(&general) > 1, "{general}");
        // So does a `then` that is a resource of its own, and a location collecting annotations.
        let mut resource = conditional.clone();
        resource["then"]["$id"] = json!("http://example.com/then");
        let resource =
            tokens(json!({"$defs": {"a": {"properties": {"ok": {"type": "boolean"}}, "allOf": [resource]}}}));
        assert!(reads(&resource) > 1, "{resource}");
        let annotating = tokens(json!({"$defs": {"a": {
            "properties": {"ok": {"type": "boolean"}}, "allOf": [conditional], "unevaluatedProperties": false
        }}}));
        assert!(!annotating.contains("holds_"), "{annotating}");
    }

    #[test]
    fn a_member_is_named_only_where_a_violation_is_recorded() {
        use super::member_fails_lazily;
        let fail = quote::quote!(if !(v.is_string()) {
            if cx.fail(at, "/p", Why::Type(v, &["string"])) {
                return false;
            }
        });
        let lazy = member_fails_lazily(&fail, "a\"b")
            .expect("only cx.fail uses at")
            .to_string();
        assert!(lazy.contains("cx . fail (& at . key (\"a\\\"b\") , \"/p\""), "{lazy}");
        // Any other use of `at` (a call, an item's location, a rebinding) keeps the binding.
        for other in [
            quote::quote!(if !outcome(cx, v, at) && cx.stops() {
                return false;
            }),
            quote::quote!(if let Value::Array(a) = v {
                for (i, v) in a.iter().enumerate() {
                    let at = &at.index(i);
                }
            }),
            quote::quote!(if cx.quiet(s1, v, at) {
                if cx.fail(at, "/p", Why::False(v)) {
                    return false;
                }
            }),
        ] {
            assert!(member_fails_lazily(&other, "a").is_none(), "{other}");
        }
        // A generated arm: the member's location appears only inside the failure.
        let tokens = generate(
            &json!({"$defs": {"a": {"properties": {"x": {"type": "string"}}}}}),
            "t.json",
            false,
        )
        .unwrap()
        .tokens
        .to_string();
        assert!(tokens.contains("cx . fail (& at . key (\"x\")"), "{tokens}");
        assert!(!tokens.contains("let at = & at . key (k)"), "{tokens}");
    }

    #[test]
    fn a_minimum_count_of_zero_generates_no_comparison() {
        let tokens = |schema| generate(&schema, "t.json", false).unwrap().tokens.to_string();
        let zero = tokens(json!({"$defs": {"a": {"minItems": 0, "minLength": 0, "minProperties": 0}}}));
        assert!(!zero.contains("< 0u64"), "`len < 0` always holds and warns: {zero}");
        let one = tokens(json!({"$defs": {"a": {"minItems": 1, "minLength": 1, "minProperties": 1}}}));
        assert_eq!(one.matches("< 1u64").count(), 3, "{one}");
    }

    #[test]
    fn output_is_deterministic_and_every_def_has_a_check() {
        let schema =
            json!({"$defs": {"b": {"anyOf": [{"const": "x"}, {"type": "integer"}]}, "a": {"$ref": "#/$defs/b"}}});
        let first = generate(&schema, "t.json", false).unwrap();
        let second = generate(&schema, "t.json", false).unwrap();
        assert_eq!(first.tokens.to_string(), second.tokens.to_string());
        assert_eq!(first.checks.keys().collect::<Vec<_>>(), ["a", "b"]);
    }

    #[test]
    fn annotation_functions_exist_only_where_unevaluated_needs_them() {
        let plain = generate(
            &json!({"$defs": {"a": {"anyOf": [{"properties": {"x": true}}]}}}),
            "t.json",
            false,
        )
        .unwrap();
        assert!(
            !plain.tokens.to_string().contains("runtime :: Ev"),
            "no annotation record without unevaluated*"
        );
        let schema = json!({"$defs": {"a": {"anyOf": [{"properties": {"x": true}}], "unevaluatedProperties": false}}});
        let tokens = generate(&schema, "t.json", false).unwrap().tokens.to_string();
        assert!(tokens.contains("quiet_ev"), "{tokens}");
        assert!(tokens.contains(". unevaluated (o)"), "{tokens}");
        // The members `properties` and `patternProperties` evaluated are recorded as the pass
        // (or the pick) reads them, not in a pass of their own.
        let text = |schema: serde_json::Value| {
            let schema = json!({"$defs": {"a": schema}});
            generate(&schema, "t.json", false).unwrap().tokens.to_string()
        };
        let passed = text(json!({
            "properties": {"a": {"type": "string"}, "b": true, "c": {"type": "integer"}, "d": {"type": "null"}},
            "patternProperties": {"^x": true},
            "unevaluatedProperties": false
        }));
        assert_eq!(passed.matches(PASS).count(), 1, "{passed}");
        assert!(!passed.contains(NAMES), "{passed}");
        assert_eq!(
            passed.matches(". prop (k)").count(),
            5,
            "four names and a pattern: {passed}"
        );
        let picked = text(json!({"properties": {"a": {"type": "string"}, "b": true}, "unevaluatedProperties": false}));
        assert!(picked.contains(r#"runtime :: pick (o , ["a"])"#), "{picked}");
        assert!(
            picked.contains(r#". prop ("a")"#) && picked.contains(r#"has_member (o , "b")"#),
            "{picked}"
        );
        assert!(!picked.contains(PASS) && !picked.contains(NAMES), "{picked}");
        // A name `required` also lists is recorded without a lookup (it is there whenever the
        // check gets that far); the other is still looked up.
        let required = text(json!({
            "properties": {"a": true, "b": true},
            "required": ["a"],
            "unevaluatedProperties": false
        }));
        assert!(
            required.contains(r#". prop ("a")"#) && !required.contains(r#"has_member (o , "a")"#),
            "{required}"
        );
        assert!(required.contains(r#"has_member (o , "b")"#), "{required}");
        // Closed (`additionalProperties: false`) with two names: both picked, the one that
        // checks nothing too, and the others counted; no pass. With a pattern, a pass.
        let closed = text(json!({"properties": {"a": {"type": "string"}, "b": true}, "additionalProperties": false}));
        assert!(closed.contains(r#"runtime :: pick (o , ["a" , "b"])"#), "{closed}");
        assert!(
            closed.contains("o . len () > found . iter () . flatten () . count ()"),
            "{closed}"
        );
        assert!(!closed.contains(PASS), "{closed}");
        let patterned = text(json!({
            "properties": {"a": {"type": "string"}},
            "patternProperties": {"^x": true},
            "additionalProperties": false
        }));
        assert!(patterned.contains(PASS) && !patterned.contains("pick"), "{patterned}");
        let three = text(json!({"properties": {"a": true, "b": true, "c": true}, "additionalProperties": false}));
        assert!(three.contains(PASS) && !three.contains("pick"), "{three}");
    }

    #[test]
    fn dynamic_scope_is_entered_only_by_sets_that_use_dynamic_references() {
        let plain = generate(
            &json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"type": "string"}}}),
            "t.json",
            false,
        )
        .unwrap();
        assert!(!plain.tokens.to_string().contains("enter"));
        let schema = json!({
            "$dynamicAnchor": "node",
            "$defs": {"a": {"$dynamicRef": "#node"}}
        });
        let tokens = generate(&schema, "t.json", true).unwrap().tokens.to_string();
        assert!(tokens.contains("cx . enter"), "{tokens}");
        assert!(tokens.contains("cx . outermost"), "{tokens}");
    }
}
