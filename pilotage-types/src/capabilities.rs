//! The effective capability map of a Language (Part II 4.2, through the schema's
//! `CapabilityDeclaration`): the Language's own declaration, else the server's. Read by the
//! access tools (sub-feature gating, Part III 4.1 and 4.2) and by clients.

use crate::{CapabilityDeclaration, CapabilityValue, LanguageEntry, Manifest};

/// A capability of Part II 4.2, as a member of `CapabilityDeclaration`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Capability {
    /// `guides`: the learn stage.
    Guides,
    /// `catalog`: the lookup stage.
    Catalog,
    /// `validate`.
    Validate,
    /// `plan`.
    Plan,
    /// `execute`.
    Execute,
    /// `trace_fetch`.
    TraceFetch,
}

impl CapabilityDeclaration {
    fn value(&self, capability: Capability) -> Option<&CapabilityValue> {
        match capability {
            Capability::Guides => self.guides.as_ref(),
            Capability::Catalog => self.catalog.as_ref(),
            Capability::Validate => self.validate.as_ref(),
            Capability::Plan => self.plan.as_ref(),
            Capability::Execute => self.execute.as_ref(),
            Capability::TraceFetch => self.trace_fetch.as_ref(),
        }
    }

    /// Whether `capability` is declared (`true` or a sub-feature object).
    pub fn declares(&self, capability: Capability) -> bool {
        matches!(
            self.value(capability),
            Some(CapabilityValue::Boolean(true) | CapabilityValue::CapabilitySettings(_))
        )
    }

    /// Whether the sub-feature `name` of `capability` is declared `true` (`search`,
    /// `changed_since`, `topic_fetch`, `test_run`, `idempotency`, `narrate`, or a later one).
    pub fn declares_sub_feature(&self, capability: Capability, name: &str) -> bool {
        let Some(CapabilityValue::CapabilitySettings(settings)) = self.value(capability) else {
            return false;
        };
        let known = match name {
            "search" => settings.search,
            "changed_since" => settings.changed_since,
            "topic_fetch" => settings.topic_fetch,
            "test_run" => settings.test_run,
            "idempotency" => settings.idempotency,
            "narrate" => settings.narrate,
            other => settings.extra.get(other).and_then(serde_json::Value::as_bool),
        };
        known == Some(true)
    }
}

impl Manifest {
    /// The Language entry named `name`.
    pub fn language(&self, name: &str) -> Option<&LanguageEntry> {
        self.languages.iter().find(|l| l.name.0 == name)
    }

    /// The effective capability declaration of `language` (Part II 4.2): its own, else the
    /// server's.
    pub fn effective_capabilities<'a>(&'a self, language: &'a LanguageEntry) -> Option<&'a CapabilityDeclaration> {
        language.capabilities.as_ref().or(self.capabilities.as_ref())
    }
}
