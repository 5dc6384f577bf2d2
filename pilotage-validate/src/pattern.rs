//! The `pattern` keyword without a regex engine: the generator parses each pattern (ECMA-262
//! syntax with the `u` flag, as JSON Schema specifies) when the validators are generated, and
//! writes it here as static data, so nothing is compiled at run time.
//!
//! Five forms:
//! - [`Pattern::Literal`]: a literal text, anchored or not (`^x-`, `\.json$`): `starts_with`,
//!   `ends_with`, `==` or `contains`.
//! - [`Pattern::Sequence`]: anchored at both ends, a sequence of character classes each
//!   repeated between a minimum and a maximum number of times, where neighbouring classes share
//!   no character (`^[0-9]+\.[0-9]+$`, `^[a-f0-9]{64}$`). One greedy pass decides it exactly.
//! - [`Pattern::Automaton`]: any other pattern without look-around: a DFA the generator built
//!   with `regex-automata` and wrote as tables ([`Dfa`]), one table lookup a byte of text, after a
//!   substring every match contains is found in the text (if the pattern has one).
//! - [`Pattern::Guarded`]: look-aheads at the start, each a DFA, then a pattern of the forms
//!   above (`^(?!x-|\$)[a-z]+$`).
//! - [`Pattern::Program`]: anything else the generator supports (alternation, groups, any
//!   quantifier, `^`/`$` anywhere, word boundaries `\b`/`\B`, look-ahead, look-behind): a
//!   small instruction program run by a Pike VM, linear in the text for each instruction, with
//!   no backtracking blow-up. Look-arounds, by their body:
//!   - a short look-ahead (at most 32 characters) without look-around, `^`, `\b` or `\B` is a
//!     DFA the generator built ([`Inst::LookDfa`]), walked from its position (a few bytes);
//!   - a look-around of unbounded (or long) body without look-around or `\B` is decided for
//!     every position at once ([`Inst::LookScan`]): a DFA reads the whole text once, the first
//!     time it is reached, so the pattern stays linear in the text;
//!   - any other runs a nested anchored match at its position, over the whole text (so `^`,
//!     `$` and word boundaries inside it see the characters around it); a look-behind runs its
//!     sub-program (which the generator writes reversed) backwards from its position, as
//!     ECMA-262 matches a look-behind. Only here (and in a walk of a look-ahead whose scan
//!     would pass the size limits) can one text cost more than linear time: a body of
//!     unbounded length, reached at many positions, reads the rest of the text from each. The
//!     generation report calls such a pattern quadratic.
//!
//! Semantics are ECMA-262's with the `u` flag and no other: the text is a sequence of code
//! points (an astral character is one character); `.` is any character but `\n`, `\r`, U+2028
//! and U+2029; `\d` is `[0-9]`, `\w` is `[A-Za-z0-9_]`, `\s` is ECMA-262's WhiteSpace and
//! LineTerminator; Unicode property escapes (`\p{L}`, `\p{Script=Greek}`) arrive as the ranges
//! the generator computed; a word boundary ([`Inst::WordBoundary`]) is where exactly one of the
//! characters before and after is a word character (`[A-Za-z0-9_]`, the ends of the text
//! counting as non-word); `^` and `$` match only at the ends of the text (no `m` flag: `$` does
//! not match before a trailing newline); a pattern matches anywhere in the text unless anchored.
//!
//! The data are plain slices: a [`Pattern`] can as well be built from leaked vectors (the
//! generator's tests run this matcher on exactly the program they would write).

/// A set of characters: sorted, non-overlapping inclusive ranges, possibly negated.
#[derive(Debug, Clone, Copy)]
pub struct Class {
    /// The ranges, sorted and disjoint.
    pub ranges: &'static [(char, char)],
    /// Whether the class is every character *not* in `ranges`.
    pub negated: bool,
}

impl Class {
    /// Whether `c` is in the class.
    #[inline]
    pub fn contains(&self, c: char) -> bool {
        let inside = match self.ranges {
            [(lo, hi)] => *lo <= c && c <= *hi,
            // A few ranges (`[sS]`, `[a-zA-Z_]`): compared in turn, no search.
            ranges if ranges.len() <= 4 => ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi),
            ranges => in_many(ranges, c),
        };
        inside != self.negated
    }
}

/// How many of a large class's first ranges [`in_many`] compares in turn before it searches.
const SCANNED_FIRST: usize = 8;

/// Whether `c` is in `ranges` (sorted, disjoint; [`Class::contains`] calls it for more than
/// four). The first [`SCANNED_FIRST`] are compared in turn, stopping at the first that starts
/// after `c`: the ranges are sorted, so a large class (`\p{L}`, about 680 ranges) holds its
/// few ASCII ranges first, and an ASCII character is decided in a few branches that predict,
/// where a binary search of every range takes about ten that do not (`^\p{Letter}+$` on
/// `Hello` took twice jsonschema's time). A character past the first [`SCANNED_FIRST`] ranges
/// is searched for in the rest, after up to that many comparisons more than a plain search.
#[inline]
fn in_many(ranges: &[(char, char)], c: char) -> bool {
    let (first, rest) = ranges.split_at(ranges.len().min(SCANNED_FIRST));
    for &(lo, hi) in first {
        if c < lo {
            return false;
        }
        if c <= hi {
            return true;
        }
    }
    in_sorted(rest, c)
}

/// Whether `c` is in `ranges` (sorted, disjoint): a binary search.
#[inline]
fn in_sorted(ranges: &[(char, char)], c: char) -> bool {
    ranges
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// One step of a [`Pattern::Sequence`]: a class repeated `min..=max` times (`max` `None`:
/// unbounded).
#[derive(Debug, Clone, Copy)]
pub struct Step {
    /// The characters this step takes.
    pub class: Class,
    /// The fewest repetitions.
    pub min: u32,
    /// The most repetitions, if bounded.
    pub max: Option<u32>,
}

/// One instruction of a [`Pattern::Program`].
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Inst {
    /// Takes one character of the class.
    Class(Class),
    /// Continues at both targets (the first preferred; preference does not matter for a
    /// yes/no match).
    Split(u32, u32),
    /// Continues at the target.
    Jump(u32),
    /// Holds only at the start of the text.
    Start,
    /// Holds only at the end of the text.
    End,
    /// `\b`: holds where exactly one of the characters just before and just after the position
    /// is a word character (`[A-Za-z0-9_]`); the ends of the text count as non-word characters.
    WordBoundary,
    /// `\B`: holds where [`Inst::WordBoundary`] does not.
    NotWordBoundary,
    /// A look-ahead: the sub-program starting at the next instruction, up to its
    /// [`Inst::LookEnd`], must match (or, `negated`, must not) at this position; then continues
    /// at `next`.
    Look {
        /// Whether this is `(?!...)`.
        negated: bool,
        /// Where to continue after the look-ahead.
        next: u32,
    },
    /// A short look-ahead (a body of at most 32 characters) whose body the generator could
    /// write as a DFA (no look-around, `^`, `\b` or `\B` in it), so that each walk reads a
    /// few bytes at most: the DFA, anchored at this position, must reach a match (or, `negated`,
    /// must not) before the text ends; then continues at the next instruction. The earliest
    /// match is enough: a look-ahead holds when its body matches any text from here.
    LookDfa {
        /// Whether this is `(?!...)`.
        negated: bool,
        /// The body's DFA, anchored.
        dfa: &'static Dfa,
    },
    /// A look-around whose body is long (more than 32 characters) or unbounded (`(?=.*\d)`,
    /// `(?<=a.*)`) and that a DFA decides (no look-around and no `\B` in it), decided for every
    /// position of the text at once: the first time the VM reaches it in a match, the DFA reads
    /// the whole text once and records where the body's matches start (a look-ahead: the DFA
    /// reads the body reversed, from the text's end) or end (a look-behind: from the text's
    /// start). At each position it is then one lookup, so the pattern stays linear in the
    /// text; a walk from each position could read to the text's end from each (quadratic on a
    /// long text without a match). Instructions that name the same `dfa` in the same
    /// direction (the copies of a body a counted repetition repeats) share one scan. Its `^`,
    /// `$` and word boundaries see the whole text. Continues at the next instruction.
    LookScan {
        /// Whether this is `(?!...)` or `(?<!...)`.
        negated: bool,
        /// Whether this is a look-behind.
        behind: bool,
        /// The body's DFA: unanchored, reporting every match, built reversed for a look-ahead.
        dfa: &'static Dfa,
    },
    /// A look-behind: the sub-program starting at the next instruction, up to its
    /// [`Inst::LookEnd`], written reversed (the last character of the look-behind first), must
    /// match (or, `negated`, must not) backwards from this position; then continues at `next`.
    LookBehind {
        /// Whether this is `(?<!...)`.
        negated: bool,
        /// Where to continue after the look-behind.
        next: u32,
    },
    /// The end of a look-around's sub-program.
    LookEnd,
    /// The pattern matched.
    Match,
}

/// A compiled `pattern`.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Pattern {
    /// A literal text (`^x-`, `\.json$`, `^v1$`, `cole`): a prefix, suffix, equality or
    /// substring test, no matcher at all.
    Literal {
        /// The pattern as written in the schema.
        source: &'static str,
        /// The characters the pattern matches, in order.
        text: &'static str,
        /// Whether it is anchored at the start (`^`).
        start: bool,
        /// Whether it is anchored at the end (`$`).
        end: bool,
    },
    /// An anchored sequence of pairwise-disjoint neighbouring classes.
    Sequence {
        /// The pattern as written in the schema.
        source: &'static str,
        /// The steps.
        steps: &'static [Step],
    },
    /// A DFA built when the validators were generated (a pattern without look-around) and
    /// written as tables ([`Dfa`]), searched without compiling anything.
    Automaton {
        /// The pattern as written in the schema.
        source: &'static str,
        /// A text every match contains (`""`: none known): a text without it is no match, and
        /// no search runs.
        required: &'static str,
        /// The most bytes a match holds before `required`, when that is bounded and the
        /// pattern reads nothing before where a search starts (no `^`, no word boundary): the
        /// search then starts that far before the first occurrence of `required` (`\wcole`: a
        /// byte before the first `cole`), not at the text's start.
        lead: Option<usize>,
        /// The DFA (anchored at the text's start when the pattern is).
        dfa: &'static Dfa,
    },
    /// Look-aheads at the text's start, each a DFA, then the rest of the pattern (anchored at
    /// the start, no look-around left): `^(?!x-|\$)[a-z]+$`. The text matches when every
    /// guard holds and the rest matches.
    Guarded {
        /// The pattern as written in the schema.
        source: &'static str,
        /// The look-aheads, in order.
        guards: &'static [Guard],
        /// The rest of the pattern (a literal, a sequence or a DFA).
        then: &'static Pattern,
    },
    /// A Pike VM program.
    Program {
        /// The pattern as written in the schema.
        source: &'static str,
        /// The instructions; execution starts at 0.
        insts: &'static [Inst],
        /// Whether the program can only match at the start of the text (a leading `^`), so no
        /// search from later positions is needed.
        anchored: bool,
    },
}

impl Pattern {
    /// The pattern as written in the schema.
    pub fn source(&self) -> &'static str {
        match self {
            Pattern::Literal { source, .. }
            | Pattern::Sequence { source, .. }
            | Pattern::Automaton { source, .. }
            | Pattern::Guarded { source, .. }
            | Pattern::Program { source, .. } => source,
        }
    }

    /// Whether the pattern matches somewhere in `text` (JSON Schema's `pattern`).
    pub fn is_match(&self, text: &str) -> bool {
        match self {
            Pattern::Literal {
                text: literal,
                start,
                end,
                ..
            } => match (start, end) {
                (true, true) => text == *literal,
                (true, false) => text.starts_with(literal),
                (false, true) => text.ends_with(literal),
                (false, false) => text.contains(literal),
            },
            Pattern::Sequence { steps, .. } => sequence_matches(steps, text),
            // The required text is looked for first in a long text only: a short one (a member
            // name, mostly) is read by the DFA faster than a substring search is set up.
            Pattern::Automaton {
                required, lead, dfa, ..
            } => {
                if text.len() < PREFILTER_FROM || required.is_empty() {
                    return dfa.is_match(text);
                }
                match lead {
                    Some(lead) => dfa.matches_around(text, required, *lead),
                    None => find(text.as_bytes(), required.as_bytes()).is_some() && dfa.is_match(text),
                }
            }
            Pattern::Guarded { guards, then, .. } => {
                guards
                    .iter()
                    .all(|guard| guard.dfa.matches(text.as_bytes()) != guard.negated)
                    && then.is_match(text)
            }
            Pattern::Program { insts, anchored, .. } => {
                let scans = Scans::default();
                Vm::new(insts, text, &scans).search(0, 0, *anchored)
            }
        }
    }
}

/// A look-ahead at the text's start of a [`Pattern::Guarded`]: its body's DFA, anchored, must
/// reach a match on the text (or, `negated`, must not).
#[derive(Debug, Clone, Copy)]
pub struct Guard {
    /// Whether this is `(?!...)`.
    pub negated: bool,
    /// The body's DFA, anchored at the text's start.
    pub dfa: &'static Dfa,
}

/// A pattern's DFA, as `pilotage-codegen` wrote it: built with `regex-automata` when the
/// validators were generated, from the same parse as the Pike VM program, and written out as
/// plain tables, so that searching it needs no crate and reads nothing at run time.
///
/// States are numbered with the dead state 0, then the states that are no match, then (from
/// `first_match` on) the match states. A search takes the text's bytes from `start`: the dead
/// state means no match can follow, a match state means the pattern matched (a DFA's match is
/// seen one byte late, so the table already accounts for what the matched text ended with);
/// at the end of the text, `eoi` says whether the end-of-text transition reaches a match. This
/// is `regex-automata`'s own forward search (`try_search_fwd` with `earliest`), written out
/// (ten lines, and a test against the crate in `pilotage-codegen`) so that users' builds do
/// not compile the crate.
#[derive(Debug)]
pub struct Dfa {
    /// Each byte's equivalence class.
    classes: &'static [u8; 256],
    /// The number of classes: a state's row width.
    stride: usize,
    /// The transitions, `u16` little endian, state by state, class by class.
    table: &'static [u8],
    /// The first match state.
    first_match: usize,
    /// Whether each state's end-of-text transition reaches a match (a byte per state).
    eoi: &'static [u8],
    /// The state a search starts in (anchored when the pattern is).
    start: usize,
}

impl Dfa {
    /// The DFA of these tables (see the type's docs).
    ///
    /// # Panics
    ///
    /// When the tables' sizes do not agree (a table that is not `eoi.len()` rows of `stride`
    /// entries, a start or first match state past the last): in the generated code's `static`s
    /// this is evaluated at compile time, so such tables are a build error. The entries
    /// themselves are not checked here (that took the suite crate's build from 9.5 s to 15.5 s);
    /// the search reads them with bounds checks, and a transition past the table counts as the
    /// dead state. The generator's tables are checked against regex-automata in its tests.
    pub const fn new(
        classes: &'static [u8; 256],
        stride: usize,
        table: &'static [u8],
        first_match: usize,
        eoi: &'static [u8],
        start: usize,
    ) -> Self {
        let states = eoi.len();
        if stride == 0 || states == 0 || start >= states || first_match > states || table.len() != states * stride * 2 {
            panic!("inconsistent DFA tables: their sizes do not agree");
        }
        Self {
            classes,
            stride,
            table,
            first_match,
            eoi,
            start,
        }
    }

    /// Whether the DFA matches `text` (a transition past the table or to a state past the last
    /// counts as the dead state: never the case in the generator's tables).
    fn is_match(&self, text: &str) -> bool {
        self.matches(text.as_bytes())
    }

    /// Whether the DFA reaches a match on `bytes`, the rest of the text from where the search
    /// starts (a look-ahead's position), read to the text's end at most.
    fn matches(&self, bytes: &[u8]) -> bool {
        let mut state = self.start;
        if state == 0 {
            return false;
        }
        // The states that end the search are 0 (dead) and those from `first_match` on (a match,
        // or past the last state): one comparison a byte tells them from the others, as
        // `first_match` is at most the number of states (0 is read as 1: no state but the dead
        // one is plain).
        let last_plain = self.first_match.max(1) - 1;
        for &byte in bytes {
            state = self.step(state, byte);
            if state.wrapping_sub(1) >= last_plain {
                return state != 0 && self.is_match_state(state);
            }
        }
        self.eoi_matches(state)
    }

    /// Whether the DFA (unanchored, for a pattern that reads nothing before where a search
    /// starts) matches `text`, where every match holds `required` at most `lead` bytes after
    /// its start. The search starts `lead` bytes before the first occurrence of `required`
    /// (at a character's start), and whenever the DFA is back in its start state (no match in
    /// progress: what follows is a new search from here), it skips to `lead` bytes before the
    /// next occurrence; with none left, there is no match. `\wcole` on a French sentence reads
    /// the few bytes around each `cole`, not the sentence (the official suite's
    /// `ecmascript-regex.json` groups 11 and 12).
    fn matches_around(&self, text: &str, required: &str, lead: usize) -> bool {
        let bytes = text.as_bytes();
        // Where a search from `at` may start: `lead` bytes before the next occurrence, at a
        // character's start, not before `at` (`None`: no occurrence from `at` on).
        let skip = |at: usize| {
            let found = at + find(&bytes[at..], required.as_bytes())?;
            let mut from = found.saturating_sub(lead).max(at);
            while from > at && !text.is_char_boundary(from) {
                from -= 1;
            }
            Some((from, found))
        };
        let Some((mut at, mut next)) = skip(0) else {
            return false;
        };
        let mut state = self.start;
        if state == 0 {
            return false;
        }
        let last_plain = self.first_match.max(1) - 1;
        while let Some(&byte) = bytes.get(at) {
            state = self.step(state, byte);
            at += 1;
            if state.wrapping_sub(1) >= last_plain {
                return state != 0 && self.is_match_state(state);
            }
            if state == self.start && at > next {
                // Past the occurrence the last skip found, with no match in progress.
                match skip(at) {
                    Some((from, found)) => (at, next) = (from, found),
                    None => return false,
                }
            }
        }
        self.eoi_matches(state)
    }

    /// The next state from `state` on `byte` (a transition past the table is the dead state).
    #[inline]
    fn step(&self, state: usize, byte: u8) -> usize {
        let at = (state * self.stride + usize::from(self.classes[usize::from(byte)])) * 2;
        match self.table.get(at..at + 2) {
            Some(entry) => usize::from(u16::from_le_bytes([entry[0], entry[1]])),
            None => 0,
        }
    }

    /// Whether `state` is a match state (one past the last is not).
    #[inline]
    fn is_match_state(&self, state: usize) -> bool {
        state >= self.first_match && state < self.eoi.len()
    }

    /// Whether the end-of-text transition from `state` reaches a match.
    #[inline]
    fn eoi_matches(&self, state: usize) -> bool {
        self.eoi.get(state).is_some_and(|&accept| accept != 0)
    }

    /// For [`Inst::LookScan`]: one pass over the whole of `bytes`, in which this DFA (built
    /// unanchored and reporting every match) records, for each byte position `0..=len`,
    /// whether a match of its body ends there (reading forwards) or, `backward` (the DFA of
    /// the body reversed), starts there. A DFA's match is seen one byte late: the state after
    /// byte `p` tells of a match ending at `p` (forwards) or starting at `p + 1` (backwards),
    /// and the end-of-text transition of one at the last end. `regex-automata`'s searches
    /// read their states the same way (`try_search_fwd` / `try_search_rev`).
    fn scan(&self, bytes: &[u8], backward: bool) -> Vec<bool> {
        let mut holds = vec![false; bytes.len() + 1];
        let mut state = self.start;
        if backward {
            for (p, &byte) in bytes.iter().enumerate().rev() {
                state = self.step(state, byte);
                holds[p + 1] = self.is_match_state(state);
            }
            holds[0] = self.eoi_matches(state);
        } else {
            for (p, &byte) in bytes.iter().enumerate() {
                state = self.step(state, byte);
                holds[p] = self.is_match_state(state);
            }
            holds[bytes.len()] = self.eoi_matches(state);
        }
        #[cfg(test)]
        tests::SCANNED.with(|scanned| scanned.set(scanned.get() + bytes.len()));
        holds
    }
}

/// Where `needle` (not empty) first occurs in `haystack`. A short needle: `memchr` for its first
/// byte, then a comparison (no searcher to build: `memmem::Finder::new` took longer than the
/// search on the official suite's 170-byte sentences); a long one, `memmem`, linear whatever
/// the text.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    if needle.len() > 8 {
        return memchr::memmem::find(haystack, needle);
    }
    let mut at = 0;
    while let Some(found) = memchr::memchr(first, haystack.get(at..)?) {
        let start = at + found;
        if haystack.get(start + 1..)?.starts_with(rest) {
            return Some(start);
        }
        at = start + 1;
    }
    None
}

/// From how many bytes of text a [`Pattern::Automaton`] looks for its required text before
/// running the DFA.
const PREFILTER_FROM: usize = 64;

fn sequence_matches(steps: &[Step], text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut at = 0;
    for step in steps {
        let mut taken = 0u32;
        while step.max.is_none_or(|max| taken < max) {
            // An ASCII character is its byte; any other is decoded (`at` is always at a
            // character's start).
            let (c, width) = match bytes.get(at) {
                None => break,
                Some(&byte) if byte < 0x80 => (char::from(byte), 1),
                Some(_) => match text[at..].chars().next() {
                    Some(c) => (c, c.len_utf8()),
                    None => break,
                },
            };
            if !step.class.contains(c) {
                break;
            }
            at += width;
            taken += 1;
        }
        if taken < step.min {
            return false;
        }
    }
    at == bytes.len()
}

/// Whether `c` is an ECMA-262 word character (`\w` without the `i` flag).
#[inline]
fn is_word(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The positions at which each [`Inst::LookScan`] holds, by its tables and direction (the
/// generator writes one `static` for the copies of a body a counted repetition repeats, so
/// they share one scan), computed the first time one is reached in a match and shared by its
/// nested searches (a `Cell`: taken and put back, never borrowed twice).
type Scans = std::cell::Cell<Vec<(*const Dfa, bool, Vec<bool>)>>;

/// A Pike VM over one text.
struct Vm<'p, 't, 's> {
    insts: &'p [Inst],
    /// The whole text (a look-ahead runs over it too, from its position).
    text: &'t str,
    /// Whether this runs a look-around's sub-program (accepting at [`Inst::LookEnd`]).
    look: bool,
    /// Whether characters are taken backwards (a look-behind's sub-program).
    backward: bool,
    /// The look-arounds decided for every position, for the whole match.
    scans: &'s Scans,
}

/// The two thread lists and the stack of one search.
#[derive(Default)]
struct Lists {
    current: Threads,
    next: Threads,
    stack: Vec<u32>,
}

impl Lists {
    /// Makes room for a program of `size` instructions (the lists are empty).
    fn fit(&mut self, size: usize) {
        for threads in [&mut self.current, &mut self.next] {
            if threads.seen.len() < size {
                threads.seen.resize(size, false);
            }
        }
    }
}

/// A set of instruction indices, in insertion order, with O(1) membership.
#[derive(Default)]
struct Threads {
    dense: Vec<u32>,
    seen: Vec<bool>,
}

impl Threads {
    fn clear(&mut self) {
        for &pc in &self.dense {
            self.seen[pc as usize] = false;
        }
        self.dense.clear();
    }
}

impl<'p, 't, 's> Vm<'p, 't, 's> {
    fn new(insts: &'p [Inst], text: &'t str, scans: &'s Scans) -> Self {
        Self {
            insts,
            text,
            look: false,
            backward: false,
            scans,
        }
    }

    /// Whether an [`Inst::LookScan`] (its DFA `dfa`, a look-behind when `behind`) finds its
    /// body's match starting (or ending) at byte `pos`: the text is scanned the first time
    /// these tables are asked, in this direction.
    fn scanned(&self, dfa: &Dfa, behind: bool, pos: usize) -> bool {
        let mut scans = self.scans.take();
        let key: *const Dfa = dfa;
        let index = match scans.iter().position(|(at, back, _)| *at == key && *back == behind) {
            Some(index) => index,
            None => {
                scans.push((key, behind, dfa.scan(self.text.as_bytes(), !behind)));
                scans.len() - 1
            }
        };
        let holds = scans[index].2.get(pos).copied().unwrap_or(false);
        self.scans.set(scans);
        holds
    }

    /// Whether the program from instruction `start` matches from byte `from` of the text:
    /// starting anywhere at or after `from`, or (`anchored`) only at `from`.
    fn search(&self, start: u32, from: usize, anchored: bool) -> bool {
        // The thread lists are reused from one match to the next on this thread (a match
        // allocated three vectors before: most of the time of a short pattern on a short
        // text). A nested search (a look-around, run at each position of the outer one) takes
        // the next spare of the pool, so it allocates only the first time too: SchemaStore's
        // hugo.json checks every member name against `^(?!aliases|audio|...)$`, and the
        // look-ahead's allocations were a third of its time. At most [`SPARES`] are kept.
        const SPARES: usize = 8;
        thread_local! {
            static SPARE: std::cell::RefCell<Vec<Lists>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let size = self.insts.len();
        let mut lists = SPARE
            .with(|spare| spare.try_borrow_mut().ok().and_then(|mut spare| spare.pop()))
            .unwrap_or_default();
        lists.fit(size);
        let found = self.search_with(&mut lists, start, from, anchored);
        lists.current.clear();
        lists.next.clear();
        SPARE.with(|spare| {
            if let Ok(mut spare) = spare.try_borrow_mut() {
                if spare.len() < SPARES {
                    spare.push(lists);
                }
            }
        });
        found
    }

    fn search_with(&self, lists: &mut Lists, start: u32, from: usize, anchored: bool) -> bool {
        let Lists { current, next, stack } = lists;
        let mut pos = from;
        let (mut forward, mut backward) = (self.text[from..].chars(), self.text[..from].chars());
        loop {
            if (pos == from || !anchored) && self.add(current, stack, start, pos) {
                return true;
            }
            if anchored && current.dense.is_empty() {
                return false;
            }
            let taken = if self.backward {
                backward.next_back()
            } else {
                forward.next()
            };
            let Some(c) = taken else { return false };
            let after = if self.backward {
                pos - c.len_utf8()
            } else {
                pos + c.len_utf8()
            };
            next.clear();
            for i in 0..current.dense.len() {
                let pc = current.dense[i];
                if let Inst::Class(class) = self.insts[pc as usize] {
                    if class.contains(c) && self.add(next, stack, pc + 1, after) {
                        return true;
                    }
                }
            }
            std::mem::swap(current, next);
            pos = after;
        }
    }

    /// Whether byte `pos` of the text is a word boundary.
    fn word_boundary(&self, pos: usize) -> bool {
        is_word(self.text[..pos].chars().next_back()) != is_word(self.text[pos..].chars().next())
    }

    /// Adds `pc` and everything reachable from it without taking a character, at byte `pos`;
    /// returns whether the accepting instruction was reached.
    fn add(&self, threads: &mut Threads, stack: &mut Vec<u32>, pc: u32, pos: usize) -> bool {
        stack.clear();
        stack.push(pc);
        while let Some(pc) = stack.pop() {
            let index = pc as usize;
            if threads.seen[index] {
                continue;
            }
            threads.seen[index] = true;
            threads.dense.push(pc);
            match self.insts[index] {
                Inst::Match => {
                    if !self.look {
                        return true;
                    }
                }
                Inst::LookEnd => {
                    if self.look {
                        return true;
                    }
                }
                Inst::Class(_) => {}
                Inst::Jump(to) => stack.push(to),
                Inst::Split(a, b) => {
                    stack.push(b);
                    stack.push(a);
                }
                Inst::Start => {
                    if pos == 0 {
                        stack.push(pc + 1);
                    }
                }
                Inst::End => {
                    if pos == self.text.len() {
                        stack.push(pc + 1);
                    }
                }
                Inst::WordBoundary => {
                    if self.word_boundary(pos) {
                        stack.push(pc + 1);
                    }
                }
                Inst::NotWordBoundary => {
                    if !self.word_boundary(pos) {
                        stack.push(pc + 1);
                    }
                }
                Inst::LookDfa { negated, dfa } => {
                    // `pos` is a character boundary: the VM takes whole characters.
                    if dfa.matches(&self.text.as_bytes()[pos..]) != negated {
                        stack.push(pc + 1);
                    }
                }
                Inst::LookScan { negated, behind, dfa } => {
                    if self.scanned(dfa, behind, pos) != negated {
                        stack.push(pc + 1);
                    }
                }
                Inst::Look { negated, next } | Inst::LookBehind { negated, next } => {
                    let sub = Vm {
                        insts: self.insts,
                        text: self.text,
                        look: true,
                        backward: matches!(self.insts[index], Inst::LookBehind { .. }),
                        scans: self.scans,
                    };
                    // A nested anchored search from here, with thread lists of its own.
                    if sub.search(pc + 1, pos, true) != negated {
                        stack.push(next);
                    }
                }
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// The bytes [`Dfa::scan`] read on this thread.
        pub(super) static SCANNED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    const WORD: Class = Class {
        ranges: &[('0', '9'), ('A', 'Z'), ('_', '_'), ('a', 'z')],
        negated: false,
    };
    const A: Class = Class {
        ranges: &[('a', 'a')],
        negated: false,
    };

    /// A large class decides every character as a binary search of all its ranges does (the
    /// code it replaced), whether the character falls in the ranges compared in turn, in the
    /// rest, between two ranges, before the first or after the last.
    #[test]
    fn a_large_class_decides_as_a_search_of_all_its_ranges() {
        const ONE_PAST_THE_SCAN: &[(char, char)] = &[
            ('b', 'b'),
            ('d', 'd'),
            ('f', 'f'),
            ('h', 'h'),
            ('j', 'j'),
            ('l', 'l'),
            ('n', 'n'),
            ('p', 'p'),
            ('r', 'r'),
        ];
        assert_eq!(ONE_PAST_THE_SCAN.len(), SCANNED_FIRST + 1);
        let classes: [&[(char, char)]; 5] = [
            // The fewest ranges that reach the scan: all of them compared in turn, none searched.
            &[('b', 'b'), ('d', 'd'), ('f', 'f'), ('h', 'h'), ('\u{100}', '\u{17F}')],
            // Modelled on `\p{L}`'s start: ASCII ranges first, then single characters and wide
            // ranges.
            &[
                ('A', 'Z'),
                ('a', 'z'),
                ('ª', 'ª'),
                ('µ', 'µ'),
                ('º', 'º'),
                ('À', 'Ö'),
                ('Ø', 'ö'),
                ('ø', 'ˁ'),
                ('ˆ', 'ˑ'),
                ('\u{370}', '\u{374}'),
                ('\u{4E00}', '\u{9FFF}'),
                ('𐀀', '𐀋'),
            ],
            // Many ASCII ranges, past the ones compared in turn.
            &[
                ('!', '!'),
                ('#', '#'),
                ('%', '%'),
                ('\'', '\''),
                (')', ')'),
                ('+', '+'),
                ('-', '-'),
                ('/', '/'),
                ('1', '1'),
                ('3', '3'),
                ('5', '5'),
                ('[', ']'),
                ('~', '\u{10FFFF}'),
            ],
            // Exactly as many ranges as are compared in turn, then one more.
            &ONE_PAST_THE_SCAN[..SCANNED_FIRST],
            ONE_PAST_THE_SCAN,
        ];
        let probes = (0u32..0x3000)
            .chain([0x4E00, 0x9FFF, 0xA000, 0xFFFF, 0x1_0000, 0x1_000B, 0x1_000C, 0x10_FFFF])
            .filter_map(char::from_u32);
        for ranges in classes {
            assert!(ranges.len() > 4, "a large class");
            assert!(ranges.iter().all(|(lo, hi)| lo <= hi), "{ranges:?}");
            assert!(
                ranges.windows(2).all(|w| w[0].1 < w[1].0),
                "sorted, disjoint: {ranges:?}"
            );
            for negated in [false, true] {
                let class = Class { ranges, negated };
                for c in probes.clone() {
                    // Two references: the search the scan sits in front of, and a plain
                    // comparison with every range.
                    let plain = ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi);
                    assert_eq!(in_sorted(ranges, c), plain, "{c:?} in {ranges:?}");
                    assert_eq!(class.contains(c), plain != negated, "{c:?} in {ranges:?}");
                }
            }
        }
        // The check above is not vacuous: each class holds some probes and not others, and
        // some probes of the classes with more than eight ranges are found in the part searched.
        for ranges in classes {
            let inside = probes.clone().filter(|&c| in_many(ranges, c)).count();
            assert!(inside > 0 && inside < probes.clone().count(), "{ranges:?}");
            if let Some(rest) = ranges.get(SCANNED_FIRST..).filter(|rest| !rest.is_empty()) {
                assert!(probes.clone().any(|c| in_sorted(rest, c)), "{ranges:?}");
            }
        }
    }

    /// Tables whose sizes do not agree are refused when built (at compile time in a
    /// `static`); a transition past the table is the dead state.
    #[test]
    fn inconsistent_tables_are_refused_when_built() {
        static PAST: Dfa = Dfa::new(&[0; 256], 1, &[0, 0, 3, 0], 2, &[0, 0], 1);
        assert!(!PAST.is_match("ab"), "state 3 has no row: dead");
        assert!(!PAST.is_match("a"));
        for (table, eoi, start, needle) in [
            (&[0u8, 0, 1, 0][..], &[0u8, 0][..], 2, "sizes"),
            (&[0, 0, 1][..], &[0, 0][..], 1, "sizes"),
        ] {
            let table: &'static [u8] = Box::leak(table.to_vec().into_boxed_slice());
            let eoi: &'static [u8] = Box::leak(eoi.to_vec().into_boxed_slice());
            let message = std::panic::catch_unwind(|| Dfa::new(&[0; 256], 1, table, 1, eoi, start))
                .map(|_| String::new())
                .unwrap_or_else(|e| e.downcast_ref::<&str>().map(|s| (*s).to_owned()).unwrap_or_default());
            assert!(message.contains(needle), "{table:?}: {message:?}");
        }
        let wide: &'static Dfa = Box::leak(Box::new(Dfa::new(&[1; 256], 1, &[0, 0, 0, 0], 1, &[0, 0], 1)));
        assert!(
            !wide.is_match("a"),
            "a class past the row reads the next row or nothing"
        );
    }

    /// A text without the required substring is no match, whatever the DFA would say.
    #[test]
    fn the_required_text_is_looked_for_first() {
        static EVERYTHING: Dfa = Dfa::new(&[0; 256], 1, &[0, 0, 1, 0], 1, &[0, 1], 1);
        let required = Pattern::Automaton {
            source: "x*zz",
            required: "zz",
            lead: None,
            dfa: &EVERYTHING,
        };
        let long = "ab".repeat(PREFILTER_FROM);
        assert!(
            !required.is_match(&long),
            "a long text without `zz`: no match, no DFA run"
        );
        assert!(required.is_match(&format!("{long}zz")));
        // A short text goes to the DFA at once (this one matches everything; a real one
        // agrees with the prefilter).
        assert!(required.is_match("ab"));
    }

    /// The required text's search (`memchr` for a short needle's first byte, then a comparison)
    /// finds what `memchr::memmem` finds, on random texts and needles of a small alphabet
    /// (many partial occurrences), short and long needles.
    #[test]
    fn the_required_text_is_found_as_memmem_finds_it() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n) as usize
        };
        let alphabet = b"aab\xc3";
        for _ in 0..20_000 {
            let haystack: Vec<u8> = (0..next(40)).map(|_| alphabet[next(alphabet.len() as u64)]).collect();
            let needle: Vec<u8> = (0..1 + next(12))
                .map(|_| alphabet[next(alphabet.len() as u64)])
                .collect();
            assert_eq!(
                super::find(&haystack, &needle),
                memchr::memmem::find(&haystack, &needle),
                "{haystack:?} {needle:?}"
            );
        }
        assert_eq!(super::find(b"abc", b""), None, "an empty needle is never looked for");
    }

    /// With a `lead`, the DFA starts reading that many bytes before the first occurrence of the
    /// required text (at a character's start), not at the text's start; without, at the start.
    #[test]
    fn a_lead_starts_the_search_before_the_required_text() {
        // Matches when the first byte it reads is `q`: a probe of where the search starts.
        static CLASSES: [u8; 256] = {
            let mut classes = [0u8; 256];
            classes[b'q' as usize] = 1;
            classes
        };
        static FIRST_Q: Dfa = Dfa::new(&CLASSES, 2, &[0, 0, 0, 0, 0, 0, 2, 0, 2, 0, 2, 0], 2, &[0, 0, 1], 1);
        let pattern = |lead| Pattern::Automaton {
            source: "q",
            required: "q",
            lead,
            dfa: &FIRST_Q,
        };
        let long = "ab".repeat(PREFILTER_FROM);
        let text = format!("{long}q");
        assert!(pattern(Some(0)).is_match(&text), "read from the `q`");
        assert!(!pattern(None).is_match(&text), "read from the start");
        assert!(!pattern(Some(1)).is_match(&text), "read from the `b` before it");
        assert!(
            !pattern(Some(1_000)).is_match(&text),
            "a lead past the start reads from the start"
        );
        // A lead that ends inside a character starts at that character (here `é`, two bytes).
        let accented = format!("{long}éq");
        assert!(!pattern(Some(1)).is_match(&accented));
        assert!(pattern(Some(0)).is_match(&accented));
        assert!(!pattern(Some(0)).is_match(&long), "no `q`: no match, no search");
    }

    /// The sequence reads ASCII bytes directly and decodes other characters: the same verdicts
    /// as reading characters, on ASCII, Latin-1 and astral texts.
    #[test]
    fn sequences_read_ascii_and_other_characters_alike() {
        const S: Class = Class {
            ranges: &[('S', 'S'), ('s', 's')],
            negated: false,
        };
        // Neighbouring classes share no character (what a sequence is).
        const NOT_E: Class = Class {
            ranges: &[('é', 'é')],
            negated: true,
        };
        const E: Class = Class {
            ranges: &[('é', 'é')],
            negated: false,
        };
        let steps: &'static [Step] = &[
            Step {
                class: S,
                min: 1,
                max: Some(1),
            },
            Step {
                class: E,
                min: 0,
                max: Some(2),
            },
            Step {
                class: NOT_E,
                min: 1,
                max: Some(1),
            },
        ];
        let p = Pattern::Sequence { source: "", steps };
        for (text, expected) in [
            ("s😀", true),
            ("Séé😀", true),
            ("sééé", false),
            ("s", false),
            ("x😀", false),
            ("sé", false),
            ("sé😀x", false),
            ("", false),
            ("S\n", true),
        ] {
            assert_eq!(p.is_match(text), expected, "{text:?}");
        }
    }

    /// A hand-made DFA for `a` (unanchored): classes `a` and the rest; the start state loops
    /// on the rest, `a` leads to the match state, which holds.
    #[test]
    fn the_tables_are_searched_byte_by_byte() {
        let mut classes = [1u8; 256];
        classes[usize::from(b'a')] = 0;
        let classes: &'static [u8; 256] = Box::leak(Box::new(classes));
        // States: 0 dead, 1 start, 2 match. Rows of two classes (`a`, rest).
        static TABLE: [u8; 12] = [0, 0, 0, 0, 2, 0, 1, 0, 2, 0, 2, 0];
        let dfa: &'static Dfa = Box::leak(Box::new(Dfa::new(classes, 2, &TABLE, 2, &[0, 0, 1], 1)));
        for (text, expected) in [("a", true), ("bbba", true), ("bbb", false), ("", false)] {
            assert_eq!(dfa.is_match(text), expected, "{text:?}");
        }
        let dead_start: &'static Dfa = Box::leak(Box::new(Dfa::new(classes, 2, &TABLE, 2, &[0, 0, 1], 0)));
        assert!(!dead_start.is_match("a"));
    }

    fn program(insts: &'static [Inst]) -> Pattern {
        Pattern::Program {
            source: "",
            insts,
            anchored: false,
        }
    }

    #[test]
    fn word_boundaries_look_at_both_neighbours_and_the_ends() {
        // \ba\b
        let p = program(&[Inst::WordBoundary, Inst::Class(A), Inst::WordBoundary, Inst::Match]);
        for (text, expected) in [
            ("a", true),
            ("b a-", true),
            ("ab", false),
            ("_a", false),
            ("éaé", true),
            ("", false),
        ] {
            assert_eq!(p.is_match(text), expected, "{text:?}");
        }
        // \B
        let p = program(&[Inst::NotWordBoundary, Inst::Match]);
        for (text, expected) in [("", true), (" ", true), ("a", false), ("ab", true), ("a b", false)] {
            assert_eq!(p.is_match(text), expected, "{text:?}");
        }
    }

    #[test]
    fn a_look_ahead_sees_the_character_before_it() {
        // a(?=\b) and a(?!\B): the boundary after `a` depends on the character before the
        // look-ahead's position.
        for negated in [false, true] {
            let boundary = if negated {
                Inst::NotWordBoundary
            } else {
                Inst::WordBoundary
            };
            let insts: &'static [Inst] = Box::leak(
                vec![
                    Inst::Class(A),
                    Inst::Look { negated, next: 4 },
                    boundary,
                    Inst::LookEnd,
                    Inst::Match,
                ]
                .into_boxed_slice(),
            );
            let p = program(insts);
            assert!(p.is_match("a b"), "{negated}");
            assert!(p.is_match("a"), "{negated}");
            assert!(!p.is_match("ab"), "{negated}");
        }
        // ^(?=\w$): `^` and `$` inside a look-ahead are the text's ends.
        let p = program(&[
            Inst::Start,
            Inst::Look {
                negated: false,
                next: 5,
            },
            Inst::Class(WORD),
            Inst::End,
            Inst::LookEnd,
            Inst::Match,
        ]);
        assert!(p.is_match("x"));
        assert!(!p.is_match("xy"));
    }

    /// A hand-made DFA for the body `x`, as the generator writes [`Inst::LookScan`]'s (every
    /// match reported, unanchored; `x` reversed is `x`, so the one table serves both
    /// directions). A match is seen one byte late, so each state remembers whether the byte it
    /// read is `x` and whether the one before was: 1 neither (the start), 2 this one, 3 the one
    /// before (a match), 4 both (a match).
    fn x_scan() -> &'static Dfa {
        let mut classes = [0u8; 256];
        classes[usize::from(b'x')] = 1;
        let classes: &'static [u8; 256] = Box::leak(Box::new(classes));
        // Rows of two classes (the rest, `x`), `u16` little endian.
        static TABLE: [u8; 20] = [0, 0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 1, 0, 2, 0, 3, 0, 4, 0];
        Box::leak(Box::new(Dfa::new(classes, 2, &TABLE, 3, &[0, 0, 1, 0, 1], 1)))
    }

    /// The scan records where the body's matches start (backwards) or end (forwards), at every
    /// position, the text's ends included.
    #[test]
    fn a_scan_records_every_position() {
        let dfa = x_scan();
        assert_eq!(dfa.scan(b"axx", true), [false, true, true, false]);
        assert_eq!(dfa.scan(b"axx", false), [false, false, true, true]);
        assert_eq!(dfa.scan(b"", true), [false]);
        assert_eq!(dfa.scan(b"x", true), [true, false]);
        assert_eq!(dfa.scan(b"x", false), [false, true]);
    }

    /// `a(?=x)`, `(?<=x)a` and `(?=a(?=x))` with the look-around scanned: the verdicts of
    /// ECMA-262, and each text is scanned once however many positions reach the look-around
    /// (a nested search shares the scan), so a long text costs one pass, not one a position.
    #[test]
    fn look_scans_read_the_text_once() {
        let dfa = x_scan();
        let look = |negated, behind| Inst::LookScan { negated, behind, dfa };
        let ahead: &'static [Inst] =
            Box::leak(vec![Inst::Class(A), look(false, false), Inst::Match].into_boxed_slice());
        let behind: &'static [Inst] =
            Box::leak(vec![look(false, true), Inst::Class(A), Inst::Match].into_boxed_slice());
        let not_behind: &'static [Inst] =
            Box::leak(vec![look(true, true), Inst::Class(A), Inst::Match].into_boxed_slice());
        let nested: &'static [Inst] = Box::leak(
            vec![
                Inst::Look {
                    negated: false,
                    next: 4,
                },
                Inst::Class(A),
                look(false, false),
                Inst::LookEnd,
                Inst::Match,
            ]
            .into_boxed_slice(),
        );
        type Case = (&'static [Inst], &'static [(&'static str, bool)]);
        let cases: [Case; 4] = [
            (
                ahead,
                &[("ax", true), ("a", false), ("xa", false), ("aax", true), ("", false)],
            ),
            (behind, &[("xa", true), ("ax", false), ("a", false), ("bxa", true)]),
            (not_behind, &[("xa", false), ("a", true), ("xaa", true), ("x", false)]),
            (nested, &[("ax", true), ("a", false), ("bax", true), ("xa", false)]),
        ];
        for (insts, texts) in cases {
            for (text, expected) in texts {
                assert_eq!(program(insts).is_match(text), *expected, "{insts:?} on {text:?}");
            }
        }
        // Two instructions with the same tables (the copies of `(?:(?!x)a){2}`, here before a
        // character other than `a`) share a scan; the same tables read as a look-behind are
        // another.
        const NOT_A: Class = Class {
            ranges: &[('a', 'a')],
            negated: true,
        };
        let twice: &'static [Inst] = Box::leak(
            vec![
                look(true, false),
                Inst::Class(A),
                look(true, false),
                Inst::Class(A),
                Inst::Class(NOT_A),
                Inst::Match,
            ]
            .into_boxed_slice(),
        );
        let both: &'static [Inst] =
            Box::leak(vec![look(true, true), Inst::Class(A), look(false, false), Inst::Match].into_boxed_slice());
        assert!(program(twice).is_match("aab") && !program(twice).is_match("axab"));
        assert!(program(twice).is_match("xaab"));
        assert!(program(both).is_match("ax") && !program(both).is_match("xax"));
        // A long text that reaches the look-around at every position and never matches:
        // scanned once (twice for two directions).
        let long = "a".repeat(100_000);
        for (insts, scans) in [(ahead, 1), (behind, 1), (nested, 1), (twice, 1), (both, 2)] {
            SCANNED.with(|scanned| scanned.set(0));
            assert!(!program(insts).is_match(&long), "{insts:?}");
            assert_eq!(SCANNED.with(std::cell::Cell::get), scans * long.len(), "{insts:?}");
        }
    }
}
