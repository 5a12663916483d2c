//! An ordered set that finds its n-th element in O(log n): the memory store's lobby, read
//! by rank like Redis's sorted set. Apart from the store because it is a data structure of
//! its own, with its own property test.

/// Elements in one chunk of a [`Ranked`] before it splits in two.
const CHUNK: usize = 256;

/// An ordered set that finds its n-th element in O(log n): sorted chunks of up to
/// 2 x [`CHUNK`] elements, and a Fenwick tree of the chunks' lengths. A `BTreeSet` walks
/// every element before the n-th (137 ms, under the store's lock, for page 1300 of the
/// lobby at 122k games).
#[derive(Default)]
pub(super) struct Ranked<T> {
    chunks: Vec<Vec<T>>,
    /// Fenwick tree over `chunks[i].len()`, 1-based.
    tree: Vec<usize>,
}

impl<T: Ord> Ranked<T> {
    /// The chunk that holds `value`, or would: the first whose last element is not less.
    fn chunk_of(&self, value: &T) -> usize {
        let i = self
            .chunks
            .partition_point(|c| c.last().is_some_and(|last| last < value));
        i.min(self.chunks.len().saturating_sub(1))
    }

    pub(super) fn insert(&mut self, value: T) {
        if self.chunks.is_empty() {
            self.chunks.push(Vec::with_capacity(CHUNK));
            self.rebuild();
        }
        let i = self.chunk_of(&value);
        let chunk = &mut self.chunks[i];
        let Err(at) = chunk.binary_search(&value) else {
            return;
        };
        chunk.insert(at, value);
        if chunk.len() > 2 * CHUNK {
            let half = chunk.split_off(CHUNK);
            self.chunks.insert(i + 1, half);
            self.rebuild();
        } else {
            self.add(i, 1);
        }
    }

    pub(super) fn remove(&mut self, value: &T) {
        if self.chunks.is_empty() {
            return;
        }
        let i = self.chunk_of(value);
        let chunk = &mut self.chunks[i];
        let Ok(at) = chunk.binary_search(value) else {
            return;
        };
        chunk.remove(at);
        if chunk.is_empty() {
            self.chunks.remove(i);
            self.rebuild();
        } else {
            self.add(i, usize::MAX); // - 1, wrapping
        }
    }

    /// The elements from position `offset` on, in order.
    pub(super) fn iter_from(&self, offset: usize) -> impl Iterator<Item = &T> {
        // The Fenwick descent: the last chunk whose elements all come before `offset`.
        let (mut chunk, mut before) = (0, 0);
        let mut step = self.tree.len().next_power_of_two();
        while step > 0 {
            let next = chunk + step;
            if next < self.tree.len() && before + self.tree[next] <= offset {
                chunk = next;
                before += self.tree[next];
            }
            step /= 2;
        }
        // `chunk` chunks (1-based: indices 0..chunk) hold `before` elements.
        self.chunks
            .get(chunk..)
            .unwrap_or_default()
            .iter()
            .flatten()
            .skip(offset - before)
    }

    fn add(&mut self, chunk: usize, delta: usize) {
        let mut i = chunk + 1;
        while i < self.tree.len() {
            self.tree[i] = self.tree[i].wrapping_add(delta);
            i += i & i.wrapping_neg();
        }
    }

    /// Rebuilds the tree after chunks came or went (once per [`CHUNK`] changes at most).
    fn rebuild(&mut self) {
        self.tree = vec![0; self.chunks.len() + 1];
        for (i, chunk) in self.chunks.iter().enumerate() {
            let at = i + 1;
            self.tree[at] += chunk.len();
            let parent = at + (at & at.wrapping_neg());
            if parent < self.tree.len() {
                self.tree[parent] += self.tree[at];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;

    use super::Ranked;

    proptest! {
        /// Whatever is inserted and removed, the ranked set lists from any offset what
        /// a `BTreeSet` does.
        #[test]
        fn ranked_lists_like_a_btreeset(
            ops in prop::collection::vec((any::<bool>(), 0u16..2000), 0..3000),
            offsets in prop::collection::vec(0usize..2100, 1..20),
        ) {
            let (mut ranked, mut reference) = (Ranked::default(), BTreeSet::new());
            for (insert, value) in ops {
                if insert {
                    ranked.insert(value);
                    reference.insert(value);
                } else {
                    ranked.remove(&value);
                    reference.remove(&value);
                }
            }
            for offset in offsets {
                let got: Vec<u16> = ranked.iter_from(offset).take(7).copied().collect();
                let want: Vec<u16> = reference.iter().skip(offset).take(7).copied().collect();
                prop_assert_eq!(got, want);
            }
        }
    }
}
