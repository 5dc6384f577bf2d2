//! The typed tree the derive works on: the container, its `#[pilotage]` keys and its named
//! fields with their serialised names, Rust types and spans.

use proc_macro2::Span;
use syn::spanned::Spanned as _;
use syn::{Data, DeriveInput, Fields, GenericArgument, PathArguments, Type};

use crate::attr::{self, ContainerAttrs, Errors, FieldAttrs};

/// The annotated struct.
pub struct Container<'a> {
    pub ident: &'a syn::Ident,
    pub attrs: ContainerAttrs,
    pub doc: String,
    pub fields: Vec<Field<'a>>,
}

/// One named field.
pub struct Field<'a> {
    pub ident: &'a syn::Ident,
    pub ty: &'a Type,
    /// The argument name on the wire (serde `rename`/`rename_all` applied).
    pub name: String,
    /// The field's Rust name (`r#` stripped), before any serde renaming.
    pub rust_name: String,
    pub attrs: FieldAttrs,
    /// `Some` when the field is `#[serde(flatten)]`.
    pub flatten: Option<Span>,
}

/// The JSON value kinds a Rust type can take, as far as the derive can tell from syntax.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum JsonKind {
    String,
    Boolean,
    Number,
    Array,
    Object,
    /// `serde_json::Value`: any JSON.
    Any,
    /// A type the derive cannot see into (a user type): trusted.
    Unknown,
}

impl Field<'_> {
    /// `Option<T>`: the argument may be absent.
    pub fn is_option(&self) -> bool {
        option_inner(self.ty).is_some()
    }

    /// The type inside `Option<...>`, if the field is an `Option`.
    pub fn value_type(&self) -> Option<&Type> {
        option_inner(self.ty)
    }

    /// The JSON kind of the field's type, `Option` unwrapped.
    pub fn json_kind(&self) -> JsonKind {
        json_kind(option_inner(self.ty).unwrap_or(self.ty))
    }
}

fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(path) if path.qself.is_none() => path.path.segments.last(),
        _ => None,
    }
}

fn option_inner(ty: &Type) -> Option<&Type> {
    let segment = last_segment(ty)?;
    if segment.ident != "Option" {
        return None;
    }
    let PathArguments::AngleBracketed(arguments) = &segment.arguments else {
        return None;
    };
    match arguments.args.first()? {
        GenericArgument::Type(inner) if arguments.args.len() == 1 => Some(inner),
        _ => None,
    }
}

fn json_kind(ty: &Type) -> JsonKind {
    match ty {
        Type::Reference(reference) => json_kind(&reference.elem),
        Type::Array(_) | Type::Slice(_) | Type::Tuple(_) => JsonKind::Array,
        Type::Path(_) => {
            let Some(segment) = last_segment(ty) else {
                return JsonKind::Unknown;
            };
            match segment.ident.to_string().as_str() {
                "String" | "str" | "char" | "Cow" | "PathBuf" => JsonKind::String,
                "bool" => JsonKind::Boolean,
                "u8" | "u16" | "u32" | "u64" | "u128" | "usize" | "i8" | "i16" | "i32" | "i64" | "i128" | "isize"
                | "f32" | "f64" | "NonZeroU8" | "NonZeroU16" | "NonZeroU32" | "NonZeroU64" | "NonZeroUsize" => {
                    JsonKind::Number
                }
                "Vec" | "VecDeque" | "HashSet" | "BTreeSet" => JsonKind::Array,
                "HashMap" | "BTreeMap" | "Map" => JsonKind::Object,
                "Value" => JsonKind::Any,
                "Box" | "Rc" | "Arc" => match &segment.arguments {
                    PathArguments::AngleBracketed(a) => match a.args.first() {
                        Some(GenericArgument::Type(inner)) => json_kind(inner),
                        _ => JsonKind::Unknown,
                    },
                    _ => JsonKind::Unknown,
                },
                _ => JsonKind::Unknown,
            }
        }
        _ => JsonKind::Unknown,
    }
}

impl<'a> Container<'a> {
    /// Parses the derive input; all attribute errors are reported together.
    pub fn from_ast(input: &'a DeriveInput) -> syn::Result<Self> {
        let mut errors = Errors::default();
        let named = match &input.data {
            Data::Struct(data) => match &data.fields {
                Fields::Named(named) => Some(named),
                _ => {
                    errors.push_at(
                        input.ident.span(),
                        "PilotageTool needs a struct with named fields: each field is one tool argument",
                    );
                    None
                }
            },
            Data::Enum(data) => {
                errors.push_at(
                    data.enum_token.span(),
                    "PilotageTool is derived for structs with named fields, not enums",
                );
                None
            }
            Data::Union(data) => {
                errors.push_at(
                    data.union_token.span(),
                    "PilotageTool is derived for structs with named fields, not unions",
                );
                None
            }
        };
        if let Some(param) = input.generics.params.first() {
            errors.push_at(
                param.span(),
                "PilotageTool does not support generic structs: a tool definition is one fixed schema",
            );
        }
        let attrs = attr::container(&input.attrs, &mut errors);
        let serde = attr::serde_names(&input.attrs);
        if let Some(rule) = &serde.rename_all {
            if attr::apply_rename_all(&rule.value, "a_b").is_none() {
                errors.push_at(rule.span, format!("unknown serde rename_all rule \"{}\"", rule.value));
            }
        }
        let mut fields = Vec::new();
        for field in named.map(|n| n.named.iter()).into_iter().flatten() {
            let ident = field.ident.as_ref().expect("named fields have identifiers");
            let field_serde = attr::serde_names(&field.attrs);
            if field_serde.skip {
                continue;
            }
            let raw = ident.to_string();
            let raw = raw.strip_prefix("r#").unwrap_or(&raw).to_owned();
            let raw_name = raw.clone();
            let name = field_serde.rename.clone().unwrap_or_else(|| {
                serde
                    .rename_all
                    .as_ref()
                    .and_then(|rule| attr::apply_rename_all(&rule.value, &raw))
                    .unwrap_or(raw)
            });
            fields.push(Field {
                ident,
                ty: &field.ty,
                rust_name: raw_name,
                name,
                attrs: attr::field(&field.attrs, &mut errors),
                flatten: field_serde.flatten,
            });
        }
        errors.finish()?;
        Ok(Self {
            ident: &input.ident,
            attrs,
            doc: attr::doc_comment(&input.attrs),
            fields,
        })
    }
}
