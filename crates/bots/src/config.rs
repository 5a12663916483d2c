//! The master's configuration: the search's shape and evaluation, and the measured
//! defaults each kind of table gets ([`Config::for_table`]). Its own file, so that the
//! searches it configures ([`super::tree`], [`super::alphabeta`]) and the master that runs
//! them all depend on it and not on each other.

use super::playout::{Policy, Race};
use domino_engine::rules::{Rules, Scoring};

/// The search's shape and evaluation (the budget is given per decision).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// [`Method::AlphaBeta`]: plies searched after the root (a node with one move does not
    /// count) before a playout gives the leaf's value.
    pub depth: u8,
    /// [`Method::AlphaBeta`]: moves searched at a node below the root, the best by the
    /// greedy order first.
    pub beam: u8,
    /// Tiles left in all hands, at most, for the search to go to the end of the round with
    /// every move, once no tile can be drawn any more.
    pub endgame: u8,
    /// Points added for a line that wins the match (taken off for one that loses it).
    pub match_bonus: f64,
    /// How the worlds are searched before the exact endgame.
    pub method: Method,
    /// The tree search's UCB exploration constant (outcomes in units of 50 points).
    pub exploration: f64,
    /// How the leaves are played to the end of the round.
    pub playout: Policy,
    /// How much less likely a world is for each point its other seats would have left on
    /// the table ([`Inference`](super::inference::Inference)): a sampled world is kept with probability
    /// `exp(-inference × points)`. 0: every world consistent with the public facts alike.
    /// Measured at 100,000 moves over 1,000 all_fives matches against the expert (paired
    /// with 0 on the same deals, BENCHMARKS' fourth pass): 0.1 won 3.7% more (±3.5), 0.3
    /// 2.7%, 1.0 3.6% (over 471); where no play scores there is no evidence but
    /// [`Config::shed`]'s.
    pub inference: f64,
    /// Where no play scores, the other seats' plays are evidence by the pips they shed
    /// ([`Judge::Weight`](super::inference::Judge::Weight): a seat that laid a lighter
    /// tile than it could have probably did not hold the heavier one), under
    /// [`Config::inference`]. See [`SHED`] and [`SHED_SHARPNESS`].
    pub shed: bool,
    /// The tree's playouts value the scores a round leaves for the rest of the match
    /// ([`super::playout::match_equity`]: the chance to win it from there, in the points of
    /// `match_bonus`), not only the points the round made. `None`: the round's points
    /// alone. The exact endgame values the round's points alone.
    pub equity: Option<Race>,
    /// With [`Config::equity`], how much the round's own points count beside what the
    /// scores are worth for the match (1: the points and the equity added; 0: the match
    /// alone, each point counting only by how it moves the chance to win).
    pub points: f64,
    /// The tree's root tries every candidate in every world (their values paired by
    /// world, the best mean played) instead of choosing one a world by UCB: the
    /// candidates are compared on the same hidden hands, whose spread under fives is
    /// larger than the difference between two plays. See [`PAIRED`].
    pub paired: bool,
}

/// How the master searches before the exact endgame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// One information-set tree over all the worlds ([`super::tree`]).
    Tree,
    /// An alpha-beta search in each world, its values summed over the worlds.
    AlphaBeta,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            depth: 2,
            beam: 3,
            endgame: 10,
            match_bonus: 50.0,
            method: Method::Tree,
            exploration: 0.7,
            playout: Policy::Defensive {
                weight: 1.0,
                block: 0.0,
            },
            inference: 0.1,
            shed: false,
            equity: None,
            points: 1.0,
            paired: false,
        }
    }
}

/// At a table of two where no play scores before the round ends (all but fives scoring),
/// the playouts' points for a play that leaves the next seat without a play: any positive
/// bonus orders the plays the same way there, blocking first, then greedy's. Measured at
/// 100,000 moves, 400 matches against the expert on the same deals (BENCHMARKS.md): in
/// block 60.0% with it, 55.5% with greedy playouts; under fives 53.5% with it, 56.0%
/// without; in block with four seats in teams 56.2% with it, 62.0% without (there the
/// next seat's block is often the partner's too). So only the first has it.
pub const BLOCK_BONUS: f64 = 10.0;

/// The race the master's playouts see in a match of two seats under fives scoring
/// ([`Config::equity`]). Measured at 100,000 moves over 2,000 all_fives matches against
/// the expert, paired with the round's points alone on the same deals: +3.2% ± 2.6 wins;
/// the 1,000,000-move bar run showed +0.5% ± 3.7 (BENCHMARKS' fifth pass). Not yet
/// measured elsewhere, so not used elsewhere.
pub const RACE: Race = Race {
    per_round: 30.0,
    spread: 35.0,
};

/// Whether the others' plays are evidence by the weight they shed ([`Config::shed`]) at
/// two seats where no play scores. Measured at 100,000 moves over 2,000 block matches
/// against the expert, paired by deal with no evidence there: +1.9% ± 2.1 wins, +4.6 ± 3.5
/// points a deal (BENCHMARKS' eleventh pass); the root paired (-0.7% ± 2.1) and a race
/// fitted to block (+0.9% ± 2.1) on the same deals showed nothing. Used at every table of
/// two where no play scores (draw, classic and penalty too, not measured there); not at
/// four seats, where a partner's light tile may be play for the team.
pub const SHED: bool = true;

/// [`Config::inference`] where [`SHED`]'s evidence is the only evidence: sharper than the
/// 0.1 a point missed under fives, which measured too soft for pips. Measured at 100,000
/// moves over 2,000 block matches against the expert, paired by deal with 0.1: 0.05 -1.8%
/// ± 2.1 wins, 0.3 +3.2% ± 2.1, 1.0 +3.4% ± 2.2; at 1,000,000 moves over the 1,000 matches
/// of the block bar, 0.3 paired with 0.1: +5.0% ± 2.6 wins, 61.6% in all (BENCHMARKS'
/// eleventh and twelfth passes).
pub const SHED_SHARPNESS: f64 = 0.3;

/// Whether the tree's root is [`Config::paired`] at two seats under fives scoring.
/// Measured at 100,000 moves over 2,000 all_fives matches against the expert on each of
/// two seeds, paired by deal with the root by UCB: +2.2% ± 2.5 and +1.5% ± 2.6 wins,
/// +1.9% ± 1.8 over both (BENCHMARKS' ninth pass). Not yet measured elsewhere.
pub const PAIRED: bool = true;

impl Config {
    /// The master's configuration for a table of `seats` under `rules`:
    /// [`Config::default`], with the playouts' [`BLOCK_BONUS`] and the [`SHED`] evidence
    /// (at [`SHED_SHARPNESS`]) at two seats where no play scores, and the match's [`RACE`]
    /// and the [`PAIRED`] root at two seats under fives scoring.
    pub fn for_table(rules: &Rules, seats: u8) -> Config {
        let mut config = Config::default();
        if rules.scoring == Scoring::Fives && seats == 2 {
            config.equity = Some(RACE);
            config.paired = PAIRED;
        }
        if rules.scoring != Scoring::Fives && seats == 2 {
            config.shed = SHED;
            config.inference = SHED_SHARPNESS;
            if let Policy::Defensive { block, .. } = &mut config.playout {
                *block = BLOCK_BONUS;
            }
        }
        config
    }
}
