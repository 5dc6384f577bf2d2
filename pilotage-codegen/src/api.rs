//! The public API of a generated types file, as a snapshot, and the difference between two
//! snapshots, classed as additive or breaking for downstream code.
//!
//! `cargo xtask regen` keeps the snapshot of the Pilotage types checked in beside them
//! (drift-checked like every generated file) and prints [`diff`] whenever it changes, so a
//! spec bump says what it changed in the API without reading the generated diff.
//!
//! A snapshot is text, one item a line, each line `<kind> <path>[: <detail>]`:
//!
//! ```text
//! type CatalogChange: struct
//! member CatalogChange.change: required CatalogChangeKind
//! type CatalogChangeKind: open enum
//! value CatalogChangeKind "added"
//! type ProgramDeclaration: enum
//! variant ProgramDeclaration::Single: { argument: String, language: LanguageIdentifier }
//! constructor CatalogChange::new: (change: impl Into<CatalogChangeKind>, id: impl Into<String>)
//! setter Diagnostic::with_hint: (value: impl Into<String>)
//! const PILOTAGE_VERSION: "1.1"
//! conversion DiagnosticPath from &str
//! ```
//!
//! The part before `: ` identifies the item; the detail is what may change about it.

use std::collections::{BTreeMap, BTreeSet};

use quote::ToTokens;
use syn::{Fields, Item};

use crate::constructors::Presence;
use crate::postpass::option_inner;

/// The snapshot of the public items of `file` (the final generated syntax tree).
/// `open` maps each open enum (as rewritten by [`crate::enums`]) to its values.
pub fn snapshot(file: &syn::File, open: &BTreeMap<String, Vec<String>>) -> String {
    let types: BTreeSet<String> = file
        .items
        .iter()
        .filter_map(|item| match item {
            Item::Struct(item) if is_public(&item.vis) => Some(item.ident.to_string()),
            Item::Enum(item) if is_public(&item.vis) => Some(item.ident.to_string()),
            _ => None,
        })
        .collect();
    let mut lines = Vec::new();
    for item in &file.items {
        match item {
            Item::Struct(item) if is_public(&item.vis) => struct_lines(item, &mut lines),
            Item::Enum(item) if is_public(&item.vis) => enum_lines(item, open, &mut lines),
            Item::Const(item) if is_public(&item.vis) => const_lines(item, &mut lines),
            Item::Impl(item) if item.trait_.is_some() => conversion_lines(item, &types, open, &mut lines),
            Item::Impl(item) => impl_lines(item, open, &mut lines),
            _ => {}
        }
    }
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

/// The public functions of an inherent impl of a struct or of an enum that is not an open
/// enum (whose methods are the same for every one): the constructors ([`crate::constructors`])
/// and setters, with their arguments as written, so that a bump that changes what `new`
/// takes says so.
fn impl_lines(item: &syn::ItemImpl, open: &BTreeMap<String, Vec<String>>, lines: &mut Vec<String>) {
    if item.trait_.is_some() {
        return;
    }
    let syn::Type::Path(path) = item.self_ty.as_ref() else {
        return;
    };
    let Some(ty) = path.path.get_ident().map(ToString::to_string) else {
        return;
    };
    if open.contains_key(&ty) {
        return;
    }
    for function in &item.items {
        let syn::ImplItem::Fn(function) = function else {
            continue;
        };
        if !is_public(&function.vis) {
            continue;
        }
        let signature = &function.sig;
        let kind = if signature.receiver().is_some() {
            "setter"
        } else {
            "constructor"
        };
        let arguments: Vec<String> = signature
            .inputs
            .iter()
            .filter_map(|input| match input {
                syn::FnArg::Typed(typed) => Some(format!("{}: {}", compact(&typed.pat), compact(&typed.ty))),
                syn::FnArg::Receiver(_) => None,
            })
            .collect();
        lines.push(format!("{kind} {ty}::{}: ({})", signature.ident, arguments.join(", ")));
    }
}

/// A `From` impl into a type of the file that is not an open enum (whose conversions are the
/// same for every one): `conversion T from S`, so that code writing `"x".into()` where a `T`
/// is wanted is known to rely on it (a union's conversions: [`crate::constructors::union_conversions`]).
fn conversion_lines(
    item: &syn::ItemImpl,
    types: &BTreeSet<String>,
    open: &BTreeMap<String, Vec<String>>,
    lines: &mut Vec<String>,
) {
    let Some((_, path, _)) = &item.trait_ else { return };
    let Some(last) = path.segments.last() else { return };
    if last.ident != "From" {
        return;
    }
    let syn::PathArguments::AngleBracketed(arguments) = &last.arguments else {
        return;
    };
    let Some(syn::GenericArgument::Type(source)) = arguments.args.first() else {
        return;
    };
    let syn::Type::Path(target) = item.self_ty.as_ref() else {
        return;
    };
    let Some(target) = target.path.get_ident().map(ToString::to_string) else {
        return;
    };
    if types.contains(&target) && !open.contains_key(&target) {
        lines.push(format!("conversion {target} from {}", compact(source)));
    }
}

/// A constant: its value, or for a list of strings one `element` line per string (so that a
/// bump that adds a request-error kind says so, rather than printing both lists).
fn const_lines(item: &syn::ItemConst, lines: &mut Vec<String>) {
    let name = &item.ident;
    let elements = match item.expr.as_ref() {
        syn::Expr::Reference(reference) => match reference.expr.as_ref() {
            syn::Expr::Array(array) => array
                .elems
                .iter()
                .map(|e| match e {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(s), ..
                    }) => Some(s.value()),
                    _ => None,
                })
                .collect::<Option<Vec<String>>>(),
            _ => None,
        },
        _ => None,
    };
    match elements {
        Some(elements) => {
            lines.push(format!("const {name}: list"));
            for element in elements {
                lines.push(format!("element {name} {element:?}"));
            }
        }
        None => lines.push(format!("const {name}: {}", compact(&item.expr))),
    }
}

fn is_public(vis: &syn::Visibility) -> bool {
    matches!(vis, syn::Visibility::Public(_))
}

/// Tokens as compact text, with the standard library's and serde_json's paths shortened.
fn compact(tokens: &impl ToTokens) -> String {
    let mut text = tokens
        .to_token_stream()
        .to_string()
        .replace(' ', "")
        .replace("impl::std::convert::Into<", "impl Into<")
        .replace("impl::std::iter::IntoIterator<", "impl IntoIterator<");
    for prefix in [
        "::std::string::",
        "::std::vec::",
        "::std::option::",
        "::std::collections::",
        "::std::num::",
        "::serde_json::",
    ] {
        text = text.replace(prefix, "");
    }
    text.replace(',', ", ")
}

fn struct_lines(item: &syn::ItemStruct, lines: &mut Vec<String>) {
    let name = &item.ident;
    match &item.fields {
        Fields::Named(fields) => {
            lines.push(format!("type {name}: struct"));
            member_lines(&name.to_string(), fields, lines);
        }
        Fields::Unnamed(fields) => {
            let inner: Vec<String> = fields.unnamed.iter().map(|f| compact(&f.ty)).collect();
            lines.push(format!("type {name}: newtype {}", inner.join(", ")));
        }
        Fields::Unit => lines.push(format!("type {name}: unit struct")),
    }
}

/// One `member <owner>.<field>` line per field, with its presence
/// ([`crate::constructors::presence`]) and type.
fn member_lines(owner: &str, fields: &syn::FieldsNamed, lines: &mut Vec<String>) {
    for field in &fields.named {
        let Some(ident) = &field.ident else { continue };
        let detail = match crate::constructors::presence(field) {
            Presence::Flattened => format!("flattened {}", compact(&field.ty)),
            Presence::Optional(_) => match option_inner(&field.ty) {
                Some(inner) => format!("optional {}", compact(inner)),
                None => format!("optional {}", compact(&field.ty)),
            },
            Presence::Required => format!("required {}", compact(&field.ty)),
        };
        lines.push(format!("member {owner}.{ident}: {detail}"));
    }
}

fn enum_lines(item: &syn::ItemEnum, open: &BTreeMap<String, Vec<String>>, lines: &mut Vec<String>) {
    let name = &item.ident;
    match (open.get(&name.to_string()), crate::enums::wire_values(item)) {
        (Some(values), _) => {
            lines.push(format!("type {name}: open enum"));
            for value in values {
                lines.push(format!("value {name} {value:?}"));
            }
        }
        (None, Some(values)) => {
            lines.push(format!("type {name}: closed enum"));
            for value in values {
                lines.push(format!("value {name} {value:?}"));
            }
        }
        (None, None) => {
            lines.push(format!("type {name}: enum"));
            for variant in &item.variants {
                let detail = match &variant.fields {
                    Fields::Unit => "unit".to_owned(),
                    Fields::Unnamed(fields) => {
                        let types: Vec<String> = fields.unnamed.iter().map(|f| compact(&f.ty)).collect();
                        format!("({})", types.join(", "))
                    }
                    Fields::Named(_) => "struct".to_owned(),
                };
                lines.push(format!("variant {name}::{}: {detail}", variant.ident));
                // A struct-like variant is `#[non_exhaustive]` (crate::constructors): its
                // members are listed one by one, as a struct's are.
                if let Fields::Named(fields) = &variant.fields {
                    let owner = format!("{name}::{}", variant.ident);
                    member_lines(&owner, fields, lines);
                }
            }
        }
    }
}

/// Whether a change can break code written against the old API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Impact {
    /// Code written against the old API keeps compiling and meaning the same.
    Additive,
    /// Code written against the old API may stop compiling, or documents it read may stop
    /// parsing.
    Breaking,
}

/// One change between two snapshots.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApiChange {
    /// Additive or breaking.
    pub impact: Impact,
    /// What changed, one line, naming the item.
    pub description: String,
}

impl ApiChange {
    /// A change of `impact`, described in one line naming the item.
    pub fn new(impact: Impact, description: impl Into<String>) -> Self {
        Self {
            impact,
            description: description.into(),
        }
    }
}

impl std::fmt::Display for ApiChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let impact = match self.impact {
            Impact::Additive => "additive",
            Impact::Breaking => "breaking",
        };
        write!(f, "{impact:<9}{}", self.description)
    }
}

/// A snapshot, parsed: identity → detail, and the type each item belongs to.
struct Parsed<'a> {
    items: BTreeMap<&'a str, &'a str>,
}

impl<'a> Parsed<'a> {
    fn new(text: &'a str) -> Self {
        let items = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|line| line.split_once(": ").unwrap_or((line, "")))
            .collect();
        Self { items }
    }

    /// The types that are open enums.
    fn open_enums(&self) -> BTreeSet<&'a str> {
        self.items
            .iter()
            .filter(|(_, detail)| **detail == "open enum")
            .filter_map(|(key, _)| key.strip_prefix("type "))
            .collect()
    }
}

/// The type an item belongs to (`member T.m`, `member T::V.m`, `value T "v"`, `variant T::V`
/// → `T`).
fn owner(key: &str) -> Option<&str> {
    let (kind, path) = key.split_once(' ')?;
    match kind {
        "member" => path
            .split_once('.')
            .map(|(t, _)| t.split_once("::").map_or(t, |(t, _)| t)),
        "value" => path.split_once(' ').map(|(t, _)| t),
        "variant" => path.split_once("::").map(|(t, _)| t),
        "element" | "conversion" => path.split_once(' ').map(|(t, _)| t),
        "constructor" | "setter" => path.split_once("::").map(|(t, _)| t),
        _ => None,
    }
}

/// The changes from snapshot `old` to snapshot `new`, breaking first, each group in the
/// snapshots' order. Items of a type that was added or removed as a whole are not listed
/// one by one; the type's line counts them.
pub fn diff(old: &str, new: &str) -> Vec<ApiChange> {
    let (old, new) = (Parsed::new(old), Parsed::new(new));
    let open = new.open_enums();
    let added_types: BTreeSet<&str> = new
        .items
        .keys()
        .filter_map(|k| k.strip_prefix("type "))
        .filter(|t| !old.items.contains_key(format!("type {t}").as_str()))
        .collect();
    let removed_types: BTreeSet<&str> = old
        .items
        .keys()
        .filter_map(|k| k.strip_prefix("type "))
        .filter(|t| !new.items.contains_key(format!("type {t}").as_str()))
        .collect();
    let members = |parsed: &Parsed, ty: &str| parsed.items.keys().filter(|k| owner(k) == Some(ty)).count();
    let mut changes = Vec::new();
    let mut push = |impact, description: String| changes.push(ApiChange { impact, description });
    for (key, detail) in &new.items {
        let owner_type = owner(key);
        if owner_type.is_some_and(|t| added_types.contains(t)) {
            continue;
        }
        match old.items.get(key) {
            None => {
                let (kind, path) = key.split_once(' ').unwrap_or((key, ""));
                match kind {
                    "type" => push(
                        Impact::Additive,
                        format!("new type {path} ({detail}, {} items)", members(&new, path)),
                    ),
                    "member" if detail.starts_with("required") => push(
                        Impact::Breaking,
                        format!("new required member {path}: {}", detail.trim_start_matches("required ")),
                    ),
                    "member" => {
                        let (presence, ty) = detail.split_once(' ').unwrap_or((detail, ""));
                        push(Impact::Additive, format!("new {presence} member {path}: {ty}"))
                    }
                    "value" if owner_type.is_some_and(|t| open.contains(t)) => {
                        push(Impact::Additive, format!("new value {path} of open enum"))
                    }
                    "value" => push(Impact::Breaking, format!("new value {path} of closed enum")),
                    "variant" => push(
                        Impact::Breaking,
                        format!("new variant {path}: {detail} of exhaustive enum"),
                    ),
                    "element" => push(Impact::Additive, format!("new element {path} of constant list")),
                    "constructor" => push(Impact::Additive, format!("new constructor {path}{detail}")),
                    "setter" => push(Impact::Additive, format!("new setter {path}{detail}")),
                    "conversion" => push(Impact::Additive, format!("new conversion {path}")),
                    _ => push(Impact::Additive, format!("new {key}: {detail}")),
                }
            }
            Some(before) if before != detail => {
                let (kind, path) = key.split_once(' ').unwrap_or((key, ""));
                let impact = if kind == "const" {
                    Impact::Additive
                } else {
                    Impact::Breaking
                };
                let what = match kind {
                    "member" if before.starts_with("optional") && detail.starts_with("required") => {
                        format!("member {path} became required")
                    }
                    "const" => format!("constant {path} changed value"),
                    "constructor" => format!("constructor {path} takes other arguments"),
                    "setter" => format!("setter {path} takes another argument"),
                    _ => format!("{kind} {path} changed"),
                };
                push(impact, format!("{what}: {before} -> {detail}"));
            }
            Some(_) => {}
        }
    }
    for (key, detail) in &old.items {
        if new.items.contains_key(key) || owner(key).is_some_and(|t| removed_types.contains(t)) {
            continue;
        }
        let (kind, path) = key.split_once(' ').unwrap_or((key, ""));
        let what = match kind {
            "type" => format!("removed type {path} ({detail}, {} items)", members(&old, path)),
            _ => format!("removed {kind} {path}"),
        };
        push(Impact::Breaking, what);
    }
    changes.sort_by_key(|c| std::cmp::Reverse(c.impact));
    changes
}

/// The closing line of a report: how many changes, how many of each impact.
pub fn summary(changes: &[ApiChange]) -> String {
    let breaking = changes.iter().filter(|c| c.impact == Impact::Breaking).count();
    let additive = changes.len() - breaking;
    let verdict = if breaking > 0 {
        "breaking for downstream code"
    } else {
        "additive only"
    };
    format!(
        "{} API change(s) of the generated types: {additive} additive, {breaking} breaking ({verdict})",
        changes.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(source: &str) -> String {
        let mut file: syn::File = syn::parse_str(source).unwrap();
        let open = crate::enums::open_string_enums(&mut file, &crate::enums::ClosedValues::default()).unwrap();
        snapshot(&file, &open)
    }

    const V1: &str = r#"
        pub struct Diagnostic { pub code: ::std::string::String, #[serde(flatten)] pub extra: ::serde_json::Map<String, Value> }
        pub enum Severity { #[serde(rename = "error")] Error, #[serde(rename = "warning")] Warning }
        #[serde(untagged)] pub enum Path { Text(::std::string::String), Range(Range) }
        impl ::std::convert::From<Range> for Path { fn from(value: Range) -> Self { Self::Range(value) } }
        impl ::std::convert::From<Diagnostic> for ::std::string::String { fn from(value: Diagnostic) -> Self { value.code } }
        pub struct Gone { pub a: u8 }
        pub const VERSION: &str = "1.1";
        pub const KINDS: &[&str] = &["a", "b"];
    "#;

    #[test]
    fn snapshot_lists_every_item() {
        let text = snap(V1);
        for line in [
            "type Diagnostic: struct",
            "member Diagnostic.code: required String",
            "member Diagnostic.extra: flattened Map<String, Value>",
            "type Severity: open enum",
            "value Severity \"error\"",
            "type Path: enum",
            "variant Path::Text: (String)",
            "conversion Path from Range",
            "const VERSION: \"1.1\"",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} missing from\n{text}");
        }
        // Conversions into other types, and an open enum's (the same for every one), are not
        // listed.
        assert!(
            !text.contains("conversion String") && !text.contains("conversion Severity"),
            "{text}"
        );
    }

    #[test]
    fn additive_and_breaking_changes_are_told_apart() {
        let v2 = r#"
            pub struct Diagnostic { pub code: ::std::string::String, pub source: ::std::option::Option<::std::string::String>, pub line: u64, #[serde(flatten)] pub extra: ::serde_json::Map<String, Value> }
            pub enum Severity { #[serde(rename = "error")] Error, #[serde(rename = "warning")] Warning, #[serde(rename = "info")] Info }
            #[serde(untagged)] pub enum Path { Text(::std::string::String), Range(Range), Other(u8) }
            impl ::std::convert::From<&str> for Path { fn from(value: &str) -> Self { Self::Text(value.to_owned()) } }
            pub struct Annotation { pub text: ::std::string::String }
            pub const VERSION: &str = "1.2";
            pub const KINDS: &[&str] = &["a", "c"];
        "#;
        let changes = diff(&snap(V1), &snap(v2));
        let text: Vec<String> = changes.iter().map(ToString::to_string).collect();
        let expect = [
            (Impact::Additive, "new type Annotation (struct, 1 items)"),
            (Impact::Additive, "new optional member Diagnostic.source: String"),
            (Impact::Breaking, "new required member Diagnostic.line: u64"),
            (Impact::Additive, "new value Severity \"info\" of open enum"),
            (Impact::Breaking, "new variant Path::Other: (u8) of exhaustive enum"),
            (Impact::Breaking, "removed type Gone (struct, 1 items)"),
            (Impact::Additive, "constant VERSION changed value: \"1.1\" -> \"1.2\""),
            (Impact::Additive, "new element KINDS \"c\" of constant list"),
            (Impact::Breaking, "removed element KINDS \"b\""),
            (Impact::Additive, "new conversion Path from &str"),
            (Impact::Breaking, "removed conversion Path from Range"),
        ];
        for (impact, description) in expect {
            assert!(
                changes
                    .iter()
                    .any(|c| c.impact == impact && c.description == description),
                "{impact:?} {description} missing from {text:#?}"
            );
        }
        assert_eq!(changes.len(), expect.len(), "{text:#?}");
        assert_eq!(changes[0].impact, Impact::Breaking, "breaking first");
        assert!(
            summary(&changes).contains("6 additive, 5 breaking"),
            "{}",
            summary(&changes)
        );
    }

    #[test]
    fn a_member_that_became_required_is_breaking() {
        let old = "type A: struct\nmember A.x: optional u8\n";
        let new = "type A: struct\nmember A.x: required u8\n";
        let changes = diff(old, new);
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].impact, Impact::Breaking);
        assert!(
            changes[0].description.starts_with("member A.x became required"),
            "{changes:?}"
        );
        assert!(diff(new, new).is_empty());
    }
}
