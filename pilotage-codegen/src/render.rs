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
#[non_exhaustive]
pub enum ConstantSource {
    /// The `major.minor` version inside the schema's `$id` (for example `.../schemas/1.1/...`).
    IdVersion,
    /// A JSON Pointer into the schema: a string becomes `&str`, an array of strings `&[&str]`.
    Pointer(String),
}

/// One constant read out of the schema: [`ConstantSpec::new`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ConstantSpec {
    /// The Rust name (`SCREAMING_SNAKE_CASE`).
    pub name: String,
    /// Where its value comes from.
    pub source: ConstantSource,
    /// Its doc comment; the source location is appended.
    pub doc: String,
}

impl ConstantSpec {
    /// The constant `name` (`SCREAMING_SNAKE_CASE`), read from `source`, documented by `doc`.
    pub fn new(name: impl Into<String>, source: ConstantSource, doc: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            source,
            doc: doc.into(),
        }
    }
}

/// What writes a generated file: its header names it, and what to do to write the file again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum GeneratedBy {
    /// [`crate::generate_types`] called by the user's own code.
    #[default]
    Library,
    /// [`crate::Builder`] (in a build script, the next build writes the file again).
    Builder,
    /// The `pilotage codegen` command.
    Cli,
    /// This workspace's `cargo xtask regen` (the Pilotage types and the golden files).
    Regen,
}

impl GeneratedBy {
    /// How the header names the generator.
    pub fn name(self) -> &'static str {
        match self {
            Self::Library => "pilotage_codegen::generate_types",
            Self::Builder => "pilotage_codegen::Builder",
            Self::Cli => "`pilotage codegen`",
            Self::Regen => "`cargo xtask regen`",
        }
    }

    /// What the header says to do instead of editing the file.
    fn again(self) -> &'static str {
        match self {
            Self::Library => "change the schema, then generate the file again",
            Self::Builder => "change the schema; the builder writes it again (in a build script, at the next build)",
            Self::Cli => "change the schema, then run `pilotage codegen` again",
            Self::Regen => "change the schema or pilotage-codegen, then run `cargo xtask regen`",
        }
    }
}

/// Settings of one generated types file: [`TypesSettings::new`], then the `with_*` setters.
/// `#[non_exhaustive]`, so that a new setting is a new setter and breaks no build script.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct TypesSettings {
    /// The schema's path as shown in the header and in errors (workspace-relative).
    pub source_name: String,
    /// Path of a trait with `const DEF: &'static str`, implemented for every `$defs` type.
    pub schema_def_trait: Option<String>,
    /// Constants to read out of the schema.
    pub constants: Vec<ConstantSpec>,
    /// When set, the generated file embeds the schema (`include_str!` of this path, relative
    /// to the generated file) as `SCHEMA_JSON`, and its validators as a module `checks` with
    /// `validators()`: for schemas other than Pilotage's, generated outside `pilotage-types`.
    /// When unset, the validators are a file of their own ([`Rendered::validators`]) at
    /// `crate::validators`, compiled with `pilotage-types`' `validate` feature.
    pub embed_schema: Option<String>,
    /// The name table of this schema ([`crate::names`]), if any.
    pub names: Option<crate::NameTable>,
    /// How the validators are generated: the schema set's other documents (a `$ref` into one
    /// is validated by its schema; its types stay `serde_json::Value`), the default dialect,
    /// format assertion ([`crate::validators::Options`]).
    pub validators: crate::validators::Options,
    /// What writes the file, named in its header ([`GeneratedBy::Library`] unless set).
    pub generated_by: GeneratedBy,
}

impl TypesSettings {
    /// The settings of the file generated from the schema shown as `source_name`: no
    /// `SchemaDef` trait, no constants, validators in a file of their own, no name table,
    /// validators' defaults ([`crate::validators::Options::new`]).
    pub fn new(source_name: impl Into<String>) -> Self {
        Self {
            source_name: source_name.into(),
            ..Self::default()
        }
    }

    /// Implements the trait at `path` (with `const DEF: &'static str`) for every `$defs` type.
    #[must_use]
    pub fn with_schema_def_trait(mut self, path: impl Into<String>) -> Self {
        self.schema_def_trait = Some(path.into());
        self
    }

    /// The constants to read out of the schema (replacing any set before).
    #[must_use]
    pub fn with_constants(mut self, constants: impl IntoIterator<Item = ConstantSpec>) -> Self {
        self.constants = constants.into_iter().collect();
        self
    }

    /// Embeds the schema (`include_str!` of `path`, relative to the generated file) and its
    /// validators in the generated file ([`TypesSettings::embed_schema`]).
    #[must_use]
    pub fn with_embed_schema(mut self, path: impl Into<String>) -> Self {
        self.embed_schema = Some(path.into());
        self
    }

    /// Names the generated types with `table` ([`crate::names`]).
    #[must_use]
    pub fn with_names(mut self, table: crate::NameTable) -> Self {
        self.names = Some(table);
        self
    }

    /// How the validators are generated.
    #[must_use]
    pub fn with_validators(mut self, options: crate::validators::Options) -> Self {
        self.validators = options;
        self
    }

    /// What writes the file, as its header says ([`GeneratedBy`]).
    #[must_use]
    pub fn with_generated_by(mut self, by: GeneratedBy) -> Self {
        self.generated_by = by;
        self
    }
}

/// What the earlier stages did, for the header and the API snapshot: [`Provenance::new`].
#[non_exhaustive]
pub struct Provenance<'a> {
    /// The normalisations applied, with their pointers.
    pub normalised: &'a Report,
    /// The names the table gave: (pointer, name).
    pub named: &'a crate::names::Applied,
    /// The open enums and their values.
    pub open: &'a crate::enums::OpenEnums,
    /// The nullable optional members (pointers), typed `Option<Option<T>>`.
    pub nullable: &'a [String],
    /// Each definition's type name, from typify.
    pub def_types: &'a std::collections::BTreeMap<String, String>,
}

impl<'a> Provenance<'a> {
    /// What the normalisations, the name table, the open enums, the nullable members' post-pass
    /// and typify did.
    pub fn new(
        normalised: &'a Report,
        named: &'a crate::names::Applied,
        open: &'a crate::enums::OpenEnums,
        nullable: &'a [String],
        def_types: &'a std::collections::BTreeMap<String, String>,
    ) -> Self {
        Self {
            normalised,
            named,
            open,
            nullable,
            def_types,
        }
    }
}

/// A rendered types file and the snapshot of its public API.
#[non_exhaustive]
pub struct Rendered {
    /// The complete file.
    pub code: String,
    /// The validators' file, when they are not embedded ([`TypesSettings::embed_schema`]).
    pub validators: Option<String>,
    /// [`crate::api::snapshot`] of it.
    pub api: String,
    /// The references the validators could not resolve in the schema set (each accepts any
    /// value).
    pub unresolved: Vec<String>,
    /// The validators' notes for the generation report ([`crate::validators::Validators::notes`]).
    pub notes: Vec<String>,
}

/// Root keywords that make the document's root a type of its own.
const ROOT_TYPE_KEYWORDS: &[&str] = &["type", "properties", "anyOf", "oneOf", "allOf", "enum", "const"];

/// The document root as one more definition, when it describes a value: named after its
/// `title` (PascalCase), else `Root`. Identification and definitions are left out.
///
/// A root that is a `$ref` to another document (`{"$ref": "https://example.com/config.json"}`,
/// as catalogues write a schema kept elsewhere) is a value too: its type is
/// `serde_json::Value` with a warning, and its validator follows the reference when that
/// document is in the set. A root that is only a `$ref` to one of its own definitions gets no
/// type of its own: that definition's type is the root's type.
pub fn root_type(schema: &Value) -> Option<(String, Value)> {
    let object = schema.as_object()?;
    let external_reference = object
        .get("$ref")
        .and_then(Value::as_str)
        .is_some_and(|reference| !reference.starts_with('#'));
    if !external_reference && !ROOT_TYPE_KEYWORDS.iter().any(|k| object.contains_key(*k)) {
        return None;
    }
    let name = object
        .get("title")
        .and_then(Value::as_str)
        .map(rust_type_name)
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "Root".to_owned());
    let root: serde_json::Map<String, Value> = object
        .iter()
        .filter(|(key, _)| {
            !matches!(
                key.as_str(),
                "$schema" | "$id" | "$defs" | "definitions" | "title" | "$comment"
            )
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Some((name, Value::Object(root)))
}

/// The typify settings every generated file uses.
pub fn typify_settings() -> TypeSpaceSettings {
    let mut settings = TypeSpaceSettings::default();
    settings
        .with_struct_builder(false)
        .with_derive("PartialEq".to_owned())
        .with_map_type("::std::collections::BTreeMap");
    settings
}

/// Lints the generated code may trip and that are not worth patching typify's output for.
/// The variants of `name` when it is a plain `#[serde(untagged)]` enum of typify's output,
/// each with its one unnamed field's type (the union's branch), for `SchemaDef::from_value`:
/// `None` for anything else (a variant with attributes or other fields, generics), which keeps
/// serde's reading.
fn untagged_variants(syntax: &syn::File, name: &str) -> Option<Vec<(syn::Ident, syn::Type)>> {
    let item = syntax.items.iter().find_map(|item| match item {
        syn::Item::Enum(item) if item.ident == name => Some(item),
        _ => None,
    })?;
    if !item.generics.params.is_empty() {
        return None;
    }
    let serde: Vec<String> = item
        .attrs
        .iter()
        .filter(|attr| attr.path().is_ident("serde"))
        .map(|attr| quote::ToTokens::to_token_stream(&attr.meta).to_string())
        .collect();
    if serde != ["serde (untagged)"] {
        return None;
    }
    item.variants
        .iter()
        .map(|variant| {
            let documented_only = variant.attrs.iter().all(|attr| attr.path().is_ident("doc"));
            match &variant.fields {
                syn::Fields::Unnamed(fields) if documented_only && fields.unnamed.len() == 1 => {
                    Some((variant.ident.clone(), fields.unnamed[0].ty.clone()))
                }
                _ => None,
            }
        })
        .collect()
}

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

/// `text` for one line of a `//` comment of the header: line breaks and other control
/// characters (a member name may hold any) written as `\u{..}` escapes.
pub fn comment_safe(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
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

/// typify's name for a `$defs` entry (its `sanitize` with PascalCase): apostrophes dropped,
/// other non-identifier characters made word breaks, heck's PascalCase, an `X` before a
/// leading digit.
pub fn rust_type_name(def: &str) -> String {
    use heck::ToPascalCase;
    let cleaned: String = def
        .replace('\'', "")
        .chars()
        .map(|c| if c.is_alphanumeric() || c == '_' { c } else { '-' })
        .collect();
    let name = cleaned.to_pascal_case();
    match name.chars().next() {
        None => "X".to_owned(),
        Some(c) if c.is_alphabetic() || c == '_' => name,
        Some(_) => format!("X{name}"),
    }
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

/// A generated file of constants only, read out of `schema` (`bytes`, shown as
/// `source_name`): the header, the module doc `doc`, then one `pub const` per spec.
pub fn constants_file(
    schema: &Value,
    bytes: &[u8],
    source_name: &str,
    doc: &str,
    specs: &[ConstantSpec],
) -> Result<String, CodegenError> {
    let items = specs
        .iter()
        .map(|spec| constant_item(spec, schema, source_name))
        .collect::<Result<Vec<_>, _>>()?;
    let file: syn::File = syn::parse2(quote!(#(#items)*))
        .map_err(|e| CodegenError::new(source_name, "", format!("rendered constants do not parse: {e}")))?;
    let mut text = generated_header(source_name, bytes);
    text.push('\n');
    for line in doc.lines() {
        let _ = writeln!(text, "//! {line}");
    }
    text.push('\n');
    Ok(text + &prettyplease::unparse(&file))
}

/// A module of validators only (no types), for a schema that tests the generator itself:
/// the header, `SCHEMA_JSON` (`include_str!` of `embed_path`), `validators()` and the
/// `checks` module.
pub fn validators_module(
    schema: &Value,
    bytes: &[u8],
    source_name: &str,
    embed_path: &str,
) -> Result<String, CodegenError> {
    let generated = crate::validators::generate(schema, source_name, root_type(schema).is_some())?;
    let file: syn::File = syn::parse2(embedded_validators(embed_path, &generated.tokens))
        .map_err(|e| CodegenError::new(source_name, "", format!("generated validators do not parse: {e}")))?;
    Ok(format!(
        "{}\n{}",
        generated_header(source_name, bytes),
        prettyplease::unparse(&file)
    ))
}

/// The first two lines of a file `cargo xtask regen` writes: the command, the schema and its
/// SHA-256 ([`generated_header_by`] with [`GeneratedBy::Regen`]).
pub fn generated_header(source_name: &str, bytes: &[u8]) -> String {
    generated_header_by(GeneratedBy::Regen, source_name, bytes)
}

/// The first two lines of every generated file: what wrote it, the schema and its SHA-256,
/// and what to do instead of editing it.
pub fn generated_header_by(by: GeneratedBy, source_name: &str, bytes: &[u8]) -> String {
    format!(
        "// @generated by {} from {source_name}\n// (sha256 {}); do not edit: {}.\n",
        by.name(),
        sha256_hex(bytes),
        by.again()
    )
}

/// The items that embed a schema's validators in a generated module: `SCHEMA_JSON`
/// (`include_str!` of `embed_path`), `validators()` and the `checks` module holding `tokens`.
fn embedded_validators(embed_path: &str, tokens: &TokenStream) -> TokenStream {
    quote! {
        /// The schema this module was generated from, embedded byte for byte.
        pub const SCHEMA_JSON: &str = include_str!(#embed_path);
        /// The validators generated from [`SCHEMA_JSON`], by definition name.
        pub fn validators() -> ::pilotage_types::validate::Validators {
            checks::VALIDATORS
        }
        /// The validators generated from [`SCHEMA_JSON`] by pilotage-codegen, one
        /// check per definition.
        #[allow(unused_variables, clippy::all, clippy::pedantic)]
        pub mod checks {
            #tokens
        }
    }
}

/// Renders the complete generated file.
pub fn render(
    schema: &Value,
    bytes: &[u8],
    mut syntax: syn::File,
    provenance: &Provenance<'_>,
    settings: &TypesSettings,
) -> Result<Rendered, CodegenError> {
    let report = provenance.normalised;
    let file = settings.source_name.as_str();
    let root = root_type(schema);
    // (definition as the validators name it, Rust type name as typify gave it)
    let mut defs: Vec<(String, String)> = Vec::new();
    let def_keys = ["$defs", "definitions"]
        .iter()
        .filter_map(|key| schema.get(*key).and_then(Value::as_object))
        .flat_map(|d| d.iter())
        .filter(|(_, def)| def.is_object() || def.is_boolean())
        .map(|(name, _)| (name.clone(), name.clone()))
        .chain(root.iter().map(|(name, _)| (".".to_owned(), name.clone())));
    for (def, key) in def_keys {
        let type_name = provenance.def_types.get(&key).ok_or_else(|| {
            CodegenError::new(
                file,
                format!("/$defs/{}", crate::error::escape_pointer_token(&key)),
                "typify made no type of this definition, so it can have no SchemaDef impl",
            )
        })?;
        defs.push((def, type_name.clone()));
    }
    let mut extra = Vec::new();
    for spec in &settings.constants {
        extra.push(constant_item(spec, schema, file)?);
    }
    let def_names = defs.iter().map(|(def, _)| def.as_str());
    extra.push(quote! {
        /// Every definition of the schema that has a type here (`.` is the document's root), in
        /// the order of the schema's sorted keys.
        pub const DEFS: &[&str] = &[#(#def_names),*];
    });
    let generated = crate::validators::generate_with(schema, file, root.is_some(), &settings.validators)?;
    let validators_tokens = &generated.tokens;
    let (checks_path, validators_file) = match &settings.embed_schema {
        Some(path) => {
            extra.push(embedded_validators(path, validators_tokens));
            (quote!(checks), None)
        }
        None => {
            let items: syn::File = syn::parse2(validators_tokens.clone())
                .map_err(|e| CodegenError::new(file, "", format!("generated validators do not parse: {e}")))?;
            let text = format!(
                "{}{}\n//! The validators of every definition of {file}, generated by pilotage-codegen\n//! (`src/validators/`): one check per schema location, for both readings.\n\n{}",
                generated_header_by(settings.generated_by, file, bytes),
                pike_vm_report(&generated.pike_vm) + &stream_report(&generated.stream_opaque),
                prettyplease::unparse(&items)
            );
            (quote!(crate::validators), Some(text))
        }
    };
    if let Some(trait_path) = &settings.schema_def_trait {
        let trait_path: syn::Path = syn::parse_str(trait_path)
            .map_err(|e| CodegenError::new(file, "", format!("schema_def_trait is not a path: {e}")))?;
        for (def, type_name) in &defs {
            let ident = format_ident!("{}", type_name);
            let check = generated
                .checks
                .get(def)
                .ok_or_else(|| CodegenError::new(file, "", format!("no validator was generated for `{def}`")))?;
            // In pilotage-types the validators only exist with its `validate` feature.
            let cfg = settings
                .embed_schema
                .is_none()
                .then(|| quote!(#[cfg(feature = "validate")]));
            let stream = generated.streams.get(def).map(|root| {
                quote! {
                    #cfg
                    const STREAM: ::std::option::Option<::pilotage_types::validate::stream::Stream> =
                        ::std::option::Option::Some(::pilotage_types::validate::stream::Stream::new(#checks_path::STREAM_PROGRAM, #root));
                }
            });
            let from_value = untagged_variants(&syntax, type_name).map(|variants| {
                let (names, types): (Vec<_>, Vec<_>) = variants.into_iter().unzip();
                // Only with a stream program: without one, `parse_slice` never reads the text
                // fused, and the default is never called.
                let read_str = generated.streams.contains_key(def).then(|| {
                    quote! {
                        #cfg
                        #[inline]
                        fn read_str(
                            stream: ::pilotage_types::validate::stream::Stream,
                            compatible: bool,
                            text: &str,
                        ) -> ::std::option::Option<Self> {
                            use ::pilotage_types::validate::stream::{parse_str_as, Reading};
                            // serde's untagged order: the first variant that reads the text. The
                            // verdict is the text's, against this union's definition, whichever
                            // variant reads it.
                            #(
                                match parse_str_as::<#types>(stream, compatible, text) {
                                    Reading::Valid(variant) => return ::std::option::Option::Some(Self::#names(variant)),
                                    Reading::Refused => {}
                                    _ => return ::std::option::Option::None,
                                }
                            )*
                            ::std::option::Option::None
                        }
                    }
                });
                quote! {
                    #read_str
                    fn from_value(value: &::serde_json::Value) -> ::std::result::Result<Self, ::serde_json::Error> {
                        #(
                            if let ::std::result::Result::Ok(variant) = <#types as ::serde::Deserialize>::deserialize(value) {
                                return ::std::result::Result::Ok(Self::#names(variant));
                            }
                        )*
                        // None fits: serde's own reading, for its error.
                        <Self as ::serde::Deserialize>::deserialize(value)
                    }
                }
            });
            extra.push(quote! {
                impl #trait_path for #ident {
                    const DEF: &'static str = #def;
                    #cfg
                    const CHECK: ::pilotage_types::validate::runtime::Check =
                        ::pilotage_types::validate::runtime::Check::new(#checks_path::#check, #checks_path::#check);
                    #stream
                    #from_value
                }
            });
        }
    }
    let extra: syn::File = syn::parse2(quote!(#(#extra)*))
        .map_err(|e| CodegenError::new(file, "", format!("rendered items do not parse: {e}")))?;
    syntax.items.extend(extra.items);
    syntax.attrs.insert(0, allow_attribute());
    crate::postpass::safe_docs(&mut syntax);

    let mut header = generated_header_by(settings.generated_by, file, bytes);
    if !report.is_empty() {
        header.push_str("//\n// Normalisations applied to typify's copy of the schema (pilotage-codegen/src/normalise.rs);\n// the validators read the original schema.\n");
        for (name, pointers) in report {
            let _ = writeln!(header, "// - {name}:");
            for pointer in pointers {
                let _ = writeln!(header, "//     {}", comment_safe(pointer));
            }
        }
    }
    if let (Some(table), false) = (&settings.names, provenance.named.is_empty()) {
        let _ = writeln!(
            header,
            "//\n// Names given by {} (typify reads them as `title`s of its copy):",
            table.file
        );
        for (pointer, name) in provenance.named {
            let _ = writeln!(header, "//   {name}: {}", comment_safe(pointer));
        }
    }
    if !provenance.nullable.is_empty() {
        header.push_str("//\n// Nullable optional members, typed Option<Option<T>> (absent / null / value):\n");
        for pointer in provenance.nullable {
            let _ = writeln!(header, "//   {}", comment_safe(pointer));
        }
    }
    if settings.embed_schema.is_some() {
        header.push_str(&pike_vm_report(&generated.pike_vm));
        header.push_str(&stream_report(&generated.stream_opaque));
    }
    if !provenance.open.is_empty() {
        let names: Vec<&str> = provenance.open.keys().map(String::as_str).collect();
        let _ = writeln!(
            header,
            "//\n// Open enums (#[non_exhaustive], Unknown(String); pilotage-codegen/src/enums.rs):\n//   {}",
            names.join(", ")
        );
    }
    header.push('\n');
    let api = crate::api::snapshot(&syntax, provenance.open);
    Ok(Rendered {
        code: header + &prettyplease::unparse(&syntax),
        validators: validators_file,
        api,
        unresolved: generated.unresolved.clone(),
        notes: generated.notes.clone(),
    })
}

/// The header lines naming each pattern the Pike VM runs (no DFA was compiled for it), and why.
fn pike_vm_report(patterns: &[(String, String, &'static str)]) -> String {
    let mut report = String::new();
    if patterns.is_empty() {
        return report;
    }
    report.push_str(
        "//\n// Patterns run by the Pike VM (pilotage_types::validate::pattern), not a DFA compiled at generation time:\n",
    );
    for (at, source, why) in patterns {
        let _ = writeln!(
            report,
            "//   {}: {}: {why}",
            comment_safe(at),
            comment_safe(&format!("{source:?}"))
        );
    }
    report
}

/// The header lines naming each location the stream program leaves to the checks (so
/// `parse_slice` validates a document reaching it the two-pass way), and the keyword why.
fn stream_report(locations: &[(String, String)]) -> String {
    let mut report = String::new();
    if locations.is_empty() {
        return report;
    }
    report.push_str(
        "//\n// Locations parse_slice leaves to the generated checks (pilotage_types::validate::stream), by the keyword no stream program holds:\n",
    );
    for (at, keyword) in locations {
        let _ = writeln!(report, "//   {}: {}", comment_safe(at), comment_safe(keyword));
    }
    report
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

#[cfg(test)]
mod tests {
    use super::{generated_header, generated_header_by, untagged_variants, GeneratedBy};

    #[test]
    fn the_header_names_what_wrote_the_file() {
        let bytes = b"{}";
        // This workspace's files keep the header they have always had.
        assert_eq!(
            generated_header("schemas/x.json", bytes),
            "// @generated by `cargo xtask regen` from schemas/x.json\n// (sha256 \
             44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a); do not edit: change the schema or \
             pilotage-codegen, then run `cargo xtask regen`.\n"
        );
        for (by, says) in [
            (GeneratedBy::Library, "pilotage_codegen::generate_types"),
            (GeneratedBy::Builder, "pilotage_codegen::Builder"),
            (GeneratedBy::Cli, "`pilotage codegen`"),
        ] {
            let header = generated_header_by(by, "x.json", bytes);
            assert!(
                header.starts_with(&format!("// @generated by {says} from x.json\n")),
                "{header}"
            );
            assert!(!header.contains("xtask"), "{header}");
            assert_eq!(header.lines().count(), 2, "{header}");
        }
    }

    #[test]
    fn only_plain_untagged_unions_read_their_variants_directly() {
        let file: syn::File = syn::parse_quote! {
            #[derive(Deserialize)]
            #[serde(untagged)]
            pub enum Plain { A(A), B(Vec<String>) }
            #[serde(untagged)]
            pub enum Renamed { A(A), #[serde(rename = "b")] B(B) }
            #[serde(tag = "kind")]
            pub enum Tagged { A(A) }
            #[serde(untagged)]
            pub enum Unit { A(A), None }
        };
        let plain = untagged_variants(&file, "Plain").expect("a plain untagged union");
        let names: Vec<String> = plain.iter().map(|(name, _)| name.to_string()).collect();
        assert_eq!(names, ["A", "B"], "in declaration order, as serde tries them");
        for other in ["Renamed", "Tagged", "Unit", "Missing"] {
            assert!(untagged_variants(&file, other).is_none(), "{other}");
        }
    }
}
