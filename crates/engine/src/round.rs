//! A round's state: the hands, the stock, the layout and whose turn it is. How rounds are
//! dealt, led, ended and scored is in [`super::rounds`].

use serde::{Deserialize, Serialize};

use super::layout::Layout;
use super::tile::{Tile, TileSet};

/// The round in play.
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Round {
    pub(crate) number: u16,
    pub(crate) leader: u8,
    pub(crate) turn: u8,
    pub(crate) hands: [TileSet; 4],
    /// Bottom first: the top tile is the last, so a draw is a `pop`.
    pub(crate) boneyard: Vec<Tile>,
    pub(crate) layout: Layout,
    pub(crate) must_lead: Option<Tile>,
    pub(crate) start_tile: Option<Tile>,
    /// The seat to move has drawn this turn (`draw = one` allows one draw).
    pub(crate) drew: bool,
    /// Per seat, pips it is publicly known not to hold (bit `p` = pip `p`). For the seat
    /// to move once it has drawn this turn, what the rest of its hand, without the tile
    /// drawn last, is known not to hold: see [`Game::known_missing`].
    pub(crate) voids: [u16; 4],
    /// Per seat, the tiles it has laid this round (the lead included; a start tile is no
    /// seat's): public, as everyone saw who laid each one.
    pub(crate) played: [TileSet; 4],
    /// Per seat, the tiles on the table when it last drew this round (0 if it has not):
    /// every play it made from then on, it made holding every tile it holds now.
    pub(crate) held_since: [u8; 4],
}

// As for `Game`, `clone_from` keeps the target's allocations, and the exhaustive
// pattern makes a new field a compile error.
impl Clone for Round {
    fn clone(&self) -> Round {
        let mut round = Round {
            boneyard: Vec::new(),
            layout: Layout::default(),
            ..*self
        };
        round.boneyard.clone_from(&self.boneyard);
        round.layout.clone_from(&self.layout);
        round
    }

    fn clone_from(&mut self, source: &Round) {
        let Round {
            number,
            leader,
            turn,
            hands,
            boneyard,
            layout,
            must_lead,
            start_tile,
            drew,
            voids,
            played,
            held_since,
        } = source;
        self.number = *number;
        self.leader = *leader;
        self.turn = *turn;
        self.hands = *hands;
        self.boneyard.clone_from(boneyard);
        self.layout.clone_from(layout);
        self.must_lead = *must_lead;
        self.start_tile = *start_tile;
        self.drew = *drew;
        self.voids = *voids;
        self.played = *played;
        self.held_since = *held_since;
    }
}
