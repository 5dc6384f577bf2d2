//! Programs checked schema-first: every violation of a program type's JSON Schema, found by
//! the toolkit itself.
//!
//! An engine's program type derives `serde::Deserialize` and `schemars::JsonSchema`. Before the
//! program is deserialized, [`ShapeSchema::check`] lists **every** violation of the type's
//! schemars schema (not only the first, as `serde` would), each with a stable
//! [code](ShapeViolation::code), the instance JSON Pointer and a message that names the member
//! and what was expected; [`ShapeViolation::to_diagnostic`] turns one into a
//! [`Diagnostic`](crate::Diagnostic).
//!
//! ```
//! use pilotage_types::shape::ShapeSchema;
//! use serde_json::json;
//!
//! // What schemars 1.x generates for `struct Program { steps: Vec<String>, retries: u8 }`.
//! let schema = ShapeSchema::new(json!({
//!     "$schema": "https://json-schema.org/draft/2020-12/schema",
//!     "title": "Program",
//!     "type": "object",
//!     "properties": {
//!         "steps": {"type": "array", "items": {"type": "string"}, "minItems": 1},
//!         "retries": {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255}
//!     },
//!     "required": ["steps", "retries"],
//!     "additionalProperties": false
//! }))?;
//! let violations = schema.check(&json!({"retries": 300, "stpes": []}));
//! let found: Vec<_> = violations.iter().map(|v| (v.code(), v.pointer())).collect();
//! assert_eq!(found, [("missing_member", ""), ("out_of_range", "/retries"), ("unknown_member", "/stpes")]);
//! assert_eq!(violations[0].message(), "missing required member `steps`");
//! assert!(schema.is_valid(&json!({"steps": ["a"], "retries": 3})));
//! # Ok::<(), pilotage_types::shape::ShapeError>(())
//! ```
//!
//! # What it owns
//!
//! - The schema, compiled once ([`ShapeSchema::new`]) from a draft 2020-12 schema as schemars
//!   generates it, with `$defs` and `$ref: "#/$defs/X"` or with `inline_subschemas = true`.
//!   References are compiled by index, so recursive types work; a reference cycle that never
//!   descends into the instance (`{"$ref": "#"}`) is refused.
//! - The keywords schemars emits, with 2020-12 semantics: `type` (an integer is any number
//!   with a zero fractional part: `2.0` is one), `properties`, `required`,
//!   `additionalProperties`, `unevaluatedProperties` (schemars emits it for `#[serde(flatten)]`
//!   of an enum), `propertyNames`, `minProperties`, `maxProperties`, `items`, `prefixItems`,
//!   `minItems`, `maxItems`, `uniqueItems`, `contains`, `minContains`, `maxContains`, `enum`,
//!   `const`, `oneOf`, `anyOf`, `allOf`, `not`, `if`/`then`/`else`, `$ref` (any local
//!   `#/...` pointer), `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
//!   `multipleOf` (decimal arithmetic: `0.3` is a multiple of `0.1`), `minLength`/`maxLength`
//!   (in Unicode code points), boolean schemas.
//! - `format`: schemars' integer formats (`int8`..`int128`, `uint8`..`uint128`, `int`, `uint`
//!   for `isize`/`usize` of this target) **assert** their range, because the program will be
//!   deserialized into that Rust integer (schemars writes no `maximum` for `u32`/`u64`, and a
//!   JSON Schema validator does not assert unknown formats). Every other format (`float`,
//!   `double`, `date-time`, ...) is an annotation, as 2020-12 specifies by default.
//! - Annotations, ignored: `title`, `description`, `default`, `examples`, `deprecated`,
//!   `readOnly`, `writeOnly`, `$comment`, `$schema` (2020-12's only), `$id` (at the root only),
//!   `contentEncoding`, `contentMediaType`, `contentSchema`, the non-standard `nullable`, and
//!   the containers `$defs`/`definitions` (read only through `$ref`).
//!
//! # What it refuses
//!
//! [`ShapeSchema::new`] answers a [`ShapeError`] naming the schema pointer of any keyword it
//! cannot judge, rather than give a verdict it cannot justify: `pattern` and
//! `patternProperties` (the crate's ECMA-262 engine, `validate::pattern`, runs only programs
//! compiled ahead of time by `pilotage-codegen`: there is no run-time pattern compiler),
//! `$ref` outside the document, `$dynamicRef`, `$anchor`, `$id` below the root, another
//! draft's `$schema`, the array form of `items`, `dependentRequired`, `dependentSchemas`,
//! `unevaluatedItems`, and every keyword not listed above (extension `x-...` keywords
//! included).
//!
//! # Violations
//!
//! Each [`ShapeViolation`] has the instance pointer (RFC 6901, `""` for the root), the failing
//! [`ShapeKeyword`], a code ([`ShapeKeyword::default_code`], but for a `oneOf`/`anyOf`:
//! `ambiguous_variant` when several variants of a `oneOf` match, `wrong_type` when no variant
//! takes the instance's JSON type, `missing_member` when the variants' tag is missing), the
//! member it concerns if any, a message, and the schema pointer of the failing keyword. Where
//! the violation is about a member (`required`, an unknown member), [`ShapeViolation::member`]
//! names it: `required` points at the object, an unknown member at the member itself.
//!
//! When no variant of a `oneOf`/`anyOf` matches, the checker reports the violations of the one
//! variant the instance was evidently meant for, if exactly one is: the variant whose tag (a
//! required member whose schema is a `const` or an `enum`, as in internally and adjacently
//! tagged enums, or the single member of an externally tagged variant) the instance carries,
//! or else the only variant whose required members are all present (untagged enums), or else
//! the only variant that takes the instance's JSON type (`Option<T>`'s `anyOf: [T, null]`). If every variant is tagged by the same member and the instance's tag
//! is unknown, the one violation is at the tag (`no_variant`); if the tag is missing, at the
//! object (`missing_member`, naming the tag). Otherwise it is one `no_variant` violation at the
//! instance (`wrong_type` if no variant takes its JSON type).
//!
//! The verdict is JSON Schema's, so it can be kinder than serde's: `2.0` is an integer here but
//! not to serde's `u64`. Deserialization after a clean check can still fail, and its error
//! (one, at a path) remains the framework's last word.
//!
//! The check allocates only for the violations it reports (and for `propertyNames`'s names and
//! `unevaluatedProperties`' bookkeeping). It descends at most [`MAX_DEPTH`] levels into the
//! instance: a container at that depth with members or items gets one `too_deep` violation.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt::{self, Write as _};

use serde_json::{Map, Number, Value};

/// How deep the check descends into the instance: a value at this depth (pointer tokens) that
/// has members or items gets one `too_deep` violation ([`ShapeKeyword::Depth`]) instead of
/// being checked further.
pub const MAX_DEPTH: u32 = 256;

/// How many subschemas may be applied in a chain (schema nesting plus instance nesting): a
/// guard against stack exhaustion by a pathological schema, far above what schemars emits.
const MAX_FRAMES: u32 = 1024;

/// The only `$schema` accepted (with or without an empty fragment).
const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

type NodeId = u32;

/// The keyword a [`ShapeViolation`] is about.
///
/// [`ShapeKeyword::as_str`] gives its name in the schema (`"minItems"`, ...); the
/// pseudo-keywords [`ShapeKeyword::FalseSchema`] (`"false"`) and [`ShapeKeyword::Depth`]
/// (`"depth"`) have no keyword in the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ShapeKeyword {
    /// `type`: the instance's JSON type is not allowed (`wrong_type`).
    Type,
    /// `required`: a member is missing (`missing_member`).
    Required,
    /// `additionalProperties: false`: a member not in `properties` (`unknown_member`).
    AdditionalProperties,
    /// `unevaluatedProperties: false`: a member no subschema evaluated (`unknown_member`).
    UnevaluatedProperties,
    /// `enum`: the value is not one of the listed ones (`not_allowed`).
    Enum,
    /// `const`: the value is not the constant (`not_allowed`).
    Const,
    /// A `false` schema: no value is allowed here (`not_allowed`).
    FalseSchema,
    /// `minimum` (`out_of_range`).
    Minimum,
    /// `maximum` (`out_of_range`).
    Maximum,
    /// `exclusiveMinimum` (`out_of_range`).
    ExclusiveMinimum,
    /// `exclusiveMaximum` (`out_of_range`).
    ExclusiveMaximum,
    /// `multipleOf` (`out_of_range`).
    MultipleOf,
    /// `format` of a Rust integer type (`uint8`, `int64`, ...): the number does not fit it
    /// (`out_of_range`).
    Format,
    /// `minLength`, in code points (`wrong_length`).
    MinLength,
    /// `maxLength`, in code points (`wrong_length`).
    MaxLength,
    /// `minItems` (`wrong_length`).
    MinItems,
    /// `maxItems` (`wrong_length`).
    MaxItems,
    /// `minProperties` (`wrong_length`).
    MinProperties,
    /// `maxProperties` (`wrong_length`).
    MaxProperties,
    /// `uniqueItems` (`not_unique`).
    UniqueItems,
    /// `contains` with no matching item (`invalid`).
    Contains,
    /// `minContains` (`invalid`).
    MinContains,
    /// `maxContains` (`invalid`).
    MaxContains,
    /// `oneOf`: no variant matched (`no_variant`; `wrong_type` if none takes the instance's
    /// JSON type, `missing_member` if the variants' tag is missing) or several did
    /// (`ambiguous_variant`).
    OneOf,
    /// `anyOf`: no variant matched (`no_variant`, or `wrong_type`/`missing_member` as for
    /// [`ShapeKeyword::OneOf`]).
    AnyOf,
    /// `not`: the instance matched the negated schema (`invalid`).
    Not,
    /// The instance is nested deeper than [`MAX_DEPTH`], or a pathological schema chains more
    /// subschemas than the checker applies (`too_deep`).
    Depth,
}

impl ShapeKeyword {
    /// The keyword as written in a schema (`"additionalProperties"`), `"false"` for
    /// [`ShapeKeyword::FalseSchema`] and `"depth"` for [`ShapeKeyword::Depth`].
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Type => "type",
            Self::Required => "required",
            Self::AdditionalProperties => "additionalProperties",
            Self::UnevaluatedProperties => "unevaluatedProperties",
            Self::Enum => "enum",
            Self::Const => "const",
            Self::FalseSchema => "false",
            Self::Minimum => "minimum",
            Self::Maximum => "maximum",
            Self::ExclusiveMinimum => "exclusiveMinimum",
            Self::ExclusiveMaximum => "exclusiveMaximum",
            Self::MultipleOf => "multipleOf",
            Self::Format => "format",
            Self::MinLength => "minLength",
            Self::MaxLength => "maxLength",
            Self::MinItems => "minItems",
            Self::MaxItems => "maxItems",
            Self::MinProperties => "minProperties",
            Self::MaxProperties => "maxProperties",
            Self::UniqueItems => "uniqueItems",
            Self::Contains => "contains",
            Self::MinContains => "minContains",
            Self::MaxContains => "maxContains",
            Self::OneOf => "oneOf",
            Self::AnyOf => "anyOf",
            Self::Not => "not",
            Self::Depth => "depth",
        }
    }

    /// The diagnostic code of the keyword's family, stable snake_case: `wrong_type`,
    /// `missing_member`, `unknown_member`, `not_allowed` (enum, const, `false`),
    /// `out_of_range` (bounds, `multipleOf`, integer formats), `wrong_length` (length, item
    /// and member counts), `not_unique`, `no_variant` (`oneOf`/`anyOf`), `too_deep`, and
    /// `invalid` for the rest (`contains`, `not`). A violation's own
    /// [code](ShapeViolation::code) can be more precise (`ambiguous_variant`). The family
    /// `pattern_mismatch` is reserved: `pattern` is refused (see the module docs).
    pub fn default_code(self) -> &'static str {
        match self {
            Self::Type => "wrong_type",
            Self::Required => "missing_member",
            Self::AdditionalProperties | Self::UnevaluatedProperties => "unknown_member",
            Self::Enum | Self::Const | Self::FalseSchema => "not_allowed",
            Self::Minimum
            | Self::Maximum
            | Self::ExclusiveMinimum
            | Self::ExclusiveMaximum
            | Self::MultipleOf
            | Self::Format => "out_of_range",
            Self::MinLength
            | Self::MaxLength
            | Self::MinItems
            | Self::MaxItems
            | Self::MinProperties
            | Self::MaxProperties => "wrong_length",
            Self::UniqueItems => "not_unique",
            Self::OneOf | Self::AnyOf => "no_variant",
            Self::Depth => "too_deep",
            Self::Contains | Self::MinContains | Self::MaxContains | Self::Not => "invalid",
        }
    }
}

impl fmt::Display for ShapeKeyword {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One violation of a [`ShapeSchema`] by an instance. Built only by [`ShapeSchema::check`];
/// read it with its accessors.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ShapeViolation {
    pointer: String,
    keyword: ShapeKeyword,
    code: &'static str,
    message: String,
    member: Option<String>,
    schema_pointer: String,
}

impl ShapeViolation {
    /// The instance's JSON Pointer (RFC 6901, escaped; `""` for the root) of the value at
    /// fault: the object for a missing member, the member itself for an unknown one.
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// The keyword that failed.
    pub fn keyword(&self) -> ShapeKeyword {
        self.keyword
    }

    /// The diagnostic code (stable snake_case, see [`ShapeKeyword::default_code`]).
    pub fn code(&self) -> &'static str {
        self.code
    }

    /// A human message naming the member and what was expected (`missing required member
    /// `steps``, `expected an integer for `retries`, got a string`).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The member the violation is about, unescaped: the missing member of `required`, the
    /// unknown member of `additionalProperties`/`unevaluatedProperties`, the member whose
    /// name `propertyNames` refused, a missing variant tag.
    pub fn member(&self) -> Option<&str> {
        self.member.as_deref()
    }

    /// The JSON Pointer, in the schema document, of the failing keyword (its absolute
    /// location: after a `$ref`, inside the `$defs` entry). The subschema itself for a `false`
    /// schema or [`ShapeKeyword::Depth`].
    pub fn schema_pointer(&self) -> &str {
        &self.schema_pointer
    }

    /// The violation as an error-severity [`Diagnostic`](crate::Diagnostic): its code, its
    /// pointer as the path, its message.
    pub fn to_diagnostic(&self) -> crate::Diagnostic {
        crate::Diagnostic::error(self.code, self.pointer.as_str(), self.message.as_str())
    }
}

impl fmt::Display for ShapeViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at `{}`: {}", self.code, self.pointer, self.message)
    }
}

/// Why a schema cannot be compiled into a [`ShapeSchema`]: the JSON Pointer, in the schema, of
/// the keyword (or subschema) that cannot be judged, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ShapeError {
    pointer: String,
    reason: String,
}

impl ShapeError {
    fn new(pointer: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            pointer: pointer.into(),
            reason: reason.into(),
        }
    }

    /// The JSON Pointer, in the schema, of the keyword or subschema at fault (for an unknown
    /// keyword: `/properties/steps/foo`).
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// Why it cannot be judged.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot check against the schema at `{}`: {}",
            self.pointer, self.reason
        )
    }
}

impl std::error::Error for ShapeError {}

// ---------------------------------------------------------------------------------------------
// Compiled form.

/// Bits of the JSON types an instance can have (`integer` is a refinement of `NUMBER`).
const NULL: u8 = 1;
const BOOLEAN: u8 = 2;
const OBJECT: u8 = 4;
const ARRAY: u8 = 8;
const NUMBER: u8 = 16;
const STRING: u8 = 32;
/// In `type` only: numbers with a zero fractional part.
const INTEGER: u8 = 64;
const ANY: u8 = NULL | BOOLEAN | OBJECT | ARRAY | NUMBER | STRING;

#[derive(Debug, Clone)]
enum Node {
    Bool(bool),
    Rules(Box<Rules>),
}

/// A number of the schema, kept as written (for messages) and as compared.
#[derive(Debug, Clone)]
struct Bound {
    written: Number,
    value: Num,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IntFormat {
    Int8,
    Int16,
    Int32,
    Int64,
    Int128,
    Int,
    Uint8,
    Uint16,
    Uint32,
    Uint64,
    Uint128,
    Uint,
}

impl IntFormat {
    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "int8" => Self::Int8,
            "int16" => Self::Int16,
            "int32" => Self::Int32,
            "int64" => Self::Int64,
            "int128" => Self::Int128,
            "int" => Self::Int,
            "uint8" => Self::Uint8,
            "uint16" => Self::Uint16,
            "uint32" => Self::Uint32,
            "uint64" => Self::Uint64,
            "uint128" => Self::Uint128,
            "uint" => Self::Uint,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Self::Int8 => "int8",
            Self::Int16 => "int16",
            Self::Int32 => "int32",
            Self::Int64 => "int64",
            Self::Int128 => "int128",
            Self::Int => "int",
            Self::Uint8 => "uint8",
            Self::Uint16 => "uint16",
            Self::Uint32 => "uint32",
            Self::Uint64 => "uint64",
            Self::Uint128 => "uint128",
            Self::Uint => "uint",
        }
    }

    /// The inclusive range; `None` as the maximum for `uint128` (2^128 - 1, past `i128`).
    fn range(self) -> (i128, Option<i128>) {
        match self {
            Self::Int8 => (i8::MIN.into(), Some(i8::MAX.into())),
            Self::Int16 => (i16::MIN.into(), Some(i16::MAX.into())),
            Self::Int32 => (i32::MIN.into(), Some(i32::MAX.into())),
            Self::Int64 => (i64::MIN.into(), Some(i64::MAX.into())),
            Self::Int128 => (i128::MIN, Some(i128::MAX)),
            Self::Int => (isize::MIN as i128, Some(isize::MAX as i128)),
            Self::Uint8 => (0, Some(u8::MAX.into())),
            Self::Uint16 => (0, Some(u16::MAX.into())),
            Self::Uint32 => (0, Some(u32::MAX.into())),
            Self::Uint64 => (0, Some(u64::MAX.into())),
            Self::Uint128 => (0, None),
            Self::Uint => (0, Some(usize::MAX as i128)),
        }
    }

    fn contains(self, n: Num) -> bool {
        let (lo, hi) = self.range();
        if n.cmp(Num::Int(lo)) == Ordering::Less {
            return false;
        }
        match hi {
            Some(hi) => n.cmp(Num::Int(hi)) != Ordering::Greater,
            // 2^128 is exact as an f64; every number below it fits.
            None => n.cmp(Num::Float(2f64.powi(128))) == Ordering::Less,
        }
    }

    fn describe_range(self) -> String {
        match self.range() {
            (lo, Some(hi)) => format!("{lo} to {hi}"),
            (lo, None) => format!("{lo} to {}", u128::MAX),
        }
    }
}

/// The branches of a `oneOf`/`anyOf`, with what the post-pass learnt about them.
#[derive(Debug, Clone, Default)]
struct Branches {
    nodes: Vec<NodeId>,
    /// Each branch's tag, if it has one.
    tags: Vec<Option<Tag>>,
    /// Each branch's admitted JSON types (bits).
    kinds: Vec<u8>,
    /// The member every branch is tagged by with listed values, if they all are.
    common_tag: Option<Box<str>>,
}

/// How a variant of a tagged enum is recognized: a member, and the values it takes (`None`:
/// the member's presence, as for an externally tagged variant).
#[derive(Debug, Clone)]
struct Tag {
    member: Box<str>,
    values: Option<Vec<Value>>,
}

impl Tag {
    fn carried_by(&self, object: &Map<String, Value>) -> bool {
        match (object.get(&*self.member), &self.values) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(value), Some(values)) => values.iter().any(|v| json_eq(v, value)),
        }
    }
}

#[derive(Debug, Clone, Default)]
struct Rules {
    types: Option<u8>,
    /// Sorted by name.
    properties: Vec<(Box<str>, NodeId)>,
    required: Vec<Box<str>>,
    additional: Option<NodeId>,
    unevaluated: Option<NodeId>,
    property_names: Option<NodeId>,
    min_properties: Option<u64>,
    max_properties: Option<u64>,
    items: Option<NodeId>,
    prefix_items: Vec<NodeId>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    unique_items: bool,
    contains: Option<NodeId>,
    min_contains: Option<u64>,
    max_contains: Option<u64>,
    enumeration: Option<Vec<Value>>,
    constant: Option<Value>,
    all_of: Vec<NodeId>,
    any_of: Option<Branches>,
    one_of: Option<Branches>,
    not: Option<NodeId>,
    if_: Option<NodeId>,
    then: Option<NodeId>,
    else_: Option<NodeId>,
    reference: Option<NodeId>,
    minimum: Option<Bound>,
    maximum: Option<Bound>,
    exclusive_minimum: Option<Bound>,
    exclusive_maximum: Option<Bound>,
    multiple_of: Option<Bound>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    int_format: Option<IntFormat>,
}

impl Rules {
    fn property(&self, name: &str) -> Option<NodeId> {
        self.properties
            .binary_search_by(|(key, _)| (**key).cmp(name))
            .ok()
            .map(|i| self.properties[i].1)
    }

    /// The subschemas applied to the same instance (for the cycle check).
    fn in_place(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.reference
            .iter()
            .chain(&self.all_of)
            .chain(self.any_of.iter().flat_map(|b| &b.nodes))
            .chain(self.one_of.iter().flat_map(|b| &b.nodes))
            .chain(&self.not)
            .chain(&self.if_)
            .chain(&self.then)
            .chain(&self.else_)
            .copied()
    }
}

/// A schemars-generated JSON Schema, compiled once, that checks instances and lists every
/// violation. See the [module docs](self) for what it supports and refuses.
///
/// It is `Send + Sync`: compile it once per program type and share it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ShapeSchema {
    nodes: Vec<Node>,
    /// The schema pointer of each node.
    locations: Vec<Box<str>>,
}

impl ShapeSchema {
    /// Compiles `schema` (a draft 2020-12 root, as `schemars::SchemaGenerator` generates it).
    ///
    /// Fails with the schema pointer and the reason of the first keyword it cannot judge (see
    /// the module docs), of a malformed keyword (`"minItems": -1`), of a `$ref` it cannot
    /// resolve, or of a reference cycle that never descends into the instance. Subschemas
    /// reached by no reference (unused `$defs`) are not read.
    pub fn new(schema: Value) -> Result<Self, ShapeError> {
        let mut compiler = Compiler {
            root: &schema,
            nodes: Vec::new(),
            locations: Vec::new(),
            by_pointer: HashMap::new(),
            queue: Vec::new(),
        };
        compiler.intern(String::new());
        while let Some(id) = compiler.queue.pop() {
            compiler.compile(id)?;
        }
        let mut shape = ShapeSchema {
            nodes: compiler.nodes,
            locations: compiler.locations,
        };
        shape.refuse_cycles()?;
        shape.learn_branches();
        Ok(shape)
    }

    /// Every violation of the schema by `instance`, in document order of the schema's keywords
    /// and the instance's members; empty if and only if the instance is valid.
    pub fn check(&self, instance: &Value) -> Vec<ShapeViolation> {
        let mut sink = Sink::collecting();
        let valid = self.eval(0, instance, Depth::ROOT, &mut sink);
        if !valid && sink.out.is_empty() {
            // Never a silent failure (the collecting pass always reports; this is a guard).
            sink.out.push(ShapeViolation {
                pointer: String::new(),
                keyword: ShapeKeyword::Not,
                code: "invalid",
                message: "the value does not match the schema".to_owned(),
                member: None,
                schema_pointer: String::new(),
            });
        }
        sink.out
    }

    /// Whether `instance` is valid: the verdict of [`ShapeSchema::check`], faster (stops at the
    /// first violation, allocates nothing but `propertyNames`' names and
    /// `unevaluatedProperties`' bookkeeping).
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.eval(0, instance, Depth::ROOT, &mut Sink::verdict())
    }

    /// [`ShapeSchema::check`]'s violations as error-severity diagnostics
    /// ([`ShapeViolation::to_diagnostic`]).
    pub fn check_diagnostics(&self, instance: &Value) -> Vec<crate::Diagnostic> {
        self.check(instance).iter().map(ShapeViolation::to_diagnostic).collect()
    }

    fn rules(&self, id: NodeId) -> Option<&Rules> {
        match &self.nodes[id as usize] {
            Node::Rules(rules) => Some(rules),
            Node::Bool(_) => None,
        }
    }

    fn is_false(&self, id: NodeId) -> bool {
        matches!(self.nodes[id as usize], Node::Bool(false))
    }

    /// Refuses a cycle of subschemas applied to the same instance (`$ref`, `allOf`, `anyOf`,
    /// `oneOf`, `not`, `if`, `then`, `else`): it would never terminate.
    fn refuse_cycles(&self) -> Result<(), ShapeError> {
        const WHITE: u8 = 0;
        const GREY: u8 = 1;
        const BLACK: u8 = 2;
        let mut colour = vec![WHITE; self.nodes.len()];
        for start in 0..self.nodes.len() as NodeId {
            if colour[start as usize] != WHITE {
                continue;
            }
            // Iterative depth-first search: (node, its in-place children, next child).
            let mut stack: Vec<(NodeId, Vec<NodeId>, usize)> = Vec::new();
            colour[start as usize] = GREY;
            stack.push((start, self.in_place(start), 0));
            while let Some((node, children, next)) = stack.last_mut() {
                if let Some(&child) = children.get(*next) {
                    *next += 1;
                    match colour[child as usize] {
                        WHITE => {
                            colour[child as usize] = GREY;
                            let grandchildren = self.in_place(child);
                            stack.push((child, grandchildren, 0));
                        }
                        GREY => {
                            return Err(ShapeError::new(
                                &*self.locations[child as usize],
                                "a cycle of `$ref`/applicators that never descends into the instance \
                                 (infinite recursion)",
                            ));
                        }
                        _ => {}
                    }
                } else {
                    colour[*node as usize] = BLACK;
                    stack.pop();
                }
            }
        }
        Ok(())
    }

    fn in_place(&self, id: NodeId) -> Vec<NodeId> {
        self.rules(id).map(|r| r.in_place().collect()).unwrap_or_default()
    }

    /// Computes the tags and admitted types of every `oneOf`/`anyOf` branch (the schema is
    /// acyclic in place by now, so the recursions terminate).
    fn learn_branches(&mut self) {
        let mut kinds_memo: Vec<Option<u8>> = vec![None; self.nodes.len()];
        let mut learnt: Vec<Learnt> = Vec::new();
        for id in 0..self.nodes.len() as NodeId {
            let Some(rules) = self.rules(id) else { continue };
            for (is_one_of, branches) in [(false, &rules.any_of), (true, &rules.one_of)] {
                let Some(branches) = branches else { continue };
                let tags = branches.nodes.iter().map(|&b| self.tag(b, 0)).collect();
                let kinds = branches
                    .nodes
                    .iter()
                    .map(|&b| self.kinds(b, &mut kinds_memo, 0))
                    .collect();
                learnt.push((id, is_one_of, tags, kinds));
            }
        }
        for (id, is_one_of, tags, kinds) in learnt {
            let Node::Rules(rules) = &mut self.nodes[id as usize] else {
                continue;
            };
            let branches = if is_one_of {
                &mut rules.one_of
            } else {
                &mut rules.any_of
            };
            let Some(branches) = branches else { continue };
            let common = match tags.first() {
                Some(Some(Tag {
                    member,
                    values: Some(_),
                })) => Some(member.clone()),
                _ => None,
            };
            branches.common_tag = common.filter(|member| {
                tags.iter()
                    .all(|t| matches!(t, Some(Tag { member: m, values: Some(_) }) if m == member))
            });
            branches.tags = tags;
            branches.kinds = kinds;
        }
    }

    /// The tag of a variant: a required member whose schema is a `const` or an `enum`, or the
    /// single required member of an object that allows no other (externally tagged).
    fn tag(&self, id: NodeId, hops: u32) -> Option<Tag> {
        let rules = self.rules(id)?;
        if hops > 64 {
            return None;
        }
        for name in &rules.required {
            let Some(child) = rules.property(name).and_then(|c| self.rules(c)) else {
                continue;
            };
            if let Some(value) = &child.constant {
                return Some(Tag {
                    member: name.clone(),
                    values: Some(vec![value.clone()]),
                });
            }
            if let Some(values) = &child.enumeration {
                return Some(Tag {
                    member: name.clone(),
                    values: Some(values.clone()),
                });
            }
        }
        if let ([name], [(property, _)], Some(additional)) =
            (&rules.required[..], &rules.properties[..], rules.additional)
        {
            if name == property && self.is_false(additional) {
                return Some(Tag {
                    member: name.clone(),
                    values: None,
                });
            }
        }
        rules
            .reference
            .iter()
            .chain(&rules.all_of)
            .find_map(|&c| self.tag(c, hops + 1))
    }

    /// The JSON types a subschema can admit at all (bits; `integer` counted as `NUMBER`).
    fn kinds(&self, id: NodeId, memo: &mut Vec<Option<u8>>, hops: u32) -> u8 {
        if let Some(k) = memo[id as usize] {
            return k;
        }
        if hops > 64 {
            return ANY;
        }
        let k = match &self.nodes[id as usize] {
            Node::Bool(b) => {
                if *b {
                    ANY
                } else {
                    0
                }
            }
            Node::Rules(r) => {
                let mut k = r
                    .types
                    .map_or(ANY, |t| if t & INTEGER != 0 { (t & !INTEGER) | NUMBER } else { t });
                if let Some(c) = &r.constant {
                    k &= kind_of(c);
                }
                if let Some(values) = &r.enumeration {
                    k &= values.iter().fold(0, |acc, v| acc | kind_of(v));
                }
                for &c in r.reference.iter().chain(&r.all_of) {
                    k &= self.kinds(c, memo, hops + 1);
                }
                for branches in [&r.any_of, &r.one_of].into_iter().flatten() {
                    let mut union = 0;
                    for &b in &branches.nodes {
                        union |= self.kinds(b, memo, hops + 1);
                    }
                    k &= union;
                }
                k
            }
        };
        memo[id as usize] = Some(k);
        k
    }
}

/// A bound of `check_number`: the keyword's value, the keyword, the relation for the message,
/// and whether the instance's ordering against the value satisfies it.
type BoundCheck<'r> = (&'r Option<Bound>, ShapeKeyword, &'static str, fn(Ordering) -> bool);

/// What [`ShapeSchema::learn_branches`] learnt of one `anyOf` (`false`) or `oneOf` (`true`) of
/// a node: its branches' tags and admitted types.
type Learnt = (NodeId, bool, Vec<Option<Tag>>, Vec<u8>);

struct Compiler<'s> {
    root: &'s Value,
    nodes: Vec<Node>,
    locations: Vec<Box<str>>,
    by_pointer: HashMap<String, NodeId>,
    queue: Vec<NodeId>,
}

fn child_pointer(at: &str, token: &str) -> String {
    let mut pointer = String::with_capacity(at.len() + token.len() + 1);
    pointer.push_str(at);
    push_token(&mut pointer, token);
    pointer
}

fn push_token(pointer: &mut String, token: &str) {
    pointer.push('/');
    for c in token.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

fn unescape_token(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

fn percent_decode(fragment: &str) -> Option<String> {
    let bytes = fragment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = fragment.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

impl Compiler<'_> {
    /// The node of the subschema at `pointer` (which exists), compiled later.
    fn intern(&mut self, pointer: String) -> NodeId {
        if let Some(&id) = self.by_pointer.get(&pointer) {
            return id;
        }
        let id = self.nodes.len() as NodeId;
        self.nodes.push(Node::Bool(true));
        self.locations.push(pointer.as_str().into());
        self.by_pointer.insert(pointer, id);
        self.queue.push(id);
        id
    }

    fn compile(&mut self, id: NodeId) -> Result<(), ShapeError> {
        let at = self.locations[id as usize].to_string();
        let root = self.root;
        let schema = root
            .pointer(&at)
            .ok_or_else(|| ShapeError::new(&at, "no subschema at this pointer"))?;
        let map = match schema {
            Value::Bool(b) => {
                self.nodes[id as usize] = Node::Bool(*b);
                return Ok(());
            }
            Value::Object(map) => map,
            _ => return Err(ShapeError::new(&at, "a schema must be an object or a boolean")),
        };
        let mut rules = Rules::default();
        for (key, value) in map {
            let here = child_pointer(&at, key);
            let err = |reason: &str| ShapeError::new(&here, format!("`{key}`: {reason}"));
            match key.as_str() {
                "type" => rules.types = Some(parse_types(value).map_err(|r| err(&r))?),
                "properties" => {
                    let Value::Object(properties) = value else {
                        return Err(err("must be an object of schemas"));
                    };
                    for name in properties.keys() {
                        let node = self.intern(child_pointer(&here, name));
                        rules.properties.push((name.as_str().into(), node));
                    }
                    rules.properties.sort_by(|a, b| a.0.cmp(&b.0));
                }
                "required" => {
                    let Value::Array(names) = value else {
                        return Err(err("must be an array of strings"));
                    };
                    for name in names {
                        let Value::String(name) = name else {
                            return Err(err("must be an array of strings"));
                        };
                        rules.required.push(name.as_str().into());
                    }
                }
                "additionalProperties" => rules.additional = Some(self.intern(here.clone())),
                "unevaluatedProperties" => rules.unevaluated = Some(self.intern(here.clone())),
                "propertyNames" => rules.property_names = Some(self.intern(here.clone())),
                "minProperties" => rules.min_properties = Some(count(value).ok_or_else(|| err(COUNT))?),
                "maxProperties" => rules.max_properties = Some(count(value).ok_or_else(|| err(COUNT))?),
                "items" => {
                    if value.is_array() {
                        return Err(err(
                            "the array form of `items` is draft 2019-09 or older (2020-12 uses `prefixItems`)",
                        ));
                    }
                    rules.items = Some(self.intern(here.clone()));
                }
                "prefixItems" => rules.prefix_items = self.schema_list(&here, value).map_err(|r| err(&r))?,
                "minItems" => rules.min_items = Some(count(value).ok_or_else(|| err(COUNT))?),
                "maxItems" => rules.max_items = Some(count(value).ok_or_else(|| err(COUNT))?),
                "uniqueItems" => rules.unique_items = value.as_bool().ok_or_else(|| err("must be a boolean"))?,
                "contains" => rules.contains = Some(self.intern(here.clone())),
                "minContains" => rules.min_contains = Some(count(value).ok_or_else(|| err(COUNT))?),
                "maxContains" => rules.max_contains = Some(count(value).ok_or_else(|| err(COUNT))?),
                "enum" => {
                    let Value::Array(values) = value else {
                        return Err(err("must be an array"));
                    };
                    rules.enumeration = Some(values.clone());
                }
                "const" => rules.constant = Some(value.clone()),
                "allOf" => rules.all_of = self.schema_list(&here, value).map_err(|r| err(&r))?,
                "anyOf" | "oneOf" => {
                    let nodes = self.schema_list(&here, value).map_err(|r| err(&r))?;
                    let branches = Some(Branches {
                        nodes,
                        ..Branches::default()
                    });
                    if key == "anyOf" {
                        rules.any_of = branches;
                    } else {
                        rules.one_of = branches;
                    }
                }
                "not" => rules.not = Some(self.intern(here.clone())),
                "if" => rules.if_ = Some(self.intern(here.clone())),
                "then" => rules.then = Some(self.intern(here.clone())),
                "else" => rules.else_ = Some(self.intern(here.clone())),
                "$ref" => {
                    let Value::String(reference) = value else {
                        return Err(err("must be a string"));
                    };
                    let target = reference
                        .strip_prefix('#')
                        .and_then(percent_decode)
                        .filter(|p| p.is_empty() || p.starts_with('/'))
                        .ok_or_else(|| {
                            err(&format!(
                                "only local JSON Pointer references (`#/$defs/...`) are supported, not `{reference}`"
                            ))
                        })?;
                    if root.pointer(&target).is_none() {
                        return Err(err(&format!("`{reference}` resolves to nothing in this schema")));
                    }
                    rules.reference = Some(self.intern(target));
                }
                "minimum" => rules.minimum = Some(bound(value).ok_or_else(|| err(NUMERIC))?),
                "maximum" => rules.maximum = Some(bound(value).ok_or_else(|| err(NUMERIC))?),
                "exclusiveMinimum" => rules.exclusive_minimum = Some(bound(value).ok_or_else(|| err(NUMERIC))?),
                "exclusiveMaximum" => rules.exclusive_maximum = Some(bound(value).ok_or_else(|| err(NUMERIC))?),
                "multipleOf" => {
                    let b = bound(value)
                        .filter(|b| b.value.cmp(Num::Int(0)) == Ordering::Greater)
                        .ok_or_else(|| err("must be a number greater than 0"))?;
                    rules.multiple_of = Some(b);
                }
                "minLength" => rules.min_length = Some(count(value).ok_or_else(|| err(COUNT))?),
                "maxLength" => rules.max_length = Some(count(value).ok_or_else(|| err(COUNT))?),
                "format" => {
                    let Value::String(format) = value else {
                        return Err(err("must be a string"));
                    };
                    rules.int_format = IntFormat::parse(format);
                }
                "pattern" | "patternProperties" => {
                    return Err(err(
                        "regular expressions are refused: pilotage-types has no run-time ECMA-262 pattern \
                         compiler (its pattern engine runs only patterns compiled ahead of time by \
                         pilotage-codegen)",
                    ));
                }
                "$defs" | "definitions" => {
                    if !value.is_object() {
                        return Err(err("must be an object of schemas"));
                    }
                }
                "$schema" => {
                    let uri = value.as_str().unwrap_or_default();
                    if uri.trim_end_matches('#') != DRAFT_2020_12 {
                        return Err(err(&format!(
                            "only draft 2020-12 (`{DRAFT_2020_12}`) is supported, not {value}"
                        )));
                    }
                }
                "$id" => {
                    if !at.is_empty() {
                        return Err(err(
                            "`$id` below the root starts a new base URI; such references are not supported",
                        ));
                    }
                }
                "title" | "description" | "default" | "examples" | "deprecated" | "readOnly" | "writeOnly"
                | "$comment" | "nullable" | "contentEncoding" | "contentMediaType" | "contentSchema" => {}
                _ => return Err(err("unknown keyword: the shape checker cannot judge it")),
            }
        }
        self.nodes[id as usize] = Node::Rules(Box::new(rules));
        Ok(())
    }

    fn schema_list(&mut self, at: &str, value: &Value) -> Result<Vec<NodeId>, String> {
        let Value::Array(schemas) = value else {
            return Err("must be an array of schemas".to_owned());
        };
        if schemas.is_empty() {
            return Err("must not be empty".to_owned());
        }
        Ok((0..schemas.len())
            .map(|i| self.intern(child_pointer(at, &i.to_string())))
            .collect())
    }
}

const COUNT: &str = "must be a non-negative integer";
const NUMERIC: &str = "must be a number";

fn count(value: &Value) -> Option<u64> {
    match value {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < 1.8e19)
                .map(|f| f as u64)
        }),
        _ => None,
    }
}

fn bound(value: &Value) -> Option<Bound> {
    match value {
        Value::Number(n) => Some(Bound {
            written: n.clone(),
            value: Num::of(n),
        }),
        _ => None,
    }
}

fn parse_types(value: &Value) -> Result<u8, String> {
    fn one(name: &str) -> Result<u8, String> {
        Ok(match name {
            "null" => NULL,
            "boolean" => BOOLEAN,
            "object" => OBJECT,
            "array" => ARRAY,
            "number" => NUMBER,
            "string" => STRING,
            "integer" => INTEGER,
            other => return Err(format!("`{other}` is not a JSON Schema type")),
        })
    }
    match value {
        Value::String(name) => one(name),
        Value::Array(names) if !names.is_empty() => names.iter().try_fold(0, |acc, name| match name {
            Value::String(name) => Ok(acc | one(name)?),
            _ => Err("must be a type name or a non-empty array of them".to_owned()),
        }),
        _ => Err("must be a type name or a non-empty array of them".to_owned()),
    }
}

// ---------------------------------------------------------------------------------------------
// Numbers and equality.

/// A JSON number, compared exactly: integers (and integral floats below 2^127) as `i128`.
#[derive(Debug, Clone, Copy)]
enum Num {
    Int(i128),
    Float(f64),
}

/// 2^127, the first float past `i128`.
const TWO_POW_127: f64 = 1.7014118346046923e38;

impl Num {
    fn of(n: &Number) -> Self {
        if let Some(u) = n.as_u64() {
            Num::Int(u.into())
        } else if let Some(i) = n.as_i64() {
            Num::Int(i.into())
        } else {
            let f = n.as_f64().unwrap_or(f64::NAN);
            if f.fract() == 0.0 && f.abs() < TWO_POW_127 {
                Num::Int(f as i128)
            } else {
                Num::Float(f)
            }
        }
    }

    fn is_integer(self) -> bool {
        match self {
            Num::Int(_) => true,
            Num::Float(f) => f.fract() == 0.0,
        }
    }

    fn cmp(self, other: Num) -> Ordering {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a.cmp(&b),
            (Num::Float(a), Num::Float(b)) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
            (Num::Int(a), Num::Float(b)) => cmp_int_float(a, b),
            (Num::Float(a), Num::Int(b)) => cmp_int_float(b, a).reverse(),
        }
    }
}

fn cmp_int_float(i: i128, f: f64) -> Ordering {
    if f.is_nan() {
        return Ordering::Equal;
    }
    if f >= TWO_POW_127 {
        return Ordering::Less;
    }
    if f < -TWO_POW_127 {
        return Ordering::Greater;
    }
    let floor = f.floor();
    match i.cmp(&(floor as i128)) {
        Ordering::Equal if floor != f => Ordering::Less,
        other => other,
    }
}

/// `value` is a multiple of `divisor` (> 0): exact for integers, decimal for the rest (as the
/// numbers are written: `0.3` is a multiple of `0.1`), `f64` division past `i128`.
fn is_multiple(value: &Number, divisor: &Bound) -> bool {
    if let (Num::Int(a), Num::Int(b)) = (Num::of(value), divisor.value) {
        if b != 0 {
            return a % b == 0;
        }
    }
    if let (Some((am, ad)), Some((bm, bd))) = (decimal(value), decimal(&divisor.written)) {
        let scale = ad.max(bd);
        let scaled = |m: i128, d: i32| {
            10i128
                .checked_pow(u32::try_from(scale - d).ok()?)
                .and_then(|p| m.checked_mul(p))
        };
        if let (Some(a), Some(b)) = (scaled(am, ad), scaled(bm, bd)) {
            if b != 0 {
                return a % b == 0;
            }
        }
    }
    match (value.as_f64(), divisor.written.as_f64()) {
        (Some(a), Some(b)) if b != 0.0 => {
            let q = a / b;
            q.is_finite() && q.fract() == 0.0
        }
        _ => false,
    }
}

/// A number as `mantissa * 10^-decimals`, from its shortest text.
fn decimal(n: &Number) -> Option<(i128, i32)> {
    let text = n.to_string();
    let (body, exponent) = match text.find(['e', 'E']) {
        Some(i) => (&text[..i], text[i + 1..].parse::<i32>().ok()?),
        None => (&text[..], 0),
    };
    let (negative, body) = match body.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, body),
    };
    let (whole, fraction) = body.split_once('.').unwrap_or((body, ""));
    let mut mantissa: i128 = 0;
    for digit in whole.bytes().chain(fraction.bytes()) {
        if !digit.is_ascii_digit() {
            return None;
        }
        mantissa = mantissa.checked_mul(10)?.checked_add(i128::from(digit - b'0'))?;
    }
    let decimals = i32::try_from(fraction.len()).ok()?.checked_sub(exponent)?;
    if decimals < 0 {
        mantissa = mantissa.checked_mul(10i128.checked_pow(decimals.unsigned_abs())?)?;
        return Some((if negative { -mantissa } else { mantissa }, 0));
    }
    Some((if negative { -mantissa } else { mantissa }, decimals))
}

/// JSON equality: numbers compared by value (`1 == 1.0`), objects regardless of member order.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => Num::of(x).cmp(Num::of(y)) == Ordering::Equal,
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_eq(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

fn has_children(value: &Value) -> bool {
    match value {
        Value::Object(map) => !map.is_empty(),
        Value::Array(items) => !items.is_empty(),
        _ => false,
    }
}

fn kind_of(value: &Value) -> u8 {
    match value {
        Value::Null => NULL,
        Value::Bool(_) => BOOLEAN,
        Value::Object(_) => OBJECT,
        Value::Array(_) => ARRAY,
        Value::Number(_) => NUMBER,
        Value::String(_) => STRING,
    }
}

fn type_ok(types: u8, value: &Value) -> bool {
    match value {
        Value::Number(n) => types & NUMBER != 0 || (types & INTEGER != 0 && Num::of(n).is_integer()),
        other => types & kind_of(other) != 0,
    }
}

/// The instance's type, with an article, for messages.
fn describe_instance(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Object(_) => "an object",
        Value::Array(_) => "an array",
        Value::Number(n) if Num::of(n).is_integer() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
    }
}

/// `an integer or null`, `a string`.
fn describe_types(types: u8) -> String {
    let names: Vec<&str> = [
        (OBJECT, "an object"),
        (ARRAY, "an array"),
        (STRING, "a string"),
        (INTEGER, "an integer"),
        (NUMBER, "a number"),
        (BOOLEAN, "a boolean"),
        (NULL, "null"),
    ]
    .into_iter()
    .filter(|(bit, _)| types & bit != 0 && !(*bit == INTEGER && types & NUMBER != 0))
    .map(|(_, name)| name)
    .collect();
    match names.as_slice() {
        [] => "nothing".to_owned(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// A value for a message: its JSON text, cut at 60 characters.
fn show(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// `"a", "b" or "c"` (at most 8 shown).
fn show_list(values: &[Value]) -> String {
    let mut shown: Vec<String> = values.iter().take(8).map(show).collect();
    if values.len() > 8 {
        shown.push(format!("({} more)", values.len() - 8));
    }
    match shown.as_slice() {
        [] => "nothing".to_owned(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

// ---------------------------------------------------------------------------------------------
// Checking.

#[derive(Debug, Clone, Copy)]
struct Depth {
    /// Members and items descended into.
    instance: u32,
    /// Subschemas applied in the chain.
    frames: u32,
}

impl Depth {
    const ROOT: Depth = Depth { instance: 0, frames: 0 };

    fn descend(self) -> Depth {
        Depth {
            instance: self.instance + 1,
            frames: self.frames + 1,
        }
    }

    fn apply(self) -> Depth {
        Depth {
            instance: self.instance,
            frames: self.frames + 1,
        }
    }
}

/// Where violations go: collected with the instance pointer, or (a verdict) not at all — then
/// the check stops at the first violation and the pointer is not maintained.
struct Sink {
    collect: bool,
    pointer: String,
    /// Whether each token of `pointer` is an array index.
    indices: Vec<bool>,
    out: Vec<ShapeViolation>,
}

impl Sink {
    fn collecting() -> Self {
        Sink {
            collect: true,
            pointer: String::new(),
            indices: Vec::new(),
            out: Vec::new(),
        }
    }

    fn verdict() -> Self {
        Sink {
            collect: false,
            ..Sink::collecting()
        }
    }

    fn enter_member(&mut self, name: &str) -> usize {
        let len = self.pointer.len();
        if self.collect {
            push_token(&mut self.pointer, name);
            self.indices.push(false);
        }
        len
    }

    fn enter_index(&mut self, index: usize) -> usize {
        let len = self.pointer.len();
        if self.collect {
            let _ = write!(self.pointer, "/{index}");
            self.indices.push(true);
        }
        len
    }

    fn leave(&mut self, len: usize) {
        if self.collect {
            self.pointer.truncate(len);
            self.indices.pop();
        }
    }

    /// The current value, for a message: "`retries`", "item 2 of `steps`", "the value".
    fn subject(&self) -> String {
        let mut tokens = self.pointer.rsplit('/');
        let last = tokens.next().unwrap_or_default();
        match self.indices.last() {
            None => "the value".to_owned(),
            Some(false) => format!("`{}`", unescape_token(last)),
            Some(true) => match (
                self.indices.len().checked_sub(2).map(|i| self.indices[i]),
                tokens.next(),
            ) {
                (Some(false), Some(parent)) => format!("item {last} of `{}`", unescape_token(parent)),
                _ => format!("item {last}"),
            },
        }
    }

    fn push(
        &mut self,
        at: &str,
        keyword: ShapeKeyword,
        code: Option<&'static str>,
        member: Option<&str>,
        message: String,
    ) {
        let schema_pointer = match keyword {
            ShapeKeyword::FalseSchema | ShapeKeyword::Depth => at.to_owned(),
            keyword => format!("{at}/{keyword}"),
        };
        self.out.push(ShapeViolation {
            pointer: self.pointer.clone(),
            keyword,
            code: code.unwrap_or(keyword.default_code()),
            message,
            member: member.map(str::to_owned),
            schema_pointer,
        });
    }
}

/// Records a violation: in a verdict, returns `false` at once; collecting, clears `$valid`
/// and pushes the violation (its message formatted only then).
macro_rules! fail {
    ($self:ident, $sink:ident, $valid:ident, $id:expr, $keyword:expr, $member:expr, $($message:tt)+) => {{
        if !$sink.collect {
            return false;
        }
        $valid = false;
        let message = format!($($message)+);
        $sink.push(&$self.locations[$id as usize], $keyword, None, $member, message);
    }};
}

impl ShapeSchema {
    fn eval(&self, id: NodeId, value: &Value, depth: Depth, sink: &mut Sink) -> bool {
        let mut valid = true;
        let too_deep = if depth.frames > MAX_FRAMES {
            Some(format!("more than {MAX_FRAMES} subschemas apply to it in a chain"))
        } else if depth.instance >= MAX_DEPTH && has_children(value) {
            Some(format!("its members or items would be deeper than {MAX_DEPTH} levels"))
        } else {
            None
        };
        if let Some(why) = too_deep {
            fail!(
                self,
                sink,
                valid,
                id,
                ShapeKeyword::Depth,
                None,
                "{} is nested too deep ({why})",
                sink.subject()
            );
            return valid;
        }
        let rules = match &self.nodes[id as usize] {
            Node::Bool(true) => return true,
            Node::Bool(false) => {
                fail!(
                    self,
                    sink,
                    valid,
                    id,
                    ShapeKeyword::FalseSchema,
                    None,
                    "{} is not allowed here",
                    sink.subject()
                );
                return valid;
            }
            Node::Rules(rules) => rules,
        };
        if let Some(types) = rules.types {
            if !type_ok(types, value) {
                // The other keywords would only restate it: the type is the fault.
                let at = if sink.pointer.is_empty() {
                    String::new()
                } else {
                    format!(" for {}", sink.subject())
                };
                fail!(
                    self,
                    sink,
                    valid,
                    id,
                    ShapeKeyword::Type,
                    None,
                    "expected {}{at}, got {}",
                    describe_types(types),
                    describe_instance(value)
                );
                return valid;
            }
        }
        if let Some(constant) = &rules.constant {
            if !json_eq(constant, value) {
                fail!(
                    self,
                    sink,
                    valid,
                    id,
                    ShapeKeyword::Const,
                    None,
                    "{} must be {}, got {}",
                    sink.subject(),
                    show(constant),
                    show(value)
                );
            }
        }
        if let Some(values) = &rules.enumeration {
            if !values.iter().any(|v| json_eq(v, value)) {
                fail!(
                    self,
                    sink,
                    valid,
                    id,
                    ShapeKeyword::Enum,
                    None,
                    "{} must be {}{}, got {}",
                    sink.subject(),
                    if values.len() == 1 { "" } else { "one of " },
                    show_list(values),
                    show(value)
                );
            }
        }
        let fits = match value {
            Value::Object(object) => self.check_object(id, rules, object, depth, sink),
            Value::Array(items) => self.check_array(id, rules, items, depth, sink),
            Value::Number(n) => self.check_number(id, rules, n, sink),
            Value::String(s) => self.check_string(id, rules, s, sink),
            Value::Null | Value::Bool(_) => true,
        };
        if !fits {
            if !sink.collect {
                return false;
            }
            valid = false;
        }
        if !self.check_in_place(id, rules, value, depth, sink) {
            if !sink.collect {
                return false;
            }
            valid = false;
        }
        if let (Some(unevaluated), Value::Object(object)) = (rules.unevaluated, value) {
            if !self.check_unevaluated(id, rules, unevaluated, object, value, depth, sink) {
                if !sink.collect {
                    return false;
                }
                valid = false;
            }
        }
        valid
    }

    fn check_object(
        &self,
        id: NodeId,
        rules: &Rules,
        object: &Map<String, Value>,
        depth: Depth,
        sink: &mut Sink,
    ) -> bool {
        let mut valid = true;
        for name in &rules.required {
            if !object.contains_key(&**name) {
                let within = if sink.pointer.is_empty() {
                    String::new()
                } else {
                    format!(" in {}", sink.subject())
                };
                fail!(
                    self,
                    sink,
                    valid,
                    id,
                    ShapeKeyword::Required,
                    Some(name),
                    "missing required member `{name}`{within}"
                );
            }
        }
        let members = object.len() as u64;
        if let Some(min) = rules.min_properties.filter(|&min| members < min) {
            fail!(
                self,
                sink,
                valid,
                id,
                ShapeKeyword::MinProperties,
                None,
                "{} must have at least {}, got {members}",
                sink.subject(),
                plural(min, "member", "members")
            );
        }
        if let Some(max) = rules.max_properties.filter(|&max| members > max) {
            fail!(
                self,
                sink,
                valid,
                id,
                ShapeKeyword::MaxProperties,
                None,
                "{} must have at most {}, got {members}",
                sink.subject(),
                plural(max, "member", "members")
            );
        }
        for (name, member) in object {
            if let Some(names) = rules.property_names {
                if !self.check_name(names, name, depth, sink) {
                    if !sink.collect {
                        return false;
                    }
                    valid = false;
                }
            }
            let schema = match rules.property(name) {
                Some(schema) => schema,
                None => match rules.additional {
                    Some(additional) if self.is_false(additional) => {
                        let owner = sink.subject();
                        let mark = sink.enter_member(name);
                        let within = if mark == 0 {
                            String::new()
                        } else {
                            format!(" in {owner}")
                        };
                        fail!(
                            self,
                            sink,
                            valid,
                            id,
                            ShapeKeyword::AdditionalProperties,
                            Some(name),
                            "unknown member `{name}`{within}"
                        );
                        sink.leave(mark);
                        continue;
                    }
                    Some(additional) => additional,
                    None => continue,
                },
            };
            let mark = sink.enter_member(name);
            let ok = self.eval(schema, member, depth.descend(), sink);
            sink.leave(mark);
            if !ok {
                if !sink.collect {
                    return false;
                }
                valid = false;
            }
        }
        valid
    }

    /// `propertyNames` on one member name: its violations, if any, are reported at the member
    /// with the name as `member`.
    fn check_name(&self, names: NodeId, name: &str, depth: Depth, sink: &mut Sink) -> bool {
        let as_value = Value::String(name.to_owned());
        if self.eval(names, &as_value, depth.apply(), &mut Sink::verdict()) {
            return true;
        }
        if !sink.collect {
            return false;
        }
        let mut inner = Sink::collecting();
        self.eval(names, &as_value, depth.apply(), &mut inner);
        let mark = sink.enter_member(name);
        for violation in inner.out {
            sink.out.push(ShapeViolation {
                pointer: sink.pointer.clone(),
                message: format!("member name `{name}` is not allowed: {}", violation.message),
                member: Some(name.to_owned()),
                ..violation
            });
        }
        sink.leave(mark);
        false
    }

    fn check_array(&self, id: NodeId, rules: &Rules, items: &[Value], depth: Depth, sink: &mut Sink) -> bool {
        let mut valid = true;
        let len = items.len() as u64;
        if let Some(min) = rules.min_items.filter(|&min| len < min) {
            fail!(
                self,
                sink,
                valid,
                id,
                ShapeKeyword::MinItems,
                None,
                "{} must have at least {}, got {len}",
                sink.subject(),
                plural(min, "item", "items")
            );
        }
        if let Some(max) = rules.max_items.filter(|&max| len > max) {
            fail!(
                self,
                sink,
                valid,
                id,
                ShapeKeyword::MaxItems,
                None,
                "{} must have at most {}, got {len}",
                sink.subject(),
                plural(max, "item", "items")
            );
        }
        if rules.unique_items {
            'outer: for (i, a) in items.iter().enumerate() {
                for (j, b) in items.iter().enumerate().skip(i + 1) {
                    if json_eq(a, b) {
                        fail!(
                            self,
                            sink,
                            valid,
                            id,
                            ShapeKeyword::UniqueItems,
                            None,
                            "{} must have unique items, but items {i} and {j} are equal",
                            sink.subject()
                        );
                        break 'outer;
                    }
                }
            }
        }
        for (i, item) in items.iter().enumerate() {
            let Some(schema) = rules.prefix_items.get(i).copied().or(rules.items) else {
                continue;
            };
            let mark = sink.enter_index(i);
            let ok = self.eval(schema, item, depth.descend(), sink);
            sink.leave(mark);
            if !ok {
                if !sink.collect {
                    return false;
                }
                valid = false;
            }
        }
        if let Some(contains) = rules.contains {
            let matching = items
                .iter()
                .filter(|item| self.eval(contains, item, depth.descend(), &mut Sink::verdict()))
                .count() as u64;
            let min = rules.min_contains.unwrap_or(1);
            if matching < min {
                let keyword = if rules.min_contains.is_some() {
                    ShapeKeyword::MinContains
                } else {
                    ShapeKeyword::Contains
                };
                fail!(
                    self,
                    sink,
                    valid,
                    id,
                    keyword,
                    None,
                    "{} must contain at least {} matching `contains`, got {matching}",
                    sink.subject(),
                    plural(min, "item", "items")
                );
            }
            if let Some(max) = rules.max_contains.filter(|&max| matching > max) {
                fail!(
                    self,
                    sink,
                    valid,
                    id,
                    ShapeKeyword::MaxContains,
                    None,
                    "{} must contain at most {} matching `contains`, got {matching}",
                    sink.subject(),
                    plural(max, "item", "items")
                );
            }
        }
        valid
    }

    fn check_number(&self, id: NodeId, rules: &Rules, n: &Number, sink: &mut Sink) -> bool {
        let mut valid = true;
        let value = Num::of(n);
        let mut out_of_bounds = false;
        let checks: [BoundCheck<'_>; 4] = [
            (&rules.minimum, ShapeKeyword::Minimum, "at least", |o| {
                o != Ordering::Less
            }),
            (&rules.maximum, ShapeKeyword::Maximum, "at most", |o| {
                o != Ordering::Greater
            }),
            (
                &rules.exclusive_minimum,
                ShapeKeyword::ExclusiveMinimum,
                "greater than",
                |o| o == Ordering::Greater,
            ),
            (
                &rules.exclusive_maximum,
                ShapeKeyword::ExclusiveMaximum,
                "less than",
                |o| o == Ordering::Less,
            ),
        ];
        for (limit, keyword, relation, holds) in checks {
            if let Some(limit) = limit {
                if !holds(value.cmp(limit.value)) {
                    out_of_bounds = true;
                    fail!(
                        self,
                        sink,
                        valid,
                        id,
                        keyword,
                        None,
                        "{} must be {relation} {}, got {n}",
                        sink.subject(),
                        limit.written
                    );
                }
            }
        }
        if let Some(divisor) = &rules.multiple_of {
            if !is_multiple(n, divisor) {
                fail!(
                    self,
                    sink,
                    valid,
                    id,
                    ShapeKeyword::MultipleOf,
                    None,
                    "{} must be a multiple of {}, got {n}",
                    sink.subject(),
                    divisor.written
                );
            }
        }
        // A format's range restates a failed bound (schemars writes both for `u8`): once is enough.
        if let Some(format) = rules.int_format.filter(|_| !out_of_bounds) {
            if !format.contains(value) {
                fail!(
                    self,
                    sink,
                    valid,
                    id,
                    ShapeKeyword::Format,
                    None,
                    "{} must fit in {} ({}), got {n}",
                    sink.subject(),
                    format.name(),
                    format.describe_range()
                );
            }
        }
        valid
    }

    fn check_string(&self, id: NodeId, rules: &Rules, s: &str, sink: &mut Sink) -> bool {
        let mut valid = true;
        if rules.min_length.is_none() && rules.max_length.is_none() {
            return true;
        }
        let len = s.chars().count() as u64;
        if let Some(min) = rules.min_length.filter(|&min| len < min) {
            fail!(
                self,
                sink,
                valid,
                id,
                ShapeKeyword::MinLength,
                None,
                "{} must be at least {} long, got {len}",
                sink.subject(),
                plural(min, "character", "characters")
            );
        }
        if let Some(max) = rules.max_length.filter(|&max| len > max) {
            fail!(
                self,
                sink,
                valid,
                id,
                ShapeKeyword::MaxLength,
                None,
                "{} must be at most {} long, got {len}",
                sink.subject(),
                plural(max, "character", "characters")
            );
        }
        valid
    }

    /// `$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`.
    fn check_in_place(&self, id: NodeId, rules: &Rules, value: &Value, depth: Depth, sink: &mut Sink) -> bool {
        let mut valid = true;
        for &schema in rules.reference.iter().chain(&rules.all_of) {
            if !self.eval(schema, value, depth.apply(), sink) {
                if !sink.collect {
                    return false;
                }
                valid = false;
            }
        }
        for (branches, keyword) in [
            (&rules.any_of, ShapeKeyword::AnyOf),
            (&rules.one_of, ShapeKeyword::OneOf),
        ] {
            if let Some(branches) = branches {
                if !self.check_branches(id, branches, keyword, value, depth, sink) {
                    if !sink.collect {
                        return false;
                    }
                    valid = false;
                }
            }
        }
        if let Some(not) = rules.not {
            if self.eval(not, value, depth.apply(), &mut Sink::verdict()) {
                fail!(
                    self,
                    sink,
                    valid,
                    id,
                    ShapeKeyword::Not,
                    None,
                    "{} must not match the schema under `not`",
                    sink.subject()
                );
            }
        }
        if let Some(condition) = rules.if_ {
            let branch = if self.eval(condition, value, depth.apply(), &mut Sink::verdict()) {
                rules.then
            } else {
                rules.else_
            };
            if let Some(branch) = branch {
                if !self.eval(branch, value, depth.apply(), sink) {
                    if !sink.collect {
                        return false;
                    }
                    valid = false;
                }
            }
        }
        valid
    }

    fn check_branches(
        &self,
        id: NodeId,
        branches: &Branches,
        keyword: ShapeKeyword,
        value: &Value,
        depth: Depth,
        sink: &mut Sink,
    ) -> bool {
        let one_of = keyword == ShapeKeyword::OneOf;
        let holds = |branch: NodeId| self.eval(branch, value, depth.apply(), &mut Sink::verdict());
        let mut matched = 0;
        for &branch in &branches.nodes {
            if holds(branch) {
                if !one_of {
                    return true;
                }
                matched += 1;
                if matched > 1 && !sink.collect {
                    return false;
                }
            }
        }
        if matched == 1 {
            return true;
        }
        if !sink.collect {
            return false;
        }
        if matched > 1 {
            let list: Vec<String> = (0..branches.nodes.len())
                .filter(|&i| holds(branches.nodes[i]))
                .map(|i| i.to_string())
                .collect();
            let message = format!(
                "{} matches {matched} variants of `oneOf` (variants {}), expected exactly one",
                sink.subject(),
                list.join(", ")
            );
            sink.push(
                &self.locations[id as usize],
                keyword,
                Some("ambiguous_variant"),
                None,
                message,
            );
            return false;
        }
        self.explain_no_variant(id, branches, keyword, value, depth, sink);
        false
    }

    /// No variant matched: the violations of the variant the instance was meant for, if one
    /// stands out, else one violation at the instance.
    fn explain_no_variant(
        &self,
        id: NodeId,
        branches: &Branches,
        keyword: ShapeKeyword,
        value: &Value,
        depth: Depth,
        sink: &mut Sink,
    ) {
        let at = &self.locations[id as usize];
        if let Value::Object(object) = value {
            let tagged = Count::of(
                (0..branches.nodes.len()).filter(|&i| branches.tags[i].as_ref().is_some_and(|t| t.carried_by(object))),
            );
            // (A guard that reports: if the variant reports nothing, the next rules explain.)
            match (tagged, &branches.common_tag) {
                (Count::One(only), _) if self.report_branch(branches.nodes[only], value, depth, sink) => return,
                (Count::None, Some(member)) => {
                    self.explain_tag(at, branches, keyword, object, member, sink);
                    return;
                }
                _ => {}
            }
            let complete = Count::of(
                (0..branches.nodes.len())
                    .filter(|&i| self.requires_present(branches.nodes[i], object, 0) == Some(true)),
            );
            if let Count::One(only) = complete {
                if self.report_branch(branches.nodes[only], value, depth, sink) {
                    return;
                }
            }
        }
        let kind = kind_of(value);
        match Count::of((0..branches.nodes.len()).filter(|&i| branches.kinds[i] & kind != 0)) {
            Count::One(only) if self.report_branch(branches.nodes[only], value, depth, sink) => {}
            Count::None => {
                let all = branches.kinds.iter().fold(0, |acc, k| acc | k);
                let subject = if sink.pointer.is_empty() {
                    String::new()
                } else {
                    format!(" for {}", sink.subject())
                };
                let message = format!(
                    "expected {}{subject}, got {}",
                    describe_types(all),
                    describe_instance(value)
                );
                sink.push(at, keyword, Some("wrong_type"), None, message);
            }
            _ => {
                let message = format!(
                    "{} matches none of the {} variants of `{keyword}`",
                    sink.subject(),
                    branches.nodes.len()
                );
                sink.push(at, keyword, None, None, message);
            }
        }
    }

    /// Whether every member a subschema requires (itself, through `$ref` and `allOf`) is
    /// present in `object`; `None` if it requires none.
    fn requires_present(&self, id: NodeId, object: &Map<String, Value>, hops: u32) -> Option<bool> {
        let rules = self.rules(id)?;
        if hops > 64 {
            return None;
        }
        let mut requires = false;
        for name in &rules.required {
            if !object.contains_key(&**name) {
                return Some(false);
            }
            requires = true;
        }
        for &schema in rules.reference.iter().chain(&rules.all_of) {
            match self.requires_present(schema, object, hops + 1) {
                Some(false) => return Some(false),
                Some(true) => requires = true,
                None => {}
            }
        }
        requires.then_some(true)
    }

    /// Every variant is tagged by `member` and none carries the instance's tag: the tag is
    /// missing or unknown.
    fn explain_tag(
        &self,
        at: &str,
        branches: &Branches,
        keyword: ShapeKeyword,
        object: &Map<String, Value>,
        member: &str,
        sink: &mut Sink,
    ) {
        let expected: Vec<Value> = branches
            .tags
            .iter()
            .flatten()
            .flat_map(|t| t.values.iter().flatten().cloned())
            .collect();
        match object.get(member) {
            None => {
                let message = format!(
                    "missing required member `{member}` (the variant's tag: {})",
                    show_list(&expected)
                );
                sink.push(at, keyword, Some("missing_member"), Some(member), message);
            }
            Some(tag) => {
                let mark = sink.enter_member(member);
                let message = format!(
                    "`{member}` must be one of {}, got {}: no variant has this tag",
                    show_list(&expected),
                    show(tag)
                );
                sink.push(at, keyword, None, Some(member), message);
                sink.leave(mark);
            }
        }
    }

    /// Collects a branch's violations; whether it reported any.
    fn report_branch(&self, branch: NodeId, value: &Value, depth: Depth, sink: &mut Sink) -> bool {
        let before = sink.out.len();
        self.eval(branch, value, depth.apply(), sink);
        sink.out.len() > before
    }

    #[allow(clippy::too_many_arguments)]
    fn check_unevaluated(
        &self,
        id: NodeId,
        rules: &Rules,
        unevaluated: NodeId,
        object: &Map<String, Value>,
        value: &Value,
        depth: Depth,
        sink: &mut Sink,
    ) -> bool {
        let mut valid = true;
        let mut evaluated = Evaluated::default();
        self.evaluated_by_rules(rules, value, depth, &mut evaluated);
        if evaluated.all {
            return true;
        }
        for (name, member) in object {
            if evaluated.names.contains(&name.as_str()) {
                continue;
            }
            let within = if sink.collect && !sink.pointer.is_empty() && self.is_false(unevaluated) {
                format!(" in {}", sink.subject())
            } else {
                String::new()
            };
            let mark = sink.enter_member(name);
            if self.is_false(unevaluated) {
                fail!(
                    self,
                    sink,
                    valid,
                    id,
                    ShapeKeyword::UnevaluatedProperties,
                    Some(name),
                    "unknown member `{name}`{within}"
                );
            } else if !self.eval(unevaluated, member, depth.descend(), sink) {
                if !sink.collect {
                    return false;
                }
                valid = false;
            }
            sink.leave(mark);
        }
        valid
    }

    /// The members a schema object evaluates (2020-12 annotations of `properties`,
    /// `additionalProperties`, `unevaluatedProperties` and of the in-place applicators). A
    /// subschema that must hold (`$ref`, `allOf`, the `then`/`else` taken) counts whether or
    /// not it holds (if it fails, the instance is invalid anyway, and reporting its members as
    /// unknown would only add noise); of `anyOf`/`oneOf`, the variants that hold count, or all
    /// of them when none does.
    fn evaluated_by_rules<'s>(&'s self, rules: &'s Rules, value: &Value, depth: Depth, acc: &mut Evaluated<'s>) {
        if acc.all || depth.frames > MAX_FRAMES {
            return;
        }
        if rules.additional.is_some() {
            acc.all = true;
            return;
        }
        acc.names.extend(rules.properties.iter().map(|(name, _)| &**name));
        for &schema in rules.reference.iter().chain(&rules.all_of) {
            self.evaluated_by(schema, value, depth.apply(), acc);
        }
        for branches in [&rules.any_of, &rules.one_of].into_iter().flatten() {
            let holding: Vec<NodeId> = branches
                .nodes
                .iter()
                .copied()
                .filter(|&b| self.eval(b, value, depth.apply(), &mut Sink::verdict()))
                .collect();
            let counted = if holding.is_empty() { &branches.nodes } else { &holding };
            for &branch in counted {
                self.evaluated_by(branch, value, depth.apply(), acc);
            }
        }
        if let Some(condition) = rules.if_ {
            if self.eval(condition, value, depth.apply(), &mut Sink::verdict()) {
                self.evaluated_by(condition, value, depth.apply(), acc);
                if let Some(then) = rules.then {
                    self.evaluated_by(then, value, depth.apply(), acc);
                }
            } else if let Some(otherwise) = rules.else_ {
                self.evaluated_by(otherwise, value, depth.apply(), acc);
            }
        }
    }

    fn evaluated_by<'s>(&'s self, id: NodeId, value: &Value, depth: Depth, acc: &mut Evaluated<'s>) {
        if let Some(rules) = self.rules(id) {
            if rules.unevaluated.is_some() {
                acc.all = true;
                return;
            }
            self.evaluated_by_rules(rules, value, depth, acc);
        }
    }
}

/// How many items an iterator has: none, exactly one (which), or several.
enum Count {
    None,
    One(usize),
    Many,
}

impl Count {
    fn of(mut items: impl Iterator<Item = usize>) -> Count {
        match (items.next(), items.next()) {
            (None, _) => Count::None,
            (Some(only), None) => Count::One(only),
            _ => Count::Many,
        }
    }
}

/// The members of an object that some subschema evaluated.
#[derive(Default)]
struct Evaluated<'s> {
    all: bool,
    names: Vec<&'s str>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn codes(schema: Value, instance: Value) -> Vec<(String, &'static str)> {
        let shape = ShapeSchema::new(schema).unwrap();
        let violations = shape.check(&instance);
        assert_eq!(violations.is_empty(), shape.is_valid(&instance), "{violations:?}");
        violations.iter().map(|v| (v.pointer().to_owned(), v.code())).collect()
    }

    #[test]
    fn shape_numbers_compare_exactly() {
        assert_eq!(
            Num::of(&Number::from(u64::MAX)).cmp(Num::Float(1.8446744073709552e19)),
            Ordering::Less
        );
        assert_eq!(Num::Int(2).cmp(Num::Float(2.5)), Ordering::Less);
        assert_eq!(Num::Int(-3).cmp(Num::Float(-2.5)), Ordering::Less);
        assert_eq!(Num::Int(3).cmp(Num::Float(2.5)), Ordering::Greater);
        assert!(Num::of(&Number::from_f64(2.0).unwrap()).is_integer());
        assert!(json_eq(&json!([1, {"a": 2.0}]), &json!([1.0, {"a": 2}])));
    }

    #[test]
    fn shape_multiple_of_is_decimal() {
        let of = |v: Value, m: Value| {
            let b = bound(&m).unwrap();
            is_multiple(&serde_json::from_value(v).unwrap(), &b)
        };
        assert!(of(json!(0.3), json!(0.1)));
        assert!(of(json!(10), json!(2.5)));
        assert!(!of(json!(0.35), json!(0.1)));
        assert!(of(json!(1e300), json!(1)));
        assert!(!of(json!(7), json!(2)));
    }

    #[test]
    fn shape_integer_formats_are_ranges() {
        let schema = json!({"type": "integer", "format": "uint32"});
        assert_eq!(codes(schema.clone(), json!(4294967295u64)), []);
        assert_eq!(
            codes(schema.clone(), json!(4294967296u64)),
            [(String::new(), "out_of_range")]
        );
        assert_eq!(codes(schema, json!(-1)), [(String::new(), "out_of_range")]);
        assert_eq!(codes(json!({"format": "uint128"}), json!(3.0e38)), []);
        assert_eq!(
            codes(json!({"format": "uint128"}), json!(3.5e38)),
            [(String::new(), "out_of_range")]
        );
        assert_eq!(codes(json!({"format": "int8"}), json!("x")), []);
        assert_eq!(codes(json!({"format": "date-time"}), json!("x")), []);
    }

    #[test]
    fn shape_subjects_name_members_and_items() {
        let shape = ShapeSchema::new(json!({
            "properties": {"steps": {"items": {"type": "string"}}, "a/b": {"type": "null"}}
        }))
        .unwrap();
        let v = shape.check(&json!({"steps": ["x", 3], "a/b": 1}));
        let messages: Vec<(&str, &str)> = v.iter().map(|v| (v.pointer(), v.message())).collect();
        assert_eq!(
            messages,
            [
                ("/a~1b", "expected null for `a/b`, got an integer"),
                ("/steps/1", "expected a string for item 1 of `steps`, got an integer"),
            ]
        );
    }

    #[test]
    fn shape_ref_cycles_in_place_are_refused() {
        let err = ShapeSchema::new(json!({"$defs": {"a": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}))
            .unwrap_err();
        assert!(err.reason().contains("cycle"), "{err}");
        // Through the instance it is fine.
        assert!(ShapeSchema::new(json!({"items": {"$ref": "#"}})).is_ok());
    }
}
