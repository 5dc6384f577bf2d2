//! What generated validators call: the evaluation context ([`Cx`], in a [`Mode`]: collect every
//! violation or stop at the first; pinned or compatible reading), a check's two instances
//! ([`Check`]: each generated function is generic over the mode), the lazily built instance location
//! ([`Loc`]), JSON equality and number comparison with JSON Schema's semantics, and the
//! reasons of failure ([`Why`]), formatted only when violations are collected.
//!
//! This module is public because code generated for other crates (the peer schemas) calls it;
//! it is not meant to be called by hand, and may change with the generator.

use std::cmp::Ordering;
use std::fmt::Write as _;

use serde_json::{Number, Value};

use crate::few::{Few, FewSet};
use crate::{bounded_message, Violation, ViolationList};

/// A generated check in one [`Mode`]: `true` when `value` (at `at`) is valid against one schema
/// location.
pub type CheckIn<M> = fn(&mut Cx<M>, &Value, &Loc<'_>) -> bool;

/// A generated check, in both modes: each generated function is generic over the [`Mode`], and
/// a definition's table entry holds both of its instances. The one that stops at the first
/// violation ([`Stop`]) has none of the code that records violations (its `fail` is `true`, its
/// `mark` and `passed` constants), so a verdict runs the smaller of the two. Over the official
/// suite's required tests, that code was 42 % of the generated functions' size, and a verdict
/// on many schemas, each checked a few times, is spent mostly fetching code.
#[derive(Debug, Clone, Copy)]
pub struct Check {
    stop: CheckIn<Stop>,
    collect: CheckIn<Collect>,
}

impl Check {
    /// The check whose instances are `stop` and `collect`: the two instances of one generic
    /// function, as generated code writes it (`Check::new(root, root)`). Two different
    /// functions would give different answers to a verdict and to the list of violations
    /// (`validate` could then fail with no violation listed).
    pub const fn new(stop: CheckIn<Stop>, collect: CheckIn<Collect>) -> Self {
        Self { stop, collect }
    }

    /// The instance that stops at the first violation (for a verdict).
    pub fn stop(self) -> CheckIn<Stop> {
        self.stop
    }

    /// The instance that collects every violation.
    pub fn collect(self) -> CheckIn<Collect> {
        self.collect
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Stop {}
    impl Sealed for super::Collect {}
}

/// How an evaluation runs: stopping at the first violation ([`Stop`]) or collecting every one
/// ([`Collect`]). Generated checks are generic over it, so each mode's instance is compiled
/// with the other's code left out. Sealed: the two modes are the only ones.
pub trait Mode: sealed::Sealed + std::fmt::Debug + Sized + 'static {
    /// Whether violations are collected.
    const COLLECTS: bool;

    /// What a context of this mode keeps of the violations: nothing (a zero-sized `()`) in
    /// [`Stop`], so that a verdict's context is not a word larger for a list it never has.
    #[doc(hidden)]
    type Errors: std::fmt::Debug + Default;

    /// `cx` itself when this is [`Stop`] (what [`Cx::quiet`] calls the check with).
    #[doc(hidden)]
    fn as_stop(cx: &mut Cx<Self>) -> Option<&mut Cx<Stop>>;

    /// The list of violations of `errors`, when this mode collects them.
    #[doc(hidden)]
    fn list(errors: &mut Self::Errors) -> Option<&mut ViolationList>;

    /// [`Mode::list`], to read.
    #[doc(hidden)]
    fn list_ref(errors: &Self::Errors) -> Option<&ViolationList>;

    /// `errors` as a list (empty when this mode collects nothing).
    #[doc(hidden)]
    fn into_list(errors: Self::Errors) -> ViolationList;
}

/// The mode that stops at the first violation and records nothing (a verdict, and every
/// [`Cx::quiet`] check).
#[derive(Debug)]
pub enum Stop {}

/// The mode that collects every violation (up to [`crate::MAX_VIOLATIONS_BYTES`]).
#[derive(Debug)]
pub enum Collect {}

impl Mode for Stop {
    const COLLECTS: bool = false;
    type Errors = ();

    #[inline(always)]
    fn as_stop(cx: &mut Cx<Self>) -> Option<&mut Cx<Stop>> {
        Some(cx)
    }

    #[inline(always)]
    fn list((): &mut ()) -> Option<&mut ViolationList> {
        None
    }

    #[inline(always)]
    fn list_ref((): &()) -> Option<&ViolationList> {
        None
    }

    #[inline(always)]
    fn into_list((): ()) -> ViolationList {
        ViolationList::default()
    }
}

impl Mode for Collect {
    const COLLECTS: bool = true;
    type Errors = ViolationList;

    #[inline(always)]
    fn as_stop(_: &mut Cx<Self>) -> Option<&mut Cx<Stop>> {
        None
    }

    #[inline(always)]
    fn list(errors: &mut ViolationList) -> Option<&mut ViolationList> {
        Some(errors)
    }

    #[inline(always)]
    fn list_ref(errors: &ViolationList) -> Option<&ViolationList> {
        Some(errors)
    }

    #[inline(always)]
    fn into_list(errors: ViolationList) -> ViolationList {
        errors
    }
}

/// The state of one evaluation, in the mode `M`.
#[derive(Debug)]
pub struct Cx<M: Mode> {
    /// The violations collected (up to [`crate::MAX_VIOLATIONS_BYTES`]) in [`Collect`]; nothing
    /// in [`Stop`] (a check run for its verdict alone while collecting gets a context of its
    /// own, [`Self::quiet`]).
    errors: M::Errors,
    compatible: bool,
    /// The dynamic scope: the schema resources entered, outermost first (only for schema
    /// sets that use `$dynamicRef` / `$recursiveRef`), four inline before the heap (a resource
    /// entered again while innermost is not pushed again, so a schema's recursion into itself
    /// does not deepen it; recursion through several resources does).
    scope: Few<u32, 4>,
    mode: std::marker::PhantomData<M>,
}

/// A generated check that also reports what it evaluated of the instance (for
/// `unevaluatedProperties` / `unevaluatedItems`).
pub type CheckEv<M> = for<'v> fn(&mut Cx<M>, &'v Value, &Loc<'_>, &mut Ev<'v>) -> bool;

/// A member name as a JSON string, for `propertyNames`, whose subschema reads a `Value`. The
/// text is kept in a buffer that each thread keeps between evaluations: taken when an object's
/// names are checked, put back when done (on drop, so an early return puts it back too), unless
/// it grew past a kilobyte, when it is freed instead.
/// Before, a `Value::String` built per name cost an allocation and a free each, and a buffer
/// per object one of each (the official suite's `propertyNames` groups took 1.0-1.3x
/// jsonschema's time). A nested use (none arises: a name is a string, which has no names)
/// would find the thread's buffer empty and allocate its own: never a panic.
#[derive(Debug)]
pub struct NameBuffer(Value);

thread_local! {
    /// The thread's buffer for [`NameBuffer`], empty while one holds it.
    static NAME_BUFFER: std::cell::Cell<String> = const { std::cell::Cell::new(String::new()) };
}

impl Default for NameBuffer {
    fn default() -> Self {
        Self::new()
    }
}

impl NameBuffer {
    /// The thread's buffer (an empty one during the thread's teardown, or if it is in use).
    /// Out of line, as [`Self::holding`] is: the thread-local's access (its first use
    /// registers a destructor) and the string's growth were a few hundred bytes of code in
    /// every generated `propertyNames` check.
    #[inline(never)]
    pub fn new() -> Self {
        Self(Value::String(
            NAME_BUFFER.try_with(std::cell::Cell::take).unwrap_or_default(),
        ))
    }

    /// `name` as a JSON string, in this buffer (the previous name is overwritten).
    #[inline(never)]
    pub fn holding(&mut self, name: &str) -> &Value {
        if let Value::String(text) = &mut self.0 {
            text.clear();
            text.push_str(name);
        }
        &self.0
    }
}

/// The largest buffer (in bytes) a thread keeps for [`NameBuffer`]: one hostile instance with a
/// megabyte-long member name must not pin a megabyte per thread for the thread's life.
const NAME_BUFFER_KEPT: usize = 1024;

impl Drop for NameBuffer {
    /// Gives the buffer back to the thread, out of line (as [`NameBuffer::new`] takes it).
    #[inline(never)]
    fn drop(&mut self) {
        if let Value::String(text) = &mut self.0 {
            if text.capacity() <= NAME_BUFFER_KEPT {
                let text = std::mem::take(text);
                // During the thread's teardown the buffer is simply freed.
                let _ = NAME_BUFFER.try_with(|buffer| buffer.set(text));
            }
        }
    }
}

/// The annotations `unevaluatedProperties` and `unevaluatedItems` read: which members and
/// items of one instance the keywords evaluated so far (successfully) applied to.
///
/// The members and items are held inline up to a few (four names, four indices), and only
/// beyond that on the heap; past 16, they are also hashed, so that recording and looking up
/// a member or an item costs the same on an object of 100,000 members as on one of 5.
#[derive(Debug)]
pub struct Ev<'v> {
    /// `None` fills the unused slots: all zero bits, so a new annotation is a few vector stores.
    props: FewSet<Option<&'v str>, 4>,
    all_props: bool,
    /// Items below this index were evaluated (`prefixItems`).
    items: usize,
    /// Items evaluated one by one (`contains`).
    item_set: FewSet<usize, 4>,
    all_items: bool,
}

impl Default for Ev<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'v> Ev<'v> {
    /// Nothing evaluated yet.
    #[inline]
    pub fn new() -> Self {
        Self {
            props: FewSet::new(None),
            all_props: false,
            items: 0,
            item_set: FewSet::new(0),
            all_items: false,
        }
    }

    /// The member `name` was evaluated. Out of line: a search of the names recorded and a
    /// push, where a call is a few bytes in each generated check that records a member.
    #[inline(never)]
    pub fn prop(&mut self, name: &'v str) {
        if !self.all_props {
            self.props.insert(Some(name));
        }
    }

    /// Every member was evaluated.
    #[inline]
    pub fn all_props(&mut self) {
        self.all_props = true;
        self.props.clear();
    }

    /// Whether the member `name` was evaluated.
    #[inline]
    pub fn has_prop(&self, name: &str) -> bool {
        self.all_props || self.props.contains(&Some(name))
    }

    /// The members of `object` not evaluated, in the object's order: what `unevaluatedProperties`
    /// checks. Stepping is a shared call (not the map's iteration inlined in every schema with
    /// the keyword), made once for each member it yields and once at the end: on an object
    /// whose members were all evaluated, one call.
    #[inline]
    pub fn unevaluated<'e, 'o>(&'e self, object: &'o serde_json::Map<String, Value>) -> Unevaluated<'e, 'v, 'o> {
        Unevaluated {
            ev: self,
            members: object.iter(),
        }
    }

    /// The items below `n` were evaluated.
    #[inline]
    pub fn items_upto(&mut self, n: usize) {
        self.items = self.items.max(n);
    }

    /// The item `index` was evaluated.
    #[inline]
    pub fn item(&mut self, index: usize) {
        if !self.all_items && index >= self.items {
            self.item_set.insert(index);
        }
    }

    /// Every item was evaluated.
    #[inline]
    pub fn all_items(&mut self) {
        self.all_items = true;
        self.item_set.clear();
    }

    /// Whether the item `index` was evaluated.
    #[inline]
    pub fn has_item(&self, index: usize) -> bool {
        self.all_items || index < self.items || self.item_set.contains(&index)
    }

    /// Adds what `other` (a subschema that held) evaluated. Where this side has recorded no
    /// member (or no item) one by one, `other`'s list is copied without a search: it holds no
    /// duplicate (see [`Self::prop`], [`Self::item`]). `other` is read in place: taken by value,
    /// the whole annotation was copied at every call (a `memcpy` call per held branch).
    pub fn merge(&mut self, other: &Ev<'v>) {
        if other.all_props {
            self.all_props();
        } else if !self.all_props {
            if self.props.is_empty() {
                other.props.each(|name| self.props.push_new(name));
            } else {
                other
                    .props
                    .each(|name| name.into_iter().for_each(|name| self.prop(name)));
            }
        }
        if other.all_items {
            self.all_items();
        } else if !self.all_items {
            self.items_upto(other.items);
            if self.item_set.is_empty() {
                other.item_set.each(|index| self.item_set.push_new(index));
            } else {
                other.item_set.each(|index| self.item(index));
            }
        }
    }
}

/// The members of an object that an [`Ev`] does not hold ([`Ev::unevaluated`]).
#[derive(Debug)]
pub struct Unevaluated<'e, 'v, 'o> {
    ev: &'e Ev<'v>,
    members: serde_json::map::Iter<'o>,
}

impl<'o> Iterator for Unevaluated<'_, '_, 'o> {
    type Item = (&'o String, &'o Value);

    #[inline(never)]
    fn next(&mut self) -> Option<Self::Item> {
        if self.ev.all_props {
            return None;
        }
        self.members.find(|(name, _)| !self.ev.has_prop(name))
    }
}

impl<M: Mode> Cx<M> {
    /// An evaluation in the mode `M`, in the pinned or the `compatible` reading.
    #[inline]
    pub fn new(compatible: bool) -> Self {
        Self {
            errors: M::Errors::default(),
            compatible,
            scope: Few::new(0),
            mode: std::marker::PhantomData,
        }
    }

    /// Whether this context holds nothing on the heap: it stops at the first violation and never
    /// entered a dynamic scope (most evaluations). Its drop glue then has nothing to do, and
    /// [`crate::verdict`] skips the call (a sixtieth of `ExecuteToolOutput::is_valid`) with
    /// `std::mem::forget`. The test reads the context in place: a method taking `self` made
    /// LLVM copy the whole context first, whose wide reads of the just-written fields stalled
    /// store forwarding on every call.
    #[inline]
    pub fn holds_nothing(&self) -> bool {
        !M::COLLECTS && !self.scope.spilled()
    }

    /// Enters the schema resource `resource` in the dynamic scope, unless it is the innermost
    /// already; returns whether it entered (for [`Self::leave`]). Out of line, as
    /// [`Self::leave`] is: every generated check of a schema resource in a schema set with a
    /// dynamic reference calls both, and a call is a few bytes where the list's test and push
    /// were about fifty (the official suite's `$dynamicRef` and `unevaluatedProperties` groups are
    /// decided by their code's size more than by its instructions).
    #[inline(never)]
    pub fn enter(&mut self, resource: u32) -> bool {
        if self.scope.last() == Some(resource) {
            return false;
        }
        self.scope.push(resource);
        true
    }

    /// Leaves the resource [`Self::enter`] entered (when it did).
    #[inline(never)]
    pub fn leave(&mut self, entered: bool) {
        if entered {
            self.scope.pop();
        }
    }

    /// The outermost resource of the dynamic scope among `candidates` (those defining a
    /// dynamic anchor), if any is in scope. Out of line: a search over the scope, where a
    /// call is a few bytes in each generated `$dynamicRef` and the iterator's set-up dozens.
    #[inline(never)]
    pub fn outermost(&self, candidates: &[u32]) -> Option<u32> {
        self.scope.iter().find(|r| candidates.contains(r))
    }

    /// [`Self::quiet`] for a check that reports annotations.
    #[inline(always)]
    pub fn quiet_ev<'v>(&mut self, check: CheckEv<Stop>, value: &'v Value, at: &Loc<'_>, ev: &mut Ev<'v>) -> bool {
        match self.as_stop() {
            Some(cx) => check(cx, value, at, ev),
            None => self.stopping(|cx| check(cx, value, at, ev)),
        }
    }

    /// This context as one that stops at the first violation, when it is one ([`Stop`]).
    #[inline(always)]
    fn as_stop(&mut self) -> Option<&mut Cx<Stop>> {
        M::as_stop(self)
    }

    /// Runs `f` in a context that stops at the first violation, with this one's reading and
    /// dynamic scope (lent, and taken back after): [`Self::quiet`] and [`Self::quiet_ev`] while
    /// collecting, out of line.
    #[inline(never)]
    fn stopping(&mut self, f: impl FnOnce(&mut Cx<Stop>) -> bool) -> bool {
        let mut cx = Cx::<Stop> {
            errors: (),
            compatible: self.compatible,
            scope: std::mem::replace(&mut self.scope, Few::new(0)),
            mode: std::marker::PhantomData,
        };
        let verdict = f(&mut cx);
        self.scope = std::mem::replace(&mut cx.scope, Few::new(0));
        verdict
    }

    /// Whether this is the compatible reading (open enums accept any string).
    #[inline(always)]
    pub fn compatible(&self) -> bool {
        self.compatible
    }

    /// Whether the evaluation stops at the first violation.
    #[inline(always)]
    pub fn stops(&self) -> bool {
        !M::COLLECTS
    }

    /// Records a violation at `at` of the keyword at `schema`; returns whether to stop (at
    /// the first violation, or once the list is full).
    #[inline]
    pub fn fail(&mut self, at: &Loc<'_>, schema: &'static str, why: Why<'_>) -> bool {
        if !M::COLLECTS {
            return true;
        }
        match M::list(&mut self.errors) {
            None => true,
            Some(errors) => record(errors, at, schema, why),
        }
    }

    /// Evaluates `check` for its verdict alone (an `anyOf` branch, a `not`, an `if`): nothing
    /// it finds is recorded, so it is always the instance that stops at the first violation.
    /// Stopping at the first violation, this is the call itself (inlined at every branch: a
    /// 96-branch `anyOf` spent a fifth of its time in this function's prologue when it was a
    /// call); collecting, a call out of line.
    #[inline(always)]
    pub fn quiet(&mut self, check: CheckIn<Stop>, value: &Value, at: &Loc<'_>) -> bool {
        match self.as_stop() {
            Some(cx) => check(cx, value, at),
            None => self.stopping(|cx| check(cx, value, at)),
        }
    }

    /// Where the record of violations stands, for [`Self::passed`].
    #[inline(always)]
    pub fn mark(&self) -> usize {
        if !M::COLLECTS {
            return 0;
        }
        M::list_ref(&self.errors).map_or(0, ViolationList::len)
    }

    /// Whether a check that started at `mark` passed: stopping at the first violation, a check
    /// that reaches its end passed; collecting, it passed when it recorded nothing (once the
    /// list is full, nothing is recorded and nothing passes).
    #[inline(always)]
    pub fn passed(&self, mark: usize) -> bool {
        if !M::COLLECTS {
            return true;
        }
        M::list_ref(&self.errors).is_none_or(|errors| errors.len() == mark && !errors.is_full())
    }

    /// The violations collected (empty when stopping at the first).
    pub fn into_violations(self) -> Vec<Violation> {
        self.into_list().into_violations()
    }

    /// The list of violations collected, which tells whether it is full (empty when stopping
    /// at the first).
    pub fn into_list(self) -> ViolationList {
        M::into_list(self.errors)
    }
}

/// Lists a violation unless the list is full; returns whether it is full. Its pointer and
/// message are not even built then: once full, a hostile instance costs no more.
#[cold]
#[inline(never)]
fn record(errors: &mut ViolationList, at: &Loc<'_>, schema: &'static str, why: Why<'_>) -> bool {
    if errors.is_full() {
        return true;
    }
    errors.push(Violation {
        instance_pointer: at.pointer(),
        schema_pointer: schema.to_owned(),
        message: bounded_message(why.to_string()),
    })
}

/// Where in the instance a check is, built on the stack as the evaluation descends and turned
/// into a JSON Pointer only when a violation is recorded.
#[derive(Debug, Clone, Copy)]
pub enum Loc<'a> {
    /// The instance itself.
    Root,
    /// A member of the object at the parent location.
    Key(&'a Loc<'a>, &'a str),
    /// An item of the array at the parent location.
    Index(&'a Loc<'a>, usize),
}

impl<'a> Loc<'a> {
    /// The member `key` of this location.
    #[inline(always)]
    pub fn key(&'a self, key: &'a str) -> Loc<'a> {
        Loc::Key(self, key)
    }

    /// The item `index` of this location.
    #[inline(always)]
    pub fn index(&'a self, index: usize) -> Loc<'a> {
        Loc::Index(self, index)
    }

    /// This location as a JSON Pointer (`""` for the root).
    pub fn pointer(&self) -> String {
        let mut tokens = Vec::new();
        let mut here = self;
        loop {
            match here {
                Loc::Root => break,
                Loc::Key(parent, key) => {
                    // RFC 6901, section 3: `~` is written `~0` and `/` is written `~1`.
                    tokens.push(key.replace('~', "~0").replace('/', "~1"));
                    here = parent;
                }
                Loc::Index(parent, index) => {
                    tokens.push(index.to_string());
                    here = parent;
                }
            }
        }
        let mut pointer = String::new();
        for token in tokens.iter().rev() {
            pointer.push('/');
            pointer.push_str(token);
        }
        pointer
    }
}

/// Why a keyword failed; formatted (like jsonschema's messages) only when collected.
#[derive(Debug, Clone, Copy)]
pub enum Why<'a> {
    /// `type`: the value and the allowed types.
    Type(&'a Value, &'static [&'static str]),
    /// `required`: the missing member.
    Required(&'a str),
    /// `enum`: the value and the allowed values, as JSON text.
    Enum(&'a Value, &'static str),
    /// `const`: the expected value, as JSON text.
    Const(&'static str),
    /// `pattern`: the value and the pattern.
    Pattern(&'a Value, &'static str),
    /// `minLength`.
    MinLength(&'a Value, u64),
    /// `maxLength`.
    MaxLength(&'a Value, u64),
    /// `minItems`.
    MinItems(&'a Value, u64),
    /// `maxItems`.
    MaxItems(&'a Value, u64),
    /// `minProperties`.
    MinProperties(&'a Value, u64),
    /// `maxProperties`.
    MaxProperties(&'a Value, u64),
    /// `uniqueItems`.
    Unique(&'a Value),
    /// `minimum`, the limit as JSON text.
    Minimum(&'a Value, &'static str),
    /// `maximum`.
    Maximum(&'a Value, &'static str),
    /// `exclusiveMinimum`.
    ExclusiveMinimum(&'a Value, &'static str),
    /// `exclusiveMaximum`.
    ExclusiveMaximum(&'a Value, &'static str),
    /// `multipleOf`.
    MultipleOf(&'a Value, &'static str),
    /// `anyOf`: no branch holds.
    AnyOf(&'a Value),
    /// `oneOf`: no branch holds.
    OneOfNone(&'a Value),
    /// `oneOf`: more than one branch holds.
    OneOfMany(&'a Value),
    /// `not`: the value and the forbidden schema, as JSON text.
    Not(&'a Value, &'static str),
    /// The schema `false`.
    False(&'a Value),
    /// `additionalProperties: false` (or a failing schema for them): the unexpected members.
    Additional(&'a Value, &'a [&'a str], &'a [&'a Pattern]),
    /// `contains`: no item (or too few / too many) holds.
    Contains(&'a Value),
    /// `propertyNames`: the member name that fails.
    PropertyName(&'a str),
    /// `dependentRequired`: the member that requires another, and the missing one.
    Dependent(&'a str, &'a str),
    /// `format`: the value and the format's name.
    Format(&'a Value, &'static str),
    /// Draft-07's `contentEncoding` / `contentMediaType`: the string does not decode.
    Content(&'a Value),
}

use super::pattern::Pattern;

impl std::fmt::Display for Why<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        fn plural(n: u64, one: &str, many: &str) -> String {
            format!("{n} {}", if n == 1 { one } else { many })
        }
        match *self {
            Why::Type(value, [one]) => write!(f, r#"{value} is not of type "{one}""#),
            Why::Type(value, types) => {
                let quoted: Vec<String> = types.iter().map(|t| format!(r#""{t}""#)).collect();
                write!(f, "{value} is not of types {}", quoted.join(", "))
            }
            Why::Required(member) => write!(f, "{} is a required property", Value::from(member)),
            Why::Enum(value, options) => write!(f, "{value} is not one of {options}"),
            Why::Const(expected) => write!(f, "{expected} was expected"),
            Why::Pattern(value, pattern) => write!(f, r#"{value} does not match "{pattern}""#),
            Why::MinLength(value, n) => write!(f, "{value} is shorter than {}", plural(n, "character", "characters")),
            Why::MaxLength(value, n) => write!(f, "{value} is longer than {}", plural(n, "character", "characters")),
            Why::MinItems(value, n) => write!(f, "{value} has less than {}", plural(n, "item", "items")),
            Why::MaxItems(value, n) => write!(f, "{value} has more than {}", plural(n, "item", "items")),
            Why::MinProperties(value, n) => {
                write!(f, "{value} has less than {}", plural(n, "property", "properties"))
            }
            Why::MaxProperties(value, n) => {
                write!(f, "{value} has more than {}", plural(n, "property", "properties"))
            }
            Why::Unique(value) => write!(f, "{value} has non-unique elements"),
            Why::Minimum(value, limit) => write!(f, "{value} is less than the minimum of {limit}"),
            Why::Maximum(value, limit) => write!(f, "{value} is greater than the maximum of {limit}"),
            Why::ExclusiveMinimum(value, limit) => {
                write!(f, "{value} is less than or equal to the minimum of {limit}")
            }
            Why::ExclusiveMaximum(value, limit) => {
                write!(f, "{value} is greater than or equal to the maximum of {limit}")
            }
            Why::MultipleOf(value, limit) => write!(f, "{value} is not a multiple of {limit}"),
            Why::AnyOf(value) => write!(
                f,
                "{value} is not valid under any of the schemas listed in the 'anyOf' keyword"
            ),
            Why::OneOfNone(value) => write!(
                f,
                "{value} is not valid under any of the schemas listed in the 'oneOf' keyword"
            ),
            Why::OneOfMany(value) => write!(
                f,
                "{value} is valid under more than one of the schemas listed in the 'oneOf' keyword"
            ),
            Why::Not(value, schema) => write!(f, "{schema} is not allowed for {value}"),
            Why::False(value) => write!(f, "False schema does not allow {value}"),
            Why::Additional(value, known, patterns) => {
                let mut unexpected = String::new();
                if let Value::Object(members) = value {
                    for key in members.keys() {
                        if !known.contains(&key.as_str()) && !patterns.iter().any(|p| p.is_match(key)) {
                            if !unexpected.is_empty() {
                                unexpected.push_str(", ");
                            }
                            let _ = write!(unexpected, "{}", Value::from(key.as_str()));
                        }
                    }
                }
                write!(
                    f,
                    "Additional properties are not allowed ({unexpected} were unexpected)"
                )
            }
            Why::Contains(value) => write!(f, "None of {value} are valid under the given schema"),
            Why::PropertyName(name) => write!(f, "{} is not a valid property name", Value::from(name)),
            Why::Dependent(member, missing) => write!(
                f,
                "{} is a required property (required by {})",
                Value::from(missing),
                Value::from(member)
            ),
            Why::Format(value, format) => write!(f, r#"{value} is not a "{format}""#),
            Why::Content(value) => write!(
                f,
                "{value} does not decode as its contentEncoding / contentMediaType say"
            ),
        }
    }
}

/// Whether `value` is an integer in JSON Schema's sense: any number with no fractional part
/// (`5.0` is one).
#[inline]
pub fn is_integer(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.is_finite() && f.fract() == 0.0),
        _ => false,
    }
}

/// Whether `value` is an integer in draft-04's sense, a number written without a fraction or
/// exponent part (`1.0` is not one). serde_json keeps an integer as an integer only up to 64
/// bits: a longer one, like a number written with a fraction, arrives as a float, its text
/// lost. A float of magnitude 2^63 or more is taken as written as an integer (every such float
/// is whole, and a 64-bit integer could not hold it), as jsonschema takes it; below that a float
/// was written with a fraction or an exponent.
#[inline]
pub fn is_integer_draft4(value: &Value) -> bool {
    match value {
        Value::Number(n) => {
            n.is_i64()
                || n.is_u64()
                || n.as_f64()
                    .is_some_and(|f| f.is_finite() && f.abs() >= 9_223_372_036_854_775_808.0)
        }
        _ => false,
    }
}

/// A number of the schema (a limit of `minimum`, a value of `const`), kept exactly.
#[derive(Debug, Clone, Copy)]
pub enum Num {
    /// A non-negative integer.
    U(u64),
    /// A negative integer.
    I(i64),
    /// Any other number.
    F(f64),
}

/// Compares a JSON number with a schema number exactly (no rounding of large integers).
#[inline]
pub fn compare(n: &Number, limit: Num) -> Option<Ordering> {
    if let Some(u) = n.as_u64() {
        return Some(match limit {
            Num::U(l) => u.cmp(&l),
            Num::I(_) => Ordering::Greater,
            Num::F(l) => return int_vs_float(i128::from(u), l),
        });
    }
    if let Some(i) = n.as_i64() {
        return Some(match limit {
            Num::U(l) => i128::from(i).cmp(&i128::from(l)),
            Num::I(l) => i.cmp(&l),
            Num::F(l) => return int_vs_float(i128::from(i), l),
        });
    }
    let f = n.as_f64()?;
    match limit {
        Num::U(l) => int_vs_float(i128::from(l), f).map(Ordering::reverse),
        Num::I(l) => int_vs_float(i128::from(l), f).map(Ordering::reverse),
        Num::F(l) => f.partial_cmp(&l),
    }
}

/// Whether the JSON number `n` is below zero (`"minimum": 0` fails): `compare(n, Num::U(0)) ==
/// Some(Ordering::Less)`, as a sign test. `-0.0` is not below zero.
#[inline]
pub fn is_negative(n: &Number) -> bool {
    if n.is_u64() {
        return false;
    }
    // Not a `u64`: a negative integer, or a float.
    n.is_i64() || n.as_f64().is_some_and(|f| f < 0.0)
}

/// Compares an integer with a float without rounding the integer. An integer of magnitude up
/// to 2^53 is a float exactly, and two floats compare exactly: one comparison, where the
/// general path below calls `floor` and a conversion to `i128` (a `minimum` of `1` against
/// `1.1` took both).
#[inline]
fn int_vs_float(i: i128, f: f64) -> Option<Ordering> {
    const EXACT: i128 = 1 << 53;
    if (-EXACT..=EXACT).contains(&i) {
        #[allow(clippy::cast_precision_loss)]
        return (i as f64).partial_cmp(&f);
    }
    int_vs_float_wide(i, f)
}

/// [`int_vs_float`] for an integer past 2^53 in magnitude: the float's whole part compared as an
/// integer.
fn int_vs_float_wide(i: i128, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    // Every integer here has magnitude below 2^64, well inside f64's exponent range.
    if f >= 1.844_674_407_370_955_2e19 {
        return Some(Ordering::Less);
    }
    if f < -9.223_372_036_854_776e18 {
        return Some(Ordering::Greater);
    }
    let floor = f.floor();
    #[allow(clippy::cast_possible_truncation)]
    let whole = floor as i128;
    Some(match i.cmp(&whole) {
        Ordering::Equal if f > floor => Ordering::Less,
        other => other,
    })
}

/// Whether the JSON number `n` is a multiple of `m` (`multipleOf`), exactly: an integer by an
/// integer with `%`; anything else as the decimals that print them (`2.0` is a multiple of
/// `0.00001`, though the binary quotient is 199999.99999999997), by `decimal_divides`. An
/// integer instance's answer never depends on its rounding to a float (`9007199254740993` is a
/// multiple of `1.5`, which its float, 9007199254740992, is not).
///
/// A number serde_json holds as a float is read as the shortest decimal that prints it: the text
/// it came from is gone. Where that text was another number of the same float, the answer is
/// that of the shortest decimal: `18446744073709551616` (2^64, past `u64`, so a float) is read as
/// `18446744073709552000`, not a multiple of `1024`; `1e300` is read as 10^300, a multiple of `5`
/// and not of `7`.
pub fn is_multiple_of(n: &Number, m: Num) -> bool {
    multiple_of(n, m, || match m {
        Num::U(m) => Some((i128::from(m), 0)),
        Num::I(m) => Some((i128::from(m), 0)),
        Num::F(m) => decimal_parts(m),
    })
}

/// A `multipleOf` by a number serde_json holds as a float (`0.01`, `1.5`), its decimal parts
/// read once, on first use: [`is_multiple_of`] prints the multiple again for every instance
/// that reaches the exact test (a valid one, always). The generated validators keep one in a
/// `static` for each such keyword. The answers are [`is_multiple_of`]'s.
#[derive(Debug)]
pub struct Multiple {
    multiple: f64,
    parts: std::sync::OnceLock<Option<(i128, i32)>>,
}

impl Multiple {
    /// The multiple `multiple`, a number of the schema.
    pub const fn new(multiple: f64) -> Self {
        Self {
            multiple,
            parts: std::sync::OnceLock::new(),
        }
    }

    /// Whether `n` is a multiple of it (a call, as [`is_multiple_of`] is).
    pub fn divides(&self, n: &Number) -> bool {
        multiple_of(n, Num::F(self.multiple), || {
            *self.parts.get_or_init(|| decimal_parts(self.multiple))
        })
    }
}

/// The body of [`is_multiple_of`] and [`Multiple::divides`]: `parts` gives the multiple's
/// decimal parts, asked only when the exact test is reached.
#[inline(always)]
fn multiple_of(n: &Number, m: Num, parts: impl FnOnce() -> Option<(i128, i32)>) -> bool {
    // An integer by an integer: their magnitudes, in 64 bits (a remainder of 128-bit integers is
    // a call of sixty-odd instructions; the official suite's integer `multipleOf` groups ask it
    // most).
    let magnitude = n.as_u64().or_else(|| n.as_i64().map(i64::unsigned_abs));
    match (m, magnitude) {
        (Num::U(m), Some(i)) if m > 0 => return i % m == 0,
        (Num::I(m), Some(i)) if m != 0 => return i % m.unsigned_abs() == 0,
        _ => {}
    }
    let integer = integer_value(n);
    let Some(value) = n.as_f64() else {
        return false;
    };
    #[allow(clippy::cast_precision_loss)]
    let multiple = match m {
        Num::U(m) => m as f64,
        Num::I(m) => m as f64,
        Num::F(m) => m,
    };
    if value == 0.0 {
        return true;
    }
    if surely_not_whole(value, multiple) {
        return false;
    }
    // The multiple's decimal parts only now: printing a fraction takes more than the two tests
    // above, which answer most instances that are not multiples.
    let exact = parts();
    let instance = match integer {
        Some(i) => Some((i, 0)),
        None => decimal_parts(value),
    };
    if let (Some(instance), Some(exact)) = (instance, exact) {
        return decimal_divides(instance, exact);
    }
    // A zero or non-finite multiple: generation refuses both (`multipleOf` must be greater than
    // 0, and JSON has no infinity). Only 0, answered above, would be a multiple of 0.
    false
}

/// The value of `n` when serde_json holds it as an integer (`i64` or `u64`). serde_json's own
/// `Number::as_i128` does this in its releases since late 2024; this crate accepts any 1.x.
fn integer_value(n: &Number) -> Option<i128> {
    n.as_i64().map(i128::from).or(n.as_u64().map(i128::from))
}

/// Whether the decimal `a * 10^p` is a whole multiple of the decimal `b * 10^q` (`b` not zero),
/// exactly, with nothing that can overflow. The quotient is `(a / b) * 10^(p - q)`:
/// - when `p >= q`, it is whole when `b`, rid of the factors 2 and 5 that `10^(p - q)` supplies
///   (at most `p - q` of each), divides `a`;
/// - when `p < q`, it is whole when `b * 10^(q - p)` divides `a`; a multiple past 128 bits is
///   larger than `a` (which fits in 128 bits), so only `a = 0` is then a multiple of it.
///
/// Both numbers are decimals (as [`is_multiple_of`] reads them): `1e300` is a multiple of `0.5`
/// and not of `7`, and `2` is not a multiple of `3e-38`, whatever their binary quotients say.
fn decimal_divides((a, p): (i128, i32), (b, q): (i128, i32)) -> bool {
    if a == 0 {
        return true;
    }
    if b == 0 {
        // Only 0 is a multiple of 0 (and the loop below would not end early).
        return false;
    }
    let (a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    let shift = i64::from(p) - i64::from(q);
    if shift >= 0 {
        for factor in [2, 5] {
            let mut supplied = 0;
            while supplied < shift && b.is_multiple_of(factor) {
                b /= factor;
                supplied += 1;
            }
        }
        return a.is_multiple_of(b);
    }
    match u32::try_from(-shift)
        .ok()
        .and_then(|k| 10_u128.checked_pow(k))
        .and_then(|scale| b.checked_mul(scale))
    {
        Some(multiple) => a.is_multiple_of(multiple),
        None => false,
    }
}

/// Whether the exact quotient of the instance by the multiple is surely not a whole number, from
/// the binary quotient of their floats `value` and `multiple` alone: the answer "no" of most
/// `multipleOf` tests on fractions, without printing either number. The exact numbers are the
/// ones [`is_multiple_of`] divides: an integer (the instance, or a `multipleOf` written as one),
/// or the shortest decimal that prints a float.
///
/// For normal numbers, each float is within a relative 2^-53 of its exact number, and
/// the division adds one more rounding of 2^-53: the binary quotient `q` is within a relative
/// 4e-16 of the decimal quotient `N`. When `q` is further than a relative 1e-9 from every whole
/// number, `N` cannot be one. Anything else (subnormals, an overflowing or vanishing quotient,
/// a `q` near a whole number) answers `false` here and is decided exactly.
fn surely_not_whole(value: f64, multiple: f64) -> bool {
    if !value.is_normal() || !multiple.is_normal() {
        return false;
    }
    let quotient = value / multiple;
    quotient.is_normal() && (quotient - quotient.round()).abs() > quotient.abs() * 1e-9
}

/// `f` as `mantissa * 10^exponent` (not necessarily the shortest such pair), from its
/// shortest decimal text; `None` when the mantissa does not fit. A whole number below 2^53 is
/// read directly; any other is printed by `zmij` (serde_json's own float printer, so no crate
/// is added to the build) rather than by `core::fmt`'s `{:e}`, which made `multipleOf` on a
/// fraction the slowest keyword of the official suite (its `multipleOf: 1.5` group: 0.75 to
/// 0.93 us before, 0.58 to 0.66 us after; jsonschema 0.42).
fn decimal_parts(f: f64) -> Option<(i128, i32)> {
    if !f.is_finite() {
        return None;
    }
    if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 {
        // Exact: a whole f64 below 2^53 converts without loss.
        #[allow(clippy::cast_possible_truncation)]
        return Some((f as i128, 0));
    }
    let mut buffer = zmij::Buffer::new();
    let text = buffer.format_finite(f);
    let (mantissa, mut exponent) = match text.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => (mantissa, exponent.parse::<i32>().ok()?),
        None => (text, 0),
    };
    let (negative, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, mantissa),
    };
    let mut digits: i128 = 0;
    let mut fraction = false;
    for byte in mantissa.bytes() {
        if byte == b'.' {
            fraction = true;
            continue;
        }
        digits = digits
            .checked_mul(10)?
            .checked_add(i128::from(byte.checked_sub(b'0').filter(|d| *d < 10)?))?;
        if fraction {
            exponent -= 1;
        }
    }
    Some((if negative { -digits } else { digits }, exponent))
}

/// Whether `value` is one of the strings `sorted` (a long `enum`), sorted by length, then
/// bytes, and without repeats when the validators are generated: a binary search.
#[inline]
pub fn is_one_of_sorted(value: &Value, sorted: &[&str]) -> bool {
    let Value::String(s) = value else { return false };
    in_sorted(sorted, s)
}

/// Whether `s` is one of `sorted` (sorted by length, then bytes): a binary search that
/// compares lengths first, so most probes read no bytes.
#[inline]
fn in_sorted(sorted: &[&str], s: &str) -> bool {
    sorted
        .binary_search_by(|probe| {
            probe
                .len()
                .cmp(&s.len())
                .then_with(|| probe.as_bytes().cmp(s.as_bytes()))
        })
        .is_ok()
}

/// Whether `object` has a member named by one of `sorted` (sorted by length, then bytes, and
/// without repeats when the validators are generated): an `anyOf` whose branches are each
/// `{"required": [name]}`, decided at once instead of branch by branch. Reads whichever is
/// cheaper: each of the object's member names searched among `sorted` (a length comparison
/// most of the time) or, for an object much larger than the list, each name looked up in the
/// object (a string comparison at every step of the map's search).
#[inline]
pub fn has_any_member(object: &serde_json::Map<String, Value>, sorted: &[&str]) -> bool {
    if object.len() <= sorted.len().saturating_mul(4) {
        object.keys().any(|name| in_sorted(sorted, name))
    } else {
        sorted.iter().any(|name| object.contains_key(*name))
    }
}

/// The members of `object` in the map's order, each step taken by one shared, out-of-line
/// call ([`Members`]): what a generated check's pass over the members iterates (`properties`,
/// `patternProperties`, `additionalProperties`, `propertyNames`) when the validators were
/// generated for many schema sets in one program (`Tuning::ManySets` in `pilotage-codegen`).
#[inline]
pub fn members(object: &serde_json::Map<String, Value>) -> Members<'_> {
    Members(object.iter())
}

/// The members of an object, one at a time ([`members`]). A step through the map (a B-tree:
/// the next key in its leaf, or up and down to the next leaf) inlined into every generated
/// pass took 300 to 500 bytes of code in each, more than the check of the members itself in
/// most of the official suite's 1,769 schema sets; one shared copy costs a call a member
/// instead (a pass over Pilotage's `ExecuteResponse`, hot, took 1.7x as long).
#[derive(Debug, Clone)]
pub struct Members<'o>(serde_json::map::Iter<'o>);

impl<'o> Iterator for Members<'o> {
    type Item = (&'o String, &'o Value);

    #[inline(never)]
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next()
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

/// Whether `object` has a member `name`, kept out of line: generated checks call it where a
/// member is only looked up (`required` without a pass over the members, `required` in an
/// `anyOf` / `oneOf` branch, a `then` or an `else`, `dependentRequired`, `dependentSchemas`, the
/// members `unevaluatedProperties` records). One shared copy instead
/// of the map's search inlined in every check keeps the code of many schemas small enough to
/// stay cached (the official suite's groups). A small object is scanned, comparing names in
/// place; a large one searched.
#[inline(never)]
pub fn has_member(object: &serde_json::Map<String, Value>, name: &str) -> bool {
    scan_or_search(object, name).is_some()
}

/// The member `name` of `object`, kept out of line for the same reason as [`has_member`] and
/// read the same way: a discriminating member (a tag), an object `const`'s members.
#[inline(never)]
pub fn lookup<'v>(object: &'v serde_json::Map<String, Value>, name: &str) -> Option<&'v Value> {
    scan_or_search(object, name)
}

/// The most members of an object that a lookup scans ([`member`], [`has_member`], [`lookup`]);
/// a larger object is searched.
const SCANNED_MEMBERS: usize = 16;

/// The body of [`has_member`] and [`lookup`]: a small object scanned, names compared in place
/// ([`same_name`]), a large one searched ([`search`], out of line: its calls to `memcmp` made
/// the scan save and restore six registers, a fifth of a call's instructions).
#[inline(always)]
fn scan_or_search<'v>(object: &'v serde_json::Map<String, Value>, name: &str) -> Option<&'v Value> {
    if object.len() <= SCANNED_MEMBERS {
        object.iter().find_map(|(k, v)| same_name(k, name).then_some(v))
    } else {
        search(object, name)
    }
}

/// The member `name` of a large object ([`scan_or_search`]): the map's own search.
#[inline(never)]
fn search<'v>(object: &'v serde_json::Map<String, Value>, name: &str) -> Option<&'v Value> {
    object.get(name)
}

/// The members of `object` named `names` (without repeats), each `None` when absent: one pass
/// over the object's members, out of line and shared by every check that reads only a few
/// named members (`properties` with one or two names to check, and nothing checked of the
/// other members: no `patternProperties`, no `additionalProperties` but `true` or `{}`; or
/// `additionalProperties: false` beside one or two names, where the caller counts the other
/// members against those found), and the names `required` lists with them (or alone, two to
/// eight of them; a `oneOf` of `required` branches, a dependency's names): those not found are
/// the ones missing. Each member's name is compared with `names` in turn, lengths first; the pass stops once every
/// name is found. The caller then checks the members in the order of `names`. The names come
/// by value: the caller builds the array on its stack (each name's address and length from the
/// code), where a reference to a constant array cost a read of that array, on a cache line of
/// its own that is rarely still cached.
#[inline(never)]
pub fn pick<'v, const N: usize>(
    object: &'v serde_json::Map<String, Value>,
    names: [&str; N],
) -> [Option<&'v Value>; N] {
    debug_assert!(
        names.iter().enumerate().all(|(i, name)| !names[..i].contains(name)),
        "pick's names repeat: {names:?}"
    );
    let mut found = [None; N];
    let mut left = N;
    for (name, value) in object {
        if let Some(index) = names.iter().position(|wanted| same_name(wanted, name)) {
            found[index] = Some(value);
            left -= 1;
            if left == 0 {
                break;
            }
        }
    }
    found
}

/// Whether two member names are the same: lengths first, then byte by byte in place. Names are
/// short, and `==` on strings calls `bcmp` once the lengths agree. Hot, with `==` in [`pick`],
/// draft4's `enum.json#3` took 0.080 µs (six instances) and `allOf.json#1` 0.130 µs; with this,
/// 0.067 µs and 0.095 µs.
#[inline(always)]
fn same_name(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).all(|(x, y)| x == y)
}

/// The member `name` of `object`, read whichever way is cheaper: in a small object, a scan
/// comparing each name for equality (inlined, a length comparison most of the time); in a
/// large one, the map's own search (a string ordering at every step, a call to `memcmp` each).
/// A member of a small object is found in about half the instructions of `get`: ExecuteResponse's
/// `if` asks for `status` among Outcome's three members.
#[inline]
pub fn member<'v>(object: &'v serde_json::Map<String, Value>, name: &str) -> Option<&'v Value> {
    if object.len() <= SCANNED_MEMBERS {
        object.iter().find_map(|(k, v)| (k.as_str() == name).then_some(v))
    } else {
        object.get(name)
    }
}

/// Whether `value` is the number `expected` (numbers compare by value: `1.0` is `1`).
#[inline]
pub fn is_number(value: &Value, expected: Num) -> bool {
    matches!(value, Value::Number(n) if compare(n, expected) == Some(Ordering::Equal))
}

/// JSON equality as JSON Schema defines it for `const`, `enum` and `uniqueItems`: numbers
/// compare by value, objects regardless of member order.
pub fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            // Two numbers of one kind compare directly (`uniqueItems` compares every pair).
            if let (Some(x), Some(y)) = (x.as_i64(), y.as_i64()) {
                return x == y;
            }
            if x.is_f64() && y.is_f64() {
                return x.as_f64() == y.as_f64();
            }
            let y = if let Some(u) = y.as_u64() {
                Num::U(u)
            } else if let Some(i) = y.as_i64() {
                Num::I(i)
            } else {
                Num::F(y.as_f64().unwrap_or(f64::NAN))
            };
            compare(x, y) == Some(Ordering::Equal)
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| equal(a, b)),
        (Value::Object(x), Value::Object(y)) => {
            if x.len() != y.len() {
                return false;
            }
            // serde_json's map iterates in key order, so two equal objects iterate alike and
            // compare in one step each, without a search. With serde_json's `preserve_order`
            // (insertion order, which a downstream build may turn on), a differing name sends
            // the comparison to lookups.
            for ((k, v), (l, w)) in x.iter().zip(y) {
                if k != l {
                    return x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)));
                }
                if !equal(v, w) {
                    return false;
                }
            }
            true
        }
        _ => a == b,
    }
}

/// Arrays up to this many items are checked for `uniqueItems` pair by pair (no allocation);
/// longer ones by their hashes.
const PAIRWISE_ITEMS: usize = 16;

/// Whether the items of `items` are pairwise unequal ([`equal`]). Up to `PAIRWISE_ITEMS` (16)
/// items, every pair is compared. Beyond, each item is hashed consistently with `equal`
/// (`hash_json`, SipHash with secret keys, so collisions cannot be chosen), the hashes sorted,
/// and only items of one hash compared: each item read once, then O(n log n), where the
/// pairwise scan was O(n²) (5·10^9 comparisons for a hostile array of 100,000 items).
pub fn all_unique(items: &[Value]) -> bool {
    if items.len() <= 2 {
        return !matches!(items, [a, b] if equal(a, b));
    }
    if items.len() <= PAIRWISE_ITEMS {
        // Each item summed up once ([`fingerprint`]); only a pair that shares its summary is
        // compared whole. The official suite's `uniqueItems.json#0` (arrays of up to six
        // items of every kind) made an `equal` call for every pair, 41,000 of the 700,000
        // instructions of a pass over the required tests.
        let mut prints = [0_u64; PAIRWISE_ITEMS];
        for (print, item) in prints.iter_mut().zip(items) {
            *print = fingerprint(item);
        }
        let prints = &prints[..items.len()];
        return prints.iter().enumerate().all(|(i, a)| {
            prints[i + 1..]
                .iter()
                .zip(&items[i + 1..])
                .all(|(b, item)| a != b || !equal(&items[i], item))
        });
    }
    let keys = std::collections::hash_map::RandomState::new();
    let mut hashed: Vec<(u64, usize)> = items
        .iter()
        .enumerate()
        .map(|(i, item)| (hash_json(&keys, item), i))
        .collect();
    hashed.sort_unstable();
    hashed.chunk_by(|a, b| a.0 == b.0).all(|same| {
        same.iter()
            .enumerate()
            .all(|(k, &(_, i))| same[k + 1..].iter().all(|&(_, j)| !equal(&items[i], &items[j])))
    })
}

/// A summary of `value` that equal values ([`equal`]) share, cheap to compute: its kind, and for
/// a number the whole number it is (as `hash_json` reads numbers: `1` and `1.0` alike) or else
/// its bits, for a string its length and first byte, for an array or an object its length.
/// Unequal values may share one (`[1]` and `[2]`); [`all_unique`] then compares them whole.
#[inline]
fn fingerprint(value: &Value) -> u64 {
    /// The kinds apart, in the top bits (a number uses all 64: it may share a summary with
    /// another kind, which only costs a comparison).
    const STRING: u64 = 1 << 62;
    const ARRAY: u64 = 2 << 62;
    const OBJECT: u64 = 3 << 62;
    match value {
        Value::Null => 0x6e75_6c6c,
        Value::Bool(b) => 0x626f_6f6c + u64::from(*b),
        // The whole number's low 64 bits (`-1` and `u64::MAX` share them, which only costs a
        // comparison).
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Value::Number(n) => whole_value(n).map_or_else(|| n.as_f64().map_or(0, f64::to_bits), |i| i as u64),
        Value::String(s) => STRING | (s.len() as u64) << 8 | u64::from(s.as_bytes().first().copied().unwrap_or(0)),
        Value::Array(items) => ARRAY | items.len() as u64,
        Value::Object(members) => OBJECT | members.len() as u64,
    }
}

/// The whole number `n` is, when it is one in the range of JSON integers here (`-2^63 .. 2^64`):
/// an integer serde_json holds, or a float with no fraction in that range (a whole float equals
/// exactly one integer, the one it is: `1.0` is `1`, `-0.0` is `0`). What [`equal`] compares
/// alike, [`hash_json`] and [`fingerprint`] read alike through this.
fn whole_value(n: &Number) -> Option<i128> {
    integer_value(n).or_else(|| {
        let f = n.as_f64()?;
        #[allow(clippy::cast_possible_truncation)]
        (f.fract() == 0.0 && (-9.223_372_036_854_776e18..1.844_674_407_370_955_2e19).contains(&f)).then_some(f as i128)
    })
}

/// A hash of `value` consistent with [`equal`]: equal values hash alike. A number that is a
/// whole number in the range of JSON integers here (`-2^63 .. 2^64`) hashes as that integer
/// (`1` and `1.0`, `0` and `-0.0` alike; two distinct integers that round to one `f64` do not
/// share a hash), any other by its bits; an object hashes its members regardless of order.
fn hash_json(keys: &std::collections::hash_map::RandomState, value: &Value) -> u64 {
    use std::hash::{BuildHasher, Hash, Hasher};
    let mut hasher = keys.build_hasher();
    match value {
        Value::Null => 0_u8.hash(&mut hasher),
        Value::Bool(b) => (1_u8, *b).hash(&mut hasher),
        Value::Number(n) => {
            2_u8.hash(&mut hasher);
            match whole_value(n) {
                Some(i) => (0_u8, i).hash(&mut hasher),
                None => (1_u8, n.as_f64().map(f64::to_bits)).hash(&mut hasher),
            }
        }
        Value::String(s) => (3_u8, s.as_str()).hash(&mut hasher),
        Value::Array(items) => {
            (4_u8, items.len()).hash(&mut hasher);
            for item in items {
                hash_json(keys, item).hash(&mut hasher);
            }
        }
        Value::Object(members) => {
            let sum = members.iter().fold(0_u64, |sum, (name, member)| {
                sum.wrapping_add(keys.hash_one((name.as_str(), hash_json(keys, member))))
            });
            (5_u8, members.len(), sum).hash(&mut hasher);
        }
    }
    hasher.finish()
}

/// Draft-07's `contentEncoding` / `contentMediaType` (asserted, as the suite's optional tests
/// expect): whether `s` decodes as base64 (RFC 4648 section 4, padding optional) when
/// `base64`, and whether the (decoded) text is a JSON document when `json`.
pub fn content(s: &str, base64: bool, json: bool) -> bool {
    if !base64 {
        return !json || serde_json::from_str::<serde_core::de::IgnoredAny>(s).is_ok();
    }
    let Some(bytes) = decode_base64(s) else { return false };
    !json || serde_json::from_slice::<serde_core::de::IgnoredAny>(&bytes).is_ok()
}

/// Decodes standard base64 (RFC 4648 section 4); `None` on any other character, a bad
/// length or misplaced padding. Hand-written: eleven lines do not justify a dependency of
/// every generated validator.
fn decode_base64(s: &str) -> Option<Vec<u8>> {
    let text = s.as_bytes();
    let body = text
        .strip_suffix(b"==")
        .or_else(|| text.strip_suffix(b"="))
        .unwrap_or(text);
    if text.len() % 4 == 1 || (body.len() != text.len() && !text.len().is_multiple_of(4)) {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in body {
        let value = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// The length of `s` as JSON Schema counts it: in Unicode code points.
#[inline]
pub fn length(s: &str) -> u64 {
    s.chars().count() as u64
}

#[cfg(test)]
mod tests {
    use super::{
        decimal_divides, decimal_parts, is_integer, is_integer_draft4, is_multiple_of, surely_not_whole, Collect, Cx,
        Ev, Loc, NameBuffer, Num, Stop, Violation, Why,
    };
    use serde_json::{Number, Value};

    /// A xorshift64 generator from `seed`: the tests' reproducible random numbers.
    fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    /// Every pair compared: what `all_unique` answered for any length before it hashed.
    fn pairwise_unique(items: &[Value]) -> bool {
        items
            .iter()
            .enumerate()
            .all(|(i, a)| items[i + 1..].iter().all(|b| !super::equal(a, b)))
    }

    /// `all_unique` past [`super::PAIRWISE_ITEMS`] (by hashes) gives the pairwise answer, over
    /// random arrays of distinct values (integers, integers below 2^64 that share their `f64`
    /// with their neighbours, fractions, strings, arrays, objects), half of them with a twin of
    /// one item added: the same JSON value, written another way where the kind has one (`7` and
    /// `7.0`, `0` and `-0.0`, `[7, 3]` and `[7.0, 3]`, a float inside an object), else again.
    #[test]
    fn hashed_uniqueness_agrees_with_the_pairwise_scan() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let float = |f: f64| Value::Number(Number::from_f64(f).unwrap());
        // Distinct `k` give distinct values; `twin` gives the same value (written another way for
        // kinds 0, 3 and 4).
        #[allow(clippy::cast_precision_loss)]
        let item = |k: u64, twin: bool| -> Value {
            match (k % 6, twin) {
                (0, false) => Value::from(k),
                (0, true) if k == 0 => float(-0.0),
                (0, true) => float(k as f64),
                (1, _) => Value::from(u64::MAX - k),
                (2, _) => Value::from(format!("s{k}")),
                (3, false) => serde_json::json!([k, k / 2]),
                (3, true) => serde_json::json!([k as f64, k / 2]),
                (4, false) => serde_json::json!({"a": k, "b": [k]}),
                (4, true) => serde_json::json!({"b": [k as f64], "a": k}),
                _ => float(k as f64 + 0.5),
            }
        };
        let (mut unique, mut repeated) = (0, 0);
        for round in 0..3_000_u64 {
            let length = usize::try_from(round % 90).unwrap() + 1;
            let mut keys = std::collections::BTreeSet::new();
            while keys.len() < length {
                keys.insert(next() % 100_000);
            }
            let mut items: Vec<Value> = keys.iter().map(|&k| item(k, false)).collect();
            let twin = round % 2 == 1;
            if twin {
                let of = keys
                    .iter()
                    .nth(usize::try_from(next() % length as u64).unwrap())
                    .unwrap();
                let at = usize::try_from(next() % (length as u64 + 1)).unwrap();
                items.insert(at, item(*of, true));
            }
            let answer = super::all_unique(&items);
            assert_eq!(answer, pairwise_unique(&items), "{items:?}");
            assert_eq!(answer, !twin, "{items:?}");
            if items.len() > super::PAIRWISE_ITEMS {
                if answer {
                    unique += 1;
                } else {
                    repeated += 1;
                }
            }
        }
        assert!(
            unique > 1_000 && repeated > 1_000,
            "{unique} unique, {repeated} repeated"
        );
    }

    /// `hash_json` hashes alike exactly the pairs `equal` holds for (keys are secret, so two
    /// unequal values share a hash with probability 2^-64): numbers at the ends of the integer
    /// range and past it, integers that share one `f64`, and values alike but for order.
    #[test]
    fn the_hash_agrees_with_equality() {
        let float = |f: f64| Value::Number(Number::from_f64(f).unwrap());
        let keys = std::collections::hash_map::RandomState::new();
        for (a, b, alike) in [
            (Value::from(i64::MIN), float(-9_223_372_036_854_775_808.0), true),
            (Value::from(i64::MIN), float(-9_223_372_036_854_777_856.0), false),
            (Value::from(1_u64 << 63), float(9_223_372_036_854_775_808.0), true),
            (
                Value::from(18_446_744_073_709_549_568_u64),
                float(18_446_744_073_709_549_568.0),
                true,
            ),
            (Value::from(u64::MAX), float(18_446_744_073_709_551_616.0), false),
            (Value::from(u64::MAX), Value::from(u64::MAX - 1), false),
            (Value::from(-5), float(-5.0), true),
            (Value::from(0), float(-0.0), true),
            (float(0.5), float(0.5), true),
            (float(0.5), float(-0.5), false),
            (Value::from(1), Value::from("1"), false),
            (Value::Null, Value::from(false), false),
            (serde_json::json!([1, 2]), serde_json::json!([2, 1]), false),
            (serde_json::json!([1, 2]), serde_json::json!([1.0, 2]), true),
            (
                serde_json::json!({"a": 1, "b": 2}),
                serde_json::json!({"a": 2, "b": 1}),
                false,
            ),
            (
                serde_json::json!({"a": 1, "b": [2]}),
                serde_json::json!({"b": [2.0], "a": 1.0}),
                true,
            ),
            (
                serde_json::json!({"a": 1}),
                serde_json::json!({"a": 1, "b": null}),
                false,
            ),
        ] {
            assert_eq!(super::equal(&a, &b), alike, "{a} and {b}");
            if alike {
                assert_eq!(super::fingerprint(&a), super::fingerprint(&b), "{a} and {b}");
            }
            assert_eq!(
                super::hash_json(&keys, &a) == super::hash_json(&keys, &b),
                alike,
                "the hashes of {a} and {b}"
            );
        }
    }

    /// A long array: 20,000 distinct items, 2,048 of them the integers just below 2^64, which
    /// round to two `f64`s (1,024 each); then the same with a float equal to one of them.
    #[test]
    fn a_long_array_is_checked_by_hashes() {
        let mut items: Vec<Value> = (0..2_048_u64).map(|k| Value::from(u64::MAX - k)).collect();
        items.extend((0..8_000_i64).map(Value::from));
        items.extend((0..8_000).map(|k| Value::from(format!("item {k}"))));
        items.extend((0..1_952).map(|k| serde_json::json!({"k": k, "list": [k, 0.5]})));
        assert_eq!(items.len(), 20_000);
        assert!(super::all_unique(&items));
        let mut repeated = items.clone();
        repeated.push(Value::Number(Number::from_f64(7_999.0).unwrap()));
        assert!(!super::all_unique(&repeated), "7999.0 equals the item 7999");
        let mut repeated = items;
        repeated.insert(0, serde_json::json!({"list": [1_951, 0.5], "k": 1_951.0}));
        assert!(!super::all_unique(&repeated), "an object equal to the last one");
    }

    /// JSON equality: numbers by value whatever their kind, objects whatever their order,
    /// and nothing equal across kinds.
    #[test]
    fn equal_is_json_equality() {
        let pairs = [
            (
                r#"{"a": 1, "b": [1, 2.0, {"c": null}]}"#,
                r#"{"b": [1.0, 2, {"c": null}], "a": 1.0}"#,
                true,
            ),
            (r#"{"a": 1, "b": 2}"#, r#"{"a": 1, "c": 2}"#, false),
            (r#"{"a": 1, "b": 2}"#, r#"{"a": 1, "b": 3}"#, false),
            (r#"{"a": 1, "b": 2}"#, r#"{"a": 1}"#, false),
            (r#"{"a": {"x": [true]}}"#, r#"{"a": {"x": [1]}}"#, false),
            (
                r#"[1, -1, 18446744073709551615]"#,
                r#"[1.0, -1.0, 18446744073709551615]"#,
                true,
            ),
            (r#"[-1]"#, r#"[1]"#, false),
            (r#"[0.5, -0.0]"#, r#"[0.5, 0]"#, true),
            (r#"[9007199254740993]"#, r#"[9007199254740992.0]"#, false),
            (r#""1""#, r#"1"#, false),
            (r#"null"#, r#"false"#, false),
            (r#"{}"#, r#"[]"#, false),
        ];
        for (left, right, expected) in pairs {
            let (left, right): (Value, Value) = (
                serde_json::from_str(left).unwrap(),
                serde_json::from_str(right).unwrap(),
            );
            assert_eq!(super::equal(&left, &right), expected, "{left} = {right}");
            assert_eq!(super::equal(&right, &left), expected, "{right} = {left}");
        }
    }

    /// The buffer holds exactly the last name given, longer or shorter than the one before; it
    /// is the thread's, kept between uses; two at once each hold their own name.
    #[test]
    fn a_name_buffer_holds_the_last_name() {
        let mut names = NameBuffer::new();
        for name in ["foo", "", "a much longer name", "é", "ab"] {
            assert_eq!(names.holding(name), &Value::String(name.to_owned()));
        }
        drop(names);
        let mut again = NameBuffer::new();
        let Value::String(kept) = &again.0 else {
            panic!("a name buffer holds a string")
        };
        assert!(
            kept.capacity() >= "a much longer name".len(),
            "the thread kept the buffer"
        );
        let mut nested = NameBuffer::new();
        assert_eq!(nested.holding("inner"), &Value::String("inner".to_owned()));
        assert_eq!(again.holding("outer"), &Value::String("outer".to_owned()));
        assert_eq!(nested.holding("inner"), &Value::String("inner".to_owned()));
        drop((again, nested));
        // A buffer grown past a kilobyte is freed, not kept.
        let mut long = NameBuffer::new();
        long.holding(&"x".repeat(100_000));
        drop(long);
        let kept = NameBuffer::new();
        let Value::String(kept) = &kept.0 else {
            panic!("a name buffer holds a string")
        };
        assert!(
            kept.capacity() <= super::NAME_BUFFER_KEPT,
            "kept {} bytes",
            kept.capacity()
        );
    }

    /// A check run for its verdict alone while collecting runs in a context of its own that
    /// stops at the first violation: it sees the dynamic scope (`$dynamicRef` resolves through
    /// it), records nothing, and the scope is whole again after.
    #[test]
    fn a_quiet_check_while_collecting_sees_the_scope_and_records_nothing() {
        fn sees_seven(cx: &mut Cx<Stop>, v: &Value, at: &Loc<'_>) -> bool {
            assert!(cx.stops(), "a quiet check stops at the first violation");
            assert_eq!(cx.outermost(&[7, 9]), Some(7), "the scope is lent");
            let entered = cx.enter(9);
            let failed = cx.fail(at, "/type", Why::Type(v, &["string"]));
            cx.leave(entered);
            !failed
        }
        let mut cx = Cx::<Collect>::new(false);
        let entered = cx.enter(7);
        let value = Value::from(1);
        assert!(!cx.quiet(sees_seven, &value, &Loc::Root), "the failure is the verdict");
        assert_eq!(cx.outermost(&[7, 9]), Some(7), "the scope is given back, as it was");
        assert!(!cx.stops(), "still collecting");
        cx.leave(entered);
        assert_eq!(cx.outermost(&[7]), None);
        assert!(cx.into_violations().is_empty(), "nothing recorded by the quiet check");
        let mut stop = Cx::<Stop>::new(false);
        let mark = stop.mark();
        assert!(stop.fail(&Loc::Root, "/type", Why::Type(&value, &["string"])), "stops");
        assert!(
            stop.passed(mark),
            "constant: a check that stops returns at its first failure, before `passed`"
        );
        assert!(stop.holds_nothing());
    }

    /// A list of violations stops at its budget: each violation here repeats a name of 100 KB
    /// in its pointer (an array of wrong items under a long member name), 2,000 of them would
    /// list 200 MB of pointers. The first is always listed, however large; once full, `fail`
    /// says to stop, nothing is recorded and no check passes; the errors say the list is
    /// truncated.
    #[test]
    fn a_full_list_of_violations_stops_the_search() {
        let long = "k".repeat(100_000);
        let root = Loc::Root;
        let member = root.key(&long);
        let value = Value::from(0);
        let mut cx = Cx::<Collect>::new(false);
        let mut listed = 0;
        for index in 0..2_000 {
            let mark = cx.mark();
            let stop = cx.fail(&member.index(index), "/items/type", Why::Type(&value, &["string"]));
            if stop {
                assert!(!cx.passed(mark), "a full list passes nothing");
                break;
            }
            listed += 1;
        }
        assert!(cx.fail(&root, "/type", Why::Type(&value, &["object"])), "full: stop");
        let list = cx.into_list();
        assert!(list.is_full());
        let bytes: usize = list.len() * (std::mem::size_of::<Violation>() + 100_000 + 30);
        assert!(
            listed == list.len() && bytes <= crate::MAX_VIOLATIONS_BYTES + 200_000,
            "{listed} listed"
        );
        assert!(listed > 100 && listed < 2_000, "{listed} listed");
        let errors = list.into_result("T").unwrap_err();
        assert!(errors.truncated);
        assert!(errors.to_string().contains("at least"), "{errors}");

        // One violation larger than the budget is listed all the same; the next is not.
        let huge = "h".repeat(crate::MAX_VIOLATIONS_BYTES + 1);
        let mut list = crate::ViolationList::new();
        let violation = |pointer: &str| Violation {
            instance_pointer: pointer.to_owned(),
            schema_pointer: String::new(),
            message: String::new(),
        };
        assert!(!list.push(violation(&huge)), "the first is listed");
        assert!(list.push(violation("/a")), "the second would pass the budget");
        assert_eq!(list.len(), 1);
        let errors = list.into_result("T").unwrap_err();
        assert!(errors.truncated);
        // Within the budget, nothing is truncated, and an empty list is no error.
        let mut small = crate::ViolationList::new();
        assert!(!small.push(violation("/a")));
        assert!(!small.into_result("T").unwrap_err().truncated);
        assert!(crate::ViolationList::new().into_result("T").is_ok());
    }

    /// An object of 100,000 members and an array of 100,000 items recorded one by one (as
    /// `additionalProperties` and `contains` record them under `unevaluated*`), each twice:
    /// each is found once, nothing else is, and the annotations are hashed past 16 (a search
    /// of the list per member was `n²/2` comparisons: 5·10⁹ here). Merged into an annotation
    /// that already holds a member, every one is still recorded once.
    #[test]
    fn many_members_and_items_are_hashed() {
        let names: Vec<String> = (0..100_000).map(|i| format!("m{i}")).collect();
        let mut members = Ev::new();
        let mut items = Ev::new();
        for (index, name) in names.iter().enumerate().rev() {
            for _ in 0..2 {
                members.prop(name);
                items.item(index);
            }
        }
        assert!(members.props.indexed() && items.item_set.indexed());
        assert!(names.iter().all(|name| members.has_prop(name)));
        assert!(!members.has_prop("m100000") && !members.has_prop(""));
        assert!((0..names.len()).all(|index| items.has_item(index)));
        assert!(!items.has_item(names.len()));
        let mut merged = Ev::new();
        merged.prop("m7");
        merged.item(7);
        merged.merge(&members);
        merged.merge(&items);
        let (mut recorded, mut indices) = (0, 0);
        merged.props.each(|_| recorded += 1);
        merged.item_set.each(|_| indices += 1);
        assert_eq!((recorded, indices), (names.len(), names.len()));
    }

    /// `has_member`, `lookup` and `pick` answer as the map's own `contains_key` and `get`, on
    /// objects on both sides of the scan's limit (16 members), for present and absent names that
    /// share a length or a prefix with the members (where a comparison that stopped early, or
    /// compared lengths only, would answer wrongly); `same_name` answers as `==`.
    #[test]
    fn member_lookups_agree_with_the_map() {
        use super::{has_member, lookup, pick, same_name};
        let names = [
            "", "a", "b", "ab", "ba", "abc", "abd", "é", "e\u{301}", "status", "statu", "statuses",
        ];
        for size in [0, 1, 2, 5, 16, 17, 40] {
            let mut object = serde_json::Map::new();
            for (index, name) in names.iter().cycle().take(size).enumerate() {
                object.insert(format!("{name}{}", index / names.len()), Value::from(index));
            }
            let mut probes: Vec<String> = object.keys().cloned().collect();
            probes.extend(names.iter().map(|name| format!("{name}9")));
            probes.extend(names.iter().map(|name| (*name).to_owned()));
            for probe in &probes {
                assert_eq!(
                    has_member(&object, probe),
                    object.contains_key(probe),
                    "{size}: {probe:?}"
                );
                assert_eq!(lookup(&object, probe), object.get(probe), "{size}: {probe:?}");
                for other in &probes {
                    assert_eq!(same_name(probe, other), probe == other, "{probe:?} {other:?}");
                    if probe != other {
                        let [first, second] = pick(&object, [probe.as_str(), other.as_str()]);
                        assert_eq!(
                            (first, second),
                            (object.get(probe), object.get(other)),
                            "{size}: {probe:?} {other:?}"
                        );
                    }
                }
                assert_eq!(pick(&object, [probe.as_str()]), [object.get(probe)]);
            }
        }
    }

    /// `same_name` answers as `==` on every name up to 40 bytes against the same name with any
    /// one byte changed (a comparison that skipped a byte, or stopped early, would miss it) and
    /// against itself.
    #[test]
    fn same_name_compares_every_byte() {
        use super::same_name;
        let base = "abcdefghijklmnopqrstuvwxyz0123456789ABCD";
        for n in 0..=base.len() {
            let name = &base[..n];
            // Another allocation of the same bytes (not the same pointer).
            let copy: String = name.chars().collect();
            assert!(same_name(name, &copy), "{name:?}");
            for at in 0..n {
                let mut other = name.as_bytes().to_vec();
                other[at] = b'_';
                let other = String::from_utf8(other).unwrap();
                assert!(!same_name(name, &other), "{name:?} {other:?}");
                assert!(!same_name(&other, name), "{other:?} {name:?}");
            }
        }
    }

    /// `Ev::unevaluated` yields, in order, exactly the members `has_prop` says were not
    /// evaluated: none once every member was, all on a new record.
    #[test]
    fn the_unevaluated_members_are_those_not_recorded() {
        let object: serde_json::Map<String, Value> = ["a", "b", "c", "d", "e", "f"]
            .iter()
            .map(|name| ((*name).to_owned(), Value::from(*name)))
            .collect();
        let names = |ev: &Ev<'_>| {
            ev.unevaluated(&object)
                .map(|(name, _)| name.as_str())
                .collect::<Vec<_>>()
        };
        let mut ev = Ev::new();
        assert_eq!(names(&ev), ["a", "b", "c", "d", "e", "f"]);
        ev.prop("b");
        ev.prop("e");
        ev.prop("z");
        assert_eq!(names(&ev), ["a", "c", "d", "f"]);
        let values: Vec<&Value> = ev.unevaluated(&object).map(|(_, value)| value).collect();
        assert_eq!(values, [&object["a"], &object["c"], &object["d"], &object["f"]]);
        for name in ["a", "c", "d", "f"] {
            ev.prop(name);
        }
        assert!(names(&ev).is_empty());
        let mut all = Ev::new();
        all.all_props();
        assert!(names(&all).is_empty());
    }

    /// `merge` is the union of what both sides evaluated, whether it takes `other`'s lists
    /// whole (this side empty) or adds them one by one, and "every member / item" absorbs
    /// any list on either side.
    #[test]
    fn merge_is_the_union_of_what_was_evaluated() {
        let ev = |props: &[&'static str], items: usize, item_set: &[usize]| {
            let mut e = Ev::new();
            props.iter().for_each(|p| e.prop(p));
            e.items_upto(items);
            item_set.iter().for_each(|&i| e.item(i));
            e
        };
        let names = ["a", "b", "c", "z", "m1", "m5", "m9", "n1", "n9"];
        // Past the inline slots (four names, four indices) on either side.
        let many = ["m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9"];
        let others = ["n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9", "m9"];
        let cases = [
            (ev(&many, 0, &[0, 2, 4, 6, 7]), ev(&others, 0, &[1, 3, 5, 7])),
            (ev(&[], 0, &[]), ev(&many, 2, &[2, 3, 4, 5, 6])),
            (ev(&["a", "m3"], 0, &[3]), ev(&many, 0, &[0, 1, 2, 3, 4, 5])),
            (ev(&[], 0, &[]), ev(&["a", "b"], 1, &[3])),
            (ev(&["b"], 2, &[5]), ev(&["a", "b"], 1, &[3, 5])),
            (ev(&["c"], 0, &[1]), ev(&[], 0, &[])),
            (ev(&[], 4, &[]), ev(&[], 0, &[2, 6])),
        ];
        for (left, right) in cases {
            let expected_props: Vec<bool> = names.iter().map(|n| left.has_prop(n) || right.has_prop(n)).collect();
            let expected_items: Vec<bool> = (0..8).map(|i| left.has_item(i) || right.has_item(i)).collect();
            let mut merged = left;
            merged.merge(&right);
            assert_eq!(
                names.iter().map(|n| merged.has_prop(n)).collect::<Vec<_>>(),
                expected_props
            );
            assert_eq!((0..8).map(|i| merged.has_item(i)).collect::<Vec<_>>(), expected_items);
            let mut recorded: Vec<&str> = Vec::new();
            merged.props.each(|name| recorded.extend(name));
            let mut unique = recorded.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), recorded.len(), "no member recorded twice");
        }
        let mut all = ev(&[], 0, &[]);
        all.all_props();
        all.all_items();
        all.merge(&ev(&["a"], 1, &[4]));
        assert!(all.has_prop("anything") && all.has_item(100));
        assert!(all.props.is_empty() && all.item_set.is_empty());
        let mut some = ev(&["a"], 0, &[2]);
        let mut every = Ev::new();
        every.all_props();
        every.all_items();
        some.merge(&every);
        assert!(some.has_prop("anything") && some.has_item(100));
        assert!(some.props.is_empty() && some.item_set.is_empty());
    }

    /// `decimal_parts` as it was, reading Rust's `{:e}`: the reference of the faster one.
    fn decimal_parts_reference(f: f64) -> Option<(i128, i32)> {
        struct Buffer {
            bytes: [u8; 40],
            len: usize,
        }
        impl std::fmt::Write for Buffer {
            fn write_str(&mut self, s: &str) -> std::fmt::Result {
                let end = self.len + s.len();
                self.bytes
                    .get_mut(self.len..end)
                    .ok_or(std::fmt::Error)?
                    .copy_from_slice(s.as_bytes());
                self.len = end;
                Ok(())
            }
        }
        if !f.is_finite() {
            return None;
        }
        let mut buffer = Buffer { bytes: [0; 40], len: 0 };
        std::fmt::Write::write_fmt(&mut buffer, format_args!("{f:e}")).ok()?;
        let text = std::str::from_utf8(&buffer.bytes[..buffer.len]).ok()?;
        let (mantissa, exponent) = text.split_once('e')?;
        let mut exponent: i32 = exponent.parse().ok()?;
        let (negative, mantissa) = match mantissa.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, mantissa),
        };
        let mut digits: i128 = 0;
        let mut fraction = false;
        for byte in mantissa.bytes() {
            if byte == b'.' {
                fraction = true;
                continue;
            }
            digits = digits
                .checked_mul(10)?
                .checked_add(i128::from(byte.checked_sub(b'0')?))?;
            if fraction {
                exponent -= 1;
            }
        }
        Some((if negative { -digits } else { digits }, exponent))
    }

    /// `(digits, exponent)` with no trailing zero in `digits` (zero is `(0, 0)`).
    fn normalized(parts: Option<(i128, i32)>) -> Option<(i128, i32)> {
        parts.map(|(mut digits, mut exponent)| {
            if digits == 0 {
                return (0, 0);
            }
            while digits % 10 == 0 {
                digits /= 10;
                exponent += 1;
            }
            (digits, exponent)
        })
    }

    #[test]
    fn a_sorted_enum_finds_exactly_its_strings() {
        let mut strings: Vec<String> = (0..300)
            .map(|i| format!("{}{i}", ["A", "ASYNC", "é", ""][i % 4]))
            .collect();
        strings.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
        let sorted: Vec<&str> = strings.iter().map(String::as_str).collect();
        for probe in (0..400).map(|i| format!("{}{i}", ["A", "ASYNC", "é", "", "B"][i % 5])) {
            let value = Value::String(probe.clone());
            assert_eq!(
                super::is_one_of_sorted(&value, &sorted),
                sorted.contains(&probe.as_str()),
                "{probe}"
            );
        }
        assert!(super::is_one_of_sorted(&Value::String("A0".into()), &sorted));
        assert!(!super::is_one_of_sorted(&Value::String(String::new()), &sorted));
        assert!(!super::is_one_of_sorted(&Value::from(0), &sorted));
    }

    /// Both readings (the object's names searched in the list, the list's names looked up in
    /// the object) agree with a plain scan, for objects smaller and much larger than the list.
    /// `member` finds what `get` finds, by either way (a scan up to 16 members, a search
    /// beyond), for names present, absent, a prefix of another, and beyond ASCII.
    #[test]
    fn is_negative_is_compare_below_zero() {
        let numbers = [
            "0",
            "1",
            "-1",
            "0.0",
            "-0.0",
            "0.5",
            "-0.5",
            "1e-300",
            "-1e-300",
            "18446744073709551615",
            "-9223372036854775808",
            "1e300",
            "-1e300",
        ];
        for text in numbers {
            let n: Number = serde_json::from_str(text).unwrap();
            let expected = super::compare(&n, Num::U(0)) == Some(std::cmp::Ordering::Less);
            assert_eq!(super::is_negative(&n), expected, "{text}");
        }
    }

    #[test]
    fn member_finds_what_get_finds() {
        for size in [0usize, 1, 3, 16, 17, 100] {
            let mut object: serde_json::Map<String, Value> =
                (0..size).map(|i| (format!("m{i}"), Value::from(i))).collect();
            object.insert("é".into(), Value::Bool(true));
            for name in ["m0", "m1", "m15", "m16", "m99", "m", "m100", "é", "e", ""] {
                let found = super::member(&object, name);
                assert_eq!(found, object.get(name), "{name} among {size}");
                if let Some(found) = found {
                    assert!(std::ptr::eq(found, &object[name]), "{name}: the member itself");
                }
            }
        }
    }

    #[test]
    fn has_any_member_reads_either_side_the_same() {
        let mut names: Vec<String> = (0..12).map(|i| format!("n{}", i * 7)).collect();
        names.push("é".into());
        names.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
        let sorted: Vec<&str> = names.iter().map(String::as_str).collect();
        for size in [0usize, 1, 5, 13, 48, 49, 60, 200] {
            for offset in [0usize, 1, 3] {
                let object: serde_json::Map<String, Value> = (0..size)
                    .map(|i| (format!("n{}", i * 5 + offset), Value::Null))
                    .collect();
                let expected = object.keys().any(|k| sorted.contains(&k.as_str()));
                assert_eq!(super::has_any_member(&object, &sorted), expected, "{size} {offset}");
            }
        }
        let mut object = serde_json::Map::new();
        object.insert("é".into(), Value::Null);
        assert!(super::has_any_member(&object, &sorted));
        assert!(!super::has_any_member(&object, &[]));
        let large: serde_json::Map<String, Value> = (0..100).map(|i| (format!("x{i}"), Value::Null)).collect();
        assert!(!super::has_any_member(&large, &["n0"]), "looked up, not there");
        let mut large = large;
        large.insert("n0".into(), Value::Null);
        assert!(super::has_any_member(&large, &["n0"]), "looked up, there");
    }

    #[test]
    fn decimal_parts_agree_with_the_formatting_they_replace() {
        let mut state = 0x5eed_u64;
        let mut next = move || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let mut values = vec![
            0.0,
            -0.0,
            1.5,
            35.0,
            1e-7,
            0.1,
            0.3,
            1e300,
            -2.5e-300,
            9_007_199_254_740_992.0,
            1e22,
            f64::MIN_POSITIVE,
            f64::MAX,
        ];
        for _ in 0..100_000 {
            // Any finite bit pattern, and short decimals (k / 10^j), as schemas and instances write them.
            let bits = f64::from_bits(next());
            if bits.is_finite() {
                values.push(bits);
            }
            #[allow(clippy::cast_precision_loss)]
            values.push((next() % 2_000_001) as f64 / 10f64.powi(i32::try_from(next() % 12).unwrap()) - 1000.0);
        }
        let mut decided = 0;
        let mut ties = 0;
        for f in values {
            let ours = normalized(decimal_parts(f));
            let reference = normalized(decimal_parts_reference(f));
            if ours != reference {
                // Two shortest decimals equally near the binary value (17 digits, the last one
                // a tie): `core::fmt` rounds the tie up, zmij to even. Both print `f` exactly
                // back and are as long: either is the shortest text of `f`.
                let (Some((a, x)), Some((b, y))) = (ours, reference) else {
                    panic!("{f:e}: {ours:?} vs {reference:?}");
                };
                assert_eq!(format!("{a}e{x}").parse::<f64>(), Ok(f), "{f:e}: {ours:?}");
                assert_eq!(format!("{b}e{y}").parse::<f64>(), Ok(f), "{f:e}: {reference:?}");
                assert_eq!(
                    a.unsigned_abs().to_string().len(),
                    b.unsigned_abs().to_string().len(),
                    "{f:e}"
                );
                assert!((a - b).abs() == 1 && x == y, "{f:e}: {ours:?} vs {reference:?}");
                ties += 1;
            }
            decided += usize::from(ours.is_some());
        }
        assert!(decided > 100_000, "{decided}");
        // Ties are rare: a difference in more than 1 % would be a different reading.
        assert!(ties < 2_000, "{ties} ties");
    }

    #[test]
    fn draft4_integers_are_written_without_a_fraction() {
        let parse = |text: &str| serde_json::from_str::<Value>(text).unwrap();
        for (text, draft4, later) in [
            ("1", true, true),
            ("-9223372036854775808", true, true),
            ("18446744073709551615", true, true),
            ("1.0", false, true),
            ("1e2", false, true),
            ("1.5", false, false),
            // Past 64 bits serde_json keeps a float: whole, and taken as written whole.
            ("12345678910111213141516171819202122232425262728293031", true, true),
            ("-12345678910111213141516171819202122232425262728293031", true, true),
            ("\"1\"", false, false),
        ] {
            assert_eq!(is_integer_draft4(&parse(text)), draft4, "draft-04: {text}");
            assert_eq!(is_integer(&parse(text)), later, "draft-06 and later: {text}");
        }
    }

    /// The binary quotient's quick "no" is never wrong: over decimals of up to 17 digits at
    /// many scales, wherever it answers, the exact decimal division answers "no" as well; and it
    /// does answer for most pairs that are not multiples.
    #[test]
    fn a_quick_no_agrees_with_the_exact_division() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let (mut quick, mut not_multiples) = (0, 0);
        for round in 0..200_000 {
            let digits = |n: u64, width: u32| n % 10_u64.pow(width);
            let multiple_digits = digits(next(), 1 + (round % 6)) + 1;
            let multiple_exponent = -((next() % 12) as i32);
            let multiple: f64 = format!("{multiple_digits}e{multiple_exponent}").parse().unwrap();
            // Half the values are whole multiples, half any decimal.
            let value: f64 = if round % 2 == 0 {
                let factor = next() % 1_000_000;
                format!(
                    "{}e{multiple_exponent}",
                    u128::from(multiple_digits) * u128::from(factor)
                )
                .parse()
                .unwrap()
            } else {
                format!("{}e{}", digits(next(), 1 + (round % 17)), -((next() % 20) as i32))
                    .parse()
                    .unwrap()
            };
            let Some(exact) = scaled_remainder(value, multiple) else {
                continue;
            };
            if !exact {
                not_multiples += 1;
            }
            if surely_not_whole(value, multiple) {
                quick += 1;
                assert!(
                    !exact,
                    "{value} / {multiple}: the quick answer says no, the exact one yes"
                );
            }
        }
        // The rest have quotients past 1e9, where every binary number is near a whole one.
        assert!(quick * 4 > not_multiples * 3, "quick no in {quick} of {not_multiples}");
    }

    fn multiple(value: f64, of: f64) -> bool {
        is_multiple_of(&Number::from_f64(value).unwrap(), Num::F(of))
    }

    /// The plain exact division, the reference for [`decimal_divides`]: both decimals scaled to
    /// their shared exponent, then `%`; `None` when a scaled number does not fit in 128 bits.
    fn scaled_remainder(value: f64, multiple: f64) -> Option<bool> {
        let (value, value_exponent) = decimal_parts(value)?;
        let (multiple, multiple_exponent) = decimal_parts(multiple)?;
        let shared = value_exponent.min(multiple_exponent);
        let scale = |digits: i128, exponent: i32| {
            digits.checked_mul(10_i128.checked_pow(u32::try_from(exponent - shared).ok()?)?)
        };
        Some(scale(value, value_exponent)? % scale(multiple, multiple_exponent)? == 0)
    }

    /// `decimal_divides` (which cannot overflow) agrees with the plain scaled division wherever
    /// that fits in 128 bits, over 300,000 random pairs of decimals (multiples and not), and
    /// answers exactly where it does not.
    #[test]
    fn the_decimal_division_agrees_with_the_scaled_one() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let (mut compared, mut multiples) = (0, 0);
        for round in 0..300_000_u64 {
            let width = 1 + u32::try_from(round % 9).unwrap();
            let multiple_digits = i128::from(next() % 10_u64.pow(width) + 1);
            let multiple_exponent = i32::try_from(next() % 41).unwrap() - 20;
            let (value_digits, value_exponent) = if round % 2 == 0 {
                // A whole multiple, written with an exponent of its own.
                let product = multiple_digits * i128::from(next() % 100_000);
                let drop = i32::try_from(next() % 6).unwrap();
                let divisor = 10_i128.pow(drop.unsigned_abs());
                if product % divisor == 0 {
                    (product / divisor, multiple_exponent + drop)
                } else {
                    (product, multiple_exponent)
                }
            } else {
                (
                    i128::from(next() % 10_u64.pow(1 + u32::try_from(round % 15).unwrap())),
                    i32::try_from(next() % 41).unwrap() - 20,
                )
            };
            let sign = if next().is_multiple_of(2) { 1 } else { -1 };
            let value: f64 = format!("{}e{value_exponent}", sign * value_digits).parse().unwrap();
            let multiple: f64 = format!("{multiple_digits}e{multiple_exponent}").parse().unwrap();
            let (Some(parts), Some(multiple_parts)) = (decimal_parts(value), decimal_parts(multiple)) else {
                continue;
            };
            let answer = decimal_divides(parts, multiple_parts);
            if let Some(expected) = scaled_remainder(value, multiple) {
                assert_eq!(answer, expected, "{value} multipleOf {multiple}");
                compared += 1;
                multiples += usize::from(expected);
            }
        }
        assert!(compared > 250_000, "compared {compared}");
        assert!(
            multiples > 100_000 && multiples < compared - 100_000,
            "{multiples} multiples of {compared}"
        );
        // Past 128 bits, where the scaled division gives up.
        for (value, of, expected) in [
            (1e300, 0.5, true),
            (1e300, 7.0, false),
            (1e300, 8.0, true),
            (1e300, 3e-38, false),
            (3e300, 3e-38, true),
            (1e-200, 1e-300, true),
            (1e-300, 1e-200, false),
            (2.5e-100, 5e-301, true),
            (2.5e-100, 3e-301, false),
            (1.5e-300, 1e-200, false),
            (1e308, 1e-308, true),
        ] {
            assert_eq!(scaled_remainder(value, of), None, "{value} by {of} fits in 128 bits");
            assert_eq!(multiple(value, of), expected, "{value} multipleOf {of}");
        }
        // Each branch on its own (`is_multiple_of` answers some of these earlier, from the binary
        // quotient): (digits, exponent) pairs.
        for (value, of, expected) in [
            // p < q, the multiple past 128 bits: only 0 is a multiple.
            ((1, -300), (1, -200), false),
            ((5, 0), (1, 300), false),
            ((i128::MAX, 0), (1, 39), false),
            ((0, 0), (1, 300), true),
            // p < q, within 128 bits.
            ((3, 0), (3, 38), false),
            ((30, 0), (3, 1), true),
            ((-30, 0), (-3, 1), true),
            // p >= q: 2s and 5s supplied by 10^(p - q), at most p - q of each.
            ((1, 3), (8, 0), true),
            ((1, 3), (16, 0), false),
            ((1, 3), (125, 0), true),
            ((1, 3), (625, 0), false),
            ((3, 700), (3_000, 0), true),
            ((1, 700), (3, 0), false),
            ((i128::MIN, 0), (2, 0), true),
            // A zero multiple: only 0.
            ((5, 0), (0, 0), false),
            ((0, 0), (0, 0), true),
        ] {
            assert_eq!(decimal_divides(value, of), expected, "{value:?} by {of:?}");
        }
    }

    #[test]
    fn multiple_of_reads_decimals_exactly() {
        assert!(multiple(2.0, 0.00001), "the binary quotient is 199999.99999999997");
        assert!(multiple(1_070_468.14, 0.01));
        assert!(multiple(19.99, 0.01));
        assert!(multiple(0.0075, 0.0001));
        assert!(multiple(5.35, 2.675));
        assert!(!multiple(1_070_468.145, 0.01));
        assert!(!multiple(0.00751, 0.0001));
        assert!(
            multiple(1e308, 0.5),
            "the binary quotient overflows; the decimal one is 2e308"
        );
        assert!(!multiple(4.5, 2.0));
    }

    /// A fractional multiple's decimal parts read once (`Multiple`) give `is_multiple_of`'s
    /// answers, on the first call (which reads them) and every later one, for instances that
    /// are multiples written as integers, as fractions and with exponents, and for ones that
    /// miss by a last digit.
    #[test]
    fn a_multiple_read_once_answers_as_is_multiple_of() {
        use super::Multiple;
        let multiples = [0.5, 1.5, 0.01, 0.0001, 0.123_456_789, 1e-8, 2.5e-5, 1.1];
        let mut multiples_found = 0;
        for m in multiples {
            let once = Multiple::new(m);
            for k in [0_i64, 1, 2, 3, 7, 10, 99, 100, 12_345, -4, 1 << 40] {
                #[allow(clippy::cast_precision_loss)]
                let exact = format!("{}", k as f64 * m);
                for text in [
                    exact.clone(),
                    format!("{exact}1"),
                    format!("{k}"),
                    format!("{k}e-2"),
                    "1e308".to_owned(),
                ] {
                    let Ok(number) = serde_json::from_str::<Number>(&text) else {
                        continue;
                    };
                    let expected = is_multiple_of(&number, Num::F(m));
                    for _ in 0..2 {
                        assert_eq!(once.divides(&number), expected, "{text} by {m}");
                    }
                    multiples_found += usize::from(expected);
                }
            }
        }
        assert!(multiples_found > 50, "{multiples_found} multiples among the cases");
    }

    /// An integer against a float: the one-comparison path (magnitudes up to 2^53) answers as
    /// the general one, around 2^53 (where the next integer has no float of its own), at zero
    /// (`-0.0`), on fractions either side of each integer, and against NaN and the infinities;
    /// and both agree with comparing exact rationals (`i` against the float's exact value).
    #[test]
    fn an_integer_against_a_float_agrees_with_the_general_path() {
        use super::{int_vs_float, int_vs_float_wide};
        use std::cmp::Ordering;
        let edge = 1_i128 << 53;
        let mut integers: Vec<i128> = vec![0, 1, 2, 3, 1000, edge - 2, edge - 1, edge, edge + 1, edge + 2];
        integers.extend(integers.clone().into_iter().map(|i| -i));
        let mut floats: Vec<f64> = vec![0.0, -0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, f64::MIN_POSITIVE];
        for &i in &integers {
            #[allow(clippy::cast_precision_loss)]
            let f = i as f64;
            floats.extend([f, f.next_up(), f.next_down(), f + 0.5, f - 0.5]);
        }
        let mut compared = 0;
        for &i in &integers {
            for &f in &floats {
                let wide = int_vs_float_wide(i, f);
                assert_eq!(int_vs_float(i, f), wide, "{i} vs {f:e}");
                // The exact answer: a finite float is `m * 2^e` exactly; compare `i * 2^-e`
                // with `m` when `e < 0`, else `i` with `m * 2^e` (all within i128 here).
                let exact = if f.is_nan() {
                    None
                } else if f.is_infinite() {
                    Some(if f > 0.0 { Ordering::Less } else { Ordering::Greater })
                } else {
                    let bits = f.to_bits();
                    let sign = if bits >> 63 == 1 { -1_i128 } else { 1 };
                    let exponent = i32::try_from((bits >> 52) & 0x7ff).unwrap();
                    let fraction = i128::from(bits & ((1 << 52) - 1));
                    let (mantissa, exponent) = if exponent == 0 {
                        (fraction, -1074)
                    } else {
                        (fraction | 1 << 52, exponent - 1075)
                    };
                    let m = sign * mantissa;
                    if exponent >= 0 {
                        Some(i.cmp(&(m << exponent)))
                    } else if exponent > -100 {
                        Some((i << -exponent).cmp(&m))
                    } else {
                        // Tiny (a zero, a subnormal, `MIN_POSITIVE`): strictly between -1
                        // and 1, so only its sign matters against 0.
                        Some(if i == 0 { 0.cmp(&m) } else { i.cmp(&0) })
                    }
                };
                assert_eq!(wide, exact, "{i} vs {f:e}");
                compared += 1;
            }
        }
        assert!(compared > 1000, "{compared} comparisons");
    }

    /// An integer by an integer is answered in 64 bits, from the magnitudes: the same answers
    /// as the remainder of the 128-bit integers, at every edge of `i64` and `u64`.
    #[test]
    fn an_integer_by_an_integer_agrees_with_128_bit_remainders() {
        let values: Vec<i128> = [0_i128, 1, 2, 3, 6, 7, 30, 1 << 62, 1 << 63, 3 << 62]
            .into_iter()
            .chain([i128::from(i64::MAX), i128::from(u64::MAX), i128::from(u64::MAX) - 1])
            .flat_map(|v| [v, -v])
            .chain([i128::from(i64::MIN), i128::from(i64::MIN) + 1])
            .filter(|v| *v >= i128::from(i64::MIN) && *v <= i128::from(u64::MAX))
            .collect();
        let multiples = [
            Num::U(1),
            Num::U(2),
            Num::U(3),
            Num::U(7),
            Num::U(1 << 62),
            Num::U(1 << 63),
            Num::U(u64::MAX),
            Num::I(-1),
            Num::I(-2),
            Num::I(-3),
            Num::I(i64::MIN),
            Num::I(i64::MIN + 1),
        ];
        let mut multiples_found = 0;
        for value in &values {
            let number: Number = serde_json::from_str(&value.to_string()).unwrap();
            assert!(
                number.as_f64().is_some() && !number.is_f64(),
                "{value} is held as an integer"
            );
            for m in multiples {
                let divisor = match m {
                    Num::U(m) => i128::from(m),
                    Num::I(m) => i128::from(m),
                    Num::F(_) => unreachable!("only integers here"),
                };
                let expected = value % divisor == 0;
                multiples_found += usize::from(expected);
                assert_eq!(is_multiple_of(&number, m), expected, "{value} multipleOf {m:?}");
            }
        }
        assert!(multiples_found > 50 && multiples_found < values.len() * multiples.len() - 50);
    }

    /// An integer instance is divided exactly, never rounded to a float first (past 2^53 the
    /// float is another number).
    #[test]
    fn an_integer_is_divided_by_a_fraction_exactly() {
        let of = |text: &str, m: f64| is_multiple_of(&serde_json::from_str::<Number>(text).unwrap(), Num::F(m));
        assert!(of("9007199254740993", 1.5), "6004799503160662 times 1.5");
        assert!(!of("9007199254740995", 1.5));
        assert!(of("9007199254740993", 0.1));
        assert!(
            of("18446744073709551615", 1.5),
            "u64::MAX is 12297829382473034410 times 1.5"
        );
        assert!(!of("18446744073709551614", 1.5));
        assert!(of("-9223372036854775807", 0.5));
        assert!(of("0", 0.0001));
        assert!(of("7", 0.0001));
        assert!(!of("7", 0.3));
        assert!(of("9", 0.3));
        assert!(of("-9", 0.3));
        assert!(of("100", 1e2));
        assert!(!of("150", 1e2));
        // Scales past 128 bits: answered exactly, not by the float path.
        assert!(!of("2", 3e-38), "2 / 3e-38 is not whole");
        assert!(!of("1", 3e-39));
        assert!(of("3", 3e-38), "3 / 3e-38 = 1e38");
        assert!(of("6", 3e-300));
        assert!(!of("7", 3e-300));
        assert!(of("0", 1e300));
        assert!(!of("5", 1e300));
        assert!(!of("18446744073709551615", 1e30));
        // Agrees with the float path wherever floats are exact.
        for i in -300_i64..300 {
            for m in [0.5, 1.5, 0.25, 2.5, 0.1, 0.3, 7.0, 1e-3] {
                let exact = of(&i.to_string(), m);
                #[allow(clippy::cast_precision_loss)]
                let float = is_multiple_of(&Number::from_f64(i as f64 + 0.0).unwrap(), Num::F(m));
                assert_eq!(exact, float, "{i} multipleOf {m}");
            }
        }
    }
}
