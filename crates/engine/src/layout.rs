//! The line of play: the lead, its arms, the spinner and the count of the open ends.
//!
//! Only the tips matter to the rules, so they live in a small `Copy` [`Tips`] that move
//! generation can try a placement on without touching the list of placed tiles; that list
//! is kept only so a view can draw the arms.

use serde::{Deserialize, Serialize};

use super::rules::{LeadDoubleCount, Rules, Scoring, Spinner as SpinnerRule};
use super::tile::{Tile, TileSet};

/// An arm of the layout. `Left` and `Right` grow from the lead; `Up` and `Down` grow from
/// the spinner's sides once both its long ends are covered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum End {
    Left,
    Right,
    Up,
    Down,
}

impl End {
    pub const ALL: [End; 4] = [End::Left, End::Right, End::Up, End::Down];

    pub fn as_str(self) -> &'static str {
        match self {
            End::Left => "left",
            End::Right => "right",
            End::Up => "up",
            End::Down => "down",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

impl std::str::FromStr for End {
    type Err = ();

    fn from_str(s: &str) -> Result<End, ()> {
        End::ALL.into_iter().find(|e| e.as_str() == s).ok_or(())
    }
}

/// The outer end of one arm.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Arm {
    /// The number open at this end.
    value: u8,
    /// The tip is a crosswise double (counts both halves).
    double: bool,
    /// Tiles on this arm, not counting the lead.
    len: u8,
}

/// Where the spinner lies: on the lead (`arm == None`) or at `index` on an arm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct SpinnerAt {
    arm: Option<End>,
    index: u8,
}

/// The rule-relevant state of the layout: `Copy`, so a placement can be tried cheaply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tips {
    lead: Option<Tile>,
    arms: [Arm; 4],
    spinner: Option<SpinnerAt>,
    /// Every tile that fits some open end. Derivable from the ends, but move generation
    /// asks for it several times per move, so it is kept up to date on each placement.
    fits: TileSet,
}

impl Tips {
    pub fn lead(&self) -> Option<Tile> {
        self.lead
    }

    /// Whether the spinner's `up` and `down` sides are open: tiles lie on both its long
    /// ends (for a spinner inside an arm, one long end faces the lead already).
    pub fn sides_open(&self) -> bool {
        match self.spinner {
            None => false,
            Some(SpinnerAt { arm: None, .. }) => self.arms[0].len > 0 && self.arms[1].len > 0,
            Some(SpinnerAt {
                arm: Some(a),
                index,
            }) => self.arms[a.index()].len > index + 1,
        }
    }

    /// The open ends and their numbers, in the order left, right, up, down.
    pub fn open_ends(&self) -> impl Iterator<Item = (End, u8)> + '_ {
        let n = if self.lead.is_none() {
            0
        } else if self.sides_open() {
            4
        } else {
            2
        };
        End::ALL[..n]
            .iter()
            .map(move |&e| (e, self.arms[e.index()].value))
    }

    /// Bit `p` set when some open end shows `p`.
    pub fn end_pips(&self) -> u16 {
        self.open_ends().fold(0, |acc, (_, v)| acc | (1 << v))
    }

    /// Every tile (of any set) that fits some open end.
    pub fn fits(&self) -> TileSet {
        self.fits
    }

    fn refresh_fits(&mut self) {
        self.fits = TileSet::carrying_any(self.end_pips());
    }

    /// The number open at `end`, if that end is open.
    pub fn value_at(&self, end: End) -> Option<u8> {
        self.open_ends().find(|&(e, _)| e == end).map(|(_, v)| v)
    }

    /// Whether the open end at `end` counts both halves under fives: a crosswise double
    /// at an arm's tip, or a long side of a lead double. Once one long side of a lead
    /// double is covered, its other side counts one half under `lead_double_count = one`,
    /// so it is not counted double there, though the tile lies crosswise.
    pub fn counts_double(&self, end: End, rules: &Rules) -> bool {
        let arm = self.arms[end.index()];
        if arm.len > 0 {
            return arm.double;
        }
        let lead_side = matches!(end, End::Left | End::Right);
        let covered = self.arms[0].len + self.arms[1].len > 0;
        lead_side
            && self.lead.is_some_and(|l| l.is_double())
            && (!covered || rules.lead_double_count == LeadDoubleCount::Both)
    }

    /// Lays the lead.
    pub fn lead_with(&mut self, tile: Tile, rules: &Rules) {
        self.lay_lead(tile, rules);
        self.refresh_fits();
    }

    /// Places `tile` at `end`, which must be open and show a number the tile carries.
    pub fn place(&mut self, tile: Tile, end: End, rules: &Rules) {
        self.lay(tile, end, rules);
        self.refresh_fits();
    }

    /// [`Tips::lead_with`] but for `fits`, which counting does not read: a count after a
    /// placement is asked for every candidate of every playout, the fits far less often.
    fn lay_lead(&mut self, tile: Tile, rules: &Rules) {
        self.lead = Some(tile);
        let double = tile.is_double();
        self.arms[0] = Arm {
            value: tile.lo(),
            double,
            len: 0,
        };
        self.arms[1] = Arm {
            value: tile.hi(),
            double,
            len: 0,
        };
        if double && rules.spinner == SpinnerRule::FirstDouble {
            self.become_spinner(tile.lo(), None, 0);
        }
    }

    /// [`Tips::place`] but for `fits` (see [`Tips::lay_lead`]).
    fn lay(&mut self, tile: Tile, end: End, rules: &Rules) {
        let arm = &mut self.arms[end.index()];
        let value = tile.other(arm.value);
        *arm = Arm {
            value,
            double: tile.is_double(),
            len: arm.len + 1,
        };
        let index = arm.len - 1;
        if tile.is_double() && self.spinner.is_none() && rules.spinner == SpinnerRule::FirstDouble {
            self.become_spinner(value, Some(end), index);
        }
    }

    fn become_spinner(&mut self, pip: u8, arm: Option<End>, index: u8) {
        self.spinner = Some(SpinnerAt { arm, index });
        self.arms[2] = Arm {
            value: pip,
            double: false,
            len: 0,
        };
        self.arms[3] = Arm {
            value: pip,
            double: false,
            len: 0,
        };
    }

    /// The count under fives: the sum of the open ends, a crosswise double counting both
    /// halves. A lone lead counts all its pips; a lead double with one long side covered
    /// counts per `lead_double_count`; an empty spinner side counts nothing.
    pub fn count(&self, rules: &Rules, placed_any: bool) -> u32 {
        let Some(lead) = self.lead else { return 0 };
        if !placed_any {
            return lead.weight() as u32;
        }
        // `counts_double` over the open ends, unrolled: playouts count after every
        // candidate placement.
        let open = if self.sides_open() { 4 } else { 2 };
        let covered = self.arms[0].len + self.arms[1].len > 0;
        let lead_double =
            lead.is_double() && (!covered || rules.lead_double_count == LeadDoubleCount::Both);
        let mut sum = 0u32;
        for (i, arm) in self.arms[..open].iter().enumerate() {
            let v = u32::from(arm.value);
            sum += match (arm.len > 0, i < 2) {
                (true, _) if arm.double => 2 * v,
                (true, _) => v,
                // An empty spinner side.
                (false, false) => 0,
                (false, true) if lead_double => 2 * v,
                (false, true) => v,
            };
        }
        sum
    }
}

/// The whole layout: the tips plus every placed tile, in order, for drawing the arms.
#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    tips: Tips,
    placed: Vec<(End, Tile)>,
}

impl Clone for Layout {
    fn clone(&self) -> Layout {
        Layout {
            tips: self.tips,
            placed: self.placed.clone(),
        }
    }

    /// Keeps this layout's allocation (see [`super::Game`]'s `clone_from`).
    fn clone_from(&mut self, source: &Layout) {
        let Layout { tips, placed } = source;
        self.tips = *tips;
        self.placed.clone_from(placed);
    }
}

impl Layout {
    pub fn tips(&self) -> &Tips {
        &self.tips
    }

    pub fn lead(&self) -> Option<Tile> {
        self.tips.lead
    }

    pub fn is_empty(&self) -> bool {
        self.tips.lead.is_none()
    }

    /// Tiles on the table (the lead included).
    pub fn len(&self) -> usize {
        usize::from(self.tips.lead.is_some()) + self.placed.len()
    }

    pub fn lead_with(&mut self, tile: Tile, rules: &Rules) {
        self.tips.lead_with(tile, rules);
    }

    /// Empties the layout, keeping its allocation for the next round.
    pub fn clear(&mut self) {
        self.tips = Tips::default();
        self.placed.clear();
    }

    pub fn place(&mut self, tile: Tile, end: End, rules: &Rules) {
        self.tips.place(tile, end, rules);
        self.placed.push((end, tile));
    }

    pub fn count(&self, rules: &Rules) -> u32 {
        self.tips.count(rules, !self.placed.is_empty())
    }

    /// The count if `tile` were placed at `end` (or led, with `end == None`).
    pub fn count_after(&self, tile: Tile, end: Option<End>, rules: &Rules) -> u32 {
        let mut tips = self.tips;
        match end {
            None => {
                tips.lay_lead(tile, rules);
                tips.count(rules, false)
            }
            Some(end) => {
                tips.lay(tile, end, rules);
                tips.count(rules, true)
            }
        }
    }

    /// The points laying `tile` at `end` (or leading it, with `end == None`) scores: under
    /// fives, the count after it when that is a positive multiple of five.
    pub fn points_after(&self, tile: Tile, end: Option<End>, rules: &Rules) -> u16 {
        if rules.scoring != Scoring::Fives {
            return 0;
        }
        let count = self.count_after(tile, end, rules);
        if count > 0 && count % 5 == 0 {
            count as u16
        } else {
            0
        }
    }

    /// The tiles in the order they were laid: the lead (no end), then each with its end.
    pub fn placements(&self) -> impl Iterator<Item = (Option<End>, Tile)> + '_ {
        self.tips
            .lead
            .map(|t| (None, t))
            .into_iter()
            .chain(self.placed.iter().map(|&(e, t)| (Some(e), t)))
    }

    /// The layout that laying this one's tiles again, from the lead, in order, makes;
    /// `None` if some placement would not be legal. A layout read from storage must equal
    /// its rebuild: that is what makes the stored tips trustworthy.
    pub fn rebuilt(&self, rules: &Rules) -> Option<Layout> {
        let mut layout = Layout::default();
        let Some(lead) = self.tips.lead else {
            return self.placed.is_empty().then_some(layout);
        };
        layout.lead_with(lead, rules);
        for &(end, tile) in &self.placed {
            if !tile.has(layout.tips.value_at(end)?) {
                return None;
            }
            layout.place(tile, end, rules);
        }
        Some(layout)
    }

    /// Tiles on the table (lead included).
    pub fn tiles(&self) -> impl Iterator<Item = Tile> + '_ {
        self.tips
            .lead
            .into_iter()
            .chain(self.placed.iter().map(|&(_, t)| t))
    }

    /// Each arm's tiles from the lead (or spinner) outward, each as `(facing in, facing
    /// out)`: the order a client draws them in.
    pub fn arms(&self) -> [Vec<(u8, u8)>; 4] {
        let mut arms: [Vec<(u8, u8)>; 4] = Default::default();
        let Some(lead) = self.tips.lead else {
            return arms;
        };
        let mut open = [lead.lo(), lead.hi(), 0, 0];
        let mut spinner_seen =
            lead.is_double() && self.tips.spinner.is_some_and(|s| s.arm.is_none());
        if spinner_seen {
            open[2] = lead.lo();
            open[3] = lead.lo();
        }
        for &(end, tile) in &self.placed {
            let i = end.index();
            let inner = open[i];
            let outer = tile.other(inner);
            arms[i].push((inner, outer));
            open[i] = outer;
            if tile.is_double() && !spinner_seen && self.tips.spinner.is_some() {
                spinner_seen = true;
                open[2] = outer;
                open[3] = outer;
            }
        }
        arms
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Preset;

    fn t(s: &str) -> Tile {
        s.parse().unwrap()
    }

    #[test]
    fn spinner_count_sequence_of_all_fives() {
        let rules = Preset::AllFives.rules();
        let mut l = Layout::default();
        l.lead_with(t("5-5"), &rules);
        assert_eq!(l.count(&rules), 10);
        l.place(t("5-2"), End::Right, &rules);
        assert_eq!(
            l.count(&rules),
            12,
            "the uncovered side of the lead double still counts both halves"
        );
        assert!(!l.tips().sides_open());
        l.place(t("5-3"), End::Left, &rules);
        assert_eq!(
            l.count(&rules),
            5,
            "an unopened spinner side counts nothing"
        );
        assert!(l.tips().sides_open(), "both long ends are covered");
        assert_eq!(l.tips().value_at(End::Up), Some(5));
        l.place(t("5-1"), End::Up, &rules);
        assert_eq!(l.count(&rules), 3 + 2 + 1);
        assert_eq!(l.arms()[2], vec![(5, 1)]);
    }

    #[test]
    fn lone_lead_double_counts_both_halves_and_one_side_counts_once_under_lead_double_one() {
        let rules = Preset::Muggins.rules();
        let mut l = Layout::default();
        l.lead_with(t("4-4"), &rules);
        assert_eq!(l.count(&rules), 8);
        l.place(t("4-1"), End::Right, &rules);
        assert_eq!(l.count(&rules), 5);
        l.place(t("6-1"), End::Right, &rules);
        assert_eq!(l.count(&rules), 10);
    }

    #[test]
    fn a_double_at_a_tip_counts_both_halves_and_a_later_first_double_spins() {
        let rules = Preset::AllFives.rules();
        let mut l = Layout::default();
        l.lead_with(t("3-6"), &rules);
        l.place(t("6-6"), End::Right, &rules);
        assert_eq!(l.count(&rules), 3 + 12);
        assert!(!l.tips().sides_open());
        l.place(t("6-2"), End::Right, &rules);
        assert!(
            l.tips().sides_open(),
            "a spinner inside an arm opens once covered beyond"
        );
        assert_eq!(l.count(&rules), 3 + 2);
        l.place(t("6-4"), End::Down, &rules);
        assert_eq!(l.count(&rules), 3 + 2 + 4);
        assert_eq!(l.arms()[1], vec![(6, 6), (6, 2)]);
        assert_eq!(l.arms()[3], vec![(6, 4)]);
    }

    /// The ends as a view shows them (`double` per [`Tips::counts_double`]) add up to
    /// the count once a tile is placed, empty spinner sides counting nothing.
    fn ends_sum(l: &Layout, rules: &Rules) -> u32 {
        let tips = l.tips();
        tips.open_ends()
            .filter(|&(e, _)| !matches!(e, End::Up | End::Down) || tips.arms[e.index()].len > 0)
            .map(|(e, v)| v as u32 * if tips.counts_double(e, rules) { 2 } else { 1 })
            .sum()
    }

    #[test]
    fn an_uncovered_lead_side_is_shown_double_only_where_it_counts_both_halves() {
        let one = Preset::Muggins.rules();
        let both = Preset::AllFives.rules();
        for rules in [one, both] {
            let mut l = Layout::default();
            l.lead_with(t("4-4"), &rules);
            assert!(
                l.tips().counts_double(End::Left, &rules),
                "a lone lead double"
            );
            l.place(t("4-1"), End::Right, &rules);
            assert!(!l.tips().counts_double(End::Right, &rules), "1 is a single");
            let left = l.tips().counts_double(End::Left, &rules);
            assert_eq!(left, rules.lead_double_count == LeadDoubleCount::Both);
            assert_eq!(ends_sum(&l, &rules), l.count(&rules));
            l.place(t("4-6"), End::Left, &rules);
            l.place(t("4-2"), End::Up, &rules);
            l.place(t("6-6"), End::Left, &rules);
            assert!(l.tips().counts_double(End::Left, &rules));
            assert_eq!(ends_sum(&l, &rules), l.count(&rules));
        }
    }

    #[test]
    fn without_a_spinner_the_layout_keeps_two_ends() {
        let rules = Preset::Block.rules();
        let mut l = Layout::default();
        l.lead_with(t("5-5"), &rules);
        l.place(t("5-2"), End::Right, &rules);
        l.place(t("5-3"), End::Left, &rules);
        assert_eq!(l.tips().open_ends().count(), 2);
        assert_eq!(l.tips().end_pips(), (1 << 3) | (1 << 2));
    }
}
