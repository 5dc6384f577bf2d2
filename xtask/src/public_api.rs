//! The wire types' rule, checked on a hand-written library's public API (issue #30): the
//! generated types are `#[non_exhaustive]` and built with `new` / `with_*`
//! ([`pilotage_codegen::constructors`]), so that a minor version that adds a member breaks no
//! code. A library's own settings, options and reports follow the same rule, or adding a field
//! breaks every build script that wrote a struct literal.
//!
//! [`violations`] reads a crate's sources with `syn` and names, for every item reachable from
//! the crate root (through `pub mod`s, and items of private modules named by a `pub use`):
//!
//! - a `pub struct` with a `pub` field that is not `#[non_exhaustive]`;
//! - a `pub enum` that is not `#[non_exhaustive]`, unless the closed list names it with a
//!   reason (and a closed-list entry that names no such enum, or one that is
//!   `#[non_exhaustive]`);
//! - a `#[non_exhaustive]` struct that users must build (a `pub fn` takes it, or a `pub` field
//!   of a struct they build holds it) without a way to build it: no `#[derive(Default)]` and
//!   no `pub fn` without `self` that returns it.
//!
//! Modules under `#[cfg(test)]` are skipped; `pub(crate)` and narrower items are not public.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use syn::{Fields, Item, Type, Visibility};

/// The enums of `pilotage_codegen`'s public API that stay exhaustive, each with its reason:
/// users match on them without a wildcard arm.
pub const CODEGEN_CLOSED_ENUMS: &[(&str, &str)] = &[
    (
        "api::Impact",
        "a change either may break code written against the old API or cannot: there is no third answer",
    ),
    (
        "validators::regex::Inst",
        "#[doc(hidden)]: one-to-one mirror of pilotage_types::validate::pattern::Inst, converted exhaustively by the matcher's tests",
    ),
    (
        "validators::regex::Compiled",
        "#[doc(hidden)]: one-to-one mirror of pilotage_types::validate::pattern::Pattern, converted exhaustively by the matcher's tests",
    ),
];

/// One item of the crate, with its crate-relative path (`render::TypesSettings`) and whether
/// users can name it.
struct Found {
    path: String,
    reachable: bool,
    item: Item,
}

/// The rule's violations in the crate whose root is `src/lib.rs`, each naming the item as
/// `<crate_name>::<path>`. `Err` when a module's file cannot be read or parsed.
pub fn violations(src: &Path, crate_name: &str, closed: &[(&str, &str)]) -> Result<Vec<String>, String> {
    let root = src.join("lib.rs");
    let file = parse(&root)?;
    let mut found = Vec::new();
    walk(file.items, "", true, Some(src), &mut found)?;
    Ok(check(found, crate_name, closed))
}

/// The rule's violations in one source text taken as a crate root (its modules inline): for
/// tests of the rule itself.
pub fn source_violations(source: &str, crate_name: &str, closed: &[(&str, &str)]) -> Result<Vec<String>, String> {
    let file = syn::parse_file(source).map_err(|e| format!("the source does not parse: {e}"))?;
    let mut found = Vec::new();
    walk(file.items, "", true, None, &mut found)?;
    Ok(check(found, crate_name, closed))
}

fn parse(path: &Path) -> Result<syn::File, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    syn::parse_file(&text).map_err(|e| format!("{}: does not parse: {e}", path.display()))
}

fn is_public(vis: &Visibility) -> bool {
    matches!(vis, Visibility::Public(_))
}

fn has_attribute(attrs: &[syn::Attribute], name: &str) -> bool {
    attrs.iter().any(|a| a.path().is_ident(name))
}

fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta
                .require_list()
                .is_ok_and(|list| list.tokens.to_string().split(',').any(|t| t.trim() == "test"))
    })
}

fn join(module: &str, name: &str) -> String {
    if module.is_empty() {
        name.to_owned()
    } else {
        format!("{module}::{name}")
    }
}

/// Collects the items of a module (`module` its path, `public` whether users can name its
/// `pub` items); `dir` is where the files of its child modules are, `None` in a source text.
fn walk(
    items: Vec<Item>,
    module: &str,
    public: bool,
    dir: Option<&Path>,
    found: &mut Vec<Found>,
) -> Result<(), String> {
    for item in items {
        let Item::Mod(child) = item else {
            let (name, vis) = match &item {
                Item::Struct(s) => (s.ident.to_string(), &s.vis),
                Item::Enum(e) => (e.ident.to_string(), &e.vis),
                Item::Fn(f) => (f.sig.ident.to_string(), &f.vis),
                Item::Use(u) => (String::new(), &u.vis),
                Item::Impl(_) => (String::new(), &Visibility::Inherited),
                _ => continue,
            };
            let reachable = public && is_public(vis);
            found.push(Found {
                path: join(module, &name),
                reachable,
                item,
            });
            continue;
        };
        if is_test_only(&child.attrs) {
            continue;
        }
        let name = child.ident.to_string();
        let path = join(module, &name);
        let child_public = public && is_public(&child.vis);
        let child_dir = dir.map(|d| d.join(&name));
        match child.content {
            Some((_, items)) => walk(items, &path, child_public, child_dir.as_deref(), found)?,
            None => {
                let Some(dir) = dir else {
                    return Err(format!("module `{path}` has no body in a source text"));
                };
                let candidates = [dir.join(format!("{name}.rs")), dir.join(&name).join("mod.rs")];
                let file: PathBuf = candidates.iter().find(|p| p.is_file()).cloned().ok_or_else(|| {
                    format!(
                        "module `{path}`: neither {} nor {}",
                        candidates[0].display(),
                        candidates[1].display()
                    )
                })?;
                let items = parse(&file)?.items;
                walk(items, &path, child_public, child_dir.as_deref(), found)?;
            }
        }
    }
    Ok(())
}

/// The names a `pub use` makes public: (names, modules whose every item it re-exports).
fn reexports(tree: &syn::UseTree, last: Option<&str>, names: &mut BTreeSet<String>, globbed: &mut BTreeSet<String>) {
    match tree {
        syn::UseTree::Path(path) => reexports(&path.tree, Some(&path.ident.to_string()), names, globbed),
        syn::UseTree::Name(name) => {
            names.insert(name.ident.to_string());
        }
        syn::UseTree::Rename(rename) => {
            names.insert(rename.ident.to_string());
        }
        syn::UseTree::Glob(_) => {
            if let Some(module) = last {
                globbed.insert(module.to_owned());
            }
        }
        syn::UseTree::Group(group) => {
            for tree in &group.items {
                reexports(tree, last, names, globbed);
            }
        }
    }
}

/// Every type name a type mentions (`impl IntoIterator<Item = ConstantSpec>` → `IntoIterator`,
/// `ConstantSpec`).
fn type_names(ty: &Type, out: &mut BTreeSet<String>) {
    match ty {
        Type::Path(path) => {
            if let Some(qself) = &path.qself {
                type_names(&qself.ty, out);
            }
            path_names(&path.path, out);
        }
        Type::Reference(r) => type_names(&r.elem, out),
        Type::Slice(s) => type_names(&s.elem, out),
        Type::Array(a) => type_names(&a.elem, out),
        Type::Ptr(p) => type_names(&p.elem, out),
        Type::Paren(p) => type_names(&p.elem, out),
        Type::Group(g) => type_names(&g.elem, out),
        Type::Tuple(t) => t.elems.iter().for_each(|e| type_names(e, out)),
        Type::ImplTrait(i) => bound_names(i.bounds.iter(), out),
        Type::TraitObject(t) => bound_names(t.bounds.iter(), out),
        _ => {}
    }
}

fn bound_names<'a>(bounds: impl Iterator<Item = &'a syn::TypeParamBound>, out: &mut BTreeSet<String>) {
    for bound in bounds {
        if let syn::TypeParamBound::Trait(t) = bound {
            path_names(&t.path, out);
        }
    }
}

fn path_names(path: &syn::Path, out: &mut BTreeSet<String>) {
    for segment in &path.segments {
        out.insert(segment.ident.to_string());
        match &segment.arguments {
            syn::PathArguments::AngleBracketed(arguments) => {
                for argument in &arguments.args {
                    match argument {
                        syn::GenericArgument::Type(t) => type_names(t, out),
                        syn::GenericArgument::AssocType(a) => type_names(&a.ty, out),
                        _ => {}
                    }
                }
            }
            syn::PathArguments::Parenthesized(arguments) => {
                arguments.inputs.iter().for_each(|t| type_names(t, out));
                if let syn::ReturnType::Type(_, t) = &arguments.output {
                    type_names(t, out);
                }
            }
            syn::PathArguments::None => {}
        }
    }
}

/// The type names a public function takes: its arguments and its generic bounds.
fn signature_inputs(signature: &syn::Signature, out: &mut BTreeSet<String>) {
    for input in &signature.inputs {
        if let syn::FnArg::Typed(typed) = input {
            type_names(&typed.ty, out);
        }
    }
    for parameter in signature.generics.type_params() {
        bound_names(parameter.bounds.iter(), out);
    }
    if let Some(clause) = &signature.generics.where_clause {
        for predicate in &clause.predicates {
            if let syn::WherePredicate::Type(predicate) = predicate {
                bound_names(predicate.bounds.iter(), out);
            }
        }
    }
}

fn derives_default(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("derive")
            && a.meta.require_list().is_ok_and(|list| {
                list.tokens
                    .to_string()
                    .split(',')
                    .any(|t| t.trim().ends_with("Default"))
            })
    })
}

fn check(mut found: Vec<Found>, crate_name: &str, closed: &[(&str, &str)]) -> Vec<String> {
    // Items of private modules that a `pub use` names are public too.
    let (mut names, mut globbed) = (BTreeSet::new(), BTreeSet::new());
    for f in &found {
        if let Item::Use(u) = &f.item {
            if is_public(&u.vis) {
                reexports(&u.tree, None, &mut names, &mut globbed);
            }
        }
    }
    for f in &mut found {
        let (name, vis) = match &f.item {
            Item::Struct(s) => (s.ident.to_string(), &s.vis),
            Item::Enum(e) => (e.ident.to_string(), &e.vis),
            Item::Fn(function) => (function.sig.ident.to_string(), &function.vis),
            _ => continue,
        };
        let module = f.path.rsplit_once("::").map_or("", |(m, _)| m);
        let module_name = module.rsplit("::").next().unwrap_or_default();
        if !f.reachable && is_public(vis) && (names.contains(&name) || globbed.contains(module_name)) {
            f.reachable = true;
        }
    }
    let public: BTreeSet<String> = found
        .iter()
        .filter(|f| f.reachable)
        .filter_map(|f| match &f.item {
            Item::Struct(s) => Some(s.ident.to_string()),
            Item::Enum(e) => Some(e.ident.to_string()),
            _ => None,
        })
        .collect();

    let mut violations = Vec::new();
    let named = |path: &str| format!("{crate_name}::{path}");

    // Structs: pub fields only behind `#[non_exhaustive]`.
    for f in found.iter().filter(|f| f.reachable) {
        let Item::Struct(s) = &f.item else { continue };
        let pub_field = match &s.fields {
            Fields::Named(fields) => fields.named.iter().any(|field| is_public(&field.vis)),
            Fields::Unnamed(fields) => fields.unnamed.iter().any(|field| is_public(&field.vis)),
            Fields::Unit => false,
        };
        if pub_field && !has_attribute(&s.attrs, "non_exhaustive") {
            violations.push(format!(
                "{}: a pub struct with pub fields is not #[non_exhaustive] (a new field would break every struct literal): add it, with `new` (or Default) and `with_*` setters",
                named(&f.path)
            ));
        }
    }

    // Enums: `#[non_exhaustive]`, or closed with a reason.
    let closed_paths: BTreeSet<&str> = closed.iter().map(|(path, _)| *path).collect();
    for f in found.iter().filter(|f| f.reachable) {
        let Item::Enum(e) = &f.item else { continue };
        if !has_attribute(&e.attrs, "non_exhaustive") && !closed_paths.contains(f.path.as_str()) {
            violations.push(format!(
                "{}: a pub enum is not #[non_exhaustive] (a new variant would break every exhaustive match): add it, or list the enum as closed with the reason",
                named(&f.path)
            ));
        }
    }
    for (path, reason) in closed {
        let enumeration = found.iter().find_map(|f| match &f.item {
            Item::Enum(e) if f.reachable && f.path == *path => Some(e),
            _ => None,
        });
        match enumeration {
            None => violations.push(format!(
                "{}: listed as a closed enum, but the crate has no such pub enum",
                named(path)
            )),
            Some(e) if has_attribute(&e.attrs, "non_exhaustive") => violations.push(format!(
                "{}: listed as a closed enum, but it is #[non_exhaustive]: remove it from the list",
                named(path)
            )),
            Some(_) if reason.trim().is_empty() => {
                violations.push(format!("{}: listed as a closed enum without a reason", named(path)))
            }
            Some(_) => {}
        }
    }

    // What users build: the types public functions take, and the types of the pub fields of
    // the structs among them.
    let mut inputs = BTreeSet::new();
    for f in &found {
        match &f.item {
            Item::Fn(function) if f.reachable => signature_inputs(&function.sig, &mut inputs),
            Item::Impl(imp) if imp.trait_.is_none() => {
                let mut own = BTreeSet::new();
                type_names(&imp.self_ty, &mut own);
                if !own.iter().any(|t| public.contains(t)) {
                    continue;
                }
                for member in &imp.items {
                    if let syn::ImplItem::Fn(function) = member {
                        if is_public(&function.vis) {
                            signature_inputs(&function.sig, &mut inputs);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    loop {
        let before = inputs.len();
        for f in found.iter().filter(|f| f.reachable) {
            let Item::Struct(s) = &f.item else { continue };
            if inputs.contains(&s.ident.to_string()) {
                for field in s.fields.iter().filter(|field| is_public(&field.vis)) {
                    type_names(&field.ty, &mut inputs);
                }
            }
        }
        if inputs.len() == before {
            break;
        }
    }
    for f in found.iter().filter(|f| f.reachable) {
        let Item::Struct(s) = &f.item else { continue };
        let name = s.ident.to_string();
        if !inputs.contains(&name) || !has_attribute(&s.attrs, "non_exhaustive") || derives_default(&s.attrs) {
            continue;
        }
        let constructed = found.iter().any(|other| {
            let Item::Impl(imp) = &other.item else { return false };
            let Type::Path(self_ty) = imp.self_ty.as_ref() else {
                return false;
            };
            if imp.trait_.is_some() || self_ty.path.segments.last().is_none_or(|l| l.ident != name) {
                return false;
            }
            imp.items.iter().any(|member| {
                let syn::ImplItem::Fn(function) = member else {
                    return false;
                };
                let mut returned = BTreeSet::new();
                if let syn::ReturnType::Type(_, ty) = &function.sig.output {
                    type_names(ty, &mut returned);
                }
                is_public(&function.vis)
                    && function.sig.receiver().is_none()
                    && (returned.contains("Self") || returned.contains(&name))
            })
        });
        if !constructed {
            violations.push(format!(
                "{}: users pass it in, but #[non_exhaustive] leaves them no way to build it: add `pub fn new(..) -> Self` (or derive Default)",
                named(&f.path)
            ));
        }
    }
    violations
}
