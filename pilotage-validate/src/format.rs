//! The `format` keyword's assertions: one checker per format JSON Schema defines, for the
//! validators `cargo xtask regen` generates. A generated validator calls the format's free
//! function on a string instance when format assertion is on (draft-07 by default, as
//! `jsonschema` does; draft 2020-12 with the format-assertion vocabulary): [`date_time`],
//! [`hostname`], ..., and `idn::hostname` and `idn::email` for the internationalized formats.
//! [`Format`] names the formats ([`Format::from_name`]) and checks by name ([`Format::check`]).
//!
//! Each checker encodes the grammar of the RFC the specification names, with a comment citing
//! the rule; the official JSON Schema Test Suite's `optional/format` files of draft 7 and draft
//! 2020-12 are the acceptance test (`pilotage-types/tests/formats.rs`). Every checker is total: any `&str`
//! gives a verdict, without a panic or recursion, in time about linear in the input (a
//! U-label's Punycode, quadratic, only runs within the DNS length limits).
//!
//! Where a format's standard leaves a choice, the checker takes the newer text and says so:
//! `relative-json-pointer` accepts draft 2020-12's index manipulation (`0+1#`), and `regex`
//! checks ECMA-262 syntax with the `u` flag (ES2025, including `(?i:...)` modifiers and
//! duplicate group names in different alternatives).
//!
//! # Dependencies
//!
//! None beyond the crate's own: the Unicode data the checkers need (IDNA2008's derived
//! property, Bidi classes, scripts, joining types and NFC for `hostname`'s A-labels and for
//! `idn-hostname` / `idn-email`; the `\p{..}` names and the `ID_Start`/`ID_Continue` sets of
//! `regex`) is a checked-in table generated from ICU4X (`format/tables.rs`), which a test
//! compares with ICU4X for every code point. Compiled on its own it takes about 0.2 s, so the
//! IDN formats are not behind a feature: every generated validator compiles with them.

mod idna;
#[rustfmt::skip]
mod tables;
#[cfg(test)]
mod generate;
mod unicode;

use std::collections::HashMap;

/// A format JSON Schema defines (draft 2020-12's list; draft-07's is the same set minus
/// `duration` and `uuid`, which jsonschema 0.61 asserts from draft 2019-09 on only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// `date`: RFC 3339 `full-date` (`2024-02-29`).
    Date,
    /// `date-time`: RFC 3339 `date-time` (`2024-02-29T12:00:00Z`).
    DateTime,
    /// `time`: RFC 3339 `full-time` (`12:00:00+01:00`), offset required.
    Time,
    /// `duration`: RFC 3339 Appendix A `duration` (`P1DT2H`).
    Duration,
    /// `email`: RFC 5321 `Mailbox` (ASCII).
    Email,
    /// `idn-email`: RFC 6531 `Mailbox` (UTF-8 local part, IDNA2008 domain). Checked with the
    /// `idn` feature only.
    IdnEmail,
    /// `hostname`: RFC 1123 host name, every A-label (`xn--...`) a valid IDNA2008 label.
    Hostname,
    /// `idn-hostname`: IDNA2008 domain name (RFC 5890 to 5893) of U-labels and A-labels.
    /// Checked with the `idn` feature only.
    IdnHostname,
    /// `ipv4`: RFC 2673 dotted quad, no leading zeros.
    Ipv4,
    /// `ipv6`: RFC 4291 section 2.2 text form, embedded IPv4 allowed, no zone identifier.
    Ipv6,
    /// `uri`: RFC 3986 `URI` (absolute, fragment allowed).
    Uri,
    /// `uri-reference`: RFC 3986 `URI-reference`.
    UriReference,
    /// `iri`: RFC 3987 `IRI`.
    Iri,
    /// `iri-reference`: RFC 3987 `IRI-reference`.
    IriReference,
    /// `uri-template`: RFC 6570 `URI-Template` (level 4 syntax).
    UriTemplate,
    /// `json-pointer`: RFC 6901 `json-pointer`.
    JsonPointer,
    /// `relative-json-pointer`: a Relative JSON Pointer (draft-bhutton-relative-json-pointer-00).
    RelativeJsonPointer,
    /// `regex`: an ECMA-262 regular expression (syntax with the `u` flag).
    Regex,
    /// `uuid`: RFC 4122 hyphenated form, 8-4-4-4-12 hexadecimal digits, any case.
    Uuid,
}

impl Format {
    /// Every format, in declaration order.
    pub const ALL: &'static [Format] = &[
        Format::Date,
        Format::DateTime,
        Format::Time,
        Format::Duration,
        Format::Email,
        Format::IdnEmail,
        Format::Hostname,
        Format::IdnHostname,
        Format::Ipv4,
        Format::Ipv6,
        Format::Uri,
        Format::UriReference,
        Format::Iri,
        Format::IriReference,
        Format::UriTemplate,
        Format::JsonPointer,
        Format::RelativeJsonPointer,
        Format::Regex,
        Format::Uuid,
    ];

    /// The format of a `format` keyword's value (`"date-time"` gives [`Format::DateTime`]);
    /// `None` for a name JSON Schema does not define (such formats annotate only).
    pub fn from_name(name: &str) -> Option<Format> {
        Self::ALL.iter().copied().find(|format| format.name() == name)
    }

    /// The format's name as a schema writes it (`"date-time"`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Date => "date",
            Format::DateTime => "date-time",
            Format::Time => "time",
            Format::Duration => "duration",
            Format::Email => "email",
            Format::IdnEmail => "idn-email",
            Format::Hostname => "hostname",
            Format::IdnHostname => "idn-hostname",
            Format::Ipv4 => "ipv4",
            Format::Ipv6 => "ipv6",
            Format::Uri => "uri",
            Format::UriReference => "uri-reference",
            Format::Iri => "iri",
            Format::IriReference => "iri-reference",
            Format::UriTemplate => "uri-template",
            Format::JsonPointer => "json-pointer",
            Format::RelativeJsonPointer => "relative-json-pointer",
            Format::Regex => "regex",
            Format::Uuid => "uuid",
        }
    }

    /// Whether `s` is valid for this format, by the format's free function ([`date_time`], ...).
    /// Total: never panics, whatever `s` holds.
    pub fn check(self, s: &str) -> bool {
        match self {
            Format::Date => date(s),
            Format::DateTime => date_time(s),
            Format::Time => time(s),
            Format::Duration => duration(s),
            Format::Email => email(s),
            Format::IdnEmail => idn::email(s),
            Format::IdnHostname => idn::hostname(s),
            Format::Hostname => hostname(s),
            Format::Ipv4 => ipv4(s),
            Format::Ipv6 => ipv6(s),
            Format::Uri => uri(s),
            Format::UriReference => uri_reference(s),
            Format::Iri => iri(s),
            Format::IriReference => iri_reference(s),
            Format::UriTemplate => uri_template(s),
            Format::JsonPointer => json_pointer(s),
            Format::RelativeJsonPointer => relative_json_pointer(s),
            Format::Regex => regex(s),
            Format::Uuid => uuid(s),
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

// ---------------------------------------------------------------------------------------------
// The checkers generated validators call, one per format.

/// `date`: RFC 3339 `full-date` ([`Format::Date`]).
pub fn date(s: &str) -> bool {
    is_date(s.as_bytes())
}

/// `date-time`: RFC 3339 `date-time` ([`Format::DateTime`]).
pub fn date_time(s: &str) -> bool {
    is_date_time(s.as_bytes())
}

/// `time`: RFC 3339 `full-time` ([`Format::Time`]).
pub fn time(s: &str) -> bool {
    is_time(s.as_bytes())
}

/// `duration`: RFC 3339 Appendix A `duration` ([`Format::Duration`]).
pub fn duration(s: &str) -> bool {
    is_duration(s.as_bytes())
}

/// `email`: RFC 5321 `Mailbox`, ASCII ([`Format::Email`]).
pub fn email(s: &str) -> bool {
    is_email(s, false)
}

/// `hostname`: RFC 1123 host name, every A-label a valid IDNA2008 label ([`Format::Hostname`]).
pub fn hostname(s: &str) -> bool {
    idna::is_hostname(s)
}

/// `hostname` of draft-04 and draft-06: RFC 1034 section 3.1 labels (a leading digit allowed,
/// RFC 1123), with no IDNA2008 rule (`ab--cd.example` is one; draft-07 added RFC 5891's).
pub fn hostname_rfc1034(s: &str) -> bool {
    idna::is_ldh_hostname(s)
}

/// `ipv4`: RFC 2673 dotted quad ([`Format::Ipv4`]).
pub fn ipv4(s: &str) -> bool {
    is_ipv4(s)
}

/// `ipv6`: RFC 4291 section 2.2 text form ([`Format::Ipv6`]).
pub fn ipv6(s: &str) -> bool {
    is_ipv6(s)
}

/// `uri`: RFC 3986 `URI` ([`Format::Uri`]).
pub fn uri(s: &str) -> bool {
    is_uri(s, false, false)
}

/// `uri-reference`: RFC 3986 `URI-reference` ([`Format::UriReference`]).
pub fn uri_reference(s: &str) -> bool {
    is_uri(s, false, true)
}

/// `iri`: RFC 3987 `IRI` ([`Format::Iri`]).
pub fn iri(s: &str) -> bool {
    is_uri(s, true, false)
}

/// `iri-reference`: RFC 3987 `IRI-reference` ([`Format::IriReference`]).
pub fn iri_reference(s: &str) -> bool {
    is_uri(s, true, true)
}

/// `uri-template`: RFC 6570 `URI-Template` ([`Format::UriTemplate`]).
pub fn uri_template(s: &str) -> bool {
    is_uri_template(s)
}

/// `json-pointer`: RFC 6901 `json-pointer` ([`Format::JsonPointer`]).
pub fn json_pointer(s: &str) -> bool {
    is_json_pointer(s)
}

/// `relative-json-pointer`: a Relative JSON Pointer ([`Format::RelativeJsonPointer`]).
pub fn relative_json_pointer(s: &str) -> bool {
    is_relative_json_pointer(s)
}

/// `regex`: an ECMA-262 regular expression, `u` flag syntax ([`Format::Regex`]).
pub fn regex(s: &str) -> bool {
    is_regex(s)
}

/// `uuid`: RFC 4122 hyphenated form ([`Format::Uuid`]).
pub fn uuid(s: &str) -> bool {
    is_uuid(s.as_bytes())
}

/// The internationalized formats: IDNA2008 host names and RFC 6531 e-mail addresses.
pub mod idn {
    /// `idn-hostname`: an IDNA2008 domain name (RFC 5890 to 5893) of U-labels and A-labels,
    /// separated by `.` or another full stop of RFC 3490 section 3.1
    /// ([`Format::IdnHostname`](super::Format::IdnHostname)).
    pub fn hostname(s: &str) -> bool {
        super::idna::is_idn_hostname(s)
    }

    /// `idn-email`: RFC 6531 `Mailbox`, a UTF-8 local part and an IDNA2008 domain
    /// ([`Format::IdnEmail`](super::Format::IdnEmail)).
    pub fn email(s: &str) -> bool {
        super::is_email(s, true)
    }
}
// ---------------------------------------------------------------------------------------------
// Dates and times: RFC 3339 section 5.6 (ABNF), with the restrictions of section 5.7.

/// The value of `bytes` if it is one or more ASCII digits (at most 9, so no overflow).
fn digits(bytes: &[u8]) -> Option<u32> {
    if bytes.is_empty() || bytes.len() > 9 || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(bytes.iter().fold(0, |value, &b| value * 10 + u32::from(b - b'0')))
}

/// RFC 3339 Appendix C: a leap year is divisible by 4, and not by 100 unless by 400.
fn is_leap_year(year: u32) -> bool {
    year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400))
}

/// `full-date = date-fullyear "-" date-month "-" date-mday`: `4DIGIT "-" 2DIGIT "-" 2DIGIT`,
/// month 01-12, day 01 to the month's length (section 5.7, leap years by Appendix C).
fn is_date(b: &[u8]) -> bool {
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let (Some(year), Some(month), Some(day)) = (digits(&b[0..4]), digits(&b[5..7]), digits(&b[8..10])) else {
        return false;
    };
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// `full-time = partial-time time-offset`, where
/// `partial-time = time-hour ":" time-minute ":" time-second [time-secfrac]`,
/// `time-secfrac = "." 1*DIGIT`, `time-offset = "Z" / time-numoffset`,
/// `time-numoffset = ("+" / "-") time-hour ":" time-minute`; hour 00-23, minute 00-59,
/// second 00-60, `T` and `Z` case-insensitive (section 5.6's note). Second 60 (a leap second,
/// section 5.7) only at 23:59 UTC, the local time less its offset.
fn is_time(b: &[u8]) -> bool {
    if b.len() < 9 || b[2] != b':' || b[5] != b':' {
        return false;
    }
    let (Some(hour), Some(minute), Some(second)) = (digits(&b[0..2]), digits(&b[3..5]), digits(&b[6..8])) else {
        return false;
    };
    if hour > 23 || minute > 59 || second > 60 {
        return false;
    }
    let mut i = 8;
    if b[i] == b'.' {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    let offset_minutes: i64 = match b.get(i) {
        Some(b'Z' | b'z') if i + 1 == b.len() => 0,
        Some(&sign @ (b'+' | b'-')) => {
            let offset = &b[i + 1..];
            if offset.len() != 5 || offset[2] != b':' {
                return false;
            }
            let (Some(oh), Some(om)) = (digits(&offset[0..2]), digits(&offset[3..5])) else {
                return false;
            };
            if oh > 23 || om > 59 {
                return false;
            }
            let minutes = i64::from(oh * 60 + om);
            if sign == b'+' {
                minutes
            } else {
                -minutes
            }
        }
        _ => return false,
    };
    if second == 60 {
        let utc = (i64::from(hour * 60 + minute) - offset_minutes).rem_euclid(24 * 60);
        return utc == 23 * 60 + 59;
    }
    true
}

/// `date-time = full-date "T" full-time` (`T` case-insensitive).
fn is_date_time(b: &[u8]) -> bool {
    b.len() > 11 && matches!(b[10], b'T' | b't') && is_date(&b[..10]) && is_time(&b[11..])
}

/// RFC 3339 Appendix A:
/// ```text
/// dur-second = 1*DIGIT "S"            dur-day   = 1*DIGIT "D"
/// dur-minute = 1*DIGIT "M" [dur-second]  dur-week  = 1*DIGIT "W"
/// dur-hour   = 1*DIGIT "H" [dur-minute]  dur-month = 1*DIGIT "M" [dur-day]
/// dur-time   = "T" (dur-hour / dur-minute / dur-second)
/// dur-year   = 1*DIGIT "Y" [dur-month]
/// dur-date   = (dur-day / dur-month / dur-year) [dur-time]
/// duration   = "P" (dur-date / dur-time / dur-week)
/// ```
/// So the date units are a run of consecutive units of `Y M D`, the time units a non-empty run
/// of `H M S` after `T`, and a week stands alone.
fn is_duration(b: &[u8]) -> bool {
    if b.first() != Some(&b'P') {
        return false;
    }
    // One pass: each unit must directly follow the previous one of its part (`Y M D`, then
    // `H M S` after `T`); a week is the only unit.
    let mut in_time = false;
    let mut last: Option<u8> = None;
    let (mut units, mut time_units) = (0, 0);
    let mut week = false;
    let mut i = 1;
    while let Some(&c) = b.get(i) {
        if week {
            return false;
        }
        if c == b'T' {
            if in_time {
                return false;
            }
            in_time = true;
            last = None;
            i += 1;
            continue;
        }
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        let Some(&unit) = b.get(i).filter(|_| i > start) else {
            return false;
        };
        let position = match (in_time, unit) {
            (false, b'W') if units == 0 => {
                week = true;
                0
            }
            (false, b'Y') | (true, b'H') => 0,
            (_, b'M') => 1,
            (false, b'D') | (true, b'S') => 2,
            _ => return false,
        };
        if !week && last.is_some_and(|previous| previous + 1 != position) {
            return false;
        }
        last = Some(position);
        units += 1;
        time_units += usize::from(in_time);
        i += 1;
    }
    units > 0 && (!in_time || time_units > 0)
}

// ---------------------------------------------------------------------------------------------
// IP addresses.

/// RFC 2673 section 3.2 `dotted-quad`: four `decbyte`s, each 0-255 in decimal with no leading
/// zero (as JSON Schema's `ipv4` reads it: no `inet_aton` shorthands, octal or hexadecimal).
fn is_ipv4(s: &str) -> bool {
    // One pass over the bytes (the `split('.')` and per-part parse it replaced took four times
    // jsonschema's time on the suite's `ipv4` group; it is the tests' reference).
    let b = s.as_bytes();
    let mut parts = 0;
    let mut i = 0;
    loop {
        let start = i;
        let mut value = 0u32;
        while let Some(&c) = b.get(i).filter(|c| c.is_ascii_digit() && i - start < 3) {
            value = value * 10 + u32::from(c - b'0');
            i += 1;
        }
        let digits = i - start;
        if digits == 0 || value > 255 || (digits > 1 && b[start] == b'0') {
            return false;
        }
        parts += 1;
        match b.get(i) {
            None => return parts == 4,
            Some(b'.') if parts < 4 => i += 1,
            Some(_) => return false,
        }
    }
}

/// RFC 4291 section 2.2: eight groups of 1 to 4 hexadecimal digits separated by `:`; one `::`
/// standing for one or more groups of zeros; the last 32 bits may be a dotted quad (form 3).
/// No zone identifier (RFC 6874 belongs to URIs), prefix length or brackets.
///
/// One pass over the bytes: groups are counted as they are read, a `.` hands the rest of the
/// text to [`is_ipv4`] (so a dotted quad can only come last), and a second `::` fails.
fn is_ipv6(s: &str) -> bool {
    let b = s.as_bytes();
    // "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255"
    if b.len() > 45 {
        return false;
    }
    let mut i = 0;
    let mut units = 0usize;
    let mut compressed = false;
    if b.starts_with(b"::") {
        compressed = true;
        i = 2;
    } else if b.first() == Some(&b':') {
        return false;
    }
    while i < b.len() {
        let start = i;
        while i < b.len() && i - start < 5 && b[i].is_ascii_hexdigit() {
            i += 1;
        }
        if b.get(i) == Some(&b'.') {
            // The last 32 bits as a dotted quad: the rest of the text, from this group on.
            units += 2;
            return is_ipv4(&s[start..]) && if compressed { units <= 7 } else { units == 8 };
        }
        if !(1..=4).contains(&(i - start)) {
            return false;
        }
        units += 1;
        if units > 8 {
            return false;
        }
        match b.get(i) {
            None => break,
            Some(b':') => i += 1,
            Some(_) => return false,
        }
        if b.get(i) == Some(&b':') {
            if compressed {
                return false;
            }
            compressed = true;
            i += 1;
        } else if i == b.len() {
            // A single trailing `:`.
            return false;
        }
    }
    if compressed {
        units <= 7
    } else {
        units == 8
    }
}

// ---------------------------------------------------------------------------------------------
// E-mail addresses: RFC 5321 section 4.1.2 `Mailbox` (atoms of RFC 5322 section 3.2.3), and
// RFC 6531 section 3.3 for the internationalized form.

/// RFC 5322 section 3.2.3 `atext`.
fn is_atext(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c)
}

/// `Mailbox = Local-part "@" ( Domain / address-literal )`, with
/// `Local-part = Dot-string / Quoted-string`, `Dot-string = Atom *("." Atom)`,
/// `Quoted-string = DQUOTE *QcontentSMTP DQUOTE`, `qtextSMTP = %d32-33 / %d35-91 / %d93-126`,
/// `quoted-pairSMTP = %d92 %d32-126`; a local part of at most 64 octets and a mailbox of at most
/// 254 (the 256 of a path less its angle brackets; RFC 5321 section 4.5.3.1). With `idn`, RFC
/// 6531 section 3.3 adds `UTF8-non-ascii` to `atext` and `qtextSMTP`, and U-labels to `Domain`.
fn is_email(s: &str, idn: bool) -> bool {
    let b = s.as_bytes();
    if b.len() > 254 {
        return false;
    }
    let local_end = if b.first() == Some(&b'"') {
        let mut i = 1;
        loop {
            match b.get(i) {
                None => return false,
                Some(b'"') => break i + 1,
                Some(b'\\') => {
                    if !b.get(i + 1).is_some_and(|c| (32..=126).contains(c)) {
                        return false;
                    }
                    i += 2;
                }
                Some(32..=126) => i += 1,
                // A byte of a multi-byte character (UTF8-non-ascii).
                Some(128..) if idn => i += 1,
                Some(_) => return false,
            }
        }
    } else {
        let Some(at) = s.find('@') else { return false };
        let atoms_ok = s[..at]
            .split('.')
            .all(|atom| !atom.is_empty() && atom.chars().all(|c| is_atext(c) || (idn && !c.is_ascii())));
        if !atoms_ok {
            return false;
        }
        at
    };
    if local_end > 64 || b.get(local_end) != Some(&b'@') {
        return false;
    }
    let domain = &s[local_end + 1..];
    // address-literal = "[" ( IPv4-address-literal / IPv6-address-literal /
    // General-address-literal ) "]", IPv6-address-literal = "IPv6:" IPv6-addr (ABNF strings
    // are case-insensitive). General-address-literal needs an IANA-registered tag, and none is
    // registered but IPv6: it is not accepted.
    if let Some(literal) = domain.strip_prefix('[').and_then(|d| d.strip_suffix(']')) {
        return match literal.get(..5) {
            Some(tag) if tag.eq_ignore_ascii_case("IPv6:") => is_ipv6(&literal[5..]),
            _ => is_ipv4(literal),
        };
    }
    if idn {
        // RFC 6532 section 3.1 asks for NFC without requiring it (the suite accepts a domain
        // that is not in NFC): the domain is checked in its NFC form.
        let normalized: String = unicode::nfc(domain.chars()).into_iter().collect();
        idna::is_idn_hostname(&normalized)
    } else {
        idna::is_hostname(domain)
    }
}

// ---------------------------------------------------------------------------------------------
// URIs and IRIs: RFC 3986 (section 3 and Appendix A) and RFC 3987 section 2.2.

/// RFC 3986 `unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~"`.
const fn is_unreserved(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~')
}

/// RFC 3986 `sub-delims = "!" / "$" / "&" / "'" / "(" / ")" / "*" / "+" / "," / ";" / "="`.
const fn is_sub_delim(c: char) -> bool {
    matches!(c, '!' | '$' | '&' | '\'' | '(' | ')' | '*' | '+' | ',' | ';' | '=')
}

/// RFC 3987 `ucschar`: the non-ASCII characters an IRI may hold unescaped.
fn is_ucschar(c: char) -> bool {
    let c = u32::from(c);
    matches!(c, 0xA0..=0xD7FF | 0xF900..=0xFDCF | 0xFDF0..=0xFFEF)
        || (0x10000..=0xDFFFF).contains(&c) && (c & 0xFFFF) <= 0xFFFD
        || (0xE1000..=0xEFFFD).contains(&c)
}

/// RFC 3987 `iprivate` (allowed in `iquery` only).
fn is_iprivate(c: char) -> bool {
    let c = u32::from(c);
    matches!(c, 0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD)
}

/// Whether every character of `s` is `allowed` or part of a `pct-encoded` triplet
/// (`"%" HEXDIG HEXDIG`). Only the tests' reference checks still read characters this way.
#[cfg(test)]
fn chars_ok(s: &str, allowed: impl Fn(char) -> bool) -> bool {
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '%' {
            let hex = |c: Option<char>| c.is_some_and(|c| c.is_ascii_hexdigit());
            if !hex(chars.next()) || !hex(chars.next()) {
                return false;
            }
        } else if !allowed(c) {
            return false;
        }
    }
    true
}

/// The ASCII characters of URIs by RFC 3986's classes, one bit a class ([`URI_CLASSES`]).
mod class {
    /// `unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~"`.
    pub const UNRESERVED: u8 = 1;
    /// `sub-delims = "!" / "$" / "&" / "'" / "(" / ")" / "*" / "+" / "," / ";" / "="`.
    pub const SUB_DELIM: u8 = 2;
    /// `:`.
    pub const COLON: u8 = 4;
    /// `@`.
    pub const AT: u8 = 8;
    /// `/`.
    pub const SLASH: u8 = 16;
    /// `?`.
    pub const QUESTION: u8 = 32;
    /// `pchar = unreserved / pct-encoded / sub-delims / ":" / "@"` (its `pct-encoded` is read
    /// apart).
    pub const PCHAR: u8 = UNRESERVED | SUB_DELIM | COLON | AT;
}

/// Each byte's [`class`] bits, 0 beyond ASCII (so one lookup a byte needs no bounds check),
/// built from [`is_unreserved`] and [`is_sub_delim`], so the table and the functions cannot
/// disagree.
const URI_CLASSES: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut byte = 0u8;
    while byte < 128 {
        let c = byte as char;
        table[byte as usize] = if is_unreserved(c) {
            class::UNRESERVED
        } else if is_sub_delim(c) {
            class::SUB_DELIM
        } else {
            match byte {
                b':' => class::COLON,
                b'@' => class::AT,
                b'/' => class::SLASH,
                b'?' => class::QUESTION,
                _ => 0,
            }
        };
        byte += 1;
    }
    table
};

/// Which characters beyond ASCII a URI component admits.
#[derive(Clone, Copy)]
enum NonAscii {
    /// None (a URI).
    No,
    /// RFC 3987's `ucschar` (an IRI).
    Ucs,
    /// `ucschar` and `iprivate` (an IRI's query).
    UcsOrPrivate,
}

impl NonAscii {
    /// `ucschar` for an IRI, nothing for a URI.
    fn ucs(iri: bool) -> Self {
        if iri {
            NonAscii::Ucs
        } else {
            NonAscii::No
        }
    }

    /// Whether the non-ASCII character `c` is admitted.
    fn admits(self, c: char) -> bool {
        match self {
            NonAscii::No => false,
            NonAscii::Ucs => is_ucschar(c),
            NonAscii::UcsOrPrivate => is_ucschar(c) || is_iprivate(c),
        }
    }
}

/// Whether the `%` at `percent` in `b` starts a `pct-encoded` triplet: two hexadecimal digits
/// follow it.
fn is_pct_encoded(b: &[u8], percent: usize) -> bool {
    b.get(percent + 1..percent + 3)
        .is_some_and(|digits| digits.iter().all(u8::is_ascii_hexdigit))
}

/// `URI = scheme ":" hier-part [ "?" query ] [ "#" fragment ]`, or with `reference`
/// `URI-reference = URI / relative-ref`, `relative-ref = relative-part [ "?" query ]
/// [ "#" fragment ]`; `hier-part`/`relative-part` = `"//" authority path-abempty` or a path
/// (`path-absolute`, `path-rootless`/`path-noscheme`, `path-empty`). With `iri`, RFC 3987's
/// `IRI`/`IRI-reference`: the same with `ucschar` wherever `unreserved` is allowed, and
/// `iprivate` in the query.
///
/// One left-to-right pass, component by component: the scheme, the authority (a bracketed IP
/// literal read in place), then one scan of a class each for the path, the query and the
/// fragment (the layout of jsonschema's own check, which took 0.55 to 0.65 times the time of
/// the single classifying pass this replaced). Before the literal and the characters beyond
/// ASCII were read in this pass, both sent a string to a second check that split it into its
/// components first: 1.3 to 1.6 times jsonschema's time on such URIs
/// (`ldap://[2001:db8::7]/c=GB`: 141 ns against 106), 1.1 to 1.35 times on IRIs. Inlined into
/// each of the four formats, as [`scan_uri`] is into it, so that `iri` and `reference` are
/// constants there (with one shared copy, `uri` took 0.87x jsonschema's time; inlined, 0.79x).
#[inline(always)]
fn is_uri(s: &str, iri: bool, reference: bool) -> bool {
    let b = s.as_bytes();
    let ucs = NonAscii::ucs(iri);
    let scheme = scheme_length(b);
    if scheme.is_none() && !reference {
        return false;
    }
    let mut at = scheme.map_or(0, |length| length + 1);
    if b[at..].starts_with(b"//") {
        let Some(end) = scan_uri(s, at + 2, URI_AUTHORITY, ucs) else {
            return false;
        };
        if b.get(end) == Some(&b'[') {
            // `[ userinfo "@" ] IP-literal [ ":" port ]`: what comes before the `[` is nothing
            // or a userinfo and its `@` (the scan admitted its characters), the only `@`.
            if let Some((last, userinfo)) = b[at + 2..end].split_last() {
                if *last != b'@' || userinfo.contains(&b'@') {
                    return false;
                }
            }
            let Some(literal_end) = ip_literal_end(b, end) else {
                return false;
            };
            at = literal_end;
        } else {
            if !is_authority(&b[at + 2..end]) {
                return false;
            }
            at = end;
        }
    } else if scheme.is_none() && first_segment_has_colon(&b[at..]) {
        // `path-noscheme`: a relative reference's first segment holds no `:`.
        return false;
    }
    // Every path form is segments of pchar separated by `/`; the `//` of an authority was taken
    // above, so a path starting with `/` has a non-empty first segment or is `/` alone.
    let Some(end) = scan_uri(s, at, class::PCHAR | class::SLASH, ucs) else {
        return false;
    };
    at = end;
    // query = fragment = *( pchar / "/" / "?" ) (RFC 3987: iquery adds iprivate).
    let query_or_fragment = class::PCHAR | class::SLASH | class::QUESTION;
    if b.get(at) == Some(&b'?') {
        let private = if iri { NonAscii::UcsOrPrivate } else { NonAscii::No };
        let Some(end) = scan_uri(s, at + 1, query_or_fragment, private) else {
            return false;
        };
        at = end;
    }
    if b.get(at) == Some(&b'#') {
        let Some(end) = scan_uri(s, at + 1, query_or_fragment, ucs) else {
            return false;
        };
        at = end;
    }
    // Whatever stopped the scans (a bracket outside a host, a space, a character beyond
    // ASCII that the component does not admit, a second `#`) is in no URI.
    at == b.len()
}

/// `userinfo`, `@` and `host` characters, and `:` (the authority before its path).
const URI_AUTHORITY: u8 = class::UNRESERVED | class::SUB_DELIM | class::COLON | class::AT;

/// The length of a leading `scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )` followed by
/// `:`.
fn scheme_length(b: &[u8]) -> Option<usize> {
    if !b.first()?.is_ascii_alphabetic() {
        return None;
    }
    let length = b
        .iter()
        .position(|&c| !(c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.')))?;
    (b[length] == b':').then_some(length)
}

/// Whether the first segment (up to `/`, `?` or `#`) holds a `:`.
fn first_segment_has_colon(b: &[u8]) -> bool {
    b.iter().find(|&&c| matches!(c, b':' | b'/' | b'?' | b'#')) == Some(&b':')
}

/// Where the run of `s` starting at `at` (a character boundary) ends: ASCII bytes of the
/// `class`es, `pct-encoded` triplets, and non-ASCII characters `non_ascii` admits; `None` at a
/// broken triplet. One table lookup an ASCII byte. (Eight bytes at a time, their class bits
/// ANDed, took 1.1 to 1.9 times as long on the suite's URIs, whose runs are mostly shorter
/// than sixteen bytes.)
#[inline(always)]
fn scan_uri(s: &str, mut at: usize, class: u8, non_ascii: NonAscii) -> Option<usize> {
    let b = s.as_bytes();
    while let Some(&c) = b.get(at) {
        if URI_CLASSES[usize::from(c)] & class != 0 {
            at += 1;
        } else if c == b'%' {
            if !is_pct_encoded(b, at) {
                return None;
            }
            at += 3;
        } else if c >= 0x80 && !matches!(non_ascii, NonAscii::No) {
            // Only whole characters and ASCII bytes are stepped over: `at` is a boundary.
            match s.get(at..).and_then(|rest| rest.chars().next()) {
                Some(ch) if non_ascii.admits(ch) => at += ch.len_utf8(),
                _ => break,
            }
        } else {
            break;
        }
    }
    Some(at)
}

/// The end of a bracketed `IP-literal` host and its port, from the `[` at `open`: `None` when
/// the authority is not well formed (no `]` before the authority ends, a literal that is no
/// `IPv6address` or `IPvFuture`, or anything but a port between the `]` and the authority's
/// end). The literal and the port are ASCII; so is whatever ends the authority (`/`, `?`, `#`
/// or the end).
fn ip_literal_end(b: &[u8], open: usize) -> Option<usize> {
    let close = open
        + 1
        + b.get(open + 1..)?
            .iter()
            .position(|&c| matches!(c, b']' | b'/' | b'?' | b'#'))?;
    if b[close] != b']' {
        return None;
    }
    // `[` and `]` are ASCII: both ends are character boundaries.
    let inside = std::str::from_utf8(&b[open + 1..close]).ok()?;
    if !is_ip_literal(inside) {
        return None;
    }
    let mut end = close + 1;
    if b.get(end) == Some(&b':') {
        end += 1;
        while b.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
    }
    match b.get(end) {
        None | Some(b'/' | b'?' | b'#') => Some(end),
        Some(_) => None,
    }
}

/// `authority = [ userinfo "@" ] host [ ":" port ]`, with `host` a `reg-name` (an `IP-literal`
/// is read apart, [`ip_literal_end`]), from bytes [`scan_uri`] found to be userinfo and host
/// characters, `@`, `:` and sound triplets, so any userinfo is one: the host is what comes up
/// to the first `:` or `@` after the userinfo's `@`, the port all digits. An `IPv4address` is
/// also a `reg-name`, so a host such as `999.1.1.1` is well formed. Characters beyond ASCII
/// (an IRI's) hold no ASCII byte, so the search for `@` and `:` reads bytes.
fn is_authority(b: &[u8]) -> bool {
    let host_port = b.iter().position(|&c| c == b'@').map_or(b, |at| &b[at + 1..]);
    let host_end = host_port
        .iter()
        .position(|&c| c == b':' || c == b'@')
        .unwrap_or(host_port.len());
    match host_port.get(host_end) {
        None => true,
        Some(b':') => host_port[host_end + 1..].iter().all(u8::is_ascii_digit),
        Some(_) => false,
    }
}

/// The inside of `IP-literal`: `IPv6address`, or
/// `IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )` (`v` case-insensitive).
fn is_ip_literal(inside: &str) -> bool {
    match inside.strip_prefix(['v', 'V']) {
        Some(future) => {
            let Some((version, address)) = future.split_once('.') else {
                return false;
            };
            !version.is_empty()
                && version.bytes().all(|b| b.is_ascii_hexdigit())
                && !address.is_empty()
                && address.chars().all(|c| is_unreserved(c) || is_sub_delim(c) || c == ':')
        }
        None => is_ipv6(inside),
    }
}

// ---------------------------------------------------------------------------------------------
// URI templates: RFC 6570 section 2.

/// The ASCII bytes [`is_uri_template`]'s literals hold as themselves, `true` in a table: any
/// but controls, space, `"`, `%` (which starts a triplet), `<`, `>`, `\`, `^`, `` ` ``, `{`,
/// `|`, `}` and DEL.
const TEMPLATE_LITERALS: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 128 {
        table[byte] = matches!(
            byte,
            0x21 | 0x23..=0x24 | 0x26..=0x3B | 0x3D | 0x3F..=0x5B | 0x5D | 0x5F | 0x61..=0x7A | 0x7E
        );
        byte += 1;
    }
    table
};

/// `URI-Template = *( literals / expression )`, where `literals` is any of
/// `%x21 / %x23-24 / %x26 / %x28-3B / %x3D / %x3F-5B / %x5D / %x5F / %x61-7A / %x7E / ucschar /
/// iprivate / pct-encoded`, and `%x27` (the apostrophe, which RFC 6570's errata and the suite
/// admit); so no space, control, `"`, `<`, `>`, `\`, `^`, `` ` ``, `{`, `|` or `}` outside an
/// expression.
fn is_uri_template(s: &str) -> bool {
    // Byte by byte, decoding only non-ASCII characters (the `chars()` walk it replaced took
    // 2.4 times jsonschema's time on the suite's group; it is the tests' reference).
    let b = s.as_bytes();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        // Most bytes are a literal's, found by one lookup before the match (whose ranges made a
        // literal run take 1.1 to 1.4 times jsonschema's time).
        if TEMPLATE_LITERALS[usize::from(c)] {
            i += 1;
            continue;
        }
        match c {
            b'{' => {
                let Some(length) = b[i + 1..].iter().position(|&c| c == b'}') else {
                    return false;
                };
                // `{` and `}` are ASCII: both ends are character boundaries.
                if !s.get(i + 1..i + 1 + length).is_some_and(is_expression) {
                    return false;
                }
                i += length + 2;
            }
            b'%' => {
                if !is_pct_encoded(b, i) {
                    return false;
                }
                i += 3;
            }
            0x80.. => {
                // `i` is at a character's start: only whole characters and ASCII bytes are
                // stepped over.
                let Some(ch) = s.get(i..).and_then(|rest| rest.chars().next()) else {
                    return false;
                };
                if !NonAscii::UcsOrPrivate.admits(ch) {
                    return false;
                }
                i += ch.len_utf8();
            }
            _ => return false,
        }
    }
    true
}

/// The inside of `expression = "{" [ operator ] variable-list "}"`:
/// `operator = op-level2 / op-level3 / op-reserve` (`+ #`, `. / ; ? &`, `= , ! @ |`),
/// `variable-list = varspec *( "," varspec )`, `varspec = varname [ modifier-level4 ]`,
/// `varname = varchar *( ["."] varchar )`, `varchar = ALPHA / DIGIT / "_" / pct-encoded`,
/// `modifier-level4 = prefix / explode`, `prefix = ":" max-length`,
/// `max-length = %x31-39 0*3DIGIT`, `explode = "*"`.
fn is_expression(expression: &str) -> bool {
    let b = expression.as_bytes();
    let mut i = usize::from(matches!(
        b.first(),
        Some(b'+' | b'#' | b'.' | b'/' | b';' | b'?' | b'&' | b'=' | b',' | b'!' | b'@' | b'|')
    ));
    loop {
        // varname: a varchar after the start and after each `.`.
        let mut wants_varchar = true;
        loop {
            match b.get(i) {
                Some(c) if c.is_ascii_alphanumeric() || *c == b'_' => i += 1,
                Some(b'%') if is_pct_encoded(b, i) => i += 3,
                Some(b'.') if !wants_varchar => {
                    i += 1;
                    wants_varchar = true;
                    continue;
                }
                _ => break,
            }
            wants_varchar = false;
        }
        if wants_varchar {
            return false;
        }
        match b.get(i) {
            Some(b'*') => i += 1,
            Some(b':') => {
                let start = i + 1;
                i = start;
                while b.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
                if !(1..=4).contains(&(i - start)) || b[start] == b'0' {
                    return false;
                }
            }
            _ => {}
        }
        match b.get(i) {
            None => return true,
            Some(b',') => i += 1,
            Some(_) => return false,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// JSON Pointers.

/// RFC 6901 section 3: `json-pointer = *( "/" reference-token )`,
/// `reference-token = *( unescaped / escaped )`, `escaped = "~" ( "0" / "1" )`, `unescaped`
/// any character but `/` and `~`.
fn is_json_pointer(s: &str) -> bool {
    if !s.is_empty() && !s.starts_with('/') {
        return false;
    }
    let b = s.as_bytes();
    b.iter()
        .enumerate()
        .all(|(i, &c)| c != b'~' || matches!(b.get(i + 1), Some(b'0' | b'1')))
}

/// draft-bhutton-relative-json-pointer-00 section 3 (the draft 2020-12 names):
/// `relative-json-pointer = non-negative-integer [index-manipulation] ( json-pointer / "#" )`,
/// `index-manipulation = ( "+" / "-" ) positive-integer`, `non-negative-integer = "0" /
/// %x31-39 *%x30-39`. (Draft-07's draft-handrews-relative-json-pointer-01 has no index
/// manipulation; this accepts its language and that addition.)
fn is_relative_json_pointer(s: &str) -> bool {
    fn integer(b: &[u8]) -> usize {
        b.iter().take_while(|c| c.is_ascii_digit()).count()
    }
    let b = s.as_bytes();
    let n = integer(b);
    if n == 0 || (n > 1 && b[0] == b'0') {
        return false;
    }
    let mut rest = &s[n..];
    if let Some(after) = rest.strip_prefix(['+', '-']) {
        let m = integer(after.as_bytes());
        if m == 0 || after.as_bytes()[0] == b'0' {
            return false;
        }
        rest = &after[m..];
    }
    rest == "#" || is_json_pointer(rest)
}

// ---------------------------------------------------------------------------------------------
// UUIDs.

/// RFC 4122 section 3: `UUID = time-low "-" time-mid "-" time-high-and-version "-"
/// clock-seq-and-reserved clock-seq-low "-" node`, 8-4-4-4-12 hexadecimal digits, any case,
/// any version and variant.
fn is_uuid(b: &[u8]) -> bool {
    // A table lookup a byte, the 32 digits' verdicts combined without branching.
    let hex = |digits: &[u8]| digits.iter().fold(true, |all, &c| all & HEX_DIGIT[usize::from(c)]);
    b.len() == 36
        && b[8] == b'-'
        && b[13] == b'-'
        && b[18] == b'-'
        && b[23] == b'-'
        && hex(&b[..8])
        && hex(&b[9..13])
        && hex(&b[14..18])
        && hex(&b[19..23])
        && hex(&b[24..])
}

/// Whether a byte is an ASCII hexadecimal digit ([`is_uuid`]).
const HEX_DIGIT: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] = (byte as u8).is_ascii_hexdigit();
        byte += 1;
    }
    table
};

// ---------------------------------------------------------------------------------------------
// Regular expressions: ECMA-262 (ES2025) section 22.2.1 `Pattern[+UnicodeMode, +NamedCaptureGroups]`
// and its early errors (22.2.1.1). Syntax only; no Annex B leniency (which the `u` flag
// switches off).

fn is_regex(s: &str) -> bool {
    RegexSyntax::new(s).pattern().is_some()
}

/// One `( ... )` being parsed.
struct Group {
    /// Whether a quantifier may follow it (`QuantifiableAssertion`s are Annex B only, so a
    /// look-around is not quantifiable).
    quantifiable: bool,
    /// The time of the last `|` directly inside it.
    last_bar: u64,
}

/// An iterative recursive-descent checker (an explicit stack of groups, so deep nesting costs
/// memory, not the call stack).
struct RegexSyntax {
    chars: Vec<char>,
    at: usize,
    /// Capturing groups so far.
    captures: u32,
    /// The largest `\N` back reference.
    max_backreference: u32,
    /// The group names referred to by `\k<name>`.
    named_references: Vec<String>,
    /// Each group name, with the time of its latest group.
    names: HashMap<String, u64>,
    /// The open groups; the outermost entry is the pattern itself.
    groups: Vec<Group>,
    /// A counter of events (a group opened or closed, a name defined, a `|`).
    time: u64,
    /// `(time, depth)`: the minimum depth of `groups` from each kept time on (a monotonic stack
    /// answering "the shallowest depth since t" by binary search).
    depths: Vec<(u64, usize)>,
}

/// A `ClassAtom`: one character, or a class escape (`\d`, `\p{...}`), which cannot bound a
/// range under the `u` flag.
enum ClassAtom {
    Char(u32),
    Set,
}

impl RegexSyntax {
    fn new(s: &str) -> Self {
        Self {
            chars: s.chars().collect(),
            at: 0,
            captures: 0,
            max_backreference: 0,
            named_references: Vec::new(),
            names: HashMap::new(),
            groups: vec![Group {
                quantifiable: false,
                last_bar: 0,
            }],
            time: 0,
            depths: vec![(0, 1)],
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.at + offset).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += 1;
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn tick(&mut self) -> u64 {
        self.time += 1;
        let depth = self.groups.len();
        while self.depths.last().is_some_and(|&(_, d)| d >= depth) {
            self.depths.pop();
        }
        self.depths.push((self.time, depth));
        self.time
    }

    /// `Pattern :: Disjunction`, then the early errors that need the whole pattern: every
    /// `\N` at most the number of capturing groups, every `\k<name>` naming a group.
    fn pattern(mut self) -> Option<()> {
        // Whether the last term may take a quantifier (an atom, not an assertion or nothing).
        let mut quantifiable = false;
        while let Some(c) = self.next() {
            quantifiable = match c {
                '|' => {
                    let time = self.tick();
                    self.groups.last_mut()?.last_bar = time;
                    false
                }
                '(' => {
                    let group_quantifiable = self.group_open()?;
                    self.groups.push(Group {
                        quantifiable: group_quantifiable,
                        last_bar: 0,
                    });
                    self.tick();
                    false
                }
                ')' => {
                    if self.groups.len() == 1 {
                        return None;
                    }
                    let group = self.groups.pop()?;
                    self.tick();
                    group.quantifiable
                }
                '^' | '$' => false,
                '\\' => self.atom_escape()?,
                '[' => {
                    self.class()?;
                    true
                }
                '*' | '+' | '?' => {
                    if !quantifiable {
                        return None;
                    }
                    self.eat('?');
                    false
                }
                '{' => {
                    // Under the `u` flag a `{` only starts a quantifier (no Annex B literal).
                    self.braced_quantifier()?;
                    if !quantifiable {
                        return None;
                    }
                    self.eat('?');
                    false
                }
                ']' | '}' => return None,
                _ => true,
            };
        }
        if self.groups.len() != 1 || self.max_backreference > self.captures {
            return None;
        }
        self.named_references
            .iter()
            .all(|name| self.names.contains_key(name))
            .then_some(())
    }

    /// After `(`: `(?:`, `(?=`, `(?!`, `(?<=`, `(?<!`, `(?<name>`, `(?ims-ims:` (ES2025
    /// modifiers) or a capturing `(`. Returns whether the group is quantifiable.
    fn group_open(&mut self) -> Option<bool> {
        if !self.eat('?') {
            self.captures = self.captures.saturating_add(1);
            return Some(true);
        }
        match self.next()? {
            ':' => Some(true),
            '=' | '!' => Some(false),
            '<' if self.eat('=') || self.eat('!') => Some(false),
            '<' => {
                let name = self.group_name()?;
                self.define_name(name)?;
                self.captures = self.captures.saturating_add(1);
                Some(true)
            }
            c @ ('i' | 'm' | 's' | '-') => {
                // `(?` RegularExpressionModifiers `:` or `(?` Modifiers `-` Modifiers `:`:
                // early errors for a repeated flag, and for both sides empty.
                let mut seen = String::new();
                let mut c = c;
                while matches!(c, 'i' | 'm' | 's') {
                    if seen.contains(c) {
                        return None;
                    }
                    seen.push(c);
                    c = self.next()?;
                }
                if c == '-' {
                    c = self.next()?;
                    while matches!(c, 'i' | 'm' | 's') {
                        if seen.contains(c) {
                            return None;
                        }
                        seen.push(c);
                        c = self.next()?;
                    }
                    if seen.is_empty() {
                        return None;
                    }
                }
                (c == ':').then_some(true)
            }
            _ => None,
        }
    }

    /// Records a group name. ES2025 allows a name twice only in different alternatives:
    /// the deepest group open at both definitions must have seen a `|` in between. Checking the
    /// latest earlier definition suffices: alternatives are contiguous, so a definition that
    /// clashes with an earlier one clashes with every later one that is compatible with it.
    fn define_name(&mut self, name: String) -> Option<()> {
        if let Some(&then) = self.names.get(&name) {
            // The shallowest depth of the group stack since `then` (both ends included): the
            // groups below it stayed open all along, the deepest of them holds both.
            let index = self.depths.partition_point(|&(time, _)| time < then);
            let depth = self.depths.get(index).map_or(self.groups.len(), |&(_, d)| d);
            let holder = self.groups.get(depth.checked_sub(1)?)?;
            if holder.last_bar <= then {
                return None;
            }
        }
        let time = self.tick();
        self.names.insert(name, time);
        Some(())
    }

    /// `GroupName :: < RegExpIdentifierName >` (after the `<`): an identifier start
    /// (`ID_Start`, `$`, `_`) then identifier parts (`ID_Continue`, `$`, ZWNJ, ZWJ), each
    /// possibly written as a `\u` escape.
    fn group_name(&mut self) -> Option<String> {
        let mut name = String::new();
        loop {
            let c = match self.next()? {
                '>' => break,
                '\\' => {
                    if self.next()? != 'u' {
                        return None;
                    }
                    char::from_u32(self.unicode_escape()?)?
                }
                c => c,
            };
            let ok = if name.is_empty() {
                c == '$' || c == '_' || unicode::is_id_start(c)
            } else {
                matches!(c, '$' | '\u{200C}' | '\u{200D}') || unicode::is_id_continue(c)
            };
            if !ok {
                return None;
            }
            name.push(c);
        }
        (!name.is_empty()).then_some(name)
    }

    /// `AtomEscape` (after `\`): returns whether it is quantifiable (`\b` and `\B` are
    /// assertions).
    fn atom_escape(&mut self) -> Option<bool> {
        match self.next()? {
            'b' | 'B' => Some(false),
            // DecimalEscape: a back reference (checked against the group count at the end).
            c @ '1'..='9' => {
                let mut value = c.to_digit(10)?;
                while let Some(d) = self.peek().and_then(|d| d.to_digit(10)) {
                    self.at += 1;
                    value = value.saturating_mul(10).saturating_add(d);
                }
                self.max_backreference = self.max_backreference.max(value);
                Some(true)
            }
            'k' => {
                if !self.eat('<') {
                    return None;
                }
                let name = self.group_name()?;
                self.named_references.push(name);
                Some(true)
            }
            'd' | 'D' | 's' | 'S' | 'w' | 'W' => Some(true),
            'p' | 'P' => {
                self.property()?;
                Some(true)
            }
            c => {
                self.character_escape(c, false)?;
                Some(true)
            }
        }
    }

    /// `CharacterEscape[+UnicodeMode]` (after `\`, its first character `c`): its value.
    fn character_escape(&mut self, c: char, in_class: bool) -> Option<u32> {
        Some(match c {
            // ControlEscape
            'f' => 0x0C,
            'n' => 0x0A,
            'r' => 0x0D,
            't' => 0x09,
            'v' => 0x0B,
            // `c` AsciiLetter
            'c' => {
                let letter = self.next()?;
                if !letter.is_ascii_alphabetic() {
                    return None;
                }
                u32::from(letter) % 32
            }
            // `0` [lookahead is not a DecimalDigit]
            '0' => {
                if self.peek().is_some_and(|d| d.is_ascii_digit()) {
                    return None;
                }
                0
            }
            // HexEscapeSequence: `x` HexDigit HexDigit
            'x' => {
                let high = self.next()?.to_digit(16)?;
                let low = self.next()?.to_digit(16)?;
                high * 16 + low
            }
            'u' => self.unicode_escape()?,
            // IdentityEscape[+UnicodeMode]: SyntaxCharacter or `/`; `\-` in a class
            // (ClassEscape[+UnicodeMode]).
            '^' | '$' | '\\' | '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|' | '/' => u32::from(c),
            '-' if in_class => u32::from(c),
            _ => return None,
        })
    }

    /// `RegExpUnicodeEscapeSequence[+UnicodeMode]` (after `\u`): `u{` CodePoint `}` (at most
    /// 0x10FFFF), or four hex digits, a lead surrogate joined with a following `\u` trail
    /// surrogate.
    fn unicode_escape(&mut self) -> Option<u32> {
        if self.eat('{') {
            let mut value: u32 = 0;
            let mut any = false;
            loop {
                let c = self.next()?;
                if c == '}' {
                    break;
                }
                value = value.checked_mul(16)?.checked_add(c.to_digit(16)?)?;
                if value > 0x10FFFF {
                    return None;
                }
                any = true;
            }
            return any.then_some(value);
        }
        let value = self.hex4()?;
        if (0xD800..=0xDBFF).contains(&value) && self.peek() == Some('\\') && self.peek_at(1) == Some('u') {
            let saved = self.at;
            self.at += 2;
            match self.hex4() {
                Some(trail) if (0xDC00..=0xDFFF).contains(&trail) => {
                    return Some(0x10000 + ((value - 0xD800) << 10) + (trail - 0xDC00));
                }
                _ => self.at = saved,
            }
        }
        Some(value)
    }

    fn hex4(&mut self) -> Option<u32> {
        let mut value = 0;
        for _ in 0..4 {
            value = value * 16 + self.next()?.to_digit(16)?;
        }
        Some(value)
    }

    /// `\p{...}` or `\P{...}` (after the `p`): `UnicodePropertyValueExpression`, a
    /// `General_Category`, `Script` or `Script_Extensions` value (`name=value`), or a lone
    /// General_Category value or binary property of ECMA-262's tables, names matched exactly.
    fn property(&mut self) -> Option<()> {
        if !self.eat('{') {
            return None;
        }
        let mut expression = String::new();
        loop {
            match self.next()? {
                '}' => break,
                c => expression.push(c),
            }
        }
        let ok = match expression.split_once('=') {
            Some(("General_Category" | "gc", value)) => unicode::is_general_category_name(value),
            Some(("Script" | "sc" | "Script_Extensions" | "scx", value)) => unicode::is_script_name(value),
            Some(_) => false,
            None => unicode::is_general_category_name(&expression) || unicode::is_binary_property_name(&expression),
        };
        ok.then_some(())
    }

    /// `{n}`, `{n,}` or `{n,m}` (after the `{`), `n <= m`.
    fn braced_quantifier(&mut self) -> Option<()> {
        let read = |this: &mut Self| {
            let start = this.at;
            while this.peek().is_some_and(|c| c.is_ascii_digit()) {
                this.at += 1;
            }
            let digits: String = this.chars[start..this.at].iter().collect();
            digits
        };
        let min = read(self);
        if min.is_empty() {
            return None;
        }
        if self.eat('}') {
            return Some(());
        }
        if !self.eat(',') {
            return None;
        }
        let max = read(self);
        if !self.eat('}') {
            return None;
        }
        if !max.is_empty() {
            // Compare the decimal values without overflow.
            let (min, max) = (min.trim_start_matches('0'), max.trim_start_matches('0'));
            if (min.len(), min) > (max.len(), max) {
                return None;
            }
        }
        Some(())
    }

    /// `CharacterClass` (after `[`): `[` `^`? ClassContents `]`, each range's ends single
    /// characters in order.
    fn class(&mut self) -> Option<()> {
        self.eat('^');
        loop {
            let first = match self.next()? {
                ']' => return Some(()),
                c => self.class_atom(c)?,
            };
            if self.peek() == Some('-') && self.peek_at(1).is_some_and(|c| c != ']') {
                self.at += 1;
                let c = self.next()?;
                let last = self.class_atom(c)?;
                match (first, last) {
                    (ClassAtom::Char(low), ClassAtom::Char(high)) if low <= high => {}
                    _ => return None,
                }
            }
        }
    }

    /// `ClassAtom` whose first character is `c`.
    fn class_atom(&mut self, c: char) -> Option<ClassAtom> {
        if c != '\\' {
            return Some(ClassAtom::Char(u32::from(c)));
        }
        Some(match self.next()? {
            'd' | 'D' | 's' | 'S' | 'w' | 'W' => ClassAtom::Set,
            'p' | 'P' => {
                self.property()?;
                ClassAtom::Set
            }
            'b' => ClassAtom::Char(0x08),
            e => ClassAtom::Char(self.character_escape(e, true)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The URI and IPv6 checks as they were before the byte-table rewrite (#33 item 2), kept
    /// as the reference the rewrite is compared with.
    mod reference {
        use super::super::{chars_ok, is_iprivate, is_ipv4, is_sub_delim, is_ucschar, is_unreserved};

        pub(super) fn is_ipv6(s: &str) -> bool {
            /// The 16-bit units of `:`-separated groups, the last one possibly a dotted quad.
            fn units(groups: &str, v4_last: bool) -> Option<usize> {
                let mut count = 0usize;
                let mut parts = groups.split(':').peekable();
                while let Some(part) = parts.next() {
                    let last = parts.peek().is_none();
                    if last && v4_last && part.contains('.') {
                        if !is_ipv4(part) {
                            return None;
                        }
                        count += 2;
                    } else if (1..=4).contains(&part.len()) && part.bytes().all(|b| b.is_ascii_hexdigit()) {
                        count += 1;
                    } else {
                        return None;
                    }
                    if count > 8 {
                        return None;
                    }
                }
                Some(count)
            }
            match s.find("::") {
                Some(at) => {
                    let (head, tail) = (&s[..at], &s[at + 2..]);
                    let head = if head.is_empty() { Some(0) } else { units(head, false) };
                    let tail = if tail.is_empty() { Some(0) } else { units(tail, true) };
                    matches!((head, tail), (Some(h), Some(t)) if h + t <= 7)
                }
                None => units(s, true) == Some(8),
            }
        }

        fn is_pchar(c: char, iri: bool) -> bool {
            is_unreserved(c) || is_sub_delim(c) || matches!(c, ':' | '@') || (iri && is_ucschar(c))
        }

        pub(super) fn is_uri(s: &str, iri: bool, reference: bool) -> bool {
            let (rest, fragment) = match s.split_once('#') {
                Some((rest, fragment)) => (rest, Some(fragment)),
                None => (s, None),
            };
            let (rest, query) = match rest.split_once('?') {
                Some((rest, query)) => (rest, Some(query)),
                None => (rest, None),
            };
            // fragment = *( pchar / "/" / "?" ); query = *( pchar / "/" / "?" ) (RFC 3987: iquery
            // adds iprivate).
            if fragment.is_some_and(|f| !chars_ok(f, |c| is_pchar(c, iri) || matches!(c, '/' | '?'))) {
                return false;
            }
            if query.is_some_and(|q| {
                !chars_ok(q, |c| {
                    is_pchar(c, iri) || matches!(c, '/' | '?') || (iri && is_iprivate(c))
                })
            }) {
                return false;
            }
            // A `:` before any `/` ends a scheme: a relative reference's first segment cannot hold one
            // (`path-noscheme`), so such a string is a URI or nothing.
            let rest = match rest.find([':', '/']) {
                Some(at) if rest.as_bytes()[at] == b':' => {
                    // scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
                    let scheme = &rest.as_bytes()[..at];
                    if !scheme.first().is_some_and(u8::is_ascii_alphabetic)
                        || !scheme
                            .iter()
                            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'))
                    {
                        return false;
                    }
                    &rest[at + 1..]
                }
                _ if !reference => return false,
                _ => rest,
            };
            let path = match rest.strip_prefix("//") {
                Some(after) => {
                    let end = after.find('/').unwrap_or(after.len());
                    if !is_authority(&after[..end], iri) {
                        return false;
                    }
                    &after[end..]
                }
                None => rest,
            };
            // Every path form is segments of pchar separated by `/`; the `//` of an authority was taken
            // above, so a path starting with `/` has a non-empty first segment or is `/` alone.
            chars_ok(path, |c| is_pchar(c, iri) || c == '/')
        }

        fn is_authority(authority: &str, iri: bool) -> bool {
            let (userinfo, host_port) = match authority.split_once('@') {
                Some((userinfo, host_port)) => (Some(userinfo), host_port),
                None => (None, authority),
            };
            let iunreserved = |c: char| is_unreserved(c) || (iri && is_ucschar(c));
            if userinfo.is_some_and(|u| !chars_ok(u, |c| iunreserved(c) || is_sub_delim(c) || c == ':')) {
                return false;
            }
            let port = if let Some(literal) = host_port.strip_prefix('[') {
                let Some((inside, after)) = literal.split_once(']') else {
                    return false;
                };
                if !is_ip_literal(inside) {
                    return false;
                }
                match after.strip_prefix(':') {
                    Some(port) => port,
                    None if after.is_empty() => "",
                    None => return false,
                }
            } else {
                let (host, port) = host_port.split_once(':').unwrap_or((host_port, ""));
                if !chars_ok(host, |c| iunreserved(c) || is_sub_delim(c)) {
                    return false;
                }
                port
            };
            port.bytes().all(|b| b.is_ascii_digit())
        }

        fn is_ip_literal(inside: &str) -> bool {
            match inside.strip_prefix(['v', 'V']) {
                Some(future) => {
                    let Some((version, address)) = future.split_once('.') else {
                        return false;
                    };
                    !version.is_empty()
                        && version.bytes().all(|b| b.is_ascii_hexdigit())
                        && !address.is_empty()
                        && address.chars().all(|c| is_unreserved(c) || is_sub_delim(c) || c == ':')
                }
                None => is_ipv6(inside),
            }
        }
    }

    /// The `ipv4`, `uuid`, `duration` and `uri-template` checks as they were before the
    /// byte-by-byte rewrites (#33 item 2: each took 2 to 4 times jsonschema's time on its suite
    /// group), kept as the reference the rewrites are compared with.
    mod before_bytes {
        use super::super::{chars_ok, digits, is_iprivate, is_ucschar};

        pub(super) fn is_expression(expression: &str) -> bool {
            let list = expression
                .strip_prefix(['+', '#', '.', '/', ';', '?', '&', '=', ',', '!', '@', '|'])
                .unwrap_or(expression);
            list.split(',').all(|varspec| {
                let (name, modifier_ok) = if let Some(name) = varspec.strip_suffix('*') {
                    (name, true)
                } else if let Some((name, length)) = varspec.split_once(':') {
                    let b = length.as_bytes();
                    let ok = (1..=4).contains(&b.len()) && b[0] != b'0' && b.iter().all(u8::is_ascii_digit);
                    (name, ok)
                } else {
                    (varspec, true)
                };
                modifier_ok
                    && name
                        .split('.')
                        .all(|part| !part.is_empty() && chars_ok(part, |c| c.is_ascii_alphanumeric() || c == '_'))
            })
        }

        pub(super) fn is_ipv4(s: &str) -> bool {
            let mut parts = 0;
            for part in s.split('.') {
                parts += 1;
                let b = part.as_bytes();
                let Some(value) = digits(b).filter(|_| b.len() <= 3) else {
                    return false;
                };
                if parts > 4 || value > 255 || (b.len() > 1 && b[0] == b'0') {
                    return false;
                }
            }
            parts == 4
        }

        pub(super) fn is_uuid(b: &[u8]) -> bool {
            b.len() == 36
                && b.iter().enumerate().all(|(i, &c)| match i {
                    8 | 13 | 18 | 23 => c == b'-',
                    _ => c.is_ascii_hexdigit(),
                })
        }

        pub(super) fn is_duration(b: &[u8]) -> bool {
            if b.first() != Some(&b'P') {
                return false;
            }
            let mut date: Vec<u8> = Vec::new();
            let mut time: Vec<u8> = Vec::new();
            let mut in_time = false;
            let mut i = 1;
            while i < b.len() {
                if b[i] == b'T' {
                    if in_time {
                        return false;
                    }
                    in_time = true;
                    i += 1;
                    continue;
                }
                let start = i;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                if i == start || i == b.len() {
                    return false;
                }
                let units = if in_time { &mut time } else { &mut date };
                if units.len() == 3 {
                    return false;
                }
                units.push(b[i]);
                i += 1;
            }
            if date == b"W" {
                return !in_time;
            }
            fn run_of(units: &[u8], order: &[u8; 3]) -> bool {
                let mut previous: Option<usize> = None;
                for unit in units {
                    let Some(position) = order.iter().position(|o| o == unit) else {
                        return false;
                    };
                    if previous.is_some_and(|p| p + 1 != position) {
                        return false;
                    }
                    previous = Some(position);
                }
                true
            }
            if in_time && time.is_empty() {
                return false;
            }
            (!date.is_empty() || !time.is_empty()) && run_of(&date, b"YMD") && run_of(&time, b"HMS")
        }

        pub(super) fn is_uri_template(s: &str) -> bool {
            let mut rest = s;
            while let Some(c) = rest.chars().next() {
                rest = &rest[c.len_utf8()..];
                match c {
                    '{' => {
                        let Some((expression, after)) = rest.split_once('}') else {
                            return false;
                        };
                        if !is_expression(expression) {
                            return false;
                        }
                        rest = after;
                    }
                    '%' => {
                        let b = rest.as_bytes();
                        if b.len() < 2 || !b[0].is_ascii_hexdigit() || !b[1].is_ascii_hexdigit() {
                            return false;
                        }
                        rest = &rest[2..];
                    }
                    c if c.is_ascii() => {
                        if !matches!(c, '\x21' | '\x23'..='\x24' | '\x26'..='\x3B' | '\x3D' | '\x3F'..='\x5B' | '\x5D' | '\x5F' | '\x61'..='\x7A' | '\x7E')
                        {
                            return false;
                        }
                    }
                    c if is_ucschar(c) || is_iprivate(c) => {}
                    _ => return false,
                }
            }
            true
        }
    }

    /// Strings of `alphabet`, up to `max` characters, from a fixed seed (splitmix64).
    pub(super) fn strings(alphabet: &[&str], count: usize, max: usize, seed: u64) -> Vec<String> {
        let mut state = seed;
        let mut next = move || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        (0..count)
            .map(|_| {
                let len = (next() % (max as u64 + 1)) as usize;
                (0..len)
                    .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                    .collect()
            })
            .collect()
    }

    #[test]
    fn ipv6_agrees_with_the_reference() {
        let alphabet = [
            "0", "1", "9", "a", "F", "g", ":", ":", ":", "::", ".", "255", "%", "ffff", "12345", "é",
        ];
        let mut valid = 0;
        for s in strings(&alphabet, 200_000, 24, 6) {
            assert_eq!(is_ipv6(&s), reference::is_ipv6(&s), "{s:?}");
            valid += usize::from(is_ipv6(&s));
        }
        // The comparison must have seen both answers many times.
        assert!(valid > 1_000, "{valid} valid");
    }

    /// The IP literal read in place, and the runs of `scan_uri`: every insertion of a byte that
    /// ends or breaks a run, at every offset of a URI with long runs in each component, and
    /// authorities with literals, against the reference, in the four modes.
    #[test]
    fn long_runs_and_ip_literals_agree_with_the_reference() {
        let base = "http://user:pw@example.org:8080/aaaaaaaaaaaaaaaa/bbbbbbbbbb?cccccccccccccccccc#dddddddddddddddd";
        let mut cases: Vec<String> = Vec::new();
        for insert in [
            " ", "%", "%4", "%41", "[", "]", "/", "?", "#", "@", ":", "\u{e9}", "\u{E000}",
        ] {
            for at in (0..=base.len()).filter(|&at| base.is_char_boundary(at)) {
                cases.push(format!("{}{insert}{}", &base[..at], &base[at..]));
            }
        }
        for authority in [
            "[::1]",
            "[::1]:80",
            "[::1]:",
            "[::1]:8a",
            "[::1]]",
            "[::1]:80:90",
            "[::1]x",
            "[::1",
            "[::1#]",
            "[::1?]",
            "[::1/]",
            "[v7.x:y]",
            "[v7.]",
            "[2001:db8::7]",
            "[::ffff:01.2.3.4]",
            "[::ffff:1.2.3.4]",
            "u@[::1]",
            "u:p@[::1]:1",
            "u@v@[::1]",
            "h[::1]",
            "h:1[::1]",
            "@[::1]",
            "[@example.org",
            "a]b",
            "[\u{e9}]",
        ] {
            for tail in ["", "/", "/p%41th?q#f", "?x", "#y", "/\u{e9}", " "] {
                cases.push(format!("ldap://{authority}{tail}"));
                cases.push(format!("//{authority}{tail}"));
            }
        }
        let mut valid = 0;
        for s in &cases {
            for (iri, reference) in [(false, false), (false, true), (true, false), (true, true)] {
                let ours = is_uri(s, iri, reference);
                assert_eq!(
                    ours,
                    reference::is_uri(s, iri, reference),
                    "{s:?} iri {iri} reference {reference}"
                );
                valid += usize::from(ours);
            }
        }
        assert!(
            valid > 500 && valid < cases.len() * 4 - 500,
            "{valid} of {} valid",
            cases.len() * 4
        );
        assert!(is_uri("ldap://[2001:db8::7]/c=GB?objectClass?one", false, false));
        assert!(is_uri("http://u:p@[::1]:8080/x", false, false));
        assert!(!is_uri("http://u@v@[::1]/", false, false));
        assert!(!is_uri("https://[@example.org/test.txt", false, false));
        assert!(!is_uri("http://[::ffff:01.2.3.4]", false, false));
    }

    #[test]
    fn uris_agree_with_the_reference() {
        let alphabet = [
            "a",
            "Z",
            "0",
            "-",
            ".",
            "_",
            "~",
            "!",
            "$",
            "'",
            "(",
            "=",
            ":",
            "@",
            "/",
            "//",
            "?",
            "#",
            "%",
            "%2F",
            "%4",
            "[",
            "]",
            "::1",
            "v7.x",
            " ",
            "\\",
            "{",
            "é",
            "\u{E000}",
            "\u{10FFFD}",
            "\u{FFFE}",
            "http:",
            "http://",
        ];
        let mut valid = [0usize; 4];
        for s in strings(&alphabet, 200_000, 12, 3986) {
            for (n, (iri, reference)) in [(false, false), (false, true), (true, false), (true, true)]
                .into_iter()
                .enumerate()
            {
                let ours = is_uri(&s, iri, reference);
                assert_eq!(
                    ours,
                    reference::is_uri(&s, iri, reference),
                    "{s:?} iri {iri} reference {reference}"
                );
                valid[n] += usize::from(ours);
            }
        }
        assert!(valid.iter().all(|&v| v > 1_000), "{valid:?} valid");
    }

    /// Compares `ours` with `reference` on 200,000 strings of `alphabet`; both answers must
    /// come up many times, or the comparison proves little.
    fn agrees(
        name: &str,
        alphabet: &[&str],
        max: usize,
        seed: u64,
        ours: fn(&str) -> bool,
        reference: fn(&str) -> bool,
    ) {
        let mut valid = 0;
        let count = 200_000;
        for s in strings(alphabet, count, max, seed) {
            let answer = ours(&s);
            assert_eq!(answer, reference(&s), "{name}: {s:?}");
            valid += usize::from(answer);
        }
        assert!(
            valid > 1_000 && valid < count - 1_000,
            "{name}: {valid} valid of {count}"
        );
    }

    #[test]
    fn the_byte_by_byte_formats_agree_with_their_references() {
        agrees(
            "ipv4",
            &[
                "1.2.", "255.0.", "3.4", "0.255", "1.", "25.", "9", "0", "256", "01", "1234", ".", "a", " ", "\u{663}",
            ],
            3,
            4,
            ipv4,
            before_bytes::is_ipv4,
        );
        // UUIDs: a valid one with up to two characters replaced, inserted or removed at every
        // position (random strings are almost never one).
        let base = "2eb8aa08-aa98-11ea-b4aa-73b441d16380";
        let mut valid = 0;
        let edits = strings(&["0", "a", "F", "g", "-", "\u{9e8}"], 200_000, 2, 4122);
        for (n, edit) in edits.iter().enumerate() {
            let (at, removed) = (n % 37, (n / 37) % 3);
            let s = format!("{}{edit}{}", &base[..at], &base[(at + removed).min(36)..]);
            assert_eq!(uuid(&s), before_bytes::is_uuid(s.as_bytes()), "uuid: {s:?}");
            valid += usize::from(uuid(&s));
        }
        assert!(valid > 1_000 && valid < 199_000, "uuid: {valid} valid");
        agrees(
            "duration",
            &[
                "P", "P", "PT", "1Y", "2M", "3D", "T", "4H", "5M", "6S", "7W", "1", "Y", ".5S", "p", "t",
            ],
            4,
            3339,
            duration,
            |s| before_bytes::is_duration(s.as_bytes()),
        );
        agrees(
            "uri-template",
            &[
                "a",
                "/",
                "{",
                "}",
                "{x}",
                "{+x,y}",
                "{#a.b}",
                "{x:30}",
                "{x:0}",
                "{y*}",
                "{a.b*}",
                "{x:1234}",
                "{x:12345}",
                "{%4}",
                "{%41.b}",
                "{a.}",
                "{.a.b:3,c*}",
                "{a*:1}",
                "{a,}",
                "{,}",
                "{=}",
                "%",
                "%2F",
                "%4",
                " ",
                "<",
                "\\",
                "|",
                "'",
                "\"",
                "^",
                "`",
                ">",
                "\u{7f}",
                "\t",
                "!",
                "~",
                "_",
                "[",
                "]",
                ";",
                "\u{e9}",
                "\u{E000}",
                "\u{FFFE}",
                "{\u{e9}}",
            ],
            10,
            6570,
            uri_template,
            before_bytes::is_uri_template,
        );
    }

    fn check(format: Format, s: &str) -> bool {
        format.check(s)
    }

    #[test]
    fn names_round_trip() {
        assert_eq!(Format::ALL.len(), 19);
        for &format in Format::ALL {
            assert_eq!(Format::from_name(format.name()), Some(format), "{format:?}");
            assert_eq!(format.to_string(), format.name());
        }
        let mut names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Format::ALL.len(), "names are distinct");
        for unknown in [
            "",
            "unknown",
            "Date",
            "date-time ",
            "datetime",
            "int32",
            "uri_reference",
        ] {
            assert_eq!(Format::from_name(unknown), None, "{unknown:?}");
        }
        assert_eq!(Format::from_name("date-time"), Some(Format::DateTime));
    }

    #[test]
    fn empty_strings() {
        let valid_empty = [
            Format::UriReference,
            Format::IriReference,
            Format::UriTemplate,
            Format::JsonPointer,
            Format::Regex,
        ];
        for &format in Format::ALL {
            assert_eq!(check(format, ""), valid_empty.contains(&format), "{format:?}");
        }
    }

    #[test]
    fn very_long_inputs_are_decided_without_panic() {
        let a = "a".repeat(1 << 20);
        let u = "ü".repeat(1 << 19);
        let nested = format!("{}{}", "(".repeat(100_000), ")".repeat(100_000));
        for &format in Format::ALL {
            for input in [&a, &u, &nested] {
                let _ = format.check(input);
            }
        }
        assert!(!check(Format::Hostname, &a));
        assert!(!check(Format::IdnHostname, &u));
        assert!(!check(Format::IdnEmail, &format!("x@{u}.com")));
        assert!(!check(Format::Email, &format!("{a}@example.com")));
        assert!(check(Format::JsonPointer, &format!("/{a}")));
        assert!(check(Format::UriReference, &a));
        assert!(check(Format::Iri, &format!("x:{u}")));
        assert!(check(Format::UriTemplate, &format!("{{{a}}}")));
        assert!(check(Format::Regex, &a));
        assert!(check(Format::Regex, &nested));
        assert!(!check(Format::Regex, &"(".repeat(100_000)));
        assert!(check(Format::Duration, &format!("P{}D", "9".repeat(1 << 20))));
        assert!(check(Format::Time, &format!("12:00:00.{}Z", "1".repeat(1 << 20))));
        assert!(!check(Format::Ipv6, &"1:".repeat(1 << 19)));
        // Many same-named groups in alternatives: not quadratic.
        let alternatives = vec!["(?<n>x)"; 50_000].join("|");
        assert!(check(Format::Regex, &format!("({alternatives})")));
    }

    #[test]
    fn non_ascii() {
        // Digits of other scripts are not digits.
        assert!(!check(Format::Date, "２０２０-01-01"));
        assert!(!check(Format::Ipv4, "١.١.١.١"));
        assert!(!check(Format::Uuid, "２eb8aa08-aa98-11ea-b4aa-73b441d16380"));
        // Multi-byte characters at byte offsets the ASCII grammars look at.
        assert!(!check(Format::DateTime, "2020-01-01é12:00:00Z"));
        assert!(!check(Format::Time, "12:00:00.é"));
        assert!(!check(Format::Duration, "PTé"));
        assert!(!check(Format::RelativeJsonPointer, "0é"));
        assert!(!check(Format::RelativeJsonPointer, "0+é"));
        assert!(check(Format::JsonPointer, "/é~0"));
        // e-mail: UTF-8 only in idn-email.
        assert!(!check(Format::Email, "jösé@example.com"));
        assert!(!check(Format::Email, "\"jösé\"@example.com"));
        assert!(!check(Format::Email, "joe@bücher.de"));
        assert!(check(Format::Email, "joe@xn--bcher-kva.de"));
        // host names: U-labels only in idn-hostname; A-labels in both, validated as IDNA2008
        // labels without the `idn` feature too.
        assert!(!check(Format::Hostname, "bücher.de"));
        // Draft-04/06's hostname: RFC 1034 labels, no IDNA2008 rule on `??--` labels.
        assert!(!check(Format::Hostname, "ab--cd.example"));
        assert!(hostname_rfc1034("ab--cd.example"));
        assert!(hostname_rfc1034("xn--4gbwdl.xn--wgbh1c"));
        assert!(hostname_rfc1034("1host.example"));
        for bad in [
            "",
            ".",
            "a..b",
            "-a.example",
            "a-.example",
            "a_b.example",
            "bücher.de",
            &"a".repeat(64),
        ] {
            assert!(!hostname_rfc1034(bad), "{bad:?}");
        }
        assert!(hostname_rfc1034(&vec!["a".repeat(63); 3].join(".")));
        assert!(!hostname_rfc1034(&vec!["a".repeat(63); 5].join(".")), "over 253 octets");
        assert!(check(Format::Hostname, "xn--bcher-kva.de"));
        assert!(check(Format::Hostname, "XN--BCHER-KVA.de"));
        let a_label = |u: &str| format!("xn--{}", idna::punycode_encode(&u.chars().collect::<Vec<_>>()).unwrap());
        // Not in NFC; upper case (non-ASCII: ASCII is lowered first); a symbol; a leading mark; Bidi rule broken; CONTEXTJ unmet.
        for invalid in [
            "bu\u{0308}cher",
            "\u{00DC}cher",
            "☃",
            "\u{0301}a",
            "a\u{05D0}",
            "a\u{200D}b",
        ] {
            assert!(!check(Format::Hostname, &a_label(invalid)), "{invalid:?}");
        }
        for valid in ["bücher", "ß", "\u{05D0}\u{05D1}", "\u{0915}\u{094D}\u{200D}", "日本"] {
            assert!(check(Format::Hostname, &a_label(valid)), "{valid:?}");
        }
        // IRIs take ucschar; URIs do not; private use only in the query.
        assert!(check(Format::Iri, "http://bücher.de/ä?ö#ü"));
        assert!(!check(Format::Uri, "http://bücher.de/"));
        assert!(check(Format::Iri, "http://x/?\u{E000}"));
        assert!(!check(Format::Iri, "http://x/\u{E000}"));
        assert!(!check(Format::Iri, "http://x/\u{FFFE}"));
        // uri-template literals take ucschar, not controls.
        assert!(check(Format::UriTemplate, "/ü/{x}"));
        assert!(!check(Format::UriTemplate, "/\u{0085}/"));
        // regex: any character is a pattern character; identifiers are Unicode.
        assert!(check(Format::Regex, "ü+[ä-ö]"));
        assert!(check(Format::Regex, "(?<ünïcödé>x)\\k<ünïcödé>"));
        assert!(check(Format::Regex, "(?<\\u{1d4d1}>x)"));
        assert!(!check(Format::Regex, "(?<1a>x)"));
        assert!(!check(Format::Regex, "[ö-ä]"));
        assert!(check(Format::Regex, "[\\u{1F600}-\\u{1F64F}]"));
        assert!(check(Format::Regex, "[\\uD83D\\uDE00-\\uD83D\\uDE4F]"));
    }

    #[test]
    fn internationalized() {
        assert_eq!(Format::IdnHostname.check("bücher.de"), idn::hostname("bücher.de"));
        assert!(check(Format::IdnEmail, "jösé@example.com"));
        assert!(check(Format::IdnEmail, "\"jösé\"@bücher.de"));
        assert!(check(Format::IdnEmail, "joe@xn--bcher-kva.de"));
        assert!(check(Format::IdnHostname, "bücher.de"));
        assert!(check(Format::IdnHostname, "XN--BCHER-KVA.de"));
        assert!(check(Format::IdnHostname, "日本。例"));
        // A U-label is in lower case and NFC (RFC 5891 5.3, RFC 5892 2.2).
        assert!(!check(Format::IdnHostname, "Bücher.de"));
        assert!(!check(Format::IdnHostname, "bu\u{0308}cher.de"));
        assert!(check(Format::IdnEmail, "joe@bu\u{0308}cher.de"));
        // Symbols and punctuation are not PVALID.
        assert!(!check(Format::IdnHostname, "☃.net"));
        assert!(!check(Format::IdnHostname, "a\u{00A0}b"));
        // The A-label form's length: 63 octets a label.
        assert!(check(Format::IdnHostname, &"ü".repeat(20)));
        assert!(!check(Format::IdnHostname, &"ü".repeat(58)));
    }

    #[test]
    fn dates_and_times() {
        assert!(check(Format::Date, "2000-02-29"));
        assert!(!check(Format::Date, "1900-02-29"));
        assert!(check(Format::Time, "23:59:60Z"));
        assert!(check(Format::Time, "00:59:60+01:00"));
        assert!(!check(Format::Time, "23:59:60+01:00"));
        assert!(!check(Format::Time, "12:00:00."));
        assert!(!check(Format::Time, "12:00:00Zz"));
        assert!(!check(Format::Time, "12:00:00+01:00:00"));
        assert!(check(Format::DateTime, "2016-12-31T23:59:60Z"));
        assert!(!check(Format::DateTime, "2016-12-31 23:59:59Z"));
        assert!(check(Format::Duration, "PT1M"));
        assert!(check(Format::Duration, "P1W"));
        assert!(!check(Format::Duration, "P1W1D"));
        assert!(!check(Format::Duration, "PT1H1H"));
        assert!(!check(Format::Duration, "P1M1Y"));
        assert!(!check(Format::Duration, "P1DT"));
        assert!(!check(Format::Duration, "P1DTT1H"));
        assert!(!check(Format::Duration, "P1Y1M1D1H"));
    }

    #[test]
    fn addresses_and_names() {
        assert!(check(Format::Ipv6, "::ffff:1.2.3.4"));
        assert!(check(Format::Ipv6, "1:2:3:4:5:6:1.2.3.4"));
        assert!(!check(Format::Ipv6, "1:2:3:4:5:6:7:1.2.3.4"));
        assert!(!check(Format::Ipv6, "1.2.3.4::"));
        assert!(check(Format::Ipv6, "1::"));
        assert!(check(Format::Ipv6, "1:2:3:4:5:6:7::"));
        assert!(!check(Format::Ipv6, "1:2:3:4:5:6:7:8::"));
        assert!(check(Format::Ipv6, "ABCD:ef01::"));
        assert!(!check(Format::Hostname, "ab--cd.com"));
        assert!(!check(Format::Hostname, "xn--"));
        assert!(check(
            Format::Hostname,
            &["a".repeat(63), "b".repeat(63), "c".repeat(63), "d".repeat(61)].join(".")
        ));
        assert!(!check(
            Format::Hostname,
            &["a".repeat(63), "b".repeat(63), "c".repeat(63), "d".repeat(62)].join(".")
        ));
        assert!(check(Format::Email, "\"a\\\"b\"@example.com"));
        assert!(!check(Format::Email, "\"a\"b\"@example.com"));
        assert!(check(Format::Email, "a@[IPV6:::1]"));
        assert!(!check(Format::Email, "a@[tag:content]"));
        assert!(!check(Format::Email, &format!("{}@example.com", "a".repeat(65))));
        assert!(check(Format::Email, &format!("{}@example.com", "a".repeat(64))));
    }

    #[test]
    fn uris() {
        assert!(check(Format::Uri, "a:"));
        assert!(check(Format::Uri, "http://[v7.x:y]:80/"));
        assert!(!check(Format::Uri, "http://[v7.]/"));
        assert!(!check(Format::Uri, "http://[::1]x/"));
        assert!(!check(Format::Uri, "http://[::1/"));
        assert!(check(Format::UriReference, "//[::1]:8080?#"));
        assert!(!check(Format::UriReference, "%"));
        assert!(!check(Format::Uri, "http://a/b#c#d"));
        assert!(check(Format::Uri, "http://a/b?c?d/e#f?g/h"));
        assert!(check(Format::RelativeJsonPointer, "0+1#"));
        assert!(check(Format::RelativeJsonPointer, "3-10/a"));
        assert!(!check(Format::RelativeJsonPointer, "0+0#"));
        assert!(!check(Format::RelativeJsonPointer, "0+#"));
        assert!(check(Format::UriTemplate, "{=x}{|y}"));
        assert!(!check(Format::UriTemplate, "{x:1*}"));
        assert!(!check(Format::UriTemplate, "{.x.}"));
        assert!(!check(Format::UriTemplate, "{x{y}"));
        assert!(!check(Format::UriTemplate, "%4"));
    }

    #[test]
    fn regexes() {
        for valid in [
            "",
            "a|",
            "|",
            "(?:)",
            "a{1}",
            "a{1,}",
            "a{1,2}?",
            "a{007,7}",
            "\\d+\\p{L}\\P{Lu}\\p{Letter}\\p{gc=Lu}\\p{General_Category=Nd}",
            "\\p{Script=Greek}\\p{sc=Grek}\\p{scx=Latn}\\p{Emoji}\\p{ASCII}\\p{Any}\\p{Assigned}",
            "[\\p{L}\\d-]",
            "[-a]",
            "[a-]",
            "[\\--a]",
            "[\\b]",
            "\\0",
            "\\x41\\u0041\\u{41}\\cz",
            "(a)\\1",
            "\\1(a)",
            "(?<a>x)|(?<a>y)",
            "((?<a>x)|(?<a>y))|(?<a>z)",
            "(?i:a)(?-i:a)(?im-s:a)",
            "(?=a)(?!a)(?<=a)(?<!a)",
            "\\/",
            "[[]",
            "a\nb",
        ] {
            assert!(check(Format::Regex, valid), "{valid:?} is valid");
        }
        for invalid in [
            "(",
            ")",
            "[",
            "]",
            "{",
            "}",
            "a{",
            "a{1",
            "a{,1}",
            "a{2,1}",
            "a{99999999999999999999,9999999999999999999}",
            "*",
            "a**",
            "a+*",
            "^*",
            "\\b+",
            "(?=a)*",
            "(?<=a)+",
            "\\",
            "\\a",
            "\\-",
            "\\00",
            "\\01",
            "\\c",
            "\\c1",
            "\\x4",
            "\\u004",
            "\\u{110000}",
            "\\u{}",
            "\\p",
            "\\pL",
            "\\p{}",
            "\\p{Foo}",
            "\\p{lu}",
            "\\p{Script}",
            "\\p{Script=Foo}",
            "\\p{Foo=Latn}",
            "[\\d-z]",
            "[a-\\d]",
            "[z-a]",
            "[\\B]",
            "[\\1]",
            "\\1",
            "(a)\\2",
            "\\k<a>",
            "(?<a>x)\\k<b>",
            "\\k",
            "(?<a>x)(?<a>y)",
            "(?<a>x)((?<a>y)|z)",
            "(?<a>x|(?<a>y))",
            "(?<>x)",
            "(?<a",
            "(?i)",
            "(?ii:a)",
            "(?i-i:a)",
            "(?-:a)",
            "(?x:a)",
            "(?P<n>x)",
        ] {
            assert!(!check(Format::Regex, invalid), "{invalid:?} is invalid");
        }
    }
}
