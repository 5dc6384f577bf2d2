//! Validators generated from a schema: one Rust function per `$defs` entry (and per location a
//! `$ref` or an applicator needs on its own), checking the original schema's every keyword
//! directly, for both readings (pinned, and compatible: open enums accept any string, as
//! `pilotage_types::validate::widen_open_enums` rewrites them). The functions call
//! `pilotage_types::validate::runtime`; patterns are compiled by [`regex`].
//!
//! The keywords of draft 2020-12's applicator and validation vocabularies are compiled, plus
//! draft-07's `definitions`, array-form `items`, `additionalItems` and `$ref` hiding its
//! siblings. A keyword the generator cannot honour (`unevaluatedProperties`, `$dynamicRef`,
//! `dependencies`, a nested `$id`, an anchor reference, draft-07's asserted `format`, a pattern
//! the runtime cannot match exactly) is an error naming its schema pointer: never a silent
//! pass. Keywords no vocabulary defines are annotations, as JSON Schema says.

pub mod regex;

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};
use serde_json::{Number, Value};

use crate::error::{escape_pointer_token, unescape_pointer_token};
use crate::CodegenError;

/// Keywords of a vocabulary that the generator does not compile: an error where they appear.
const UNSUPPORTED: &[&str] = &[
    "unevaluatedProperties",
    "unevaluatedItems",
    "$dynamicRef",
    "$recursiveRef",
    "$recursiveAnchor",
    "dependencies",
];

/// The formats JSON Schema defines (and jsonschema asserts in draft-04/06/07).
const STANDARD_FORMATS: &[&str] = &[
    "date",
    "date-time",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
    "uuid",
];

/// The dialect, which changes a few keywords' meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Draft {
    /// Draft-04/06/07: `$ref` hides its siblings; `format` asserts.
    Legacy,
    /// 2019-09 and 2020-12 (the default without `$schema`).
    Modern,
}

/// The output of [`generate`].
#[derive(Debug, Clone)]
pub struct Validators {
    /// The items: statics (patterns), the functions, and `VALIDATORS`, the table
    /// of `(definition, check)` sorted by definition (`.` is the document's root).
    pub tokens: TokenStream,
    /// Each definition's check function, by definition name (`.` for the root).
    pub checks: BTreeMap<String, Ident>,
    /// References to other documents, each validated as accepting any value.
    pub unresolved: Vec<String>,
}

struct Gen<'a> {
    doc: &'a Value,
    file: &'a str,
    draft: Draft,
    /// The document's own `$id`, which `$ref`s may spell out in full.
    id: Option<String>,
    /// Function per schema location (pointer).
    functions: BTreeMap<String, Ident>,
    used_names: BTreeSet<String>,
    queue: Vec<(String, Ident)>,
    items: Vec<TokenStream>,
    patterns: BTreeMap<String, Ident>,
    unresolved: BTreeSet<String>,
}

fn is_string_const_branch(schema: &Value) -> bool {
    let Value::Object(object) = schema else { return false };
    object.get("const").is_some_and(Value::is_string)
        && object.keys().all(|k| {
            matches!(
                k.as_str(),
                "const" | "type" | "title" | "description" | "$comment" | "examples" | "deprecated"
            )
        })
        && object.get("type").is_none_or(|t| t == "string")
}

fn number(n: &Number) -> TokenStream {
    if let Some(u) = n.as_u64() {
        quote!(::pilotage_types::validate::runtime::Num::U(#u))
    } else if let Some(i) = n.as_i64() {
        quote!(::pilotage_types::validate::runtime::Num::I(#i))
    } else {
        let f = Literal::f64_unsuffixed(n.as_f64().unwrap_or(0.0));
        quote!(::pilotage_types::validate::runtime::Num::F(#f))
    }
}

/// A location's pointer joined with one more token.
fn child(pointer: &str, token: &str) -> String {
    format!("{pointer}/{}", escape_pointer_token(token))
}

fn snake(name: &str) -> String {
    let mut out = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            if c.is_ascii_uppercase() && previous_lower {
                out.push('_');
            }
            previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
            out.push(c.to_ascii_lowercase());
        } else {
            if !out.ends_with('_') {
                out.push('_');
            }
            previous_lower = false;
        }
    }
    out.trim_matches('_').to_owned()
}

impl<'a> Gen<'a> {
    fn error(&self, pointer: &str, message: impl Into<String>) -> CodegenError {
        CodegenError::new(self.file, pointer, message)
    }

    /// The function checking the schema at `pointer`, generated once.
    fn function(&mut self, pointer: &str, hint: &str) -> Ident {
        if let Some(ident) = self.functions.get(pointer) {
            return ident.clone();
        }
        let base = if hint.is_empty() { "s".to_owned() } else { snake(hint) };
        let base = if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit()) {
            format!("s_{base}")
        } else {
            base
        };
        let mut name = base.clone();
        let mut n = 1;
        while self.used_names.contains(&name) || syn::parse_str::<Ident>(&name).is_err() {
            n += 1;
            name = format!("{base}_{n}");
        }
        self.used_names.insert(name.clone());
        let ident = format_ident!("{}", name);
        self.functions.insert(pointer.to_owned(), ident.clone());
        self.queue.push((pointer.to_owned(), ident.clone()));
        ident
    }

    /// The function for a subschema used on its own (an `anyOf` branch, a `not`, an `if`):
    /// the referenced location's own function when the subschema is only a local `$ref`.
    fn branch(&mut self, pointer: &str) -> Ident {
        let only_ref = self.doc.pointer(pointer).and_then(Value::as_object).and_then(|object| {
            let reference = object.get("$ref")?.as_str()?;
            let annotations_only = object
                .keys()
                .all(|k| matches!(k.as_str(), "$ref" | "description" | "title" | "$comment"));
            annotations_only.then_some(reference)
        });
        if let Some(reference) = only_ref {
            if let Ok(Some(target)) = self.resolve(reference, pointer) {
                return self.referenced(&target);
            }
        }
        let n = self.functions.len();
        self.function(pointer, &format!("s{n}"))
    }

    /// The function of a `$ref`'s target, named after its last pointer token.
    fn referenced(&mut self, target: &str) -> Ident {
        let hint = target
            .rsplit('/')
            .next()
            .map(unescape_pointer_token)
            .unwrap_or_default();
        self.function(target, &hint)
    }

    fn pattern(&mut self, source: &str, pointer: &str) -> Result<Ident, CodegenError> {
        if let Some(ident) = self.patterns.get(source) {
            return Ok(ident.clone());
        }
        let compiled = regex::compile(source).map_err(|e| self.error(pointer, e.0))?;
        let ident = format_ident!("PATTERN_{}", self.patterns.len());
        self.items.push(quote! {
            static #ident: ::pilotage_types::validate::pattern::Pattern = #compiled;
        });
        self.patterns.insert(source.to_owned(), ident.clone());
        Ok(ident)
    }

    /// Resolves a `$ref` to a location in this document, or `None` for another document.
    fn resolve(&self, reference: &str, pointer: &str) -> Result<Option<String>, CodegenError> {
        let (base, fragment) = match reference.split_once('#') {
            Some((base, fragment)) => (base, fragment),
            None => (reference, ""),
        };
        let local = base.is_empty() || self.id.as_deref().is_some_and(|id| id.trim_end_matches('#') == base);
        if !local {
            return Ok(None);
        }
        let fragment = percent_decode(fragment);
        if !fragment.is_empty() && !fragment.starts_with('/') {
            return Err(self.error(
                pointer,
                format!("`$ref` {reference:?} names an anchor; only JSON Pointer fragments are compiled"),
            ));
        }
        if self.doc.pointer(&fragment).is_none() {
            return Err(self.error(
                pointer,
                format!("`$ref` {reference:?} points to nothing in this document"),
            ));
        }
        Ok(Some(fragment))
    }

    /// The statements checking `v` (at `at`) against `schema` (at `pointer`): each failure
    /// sets the evaluation failed: it records a violation, or returns at once.
    #[allow(clippy::too_many_lines)]
    fn body(&mut self, schema: &Value, pointer: &str) -> Result<TokenStream, CodegenError> {
        let object = match schema {
            Value::Bool(true) => return Ok(TokenStream::new()),
            Value::Bool(false) => {
                let fail = fail(pointer, quote!(Why::False(v)));
                return Ok(quote!(#fail));
            }
            Value::Object(object) => object,
            _ => return Err(self.error(pointer, "a schema must be an object or a boolean")),
        };
        for key in object.keys() {
            if UNSUPPORTED.contains(&key.as_str()) {
                return Err(self.error(
                    &child(pointer, key),
                    format!("the keyword `{key}` is not supported by the generated validators"),
                ));
            }
        }
        if object.contains_key("$id") && !pointer.is_empty() {
            return Err(self.error(
                &child(pointer, "$id"),
                "a nested `$id` (a new base URI) is not supported by the generated validators",
            ));
        }
        let at = |keyword: &str| child(pointer, keyword);
        let mut out = TokenStream::new();

        if let Some(reference) = object.get("$ref") {
            let Some(reference) = reference.as_str() else {
                return Err(self.error(&at("$ref"), "`$ref` must be a string"));
            };
            match self.resolve(reference, &at("$ref"))? {
                Some(target) => {
                    let function = self.referenced(&target);
                    out.extend(quote! {
                        if !#function(cx, v, at) && cx.stops() { return false; }
                    });
                }
                None => {
                    self.unresolved.insert(reference.to_owned());
                }
            }
            if self.draft == Draft::Legacy {
                return Ok(out);
            }
        }

        // The compatible reading's rewrite of this location (see the module docs).
        let enum_of_strings = matches!(object.get("enum"), Some(Value::Array(values)) if !values.is_empty() && values.iter().all(Value::is_string));
        let consts_of = |keyword: &str| matches!(object.get(keyword), Some(Value::Array(branches)) if !branches.is_empty() && branches.iter().all(is_string_const_branch));
        let (any_of_consts, one_of_consts) = (consts_of("anyOf"), consts_of("oneOf"));
        let widened = enum_of_strings || any_of_consts || one_of_consts;
        let mut pinned_only = TokenStream::new();

        if let Some(types) = object.get("type") {
            let names: Vec<&str> = match types {
                Value::String(one) => vec![one.as_str()],
                Value::Array(many) if many.iter().all(Value::is_string) => {
                    many.iter().filter_map(Value::as_str).collect()
                }
                _ => return Err(self.error(&at("type"), "`type` must be a string or an array of strings")),
            };
            let mut tests = Vec::new();
            for name in &names {
                tests.push(match *name {
                    "string" => quote!(v.is_string()),
                    "number" => quote!(v.is_number()),
                    "integer" => quote!(::pilotage_types::validate::runtime::is_integer(v)),
                    "object" => quote!(v.is_object()),
                    "array" => quote!(v.is_array()),
                    "boolean" => quote!(v.is_boolean()),
                    "null" => quote!(v.is_null()),
                    other => return Err(self.error(&at("type"), format!("unknown type {other:?}"))),
                });
            }
            let fail = fail(&at("type"), quote!(Why::Type(v, &[#(#names),*])));
            let check = quote!(if !(#(#tests)||*) { #fail });
            if widened {
                pinned_only.extend(check);
            } else {
                out.extend(check);
            }
        }
        if let Some(expected) = object.get("const") {
            let test = equals(expected);
            let text = expected.to_string();
            let fail = fail(&at("const"), quote!(Why::Const(#text)));
            out.extend(quote!(if !(#test) { #fail }));
        }
        if let Some(values) = object.get("enum") {
            let Value::Array(values) = values else {
                return Err(self.error(&at("enum"), "`enum` must be an array"));
            };
            let test = if values.iter().all(Value::is_string) && !values.is_empty() {
                let strings = values.iter().filter_map(Value::as_str);
                quote!(matches!(v.as_str(), Some(#(#strings)|*)))
            } else if values.is_empty() {
                quote!(false)
            } else {
                let tests: Vec<TokenStream> = values.iter().map(equals).collect();
                quote!(#(#tests)||*)
            };
            let options = values.iter().map(Value::to_string).collect::<Vec<_>>().join(", ");
            let fail = fail(&at("enum"), quote!(Why::Enum(v, #options)));
            let check = quote!(if !(#test) { #fail });
            if enum_of_strings {
                pinned_only.extend(check);
            } else {
                out.extend(check);
            }
        }

        // Strings.
        let mut strings = TokenStream::new();
        for (keyword, why) in [("minLength", quote!(MinLength)), ("maxLength", quote!(MaxLength))] {
            if let Some(limit) = object.get(keyword) {
                let limit = limit
                    .as_u64()
                    .ok_or_else(|| self.error(&at(keyword), format!("`{keyword}` must be a non-negative integer")))?;
                let op = if keyword == "minLength" { quote!(<) } else { quote!(>) };
                let fail = fail(&at(keyword), quote!(Why::#why(v, #limit)));
                strings.extend(quote!(if ::pilotage_types::validate::runtime::length(s) #op #limit { #fail }));
            }
        }
        if let Some(pattern) = object.get("pattern") {
            let source = pattern
                .as_str()
                .ok_or_else(|| self.error(&at("pattern"), "`pattern` must be a string"))?;
            let ident = self.pattern(source, &at("pattern"))?;
            let fail = fail(&at("pattern"), quote!(Why::Pattern(v, #ident.source())));
            strings.extend(quote!(if !#ident.is_match(s) { #fail }));
        }
        if let Some(format) = object.get("format").and_then(Value::as_str) {
            // 2019-09 and 2020-12: an annotation. Draft-04/06/07: the standard formats assert
            // (as jsonschema does by default), and those assertions are not compiled; an
            // unknown format (`byte`, `uint`) is ignored there too.
            if self.draft == Draft::Legacy && STANDARD_FORMATS.contains(&format) {
                return Err(self.error(
                    &at("format"),
                    format!("`format: \"{format}\"` asserts in draft-04/06/07, and format assertions are not compiled"),
                ));
            }
        }
        if !strings.is_empty() {
            out.extend(quote!(if let Value::String(s) = v { #strings }));
        }

        // Numbers.
        let mut numbers = TokenStream::new();
        for keyword in [
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
        ] {
            let Some(limit) = object.get(keyword) else { continue };
            let Value::Number(limit_number) = limit else {
                return Err(self.error(
                    &at(keyword),
                    format!("`{keyword}` must be a number (draft-04's boolean form is not supported)"),
                ));
            };
            let num = number(limit_number);
            let text = limit.to_string();
            let (test, why) = match keyword {
                "minimum" => (quote!(== Some(::std::cmp::Ordering::Less)), quote!(Minimum)),
                "maximum" => (quote!(== Some(::std::cmp::Ordering::Greater)), quote!(Maximum)),
                "exclusiveMinimum" => (quote!(!= Some(::std::cmp::Ordering::Greater)), quote!(ExclusiveMinimum)),
                "exclusiveMaximum" => (quote!(!= Some(::std::cmp::Ordering::Less)), quote!(ExclusiveMaximum)),
                _ => {
                    if limit_number.as_f64().is_none_or(|f| f <= 0.0) {
                        return Err(self.error(&at(keyword), "`multipleOf` must be greater than 0"));
                    }
                    let fail = fail(&at(keyword), quote!(Why::MultipleOf(v, #text)));
                    numbers.extend(quote!(if !::pilotage_types::validate::runtime::is_multiple_of(n, #num) { #fail }));
                    continue;
                }
            };
            let fail = fail(&at(keyword), quote!(Why::#why(v, #text)));
            numbers.extend(quote!(if ::pilotage_types::validate::runtime::compare(n, #num) #test { #fail }));
        }
        if !numbers.is_empty() {
            out.extend(quote!(if let Value::Number(n) = v { #numbers }));
        }

        // Arrays.
        let mut arrays = TokenStream::new();
        let mut prefix = 0usize;
        let tuple = match (object.get("prefixItems"), object.get("items")) {
            (Some(Value::Array(items)), _) => Some(("prefixItems", items)),
            (None, Some(Value::Array(items))) => Some(("items", items)),
            (Some(_), _) => return Err(self.error(&at("prefixItems"), "`prefixItems` must be an array")),
            _ => None,
        };
        if let Some((keyword, items)) = tuple {
            prefix = items.len();
            for (index, item) in items.iter().enumerate() {
                let body = self.body(item, &child(&at(keyword), &index.to_string()))?;
                arrays.extend(quote! {
                    if let Some(v) = a.get(#index) { let at = &at.index(#index); #body }
                });
            }
        }
        let rest = match (tuple.map(|t| t.0), object.get("items"), object.get("additionalItems")) {
            (Some("items"), _, Some(additional)) => Some((additional, at("additionalItems"))),
            (Some("items"), _, None) => None,
            (_, Some(items), _) if !items.is_array() => Some((items, at("items"))),
            _ => None,
        };
        if let Some((schema, item_pointer)) = rest {
            let body = self.body(schema, &item_pointer)?;
            if !body.is_empty() {
                let skip = (prefix > 0).then(|| quote!(.skip(#prefix)));
                arrays.extend(quote! {
                    for (index, v) in a.iter().enumerate() #skip { let at = &at.index(index); #body }
                });
            }
        }
        for (keyword, why, op) in [
            ("minItems", quote!(MinItems), quote!(<)),
            ("maxItems", quote!(MaxItems), quote!(>)),
        ] {
            if let Some(limit) = object.get(keyword) {
                let limit = limit
                    .as_u64()
                    .ok_or_else(|| self.error(&at(keyword), format!("`{keyword}` must be a non-negative integer")))?;
                let fail = fail(&at(keyword), quote!(Why::#why(v, #limit)));
                arrays.extend(quote!(if (a.len() as u64) #op #limit { #fail }));
            }
        }
        if object.get("uniqueItems") == Some(&Value::Bool(true)) {
            let fail = fail(&at("uniqueItems"), quote!(Why::Unique(v)));
            arrays.extend(quote!(if !::pilotage_types::validate::runtime::all_unique(a) { #fail }));
        }
        if object.contains_key("contains") {
            let function = self.branch(&at("contains"));
            let min = match object.get("minContains") {
                Some(min) => min
                    .as_u64()
                    .ok_or_else(|| self.error(&at("minContains"), "`minContains` must be a non-negative integer"))?,
                None => 1,
            };
            let fail_min = fail(&at("contains"), quote!(Why::Contains(v)));
            arrays.extend(quote! {
                let mut count = 0u64;
                for (index, item) in a.iter().enumerate() {
                    if cx.quiet(#function, item, &at.index(index)) { count += 1; }
                }
                if count < #min { #fail_min }
            });
            if let Some(max) = object.get("maxContains") {
                let max = max
                    .as_u64()
                    .ok_or_else(|| self.error(&at("maxContains"), "`maxContains` must be a non-negative integer"))?;
                let fail_max = fail(&at("maxContains"), quote!(Why::Contains(v)));
                arrays.extend(quote!(if count > #max { #fail_max }));
            }
        }
        if !arrays.is_empty() {
            out.extend(quote!(if let Value::Array(a) = v { #arrays }));
        }

        // Objects: one pass over the instance's members, dispatching on the name (cheaper
        // than one lookup per declared property), counting the required members seen; only
        // when some are missing are they looked up one by one to name them.
        let mut objects = TokenStream::new();
        let mut required: Vec<&str> = Vec::new();
        if let Some(names) = object.get("required") {
            let names = names
                .as_array()
                .and_then(|names| names.iter().map(Value::as_str).collect::<Option<Vec<&str>>>())
                .ok_or_else(|| self.error(&at("required"), "`required` must be an array of strings"))?;
            for name in names {
                if !required.contains(&name) {
                    required.push(name);
                }
            }
        }
        let properties = match object.get("properties") {
            Some(Value::Object(properties)) => sorted(properties),
            Some(_) => return Err(self.error(&at("properties"), "`properties` must be an object")),
            None => Vec::new(),
        };
        let known: Vec<&str> = properties.iter().map(|(name, _)| name.as_str()).collect();
        let mut pattern_idents = Vec::new();
        let mut pattern_checks = TokenStream::new();
        if let Some(patterns) = object.get("patternProperties") {
            let Value::Object(patterns) = patterns else {
                return Err(self.error(&at("patternProperties"), "`patternProperties` must be an object"));
            };
            for (source, subschema) in sorted(patterns) {
                let pointer = child(&at("patternProperties"), source);
                let ident = self.pattern(source, &pointer)?;
                let body = self.body(subschema, &pointer)?;
                pattern_checks.extend(quote!(if #ident.is_match(k) { let at = &at.key(k); #body }));
                pattern_idents.push(ident);
            }
        }
        let matched_pattern: Vec<TokenStream> = pattern_idents.iter().map(|ident| quote!(#ident.is_match(k))).collect();
        let mut after = TokenStream::new();
        let mut before = TokenStream::new();
        let other = match object.get("additionalProperties") {
            None | Some(Value::Bool(true)) => TokenStream::new(),
            Some(Value::Bool(false)) => {
                before.extend(quote!(let mut unexpected = false;));
                let fail = fail(
                    &at("additionalProperties"),
                    quote!(Why::Additional(v, &[#(#known),*], &[#(&#pattern_idents),*])),
                );
                after.extend(quote!(if unexpected { #fail }));
                quote!(if !(false #(|| #matched_pattern)*) { unexpected = true; })
            }
            Some(subschema) => {
                let body = self.body(subschema, &at("additionalProperties"))?;
                if body.is_empty() {
                    TokenStream::new()
                } else {
                    quote!(if !(false #(|| #matched_pattern)*) { let at = &at.key(k); #body })
                }
            }
        };
        let mut arms = TokenStream::new();
        let mut arm_names: Vec<&str> = known.clone();
        for name in &required {
            if !arm_names.contains(name) {
                arm_names.push(name);
            }
        }
        arm_names.sort_unstable();
        for name in &arm_names {
            let body = match properties.iter().find(|(n, _)| n.as_str() == *name) {
                Some((_, subschema)) => self.body(subschema, &child(&at("properties"), name))?,
                None => TokenStream::new(),
            };
            let count = required.contains(name).then(|| quote!(seen += 1;));
            // With nothing to do, an arm is still needed when `_` must see only the others.
            if body.is_empty() && count.is_none() && other.is_empty() {
                continue;
            }
            let scoped = (!body.is_empty()).then(|| quote!(let at = &at.key(k); #body));
            arms.extend(quote!(#name => { #count #scoped }));
        }
        if !required.is_empty() {
            before.extend(quote!(let mut seen = 0usize;));
            let count = required.len();
            let fail = fail(&at("required"), quote!(Why::Required(name)));
            after.extend(quote! {
                if seen < #count {
                    for name in [#(#required),*] { if !o.contains_key(name) { #fail } }
                }
            });
        }
        if !arms.is_empty() || !other.is_empty() || !pattern_checks.is_empty() {
            let dispatch = if arms.is_empty() {
                other
            } else {
                quote!(match k.as_str() { #arms _ => { #other } })
            };
            objects.extend(quote! {
                #before
                for (k, v) in o { #dispatch #pattern_checks }
                #after
            });
        } else {
            objects.extend(quote!(#before #after));
        }
        if object.contains_key("propertyNames") {
            let function = self.branch(&at("propertyNames"));
            let fail = fail(&at("propertyNames"), quote!(Why::PropertyName(k)));
            objects.extend(quote! {
                for k in o.keys() {
                    let name = Value::String(k.clone());
                    if !cx.quiet(#function, &name, at) { #fail }
                }
            });
        }
        for (keyword, why, op) in [
            ("minProperties", quote!(MinProperties), quote!(<)),
            ("maxProperties", quote!(MaxProperties), quote!(>)),
        ] {
            if let Some(limit) = object.get(keyword) {
                let limit = limit
                    .as_u64()
                    .ok_or_else(|| self.error(&at(keyword), format!("`{keyword}` must be a non-negative integer")))?;
                let fail = fail(&at(keyword), quote!(Why::#why(v, #limit)));
                objects.extend(quote!(if (o.len() as u64) #op #limit { #fail }));
            }
        }
        if let Some(dependent) = object.get("dependentRequired") {
            let Value::Object(dependent) = dependent else {
                return Err(self.error(&at("dependentRequired"), "`dependentRequired` must be an object"));
            };
            for (member, names) in sorted(dependent) {
                let names: Vec<&str> = names
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                let pointer = child(&at("dependentRequired"), member);
                let fails = names.iter().map(|name| {
                    let fail = fail(&pointer, quote!(Why::Dependent(#member, #name)));
                    quote!(if !o.contains_key(#name) { #fail })
                });
                objects.extend(quote!(if o.contains_key(#member) { #(#fails)* }));
            }
        }
        if let Some(dependent) = object.get("dependentSchemas") {
            let Value::Object(dependent) = dependent else {
                return Err(self.error(&at("dependentSchemas"), "`dependentSchemas` must be an object"));
            };
            for (member, subschema) in sorted(dependent) {
                let body = self.body(subschema, &child(&at("dependentSchemas"), member))?;
                objects.extend(quote!(if o.contains_key(#member) { #body }));
            }
        }
        if !objects.is_empty() {
            out.extend(quote!(if let Value::Object(o) = v { #objects }));
        }

        // Applicators.
        if let Some(branches) = object.get("allOf") {
            let branches = branches
                .as_array()
                .ok_or_else(|| self.error(&at("allOf"), "`allOf` must be an array"))?;
            for (index, branch) in branches.iter().enumerate() {
                let body = self.body(branch, &child(&at("allOf"), &index.to_string()))?;
                out.extend(quote!({ #body }));
            }
        }
        for keyword in ["anyOf", "oneOf"] {
            let Some(branches) = object.get(keyword) else { continue };
            let branches = branches
                .as_array()
                .ok_or_else(|| self.error(&at(keyword), format!("`{keyword}` must be an array")))?;
            let functions: Vec<Ident> = (0..branches.len())
                .map(|index| self.branch(&child(&at(keyword), &index.to_string())))
                .collect();
            let check = if keyword == "anyOf" {
                let fail = fail(&at(keyword), quote!(Why::AnyOf(v)));
                quote!(if !(#(cx.quiet(#functions, v, at))||*) { #fail })
            } else {
                let none = fail(&at(keyword), quote!(Why::OneOfNone(v)));
                let many = fail(&at(keyword), quote!(Why::OneOfMany(v)));
                quote! {
                    let mut holds = 0usize;
                    #( if holds < 2 && cx.quiet(#functions, v, at) { holds += 1; } )*
                    if holds == 0 { #none } else if holds > 1 { #many }
                }
            };
            let check = quote!({ #check });
            if (keyword == "anyOf" && any_of_consts) || (keyword == "oneOf" && one_of_consts) {
                pinned_only.extend(check);
            } else {
                out.extend(check);
            }
        }
        if let Some(not) = object.get("not") {
            let function = self.branch(&at("not"));
            let text = not.to_string();
            let fail = fail(&at("not"), quote!(Why::Not(v, #text)));
            out.extend(quote!(if cx.quiet(#function, v, at) { #fail }));
        }
        if object.contains_key("if") && (object.contains_key("then") || object.contains_key("else")) {
            let condition = self.branch(&at("if"));
            let then = match object.get("then") {
                Some(then) => self.body(then, &at("then"))?,
                None => TokenStream::new(),
            };
            let otherwise = match object.get("else") {
                Some(otherwise) => self.body(otherwise, &at("else"))?,
                None => TokenStream::new(),
            };
            out.extend(quote!(if cx.quiet(#condition, v, at) { #then } else { #otherwise }));
        }

        if widened {
            let fail = fail(&at("type"), quote!(Why::Type(v, &["string"])));
            out = quote! {
                if cx.compatible() {
                    if !v.is_string() { #fail }
                } else {
                    #pinned_only
                }
                #out
            };
        }
        Ok(out)
    }
}

/// A failure of the keyword at `pointer`: the evaluation records the
/// violation or stops.
fn fail(pointer: &str, why: TokenStream) -> TokenStream {
    quote! {
        if cx.fail(at, #pointer, #why) { return false; }
    }
}

/// The members of `object` sorted by key, so that the output does not depend on whether
/// `serde_json` keeps insertion order in this build.
fn sorted(object: &serde_json::Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut members: Vec<(&String, &Value)> = object.iter().collect();
    members.sort_by(|a, b| a.0.cmp(b.0));
    members
}

/// An expression: whether `v` equals `value` (JSON Schema equality: numbers by value, objects
/// regardless of member order), written out structurally so nothing is parsed at run time.
fn equals(value: &Value) -> TokenStream {
    match value {
        Value::Null => quote!(v.is_null()),
        Value::Bool(b) => quote!(v.as_bool() == Some(#b)),
        Value::String(s) => quote!(v.as_str() == Some(#s)),
        Value::Number(n) => {
            let n = number(n);
            quote!(::pilotage_types::validate::runtime::is_number(v, #n))
        }
        Value::Array(items) => {
            let count = items.len();
            let checks = items.iter().enumerate().map(|(index, item)| {
                let check = equals(item);
                quote!({ let v = &a[#index]; #check })
            });
            quote!(v.as_array().is_some_and(|a| a.len() == #count #(&& #checks)*))
        }
        Value::Object(members) => {
            let count = members.len();
            let checks = sorted(members).into_iter().map(|(name, member)| {
                let check = equals(member);
                quote!(o.get(#name).is_some_and(|v| #check))
            });
            quote!(v.as_object().is_some_and(|o| o.len() == #count #(&& #checks)*))
        }
    }
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(byte) = u8::from_str_radix(&text[i + 1..i + 3], 16) {
                out.push(byte);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

/// Generates the validators of every definition of `schema` (`$defs`, draft-07
/// `definitions`, and `.` for the root when `root` is set), as items for one module.
pub fn generate(schema: &Value, file: &str, root: bool) -> Result<Validators, CodegenError> {
    let draft = match schema.get("$schema").and_then(Value::as_str) {
        Some(uri) if uri.contains("draft-04") || uri.contains("draft-06") || uri.contains("draft-07") => Draft::Legacy,
        _ => Draft::Modern,
    };
    let mut gen = Gen {
        doc: schema,
        file,
        draft,
        id: schema.get("$id").and_then(Value::as_str).map(str::to_owned),
        functions: BTreeMap::new(),
        used_names: BTreeSet::new(),
        queue: Vec::new(),
        items: Vec::new(),
        patterns: BTreeMap::new(),
        unresolved: BTreeSet::new(),
    };
    let mut checks = BTreeMap::new();
    for container in ["$defs", "definitions"] {
        if let Some(Value::Object(defs)) = schema.get(container) {
            for (name, _) in sorted(defs) {
                if checks.contains_key(name) {
                    continue;
                }
                let ident = gen.function(&format!("/{container}/{}", escape_pointer_token(name)), name);
                checks.insert(name.clone(), ident);
            }
        }
    }
    if root {
        let ident = gen.function("", "root");
        checks.insert(".".to_owned(), ident);
    }
    let mut functions = Vec::new();
    while let Some((pointer, ident)) = gen.queue.pop() {
        let node = schema
            .pointer(&pointer)
            .ok_or_else(|| gen.error(&pointer, "nothing at this location"))?;
        let body = gen.body(node, &pointer)?;
        let doc = format!(" The schema at `{pointer}`.");
        let public = checks.values().any(|c| *c == ident);
        let vis = if public { quote!(pub) } else { quote!() };
        functions.push((
            pointer.clone(),
            quote! {
                #[doc = #doc]
                #vis fn #ident(cx: &mut Cx, v: &Value, at: &Loc<'_>) -> bool {
                    let mark = cx.mark();
                    #body
                    cx.passed(mark)
                }
            },
        ));
    }
    // Deterministic order: by schema location.
    functions.sort_by(|a, b| a.0.cmp(&b.0));
    let table = checks.iter().map(|(name, ident)| quote!((#name, #ident as Check)));
    let functions = functions.into_iter().map(|(_, tokens)| tokens);
    let items = &gen.items;
    let unresolved: Vec<&String> = gen.unresolved.iter().collect();
    let tokens = quote! {
        use ::pilotage_types::validate::runtime::{Check, Cx, Loc, Why};
        use ::serde_json::Value;

        /// Every definition's check, sorted by definition (`.` is the document's root).
        pub static VALIDATORS: ::pilotage_types::validate::Validators =
            ::pilotage_types::validate::Validators::new(&[#(#table),*], &[#(#unresolved),*]);

        #(#items)*
        #(#functions)*
    };
    Ok(Validators {
        tokens,
        checks,
        unresolved: gen.unresolved.into_iter().collect(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::generate;

    fn error_of(schema: serde_json::Value) -> crate::CodegenError {
        generate(&schema, "test.json", false).expect_err("must be a generation error")
    }

    #[test]
    fn an_unsupported_keyword_is_an_error_naming_its_pointer() {
        for keyword in super::UNSUPPORTED {
            let error = error_of(json!({"$defs": {"a": {"type": "object", "properties": {"b": {*keyword: {}}}}}}));
            assert_eq!(error.pointer, format!("/$defs/a/properties/b/{keyword}"), "{keyword}");
            assert!(error.message.contains(keyword), "{error}");
        }
        let error = error_of(json!({"$defs": {"a": {"$id": "https://elsewhere.invalid/a"}}}));
        assert_eq!(error.pointer, "/$defs/a/$id");
        let error = error_of(json!({"$defs": {"a": {"$ref": "#anchor"}}}));
        assert_eq!(error.pointer, "/$defs/a/$ref");
        let error = error_of(json!({"$defs": {"a": {"$ref": "#/$defs/missing"}}}));
        assert!(error.message.contains("points to nothing"), "{error}");
        let error = error_of(
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"a": {"format": "email"}}}),
        );
        assert_eq!(error.pointer, "/definitions/a/format");
    }

    #[test]
    fn a_pattern_the_runtime_cannot_honour_is_an_error_naming_its_pointer() {
        for pattern in [
            r"\bword",
            r"(a)\1",
            r"(?<=a)b",
            r"\p{L}",
            "(unclosed",
            "a**",
            "[z-a]",
            "x{3,1}",
        ] {
            let error = error_of(json!({"$defs": {"a": {"pattern": pattern}}}));
            assert_eq!(error.pointer, "/$defs/a/pattern", "{pattern}");
            assert!(error.message.contains("pattern"), "{pattern}: {error}");
        }
        let error = error_of(json!({"$defs": {"a": {"patternProperties": {"(?<!x)y": {}}}}}));
        assert_eq!(error.pointer, "/$defs/a/patternProperties/(?<!x)y");
    }

    #[test]
    fn simple_patterns_become_sequences_and_others_programs() {
        for (pattern, form) in [
            (r"^[0-9]+\.[0-9]+$", "Sequence"),
            (r"^[^/]+/[^/]+$", "Sequence"),
            (r"^[a-f0-9]{64}$", "Sequence"),
            (r"^[a-z]+[a-c]$", "Program"),
            (r"^P(?!$)(T(?=[0-9]))?$", "Program"),
            (r"abc", "Program"),
        ] {
            let tokens = super::regex::compile(pattern).unwrap().to_string();
            assert!(tokens.contains(&format!("Pattern :: {form}")), "{pattern}: {tokens}");
        }
    }

    #[test]
    fn output_is_deterministic_and_every_def_has_a_check() {
        let schema =
            json!({"$defs": {"b": {"anyOf": [{"const": "x"}, {"type": "integer"}]}, "a": {"$ref": "#/$defs/b"}}});
        let first = generate(&schema, "t.json", false).unwrap();
        let second = generate(&schema, "t.json", false).unwrap();
        assert_eq!(first.tokens.to_string(), second.tokens.to_string());
        assert_eq!(first.checks.keys().collect::<Vec<_>>(), ["a", "b"]);
    }
}
