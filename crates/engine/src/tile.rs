//! Tiles and sets of tiles.
//!
//! A tile is stored as its index in the canonical order of all tiles up to double-15
//! (`0-0, 0-1, 1-1, 0-2, 1-2, 2-2, ...`), so the tiles of double-6 are exactly the first 28
//! indices, those of double-9 the first 55, and so on: one numbering serves every set.
//! Sets of tiles (hands) are 192-bit bitsets, so "which of my tiles fit a 5" is a single
//! AND with a precomputed mask: this is what makes random playouts cheap.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The largest pip supported (double-15).
pub const MAX_PIP: u8 = 15;
/// Tiles in a double-15 set.
pub const MAX_TILES: usize = 136;

/// One domino, `a-b` with `a <= b`. `Copy`, one byte. Stored as its index; reading an
/// index that names no tile fails (stored bytes are not trusted to be well formed).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "u8", try_from = "u8")]
pub struct Tile(u8);

impl From<Tile> for u8 {
    fn from(tile: Tile) -> u8 {
        tile.0
    }
}

impl TryFrom<u8> for Tile {
    type Error = String;

    fn try_from(index: u8) -> Result<Tile, String> {
        if (index as usize) < MAX_TILES {
            Ok(Tile(index))
        } else {
            Err(format!("no tile has index {index}"))
        }
    }
}

const fn build_halves() -> [(u8, u8); MAX_TILES] {
    let mut out = [(0u8, 0u8); MAX_TILES];
    let mut i = 0;
    let mut hi = 0u8;
    while hi <= MAX_PIP {
        let mut lo = 0u8;
        while lo <= hi {
            out[i] = (lo, hi);
            i += 1;
            lo += 1;
        }
        hi += 1;
    }
    out
}

static HALVES: [(u8, u8); MAX_TILES] = build_halves();

impl Tile {
    /// The tile `a-b` (either order).
    pub const fn new(a: u8, b: u8) -> Tile {
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        assert!(hi <= MAX_PIP);
        Tile(hi * (hi + 1) / 2 + lo)
    }

    pub const fn from_index(index: u8) -> Tile {
        assert!((index as usize) < MAX_TILES);
        Tile(index)
    }

    pub const fn index(self) -> u8 {
        self.0
    }

    /// The smaller half.
    pub fn lo(self) -> u8 {
        HALVES[self.0 as usize].0
    }

    /// The larger half.
    pub fn hi(self) -> u8 {
        HALVES[self.0 as usize].1
    }

    pub fn is_double(self) -> bool {
        let (lo, hi) = HALVES[self.0 as usize];
        lo == hi
    }

    pub fn has(self, pip: u8) -> bool {
        let (lo, hi) = HALVES[self.0 as usize];
        lo == pip || hi == pip
    }

    /// The half opposite `pip` (for a double, `pip` itself). `pip` must be on the tile.
    pub fn other(self, pip: u8) -> u8 {
        let (lo, hi) = HALVES[self.0 as usize];
        if lo == pip { hi } else { lo }
    }

    /// Pips on the tile: the "weight" that decides "heavier".
    pub fn weight(self) -> u8 {
        let (lo, hi) = HALVES[self.0 as usize];
        lo + hi
    }

    /// A key that orders tiles for "heaviest tile" decisions (docs/rules.md: weight, then a
    /// double beats a single, then the larger higher half). It is a total order, so two
    /// different tiles are never equally heavy.
    pub fn heaviness(self) -> (u8, bool, u8) {
        (self.weight(), self.is_double(), self.hi())
    }

    /// Every tile of the double-`max_pip` set, in index order.
    pub fn all(max_pip: u8) -> impl Iterator<Item = Tile> {
        (0..set_size(max_pip) as u8).map(Tile)
    }
}

/// Tiles in a double-`max_pip` set: (N+1)(N+2)/2.
pub const fn set_size(max_pip: u8) -> usize {
    (max_pip as usize + 1) * (max_pip as usize + 2) / 2
}

/// Each pip's text: a tile's is written from these, not through `write!`'s formatting,
/// since every view writes the text of each tile it shows.
const PIP_TEXT: [&str; MAX_PIP as usize + 1] = [
    "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15",
];

impl fmt::Display for Tile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(PIP_TEXT[self.lo() as usize])?;
        f.write_str("-")?;
        f.write_str(PIP_TEXT[self.hi() as usize])
    }
}

impl fmt::Debug for Tile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Why tile text was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseTileError;

impl fmt::Display for ParseTileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a tile is written \"a-b\" with pips from 0 to {MAX_PIP}")
    }
}

impl std::error::Error for ParseTileError {}

impl FromStr for Tile {
    type Err = ParseTileError;

    /// Accepts `a-b` in either order (`"3-5"` and `"5-3"` are the same tile).
    fn from_str(s: &str) -> Result<Tile, ParseTileError> {
        let (a, b) = s.split_once('-').ok_or(ParseTileError)?;
        let pip = |t: &str| -> Result<u8, ParseTileError> {
            if t.is_empty() || t.len() > 2 || !t.bytes().all(|c| c.is_ascii_digit()) {
                return Err(ParseTileError);
            }
            let v: u8 = t.parse().map_err(|_| ParseTileError)?;
            if v > MAX_PIP {
                Err(ParseTileError)
            } else {
                Ok(v)
            }
        };
        Ok(Tile::new(pip(a)?, pip(b)?))
    }
}

/// A set of tiles as a bitset over tile indices. `Copy`, 24 bytes. Reading one with a bit
/// past the last tile fails, as for [`Tile`].
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "[u64; 3]", try_from = "[u64; 3]")]
pub struct TileSet([u64; 3]);

impl From<TileSet> for [u64; 3] {
    fn from(set: TileSet) -> [u64; 3] {
        set.0
    }
}

impl TryFrom<[u64; 3]> for TileSet {
    type Error = &'static str;

    fn try_from(words: [u64; 3]) -> Result<TileSet, &'static str> {
        // Tiles 128..136 live in the third word's low bits.
        if words[2] >> (MAX_TILES - 128) != 0 {
            Err("a tile set holds an index that names no tile")
        } else {
            Ok(TileSet(words))
        }
    }
}

const fn build_pip_masks() -> [TileSet; MAX_PIP as usize + 1] {
    let mut masks = [TileSet([0; 3]); MAX_PIP as usize + 1];
    let halves = build_halves();
    let mut i = 0;
    while i < MAX_TILES {
        let (lo, hi) = halves[i];
        masks[lo as usize].0[i / 64] |= 1 << (i % 64);
        masks[hi as usize].0[i / 64] |= 1 << (i % 64);
        i += 1;
    }
    masks
}

static PIP_MASKS: [TileSet; MAX_PIP as usize + 1] = build_pip_masks();

const fn build_doubles() -> TileSet {
    let mut set = TileSet([0; 3]);
    let mut d = 0usize;
    while d <= MAX_PIP as usize {
        let i = d * (d + 1) / 2 + d;
        set.0[i / 64] |= 1 << (i % 64);
        d += 1;
    }
    set
}

static DOUBLES: TileSet = build_doubles();

impl TileSet {
    pub const EMPTY: TileSet = TileSet([0; 3]);

    /// Every tile of the double-`max_pip` set.
    pub fn full(max_pip: u8) -> TileSet {
        Tile::all(max_pip).collect()
    }

    /// Every tile (of any set) that carries `pip`.
    pub fn with_pip(pip: u8) -> TileSet {
        PIP_MASKS[pip as usize]
    }

    pub fn contains(&self, tile: Tile) -> bool {
        let i = tile.0 as usize;
        self.0[i / 64] & (1 << (i % 64)) != 0
    }

    pub fn insert(&mut self, tile: Tile) {
        let i = tile.0 as usize;
        self.0[i / 64] |= 1 << (i % 64);
    }

    pub fn remove(&mut self, tile: Tile) {
        let i = tile.0 as usize;
        self.0[i / 64] &= !(1 << (i % 64));
    }

    pub fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.0 == [0; 3]
    }

    pub fn intersect(self, other: TileSet) -> TileSet {
        TileSet([
            self.0[0] & other.0[0],
            self.0[1] & other.0[1],
            self.0[2] & other.0[2],
        ])
    }

    pub fn union(self, other: TileSet) -> TileSet {
        TileSet([
            self.0[0] | other.0[0],
            self.0[1] | other.0[1],
            self.0[2] | other.0[2],
        ])
    }

    pub fn without(self, other: TileSet) -> TileSet {
        TileSet([
            self.0[0] & !other.0[0],
            self.0[1] & !other.0[1],
            self.0[2] & !other.0[2],
        ])
    }

    /// Tiles of this set that carry any pip of `pips` (bit `p` set = pip `p`).
    pub fn with_any_pip(self, pips: u16) -> TileSet {
        self.intersect(TileSet::carrying_any(pips))
    }

    /// Every tile (of any set) that carries some pip of `pips`.
    pub fn carrying_any(pips: u16) -> TileSet {
        let mut mask = TileSet::EMPTY;
        let mut rest = pips;
        while rest != 0 {
            mask = mask.union(PIP_MASKS[rest.trailing_zeros() as usize]);
            rest &= rest - 1;
        }
        mask
    }

    /// Tiles in index order.
    pub fn iter(&self) -> TileSetIter {
        TileSetIter {
            words: self.0,
            word: 0,
        }
    }

    /// The heaviest tile (docs/rules.md order), if any.
    pub fn heaviest(&self) -> Option<Tile> {
        self.iter().max_by_key(|t| t.heaviness())
    }

    /// The highest double, if any: the highest index among the doubles, since a higher
    /// double always has a higher index.
    pub fn highest_double(&self) -> Option<Tile> {
        self.intersect(DOUBLES).last()
    }

    /// The tile with the highest index.
    pub fn last(&self) -> Option<Tile> {
        (0..3)
            .rev()
            .find(|&w| self.0[w] != 0)
            .map(|w| Tile((w * 64 + 63 - self.0[w].leading_zeros() as usize) as u8))
    }
}

impl FromIterator<Tile> for TileSet {
    fn from_iter<I: IntoIterator<Item = Tile>>(iter: I) -> TileSet {
        let mut set = TileSet::EMPTY;
        for t in iter {
            set.insert(t);
        }
        set
    }
}

impl fmt::Debug for TileSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

pub struct TileSetIter {
    words: [u64; 3],
    word: usize,
}

impl Iterator for TileSetIter {
    type Item = Tile;

    fn next(&mut self) -> Option<Tile> {
        while self.word < 3 {
            let w = self.words[self.word];
            if w != 0 {
                let bit = w.trailing_zeros() as usize;
                self.words[self.word] = w & (w - 1);
                return Some(Tile((self.word * 64 + bit) as u8));
            }
            self.word += 1;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_follow_the_canonical_order_so_each_set_is_a_prefix() {
        assert_eq!(Tile::new(0, 0).index(), 0);
        assert_eq!(Tile::new(6, 6).index(), 27);
        assert_eq!(Tile::new(9, 9).index(), 54);
        assert_eq!(Tile::new(15, 15).index(), 135);
        assert_eq!(Tile::all(6).count(), 28);
        assert_eq!(Tile::all(9).count(), 55);
        assert_eq!(Tile::all(12).count(), 91);
        assert_eq!(Tile::all(15).count(), 136);
    }

    #[test]
    fn tiles_parse_in_either_order_and_print_canonically() {
        assert_eq!("5-3".parse::<Tile>().unwrap(), Tile::new(3, 5));
        assert_eq!(Tile::new(5, 3).to_string(), "3-5");
        for tile in Tile::all(MAX_PIP) {
            let text = tile.to_string();
            assert_eq!(text, format!("{}-{}", tile.lo(), tile.hi()));
            assert_eq!(text.parse::<Tile>().unwrap(), tile);
        }
        for bad in ["", "5", "5-", "-5", "16-1", "a-b", "1-2-3", "+1-2", "001-2"] {
            assert!(bad.parse::<Tile>().is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn heaviness_breaks_equal_weights_by_double_then_higher_half() {
        let six_zero = Tile::new(6, 0);
        let five_one = Tile::new(5, 1);
        let four_two = Tile::new(4, 2);
        let three_three = Tile::new(3, 3);
        assert!(three_three.heaviness() > six_zero.heaviness());
        assert!(six_zero.heaviness() > five_one.heaviness());
        assert!(five_one.heaviness() > four_two.heaviness());
        let set: TileSet = [four_two, six_zero, five_one].into_iter().collect();
        assert_eq!(set.heaviest(), Some(six_zero));
        let doubles: TileSet = ["2-2", "9-9", "1-5", "15-15", "3-3"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        assert_eq!(doubles.highest_double(), Some(Tile::new(15, 15)));
        assert_eq!(
            doubles
                .without([Tile::new(15, 15)].into_iter().collect())
                .highest_double(),
            Some(Tile::new(9, 9))
        );
        assert_eq!(TileSet::EMPTY.highest_double(), None);
    }

    #[test]
    fn pip_masks_select_exactly_the_tiles_carrying_the_pip() {
        let hand: TileSet = ["1-5", "2-3", "5-5", "0-6"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        let fives: Vec<String> = hand
            .intersect(TileSet::with_pip(5))
            .iter()
            .map(|t| t.to_string())
            .collect();
        assert_eq!(fives, ["1-5", "5-5"]);
        assert_eq!(hand.with_any_pip((1 << 2) | (1 << 6)).len(), 2);
        assert_eq!(TileSet::full(15).len(), 136);
    }
}
