//! What one seat, or a spectator, may know.
//!
//! A projection is built from the game by copying out only public facts and the viewer's
//! own hand; another seat's tiles in play cannot reach it (the property tests check this
//! on every move of thousands of games). Bots are given projections, never the game.

use super::event::{MatchEnd, Outcome, RoundResult};
use super::game::{Game, Unclaimed};
use super::layout::Layout;
use super::moves::Move;
use super::rules::Rules;
use super::tile::{Tile, TileSet};

/// A legal move and the points it would credit its side at once: a play's count under
/// fives, except an unclaimed play under muggins (0: its points are left to be taken),
/// and the points a muggins call takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LegalMove {
    pub mv: Move,
    pub points: u16,
}

/// One viewer's knowledge of the game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Projection {
    /// The viewer's seat; `None` for a spectator.
    pub viewer: Option<u8>,
    pub rules: Rules,
    pub seats: u8,
    pub round: u16,
    pub rounds_done: u16,
    pub leader: u8,
    /// The seat to move; `None` once the match is over.
    pub turn: Option<u8>,
    /// The viewer's own tiles; `None` for a spectator.
    pub hand: Option<TileSet>,
    pub hand_counts: Vec<u8>,
    pub boneyard_count: u8,
    pub layout: Layout,
    pub count: u32,
    pub start_tile: Option<Tile>,
    /// The lead the leader must make, when the opening rule forces one (public: every
    /// seat can tell who holds the highest double from who is made to lead).
    pub must_lead: Option<Tile>,
    /// The seat to move has drawn this turn.
    pub drew: bool,
    pub scores: Vec<i32>,
    pub legal_moves: Vec<LegalMove>,
    /// Per seat, the pips it is publicly known not to hold (bit `p` = pip `p`), learned
    /// from its passes and forced draws: bots and humans start from the same information.
    pub voids: Vec<u16>,
    /// Per seat, the tiles it has laid this round (the lead included; a start tile is no
    /// seat's).
    pub played: Vec<TileSet>,
    /// Per seat, the tiles on the table when it last drew this round (0 if it has not):
    /// every play it made from then on, it made holding every tile it holds now.
    pub held_since: Vec<u8>,
    pub unclaimed: Option<Unclaimed>,
    pub last_round: Option<RoundResult>,
    pub outcome: Option<Outcome>,
    /// Per seat, whether it is abandoned (a bot plays it to the end).
    pub abandoned: Vec<bool>,
    /// Why the match ended; `None` while it is in play.
    pub match_end: Option<MatchEnd>,
}

impl Projection {
    /// Every tile the viewer cannot see: the other hands and the boneyard together.
    pub fn unseen(&self) -> TileSet {
        let seen = self
            .layout
            .tiles()
            .fold(self.hand.unwrap_or_default(), |mut s, t| {
                s.insert(t);
                s
            });
        TileSet::full(self.rules.max_pip).without(seen)
    }
}

impl Game {
    /// What `viewer` (a seat, or `None` for a spectator) may know now.
    pub fn project(&self, viewer: Option<u8>) -> Projection {
        let viewer = viewer.filter(|&s| s < self.seats);
        let r = &self.round;
        let legal_moves = match viewer {
            Some(seat) => self
                .legal_moves(seat)
                .into_iter()
                .map(|mv| LegalMove {
                    mv,
                    points: match mv {
                        Move::Play { claim: None, .. } if self.rules.muggins => 0,
                        Move::Play { tile, end, .. } => self.points_of(tile, end),
                        Move::Muggins => self.unclaimed.map_or(0, |u| u.points),
                        _ => 0,
                    },
                })
                .collect(),
            None => Vec::new(),
        };
        Projection {
            viewer,
            rules: self.rules,
            seats: self.seats,
            round: r.number,
            rounds_done: self.rounds_done,
            leader: r.leader,
            turn: self.turn(),
            hand: viewer.map(|s| r.hands[s as usize]),
            hand_counts: (0..self.seats)
                .map(|s| r.hands[s as usize].len() as u8)
                .collect(),
            boneyard_count: r.boneyard.len() as u8,
            layout: r.layout.clone(),
            count: r.layout.count(&self.rules),
            start_tile: r.start_tile,
            must_lead: r.must_lead,
            drew: r.drew,
            scores: self.scores().to_vec(),
            legal_moves,
            voids: (0..self.seats).map(|s| self.known_missing(s)).collect(),
            played: r.played[..self.seats as usize].to_vec(),
            held_since: r.held_since[..self.seats as usize].to_vec(),
            unclaimed: self.unclaimed,
            last_round: self.last_round,
            outcome: self.outcome(),
            abandoned: (0..self.seats).map(|s| self.abandoned(s)).collect(),
            match_end: self.match_end(),
        }
    }
}
