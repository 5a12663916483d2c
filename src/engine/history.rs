//! The record of a match's moves, one byte per move with the double-six set.
//!
//! Every move of a match is kept (with the rules, seed and first deal it is enough to
//! replay the match), and the server stores it with the game on every move, so its size
//! is the size of a finished game. A move is written as a code that leaves out what the
//! state before it tells: the seat (every move but a muggins call is the turn seat's),
//! the end of a lead (it has none) and the claim's amount (a claim is always the exact
//! count). What is left:
//!
//! | code | move |
//! |---|---|
//! | 0 | draw |
//! | 1 | pass |
//! | 2 + s | muggins, called by seat `s` |
//! | 6 + (tile × E + end) × C + claimed | play; E = 4 ends with a spinner, else 2; C = 2 under muggins, else 1; a lead writes end 0 |
//!
//! A code takes one byte when every code of the rule set does (double-six: at most
//! 6 + 28 × 4 × 2 = 230), else two (little-endian). Reading the record back therefore
//! needs the game it was written in: [`Game::replay_history`](super::Game::replay_history)
//! replays the match and decodes each code against the state it was written in.

use serde::{Deserialize, Serialize};

use super::layout::End;
use super::moves::Move;
use super::rules::{Rules, Spinner};
use super::tile::{Tile, set_size};

const DRAW: u16 = 0;
const PASS: u16 = 1;
const MUGGINS: u16 = 2;
const FIRST_PLAY: u16 = 6;

/// The moves of a match, encoded (see the module doc).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    bytes: Vec<u8>,
}

/// The shape of the codes under one rule set.
#[derive(Clone, Copy, Debug)]
struct Codec {
    ends: u16,
    claims: u16,
    tiles: u16,
}

impl Codec {
    fn of(rules: &Rules) -> Codec {
        Codec {
            ends: if rules.spinner == Spinner::None { 2 } else { 4 },
            claims: if rules.muggins { 2 } else { 1 },
            tiles: set_size(rules.max_pip) as u16,
        }
    }

    /// One past the largest code.
    fn limit(self) -> u16 {
        FIRST_PLAY + self.tiles * self.ends * self.claims
    }

    fn width(self) -> usize {
        if self.limit() <= 256 { 1 } else { 2 }
    }

    fn encode(self, seat: u8, mv: Move) -> u16 {
        match mv {
            Move::Draw => DRAW,
            Move::Pass => PASS,
            Move::Muggins => MUGGINS + u16::from(seat),
            Move::Play { tile, end, claim } => {
                let end = end.map_or(0, |e| e as u16);
                FIRST_PLAY
                    + (u16::from(tile.index()) * self.ends + end) * self.claims
                    + u16::from(claim.is_some())
            }
        }
    }
}

/// A code read back: what the state before the move completes into a move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Code {
    Draw,
    Pass,
    Muggins {
        seat: u8,
    },
    Play {
        tile: Tile,
        /// Meaningless for a lead.
        end: End,
        claimed: bool,
    },
}

impl History {
    /// Appends a move in canonical form (as [`Game::check`](super::Game::check) returns it).
    pub(crate) fn push(&mut self, rules: &Rules, seat: u8, mv: Move) {
        let codec = Codec::of(rules);
        let code = codec.encode(seat, mv);
        if codec.width() == 1 {
            self.bytes.push(code as u8);
        } else {
            self.bytes.extend_from_slice(&code.to_le_bytes());
        }
    }

    /// Whether `mv` has a code under these rules (every move the rules allow does; a move
    /// read from an old format is not trusted to).
    pub(crate) fn encodes(rules: &Rules, seat: u8, mv: Move) -> bool {
        let codec = Codec::of(rules);
        match mv {
            Move::Draw | Move::Pass => true,
            Move::Muggins => seat < 4,
            Move::Play { tile, end, claim } => {
                u16::from(tile.index()) < codec.tiles
                    && end.is_none_or(|e| (e as u16) < codec.ends)
                    && (claim.is_none() || codec.claims == 2)
            }
        }
    }

    /// How many moves are recorded.
    pub(crate) fn len(&self, rules: &Rules) -> usize {
        self.bytes.len() / Codec::of(rules).width()
    }

    /// Every code means a move of these rules for one of `seats` (cheap: no allocation, so
    /// a stored game can be checked on every load). Whether the moves were legal shows only
    /// in a replay.
    pub(crate) fn validate(&self, rules: &Rules, seats: u8) -> Result<(), String> {
        let codec = Codec::of(rules);
        if self.bytes.len() % codec.width() != 0 {
            return Err("the move history is cut short".into());
        }
        let bad = |code: u16| match decode(codec, code) {
            None => true,
            Some(Code::Muggins { seat }) => seat >= seats,
            Some(_) => false,
        };
        let found = if codec.width() == 1 {
            self.bytes.iter().map(|&b| u16::from(b)).find(|&c| bad(c))
        } else {
            self.bytes
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .find(|&c| bad(c))
        };
        match found {
            Some(code) => Err(format!("move code {code} means nothing here")),
            None => Ok(()),
        }
    }

    /// The recorded codes in order; fails at the first code no move of these rules has
    /// (the record is read from storage, so it is not trusted).
    pub(crate) fn codes(&self, rules: &Rules) -> Result<Vec<Code>, String> {
        let codec = Codec::of(rules);
        let width = codec.width();
        if self.bytes.len() % width != 0 {
            return Err("the move history is cut short".into());
        }
        self.bytes
            .chunks_exact(width)
            .map(|chunk| {
                let code = match *chunk {
                    [b] => u16::from(b),
                    [lo, hi] => u16::from_le_bytes([lo, hi]),
                    _ => unreachable!("chunks of the width"),
                };
                decode(codec, code).ok_or_else(|| format!("move code {code} means nothing"))
            })
            .collect()
    }
}

fn decode(codec: Codec, code: u16) -> Option<Code> {
    Some(match code {
        DRAW => Code::Draw,
        PASS => Code::Pass,
        c if c < FIRST_PLAY => Code::Muggins {
            seat: (c - MUGGINS) as u8,
        },
        c if c < codec.limit() => {
            let c = c - FIRST_PLAY;
            let claimed = c % codec.claims == 1;
            let c = c / codec.claims;
            Code::Play {
                tile: Tile::try_from(u8::try_from(c / codec.ends).ok()?).ok()?,
                end: End::ALL[usize::from(c % codec.ends)],
                claimed,
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Preset;

    fn round_trip(rules: &Rules, seat: u8, mv: Move) -> Code {
        let mut h = History::default();
        h.push(rules, seat, mv);
        assert_eq!(h.len(rules), 1);
        let codes = h.codes(rules).unwrap();
        assert_eq!(codes.len(), 1);
        codes[0]
    }

    #[test]
    fn a_double_six_game_takes_one_byte_per_move_even_with_a_spinner_and_muggins() {
        for preset in Preset::ALL {
            let rules = preset.rules();
            if rules.max_pip == 6 {
                assert_eq!(Codec::of(&rules).width(), 1, "{preset:?}");
            }
        }
        let mut rules = Preset::Muggins.rules();
        rules.max_pip = 9;
        assert_eq!(Codec::of(&rules).width(), 2);
    }

    #[test]
    fn every_move_shape_reads_back() {
        let mut rules = Preset::Muggins.rules();
        for max_pip in [6, 9, 12, 15] {
            rules.max_pip = max_pip;
            let last = Tile::try_from(set_size(max_pip) as u8 - 1).unwrap();
            assert_eq!(round_trip(&rules, 1, Move::Draw), Code::Draw);
            assert_eq!(round_trip(&rules, 1, Move::Pass), Code::Pass);
            assert_eq!(
                round_trip(&rules, 3, Move::Muggins),
                Code::Muggins { seat: 3 }
            );
            assert_eq!(
                round_trip(
                    &rules,
                    0,
                    Move::Play {
                        tile: last,
                        end: Some(End::Down),
                        claim: Some(10)
                    }
                ),
                Code::Play {
                    tile: last,
                    end: End::Down,
                    claimed: true
                }
            );
            assert_eq!(
                round_trip(&rules, 0, Move::lead(Tile::new(0, 0))),
                Code::Play {
                    tile: Tile::new(0, 0),
                    end: End::Left,
                    claimed: false
                }
            );
        }
    }

    #[test]
    fn a_damaged_record_is_refused_not_misread() {
        let rules = Preset::Classic.rules();
        let limit = Codec::of(&rules).limit();
        let h = History {
            bytes: vec![0, limit as u8],
        };
        assert!(h.codes(&rules).is_err());
        let mut rules = rules;
        rules.max_pip = 15;
        assert_eq!(Codec::of(&rules).width(), 2);
        let h = History { bytes: vec![0] };
        assert!(h.codes(&rules).is_err(), "half a two-byte code");
    }
}
