//! Serde helpers the generated types refer to (`#[serde(deserialize_with = "...")]`), for
//! members where presence or the form of a number matters. One implementation, used by every
//! generated module (Pilotage's and the peer schemas'); see `pilotage-codegen/src/postpass.rs`.

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer};

/// Deserializes a member that is present, even as `null`, to `Some`: with
/// `#[serde(default)]`, `None` then means absent and `Some(null)` present and null.
pub fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// Deserializes a JSON Schema `integer`: any number with a zero fractional part (`5.0` is an
/// integer to the schema, so the type accepts it too, as `5`).
pub fn integer<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let number = serde_json::Number::deserialize(deserializer)?;
    let value = match number.as_f64() {
        // Below 2^53 every integral float is exact.
        Some(float)
            if !number.is_i64()
                && !number.is_u64()
                && float.fract() == 0.0
                && float.abs() < 9_007_199_254_740_992.0 =>
        {
            if float < 0.0 {
                serde_json::Value::from(float as i64)
            } else {
                serde_json::Value::from(float as u64)
            }
        }
        _ => serde_json::Value::Number(number),
    };
    T::deserialize(value).map_err(D::Error::custom)
}

/// [`integer`] for an optional member.
pub fn optional_integer<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    integer(deserializer).map(Some)
}

/// Deserializes an open string enum of the generated types (see
/// `pilotage-codegen/src/enums.rs`): any string is accepted, a known value without
/// allocating (`From<&str>`), an unknown one kept as received (`From<String>`).
pub struct OpenEnumVisitor<T>(std::marker::PhantomData<T>);

impl<T> OpenEnumVisitor<T> {
    /// The visitor, for `deserializer.deserialize_str(...)`.
    pub const fn new() -> Self {
        Self(std::marker::PhantomData)
    }
}

impl<T> Default for OpenEnumVisitor<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> serde::de::Visitor<'_> for OpenEnumVisitor<T>
where
    T: for<'a> From<&'a str> + From<String>,
{
    type Value = T;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("a string")
    }

    fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<T, E> {
        Ok(T::from(value))
    }

    fn visit_string<E: serde::de::Error>(self, value: String) -> Result<T, E> {
        Ok(T::from(value))
    }
}

/// The error of `FromStr` / `TryFrom<&str>` on a closed generated enum (a binding-fixed
/// constant such as [`crate::GuidesTool`]): the string is not its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversionError(std::borrow::Cow<'static, str>);

impl std::fmt::Display for ConversionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConversionError {}

impl From<&'static str> for ConversionError {
    fn from(value: &'static str) -> Self {
        Self(value.into())
    }
}

impl From<String> for ConversionError {
    fn from(value: String) -> Self {
        Self(value.into())
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, Debug, PartialEq)]
    struct S {
        #[serde(deserialize_with = "super::integer")]
        n: u64,
        #[serde(default, deserialize_with = "super::optional_integer")]
        m: Option<i64>,
        #[serde(default, deserialize_with = "super::present")]
        v: Option<serde_json::Value>,
    }

    #[test]
    fn integral_floats_are_integers_and_present_null_is_some() {
        let s: S = serde_json::from_value(json!({"n": 5.0, "m": -2.0, "v": null})).unwrap();
        assert_eq!(
            s,
            S {
                n: 5,
                m: Some(-2),
                v: Some(serde_json::Value::Null)
            }
        );
        let absent: S = serde_json::from_value(json!({"n": 1})).unwrap();
        assert_eq!(absent.v, None);
        assert!(serde_json::from_value::<S>(json!({"n": 5.5})).is_err());
        assert!(serde_json::from_value::<S>(json!({"n": -1})).is_err());
    }
}
