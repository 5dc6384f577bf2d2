//! The stream program: each schema location reachable from a definition as one
//! `pilotage_types::validate::stream::Node`, for validation fused into deserialization
//! (`pilotage_types::parse_slice`). It holds the keywords a value can be checked against as it
//! is read: `type`, scalar `const` / `enum`, the string and number keywords, asserted
//! `format`s, `properties` / `patternProperties` / `additionalProperties` / `required` /
//! the member counts, `prefixItems` / `items` / the item counts, and the applicators (`$ref`,
//! `allOf`, `anyOf`, `oneOf`, `not`, `if` / `then` / `else`), each read exactly as
//! [`super::Gen::body`] reads it (the shared pieces, [`super::Gen::effective`] and
//! [`super::format_check`], are the same functions).
//!
//! Any other keyword that takes effect at a location (`uniqueItems`, `contains`,
//! `propertyNames`, the dependent keywords, `unevaluated*`, dynamic references, draft-07's
//! content keywords, a non-scalar `const` or `enum`, `additionalItems`) makes the location
//! *opaque*: reaching it at run time leaves the fused verdict unknown, and the two-pass
//! validation decides. A set using dynamic references gets no program at all.

use std::collections::BTreeMap;

use proc_macro2::TokenStream;
use quote::quote;
use serde_json::Value;

use super::{child, count, format_check, number, required_names, sorted, Draft, Gen, Location};

/// Keywords the program does not hold: a location where one takes effect is opaque.
const OPAQUE: &[&str] = &[
    "$dynamicRef",
    "$recursiveRef",
    "contains",
    "propertyNames",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
    "contentEncoding",
    "contentMediaType",
];

/// A member name's row in a node's table: its subschema's node, and its index in `required`.
type Member = (Option<u32>, Option<u8>);

/// The program being built: a node index per location, in order of discovery.
#[derive(Default)]
struct Program {
    ids: BTreeMap<Location, u32>,
    nodes: Vec<TokenStream>,
    /// What each node applies and names, for [`frames`].
    shapes: Vec<Shape>,
    /// The shape of the node being built.
    shape: Shape,
    queue: Vec<(u32, Location)>,
}

/// What a node applies to its value and which member names it reads: what the run time's
/// `Run::begin` and `Run::member` read of it, for the frames expanded here ([`frames`]).
#[derive(Default, Clone)]
struct Shape {
    all_of: Vec<u32>,
    any_of: Vec<u32>,
    one_of: Vec<u32>,
    not: Option<u32>,
    condition: Option<(u32, Option<u32>, Option<u32>)>,
    /// Whether the compatible reading skips this node's `anyOf` or `oneOf` (all string
    /// `const`s: `stream::open::ANY_OF`, `ONE_OF`). A frame expanded here includes those
    /// subschemas, so a frame holding such a node is not valid for the compatible reading
    /// (`Frame::new`'s `compatible_too`).
    skips_applicators: bool,
    /// `properties` and `required` as one table (sorted by length, then bytes).
    names: Vec<(String, Member)>,
    /// Whether it has `patternProperties` or `additionalProperties`.
    rest: bool,
}

impl Shape {
    fn applies(&self) -> bool {
        !self.all_of.is_empty()
            || !self.any_of.is_empty()
            || !self.one_of.is_empty()
            || self.not.is_some()
            || self.condition.is_some()
    }
}

/// The most locations a frame expanded by the generator holds; a larger one is expanded at
/// run time.
const MAX_EXPANDED: usize = 256;

/// The locations `Run::begin` pushes for `roots`: the roots, then, breadth first, what each
/// location applies (`allOf` and `$ref`, `anyOf`, `oneOf`, `not`, `if`, `then`, `else`), each
/// as (node, the place of the location applying it, how: `stream::Frame::new`'s numbers).
/// `None` past [`MAX_EXPANDED`].
fn expand(shapes: &[Shape], roots: &[u32]) -> Option<Vec<(u32, u16, u8)>> {
    let mut entries: Vec<(u32, u16, u8)> = roots.iter().map(|&root| (root, u16::MAX, 0)).collect();
    let mut i = 0;
    while i < entries.len() {
        if entries.len() > MAX_EXPANDED {
            return None;
        }
        let shape = shapes.get(entries[i].0 as usize)?;
        let owner = u16::try_from(i).ok()?;
        let mut push = |nodes: &[u32], role: u8| entries.extend(nodes.iter().map(|&node| (node, owner, role)));
        push(&shape.all_of, 1);
        push(&shape.any_of, 2);
        push(&shape.one_of, 3);
        push(shape.not.as_slice(), 4);
        if let Some((condition, then, otherwise)) = shape.condition {
            push(&[condition], 5);
            push(then.as_slice(), 6);
            push(otherwise.as_slice(), 7);
        }
        i += 1;
    }
    (entries.len() <= MAX_EXPANDED).then_some(entries)
}

/// The most member names a frame expanded here holds: past it (a location with a large table
/// applied beside others), the frame is left to the run time, whose lookups it would save.
const MAX_FRAME_NAMES: usize = 64;

/// A member name of a frame expanded here: the name, each location naming it (its place in the
/// frame, its row), and the frame its members' locations make (an index into [`frames`]' sets).
type FrameRow = (String, Vec<(u16, Member)>, Option<usize>);

/// A frame expanded here, before it is written: its roots, its locations ([`expand`]), its
/// names and the places of the locations with `patternProperties` or `additionalProperties`.
struct Expanded {
    roots: usize,
    entries: Vec<(u32, u16, u8)>,
    names: Vec<FrameRow>,
    rest: Vec<u16>,
}

/// The frames expanded here (`stream::Frame`): one per node with applicators, and one per
/// set of locations the members of one name push in a frame expanded here (so a value's frame
/// comes with its name), as statics `STREAM_FRAME_{index}`; the index of each node's own
/// frame. `trivial`: the nodes that accept every value (the run time pushes none of them);
/// `guards`: the opaque nodes and the schema `false`.
///
/// Bounded: a frame holds at most [`MAX_EXPANDED`] locations and [`MAX_FRAME_NAMES`] names,
/// and all of them together at most twice the names of the nodes' own tables (plus 256), so
/// the data stays of the size of the program's own.
fn frames(shapes: &[Shape], trivial: &[bool], guards: &[bool]) -> (Vec<TokenStream>, BTreeMap<u32, usize>) {
    let budget = 2 * shapes.iter().map(|shape| shape.names.len()).sum::<usize>() + 256;
    let mut spent = 0;
    let mut index: BTreeMap<Vec<u32>, usize> = BTreeMap::new();
    let mut sets: Vec<Vec<u32>> = Vec::new();
    let mut built: Vec<Option<Expanded>> = Vec::new();
    let shape_of = |node: u32| shapes.get(node as usize);
    for (node, shape) in shapes.iter().enumerate() {
        if shape.applies() {
            let Ok(node) = u32::try_from(node) else { break };
            index.insert(vec![node], sets.len());
            sets.push(vec![node]);
        }
    }
    // Phase one: expand every set, discovering the sets members push.
    let mut k = 0;
    while k < sets.len() {
        let roots = sets[k].clone();
        k += 1;
        let Some(entries) = expand(shapes, &roots) else {
            built.push(None);
            continue;
        };
        let mut names: BTreeMap<(usize, &str), Vec<(u16, Member)>> = BTreeMap::new();
        let mut rest = Vec::new();
        for (place, &(node, _, _)) in entries.iter().enumerate() {
            let Some(shape) = shape_of(node) else { continue };
            let place = u16::try_from(place).unwrap_or(u16::MAX);
            for (name, member) in &shape.names {
                names
                    .entry((name.len(), name.as_str()))
                    .or_default()
                    .push((place, *member));
            }
            if shape.rest {
                rest.push(place);
            }
        }
        if names.len() > MAX_FRAME_NAMES || spent + names.len() > budget {
            built.push(None);
            continue;
        }
        spent += names.len();
        let mut rows = Vec::new();
        for ((_, name), hits) in names {
            let pushed: Vec<u32> = hits
                .iter()
                .filter_map(|(_, (id, _))| *id)
                .filter(|&id| !trivial.get(id as usize).copied().unwrap_or(false))
                .collect();
            let child = match pushed.as_slice() {
                [] => None,
                [one] if !shape_of(*one).is_some_and(Shape::applies) => None,
                _ => Some(*index.entry(pushed.clone()).or_insert_with(|| {
                    sets.push(pushed);
                    sets.len() - 1
                })),
            };
            rows.push((name.to_owned(), hits, child));
        }
        built.push(Some(Expanded {
            roots: roots.len(),
            entries,
            names: rows,
            rest,
        }));
    }
    // Phase two: write the frames built, naming a member's frame only when it was built.
    let mut items = Vec::new();
    for (k, frame) in built.iter().enumerate() {
        let Some(frame) = frame else { continue };
        let compatible_too = frame
            .entries
            .iter()
            .all(|&(node, _, _)| shape_of(node).is_none_or(|shape| !shape.skips_applicators));
        let guarded = frame
            .entries
            .iter()
            .any(|&(node, _, _)| guards.get(node as usize).copied().unwrap_or(true));
        let rows = frame.names.iter().map(|(name, hits, child)| {
            let child = match child.filter(|&child| matches!(built.get(child), Some(Some(_)))) {
                Some(child) => {
                    let ident = quote::format_ident!("STREAM_FRAME_{}", child);
                    quote!(Some(&#ident))
                }
                None => quote!(None),
            };
            let hits = hits.iter().map(|(place, (id, required))| {
                let id = id.unwrap_or(u32::MAX);
                let required = required.unwrap_or(u8::MAX);
                quote!((#place, #id, #required))
            });
            quote!((#name, &[#(#hits),*], #child))
        });
        let count = u32::try_from(frame.roots).unwrap_or(u32::MAX);
        let applied = frame.entries[frame.roots..]
            .iter()
            .map(|(node, owner, role)| quote!((#node, #owner, #role)));
        let rest = &frame.rest;
        let ident = quote::format_ident!("STREAM_FRAME_{}", k);
        items.push(quote! {
            static #ident: ::pilotage_types::validate::stream::Frame = ::pilotage_types::validate::stream::Frame::new(
                #count, #compatible_too, #guarded, &[#(#applied),*], &[#(#rows),*], &[#(#rest),*]);
        });
    }
    let own = sets
        .iter()
        .enumerate()
        .filter(|(k, roots)| roots.len() == 1 && matches!(built.get(*k), Some(Some(_))))
        .filter(|(_, roots)| shape_of(roots[0]).is_some_and(Shape::applies))
        .map(|(k, roots)| (roots[0], k))
        .collect();
    (items, own)
}

impl Program {
    /// The index of `location`'s node, queued for building when new.
    fn id(&mut self, location: Location) -> u32 {
        if let Some(id) = self.ids.get(&location) {
            return *id;
        }
        let id = u32::try_from(self.nodes.len()).unwrap_or(u32::MAX);
        self.nodes.push(TokenStream::new());
        self.ids.insert(location.clone(), id);
        self.shapes.push(Shape::default());
        self.queue.push((id, location));
        id
    }
}

/// `Some(id)` or `None`, as tokens.
fn option(id: Option<u32>) -> TokenStream {
    match id {
        Some(id) => quote!(Some(#id)),
        None => quote!(None),
    }
}

/// `value` as a `stream::Scalar`, if it is one.
fn scalar(value: &Value) -> Option<TokenStream> {
    Some(match value {
        Value::Null => quote!(::pilotage_types::validate::stream::Scalar::Null),
        Value::Bool(b) => quote!(::pilotage_types::validate::stream::Scalar::Bool(#b)),
        Value::String(s) => quote!(::pilotage_types::validate::stream::Scalar::Str(#s)),
        Value::Number(n) => {
            let n = number(n);
            quote!(::pilotage_types::validate::stream::Scalar::Num(#n))
        }
        Value::Array(_) | Value::Object(_) => return None,
    })
}

impl Gen<'_> {
    /// The stream program of `roots` (definition name, location): the items (`STREAM_PROGRAM`)
    /// and each definition's node. Empty for a set using dynamic references.
    pub(super) fn stream_program(
        &mut self,
        roots: &BTreeMap<String, Location>,
    ) -> (TokenStream, BTreeMap<String, u32>) {
        if self.dynamic || self.saw_dynamic {
            self.stream_opaque.push((
                self.docs[0].file.clone(),
                "$dynamicRef / $recursiveRef (the set has no stream program)".to_owned(),
            ));
            return (TokenStream::new(), BTreeMap::new());
        }
        let mut program = Program::default();
        let entries: BTreeMap<String, u32> = roots
            .iter()
            .map(|(name, location)| (name.clone(), program.id(location.clone())))
            .collect();
        while let Some((id, location)) = program.queue.pop() {
            program.shape = Shape::default();
            let node = self.stream_node(&mut program, &location);
            if let Some(slot) = program.nodes.get_mut(id as usize) {
                *slot = node;
            }
            if let Some(slot) = program.shapes.get_mut(id as usize) {
                *slot = std::mem::take(&mut program.shape);
            }
        }
        // Each node written once, to tell the trivial ones (what accepts every value) and the
        // guards (opaque nodes and the schema `false`: what a frame checks as it begins).
        let new = quote!(::pilotage_types::validate::stream::Node::new()).to_string();
        let guard = [
            quote!(::pilotage_types::validate::stream::Node::opaque()).to_string(),
            quote!(::pilotage_types::validate::stream::Node::never()).to_string(),
        ];
        let (trivial, guards): (Vec<bool>, Vec<bool>) = program
            .nodes
            .iter()
            .map(|node| {
                let text = node.to_string();
                (text == new, guard.contains(&text))
            })
            .unzip();
        let (statics, own) = frames(&program.shapes, &trivial, &guards);
        for (id, k) in own {
            if let Some(node) = program.nodes.get_mut(id as usize) {
                let ident = quote::format_ident!("STREAM_FRAME_{}", k);
                *node = quote!(#node.frame(&#ident));
            }
        }
        let nodes = &program.nodes;
        let tokens = quote! {
            /// The stream program of every definition (`pilotage_types::validate::stream`).
            pub static STREAM_PROGRAM: &[::pilotage_types::validate::stream::Node] = &[#(#nodes),*];
            #(#statics)*
        };
        (tokens, entries)
    }

    /// The node index for the subschema at `location`: that of the location a `$ref` names
    /// when the subschema is only that `$ref` (annotations aside, or siblings a draft-04/06/07
    /// `$ref` hides), so that following it costs no entry at run time.
    fn sub(&mut self, program: &mut Program, location: Location) -> u32 {
        let saved = self.cur.clone();
        let mut here = location;
        for _ in 0..32 {
            self.cur = here.clone();
            let Some(Value::Object(object)) = self.docs[here.doc].value.pointer(&here.pointer) else {
                break;
            };
            let Some(reference) = object.get("$ref").and_then(Value::as_str) else {
                break;
            };
            let only = self.draft(&here.pointer).ref_hides_siblings()
                || object
                    .keys()
                    .all(|k| matches!(k.as_str(), "$ref" | "description" | "title" | "$comment"));
            if !only {
                break;
            }
            match self.resolve(reference, &child(&here.pointer, "$ref")) {
                Ok(Some(target)) => here = target,
                _ => break,
            }
        }
        self.cur = saved;
        program.id(here)
    }

    /// The node of `location`: its keywords, or `Node::opaque()`.
    fn stream_node(&mut self, program: &mut Program, location: &Location) -> TokenStream {
        let opaque = quote!(::pilotage_types::validate::stream::Node::opaque());
        self.cur = location.clone();
        let pointer = location.pointer.as_str();
        let Some(schema) = self.docs[location.doc].value.pointer(pointer) else {
            return opaque;
        };
        match schema {
            Value::Bool(true) => quote!(::pilotage_types::validate::stream::Node::new()),
            Value::Bool(false) => quote!(::pilotage_types::validate::stream::Node::never()),
            Value::Object(object) => {
                let object = self.effective(object, pointer).into_owned();
                self.stream_object(program, location, &object).unwrap_or_else(|| {
                    // An opaque node applies nothing and names nothing.
                    program.shape = Shape::default();
                    opaque
                })
            }
            _ => opaque,
        }
    }

    /// The node of the schema object `object` at `location`; `None` when it is opaque.
    #[allow(clippy::too_many_lines)]
    fn stream_object(
        &mut self,
        program: &mut Program,
        location: &Location,
        object: &serde_json::Map<String, Value>,
    ) -> Option<TokenStream> {
        let pointer = location.pointer.as_str();
        let draft = self.draft(pointer);
        let vocab = self.vocab(pointer);
        let here = |p: String| Location {
            doc: location.doc,
            pointer: p,
        };
        let at = |keyword: &str| child(pointer, keyword);
        let mut node = quote!(::pilotage_types::validate::stream::Node::new());
        let mut all_of = Vec::new();

        if let Some(reference) = object.get("$ref") {
            let target = self.resolve(reference.as_str()?, &at("$ref")).ok()?;
            if let Some(target) = target {
                all_of.push(program.id(target));
            }
            if draft.ref_hides_siblings() {
                program.shape.all_of.clone_from(&all_of);
                return Some(quote!(#node.all_of(&[#(#all_of),*])));
            }
        }
        let opaque = object
            .keys()
            .find(|k| OPAQUE.contains(&k.as_str()))
            .map(String::as_str)
            .or_else(|| (object.get("uniqueItems") == Some(&Value::Bool(true))).then_some("uniqueItems"));
        if let Some(keyword) = opaque {
            self.stream_opaque
                .push((format!("{}: {pointer}", self.file()), keyword.to_owned()));
            return None;
        }

        // The compatible reading's rewrites (as `body` makes them).
        let super::Widening {
            enum_of_strings,
            any_of_consts,
            one_of_consts,
        } = super::Widening::of(object, draft, vocab);
        if enum_of_strings || any_of_consts || one_of_consts {
            // The bits are named where the run time defines them (`stream::open`), not here.
            let bits = [
                (true, quote!(WIDENED)),
                (enum_of_strings, quote!(ENUM)),
                (any_of_consts, quote!(ANY_OF)),
                (one_of_consts, quote!(ONE_OF)),
            ]
            .into_iter()
            .filter_map(|(set, name)| set.then(|| quote!(::pilotage_types::validate::stream::open::#name)));
            program.shape.skips_applicators = any_of_consts || one_of_consts;
            node = quote!(#node.open(#(#bits)|*));
        }

        if let Some(names) = object.get("type") {
            let names: Vec<&str> = match names {
                Value::String(one) => vec![one.as_str()],
                Value::Array(many) => many.iter().map(Value::as_str).collect::<Option<_>>()?,
                _ => return None,
            };
            let mut mask = 0u8;
            for name in names {
                mask |= match name {
                    "null" => 1,
                    "boolean" => 2,
                    "integer" => 4,
                    "number" => 8,
                    "string" => 16,
                    "array" => 32,
                    "object" => 64,
                    _ => return None,
                };
            }
            let draft4 = draft == Draft::Draft4;
            node = quote!(#node.types(#mask, #draft4));
        }
        if let Some(expected) = object.get("const") {
            let expected = scalar(expected)?;
            node = quote!(#node.constant(#expected));
        }
        if let Some(values) = object.get("enum") {
            let values = values.as_array()?.iter().map(scalar).collect::<Option<Vec<_>>>()?;
            node = quote!(#node.enumeration(&[#(#values),*]));
        }

        // Strings.
        let limit = |keyword: &str| object.get(keyword).map(count);
        let (min_length, max_length) = (limit("minLength"), limit("maxLength"));
        if min_length.is_some() || max_length.is_some() {
            let min = min_length.map_or(Some(0), |m| m)?;
            let max = max_length.map_or(Some(u64::MAX), |m| m)?;
            node = quote!(#node.length(#min, #max));
        }
        if let Some(pattern) = object.get("pattern") {
            let ident = self.pattern(pattern.as_str()?, &at("pattern")).ok()?;
            node = quote!(#node.pattern(&#ident));
        }
        if let Some(format) = object.get("format").and_then(Value::as_str) {
            if let Some(function) = format_check(draft, vocab, format) {
                let path: syn::Path =
                    syn::parse_str(&format!("::pilotage_types::validate::format::{function}")).ok()?;
                node = quote!(#node.format(#path));
            }
        }

        // Numbers, as `body` reads them (draft-04's boolean `exclusiveMinimum` modifying
        // `minimum`).
        let mut limits = Vec::new();
        for keyword in [
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
        ] {
            let Some(value) = object.get(keyword) else { continue };
            if draft.is_legacy() && value.is_boolean() && keyword.starts_with("exclusive") {
                continue;
            }
            let Value::Number(n) = value else { return None };
            let exclusive = |name: &str| object.get(name) == Some(&Value::Bool(true));
            let kind = match keyword {
                "minimum" if exclusive("exclusiveMinimum") => quote!(ExclusiveMinimum),
                "maximum" if exclusive("exclusiveMaximum") => quote!(ExclusiveMaximum),
                "minimum" => quote!(Minimum),
                "maximum" => quote!(Maximum),
                "exclusiveMinimum" => quote!(ExclusiveMinimum),
                "exclusiveMaximum" => quote!(ExclusiveMaximum),
                _ => {
                    if n.as_f64().is_none_or(|f| f <= 0.0) {
                        return None;
                    }
                    quote!(MultipleOf)
                }
            };
            let n = number(n);
            limits.push(quote!((::pilotage_types::validate::stream::Limit::#kind, #n)));
        }
        if !limits.is_empty() {
            node = quote!(#node.limits(&[#(#limits),*]));
        }

        // Arrays.
        let tuple = match (object.get("prefixItems"), object.get("items")) {
            (Some(Value::Array(items)), _) if draft == Draft::Draft2020 => Some(("prefixItems", items)),
            (_, Some(Value::Array(items))) if draft != Draft::Draft2020 => Some(("items", items)),
            (Some(_), _) if draft == Draft::Draft2020 => return None,
            (_, Some(Value::Array(_))) => return None,
            _ => None,
        };
        let mut prefix = Vec::new();
        if let Some((keyword, items)) = tuple {
            for index in 0..items.len() {
                prefix.push(self.sub(program, here(child(&at(keyword), &index.to_string()))));
            }
        }
        let rest = match (tuple.map(|t| t.0), object.get("items")) {
            (Some("items"), _) => None,
            (_, Some(items)) if !items.is_array() => Some(self.sub(program, here(at("items")))),
            _ => None,
        };
        let (min_items, max_items) = (limit("minItems"), limit("maxItems"));
        if tuple.is_some() || rest.is_some() || min_items.is_some() || max_items.is_some() {
            let min = min_items.map_or(Some(0), |m| m)?;
            let max = max_items.map_or(Some(u64::MAX), |m| m)?;
            let rest = match rest {
                Some(id) => quote!(Some(#id)),
                None => quote!(None),
            };
            node = quote!(#node.items(&[#(#prefix),*], #rest, #min, #max));
        }

        // Objects.
        let required = required_names(object)?;
        if required.len() > 64 {
            return None;
        }
        // `properties` and `required` as one table, sorted by length then bytes (the
        // runtime's binary search compares lengths first).
        let mut table: BTreeMap<(usize, &str), Member> = BTreeMap::new();
        if let Some(properties) = object.get("properties") {
            for (name, _) in sorted(properties.as_object()?) {
                let id = self.sub(program, here(child(&at("properties"), name)));
                table.entry((name.len(), name.as_str())).or_default().0 = Some(id);
            }
        }
        for (index, name) in required.iter().enumerate() {
            table.entry((name.len(), name)).or_default().1 = u8::try_from(index).ok();
        }
        let named: Vec<TokenStream> = table
            .iter()
            .map(|((_, name), (id, index))| {
                let id = id.unwrap_or(u32::MAX);
                let index = index.unwrap_or(u8::MAX);
                quote!((#name, #id, #index))
            })
            .collect();
        let mut patterns = Vec::new();
        if let Some(pattern_properties) = object.get("patternProperties") {
            for (source, _) in sorted(pattern_properties.as_object()?) {
                let pointer = child(&at("patternProperties"), source);
                let ident = self.pattern(source, &pointer).ok()?;
                let id = self.sub(program, here(pointer));
                patterns.push(quote!((&#ident, #id)));
            }
        }
        let additional = match object.get("additionalProperties") {
            None | Some(Value::Bool(true)) => None,
            Some(_) => Some(self.sub(program, here(at("additionalProperties")))),
        };
        if !named.is_empty() || !patterns.is_empty() || additional.is_some() {
            program.shape.names = table
                .iter()
                .map(|((_, name), member)| ((*name).to_owned(), *member))
                .collect();
            program.shape.rest = !patterns.is_empty() || additional.is_some();
            let additional = match additional {
                Some(id) => quote!(Some(#id)),
                None => quote!(None),
            };
            node = quote!(#node.properties(&[#(#named),*], &[#(#patterns),*], #additional));
        }
        let (min_properties, max_properties) = (limit("minProperties"), limit("maxProperties"));
        if !required.is_empty() || min_properties.is_some() || max_properties.is_some() {
            let min = min_properties.map_or(Some(0), |m| m)?;
            let max = max_properties.map_or(Some(u64::MAX), |m| m)?;
            let required = u8::try_from(required.len()).ok()?;
            node = quote!(#node.members(#required, #min, #max));
        }

        // Applicators on the value itself.
        if let Some(branches) = object.get("allOf") {
            for index in 0..branches.as_array()?.len() {
                all_of.push(self.sub(program, here(child(&at("allOf"), &index.to_string()))));
            }
        }
        if !all_of.is_empty() {
            program.shape.all_of.clone_from(&all_of);
            node = quote!(#node.all_of(&[#(#all_of),*]));
        }
        for (keyword, method) in [("anyOf", quote!(any_of)), ("oneOf", quote!(one_of))] {
            let Some(branches) = object.get(keyword) else { continue };
            let count = branches.as_array()?.len();
            if count == 0 {
                return None;
            }
            let ids: Vec<u32> = (0..count)
                .map(|index| self.sub(program, here(child(&at(keyword), &index.to_string()))))
                .collect();
            if keyword == "anyOf" {
                program.shape.any_of.clone_from(&ids);
            } else {
                program.shape.one_of.clone_from(&ids);
            }
            node = quote!(#node.#method(&[#(#ids),*]));
        }
        if object.contains_key("not") {
            let id = self.sub(program, here(at("not")));
            program.shape.not = Some(id);
            node = quote!(#node.not(#id));
        }
        if object.contains_key("if") && (object.contains_key("then") || object.contains_key("else")) {
            let condition = self.sub(program, here(at("if")));
            let then = object.contains_key("then").then(|| self.sub(program, here(at("then"))));
            let otherwise = object.contains_key("else").then(|| self.sub(program, here(at("else"))));
            program.shape.condition = Some((condition, then, otherwise));
            let (then, otherwise) = (option(then), option(otherwise));
            node = quote!(#node.condition(#condition, #then, #otherwise));
        }
        Some(node)
    }
}
