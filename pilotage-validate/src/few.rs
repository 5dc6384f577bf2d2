//! [`Few`]: a list of a few `Copy` values held inline, spilling to a `Vec` beyond `N`. The
//! evaluation context's dynamic scope ([`Few`]) and the `unevaluated*` annotations
//! ([`FewSet`], in [`crate::runtime::Ev`]) hold a handful of entries per evaluation; as `Vec`s they cost an allocation and a free each
//! (the first push of every instance that enters a dynamic scope or evaluates a member), which
//! was most of the time of the official suite's `unevaluatedProperties`, `$dynamicRef` and
//! `$recursiveRef` groups.
//!
//! [`FewSet`] is a list like [`Few`] without duplicates that, past [`INDEXED_FROM`] values,
//! also keeps a hash index: the annotations record a value per member or item of the instance, so a
//! search of the list per member made an object of `n` members cost `n²/2` comparisons.
//!
//! Hand-written on purpose, not `smallvec` or `arrayvec`: this crate depends on `serde_json`
//! alone (see the crate docs) and forbids `unsafe`; the operations below, on `Copy`
//! values with the inline slots always initialised, need neither. It is tested against `Vec`,
//! the type it replaces.

use std::collections::HashSet;
use std::hash::Hash;

/// Up to `N` values inline, then the rest on the heap, in the order they were pushed.
///
/// Only the inline half is inlined where it is used: reaching the heap (a push past `N`, a pop
/// or a read of a value past `N`) is a call, and no operation has a bounds check. Its users
/// (`Cx::enter`, `leave` and `outermost` for the dynamic scope; the NFC normalization) are then
/// small; with the heap's half inline too (`Vec::push`, its growth, the bounds checks' panics),
/// the dynamic scope's push and pop were most of the code of the official suite's `$dynamicRef`
/// and `unevaluatedProperties` groups, into whose every check they were inlined.
#[derive(Debug, Clone)]
pub(crate) struct Few<T: Copy, const N: usize> {
    /// How many values the list holds: the first `N` of them in `inline`, the rest in `more`.
    len: usize,
    /// The first `N` values; slots from `len` on hold the filler.
    inline: [T; N],
    /// The values after the first `N` (`len - N` of them, once `len > N`), behind one pointer:
    /// a new list is then three stores (the evaluation context makes one per instance, whose
    /// three words of an empty `Vec` were two more stores on every verdict). A `Vec` in a box on
    /// purpose: one word where the list fits inline (nearly always), for a second allocation the
    /// first time it does not.
    more: Heap<Vec<T>>,
}

impl<T: Copy + PartialEq, const N: usize> Few<T, N> {
    /// An empty list whose unused slots hold `fill` (never read as a value).
    #[inline]
    pub(crate) const fn new(fill: T) -> Self {
        Self {
            len: 0,
            inline: [fill; N],
            more: Heap(None),
        }
    }

    /// Whether anything is on the heap (the list once held more than `N` values).
    #[inline]
    pub(crate) fn spilled(&self) -> bool {
        self.more.0.is_some()
    }

    /// The values after the first `N`.
    #[inline]
    fn more(&self) -> &[T] {
        self.more.0.as_deref().map_or(&[], Vec::as_slice)
    }

    /// Appends `value`.
    #[inline]
    pub(crate) fn push(&mut self, value: T) {
        match self.inline.get_mut(self.len) {
            Some(slot) => *slot = value,
            None => self.push_more(value),
        }
        self.len += 1;
    }

    /// [`Self::push`] past the inline slots.
    #[inline(never)]
    fn push_more(&mut self, value: T) {
        self.more.0.get_or_insert_with(Box::default).push(value);
    }

    /// Removes and returns the last value.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<T> {
        let last = self.len.checked_sub(1)?;
        self.len = last;
        match self.inline.get(last) {
            Some(value) => Some(*value),
            None => self.pop_more(),
        }
    }

    /// [`Self::pop`] past the inline slots.
    #[inline(never)]
    fn pop_more(&mut self) -> Option<T> {
        self.more.0.as_mut()?.pop()
    }

    /// The last value.
    #[inline]
    pub(crate) fn last(&self) -> Option<T> {
        let last = self.len.checked_sub(1)?;
        match self.inline.get(last) {
            Some(value) => Some(*value),
            None => self.last_more(),
        }
    }

    /// [`Self::last`] past the inline slots.
    #[inline(never)]
    fn last_more(&self) -> Option<T> {
        self.more().last().copied()
    }

    /// The values, first pushed first.
    #[inline]
    pub(crate) fn iter(&self) -> impl Iterator<Item = T> + '_ {
        self.inline[..self.len.min(N)].iter().chain(self.more()).copied()
    }
}

/// From how many values a [`FewSet`] keeps a hash index beside its list.
pub(crate) const INDEXED_FROM: usize = 16;

/// A set of `Copy` values in the order they were first inserted: up to `N` inline, the rest on
/// the heap, and past [`INDEXED_FROM`] values a hash index of them all (std's `HashSet`, keyed
/// at random, so that no input can be built to collide), so that membership costs O(1)
/// however many values it holds. Below that, a search of at most 16 values is cheaper than a
/// hash. Everything on the heap is behind one pointer, so an empty set is as cheap to make,
/// move and drop as a [`Few`].
#[derive(Debug, Clone)]
pub(crate) struct FewSet<T: Copy + Eq + Hash, const N: usize> {
    /// How many of `inline` are in use (at most `N`; `N` whenever `spill` holds values).
    len: usize,
    /// The first `N` values; slots from `len` on hold the filler.
    inline: [T; N],
    /// The values after the first `N`, and the index.
    spill: Heap<Spill<T>>,
}

/// The heap part of a [`Few`] (its values past `N`) or of a [`FewSet`] (its [`Spill`]), if it has
/// one: its drop is a test where it is dropped and a call when there is something to free. As a
/// plain `Option<Box<Spill>>`, the frees of the box, its list and its index were copied into
/// every generated check that drops an `Ev` or calls its `all_props` (about 300 bytes each time).
#[derive(Debug, Clone)]
struct Heap<S>(Option<Box<S>>);

impl<S> Drop for Heap<S> {
    #[inline]
    fn drop(&mut self) {
        if let Some(heap) = self.0.take() {
            free(heap);
        }
    }
}

/// Frees a [`Heap`]'s box, out of line.
#[inline(never)]
fn free<S>(heap: Box<S>) {
    drop(heap);
}

/// What a [`FewSet`] holds on the heap.
#[derive(Debug, Clone)]
struct Spill<T> {
    /// The values after the first `N`.
    more: Vec<T>,
    /// Every value of the set, once it held more than [`INDEXED_FROM`].
    index: Option<HashSet<T>>,
}

impl<T: Copy + Eq + Hash, const N: usize> FewSet<T, N> {
    /// An empty set whose unused inline slots hold `fill` (never read as a value).
    #[inline]
    pub(crate) const fn new(fill: T) -> Self {
        Self {
            len: 0,
            inline: [fill; N],
            spill: Heap(None),
        }
    }

    /// The values held inline. `len` is at most `N`; `min` says so to the compiler, so the
    /// slice has no bounds check (and no panic's code) where this is inlined.
    #[inline(always)]
    fn inline_values(&self) -> &[T] {
        &self.inline[..self.len.min(N)]
    }

    /// Whether the set is empty.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `value` is in the set. The inline search is inlined where it is called; the
    /// heap's is a call.
    #[inline(always)]
    pub(crate) fn contains(&self, value: &T) -> bool {
        match &self.spill.0 {
            None => self.inline_values().contains(value),
            Some(spill) => self.contains_spilled(spill, value),
        }
    }

    /// [`Self::contains`] once values are on the heap.
    #[inline(never)]
    fn contains_spilled(&self, spill: &Spill<T>, value: &T) -> bool {
        match &spill.index {
            Some(index) => index.contains(value),
            None => self.inline_values().contains(value) || spill.more.contains(value),
        }
    }

    /// Adds `value` unless it is in the set already.
    #[inline]
    pub(crate) fn insert(&mut self, value: T) {
        if !self.contains(&value) {
            self.push_new(value);
        }
    }

    /// Adds `value`, which the caller knows is not in the set (a value of another set, copied
    /// into an empty one): no search. An inline slot is filled where it is called; the heap is
    /// a call.
    #[inline(always)]
    pub(crate) fn push_new(&mut self, value: T) {
        if self.len < N {
            self.inline[self.len] = value;
            self.len += 1;
        } else {
            self.push_spilled(value);
        }
    }

    /// [`Self::push_new`] once the inline slots are full.
    #[inline(never)]
    fn push_spilled(&mut self, value: T) {
        let spill = self.spill.0.get_or_insert_with(|| {
            Box::new(Spill {
                more: Vec::new(),
                index: None,
            })
        });
        spill.more.push(value);
        if let Some(index) = &mut spill.index {
            index.insert(value);
        } else if N + spill.more.len() > INDEXED_FROM {
            spill.index = Some(self.inline.iter().chain(&spill.more).copied().collect());
        }
    }

    /// Empties the set.
    #[inline]
    pub(crate) fn clear(&mut self) {
        self.len = 0;
        self.spill = Heap(None);
    }

    /// Calls `f` with each value, first inserted first.
    #[inline]
    pub(crate) fn each(&self, mut f: impl FnMut(T)) {
        for &value in self.inline_values() {
            f(value);
        }
        if let Some(spill) = &self.spill.0 {
            for &value in &spill.more {
                f(value);
            }
        }
    }

    /// Whether the hash index is kept (for the tests).
    #[cfg(test)]
    pub(crate) fn indexed(&self) -> bool {
        self.spill.0.as_ref().is_some_and(|spill| spill.index.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::{Few, FewSet, INDEXED_FROM};

    /// The next value of a 32-bit xorshift sequence.
    fn xorshift(state: &mut u32) -> u32 {
        *state ^= *state << 13;
        *state ^= *state >> 17;
        *state ^= *state << 5;
        *state
    }

    /// Every operation, in a long pseudo-random sequence, against `Vec` (the type `Few`
    /// replaces): the same answers and the same contents after every step, across the
    /// inline / heap boundary in both directions.
    #[test]
    fn behaves_as_a_vec() {
        let mut few: Few<u32, 4> = Few::new(u32::MAX);
        let mut vec: Vec<u32> = Vec::new();
        let mut seed = 0x2545_f491_u32;
        let mut spilled_once = false;
        for _ in 0..20_000 {
            let state = xorshift(&mut seed);
            let value = state % 11;
            match state % 7 {
                0..=2 => {
                    few.push(value);
                    vec.push(value);
                }
                3 | 4 => assert_eq!(few.pop(), vec.pop()),
                5 if state.is_multiple_of(13) => {
                    // Emptied as the dynamic scope is, value by value.
                    while few.pop().is_some() {}
                    vec.clear();
                }
                _ => {}
            }
            assert_eq!(few.last(), vec.last().copied());
            assert_eq!(few.iter().collect::<Vec<_>>(), vec);
            spilled_once |= few.spilled();
        }
        assert!(spilled_once, "the sequence never went past the inline slots");
    }

    /// Nothing is allocated while the values fit inline; the filler is never a value.
    #[test]
    fn stays_inline_up_to_n() {
        let mut few: Few<&str, 3> = Few::new("");
        assert_eq!(few.iter().count(), 0, "the filler is not a value");
        for name in ["a", "b", "c"] {
            few.push(name);
        }
        assert!(!few.spilled());
        assert_eq!(few.iter().collect::<Vec<_>>(), ["a", "b", "c"]);
        few.push("d");
        assert!(few.spilled());
        assert_eq!(few.iter().collect::<Vec<_>>(), ["a", "b", "c", "d"]);
        assert_eq!(few.pop(), Some("d"));
        assert_eq!(few.pop(), Some("c"));
        assert_eq!(few.iter().collect::<Vec<_>>(), ["a", "b"]);
    }

    /// Insertions, searches and clears, in a long pseudo-random sequence, against a `Vec` kept
    /// without duplicates (what the set's list must be): the same answers and contents
    /// after every step, across the index's threshold in both directions; the index is kept
    /// exactly when the set holds more than `INDEXED_FROM` values.
    #[test]
    fn behaves_as_a_set() {
        let mut set: FewSet<u32, 4> = FewSet::new(u32::MAX);
        let mut vec: Vec<u32> = Vec::new();
        let mut seed = 0x9e37_79b9_u32;
        let mut indexed_once = false;
        for step in 0..50_000 {
            let state = xorshift(&mut seed);
            let value = state % 64;
            match state % 11 {
                0..=5 => {
                    set.insert(value);
                    if !vec.contains(&value) {
                        vec.push(value);
                    }
                }
                6 if vec.len() < 40 => {
                    // A value no list holds (the values are below 64), pushed without a search.
                    let fresh = 64 + step;
                    set.push_new(fresh);
                    vec.push(fresh);
                }
                7 if state.is_multiple_of(17) => {
                    set.clear();
                    vec.clear();
                }
                _ => {}
            }
            assert_eq!(
                set.contains(&value),
                vec.contains(&value),
                "contains({value}) of {vec:?}"
            );
            assert_eq!(set.is_empty(), vec.is_empty());
            let mut each = Vec::new();
            set.each(|value| each.push(value));
            assert_eq!(each, vec);
            assert_eq!(set.indexed(), vec.len() > INDEXED_FROM, "{} values", vec.len());
            indexed_once |= set.indexed();
        }
        assert!(indexed_once, "the sequence never passed the index's threshold");
    }
}
