//! Forward-compatible string enums (Part II 1.3 via Part III 7.2 and the schema's own
//! description: "every enum in this file is closed for version 1.1 only: later minor versions
//! may add reserved values").
//!
//! typify renders a schema `enum` of strings as a closed Rust enum whose `Deserialize` fails
//! on any other value, so a client built on 1.1 types could not even read a 1.2 document
//! carrying a new request-error kind. Every such enum is rewritten here, on the syntax tree:
//!
//! - `#[non_exhaustive]`, with a last variant `Unknown(String)` that keeps an unrecognised
//!   value exactly as received (so the lossless round trip stays true). When a schema value
//!   is itself spelled `Unknown` in Rust (the value `"unknown"`), the catch-all is the first of
//!   `Unknown_`, `Unknown__`, ... that no value is spelled ([`catch_all_name`]): deterministic,
//!   and the value keeps the name a user expects;
//! - `as_str()`, `is_known()`, `KNOWN` (every value of this version), `From<&str>`,
//!   `From<String>`, an infallible `FromStr`, `Display`, and hand-rolled serde impls (a known
//!   value deserializes without allocating, through `pilotage_types::wire::OpenEnumVisitor`).
//!
//! An enum that only stands for a schema `const` (a binding-fixed value such as
//! `"pilotage_get_guide"`, turned into a one-value enum by
//! [`crate::normalise::string_const_as_enum`]) stays closed: [`ClosedValues`] carries those
//! values from the schema to this stage as data.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use serde_json::Value;
use syn::{Attribute, Fields, Item, ItemEnum};

use crate::walk::walk;

/// The string values that the schema fixes with `const` and never lists in an `enum`: a
/// one-value enum of one of these is a constant, not an open set.
#[derive(Debug, Clone, Default)]
pub struct ClosedValues(BTreeSet<String>);

impl ClosedValues {
    /// Reads `schema` (the original document): every string `const`, less every value that
    /// some `enum` of exactly that one value lists.
    pub fn of_schema(schema: &Value) -> Self {
        let mut constants = BTreeSet::new();
        let mut singletons = BTreeSet::new();
        walk(schema, "", &mut |object, _| {
            if let Some(Value::String(constant)) = object.get("const") {
                constants.insert(constant.clone());
            }
            if let Some(Value::Array(values)) = object.get("enum") {
                if let [Value::String(only)] = values.as_slice() {
                    singletons.insert(only.clone());
                }
            }
        });
        Self(constants.difference(&singletons).cloned().collect())
    }

    fn is_closed(&self, values: &[String]) -> bool {
        matches!(values, [only] if self.0.contains(only))
    }
}

/// A string enum as typify rendered it: its variants and their wire values, in schema order.
struct StringEnum {
    variants: Vec<(syn::Ident, String)>,
}

/// The wire values of `item`, when it is a string enum as typify renders one.
pub(crate) fn wire_values(item: &ItemEnum) -> Option<Vec<String>> {
    string_enum(item).map(|e| e.variants.into_iter().map(|(_, v)| v).collect())
}

/// The wire value of a unit variant: its `#[serde(rename = "...")]`, else its identifier.
fn wire_value(attrs: &[Attribute], ident: &syn::Ident) -> Option<String> {
    let mut value = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                let literal: syn::LitStr = meta.value()?.parse()?;
                value = Some(literal.value());
            } else if meta.input.peek(syn::Token![=]) {
                let _: syn::Expr = meta.value()?.parse()?;
            }
            Ok(())
        })
        .ok()?;
    }
    Some(value.unwrap_or_else(|| ident.to_string()))
}

/// The string enum `item` is, if it is one: every variant a unit variant, serialized as a
/// string (no `#[serde(untagged)]` or other container serde attribute).
fn string_enum(item: &ItemEnum) -> Option<StringEnum> {
    if item.variants.is_empty() || item.attrs.iter().any(|a| a.path().is_ident("serde")) {
        return None;
    }
    let variants = item
        .variants
        .iter()
        .map(|v| match v.fields {
            Fields::Unit => Some((v.ident.clone(), wire_value(&v.attrs, &v.ident)?)),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some(StringEnum { variants })
}

/// Whether `item` is one of typify's impls of a trait that the open enum replaces, for the
/// type named `name`.
fn is_replaced_impl(item: &Item, name: &str) -> bool {
    let Item::Impl(imp) = item else { return false };
    let syn::Type::Path(self_ty) = imp.self_ty.as_ref() else {
        return false;
    };
    if !self_ty.path.is_ident(name) {
        return false;
    }
    let Some((_, trait_path, _)) = &imp.trait_ else {
        return false;
    };
    let last = trait_path.segments.last().map(|s| s.ident.to_string());
    matches!(last.as_deref(), Some("Display" | "FromStr" | "TryFrom"))
}

/// The open enums of a file: name → wire values, in schema order.
pub type OpenEnums = BTreeMap<String, Vec<String>>;

/// Rewrites every open string enum of `file` in place; returns each enum it rewrote with its
/// values, or an error naming an enum that cannot be opened.
pub fn open_string_enums(file: &mut syn::File, closed: &ClosedValues) -> Result<OpenEnums, String> {
    let mut opened = OpenEnums::new();
    for item in &file.items {
        let Item::Enum(item) = item else { continue };
        let Some(strings) = string_enum(item) else { continue };
        let values: Vec<String> = strings.variants.iter().map(|(_, v)| v.clone()).collect();
        if closed.is_closed(&values) {
            continue;
        }
        opened.insert(item.ident.to_string(), values);
    }
    let mut items = Vec::with_capacity(file.items.len());
    for item in std::mem::take(&mut file.items) {
        match &item {
            Item::Enum(e) if opened.contains_key(&e.ident.to_string()) => {
                let strings = string_enum(e).expect("checked above");
                let open: syn::File = syn::parse2(open_enum(e, &strings))
                    .map_err(|error| format!("open enum does not parse: {error}"))?;
                items.extend(open.items);
            }
            _ if opened.keys().any(|name| is_replaced_impl(&item, name)) => {}
            _ => items.push(item),
        }
    }
    file.items = items;
    Ok(opened)
}

/// The name of an open enum's catch-all variant: `Unknown`, or when a schema value is spelled
/// so in Rust, the first of `Unknown_`, `Unknown__`, ... that none is.
pub fn catch_all_name(variants: &[&syn::Ident]) -> syn::Ident {
    let mut name = "Unknown".to_owned();
    while variants.iter().any(|v| *v == name.as_str()) {
        name.push('_');
    }
    format_ident!("{name}", span = Span::call_site())
}

fn open_enum(item: &ItemEnum, strings: &StringEnum) -> TokenStream {
    let name = &item.ident;
    let vis = &item.vis;
    let docs: Vec<&Attribute> = item.attrs.iter().filter(|a| a.path().is_ident("doc")).collect();
    let idents: Vec<&syn::Ident> = strings.variants.iter().map(|(i, _)| i).collect();
    let values: Vec<&str> = strings.variants.iter().map(|(_, v)| v.as_str()).collect();
    // A variant keeps the doc typify gave it (the description of a `const` branch), else
    // its wire value is its doc.
    let variant_docs: Vec<TokenStream> = item
        .variants
        .iter()
        .zip(&values)
        .map(|(variant, value)| {
            let docs: Vec<&Attribute> = variant.attrs.iter().filter(|a| a.path().is_ident("doc")).collect();
            if docs.is_empty() {
                let doc = format!("`{value}`");
                quote!(#[doc = #doc])
            } else {
                quote!(#(#docs)*)
            }
        })
        .collect();
    let unknown = catch_all_name(&idents);
    let open_doc = format!(
        "\n\nOpen for later minor versions of the schema: a value this version does not define \
         deserializes into [`{name}::{unknown}`] and serializes back unchanged; \
         [`{name}::is_known`] tells which it is."
    );
    let is_known_doc =
        format!("Whether this version of the schema defines the value (`false` for [`{name}::{unknown}`]).");
    quote! {
        #(#docs)*
        #[doc = #open_doc]
        #[derive(Clone, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
        #[non_exhaustive]
        #vis enum #name {
            #( #variant_docs #idents, )*
            /// A value this version of the schema does not define, kept exactly as received.
            #unknown(::std::string::String),
        }
        impl #name {
            /// Every value this version of the schema defines, in the schema's order.
            pub const KNOWN: &'static [Self] = &[#(Self::#idents),*];
            /// The value on the wire.
            pub fn as_str(&self) -> &str {
                match self {
                    #( Self::#idents => #values, )*
                    Self::#unknown(value) => value.as_str(),
                }
            }
            #[doc = #is_known_doc]
            pub fn is_known(&self) -> bool {
                !matches!(self, Self::#unknown(_))
            }
        }
        impl ::std::convert::From<&str> for #name {
            fn from(value: &str) -> Self {
                match value {
                    #( #values => Self::#idents, )*
                    other => Self::#unknown(other.to_owned()),
                }
            }
        }
        impl ::std::convert::From<::std::string::String> for #name {
            fn from(value: ::std::string::String) -> Self {
                match value.as_str() {
                    #( #values => Self::#idents, )*
                    _ => Self::#unknown(value),
                }
            }
        }
        impl ::std::str::FromStr for #name {
            type Err = ::std::convert::Infallible;
            fn from_str(value: &str) -> ::std::result::Result<Self, Self::Err> {
                Ok(Self::from(value))
            }
        }
        impl ::std::fmt::Display for #name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
        impl ::serde::Serialize for #name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }
        impl<'de> ::serde::Deserialize<'de> for #name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::std::result::Result<Self, D::Error> {
                deserializer.deserialize_str(::pilotage_types::wire::OpenEnumVisitor::<Self>::new())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rewrite(source: &str, closed: &ClosedValues) -> (String, Vec<String>) {
        let mut file: syn::File = syn::parse_str(source).unwrap();
        let opened = open_string_enums(&mut file, closed).unwrap();
        (quote!(#file).to_string(), opened.into_keys().collect())
    }

    const KIND: &str = r#"
        #[derive(::serde::Deserialize, ::serde::Serialize, Clone, Copy)]
        pub enum Kind { #[serde(rename = "not_found")] NotFound, #[serde(rename = "internal")] Internal }
        impl ::std::fmt::Display for Kind { fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result { Ok(()) } }
        impl ::std::str::FromStr for Kind { type Err = (); fn from_str(v: &str) -> Result<Self, ()> { Err(()) } }
        impl ::std::convert::TryFrom<&str> for Kind { type Error = (); fn try_from(v: &str) -> Result<Self, ()> { Err(()) } }
        pub struct Other;
        impl ::std::fmt::Display for Other { fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result { Ok(()) } }
    "#;

    #[test]
    fn an_enum_of_values_becomes_open_and_loses_typify_impls() {
        let (out, opened) = rewrite(KIND, &ClosedValues::default());
        assert_eq!(opened, ["Kind"]);
        assert!(out.contains("# [non_exhaustive]"), "{out}");
        assert!(out.contains("Unknown (:: std :: string :: String)"), "{out}");
        assert!(out.contains("\"not_found\" => Self :: NotFound"), "{out}");
        assert_eq!(
            out.matches("impl :: std :: str :: FromStr for Kind").count(),
            1,
            "{out}"
        );
        assert!(!out.contains("TryFrom"), "{out}");
        assert!(!out.contains("Copy"), "{out}");
        assert!(
            out.contains("impl :: std :: fmt :: Display for Other"),
            "other impls stay: {out}"
        );
    }

    #[test]
    fn a_constant_stays_closed_unless_an_enum_lists_it() {
        let source = r#"pub enum Guides { #[serde(rename = "pilotage_get_guide")] PilotageGetGuide }"#;
        let closed = ClosedValues::of_schema(&json!({"properties": {"g": {"const": "pilotage_get_guide"}}}));
        let (_, opened) = rewrite(source, &closed);
        assert!(opened.is_empty());
        let listed = ClosedValues::of_schema(&json!({"properties": {
            "g": {"const": "pilotage_get_guide"}, "h": {"enum": ["pilotage_get_guide"]}}}));
        let (_, opened) = rewrite(source, &listed);
        assert_eq!(opened, ["Guides"]);
    }

    #[test]
    fn untagged_and_data_enums_are_left_alone() {
        let source = r#"#[serde(untagged)] pub enum U { A(String), B(u8) } pub enum V { A(String) }"#;
        let (_, opened) = rewrite(source, &ClosedValues::default());
        assert!(opened.is_empty());
    }

    #[test]
    fn a_value_spelled_unknown_moves_the_catch_all_aside() {
        let (out, opened) = rewrite(
            r#"pub enum K { #[serde(rename = "unknown")] Unknown, #[serde(rename = "unknown_")] Unknown_, A }"#,
            &ClosedValues::default(),
        );
        assert_eq!(opened, ["K"]);
        assert!(out.contains("\"unknown\" => Self :: Unknown ,"), "{out}");
        assert!(out.contains("Unknown__ (:: std :: string :: String)"), "{out}");
        assert!(out.contains("_ => Self :: Unknown__ (value)"), "{out}");
        syn::parse_str::<syn::File>(&out).expect("parses");
    }
}
