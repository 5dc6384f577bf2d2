//! Attribute parsing: `#[pilotage(...)]` on the container and on fields, serde's `rename` and
//! `rename_all` (argument names are the serialised names), and doc comments. Errors are
//! accumulated and carry the span of the offending token.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned as _;
use syn::{Attribute, LitStr};

/// Collects errors so that all of them are reported at once.
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    pub fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub fn push_at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span, message));
    }

    pub fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}

/// A string value with the span of its literal.
#[derive(Clone)]
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

/// The loop stage named by `stage = "..."` (Part III 4.3; the one definition in `pilotage-spec`).
pub use pilotage_spec::Stage;

/// `#[pilotage(...)]` on the struct.
#[derive(Default)]
pub struct ContainerAttrs {
    /// The span of the first `#[pilotage]` attribute, for errors about missing keys.
    pub span: Option<Span>,
    pub stage: Option<Spanned<Stage>>,
    pub name: Option<Spanned<String>>,
    pub language: Option<Spanned<String>>,
    pub title: Option<Spanned<String>>,
    pub description: Option<Spanned<String>>,
    pub catalog: Option<Span>,
    pub execution: Option<Spanned<String>>,
    pub destructive: Option<Span>,
    pub idempotent: Option<Span>,
    pub open_world: Option<Span>,
}

/// `#[pilotage(...)]` on a field.
#[derive(Default)]
pub struct FieldAttrs {
    pub program: Option<Span>,
    pub language: Option<Spanned<String>>,
}

fn string_value(meta: &ParseNestedMeta) -> syn::Result<Spanned<String>> {
    let literal: LitStr = meta.value()?.parse()?;
    Ok(Spanned {
        value: literal.value(),
        span: literal.span(),
    })
}

fn set_once<T>(slot: &mut Option<T>, value: T, meta: &ParseNestedMeta, key: &str) -> syn::Result<()> {
    if slot.is_some() {
        return Err(meta.error(format!("duplicate `{key}`")));
    }
    *slot = Some(value);
    Ok(())
}

/// Parses the container's `#[pilotage(...)]` attributes.
pub fn container(attrs: &[Attribute], errors: &mut Errors) -> ContainerAttrs {
    let mut out = ContainerAttrs::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("pilotage")) {
        out.span.get_or_insert(attr.span());
        let result = attr.parse_nested_meta(|meta| {
            let key = meta.path.get_ident().map(ToString::to_string).unwrap_or_default();
            match key.as_str() {
                "stage" => {
                    let value = string_value(&meta)?;
                    let Some(stage) = Stage::from_loop_member(&value.value) else {
                        return Err(syn::Error::new(
                            value.span,
                            format!(
                                "unknown stage \"{}\": expected \"validate\", \"execute\" or \"trace\"",
                                value.value
                            ),
                        ));
                    };
                    set_once(&mut out.stage, Spanned { value: stage, span: value.span }, &meta, "stage")
                }
                "name" => set_once(&mut out.name, string_value(&meta)?, &meta, "name"),
                "language" => set_once(&mut out.language, string_value(&meta)?, &meta, "language"),
                "title" => set_once(&mut out.title, string_value(&meta)?, &meta, "title"),
                "description" => set_once(&mut out.description, string_value(&meta)?, &meta, "description"),
                "execution" => {
                    let value = string_value(&meta)?;
                    let known = pilotage_spec::schema::EXECUTION;
                    if !known.contains(&value.value.as_str()) {
                        return Err(syn::Error::new(
                            value.span,
                            format!(
                                "unknown execution \"{}\": expected one of {}",
                                value.value,
                                known.iter().map(|v| format!("\"{v}\"")).collect::<Vec<_>>().join(", ")
                            ),
                        ));
                    }
                    set_once(&mut out.execution, value, &meta, "execution")
                }
                "catalog" => set_once(&mut out.catalog, meta.path.span(), &meta, "catalog"),
                "destructive" => set_once(&mut out.destructive, meta.path.span(), &meta, "destructive"),
                "idempotent" => set_once(&mut out.idempotent, meta.path.span(), &meta, "idempotent"),
                "open_world" => set_once(&mut out.open_world, meta.path.span(), &meta, "open_world"),
                _ => {
                    let path = &meta.path;
                    let shown = quote::quote!(#path).to_string().replace(' ', "");
                    Err(meta.error(format!(
                        "unknown pilotage key `{shown}`: expected stage, name, language, title, description, catalog, execution, destructive, idempotent or open_world"
                    )))
                }
            }
        });
        if let Err(error) = result {
            errors.push(error);
        }
    }
    out
}

/// Parses a field's `#[pilotage(...)]` attributes.
pub fn field(attrs: &[Attribute], errors: &mut Errors) -> FieldAttrs {
    let mut out = FieldAttrs::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("pilotage")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("program") {
                set_once(&mut out.program, meta.path.span(), &meta, "program")
            } else if meta.path.is_ident("language") {
                set_once(&mut out.language, string_value(&meta)?, &meta, "language")
            } else {
                Err(meta.error("unknown pilotage field key: expected `program` or `language = \"...\"`"))
            }
        });
        if let Err(error) = result {
            errors.push(error);
        }
    }
    if let (None, Some(language)) = (&out.program, &out.language) {
        errors.push_at(
            language.span,
            "`language` on a field goes with `program`: #[pilotage(program, language = \"...\")]",
        );
    }
    out
}

/// serde's naming attributes that decide argument names.
#[derive(Default)]
pub struct SerdeNames {
    /// `rename = "..."` or `rename(deserialize = "...")`.
    pub rename: Option<String>,
    /// `rename_all = "..."` or `rename_all(deserialize = "...")` (containers).
    pub rename_all: Option<Spanned<String>>,
    /// `#[serde(flatten)]` (fields).
    pub flatten: Option<Span>,
    /// `#[serde(skip)]` or `skip_deserializing` (fields): not an argument.
    pub skip: bool,
}

/// Skips the value of a serde key this derive does not interpret (`= expr` or `(...)`).
fn skip_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|nested| skip_value(&nested))?;
    }
    Ok(())
}

/// A name given either directly (`= "x"`) or per direction (`(deserialize = "x")`): the
/// deserialize name wins, since arguments are deserialised.
fn directional_name(meta: &ParseNestedMeta) -> syn::Result<Option<Spanned<String>>> {
    if meta.input.peek(syn::Token![=]) {
        return string_value(meta).map(Some);
    }
    let mut found = None;
    meta.parse_nested_meta(|nested| {
        if nested.path.is_ident("deserialize") {
            found = Some(string_value(&nested)?);
        } else {
            skip_value(&nested)?;
        }
        Ok(())
    })?;
    Ok(found)
}

/// Reads serde's naming attributes. Malformed serde attributes are left for serde_derive to
/// report.
pub fn serde_names(attrs: &[Attribute]) -> SerdeNames {
    let mut out = SerdeNames::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                out.rename = directional_name(&meta)?.map(|n| n.value);
            } else if meta.path.is_ident("rename_all") {
                out.rename_all = directional_name(&meta)?;
            } else if meta.path.is_ident("flatten") {
                out.flatten = Some(meta.path.span());
            } else if meta.path.is_ident("skip") || meta.path.is_ident("skip_deserializing") {
                out.skip = true;
            } else {
                skip_value(&meta)?;
            }
            Ok(())
        });
    }
    out
}

/// Applies a serde `rename_all` rule to a snake_case field name, as serde does.
pub fn apply_rename_all(rule: &str, field: &str) -> Option<String> {
    let words: Vec<&str> = field.split('_').filter(|w| !w.is_empty()).collect();
    let capitalise = |w: &str| {
        let mut chars = w.chars();
        chars
            .next()
            .map(|c| c.to_uppercase().chain(chars).collect::<String>())
            .unwrap_or_default()
    };
    Some(match rule {
        "lowercase" => field.to_lowercase(),
        "UPPERCASE" => field.to_uppercase(),
        "PascalCase" => words.iter().map(|w| capitalise(w)).collect(),
        "camelCase" => {
            let pascal: String = words.iter().map(|w| capitalise(w)).collect();
            let mut chars = pascal.chars();
            chars
                .next()
                .map(|c| c.to_lowercase().chain(chars).collect())
                .unwrap_or_default()
        }
        "snake_case" => field.to_owned(),
        "SCREAMING_SNAKE_CASE" => field.to_uppercase(),
        "kebab-case" => field.replace('_', "-"),
        "SCREAMING-KEBAB-CASE" => field.replace('_', "-").to_uppercase(),
        _ => return None,
    })
}

/// The doc comment as one text: lines trimmed, a paragraph's lines joined by spaces,
/// paragraphs separated by a blank line.
pub fn doc_comment(attrs: &[Attribute]) -> String {
    let mut paragraphs: Vec<String> = vec![String::new()];
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        let syn::Meta::NameValue(name_value) = &attr.meta else {
            continue;
        };
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(text),
            ..
        }) = &name_value.value
        else {
            continue;
        };
        for line in text.value().lines() {
            let line = line.trim();
            let current = paragraphs.last_mut().expect("never empty");
            if line.is_empty() {
                if !current.is_empty() {
                    paragraphs.push(String::new());
                }
            } else {
                if !current.is_empty() {
                    current.push(' ');
                }
                current.push_str(line);
            }
        }
    }
    paragraphs.retain(|p| !p.is_empty());
    paragraphs.join("\n\n")
}
