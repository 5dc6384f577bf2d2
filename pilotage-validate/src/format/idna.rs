//! Host names: RFC 1123 section 2.1 (RFC 952's labels, a leading digit allowed), and IDNA2008:
//! RFC 5890 (definitions), 5891 (protocol), 5892 (code points), 5893 (Bidi), with the Punycode
//! of RFC 3492. The Unicode data comes from the checked-in tables (`unicode.rs`), so an A-label
//! of `hostname` is validated exactly without the `idn` feature.

use super::unicode::{self, Bidi, Idna, IdnaData, Joining, Script};

/// Longest domain name in octets, without a trailing dot (RFC 1034 section 3.1, 255 octets of
/// wire format).
const MAX_NAME: usize = 253;
/// Longest label in octets (RFC 1034 section 3.1).
const MAX_LABEL: usize = 63;

/// Whether each byte is a letter, a digit or a hyphen (RFC 5890 section 2.3.1's LDH).
static LDH: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] = (byte as u8).is_ascii_alphanumeric() || byte == b'-' as usize;
        byte += 1;
    }
    table
};

/// `hostname`: ASCII only, labels separated by `.`: [`is_domain`] of an ASCII name, in one
/// pass over its bytes (a name's A-label form is itself, so its length is its own). Each label
/// is checked where it ends, a reserved one (`xn--`, `ab--`) as an A-label
/// ([`reserved_label`]); the Bidi rule, only for a Bidi domain name, in a second pass. Before,
/// splitting the name and then reading each label again took 1.05-1.25x jsonschema's time on
/// the official suite's `hostname.json`.
pub(super) fn is_hostname(s: &str) -> bool {
    let mut bidi_domain = false;
    let labels = ldh_labels(s.as_bytes(), |label| {
        if !is_reserved_ldh(label) {
            return true;
        }
        match reserved_label(label) {
            Some(right_to_left) => {
                bidi_domain |= right_to_left;
                true
            }
            None => false,
        }
    });
    // RFC 5893 section 2: in a Bidi domain name, every label must satisfy the rule.
    labels && (!bidi_domain || s.split('.').all(label_satisfies_bidi_rule))
}

/// Whether `b` is at most [`MAX_NAME`] octets of LDH labels separated by `.`, each also
/// accepted by `each`: one pass over the bytes, each label's shape ([`is_ldh_shape`]) and then
/// `each` asked where it ends. A non-ASCII byte is no LDH byte.
fn ldh_labels(b: &[u8], mut each: impl FnMut(&[u8]) -> bool) -> bool {
    if b.len() > MAX_NAME {
        return false;
    }
    let mut start = 0;
    for end in 0..=b.len() {
        match b.get(end) {
            Some(b'.') | None => {
                let label = &b[start..end];
                if !is_ldh_shape(label) || !each(label) {
                    return false;
                }
                start = end + 1;
            }
            Some(&byte) => {
                if !LDH[usize::from(byte)] {
                    return false;
                }
            }
        }
    }
    true
}

/// A reserved LDH label (`label`, LDH bytes, hyphens in the 3rd and 4th positions): valid
/// only as an A-label, `xn--` and the Punycode of a U-label (RFC 5891 section 5.4),
/// case-insensitively. `Some(whether its U-label has a right-to-left character)` when it is
/// one (RFC 5893 section 1.4: the name is then a Bidi domain name).
fn reserved_label(label: &[u8]) -> Option<bool> {
    if !label[..2].eq_ignore_ascii_case(b"xn") {
        return None;
    }
    let mut buffer = ['\0'; MAX_PAYLOAD];
    let unicode = a_label_to_u_label(&label[4..], &mut buffer)?;
    is_u_label(unicode).then(|| has_right_to_left(unicode))
}

/// Draft-04 and draft-06's `hostname`: RFC 1034 section 3.1's labels (letters, digits and
/// inner hyphens, at most 63 octets, at most 253 in all), a leading digit allowed (RFC 1123
/// section 2.1). The IDNA2008 rules on reserved LDH labels (`ab--cd`) and A-labels came with
/// draft-07's reference to RFC 5891, and do not apply.
pub(super) fn is_ldh_hostname(s: &str) -> bool {
    ldh_labels(s.as_bytes(), |_| true)
}

/// `idn-hostname`: U-labels or ASCII labels, separated by any of RFC 3490 section 3.1's full
/// stops (as the suite tests).
pub(super) fn is_idn_hostname(s: &str) -> bool {
    // Each character takes at least one octet of the A-label form.
    s.chars().count() <= MAX_NAME && is_domain(s, true)
}

/// A label separator: `.`, and for IDNs also U+3002 IDEOGRAPHIC FULL STOP, U+FF0E FULLWIDTH
/// FULL STOP and U+FF61 HALFWIDTH IDEOGRAPHIC FULL STOP (RFC 3490 section 3.1).
fn is_separator(c: char, idn: bool) -> bool {
    c == '.' || (idn && matches!(c, '\u{3002}' | '\u{FF0E}' | '\u{FF61}'))
}

/// Whether the A-label form of `s` (labels already found valid) is at most [`MAX_NAME`] octets,
/// every U-label's Punycode counted exactly.
fn within_name_length(s: &str, idn: bool) -> bool {
    let mut total = 0usize;
    for (index, label) in s.split(|c| is_separator(c, idn)).enumerate() {
        total += usize::from(index > 0);
        if label.is_ascii() {
            total += label.len();
        } else {
            let unicode: Vec<char> = label.chars().collect();
            match punycode_encoded_len(&unicode) {
                Some(encoded) => total += encoded + 4,
                None => return false,
            }
        }
    }
    total <= MAX_NAME
}

/// Whether `label` (ASCII) is an LDH label (RFC 5890 section 2.3.1): letters, digits and
/// hyphens, neither first nor last a hyphen (RFC 1123 section 2.1), at most 63 octets.
fn is_ldh_label(b: &[u8]) -> bool {
    is_ldh_shape(b) && b.iter().all(|&c| LDH[usize::from(c)])
}

/// Whether `label` has an LDH label's length and ends: 1 to [`MAX_LABEL`] octets, neither
/// first nor last a hyphen (its bytes are checked apart).
fn is_ldh_shape(label: &[u8]) -> bool {
    !label.is_empty() && label.len() <= MAX_LABEL && label[0] != b'-' && label[label.len() - 1] != b'-'
}

/// Whether a label's characters make the name a Bidi domain name (RFC 5893 section 1.4: an R,
/// AL or AN character). No ASCII character is one of those.
fn has_right_to_left(label: &[char]) -> bool {
    label.iter().any(|&c| {
        !c.is_ascii()
            && matches!(
                IdnaData::of(c).bidi(),
                Bidi::RightToLeft | Bidi::ArabicLetter | Bidi::ArabicNumber
            )
    })
}

/// RFC 5893's Bidi rule on a valid label's Unicode form: an A-label's U-label, any other
/// label's characters (the Bidi classes of ASCII letters do not depend on case). Nothing
/// allocated.
fn label_satisfies_bidi_rule(label: &str) -> bool {
    let b = label.as_bytes();
    if label.is_ascii() && is_reserved_ldh(b) {
        let mut buffer = ['\0'; MAX_PAYLOAD];
        if let Some(unicode) = a_label_to_u_label(&b[4..], &mut buffer) {
            return satisfies_bidi_rule(unicode.iter().copied());
        }
    }
    satisfies_bidi_rule(label.chars())
}

/// A reserved LDH label (RFC 5890 section 2.3.1): hyphens in the 3rd and 4th positions.
fn is_reserved_ldh(label: &[u8]) -> bool {
    label.len() >= 4 && &label[2..4] == b"--"
}

/// Whether `s` is a domain name of valid labels, under the length limits of its A-label form
/// and RFC 5893's Bidi rule. An LDH label is checked on its bytes, a U-label in a buffer on the
/// stack; the Bidi rule is checked in a second pass, only for a Bidi domain name.
fn is_domain(s: &str, idn: bool) -> bool {
    // The octets of the name's A-label form; an upper bound while `approximate` (a U-label
    // short enough that its Punycode need not be written to know it fits its label).
    let mut total = 0usize;
    let mut approximate = false;
    let mut bidi_domain = false;
    for (index, label) in s.split(|c| is_separator(c, idn)).enumerate() {
        if index > 0 {
            total += 1;
        }
        if label.is_ascii() {
            let b = label.as_bytes();
            if !is_ldh_label(b) {
                return false;
            }
            total += b.len();
            if is_reserved_ldh(b) {
                // Hyphens in the 3rd and 4th positions make a reserved LDH label (RFC 5890
                // section 2.3.1).
                match reserved_label(b) {
                    Some(right_to_left) => bidi_domain |= right_to_left,
                    None => return false,
                }
            }
        } else {
            if !idn {
                return false;
            }
            // The A-label is `xn--` and at least one octet per character: a longer label
            // cannot fit (and is not encoded, which is quadratic in its length).
            let mut buffer = ['\0'; MAX_LABEL - 4];
            let mut length = 0;
            for c in label.chars() {
                let Some(slot) = buffer.get_mut(length) else {
                    return false;
                };
                *slot = c;
                length += 1;
            }
            let unicode = &buffer[..length];
            if !is_u_label(unicode) {
                return false;
            }
            let bound = punycode_bound(unicode);
            let encoded = if bound + 4 <= MAX_LABEL {
                approximate = true;
                bound
            } else {
                match punycode_encoded_len(unicode) {
                    Some(exact) if exact + 4 <= MAX_LABEL => exact,
                    _ => return false,
                }
            };
            total += encoded + 4;
            bidi_domain |= has_right_to_left(unicode);
        }
        if total > MAX_NAME && !approximate {
            return false;
        }
    }
    if total > MAX_NAME && !within_name_length(s, idn) {
        return false;
    }
    // RFC 5893 section 2: in a Bidi domain name, every label must satisfy the rule.
    !bidi_domain || s.split(|c| is_separator(c, idn)).all(label_satisfies_bidi_rule)
}

/// The most octets of an A-label's Punycode part (`xn--` and at most 59 octets), and so the
/// most characters it decodes to (each takes at least one octet).
const MAX_PAYLOAD: usize = MAX_LABEL - 4;

/// The U-label an A-label's Punycode part (`payload`, ASCII, either case) encodes, if it is
/// one: it decodes (RFC 3492), holds a non-ASCII character (RFC 5890 section 2.3.2.1:
/// otherwise it is no U-label), and encodes back to itself, in lower case (RFC 5891 section
/// 5.4: only the canonical form; every payload this decoder accepts does, as argued in the
/// body). Decoded into `buffer`, nothing allocated.
fn a_label_to_u_label<'b>(payload: &[u8], buffer: &'b mut [char; MAX_PAYLOAD]) -> Option<&'b [char]> {
    let mut lower = [0u8; MAX_PAYLOAD];
    let lower = lower.get_mut(..payload.len())?;
    for (to, from) in lower.iter_mut().zip(payload) {
        *to = from.to_ascii_lowercase();
    }
    let length = punycode_decode_into(lower, buffer)?;
    let decoded = &buffer[..length];
    if decoded.iter().all(char::is_ascii) {
        return None;
    }
    // No re-encoding: decoding is injective on the lower-case payloads it accepts, so what
    // decodes is the canonical encoding of its result. Each variable-length integer has one
    // representation (RFC 3492 section 3.3: a digit at or above the threshold continues, one
    // below it ends, and its value fixes every digit); the bias after a delta is a function of
    // the deltas before it, as in the encoder; and the decoder's insertions come in the
    // encoder's order (the code point never decreases, since `n` only grows, and equal code
    // points go left to right, since `i` grows past each insertion). Overflow, a code point
    // that is no scalar value and a leading `-` are refused. The round trip is tested over
    // random payloads (`decoding_is_injective_so_the_round_trip_holds`) instead of run on each.
    Some(decoded)
}

/// Whether `label` is a U-label (RFC 5891 section 5.4, the checks of section 4.2.3 and 5.3):
/// no `--` in the 3rd and 4th positions, no leading or trailing hyphen (4.2.3.1); not starting
/// with a combining mark (4.2.3.2); every code point PVALID, or CONTEXTJ/CONTEXTO with its rule
/// of RFC 5892 Appendix A satisfied (4.2.3.3, 4.2.2); in NFC (5.3). The Bidi rule (4.2.3.4)
/// concerns the whole name ([`is_domain`]).
fn is_u_label(label: &[char]) -> bool {
    let (Some(&first), Some(&last)) = (label.first(), label.last()) else {
        return false;
    };
    if first == '-' || last == '-' || (label.len() >= 4 && label[2] == '-' && label[3] == '-') {
        return false;
    }
    // A mark is PVALID (Mn, Mc) or DISALLOWED (Me), so the table records it for the first.
    if IdnaData::of(first).is_mark() {
        return false;
    }
    let valid = label
        .iter()
        .enumerate()
        .all(|(i, &c)| match IdnaData::of(c).property() {
            Idna::Pvalid => true,
            Idna::ContextJ => context_j(label, i),
            Idna::ContextO => context_o(label, i),
            Idna::Disallowed => false,
        });
    valid && unicode::is_nfc(label)
}

/// RFC 5892 Appendix A.1 (ZERO WIDTH NON-JOINER) and A.2 (ZERO WIDTH JOINER). The neighbours'
/// data is read as of valid code points: were one DISALLOWED, the label fails anyway.
fn context_j(label: &[char], i: usize) -> bool {
    let virama = |c: char| unicode::combining_class(c) == 9;
    // Both: If Canonical_Combining_Class(Before(cp)) .eq. Virama Then True.
    if i > 0 && virama(label[i - 1]) {
        return true;
    }
    if label[i] != '\u{200C}' {
        return false;
    }
    // A.1: If RegExpMatch((Joining_Type:{L,D})(Joining_Type:T)*\u200C
    //      (Joining_Type:T)*(Joining_Type:{R,D})) Then True.
    let joining = |c: &&char| IdnaData::of(**c).joining();
    let left = label[..i].iter().rev().find(|c| joining(c) != Joining::Transparent);
    let right = label[i + 1..].iter().find(|c| joining(c) != Joining::Transparent);
    left.is_some_and(|c| matches!(joining(&c), Joining::Left | Joining::Dual))
        && right.is_some_and(|c| matches!(joining(&c), Joining::Right | Joining::Dual))
}

/// RFC 5892 Appendix A.3 to A.9, the CONTEXTO rules.
fn context_o(label: &[char], i: usize) -> bool {
    let before = i.checked_sub(1).and_then(|j| label.get(j)).copied();
    let after = label.get(i + 1).copied();
    let script = |c: char| IdnaData::of(c).script();
    match label[i] {
        // A.3 MIDDLE DOT: between two `l`s.
        '\u{00B7}' => before == Some('l') && after == Some('l'),
        // A.4 GREEK LOWER NUMERAL SIGN (KERAIA): followed by a Greek character.
        '\u{0375}' => after.is_some_and(|c| script(c) == Script::Greek),
        // A.5 HEBREW PUNCTUATION GERESH, A.6 GERSHAYIM: preceded by a Hebrew character.
        '\u{05F3}' | '\u{05F4}' => before.is_some_and(|c| script(c) == Script::Hebrew),
        // A.7 KATAKANA MIDDLE DOT: some character of the label is Hiragana, Katakana or Han.
        '\u{30FB}' => label
            .iter()
            .any(|&c| matches!(script(c), Script::Hiragana | Script::Katakana | Script::Han)),
        // A.8 ARABIC-INDIC DIGITS: no Extended Arabic-Indic digit in the label.
        '\u{0660}'..='\u{0669}' => !label.iter().any(|c| ('\u{06F0}'..='\u{06F9}').contains(c)),
        // A.9 EXTENDED ARABIC-INDIC DIGITS: no Arabic-Indic digit in the label.
        '\u{06F0}'..='\u{06F9}' => !label.iter().any(|c| ('\u{0660}'..='\u{0669}').contains(c)),
        _ => false,
    }
}

/// RFC 5893 section 2, the Bidi rule, on one label (of valid code points).
fn satisfies_bidi_rule(label: impl IntoIterator<Item = char>) -> bool {
    use Bidi as B;
    let mut classes = label.into_iter().map(|c| IdnaData::of(c).bidi());
    let Some(first) = classes.next() else { return false };
    // 1. The first character must have the class L, R or AL.
    let rtl = match first {
        B::LeftToRight => false,
        B::RightToLeft | B::ArabicLetter => true,
        _ => return false,
    };
    let neutral = |c: Bidi| {
        matches!(
            c,
            B::EuropeanSeparator
                | B::CommonSeparator
                | B::EuropeanTerminator
                | B::OtherNeutral
                | B::BoundaryNeutral
                | B::NonspacingMark
        )
    };
    // One pass, nothing stored: whether every class is allowed, the last one that is no NSM,
    // and whether EN and AN occur.
    let (mut allowed, mut last, mut en, mut an) = (true, first, false, false);
    for c in std::iter::once(first).chain(classes) {
        allowed &= neutral(c)
            || if rtl {
                // 2. Only R, AL, AN, EN, ES, CS, ET, ON, BN and NSM.
                matches!(
                    c,
                    B::RightToLeft | B::ArabicLetter | B::ArabicNumber | B::EuropeanNumber
                )
            } else {
                // 5. Only L, EN, ES, CS, ET, ON, BN and NSM.
                matches!(c, B::LeftToRight | B::EuropeanNumber)
            };
        if c != B::NonspacingMark {
            last = c;
        }
        en |= c == B::EuropeanNumber;
        an |= c == B::ArabicNumber;
    }
    if rtl {
        // 3. The end: R, AL, EN or AN, then zero or more NSM.
        // 4. Not both EN and AN.
        let end = matches!(
            last,
            B::RightToLeft | B::ArabicLetter | B::EuropeanNumber | B::ArabicNumber
        );
        allowed && end && !(en && an)
    } else {
        // 6. The end: L or EN, then zero or more NSM.
        allowed && matches!(last, B::LeftToRight | B::EuropeanNumber)
    }
}

// ---------------------------------------------------------------------------------------------
// Punycode: RFC 3492 section 6 with the parameters of section 5, in u32 arithmetic whose
// overflow fails (section 6.4).

const BASE: u32 = 36;
const T_MIN: u32 = 1;
const T_MAX: u32 = 26;
const SKEW: u32 = 38;
const DAMP: u32 = 700;
const INITIAL_BIAS: u32 = 72;
const INITIAL_N: u32 = 0x80;

/// Section 6.1, bias adaptation.
fn adapt(delta: u32, points: u32, first: bool) -> u32 {
    let mut delta = if first { delta / DAMP } else { delta / 2 };
    delta += delta / points;
    let mut k = 0;
    while delta > ((BASE - T_MIN) * T_MAX) / 2 {
        delta /= BASE - T_MIN;
        k += BASE;
    }
    k + (BASE - T_MIN + 1) * delta / (delta + SKEW)
}

/// The threshold `t` of position `k` (section 6.2: clamped to `[tmin, tmax]`).
fn threshold(k: u32, bias: u32) -> u32 {
    k.saturating_sub(bias).clamp(T_MIN, T_MAX)
}

/// Section 5's digit values: `a`-`z` 0 to 25, `0`-`9` 26 to 35 (upper case letters too, as
/// RFC 3492 allows; an A-label reaches here in lower case).
fn digit_value(b: u8) -> Option<u32> {
    match b {
        b'a'..=b'z' => Some(u32::from(b - b'a')),
        b'A'..=b'Z' => Some(u32::from(b - b'A')),
        b'0'..=b'9' => Some(u32::from(b - b'0') + 26),
        _ => None,
    }
}

fn digit_char(d: u32) -> char {
    // d < 36 by construction.
    char::from(if d < 26 { b'a' + d as u8 } else { b'0' + (d - 26) as u8 })
}

/// Section 6.2, decoding, into a vector (for the tests; the checks decode on the stack with
/// [`punycode_decode_into`]).
#[cfg(test)]
pub(super) fn punycode_decode(input: &str) -> Option<Vec<char>> {
    // Each decoded character takes at least one octet of the input.
    let mut output = vec!['\0'; input.len()];
    let length = punycode_decode_into(input.as_bytes(), &mut output)?;
    output.truncate(length);
    Some(output)
}

/// Section 6.2, decoding, into `output`; the number of characters written. `None` for an
/// invalid input (a non-basic code point, a bad digit, an overflow, a basic code point encoded
/// as a delta, or a value that is no scalar value), or one that does not fit `output`.
fn punycode_decode_into(bytes: &[u8], output: &mut [char]) -> Option<usize> {
    if !bytes.is_ascii() {
        return None;
    }
    // The basic code points: everything before the last delimiter, which is consumed only
    // after at least one of them (a leading `-` is a digit, and an invalid one).
    let mut written = 0usize;
    let rest: &[u8] = match bytes.iter().rposition(|&b| b == b'-') {
        Some(at) if at > 0 => {
            for &b in &bytes[..at] {
                *output.get_mut(written)? = char::from(b);
                written += 1;
            }
            &bytes[at + 1..]
        }
        _ => bytes,
    };
    let (mut n, mut i, mut bias) = (INITIAL_N, 0u32, INITIAL_BIAS);
    let mut position = 0;
    while position < rest.len() {
        let old_i = i;
        let mut w: u32 = 1;
        let mut k = BASE;
        loop {
            let digit = digit_value(*rest.get(position)?)?;
            position += 1;
            i = i.checked_add(digit.checked_mul(w)?)?;
            let t = threshold(k, bias);
            if digit < t {
                break;
            }
            w = w.checked_mul(BASE - t)?;
            k += BASE;
        }
        let length = u32::try_from(written + 1).ok()?;
        bias = adapt(i - old_i, length, old_i == 0);
        n = n.checked_add(i / length)?;
        i %= length;
        if n < INITIAL_N || written >= output.len() {
            return None;
        }
        let at = usize::try_from(i).ok()?;
        output.copy_within(at..written, at + 1);
        output[at] = char::from_u32(n)?;
        written += 1;
        i += 1;
    }
    Some(written)
}

/// RFC 3492 section 6.3, encoding: the Punycode of `input` (no `xn--` prefix), or `None` on
/// overflow (the checks themselves encode without writing, [`punycode_encode_into`]).
#[cfg(test)]
pub(super) fn punycode_encode(input: &[char]) -> Option<String> {
    let mut output = String::new();
    punycode_encode_into(input, |c| output.push(c))?;
    Some(output)
}

/// At most how many octets [`punycode_encode`] writes for a label of DNS length: its ASCII
/// characters, a `-`, and at most 9 digits for each other character (a delta is below
/// 0x10FFFF x 60 < 10^8, and each digit after the first carries a factor of 36 - t >= 10).
fn punycode_bound(input: &[char]) -> usize {
    let basic = input.iter().filter(|c| c.is_ascii()).count();
    basic + usize::from(basic > 0) + 9 * (input.len() - basic)
}

/// The length in octets of [`punycode_encode`]'s output, without writing it.
fn punycode_encoded_len(input: &[char]) -> Option<usize> {
    let mut length = 0usize;
    punycode_encode_into(input, |_| length += 1)?;
    Some(length)
}

/// The longest input whose code points [`punycode_encode_into`] sorts first (a label of DNS
/// length has at most [`MAX_PAYLOAD`] characters); a longer one is read as RFC 3492 writes it.
const SORTED_AT_MOST: usize = 64;

/// RFC 3492 section 6.3, each output character given to `push` (all ASCII).
fn punycode_encode_into(input: &[char], mut push: impl FnMut(char)) -> Option<()> {
    let mut basic = 0u32;
    for &c in input.iter().filter(|c| c.is_ascii()) {
        push(c);
        basic += 1;
    }
    if basic > 0 {
        push('-');
    }
    let (mut n, mut delta, mut bias) = (INITIAL_N, 0u32, INITIAL_BIAS);
    let mut handled = basic;
    let total = u32::try_from(input.len()).ok()?;
    // The code points to insert, ascending without repeats, sorted once for a label of DNS
    // length: finding each next one by a pass over the input doubled the passes (the exact
    // length of a long U-label was a fifth of the time of the official suite's hostname groups).
    let mut sorted = [0u32; SORTED_AT_MOST];
    let mut distinct = 0;
    if input.len() <= SORTED_AT_MOST {
        for c in input.iter().filter(|c| !c.is_ascii()) {
            sorted[distinct] = u32::from(*c);
            distinct += 1;
        }
        sorted[..distinct].sort_unstable();
        let mut kept = 0;
        for index in 0..distinct {
            if kept == 0 || sorted[kept - 1] != sorted[index] {
                sorted[kept] = sorted[index];
                kept += 1;
            }
        }
        distinct = kept;
    }
    let mut ascending = sorted[..distinct].iter().copied();
    while handled < total {
        let m = match ascending.next() {
            Some(m) => m,
            None => input.iter().map(|&c| u32::from(c)).filter(|&c| c >= n).min()?,
        };
        delta = delta.checked_add((m - n).checked_mul(handled + 1)?)?;
        n = m;
        // The characters below `n` since the last insertion, counted without a branch and added
        // to `delta` at the next insertion (or after the pass): at most the input's length.
        let mut below = 0u32;
        for &c in input {
            let c = u32::from(c);
            below += u32::from(c < n);
            if c == n {
                delta = delta.checked_add(below)?;
                below = 0;
                let mut q = delta;
                let mut k = BASE;
                loop {
                    let t = threshold(k, bias);
                    if q < t {
                        break;
                    }
                    push(digit_char(t + (q - t) % (BASE - t)));
                    q = (q - t) / (BASE - t);
                    k += BASE;
                }
                push(digit_char(q));
                bias = adapt(delta, handled + 1, handled == basic);
                delta = 0;
                handled += 1;
            }
        }
        delta = delta.checked_add(below)?.checked_add(1)?;
        n = n.checked_add(1)?;
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What lets [`a_label_to_u_label`] skip re-encoding (RFC 5891 section 5.4's round trip):
    /// every lower-case payload the decoder accepts, with a non-ASCII result, is exactly the
    /// encoding of what it decodes to. Random payloads of `a-z`, `0-9` and `-`, most of which
    /// decode.
    #[test]
    fn decoding_is_injective_so_the_round_trip_holds() {
        let alphabet: Vec<String> = "abcdefghijklmnopqrstuvwxyz0123456789-"
            .chars()
            .map(String::from)
            .collect();
        let alphabet: Vec<&str> = alphabet.iter().map(String::as_str).collect();
        let count = if cfg!(debug_assertions) { 300_000 } else { 3_000_000 };
        let mut non_ascii = 0;
        for s in crate::format::tests::strings(&alphabet, count, 12, 3492) {
            let mut buffer = ['\0'; MAX_PAYLOAD];
            let Some(length) = punycode_decode_into(s.as_bytes(), &mut buffer) else {
                continue;
            };
            let decoded = &buffer[..length];
            if decoded.iter().all(char::is_ascii) {
                continue;
            }
            non_ascii += 1;
            assert_eq!(
                punycode_encode(decoded).as_deref(),
                Some(s.as_str()),
                "{s:?} decodes to {decoded:?}"
            );
            assert_eq!(
                a_label_to_u_label(s.as_bytes(), &mut ['\0'; MAX_PAYLOAD]),
                Some(decoded),
                "{s:?}"
            );
        }
        assert!(
            non_ascii > count / 10,
            "{non_ascii} of {count} decoded to a U-label candidate"
        );
    }

    /// The byte-by-byte `hostname` (plain LDH labels decided without the IDNA2008 walk) and
    /// draft-04's `hostname` agree with the definitions they replaced on 200,000 strings.
    #[test]
    fn the_byte_by_byte_host_names_agree_with_the_whole_check() {
        let alphabet = [
            "a",
            "Z",
            "0",
            "9",
            "-",
            "--",
            ".",
            ".",
            "xn--",
            "xn--bcher-kva",
            "XN--ihqwcrb4cv8a8dqg056pqjye",
            "ab--",
            "_",
            " ",
            "\u{e9}",
            "\u{3002}",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        ];
        let (mut valid, mut ldh_valid) = (0, 0);
        let count = 200_000;
        for s in crate::format::tests::strings(&alphabet, count, 10, 1123) {
            let whole = s.is_ascii() && s.len() <= MAX_NAME && is_domain(&s, false);
            assert_eq!(is_hostname(&s), whole, "{s:?}");
            let ldh = s.is_ascii()
                && s.len() <= MAX_NAME
                && s.split('.').all(|label| {
                    let b = label.as_bytes();
                    !b.is_empty()
                        && b.len() <= MAX_LABEL
                        && b[0] != b'-'
                        && b[b.len() - 1] != b'-'
                        && b.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'-')
                });
            assert_eq!(is_ldh_hostname(&s), ldh, "{s:?}");
            valid += usize::from(whole);
            ldh_valid += usize::from(ldh);
        }
        assert!(
            valid > 1_000 && ldh_valid > valid,
            "{valid} and {ldh_valid} valid of {count}"
        );
    }

    /// The bound that spares encoding a short U-label holds: over every code point range an
    /// IDN uses, labels of 1 to 6 characters at the ends of the ranges encode within it; and a
    /// name of many short U-labels is measured exactly when the bound alone would exceed 253.
    #[test]
    fn the_punycode_bound_holds_and_long_names_are_measured_exactly() {
        let samples = [
            '\u{80}',
            '\u{e9}',
            '\u{3b1}',
            '\u{5d0}',
            '\u{4e00}',
            '\u{ac00}',
            '\u{ffff}',
            '\u{10000}',
            '\u{10ffff}',
        ];
        for length in 1..=6 {
            for &a in &samples {
                for &b in &samples {
                    let label: Vec<char> = (0..length).map(|i| if i % 2 == 0 { a } else { b }).collect();
                    let exact = punycode_encoded_len(&label).unwrap();
                    assert!(exact <= punycode_bound(&label), "{label:?}: {exact}");
                }
            }
        }
        // 28 labels of `ü` (`xn--tda`, 7 octets) and dots: 28 * 8 - 1 = 223 octets, valid,
        // though the bound (14 a label) would say 419.
        let name = vec!["\u{fc}"; 28].join(".");
        assert!(is_idn_hostname(&name), "223 octets");
        let too_long = vec!["\u{fc}\u{fc}\u{fc}\u{fc}"; 26].join(".");
        // `xn--tdaaaa` is 10 octets: 26 * 11 - 1 = 285.
        assert!(!is_idn_hostname(&too_long), "285 octets");
    }

    #[test]
    fn punycode_round_trips_rfc_3492_samples() {
        // RFC 3492 section 7.1 (lower-cased), and the suite's A-labels.
        for (unicode, encoded) in [
            ("\u{0644}\u{064A}\u{0647}\u{0645}\u{0627}\u{0628}\u{062A}\u{0643}\u{0644}\u{0645}\u{0648}\u{0634}\u{0639}\u{0631}\u{0628}\u{064A}\u{061F}", "egbpdaj6bu4bxfgehfvwxn"),
            ("\u{4ED6}\u{4EEC}\u{4E3A}\u{4EC0}\u{4E48}\u{4E0D}\u{8BF4}\u{4E2D}\u{6587}", "ihqwcrb4cv8a8dqg056pqjye"),
            ("Pročprostěnemluvíčesky", "Proprostnemluvesky-uyb24dma41a"),
            ("\u{30D1}\u{30D5}\u{30A3}\u{30FC}de\u{30EB}\u{30F3}\u{30D0}", "de-jg4avhby1noc0d"),
            ("bücher", "bcher-kva"),
            ("-> $1.00 <-", "-> $1.00 <--"),
        ] {
            let chars: Vec<char> = unicode.chars().collect();
            assert_eq!(punycode_encode(&chars).as_deref(), Some(encoded), "{unicode}");
            assert_eq!(punycode_decode(encoded), Some(chars), "{encoded}");
        }
        for invalid in ["x", "99999999999", "a-é", "zzzzzzzzzzzzzzzzzzzzzz"] {
            let decoded = punycode_decode(invalid);
            assert!(
                decoded.is_none() || decoded.as_ref().is_some_and(|d| d.iter().any(|c| !c.is_ascii())),
                "{invalid}: {decoded:?}"
            );
        }
        assert_eq!(punycode_decode("99999999999"), None);
        assert_eq!(punycode_decode("a-é"), None);
        assert_eq!(punycode_decode("-a"), None);
    }
}
