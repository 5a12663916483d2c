//! The rules engine: every game of `docs/rules.md`, exact and impossible to cheat.
//!
//! Pure: no I/O, no async, no clock, no global RNG. It knows nothing of HTTP or Redis; the
//! service stores a [`Game`] through its serde form (inside the service's record) and asks
//! it for [`Projection`]s.
//!
//! - [`tile`]: tiles (one byte) and tile sets (bitsets, so move generation is a few ANDs).
//! - [`rules`]: the rule set, overrides and validation; [`preset`]: the six presets.
//! - [`layout`]: the lead, the arms, the spinner and the fives count.
//! - [`deal`]: seeds and deals; each round draws from its own `(seed, round)` stream.
//! - [`moves`], [`event`], [`error`]: what a seat asks, what it causes, why it is refused.
//! - [`game`]: the match — applying a move, turns and results; [`round`] is a round's
//!   state, [`rounds`] deals a round, picks its leader and scores its end, [`legal`] generates and checks the moves,
//!   [`invariants`] says what every stored game satisfies.
//! - [`history`]: the compact record of a match's moves (6 bits each in a classic game).
//! - [`replay`]: a match replayed from its record one move at a time.
//! - [`scoring`]: round awards (pips, fives, penalty; ties; teams; the boneyard).
//! - [`table`]: resigning, running out of time, abandoned seats (the service's clock
//!   decides; the engine is told by a move).
//! - [`projection`]: what one seat or a spectator may know.
//! - [`world`]: a bot's made-up world to search from (`Game::determinise`): one round, no record.
//!
//! # Decisions docs/rules.md leaves to the engine
//! - **Blocked** is detected as soon as no seat can play and nobody can draw, rather than
//!   after every seat has passed once more: the outcome is the same and clients need not
//!   send passes that change nothing. A seat that cannot play but another can must pass.
//! - **Stuck** (`when_stuck = end_round`): when the table is blocked as well the round is
//!   reported `blocked`; otherwise `stuck`. Under `draw = one`, a seat that drew its one
//!   tile and cannot play passes (it is not stuck, even when its draw left only the
//!   reserve: its turn began with a tile to draw).
//! - **Start tile**: every round of a `start_tile` game begins with one (the first
//!   non-double from the top of the shuffled boneyard, which is as random as any); the
//!   `next_leader` rule picks who plays onto it.
//! - **Draw lots** uses the total "heaviest" order of docs/rules.md, so lots never tie.
//! - **`highest_double`** with no double dealt anywhere: the heaviest tile leads, and must
//!   be the lead (seed 002). `heaviest_tile` likewise forces that tile.
//! - **Muggins**: legal moves list each scoring play twice, first with the exact claim,
//!   then without (not claiming is a legal, if poor, choice: its listed points are 0).
//!   Unclaimed points stay open until the next move of any seat, even across the end of
//!   a round. `claim: 0` on a play that scores nothing is accepted as "no claim", and
//!   such a play is credited (there was nothing to lose). A claim under other rules is
//!   refused.
//! - **Open ends** say whether they count both halves ([`layout::Tips::counts_double`]):
//!   a lead double's uncovered side does not under `lead_double_count = one`. A lone lead
//!   counts its pips once, whatever its two ends show.
//! - **An explicit first deal** still draws the shuffle it replaces from the round's
//!   stream, so a random leader is the one a seeded game with that deal would get: an
//!   export's first deal and seed rebuild the game itself.
//! - **The end of a play** may be left out when exactly one open end fits; a tile that fits
//!   two ends needs its end named, even when the two placements look alike.
//! - **The target** is checked after every award; when a play's count reaches it, the
//!   match ends at once and that round is not scored further. Equal best totals at the end
//!   are a drawn match, under target and rounds alike; under penalty scoring the lowest
//!   total is best, and a `target` ends the match when any side's penalty reaches it.
//! - **Known voids**: a pass shows the seat holds none of the open numbers. A draw leaves
//!   nothing known (the tile drawn is hidden), but a forced one (not under
//!   `draw_anytime`) shows the hand drawn to held none of the open numbers, and a play
//!   that can only be the tile drawn makes what was known of that hand true again (see
//!   [`Game::known_missing`]).
//! - **Round winner** under teams is a team index, like the scores.
//! - See [`scoring`] for blocked-round awards with three or four sides.
//! - **Table actions** ([`table`]): resigning, a timeout, abandoning a seat and a forfeit
//!   on time are moves, recorded and replayed, never listed as legal. Like every move they
//!   end a muggins opportunity left open. An abandoned seat's ordinary moves are taken as
//!   any seat's (a bot makes them); an early end needs two sides and leaves the scores
//!   as they were.

pub mod deal;
pub mod error;
pub mod event;
pub mod game;
pub mod history;
mod invariants;
pub mod layout;
mod legal;
pub mod moves;
pub mod preset;
pub mod projection;
pub mod replay;
mod round;
mod rounds;
pub mod rules;
pub mod scoring;
pub mod table;
pub mod tile;
mod world;

pub use deal::{Deal, Seed};
pub use error::MoveError;
pub use event::{EndReason, Event, MatchEnd, Outcome, RoundResult};
pub use game::{Game, Unclaimed};
pub use layout::{End, Layout};
pub use moves::Move;
pub use preset::Preset;
pub use projection::{LegalMove, Projection};
pub use replay::Replay;
pub use rules::{Rules, RulesError, RulesPatch};
pub use tile::{Tile, TileSet};
