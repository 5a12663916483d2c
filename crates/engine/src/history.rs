//! The record of a match's moves: 6 bits a move in a classic game.
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
//! | 6 + T × E × C (T tiles in the set) | a table action: the next code is `action × 4 + s`, for seat `s` |
//!
//! The table actions, rare (a few a match at most), take that one escape code and a
//! second code: 0 resign, 1 timed out, 2 abandon, 3 forfeit. Their seat is written, as
//! a resignation or an abandonment may concern any seat.
//!
//! Codes are packed as bits, each as wide as the largest code of the rule set needs:
//! 6 bits in a classic game (codes below 63: the escape is 62), 8 with double-six, a
//! spinner and muggins, 9 to 11 with the larger sets. The escape never widens a code: no
//! set's last play code is one below a power of two. Reading the record back therefore needs the game it was
//! written in: [`Game::replay_history`](super::Game::replay_history) replays the match
//! and decodes each code against the state it was written in.

use serde::{Deserialize, Serialize};

use super::layout::End;
use super::moves::Move;
use super::rules::{Rules, Spinner};
use super::tile::{Tile, set_size};

const DRAW: u16 = 0;
const PASS: u16 = 1;
const MUGGINS: u16 = 2;
const FIRST_PLAY: u16 = 6;
/// After the escape, the table actions in this order (`action × 4 + seat`).
const TABLE_ACTIONS: [Move; 4] = [Move::Resign, Move::TimedOut, Move::Abandon, Move::Forfeit];

/// The moves of a match, encoded (see the module doc).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    /// How many moves.
    len: u32,
    /// How many of them are table actions, each written as two codes.
    tables: u32,
    /// The codes, `width` bits each, least significant bit first; unused bits are zero.
    bits: Vec<u8>,
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

    /// The escape code of the table actions: one past the last play. (In 32 bits: rules
    /// read from storage are checked after the history is, and a damaged `max_pip` must
    /// not overflow here.)
    fn escape(self) -> u32 {
        u32::from(FIRST_PLAY)
            + u32::from(self.tiles) * u32::from(self.ends) * u32::from(self.claims)
    }

    /// One past the largest code.
    fn limit(self) -> u32 {
        self.escape() + 1
    }

    /// Bits per code.
    fn width(self) -> usize {
        (u32::BITS - (self.limit() - 1).leading_zeros()) as usize
    }

    /// The move's code, and the second code of a table action.
    fn encode(self, seat: u8, mv: Move) -> (u16, Option<u16>) {
        let table = |action: u16| (self.escape() as u16, Some(action * 4 + u16::from(seat)));
        match mv {
            Move::Draw => (DRAW, None),
            Move::Pass => (PASS, None),
            Move::Muggins => (MUGGINS + u16::from(seat), None),
            Move::Play { tile, end, claim } => {
                let end = end.map_or(0, |e| e as u16);
                let code = FIRST_PLAY
                    + (u16::from(tile.index()) * self.ends + end) * self.claims
                    + u16::from(claim.is_some());
                (code, None)
            }
            Move::Resign => table(0),
            Move::TimedOut => table(1),
            Move::Abandon => table(2),
            Move::Forfeit => table(3),
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
    /// A table action ([`Move::is_table_action`]) and the seat it concerns.
    Table {
        seat: u8,
        mv: Move,
    },
}

impl History {
    /// Appends a move in canonical form (as [`Game::check`](super::Game::check) returns it).
    pub(crate) fn push(&mut self, rules: &Rules, seat: u8, mv: Move) {
        let codec = Codec::of(rules);
        let width = codec.width();
        let (code, second) = codec.encode(seat, mv);
        self.push_code(width, code);
        self.len += 1;
        if let Some(second) = second {
            self.push_code(width, second);
            self.tables += 1;
        }
    }

    /// How many codes are written: one a move, two a table action.
    fn codes_written(&self) -> usize {
        self.len as usize + self.tables as usize
    }

    fn push_code(&mut self, width: usize, code: u16) {
        let at = self.codes_written() * width;
        let end = (at + width).div_ceil(8);
        // A code of at most 11 bits, shifted by at most 7, spans at most three bytes.
        let bits = u32::from(code) << (at % 8);
        let first = at / 8;
        if first < self.bits.len() {
            self.bits[first] |= bits as u8;
        } else {
            self.bits.push(bits as u8);
        }
        for k in 1..end - first {
            self.bits.push((bits >> (8 * k)) as u8);
        }
    }

    /// The `i`th code, as written.
    fn code_at(&self, width: usize, i: usize) -> u16 {
        let mut at = i * width;
        let (mut code, mut got) = (0u16, 0);
        while got < width {
            let take = (width - got).min(8 - at % 8);
            let bits = (self.bits[at / 8] >> (at % 8)) & ((1u16 << take) - 1) as u8;
            code |= u16::from(bits) << got;
            got += take;
            at += take;
        }
        code
    }

    /// The bits hold exactly `len` codes, padded with zeros.
    fn check_shape(&self, width: usize) -> Result<(), String> {
        if self.tables > self.len {
            return Err("the move history counts more table actions than moves".into());
        }
        let used = self.codes_written() * width;
        if self.bits.len() != used.div_ceil(8) {
            return Err("the move history has the wrong length".into());
        }
        if used % 8 != 0 && self.bits.last().is_some_and(|&b| b >> (used % 8) != 0) {
            return Err("the move history has stray bits".into());
        }
        Ok(())
    }

    /// How many moves are recorded.
    pub(crate) fn len(&self) -> usize {
        self.len as usize
    }

    /// Every code means a move of these rules for one of `seats` (cheap: no allocation, so
    /// a stored game can be checked on every load). Whether the moves were legal shows only
    /// in a replay.
    pub(crate) fn validate(&self, rules: &Rules, seats: u8) -> Result<(), String> {
        self.each(rules, |code| match code {
            Code::Muggins { seat } | Code::Table { seat, .. } if seat >= seats => {
                Err(format!("a move of seat {seat} of {seats}"))
            }
            _ => Ok(()),
        })
    }

    /// The recorded codes in order; fails at the first code no move of these rules has
    /// (the record is read from storage, so it is not trusted).
    #[cfg(test)]
    pub(crate) fn codes(&self, rules: &Rules) -> Result<Vec<Code>, String> {
        let mut codes = Vec::with_capacity(self.len());
        self.each(rules, |code| {
            codes.push(code);
            Ok(())
        })?;
        Ok(codes)
    }

    /// Reads every move back in order, without allocating; fails at the first code no
    /// move of these rules has, or when the codes do not make exactly `len` moves.
    fn each(
        &self,
        rules: &Rules,
        mut f: impl FnMut(Code) -> Result<(), String>,
    ) -> Result<(), String> {
        let mut cursor = self.cursor(rules)?;
        let mut moves = 0;
        while let Some(read) = self.read(&mut cursor) {
            f(read?)?;
            moves += 1;
        }
        if moves != self.len() {
            return Err("the move history holds another number of moves".into());
        }
        Ok(())
    }

    /// A place to read the moves from, one at a time (see [`History::read`]): how a long
    /// match is replayed without holding all its moves at once.
    pub(crate) fn cursor(&self, rules: &Rules) -> Result<Cursor, String> {
        let codec = Codec::of(rules);
        self.check_shape(codec.width())?;
        Ok(Cursor { codec, at: 0 })
    }

    /// The move at `cursor`, which moves past it; `None` after the last. Fails at a code no
    /// move of these rules has.
    pub(crate) fn read(&self, cursor: &mut Cursor) -> Option<Result<Code, String>> {
        let (codec, written) = (cursor.codec, self.codes_written());
        let width = codec.width();
        if cursor.at >= written {
            return None;
        }
        let code = self.code_at(width, cursor.at);
        cursor.at += 1;
        Some(if u32::from(code) == codec.escape() {
            if cursor.at == written {
                return Some(Err("the move history ends in the middle of a move".into()));
            }
            let second = self.code_at(width, cursor.at);
            cursor.at += 1;
            TABLE_ACTIONS
                .get(usize::from(second / 4))
                .map(|&mv| Code::Table {
                    seat: (second % 4) as u8,
                    mv,
                })
                .ok_or_else(|| format!("table action code {second} means nothing"))
        } else {
            decode(codec, code).ok_or_else(|| format!("move code {code} means nothing"))
        })
    }
}

/// Where [`History::read`] reads next, under the rules it was made for.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cursor {
    codec: Codec,
    /// The next code.
    at: usize,
}

/// A one-code move (not a table action).
fn decode(codec: Codec, code: u16) -> Option<Code> {
    Some(match code {
        DRAW => Code::Draw,
        PASS => Code::Pass,
        c if c < FIRST_PLAY => Code::Muggins {
            seat: (c - MUGGINS) as u8,
        },
        c if u32::from(c) < codec.escape() => {
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
    use crate::Preset;

    fn round_trip(rules: &Rules, seat: u8, mv: Move) -> Code {
        let mut h = History::default();
        h.push(rules, 0, Move::Pass);
        h.push(rules, seat, mv);
        h.push(rules, 0, Move::Draw);
        assert_eq!(h.len(), 3);
        h.validate(rules, 4).unwrap();
        let codes = h.codes(rules).unwrap();
        assert_eq!(codes.len(), 3);
        assert_eq!((codes[0], codes[2]), (Code::Pass, Code::Draw));
        codes[1]
    }

    #[test]
    fn codes_are_as_wide_as_the_rules_need() {
        let width = |preset: Preset, max_pip: u8| {
            let mut rules = preset.rules();
            rules.max_pip = max_pip;
            Codec::of(&rules).width()
        };
        assert_eq!(width(Preset::Classic, 6), 6, "6 + 28 x 2 = 62 codes");
        assert_eq!(width(Preset::AllFives, 6), 7, "6 + 28 x 4 = 118 codes");
        assert_eq!(width(Preset::Muggins, 6), 8, "6 + 28 x 4 x 2 = 230 codes");
        assert_eq!(width(Preset::Muggins, 9), 9);
        assert_eq!(
            width(Preset::Muggins, 15),
            11,
            "6 + 136 x 4 x 2 = 1094 codes"
        );
        let mut h = History::default();
        let rules = Preset::Classic.rules();
        for _ in 0..4 {
            h.push(&rules, 0, Move::Pass);
        }
        assert_eq!(h.bits.len(), 3, "four 6-bit codes in three bytes");
        h.push(&rules, 1, Move::Resign);
        assert_eq!((h.len(), h.bits.len()), (5, 5), "a table action: two codes");
    }

    #[test]
    fn the_escape_never_widens_a_code() {
        for preset in Preset::ALL {
            for max_pip in [6, 9, 12, 15] {
                let mut rules = preset.rules();
                rules.max_pip = max_pip;
                let codec = Codec::of(&rules);
                let plays_only = (u32::BITS - (codec.escape() - 1).leading_zeros()) as usize;
                assert_eq!(codec.width(), plays_only, "{preset:?}, double-{max_pip}");
                assert!(codec.width() >= 4, "room for action x 4 + seat");
            }
        }
    }

    #[test]
    fn every_move_shape_reads_back() {
        for preset in Preset::ALL {
            for max_pip in [6, 9, 12, 15] {
                let mut rules = preset.rules();
                rules.max_pip = max_pip;
                let codec = Codec::of(&rules);
                let last = Tile::try_from(set_size(max_pip) as u8 - 1).unwrap();
                let end = End::ALL[codec.ends as usize - 1];
                let claim = rules.muggins.then_some(10);
                assert_eq!(round_trip(&rules, 1, Move::Draw), Code::Draw);
                assert_eq!(round_trip(&rules, 1, Move::Pass), Code::Pass);
                assert_eq!(
                    round_trip(&rules, 3, Move::Muggins),
                    Code::Muggins { seat: 3 }
                );
                for mv in TABLE_ACTIONS {
                    for seat in 0..4 {
                        assert_eq!(round_trip(&rules, seat, mv), Code::Table { seat, mv });
                    }
                }
                let play = Move::Play {
                    tile: last,
                    end: Some(end),
                    claim,
                };
                assert_eq!(
                    round_trip(&rules, 0, play),
                    Code::Play {
                        tile: last,
                        end,
                        claimed: claim.is_some()
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
    }

    #[test]
    fn a_damaged_record_is_refused_not_misread() {
        let rules = Preset::Classic.rules();
        let mut h = History::default();
        h.push(&rules, 0, Move::Pass);
        h.push(&rules, 0, Move::Pass);
        assert!(h.validate(&rules, 2).is_ok());
        let mut cut = h.clone();
        cut.bits.pop();
        assert!(cut.validate(&rules, 2).is_err() && cut.codes(&rules).is_err());
        let mut stray = h.clone();
        stray.bits[1] |= 0x80;
        assert!(
            stray.validate(&rules, 2).is_err(),
            "bits past the last code"
        );
        let mut nothing = h.clone();
        nothing.bits[0] = 63; // 62 codes in a classic game: 0 to 61
        assert!(nothing.validate(&rules, 2).is_err());
        let mut muggins = History::default();
        muggins.push(&rules, 3, Move::Muggins);
        assert!(muggins.validate(&rules, 2).is_err(), "seat 3 of 2");
        let mut resign = History::default();
        resign.push(&rules, 2, Move::Resign);
        assert!(resign.validate(&rules, 3).is_ok());
        assert!(resign.validate(&rules, 2).is_err(), "seat 2 of 2");
        // The escape as the last code, its second code cut off.
        let mut cut = History::default();
        cut.push(&rules, 0, Move::Pass);
        cut.push(&rules, 0, Move::Pass);
        cut.push(&rules, 0, Move::Resign); // 62, then 0 x 4 + 0 = 0
        cut.tables = 0;
        assert_eq!(
            cut.validate(&rules, 2),
            Err("the move history ends in the middle of a move".into())
        );
        assert!(cut.codes(&rules).is_err());
        // A second code past the four actions.
        let mut action = History::default();
        action.push(&rules, 3, Move::Forfeit); // 3 x 4 + 3 = 15
        action.bits[1] |= 0x04; // bit 10: the second code reads 31, action 7
        assert_eq!(
            action.validate(&rules, 4),
            Err("table action code 31 means nothing".into())
        );
        // More table actions counted than moves.
        let mut counted = History::default();
        counted.push(&rules, 0, Move::Abandon);
        counted.tables = 2;
        assert!(counted.validate(&rules, 4).is_err());
    }
}
