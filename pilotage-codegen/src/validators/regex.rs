//! JSON Schema `pattern`s parsed at generation time and written as static data for
//! `pilotage_types::validate::pattern`: a literal text or an anchored sequence of disjoint
//! character classes when the pattern is one; else, without look-around, a DFA built here with
//! `regex-automata` from the parse (as a `regex-syntax` `Hir`, so it means what ECMA-262 says)
//! and written as tables ([`DfaTables`]: at most 192 KiB of transitions); else a Pike VM
//! program, named with its reason in the generated file's header (`Written::vm_reason`). In a
//! program, a look-around's body is a DFA where one decides it: a short look-ahead's walked
//! from its position ([`Inst::LookDfa`]), a long or unbounded one's read once over the whole
//! text, reversed for a look-ahead ([`Inst::LookScan`]), so that the program stays linear in
//! the text; the header calls a pattern quadratic when a look-around of unbounded body has to
//! stay a sub-program.
//!
//! The syntax and meaning are ECMA-262's with the `u` flag (as JSON Schema matches patterns) and
//! no other flag:
//! - alternation, groups `(...)`, `(?:...)`, named groups `(?<name>...)`, look-ahead `(?=...)`
//!   and `(?!...)`, look-behind `(?<=...)` and `(?<!...)` (written reversed, run backwards from
//!   its position, as ECMA-262 matches it), the quantifiers `*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}` (lazy or not: the same
//!   texts match), `^` and `$` (at the ends of the text only: no `m` flag), `.` (one code point,
//!   astral ones included, except the line terminators `\n`, `\r`, U+2028, U+2029);
//! - the word boundaries `\b` and `\B` (word characters `[A-Za-z0-9_]`), zero-width assertions of
//!   the program, anywhere (in groups and look-aheads too);
//! - classes `[...]`, `[^...]` with ranges; `\d`, `\w` (ASCII), `\s` (ECMA-262 WhiteSpace and
//!   LineTerminator) and their negations, inside and outside classes;
//! - Unicode property escapes `\p{...}` and `\P{...}`, inside and outside classes: a
//!   General_Category value (`L`, `Letter`, `Lu`, `Nd`, `digit`, ... or `gc=`/`General_Category=`
//!   one), a Script or Script_Extensions value (`Script=`, `sc=`, `Script_Extensions=`, `scx=`;
//!   long names and four-letter codes) or one of the binary properties ECMA-262 lists (`ASCII`,
//!   `Alphabetic`, `Any`, `Assigned`, `White_Space`, ...), spelt exactly as ECMA-262 spells them
//!   (names are case-sensitive). Their characters are computed here, from the `regex-syntax`
//!   crate's Unicode tables (Unicode 16.0 for regex-syntax 0.8.12), and written as ranges, so
//!   the generated code stays data;
//! - the escapes `\t`, `\n`, `\v`, `\f`, `\r`, `\0`, `\cX`, `\xHH`, `\uHHHH` (a surrogate pair
//!   of them is one code point), `\u{H...}`, and `\` before a syntax character or `/` (and `-`
//!   in a class; `[\b]` is U+0008).
//!
//! A pattern the `u` flag refuses is read a second time, as ECMA-262 Annex B (B.1.2) reads a
//! pattern without the flag, which real schemas rely on (SARIF's lone `]`, `[\w-_.]`): a lone
//! `]`, `{` or `}` is the character; an identity escape of a letter (`\a`) is the letter; a class
//! range with a class escape at one end (`[\w-z]`) is the union of both ends and `-`; `\c`, `\x`
//! and `\u` without their letter or digits are a backslash, `x` and `u`; `[\c_]` and `[\c1]`
//! are control characters. Everything else keeps the `u` flag's meaning (a text is code points,
//! not UTF-16 units, as JSON Schema matches). Such a pattern is a note of the generation report
//! ([`write()`], `Validators::notes`). A pattern needing Annex B that also holds `\p{...}` or
//! `\u{...}`, whose meaning differs between the two readings, stays an error, as do a quantified
//! assertion, back-references and legacy octal escapes. Texts are Rust strings, so they never
//! hold a lone surrogate: a pattern's lone surrogate (`\uD800`) matches no character, nor does
//! `\p{Cs}`.
//!
//! `pattern` asks whether a pattern matches somewhere, so the items at either end that match the
//! empty text anywhere (no assertion in them) are dropped first: `^x-.*` is the prefix test
//! `^x-`, `.*foo` the substring test `foo`.
//!
//! A class of many ranges (a property's) is written once per pattern, as a `const` the
//! instructions taking it share. `compile_owned` is the program [`compile`] writes, as data
//! (for tests that run the runtime matcher on it).
//!
//! A construct the runtime cannot honour exactly is an error, never an approximation:
//! back-references (`\1`, `\k<name>`), modifiers
//! (`(?i:...)`), a property `regex-syntax` has no table for (`Changes_When_NFKC_Casefolded`, the
//! scripts `Katakana_Or_Hiragana` and `Unknown`), and a program of more than `MAX_INSTRUCTIONS`
//! (20 000) instructions once counted repetitions are expanded.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

/// The largest program written for one pattern (counted repetitions are expanded).
const MAX_INSTRUCTIONS: usize = 20_000;

/// A parsed pattern.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    Empty,
    /// Sorted, merged ranges; negated.
    Class(Vec<(char, char)>, bool),
    Start,
    End,
    /// `\b` (`false`) or `\B` (`true`).
    WordBoundary(bool),
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    Repeat(Box<Node>, u32, Option<u32>),
    Look(Box<Node>, bool),
    /// `(?<=...)` (`false`) or `(?<!...)` (`true`), its body as written (reversed when compiled).
    LookBehind(Box<Node>, bool),
}

impl Node {
    /// The node that matches the reverse of the texts this one matches, read backwards: a
    /// look-behind's body, which the runtime runs from its position towards the text's start.
    /// Concatenations are reversed at every level; a nested look-around keeps its own
    /// direction (positions are absolute, so it runs as written from where it stands).
    fn reversed(&self) -> Node {
        match self {
            Node::Concat(items) => Node::Concat(items.iter().rev().map(Node::reversed).collect()),
            Node::Alt(branches) => Node::Alt(branches.iter().map(Node::reversed).collect()),
            Node::Repeat(body, min, max) => Node::Repeat(Box::new(body.reversed()), *min, *max),
            other => other.clone(),
        }
    }
}

const DOT_EXCLUDED: &[(char, char)] = &[('\n', '\n'), ('\r', '\r'), ('\u{2028}', '\u{2029}')];
const DIGIT: &[(char, char)] = &[('0', '9')];
const WORD: &[(char, char)] = &[('0', '9'), ('A', 'Z'), ('_', '_'), ('a', 'z')];
/// ECMA-262 `\s`: WhiteSpace and LineTerminator.
const SPACE: &[(char, char)] = &[
    ('\t', '\r'),
    (' ', ' '),
    ('\u{a0}', '\u{a0}'),
    ('\u{1680}', '\u{1680}'),
    ('\u{2000}', '\u{200a}'),
    ('\u{2028}', '\u{2029}'),
    ('\u{202f}', '\u{202f}'),
    ('\u{205f}', '\u{205f}'),
    ('\u{3000}', '\u{3000}'),
    ('\u{feff}', '\u{feff}'),
];

/// ECMA-262's General_Category values (long names, short names and the other aliases of
/// PropertyValueAliases.txt), as `\p{Lu}` or `\p{gc=Lu}` take them.
#[rustfmt::skip]
const GENERAL_CATEGORIES: &[&str] = &[
    "C", "Cased_Letter", "Cc", "Cf", "Close_Punctuation", "Cn", "Co", "Combining_Mark", "Connector_Punctuation",
    "Control", "Cs", "Currency_Symbol", "Dash_Punctuation", "Decimal_Number", "Enclosing_Mark", "Final_Punctuation",
    "Format", "Initial_Punctuation", "L", "LC", "Letter", "Letter_Number", "Line_Separator", "Ll", "Lm", "Lo",
    "Lowercase_Letter", "Lt", "Lu", "M", "Mark", "Math_Symbol", "Mc", "Me", "Mn", "Modifier_Letter",
    "Modifier_Symbol", "N", "Nd", "Nl", "No", "Nonspacing_Mark", "Number", "Open_Punctuation", "Other",
    "Other_Letter", "Other_Number", "Other_Punctuation", "Other_Symbol", "P", "Paragraph_Separator", "Pc", "Pd",
    "Pe", "Pf", "Pi", "Po", "Private_Use", "Ps", "Punctuation", "S", "Sc", "Separator", "Sk", "Sm", "So",
    "Space_Separator", "Spacing_Mark", "Surrogate", "Symbol", "Titlecase_Letter", "Unassigned", "Uppercase_Letter",
    "Z", "Zl", "Zp", "Zs", "cntrl", "digit", "punct",
];

/// ECMA-262's binary properties: (name or alias, canonical name).
const BINARY_PROPERTIES: &[(&str, &str)] = &[
    ("AHex", "ASCII_Hex_Digit"),
    ("ASCII", "ASCII"),
    ("ASCII_Hex_Digit", "ASCII_Hex_Digit"),
    ("Alpha", "Alphabetic"),
    ("Alphabetic", "Alphabetic"),
    ("Any", "Any"),
    ("Assigned", "Assigned"),
    ("Bidi_C", "Bidi_Control"),
    ("Bidi_Control", "Bidi_Control"),
    ("Bidi_M", "Bidi_Mirrored"),
    ("Bidi_Mirrored", "Bidi_Mirrored"),
    ("CI", "Case_Ignorable"),
    ("CWCF", "Changes_When_Casefolded"),
    ("CWCM", "Changes_When_Casemapped"),
    ("CWKCF", "Changes_When_NFKC_Casefolded"),
    ("CWL", "Changes_When_Lowercased"),
    ("CWT", "Changes_When_Titlecased"),
    ("CWU", "Changes_When_Uppercased"),
    ("Case_Ignorable", "Case_Ignorable"),
    ("Cased", "Cased"),
    ("Changes_When_Casefolded", "Changes_When_Casefolded"),
    ("Changes_When_Casemapped", "Changes_When_Casemapped"),
    ("Changes_When_Lowercased", "Changes_When_Lowercased"),
    ("Changes_When_NFKC_Casefolded", "Changes_When_NFKC_Casefolded"),
    ("Changes_When_Titlecased", "Changes_When_Titlecased"),
    ("Changes_When_Uppercased", "Changes_When_Uppercased"),
    ("DI", "Default_Ignorable_Code_Point"),
    ("Dash", "Dash"),
    ("Default_Ignorable_Code_Point", "Default_Ignorable_Code_Point"),
    ("Dep", "Deprecated"),
    ("Deprecated", "Deprecated"),
    ("Dia", "Diacritic"),
    ("Diacritic", "Diacritic"),
    ("EBase", "Emoji_Modifier_Base"),
    ("EComp", "Emoji_Component"),
    ("EMod", "Emoji_Modifier"),
    ("EPres", "Emoji_Presentation"),
    ("Emoji", "Emoji"),
    ("Emoji_Component", "Emoji_Component"),
    ("Emoji_Modifier", "Emoji_Modifier"),
    ("Emoji_Modifier_Base", "Emoji_Modifier_Base"),
    ("Emoji_Presentation", "Emoji_Presentation"),
    ("Ext", "Extender"),
    ("ExtPict", "Extended_Pictographic"),
    ("Extended_Pictographic", "Extended_Pictographic"),
    ("Extender", "Extender"),
    ("Gr_Base", "Grapheme_Base"),
    ("Gr_Ext", "Grapheme_Extend"),
    ("Grapheme_Base", "Grapheme_Base"),
    ("Grapheme_Extend", "Grapheme_Extend"),
    ("Hex", "Hex_Digit"),
    ("Hex_Digit", "Hex_Digit"),
    ("IDC", "ID_Continue"),
    ("IDS", "ID_Start"),
    ("IDSB", "IDS_Binary_Operator"),
    ("IDST", "IDS_Trinary_Operator"),
    ("IDS_Binary_Operator", "IDS_Binary_Operator"),
    ("IDS_Trinary_Operator", "IDS_Trinary_Operator"),
    ("ID_Continue", "ID_Continue"),
    ("ID_Start", "ID_Start"),
    ("Ideo", "Ideographic"),
    ("Ideographic", "Ideographic"),
    ("Join_C", "Join_Control"),
    ("Join_Control", "Join_Control"),
    ("LOE", "Logical_Order_Exception"),
    ("Logical_Order_Exception", "Logical_Order_Exception"),
    ("Lower", "Lowercase"),
    ("Lowercase", "Lowercase"),
    ("Math", "Math"),
    ("NChar", "Noncharacter_Code_Point"),
    ("Noncharacter_Code_Point", "Noncharacter_Code_Point"),
    ("Pat_Syn", "Pattern_Syntax"),
    ("Pat_WS", "Pattern_White_Space"),
    ("Pattern_Syntax", "Pattern_Syntax"),
    ("Pattern_White_Space", "Pattern_White_Space"),
    ("QMark", "Quotation_Mark"),
    ("Quotation_Mark", "Quotation_Mark"),
    ("RI", "Regional_Indicator"),
    ("Radical", "Radical"),
    ("Regional_Indicator", "Regional_Indicator"),
    ("SD", "Soft_Dotted"),
    ("STerm", "Sentence_Terminal"),
    ("Sentence_Terminal", "Sentence_Terminal"),
    ("Soft_Dotted", "Soft_Dotted"),
    ("Term", "Terminal_Punctuation"),
    ("Terminal_Punctuation", "Terminal_Punctuation"),
    ("UIdeo", "Unified_Ideograph"),
    ("Unified_Ideograph", "Unified_Ideograph"),
    ("Upper", "Uppercase"),
    ("Uppercase", "Uppercase"),
    ("VS", "Variation_Selector"),
    ("Variation_Selector", "Variation_Selector"),
    ("White_Space", "White_Space"),
    ("XIDC", "XID_Continue"),
    ("XIDS", "XID_Start"),
    ("XID_Continue", "XID_Continue"),
    ("XID_Start", "XID_Start"),
    ("space", "White_Space"),
];

/// The Script (and Script_Extensions) values of Unicode 16.0 as ECMA-262 takes them: long names
/// and four-letter codes, as PropertyValueAliases.txt spells them.
#[rustfmt::skip]
const SCRIPTS: &[&str] = &[
    "Adlam", "Adlm", "Aghb", "Ahom", "Anatolian_Hieroglyphs", "Arab", "Arabic", "Armenian", "Armi", "Armn",
    "Avestan", "Avst", "Bali", "Balinese", "Bamu", "Bamum", "Bass", "Bassa_Vah", "Batak", "Batk", "Beng", "Bengali",
    "Bhaiksuki", "Bhks", "Bopo", "Bopomofo", "Brah", "Brahmi", "Brai", "Braille", "Bugi", "Buginese", "Buhd",
    "Buhid", "Cakm", "Canadian_Aboriginal", "Cans", "Cari", "Carian", "Caucasian_Albanian", "Chakma", "Cham",
    "Cher", "Cherokee", "Chorasmian", "Chrs", "Common", "Copt", "Coptic", "Cpmn", "Cprt", "Cuneiform", "Cypriot",
    "Cypro_Minoan", "Cyrillic", "Cyrl", "Deseret", "Deva", "Devanagari", "Diak", "Dives_Akuru", "Dogr", "Dogra",
    "Dsrt", "Dupl", "Duployan", "Egyp", "Egyptian_Hieroglyphs", "Elba", "Elbasan", "Elym", "Elymaic", "Ethi",
    "Ethiopic", "Gara", "Garay", "Geor", "Georgian", "Glag", "Glagolitic", "Gong", "Gonm", "Goth", "Gothic", "Gran",
    "Grantha", "Greek", "Grek", "Gujarati", "Gujr", "Gukh", "Gunjala_Gondi", "Gurmukhi", "Guru", "Gurung_Khema",
    "Han", "Hang", "Hangul", "Hani", "Hanifi_Rohingya", "Hano", "Hanunoo", "Hatr", "Hatran", "Hebr", "Hebrew",
    "Hira", "Hiragana", "Hluw", "Hmng", "Hmnp", "Hrkt", "Hung", "Imperial_Aramaic", "Inherited",
    "Inscriptional_Pahlavi", "Inscriptional_Parthian", "Ital", "Java", "Javanese", "Kaithi", "Kali", "Kana",
    "Kannada", "Katakana", "Katakana_Or_Hiragana", "Kawi", "Kayah_Li", "Khar", "Kharoshthi", "Khitan_Small_Script",
    "Khmer", "Khmr", "Khoj", "Khojki", "Khudawadi", "Kirat_Rai", "Kits", "Knda", "Krai", "Kthi", "Lana", "Lao",
    "Laoo", "Latin", "Latn", "Lepc", "Lepcha", "Limb", "Limbu", "Lina", "Linb", "Linear_A", "Linear_B", "Lisu",
    "Lyci", "Lycian", "Lydi", "Lydian", "Mahajani", "Mahj", "Maka", "Makasar", "Malayalam", "Mand", "Mandaic",
    "Mani", "Manichaean", "Marc", "Marchen", "Masaram_Gondi", "Medefaidrin", "Medf", "Meetei_Mayek", "Mend",
    "Mende_Kikakui", "Merc", "Mero", "Meroitic_Cursive", "Meroitic_Hieroglyphs", "Miao", "Mlym", "Modi", "Mong",
    "Mongolian", "Mro", "Mroo", "Mtei", "Mult", "Multani", "Myanmar", "Mymr", "Nabataean", "Nag_Mundari", "Nagm",
    "Nand", "Nandinagari", "Narb", "Nbat", "New_Tai_Lue", "Newa", "Nko", "Nkoo", "Nshu", "Nushu",
    "Nyiakeng_Puachue_Hmong", "Ogam", "Ogham", "Ol_Chiki", "Ol_Onal", "Olck", "Old_Hungarian", "Old_Italic",
    "Old_North_Arabian", "Old_Permic", "Old_Persian", "Old_Sogdian", "Old_South_Arabian", "Old_Turkic",
    "Old_Uyghur", "Onao", "Oriya", "Orkh", "Orya", "Osage", "Osge", "Osma", "Osmanya", "Ougr", "Pahawh_Hmong",
    "Palm", "Palmyrene", "Pau_Cin_Hau", "Pauc", "Perm", "Phag", "Phags_Pa", "Phli", "Phlp", "Phnx", "Phoenician",
    "Plrd", "Prti", "Psalter_Pahlavi", "Qaac", "Qaai", "Rejang", "Rjng", "Rohg", "Runic", "Runr", "Samaritan",
    "Samr", "Sarb", "Saur", "Saurashtra", "Sgnw", "Sharada", "Shavian", "Shaw", "Shrd", "Sidd", "Siddham",
    "SignWriting", "Sind", "Sinh", "Sinhala", "Sogd", "Sogdian", "Sogo", "Sora", "Sora_Sompeng", "Soyo", "Soyombo",
    "Sund", "Sundanese", "Sunu", "Sunuwar", "Sylo", "Syloti_Nagri", "Syrc", "Syriac", "Tagalog", "Tagb", "Tagbanwa",
    "Tai_Le", "Tai_Tham", "Tai_Viet", "Takr", "Takri", "Tale", "Talu", "Tamil", "Taml", "Tang", "Tangsa", "Tangut",
    "Tavt", "Telu", "Telugu", "Tfng", "Tglg", "Thaa", "Thaana", "Thai", "Tibetan", "Tibt", "Tifinagh", "Tirh",
    "Tirhuta", "Tnsa", "Todhri", "Todr", "Toto", "Tulu_Tigalari", "Tutg", "Ugar", "Ugaritic", "Unknown", "Vai",
    "Vaii", "Vith", "Vithkuqi", "Wancho", "Wara", "Warang_Citi", "Wcho", "Xpeo", "Xsux", "Yezi", "Yezidi", "Yi",
    "Yiii", "Zanabazar_Square", "Zanb", "Zinh", "Zyyy", "Zzzz",
];

fn normalise(mut ranges: Vec<(char, char)>) -> Vec<(char, char)> {
    ranges.sort();
    let mut out: Vec<(char, char)> = Vec::new();
    for (lo, hi) in ranges {
        if let Some(last) = out.last_mut() {
            if u32::from(lo) <= u32::from(last.1).saturating_add(1) {
                if hi > last.1 {
                    last.1 = hi;
                }
                continue;
            }
        }
        out.push((lo, hi));
    }
    out
}

fn complement(ranges: &[(char, char)]) -> Vec<(char, char)> {
    let ranges = normalise(ranges.to_vec());
    let mut out = Vec::new();
    let mut next = 0u32;
    for (lo, hi) in ranges {
        if u32::from(lo) > next {
            push_span(&mut out, next, u32::from(lo) - 1);
        }
        next = u32::from(hi) + 1;
    }
    if next <= 0x10FFFF {
        push_span(&mut out, next, 0x10FFFF);
    }
    out
}

/// Adds the characters of `lo..=hi` (code points), skipping the surrogate gap: no Rust string
/// holds a surrogate.
fn push_span(out: &mut Vec<(char, char)>, lo: u32, hi: u32) {
    let parts = [(lo, hi.min(0xD7FF)), (lo.max(0xE000), hi)];
    for (a, b) in parts {
        if a <= b {
            if let (Some(a), Some(b)) = (char::from_u32(a), char::from_u32(b)) {
                out.push((a, b));
            }
        }
    }
}

/// The characters of a regex-syntax class `\p{query}`, or why not.
fn unicode_class(query: &str) -> std::result::Result<Vec<(char, char)>, String> {
    use regex_syntax::hir::{Class, HirKind};
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(&format!("\\p{{{query}}}"))
        .map_err(|e| match e {
            regex_syntax::Error::Parse(e) => e.kind().to_string(),
            regex_syntax::Error::Translate(e) => e.kind().to_string(),
            e => e.to_string(),
        })?;
    match hir.kind() {
        HirKind::Class(Class::Unicode(class)) => Ok(class.ranges().iter().map(|r| (r.start(), r.end())).collect()),
        HirKind::Class(Class::Bytes(class)) if class.ranges().is_empty() => Ok(Vec::new()),
        HirKind::Literal(literal) => {
            let text = std::str::from_utf8(&literal.0).map_err(|e| e.to_string())?;
            let mut chars = text.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Ok(vec![(c, c)]),
                _ => Err(format!("regex-syntax read it as the text {text:?}")),
            }
        }
        other => Err(format!("regex-syntax read it as {other:?}")),
    }
}

/// One atom of an escape or a class: a code point (a surrogate one matches no character), a
/// set of characters (negated: every other character), or an assertion.
enum Atom {
    Char(u32),
    Set(Vec<(char, char)>, bool),
    WordBoundary(bool),
}

/// The characters of the code point `c`: none for a surrogate.
fn single(c: u32) -> Vec<(char, char)> {
    char::from_u32(c).map(|c| vec![(c, c)]).unwrap_or_default()
}

struct Parser<'a> {
    chars: Vec<char>,
    at: usize,
    source: &'a str,
    /// The names of the named groups seen so far.
    names: Vec<String>,
    /// Whether ECMA-262 Annex B's syntax is taken (B.1.2: a pattern without the `u` flag): set
    /// only for a second reading of a pattern the `u` flag refuses.
    annex_b: bool,
    /// What the Annex B reading took that the `u` flag refuses, for the generation report.
    legacy: Vec<&'static str>,
}

/// A pattern the runtime cannot honour, or one that is not a regular expression.
#[derive(Debug)]
#[non_exhaustive]
pub struct PatternError(pub String);

type Result<T> = std::result::Result<T, PatternError>;

const SYNTAX_CHARACTERS: &str = "^$\\.*+?()[]{}|";

impl Parser<'_> {
    /// Takes an Annex B construct (`what`), or refuses it as the `u` flag does.
    fn legacy<T>(&mut self, what: &'static str, refusal: &str, taken: T) -> Result<T> {
        if !self.annex_b {
            return self.error(refusal);
        }
        if !self.legacy.contains(&what) {
            self.legacy.push(what);
        }
        Ok(taken)
    }

    fn error<T>(&self, what: &str) -> Result<T> {
        Err(PatternError(format!(
            "pattern {:?}: {what} (at character {})",
            self.source, self.at
        )))
    }
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }
    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn alternation(&mut self) -> Result<Node> {
        let mut branches = vec![self.concat()?];
        while self.eat('|') {
            branches.push(self.concat()?);
        }
        Ok(if branches.len() == 1 {
            branches.pop().unwrap_or(Node::Empty)
        } else {
            Node::Alt(branches)
        })
    }

    fn concat(&mut self) -> Result<Node> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let atom = self.atom()?;
            let atom = self.quantified(atom)?;
            items.push(atom);
        }
        Ok(match items.len() {
            0 => Node::Empty,
            1 => items.pop().unwrap_or(Node::Empty),
            _ => Node::Concat(items),
        })
    }

    fn quantified(&mut self, atom: Node) -> Result<Node> {
        let (min, max) = match self.peek() {
            Some('*') => (0, None),
            Some('+') => (1, None),
            Some('?') => (0, Some(1)),
            Some('{') => match self.braces()? {
                Some(bounds) => bounds,
                None => return Ok(atom),
            },
            _ => return Ok(atom),
        };
        // Past the quantifier's last character (`*`, `+`, `?` or the closing brace).
        self.at += 1;
        // A lazy quantifier matches the same texts.
        self.eat('?');
        if matches!(
            atom,
            Node::Start | Node::End | Node::WordBoundary(_) | Node::Look(..) | Node::LookBehind(..)
        ) {
            return self.error("a quantifier on an assertion");
        }
        if let Some(max) = max {
            if max < min {
                return self.error("a quantifier whose maximum is below its minimum");
            }
        }
        if matches!(self.peek(), Some('*' | '+' | '?')) || (self.peek() == Some('{') && self.braces_ahead()) {
            return self.error("a quantifier on a quantifier");
        }
        Ok(Node::Repeat(Box::new(atom), min, max))
    }

    fn braces_ahead(&mut self) -> bool {
        let start = self.at;
        let found = matches!(self.braces(), Ok(Some(_)));
        self.at = start;
        found
    }

    /// `{n}`, `{n,}`, `{n,m}`; leaves the cursor on the closing brace. `None` (cursor
    /// unchanged) when the brace starts no quantifier (a syntax error under the `u` flag, which
    /// the caller reports).
    fn braces(&mut self) -> Result<Option<(u32, Option<u32>)>> {
        let start = self.at;
        let mut end = start + 1;
        while self.chars.get(end).is_some_and(|c| c.is_ascii_digit() || *c == ',') {
            end += 1;
        }
        if self.chars.get(end) != Some(&'}') {
            return Ok(None);
        }
        let inner: String = self.chars[start + 1..end].iter().collect();
        let (lo, hi) = match inner.split_once(',') {
            None => (inner.as_str(), Some(inner.as_str())),
            Some((lo, "")) => (lo, None),
            Some((lo, hi)) => (lo, Some(hi)),
        };
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(lo) || !hi.is_none_or(digits) {
            return Ok(None);
        }
        let count = |s: &str| s.parse::<u32>().ok();
        let too_large = "a repetition count above 4294967295";
        let Some(min) = count(lo) else {
            return self.error(too_large);
        };
        let max = match hi.map(count) {
            None => None,
            Some(Some(max)) => Some(max),
            Some(None) => return self.error(too_large),
        };
        self.at = end;
        Ok(Some((min, max)))
    }

    fn atom(&mut self) -> Result<Node> {
        let Some(c) = self.peek() else {
            return self.error("an unexpected end");
        };
        self.at += 1;
        Ok(match c {
            '^' => Node::Start,
            '$' => Node::End,
            '.' => Node::Class(DOT_EXCLUDED.to_vec(), true),
            '(' => {
                // (negated, behind) of a look-around.
                let look = if self.eat('?') {
                    if self.eat(':') {
                        None
                    } else if self.eat('=') {
                        Some((false, false))
                    } else if self.eat('!') {
                        Some((true, false))
                    } else if self.peek() == Some('<') && matches!(self.chars.get(self.at + 1), Some('=' | '!')) {
                        let negated = self.chars.get(self.at + 1) == Some(&'!');
                        self.at += 2;
                        Some((negated, true))
                    } else if self.eat('<') {
                        // A named group: the name does not change what matches.
                        self.group_name()?;
                        None
                    } else {
                        return self.error("an unknown group kind or modifiers ((?i:...)), which are not supported");
                    }
                } else {
                    None
                };
                let inner = self.alternation()?;
                if !self.eat(')') {
                    return self.error("an unclosed group");
                }
                match look {
                    Some((negated, false)) => Node::Look(Box::new(inner), negated),
                    Some((negated, true)) => Node::LookBehind(Box::new(inner), negated),
                    None => inner,
                }
            }
            ')' => return self.error("an unopened group"),
            '[' => self.class()?,
            '\\' => match self.escape(false)? {
                Atom::Char(c) => Node::Class(single(c), false),
                Atom::Set(ranges, negated) => Node::Class(ranges, negated),
                Atom::WordBoundary(negated) => Node::WordBoundary(negated),
            },
            '*' | '+' | '?' => return self.error("a quantifier with nothing to repeat"),
            '{' => {
                self.at -= 1;
                if self.braces_ahead() {
                    return self.error("a quantifier with nothing to repeat");
                }
                self.at += 1;
                let taken = Node::Class(single(u32::from('{')), false);
                return self.legacy("a lone `{`", "a lone `{` (write `\\{`)", taken);
            }
            '}' => {
                return self.legacy(
                    "a lone `}`",
                    "a lone `}` (write `\\}`)",
                    Node::Class(single(u32::from('}')), false),
                )
            }
            ']' => {
                return self.legacy(
                    "a lone `]`",
                    "a lone `]` (write `\\]`)",
                    Node::Class(single(u32::from(']')), false),
                )
            }
            c => Node::Class(vec![(c, c)], false),
        })
    }

    /// The name of a named group, after `(?<`, up to and past `>`.
    fn group_name(&mut self) -> Result<()> {
        let mut name = String::new();
        loop {
            match self.peek() {
                None => return self.error("an unclosed group name"),
                Some('>') => break,
                Some('\\') => return self.error("an escape in a group name is not supported"),
                Some(c) => {
                    let allowed = match name.is_empty() {
                        true => c == '$' || c == '_' || in_property("ID_Start", c),
                        false => c == '$' || c == '\u{200c}' || c == '\u{200d}' || in_property("ID_Continue", c),
                    };
                    if !allowed {
                        return self.error("a group name that is not an identifier");
                    }
                    name.push(c);
                    self.at += 1;
                }
            }
        }
        self.at += 1;
        if name.is_empty() {
            return self.error("an empty group name");
        }
        if self.names.contains(&name) {
            return self.error("a group name given twice");
        }
        self.names.push(name);
        Ok(())
    }

    /// Four hexadecimal digits, if they follow.
    fn hex4(&mut self) -> Option<u32> {
        let hex: String = self.chars.iter().skip(self.at).take(4).collect();
        let code = u32::from_str_radix(&hex, 16)
            .ok()
            .filter(|_| hex.len() == 4 && hex.chars().all(|c| c.is_ascii_hexdigit()))?;
        self.at += 4;
        Some(code)
    }

    /// An escape after `\`; `in_class` for the escapes of a character class.
    fn escape(&mut self, in_class: bool) -> Result<Atom> {
        let Some(c) = self.peek() else {
            return self.error("a trailing backslash");
        };
        self.at += 1;
        let set = |ranges: &[(char, char)], negated: bool| Atom::Set(ranges.to_vec(), negated);
        Ok(match c {
            'd' => set(DIGIT, false),
            'D' => set(DIGIT, true),
            'w' => set(WORD, false),
            'W' => set(WORD, true),
            's' => set(SPACE, false),
            'S' => set(SPACE, true),
            // Annex B reads `\p{L}` as the text `p{L}`: which reading a pattern meant cannot be
            // told, so a pattern read under Annex B takes no property escape.
            'p' | 'P' if self.annex_b => {
                return self.error("a property escape (\\p, \\P) in a pattern that needs ECMA-262 Annex B's syntax, which reads it as a letter")
            }
            'p' | 'P' => self.property(c == 'P')?,
            'n' => Atom::Char(0x0A),
            'r' => Atom::Char(0x0D),
            't' => Atom::Char(0x09),
            'f' => Atom::Char(0x0C),
            'v' => Atom::Char(0x0B),
            'b' if in_class => Atom::Char(0x08),
            'b' => Atom::WordBoundary(false),
            'B' if !in_class => Atom::WordBoundary(true),
            '-' if in_class => Atom::Char(u32::from('-')),
            '0' if !self.peek().is_some_and(|c| c.is_ascii_digit()) => Atom::Char(0),
            '0' => return self.error("a legacy octal escape (\\0 followed by a digit)"),
            'c' => match self.peek() {
                Some(letter) if letter.is_ascii_alphabetic() => {
                    self.at += 1;
                    Atom::Char(u32::from(letter) % 32)
                }
                // B.1.2 ClassControlLetter: in a class, a digit or `_` too.
                Some(letter) if in_class && (letter.is_ascii_digit() || letter == '_') && self.annex_b => {
                    self.at += 1;
                    self.legacy("`\\c` before a digit or `_`", "", ())?;
                    Atom::Char(u32::from(letter) % 32)
                }
                // B.1.2: otherwise the backslash is itself, and the `c` is read next.
                _ => {
                    self.at -= 1;
                    self.legacy("`\\c` before no letter", "\\c needs an ASCII letter", Atom::Char(u32::from('\\')))?
                }
            },
            'x' => {
                let hex: String = self.chars.iter().skip(self.at).take(2).collect();
                match u32::from_str_radix(&hex, 16)
                    .ok()
                    .filter(|_| hex.len() == 2 && hex.chars().all(|c| c.is_ascii_hexdigit()))
                {
                    Some(code) => {
                        self.at += 2;
                        Atom::Char(code)
                    }
                    None => self.legacy(
                        "`\\x` before no two hexadecimal digits",
                        "\\x needs two hexadecimal digits",
                        Atom::Char(u32::from('x')),
                    )?,
                }
            }
            'u' if self.annex_b && self.peek() == Some('{') => {
                return self.error("`\\u{...}` in a pattern that needs ECMA-262 Annex B's syntax, which reads it as repeated `u`s")
            }
            'u' if self.eat('{') => {
                let mut code = 0u32;
                let mut digits = 0;
                while let Some(digit) = self.peek().and_then(|c| c.to_digit(16)) {
                    self.at += 1;
                    digits += 1;
                    code = code.saturating_mul(16).saturating_add(digit);
                }
                if digits == 0 || !self.eat('}') {
                    return self.error("\\u{...} needs hexadecimal digits and a closing brace");
                }
                if code > 0x10FFFF {
                    return self.error("\\u{...} above U+10FFFF");
                }
                Atom::Char(code)
            }
            'u' => {
                let Some(code) = self.hex4() else {
                    return self.legacy(
                        "`\\u` before no four hexadecimal digits",
                        "\\u needs four hexadecimal digits",
                        Atom::Char(u32::from('u')),
                    );
                };
                // Under the `u` flag a lead and a trail surrogate escape are one code point.
                if (0xD800..0xDC00).contains(&code)
                    && self.peek() == Some('\\')
                    && self.chars.get(self.at + 1) == Some(&'u')
                {
                    let back = self.at;
                    self.at += 2;
                    match self.hex4() {
                        Some(trail) if (0xDC00..0xE000).contains(&trail) => {
                            Atom::Char(0x10000 + ((code - 0xD800) << 10) + (trail - 0xDC00))
                        }
                        _ => {
                            self.at = back;
                            Atom::Char(code)
                        }
                    }
                } else {
                    Atom::Char(code)
                }
            }
            'k' => return self.error("named back-references (\\k<name>) are not supported"),
            '1'..='9' => return self.error("back-references (\\1, ...) are not supported"),
            c if SYNTAX_CHARACTERS.contains(c) || c == '/' => Atom::Char(u32::from(c)),
            // An identity escape of other ASCII punctuation (`\-`, `\"`, `\@`): a syntax error
            // under the `u` flag, but real schemas write them, every engine (ECMA-262 Annex B,
            // jsonschema's) reads them as the character itself, and that is their only meaning.
            c if c.is_ascii_punctuation() => Atom::Char(u32::from(c)),
            // B.1.2 IdentityEscape: any other character but `c` (and `k`, and the digits of
            // back-references and legacy octal escapes, refused above) is itself.
            c if self.annex_b => self.legacy("an identity escape of a letter or another character", "", Atom::Char(u32::from(c)))?,
            c => return self.error(&format!("an unknown escape \\{c} (a syntax error under the u flag)")),
        })
    }

    /// A Unicode property escape after `\p` or `\P`.
    fn property(&mut self, negated: bool) -> Result<Atom> {
        let letter = if negated { 'P' } else { 'p' };
        if !self.eat('{') {
            return self.error(&format!("\\{letter} needs a property in braces"));
        }
        let mut text = String::new();
        loop {
            match self.peek() {
                Some('}') => break,
                Some(c) if c.is_ascii_alphanumeric() || c == '_' || c == '=' => {
                    text.push(c);
                    self.at += 1;
                }
                _ => {
                    return self.error(&format!(
                        "\\{letter}{{ without a closing brace or with a character no property name has"
                    ))
                }
            }
        }
        self.at += 1;
        let query = match text.split_once('=') {
            None if GENERAL_CATEGORIES.binary_search(&text.as_str()).is_ok() => format!("gc={text}"),
            None => match BINARY_PROPERTIES.binary_search_by(|(name, _)| name.cmp(&text.as_str())) {
                Ok(index) => BINARY_PROPERTIES[index].1.to_owned(),
                Err(_) => {
                    return self.error(&format!(
                        "\\{letter}{{{text}}}: {text} is no General_Category value nor binary property of ECMA-262 (names are case-sensitive; a script needs Script= or Script_Extensions=)"
                    ))
                }
            },
            Some(("General_Category" | "gc", value)) if GENERAL_CATEGORIES.binary_search(&value).is_ok() => {
                format!("gc={value}")
            }
            Some((name @ ("Script" | "sc" | "Script_Extensions" | "scx"), value)) if SCRIPTS.binary_search(&value).is_ok() => {
                let name = if name.starts_with("Script_") || name == "scx" { "scx" } else { "sc" };
                format!("{name}={value}")
            }
            Some((name @ ("General_Category" | "gc" | "Script" | "sc" | "Script_Extensions" | "scx"), value)) => {
                return self.error(&format!("\\{letter}{{{text}}}: {value} is no value of {name} (names are case-sensitive)"))
            }
            Some((name, _)) => {
                return self.error(&format!(
                    "\\{letter}{{{text}}}: {name} is not a property ECMA-262 takes a value of (General_Category, Script, Script_Extensions)"
                ))
            }
        };
        // General_Category=Surrogate is U+D800..U+DFFF, which no Rust string holds (regex-syntax,
        // whose classes are of `char`s, has no table for it).
        if matches!(query.as_str(), "gc=Cs" | "gc=Surrogate") {
            return Ok(Atom::Set(Vec::new(), negated));
        }
        match unicode_class(&query) {
            Ok(ranges) => Ok(Atom::Set(ranges, negated)),
            Err(why) => self.error(&format!(
                "\\{letter}{{{text}}}: regex-syntax's Unicode tables have no {query}, so it is not supported ({why})"
            )),
        }
    }

    fn class(&mut self) -> Result<Node> {
        let negated = self.eat('^');
        let mut ranges: Vec<(char, char)> = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                return self.error("an unclosed character class");
            };
            if c == ']' {
                self.at += 1;
                break;
            }
            let low = self.class_atom()?;
            // A range `a-z`, unless the hyphen is last.
            if self.peek() == Some('-') && self.chars.get(self.at + 1).is_some_and(|c| *c != ']') {
                self.at += 1;
                let high = self.class_atom()?;
                match (low, high) {
                    (Atom::Char(lo), Atom::Char(hi)) if lo <= hi => push_span(&mut ranges, lo, hi),
                    (Atom::Char(_), Atom::Char(_)) => return self.error("a character range out of order"),
                    (low, high) => {
                        // B.1.2 (CharacterRangeOrUnion): the two atoms and `-`, a union.
                        self.legacy(
                            "a class range with a class escape at one end (`[\\w-.]`), read as a union",
                            "a class range with a class escape at one end (a syntax error under the u flag)",
                            (),
                        )?;
                        for atom in [low, Atom::Char(u32::from('-')), high] {
                            match atom {
                                Atom::Char(c) => ranges.extend(single(c)),
                                Atom::Set(set, false) => ranges.extend(set),
                                Atom::Set(set, true) => ranges.extend(complement(&set)),
                                Atom::WordBoundary(_) => return self.error("a word boundary in a class"),
                            }
                        }
                    }
                }
                continue;
            }
            match low {
                Atom::Char(c) => ranges.extend(single(c)),
                Atom::Set(set, false) => ranges.extend(set),
                Atom::Set(set, true) => ranges.extend(complement(&set)),
                Atom::WordBoundary(_) => return self.error("a word boundary in a class"),
            }
        }
        Ok(Node::Class(normalise(ranges), negated))
    }

    fn class_atom(&mut self) -> Result<Atom> {
        let Some(c) = self.peek() else {
            return self.error("an unclosed character class");
        };
        self.at += 1;
        if c != '\\' {
            return Ok(Atom::Char(u32::from(c)));
        }
        self.escape(true)
    }
}

/// Whether `c` has the binary property `name` (`ID_Start`, `ID_Continue`).
fn in_property(name: &str, c: char) -> bool {
    unicode_class(name).is_ok_and(|ranges| ranges.iter().any(|(lo, hi)| *lo <= c && c <= *hi))
}

/// One instruction, mirroring `pilotage_types::validate::pattern::Inst`.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq)]
pub enum Inst {
    Class(Vec<(char, char)>, bool),
    Split(u32, u32),
    Jump(u32),
    Start,
    End,
    WordBoundary,
    NotWordBoundary,
    Look(bool, u32),
    /// A look-ahead whose body a DFA decides (anchored at the position, the earliest match
    /// enough): whether it is negated, and the body's tables; continues at the next instruction.
    LookDfa(bool, Box<DfaTables>),
    /// A look-around decided for every position by one pass of a DFA over the whole text
    /// (`pilotage_types::validate::pattern::Inst::LookScan`); continues at the next instruction.
    LookScan {
        /// Whether it is negated.
        negated: bool,
        /// Whether it is a look-behind.
        behind: bool,
        /// The body's tables: unanchored, every match, reversed for a look-ahead.
        dfa: Box<DfaTables>,
    },
    LookBehind(bool, u32),
    LookEnd,
    Match,
}

struct Compiler {
    insts: Vec<Inst>,
    /// Whether a look-ahead whose body allows it is written as [`Inst::LookDfa`] (the program
    /// written) rather than as a sub-program (the same program for the Pike VM alone, kept for
    /// the tests that compare the two).
    look_dfas: bool,
    /// Whether a look-around of unbounded body is read from each position it is reached at
    /// (a sub-program, or a DFA walk when its scan would be too large): the program may then
    /// read the rest of the text from each position.
    superlinear: bool,
}

/// The longest look-ahead body (in characters) written as [`Inst::LookDfa`], walked from each
/// position it is reached at (at most four bytes a character, and one more); a longer or
/// unbounded one is [`Inst::LookScan`], one pass over the whole text.
const LOOK_WALK_CHARS: u32 = 32;

/// The most characters `node` matches (`None`: unbounded, or past `u32`). Zero-width
/// assertions, look-arounds included, take none.
fn max_chars(node: &Node) -> Option<u32> {
    max_length(node, |_, _| 1)
}

/// The most UTF-8 bytes `node` matches (`None`: unbounded, or past `u32`), as [`max_chars`].
fn max_bytes(node: &Node) -> Option<u32> {
    max_length(node, |ranges, negated| {
        if negated {
            4
        } else {
            ranges.iter().map(|&(_, hi)| hi.len_utf8() as u32).max().unwrap_or(0)
        }
    })
}

/// How much of the text a class (its ranges, whether negated) takes at most, for [`max_length`].
type ClassLength = fn(&[(char, char)], bool) -> u32;

/// The most `node` matches, a class taking `class(ranges, negated)` (`None`: unbounded, or past
/// `u32`). Zero-width assertions, look-arounds included, take none.
fn max_length(node: &Node, class: ClassLength) -> Option<u32> {
    match node {
        Node::Empty | Node::Start | Node::End | Node::WordBoundary(_) | Node::Look(..) | Node::LookBehind(..) => {
            Some(0)
        }
        Node::Class(ranges, negated) => Some(class(ranges, *negated)),
        Node::Concat(items) => items
            .iter()
            .try_fold(0u32, |sum, item| sum.checked_add(max_length(item, class)?)),
        Node::Alt(branches) => branches
            .iter()
            .try_fold(0u32, |most, branch| Some(most.max(max_length(branch, class)?))),
        Node::Repeat(body, _, max) => match max_length(body, class)? {
            0 => Some(0),
            length => length.checked_mul((*max)?),
        },
    }
}

/// Whether a look-around's `body` is short enough to be read from each position it is reached
/// at ([`LOOK_WALK_CHARS`]).
fn short_body(body: &Node) -> bool {
    max_chars(body).is_some_and(|chars| chars <= LOOK_WALK_CHARS)
}

/// Whether a DFA started at a look-ahead's position decides its body exactly: a body without
/// look-around of its own and without `^`, `\b` or `\B`, whose meaning depends on the
/// characters before the position (a DFA started there sees none of them). `$` is the text's
/// end, which the DFA reads as the search reaches it.
fn look_body_for_dfa(node: &Node) -> bool {
    match node {
        Node::Empty | Node::Class(..) | Node::End => true,
        Node::Start | Node::WordBoundary(_) | Node::Look(..) | Node::LookBehind(..) => false,
        Node::Concat(items) | Node::Alt(items) => items.iter().all(look_body_for_dfa),
        Node::Repeat(body, ..) => look_body_for_dfa(body),
    }
}

impl Compiler {
    fn pc(&self) -> u32 {
        u32::try_from(self.insts.len()).unwrap_or(u32::MAX)
    }
    fn emit(&mut self, inst: Inst) -> Result<u32> {
        if self.insts.len() >= MAX_INSTRUCTIONS {
            return Err(PatternError(format!(
                "more than {MAX_INSTRUCTIONS} instructions once counted repetitions are expanded"
            )));
        }
        self.insts.push(inst);
        Ok(self.pc() - 1)
    }
    fn node(&mut self, node: &Node) -> Result<()> {
        match node {
            Node::Empty => {}
            Node::Class(ranges, negated) => {
                self.emit(Inst::Class(ranges.clone(), *negated))?;
            }
            Node::Start => {
                self.emit(Inst::Start)?;
            }
            Node::End => {
                self.emit(Inst::End)?;
            }
            Node::WordBoundary(false) => {
                self.emit(Inst::WordBoundary)?;
            }
            Node::WordBoundary(true) => {
                self.emit(Inst::NotWordBoundary)?;
            }
            Node::Concat(items) => items.iter().try_for_each(|item| self.node(item))?,
            Node::Alt(branches) => {
                let mut jumps = Vec::new();
                for (index, branch) in branches.iter().enumerate() {
                    if index + 1 < branches.len() {
                        let split = self.emit(Inst::Split(0, 0))?;
                        self.node(branch)?;
                        jumps.push(self.emit(Inst::Jump(0))?);
                        let next = self.pc();
                        self.insts[split as usize] = Inst::Split(split + 1, next);
                    } else {
                        self.node(branch)?;
                    }
                }
                let end = self.pc();
                for jump in jumps {
                    self.insts[jump as usize] = Inst::Jump(end);
                }
            }
            Node::Repeat(body, min, max) => {
                for _ in 0..*min {
                    self.node(body)?;
                }
                match max {
                    None => {
                        let split = self.emit(Inst::Split(0, 0))?;
                        self.node(body)?;
                        self.emit(Inst::Jump(split))?;
                        let end = self.pc();
                        self.insts[split as usize] = Inst::Split(split + 1, end);
                    }
                    Some(max) => {
                        let mut splits = Vec::new();
                        for _ in *min..*max {
                            splits.push(self.emit(Inst::Split(0, 0))?);
                            self.node(body)?;
                        }
                        let end = self.pc();
                        for split in splits {
                            self.insts[split as usize] = Inst::Split(split + 1, end);
                        }
                    }
                }
            }
            Node::Look(body, negated) => {
                // A long body a DFA decides is one pass over the whole text ([`Inst::LookScan`]),
                // whose walks from each position could be quadratic; a short one is one table
                // walk from the position, not a nested Pike VM search (SchemaStore's hugo.json
                // checks every member name against `^(?!aliases|audio|...)$`, 36 names), as is a
                // long one whose scan would be too large.
                if self.scanned(body, *negated, false)? {
                    return Ok(());
                }
                if self.look_dfas && look_body_for_dfa(body) {
                    if let Ok(tables) = dfa(body, true) {
                        self.emit(Inst::LookDfa(*negated, Box::new(tables)))?;
                        self.superlinear |= max_chars(body).is_none();
                        return Ok(());
                    }
                }
                self.superlinear |= max_chars(body).is_none();
                let look = self.emit(Inst::Look(*negated, 0))?;
                self.node(body)?;
                self.emit(Inst::LookEnd)?;
                let next = self.pc();
                self.insts[look as usize] = Inst::Look(*negated, next);
            }
            Node::LookBehind(body, negated) => {
                // A short body is read backwards from each position it is reached at; a long
                // one is one pass over the whole text.
                if self.scanned(body, *negated, true)? {
                    return Ok(());
                }
                self.superlinear |= max_chars(body).is_none();
                let look = self.emit(Inst::LookBehind(*negated, 0))?;
                self.node(&body.reversed())?;
                self.emit(Inst::LookEnd)?;
                let next = self.pc();
                self.insts[look as usize] = Inst::LookBehind(*negated, next);
            }
        }
        Ok(())
    }

    /// Writes a look-around of long or unbounded `body` as [`Inst::LookScan`] when a DFA
    /// decides it within the size limits (and DFAs are written); returns whether it did.
    fn scanned(&mut self, body: &Node, negated: bool, behind: bool) -> Result<bool> {
        if short_body(body) || !self.look_dfas {
            return Ok(false);
        }
        let Ok(tables) = scan_dfa(body, !behind) else {
            return Ok(false);
        };
        self.emit(Inst::LookScan {
            negated,
            behind,
            dfa: Box::new(tables),
        })?;
        Ok(true)
    }
}

/// Classes of more ranges than this (Unicode properties, mostly) are written once per pattern,
/// as a `const` every instruction taking them shares, not once per instruction.
const SHARED_RANGES: usize = 16;

/// Writes the classes of one pattern, sharing the large ones, and its scan tables.
#[derive(Default)]
struct Classes {
    shared: Vec<(Vec<(char, char)>, proc_macro2::Ident)>,
    /// The tables of [`Inst::LookScan`]s, each written once per pattern: the copies of a
    /// counted repetition's body (`(?:(?!.*x).){1,255}`) name one `static`, so the runtime,
    /// which keeps one scan per table, scans the text once for all of them.
    scans: Vec<(DfaTables, proc_macro2::Ident)>,
}

impl Classes {
    fn tokens(&mut self, ranges: &[(char, char)], negated: bool) -> TokenStream {
        let ranges = if ranges.len() > SHARED_RANGES {
            let index = match self.shared.iter().position(|(shared, _)| shared == ranges) {
                Some(index) => index,
                None => {
                    let ident = quote::format_ident!("RANGES_{}", self.shared.len());
                    self.shared.push((ranges.to_vec(), ident));
                    self.shared.len() - 1
                }
            };
            let ident = &self.shared[index].1;
            quote!(#ident)
        } else {
            ranges_tokens(ranges)
        };
        quote!(::pilotage_types::validate::pattern::Class { ranges: #ranges, negated: #negated })
    }

    /// The `static` of the scan tables `tables` (shared by every instruction taking the same).
    fn scan(&mut self, tables: &DfaTables) -> TokenStream {
        let index = match self.scans.iter().position(|(shared, _)| shared == tables) {
            Some(index) => index,
            None => {
                let ident = quote::format_ident!("SCAN_{}", self.scans.len());
                self.scans.push((tables.clone(), ident));
                self.scans.len() - 1
            }
        };
        let ident = &self.scans[index].1;
        quote!(&#ident)
    }

    /// `pattern`, preceded by the shared ranges' `const`s and the scan tables' `static`s if
    /// there are any.
    fn around(self, pattern: TokenStream) -> TokenStream {
        if self.shared.is_empty() && self.scans.is_empty() {
            return pattern;
        }
        let consts = self.shared.iter().map(|(ranges, ident)| {
            let ranges = ranges_tokens(ranges);
            quote!(const #ident: &[(char, char)] = #ranges;)
        });
        let statics = self.scans.iter().map(|(tables, ident)| {
            let dfa = dfa_new_tokens(tables);
            quote!(static #ident: ::pilotage_types::validate::pattern::Dfa = #dfa;)
        });
        quote!({ #(#consts)* #(#statics)* #pattern })
    }
}

fn ranges_tokens(ranges: &[(char, char)]) -> TokenStream {
    let ranges = ranges.iter().map(|(lo, hi)| {
        let (lo, hi) = (Literal::character(*lo), Literal::character(*hi));
        quote!((#lo, #hi))
    });
    quote!(&[#(#ranges),*])
}

/// The characters a class takes, as plain ranges.
fn effective(ranges: &[(char, char)], negated: bool) -> Vec<(char, char)> {
    if negated {
        complement(ranges)
    } else {
        ranges.to_vec()
    }
}

fn disjoint(a: &[(char, char)], b: &[(char, char)]) -> bool {
    a.iter()
        .all(|(alo, ahi)| b.iter().all(|(blo, bhi)| ahi < blo || bhi < alo))
}

/// One step of a sequence: the class's ranges, whether negated, the fewest and most repetitions.
#[doc(hidden)]
pub type SeqStep = (Vec<(char, char)>, bool, u32, Option<u32>);

/// The steps of an anchored sequence of pairwise-disjoint neighbouring classes, if `node` is
/// one.
fn sequence(node: &Node) -> Option<Vec<SeqStep>> {
    let Node::Concat(items) = node else { return None };
    let (Some(Node::Start), Some(Node::End)) = (items.first(), items.last()) else {
        return None;
    };
    let mut steps = Vec::new();
    for item in &items[1..items.len() - 1] {
        match item {
            Node::Class(ranges, negated) => steps.push((ranges.clone(), *negated, 1, Some(1))),
            Node::Repeat(body, min, max) => match body.as_ref() {
                Node::Class(ranges, negated) => steps.push((ranges.clone(), *negated, *min, *max)),
                _ => return None,
            },
            _ => return None,
        }
    }
    let exact = steps
        .windows(2)
        .all(|pair| disjoint(&effective(&pair[0].0, pair[0].1), &effective(&pair[1].0, pair[1].1)));
    exact.then_some(steps)
}

/// A compiled pattern as owned data: what [`compile`] writes as tokens (for tests that run the
/// runtime matcher on exactly this data).
#[doc(hidden)]
#[derive(Debug, Clone)]
pub enum Compiled {
    /// `Pattern::Literal`: the text, and whether it is anchored at the start and at the end.
    Literal(String, bool, bool),
    /// `Pattern::Sequence`'s steps.
    Sequence(Vec<SeqStep>),
    /// `Pattern::Automaton`: the DFA's tables and a text every match contains; the Pike VM
    /// program of the same pattern is kept here (not written) for the tests that compare the
    /// two matchers.
    Automaton {
        /// The DFA's tables.
        dfa: Box<DfaTables>,
        /// A text every match contains (`""`: none known).
        required: String,
        /// The most bytes any match holds before the `required` text, when that is bounded and
        /// the pattern has no `^` and no word boundary (so a search may start anywhere): the
        /// search then starts that far before the text's first occurrence of it.
        lead: Option<usize>,
        /// The program of the same pattern (for tests; not written).
        insts: Vec<Inst>,
        /// Whether the program is anchored at the start.
        anchored: bool,
    },
    /// `Pattern::Guarded`: look-aheads at the text's start, each a DFA (whether it is negated,
    /// and its tables), then the rest of the pattern, anchored at the start.
    Guarded {
        /// The look-aheads.
        guards: Vec<(bool, DfaTables)>,
        /// The rest (a literal, a sequence or a DFA).
        then: Box<Compiled>,
        /// The whole pattern's Pike VM program (for tests; not written).
        plain: Vec<Inst>,
    },
    /// `Pattern::Program`'s instructions, whether it is anchored at the start, and why it has
    /// no DFA.
    Program {
        /// The instructions.
        insts: Vec<Inst>,
        /// The same program with every look-ahead a sub-program of the Pike VM (no
        /// [`Inst::LookDfa`]): not written, for the tests that compare the two.
        plain: Vec<Inst>,
        /// Whether the program is anchored at the start.
        anchored: bool,
        /// Why there is no DFA.
        why: &'static str,
    },
}

/// A DFA as `pilotage_types::validate::pattern::Dfa` reads it: the dead state 0, then the
/// states that are no match, then the match states from `first_match` on.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct DfaTables {
    /// Each byte's equivalence class.
    pub classes: [u8; 256],
    /// The number of classes (a row's width).
    pub stride: usize,
    /// The transitions, `u16` little endian, row by row.
    pub table: Vec<u8>,
    /// The first match state.
    pub first_match: usize,
    /// Per state, 1 when its end-of-text transition reaches a match.
    pub eoi: Vec<u8>,
    /// The start state.
    pub start: usize,
}

/// The largest transition table written for one pattern (one table lookup a byte of text); a
/// larger one (a Unicode property under a counted repetition, mostly) is left to the Pike VM.
const MAX_DFA_BYTES: usize = 192 * 1024;

/// The pattern as `regex-syntax`'s `Hir`, meaning exactly what the node means (ECMA-262 with
/// the `u` flag): classes as their code point ranges, `^`/`$` as the text's ends, `\b`/`\B` as
/// ASCII word boundaries. `None` for a look-around, which no DFA can run.
fn hir(node: &Node) -> Option<regex_syntax::hir::Hir> {
    use regex_syntax::hir::{ClassUnicode, ClassUnicodeRange, Hir, Look, Repetition};
    Some(match node {
        Node::Empty => Hir::empty(),
        Node::Class(ranges, negated) => {
            let mut class = ClassUnicode::new(ranges.iter().map(|&(lo, hi)| ClassUnicodeRange::new(lo, hi)));
            if *negated {
                class.negate();
            }
            Hir::class(regex_syntax::hir::Class::Unicode(class))
        }
        Node::Start => Hir::look(Look::Start),
        Node::End => Hir::look(Look::End),
        Node::WordBoundary(false) => Hir::look(Look::WordAscii),
        Node::WordBoundary(true) => Hir::look(Look::WordAsciiNegate),
        Node::Concat(items) => Hir::concat(items.iter().map(hir).collect::<Option<_>>()?),
        Node::Alt(branches) => Hir::alternation(branches.iter().map(hir).collect::<Option<_>>()?),
        Node::Repeat(body, min, max) => Hir::repetition(Repetition {
            min: *min,
            max: *max,
            greedy: true,
            sub: Box::new(hir(body)?),
        }),
        Node::Look(..) | Node::LookBehind(..) => return None,
    })
}

/// Why a pattern has no DFA.
const NO_DFA_LOOK_AROUND: &str = "a look-around, which no DFA runs";
const NO_DFA_NOT_WORD_BOUNDARY: &str =
    "a `\\B`, which a DFA reading bytes sees hold inside a character (between two bytes of `\u{e9}`)";
const NO_DFA_TOO_LARGE: &str = "its DFA would exceed the size limits (192 KiB of transitions)";
const NO_DFA_SUPERLINEAR: &str =
    "a look-around, which no DFA runs; one of them, of unbounded length, is read from each \
     position it is reached at (no DFA decides it in one pass: a look-around or `\\B` of its own, or a DFA over the \
     size limits): quadratic in a long text";

/// The pattern as a DFA's tables, or why there is none (a look-around, or a DFA over the size
/// limits). An `anchored` pattern (a leading `^`) starts anchored, so its search stops at the
/// first byte no match can take; any other starts unanchored.
fn dfa(node: &Node, anchored: bool) -> std::result::Result<DfaTables, &'static str> {
    if holds_not_word_boundary(node) {
        return Err(NO_DFA_NOT_WORD_BOUNDARY);
    }
    let hir = hir(node).ok_or(NO_DFA_LOOK_AROUND)?;
    let dense = build_dfa(&hir, anchored).ok_or(NO_DFA_TOO_LARGE)?;
    tables(&dense, anchored).ok_or(NO_DFA_TOO_LARGE)
}

/// Whether the pattern has a `\B`. A DFA reads bytes, and its unanchored search may start a
/// match between two bytes of one character, where `\B` holds (neither byte is a word
/// character): `\B` alone would match `"a\u{e9}a"`, where ECMA-262 (and the Pike VM) find no
/// position without a word boundary. `\b` cannot hold there, nor `^` or `$`.
fn holds_not_word_boundary(node: &Node) -> bool {
    match node {
        Node::WordBoundary(true) => true,
        Node::Concat(items) | Node::Alt(items) => items.iter().any(holds_not_word_boundary),
        Node::Repeat(body, ..) | Node::Look(body, _) | Node::LookBehind(body, _) => holds_not_word_boundary(body),
        _ => false,
    }
}

/// A look-around's body as the tables of [`Inst::LookScan`]: unanchored, every match reported
/// (a match state wherever a match of the body ends, not only the first), the body reversed
/// for a look-ahead (`reverse`), whose pass reads the text from its end. Like [`dfa`], refused
/// for a nested look-around, a `\B` or a DFA over the size limits.
fn scan_dfa(node: &Node, reverse: bool) -> std::result::Result<DfaTables, &'static str> {
    if holds_not_word_boundary(node) {
        return Err(NO_DFA_NOT_WORD_BOUNDARY);
    }
    let hir = hir(node).ok_or(NO_DFA_LOOK_AROUND)?;
    let dense = build(&hir, Build::Scan { reverse }).ok_or(NO_DFA_TOO_LARGE)?;
    tables(&dense, false).ok_or(NO_DFA_TOO_LARGE)
}

/// What a DFA is built for.
#[derive(Debug, Clone, Copy)]
enum Build {
    /// A search from the text's start, anchored or not, that stops at the first match.
    Search {
        /// Whether it starts anchored.
        anchored: bool,
    },
    /// [`Inst::LookScan`]'s pass: unanchored, every match reported.
    Scan {
        /// Whether the body is read reversed (a look-ahead's pass, from the text's end).
        reverse: bool,
    },
}

/// `regex-automata`'s dense DFA of `hir`, for anchored or unanchored searches.
fn build_dfa(hir: &regex_syntax::hir::Hir, anchored: bool) -> Option<regex_automata::dfa::dense::DFA<Vec<u32>>> {
    build(hir, Build::Search { anchored })
}

/// `regex-automata`'s dense DFA of `hir`, for `what`.
fn build(hir: &regex_syntax::hir::Hir, what: Build) -> Option<regex_automata::dfa::dense::DFA<Vec<u32>>> {
    use regex_automata::dfa::{dense, StartKind};
    use regex_automata::nfa::thompson;
    use regex_automata::MatchKind;
    let (anchored, reverse, kind) = match what {
        Build::Search { anchored } => (anchored, false, MatchKind::LeftmostFirst),
        Build::Scan { reverse } => (false, reverse, MatchKind::All),
    };
    let nfa = thompson::Compiler::new()
        .configure(
            thompson::Config::new()
                .which_captures(thompson::WhichCaptures::None)
                .reverse(reverse)
                .nfa_size_limit(Some(4 * MAX_DFA_BYTES)),
        )
        .build_from_hir(hir)
        .ok()?;
    dense::Builder::new()
        .configure(
            dense::Config::new()
                .start_kind(if anchored {
                    StartKind::Anchored
                } else {
                    StartKind::Unanchored
                })
                .match_kind(kind)
                .minimize(false)
                // regex-automata's tables take `u32`s where ours take `u16`s; past this, the
                // determinization stops early (its time, in a build script, is bounded too).
                .dfa_size_limit(Some(2 * MAX_DFA_BYTES))
                .determinize_size_limit(Some(4 * MAX_DFA_BYTES)),
        )
        .build_from_nfa(&nfa)
        .ok()
}

/// The tables of `dfa`'s states reachable from the start state of a search from the text's
/// start (`anchored` or not), renumbered as [`DfaTables`] says. `None` past [`MAX_DFA_BYTES`]
/// or 65,535 states, or when a state could give up (a quit state: never without a Unicode
/// word boundary).
fn tables(dfa: &regex_automata::dfa::dense::DFA<Vec<u32>>, anchored: bool) -> Option<DfaTables> {
    use regex_automata::dfa::Automaton;
    use regex_automata::util::{primitives::StateID, start};
    use std::collections::HashMap;
    let mode = if anchored {
        regex_automata::Anchored::Yes
    } else {
        regex_automata::Anchored::No
    };
    let first = dfa
        .start_state(&start::Config::new().anchored(mode).look_behind(None))
        .ok()?;
    // The classes, and one byte of each.
    let byte_classes = dfa.byte_classes();
    let mut classes = [0u8; 256];
    let mut representatives: Vec<u8> = Vec::new();
    for byte in 0..=255u8 {
        let class = byte_classes.get(byte);
        classes[usize::from(byte)] = class;
        if usize::from(class) == representatives.len() {
            representatives.push(byte);
        }
    }
    let stride = representatives.len();
    // Every state reachable from the start.
    let mut seen: std::collections::HashSet<StateID> = std::collections::HashSet::new();
    let mut order: Vec<StateID> = Vec::new();
    let mut queue = vec![first];
    seen.insert(first);
    while let Some(state) = queue.pop() {
        if dfa.is_quit_state(state) {
            return None;
        }
        order.push(state);
        if order.len() * stride * 2 > MAX_DFA_BYTES || order.len() >= usize::from(u16::MAX) {
            return None;
        }
        for &byte in &representatives {
            let next = dfa.next_state(state, byte);
            if seen.insert(next) {
                queue.push(next);
            }
        }
    }
    // Dead first (whether reached or not), then the others in the order found, the match
    // states last.
    let dead = order.iter().copied().find(|&s| dfa.is_dead_state(s));
    let mut numbered: Vec<StateID> = Vec::with_capacity(order.len() + 1);
    numbered.push(dead.unwrap_or(StateID::ZERO));
    numbered.extend(
        order
            .iter()
            .copied()
            .filter(|&s| !dfa.is_dead_state(s) && !dfa.is_match_state(s)),
    );
    let first_match = numbered.len();
    numbered.extend(order.iter().copied().filter(|&s| dfa.is_match_state(s)));
    let index: HashMap<StateID, usize> = numbered.iter().enumerate().skip(1).map(|(i, &s)| (s, i)).collect();
    let number = |state: StateID| -> Option<u16> {
        if dfa.is_dead_state(state) {
            Some(0)
        } else {
            u16::try_from(*index.get(&state)?).ok()
        }
    };
    let mut table = Vec::with_capacity(numbered.len() * stride * 2);
    let mut eoi = Vec::with_capacity(numbered.len());
    for (i, &state) in numbered.iter().enumerate() {
        for &byte in &representatives {
            let next = if i == 0 {
                0
            } else {
                number(dfa.next_state(state, byte))?
            };
            table.extend_from_slice(&next.to_le_bytes());
        }
        eoi.push(u8::from(i != 0 && dfa.is_match_state(dfa.next_eoi_state(state))));
    }
    Some(DfaTables {
        classes,
        stride,
        table,
        first_match,
        eoi,
        start: usize::from(number(first)?),
    })
}

/// The items of `node`'s top level (its own, unless it is a concatenation).
fn top_level(node: &Node) -> &[Node] {
    match node {
        Node::Concat(items) => items,
        single => std::slice::from_ref(single),
    }
}

/// The longest run of single characters at the pattern's top level (every match contains it),
/// and the index of its first item among [`top_level`]'s.
fn required_run(node: &Node) -> (String, usize) {
    let (mut best, mut best_start) = (String::new(), 0);
    let (mut run, mut run_start) = (String::new(), 0);
    for (at, item) in top_level(node).iter().enumerate() {
        match item {
            Node::Class(ranges, false) if ranges.len() == 1 && ranges[0].0 == ranges[0].1 => {
                if run.is_empty() {
                    run_start = at;
                }
                run.push(ranges[0].0);
            }
            // Zero-width: a run goes on across them.
            Node::Start | Node::End | Node::WordBoundary(_) => {}
            _ => {
                if run.chars().count() > best.chars().count() {
                    (best, best_start) = (std::mem::take(&mut run), run_start);
                }
                run.clear();
            }
        }
    }
    if run.chars().count() > best.chars().count() {
        (best, best_start) = (run, run_start);
    }
    (best, best_start)
}

/// The most UTF-8 bytes any match of `node` holds before its required run ([`required_run`],
/// whose first item is the top level's `start`), when a search for it may start anywhere:
/// `None` when the pattern holds `^` or a word boundary anywhere (which read the characters
/// before a search's start), or can take an unbounded text before it. `\wcole` gives 1: a match
/// starts at most a byte before the first `cole` of the text, so the DFA need not read what
/// comes before (the official suite's `ecmascript-regex.json` groups 11 and 12 read 7 times more
/// bytes than jsonschema's `regex`).
fn required_lead(node: &Node, start: usize) -> Option<usize> {
    fn context_free(node: &Node) -> bool {
        match node {
            Node::Start | Node::WordBoundary(_) | Node::Look(..) | Node::LookBehind(..) => false,
            Node::Concat(items) | Node::Alt(items) => items.iter().all(context_free),
            Node::Repeat(body, ..) => context_free(body),
            Node::Empty | Node::Class(..) | Node::End => true,
        }
    }
    if !context_free(node) {
        return None;
    }
    let before = top_level(node)[..start]
        .iter()
        .try_fold(0u32, |sum, item| sum.checked_add(max_bytes(item)?))?;
    usize::try_from(before).ok()
}

/// Parses and compiles `source`: the data [`compile`] writes as tokens.
#[doc(hidden)]
pub fn compile_owned(source: &str) -> Result<Compiled> {
    compile_reading(source).map(|(compiled, _)| compiled)
}

/// Parses `source` as ECMA-262 reads a pattern under the `u` flag; when that refuses it, as
/// ECMA-262 Annex B reads a pattern without the flag (B.1.2: a lone `]`, `{` or `}`, an identity
/// escape of a letter, a class range with a class escape at one end as a union, `\c`, `\x` and
/// `\u` without their digits), with the `u` flag's meaning for everything else (code points, not
/// UTF-16 units). A pattern that needs Annex B and also holds `\p{...}` or `\u{...}`, whose two
/// readings differ, is refused, as is everything the runtime cannot honour in either reading
/// (back-references, legacy octal escapes). The second member is what the Annex B
/// reading took (empty when the `u` flag's reading stood), for the generation report.
fn parse(source: &str) -> Result<(Node, Vec<&'static str>)> {
    let read = |annex_b: bool| {
        let mut parser = Parser {
            chars: source.chars().collect(),
            at: 0,
            source,
            names: Vec::new(),
            annex_b,
            legacy: Vec::new(),
        };
        let node = parser.alternation()?;
        if parser.at < parser.chars.len() {
            return parser.error("an unopened group");
        }
        Ok((node, parser.legacy))
    };
    match read(false) {
        Ok(read) => Ok(read),
        // Both readings refuse: the strict error, and the Annex B reading's when it found
        // another fault (`^(a|b]`: a lone `]`, and without the flag still an unclosed group).
        Err(strict) => read(true).map_err(|annex_b| {
            let prefix = format!("pattern {source:?}: ");
            let other = annex_b.0.strip_prefix(&prefix).unwrap_or(&annex_b.0);
            if strict.0.ends_with(other) {
                strict
            } else {
                PatternError(format!(
                    "{}; read without the `u` flag (ECMA-262 Annex B), {other}",
                    strict.0
                ))
            }
        }),
    }
}

/// [`compile_owned`], and what an Annex B reading took (see [`parse`]).
fn compile_reading(source: &str) -> Result<(Compiled, Vec<&'static str>)> {
    let (node, legacy) = parse(source)?;
    Ok((compile_node(node)?, legacy))
}

/// Whether `node` can match the empty text wherever it stands: it has no assertion (`^`, `$`,
/// `\b`, `\B`, look-around) and matches the empty text.
fn matches_empty_anywhere(node: &Node) -> bool {
    match node {
        Node::Empty => true,
        Node::Class(..) | Node::Start | Node::End | Node::WordBoundary(_) | Node::Look(..) | Node::LookBehind(..) => {
            false
        }
        Node::Concat(items) => items.iter().all(matches_empty_anywhere),
        Node::Alt(branches) => branches.iter().all(assertion_free) && branches.iter().any(matches_empty_anywhere),
        Node::Repeat(body, min, _) => assertion_free(body) && (*min == 0 || matches_empty_anywhere(body)),
    }
}

/// Whether `node` holds no assertion.
fn assertion_free(node: &Node) -> bool {
    match node {
        Node::Empty | Node::Class(..) => true,
        Node::Start | Node::End | Node::WordBoundary(_) | Node::Look(..) | Node::LookBehind(..) => false,
        Node::Concat(items) | Node::Alt(items) => items.iter().all(assertion_free),
        Node::Repeat(body, ..) => assertion_free(body),
    }
}

/// The pattern without the items at either end that can match the empty text anywhere (the
/// `.*` of `^x-.*`, the `[a-z]*` of `[a-z]*foo`): `pattern` asks whether a pattern matches
/// *somewhere*, and `A` followed by such an item `R` matches somewhere exactly when `A` does
/// (`R` can match the empty text right after `A`'s match, and `A·R`'s match holds one of
/// `A`). So `^x-.*` is the prefix test `^x-`, and `.*` matches every text. An anchor ends the
/// trimming (`^x-.*$` asks that no line terminator follow: it stays).
fn trim_free_ends(node: Node) -> Node {
    let mut items = match node {
        Node::Concat(items) => items,
        other => vec![other],
    };
    while items.last().is_some_and(matches_empty_anywhere) {
        items.pop();
    }
    let leading = items.iter().take_while(|item| matches_empty_anywhere(item)).count();
    items.drain(..leading);
    match items.len() {
        0 => Node::Empty,
        1 => items.pop().unwrap_or(Node::Empty),
        _ => Node::Concat(items),
    }
}

/// The program of a parsed pattern.
fn compile_node(node: Node) -> Result<Compiled> {
    let node = trim_free_ends(node);
    if let Some((text, start, end)) = literal(&node) {
        return Ok(Compiled::Literal(text, start, end));
    }
    if let Some(steps) = sequence(&node) {
        return Ok(Compiled::Sequence(steps));
    }
    let anchored = match &node {
        Node::Start => true,
        Node::Concat(items) => items.first() == Some(&Node::Start),
        _ => false,
    };
    let program = |look_dfas: bool| -> Result<(Vec<Inst>, bool)> {
        let mut compiler = Compiler {
            insts: Vec::new(),
            look_dfas,
            superlinear: false,
        };
        compiler.node(&node)?;
        compiler.emit(Inst::Match)?;
        Ok((compiler.insts, compiler.superlinear))
    };
    if let Some(guarded) = guarded(&node, || program(false).map(|(insts, _)| insts))? {
        return Ok(guarded);
    }
    let (insts, superlinear) = program(true)?;
    match dfa(&node, anchored) {
        Ok(dfa) => {
            let (required, start) = required_run(&node);
            let lead = (!anchored && !required.is_empty())
                .then(|| required_lead(&node, start))
                .flatten();
            Ok(Compiled::Automaton {
                dfa: Box::new(dfa),
                required,
                lead,
                insts,
                anchored,
            })
        }
        Err(why) => Ok(Compiled::Program {
            plain: program(false)?.0,
            insts,
            anchored,
            why: if superlinear { NO_DFA_SUPERLINEAR } else { why },
        }),
    }
}

/// The pattern as look-aheads at the text's start, each a DFA, then a pattern of its own (no
/// look-around left: a literal, a sequence or a DFA), if it is one: `^(?!A)(?=B)T` holds when
/// neither body misbehaves at the start (`A` matches no prefix, `B` one) and `^T` matches, which
/// is the Pike VM's reading step by step. `None` when a body or the rest needs the Pike VM.
/// The real idiom "a name that does not start with one of these": `^(?!x-|\$)[a-z]+$`, or
/// venvironment's `^(?!.*(\{LoggingBlock\}|...)).*\.[bB][lL][fF]$`. `plain` is the whole
/// pattern's Pike VM program, kept for the tests.
fn guarded(node: &Node, plain: impl FnOnce() -> Result<Vec<Inst>>) -> Result<Option<Compiled>> {
    let Node::Concat(items) = node else { return Ok(None) };
    let [Node::Start, rest @ ..] = items.as_slice() else {
        return Ok(None);
    };
    let heads = rest.iter().take_while(|item| matches!(item, Node::Look(..))).count();
    let (heads, tail) = rest.split_at(heads);
    if heads.is_empty() || !tail.iter().all(no_look_around) {
        return Ok(None);
    }
    let mut guards = Vec::with_capacity(heads.len());
    for head in heads {
        let Node::Look(body, negated) = head else {
            return Ok(None);
        };
        if !look_body_for_dfa(body) {
            return Ok(None);
        }
        let Ok(tables) = dfa(body, true) else { return Ok(None) };
        guards.push((*negated, tables));
    }
    let then = compile_node(Node::Concat(
        std::iter::once(Node::Start).chain(tail.iter().cloned()).collect(),
    ))?;
    if matches!(then, Compiled::Program { .. } | Compiled::Guarded { .. }) {
        return Ok(None);
    }
    Ok(Some(Compiled::Guarded {
        guards,
        then: Box::new(then),
        plain: plain()?,
    }))
}

/// Whether `node` has no look-around.
fn no_look_around(node: &Node) -> bool {
    match node {
        Node::Look(..) | Node::LookBehind(..) => false,
        Node::Concat(items) | Node::Alt(items) => items.iter().all(no_look_around),
        Node::Repeat(body, ..) => no_look_around(body),
        _ => true,
    }
}

/// The pattern as a literal text, if it is one: single characters only (no class, no
/// repetition, no alternation), optionally after `^` and before `$`.
fn literal(node: &Node) -> Option<(String, bool, bool)> {
    let items = top_level(node);
    let (start, items) = match items.split_first() {
        Some((Node::Start, rest)) => (true, rest),
        _ => (false, items),
    };
    let (end, items) = match items.split_last() {
        Some((Node::End, rest)) => (true, rest),
        _ => (false, items),
    };
    let mut text = String::new();
    for item in items {
        match item {
            Node::Class(ranges, false) if ranges.len() == 1 && ranges[0].0 == ranges[0].1 => text.push(ranges[0].0),
            // The empty pattern (or all of it trimmed, `.*`): the empty text, found in any.
            Node::Empty => {}
            _ => return None,
        }
    }
    Some((text, start, end))
}

/// A pattern written as tokens, and how it was read.
#[derive(Debug)]
#[non_exhaustive]
pub struct Written {
    /// A `pilotage_types::validate::pattern::Pattern` expression.
    pub tokens: TokenStream,
    /// The ECMA-262 Annex B constructs the pattern needed (empty when it is a pattern under the
    /// `u` flag): each is a note of the generation report.
    pub annex_b: Vec<&'static str>,
    /// Why the pattern runs on the Pike VM rather than a DFA (`None`: a literal, a sequence or
    /// a DFA): each is a line of the generated file's header.
    pub vm_reason: Option<&'static str>,
}

/// Parses `source` and writes it as a `pilotage_types::validate::pattern::Pattern` expression.
pub fn compile(source: &str) -> Result<TokenStream> {
    write(source).map(|written| written.tokens)
}

/// [`compile`], telling whether the pattern needed ECMA-262 Annex B's syntax.
pub fn write(source: &str) -> Result<Written> {
    let mut classes = Classes::default();
    let (compiled, annex_b) = compile_reading(source)?;
    let vm_reason = match &compiled {
        Compiled::Program { why, .. } => Some(*why),
        _ => None,
    };
    let pattern = pattern_tokens(source, compiled, &mut classes);
    Ok(Written {
        tokens: classes.around(pattern),
        annex_b,
        vm_reason,
    })
}

/// The `Pattern` expression of a compiled pattern (its classes of many ranges shared through
/// `classes`).
fn pattern_tokens(source: &str, compiled: Compiled, classes: &mut Classes) -> TokenStream {
    match compiled {
        Compiled::Literal(text, start, end) => quote!(::pilotage_types::validate::pattern::Pattern::Literal {
            source: #source,
            text: #text,
            start: #start,
            end: #end,
        }),
        Compiled::Sequence(steps) => {
            let steps = steps.iter().map(|(ranges, negated, min, max)| {
                let class = classes.tokens(ranges, *negated);
                let max = match max {
                    Some(max) => quote!(Some(#max)),
                    None => quote!(None),
                };
                quote!(::pilotage_types::validate::pattern::Step { class: #class, min: #min, max: #max })
            });
            let steps: Vec<_> = steps.collect();
            quote!(::pilotage_types::validate::pattern::Pattern::Sequence {
                source: #source,
                steps: &[#(#steps),*],
            })
        }
        Compiled::Automaton {
            dfa, required, lead, ..
        } => {
            let dfa = dfa_tokens(&dfa);
            let lead = match lead {
                Some(lead) => quote!(Some(#lead)),
                None => quote!(None),
            };
            quote!(::pilotage_types::validate::pattern::Pattern::Automaton {
                source: #source,
                required: #required,
                lead: #lead,
                dfa: #dfa,
            })
        }
        Compiled::Guarded { guards, then, .. } => {
            let guards = guards.iter().map(|(negated, tables)| {
                let dfa = dfa_tokens(tables);
                quote!(::pilotage_types::validate::pattern::Guard { negated: #negated, dfa: #dfa })
            });
            let guards: Vec<_> = guards.collect();
            let then = pattern_tokens(source, *then, classes);
            quote!(::pilotage_types::validate::pattern::Pattern::Guarded {
                source: #source,
                guards: &[#(#guards),*],
                then: {
                    static THEN: ::pilotage_types::validate::pattern::Pattern = #then;
                    &THEN
                },
            })
        }
        Compiled::Program { insts, anchored, .. } => {
            let insts = program_tokens(&insts, classes);
            quote!(::pilotage_types::validate::pattern::Pattern::Program {
                source: #source,
                insts: &[#(#insts),*],
                anchored: #anchored,
            })
        }
    }
}

/// A `&'static pilotage_types::validate::pattern::Dfa` expression of these tables.
fn dfa_tokens(dfa: &DfaTables) -> TokenStream {
    let new = dfa_new_tokens(dfa);
    quote!({
        static DFA: ::pilotage_types::validate::pattern::Dfa = #new;
        &DFA
    })
}

/// The `Dfa::new(...)` expression of `dfa`'s tables.
fn dfa_new_tokens(dfa: &DfaTables) -> TokenStream {
    let DfaTables {
        classes: byte_classes,
        stride,
        table,
        first_match,
        eoi,
        start,
    } = dfa;
    let byte_classes = Literal::byte_string(byte_classes);
    let table = Literal::byte_string(table);
    let eoi = Literal::byte_string(eoi);
    quote!(::pilotage_types::validate::pattern::Dfa::new(
        #byte_classes, #stride, #table, #first_match, #eoi, #start,
    ))
}

/// The tokens of a program's instructions.
fn program_tokens(insts: &[Inst], classes: &mut Classes) -> Vec<TokenStream> {
    insts
        .iter()
        .map(|inst| match inst {
            Inst::Class(ranges, negated) => {
                let class = classes.tokens(ranges, *negated);
                quote!(::pilotage_types::validate::pattern::Inst::Class(#class))
            }
            Inst::Split(a, b) => quote!(::pilotage_types::validate::pattern::Inst::Split(#a, #b)),
            Inst::Jump(to) => quote!(::pilotage_types::validate::pattern::Inst::Jump(#to)),
            Inst::Start => quote!(::pilotage_types::validate::pattern::Inst::Start),
            Inst::End => quote!(::pilotage_types::validate::pattern::Inst::End),
            Inst::WordBoundary => quote!(::pilotage_types::validate::pattern::Inst::WordBoundary),
            Inst::NotWordBoundary => quote!(::pilotage_types::validate::pattern::Inst::NotWordBoundary),
            Inst::Look(negated, next) => {
                quote!(::pilotage_types::validate::pattern::Inst::Look { negated: #negated, next: #next })
            }
            Inst::LookDfa(negated, tables) => {
                let dfa = dfa_tokens(tables);
                quote!(::pilotage_types::validate::pattern::Inst::LookDfa { negated: #negated, dfa: #dfa })
            }
            Inst::LookScan { negated, behind, dfa } => {
                let dfa = classes.scan(dfa);
                quote!(::pilotage_types::validate::pattern::Inst::LookScan { negated: #negated, behind: #behind, dfa: #dfa })
            }
            Inst::LookBehind(negated, next) => {
                quote!(::pilotage_types::validate::pattern::Inst::LookBehind { negated: #negated, next: #next })
            }
            Inst::LookEnd => quote!(::pilotage_types::validate::pattern::Inst::LookEnd),
            Inst::Match => quote!(::pilotage_types::validate::pattern::Inst::Match),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tables' search (`pilotage_types::validate::pattern::Dfa`, hand-written so that users'
    /// builds do not compile regex-automata) gives regex-automata's own verdict, for anchored
    /// and unanchored patterns, classes, repetitions, word boundaries and `$`, on random texts
    /// of ASCII, Latin-1, astral characters and line terminators.
    #[test]
    fn the_tables_search_as_regex_automata_does() {
        use pilotage_types::validate::pattern::{Dfa, Pattern};
        use regex_automata::dfa::Automaton;
        let alphabet: Vec<char> = "ab-.0 9\n_zé😀\u{2028}".chars().collect();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let patterns = [
            r"a+b",
            r"^a+b$",
            r"^[a-z0-9-]+(\.[a-z0-9-]+)*$",
            r"\bab\b",
            r"(a|b)*\d{2,3}$",
            r"^.{2}é",
            r"😀.?z",
            r"\p{L}{2}",
            r"[^a]\s",
            r"^$",
            r"a\bé",
            r"x*",
        ];
        for source in patterns {
            let (node, _) = parse(source).unwrap();
            let anchored =
                matches!(&node, Node::Concat(items) if items.first() == Some(&Node::Start)) || node == Node::Start;
            let hir = hir(&node).unwrap();
            let dense = build_dfa(&hir, anchored).unwrap();
            let tables = tables(&dense, anchored).unwrap();
            let dfa: &'static Dfa = Box::leak(Box::new(Dfa::new(
                Box::leak(Box::new(tables.classes)),
                tables.stride,
                tables.table.leak(),
                tables.first_match,
                tables.eoi.leak(),
                tables.start,
            )));
            let pattern = Pattern::Automaton {
                source: "",
                required: "",
                lead: None,
                dfa,
            };
            let mode = if anchored {
                regex_automata::Anchored::Yes
            } else {
                regex_automata::Anchored::No
            };
            for _ in 0..2000 {
                let length = (next() % 9) as usize;
                let text: String = (0..length)
                    .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                    .collect();
                let theirs = dense
                    .try_search_fwd(&regex_automata::Input::new(&text).anchored(mode).earliest(true))
                    .unwrap()
                    .is_some();
                assert_eq!(pattern.is_match(&text), theirs, "{source} on {text:?}");
            }
        }
    }

    #[test]
    fn the_property_tables_are_sorted_for_binary_search() {
        assert!(GENERAL_CATEGORIES.windows(2).all(|pair| pair[0] < pair[1]));
        assert!(BINARY_PROPERTIES.windows(2).all(|pair| pair[0].0 < pair[1].0));
        assert!(SCRIPTS.windows(2).all(|pair| pair[0] < pair[1]));
    }

    #[test]
    fn every_property_ecma_262_names_resolves_in_regex_syntax_but_a_few() {
        let mut unknown = Vec::new();
        let queries = GENERAL_CATEGORIES
            .iter()
            .map(|value| format!("gc={value}"))
            .chain(BINARY_PROPERTIES.iter().map(|(_, canonical)| (*canonical).to_owned()))
            .chain(
                SCRIPTS
                    .iter()
                    .flat_map(|value| [format!("sc={value}"), format!("scx={value}")]),
            );
        for query in queries {
            if unicode_class(&query).is_err() {
                unknown.push(query);
            }
        }
        unknown.dedup();
        // Surrogates (no Rust string holds one: the parser makes `\p{Cs}` the empty set), and
        // what regex-syntax has no table for.
        assert_eq!(
            unknown,
            [
                "gc=Cs",
                "gc=Surrogate",
                "Changes_When_NFKC_Casefolded",
                "sc=Hrkt",
                "scx=Hrkt",
                "sc=Katakana_Or_Hiragana",
                "scx=Katakana_Or_Hiragana",
                "sc=Unknown",
                "scx=Unknown",
                "sc=Zzzz",
                "scx=Zzzz"
            ]
        );
    }

    #[test]
    fn word_boundaries_are_instructions_and_a_class_backspace_is_not() {
        // `\b` alone: a DFA; the program (kept for the tests) has the instruction.
        let Compiled::Automaton { insts, .. } = compile_owned(r"\bx").unwrap() else {
            panic!("no look-around, no `\\B`: a DFA")
        };
        assert!(insts.contains(&Inst::WordBoundary), "{insts:?}");
        // `\B`: the Pike VM, whose written program has both.
        let Compiled::Program { why, .. } = compile_owned(r"\bx\B").unwrap() else {
            panic!("`\\B`: a program")
        };
        assert!(why.contains("inside a character"), "{why}");
        let tokens = compile(r"\bx\B").unwrap().to_string();
        assert!(tokens.contains("Inst :: WordBoundary"), "{tokens}");
        assert!(tokens.contains("Inst :: NotWordBoundary"), "{tokens}");
        let tokens = compile(r"^[\b]$").unwrap().to_string();
        assert!(
            tokens.contains("Pattern :: Literal") && tokens.contains(r#"text : "\u{8}""#),
            "{tokens}"
        );
        assert!(compile(r"(?=a\b)").unwrap().to_string().contains("WordBoundary"));
    }

    #[test]
    fn property_escapes_are_written_as_ranges() {
        let Compiled::Sequence(steps) = compile_owned(r"^\p{Nd}$").unwrap() else {
            panic!()
        };
        assert!(steps[0].0.contains(&('\u{9e6}', '\u{9ef}')), "{steps:?}");
        assert!(compile_owned(r"^\p{Cs}$").is_ok());
        // A large class is written once, however many instructions take it (a program: the
        // look-ahead keeps it from being a DFA).
        let tokens = compile(r"(?=.)(\p{L}+\p{L}|[\p{L}])").unwrap().to_string();
        assert_eq!(tokens.matches("const RANGES_").count(), 1, "{tokens}");
        assert_eq!(tokens.matches("ranges : RANGES_0").count(), 4, "{tokens}");
        assert!(!compile(r"[a-z]+").unwrap().to_string().contains("RANGES_"));
        let Compiled::Sequence(steps) = compile_owned(r"^\P{ASCII}$").unwrap() else {
            panic!()
        };
        assert_eq!(steps, [(vec![('\0', '\u{7f}')], true, 1, Some(1))]);
        let Compiled::Sequence(steps) = compile_owned(r"^[\P{ASCII}a]$").unwrap() else {
            panic!()
        };
        assert_eq!(
            steps,
            [(
                vec![('a', 'a'), ('\u{80}', '\u{d7ff}'), ('\u{e000}', '\u{10ffff}')],
                false,
                1,
                Some(1)
            )]
        );
    }

    #[test]
    fn errors_name_what_is_refused() {
        for (source, needle) in [
            (r"\p{CWKCF}", "Changes_When_NFKC_Casefolded"),
            (r"\p{sc=Zzzz}", "sc=Zzzz"),
            (r"\p{Greek}", "Greek"),
            (r"\p{Script=greek}", "greek"),
            (r"\p{Block=Basic_Latin}", "Block"),
            (r"(a)\1", "back-references"),
            (r"(?<n>a)\k<n>", "back-references"),
            (r"(?i:a)", "modifiers"),
            // Annex B would read the `]` and the `{`, but not the property and braced escapes.
            (r"\p{L}]", "`]`"),
            (r"\u{41}a{2", "`{`"),
            (r"\a\1", r"unknown escape \a"),
        ] {
            let message = compile(source).map(|_| ()).unwrap_err().0;
            assert!(message.contains(needle), "{source}: {message}");
        }
    }

    #[test]
    fn annex_b_syntax_is_read_only_where_the_u_flag_refuses_and_is_named() {
        let written = write(r"^[\w-.]+]$").unwrap();
        assert_eq!(
            written.annex_b,
            [
                "a class range with a class escape at one end (`[\\w-.]`), read as a union",
                "a lone `]`"
            ]
        );
        assert!(write(r"^[\w.-]+\]$").unwrap().annex_b.is_empty());
        // The strict error is the one reported when Annex B does not help either, with the
        // Annex B reading's own fault when it is another.
        let error = write(r"]\p{L}").unwrap_err().0;
        assert!(error.contains("a lone `]`"), "{error}");
        let error = write(r"^(a|b]$").unwrap_err().0;
        assert!(error.contains("a lone `]` (write `\\]`) (at character 6)"), "{error}");
        assert!(
            error.contains("read without the `u` flag (ECMA-262 Annex B), an unclosed group (at character 7)"),
            "{error}"
        );
        let error = write(r"(?1)").unwrap_err().0;
        assert_eq!(
            error.matches("(at character").count(),
            1,
            "one fault, named once: {error}"
        );
    }

    #[test]
    fn the_instruction_limit_holds() {
        assert!(compile("a{20000}").is_err());
        assert!(compile(r"\p{L}{20000}").is_err());
        assert!(compile("(?:ab){5000}").is_ok());
    }
}
