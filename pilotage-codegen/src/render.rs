//! Rendering of a generated types file: the header (source, SHA-256, normalisations applied),
//! typify's post-processed items, the constants read out of the schema, the `$defs` list and
//! the per-type trait impls, formatted by prettyplease. Everything here is a pure function of
//! its inputs, so regen is byte-for-byte deterministic.

use std::fmt::Write as _;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_json::Value;
use sha2::{Digest, Sha256};
use typify::TypeSpaceSettings;

use crate::error::CodegenError;
use crate::normalise::Report;

/// Where a generated constant's value comes from.
#[derive(Debug, Clone)]
pub enum ConstantSource {
    /// The `major.minor` version inside the schema's `$id` (for example `.../schemas/1.1/...`).
    IdVersion,
    /// A JSON Pointer into the schema: a string becomes `&str`, an array of strings `&[&str]`.
    Pointer(String),
}

/// One constant read out of the schema.
#[derive(Debug, Clone)]
pub struct ConstantSpec {
    /// The Rust name (`SCREAMING_SNAKE_CASE`).
    pub name: String,
    /// Where its value comes from.
    pub source: ConstantSource,
    /// Its doc comment; the source location is appended.
    pub doc: String,
}

/// Settings of one generated types file.
#[derive(Debug, Clone, Default)]
pub struct TypesSettings {
    /// The schema's path as shown in the header and in errors (workspace-relative).
    pub source_name: String,
    /// Path of a trait with `const DEF: &'static str`, implemented for every `$defs` type.
    pub schema_def_trait: Option<String>,
    /// Constants to read out of the schema.
    pub constants: Vec<ConstantSpec>,
}

/// The typify settings every generated file uses.
pub fn typify_settings() -> TypeSpaceSettings {
    let mut settings = TypeSpaceSettings::default();
    settings
        .with_struct_builder(false)
        .with_derive("PartialEq".to_owned())
        .with_map_type("::serde_json::Map<::std::string::String, ::serde_json::Value>");
    settings
}

/// Lints the generated code may trip and that are not worth patching typify's output for.
fn allow_attribute() -> syn::Attribute {
    syn::parse_quote! {
        #![allow(
            clippy::all,
            clippy::pedantic,
            missing_docs,
            unused_imports,
            irrefutable_let_patterns,
            rustdoc::bare_urls,
            rustdoc::broken_intra_doc_links,
            rustdoc::invalid_html_tags
        )]
    }
}

/// Lowercase hexadecimal SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .fold(String::with_capacity(64), |mut out, b| {
            let _ = write!(out, "{b:02x}");
            out
        })
}

/// typify's name for a `$defs` entry: the PascalCase of its words.
pub fn rust_type_name(def: &str) -> String {
    let mut name = String::new();
    let mut upper = true;
    for c in def.chars() {
        if c.is_ascii_alphanumeric() {
            if upper {
                name.extend(c.to_uppercase());
            } else {
                name.push(c);
            }
            upper = false;
        } else {
            upper = true;
        }
    }
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, '_');
    }
    name
}

fn constant_item(spec: &ConstantSpec, schema: &Value, file: &str) -> Result<TokenStream, CodegenError> {
    let name = format_ident!("{}", spec.name);
    match &spec.source {
        ConstantSource::IdVersion => {
            let id = schema.get("$id").and_then(Value::as_str).unwrap_or_default();
            let version = id
                .split('/')
                .find(|segment| {
                    let mut parts = segment.split('.');
                    matches!((parts.next(), parts.next(), parts.next()), (Some(a), Some(b), None)
                        if !a.is_empty() && !b.is_empty() && a.chars().chain(b.chars()).all(|c| c.is_ascii_digit()))
                })
                .ok_or_else(|| {
                    CodegenError::new(
                        file,
                        "/$id",
                        format!("`$id` \"{id}\" carries no major.minor version segment"),
                    )
                })?;
            let doc = format!("{} Read from the schema's `$id` ({id}).", spec.doc);
            Ok(quote! { #[doc = #doc] pub const #name: &str = #version; })
        }
        ConstantSource::Pointer(pointer) => {
            let value = schema.pointer(pointer).ok_or_else(|| {
                CodegenError::new(
                    file,
                    pointer.clone(),
                    format!("constant {} has no value here", spec.name),
                )
            })?;
            let doc = format!("{} Read from the schema at `{pointer}`.", spec.doc);
            match value {
                Value::String(text) => Ok(quote! { #[doc = #doc] pub const #name: &str = #text; }),
                Value::Array(items) if items.iter().all(Value::is_string) => {
                    let items = items.iter().filter_map(Value::as_str);
                    Ok(quote! { #[doc = #doc] pub const #name: &[&str] = &[#(#items),*]; })
                }
                _ => Err(CodegenError::new(
                    file,
                    pointer.clone(),
                    format!("constant {} must be a string or an array of strings", spec.name),
                )),
            }
        }
    }
}

/// Renders the complete generated file.
pub fn render(
    schema: &Value,
    bytes: &[u8],
    mut syntax: syn::File,
    report: &Report,
    settings: &TypesSettings,
    warnings: &mut Vec<String>,
) -> Result<String, CodegenError> {
    let file = settings.source_name.as_str();
    let defs: Vec<&String> = schema
        .get("$defs")
        .and_then(Value::as_object)
        .map(|d| d.keys().collect())
        .unwrap_or_default();
    let declared: std::collections::BTreeSet<String> = syntax
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Struct(s) => Some(s.ident.to_string()),
            syn::Item::Enum(e) => Some(e.ident.to_string()),
            _ => None,
        })
        .collect();

    let mut extra = Vec::new();
    for spec in &settings.constants {
        extra.push(constant_item(spec, schema, file)?);
    }
    let def_names = defs.iter().map(|d| d.as_str());
    extra.push(quote! {
        /// The name of every `$defs` entry of the schema, in the schema's order of keys (sorted).
        pub const DEFS: &[&str] = &[#(#def_names),*];
    });
    if let Some(trait_path) = &settings.schema_def_trait {
        let trait_path: syn::Path = syn::parse_str(trait_path)
            .map_err(|e| CodegenError::new(file, "", format!("schema_def_trait is not a path: {e}")))?;
        for def in &defs {
            let type_name = rust_type_name(def);
            if !declared.contains(&type_name) {
                warnings.push(format!(
                    "{file}: $defs/{def}: no generated type named {type_name}; no {} impl",
                    quote!(#trait_path)
                ));
                continue;
            }
            let ident = format_ident!("{}", type_name);
            extra.push(quote! {
                impl #trait_path for #ident {
                    const DEF: &'static str = #def;
                }
            });
        }
    }
    let extra: syn::File = syn::parse2(quote!(#(#extra)*))
        .map_err(|e| CodegenError::new(file, "", format!("rendered items do not parse: {e}")))?;
    syntax.items.extend(extra.items);
    syntax.attrs.insert(0, allow_attribute());

    let mut header = format!(
        "// @generated by `cargo xtask regen` from {file}\n// (sha256 {}); do not edit: change the schema or pilotage-codegen, then run `cargo xtask regen`.\n",
        sha256_hex(bytes)
    );
    if !report.is_empty() {
        header.push_str("//\n// Normalisations applied to typify's copy of the schema (pilotage-codegen/src/normalise.rs);\n// the validators read the original schema.\n");
        for (name, pointers) in report {
            let _ = writeln!(header, "// - {name}:");
            for pointer in pointers {
                let _ = writeln!(header, "//     {pointer}");
            }
        }
    }
    header.push('\n');
    Ok(header + &prettyplease::unparse(&syntax))
}

/// Pretty JSON with object keys sorted at every depth and a final newline, whatever
/// `serde_json` features the build unifies (`preserve_order` would otherwise change the
/// order of keys, and so the bytes, between builds).
pub fn canonical_json(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(members) => {
                let mut keys: Vec<&String> = members.keys().collect();
                keys.sort();
                Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&members[k]))).collect())
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    let mut text = serde_json::to_string_pretty(&sorted(value)).expect("a Value always serialises");
    text.push('\n');
    text
}
