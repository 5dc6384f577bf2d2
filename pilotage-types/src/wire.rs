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
