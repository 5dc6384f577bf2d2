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
//! - **schema integers are integers**: JSON Schema counts `5.0` as an `integer`, serde's `u64`
//!   does not; integer members get a deserializer that accepts integral floats, so `parse`
//!   never rejects what the validator accepts (the value re-serialises as `5`).

use quote::quote;
use syn::visit_mut::VisitMut;
use syn::{parse_quote, Attribute, Field, Fields, Type};

use crate::normalise::NULLABLE_OPTIONAL_MARK;

/// The helper module the rewritten fields refer to, with only the helpers they use (the
/// generated code must compile without warnings, dead code included).
fn wire_module(uses: &Uses) -> syn::Item {
    let present = uses.present.then(|| {
        quote! {
            /// Deserializes a member that is present, even as `null`, to `Some`.
            pub(super) fn present<'de, D, T>(deserializer: D) -> ::std::result::Result<::std::option::Option<T>, D::Error>
            where
                D: ::serde::Deserializer<'de>,
                T: ::serde::Deserialize<'de>,
            {
                <T as ::serde::Deserialize<'de>>::deserialize(deserializer).map(::std::option::Option::Some)
            }
        }
    });
    let integer = (uses.integer || uses.optional_integer).then(|| {
        quote! {
            /// Deserializes a JSON Schema `integer`: any number with a zero fractional part
            /// (`5.0` is an integer to the schema, so the type accepts it too, as `5`).
            pub(super) fn integer<'de, D, T>(deserializer: D) -> ::std::result::Result<T, D::Error>
            where
                D: ::serde::Deserializer<'de>,
                T: ::serde::de::DeserializeOwned,
            {
                let number = <::serde_json::Number as ::serde::Deserialize<'de>>::deserialize(deserializer)?;
                let value = match number.as_f64() {
                    ::std::option::Option::Some(float) if !number.is_i64() && !number.is_u64() && float.fract() == 0.0 && float.abs() < 9.007_199_254_740_992e15 => {
                        if float < 0.0 { ::serde_json::Value::from(float as i64) } else { ::serde_json::Value::from(float as u64) }
                    }
                    _ => ::serde_json::Value::Number(number),
                };
                T::deserialize(value).map_err(<D::Error as ::serde::de::Error>::custom)
            }
        }
    });
    let optional_integer = uses.optional_integer.then(|| {
        quote! {
            /// [`integer`] for an optional member.
            pub(super) fn optional_integer<'de, D, T>(deserializer: D) -> ::std::result::Result<::std::option::Option<T>, D::Error>
            where
                D: ::serde::Deserializer<'de>,
                T: ::serde::de::DeserializeOwned,
            {
                integer(deserializer).map(::std::option::Option::Some)
            }
        }
    });
    parse_quote! {
        /// Serde helpers for members where presence or number form matters (generated).
        mod wire {
            #present
            #integer
            #optional_integer
        }
    }
}

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
    let mut rewriter = Rewriter { uses: Uses::default() };
    rewriter.visit_file_mut(file);
    // typify also copies a member's description onto the type it creates for the member; the
    // mark has done its work on the fields, so it leaves every other doc comment too.
    DocRewriter.visit_file_mut(file);
    if rewriter.uses.present || rewriter.uses.integer || rewriter.uses.optional_integer {
        file.items.push(wire_module(&rewriter.uses));
    }
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

/// Which `wire` helpers the rewritten fields use.
#[derive(Default)]
struct Uses {
    present: bool,
    integer: bool,
    optional_integer: bool,
}

struct Rewriter {
    uses: Uses,
}

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

impl Rewriter {
    fn rewrite_field(&mut self, field: &mut Field) {
        let skip = skip_serializing_if(field);
        let nullable = take_nullable_mark(field);
        let present_attr: Attribute = parse_quote! {
            #[serde(default, deserialize_with = "wire::present", skip_serializing_if = "::std::option::Option::is_none")]
        };
        let renamed = rename_of(field);
        match skip.as_deref() {
            Some("::std::vec::Vec::is_empty" | "::serde_json::Map::is_empty") => {
                let ty = &field.ty;
                field.ty = parse_quote!(::std::option::Option<#ty>);
                set_serde_attr(
                    field,
                    parse_quote! {
                        #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
                    },
                    renamed,
                );
            }
            Some("::std::option::Option::is_none") if nullable => {
                let ty = &field.ty;
                field.ty = parse_quote!(::std::option::Option<#ty>);
                set_serde_attr(field, present_attr, renamed);
                self.uses.present = true;
            }
            Some("::std::option::Option::is_none") if is_option_of_json_value(&field.ty) => {
                set_serde_attr(field, present_attr, renamed);
                self.uses.present = true;
            }
            _ => match integer_field(&field.ty) {
                Some(true) => {
                    set_serde_attr(
                        field,
                        parse_quote!(#[serde(deserialize_with = "wire::integer")]),
                        renamed,
                    );
                    self.uses.integer = true;
                }
                // Only optional members: a required nullable integer keeps typify's attribute.
                Some(false) if skip.as_deref() == Some("::std::option::Option::is_none") => {
                    set_serde_attr(
                        field,
                        parse_quote!(#[serde(default, deserialize_with = "wire::optional_integer", skip_serializing_if = "::std::option::Option::is_none")]),
                        renamed,
                    );
                    self.uses.optional_integer = true;
                }
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
        assert!(out.contains("wire::present"), "{out}");
        assert!(!out.contains(NULLABLE_OPTIONAL_MARK), "{out}");
        assert!(out.contains("mod wire"), "{out}");
    }

    #[test]
    fn untouched_file_gets_no_helper_module() {
        let out = rewrite("pub struct S { pub a: String }");
        assert!(!out.contains("mod wire"), "{out}");
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
        assert!(out.contains("deserialize_with = \"wire::integer\""), "{out}");
        assert!(out.contains("deserialize_with = \"wire::optional_integer\""), "{out}");
    }
}
