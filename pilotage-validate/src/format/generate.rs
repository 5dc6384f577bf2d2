//! The generator of `tables.rs`, and its check: every table against ICU4X (`icu_properties`,
//! `icu_normalizer`; dev-dependencies, so nothing of them reaches a user's build).
//!
//! `tables_are_current` renders the tables from ICU4X and compares the text with the
//! checked-in file; with `PILOTAGE_WRITE_FORMAT_TABLES=1` it writes the file instead:
//!
//! ```text
//! PILOTAGE_WRITE_FORMAT_TABLES=1 cargo test -p pilotage-validate --lib format::generate
//! ```
//!
//! The other tests read every code point 0..=0x10FFFF through the lookups the checkers use
//! (`unicode.rs`) and compare each answer with ICU4X's, so a table and its reader are checked
//! together; NFC is compared with `icu_normalizer` on every code point and on generated
//! sequences.

use std::fmt::Write as _;

use icu_normalizer::properties::{CanonicalCompositionBorrowed, CanonicalDecompositionBorrowed, Decomposed};
use icu_normalizer::ComposingNormalizerBorrowed;
use icu_properties::props::{
    BidiClass, CanonicalCombiningClass, ChangesWhenNfkcCasefolded, DefaultIgnorableCodePoint, GeneralCategory,
    GeneralCategoryGroup, HangulSyllableType, IdContinue, IdStart, JoiningType, NoncharacterCodePoint,
    ParseableEnumeratedProperty, Script as IcuScript, WhiteSpace,
};
use icu_properties::{CodePointMapData, CodePointSetData};

use super::unicode::{self, Bidi, Idna, IdnaData, Joining, Script};

const LAST: u32 = 0x10FFFF;

fn general_category(c: u32) -> GeneralCategory {
    CodePointMapData::<GeneralCategory>::new().get32(c)
}

/// RFC 5892 section 3, in its order: Exceptions (2.6), BackwardCompatible (2.7, empty),
/// Unassigned (2.11), LDH (2.10), JoinControl (2.9), Unstable (2.2), IgnorableProperties (2.3),
/// IgnorableBlocks (2.4), OldHangulJamo (2.5), LetterDigits (2.1), else DISALLOWED; computed
/// from ICU4X's Unicode data (IDNA2008 is defined by this algorithm, not by a fixed table).
fn idna_property(cp: u32) -> Idna {
    match cp {
        // 2.6 Exceptions: PVALID.
        0x00DF | 0x03C2 | 0x06FD | 0x06FE | 0x0F0B | 0x3007 => return Idna::Pvalid,
        // 2.6 Exceptions: CONTEXTO.
        0x00B7 | 0x0375 | 0x05F3 | 0x05F4 | 0x30FB | 0x0660..=0x0669 | 0x06F0..=0x06F9 => return Idna::ContextO,
        // 2.6 Exceptions: DISALLOWED.
        0x0640 | 0x07FA | 0x302E | 0x302F | 0x3031..=0x3035 | 0x303B => return Idna::Disallowed,
        _ => {}
    }
    let category = general_category(cp);
    let noncharacter = CodePointSetData::new::<NoncharacterCodePoint>().contains32(cp);
    // 2.11 Unassigned: General_Category Cn, not a noncharacter (which 2.3 disallows).
    if category == GeneralCategory::Unassigned && !noncharacter {
        return Idna::Disallowed;
    }
    // 2.10 LDH.
    if matches!(cp, 0x61..=0x7A | 0x30..=0x39 | 0x2D) {
        return Idna::Pvalid;
    }
    // 2.9 JoinControl.
    if matches!(cp, 0x200C | 0x200D) {
        return Idna::ContextJ;
    }
    // 2.2 Unstable: NFKC(casefold(NFKC(cp))) != cp, the property Changes_When_NFKC_Casefolded.
    if CodePointSetData::new::<ChangesWhenNfkcCasefolded>().contains32(cp) {
        return Idna::Disallowed;
    }
    // 2.3 IgnorableProperties: Default_Ignorable_Code_Point, White_Space, Noncharacter_Code_Point.
    if noncharacter
        || CodePointSetData::new::<DefaultIgnorableCodePoint>().contains32(cp)
        || CodePointSetData::new::<WhiteSpace>().contains32(cp)
    {
        return Idna::Disallowed;
    }
    // 2.4 IgnorableBlocks: Combining Diacritical Marks for Symbols, Musical Symbols, Ancient
    // Greek Musical Notation.
    if matches!(cp, 0x20D0..=0x20FF | 0x1D100..=0x1D1FF | 0x1D200..=0x1D24F) {
        return Idna::Disallowed;
    }
    // 2.5 OldHangulJamo: Hangul_Syllable_Type L, V or T.
    let jamo = CodePointMapData::<HangulSyllableType>::new().get32(cp);
    if jamo == HangulSyllableType::LeadingJamo
        || jamo == HangulSyllableType::VowelJamo
        || jamo == HangulSyllableType::TrailingJamo
    {
        return Idna::Disallowed;
    }
    // 2.1 LetterDigits: Ll, Lu, Lo, Nd, Lm, Mn, Mc.
    match category {
        GeneralCategory::LowercaseLetter
        | GeneralCategory::UppercaseLetter
        | GeneralCategory::OtherLetter
        | GeneralCategory::DecimalNumber
        | GeneralCategory::ModifierLetter
        | GeneralCategory::NonspacingMark
        | GeneralCategory::SpacingMark => Idna::Pvalid,
        _ => Idna::Disallowed,
    }
}

fn is_mark(cp: u32) -> bool {
    GeneralCategoryGroup::Mark.contains(general_category(cp))
}

fn bidi(cp: u32) -> Bidi {
    let class = CodePointMapData::<BidiClass>::new().get32(cp);
    [
        (BidiClass::LeftToRight, Bidi::LeftToRight),
        (BidiClass::RightToLeft, Bidi::RightToLeft),
        (BidiClass::ArabicLetter, Bidi::ArabicLetter),
        (BidiClass::ArabicNumber, Bidi::ArabicNumber),
        (BidiClass::EuropeanNumber, Bidi::EuropeanNumber),
        (BidiClass::EuropeanSeparator, Bidi::EuropeanSeparator),
        (BidiClass::CommonSeparator, Bidi::CommonSeparator),
        (BidiClass::EuropeanTerminator, Bidi::EuropeanTerminator),
        (BidiClass::OtherNeutral, Bidi::OtherNeutral),
        (BidiClass::BoundaryNeutral, Bidi::BoundaryNeutral),
        (BidiClass::NonspacingMark, Bidi::NonspacingMark),
    ]
    .into_iter()
    .find(|&(icu, _)| icu == class)
    .map_or(Bidi::Other, |(_, ours)| ours)
}

fn script(cp: u32) -> Script {
    let script = CodePointMapData::<IcuScript>::new().get32(cp);
    [
        (IcuScript::Greek, Script::Greek),
        (IcuScript::Hebrew, Script::Hebrew),
        (IcuScript::Hiragana, Script::Hiragana),
        (IcuScript::Katakana, Script::Katakana),
        (IcuScript::Han, Script::Han),
    ]
    .into_iter()
    .find(|&(icu, _)| icu == script)
    .map_or(Script::Other, |(_, ours)| ours)
}

fn joining(cp: u32) -> Joining {
    let joining = CodePointMapData::<JoiningType>::new().get32(cp);
    [
        (JoiningType::DualJoining, Joining::Dual),
        (JoiningType::LeftJoining, Joining::Left),
        (JoiningType::RightJoining, Joining::Right),
        (JoiningType::Transparent, Joining::Transparent),
    ]
    .into_iter()
    .find(|&(icu, _)| icu == joining)
    .map_or(Joining::Other, |(_, ours)| ours)
}

/// The `IDNA` table's value of `cp`, from ICU4X.
fn idna_value(cp: u32) -> u16 {
    IdnaData::pack(idna_property(cp), is_mark(cp), bidi(cp), script(cp), joining(cp))
}

fn combining_class(cp: u32) -> u8 {
    CodePointMapData::<CanonicalCombiningClass>::new().get32(cp).0
}

/// The code points, as `char`s (the surrogates have no decomposition, composition or NFC).
fn chars() -> impl Iterator<Item = char> {
    (0..=LAST).filter_map(char::from_u32)
}

fn is_hangul_syllable(c: char) -> bool {
    ('\u{AC00}'..='\u{D7A3}').contains(&c)
}

/// ICU4X's one-level canonical decomposition of `c`.
fn icu_decomposition(c: char) -> Option<(char, Option<char>)> {
    match CanonicalDecompositionBorrowed::new().decompose(c) {
        Decomposed::Default => None,
        Decomposed::Singleton(first) => Some((first, None)),
        Decomposed::Expansion(first, second) => Some((first, Some(second))),
    }
}

/// ICU4X's primary composites: `(first, second, composite)` for every code point whose
/// two-character decomposition composes back to it (every primary composite has one).
fn icu_compositions() -> Vec<(char, char, char)> {
    let compose = CanonicalCompositionBorrowed::new();
    chars()
        .filter_map(|c| match icu_decomposition(c) {
            Some((first, Some(second))) if compose.compose(first, second) == Some(c) => Some((first, second, c)),
            _ => None,
        })
        .collect()
}

/// `(start, value)` of every run of equal values of `value` over 0..=0x10FFFF.
fn runs<T: PartialEq + Copy>(value: impl Fn(u32) -> T) -> Vec<(u32, T)> {
    let mut runs: Vec<(u32, T)> = Vec::new();
    for cp in 0..=LAST {
        let v = value(cp);
        if runs.last().is_none_or(|&(_, last)| last != v) {
            runs.push((cp, v));
        }
    }
    runs
}

/// The inversion list of a set: the first code point of each range and the one after its last.
fn inversion_list(contains: impl Fn(u32) -> bool) -> Vec<u32> {
    let mut list = Vec::new();
    for cp in 0..=LAST + 1 {
        let inside = cp <= LAST && contains(cp);
        if inside != (list.len() % 2 == 1) {
            list.push(cp);
        }
    }
    list
}

/// The names ICU4X parses for a property's values (`get_strict`), sorted.
fn parser_names<T: ParseableEnumeratedProperty>() -> Vec<String> {
    let mut names: Vec<String> = T::SINGLETON.map.iter().map(|(name, _)| name).collect();
    names.sort();
    names
}

macro_rules! binary_properties {
    ($($property:ident),* $(,)?) => {
        /// `(name, short name)` of every binary property ICU4X defines.
        fn icu_binary_property_names() -> Vec<(&'static str, &'static str)> {
            use icu_properties::props::BinaryProperty;
            let utf8 = |name: &'static [u8]| std::str::from_utf8(name).expect("a property name is ASCII");
            vec![$((utf8(icu_properties::props::$property::NAME), utf8(icu_properties::props::$property::SHORT_NAME))),*]
        }
    };
}

binary_properties! {
    AsciiHexDigit, Alnum, Alphabetic, BidiControl, BidiMirrored, Blank, Cased, CaseIgnorable, FullCompositionExclusion,
    ChangesWhenCasefolded, ChangesWhenCasemapped, ChangesWhenNfkcCasefolded, ChangesWhenLowercased,
    ChangesWhenTitlecased, ChangesWhenUppercased, Dash, Deprecated, DefaultIgnorableCodePoint, Diacritic,
    EmojiModifierBase, EmojiComponent, EmojiModifier, Emoji, EmojiPresentation, Extender, ExtendedPictographic, Graph,
    GraphemeBase, GraphemeExtend, GraphemeLink, HexDigit, Hyphen, IdCompatMathContinue, IdCompatMathStart, IdContinue,
    Ideographic, IdStart, IdsBinaryOperator, IdsTrinaryOperator, IdsUnaryOperator, JoinControl, LogicalOrderException,
    Lowercase, Math, ModifierCombiningMark, NoncharacterCodePoint, PatternSyntax, PatternWhiteSpace,
    PrependedConcatenationMark, Print, QuotationMark, Radical, RegionalIndicator, SoftDotted, SentenceTerminal,
    TerminalPunctuation, UnifiedIdeograph, Uppercase, VariationSelector, WhiteSpace, Xdigit, XidContinue, XidStart,
}

/// ECMA-262's table "Binary Unicode property aliases and their canonical property names"
/// (`table-binary-unicode-properties`), row by row: the canonical name, then its aliases. It
/// differs from what ICU4X's `new_for_ecma262` accepts: White_Space's alias is `space` (ICU4X
/// takes `WSpace`), and the emoji properties have no alias (ICU4X takes `EComp`, `EMod`,
/// `EBase`, `EPres` and `ExtPict`). `binary_properties_are_ecma_s` checks each name against
/// ICU4X's names of the same property.
const ECMA_BINARY_PROPERTIES: &[&[&str]] = &[
    &["ASCII"],
    &["ASCII_Hex_Digit", "AHex"],
    &["Alphabetic", "Alpha"],
    &["Any"],
    &["Assigned"],
    &["Bidi_Control", "Bidi_C"],
    &["Bidi_Mirrored", "Bidi_M"],
    &["Case_Ignorable", "CI"],
    &["Cased"],
    &["Changes_When_Casefolded", "CWCF"],
    &["Changes_When_Casemapped", "CWCM"],
    &["Changes_When_Lowercased", "CWL"],
    &["Changes_When_NFKC_Casefolded", "CWKCF"],
    &["Changes_When_Titlecased", "CWT"],
    &["Changes_When_Uppercased", "CWU"],
    &["Dash"],
    &["Default_Ignorable_Code_Point", "DI"],
    &["Deprecated", "Dep"],
    &["Diacritic", "Dia"],
    &["Emoji"],
    &["Emoji_Component"],
    &["Emoji_Modifier"],
    &["Emoji_Modifier_Base"],
    &["Emoji_Presentation"],
    &["Extended_Pictographic"],
    &["Extender", "Ext"],
    &["Grapheme_Base", "Gr_Base"],
    &["Grapheme_Extend", "Gr_Ext"],
    &["Hex_Digit", "Hex"],
    &["IDS_Binary_Operator", "IDSB"],
    &["IDS_Trinary_Operator", "IDST"],
    &["ID_Continue", "IDC"],
    &["ID_Start", "IDS"],
    &["Ideographic", "Ideo"],
    &["Join_Control", "Join_C"],
    &["Logical_Order_Exception", "LOE"],
    &["Lowercase", "Lower"],
    &["Math"],
    &["Noncharacter_Code_Point", "NChar"],
    &["Pattern_Syntax", "Pat_Syn"],
    &["Pattern_White_Space", "Pat_WS"],
    &["Quotation_Mark", "QMark"],
    &["Radical"],
    &["Regional_Indicator", "RI"],
    &["Sentence_Terminal", "STerm"],
    &["Soft_Dotted", "SD"],
    &["Terminal_Punctuation", "Term"],
    &["Unified_Ideograph", "UIdeo"],
    &["Uppercase", "Upper"],
    &["Variation_Selector", "VS"],
    &["White_Space", "space"],
    &["XID_Continue", "XIDC"],
    &["XID_Start", "XIDS"],
];

fn binary_property_names() -> Vec<String> {
    let mut names: Vec<String> = ECMA_BINARY_PROPERTIES
        .iter()
        .flat_map(|row| row.iter().map(|n| n.to_string()))
        .collect();
    names.sort();
    names
}

/// The `Script` values of Unicode: of some code point, and `Katakana_Or_Hiragana`.
fn unicode_scripts() -> Vec<IcuScript> {
    let scripts = CodePointMapData::<IcuScript>::new();
    let mut used: Vec<IcuScript> = vec![IcuScript::KatakanaOrHiragana];
    for cp in 0..=LAST {
        let script = scripts.get32(cp);
        if !used.contains(&script) {
            used.push(script);
        }
    }
    used
}

/// The names of the `Script` values of `PropertyValueAliases.txt` (what ECMA-262's table
/// `table-unicode-script-values` lists), sorted. ICU4X's parser also takes the ISO 15924 codes
/// of scripts Unicode does not encode (`Blis`, `Hans`, `Zmth`, ...): a value counts when some
/// code point has it, or it is `Katakana_Or_Hiragana` (listed, and used by no code point).
fn script_names() -> Vec<String> {
    let parser = icu_properties::PropertyParser::<IcuScript>::new();
    let used = unicode_scripts();
    parser_names::<IcuScript>()
        .into_iter()
        .filter(|name| parser.get_strict(name).is_some_and(|v| used.contains(&v)))
        .collect()
}

fn version_of(lock: &str, package: &str) -> String {
    let marker = format!("name = \"{package}\"\nversion = \"");
    lock.find(&marker)
        .and_then(|at| lock[at + marker.len()..].split('"').next())
        .unwrap_or("?")
        .to_owned()
}

/// Appends `items` to `out`, comma-separated, wrapped before 120 columns, each line indented.
fn write_items(out: &mut String, items: impl IntoIterator<Item = String>) {
    let mut line = String::new();
    for item in items {
        if !line.is_empty() && line.len() + item.len() + 2 > 116 {
            let _ = writeln!(out, "    {}", line.trim_end());
            line.clear();
        }
        line.push_str(&item);
        line.push_str(", ");
    }
    if !line.is_empty() {
        let _ = writeln!(out, "    {}", line.trim_end());
    }
}

fn char_literal(c: char) -> String {
    format!("'\\u{{{:X}}}'", u32::from(c))
}

/// The text of `tables.rs`.
fn render() -> String {
    let lock = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.lock")).unwrap_or_default();
    let mut out = String::new();
    let _ = write!(
        out,
        "//! Generated by `generate.rs` from ICU4X (icu_properties {}, icu_normalizer {}): do not edit.\n\
         //! Regenerate with\n\
         //! `PILOTAGE_WRITE_FORMAT_TABLES=1 cargo test -p pilotage-validate --lib format::generate`;\n\
         //! without the variable, that test checks this file is current and that every code point\n\
         //! 0..=0x10FFFF reads here as in ICU4X.\n\
         //!\n\
         //! Range maps are `(start, value)` by increasing start from 0, each value up to the next\n\
         //! start; sets are inversion lists (range starts and ends, one past, alternating).\n\n",
        version_of(&lock, "icu_properties"),
        version_of(&lock, "icu_normalizer"),
    );

    let idna = runs(idna_value);
    let _ = writeln!(
        out,
        "/// The IDNA2008 data of every code point (`unicode::IdnaData`): RFC 5892's derived property,\n\
         /// and for a code point that is not DISALLOWED its mark bit, Bidi class, script and joining type."
    );
    let _ = writeln!(out, "pub(super) static IDNA: &[(u32, u16)] = &[");
    write_items(
        &mut out,
        idna.iter().map(|&(start, v)| format!("(0x{start:X}, 0x{v:X})")),
    );
    let _ = writeln!(out, "];\n");

    let ccc = runs(combining_class);
    let _ = writeln!(out, "/// `Canonical_Combining_Class`, a range map.");
    let _ = writeln!(out, "pub(super) static CANONICAL_COMBINING_CLASS: &[(u32, u8)] = &[");
    write_items(&mut out, ccc.iter().map(|&(start, v)| format!("(0x{start:X}, {v})")));
    let _ = writeln!(out, "];\n");

    let _ = writeln!(
        out,
        "/// The one-level canonical decompositions, by code point: `(c, first, second)`, `second`\n\
         /// U+0000 for a singleton. The Hangul syllables are computed, not listed."
    );
    let _ = writeln!(out, "pub(super) static DECOMPOSITION: &[(char, char, char)] = &[");
    write_items(
        &mut out,
        chars().filter(|&c| !is_hangul_syllable(c)).filter_map(|c| {
            let (first, second) = icu_decomposition(c)?;
            Some(format!(
                "({}, {}, {})",
                char_literal(c),
                char_literal(first),
                char_literal(second.unwrap_or('\0'))
            ))
        }),
    );
    let _ = writeln!(out, "];\n");

    let mut compositions: Vec<(char, char, char)> = icu_compositions()
        .into_iter()
        .filter(|&(_, _, c)| !is_hangul_syllable(c))
        .collect();
    compositions.sort();
    let _ = writeln!(
        out,
        "/// The primary composites: `(first, second, composite)`, by `(first, second)`. The Hangul\n\
         /// syllables are computed, not listed."
    );
    let _ = writeln!(out, "pub(super) static COMPOSITION: &[(char, char, char)] = &[");
    write_items(
        &mut out,
        compositions
            .iter()
            .map(|&(a, b, c)| format!("({}, {}, {})", char_literal(a), char_literal(b), char_literal(c))),
    );
    let _ = writeln!(out, "];\n");

    for (name, doc, list) in [
        (
            "ID_START",
            "`ID_Start` (UAX #31), an inversion list.",
            inversion_list(|cp| CodePointSetData::new::<IdStart>().contains32(cp)),
        ),
        (
            "ID_CONTINUE",
            "`ID_Continue` (UAX #31), an inversion list.",
            inversion_list(|cp| CodePointSetData::new::<IdContinue>().contains32(cp)),
        ),
    ] {
        let _ = writeln!(out, "/// {doc}");
        let _ = writeln!(out, "pub(super) static {name}: &[u32] = &[");
        write_items(&mut out, list.iter().map(|cp| format!("0x{cp:X}")));
        let _ = writeln!(out, "];\n");
    }

    for (name, doc, names) in [
        (
            "GENERAL_CATEGORY_NAMES",
            "The names and aliases of the `General_Category` values and groups, sorted.",
            parser_names::<GeneralCategoryGroup>(),
        ),
        (
            "SCRIPT_NAMES",
            "The names and aliases of the `Script` values of `PropertyValueAliases.txt`, sorted.",
            script_names(),
        ),
        (
            "BINARY_PROPERTY_NAMES",
            "ECMA-262's binary properties (its table of them), by name and alias, sorted.",
            binary_property_names(),
        ),
    ] {
        let _ = writeln!(out, "/// {doc}");
        let _ = writeln!(out, "pub(super) static {name}: &[&str] = &[");
        write_items(&mut out, names.iter().map(|n| format!("{n:?}")));
        let _ = writeln!(out, "];\n");
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

const TABLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/format/tables.rs");

#[test]
fn tables_are_current() {
    let rendered = render();
    if std::env::var_os("PILOTAGE_WRITE_FORMAT_TABLES").is_some() {
        std::fs::write(TABLES, &rendered).expect("write tables.rs");
        return;
    }
    let current = std::fs::read_to_string(TABLES).expect("read tables.rs");
    assert!(
        current == rendered,
        "src/format/tables.rs is not what ICU4X gives now: \
         PILOTAGE_WRITE_FORMAT_TABLES=1 cargo test -p pilotage-validate --lib format::generate"
    );
}

#[test]
fn every_code_point_reads_as_in_icu() {
    let id_start = CodePointSetData::new::<IdStart>();
    let id_continue = CodePointSetData::new::<IdContinue>();
    for cp in 0..=LAST {
        // The lookups take a `char`: a surrogate's entry is the range's around it (checked
        // by `tables_are_current`, which renders every code point).
        let Some(c) = char::from_u32(cp) else { continue };
        let data = IdnaData::of(c);
        let property = idna_property(cp);
        assert_eq!(data.property(), property, "U+{cp:04X}");
        if property != Idna::Disallowed {
            assert_eq!(data.is_mark(), is_mark(cp), "U+{cp:04X}");
            assert_eq!(data.bidi(), bidi(cp), "U+{cp:04X}");
            assert_eq!(data.script(), script(cp), "U+{cp:04X}");
            assert_eq!(data.joining(), joining(cp), "U+{cp:04X}");
        }
        assert_eq!(unicode::combining_class(c), combining_class(cp), "U+{cp:04X}");
        assert_eq!(unicode::decomposition(c), icu_decomposition(c), "U+{cp:04X}");
        assert_eq!(unicode::is_id_start(c), id_start.contains32(cp), "U+{cp:04X}");
        assert_eq!(unicode::is_id_continue(c), id_continue.contains32(cp), "U+{cp:04X}");
    }
}

#[test]
fn compositions_are_icu_s() {
    let compositions = icu_compositions();
    assert!(compositions.len() > 11_000, "the Hangul syllables and the others");
    let compose = CanonicalCompositionBorrowed::new();
    for &(first, second, composite) in &compositions {
        assert_eq!(
            unicode::composition(first, second),
            Some(composite),
            "{first:?} {second:?}"
        );
    }
    // No other pair composes: every primary composite's decomposition is one of those pairs,
    // and the table holds no more than ICU4X's non-Hangul ones.
    for (first, second, composite) in super::tables::COMPOSITION {
        assert_eq!(compose.compose(*first, *second), Some(*composite));
    }
}

#[test]
fn nfc_is_icu_s() {
    let normalizer = ComposingNormalizerBorrowed::new_nfc();
    let mut buffer = [0u8; 4];
    for c in chars() {
        let expected: Vec<char> = normalizer.normalize(c.encode_utf8(&mut buffer)).chars().collect();
        assert_eq!(unicode::nfc([c]), expected, "U+{:04X}", u32::from(c));
        assert_eq!(
            unicode::is_nfc(&[c]),
            normalizer.is_normalized(c.encode_utf8(&mut buffer)),
            "U+{:04X}",
            u32::from(c)
        );
    }
    // Sequences of the characters NFC moves or joins: starters with compositions, marks of
    // several classes, the Hangul jamo and syllables, singletons and the excluded composites.
    let mut pool: Vec<char> = chars()
        .filter(|&c| combining_class(u32::from(c)) != 0 || icu_decomposition(c).is_some() || unicode::nfc([c]) != [c])
        .step_by(7)
        .collect();
    pool.extend(
        "aeiouAEIOUnNcCsSzZ\u{0391}\u{03B1}\u{0627}\u{0915}\u{1100}\u{1161}\u{11A8}\u{AC00}\u{0B47}\u{0DD9}".chars(),
    );
    for (first, second, _) in icu_compositions().into_iter().step_by(5) {
        pool.extend([first, second]);
    }
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = |bound: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound as u64) as usize
    };
    for _ in 0..200_000 {
        let length = 1 + next(6);
        let text: String = (0..length).map(|_| pool[next(pool.len())]).collect();
        let expected: Vec<char> = normalizer.normalize(&text).chars().collect();
        assert_eq!(unicode::nfc(text.chars()), expected, "{text:?}");
        let chars: Vec<char> = text.chars().collect();
        assert_eq!(unicode::is_nfc(&chars), normalizer.is_normalized(&text), "{text:?}");
    }
}

#[test]
fn property_names_are_icu_s() {
    for name in parser_names::<GeneralCategoryGroup>() {
        assert!(unicode::is_general_category_name(&name), "{name}");
    }
    assert_eq!(
        parser_names::<GeneralCategoryGroup>().len(),
        80,
        "ECMA-262's table: 38 values, 80 names"
    );
    let parser = icu_properties::PropertyParser::<IcuScript>::new();
    let used = unicode_scripts();
    for name in parser_names::<IcuScript>() {
        let unicode_script = parser.get_strict(&name).is_some_and(|v| used.contains(&v));
        assert_eq!(unicode::is_script_name(&name), unicode_script, "{name}");
    }
    for name in [
        "Latn",
        "Latin",
        "Qaac",
        "Qaai",
        "Zinh",
        "Hrkt",
        "Katakana_Or_Hiragana",
        "Zyyy",
        "Zzzz",
        "Unknown",
    ] {
        assert!(unicode::is_script_name(name), "{name}");
    }
    for name in ["Blis", "Hans", "Zmth", "Jpan", "latin", "Latin "] {
        assert!(!unicode::is_script_name(name), "{name}");
    }
}

#[test]
fn binary_properties_are_ecma_s() {
    assert_eq!(ECMA_BINARY_PROPERTIES.len(), 53);
    let icu = icu_binary_property_names();
    for row in ECMA_BINARY_PROPERTIES {
        let (name, aliases) = (row[0], &row[1..]);
        for &n in row.iter() {
            assert!(unicode::is_binary_property_name(n), "{n}");
        }
        if matches!(name, "Any" | "ASCII" | "Assigned") {
            continue;
        }
        // The canonical name is ICU4X's name of a property ECMA-262's resolution takes, and
        // each alias its short name (but `space`, the third name of PropertyAliases.txt's
        // `WSpace ; White_Space ; space`).
        let &(_, short) = icu.iter().find(|(n, _)| *n == name).expect("an ICU4X binary property");
        assert!(CodePointSetData::new_for_ecma262(name.as_bytes()).is_some(), "{name}");
        for &alias in aliases {
            assert!(
                alias == short || (name, alias) == ("White_Space", "space"),
                "{name}: {alias}"
            );
        }
    }
    for name in [
        "WSpace", "EComp", "EMod", "EBase", "EPres", "ExtPict", "Alnum", "Blank", "Hyphen", "ascii", "any",
    ] {
        assert!(!unicode::is_binary_property_name(name), "{name}");
    }
}
