//! Validation fused into deserialization: a *stream program* (generated beside the checks by
//! `pilotage-codegen/src/validators/stream.rs`) checked while a type is deserialized, token by
//! token, from JSON bytes or a `Value`, with no `Value` built first.
//!
//! [`deserialize`] wraps any serde `Deserializer`: whatever the type's `Deserialize` asks for,
//! every value the input holds passes through this module's visitor, which checks it against
//! the schema locations that apply to it (its *frame*: the members and items of the locations
//! that applied to its parent, then, at the value itself, the locations their applicators
//! name: `allOf`, `anyOf`, `oneOf`, `not`, `if` / `then` / `else` and `$ref`, all evaluated
//! together in the one pass). Members the type skips are read through the module's visitor as
//! well, so they are checked too, and so is a value no location applies to: serde_json skips
//! what a type ignores without checking that it is JSON (a lone surrogate, a byte that is no
//! UTF-8, a number past `f64`, nesting past 128), which the `Value` of the two-pass path
//! refuses. An `f32` is read as the `f64` a `Value` holds.
//!
//! A verdict is only ever given when it can be justified: a location whose keywords the
//! program does not hold (a generation-time [`Node::opaque`], such as `uniqueItems` or
//! `unevaluatedProperties`), a value the input delivers in a form JSON does not have (bytes,
//! an enum, a 128-bit number, serde_json's raw values and arbitrary-precision numbers) or a
//! value the type's visitor did not read, a member name read twice in one object (a `Value`
//! keeps the last), an error the type caught and read on from, or items and members it left
//! unread make the answer [`Verdict::Unknown`], and the caller
//! (`pilotage_types::validate::parse_slice`) then validates the two-pass way, which also collects every
//! violation with its pointer. So the fused path only ever says "valid" for what the generated
//! checks accept; its "invalid" and "unknown" both fall back to them. Every answer it gives is
//! compared with the generated checks' over the official suite
//! (`tests/json-schema-suite`, `stream_verdicts_agree`).

use std::cell::Cell;

use serde_core::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};

use super::pattern::Pattern;
use super::runtime::{self, Num};

/// The JSON types a [`Node`] accepts, as bits of [`Node::types`].
pub mod types {
    /// `null`.
    pub const NULL: u8 = 1;
    /// `boolean`.
    pub const BOOLEAN: u8 = 2;
    /// `integer`.
    pub const INTEGER: u8 = 4;
    /// `number`.
    pub const NUMBER: u8 = 8;
    /// `string`.
    pub const STRING: u8 = 16;
    /// `array`.
    pub const ARRAY: u8 = 32;
    /// `object`.
    pub const OBJECT: u8 = 64;
    /// Every type (no `type` keyword).
    pub const ANY: u8 = 127;
}

/// The compatible reading's rewrites of a location (`validate::widen_open_enums`), as bits of
/// [`Node::open`].
pub mod open {
    /// The location is widened: in the compatible reading it accepts any string, and its
    /// `type` is not checked.
    pub const WIDENED: u8 = 1;
    /// Its `enum` (all strings) is not checked in the compatible reading.
    pub const ENUM: u8 = 2;
    /// Its `anyOf` (all string `const`s) is not checked in the compatible reading.
    pub const ANY_OF: u8 = 4;
    /// Its `oneOf` (all string `const`s) is not checked in the compatible reading.
    pub const ONE_OF: u8 = 8;
}

/// A scalar of the schema (a `const`, an `enum` value).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Scalar {
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A string.
    Str(&'static str),
    /// A number, compared by value (`1.0` is `1`).
    Num(Num),
}

/// A numeric keyword of a [`Node`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Limit {
    /// `minimum`.
    Minimum,
    /// `maximum`.
    Maximum,
    /// `exclusiveMinimum`.
    ExclusiveMinimum,
    /// `exclusiveMaximum`.
    ExclusiveMaximum,
    /// `multipleOf`.
    MultipleOf,
}

/// One schema location of a stream program: its keywords, children by index in the program.
/// Built by generated code with the `const` builder methods, from [`Node::new`] (the schema
/// `true`).
#[derive(Debug, Clone, Copy)]
pub struct Node {
    opaque: bool,
    never: bool,
    trivial: bool,
    /// Whether it has an applicator (`allOf`, `anyOf`, `oneOf`, `not`, `if`).
    applies: bool,
    /// Neither opaque, `false`, nor with an applicator: its entry alone decides its value.
    plain: bool,
    /// Whether a scalar is checked beyond its type.
    scalar_checks: bool,
    types: u8,
    integer_draft4: bool,
    open: u8,
    constant: Option<Scalar>,
    enumeration: Option<&'static [Scalar]>,
    min_length: u64,
    max_length: u64,
    pattern: Option<&'static Pattern>,
    format: Option<fn(&str) -> bool>,
    limits: &'static [(Limit, Num)],
    prefix: &'static [u32],
    items: Option<u32>,
    min_items: u64,
    max_items: u64,
    properties: &'static [(&'static str, u32, u8)],
    pattern_properties: &'static [(&'static Pattern, u32)],
    additional: Option<u32>,
    required: u8,
    /// Whether a member's name matters (`properties`, `patternProperties`,
    /// `additionalProperties` or `required`).
    members: bool,
    /// The lengths (modulo 64) of the names of `properties`' table, as bits: a name of
    /// another length is not in it.
    lengths: u64,
    min_properties: u64,
    max_properties: u64,
    all_of: &'static [u32],
    any_of: &'static [u32],
    one_of: &'static [u32],
    not: Option<u32>,
    condition: Option<(u32, Option<u32>, Option<u32>)>,
    /// Its frame expanded by the generator (for a location with applicators).
    frame: Option<&'static Frame>,
}

impl Node {
    /// The schema `true`: accepts every value.
    pub const fn new() -> Self {
        Self {
            opaque: false,
            never: false,
            trivial: true,
            applies: false,
            plain: true,
            scalar_checks: false,
            types: types::ANY,
            integer_draft4: false,
            open: 0,
            constant: None,
            enumeration: None,
            min_length: 0,
            max_length: u64::MAX,
            pattern: None,
            format: None,
            limits: &[],
            prefix: &[],
            items: None,
            min_items: 0,
            max_items: u64::MAX,
            properties: &[],
            pattern_properties: &[],
            additional: None,
            required: 0,
            members: false,
            lengths: 0,
            min_properties: 0,
            max_properties: u64::MAX,
            all_of: &[],
            any_of: &[],
            one_of: &[],
            not: None,
            condition: None,
            frame: None,
        }
    }

    /// The schema `false`: accepts no value.
    pub const fn never() -> Self {
        let mut node = Self::new();
        node.never = true;
        node.plain = false;
        node.trivial = false;
        node
    }

    /// A location with a keyword the program does not hold: reaching it makes the verdict
    /// unknown (the caller validates the two-pass way).
    pub const fn opaque() -> Self {
        let mut node = Self::new();
        node.opaque = true;
        node.plain = false;
        node.trivial = false;
        node
    }

    /// `type`: the [`types`] accepted; `integer_draft4`: draft-04's integer (written without a
    /// fraction).
    pub const fn types(mut self, types: u8, integer_draft4: bool) -> Self {
        self.types = types;
        self.integer_draft4 = integer_draft4;
        self.trivial = false;
        self
    }

    /// The compatible reading's rewrites ([`open`]).
    pub const fn open(mut self, open: u8) -> Self {
        self.open = open;
        self.trivial = false;
        self
    }

    /// `const`.
    pub const fn constant(mut self, value: Scalar) -> Self {
        self.scalar_checks = true;
        self.constant = Some(value);
        self.trivial = false;
        self
    }

    /// `enum`.
    pub const fn enumeration(mut self, values: &'static [Scalar]) -> Self {
        self.scalar_checks = true;
        self.enumeration = Some(values);
        self.trivial = false;
        self
    }

    /// `minLength` and `maxLength` (`u64::MAX`: none).
    pub const fn length(mut self, min: u64, max: u64) -> Self {
        self.scalar_checks = true;
        self.min_length = min;
        self.max_length = max;
        self.trivial = false;
        self
    }

    /// `pattern`.
    pub const fn pattern(mut self, pattern: &'static Pattern) -> Self {
        self.scalar_checks = true;
        self.pattern = Some(pattern);
        self.trivial = false;
        self
    }

    /// An asserted `format`, by its check.
    pub const fn format(mut self, check: fn(&str) -> bool) -> Self {
        self.scalar_checks = true;
        self.format = Some(check);
        self.trivial = false;
        self
    }

    /// `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`.
    pub const fn limits(mut self, limits: &'static [(Limit, Num)]) -> Self {
        self.scalar_checks = true;
        self.limits = limits;
        self.trivial = false;
        self
    }

    /// `prefixItems` (or the array form of `items`), `items` for the rest, `minItems` and
    /// `maxItems` (`u64::MAX`: none).
    pub const fn items(mut self, prefix: &'static [u32], items: Option<u32>, min: u64, max: u64) -> Self {
        self.prefix = prefix;
        self.items = items;
        self.min_items = min;
        self.max_items = max;
        self.trivial = false;
        self
    }

    /// `properties` and `required` as one table of names, `patternProperties`,
    /// `additionalProperties`. Each name: its subschema (`u32::MAX`: named only by
    /// `required`) and its index in `required` (`u8::MAX`: not required). The names are sorted
    /// by length, then bytes (checked when the program is compiled).
    pub const fn properties(
        mut self,
        named: &'static [(&'static str, u32, u8)],
        patterns: &'static [(&'static Pattern, u32)],
        additional: Option<u32>,
    ) -> Self {
        let mut i = 0;
        let mut lengths = 0u64;
        while i < named.len() {
            lengths = next_name(lengths, if i == 0 { None } else { Some(named[i - 1].0) }, named[i].0);
            i += 1;
        }
        self.lengths = lengths;
        self.properties = named;
        self.pattern_properties = patterns;
        self.additional = additional;
        self.members = true;
        self.trivial = false;
        self
    }

    /// How many names `required` lists (at most 64, each in [`Self::properties`]'s table),
    /// `minProperties` and `maxProperties` (`u64::MAX`: none).
    pub const fn members(mut self, required: u8, min: u64, max: u64) -> Self {
        assert!(required <= 64, "stream program: more than 64 required members");
        self.required = required;
        self.min_properties = min;
        self.max_properties = max;
        self.trivial = false;
        self
    }

    /// `allOf` (and a `$ref`, which applies its target to the same value).
    pub const fn all_of(mut self, nodes: &'static [u32]) -> Self {
        self.applies = true;
        self.plain = false;
        self.all_of = nodes;
        self.trivial = false;
        self
    }

    /// `anyOf`.
    pub const fn any_of(mut self, nodes: &'static [u32]) -> Self {
        self.applies = true;
        self.plain = false;
        self.any_of = nodes;
        self.trivial = false;
        self
    }

    /// `oneOf`.
    pub const fn one_of(mut self, nodes: &'static [u32]) -> Self {
        self.applies = true;
        self.plain = false;
        self.one_of = nodes;
        self.trivial = false;
        self
    }

    /// `not`.
    pub const fn not(mut self, node: u32) -> Self {
        self.applies = true;
        self.plain = false;
        self.not = Some(node);
        self.trivial = false;
        self
    }

    /// `if`, `then`, `else`.
    pub const fn condition(mut self, condition: u32, then: Option<u32>, otherwise: Option<u32>) -> Self {
        self.applies = true;
        self.plain = false;
        self.condition = Some((condition, then, otherwise));
        self.trivial = false;
        self
    }
}

impl Node {
    /// The frame this location expands to when it is the only one applying to a value
    /// ([`Frame`], computed by the generator).
    pub const fn frame(mut self, frame: &'static Frame) -> Self {
        self.frame = Some(frame);
        self
    }
}

/// A frame expanded by the generator: the locations `Run::begin` pushes for a set of locations
/// applying to one value (its *roots*: one location with applicators, or the locations the
/// members of one name push), in its order, and the member names of all of them in one table.
/// A value whose roots are those reads its frame from here, and each member name is looked up
/// once, where it would be looked up in the table of every location of the frame; the member's
/// own frame comes with the name.
#[derive(Debug, Clone, Copy)]
pub struct Frame {
    /// How many roots it has.
    roots: u32,
    /// Whether the compatible reading expands it the same (no `anyOf` / `oneOf` it skips).
    compatible_too: bool,
    /// Whether one of its locations is opaque or the schema `false` (checked as it begins).
    guarded: bool,
    /// What the roots apply, breadth first: each location's node, the place in the frame of
    /// the location applying it, and how ([`Frame::new`]).
    applied: &'static [(u32, u16, u8)],
    /// The lengths (modulo 64) of the names of [`Self::names`], as bits.
    lengths: u64,
    /// Each member name of the frame's locations (sorted by length, then bytes), with every
    /// location naming it: its place in the frame, its subschema's node (`u32::MAX`: named
    /// only by `required`) and its index in `required` (`u8::MAX`: not required); then the
    /// frame of the member's value when every one of them pushes its subschema.
    names: &'static [FrameName],
    /// The places of the locations with `patternProperties` or `additionalProperties`, read
    /// for every member.
    rest: &'static [u16],
}

/// A row of [`Frame`]'s names: the name, the locations naming it, the member's frame.
pub type FrameName = (&'static str, &'static [(u16, u32, u8)], Option<&'static Frame>);

impl Frame {
    /// A frame of `roots` roots applying `applied` (each: node, the place of the location
    /// applying it, and how: 1 `allOf` or `$ref`, 2 `anyOf`, 3 `oneOf`, 4 `not`, 5 `if`,
    /// 6 `then`, 7 `else`); `compatible_too`: the compatible reading expands it the same;
    /// `guarded`: one of its locations is opaque or the schema `false`; `names` sorted by
    /// length, then bytes (checked when the program is compiled).
    pub const fn new(
        roots: u32,
        compatible_too: bool,
        guarded: bool,
        applied: &'static [(u32, u16, u8)],
        names: &'static [FrameName],
        rest: &'static [u16],
    ) -> Self {
        let mut i = 0;
        let mut lengths = 0u64;
        while i < names.len() {
            lengths = next_name(lengths, if i == 0 { None } else { Some(names[i - 1].0) }, names[i].0);
            i += 1;
        }
        i = 0;
        while i < applied.len() {
            assert!(
                applied[i].2 >= 1 && applied[i].2 <= 7 && (applied[i].1 as usize) < roots as usize + i,
                "stream program: a frame's location applied out of order"
            );
            i += 1;
        }
        // Every place named is in the frame.
        let len = roots as usize + applied.len();
        i = 0;
        while i < names.len() {
            let mut j = 0;
            while j < names[i].1.len() {
                assert!(
                    (names[i].1[j].0 as usize) < len,
                    "stream program: a frame's name out of it"
                );
                j += 1;
            }
            i += 1;
        }
        i = 0;
        while i < rest.len() {
            assert!((rest[i] as usize) < len, "stream program: a frame's location out of it");
            i += 1;
        }
        Self {
            roots,
            compatible_too,
            guarded,
            applied,
            lengths,
            names,
            rest,
        }
    }

    /// How many locations the frame holds.
    fn len(&self) -> usize {
        self.roots as usize + self.applied.len()
    }
}

impl Default for Node {
    fn default() -> Self {
        Self::new()
    }
}

/// One definition's entry into a stream program (what `SchemaDef::STREAM` holds).
#[derive(Debug, Clone, Copy)]
pub struct Stream {
    program: &'static [Node],
    root: u32,
}

impl Stream {
    /// The node `root` of `program`.
    pub const fn new(program: &'static [Node], root: u32) -> Self {
        Self { program, root }
    }
}

/// What a fused run concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// Every value was checked and holds.
    Valid,
    /// A value does not hold.
    Invalid,
    /// The program could not decide (see the [module docs](self)).
    Unknown,
}

impl Verdict {
    /// Whether the value is valid, when the program decided.
    pub fn known(self) -> Option<bool> {
        match self {
            Verdict::Valid => Some(true),
            Verdict::Invalid => Some(false),
            Verdict::Unknown => None,
        }
    }
}

/// How a value's schema locations are combined into the verdict of the location that applied
/// them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A location applied to a member or an item (or the run's root): its verdict is and-ed
    /// into its owner's.
    Child,
    All,
    Any,
    One,
    Not,
    If,
    Then,
    Else,
}

/// The entry's own checks hold so far.
const OK: u16 = 1;
/// The value of its frame was read through the wrapper.
const VISITED: u16 = 2;
/// It has an `anyOf` to satisfy.
const NEEDS_ANY: u16 = 4;
/// It has a `oneOf` to satisfy.
const NEEDS_ONE: u16 = 8;
/// Its `not` subschema holds.
const NOT_HOLDS: u16 = 16;
/// It has `if`; and whether `if` holds, `then` fails, `else` fails.
const HAS_IF: u16 = 32;
const IF_HOLDS: u16 = 64;
const THEN_FAILS: u16 = 128;
const ELSE_FAILS: u16 = 256;

/// One schema location applying to one value being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    /// The required members seen, by their index in the node's `required`.
    required: u64,
    node: u32,
    /// The entry whose verdict this one's feeds (`u32::MAX`: none).
    owner: u32,
    flags: u16,
    role: Role,
    /// How many `anyOf` / `oneOf` branches hold (saturating).
    any: u8,
    one: u8,
}

impl Entry {
    fn new(node: u32, owner: u32, role: Role) -> Self {
        Self {
            required: 0,
            node,
            owner,
            flags: OK,
            role,
            any: 0,
            one: 0,
        }
    }

    #[inline]
    fn ok(&self) -> bool {
        self.flags & OK != 0
    }

    #[inline]
    fn fail(&mut self) {
        self.flags &= !OK;
    }

    fn verdict(&self) -> bool {
        let f = self.flags;
        f & OK != 0
            && (f & NEEDS_ANY == 0 || self.any > 0)
            && (f & NEEDS_ONE == 0 || self.one == 1)
            && f & NOT_HOLDS == 0
            && (f & HAS_IF == 0
                || if f & IF_HOLDS != 0 {
                    f & THEN_FAILS == 0
                } else {
                    f & ELSE_FAILS == 0
                })
    }
}

/// The error that stops a [`parse_until_invalid`] run.
const INVALID: &str = "invalid against the schema (read again to name every violation)";

/// The most schema locations one value may have applied to it at once (a guard: generation
/// refuses `$ref` cycles on one instance, so expansion always ends).
const MAX_FRAME: usize = 4096;

/// The most schema locations a run holds at once, over every frame from the root to the value
/// being read (a guard: a location that applies twice to a member, through `properties` and
/// `patternProperties` both, doubles the frame at each level of a recursive schema, so a
/// document 35 levels deep would need 2^35 entries; past this, about 1.5 MB, the answer is
/// [`Verdict::Unknown`]).
const MAX_ENTRIES: usize = 1 << 16;

/// A scalar of the instance.
#[derive(Clone, Copy)]
enum Item<'a> {
    Null,
    Bool(bool),
    Str(&'a str),
    Num(&'a Number),
}

#[derive(Debug)]
struct Run {
    program: &'static [Node],
    compatible: bool,
    entries: Vec<Entry>,
    unknown: bool,
    /// Whether to stop reading once the document is known invalid ([`parse_until_invalid`]).
    stop_when_invalid: bool,
    /// The document is known invalid: a location failed whose failure reaches the root
    /// through `allOf`s, `$ref`s, members and items only (no `anyOf`, `oneOf`, `not` or
    /// condition in between).
    invalid: bool,
    /// The frame of the object whose member name is being read.
    object: (usize, usize),
    /// That frame as the generator expanded it ([`Frame`]).
    frame: Option<&'static Frame>,
    /// The frame of the member just named, with where its locations start: what the
    /// generator expanded for them, when they are what the name pushed.
    pending: Option<(usize, &'static Frame)>,
    /// Where the locations of the member whose name was just read start (`None`: no name
    /// was read as a string).
    named: Option<usize>,
    /// A hash of each member name read in the objects being read, innermost last (each
    /// object's from where the length was when it opened): a name that comes twice in one
    /// object makes the answer unknown ([`Run::close_names`]).
    names: Vec<u64>,
    /// The bits of the hashes of the names read in the object whose member name is being
    /// read (`hash >> 58`), and whether one came twice: only then can a name have come twice
    /// ([`Run::close_names`]). Each object keeps its own ([`Members`]).
    bloom: u64,
    repeated: bool,
}

/// The node an index out of the program reads as.
static OPAQUE: Node = Node::opaque();

thread_local! {
    /// A run's buffers (its entries, the hashes of its names), kept by the thread between runs
    /// so that a parse allocates none once warm (a third of what the names cost: measured
    /// 2,511 instructions a parse of the 9.4 benchmark's document with a new `Vec` for them,
    /// about 1,000 of it in allocating and growing).
    static BUFFERS: Cell<(Vec<Entry>, Vec<u64>)> = const { Cell::new((Vec::new(), Vec::new())) };
}

/// The most elements of each buffer a thread keeps ([`BUFFERS`]): 96 KiB of entries, 32 KiB
/// of hashes; a run that grew them past that frees them.
const KEPT_BUFFER: usize = 4096;

impl Drop for Run {
    fn drop(&mut self) {
        let entries = std::mem::take(&mut self.entries);
        let names = std::mem::take(&mut self.names);
        if entries.capacity() <= KEPT_BUFFER && names.capacity() <= KEPT_BUFFER {
            // During the thread's teardown there is nowhere to keep them: they are freed.
            let _ = BUFFERS.try_with(|kept| kept.set((entries, names)));
        }
    }
}

impl Run {
    /// A run of `program` (the compatible reading if `compatible`) starting from `entries`,
    /// with `names` as the buffer of its names' hashes (empty); it reads on when the document
    /// is known invalid unless [`Run::stop_when_invalid`] is set.
    fn new(program: &'static [Node], compatible: bool, entries: Vec<Entry>, names: Vec<u64>) -> Self {
        Run {
            program,
            compatible,
            entries,
            unknown: false,
            stop_when_invalid: false,
            invalid: false,
            object: (0, 0),
            frame: None,
            pending: None,
            named: None,
            names,
            bloom: 0,
            repeated: false,
        }
    }

    /// The node at `index` (out of the program: opaque).
    #[inline]
    fn at(&self, index: u32) -> &'static Node {
        let program: &'static [Node] = self.program;
        program.get(index as usize).unwrap_or(&OPAQUE)
    }

    /// Pushes `node` as a location applying to the member or item about to be read, unless it
    /// accepts everything. Past [`MAX_ENTRIES`] locations in all, the answer is unknown
    /// instead.
    #[inline]
    fn push_child(&mut self, node: u32, owner: usize) {
        if !self.at(node).trivial {
            if self.entries.len() >= MAX_ENTRIES {
                self.unknown = true;
                return;
            }
            self.entries.push(Entry::new(node, owner as u32, Role::Child));
        }
    }

    /// Starts the value whose frame starts at `start`: marks its roots visited and applies the
    /// applicators of every location to the same value. Returns the end of the roots and of
    /// the frame.
    fn begin(&mut self, start: usize) -> (usize, usize, Option<&'static Frame>) {
        let roots = self.entries.len();
        if roots == start + 1 {
            // One plain location (the common case): nothing to expand.
            let node = self.at(self.entries[start].node);
            if node.plain {
                self.entries[start].flags |= VISITED;
                self.pending = None;
                return (roots, roots, None);
            }
        }
        for entry in &mut self.entries[start..roots] {
            entry.flags |= VISITED;
        }
        if let Some(frame) = self.expanded(start, roots) {
            #[cfg(debug_assertions)]
            let before = self.scratch(roots);
            self.apply_frame(start, frame);
            #[cfg(debug_assertions)]
            before.check_frame(self, start);
            return (roots, self.entries.len(), Some(frame));
        }
        self.expand_at_run_time(start);
        (roots, self.entries.len(), None)
    }

    /// [`Run::begin`]'s expansion when the generator expanded no frame for the roots: each
    /// location from `start` on, breadth first, pushes what its applicators apply to the same
    /// value (an opaque one makes the answer unknown, the schema `false` fails).
    fn expand_at_run_time(&mut self, start: usize) {
        let mut i = start;
        while i < self.entries.len() {
            let node = self.at(self.entries[i].node);
            if node.opaque {
                self.unknown = true;
            }
            if node.never {
                self.entries[i].fail();
            }
            if node.applies {
                if self.entries.len() - start > MAX_FRAME {
                    self.unknown = true;
                    break;
                }
                self.apply(i, node);
            }
            i += 1;
        }
    }

    /// The frame the generator expanded for the roots `start..roots`, if there is one: the
    /// member's (see [`Run::member_in_frame`]) or the one root's.
    #[inline]
    fn expanded(&mut self, start: usize, roots: usize) -> Option<&'static Frame> {
        let frame = match self.pending.take() {
            Some((at, frame)) if at == start => Some(frame),
            _ if roots == start + 1 => self.at(self.entries[start].node).frame,
            _ => None,
        }?;
        (frame.roots as usize == roots - start && (frame.compatible_too || !self.compatible)).then_some(frame)
    }

    /// In debug builds (the tests): a run of the same program holding a copy of the first
    /// `len` entries and nothing else, to do again at run time what a frame the generator
    /// expanded did ([`Run::check_frame`], [`Run::check_member`]).
    #[cfg(debug_assertions)]
    fn scratch(&self, len: usize) -> Run {
        Run::new(self.program, self.compatible, self.entries[..len].to_vec(), Vec::new())
    }

    /// In debug builds: that the frame the generator expanded, applied by `run` from `start`,
    /// did what [`Run::expand_at_run_time`] does on `self`, a copy of the entries taken
    /// before: the same entries (locations, owners, roles, flags), and an unknown answer if
    /// it gives one.
    #[cfg(debug_assertions)]
    fn check_frame(mut self, run: &Run, start: usize) {
        self.expand_at_run_time(start);
        assert_eq!(
            run.entries[start..],
            self.entries[start..],
            "stream program: a frame expanded by the generator differs from the run's"
        );
        assert!(
            run.unknown || !self.unknown,
            "stream program: a frame expanded by the generator misses an opaque location"
        );
    }

    /// In debug builds: that [`Run::member_in_frame`], called by `run` for `key`, pushed
    /// what [`Run::member_by_location`] pushes on `self`, a copy of the entries taken before
    /// (the same locations, in another order), and set the same `required` bits on the
    /// object's locations `start..end`.
    #[cfg(debug_assertions)]
    fn check_member(mut self, run: &Run, (start, end): (usize, usize), key: &str, length: u64) {
        let child = self.entries.len();
        self.member_by_location(start, end, key, length);
        if run.entries.len() >= MAX_ENTRIES || self.unknown {
            // Past the bound, what was pushed depends on the order.
            return;
        }
        let sorted = |entries: &[Entry]| {
            let mut pushed: Vec<(u32, u32, Role, u16)> = entries
                .iter()
                .map(|entry| (entry.node, entry.owner, entry.role, entry.flags))
                .collect();
            pushed.sort_unstable_by_key(|&(node, owner, _, flags)| (node, owner, flags));
            pushed
        };
        assert_eq!(
            sorted(&run.entries[child..]),
            sorted(&self.entries[child..]),
            "stream program: a frame's member table pushes other locations than its locations'"
        );
        assert_eq!(
            run.entries[start..end],
            self.entries[start..end],
            "stream program: a frame's member table sets other `required` bits than its locations'"
        );
    }

    /// [`Run::begin`]'s expansion, read from `frame`.
    fn apply_frame(&mut self, start: usize, frame: &'static Frame) {
        /// Each of [`Frame::new`]'s numbers: the role, and the flag it sets on its owner.
        const ROLES: [(Role, u16); 8] = [
            (Role::All, 0),
            (Role::All, 0),
            (Role::Any, NEEDS_ANY),
            (Role::One, NEEDS_ONE),
            (Role::Not, 0),
            (Role::If, HAS_IF),
            (Role::Then, 0),
            (Role::Else, 0),
        ];
        for &(node, owner, role) in frame.applied {
            let owner = start + owner as usize;
            let (role, need) = ROLES[role as usize & 7];
            self.entries[owner].flags |= need;
            self.entries.push(Entry::new(node, owner as u32, role));
        }
        if frame.guarded {
            for i in start..self.entries.len() {
                let node = self.at(self.entries[i].node);
                if node.opaque {
                    self.unknown = true;
                }
                if node.never {
                    self.entries[i].fail();
                }
            }
        }
    }

    /// Pushes the locations `node`'s applicators apply to the value of `owner`.
    fn apply(&mut self, owner: usize, node: &'static Node) {
        let widened = self.compatible && node.open & open::WIDENED != 0;
        let id = owner as u32;
        for &child in node.all_of {
            self.entries.push(Entry::new(child, id, Role::All));
        }
        let skip_any = widened && node.open & open::ANY_OF != 0;
        if !node.any_of.is_empty() && !skip_any {
            self.entries[owner].flags |= NEEDS_ANY;
            for &child in node.any_of {
                self.entries.push(Entry::new(child, id, Role::Any));
            }
        }
        let skip_one = widened && node.open & open::ONE_OF != 0;
        if !node.one_of.is_empty() && !skip_one {
            self.entries[owner].flags |= NEEDS_ONE;
            for &child in node.one_of {
                self.entries.push(Entry::new(child, id, Role::One));
            }
        }
        if let Some(child) = node.not {
            self.entries.push(Entry::new(child, id, Role::Not));
        }
        if let Some((condition, then, otherwise)) = node.condition {
            self.entries[owner].flags |= HAS_IF;
            self.entries.push(Entry::new(condition, id, Role::If));
            if let Some(then) = then {
                self.entries.push(Entry::new(then, id, Role::Then));
            }
            if let Some(otherwise) = otherwise {
                self.entries.push(Entry::new(otherwise, id, Role::Else));
            }
        }
    }

    /// Whether `node` accepts the instance's type `kind` (with `integer` telling whether a
    /// number is an integer in the node's draft).
    #[inline]
    fn type_holds(&self, node: &Node, kind: u8, integer: impl Fn(bool) -> bool) -> bool {
        if self.compatible && node.open & open::WIDENED != 0 {
            return kind == types::STRING;
        }
        if node.types & kind != 0 {
            return true;
        }
        kind == types::NUMBER && node.types & types::INTEGER != 0 && integer(node.integer_draft4)
    }

    /// Checks the scalar `item` against every location of its frame, then combines the
    /// frame's verdicts.
    fn scalar(&mut self, start: usize, item: Item<'_>) {
        if self.entries.len() == start + 1 {
            // One plain location (the common case): no frame to expand or combine.
            let entry = self.entries[start];
            let node = self.at(entry.node);
            if node.plain {
                let mut flags = entry.flags | VISITED;
                if entry.ok() && !self.scalar_holds(node, item) {
                    flags &= !OK;
                }
                self.entries[start].flags = flags;
                return;
            }
        }
        let (roots, end, _) = self.begin(start);
        for i in start..end {
            let entry = self.entries[i];
            if entry.ok() && !self.scalar_holds(self.at(entry.node), item) {
                self.entries[i].fail();
            }
        }
        self.finish(start, roots);
    }

    fn scalar_holds(&self, node: &Node, item: Item<'_>) -> bool {
        let kind = match item {
            Item::Null => types::NULL,
            Item::Bool(_) => types::BOOLEAN,
            Item::Str(_) => types::STRING,
            Item::Num(_) => types::NUMBER,
        };
        let integer = |draft4: bool| match item {
            Item::Num(n) => integer(n, draft4),
            _ => false,
        };
        if !self.type_holds(node, kind, integer) {
            return false;
        }
        if !node.scalar_checks {
            // `type` alone, if anything.
            return true;
        }
        let number = match item {
            Item::Num(n) => Some(Value::Number(n.clone())),
            _ => None,
        };
        let equals = |scalar: &Scalar| match (scalar, item) {
            (Scalar::Null, Item::Null) => true,
            (Scalar::Bool(a), Item::Bool(b)) => *a == b,
            (Scalar::Str(a), Item::Str(b)) => *a == b,
            (Scalar::Num(a), Item::Num(_)) => number.as_ref().is_some_and(|v| runtime::is_number(v, *a)),
            _ => false,
        };
        if let Some(constant) = &node.constant {
            if !equals(constant) {
                return false;
            }
        }
        if let Some(values) = node.enumeration {
            let open = self.compatible && node.open & open::WIDENED != 0 && node.open & open::ENUM != 0;
            if !open && !values.iter().any(equals) {
                return false;
            }
        }
        match item {
            Item::Str(s) => {
                if node.min_length > 0 || node.max_length < u64::MAX {
                    let length = runtime::length(s);
                    if length < node.min_length || length > node.max_length {
                        return false;
                    }
                }
                if node.pattern.is_some_and(|p| !p.is_match(s)) {
                    return false;
                }
                if node.format.is_some_and(|f| !f(s)) {
                    return false;
                }
            }
            Item::Num(n) => {
                for &(limit, bound) in node.limits {
                    let order = runtime::compare(n, bound);
                    let holds = match limit {
                        Limit::Minimum => order != Some(std::cmp::Ordering::Less),
                        Limit::Maximum => order != Some(std::cmp::Ordering::Greater),
                        Limit::ExclusiveMinimum => order == Some(std::cmp::Ordering::Greater),
                        Limit::ExclusiveMaximum => order == Some(std::cmp::Ordering::Less),
                        Limit::MultipleOf => runtime::is_multiple_of(n, bound),
                    };
                    if !holds {
                        return false;
                    }
                }
            }
            Item::Null | Item::Bool(_) => {}
        }
        true
    }

    /// Starts an object or an array: the type checks of every location of the frame (a
    /// `const` or an `enum` here holds only scalars, so it fails).
    fn open_container(&mut self, start: usize, kind: u8) -> (usize, usize, Option<&'static Frame>) {
        let (roots, end, frame) = self.begin(start);
        for i in start..end {
            let entry = self.entries[i];
            if !entry.ok() {
                continue;
            }
            let node = self.at(entry.node);
            let holds = self.type_holds(node, kind, |_| false)
                && node.constant.is_none()
                && node
                    .enumeration
                    .is_none_or(|_| self.compatible && node.open & open::WIDENED != 0 && node.open & open::ENUM != 0);
            if !holds {
                self.entries[i].fail();
            }
        }
        (roots, end, frame)
    }

    /// Pushes the locations applying to the member `key` of the object whose frame is
    /// `self.object`; records where they start.
    fn member(&mut self, key: &str) {
        let child = self.entries.len();
        self.named = Some(child);
        if self.object.0 < self.object.1 {
            // Only a frame with locations can read a name twice differently from a `Value`.
            let hash = name_hash(key.as_bytes());
            let bit = 1u64 << (hash >> 58);
            self.repeated |= self.bloom & bit != 0;
            self.bloom |= bit;
            self.names.push(hash);
        }
        if key.starts_with("$serde_json::private::") {
            // serde_json's raw values and arbitrary-precision numbers arrive as such a map.
            self.unknown = true;
            return;
        }
        let (start, end) = self.object;
        let length = 1u64 << (key.len() % 64);
        self.pending = None;
        if let Some(frame) = self.frame {
            #[cfg(debug_assertions)]
            let before = self.scratch(child);
            self.member_in_frame(frame, start, key, length);
            #[cfg(debug_assertions)]
            before.check_member(self, (start, end), key, length);
            return;
        }
        self.member_by_location(start, end, key, length);
    }

    /// [`Run::member`] when the generator expanded no frame for the object: the name looked
    /// up in the table of each location `start..end` (`length`: the bit of the name's length
    /// in the tables' `lengths`).
    fn member_by_location(&mut self, start: usize, end: usize, key: &str, length: u64) {
        for i in start..end {
            let entry = self.entries[i];
            if !entry.ok() {
                continue;
            }
            let node = self.at(entry.node);
            if !node.members {
                continue;
            }
            let mut matched = false;
            let found = if node.lengths & length != 0 {
                find_name(node.properties, key)
            } else {
                None
            };
            if let Some(&(_, target, required)) = found {
                if required != u8::MAX {
                    self.entries[i].required |= 1 << required;
                }
                if target != u32::MAX {
                    matched = true;
                    self.push_child(target, i);
                }
            }
            self.push_unnamed(i, node, key, matched);
        }
    }

    /// The `patternProperties` and `additionalProperties` of the location `i` (its node
    /// `node`) for the member `key`: pushes the subschema of each pattern that matches the
    /// name, and, when none does and `properties` did not name it (`named`), the additional
    /// one. (Always inlined: it is the loop of both callers, measured 0.5 % of a 9.4 parse
    /// as a call.)
    #[inline(always)]
    fn push_unnamed(&mut self, i: usize, node: &'static Node, key: &str, named: bool) {
        let mut matched = named;
        for &(pattern, target) in node.pattern_properties {
            if pattern.is_match(key) {
                matched = true;
                self.push_child(target, i);
            }
        }
        if !matched {
            if let Some(target) = node.additional {
                self.push_child(target, i);
            }
        }
    }

    /// [`Run::member`] in a frame the generator expanded: the name looked up once, in the
    /// frame's table; the locations with `patternProperties` or `additionalProperties` read
    /// one by one. The same locations are pushed as [`Run::member`] pushes them, in another
    /// order (which no verdict depends on).
    fn member_in_frame(&mut self, frame: &'static Frame, start: usize, key: &str, length: u64) {
        let child = self.entries.len();
        let (hits, expanded): (&'static [(u16, u32, u8)], _) = match frame.lengths & length {
            0 => (&[], None),
            _ => find_name(frame.names, key).map_or((&[], None), |entry| (entry.1, entry.2)),
        };
        // The member's frame holds when every location naming it pushed its subschema.
        let mut whole = true;
        for &(place, target, required) in hits {
            let i = start + place as usize;
            if !self.entries[i].ok() {
                whole = false;
                continue;
            }
            if required != u8::MAX {
                self.entries[i].required |= 1 << required;
            }
            if target != u32::MAX {
                self.push_child(target, i);
            }
        }
        let named = self.entries.len();
        for &place in frame.rest {
            let i = start + place as usize;
            let entry = self.entries[i];
            if !entry.ok() {
                continue;
            }
            let node = self.at(entry.node);
            let named = hits.iter().any(|hit| hit.0 == place && hit.1 != u32::MAX);
            self.push_unnamed(i, node, key, named);
        }
        // (and nothing else did).
        if let (Some(expanded), true) = (expanded, whole && named == self.entries.len()) {
            if expanded.roots as usize == named - child {
                self.pending = Some((child, expanded));
            }
        }
    }

    /// An error from the reading of a value, on its way out: the frames it leaves unfinished
    /// (their counts, `required`, applicators) decide nothing, and a type may catch the error
    /// and read on (a lenient field's `deserialize_with`), so the answer is unknown.
    #[cold]
    fn failed<E>(&mut self, error: E) -> E {
        self.unknown = true;
        error
    }

    /// Ends the names of an object whose first is at `start` in [`Run::names`]: a name read
    /// twice (or two whose hashes collide) makes the answer unknown. A `Value` keeps only the
    /// last member of a name, and counts it once, while the run checked (and counted) every
    /// one: under `not`, `oneOf`, `if` or `minProperties` that could answer valid a document
    /// whose `Value` is not, and the type (a map keeps the last one too) would not tell.
    #[inline]
    fn close_names(&mut self, start: usize, repeated: bool) {
        if repeated && self.names.len() > start + 1 && repeats(&mut self.names[start..]) {
            self.unknown = true;
        }
        self.names.truncate(start);
    }

    /// Pushes the locations applying to the item `index` of the array whose frame is
    /// `start..end`; returns where they start.
    fn element(&mut self, start: usize, end: usize, index: usize) -> usize {
        let child = self.entries.len();
        self.pending = None;
        for i in start..end {
            let entry = self.entries[i];
            if !entry.ok() {
                continue;
            }
            let node = self.at(entry.node);
            match node.prefix.get(index) {
                Some(&target) => self.push_child(target, i),
                None => {
                    if let Some(target) = node.items {
                        self.push_child(target, i);
                    }
                }
            }
        }
        child
    }

    /// Ends a member or an item whose locations were pushed at `child`: and-s each one's
    /// verdict into its owner's, and drops them.
    fn end_child(&mut self, child: usize) {
        for i in child..self.entries.len() {
            let entry = self.entries[i];
            if entry.flags & VISITED == 0 {
                // The type's visitor did not read this value through the wrapper.
                self.unknown = true;
            }
            if !entry.ok() {
                if let Some(owner) = self.entries.get_mut(entry.owner as usize) {
                    owner.fail();
                }
                if self.stop_when_invalid && !self.invalid {
                    self.invalid = self.fails_the_root(entry.owner);
                }
            }
        }
        self.entries.truncate(child);
    }

    /// Whether the failure of the entry `failed` makes the root fail whatever is read next:
    /// its verdict reaches the root through `allOf`s and members only.
    fn fails_the_root(&self, mut failed: u32) -> bool {
        loop {
            let Some(entry) = self.entries.get(failed as usize) else {
                return false;
            };
            if !matches!(entry.role, Role::Child | Role::All) {
                return false;
            }
            if entry.owner == u32::MAX {
                return true;
            }
            failed = entry.owner;
        }
    }

    /// Ends an object or an array of `count` members or items: the count against every location
    /// of the frame (and, for an object, its `required`), then its verdicts.
    fn close_container(&mut self, start: usize, roots: usize, end: usize, object: bool, count: u64) {
        for i in start..end {
            let entry = self.entries[i];
            if !entry.ok() {
                continue;
            }
            let node = self.at(entry.node);
            let ok = if object {
                let all = if node.required >= 64 {
                    u64::MAX
                } else {
                    (1u64 << node.required) - 1
                };
                entry.required == all && count >= node.min_properties && count <= node.max_properties
            } else {
                count >= node.min_items && count <= node.max_items
            };
            if !ok {
                self.entries[i].fail();
            }
        }
        self.finish(start, roots);
    }

    /// Combines the verdicts of the frame `start..` into its roots (the frame's other entries,
    /// those the applicators added, are dropped).
    fn finish(&mut self, start: usize, roots: usize) {
        for i in (roots..self.entries.len()).rev() {
            let entry = self.entries[i];
            let verdict = entry.verdict();
            let Some(owner) = self.entries.get_mut(entry.owner as usize) else {
                self.unknown = true;
                continue;
            };
            match entry.role {
                Role::All | Role::Child => {
                    if !verdict {
                        owner.fail();
                    }
                }
                Role::Any => owner.any = owner.any.saturating_add(u8::from(verdict)),
                Role::One => owner.one = owner.one.saturating_add(u8::from(verdict)),
                Role::Not => {
                    if verdict {
                        owner.flags |= NOT_HOLDS;
                    }
                }
                Role::If => {
                    if verdict {
                        owner.flags |= IF_HOLDS;
                    }
                }
                Role::Then => {
                    if !verdict {
                        owner.flags |= THEN_FAILS;
                    }
                }
                Role::Else => {
                    if !verdict {
                        owner.flags |= ELSE_FAILS;
                    }
                }
            }
        }
        self.entries.truncate(roots);
        for i in start..roots {
            if !self.entries[i].verdict() {
                self.entries[i].fail();
            }
        }
    }
}

/// One name of a table of member names ([`Node::properties`], [`Frame::new`]) as the program
/// is compiled: checks that it comes after the one before (`previous`) in [`name_order`], and
/// returns `lengths`, the bits of the table's name lengths, with its own.
const fn next_name(lengths: u64, previous: Option<&str>, name: &str) -> u64 {
    if let Some(previous) = previous {
        assert!(
            name_order(previous, name) < 0,
            "stream program: member names out of order (a node's table or a frame's)"
        );
    }
    lengths | 1 << (name.len() % 64)
}

/// Orders member names by length, then bytes: `< 0`, `0` or `> 0` (`const`, to check a
/// program's tables when it is compiled).
const fn name_order(a: &str, b: &str) -> i32 {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return if a.len() < b.len() { -1 } else { 1 };
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return if a[i] < b[i] { -1 } else { 1 };
        }
        i += 1;
    }
    0
}

/// The entry of `names` (sorted by [`name_order`]) for `key`: a binary search (a scan for a
/// short table) comparing lengths first, so bytes are compared only between names of the
/// key's length.
#[inline]
fn find_name<T: Named>(names: &'static [T], key: &str) -> Option<&'static T> {
    if names.len() <= 12 {
        // Short tables: a scan that skips names of other lengths with one comparison each,
        // and stops past the key's length.
        for entry in names {
            if entry.name().len() == key.len() {
                if same(entry.name().as_bytes(), key.as_bytes()) {
                    return Some(entry);
                }
            } else if entry.name().len() > key.len() {
                return None;
            }
        }
        return None;
    }
    let (mut low, mut high) = (0, names.len());
    while low < high {
        let middle = low + (high - low) / 2;
        let name = names[middle].name();
        let order = name
            .len()
            .cmp(&key.len())
            .then_with(|| name.as_bytes().cmp(key.as_bytes()));
        match order {
            std::cmp::Ordering::Less => low = middle + 1,
            std::cmp::Ordering::Greater => high = middle,
            std::cmp::Ordering::Equal => return names.get(middle),
        }
    }
    None
}

/// Whether `a` and `b`, of one length, hold the same bytes: for a name of up to 16 bytes,
/// one or two words compared ([`word`]), where `==` is a call to `memcmp`.
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0..=8 => word(a) == word(b),
        9..=16 => word(&a[..8]) == word(&b[..8]) && word(&a[n - 8..]) == word(&b[n - 8..]),
        _ => a == b,
    }
}

/// The bytes `b` (at most 8) as a little-endian word, zero-padded: two overlapping loads, where
/// a copy of a length unknown here is a call to `memcpy` (the overlap holds the same bytes, so
/// or-ing them changes nothing).
#[inline]
fn word(b: &[u8]) -> u64 {
    let n = b.len();
    debug_assert!(n <= 8);
    if n >= 4 {
        let low = u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        let high = u64::from(u32::from_le_bytes([b[n - 4], b[n - 3], b[n - 2], b[n - 1]]));
        low | high << (8 * (n - 4))
    } else if n >= 2 {
        let low = u64::from(u16::from_le_bytes([b[0], b[1]]));
        let high = u64::from(u16::from_le_bytes([b[n - 2], b[n - 1]]));
        low | high << (8 * (n - 2))
    } else {
        b.first().map_or(0, |&byte| u64::from(byte))
    }
}

/// A row of a table of member names ([`find_name`]).
trait Named {
    fn name(&self) -> &'static str;
}

impl Named for (&'static str, u32, u8) {
    #[inline]
    fn name(&self) -> &'static str {
        self.0
    }
}

impl Named for FrameName {
    #[inline]
    fn name(&self) -> &'static str {
        self.0
    }
}

/// A hash of a member name, for [`Run::close_names`]: two names of one hash are taken for
/// one (a collision costs only an unknown answer, never a wrong one), so it needs no key.
#[inline]
fn name_hash(name: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut hash = (name.len() as u64).wrapping_mul(K);
    let mut words = name.chunks_exact(8);
    for word in &mut words {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(word);
        hash = (hash.rotate_left(5) ^ u64::from_le_bytes(bytes)).wrapping_mul(K);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        hash = (hash.rotate_left(5) ^ word(rest)).wrapping_mul(K);
    }
    hash
}

/// Whether a value comes twice in `hashes` (reordered): pairwise for a few, sorted past that,
/// so an object of n members costs O(n log n).
fn repeats(hashes: &mut [u64]) -> bool {
    if hashes.len() <= 16 {
        return hashes
            .iter()
            .enumerate()
            .any(|(i, hash)| hashes[i + 1..].contains(hash));
    }
    hashes.sort_unstable();
    hashes.windows(2).any(|pair| pair[0] == pair[1])
}

/// Whether the JSON number `n` is an integer (in draft-04's sense when `draft4`), as the
/// generated checks decide it.
fn integer(n: &Number, draft4: bool) -> bool {
    if n.is_i64() || n.is_u64() {
        return true;
    }
    let value = Value::Number(n.clone());
    if draft4 {
        runtime::is_integer_draft4(&value)
    } else {
        runtime::is_integer(&value)
    }
}

/// Deserializes a `T` from `deserializer`, checking every value against `stream`'s definition
/// as it is read (in the compatible reading when `compatible`). The verdict is
/// [`Verdict::Valid`] only when every value was checked and holds.
///
/// # Errors
/// The deserializer's own errors (malformed JSON, a value `T` cannot take).
pub fn deserialize<'de, T, D>(stream: Stream, compatible: bool, deserializer: D) -> Result<(T, Verdict), D::Error>
where
    T: de::Deserialize<'de>,
    D: Deserializer<'de>,
{
    run(stream, compatible, false, deserializer)
}

/// [`deserialize`] for `pilotage_types::validate::parse_slice`: once the document is known
/// invalid it stops reading, with an error (the caller validates the two-pass way, which names
/// every violation).
///
/// # Errors
/// The deserializer's own errors, and an error of its own once the document is known invalid.
pub fn parse_until_invalid<'de, T, D>(
    stream: Stream,
    compatible: bool,
    deserializer: D,
) -> Result<(T, Verdict), D::Error>
where
    T: de::Deserialize<'de>,
    D: Deserializer<'de>,
{
    run(stream, compatible, true, deserializer)
}

/// What [`parse_str_as`] made of a JSON text read as a `T`.
#[derive(Debug)]
#[non_exhaustive]
pub enum Reading<T> {
    /// `T` read the whole text, and every value was checked and holds.
    Valid(T),
    /// `T`'s `Deserialize` refused the text (a value it cannot take, or no JSON) before the
    /// text was known invalid. A serde untagged enum then tries its next variant, and so does
    /// the generated `SchemaDef::read_str` of one.
    Refused,
    /// `T` read the text, or the reading stopped because the text is invalid, but it was not
    /// shown valid: it is invalid, the program could not decide, or characters follow the
    /// value. Only the two passes can say which (and name every violation).
    Undecided,
}

/// Deserializes the JSON text `text` as a `T`, checking every value against `stream`'s
/// definition as it is read (in the compatible reading when `compatible`), and stopping once
/// the text is known invalid.
///
/// The definition need not be `T`'s own: a generated untagged union reads its variants, each
/// against the union's definition, in serde's order (`SchemaDef::read_str`), where serde's
/// untagged enum copies the whole text into a tree of its own first. So the verdict is the
/// text's, whatever `T` is: only [`Reading::Refused`] depends on `T`.
#[inline] // generic code behind it: built only in crates that call it
pub fn parse_str_as<'de, T: de::Deserialize<'de>>(stream: Stream, compatible: bool, text: &'de str) -> Reading<T> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let (value, verdict) = run_to_verdict(stream, compatible, true, &mut deserializer);
    match (value, verdict) {
        (Ok(value), Verdict::Valid) if deserializer.end().is_ok() => Reading::Valid(value),
        // Stopped because the text is invalid: no variant could be read from it valid.
        (Err(_), Verdict::Invalid) => Reading::Undecided,
        (Err(_), _) => Reading::Refused,
        (Ok(_), _) => Reading::Undecided,
    }
}

fn run<'de, T, D>(
    stream: Stream,
    compatible: bool,
    stop_when_invalid: bool,
    deserializer: D,
) -> Result<(T, Verdict), D::Error>
where
    T: de::Deserialize<'de>,
    D: Deserializer<'de>,
{
    let (value, verdict) = run_to_verdict(stream, compatible, stop_when_invalid, deserializer);
    value.map(|value| (value, verdict))
}

/// [`run`], with a verdict after an error too: [`Verdict::Invalid`] when the reading stopped
/// because the text is known invalid (`stop_when_invalid`), [`Verdict::Unknown`] otherwise.
fn run_to_verdict<'de, T, D>(
    stream: Stream,
    compatible: bool,
    stop_when_invalid: bool,
    deserializer: D,
) -> (Result<T, D::Error>, Verdict)
where
    T: de::Deserialize<'de>,
    D: Deserializer<'de>,
{
    let (mut entries, mut names) = BUFFERS.try_with(Cell::take).unwrap_or_default();
    entries.clear();
    entries.reserve(32);
    names.clear();
    let mut run = Run::new(stream.program, compatible, entries, names);
    run.stop_when_invalid = stop_when_invalid;
    // A definition that accepts every value has no location to check, but its value is
    // still read through the wrapper, which reads every part of it as JSON.
    let trivial = run.at(stream.root).trivial;
    if !trivial {
        run.entries.push(Entry::new(stream.root, u32::MAX, Role::Child));
    }
    let value = T::deserialize(Wrap {
        inner: deserializer,
        run: &mut run,
        start: 0,
    });
    if value.is_err() {
        let verdict = if run.invalid {
            Verdict::Invalid
        } else {
            Verdict::Unknown
        };
        return (value, verdict);
    }
    let verdict = match run.entries.first() {
        _ if run.unknown => Verdict::Unknown,
        _ if run.invalid => Verdict::Invalid,
        None if trivial => Verdict::Valid,
        Some(root) if root.flags & VISITED != 0 && root.ok() => Verdict::Valid,
        Some(root) if root.flags & VISITED != 0 => Verdict::Invalid,
        _ => Verdict::Unknown,
    };
    (value, verdict)
}

/// Whether the JSON text `bytes` is valid against `stream`'s definition, read with no `Value`
/// built; `None` when the program cannot decide or the text is no JSON.
///
/// A member named twice in one object makes the answer unknown: a `Value` keeps only the last
/// of them, so only the checks on the `Value` can say (`pilotage_types::validate::parse_slice`
/// then validates the two-pass way).
#[inline] // generic code behind it: built only in crates that call it
pub fn check_slice(stream: Stream, compatible: bool, bytes: &[u8]) -> Option<bool> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let (IgnoredAny, verdict) = deserialize(stream, compatible, &mut deserializer).ok()?;
    deserializer.end().ok()?;
    verdict.known()
}

/// Whether `value` is valid against `stream`'s definition, by the stream program; `None` when
/// it cannot decide.
#[inline] // generic code behind it: built only in crates that call it
pub fn check_value(stream: Stream, compatible: bool, value: &Value) -> Option<bool> {
    let (IgnoredAny, verdict) = deserialize(stream, compatible, value).ok()?;
    verdict.known()
}

/// The deserializer handed to the type: the input's, with every value read through [`Check`].
struct Wrap<'r, D> {
    inner: D,
    run: &'r mut Run,
    /// Where the frame of the value about to be read starts.
    start: usize,
}

impl<'r, D> Wrap<'r, D> {
    fn visitor<V>(self, visitor: V) -> (D, Check<'r, V>) {
        (
            self.inner,
            Check {
                visitor,
                run: self.run,
                start: self.start,
            },
        )
    }
}

macro_rules! forward {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, Self::Error> {
                let (inner, visitor) = self.visitor(visitor);
                inner.$method($($arg,)* visitor)
            }
        )*
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Wrap<'_, D> {
    type Error = D::Error;

    forward! {
        deserialize_any();
        deserialize_bool();
        deserialize_i8();
        deserialize_i16();
        deserialize_i32();
        deserialize_i64();
        deserialize_i128();
        deserialize_u8();
        deserialize_u16();
        deserialize_u32();
        deserialize_u64();
        deserialize_u128();
        deserialize_f64();
        deserialize_char();
        deserialize_str();
        deserialize_string();
        deserialize_bytes();
        deserialize_byte_buf();
        deserialize_option();
        deserialize_unit();
        deserialize_unit_struct(name: &'static str);
        deserialize_seq();
        deserialize_tuple(len: usize);
        deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_map();
        deserialize_struct(name: &'static str, fields: &'static [&'static str]);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
        deserialize_identifier();
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        if name.starts_with("$serde_json::private::") {
            // A raw value: its text is not read through a visitor.
            self.run.unknown = true;
            return self.inner.deserialize_newtype_struct(name, visitor);
        }
        let (inner, visitor) = self.visitor(visitor);
        inner.deserialize_newtype_struct(name, visitor)
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        // Read as the `Value` reads it: with serde_json's `float_roundtrip` (which jsonschema
        // turns on in a build that has both), an `f32` is parsed at single precision, and
        // `1.00000001` would be checked as 1. The type's visitor takes an `f64` and narrows
        // it, as it does from a `Value`.
        let (inner, visitor) = self.visitor(visitor);
        inner.deserialize_f64(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        // What the type skips is still read, and checked, in full.
        let (inner, check) = self.visitor(IgnoredAny);
        inner.deserialize_any(check)?;
        visitor.visit_unit()
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// The visitor wrapping the type's: checks the value it is given, then hands it on.
struct Check<'r, V> {
    visitor: V,
    run: &'r mut Run,
    start: usize,
}

impl<'r, V> Check<'r, V> {
    fn scalar(self, item: Item<'_>) -> V {
        self.run.scalar(self.start, item);
        self.visitor
    }

    fn unknown(self) -> V {
        self.run.unknown = true;
        self.visitor
    }

    fn number(self, number: Option<Number>) -> V {
        match number {
            Some(n) => {
                self.run.scalar(self.start, Item::Num(&n));
                self.visitor
            }
            None => self.unknown(),
        }
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Check<'_, V> {
    type Value = V::Value;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.visitor.expecting(formatter)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<V::Value, E> {
        self.scalar(Item::Bool(v)).visit_bool(v)
    }

    fn visit_i8<E: de::Error>(self, v: i8) -> Result<V::Value, E> {
        self.number(Some(i64::from(v).into())).visit_i8(v)
    }

    fn visit_i16<E: de::Error>(self, v: i16) -> Result<V::Value, E> {
        self.number(Some(i64::from(v).into())).visit_i16(v)
    }

    fn visit_i32<E: de::Error>(self, v: i32) -> Result<V::Value, E> {
        self.number(Some(i64::from(v).into())).visit_i32(v)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<V::Value, E> {
        self.number(Some(v.into())).visit_i64(v)
    }

    fn visit_u8<E: de::Error>(self, v: u8) -> Result<V::Value, E> {
        self.number(Some(u64::from(v).into())).visit_u8(v)
    }

    fn visit_u16<E: de::Error>(self, v: u16) -> Result<V::Value, E> {
        self.number(Some(u64::from(v).into())).visit_u16(v)
    }

    fn visit_u32<E: de::Error>(self, v: u32) -> Result<V::Value, E> {
        self.number(Some(u64::from(v).into())).visit_u32(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<V::Value, E> {
        self.number(Some(v.into())).visit_u64(v)
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<V::Value, E> {
        self.unknown().visit_i128(v)
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<V::Value, E> {
        self.unknown().visit_u128(v)
    }

    fn visit_f32<E: de::Error>(self, v: f32) -> Result<V::Value, E> {
        self.number(Number::from_f64(f64::from(v))).visit_f32(v)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<V::Value, E> {
        self.number(Number::from_f64(v)).visit_f64(v)
    }

    fn visit_char<E: de::Error>(self, v: char) -> Result<V::Value, E> {
        let mut buffer = [0u8; 4];
        let text: &str = v.encode_utf8(&mut buffer);
        self.scalar(Item::Str(text)).visit_char(v)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
        self.scalar(Item::Str(v)).visit_str(v)
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<V::Value, E> {
        self.scalar(Item::Str(v)).visit_borrowed_str(v)
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
        self.run.scalar(self.start, Item::Str(&v));
        self.visitor.visit_string(v)
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<V::Value, E> {
        self.unknown().visit_bytes(v)
    }

    fn visit_borrowed_bytes<E: de::Error>(self, v: &'de [u8]) -> Result<V::Value, E> {
        self.unknown().visit_borrowed_bytes(v)
    }

    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<V::Value, E> {
        self.unknown().visit_byte_buf(v)
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.scalar(Item::Null).visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.scalar(Item::Null).visit_unit()
    }

    fn visit_some<D2: Deserializer<'de>>(self, deserializer: D2) -> Result<V::Value, D2::Error> {
        // The same value, not read yet.
        self.visitor.visit_some(Wrap {
            inner: deserializer,
            run: self.run,
            start: self.start,
        })
    }

    fn visit_newtype_struct<D2: Deserializer<'de>>(self, deserializer: D2) -> Result<V::Value, D2::Error> {
        self.visitor.visit_newtype_struct(Wrap {
            inner: deserializer,
            run: self.run,
            start: self.start,
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        let (roots, end, _) = self.run.open_container(self.start, types::ARRAY);
        let mut items = Items {
            inner: seq,
            run: self.run,
            start: self.start,
            end,
            index: 0,
            done: false,
        };
        let value = self
            .visitor
            .visit_seq(&mut items)
            .map_err(|error| items.run.failed(error))?;
        // Items the type left unread (a tuple, an array of fixed length, read from a longer
        // array): serde_json would refuse them, where the reading here drains them.
        while !items.done {
            if items.next_element::<IgnoredAny>()?.is_none() {
                break;
            }
            items.run.unknown = true;
        }
        let count = items.index as u64;
        items.run.close_container(items.start, roots, end, false, count);
        Ok(value)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        let (roots, end, frame) = self.run.open_container(self.start, types::OBJECT);
        let names = self.run.names.len();
        debug_assert!(frame.is_none_or(|frame| frame.len() == end - self.start));
        let mut members = Members {
            inner: map,
            run: self.run,
            start: self.start,
            end,
            frame,
            child: None,
            count: 0,
            bloom: 0,
            repeated: false,
            done: false,
        };
        let value = self
            .visitor
            .visit_map(&mut members)
            .map_err(|error| members.run.failed(error))?;
        // As for an array's items: members the type left unread decide nothing.
        while !members.done {
            if members.next_key::<IgnoredAny>()?.is_none() {
                break;
            }
            members.run.unknown = true;
            members.next_value::<IgnoredAny>()?;
        }
        let count = members.count;
        members.run.close_names(names, members.repeated);
        members.run.close_container(members.start, roots, end, true, count);
        Ok(value)
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.unknown().visit_enum(data)
    }
}

/// An array's items, each read through the wrapper with the locations applying to it.
struct Items<'r, A> {
    inner: A,
    run: &'r mut Run,
    start: usize,
    end: usize,
    index: usize,
    done: bool,
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Items<'_, A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Self::Error> {
        if self.done {
            return Ok(None);
        }
        if self.run.invalid {
            return Err(de::Error::custom(INVALID));
        }
        let child = self.run.element(self.start, self.end, self.index);
        // Through the wrapper even with no location to check (an empty frame): serde_json
        // skips a value its reader ignores without checking that it is JSON (a lone
        // surrogate, a byte that is no UTF-8, a number past f64, nesting past 128), which the
        // `Value` the checks read refuses.
        let element = self
            .inner
            .next_element_seed(Seed {
                seed,
                run: &mut *self.run,
                start: child,
            })
            .map_err(|error| self.run.failed(error))?;
        match element {
            Some(value) => {
                self.run.end_child(child);
                self.index += 1;
                Ok(Some(value))
            }
            None => {
                self.run.entries.truncate(child);
                self.done = true;
                Ok(None)
            }
        }
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// An object's members: each name recorded as it is read, each value read through the
/// wrapper with the locations applying to it.
struct Members<'r, A> {
    inner: A,
    run: &'r mut Run,
    start: usize,
    end: usize,
    /// The frame as the generator expanded it, when it is one location's.
    frame: Option<&'static Frame>,
    /// Where the locations of the member whose name was just read start.
    child: Option<usize>,
    /// Members read (a name read twice counts twice).
    count: u64,
    /// This object's [`Run::bloom`] and [`Run::repeated`].
    bloom: u64,
    repeated: bool,
    done: bool,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Members<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Self::Error> {
        if self.done {
            return Ok(None);
        }
        if self.run.invalid {
            return Err(de::Error::custom(INVALID));
        }
        if self.child.is_some() {
            // A name read twice without its value: not how a visitor reads a map.
            self.run.unknown = true;
        }
        self.run.object = (self.start, self.end);
        self.run.frame = self.frame;
        self.run.named = None;
        (self.run.bloom, self.run.repeated) = (self.bloom, self.repeated);
        let key = self
            .inner
            .next_key_seed(Key {
                seed,
                run: &mut *self.run,
            })
            .map_err(|error| self.run.failed(error))?;
        (self.bloom, self.repeated) = (self.run.bloom, self.run.repeated);
        if key.is_none() {
            self.done = true;
            return Ok(None);
        }
        self.count += 1;
        self.child = Some(self.run.named.unwrap_or_else(|| {
            // A name given in another form than a string: not checked, so no verdict.
            self.run.unknown = true;
            self.run.entries.len()
        }));
        Ok(key)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, Self::Error> {
        let Some(child) = self.child.take() else {
            self.run.unknown = true;
            return self.inner.next_value_seed(seed);
        };
        // Through the wrapper even with no location to check (see `Items`).
        let value = self
            .inner
            .next_value_seed(Seed {
                seed,
                run: &mut *self.run,
                start: child,
            })
            .map_err(|error| self.run.failed(error))?;
        self.run.end_child(child);
        Ok(value)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// A member's or an item's seed, reading its value through the wrapper.
struct Seed<'r, S> {
    seed: S,
    run: &'r mut Run,
    start: usize,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Seed<'_, S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<S::Value, D::Error> {
        self.seed.deserialize(Wrap {
            inner: deserializer,
            run: self.run,
            start: self.start,
        })
    }
}

/// A member name's seed: records the name as the type's seed reads it.
struct Key<'r, S> {
    seed: S,
    run: &'r mut Run,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Key<'_, S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<S::Value, D::Error> {
        self.seed.deserialize(KeyDeserializer {
            inner: deserializer,
            run: self.run,
        })
    }
}

struct KeyDeserializer<'r, D> {
    inner: D,
    run: &'r mut Run,
}

impl<'r, D> KeyDeserializer<'r, D> {
    fn visitor<V>(self, visitor: V) -> (D, KeyVisitor<'r, V>) {
        (self.inner, KeyVisitor { visitor, run: self.run })
    }
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for KeyDeserializer<'_, D> {
    type Error = D::Error;

    forward! {
        deserialize_any();
        deserialize_bool();
        deserialize_i8();
        deserialize_i16();
        deserialize_i32();
        deserialize_i64();
        deserialize_i128();
        deserialize_u8();
        deserialize_u16();
        deserialize_u32();
        deserialize_u64();
        deserialize_u128();
        deserialize_f32();
        deserialize_f64();
        deserialize_char();
        deserialize_str();
        deserialize_string();
        deserialize_bytes();
        deserialize_byte_buf();
        deserialize_option();
        deserialize_unit();
        deserialize_unit_struct(name: &'static str);
        deserialize_newtype_struct(name: &'static str);
        deserialize_seq();
        deserialize_tuple(len: usize);
        deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_map();
        deserialize_struct(name: &'static str, fields: &'static [&'static str]);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
        deserialize_identifier();
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        let (inner, check) = self.visitor(IgnoredAny);
        inner.deserialize_any(check)?;
        visitor.visit_unit()
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// Records a member's name, then hands it to the type's visitor. A name given in another
/// form than a string leaves it unrecorded (the verdict is then unknown).
struct KeyVisitor<'r, V> {
    visitor: V,
    run: &'r mut Run,
}

impl<V> KeyVisitor<'_, V> {
    fn record(self, name: &str) -> V {
        self.run.member(name);
        self.visitor
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for KeyVisitor<'_, V> {
    type Value = V::Value;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.visitor.expecting(formatter)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
        self.record(v).visit_str(v)
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<V::Value, E> {
        self.record(v).visit_borrowed_str(v)
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
        let visitor = self.record(&v);
        visitor.visit_string(v)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<V::Value, E> {
        self.visitor.visit_bool(v)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<V::Value, E> {
        self.visitor.visit_i64(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<V::Value, E> {
        self.visitor.visit_u64(v)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<V::Value, E> {
        self.visitor.visit_f64(v)
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<V::Value, E> {
        self.visitor.visit_bytes(v)
    }

    fn visit_borrowed_bytes<E: de::Error>(self, v: &'de [u8]) -> Result<V::Value, E> {
        self.visitor.visit_borrowed_bytes(v)
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.visitor.visit_unit()
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.visitor.visit_none()
    }

    fn visit_some<D2: Deserializer<'de>>(self, deserializer: D2) -> Result<V::Value, D2::Error> {
        self.visitor.visit_some(deserializer)
    }

    fn visit_newtype_struct<D2: Deserializer<'de>>(self, deserializer: D2) -> Result<V::Value, D2::Error> {
        self.visitor.visit_newtype_struct(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_map(map)
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_enum(data)
    }
}

#[cfg(test)]
mod tests {
    use super::{check_slice, find_name, name_order, types, Limit, Node, Scalar, Stream};
    use crate::runtime::Num;

    #[test]
    fn names_are_found_in_short_and_long_tables() {
        let mut owned: Vec<String> = (0..40).map(|i| format!("member_{i}")).collect();
        owned.extend(["a", "id", "zz", "type"].map(String::from));
        owned.sort_by(|a, b| name_order(a, b).cmp(&0));
        let table: &'static [(&'static str, u32, u8)] = Box::leak(
            owned
                .iter()
                .enumerate()
                .map(|(i, name)| (&*Box::leak(name.clone().into_boxed_str()), i as u32, u8::MAX))
                .collect::<Vec<_>>()
                .into_boxed_slice(),
        );
        for short in [&table[..5], &table[..12], table] {
            for (i, (name, ..)) in short.iter().enumerate() {
                assert_eq!(
                    find_name(short, name).map(|e| e.1),
                    Some(i as u32 + (short.as_ptr() as usize - table.as_ptr() as usize) as u32),
                    "{name}"
                );
            }
            for missing in ["", "b", "member_", "member_400", "ty", "typf"] {
                assert!(find_name(short, missing).is_none(), "{missing}");
            }
        }
        assert!(name_order("b", "aa") < 0 && name_order("ab", "aa") > 0 && name_order("x", "x") == 0);
    }

    static PROGRAM: &[Node] = &[
        // 0: {"type": "object", "properties": {"n": 1, "s": 2}, "required": ["n"],
        //     "additionalProperties": false, "oneOf": [3, 4], "maxProperties": 2}
        Node::new()
            .types(types::OBJECT, false)
            .properties(&[("n", 1, 0), ("s", 2, u8::MAX)], &[], Some(5))
            .members(1, 0, 2)
            .one_of(&[3, 4]),
        // 1: {"type": "integer", "minimum": 0, "multipleOf": 2}
        Node::new()
            .types(types::INTEGER, false)
            .limits(&[(Limit::Minimum, Num::U(0)), (Limit::MultipleOf, Num::U(2))]),
        // 2: {"enum": ["x", "yy"]}
        Node::new().enumeration(&[Scalar::Str("x"), Scalar::Str("yy")]),
        // 3: {"required": ["s"]}
        Node::new()
            .properties(&[("s", u32::MAX, 0)], &[], None)
            .members(1, 0, u64::MAX),
        // 4: {"not": {"required": ["s"]}}
        Node::new().not(3),
        // 5: false
        Node::never(),
        // 6: {"items": 1, "prefixItems": [2], "maxItems": 3, "if": 7, "then": 8}
        Node::new().items(&[2], Some(1), 0, 3).condition(7, Some(8), None),
        // 7: {"minItems": 2}
        Node::new().items(&[], None, 2, u64::MAX),
        // 8: {"maxItems": 2}
        Node::new().items(&[], None, 0, 2),
        // 9: opaque
        Node::opaque(),
        // 10: {"minProperties": 1, "maxProperties": 2, "additionalProperties": 7}, so members
        // are read through the wrapper (a nested object's members counted in its own frame)
        Node::new().properties(&[], &[], Some(7)).members(0, 1, 2),
        // 11: {"additionalProperties": 14, "not": 12}
        Node::new().properties(&[], &[], Some(14)).not(12),
        // 12: {"properties": {"a": {"const": 1}}}
        Node::new().properties(&[("a", 13, u8::MAX)], &[], None),
        // 13: {"const": 1}
        Node::new().constant(Scalar::Num(Num::U(1))),
        // 14: {"type": "integer"}
        Node::new().types(types::INTEGER, false),
        // 15: {"additionalProperties": 14, "minProperties": 2}
        Node::new().properties(&[], &[], Some(14)).members(0, 2, u64::MAX),
        // 16: {"additionalProperties": 14, "oneOf": [12, true]}
        Node::new().properties(&[], &[], Some(14)).one_of(&[12, 17]),
        // 17: true
        Node::new(),
        // 18: {"additionalProperties": 14, "if": 12, "then": false}
        Node::new().properties(&[], &[], Some(14)).condition(12, Some(5), None),
        // 19: {"additionalProperties": 20}
        Node::new().properties(&[], &[], Some(20)),
        // 20: {"type": "object", "required": ["x"]}
        Node::new()
            .types(types::OBJECT, false)
            .properties(&[("x", u32::MAX, 0)], &[], None)
            .members(1, 0, u64::MAX),
        // 21: {"items": true, "maxItems": 2}
        Node::new().items(&[], Some(17), 0, 2),
        // 22: {"type": "integer", "maximum": 1}
        Node::new()
            .types(types::INTEGER, false)
            .limits(&[(Limit::Maximum, Num::U(1))]),
    ];

    /// `{"properties": {"a": <itself>}, "patternProperties": {"^a$": <itself>}}`: both apply to
    /// the member `a`, so each level of `{"a": {"a": ...}}` doubles the locations that apply.
    static DOUBLING: &[Node] = &[Node::new().properties(
        &[("a", 0, u8::MAX)],
        &[(
            &crate::pattern::Pattern::Literal {
                source: "^a$",
                text: "a",
                start: true,
                end: true,
            },
            0,
        )],
        None,
    )];

    /// Ten levels (1,024 locations at the deepest) are decided; twenty (a million) pass the
    /// run's bound on locations and are unknown (the caller then checks the two-pass way),
    /// where the frame grew to 2^depth entries.
    #[test]
    fn locations_that_double_at_each_level_are_bounded() {
        let nested = |depth: usize| format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
        assert_eq!(
            check_slice(Stream::new(DOUBLING, 0), false, nested(10).as_bytes()),
            Some(true)
        );
        assert_eq!(
            check_slice(Stream::new(DOUBLING, 0), false, nested(20).as_bytes()),
            None
        );
    }

    fn check(root: u32, text: &str) -> Option<bool> {
        check_slice(Stream::new(PROGRAM, root), false, text.as_bytes())
    }

    #[test]
    fn a_hand_written_program_decides_as_json_schema_does() {
        for (text, expected) in [
            (r#"{"n": 2}"#, Some(true)),
            (r#"{"n": 2.0}"#, Some(true)),
            (r#"{"n": 3}"#, Some(false)),
            (r#"{"n": -2}"#, Some(false)),
            (r#"{"n": 2, "s": "x"}"#, Some(true)),
            (r#"{"n": 2, "s": "z"}"#, Some(false)),
            (r#"{"s": "x"}"#, Some(false)),
            (r#"{"n": 2, "other": 1}"#, Some(false)),
            // Three members read, two in the `Value` (`n` is 4 there): not decided here.
            (r#"{"n": 2, "s": "yy", "n": 4}"#, None),
            (r#"{"n": 2, "s": "yy", "\u006e": 4}"#, None),
            (r#"[1]"#, Some(false)),
            ("null", Some(false)),
            ("{\"n\": 2", None),
        ] {
            assert_eq!(check(0, text), expected, "{text}");
        }
        for (text, expected) in [
            (r#"["x"]"#, Some(true)),
            (r#"["x", 4]"#, Some(true)),
            (r#"["x", 3]"#, Some(false)),
            (r#"["z"]"#, Some(false)),
            (r#"["x", 4, 6]"#, Some(false)),
            (r#"[]"#, Some(true)),
            (r#"{}"#, Some(true)),
        ] {
            assert_eq!(check(6, text), expected, "{text}");
        }
        for (text, expected) in [
            (r#"{}"#, Some(false)),
            (r#"{"a": 1}"#, Some(true)),
            (r#"{"a": 1, "b": {"x": 1, "y": 2, "z": 3}}"#, Some(true)),
            (r#"{"a": 1, "b": 2, "c": 3}"#, Some(false)),
            // A name read three times: a `Value` keeps one member (valid here), the run read
            // three, so it does not decide.
            (r#"{"a": 1, "a": 2, "a": 3}"#, None),
            (r#"[1, 2, 3]"#, Some(true)),
        ] {
            assert_eq!(check(10, text), expected, "{text}");
        }
        assert_eq!(check(9, "1"), None);
        assert_eq!(check(5, "1"), Some(false));
    }

    /// A `Value` keeps the last member of a name read twice: every occurrence holding (or
    /// being counted) is no verdict on it. Each text here was answered valid by reading every
    /// occurrence, where its `Value` is invalid; with the names distinct, it is decided.
    #[test]
    fn a_member_named_twice_leaves_the_answer_unknown() {
        for (root, twice, once, expected_once) in [
            // `not`: `a` is 1 in the `Value`.
            (11, r#"{"a": 2, "a": 1}"#, r#"{"a": 1}"#, false),
            // `minProperties: 2`: one member in the `Value`.
            (15, r#"{"a": 1, "a": 2}"#, r#"{"a": 1, "b": 2}"#, true),
            // `oneOf`: both branches hold on the `Value`.
            (16, r#"{"a": 2, "a": 1}"#, r#"{"a": 1}"#, false),
            // `if` holds on the `Value`, so `then` (false) applies.
            (18, r#"{"a": 2, "a": 1}"#, r#"{"a": 1}"#, false),
            // Written with an escape, still the same name.
            (11, r#"{"a": 2, "\u0061": 1}"#, r#"{"\u0061": 1}"#, false),
            // In a nested object: each object's names are its own.
            (
                10,
                r#"{"b": {"a": 1, "a": 2}}"#,
                r#"{"b": {"a": 1}, "c": {"a": 1}}"#,
                true,
            ),
        ] {
            assert_eq!(check(root, twice), None, "node {root}: {twice}");
            assert_eq!(check(root, once), Some(expected_once), "node {root}: {once}");
        }
        // The same name in sibling objects, and in an object and its parent, is no repeat.
        assert_eq!(
            check(15, r#"{"a": {"a": 1}, "b": 2}"#),
            Some(false),
            "a member not an integer"
        );
        assert_eq!(check(15, r#"{"a": 1, "b": {"a": 1, "b": 2}}"#), Some(false));
        assert_eq!(check(10, r#"{"a": {"a": 1}, "b": {"a": 1}}"#), Some(true));
        // What `parse_slice` meets: a map keeps the last `a` without a word, so the run's
        // verdict is all that could tell, and it must not say valid.
        let (map, verdict) = super::parse_until_invalid::<std::collections::HashMap<String, i64>, _>(
            Stream::new(PROGRAM, 15),
            false,
            &mut serde_json::Deserializer::from_slice(br#"{"a": 1, "a": 2}"#),
        )
        .unwrap();
        assert_eq!((map.len(), verdict), (1, super::Verdict::Unknown));
    }

    /// `text` read into a `T` through the program's node `root` (to its end, even once
    /// invalid): the verdict, or `None` when the text gave no `T`.
    fn parsed<T: serde_core::de::DeserializeOwned>(root: u32, text: &str) -> Option<(T, super::Verdict)> {
        super::deserialize::<T, _>(
            Stream::new(PROGRAM, root),
            false,
            &mut serde_json::Deserializer::from_slice(text.as_bytes()),
        )
        .ok()
    }

    /// What no location checks is still read as a `Value` reads it: serde_json skips a value
    /// its reader ignores without checking that it is JSON, which the `Value` of the two-pass
    /// path refuses, so each of these was a valid parse before.
    #[test]
    fn a_value_no_location_checks_is_still_read_as_json() {
        use serde_core::de::IgnoredAny;
        use std::collections::HashMap;
        let deep = format!("{{\"s\": {}{}}}", "[".repeat(200), "]".repeat(200));
        for text in [
            r#"{"s": "\ud800"}"#,
            r#"{"s": 1e400}"#,
            r#"{"s": {"t": ["\udc00"]}}"#,
            &deep,
        ] {
            assert!(serde_json::from_str::<serde_json::Value>(text).is_err(), "{text}");
            // Node 3 is `{"required": ["s"]}`: nothing checks the member's value.
            assert_eq!(check(3, text), None, "{text}");
            assert!(parsed::<HashMap<String, IgnoredAny>>(3, text).is_none(), "{text}");
            // Node 17 is `true`: the definition accepts everything, and it is read all the same.
            assert!(parsed::<IgnoredAny>(17, text).is_none(), "{text}");
        }
        let (_, verdict) = parsed::<HashMap<String, IgnoredAny>>(3, r#"{"s": ["\u00e9", 1e300, {}]}"#).unwrap();
        assert_eq!(verdict, super::Verdict::Valid);
        assert_eq!(
            parsed::<IgnoredAny>(17, "[1, {}]").map(|(_, v)| v),
            Some(super::Verdict::Valid)
        );
    }

    /// A value the type reads as an `f32` is checked as the `f64` a `Value` holds (with
    /// serde_json's `float_roundtrip`, on in these tests, serde_json reads an `f32` at single
    /// precision, and `1.00000001` was checked as 1).
    #[test]
    fn an_f32_is_checked_at_the_precision_of_a_value() {
        // Node 22 is `{"type": "integer", "maximum": 1}`.
        assert_eq!(parsed::<f32>(22, "1.00000001"), Some((1.0, super::Verdict::Invalid)));
        assert_eq!(parsed::<f32>(22, "1").map(|(_, v)| v), Some(super::Verdict::Valid));
        assert_eq!(
            parsed::<f64>(22, "1.00000001").map(|(_, v)| v),
            Some(super::Verdict::Invalid)
        );
    }

    /// A member's value whose reading failed, the error caught by the type (a lenient field):
    /// the frames it left unfinished decide nothing. And a type that stops reading an array
    /// early (a tuple) leaves items it would have refused.
    #[test]
    fn an_error_the_type_catches_or_items_it_leaves_make_the_answer_unknown() {
        use serde_core::de::{Deserialize, Deserializer, Error, IgnoredAny, MapAccess, Visitor};
        use std::collections::HashMap;
        /// Reads an object to its end, then fails (a struct missing a field).
        struct Failing;
        impl<'de> Deserialize<'de> for Failing {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Reads;
                impl<'de> Visitor<'de> for Reads {
                    type Value = Failing;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str("an object with y")
                    }
                    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Failing, A::Error> {
                        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                        Err(A::Error::custom("missing field y"))
                    }
                }
                deserializer.deserialize_map(Reads)
            }
        }
        /// Catches the error of its content.
        struct Lenient;
        impl<'de> Deserialize<'de> for Lenient {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let _ = Failing::deserialize(deserializer);
                Ok(Lenient)
            }
        }
        // Node 19: each member must be an object with `x`; `{}` has none.
        assert_eq!(
            parsed::<HashMap<String, IgnoredAny>>(19, r#"{"a": {}}"#).map(|(_, v)| v),
            Some(super::Verdict::Invalid)
        );
        assert_eq!(
            parsed::<HashMap<String, Lenient>>(19, r#"{"a": {}}"#).map(|(_, v)| v),
            Some(super::Verdict::Unknown)
        );
        // Node 21 allows two items: a pair leaves the third unread.
        assert_eq!(
            parsed::<(u8, u8)>(21, "[1, 2]").map(|(_, v)| v),
            Some(super::Verdict::Valid)
        );
        assert_eq!(
            parsed::<(u8, u8)>(21, "[1, 2, 3]").map(|(_, v)| v),
            Some(super::Verdict::Unknown)
        );
    }

    /// Repeats are found among a few hashes and among many (sorted), and only there.
    #[test]
    fn repeated_hashes_are_found() {
        use super::{name_hash, repeats};
        for n in [0u64, 1, 2, 16, 17, 1000] {
            let mut distinct: Vec<u64> = (0..n).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
            assert!(!repeats(&mut distinct.clone()), "{n} distinct");
            if let Some(&first) = distinct.first() {
                distinct.push(first);
                assert!(repeats(&mut distinct), "{n} and a repeat");
            }
        }
        let names: Vec<String> = (0..2000)
            .map(|i| format!("member_{i}"))
            .chain(["", "a", "a\0", "12345678", "123456789", "1234567\0"].map(String::from))
            .collect();
        let mut hashes: Vec<u64> = names.iter().map(|name| name_hash(name.as_bytes())).collect();
        assert!(!repeats(&mut hashes), "no two of these names share a hash");
    }

    #[test]
    fn a_parse_stops_once_the_document_is_known_invalid() {
        use super::{deserialize, parse_until_invalid, INVALID};
        use serde_core::de::IgnoredAny;
        let stream = Stream::new(PROGRAM, 0);
        // `n` breaks `multipleOf` on the root's own member: nothing read later can help, so the
        // text after it (not even JSON) is never read.
        let text = br#"{"n": 3, "s": ] not json"#;
        let error =
            parse_until_invalid::<IgnoredAny, _>(stream, false, &mut serde_json::Deserializer::from_slice(text))
                .unwrap_err();
        assert!(error.to_string().contains(INVALID), "{error}");
        let error =
            deserialize::<IgnoredAny, _>(stream, false, &mut serde_json::Deserializer::from_slice(text)).unwrap_err();
        assert!(!error.to_string().contains(INVALID), "{error}");
        // Read to the end otherwise: a valid document, and one whose failure is the `oneOf`'s
        // (decided at the root's own end, from the branches' verdicts).
        for (text, expected) in [
            (&br#"{"n": 2, "s": "x"}"#[..], super::Verdict::Valid),
            (br#"{"n": 2, "s": "x"}   "#, super::Verdict::Valid),
        ] {
            let (IgnoredAny, verdict) =
                parse_until_invalid(stream, false, &mut serde_json::Deserializer::from_slice(text)).unwrap();
            assert_eq!(verdict, expected);
        }
        let stream = Stream::new(PROGRAM, 6);
        let (IgnoredAny, verdict) = parse_until_invalid(
            stream,
            false,
            &mut serde_json::Deserializer::from_slice(b"[\"x\", 4, 6]"),
        )
        .unwrap();
        assert_eq!(
            verdict,
            super::Verdict::Invalid,
            "the `then` fails: read to the end, then decided"
        );
    }
}
