//! Construction without literals: every generated struct, and every struct-like variant of a
//! generated enum, is `#[non_exhaustive]` and built through generated functions, so that a
//! minor version of the schema that adds an optional member adds a method and breaks no code
//! that builds values.
//!
//! For a struct `T` (every object `$defs` entry and nested object type):
//! - `T::new(..)` takes exactly the **required** members, in the order of the schema's
//!   `required` array (then, for members a `required` array does not name in this order, the
//!   order of the fields), each as `impl Into<Member>` (a required nullable member as
//!   `Option<Member>`), except that **`new` never takes two positional booleans**: when two
//!   or more required members are `bool`, none of them is an argument; each starts `false` and
//!   has a setter `with_<member>(self, value: bool) -> Self` (`RiskHints::new()
//!   .with_read_only(true)`), which `new`'s doc comment names. A struct with at most one
//!   required `bool` takes it as an argument like any other; other required members have no
//!   setter;
//! - one chaining setter per optional member, `with_<member>(self, value) -> Self`, the member
//!   in snake case as its field is (a keyword's trailing `_` dropped: `loop_` → `with_loop`);
//!   a nullable optional member (`Option<Option<M>>`) takes `Option<M>`, `None` meaning a
//!   present `null`;
//! - `Default` (as `new()`) where every member is optional;
//! - unknown members (the flattened `extra` map) start empty; the field stays public.
//!
//! For an enum variant with named fields, `T::<variant in snake case>(..)` takes the variant's
//! required members in the same way (booleans included: a variant has no setters to take
//! them), its optional members starting absent. A variant whose snake-case name is `new`, or
//! is an earlier variant's, gets `<name>_variant` (numbered from 2 if that is taken too),
//! which its doc comment says.
//!
//! Which members are required is read off the field as typify and the post-pass wrote it (a
//! member serde may omit carries `#[serde(default ..)]`): [`presence`], shared with the API
//! snapshot ([`crate::api`]). The order comes from the (normalised) schema: [`required_orders`]
//! follows each definition's type through its members, items and map values, and matches the
//! structs it cannot reach by their member names.
//!
//! For a union (an untagged enum), [`union_conversions`] adds what typify leaves out: a union
//! with a string alternative converts from `&str` and `String`, one with a number alternative
//! from that number type (`DiagnosticPath::from("/steps/0")`, so `Diagnostic::new(.., "/x",
//! ..)` compiles), each only when exactly one alternative takes the source type and the union
//! has no conversion of its own from it.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::TokenStream;
use quote::{format_ident, quote, ToTokens};
use serde_json::Value;
use syn::{Field, Fields, Item};

use crate::error::CodegenError;
use crate::postpass::{named_type, option_inner, wire_name, SerdeField};

/// How a field of a generated struct takes part in construction.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Presence {
    /// A required member: an argument of `new`.
    Required,
    /// An optional member: a setter, and an initial value in `new`.
    Optional(Initial),
    /// The flattened map of unknown members (`#[serde(flatten)]`): starts empty.
    Flattened,
}

/// The value an optional member starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Initial {
    /// `None` (an `Option` field).
    Absent,
    /// `Default::default()` (a bare `#[serde(default)]` on a field that is not an `Option`).
    Default,
    /// The schema's default, through typify's function (`#[serde(default = "path")]`).
    Function(String),
}

/// Whether `field` is a required member, an optional one (and what it starts as), or the map
/// of unknown members. serde lets a member be absent when its field has `default`, or is an
/// `Option` without a `deserialize_with` (typify marks a required nullable member, an
/// `Option` that must be present, with `deserialize_with = "Option::deserialize"`).
pub fn presence(field: &Field) -> Presence {
    let is_option = option_inner(&field.ty).is_some();
    let serde = SerdeField::of(field);
    match (serde.flatten, serde.default, serde.deserialize_with) {
        (true, _, _) => Presence::Flattened,
        (false, Some(Some(function)), _) => Presence::Optional(Initial::Function(function)),
        (false, Some(None), _) if is_option => Presence::Optional(Initial::Absent),
        (false, Some(None), _) => Presence::Optional(Initial::Default),
        (false, None, false) if is_option => Presence::Optional(Initial::Absent),
        (false, None, _) => Presence::Required,
    }
}

/// The member name a method is named after: the field's identifier without `r#` and without
/// the trailing `_` typify adds to keywords.
fn method_stem(ident: &syn::Ident) -> String {
    let text = ident.to_string();
    let text = text.trim_start_matches("r#");
    text.strip_suffix('_')
        .filter(|s| !s.is_empty())
        .unwrap_or(text)
        .to_owned()
}

/// The `required` names of an object schema, its own first, then those of its `allOf`
/// members (which typify merges into the same struct), each once.
fn required_of(schema: &Value) -> Vec<String> {
    let mut names = Vec::new();
    let mut seen = BTreeSet::new();
    let mut add = |schema: &Value, names: &mut Vec<String>| {
        for name in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
            if let Some(name) = name.as_str() {
                if seen.insert(name.to_owned()) {
                    names.push(name.to_owned());
                }
            }
        }
    };
    add(schema, &mut names);
    for member in schema.get("allOf").and_then(Value::as_array).into_iter().flatten() {
        add(member, &mut names);
    }
    names
}

/// The struct members as (wire name, field).
fn members(item: &syn::ItemStruct) -> Vec<(String, &Field)> {
    let Fields::Named(fields) = &item.fields else {
        return Vec::new();
    };
    fields
        .named
        .iter()
        .filter(|f| presence(f) != Presence::Flattened)
        .filter_map(|f| Some((wire_name(f)?, f)))
        .collect()
}

struct OrderFinder<'a> {
    structs: BTreeMap<String, &'a syn::ItemStruct>,
    found: BTreeMap<String, Vec<String>>,
}

impl OrderFinder<'_> {
    /// Records the `required` order of the struct `ty` made of `schema`, then follows its
    /// members into their subschemas.
    fn visit(&mut self, schema: &Value, ty: &str) {
        let Some(item) = self.structs.get(ty).copied() else {
            return;
        };
        if self.found.contains_key(ty) {
            return;
        }
        self.found.insert(ty.to_owned(), required_of(schema));
        for (wire, field) in members(item) {
            let Some(sub) = schema.get("properties").and_then(|p| p.get(&wire)) else {
                continue;
            };
            if let Some(inner) = named_type(&field.ty) {
                self.descend(sub, &inner, 0);
            }
        }
    }

    /// Follows `schema` through `items` and `additionalProperties` to the object schema the
    /// struct `ty` was made of (a `$ref` leads to a definition, visited as one).
    fn descend(&mut self, schema: &Value, ty: &str, depth: usize) {
        if depth > 8 || schema.get("$ref").is_some() {
            return;
        }
        if schema.get("properties").is_some() || schema.get("required").is_some() {
            self.visit(schema, ty);
            return;
        }
        for key in ["items", "additionalProperties"] {
            if let Some(sub) = schema.get(key).filter(|s| s.is_object()) {
                self.descend(sub, ty, depth + 1);
            }
        }
    }
}

/// For each generated struct, the wire names of its required members in schema order, as far
/// as the schema names them: definitions through `def_types` (definition → type name) and
/// their members' types; any struct not reached that way (an alternative of an enum, a merged
/// schema) by the unique object schema whose `properties` are exactly its members and whose
/// `required` names exactly its required ones. A struct found neither way is absent (its
/// fields' order is used).
pub fn required_orders(
    file: &syn::File,
    defs: &serde_json::Map<String, Value>,
    def_types: &BTreeMap<String, String>,
) -> BTreeMap<String, Vec<String>> {
    let structs: BTreeMap<String, &syn::ItemStruct> = file
        .items
        .iter()
        .filter_map(|item| match item {
            Item::Struct(s) => Some((s.ident.to_string(), s)),
            _ => None,
        })
        .collect();
    let mut finder = OrderFinder {
        structs,
        found: BTreeMap::new(),
    };
    for (def, schema) in defs {
        if let Some(ty) = def_types.get(def) {
            finder.descend(schema, ty, 0);
        }
    }
    let objects = object_schemas(defs);
    let mut found = finder.found;
    for (name, item) in &finder.structs {
        if found.contains_key(name) {
            continue;
        }
        if let Some(order) = order_by_members(&members(item), &objects) {
            found.insert(name.clone(), order);
        }
    }
    found
}

/// Every object schema of `defs` with `properties`: (its member names, its required order).
fn object_schemas(defs: &serde_json::Map<String, Value>) -> Vec<(BTreeSet<String>, Vec<String>)> {
    let mut objects = Vec::new();
    for schema in defs.values() {
        crate::walk::walk(schema, "", &mut |object, _| {
            if let Some(Value::Object(properties)) = object.get("properties") {
                let value = Value::Object(object.clone());
                objects.push((properties.keys().cloned().collect(), required_of(&value)));
            }
        });
    }
    objects
}

/// The one `required` order of the object schemas whose members are exactly `members`' and
/// whose required names are exactly the required members; `None` when there is none or the
/// candidates disagree.
fn order_by_members(members: &[(String, &Field)], objects: &[(BTreeSet<String>, Vec<String>)]) -> Option<Vec<String>> {
    let names: BTreeSet<String> = members.iter().map(|(w, _)| w.clone()).collect();
    let required: BTreeSet<String> = members
        .iter()
        .filter(|(_, f)| presence(f) == Presence::Required)
        .map(|(w, _)| w.clone())
        .collect();
    let mut orders = objects
        .iter()
        .filter(|(keys, order)| {
            *keys == names
                && order
                    .iter()
                    .filter(|n| names.contains(*n))
                    .cloned()
                    .collect::<BTreeSet<_>>()
                    == required
        })
        .map(|(_, order)| order.iter().filter(|n| names.contains(*n)).cloned().collect::<Vec<_>>());
    let first = orders.next()?;
    orders.all(|o| o == first).then_some(first)
}

/// The required fields of `fields` in construction order: those `order` names, in its order,
/// then the rest in field order.
fn ordered_required<'a>(fields: &[(String, &'a Field)], order: Option<&Vec<String>>) -> Vec<&'a Field> {
    let required: Vec<(String, &Field)> = fields
        .iter()
        .filter(|(_, f)| presence(f) == Presence::Required)
        .map(|(w, f)| (w.clone(), *f))
        .collect();
    let mut out: Vec<&Field> = Vec::new();
    if let Some(order) = order {
        for name in order {
            if let Some((_, field)) = required.iter().find(|(w, _)| w == name) {
                out.push(field);
            }
        }
    }
    for (_, field) in &required {
        if !out.iter().any(|f| std::ptr::eq(*f, *field)) {
            out.push(field);
        }
    }
    out
}

/// `Some(item)` when `ty` is `Vec<item>` (any path to it).
fn vec_item(ty: &syn::Type) -> Option<&syn::Type> {
    let syn::Type::Path(path) = ty else { return None };
    let last = path.path.segments.last()?;
    if last.ident != "Vec" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first()? {
        syn::GenericArgument::Type(item) if args.args.len() == 1 => Some(item),
        _ => None,
    }
}

/// The argument type that sets a value of type `ty`, and the expression that turns the
/// argument `value` into one: a list takes any `IntoIterator` of its items (a `Vec`, an
/// array, an iterator), anything else `impl Into<ty>`.
fn conversion(ty: &syn::Type, value: &TokenStream) -> (TokenStream, TokenStream) {
    match vec_item(ty) {
        Some(item) => (
            quote!(impl ::std::iter::IntoIterator<Item = #item>),
            quote!(#value.into_iter().collect()),
        ),
        None => (quote!(impl ::std::convert::Into<#ty>), quote!(#value.into())),
    }
}

/// A required member as an argument of a constructor ([`conversion`]), or `Option<M>` for a
/// required nullable member.
fn argument(field: &Field) -> TokenStream {
    let ident = field.ident.as_ref().expect("named field");
    let ty = &field.ty;
    match option_inner(ty) {
        Some(_) => quote!(#ident: #ty),
        None => {
            let (argument, _) = conversion(ty, &quote!(#ident));
            quote!(#ident: #argument)
        }
    }
}

/// The expression a required argument becomes.
fn argument_value(field: &Field) -> TokenStream {
    let ident = field.ident.as_ref().expect("named field");
    match option_inner(&field.ty) {
        Some(_) => quote!(#ident),
        None => conversion(&field.ty, &quote!(#ident)).1,
    }
}

/// The initial value of a non-required field.
fn initial_value(field: &Field) -> TokenStream {
    match presence(field) {
        Presence::Optional(Initial::Absent) => quote!(::std::option::Option::None),
        Presence::Optional(Initial::Function(path)) => {
            let path: syn::Path =
                syn::parse_str(&path).unwrap_or_else(|_| syn::parse_quote!(::std::default::Default::default));
            quote!(#path())
        }
        Presence::Optional(Initial::Default) | Presence::Flattened | Presence::Required => {
            quote!(::std::default::Default::default())
        }
    }
}

/// Whether `ty` is `bool`.
fn is_bool(ty: &syn::Type) -> bool {
    let key = type_key(ty);
    key == "bool" || key.ends_with("primitive::bool")
}

/// The required members of a struct that are not arguments of its `new`: its required `bool`
/// members when it has two or more (in construction order), none otherwise. Each starts
/// `false` and has a setter, so that no constructor takes two positional booleans.
fn flags<'a>(required: &[&'a Field]) -> Vec<&'a Field> {
    let flags: Vec<&Field> = required.iter().copied().filter(|f| is_bool(&f.ty)).collect();
    if flags.len() >= 2 {
        flags
    } else {
        Vec::new()
    }
}

/// The field initialisers and arguments of a constructor over `fields` (all named fields of a
/// struct or variant), with the required ones in `order`; the required members of `flags`
/// ([`flags`]) are no arguments and start `false`.
fn constructor_parts(
    all: &[&Field],
    members: &[(String, &Field)],
    order: Option<&Vec<String>>,
    flags: &[&Field],
) -> (Vec<TokenStream>, Vec<TokenStream>) {
    let is_flag = |field: &Field| flags.iter().any(|f| std::ptr::eq(*f, field));
    let required = ordered_required(members, order);
    let arguments = required.iter().filter(|f| !is_flag(f)).map(|f| argument(f)).collect();
    let initialisers = all
        .iter()
        .map(|field| {
            let ident = field.ident.as_ref().expect("named field");
            let value = if is_flag(field) {
                quote!(false)
            } else if required.iter().any(|r| std::ptr::eq(*r, *field)) {
                argument_value(field)
            } else {
                initial_value(field)
            };
            quote!(#ident: #value)
        })
        .collect();
    (arguments, initialisers)
}

/// The first line of a field's doc comment, if any.
fn first_doc_line(field: &Field) -> Option<String> {
    field.attrs.iter().find_map(|attr| {
        let syn::Meta::NameValue(nv) = &attr.meta else {
            return None;
        };
        if !attr.path().is_ident("doc") {
            return None;
        }
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(text),
            ..
        }) = &nv.value
        else {
            return None;
        };
        text.value()
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(str::to_owned)
    })
}

fn code_list(fields: &[&Field]) -> String {
    let names: Vec<String> = fields
        .iter()
        .filter_map(|f| wire_name(f))
        .map(|w| format!("`{w}`"))
        .collect();
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

/// The constructor, setters and `Default` of one struct.
fn struct_impl(item: &syn::ItemStruct, order: Option<&Vec<String>>) -> Result<TokenStream, String> {
    let name = &item.ident;
    let Fields::Named(fields) = &item.fields else {
        return Ok(TokenStream::new());
    };
    let all: Vec<&Field> = fields.named.iter().collect();
    let members = members(item);
    let required = ordered_required(&members, order);
    let flags = flags(&required);
    let (arguments, initialisers) = constructor_parts(&all, &members, order, &flags);
    let setter_of = |field: &Field| format_ident!("with_{}", method_stem(field.ident.as_ref().expect("named field")));
    let new_doc = if flags.is_empty() {
        format!(
            "A `{name}` with its required members ({}), in the order of the schema's `required`; every optional member absent (or at its schema default) and no unknown members. Optional members are set with the `with_*` methods.",
            code_list(&required)
        )
    } else {
        let arguments: Vec<&Field> = required
            .iter()
            .copied()
            .filter(|f| !flags.iter().any(|g| std::ptr::eq(*g, *f)))
            .collect();
        let setters: Vec<String> = flags.iter().map(|f| format!("`{}`", setter_of(f))).collect();
        let arguments = if arguments.is_empty() {
            "no arguments".to_owned()
        } else {
            format!(
                "its required members other than booleans ({}), in the order of the schema's `required`",
                code_list(&arguments)
            )
        };
        format!(
            "A `{name}` with {arguments}; its required booleans ({}) start `false`, each set to `true` with its own method ({}); every optional member absent (or at its schema default) and no unknown members. Optional members are set with the `with_*` methods.",
            code_list(&flags),
            setters.join(", ")
        )
    };
    let mut methods = vec![quote! {
        #[doc = #new_doc]
        pub fn new(#(#arguments),*) -> Self {
            Self { #(#initialisers),* }
        }
    }];
    let mut seen = BTreeSet::new();
    for field in &flags {
        let ident = field.ident.as_ref().expect("named field");
        let setter = setter_of(field);
        if !seen.insert(setter.to_string()) {
            return Err(format!("struct {name}: two members make the same setter `{setter}`"));
        }
        let wire = wire_name(field).unwrap_or_else(|| method_stem(ident));
        let mut doc = format!("Sets the required member `{wire}` (`false` until set).");
        if let Some(line) = first_doc_line(field) {
            doc.push_str(&format!("\n\n{line}"));
        }
        methods.push(quote! {
            #[doc = #doc]
            #[must_use]
            pub fn #setter(mut self, value: bool) -> Self {
                self.#ident = value;
                self
            }
        });
    }
    for (wire, field) in &members {
        let Presence::Optional(initial) = presence(field) else {
            continue;
        };
        let ident = field.ident.as_ref().expect("named field");
        let setter = format_ident!("with_{}", method_stem(ident));
        if !seen.insert(setter.to_string()) {
            return Err(format!("struct {name}: two members make the same setter `{setter}`"));
        }
        let mut doc = format!("Sets the optional member `{wire}`.");
        if let Some(line) = first_doc_line(field) {
            doc.push_str(&format!("\n\n{line}"));
        }
        let ty = &field.ty;
        let body = match (initial, option_inner(ty)) {
            (Initial::Absent, Some(inner)) => match option_inner(inner) {
                Some(value) => {
                    doc.push_str("\n\n`None` sends the member as `null`; a member left unset is absent.");
                    quote!((mut self, value: ::std::option::Option<#value>) -> Self {
                        self.#ident = ::std::option::Option::Some(value);
                        self
                    })
                }
                None => {
                    let (argument, converted) = conversion(inner, &quote!(value));
                    quote!((mut self, value: #argument) -> Self {
                        self.#ident = ::std::option::Option::Some(#converted);
                        self
                    })
                }
            },
            _ => {
                let (argument, converted) = conversion(ty, &quote!(value));
                quote!((mut self, value: #argument) -> Self {
                    self.#ident = #converted;
                    self
                })
            }
        };
        methods.push(quote! {
            #[doc = #doc]
            #[must_use]
            pub fn #setter #body
        });
    }
    let default = if required.is_empty() && !derives_default(&item.attrs) {
        let doc = format!("`{name}::new()`: every member absent.");
        quote! {
            impl ::std::default::Default for #name {
                #[doc = #doc]
                fn default() -> Self {
                    Self::new()
                }
            }
        }
    } else {
        TokenStream::new()
    };
    Ok(quote! {
        impl #name {
            #(#methods)*
        }
        #default
    })
}

fn derives_default(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().filter(|a| a.path().is_ident("derive")).any(|a| {
        a.meta
            .to_token_stream()
            .to_string()
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| w == "Default")
    })
}

/// `snake_case` of a variant name.
/// The snake-case method name of a variant; a Rust keyword (`enum`, `type`, `self`) gets a
/// trailing `_` (`Kind::enum_(..)`), since some keywords cannot be raw identifiers.
fn snake_case(ident: &syn::Ident) -> String {
    use heck::ToSnakeCase;
    let name = ident.to_string().trim_start_matches("r#").to_snake_case();
    if syn::parse_str::<syn::Ident>(&name).is_err() {
        format!("{name}_")
    } else {
        name
    }
}

/// The constructor name of a variant whose snake-case name is `snake`, recorded in `seen`: the
/// snake-case name itself, unless an earlier variant of the enum took it (`HTTPServer` and
/// `HttpServer` are both `http_server`) or it is `new` (kept for structs' constructors); then
/// `<snake>_variant`, numbered from 2 while that is taken too. With the name it returns the
/// name that was taken, for the constructor's doc.
fn variant_method(snake: &str, seen: &mut BTreeSet<String>) -> (String, Option<String>) {
    if snake != "new" && seen.insert(snake.to_owned()) {
        return (snake.to_owned(), None);
    }
    let base = format!("{}_variant", snake.trim_end_matches('_'));
    let mut candidate = base.clone();
    let mut number = 2;
    while !seen.insert(candidate.clone()) {
        candidate = format!("{base}_{number}");
        number += 1;
    }
    (candidate, Some(snake.to_owned()))
}

/// The constructors of the struct-like variants of one enum.
fn enum_impl(item: &syn::ItemEnum, orders: &[(BTreeSet<String>, Vec<String>)]) -> Result<TokenStream, String> {
    let name = &item.ident;
    let mut methods = Vec::new();
    let mut seen = BTreeSet::new();
    for variant in &item.variants {
        let Fields::Named(fields) = &variant.fields else {
            continue;
        };
        let all: Vec<&Field> = fields.named.iter().collect();
        let members: Vec<(String, &Field)> = all
            .iter()
            .filter(|f| presence(f) != Presence::Flattened)
            .filter_map(|f| Some((wire_name(f)?, *f)))
            .collect();
        let order = order_by_members(&members, orders);
        let (arguments, initialisers) = constructor_parts(&all, &members, order.as_ref(), &[]);
        let required = ordered_required(&members, order.as_ref());
        let variant_ident = &variant.ident;
        let (method, renamed) = variant_method(&snake_case(variant_ident), &mut seen);
        let method = format_ident!("{method}");
        let renamed = match renamed {
            Some(taken) if taken == "new" => {
                format!(" Named `{method}`: `new` is never a variant's constructor.")
            }
            Some(taken) => format!(" Named `{method}`: an earlier variant's constructor is `{taken}`."),
            None => String::new(),
        };
        let doc = format!(
            "A [`{name}::{variant_ident}`] with its required members ({}); every optional member absent and no unknown members.{renamed}",
            code_list(&required)
        );
        methods.push(quote! {
            #[doc = #doc]
            pub fn #method(#(#arguments),*) -> Self {
                Self::#variant_ident { #(#initialisers),* }
            }
        });
    }
    if methods.is_empty() {
        return Ok(TokenStream::new());
    }
    Ok(quote! {
        impl #name {
            #(#methods)*
        }
    })
}

fn non_exhaustive(attrs: &mut Vec<syn::Attribute>) {
    if !attrs.iter().any(|a| a.path().is_ident("non_exhaustive")) {
        attrs.push(syn::parse_quote!(#[non_exhaustive]));
    }
}

/// Makes every struct with named fields, and every struct-like enum variant, of `file`
/// `#[non_exhaustive]` and appends their constructors and setters. `defs` is the normalised
/// copy typify read; `def_types` its definitions' type names.
pub fn apply(
    file: &mut syn::File,
    defs: &serde_json::Map<String, Value>,
    def_types: &BTreeMap<String, String>,
    source: &str,
) -> Result<(), CodegenError> {
    let orders = required_orders(file, defs, def_types);
    let objects = object_schemas(defs);
    let mut items = Vec::with_capacity(file.items.len() * 2);
    for mut item in std::mem::take(&mut file.items) {
        let made = match &mut item {
            Item::Struct(item) if matches!(item.fields, Fields::Named(_)) => {
                non_exhaustive(&mut item.attrs);
                struct_impl(item, orders.get(&item.ident.to_string()))
            }
            Item::Enum(item) => {
                for variant in item.variants.iter_mut() {
                    if matches!(variant.fields, Fields::Named(_)) {
                        non_exhaustive(&mut variant.attrs);
                    }
                }
                enum_impl(item, &objects)
            }
            _ => Ok(TokenStream::new()),
        };
        let made = made.map_err(|message| CodegenError::new(source, "/$defs", message))?;
        items.push(item);
        // Each type's constructors right after it.
        let made: syn::File = syn::parse2(made)
            .map_err(|e| CodegenError::new(source, "/$defs", format!("generated constructors do not parse: {e}")))?;
        items.extend(made.items);
    }
    file.items = items;
    union_conversions(file);
    Ok(())
}

/// The source types [`union_conversions`] considers: the string family, then the numbers.
const STRING_SOURCES: &[&str] = &["&str", "String"];
const NUMBER_SOURCES: &[&str] = &[
    "f64", "f32", "i64", "u64", "i32", "u32", "i16", "u16", "i8", "u8", "i128", "u128", "isize", "usize",
];

/// A type as comparable text: no spaces, no leading `::`, `String` for the standard library's.
fn type_key(ty: &syn::Type) -> String {
    let text = ty.to_token_stream().to_string().replace(' ', "");
    let text = text.replace("&::", "&");
    let text = text.strip_prefix("::").unwrap_or(&text).to_owned();
    text.replace("std::string::String", "String")
}

/// The types a source type stands for when asking whether an alternative accepts it: a string
/// is a string whether borrowed or owned.
fn family(source: &str) -> &'static [&'static str] {
    if STRING_SOURCES.contains(&source) {
        &["&str", "String", "&String"]
    } else {
        NUMBER_SOURCES
            .iter()
            .position(|n| *n == source)
            .map_or(&[], |i| &NUMBER_SOURCES[i..=i])
    }
}

fn is_untagged(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("serde")
            && a.meta
                .require_list()
                .is_ok_and(|list| list.tokens.to_string().split(',').any(|t| t.trim() == "untagged"))
    })
}

/// **Unions convert from their string and number alternatives.** For every untagged enum of
/// `file` and every source type `S` (`&str`, `String`, each primitive number type), appends
/// `impl From<S> for Union` building the one alternative that takes `S`: the alternative's type
/// is `S` (a `String` for `&str`), or a type of the file with an infallible `From<S>` (a newtype
/// over `String`, an open string enum).
///
/// None is added when two alternatives accept `S` (`String` beside a newtype over `String`, a
/// closed string enum whose `TryFrom<&str>` also accepts a string, `serde_json::Value`, which
/// accepts every scalar): which one a string means would be a guess. None is added either when
/// the union already converts from `S` (typify writes `From` for an alternative whose type is
/// unique, and `FromStr` / `TryFrom<&str>` for a union of scalars, which a `From<&str>` would
/// conflict with).
pub fn union_conversions(file: &mut syn::File) {
    // (type, source) of every `From` (infallible) and `TryFrom` / `FromStr` (fallible) impl.
    let mut infallible = BTreeSet::new();
    let mut fallible = BTreeSet::new();
    for item in &file.items {
        let Item::Impl(imp) = item else { continue };
        let Some((_, path, _)) = &imp.trait_ else { continue };
        let Some(last) = path.segments.last() else { continue };
        let target = type_key(&imp.self_ty);
        let source = match &last.arguments {
            syn::PathArguments::AngleBracketed(args) => match args.args.first() {
                Some(syn::GenericArgument::Type(ty)) => Some(type_key(ty)),
                _ => None,
            },
            _ => None,
        };
        match (last.ident.to_string().as_str(), source) {
            ("From", Some(source)) => {
                infallible.insert((target, source));
            }
            ("TryFrom", Some(source)) => {
                fallible.insert((target, source));
            }
            ("FromStr", _) => {
                fallible.insert((target, "&str".to_owned()));
            }
            _ => {}
        }
    }
    let converts = |set: &BTreeSet<(String, String)>, target: &str, source: &str| {
        set.contains(&(target.to_owned(), source.to_owned()))
    };
    // `pilotage_types::Number` (a `number`, `postpass::json_numbers`) is built from the
    // primitive numbers a newtype over it converts from.
    let number_takes = |target: &str, source: &str| {
        target == crate::postpass::NUMBER && crate::postpass::NUMBER_COMPANIONS.contains(&source)
    };
    let accepts = |target: &str, source: &str| {
        target == "serde_json::Value"
            || number_takes(target, source)
            || family(source)
                .iter()
                .any(|s| *s == target || converts(&infallible, target, s) || converts(&fallible, target, s))
    };
    // How an alternative of type `target` is built from `value: source`, when it can be.
    let build = |target: &str, source: &str| -> Option<TokenStream> {
        if target == source {
            Some(quote!(value))
        } else if source == "&str" && target == "String" {
            Some(quote!(::std::borrow::ToOwned::to_owned(value)))
        } else if converts(&infallible, target, source) || number_takes(target, source) {
            Some(quote!(::std::convert::From::from(value)))
        } else if source == "&str" && converts(&infallible, target, "String") {
            Some(quote!(::std::convert::From::from(::std::borrow::ToOwned::to_owned(
                value
            ))))
        } else if source == "String" && converts(&infallible, target, "&str") {
            Some(quote!(::std::convert::From::from(value.as_str())))
        } else {
            None
        }
    };
    let mut added: BTreeMap<String, Vec<Item>> = BTreeMap::new();
    for item in &file.items {
        let Item::Enum(union) = item else { continue };
        if !is_untagged(&union.attrs) {
            continue;
        }
        let name = &union.ident;
        let own = name.to_string();
        let alternatives: Vec<(&syn::Ident, String)> = union
            .variants
            .iter()
            .filter_map(|v| match &v.fields {
                Fields::Unnamed(fields) if fields.unnamed.len() == 1 => {
                    Some((&v.ident, type_key(&fields.unnamed[0].ty)))
                }
                _ => None,
            })
            .collect();
        for source in STRING_SOURCES.iter().chain(NUMBER_SOURCES) {
            if converts(&infallible, &own, source) || converts(&fallible, &own, source) {
                continue;
            }
            let takers: Vec<&(&syn::Ident, String)> = alternatives.iter().filter(|(_, t)| accepts(t, source)).collect();
            let [(variant, target)] = takers.as_slice() else {
                continue;
            };
            let Some(body) = build(target, source) else { continue };
            let source_ty: syn::Type = match *source {
                "&str" => syn::parse_quote!(&str),
                "String" => syn::parse_quote!(::std::string::String),
                number => syn::parse_str(number).expect("a primitive type parses"),
            };
            added.entry(own.clone()).or_default().push(syn::parse_quote! {
                impl ::std::convert::From<#source_ty> for #name {
                    fn from(value: #source_ty) -> Self {
                        Self::#variant(#body)
                    }
                }
            });
        }
    }
    if added.is_empty() {
        return;
    }
    // Each union's conversions after the union and the impls that follow it.
    let owner = |item: &Item| match item {
        Item::Enum(union) => Some(union.ident.to_string()),
        Item::Impl(imp) => Some(type_key(&imp.self_ty)),
        _ => None,
    };
    let items = std::mem::take(&mut file.items);
    let mut current: Option<String> = None;
    for item in items {
        let this = owner(&item);
        if current.is_some() && current != this {
            file.items
                .extend(added.remove(current.as_deref().unwrap_or_default()).unwrap_or_default());
        }
        current = this;
        file.items.push(item);
    }
    for (_, rest) in added {
        file.items.extend(rest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(source: &str, defs: Value, def_types: &[(&str, &str)]) -> String {
        let mut file: syn::File = syn::parse_str(source).unwrap();
        let def_types: BTreeMap<String, String> = def_types
            .iter()
            .map(|(d, t)| ((*d).to_owned(), (*t).to_owned()))
            .collect();
        apply(&mut file, defs.as_object().unwrap(), &def_types, "test.json").unwrap();
        prettyplease::unparse(&file)
    }

    const RESPONSE: &str = r#"
        pub struct Response {
            #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
            pub diagnostics: ::std::option::Option<::std::vec::Vec<Diagnostic>>,
            #[serde(deserialize_with = "::std::option::Option::deserialize")]
            pub error: ::std::option::Option<::std::string::String>,
            #[serde(rename = "loop", skip_serializing_if = "::std::option::Option::is_none")]
            pub loop_: ::std::option::Option<::std::string::String>,
            #[serde(default, deserialize_with = "::pilotage_types::wire::present", skip_serializing_if = "::std::option::Option::is_none")]
            pub output_schema: ::std::option::Option<::std::option::Option<::serde_json::Value>>,
            pub run_id: ::std::string::String,
            #[serde(default = "defaults::level")]
            pub level: Level,
            pub steps: ::std::vec::Vec<Step>,
            #[serde(flatten)]
            pub extra: ::serde_json::Map<::std::string::String, ::serde_json::Value>,
        }
        pub struct Step { #[serde(skip_serializing_if = "::std::option::Option::is_none")] pub note: ::std::option::Option<::std::string::String> }
    "#;

    fn response_defs() -> Value {
        serde_json::json!({"Response": {"type": "object",
            "properties": {"run_id": {}, "steps": {"items": {"properties": {"note": {}}}}, "error": {}, "loop": {},
                "diagnostics": {}, "output_schema": {}, "level": {}},
            "required": ["steps", "run_id", "error"]}})
    }

    #[test]
    fn presence_follows_what_serde_may_omit() {
        let file: syn::File = syn::parse_str(RESPONSE).unwrap();
        let Item::Struct(item) = &file.items[0] else { panic!() };
        let found: Vec<(String, Presence)> = item
            .fields
            .iter()
            .map(|f| (f.ident.as_ref().unwrap().to_string(), presence(f)))
            .collect();
        assert_eq!(
            found,
            [
                ("diagnostics".to_owned(), Presence::Optional(Initial::Absent)),
                ("error".to_owned(), Presence::Required),
                ("loop_".to_owned(), Presence::Optional(Initial::Absent)),
                ("output_schema".to_owned(), Presence::Optional(Initial::Absent)),
                ("run_id".to_owned(), Presence::Required),
                (
                    "level".to_owned(),
                    Presence::Optional(Initial::Function("defaults::level".to_owned()))
                ),
                ("steps".to_owned(), Presence::Required),
                ("extra".to_owned(), Presence::Flattened),
            ]
        );
    }

    #[test]
    fn new_takes_the_required_members_in_schema_order() {
        let out = run(RESPONSE, response_defs(), &[("Response", "Response")]);
        assert!(out.contains("#[non_exhaustive]\npub struct Response"), "{out}");
        let new = out.split("pub fn new(").nth(1).unwrap();
        let arguments = &new[..new.find(") -> Self").unwrap()];
        let steps = arguments.find("steps:").unwrap();
        let run_id = arguments.find("run_id:").unwrap();
        let error = arguments.find("error:").unwrap();
        assert!(steps < run_id && run_id < error, "{arguments}");
        assert!(
            arguments.contains("steps: impl ::std::iter::IntoIterator<Item = Step>"),
            "{arguments}"
        );
        assert!(
            arguments.contains("error: ::std::option::Option<::std::string::String>"),
            "{arguments}"
        );
        assert!(
            !arguments.contains("loop_"),
            "optional members are not arguments: {arguments}"
        );
        assert!(
            new.contains("level: defaults::level()"),
            "the schema default is the start: {new}"
        );
        assert!(new.contains("extra: ::std::default::Default::default()"), "{new}");
    }

    #[test]
    fn one_setter_per_optional_member() {
        let out = run(RESPONSE, response_defs(), &[("Response", "Response")]);
        for setter in ["with_diagnostics", "with_loop(", "with_output_schema", "with_level"] {
            assert!(out.contains(setter), "{setter} missing:\n{out}");
        }
        assert!(!out.contains("with_run_id") && !out.contains("with_extra"), "{out}");
        assert!(
            out.contains(
                "with_output_schema(\n        mut self,\n        value: ::std::option::Option<::serde_json::Value>,"
            ),
            "a nullable member takes the inner Option: {out}"
        );
        assert_eq!(
            out.matches("#[must_use]").count(),
            5,
            "four setters of Response, one of Step: {out}"
        );
        // The nested struct is reached through `items` and is all-optional: `Default`.
        assert!(out.contains("#[non_exhaustive]\npub struct Step"), "{out}");
        assert!(out.contains("impl ::std::default::Default for Step"), "{out}");
        assert!(!out.contains("impl ::std::default::Default for Response"), "{out}");
    }

    #[test]
    fn two_or_more_required_booleans_are_set_by_name_not_by_position() {
        let schema = serde_json::json!({"$defs": {
            "Hints": {"type": "object", "properties": {
                "readOnly": {"type": "boolean"}, "label": {"type": "string"},
                "destructive": {"type": "boolean"}, "openWorld": {"type": "boolean"},
                "note": {"type": "string"}},
                "required": ["readOnly", "label", "destructive", "openWorld"]},
            "Verdict": {"type": "object", "properties": {
                "valid": {"type": "boolean"}, "reason": {"type": "string"}},
                "required": ["valid", "reason"]}}});
        let settings = crate::TypesSettings::new("s.json");
        let generated = crate::generate_types(schema.to_string().as_bytes(), &settings).unwrap();
        let api: Vec<&str> = generated.api.lines().collect();
        let lines = |prefix: &str| -> Vec<&str> { api.iter().copied().filter(|l| l.starts_with(prefix)).collect() };
        // Three required booleans and a string: `new` takes the string; each boolean a setter.
        assert_eq!(
            lines("constructor Hints::"),
            ["constructor Hints::new: (label: impl Into<String>)"],
            "{api:#?}"
        );
        assert_eq!(
            lines("setter Hints::"),
            [
                "setter Hints::with_read_only: (value: bool)",
                "setter Hints::with_destructive: (value: bool)",
                "setter Hints::with_open_world: (value: bool)",
                "setter Hints::with_note: (value: impl Into<String>)",
            ],
            "{api:#?}"
        );
        // The members stay required on the wire.
        assert!(api.contains(&"member Hints.read_only: required bool"), "{api:#?}");
        let code = &generated.code;
        assert!(
            code.contains("pub fn with_read_only(mut self, value: bool) -> Self {"),
            "{code}"
        );
        assert!(
            code.contains("read_only: false")
                && code.contains("destructive: false")
                && code.contains("open_world: false"),
            "{code}"
        );
        assert!(
            code.contains("its required booleans (`readOnly`, `destructive`, `openWorld`) start `false`, each set to `true` with its own method (`with_read_only`, `with_destructive`, `with_open_world`)"),
            "new's doc names the booleans and their setters: {code}"
        );
        assert!(
            code.contains("Sets the required member `readOnly` (`false` until set)."),
            "{code}"
        );
        // Required booleans are no reason for `Default`.
        assert!(!code.contains("impl ::std::default::Default for Hints"), "{code}");
        // One required boolean: an argument as before, and no setter.
        assert_eq!(
            lines("constructor Verdict::"),
            ["constructor Verdict::new: (valid: impl Into<bool>, reason: impl Into<String>)"],
            "{api:#?}"
        );
        assert!(lines("setter Verdict::").is_empty(), "{api:#?}");
        // Against the positional constructor: breaking for `new`, additive for the setters.
        let before = generated
            .api
            .lines()
            .filter(|l| !l.starts_with("setter Hints::with_") || l.contains("with_note"))
            .map(|l| {
                if l.starts_with("constructor Hints::new") {
                    "constructor Hints::new: (read_only: impl Into<bool>, label: impl Into<String>, destructive: impl Into<bool>, open_world: impl Into<bool>)"
                } else {
                    l
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        let changes: Vec<String> = crate::api::diff(&before, &generated.api)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(changes.len(), 4, "{changes:#?}");
        assert!(
            changes[0].starts_with("breaking constructor Hints::new takes other arguments"),
            "{changes:#?}"
        );
        assert!(
            changes[1..]
                .iter()
                .all(|c| c.starts_with("additive new setter Hints::with_")),
            "{changes:#?}"
        );
    }

    #[test]
    fn a_variant_spelled_as_a_keyword_gets_a_method_name() {
        for (variant, method) in [
            ("Enum", "enum_"),
            ("SelfValue", "self_value"),
            ("Self_", "self_"),
            ("Type", "type_"),
        ] {
            let ident = syn::Ident::new(variant, proc_macro2::Span::call_site());
            assert_eq!(snake_case(&ident), method);
        }
    }

    #[test]
    fn struct_like_variants_get_constructors_and_unknown_order_falls_back_to_fields() {
        let source = r#"
            #[serde(untagged)]
            pub enum Declaration {
                Single { argument: ::std::string::String, language: Language, #[serde(flatten)] extra: ::serde_json::Map<::std::string::String, ::serde_json::Value> },
                Shared { languages: ::std::vec::Vec<Argument> },
                Plain(bool),
            }
        "#;
        let defs = serde_json::json!({"Declaration": {"anyOf": [
            {"properties": {"argument": {}, "language": {}}, "required": ["language", "argument"]},
            {"properties": {"languages": {}}, "required": ["languages"]}]}});
        let out = run(source, defs, &[("Declaration", "Declaration")]);
        assert_eq!(out.matches("#[non_exhaustive]").count(), 2, "{out}");
        assert!(
            out.contains("pub fn single(\n        language: impl ::std::convert::Into<Language>,\n        argument: impl ::std::convert::Into<::std::string::String>,"),
            "{out}"
        );
        assert!(out.contains("pub fn shared("), "{out}");
        assert!(!out.contains("pub fn plain"), "{out}");
    }

    #[test]
    fn a_variant_constructor_name_taken_gets_a_variant_suffix() {
        // quicktype's `keyword-unions` schema: a union whose object alternative is titled `new`;
        // and two variants whose snake-case names are one.
        let source = r#"
            #[serde(untagged)]
            pub enum Union {
                New { #[serde(flatten)] extra: ::serde_json::Map<::std::string::String, ::serde_json::Value> },
                HttpServerVariant { path: ::std::string::String },
                HttpServer { port: i64 },
                HTTPServer { host: ::std::string::String },
                Number(f64),
            }
        "#;
        let defs = serde_json::json!({"Union": {"anyOf": [
            {"type": "object"},
            {"properties": {"path": {}}, "required": ["path"]},
            {"properties": {"port": {}}, "required": ["port"]},
            {"properties": {"host": {}}, "required": ["host"]},
            {"type": "number"}]}});
        let out = run(source, defs, &[("Union", "Union")]);
        for (method, variant) in [
            ("new_variant()", "New"),
            ("http_server(", "HttpServer"),
            ("http_server_variant(", "HttpServerVariant"),
            ("http_server_variant_2(", "HTTPServer"),
        ] {
            let at = out
                .find(&format!("pub fn {method}"))
                .unwrap_or_else(|| panic!("{method} missing:\n{out}"));
            let body = &out[at..];
            let body = &body[..body.find("\n    }").unwrap()];
            assert!(
                body.contains(&format!("Self::{variant} {{")),
                "{method} builds {variant}:\n{out}"
            );
        }
        assert!(!out.contains("pub fn new("), "{out}");
        assert!(out.contains("Named `new_variant`: `new` is never"), "{out}");
        assert!(
            out.contains("Named `http_server_variant_2`: an earlier variant's constructor is `http_server`."),
            "{out}"
        );
        // The output is Rust.
        syn::parse_file(&out).unwrap();
    }

    #[test]
    fn unions_convert_from_the_one_alternative_that_takes_a_string_or_a_number() {
        let source = r#"
            #[serde(untagged)] pub enum Path { String(::std::string::String), TextRange(TextRange) }
            impl ::std::convert::From<TextRange> for Path { fn from(value: TextRange) -> Self { Self::TextRange(value) } }
            #[serde(untagged)] pub enum Count { Exact(u64), Ratio(Ratio), Many(::std::vec::Vec<u64>) }
            pub struct Ratio(pub f64);
            impl ::std::convert::From<f64> for Ratio { fn from(value: f64) -> Self { Self(value) } }
            pub struct Id(pub ::std::string::String);
            impl ::std::convert::From<::std::string::String> for Id { fn from(value: ::std::string::String) -> Self { Self(value) } }
            #[serde(untagged)] pub enum Twice { Text(::std::string::String), Id(Id), Count(i64) }
            pub enum Kind { A }
            impl ::std::convert::TryFrom<&str> for Kind { type Error = (); fn try_from(v: &str) -> Result<Self, ()> { Err(()) } }
            #[serde(untagged)] pub enum Closed { Kind(Kind), Text(::std::string::String) }
            #[serde(untagged)] pub enum Any { Text(::std::string::String), Value(::serde_json::Value) }
            #[serde(untagged)] pub enum Parsed { Text(::std::string::String), Count(i64) }
            impl ::std::str::FromStr for Parsed { type Err = (); fn from_str(v: &str) -> Result<Self, ()> { Err(()) } }
            impl ::std::convert::TryFrom<::std::string::String> for Parsed { type Error = (); fn try_from(v: ::std::string::String) -> Result<Self, ()> { Err(()) } }
            pub enum NotAUnion { Text(::std::string::String) }
        "#;
        let mut file: syn::File = syn::parse_str(source).unwrap();
        union_conversions(&mut file);
        let out = prettyplease::unparse(&file);
        let conversions = |source: &str, union: &str| {
            out.matches(&format!("impl ::std::convert::From<{source}> for {union} {{"))
                .count()
        };
        assert_eq!(conversions("&str", "Path"), 1, "{out}");
        assert_eq!(conversions("::std::string::String", "Path"), 1, "{out}");
        assert_eq!(conversions("TextRange", "Path"), 1, "typify's own one stays: {out}");
        // Right after the union and its impls.
        assert!(
            out.find("for Path {").unwrap() < out.find("pub enum Count").unwrap(),
            "{out}"
        );
        // Numbers, through a newtype's conversion too; `Vec<u64>` takes no number.
        assert_eq!(conversions("u64", "Count"), 1, "{out}");
        assert_eq!(conversions("f64", "Count"), 1, "{out}");
        assert!(out.contains("Self::Ratio(::std::convert::From::from(value))"), "{out}");
        // A string and a newtype over `String`: ambiguous, so neither; the number still.
        assert_eq!(
            conversions("&str", "Twice") + conversions("::std::string::String", "Twice"),
            0,
            "{out}"
        );
        assert_eq!(conversions("i64", "Twice"), 1, "{out}");
        // A closed enum that tries a string, and `serde_json::Value`, also take strings.
        assert_eq!(conversions("&str", "Closed"), 0, "{out}");
        assert_eq!(conversions("&str", "Any"), 0, "{out}");
        // typify's `FromStr` / `TryFrom<String>` of the union: no `From` of those beside them.
        assert_eq!(
            conversions("&str", "Parsed") + conversions("::std::string::String", "Parsed"),
            0,
            "{out}"
        );
        assert_eq!(conversions("i64", "Parsed"), 1, "{out}");
        assert_eq!(conversions("&str", "NotAUnion"), 0, "{out}");
    }

    #[test]
    fn colliding_setters_are_an_error_naming_the_struct() {
        let source = r#"pub struct S {
            #[serde(rename = "type", skip_serializing_if = "::std::option::Option::is_none")] pub type_: ::std::option::Option<u8>,
            #[serde(rename = "type_", skip_serializing_if = "::std::option::Option::is_none")] pub type__: ::std::option::Option<u8>,
        }"#;
        let mut file: syn::File = syn::parse_str(source).unwrap();
        // `type_` and `type__` both lose one trailing `_`: `with_type` and `with_type_`; a
        // true collision needs two fields with one stem.
        assert!(apply(&mut file, &serde_json::Map::new(), &BTreeMap::new(), "t.json").is_ok());
        let source = r#"pub struct S {
            #[serde(rename = "loop", skip_serializing_if = "::std::option::Option::is_none")] pub loop_: ::std::option::Option<u8>,
            #[serde(rename = "r#loop", skip_serializing_if = "::std::option::Option::is_none")] pub r#loop: ::std::option::Option<u8>,
        }"#;
        let mut file: syn::File = syn::parse_str(source).unwrap();
        let error = apply(&mut file, &serde_json::Map::new(), &BTreeMap::new(), "t.json").unwrap_err();
        assert!(
            error
                .to_string()
                .contains("struct S: two members make the same setter `with_loop`"),
            "{error}"
        );
        assert!(error.to_string().contains("t.json"), "{error}");
    }
}
