//! The Unicode data of the format checkers, read from the checked-in tables of `tables.rs`
//! (generated from ICU4X, and compared with it for every code point by the tests of
//! `generate.rs`), and Normalization Form C (UAX #15) on them. No dependency: this is what lets
//! `hostname` (A-labels) and `regex` (`\p{..}`, group names) run with the `validate` feature
//! alone.

use super::tables;
use crate::few::Few;

/// The value of a range map at `c`: `map` lists `(start, value)` by increasing start, the first
/// start 0, each value holding up to the next start (the generator's invariant).
fn lookup<T: Copy>(map: &[(u32, T)], c: u32) -> T {
    let after = map.partition_point(|&(start, _)| start <= c);
    map[after.saturating_sub(1)].1
}

/// Whether `c` is in the set of an inversion list (the starts of its ranges and the ends, one
/// past, alternating).
fn in_set(list: &[u32], c: char) -> bool {
    list.partition_point(|&boundary| boundary <= u32::from(c)) % 2 == 1
}

/// Whether `c` has the property `ID_Start` (UAX #31).
pub(super) fn is_id_start(c: char) -> bool {
    in_set(tables::ID_START, c)
}

/// Whether `c` has the property `ID_Continue` (UAX #31).
pub(super) fn is_id_continue(c: char) -> bool {
    in_set(tables::ID_CONTINUE, c)
}

/// Whether `name` is a `General_Category` value or value group, by a name or alias of
/// `PropertyValueAliases.txt` (`Lu`, `Uppercase_Letter`, `L`, `LC`, `punct`, ...), exactly.
pub(super) fn is_general_category_name(name: &str) -> bool {
    tables::GENERAL_CATEGORY_NAMES.binary_search(&name).is_ok()
}

/// Whether `name` is a `Script` (and `Script_Extensions`) value by a name or alias of
/// `PropertyValueAliases.txt` (`Latn`, `Latin`, `Qaac`, ...), exactly.
pub(super) fn is_script_name(name: &str) -> bool {
    tables::SCRIPT_NAMES.binary_search(&name).is_ok()
}

/// Whether `name` is a binary property of ECMA-262's table of them (its name or short alias,
/// `Any`, `ASCII` and `Assigned` included), exactly.
pub(super) fn is_binary_property_name(name: &str) -> bool {
    tables::BINARY_PROPERTY_NAMES.binary_search(&name).is_ok()
}

// ---------------------------------------------------------------------------------------------
// IDNA2008 (RFC 5892) and what its rules read of a code point.

/// RFC 5892 section 3's derived property value of a code point (section 2.11's UNASSIGNED
/// counts as DISALLOWED: both are invalid in a label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Idna {
    Disallowed,
    Pvalid,
    ContextJ,
    ContextO,
}

/// The Bidi_Class values RFC 5893's rule names, the others as `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Bidi {
    LeftToRight,
    RightToLeft,
    ArabicLetter,
    ArabicNumber,
    EuropeanNumber,
    EuropeanSeparator,
    CommonSeparator,
    EuropeanTerminator,
    OtherNeutral,
    BoundaryNeutral,
    NonspacingMark,
    Other,
}

/// The scripts RFC 5892 Appendix A's CONTEXTO rules name, the others as `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Script {
    Other,
    Greek,
    Hebrew,
    Hiragana,
    Katakana,
    Han,
}

/// The Joining_Type values of RFC 5892 Appendix A.1, the others (`U`, `C`) as `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Joining {
    Other,
    Dual,
    Left,
    Right,
    Transparent,
}

const BIDI: [Bidi; 12] = [
    Bidi::LeftToRight,
    Bidi::RightToLeft,
    Bidi::ArabicLetter,
    Bidi::ArabicNumber,
    Bidi::EuropeanNumber,
    Bidi::EuropeanSeparator,
    Bidi::CommonSeparator,
    Bidi::EuropeanTerminator,
    Bidi::OtherNeutral,
    Bidi::BoundaryNeutral,
    Bidi::NonspacingMark,
    Bidi::Other,
];
const SCRIPT: [Script; 6] = [
    Script::Other,
    Script::Greek,
    Script::Hebrew,
    Script::Hiragana,
    Script::Katakana,
    Script::Han,
];
const JOINING: [Joining; 5] = [
    Joining::Other,
    Joining::Dual,
    Joining::Left,
    Joining::Right,
    Joining::Transparent,
];

/// What the IDNA2008 rules read of one code point: the value of the `IDNA` table, bits 0-1 the
/// derived property ([`Idna`] in order), bit 2 whether it is a mark (General_Category M), bits
/// 3-6 the [`Bidi`] class, 7-9 the [`Script`], 10-12 the [`Joining`] type (each an index into
/// the enum's order). The last four are only recorded for a code point that is not DISALLOWED
/// (0 otherwise): the rules read them of valid code points only, since a label holding a
/// DISALLOWED one is invalid whatever its neighbours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct IdnaData(u16);

impl IdnaData {
    pub(super) fn of(c: char) -> Self {
        match fast(c) {
            Some(data) => IdnaData(data as u16),
            None => IdnaData(lookup(tables::IDNA, u32::from(c))),
        }
    }

    /// The table value of these fields (what `generate.rs` writes).
    #[cfg(test)]
    pub(super) fn pack(property: Idna, mark: bool, bidi: Bidi, script: Script, joining: Joining) -> u16 {
        if property == Idna::Disallowed {
            return 0;
        }
        property as u16
            | (u16::from(mark) << 2)
            | ((bidi as u16) << 3)
            | ((script as u16) << 7)
            | ((joining as u16) << 10)
    }

    pub(super) fn property(self) -> Idna {
        [Idna::Disallowed, Idna::Pvalid, Idna::ContextJ, Idna::ContextO][usize::from(self.0 & 3)]
    }

    pub(super) fn is_mark(self) -> bool {
        self.0 & 4 != 0
    }

    pub(super) fn bidi(self) -> Bidi {
        BIDI.get(usize::from((self.0 >> 3) & 15))
            .copied()
            .unwrap_or(Bidi::Other)
    }

    pub(super) fn script(self) -> Script {
        SCRIPT
            .get(usize::from((self.0 >> 7) & 7))
            .copied()
            .unwrap_or(Script::Other)
    }

    pub(super) fn joining(self) -> Joining {
        JOINING
            .get(usize::from((self.0 >> 10) & 7))
            .copied()
            .unwrap_or(Joining::Other)
    }
}

// ---------------------------------------------------------------------------------------------
// Normalization Form C: UAX #15 section 3 (canonical decomposition, canonical ordering, then
// canonical composition), with the Hangul syllables computed (Unicode section 3.12).

const HANGUL_S_BASE: u32 = 0xAC00;
const HANGUL_L_BASE: u32 = 0x1100;
const HANGUL_V_BASE: u32 = 0x1161;
const HANGUL_T_BASE: u32 = 0x11A7;
const HANGUL_L_COUNT: u32 = 19;
const HANGUL_V_COUNT: u32 = 21;
const HANGUL_T_COUNT: u32 = 28;
const HANGUL_N_COUNT: u32 = HANGUL_V_COUNT * HANGUL_T_COUNT;
const HANGUL_S_COUNT: u32 = HANGUL_L_COUNT * HANGUL_N_COUNT;

// ---------------------------------------------------------------------------------------------
// A direct table of the Basic Multilingual Plane, built on first use from the range tables
// (about 70,000 writes, 256 KiB, once per process): what an IDN label reads of each of its
// characters costs one load, not a binary search in each of four tables. Characters beyond the
// BMP take the binary searches.

/// Code points below this have a [`fast`] entry.
const FAST_LIMIT: u32 = 0x1_0000;
/// Bits of a [`fast`] entry: 0-15 the [`IdnaData`], 16-23 the combining class, and these.
const HAS_DECOMPOSITION: u32 = 1 << 24;
const COMPOSES_WITH_PREVIOUS: u32 = 1 << 25;
/// The character is a primary composite (UAX #15 D114): its two-character decomposition composes
/// back to it. A character with a decomposition that is not one never occurs in NFC.
const PRIMARY_COMPOSITE: u32 = 1 << 26;

/// The [`fast`] entries, computed once.
static FAST: std::sync::OnceLock<Box<[u32]>> = std::sync::OnceLock::new();

/// ORs `value(v)` into `table` over each run of a range map.
fn fill<T: Copy>(table: &mut [u32], map: &[(u32, T)], value: impl Fn(T) -> u32) {
    for (index, &(start, v)) in map.iter().enumerate() {
        let end = map.get(index + 1).map_or(FAST_LIMIT, |&(next, _)| next).min(FAST_LIMIT);
        let start = start.min(end);
        for entry in &mut table[start as usize..end as usize] {
            *entry |= value(v);
        }
    }
}

/// The direct table, as [`fast`] reads it.
fn fast_table() -> Box<[u32]> {
    let mut table = vec![0u32; FAST_LIMIT as usize];
    fill(&mut table, tables::IDNA, u32::from);
    fill(&mut table, tables::CANONICAL_COMBINING_CLASS, |class| {
        u32::from(class) << 16
    });
    let mut mark = |c: u32, bit: u32| {
        if let Some(entry) = table.get_mut(c as usize) {
            *entry |= bit;
        }
    };
    for &(from, _, _) in tables::DECOMPOSITION {
        mark(u32::from(from), HAS_DECOMPOSITION);
    }
    for c in HANGUL_S_BASE..HANGUL_S_BASE + HANGUL_S_COUNT {
        mark(c, HAS_DECOMPOSITION | PRIMARY_COMPOSITE);
    }
    for &(_, second, composite) in tables::COMPOSITION {
        mark(u32::from(second), COMPOSES_WITH_PREVIOUS);
        mark(u32::from(composite), PRIMARY_COMPOSITE);
    }
    for c in (HANGUL_V_BASE..HANGUL_V_BASE + HANGUL_V_COUNT).chain(HANGUL_T_BASE + 1..HANGUL_T_BASE + HANGUL_T_COUNT) {
        mark(c, COMPOSES_WITH_PREVIOUS);
    }
    table.into_boxed_slice()
}

/// The fast entry of `c`, when it is below [`FAST_LIMIT`].
fn fast(c: char) -> Option<u32> {
    let c = u32::from(c);
    if c >= FAST_LIMIT {
        return None;
    }
    FAST.get_or_init(fast_table).get(c as usize).copied()
}

/// A character's `NFC_Quick_Check` (UAX #15 section 9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum QuickCheck {
    /// It may occur in NFC after any character.
    Yes,
    /// It never occurs in NFC: it has a decomposition and is no primary composite (a singleton,
    /// a composition exclusion, a non-starter decomposition).
    No,
    /// It may compose with the character before it: the normalization decides.
    Maybe,
}

/// The combining class and the quick check of `c`, from its [`fast`] entry; beyond the BMP,
/// the class from the tables and `Maybe` (the normalization decides).
fn quick_check(c: char) -> (u8, QuickCheck) {
    match fast(c) {
        Some(entry) => {
            let check = if entry & (HAS_DECOMPOSITION | PRIMARY_COMPOSITE) == HAS_DECOMPOSITION {
                QuickCheck::No
            } else if entry & COMPOSES_WITH_PREVIOUS != 0 {
                QuickCheck::Maybe
            } else {
                QuickCheck::Yes
            };
            ((entry >> 16) as u8, check)
        }
        None => (combining_class(c), QuickCheck::Maybe),
    }
}

/// Whether `chars` is in NFC: UAX #15's quick check (section 9: the combining classes in order,
/// no character that never occurs in NFC), and the normalization only when a character may
/// compose with the one before it. A label with a precomposed letter (`é`) took the
/// normalization, two vectors grown and freed, when only stable starters were let through: a
/// quarter of the time of the official suite's hostname groups.
pub(super) fn is_nfc(chars: &[char]) -> bool {
    let mut last_class = 0;
    let mut maybe = false;
    for &c in chars {
        let (class, check) = quick_check(c);
        if class != 0 && last_class > class {
            return false;
        }
        match check {
            QuickCheck::Yes => {}
            QuickCheck::No => return false,
            QuickCheck::Maybe => maybe = true,
        }
        last_class = class;
    }
    !maybe || nfc(chars.iter().copied()) == chars
}

/// `Canonical_Combining_Class` of `c`.
pub(super) fn combining_class(c: char) -> u8 {
    match fast(c) {
        Some(entry) => (entry >> 16) as u8,
        None => lookup(tables::CANONICAL_COMBINING_CLASS, u32::from(c)),
    }
}

/// The one-level canonical decomposition of `c` (`Decomposition_Mapping` without a tag): none,
/// one character (a singleton) or two.
pub(super) fn decomposition(c: char) -> Option<(char, Option<char>)> {
    if fast(c).is_some_and(|entry| entry & HAS_DECOMPOSITION == 0) {
        return None;
    }
    decomposition_of(c)
}

/// [`decomposition`] from the tables.
fn decomposition_of(c: char) -> Option<(char, Option<char>)> {
    let s = u32::from(c).wrapping_sub(HANGUL_S_BASE);
    if s < HANGUL_S_COUNT {
        let t = s % HANGUL_T_COUNT;
        let (first, second) = if t == 0 {
            (
                HANGUL_L_BASE + s / HANGUL_N_COUNT,
                HANGUL_V_BASE + (s % HANGUL_N_COUNT) / HANGUL_T_COUNT,
            )
        } else {
            (HANGUL_S_BASE + s - t, HANGUL_T_BASE + t)
        };
        return Some((char::from_u32(first)?, Some(char::from_u32(second)?)));
    }
    let at = tables::DECOMPOSITION
        .binary_search_by_key(&c, |&(from, _, _)| from)
        .ok()?;
    let (_, first, second) = tables::DECOMPOSITION[at];
    Some((first, (second != '\0').then_some(second)))
}

/// The primary composite of `first` and `second` (UAX #15 D114), if any.
pub(super) fn composition(first: char, second: char) -> Option<char> {
    if fast(second).is_some_and(|entry| entry & COMPOSES_WITH_PREVIOUS == 0) {
        return None;
    }
    let (a, b) = (u32::from(first), u32::from(second));
    if a.wrapping_sub(HANGUL_L_BASE) < HANGUL_L_COUNT && b.wrapping_sub(HANGUL_V_BASE) < HANGUL_V_COUNT {
        let lv = (a - HANGUL_L_BASE) * HANGUL_N_COUNT + (b - HANGUL_V_BASE) * HANGUL_T_COUNT;
        return char::from_u32(HANGUL_S_BASE + lv);
    }
    let s = a.wrapping_sub(HANGUL_S_BASE);
    let t = b.wrapping_sub(HANGUL_T_BASE);
    if s < HANGUL_S_COUNT && s % HANGUL_T_COUNT == 0 && (1..HANGUL_T_COUNT).contains(&t) {
        return char::from_u32(a + t);
    }
    let at = tables::COMPOSITION
        .binary_search_by_key(&(first, second), |&(a, b, _)| (a, b))
        .ok()?;
    Some(tables::COMPOSITION[at].2)
}

/// The NFC form of `chars`.
pub(super) fn nfc(chars: impl IntoIterator<Item = char>) -> Vec<char> {
    // Full canonical decomposition (an explicit stack: the mappings nest a few levels, so it
    // stays inline). The output is sized once from the input's lower bound (a slice's
    // length: the labels the checkers pass) and a little room to expand: grown a character at a
    // time, its reallocations were most of the cost of a label the quick check leaves to the
    // normalization (a Devanagari or Tamil vowel sign).
    let chars = chars.into_iter();
    let mut out: Vec<char> = Vec::with_capacity(chars.size_hint().0.saturating_add(8));
    let mut stack: Few<char, 8> = Few::new('\0');
    for c in chars {
        stack.push(c);
        while let Some(c) = stack.pop() {
            match decomposition(c) {
                Some((first, second)) => {
                    if let Some(second) = second {
                        stack.push(second);
                    }
                    stack.push(first);
                }
                None => out.push(c),
            }
        }
    }
    // Canonical ordering: each run of non-starters sorted, stably, by combining class.
    let mut start = 0;
    while start < out.len() {
        if combining_class(out[start]) == 0 {
            start += 1;
            continue;
        }
        let end = out[start..]
            .iter()
            .position(|&c| combining_class(c) == 0)
            .map_or(out.len(), |n| start + n);
        out[start..end].sort_by_key(|&c| combining_class(c));
        start = end;
    }
    // Canonical composition: each character that is not blocked from the last starter (no
    // character between them of a class 0 or at least its own) and forms a primary composite
    // with it replaces the starter by the composite.
    let mut starter: Option<usize> = None;
    // The class of the last character kept after the starter; 256 before any starter (a
    // leading non-starter composes with nothing).
    let mut last_class: u16 = 256;
    let mut kept = 0;
    for i in 0..out.len() {
        let c = out[i];
        let class = u16::from(combining_class(c));
        if let Some(at) = starter {
            let unblocked = last_class < class || (last_class == 0 && at + 1 == kept);
            if unblocked {
                if let Some(composite) = composition(out[at], c) {
                    out[at] = composite;
                    continue;
                }
            }
        }
        if class == 0 {
            starter = Some(kept);
        }
        last_class = class;
        out[kept] = c;
        kept += 1;
    }
    out.truncate(kept);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The direct table says of every BMP code point what the range tables and the
    /// composition table say; a stable starter is its own NFC.
    #[test]
    fn the_direct_table_agrees_with_the_range_tables() {
        let mut seconds: Vec<char> = tables::COMPOSITION.iter().map(|&(_, second, _)| second).collect();
        seconds.sort_unstable();
        let table = fast_table();
        for c in (0..FAST_LIMIT).filter_map(char::from_u32) {
            let entry = table[c as usize];
            let code = u32::from(c);
            assert_eq!(entry as u16, lookup(tables::IDNA, code), "IDNA of U+{code:04X}");
            assert_eq!(
                (entry >> 16) as u8,
                lookup(tables::CANONICAL_COMBINING_CLASS, code),
                "ccc of U+{code:04X}"
            );
            assert_eq!(
                entry & HAS_DECOMPOSITION != 0,
                decomposition_of(c).is_some(),
                "decomposition of U+{code:04X}"
            );
            let second = seconds.binary_search(&c).is_ok()
                || (HANGUL_V_BASE..HANGUL_V_BASE + HANGUL_V_COUNT).contains(&code)
                || (HANGUL_T_BASE + 1..HANGUL_T_BASE + HANGUL_T_COUNT).contains(&code);
            assert_eq!(entry & COMPOSES_WITH_PREVIOUS != 0, second, "second of U+{code:04X}");
            let composite = decomposition_of(c)
                .is_some_and(|(first, second)| second.and_then(|second| composition(first, second)) == Some(c));
            assert_eq!(
                entry & PRIMARY_COMPOSITE != 0,
                composite,
                "primary composite U+{code:04X}"
            );
            if quick_check(c) == (0, QuickCheck::Yes) {
                assert_eq!(nfc([c]), [c], "U+{code:04X}");
            }
        }
        assert!(is_nfc(&['a', '\u{e9}']));
        assert!(!is_nfc(&['e', '\u{301}']));
        assert!(!is_nfc(&['\u{2126}']), "OHM SIGN is no NFC");
    }
}
