//! [`Number`]: the type of a JSON Schema `number` in generated types, which keeps the form a
//! number was written in (`2` stays `2`, `2.0` stays `2.0`) through parse and serialize.
//!
//! An `f64` member would read `2` and write `2.0`: equal as a JSON Schema number, but not the
//! same text, and a document that passes through a typed engine should come back as it went in.
//! `serde_json::Number` keeps the form too, but it is neither `Copy` nor ordered, and compares
//! `2` and `2.0` unequal where JSON Schema (`enum`, `const`, `uniqueItems`) counts them one
//! value; [`Number`] has `f64`'s traits and JSON Schema's equality. `pilotage-codegen` types
//! every `number` member (and `format: float` / `double`) as `pilotage_types::Number`
//! (`pilotage-codegen/src/postpass.rs`, `json_numbers`).

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A JSON number as it was written: a non-negative integer, a negative integer, or a float.
///
/// Built from any primitive number (`Number::from(2)`, `Number::from(2.5)`, `2.5.into()`), from
/// a `serde_json::Number`, or parsed from JSON text (`"2.5e3".parse()`). Read with
/// [`as_f64`](Number::as_f64), [`as_i64`](Number::as_i64) and [`as_u64`](Number::as_u64).
///
/// - **Serialization keeps the form**: an integer is written as an integer, a float as a float
///   (`2.0` as `2.0`), as `serde_json::Value` writes it, so a typed round trip gives back an
///   equal `Value`.
/// - **Equality and order are numeric**, as in JSON Schema: `Number::from(2) ==
///   Number::from(2.0)`, and integers beyond 2^53 compare exactly with floats.
///   [`is_f64`](Number::is_f64) tells the two forms apart.
/// - A non-finite float (`f64::NAN`, infinities) can be stored, as in an `f64`, but JSON has no
///   such number: `serde_json` writes it as `null`, which a `number` schema refuses.
///
/// ```
/// use pilotage_types::Number;
///
/// let two: Number = serde_json::from_str("2")?;
/// assert_eq!(serde_json::to_string(&two)?, "2");
/// let float: Number = serde_json::from_str("2.0")?;
/// assert_eq!(serde_json::to_string(&float)?, "2.0");
/// assert_eq!(two, float, "the same JSON Schema number");
/// assert!(float.is_f64() && !two.is_f64());
/// assert_eq!(two.as_f64() + 0.5, 2.5);
/// assert!(Number::from(u64::MAX) > Number::from(1.8e19));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct Number(Repr);

#[derive(Clone, Copy)]
enum Repr {
    /// A non-negative integer (as `serde_json` keeps them: never a `NegInt` of 0 or more).
    PosInt(u64),
    /// A negative integer.
    NegInt(i64),
    Float(f64),
}

impl Number {
    /// An integer.
    pub const fn from_u64(value: u64) -> Self {
        Self(Repr::PosInt(value))
    }

    /// An integer (non-negative ones are stored as [`from_u64`](Number::from_u64) stores them).
    pub const fn from_i64(value: i64) -> Self {
        if value < 0 {
            Self(Repr::NegInt(value))
        } else {
            Self(Repr::PosInt(value as u64))
        }
    }

    /// A float, written as a float (`2.0` serializes as `2.0`).
    pub const fn from_f64(value: f64) -> Self {
        Self(Repr::Float(value))
    }

    /// The number as an `f64` (an integer beyond 2^53 rounds to the nearest `f64`).
    pub fn as_f64(self) -> f64 {
        match self.0 {
            Repr::PosInt(n) => n as f64,
            Repr::NegInt(n) => n as f64,
            Repr::Float(f) => f,
        }
    }

    /// The number as an `i64` when it was written as an integer that fits.
    pub fn as_i64(self) -> Option<i64> {
        match self.0 {
            Repr::PosInt(n) => i64::try_from(n).ok(),
            Repr::NegInt(n) => Some(n),
            Repr::Float(_) => None,
        }
    }

    /// The number as a `u64` when it was written as a non-negative integer.
    pub fn as_u64(self) -> Option<u64> {
        match self.0 {
            Repr::PosInt(n) => Some(n),
            Repr::NegInt(_) | Repr::Float(_) => None,
        }
    }

    /// Whether the number was written as an integer that fits an `i64`.
    pub fn is_i64(self) -> bool {
        self.as_i64().is_some()
    }

    /// Whether the number was written as a non-negative integer.
    pub fn is_u64(self) -> bool {
        matches!(self.0, Repr::PosInt(_))
    }

    /// Whether the number was written as a float (`2.0`, `1e3`, `0.5`), whatever its value.
    pub fn is_f64(self) -> bool {
        matches!(self.0, Repr::Float(_))
    }

    /// Whether the number is an integer by JSON Schema's rule: written as one, or a float with
    /// no fractional part (`2.0`).
    pub fn is_integer(self) -> bool {
        match self.0 {
            Repr::PosInt(_) | Repr::NegInt(_) => true,
            Repr::Float(f) => f.is_finite() && f.fract() == 0.0,
        }
    }

    /// The integer as an `i128` (every `u64` and `i64` fits).
    fn integer(self) -> Option<i128> {
        match self.0 {
            Repr::PosInt(n) => Some(i128::from(n)),
            Repr::NegInt(n) => Some(i128::from(n)),
            Repr::Float(_) => None,
        }
    }
}

/// An integer against a float, exactly (no rounding of either side).
fn cmp_integer_float(integer: i128, float: f64) -> Option<Ordering> {
    const TWO_POW_127: f64 = 1.7014118346046923e38;
    if float.is_nan() {
        None
    } else if float >= TWO_POW_127 {
        Some(Ordering::Less)
    } else if float < -TWO_POW_127 {
        Some(Ordering::Greater)
    } else {
        // |float| < 2^127: its floor is an exact i128.
        let floor = float.floor();
        match integer.cmp(&(floor as i128)) {
            Ordering::Equal if float != floor => Some(Ordering::Less),
            other => Some(other),
        }
    }
}

impl PartialEq for Number {
    fn eq(&self, other: &Self) -> bool {
        self.partial_cmp(other) == Some(Ordering::Equal)
    }
}

impl PartialOrd for Number {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        match (self.integer(), other.integer()) {
            (Some(a), Some(b)) => Some(a.cmp(&b)),
            (Some(a), None) => cmp_integer_float(a, other.as_f64()),
            (None, Some(b)) => cmp_integer_float(b, self.as_f64()).map(Ordering::reverse),
            (None, None) => self.as_f64().partial_cmp(&other.as_f64()),
        }
    }
}

impl Default for Number {
    /// The integer `0`.
    fn default() -> Self {
        Self::from_u64(0)
    }
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Number({self})")
    }
}

impl fmt::Display for Number {
    /// As JSON writes it (`2`, `-3`, `2.0`, `1e300`); a non-finite float as `f64` displays it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Repr::PosInt(n) => fmt::Display::fmt(&n, f),
            Repr::NegInt(n) => fmt::Display::fmt(&n, f),
            Repr::Float(x) => match serde_json::Number::from_f64(x) {
                Some(json) => fmt::Display::fmt(&json, f),
                None => fmt::Display::fmt(&x, f),
            },
        }
    }
}

/// Why a text is no JSON number ([`Number`]'s `FromStr`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseNumberError {
    text: String,
}

impl fmt::Display for ParseNumberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} is not a JSON number", self.text)
    }
}

impl std::error::Error for ParseNumberError {}

impl FromStr for Number {
    type Err = ParseNumberError;

    /// Parses JSON number syntax exactly (`2`, `-0.5`, `1e3`; no surrounding space, no `+`, no
    /// `NaN`). An integer beyond the 64-bit range is read as a float.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = || ParseNumberError { text: text.to_owned() };
        if text.trim() != text || text.is_empty() {
            return Err(error());
        }
        serde_json::from_str::<serde_json::Number>(text)
            .map(Number::from)
            .map_err(|_| error())
    }
}

impl Serialize for Number {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Repr::PosInt(n) => serializer.serialize_u64(n),
            Repr::NegInt(n) => serializer.serialize_i64(n),
            Repr::Float(f) => serializer.serialize_f64(f),
        }
    }
}

impl<'de> Deserialize<'de> for Number {
    /// Any number of a self-describing format, its form kept. Read through
    /// `serde_json::Number`, so serde_json's `arbitrary_precision` feature (which another crate
    /// of the build may turn on) changes nothing here.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        serde_json::Number::deserialize(deserializer).map(Number::from)
    }
}

impl From<serde_json::Number> for Number {
    fn from(number: serde_json::Number) -> Self {
        if let Some(n) = number.as_u64() {
            Self::from_u64(n)
        } else if let Some(n) = number.as_i64() {
            Self::from_i64(n)
        } else {
            // Without `arbitrary_precision` every other number is an f64; with it, a text that
            // fits no 64-bit integer (a bignum, or written with a fraction or exponent).
            Self::from_f64(number.as_f64().unwrap_or(f64::NAN))
        }
    }
}

impl From<Number> for serde_json::Value {
    /// The number as `serde_json` holds it; a non-finite float is `null`, as serde_json writes it.
    fn from(number: Number) -> Self {
        match number.0 {
            Repr::PosInt(n) => n.into(),
            Repr::NegInt(n) => n.into(),
            Repr::Float(f) => f.into(),
        }
    }
}

impl From<Number> for f64 {
    /// [`Number::as_f64`].
    fn from(number: Number) -> Self {
        number.as_f64()
    }
}

impl From<f64> for Number {
    fn from(value: f64) -> Self {
        Self::from_f64(value)
    }
}

impl From<f32> for Number {
    /// The `f32` as the `f64` of its shortest decimal text (`0.1f32` is `0.1`, not
    /// `0.10000000149011612`), which is the number a reader of the `f32` means.
    fn from(value: f32) -> Self {
        let shortest: f64 = value.to_string().parse().unwrap_or(f64::from(value));
        Self::from_f64(shortest)
    }
}

macro_rules! from_unsigned {
    ($($t:ty),*) => {$(
        impl From<$t> for Number {
            fn from(value: $t) -> Self {
                Self::from_u64(value as u64)
            }
        }
    )*};
}
macro_rules! from_signed {
    ($($t:ty),*) => {$(
        impl From<$t> for Number {
            fn from(value: $t) -> Self {
                Self::from_i64(value as i64)
            }
        }
    )*};
}
from_unsigned!(u8, u16, u32, u64, usize);
from_signed!(i8, i16, i32, i64, isize);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn round_trip(text: &str) -> String {
        let number: Number = serde_json::from_str(text).unwrap();
        serde_json::to_string(&number).unwrap()
    }

    #[test]
    fn the_written_form_survives_a_round_trip() {
        for text in [
            "2",
            "0",
            "-3",
            "2.0",
            "-0.0",
            "0.5",
            "1e300",
            "-1.5e-7",
            "18446744073709551615",
            "-9223372036854775808",
        ] {
            let back = round_trip(text);
            assert_eq!(
                serde_json::from_str::<Value>(&back).unwrap(),
                serde_json::from_str::<Value>(text).unwrap(),
                "{text} came back as {back}"
            );
        }
        assert_eq!(round_trip("2"), "2");
        assert_eq!(round_trip("2.0"), "2.0");
        assert_eq!(
            round_trip("1E3"),
            "1000.0",
            "an exponent is a float, as serde_json reads it"
        );
        // Beyond u64: a float, as serde_json::Value holds it.
        assert_eq!(
            serde_json::from_str::<Number>("18446744073709551616").unwrap(),
            Number::from(18446744073709551616.0)
        );
        let value = json!({"a": 2, "b": 2.0, "c": -1});
        let typed: std::collections::BTreeMap<String, Number> = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(serde_json::to_value(&typed).unwrap(), value);
        assert_eq!(Value::from(typed["b"]), json!(2.0));
    }

    #[test]
    fn equality_and_order_are_numeric_and_exact() {
        assert_eq!(Number::from(2), Number::from(2.0));
        assert_ne!(Number::from(2), Number::from(2.5));
        assert!(Number::from(2) < Number::from(2.5));
        assert!(Number::from(3) > Number::from(2.5));
        assert!(Number::from(-3) < Number::from(-2.5));
        assert!(Number::from(-2) > Number::from(-2.5));
        // 2^53 + 1 is no f64: an exact comparison tells it from 2^53.
        let big = Number::from(9_007_199_254_740_993u64);
        assert!(big > Number::from(9_007_199_254_740_992.0));
        assert_ne!(big, Number::from(9_007_199_254_740_992.0));
        assert!(Number::from(u64::MAX) < Number::from(1e20));
        assert!(Number::from(i64::MIN) > Number::from(-1e19));
        assert!(Number::from(0) < Number::from(f64::INFINITY));
        assert!(Number::from(0) > Number::from(f64::NEG_INFINITY));
        assert_eq!(Number::from(1).partial_cmp(&Number::from(f64::NAN)), None);
        assert_eq!(Number::from(f64::NAN).partial_cmp(&Number::from(1)), None);
        assert_ne!(Number::from(f64::NAN), Number::from(f64::NAN));
        assert_eq!(Number::from(-5i64), Number::from_i64(-5));
        assert!(
            Number::from(5i64).is_u64(),
            "a non-negative i64 is kept as serde_json keeps it"
        );
    }

    #[test]
    fn reading_and_parsing() {
        let n = Number::from(7u8);
        assert_eq!(
            (n.as_u64(), n.as_i64(), n.as_f64(), n.is_f64()),
            (Some(7), Some(7), 7.0, false)
        );
        let f = Number::from(7.5);
        assert_eq!(
            (f.as_u64(), f.as_i64(), f.is_f64(), f.is_integer()),
            (None, None, true, false)
        );
        assert!(Number::from(7.0).is_integer());
        assert_eq!(Number::from(u64::MAX).as_i64(), None);
        assert_eq!(Number::from(0.1f32).to_string(), "0.1");
        assert_eq!(Number::from(2.0).to_string(), "2.0");
        assert_eq!(Number::from(-4).to_string(), "-4");
        assert_eq!(format!("{:?}", Number::from(2.5)), "Number(2.5)");
        assert_eq!(Number::default(), Number::from(0));
        assert_eq!("2".parse::<Number>().unwrap().to_string(), "2");
        assert!("2.50".parse::<Number>().unwrap().is_f64());
        for bad in ["", " 2", "2 ", "+2", "NaN", "inf", "1.", ".5", "0x10", "true", "\"2\""] {
            let error = bad.parse::<Number>().unwrap_err();
            assert!(error.to_string().contains("is not a JSON number"), "{bad}: {error}");
        }
        assert!(serde_json::from_str::<Number>("\"2\"").is_err());
        assert!(serde_json::from_value::<Number>(Value::Null).is_err());
    }
}
