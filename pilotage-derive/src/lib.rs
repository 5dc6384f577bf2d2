//! `#[derive(PilotageTool)]` (Part III 4.3 to 4.6, 5, 3.4): turns an annotated engine struct
//! into a loop tool whose MCP definition is conformant by construction. Use it through
//! `pilotage_types::PilotageTool`, which re-exports it beside the trait.
//!
//! The pipeline, after serde_derive: `ast` parses the input into a typed tree that keeps
//! spans (with `attr` reading `#[pilotage(...)]` and serde's renames), `valid` checks every
//! rule a struct can break and reports all violations at once, each on the offending token,
//! and `expand` writes the `PilotageTool` impl.

mod ast;
mod attr;
mod expand;
mod valid;

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

/// Derives `pilotage_types::PilotageTool`. See the `pilotage_types::PilotageTool` docs for
/// the container keys (`stage`, `name`, `language`, `catalog`, `execution = "both"`,
/// `destructive`, `idempotent`, `open_world`, `title`, `description`) and the field keys
/// (`program`, `program, language = "..."`).
#[proc_macro_derive(PilotageTool, attributes(pilotage))]
pub fn derive_pilotage_tool(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    ast::Container::from_ast(&input)
        .and_then(|container| valid::check(&container).map(|()| expand::expand(&container)))
        .unwrap_or_else(|error| {
            let mut tokens = error.into_compile_error();
            tokens.extend(fallback(&input));
            tokens
        })
        .into()
}

/// After an error, an impl of the trait so that the struct's uses (`with_execute_tool::<T>()`,
/// `T::tool_definition()`) do not add errors of their own: the crate does not compile, so
/// the bodies never run (as serde_derive and thiserror do).
fn fallback(input: &DeriveInput) -> proc_macro2::TokenStream {
    let ident = &input.ident;
    let (impl_generics, type_generics, where_clause) = input.generics.split_for_impl();
    quote::quote! {
        #[automatically_derived]
        impl #impl_generics ::pilotage_types::PilotageTool for #ident #type_generics #where_clause {
            fn tool_definition() -> &'static ::pilotage_types::ToolDefinition {
                ::std::unreachable!("the PilotageTool derive reported an error")
            }
            fn from_arguments(
                _: &::pilotage_types::__private::serde_json::Value,
            ) -> ::std::result::Result<Self, ::pilotage_types::ArgumentFault> {
                ::std::unreachable!("the PilotageTool derive reported an error")
            }
        }
    }
}
