//! A seat's projection rebuilt from the views it is shown, for a bot that is not handed
//! one: a webhook bot is POSTed the seat's view (the API's JSON), which shows the hand,
//! the layout's arms, the counts and the legal moves, but not who laid which tile nor in
//! what order the arms grew, which the searching levels read ([`Projection::played`], the
//! layout's placements). A [`Recall`] keeps what the seat saw before, view after view of one
//! game, and fills those in: every tile the seat ever held this round and now on the table
//! is its own, every other (the start tile aside) the other seat's, and the tiles new
//! since its last view were laid after everything it saw, its own first (it moved, then
//! the others did).
//!
//! Exact, given every view of the seat's turns, for two seats under rules where nobody
//! draws (`draw: block`): what a seat draws is known to it alone and when it drew is not in
//! the view, so with draws [`Projection::held_since`] is left at 0 and
//! [`Projection::drew`] false. [`Projection::last_round`], which no level reads, is left
//! out. Only public facts and the seat's own tiles go in: nothing here can see more than
//! the seat.

use domino_engine::layout::End;
use domino_engine::{Layout, LegalMove, Projection, Rules, Tile, TileSet, Unclaimed};

/// What one view shows a seat (the fields of `GET /v1/games/{id}` as its seat reads them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    pub viewer: u8,
    pub rules: Rules,
    pub seats: u8,
    /// `round.number`, from 1.
    pub round: u16,
    pub leader: u8,
    pub turn: Option<u8>,
    pub hand: TileSet,
    /// Per seat, `seats[].hand_count`.
    pub hand_counts: Vec<u8>,
    pub boneyard_count: u8,
    /// `round.layout.lead`.
    pub lead: Option<Tile>,
    /// `round.layout.arms`, left, right, up, down, each from the lead (or the spinner)
    /// outward.
    pub arms: [Vec<Tile>; 4],
    pub start_tile: Option<Tile>,
    pub must_lead: Option<Tile>,
    pub scores: Vec<i32>,
    pub legal_moves: Vec<LegalMove>,
    /// Per seat, `seats[].known_missing` as bits (bit `p`: pip `p`).
    pub voids: Vec<u16>,
    pub unclaimed: Option<Unclaimed>,
    pub abandoned: Vec<bool>,
}

/// One seat's memory of one game, view after view.
#[derive(Clone, Debug, Default)]
pub struct Recall {
    round: u16,
    /// Every tile seen in the seat's hand this round.
    held: TileSet,
    /// The placements known so far this round, in the order they were laid.
    placed: Vec<(Option<End>, Tile)>,
    /// Views where more than one tile of the others was new, on different arms: their
    /// order among themselves was guessed (arm by arm). Never with every turn seen.
    pub guessed: u64,
}

impl Recall {
    /// The seat's projection now, from `seen` and the views before it. Fails for more
    /// than two seats (who laid a tile that is not the seat's would be unknown) and for
    /// arms that do not continue those seen before.
    pub fn see(&mut self, seen: &Seen) -> Result<Projection, String> {
        if seen.seats != 2 {
            return Err(format!("two seats only (got {})", seen.seats));
        }
        if seen.round != self.round || seen.lead.is_none() {
            self.round = seen.round;
            self.held = TileSet::default();
            self.placed.clear();
        }
        self.held = self.held.union(seen.hand);
        self.follow(seen)?;
        let rules = seen.rules;
        let mut layout = Layout::default();
        for &(end, tile) in &self.placed {
            match end {
                None => layout.lead_with(tile, &rules),
                Some(end) => layout.place(tile, end, &rules),
            }
        }
        let me = usize::from(seen.viewer);
        let mut played = vec![TileSet::default(); 2];
        for (end, tile) in layout.placements() {
            // A start tile is no seat's: it is the lead, laid by nobody.
            if end.is_none() && seen.start_tile == Some(tile) {
                continue;
            }
            let by = if self.held.contains(tile) { me } else { 1 - me };
            played[by].insert(tile);
        }
        Ok(Projection {
            viewer: Some(seen.viewer),
            rules,
            seats: seen.seats,
            round: seen.round,
            rounds_done: seen.round.saturating_sub(1),
            leader: seen.leader,
            turn: seen.turn,
            hand: Some(seen.hand),
            hand_counts: seen.hand_counts.clone(),
            boneyard_count: seen.boneyard_count,
            count: layout.count(&rules),
            layout,
            start_tile: seen.start_tile,
            must_lead: seen.must_lead,
            drew: false,
            scores: seen.scores.clone(),
            legal_moves: seen.legal_moves.clone(),
            voids: seen.voids.clone(),
            played,
            held_since: vec![0; 2],
            unclaimed: seen.unclaimed,
            last_round: None,
            outcome: None,
            abandoned: seen.abandoned.clone(),
            match_end: None,
        })
    }

    /// Appends the tiles laid since the last view, the seat's own first.
    fn follow(&mut self, seen: &Seen) -> Result<(), String> {
        let Some(lead) = seen.lead else {
            return Ok(());
        };
        match self.placed.first() {
            None => self.placed.push((None, lead)),
            Some(&(_, known)) if known == lead => {}
            Some(_) => return Err("the lead changed within a round".into()),
        }
        let mut mine = Vec::new();
        let mut theirs = Vec::new();
        for (i, end) in End::ALL.into_iter().enumerate() {
            let known: Vec<Tile> = self
                .placed
                .iter()
                .filter(|(e, _)| *e == Some(end))
                .map(|&(_, t)| t)
                .collect();
            let arm = &seen.arms[i];
            if arm.len() < known.len() || arm[..known.len()] != known[..] {
                return Err(format!("the {} arm does not continue", end.as_str()));
            }
            for &tile in &arm[known.len()..] {
                if self.held.contains(tile) {
                    mine.push((Some(end), tile));
                } else {
                    theirs.push((Some(end), tile));
                }
            }
        }
        let arms_of_theirs = {
            let mut ends: Vec<_> = theirs.iter().map(|(e, _)| *e).collect();
            ends.dedup();
            ends.len()
        };
        if arms_of_theirs > 1 || mine.len() > 1 {
            self.guessed += 1;
        }
        self.placed.extend(mine);
        self.placed.extend(theirs);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domino_engine::{Game, Preset, Seed};
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// What the seat's view shows of `p`, as a webhook bot reads it.
    fn seen_of(p: &Projection) -> Seen {
        let tiles = |arm: &Vec<(u8, u8)>| {
            arm.iter()
                .map(|&(a, b)| format!("{a}-{b}").parse().unwrap())
                .collect()
        };
        let arms = p.layout.arms();
        Seen {
            viewer: p.viewer.unwrap(),
            rules: p.rules,
            seats: p.seats,
            round: p.round,
            leader: p.leader,
            turn: p.turn,
            hand: p.hand.unwrap(),
            hand_counts: p.hand_counts.clone(),
            boneyard_count: p.boneyard_count,
            lead: p.layout.lead(),
            arms: [
                tiles(&arms[0]),
                tiles(&arms[1]),
                tiles(&arms[2]),
                tiles(&arms[3]),
            ],
            start_tile: p.start_tile,
            // The view shows it to the leader alone.
            must_lead: p.must_lead.filter(|_| p.viewer == Some(p.leader)),
            scores: p.scores.clone(),
            legal_moves: p.legal_moves.clone(),
            voids: p.voids.clone(),
            unclaimed: p.unclaimed,
            abandoned: p.abandoned.clone(),
        }
    }

    #[test]
    fn every_turn_seen_rebuilds_the_seats_projection_exactly_where_nobody_draws() {
        let mut checked = 0;
        for preset in [Preset::Block, Preset::Classic] {
            for g in 0..200u8 {
                let rules = Rules {
                    target: None,
                    rounds: Some(1),
                    ..preset.rules()
                };
                let mut game = Game::new(rules, 2, Seed([g; 32]), None).unwrap();
                let mut recall = [Recall::default(), Recall::default()];
                let mut rng = ChaCha8Rng::seed_from_u64(u64::from(g));
                while let Some(turn) = game.turn() {
                    let truth = game.project(Some(turn));
                    let rebuilt = recall[turn as usize].see(&seen_of(&truth)).unwrap();
                    assert_eq!(rebuilt, truth, "{preset:?}, game {g}");
                    checked += 1;
                    let moves = &truth.legal_moves;
                    let mv = moves[rng.random_range(0..moves.len())].mv;
                    game.play(turn, mv).unwrap();
                }
                assert_eq!(recall[0].guessed + recall[1].guessed, 0);
            }
        }
        assert!(checked > 4000, "{checked}");
    }

    #[test]
    fn more_than_two_seats_is_refused() {
        let rules = Preset::Block.rules();
        let game = Game::new(rules, 4, Seed([1; 32]), None).unwrap();
        let seen = seen_of(&game.project(Some(game.turn().unwrap())));
        assert!(Recall::default().see(&seen).is_err());
    }
}
