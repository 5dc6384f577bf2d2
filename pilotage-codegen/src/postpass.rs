//! Post-pass over typify's syntax tree: the rewrites that make every generated struct
//! round-trip losslessly (`from_value` then `to_value` gives back an equal value for every
//! instance the schema accepts). typify 0.8 has no settings for these, and its output must
//! never be edited by hand, so they are applied here, after typify and before rendering. The
//! stage reads typify's output with `syn` (types as paths, serde attributes with syn's meta
//! parser) and takes what it needs from the schema as data ([`NullableMembers`]).
//!
//! - **present empty collections survive**: an optional array or object member is
//!   `#[serde(default, skip_serializing_if = "Vec::is_empty")] Vec<T>` in typify, so a present
//!   `[]` or `{}` disappears; it becomes `Option<Vec<T>>` / `Option<Map<..>>`.
//! - **present `null` survives**: an optional member of type `{}` is `Option<Value>` in typify,
//!   where a present `null` reads as `None`; it gets a deserializer that keeps `Some(Null)`.
//!   A nullable optional member ([`crate::normalise::nullable_optional_members`]) becomes
//!   `Option<Option<T>>` with the same deserializer.
//! - **schema integers are integers**: JSON Schema counts `5.0` as an `integer`, serde's `u64`
//!   does not; integer members get a deserializer that accepts integral floats, so `parse`
//!   never rejects what the validator accepts (the value re-serialises as `5`).
//! - **an absent recursive member stays absent**: typify types an optional member that refers
//!   back to its own struct `#[serde(default)] Box<Option<T>>`, which serialises an absent
//!   member as `null` (an instance the schema may refuse); it becomes `Option<Box<T>>`, skipped
//!   when `None`.
//! - **numbers keep their form** ([`json_numbers`]): typify's `f64` (and `f32` for
//!   `format: float`) of a `number` becomes `pilotage_types::Number`, so `2` stays `2` and
//!   `2.0` stays `2.0`; newtypes over a number convert from every primitive number.
//! - typify's own `error` module gives way to `pilotage_types::ConversionError`.
//! - **member names are unique** ([`unique_member_names`], run first): members whose Rust
//!   names collide (`line-length` and `line_length` are both `line_length` to typify) keep
//!   their wire names, and all but one get a numbered field name.
//!
//! The serde helpers live in `pilotage_types::wire`: one implementation for every generated
//! module.

use std::collections::{BTreeMap, BTreeSet};

use quote::quote;
use syn::visit_mut::VisitMut;
use syn::{parse_quote, Attribute, Field, Fields, Type};

/// The nullable optional members, as (struct name, Rust field name).
pub type NullableMembers = BTreeSet<(String, String)>;

/// Integer types typify emits for `"type": "integer"`, as paths.
const INTEGER_TYPES: &[&str] = &[
    "u8",
    "u16",
    "u32",
    "u64",
    "i8",
    "i16",
    "i32",
    "i64",
    "std::num::NonZeroU8",
    "std::num::NonZeroU16",
    "std::num::NonZeroU32",
    "std::num::NonZeroU64",
];

/// The path of a type as `a::b::C` (leading `::` dropped), without generic arguments, and
/// its single generic type argument, if any.
fn path_of(ty: &Type) -> Option<(String, Option<&Type>)> {
    let Type::Path(path) = ty else { return None };
    if path.qself.is_some() {
        return None;
    }
    let name = path
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::");
    let argument = match &path.path.segments.last()?.arguments {
        syn::PathArguments::AngleBracketed(args) if args.args.len() == 1 => match &args.args[0] {
            syn::GenericArgument::Type(inner) => Some(inner),
            _ => None,
        },
        _ => None,
    };
    Some((name, argument))
}

/// The `T` of `Option<T>`.
pub(crate) fn option_inner(ty: &Type) -> Option<&Type> {
    match path_of(ty)? {
        (name, inner) if name == "std::option::Option" || name == "Option" => inner,
        _ => None,
    }
}

fn is_integer(ty: &Type) -> bool {
    path_of(ty).is_some_and(|(name, _)| INTEGER_TYPES.contains(&name.as_str()))
}

/// `Some(true)` for an integer, `Some(false)` for an `Option` of one, `None` otherwise.
fn integer_field(ty: &Type) -> Option<bool> {
    if is_integer(ty) {
        return Some(true);
    }
    option_inner(ty).filter(|inner| is_integer(inner)).map(|_| false)
}

/// `T` of `Box<Option<T>>`.
fn boxed_option_inner(ty: &Type) -> Option<&Type> {
    match path_of(ty)? {
        (name, Some(inner)) if name == "std::boxed::Box" || name == "Box" => option_inner(inner),
        _ => None,
    }
}

fn is_option_of_json_value(ty: &Type) -> bool {
    option_inner(ty)
        .and_then(path_of)
        .is_some_and(|(name, _)| name == "serde_json::Value")
}

/// Applies every rewrite to `file` in place; `nullable` names the members that become
/// `Option<Option<T>>`.
pub fn apply(file: &mut syn::File, nullable: &NullableMembers) {
    json_numbers(file);
    shared_conversion_error(file);
    one_tuple_conversions(file);
    Rewriter {
        nullable,
        current: String::new(),
    }
    .visit_file_mut(file);
    safe_docs(file);
}

/// **Fixes typify's conversion from a one-element tuple.** For an enum variant holding a
/// tuple of one item (`Variant2((String,))`, from an array-form `items` of one schema), typify
/// writes `impl From<(String,)> for E { fn from(value: (String,)) -> Self {
/// Self::Variant2(value.0) } }`, which passes the item where the tuple is wanted and does not
/// compile. The body becomes `Self::Variant2(value)`; the variant and the wire are unchanged.
pub fn one_tuple_conversions(file: &mut syn::File) {
    for item in &mut file.items {
        let syn::Item::Impl(imp) = item else { continue };
        let Some((_, path, _)) = &imp.trait_ else { continue };
        let Some(last) = path.segments.last() else { continue };
        if last.ident != "From" {
            continue;
        }
        let syn::PathArguments::AngleBracketed(arguments) = &last.arguments else {
            continue;
        };
        let Some(syn::GenericArgument::Type(Type::Tuple(tuple))) = arguments.args.first() else {
            continue;
        };
        if tuple.elems.len() != 1 {
            continue;
        }
        struct FirstItem;
        impl VisitMut for FirstItem {
            fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
                if let syn::Expr::Field(field) = expr {
                    let on_value = matches!(&*field.base, syn::Expr::Path(p) if p.path.is_ident("value"));
                    if on_value && matches!(&field.member, syn::Member::Unnamed(i) if i.index == 0) {
                        *expr = parse_quote!(value);
                        return;
                    }
                }
                syn::visit_mut::visit_expr_mut(self, expr);
            }
        }
        for member in &mut imp.items {
            if let syn::ImplItem::Fn(function) = member {
                FirstItem.visit_block_mut(&mut function.block);
            }
        }
    }
}

/// Rewrites every doc attribute of `file` with `DocRewriter`; idempotent, so the renderer
/// runs it again over the items later stages added (open enums' variant docs are wire values).
pub fn safe_docs(file: &mut syn::File) {
    DocRewriter.visit_file_mut(file);
}

/// Renames the colliding fields of one struct or variant (see [`unique_member_names`]); returns
/// the new names of each colliding name's occurrences, in field order.
fn unique_fields(
    fields: &mut syn::FieldsNamed,
    owner: &str,
    renamed: &mut Vec<(String, String, String)>,
) -> BTreeMap<String, Vec<syn::Ident>> {
    let mut by_name: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (index, field) in fields.named.iter().enumerate() {
        if let Some(ident) = &field.ident {
            by_name.entry(ident.to_string()).or_default().push(index);
        }
    }
    let mut taken: BTreeSet<String> = by_name.keys().cloned().collect();
    let mut plan: BTreeMap<String, Vec<syn::Ident>> = BTreeMap::new();
    for (name, indices) in by_name.iter().filter(|(_, i)| i.len() > 1) {
        let bare = name.trim_start_matches("r#");
        let keeper = indices
            .iter()
            .copied()
            .find(|&i| wire_name(&fields.named[i]).as_deref() == Some(bare))
            .unwrap_or(indices[0]);
        let mut news = Vec::new();
        for &index in indices {
            let field = &mut fields.named[index];
            let Some(ident) = field.ident.clone() else { continue };
            if index == keeper {
                news.push(ident);
                continue;
            }
            // A flattened map (typify's `extra` for unknown members) has no wire name to keep.
            let flattened = SerdeField::of(field).flatten;
            if !flattened && (wire_name(field).as_deref() == Some(bare) || SerdeField::of(field).rename.is_none()) {
                let wire = bare.to_owned();
                let attr: Attribute = parse_quote!(#[serde(rename = #wire)]);
                field.attrs.push(attr);
            }
            let mut n = 2;
            while taken.contains(&format!("{bare}_{n}")) {
                n += 1;
            }
            let new = format!("{bare}_{n}");
            taken.insert(new.clone());
            let ident = syn::Ident::new(&new, proc_macro2::Span::call_site());
            field.ident = Some(ident.clone());
            news.push(ident);
            renamed.push((owner.to_owned(), name.clone(), new));
        }
        plan.insert(name.clone(), news);
    }
    plan
}

/// **Makes the field names of every struct unique.** typify names a member by its snake-case
/// spelling, so `line-length` and `line_length` (ruff's configuration has both) become two
/// fields `line_length`, which does not compile. Of the fields sharing a name, the one whose
/// wire name is that name (else the first) keeps it; each other becomes `NAME_2`, `NAME_3`, ...
/// (the first number no other field has), in field order. Those all carry typify's
/// `#[serde(rename = "..")]` already (their wire name differs from the name), so the wire is
/// unchanged. typify's `impl Default` struct literals of the struct are renamed the same way.
/// Returns (struct, old name, new name) per renamed field.
pub fn unique_member_names(file: &mut syn::File) -> Vec<(String, String, String)> {
    let mut renamed = Vec::new();
    // struct name -> for each colliding name, the new names of its occurrences in field order.
    let mut plans: BTreeMap<String, BTreeMap<String, Vec<syn::Ident>>> = BTreeMap::new();
    for item in &mut file.items {
        match item {
            syn::Item::Struct(item) => {
                let Fields::Named(fields) = &mut item.fields else {
                    continue;
                };
                let owner = item.ident.to_string();
                let plan = unique_fields(fields, &owner, &mut renamed);
                if !plan.is_empty() {
                    plans.insert(owner, plan);
                }
            }
            // A struct-like variant (`Object { extra: Vec<..>, #[serde(flatten)] extra: Map }`):
            // the same, without literals to follow (typify writes none for variants).
            syn::Item::Enum(item) => {
                for variant in &mut item.variants {
                    if let Fields::Named(fields) = &mut variant.fields {
                        let owner = format!("{}::{}", item.ident, variant.ident);
                        unique_fields(fields, &owner, &mut renamed);
                    }
                }
            }
            _ => {}
        }
    }
    if plans.is_empty() {
        return renamed;
    }
    struct Literals<'a> {
        plan: &'a BTreeMap<String, Vec<syn::Ident>>,
        own: String,
    }
    impl VisitMut for Literals<'_> {
        fn visit_expr_struct_mut(&mut self, literal: &mut syn::ExprStruct) {
            let target = literal.path.segments.last().map(|s| s.ident.to_string());
            if target.as_deref() == Some("Self") || target.as_deref() == Some(self.own.as_str()) {
                let mut seen: BTreeMap<String, usize> = BTreeMap::new();
                for field in literal.fields.iter_mut() {
                    let syn::Member::Named(ident) = &mut field.member else {
                        continue;
                    };
                    let name = ident.to_string();
                    if let Some(news) = self.plan.get(&name) {
                        let k = seen.entry(name).or_default();
                        if let Some(new) = news.get(*k) {
                            *ident = new.clone();
                        }
                        *k += 1;
                    }
                }
            }
            syn::visit_mut::visit_expr_struct_mut(self, literal);
        }
    }
    for item in &mut file.items {
        let syn::Item::Impl(imp) = item else { continue };
        let Type::Path(self_ty) = imp.self_ty.as_ref() else {
            continue;
        };
        let Some(own) = self_ty.path.segments.last().map(|s| s.ident.to_string()) else {
            continue;
        };
        if let Some(plan) = plans.get(&own) {
            Literals { plan, own }.visit_item_impl_mut(imp);
        }
    }
    renamed
}

/// Finds, for each pointer to a member (`/$defs/<def>/properties/<m>`, possibly through
/// nested `properties` and `items`), the struct and field typify made of it: the
/// definition's type name from typify's API (`def_types`), then the fields' types in the
/// syntax tree. A pointer that leads nowhere is an error naming it.
pub fn locate_members(
    file: &syn::File,
    def_types: &BTreeMap<String, String>,
    pointers: &[String],
) -> Result<NullableMembers, String> {
    let structs: BTreeMap<String, &syn::ItemStruct> = file
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Struct(s) => Some((s.ident.to_string(), s)),
            _ => None,
        })
        .collect();
    let mut found = NullableMembers::new();
    for pointer in pointers {
        let fail = |why: &str| format!("{pointer}: {why}");
        let tokens: Vec<String> = pointer
            .split('/')
            .skip(1)
            .map(crate::error::unescape_pointer_token)
            .collect();
        let [defs, def, rest @ ..] = tokens.as_slice() else {
            return Err(fail("not a member of a definition"));
        };
        if defs != "$defs" {
            return Err(fail("not a member of a definition"));
        }
        let mut current = def_types
            .get(def)
            .cloned()
            .ok_or_else(|| fail("typify made no type of this definition"))?;
        let mut steps = rest.iter();
        let mut located = None;
        while let Some(step) = steps.next() {
            match step.as_str() {
                "properties" => {
                    let member = steps.next().ok_or_else(|| fail("no member name"))?;
                    let item = structs
                        .get(&current)
                        .ok_or_else(|| fail(&format!("{current} is not a struct")))?;
                    let field = field_by_wire_name(item, member)
                        .ok_or_else(|| fail(&format!("{current} has no field for member `{member}`")))?;
                    let ident = field.ident.as_ref().map(ToString::to_string).unwrap_or_default();
                    located = Some((current.clone(), ident));
                    current = named_type(&field.ty).unwrap_or_default();
                }
                "items" => {}
                other => return Err(fail(&format!("cannot follow `{other}` to a struct member"))),
            }
        }
        found.insert(located.ok_or_else(|| fail("names no member"))?);
    }
    Ok(found)
}

/// The name of the generated type inside `Option`, `Vec`, `Box` and map layers of `ty`.
pub(crate) fn named_type(ty: &Type) -> Option<String> {
    let Type::Path(path) = ty else { return None };
    let last = path.path.segments.last()?;
    let name = last.ident.to_string();
    let arguments: Vec<&Type> = match &last.arguments {
        syn::PathArguments::AngleBracketed(args) => args
            .args
            .iter()
            .filter_map(|a| match a {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    match (name.as_str(), arguments.as_slice()) {
        ("Option" | "Vec" | "Box", [inner]) => named_type(inner),
        ("BTreeMap" | "HashMap" | "Map", [_, value]) => named_type(value),
        _ => Some(name),
    }
}

/// A member's name on the wire: its `#[serde(rename = "...")]`, else its identifier (without
/// `r#`).
pub(crate) fn wire_name(field: &Field) -> Option<String> {
    SerdeField::of(field).rename.or_else(|| {
        field
            .ident
            .as_ref()
            .map(|i| i.to_string().trim_start_matches("r#").to_owned())
    })
}

/// The field of `item` that serializes as `wire`.
fn field_by_wire_name<'a>(item: &'a syn::ItemStruct, wire: &str) -> Option<&'a Field> {
    let Fields::Named(fields) = &item.fields else {
        return None;
    };
    fields
        .named
        .iter()
        .find(|field| wire_name(field).is_some_and(|name| name == wire))
}

/// The options of a field's `#[serde(...)]` attribute that the post-pass and the
/// constructors read, parsed with syn's meta parser: one reading of typify's attributes.
#[derive(Default)]
pub(crate) struct SerdeField {
    pub rename: Option<String>,
    pub skip_serializing_if: Option<String>,
    /// `flatten` (the map of unknown members).
    pub flatten: bool,
    /// `default` (`Some(None)`) or `default = "path"` (`Some(Some(path))`).
    pub default: Option<Option<String>>,
    /// `deserialize_with = ..` or `with = ..`.
    pub deserialize_with: bool,
}

impl SerdeField {
    pub(crate) fn of(field: &Field) -> Self {
        let mut out = Self::default();
        for attr in field.attrs.iter().filter(|a| a.path().is_ident("serde")) {
            // typify writes only well-formed serde attributes; one that does not parse is
            // left as it is.
            let _ = attr.parse_nested_meta(|meta| {
                let key = meta.path.get_ident().map(ToString::to_string).unwrap_or_default();
                if meta.input.peek(syn::Token![=]) {
                    let value = meta.value()?;
                    match key.as_str() {
                        "rename" => out.rename = Some(value.parse::<syn::LitStr>()?.value()),
                        "skip_serializing_if" => out.skip_serializing_if = Some(value.parse::<syn::LitStr>()?.value()),
                        "default" => out.default = Some(Some(value.parse::<syn::LitStr>()?.value())),
                        "deserialize_with" | "with" => {
                            out.deserialize_with = true;
                            value.parse::<syn::Expr>()?;
                        }
                        _ => {
                            value.parse::<syn::Expr>()?;
                        }
                    }
                } else if meta.input.peek(syn::token::Paren) {
                    meta.parse_nested_meta(|_| Ok(()))?;
                } else if key == "flatten" {
                    out.flatten = true;
                } else if key == "default" {
                    out.default = Some(None);
                }
                Ok(())
            });
        }
        out
    }
}

/// The type every JSON Schema `number` gets.
pub(crate) const NUMBER: &str = "pilotage_types::Number";

/// The primitive numbers a newtype over [`NUMBER`] converts from (`Ratio::from(0.5)`,
/// `Ratio::from(2)`), beside typify's `From<Number>`.
pub(crate) const NUMBER_COMPANIONS: &[&str] = &["f64", "f32", "i64", "u64", "i32", "u32"];

/// **Numbers keep their form.** typify types a `number` as `f64` (`f32` for `format: float`),
/// which reads `2` and writes `2.0`: a round trip that changes the document (and, through an
/// `f32`, its value: `0.1` comes back `0.10000000149011612`). Every such type becomes
/// `::pilotage_types::Number`, which serializes an integer as an integer and a float as a
/// float, with `f64`'s traits (`Copy`, `PartialEq`, `PartialOrd`, `Default`, `Display`,
/// `FromStr`) so typify's derives and impls still hold. Typed literals (`1.5_f64` in the check
/// of an `enum` of numbers) become `Number::from_f64(..)`; `Number`'s equality is numeric,
/// so `2.0` is still one of `[1, 2]`. A newtype typify converts `From<Number>` also converts
/// from each primitive number (`f64`, `f32`, `i64`, `u64`, `i32`, `u32`); unions get theirs from
/// `constructors::union_conversions`.
pub fn json_numbers(file: &mut syn::File) {
    struct Numbers;
    fn is_float_literal(expr: &syn::Expr) -> bool {
        let syn::Expr::Lit(lit) = expr else { return false };
        match &lit.lit {
            syn::Lit::Float(f) => matches!(f.suffix(), "f64" | "f32"),
            syn::Lit::Int(i) => matches!(i.suffix(), "f64" | "f32"),
            _ => false,
        }
    }
    impl VisitMut for Numbers {
        fn visit_type_mut(&mut self, ty: &mut Type) {
            if let Type::Path(path) = ty {
                if path.qself.is_none()
                    && path.path.leading_colon.is_none()
                    && path.path.segments.len() == 1
                    && matches!(path.path.segments[0].ident.to_string().as_str(), "f64" | "f32")
                    && path.path.segments[0].arguments.is_none()
                {
                    *ty = parse_quote!(::pilotage_types::Number);
                    return;
                }
            }
            syn::visit_mut::visit_type_mut(self, ty);
        }
        fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
            let literal = match &*expr {
                syn::Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Neg(_)) => is_float_literal(&unary.expr),
                other => is_float_literal(other),
            };
            if literal {
                let value = expr.clone();
                *expr = parse_quote!(::pilotage_types::Number::from_f64(#value));
                return;
            }
            syn::visit_mut::visit_expr_mut(self, expr);
        }
        /// typify writes an `enum` of arrays as `[vec![1.5_f64, 2_f64],]`: the literals
        /// inside `vec![..]` are tokens to syn, so they are read as expressions, rewritten,
        /// and written back.
        fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
            use syn::parse::Parser as _;
            if mac.path.is_ident("vec") {
                let parser = syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated;
                if let Ok(mut items) = parser.parse2(mac.tokens.clone()) {
                    for item in items.iter_mut() {
                        self.visit_expr_mut(item);
                    }
                    mac.tokens = quote!(#items);
                }
            }
        }
    }
    Numbers.visit_file_mut(file);

    // Newtypes converting from `Number`, and what they already convert from.
    let newtypes: BTreeSet<String> = file
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Struct(s) if matches!(s.fields, Fields::Unnamed(_)) => Some(s.ident.to_string()),
            _ => None,
        })
        .collect();
    let mut from: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for item in &file.items {
        if let Some((target, source)) = from_impl(item) {
            from.entry(target).or_default().insert(source);
        }
    }
    let mut items = Vec::with_capacity(file.items.len());
    for item in std::mem::take(&mut file.items) {
        let mut companions: Vec<syn::Item> = Vec::new();
        if let (Some((target, source)), syn::Item::Impl(imp)) = (from_impl(&item), &item) {
            if source == NUMBER && newtypes.contains(&target) {
                let target_ty = &imp.self_ty;
                for source in NUMBER_COMPANIONS.iter().filter(|s| !from[&target].contains(**s)) {
                    let source: Type = syn::parse_str(source).expect("a primitive type parses");
                    companions.push(parse_quote! {
                        impl ::std::convert::From<#source> for #target_ty {
                            fn from(value: #source) -> Self {
                                <Self as ::std::convert::From<::pilotage_types::Number>>::from(
                                    ::std::convert::From::from(value),
                                )
                            }
                        }
                    });
                }
            }
        }
        items.push(item);
        items.extend(companions);
    }
    file.items = items;
}

/// `(target, source)` of an `impl From<source> for target`, as text without spaces or a
/// leading `::`.
fn from_impl(item: &syn::Item) -> Option<(String, String)> {
    let key = |ty: &Type| {
        quote!(#ty)
            .to_string()
            .replace(' ', "")
            .trim_start_matches("::")
            .to_owned()
    };
    let syn::Item::Impl(imp) = item else { return None };
    let (_, path, _) = imp.trait_.as_ref()?;
    let last = path.segments.last()?;
    if last.ident != "From" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    let Some(syn::GenericArgument::Type(source)) = args.args.first() else {
        return None;
    };
    Some((key(&imp.self_ty), key(source)))
}

/// typify emits a `pub mod error` with its own `ConversionError` into every file; that module
/// is typify's, not the crate's API. It is removed, and its uses (the `FromStr`/`TryFrom`
/// impls of closed enums) name `pilotage_types::ConversionError` instead: one public type for
/// every generated module.
fn shared_conversion_error(file: &mut syn::File) {
    struct Paths;
    impl VisitMut for Paths {
        fn visit_path_mut(&mut self, path: &mut syn::Path) {
            let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
            if segments == ["self", "error", "ConversionError"] {
                *path = parse_quote!(::pilotage_types::ConversionError);
            }
            syn::visit_mut::visit_path_mut(self, path);
        }
    }
    file.items
        .retain(|item| !matches!(item, syn::Item::Mod(module) if module.ident == "error"));
    Paths.visit_file_mut(file);
}

/// Makes every doc comment valid whatever the schema's descriptions hold: code blocks quoted
/// from descriptions are marked `text` (rustdoc must not compile and run another project's
/// examples as this crate's doctests), and [`doc_safe`] line endings and characters.
struct DocRewriter;

/// `text` made safe for a doc comment: a carriage return (bare, or of a CRLF pair) becomes a
/// line feed, since rustc rejects a bare CR in a doc comment (prettyplease prints one-line docs
/// as `///`); the Unicode bidirectional controls (U+202A..U+202E, U+2066..U+2069), which
/// rustc's deny-by-default `text_direction_codepoint_in_comment` lint rejects, and the other
/// control characters but tab and line feed, are written as `\u{..}` escapes.
pub fn doc_safe(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push('\n');
            }
            '\n' | '\t' => out.push(c),
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {
                out.push_str(&c.escape_unicode().to_string());
            }
            c if c.is_control() => out.push_str(&c.escape_unicode().to_string()),
            c => out.push(c),
        }
    }
    out
}

/// `text` with each opening code fence given the `text` language.
pub fn fence_code_as_text(text: &str) -> String {
    let mut in_fence = false;
    let mut out: Vec<String> = Vec::new();
    for line in text.split('\n') {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            if in_fence {
                in_fence = false;
                out.push(line.to_owned());
            } else {
                in_fence = true;
                let indent = &line[..line.len() - trimmed.len()];
                out.push(format!("{indent}```text"));
            }
        } else {
            out.push(line.to_owned());
        }
    }
    out.join("\n")
}

impl VisitMut for DocRewriter {
    fn visit_attribute_mut(&mut self, attr: &mut Attribute) {
        if !attr.path().is_ident("doc") {
            return;
        }
        let syn::Meta::NameValue(name_value) = &mut attr.meta else {
            return;
        };
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(text),
            ..
        }) = &name_value.value
        else {
            return;
        };
        let value = text.value();
        let cleaned = fence_code_as_text(&doc_safe(&value));
        if cleaned != value {
            name_value.value = parse_quote!(#cleaned);
        }
    }
}

/// The serde helpers of `pilotage_types::wire` the rewritten fields use.
const PRESENT: &str = "::pilotage_types::wire::present";
const INTEGER: &str = "::pilotage_types::wire::integer";
const OPTIONAL_INTEGER: &str = "::pilotage_types::wire::optional_integer";

struct Rewriter<'a> {
    nullable: &'a NullableMembers,
    /// The struct being rewritten.
    current: String,
}

impl VisitMut for Rewriter<'_> {
    fn visit_item_struct_mut(&mut self, item: &mut syn::ItemStruct) {
        self.current = item.ident.to_string();
        if let Fields::Named(fields) = &mut item.fields {
            for field in fields.named.iter_mut() {
                self.rewrite_field(field);
            }
        }
    }
}

/// `#[serde(...)]` with the given options, as an attribute.
fn serde(options: proc_macro2::TokenStream) -> Attribute {
    parse_quote!(#[serde(#options)])
}

impl Rewriter<'_> {
    fn rewrite_field(&mut self, field: &mut Field) {
        let serde_field = SerdeField::of(field);
        let skip = serde_field.skip_serializing_if;
        let renamed = serde_field.rename;
        let ident = field.ident.as_ref().map(ToString::to_string).unwrap_or_default();
        let nullable = self.nullable.contains(&(self.current.clone(), ident));
        let optional = skip.as_deref() == Some("::std::option::Option::is_none");
        let present =
            serde(quote!(default, deserialize_with = #PRESENT, skip_serializing_if = "::std::option::Option::is_none"));
        match skip.as_deref() {
            Some("::std::vec::Vec::is_empty" | "::serde_json::Map::is_empty") => {
                let ty = &field.ty;
                field.ty = parse_quote!(::std::option::Option<#ty>);
                set_serde_attr(
                    field,
                    serde(quote!(default, skip_serializing_if = "::std::option::Option::is_none")),
                    renamed,
                );
            }
            None if boxed_option_inner(&field.ty).is_some() => {
                let inner = boxed_option_inner(&field.ty).cloned();
                if let Some(inner) = inner {
                    field.ty = parse_quote!(::std::option::Option<::std::boxed::Box<#inner>>);
                    set_serde_attr(
                        field,
                        serde(quote!(default, skip_serializing_if = "::std::option::Option::is_none")),
                        renamed,
                    );
                }
            }
            _ if optional && nullable => {
                let ty = &field.ty;
                field.ty = parse_quote!(::std::option::Option<#ty>);
                set_serde_attr(field, present, renamed);
            }
            _ if optional && is_option_of_json_value(&field.ty) => set_serde_attr(field, present, renamed),
            _ => match integer_field(&field.ty) {
                Some(true) => set_serde_attr(field, serde(quote!(deserialize_with = #INTEGER)), renamed),
                // Only optional members: a required nullable integer keeps typify's attribute.
                Some(false) if optional => set_serde_attr(
                    field,
                    serde(
                        quote!(default, deserialize_with = #OPTIONAL_INTEGER, skip_serializing_if = "::std::option::Option::is_none"),
                    ),
                    renamed,
                ),
                _ => {}
            },
        }
    }
}

fn set_serde_attr(field: &mut Field, mut attr: Attribute, rename: Option<String>) {
    if let Some(rename) = rename {
        if let syn::Meta::List(list) = &mut attr.meta {
            let rest = list.tokens.clone();
            list.tokens = quote!(rename = #rename, #rest);
        }
    }
    field.attrs.retain(|a| !a.path().is_ident("serde"));
    field.attrs.push(attr);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_from_one_tuples_pass_the_tuple() {
        let mut file: syn::File = syn::parse_str(
            "enum E { V((String,)) } impl ::std::convert::From<(String,)> for E { fn from(value: (String,)) -> Self { Self::V(value.0) } }",
        )
        .unwrap();
        one_tuple_conversions(&mut file);
        let code = quote!(#file).to_string();
        assert!(code.contains("Self :: V (value)"), "{code}");
    }

    fn rewrite(source: &str) -> String {
        rewrite_with(source, &NullableMembers::new())
    }

    fn rewrite_with(source: &str, nullable: &NullableMembers) -> String {
        let mut file: syn::File = syn::parse_str(source).unwrap();
        apply(&mut file, nullable);
        quote!(#file).to_string()
    }

    #[test]
    fn numbers_become_pilotage_numbers_that_keep_their_form() {
        let out = rewrite(
            r#"pub struct S { pub a: f64, pub b: ::std::option::Option<::std::vec::Vec<f32>>, pub c: u64 }
            pub struct Ratio(pub f64);
            impl ::std::convert::From<f64> for Ratio { fn from(value: f64) -> Self { Self(value) } }
            impl ::std::convert::From<Ratio> for f64 { fn from(value: Ratio) -> Self { value.0 } }
            impl ::std::str::FromStr for Ratio { type Err = <f64 as ::std::str::FromStr>::Err; fn from_str(v: &str) -> Result<Self, Self::Err> { Ok(Self(v.parse()?)) } }
            pub struct Only(f64);
            impl ::std::convert::TryFrom<f64> for Only { type Error = (); fn try_from(value: f64) -> Result<Self, ()> { if ![1.5_f64, 2_f64, -3.5_f64].contains(&value) { Err(()) } else { Ok(Self(value)) } } }
            impl<'de> ::serde::Deserialize<'de> for Only { fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> { Self::try_from(<f64>::deserialize(d)?).map_err(|_| todo_err()) } }
            pub struct Pair(::std::vec::Vec<f64>);
            impl ::std::convert::TryFrom<::std::vec::Vec<f64>> for Pair { type Error = (); fn try_from(value: ::std::vec::Vec<f64>) -> Result<Self, ()> { if ![vec![1.5_f64, 2_f64], vec![vec![- 3_f64].len() as f64]].contains(&value) { Err(()) } else { Ok(Self(value)) } } }
            pub enum E { Number(f64), Text(String) }
            impl ::std::convert::From<f64> for E { fn from(value: f64) -> Self { Self::Number(value) } }"#,
        );
        for typed in [
            "pub b : :: std :: option :: Option < :: std :: vec :: Vec < :: pilotage_types :: Number > >",
            "pub struct Ratio (pub :: pilotage_types :: Number)",
            "pub struct Only (:: pilotage_types :: Number)",
            "TryFrom < :: pilotage_types :: Number > for Only",
            "Number (:: pilotage_types :: Number) , Text",
        ] {
            assert!(out.contains(typed), "{typed}: {out}");
        }
        assert!(out.contains("pub a : :: pilotage_types :: Number"), "{out}");
        assert!(out.contains("pub c : u64"), "integers stay integers: {out}");
        assert!(
            out.contains("< :: pilotage_types :: Number as :: std :: str :: FromStr > :: Err"),
            "{out}"
        );
        assert!(out.contains("< :: pilotage_types :: Number > :: deserialize"), "{out}");
        assert!(
            out.contains(":: pilotage_types :: Number :: from_f64 (1.5_f64)"),
            "{out}"
        );
        assert!(
            out.contains(":: pilotage_types :: Number :: from_f64 (- 3.5_f64)"),
            "{out}"
        );
        // Inside `vec![..]` too, nested.
        assert!(
            out.contains("vec ! [:: pilotage_types :: Number :: from_f64 (1.5_f64) , :: pilotage_types :: Number :: from_f64 (2_f64)]"),
            "{out}"
        );
        assert!(
            out.contains("vec ! [:: pilotage_types :: Number :: from_f64 (- 3_f64)]"),
            "{out}"
        );
        // The newtype converts from every primitive number; the union is left to
        // `constructors::union_conversions`, and `Only` (fallible) gets none.
        for source in NUMBER_COMPANIONS {
            assert_eq!(
                out.matches(&format!("From < {source} > for Ratio")).count(),
                1,
                "{source}: {out}"
            );
            assert_eq!(
                out.matches(&format!("From < {source} > for E")).count(),
                0,
                "{source}: {out}"
            );
            assert_eq!(
                out.matches(&format!("From < {source} > for Only")).count(),
                0,
                "{source}: {out}"
            );
        }
        assert!(out.contains("From < Ratio > for :: pilotage_types :: Number"), "{out}");
    }

    #[test]
    fn typify_error_module_gives_way_to_the_shared_type() {
        let out = rewrite(
            "pub mod error { pub struct ConversionError; } impl ::std::str::FromStr for K { type Err = self::error::ConversionError; }",
        );
        assert!(!out.contains("mod error"), "{out}");
        assert!(out.contains("type Err = :: pilotage_types :: ConversionError"), "{out}");
    }

    #[test]
    fn optional_collections_become_options() {
        let out = rewrite(
            r#"pub struct S {
                #[serde(rename = "x-list", default, skip_serializing_if = "::std::vec::Vec::is_empty")]
                pub x_list: ::std::vec::Vec<u8>,
            }"#,
        );
        assert!(
            out.contains("pub x_list : :: std :: option :: Option < :: std :: vec :: Vec < u8 > >"),
            "{out}"
        );
        assert!(out.contains("rename = \"x-list\""), "{out}");
        assert!(
            out.contains("skip_serializing_if = \"::std::option::Option::is_none\""),
            "{out}"
        );
    }

    #[test]
    fn an_optional_recursive_member_is_an_option_of_a_box() {
        let out = rewrite(
            r#"pub struct Node {
                #[serde(rename = "next-node", default)]
                pub next_node: ::std::boxed::Box<::std::option::Option<Node>>,
            }"#,
        );
        assert!(
            out.contains("pub next_node : :: std :: option :: Option < :: std :: boxed :: Box < Node > >"),
            "{out}"
        );
        assert!(out.contains("rename = \"next-node\""), "{out}");
        assert!(
            out.contains("skip_serializing_if = \"::std::option::Option::is_none\""),
            "{out}"
        );
    }

    #[test]
    fn nullable_member_becomes_double_option() {
        let source = r#"pub struct S {
                #[doc = "Out."]
                #[serde(rename = "out-put", skip_serializing_if = "::std::option::Option::is_none")]
                pub out_put: ::std::option::Option<u8>,
            }"#;
        let nullable: NullableMembers = [("S".to_owned(), "out_put".to_owned())].into();
        let out = rewrite_with(source, &nullable);
        assert!(out.contains("Option < :: std :: option :: Option < u8 > >"), "{out}");
        assert!(out.contains("::pilotage_types::wire::present"), "{out}");
        assert!(out.contains("rename = \"out-put\""), "{out}");
        assert!(!rewrite(source).contains("Option < :: std :: option :: Option < u8 > >"));
    }

    #[test]
    fn members_are_located_through_typify_names_and_field_types() {
        let file: syn::File = syn::parse_str(
            r#"pub struct Entry { #[serde(rename = "out-put")] pub out_put: Option<u8>, pub arm: Option<Arm>, pub list: Vec<Item> }
               pub struct Arm { pub label: Option<String> }
               pub struct Item { pub x: Option<u8> }"#,
        )
        .unwrap();
        let def_types: BTreeMap<String, String> = [("entry".to_owned(), "Entry".to_owned())].into();
        let pointers = [
            "/$defs/entry/properties/out-put".to_owned(),
            "/$defs/entry/properties/arm/properties/label".to_owned(),
            "/$defs/entry/properties/list/items/properties/x".to_owned(),
        ];
        let found = locate_members(&file, &def_types, &pointers).unwrap();
        let expected: NullableMembers = [
            ("Entry".to_owned(), "out_put".to_owned()),
            ("Arm".to_owned(), "label".to_owned()),
            ("Item".to_owned(), "x".to_owned()),
        ]
        .into();
        assert_eq!(found, expected);
        let missing = locate_members(&file, &def_types, &["/$defs/entry/properties/nope".to_owned()]).unwrap_err();
        assert!(missing.contains("no field for member `nope`"), "{missing}");
        let unknown = locate_members(&file, &def_types, &["/$defs/other/properties/x".to_owned()]).unwrap_err();
        assert!(unknown.contains("no type"), "{unknown}");
    }

    #[test]
    fn members_without_presence_or_number_issues_are_untouched() {
        let source = r#"pub struct S { #[serde(skip_serializing_if = "::std::option::Option::is_none")] pub a: ::std::option::Option<String>, pub b: String }"#;
        let before: syn::File = syn::parse_str(source).unwrap();
        assert_eq!(rewrite(source), quote!(#before).to_string());
    }

    #[test]
    fn code_blocks_in_descriptions_do_not_become_doctests() {
        assert_eq!(
            fence_code_as_text("a\n```\nlet x = 1;\n```\nb"),
            "a\n```text\nlet x = 1;\n```\nb"
        );
        assert_eq!(fence_code_as_text("```rust\nf()\n```"), "```text\nf()\n```");
        let out = rewrite("#[doc = \"Example:\\n```\\nuse other_crate::X;\\n```\"] pub struct S { pub a: String }");
        assert!(out.contains("```text"), "{out}");
    }

    #[test]
    fn a_member_named_extra_beside_the_unknown_members_map_in_a_variant() {
        // minecraft-advancement: a member `extra` and typify's flattened `extra` in one variant.
        let mut file: syn::File = syn::parse_str(
            r#"pub enum E { Object {
                #[serde(default)] extra: Vec<u8>,
                #[serde(flatten)] extra: ::serde_json::Map<String, ::serde_json::Value>,
            } }"#,
        )
        .unwrap();
        let renamed = unique_member_names(&mut file);
        assert_eq!(
            renamed,
            [("E::Object".to_owned(), "extra".to_owned(), "extra_2".to_owned())]
        );
        let out = quote!(#file).to_string();
        assert!(
            out.contains("extra : Vec < u8 >") && out.contains("extra_2 : :: serde_json :: Map"),
            "{out}"
        );
        assert!(!out.contains("rename"), "the flattened map gets no wire name: {out}");
    }

    #[test]
    fn colliding_member_names_become_unique_and_keep_their_wire_names() {
        let mut file: syn::File = syn::parse_str(
            r#"pub struct S {
                #[serde(rename = "line-length")] pub line_length: Option<u8>,
                pub line_length: Option<String>,
                pub line_length_2: u8,
            }
            impl ::std::default::Default for S {
                fn default() -> Self { Self { line_length: None, line_length: None, line_length_2: 0 } }
            }"#,
        )
        .unwrap();
        let renamed = unique_member_names(&mut file);
        assert_eq!(
            renamed,
            [("S".to_owned(), "line_length".to_owned(), "line_length_3".to_owned())]
        );
        let out = quote!(#file).to_string();
        assert!(
            out.contains("rename = \"line-length\"")
                && out.contains("pub line_length_3 : Option < u8 >")
                && out.contains("pub line_length : Option < String >"),
            "{out}"
        );
        assert!(
            out.contains("line_length_3 : None , line_length : None , line_length_2 : 0"),
            "{out}"
        );
    }

    #[test]
    fn docs_with_any_characters_stay_valid() {
        assert_eq!(doc_safe("a\r\nb\rc\nd\te"), "a\nb\nc\nd\te");
        assert_eq!(doc_safe("x\u{202e}y\u{0}z"), "x\\u{202e}y\\u{0}z");
        let out = rewrite("#[doc = \"one\\rtwo\\u{2066}\"] pub struct S { pub a: String }");
        assert!(!out.contains('\r') && out.contains("one\\ntwo"), "{out}");
        // Rendered, the docs compile as comments: no bare CR reaches `///`.
        let mut file: syn::File = syn::parse_str("#[doc = \"a\\rb\"] pub struct S;").unwrap();
        apply(&mut file, &NullableMembers::new());
        let text = prettyplease::unparse(&file);
        assert!(!text.contains('\r'), "{text}");
        syn::parse_file(&text).expect("reparses");
    }

    #[test]
    fn integer_members_accept_integral_floats() {
        let out = rewrite(
            r#"pub struct S {
                pub size: u64,
                #[serde(skip_serializing_if = "::std::option::Option::is_none")]
                pub line: ::std::option::Option<::std::num::NonZeroU64>,
            }"#,
        );
        assert!(
            out.contains("deserialize_with = \"::pilotage_types::wire::integer\""),
            "{out}"
        );
        assert!(
            out.contains("deserialize_with = \"::pilotage_types::wire::optional_integer\""),
            "{out}"
        );
    }
}
