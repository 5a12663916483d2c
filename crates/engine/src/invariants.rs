//! What every stored game must satisfy: [`Game::check_invariants`], run by the service on
//! every load and by the property tests after every move.

use super::event::MatchEnd;
use super::game::Game;
use super::tile::TileSet;

impl Game {
    /// Tiles conserved and the round consistent: every tile of the set is in exactly one
    /// hand, the boneyard or the layout. The service checks this on every load, so it must
    /// hold for anything the engine goes on to use, and never panic, whatever was stored:
    /// the seat count and rules are valid, the layout is the one its tiles make.
    pub fn check_invariants(&self) -> Result<(), String> {
        if !(2..=4).contains(&self.seats) {
            return Err(format!("{} seats", self.seats));
        }
        self.rules
            .validate(self.seats)
            .map_err(|e| format!("the rules: {e}"))?;
        let mut seen = TileSet::EMPTY;
        let mut count = 0usize;
        let r = &self.round;
        let places = r.hands[..self.seats as usize]
            .iter()
            .flat_map(|h| h.iter())
            .chain(r.boneyard.iter().copied())
            .chain(r.layout.tiles());
        for t in places {
            if seen.contains(t) {
                return Err(format!("{t} is in two places"));
            }
            seen.insert(t);
            count += 1;
        }
        if seen != TileSet::full(self.rules.max_pip)
            || count != super::tile::set_size(self.rules.max_pip)
        {
            return Err("tiles are missing".into());
        }
        if r.turn >= self.seats || r.leader >= self.seats {
            return Err("the turn names no seat".into());
        }
        if r.layout.rebuilt(&self.rules).as_ref() != Some(&r.layout) {
            return Err("the layout is not the one its tiles make".into());
        }
        let mut laid = TileSet::EMPTY;
        for (s, played) in r.played.iter().enumerate() {
            let both = laid.union(*played);
            if s >= usize::from(self.seats) && !played.is_empty()
                || both.len() != laid.len() + played.len()
            {
                return Err("a tile laid by no seat or by two".into());
            }
            laid = both;
        }
        // A start tile is laid by the deal, not a seat.
        if let Some(t) = r.start_tile {
            laid.insert(t);
        }
        let len = r.layout.len();
        if laid != r.layout.tiles().collect::<TileSet>()
            || r.held_since.iter().any(|&h| usize::from(h) > len)
        {
            return Err("who laid the layout's tiles is not told right".into());
        }
        // Round numbers: the round in play is the one after those done, or, once the match
        // is over, the last one done; a first deal, when given, is a valid one.
        let over = r.number == self.rounds_done && self.is_over();
        if r.number == 0
            || r.number > self.rules.last_round()
            || !(u32::from(r.number) == u32::from(self.rounds_done) + 1 || over)
        {
            return Err(format!(
                "round {} with {} rounds done",
                r.number, self.rounds_done
            ));
        }
        if let Some(deal) = &self.first_deal {
            deal.validate(&self.rules, self.seats)
                .map_err(|e| format!("the first deal: {e}"))?;
        }
        // Far beyond any real match, and far from overflowing as a round's award is added.
        if self.scores.iter().any(|s| s.unsigned_abs() > 1 << 30) {
            return Err("a score out of range".into());
        }
        if self.unclaimed.is_some_and(|u| u.seat >= self.seats) {
            return Err("a move names no seat".into());
        }
        if self.abandoned >> self.seats != 0 {
            return Err("an abandoned seat that does not exist".into());
        }
        if let Some(e) = self.early_end {
            if self.rules.sides(self.seats) != 2 {
                return Err("a match of more than two sides ended early".into());
            }
            if e.seat >= self.seats {
                return Err("the match was given up by no seat".into());
            }
            if !matches!(e.reason, MatchEnd::Resigned | MatchEnd::Timeout) {
                return Err(format!("an early end by {}", e.reason.as_str()));
            }
            // Nothing is played once the match is over: it ended with its round in play
            // and before the target or the last round ended it.
            if self.target_reached()
                || self.all_rounds_done()
                || u32::from(r.number) != u32::from(self.rounds_done) + 1
            {
                return Err("a match ended early after it was over".into());
            }
        }
        self.history.validate(&self.rules, self.seats)?;
        Ok(())
    }
}
