//! Construction without literals: every generated struct, and every struct-like variant of a
//! generated enum, is `#[non_exhaustive]` and built through generated functions, so that a
//! minor version of the schema that adds an optional member adds a method and breaks no code
//! that builds values.
//!
//! For a struct `T` (every object `$defs` entry and nested object type):
//! - `T::new(..)` takes exactly the **required** members, in the order of the schema's
//!   `required` array (then, for members a `required` array does not name in this order, the
//!   order of the fields), each as `impl Into<Member>` (a required nullable member as
//!   `Option<Member>`);
//! - one chaining setter per optional member, `with_<member>(self, value) -> Self`, the member
//!   in snake case as its field is (a keyword's trailing `_` dropped: `loop_` → `with_loop`);
//!   a nullable optional member (`Option<Option<M>>`) takes `Option<M>`, `None` meaning a
//!   present `null`;
//! - `Default` (as `new()`) where every member is optional;
//! - unknown members (the flattened `extra` map) start empty; the field stays public.
//!
//! For an enum variant with named fields, `T::<variant in snake case>(..)` takes the variant's
//! required members in the same way, its optional members starting absent.
//!
//! Which members are required is read off the field as typify and the post-pass wrote it (a
//! member serde may omit carries `#[serde(default ..)]`): [`presence`], shared with the API
//! snapshot ([`crate::api`]). The order comes from the (normalised) schema: [`required_orders`]
//! follows each definition's type through its members, items and map values, and matches the
//! structs it cannot reach by their member names.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::TokenStream;
use quote::{format_ident, quote, ToTokens};
use serde_json::Value;
use syn::{Field, Fields, Item};

use crate::error::CodegenError;
use crate::postpass::{named_type, option_inner, wire_name, SerdeField};

/// How a field of a generated struct takes part in construction.
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// The field initialisers and arguments of a constructor over `fields` (all named fields of a
/// struct or variant), with the required ones in `order`.
fn constructor_parts(
    all: &[&Field],
    members: &[(String, &Field)],
    order: Option<&Vec<String>>,
) -> (Vec<TokenStream>, Vec<TokenStream>) {
    let required = ordered_required(members, order);
    let arguments = required.iter().map(|f| argument(f)).collect();
    let initialisers = all
        .iter()
        .map(|field| {
            let ident = field.ident.as_ref().expect("named field");
            let value = if required.iter().any(|r| std::ptr::eq(*r, *field)) {
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
    let (arguments, initialisers) = constructor_parts(&all, &members, order);
    let required = ordered_required(&members, order);
    let new_doc = format!(
        "A `{name}` with its required members ({}), in the order of the schema's `required`; every optional member absent (or at its schema default) and no unknown members. Optional members are set with the `with_*` methods.",
        code_list(&required)
    );
    let mut methods = vec![quote! {
        #[doc = #new_doc]
        pub fn new(#(#arguments),*) -> Self {
            Self { #(#initialisers),* }
        }
    }];
    let mut seen = BTreeSet::new();
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
        let (arguments, initialisers) = constructor_parts(&all, &members, order.as_ref());
        let required = ordered_required(&members, order.as_ref());
        let variant_ident = &variant.ident;
        let method = format_ident!("{}", snake_case(variant_ident));
        if !seen.insert(method.to_string()) || method == "new" {
            return Err(format!(
                "enum {name}: variant {variant_ident} makes a constructor name already taken (`{method}`)"
            ));
        }
        let doc = format!(
            "A [`{name}::{variant_ident}`] with its required members ({}); every optional member absent and no unknown members.",
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
    Ok(())
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
