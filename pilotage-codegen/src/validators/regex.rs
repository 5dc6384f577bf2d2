//! JSON Schema `pattern`s (ECMA-262 syntax, no flags) parsed at generation time and written as
//! static data for `pilotage_types::validate::pattern`: an anchored sequence of disjoint
//! character classes when the pattern is one, a Pike VM program otherwise. A construct the
//! runtime cannot honour exactly (back-references, look-behind, `\b`, Unicode property
//! escapes, ...) is an error, never an approximation.

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
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    Repeat(Box<Node>, u32, Option<u32>),
    Look(Box<Node>, bool),
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

/// Adds the characters of `lo..=hi` (code points), skipping the surrogate gap.
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

struct Parser<'a> {
    chars: Vec<char>,
    at: usize,
    source: &'a str,
}

/// A pattern the runtime cannot honour, or one that is not a regular expression.
#[derive(Debug)]
pub struct PatternError(pub String);

type Result<T> = std::result::Result<T, PatternError>;

impl Parser<'_> {
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
        if matches!(atom, Node::Start | Node::End | Node::Look(..)) {
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
    /// unchanged) when the brace is a literal, as ECMA-262's Annex B reads it.
    fn braces(&mut self) -> Result<Option<(u32, Option<u32>)>> {
        let start = self.at;
        let rest: String = self.chars[self.at..].iter().collect();
        let Some(close) = rest.find('}') else { return Ok(None) };
        let inner = &rest[1..close];
        let parse = |s: &str| s.parse::<u32>().ok();
        let bounds = match inner.split_once(',') {
            None => parse(inner).map(|n| (n, Some(n))),
            Some((lo, "")) => parse(lo).map(|n| (n, None)),
            Some((lo, hi)) => parse(lo).zip(parse(hi)).map(|(a, b)| (a, Some(b))),
        };
        match bounds {
            Some(bounds) if !inner.is_empty() && inner.chars().all(|c| c.is_ascii_digit() || c == ',') => {
                self.at = start + inner.chars().count() + 1;
                Ok(Some(bounds))
            }
            _ => Ok(None),
        }
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
                let look = if self.eat('?') {
                    if self.eat(':') {
                        None
                    } else if self.eat('=') {
                        Some(false)
                    } else if self.eat('!') {
                        Some(true)
                    } else if self.peek() == Some('<') && !matches!(self.chars.get(self.at + 1), Some('=' | '!')) {
                        // A named group: the name does not change what matches.
                        while let Some(c) = self.peek() {
                            self.at += 1;
                            if c == '>' {
                                break;
                            }
                        }
                        None
                    } else {
                        return self.error("look-behind or an unknown group kind");
                    }
                } else {
                    None
                };
                let inner = self.alternation()?;
                if !self.eat(')') {
                    return self.error("an unclosed group");
                }
                match look {
                    Some(negated) => Node::Look(Box::new(inner), negated),
                    None => inner,
                }
            }
            ')' => return self.error("an unopened group"),
            '[' => self.class()?,
            '\\' => self.escape(false)?,
            '*' | '+' | '?' => return self.error("a quantifier with nothing to repeat"),
            '{' => {
                self.at -= 1;
                if self.braces_ahead() {
                    return self.error("a quantifier with nothing to repeat");
                }
                self.at += 1;
                Node::Class(vec![('{', '{')], false)
            }
            c => Node::Class(vec![(c, c)], false),
        })
    }

    /// An escape after `\`; `in_class` for the escapes of a character class.
    fn escape(&mut self, in_class: bool) -> Result<Node> {
        let Some(c) = self.peek() else {
            return self.error("a trailing backslash");
        };
        self.at += 1;
        let single = |c: char| Node::Class(vec![(c, c)], false);
        Ok(match c {
            'd' => Node::Class(DIGIT.to_vec(), false),
            'D' => Node::Class(DIGIT.to_vec(), true),
            'w' => Node::Class(WORD.to_vec(), false),
            'W' => Node::Class(WORD.to_vec(), true),
            's' => Node::Class(SPACE.to_vec(), false),
            'S' => Node::Class(SPACE.to_vec(), true),
            'n' => single('\n'),
            'r' => single('\r'),
            't' => single('\t'),
            'f' => single('\u{c}'),
            'v' => single('\u{b}'),
            '0' if !self.peek().is_some_and(|c| c.is_ascii_digit()) => single('\0'),
            'b' if in_class => single('\u{8}'),
            'x' => {
                let hex: String = self.chars.iter().skip(self.at).take(2).collect();
                match u32::from_str_radix(&hex, 16).ok().filter(|_| hex.len() == 2) {
                    Some(code) => {
                        self.at += 2;
                        single(char::from_u32(code).unwrap_or('\0'))
                    }
                    None => return self.error("\\x needs two hexadecimal digits"),
                }
            }
            'u' => {
                let hex: String = self.chars.iter().skip(self.at).take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().filter(|_| hex.len() == 4) {
                    Some(code) => {
                        self.at += 4;
                        match char::from_u32(code) {
                            Some(c) => single(c),
                            None => return self.error("a surrogate code unit (\\uD800-\\uDFFF) is not supported"),
                        }
                    }
                    None => return self.error("\\u needs four hexadecimal digits"),
                }
            }
            'b' | 'B' => return self.error("word boundaries (\\b, \\B) are not supported"),
            'p' | 'P' => return self.error("Unicode property escapes are not supported"),
            'k' => return self.error("named back-references are not supported"),
            'c' => return self.error("control escapes (\\c) are not supported"),
            c if c.is_ascii_digit() => return self.error("back-references are not supported"),
            c if c.is_ascii_alphanumeric() => return self.error("an unknown escape"),
            c => single(c),
        })
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
            // A range `a-z`, unless the hyphen is last or a side is a class escape.
            if self.peek() == Some('-') && self.chars.get(self.at + 1).is_some_and(|c| *c != ']') {
                if let ClassAtom::Char(lo) = low {
                    self.at += 1;
                    match self.class_atom()? {
                        ClassAtom::Char(hi) if lo <= hi => {
                            ranges.push((lo, hi));
                            continue;
                        }
                        ClassAtom::Char(_) => return self.error("a character range out of order"),
                        ClassAtom::Set(_) => return self.error("a range to a class escape"),
                    }
                }
            }
            match low {
                ClassAtom::Char(c) => ranges.push((c, c)),
                ClassAtom::Set(set) => ranges.extend(set),
            }
        }
        Ok(Node::Class(normalise(ranges), negated))
    }

    fn class_atom(&mut self) -> Result<ClassAtom> {
        let Some(c) = self.peek() else {
            return self.error("an unclosed character class");
        };
        self.at += 1;
        if c != '\\' {
            return Ok(ClassAtom::Char(c));
        }
        match self.escape(true)? {
            Node::Class(ranges, false) if ranges.len() == 1 && ranges[0].0 == ranges[0].1 => {
                Ok(ClassAtom::Char(ranges[0].0))
            }
            Node::Class(ranges, false) => Ok(ClassAtom::Set(ranges)),
            Node::Class(ranges, true) => Ok(ClassAtom::Set(complement(&ranges))),
            _ => self.error("an escape that is not a character"),
        }
    }
}

enum ClassAtom {
    Char(char),
    Set(Vec<(char, char)>),
}

/// One instruction, mirroring `pilotage_types::validate::pattern::Inst`.
#[derive(Debug, Clone)]
enum Inst {
    Class(Vec<(char, char)>, bool),
    Split(u32, u32),
    Jump(u32),
    Start,
    End,
    Look(bool, u32),
    LookEnd,
    Match,
}

struct Compiler {
    insts: Vec<Inst>,
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
                let look = self.emit(Inst::Look(*negated, 0))?;
                self.node(body)?;
                self.emit(Inst::LookEnd)?;
                let next = self.pc();
                self.insts[look as usize] = Inst::Look(*negated, next);
            }
        }
        Ok(())
    }
}

fn class_tokens(ranges: &[(char, char)], negated: bool) -> TokenStream {
    let ranges = ranges.iter().map(|(lo, hi)| {
        let (lo, hi) = (Literal::character(*lo), Literal::character(*hi));
        quote!((#lo, #hi))
    });
    quote!(::pilotage_types::validate::pattern::Class { ranges: &[#(#ranges),*], negated: #negated })
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

/// The steps of an anchored sequence of pairwise-disjoint neighbouring classes, if `node` is
/// one.
/// One step of a sequence: the class's ranges, whether negated, the fewest and most repetitions.
type SeqStep = (Vec<(char, char)>, bool, u32, Option<u32>);

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

/// Parses `source` and writes it as a `pilotage_types::validate::pattern::Pattern` expression.
pub fn compile(source: &str) -> Result<TokenStream> {
    let mut parser = Parser {
        chars: source.chars().collect(),
        at: 0,
        source,
    };
    let node = parser.alternation()?;
    if parser.at < parser.chars.len() {
        return parser.error("an unopened group");
    }
    if let Some(steps) = sequence(&node) {
        let steps = steps.iter().map(|(ranges, negated, min, max)| {
            let class = class_tokens(ranges, *negated);
            let max = match max {
                Some(max) => quote!(Some(#max)),
                None => quote!(None),
            };
            quote!(::pilotage_types::validate::pattern::Step { class: #class, min: #min, max: #max })
        });
        return Ok(quote!(::pilotage_types::validate::pattern::Pattern::Sequence {
            source: #source,
            steps: &[#(#steps),*],
        }));
    }
    let anchored = match &node {
        Node::Start => true,
        Node::Concat(items) => items.first() == Some(&Node::Start),
        _ => false,
    };
    let mut compiler = Compiler { insts: Vec::new() };
    compiler.node(&node)?;
    compiler.emit(Inst::Match)?;
    let insts = compiler.insts.iter().map(|inst| match inst {
        Inst::Class(ranges, negated) => {
            let class = class_tokens(ranges, *negated);
            quote!(::pilotage_types::validate::pattern::Inst::Class(#class))
        }
        Inst::Split(a, b) => quote!(::pilotage_types::validate::pattern::Inst::Split(#a, #b)),
        Inst::Jump(to) => quote!(::pilotage_types::validate::pattern::Inst::Jump(#to)),
        Inst::Start => quote!(::pilotage_types::validate::pattern::Inst::Start),
        Inst::End => quote!(::pilotage_types::validate::pattern::Inst::End),
        Inst::Look(negated, next) => {
            quote!(::pilotage_types::validate::pattern::Inst::Look { negated: #negated, next: #next })
        }
        Inst::LookEnd => quote!(::pilotage_types::validate::pattern::Inst::LookEnd),
        Inst::Match => quote!(::pilotage_types::validate::pattern::Inst::Match),
    });
    Ok(quote!(::pilotage_types::validate::pattern::Pattern::Program {
        source: #source,
        insts: &[#(#insts),*],
        anchored: #anchored,
    }))
}
