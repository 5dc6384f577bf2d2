//! Post-pass over typify's tokens: the rewrites that make every generated struct round-trip
//! losslessly (`from_value` then `to_value` gives back an equal value for every instance the
//! schema accepts). typify 0.8 has no settings for these, and its output must never be edited
//! by hand, so they are applied here to the syntax tree, after typify and before rendering.
//!
//! - **present empty collections survive**: an optional array or object member is
//!   `#[serde(default, skip_serializing_if = "Vec::is_empty")] Vec<T>` in typify, so a present
//!   `[]` or `{}` disappears; it becomes `Option<Vec<T>>` / `Option<Map<..>>`.
//! - **present `null` survives**: an optional member of type `{}` is `Option<Value>` in typify,
//!   where a present `null` reads as `None`; it gets a deserializer that keeps `Some(Null)`.
//!   An optional member marked by [`crate::normalise::mark_nullable_optional_members`] becomes
//!   `Option<Option<T>>` with the same deserializer, and the mark leaves its doc comment.
//!
//! The deserializers live in `pilotage_types::wire`: one implementation for every generated
//! module.
//! - **schema integers are integers**: JSON Schema counts `5.0` as an `integer`, serde's `u64`
//!   does not; integer members get a deserializer that accepts integral floats, so `parse`
//!   never rejects what the validator accepts (the value re-serialises as `5`).

use quote::quote;
use syn::visit_mut::VisitMut;
use syn::{parse_quote, Attribute, Field, Fields, Type};

use crate::normalise::NULLABLE_OPTIONAL_MARK;

/// Integer types typify emits for `"type": "integer"`.
const INTEGER_TYPES: &[&str] = &[
    "u8",
    "u16",
    "u32",
    "u64",
    "i8",
    "i16",
    "i32",
    "i64",
    "::std::num::NonZeroU8",
    "::std::num::NonZeroU16",
    "::std::num::NonZeroU32",
    "::std::num::NonZeroU64",
];

/// `Some(true)` for an integer, `Some(false)` for an `Option` of one, `None` otherwise.
fn integer_field(ty: &Type) -> Option<bool> {
    let rendered = quote!(#ty).to_string().replace(' ', "");
    if INTEGER_TYPES.contains(&rendered.as_str()) {
        return Some(true);
    }
    let inner = rendered.strip_prefix("::std::option::Option<")?.strip_suffix('>')?;
    INTEGER_TYPES.contains(&inner).then_some(false)
}

/// Applies every rewrite to `file` in place.
pub fn apply(file: &mut syn::File) {
    shared_conversion_error(file);
    Rewriter.visit_file_mut(file);
    // typify also copies a member's description onto the type it creates for the member; the
    // mark has done its work on the fields, so it leaves every other doc comment too.
    DocRewriter.visit_file_mut(file);
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

/// Rewrites every doc comment left: removes [`NULLABLE_OPTIONAL_MARK`], and marks code
/// blocks quoted from schema descriptions as `text`, so rustdoc does not compile and run
/// another project's examples as this crate's doctests.
struct DocRewriter;

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
        let mut cleaned = fence_code_as_text(&value);
        if cleaned.contains(NULLABLE_OPTIONAL_MARK) {
            cleaned = cleaned.replace(NULLABLE_OPTIONAL_MARK, "").trim_end().to_owned();
        }
        if cleaned != value {
            name_value.value = parse_quote!(#cleaned);
        }
    }
}

/// The serde helpers of `pilotage_types::wire` the rewritten fields use.
const PRESENT: &str = "::pilotage_types::wire::present";
const INTEGER: &str = "::pilotage_types::wire::integer";
const OPTIONAL_INTEGER: &str = "::pilotage_types::wire::optional_integer";

struct Rewriter;

impl VisitMut for Rewriter {
    fn visit_item_struct_mut(&mut self, item: &mut syn::ItemStruct) {
        if let Fields::Named(fields) = &mut item.fields {
            for field in fields.named.iter_mut() {
                self.rewrite_field(field);
            }
        }
    }
}

/// The string value of `skip_serializing_if = "..."` in the field's `#[serde]` attribute.
fn skip_serializing_if(field: &Field) -> Option<String> {
    serde_attr(field).and_then(|attr| {
        let tokens = attr.meta.require_list().ok()?.tokens.to_string();
        let start = tokens.find("skip_serializing_if = \"")? + "skip_serializing_if = \"".len();
        let end = tokens[start..].find('"')? + start;
        Some(tokens[start..end].to_owned())
    })
}

fn serde_attr(field: &Field) -> Option<&Attribute> {
    field.attrs.iter().find(|a| a.path().is_ident("serde"))
}

fn is_option_of_json_value(ty: &Type) -> bool {
    let rendered = quote!(#ty).to_string().replace(' ', "");
    rendered == "::std::option::Option<::serde_json::Value>"
}

/// Removes the nullable mark from the field's doc comment; returns whether it was there.
fn take_nullable_mark(field: &mut Field) -> bool {
    let mut found = false;
    field.attrs.retain_mut(|attr| {
        if !attr.path().is_ident("doc") {
            return true;
        }
        let syn::Meta::NameValue(name_value) = &mut attr.meta else {
            return true;
        };
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(text),
            ..
        }) = &name_value.value
        else {
            return true;
        };
        let value = text.value();
        if !value.contains(NULLABLE_OPTIONAL_MARK) {
            return true;
        }
        found = true;
        let cleaned = value.replace(NULLABLE_OPTIONAL_MARK, "").trim_end().to_owned();
        if cleaned.is_empty() {
            return false;
        }
        name_value.value = parse_quote!(#cleaned);
        true
    });
    found
}

/// `#[serde(...)]` with the given options, as an attribute.
fn serde(options: proc_macro2::TokenStream) -> Attribute {
    parse_quote!(#[serde(#options)])
}

impl Rewriter {
    fn rewrite_field(&mut self, field: &mut Field) {
        let skip = skip_serializing_if(field);
        let nullable = take_nullable_mark(field);
        let renamed = rename_of(field);
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

/// The `rename = "..."` of the field's `#[serde]` attribute, kept across rewrites.
fn rename_of(field: &Field) -> Option<String> {
    let tokens = serde_attr(field)?.meta.require_list().ok()?.tokens.to_string();
    let start = tokens.find("rename = \"")? + "rename = \"".len();
    let end = tokens[start..].find('"')? + start;
    Some(tokens[start..end].to_owned())
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

    fn rewrite(source: &str) -> String {
        let mut file: syn::File = syn::parse_str(source).unwrap();
        apply(&mut file);
        quote!(#file).to_string()
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
    fn marked_nullable_member_becomes_double_option_and_loses_the_mark() {
        let source = format!(
            r#"pub struct S {{
                #[doc = "Out. {NULLABLE_OPTIONAL_MARK}"]
                #[serde(skip_serializing_if = "::std::option::Option::is_none")]
                pub out: ::std::option::Option<u8>,
            }}"#
        );
        let out = rewrite(&source);
        assert!(out.contains("Option < :: std :: option :: Option < u8 > >"), "{out}");
        assert!(out.contains("::pilotage_types::wire::present"), "{out}");
        assert!(!out.contains(NULLABLE_OPTIONAL_MARK), "{out}");
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
