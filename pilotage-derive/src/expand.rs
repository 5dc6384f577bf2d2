//! Code generation: the `PilotageTool` impl. Everything the struct says is put in a constant
//! `LoopToolSpec`; the definition is built from it and the struct's schemars schema once, on
//! first use, by `pilotage_types`' runtime.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::Container;
use crate::attr::Stage;

pub fn expand(container: &Container) -> TokenStream {
    let ident = container.ident;
    let attrs = &container.attrs;
    let stage = match attrs.stage.as_ref().map(|s| s.value) {
        Some(Stage::Validate) => quote!(Validate),
        Some(Stage::Execute) => quote!(Execute),
        _ => quote!(Trace),
    };
    let name = attrs.name.as_ref().map(|n| n.value.clone()).unwrap_or_default();
    let title = match &attrs.title {
        Some(title) => {
            let title = &title.value;
            quote!(::std::option::Option::Some(#title))
        }
        None => quote!(::std::option::Option::None),
    };
    let description = attrs
        .description
        .as_ref()
        .map_or_else(|| container.doc.clone(), |d| d.value.clone());
    let default_language = attrs.language.as_ref().map(|l| l.value.clone());
    let programs = container
        .fields
        .iter()
        .filter(|f| f.attrs.program.is_some())
        .map(|field| {
            let argument = &field.name;
            let language = field
                .attrs
                .language
                .as_ref()
                .map(|l| l.value.clone())
                .or_else(|| default_language.clone())
                .unwrap_or_default();
            quote!(::pilotage_types::__private::ProgramSpec { argument: #argument, language: #language })
        });
    let languages = default_language.iter();
    let members = container.fields.iter().map(|f| &f.name);
    let catalog = attrs.catalog.is_some();
    let execution_both = attrs
        .execution
        .as_ref()
        .is_some_and(|e| e.value == pilotage_spec::EXECUTION_BOTH);
    let destructive = attrs.destructive.is_some();
    let idempotent = attrs.idempotent.is_some();
    let open_world = attrs.open_world.is_some();
    quote! {
        const _: () = {
            const SPEC: ::pilotage_types::__private::LoopToolSpec = ::pilotage_types::__private::LoopToolSpec {
                stage: ::pilotage_types::Stage::#stage,
                name: #name,
                title: #title,
                description: #description,
                programs: &[#(#programs),*],
                languages: &[#(#languages),*],
                catalog: #catalog,
                execution_both: #execution_both,
                destructive: #destructive,
                read_only: false,
                idempotent: #idempotent,
                open_world: #open_world,
                members: &[#(#members),*],
            };
            fn state() -> &'static ::pilotage_types::__private::LoopToolState {
                static STATE: ::std::sync::OnceLock<::pilotage_types::__private::LoopToolState> = ::std::sync::OnceLock::new();
                STATE.get_or_init(|| {
                    // The struct's schema, from schemars in this (the user's) crate.
                    let raw = ::schemars::generate::SchemaSettings::draft2020_12()
                        .with(|settings| settings.inline_subschemas = true)
                        .for_deserialize()
                        .into_generator()
                        .into_root_schema_for::<#ident>()
                        .to_value();
                    ::pilotage_types::__private::LoopToolState::new(raw, SPEC)
                })
            }
            #[automatically_derived]
            impl ::pilotage_types::PilotageTool for #ident {
                fn tool_definition() -> &'static ::pilotage_types::ToolDefinition {
                    &state().definition
                }
                fn from_arguments(
                    arguments: &::pilotage_types::__private::serde_json::Value,
                ) -> ::std::result::Result<Self, ::pilotage_types::ArgumentFault> {
                    state().from_arguments::<Self>(arguments)
                }
                fn loop_tool_state() -> ::std::option::Option<&'static ::pilotage_types::__private::LoopToolState> {
                    ::std::option::Option::Some(state())
                }
            }
        };
    }
}
