//! Maximum matching in a general graph (Edmonds' blossoms), kept up to date while a
//! pairing is built: the check that what is left can still be paired completely.
//!
//! Vertices are removed as they are paired; a removed vertex is never reached again.

use std::collections::VecDeque;

const NONE: usize = usize::MAX;

/// A graph of who may still meet whom, and a matching of its live vertices.
pub(crate) struct Matching {
    n: usize,
    adjacent: Vec<bool>,
    alive: Vec<bool>,
    mate: Vec<usize>,
    // The search's scratch space, kept to spare an allocation per search.
    parent: Vec<usize>,
    base: Vec<usize>,
    used: Vec<bool>,
    blossom: Vec<bool>,
    queue: VecDeque<usize>,
}

impl Matching {
    /// A maximum matching of the graph on `n` vertices with the edges `edge(u, v)` allows.
    pub(crate) fn maximum(n: usize, edge: impl Fn(usize, usize) -> bool) -> Matching {
        let mut adjacent = vec![false; n * n];
        for u in 0..n {
            for v in 0..n {
                adjacent[u * n + v] = u != v && edge(u, v);
            }
        }
        let mut m = Matching {
            n,
            adjacent,
            alive: vec![true; n],
            mate: vec![NONE; n],
            parent: vec![NONE; n],
            base: (0..n).collect(),
            used: vec![false; n],
            blossom: vec![false; n],
            queue: VecDeque::new(),
        };
        // A greedy start leaves few vertices for the searches.
        for u in 0..n {
            if m.mate[u] == NONE {
                if let Some(v) = (u + 1..n).find(|&v| m.mate[v] == NONE && m.edge(u, v)) {
                    m.mate[u] = v;
                    m.mate[v] = u;
                }
            }
        }
        for u in 0..n {
            if m.mate[u] == NONE {
                m.augment(u);
            }
        }
        m
    }

    fn edge(&self, u: usize, v: usize) -> bool {
        self.adjacent[u * self.n + v]
    }

    #[cfg(test)]
    pub(crate) fn mate(&self, u: usize) -> Option<usize> {
        (self.mate[u] != NONE).then_some(self.mate[u])
    }

    /// Live vertices left unmatched.
    pub(crate) fn exposed(&self) -> usize {
        (0..self.n)
            .filter(|&u| self.alive[u] && self.mate[u] == NONE)
            .count()
    }

    /// Removes `u` if the others still have a matching leaving none of them exposed that
    /// the current one did not; otherwise changes nothing.
    pub(crate) fn remove_one(&mut self, u: usize) -> bool {
        let partner = self.mate[u];
        self.alive[u] = false;
        if partner == NONE {
            return true;
        }
        self.mate[u] = NONE;
        self.mate[partner] = NONE;
        if self.augment(partner) {
            return true;
        }
        self.alive[u] = true;
        self.mate[u] = partner;
        self.mate[partner] = u;
        false
    }

    /// Pairs `u` with `v` and removes both if what is left still has a matching as large
    /// (less one pair) as before; otherwise changes nothing.
    pub(crate) fn remove_pair(&mut self, u: usize, v: usize) -> bool {
        if !self.edge(u, v) || !self.alive[u] || !self.alive[v] {
            return false;
        }
        let (mu, mv) = (self.mate[u], self.mate[v]);
        self.alive[u] = false;
        self.alive[v] = false;
        if mu == v {
            self.mate[u] = NONE;
            self.mate[v] = NONE;
            return true;
        }
        let saved = self.mate.clone();
        self.mate[u] = NONE;
        self.mate[v] = NONE;
        for m in [mu, mv] {
            if m != NONE {
                self.mate[m] = NONE;
            }
        }
        // The partners left alone must find each other (or anyone exposed) again.
        let ok = match (mu, mv) {
            (NONE, NONE) => true,
            (m, NONE) | (NONE, m) => {
                self.augment(m);
                true
            }
            (a, b) => self.augment(a) || self.augment(b),
        };
        if ok {
            return true;
        }
        self.mate = saved;
        self.alive[u] = true;
        self.alive[v] = true;
        false
    }

    /// Looks for an augmenting path from the exposed `root` and flips it.
    fn augment(&mut self, root: usize) -> bool {
        let Some(mut v) = self.find_path(root) else {
            return false;
        };
        while v != NONE {
            let pv = self.parent[v];
            let next = self.mate[pv];
            self.mate[v] = pv;
            self.mate[pv] = v;
            v = next;
        }
        true
    }

    fn find_path(&mut self, root: usize) -> Option<usize> {
        self.used.fill(false);
        self.parent.fill(NONE);
        for (i, b) in self.base.iter_mut().enumerate() {
            *b = i;
        }
        self.used[root] = true;
        self.queue.clear();
        self.queue.push_back(root);
        while let Some(v) = self.queue.pop_front() {
            for to in 0..self.n {
                if !self.alive[to] || !self.edge(v, to) {
                    continue;
                }
                if self.base[v] == self.base[to] || self.mate[v] == to {
                    continue;
                }
                if to == root || (self.mate[to] != NONE && self.parent[self.mate[to]] != NONE) {
                    let current = self.common_base(v, to);
                    self.blossom.fill(false);
                    self.mark_path(v, current, to);
                    self.mark_path(to, current, v);
                    for i in 0..self.n {
                        if self.blossom[self.base[i]] {
                            self.base[i] = current;
                            if !self.used[i] {
                                self.used[i] = true;
                                self.queue.push_back(i);
                            }
                        }
                    }
                } else if self.parent[to] == NONE {
                    self.parent[to] = v;
                    if self.mate[to] == NONE {
                        return Some(to);
                    }
                    self.used[self.mate[to]] = true;
                    self.queue.push_back(self.mate[to]);
                }
            }
        }
        None
    }

    fn common_base(&self, mut a: usize, mut b: usize) -> usize {
        let mut seen = vec![false; self.n];
        loop {
            a = self.base[a];
            seen[a] = true;
            if self.mate[a] == NONE {
                break;
            }
            a = self.parent[self.mate[a]];
        }
        loop {
            b = self.base[b];
            if seen[b] {
                return b;
            }
            b = self.parent[self.mate[b]];
        }
    }

    fn mark_path(&mut self, mut v: usize, b: usize, mut child: usize) {
        while self.base[v] != b {
            self.blossom[self.base[v]] = true;
            self.blossom[self.base[self.mate[v]]] = true;
            self.parent[v] = child;
            child = self.mate[v];
            v = self.parent[self.mate[v]];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(m: &Matching) -> usize {
        (0..m.n).filter(|&u| m.mate(u).is_some()).count() / 2
    }

    #[test]
    fn an_odd_cycle_needs_a_blossom_to_match_its_tail() {
        // A 5-cycle 0..4 with a tail 5 hanging from 2: a perfect matching of 6 exists.
        let edges = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (2, 5)];
        let m = Matching::maximum(6, |u, v| edges.contains(&(u, v)) || edges.contains(&(v, u)));
        assert_eq!(size(&m), 3);
        assert_eq!(m.mate(5), Some(2));
    }

    #[test]
    fn two_triangles_leave_two_vertices_exposed() {
        let edges = [(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3)];
        let m = Matching::maximum(6, |u, v| edges.contains(&(u, v)) || edges.contains(&(v, u)));
        assert_eq!(m.exposed(), 2);
    }

    #[test]
    fn a_pair_that_would_strand_another_vertex_is_refused() {
        // A path 0-1-2-3: pairing 1 with 2 leaves 0 and 3 without partners.
        let edges = [(0, 1), (1, 2), (2, 3)];
        let mut m = Matching::maximum(4, |u, v| edges.contains(&(u, v)) || edges.contains(&(v, u)));
        assert!(!m.remove_pair(1, 2));
        assert!(m.remove_pair(0, 1));
        assert!(m.remove_pair(2, 3));
    }

    #[test]
    fn a_vertex_whose_removal_strands_another_cannot_be_left_out() {
        // On the path 0-1-2, only an end may be left out.
        let edges = [(0, 1), (1, 2)];
        let mut m = Matching::maximum(3, |u, v| edges.contains(&(u, v)) || edges.contains(&(v, u)));
        assert!(!m.remove_one(1));
        assert!(m.remove_one(2));
        assert_eq!(m.exposed(), 0);
    }
}
