//! Scenario tests of the rules engine: one `#[test]` per file in `tests/scenarios/`.
//!
//! A scenario is a JSON file (see `tests/scenarios/README.md` for the full format):
//!
//! ```json
//! {
//!   "about": "what the scenario shows",
//!   "preset": "all_fives", "rules": { "target": 15 }, "seats": 2, "seed": "optional text",
//!   "deal": { "hands": [["5-5", "..."], ["..."]], "boneyard": ["6-6", "..."] },
//!   "steps": [
//!     { "why": "5-5 lead counts 10", "seat": 0, "move": "play 5-5", "count": 10, "points": 10 }
//!   ]
//! }
//! ```
//!
//! Every number in a scenario is worked out by hand from RULES.md (the `why` fields show
//! the arithmetic); the runner only compares. Besides the expectations a step names, the
//! runner checks on every step that:
//! - a refused move changes nothing (the whole game compares equal) and is not listed as
//!   legal; an accepted move, in the canonical form `Game::check` gives it, is listed;
//! - no round or match ends unless the step expects it (`round_ended`, `match_ended`);
//! - a round's result adds its awards to the scores, tiles are conserved, a start tile is
//!   never a double, every seat's projection lists the same legal moves as the game, and
//!   a finished match's outcome agrees with its scores;
//! - the game is reproducible: built twice from the same input it is the same game, and
//!   replaying its history from the start gives the final game again.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use domino_server::engine::rules::Scoring;
use domino_server::engine::{
    Deal, End, EndReason, Event, Game, MatchEnd, Move, Outcome, Preset, RoundResult, Rules,
    RulesPatch, Seed, Tile, TileSet,
};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

macro_rules! scenarios {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                run(stringify!($name));
            }
        )*
        /// Every scenario file must be listed above, so none is silently skipped.
        const LISTED: &[&str] = &[$(stringify!($name)),*];
    };
}

scenarios! {
    all_fives_spinner,
    all_fives_lone_double,
    all_fives_spinner_in_arm,
    all_fives_rounding_down,
    all_fives_rounding_up,
    all_fives_teams,
    all_fives_target_mid_round,
    all_fives_blocked,
    all_fives_double_nine,
    muggins_claims,
    muggins_draw_anytime,
    muggins_across_round_end,
    muggins_takes_the_match,
    muggins_teams,
    classic_blocked_difference,
    classic_blocked_tie_lowest_tile,
    opening_highest_double,
    opening_heaviest_when_no_double,
    opening_heaviest_tile,
    opening_draw_lots,
    opening_random,
    block_three_seats_split,
    block_teams,
    draw_until_playable,
    draw_one,
    draw_one_stuck_after_a_draw,
    draw_boneyard_reserve,
    known_missing_after_draws,
    known_missing_draw_one,
    penalty_start_tile_and_stuck,
    penalty_four_rounds,
    penalty_drawn_match,
    boneyard_to_winner,
    double_value_one_half,
    double_blank_fourteen,
    muggins_blocked_others,
    blocked_tie_none,
    double_twelve_default_hand,
    double_fifteen_default_hand,
    table_resign_two_seats,
    table_resign_three_seats,
    table_forfeit_teams,
}

#[test]
fn every_scenario_file_is_listed() {
    let dir = scenario_dir();
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| {
            let path = e.ok()?.path();
            (path.extension()? == "json").then(|| path.file_stem()?.to_str().map(str::to_owned))?
        })
        .collect();
    files.sort();
    let mut listed: Vec<String> = LISTED.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(
        files, listed,
        "tests/scenarios/*.json and the scenarios! list differ"
    );
}

// ----- the format -----

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Scenario {
    /// Free text (a string or a list of lines): what the scenario shows.
    #[serde(default)]
    #[allow(dead_code)]
    about: Value,
    preset: Preset,
    #[serde(default)]
    rules: RulesPatch,
    seats: u8,
    /// Seed text for the rounds after the explicit first deal (default: the file name).
    seed: Option<String>,
    deal: Option<DealSpec>,
    steps: Vec<Step>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DealSpec {
    hands: Vec<Vec<String>>,
    /// Top first. A last entry `"..."` stands for every tile not named elsewhere, in the
    /// set's order (0-0, 0-1, 1-1, 0-2, 1-2, 2-2, 0-3, ...).
    boneyard: Vec<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum SeatSpec {
    Seat(u8),
    /// `"turn"`: the seat to move.
    Turn(String),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Refused {
    Yes(bool),
    /// A fragment of the error text.
    Because(String),
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Step {
    /// The hand-worked reasoning behind the step's numbers (a string or a list of lines).
    #[serde(default)]
    #[allow(dead_code)]
    why: Value,
    seat: Option<SeatSpec>,
    /// `play a-b [left|right|up|down] [claim N]`, `draw`, `pass`, `muggins`, or `auto` (the
    /// first legal move of the seat to move that is not a muggins call). Without a move
    /// the step only checks the state.
    #[serde(rename = "move")]
    mv: Option<String>,
    /// Make the move this many times; the expectations apply after the last.
    times: Option<u32>,
    /// With `auto`: keep moving until `"round_end"` or `"match_end"`.
    until: Option<String>,

    refused: Option<Refused>,
    /// What the play counted under fives (its `Played` event).
    points: Option<u16>,
    credited: Option<bool>,
    /// The tile the draw took.
    drew: Option<String>,
    /// The count of the open ends after the step.
    count: Option<u32>,
    scores: Option<Vec<i32>>,
    /// The seat to move; `null` once the match is over.
    #[serde(default, deserialize_with = "explicit")]
    turn: Option<Option<u8>>,
    leader: Option<u8>,
    round: Option<u16>,
    rounds_done: Option<u16>,
    boneyard_count: Option<usize>,
    /// The exact legal moves of the seat to move (any order).
    legal: Option<Vec<String>>,
    /// The exact legal moves of the seats named (keys are seat numbers).
    legal_for: Option<BTreeMap<u8, Vec<String>>>,
    /// The seat to move leads and may lead with any tile of its hand.
    leads_any_tile: Option<bool>,
    /// The round was opened by `highest_double`: the seat to move holds the highest double
    /// of all hands (the heaviest tile when no double is dealt) and must lead it.
    opening_lead: Option<bool>,
    #[serde(default, deserialize_with = "explicit")]
    must_lead: Option<Option<String>>,
    #[serde(default, deserialize_with = "explicit")]
    start_tile: Option<Option<String>>,
    /// The open ends and their numbers, exactly (keys left, right, up, down).
    ends: Option<BTreeMap<String, u8>>,
    /// Hands of the seats named, exactly (any order).
    hands: Option<BTreeMap<u8, Vec<String>>>,
    /// The numbers each seat named is publicly known not to hold, exactly (any order).
    known_missing: Option<BTreeMap<u8, Vec<u8>>>,
    #[serde(default, deserialize_with = "explicit")]
    unclaimed: Option<Option<UnclaimedSpec>>,
    round_ended: Option<RoundEndedSpec>,
    match_ended: Option<MatchEndedSpec>,
    /// The seats abandoned after the step, exactly (any order).
    abandoned: Option<Vec<u8>>,
    /// What the move caused, exactly and in order, in short form (`event_text`):
    /// `played 0`, `timed_out 1`, `abandoned 2`, `match_ended resigned`, ...
    events: Option<Vec<String>>,
}

#[derive(Deserialize, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
struct UnclaimedSpec {
    seat: u8,
    points: u16,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RoundEndedSpec {
    /// `domino`, `blocked` or `stuck`.
    reason: Option<String>,
    /// The winning side (seat, or team); `null` for none.
    #[serde(default, deserialize_with = "explicit")]
    winner: Option<Option<u8>>,
    #[serde(default, deserialize_with = "explicit")]
    went_out: Option<Option<u8>>,
    /// Per side.
    awards: Option<Vec<i32>>,
    /// Per side, after the awards.
    scores: Option<Vec<i32>>,
    /// The hands as revealed (keys are seat numbers).
    hands: Option<BTreeMap<u8, Vec<String>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MatchEndedSpec {
    /// The winning side, or `null` for a drawn match; left out: not checked (the runner
    /// still checks the outcome agrees with the scores).
    #[serde(default, deserialize_with = "explicit")]
    winner: Option<Option<u8>>,
    /// `target`, `rounds`, `timeout` or `resigned`.
    reason: Option<String>,
}

/// An explicit `null` is `Some(None)`; a missing field (with `default`) is `None`.
fn explicit<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

// ----- running -----

fn scenario_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("scenarios")
}

fn tile(s: &str) -> Tile {
    s.parse()
        .unwrap_or_else(|_| panic!("\"{s}\" is not a tile"))
}

fn tiles(list: &[String]) -> Vec<Tile> {
    list.iter().map(|s| tile(s)).collect()
}

fn parse_move(text: &str) -> Result<Move, String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    match words[..] {
        ["draw"] => Ok(Move::Draw),
        ["pass"] => Ok(Move::Pass),
        ["muggins"] => Ok(Move::Muggins),
        ["resign"] => Ok(Move::Resign),
        ["timed_out"] => Ok(Move::TimedOut),
        ["abandon"] => Ok(Move::Abandon),
        ["forfeit"] => Ok(Move::Forfeit),
        ["play", t, ref rest @ ..] => {
            let tile: Tile = t.parse().map_err(|_| format!("\"{t}\" is not a tile"))?;
            let (end, rest) = match rest {
                [e, rest @ ..] if *e != "claim" => (
                    Some(
                        e.parse::<End>()
                            .map_err(|_| format!("\"{e}\" is not an end"))?,
                    ),
                    rest,
                ),
                _ => (None, rest),
            };
            let claim = match rest {
                [] => None,
                ["claim", n] => Some(
                    n.parse::<u16>()
                        .map_err(|_| format!("\"{n}\" is not a claim"))?,
                ),
                _ => return Err(format!("cannot read \"{text}\"")),
            };
            Ok(Move::Play { tile, end, claim })
        }
        _ => Err(format!("cannot read move \"{text}\"")),
    }
}

fn move_text(mv: Move) -> String {
    match mv {
        Move::Draw => "draw".into(),
        Move::Pass => "pass".into(),
        Move::Muggins => "muggins".into(),
        Move::Resign => "resign".into(),
        Move::TimedOut => "timed_out".into(),
        Move::Abandon => "abandon".into(),
        Move::Forfeit => "forfeit".into(),
        Move::Play { tile, end, claim } => {
            let mut s = format!("play {tile}");
            if let Some(e) = end {
                write!(s, " {}", e.as_str()).unwrap();
            }
            if let Some(c) = claim {
                write!(s, " claim {c}").unwrap();
            }
            s
        }
    }
}

/// An event in short form: its kind, and the seat it concerns (the reason, for the end of
/// the match).
fn event_text(e: &Event) -> String {
    match *e {
        Event::RoundStarted { .. } => "round_started".into(),
        Event::Played { seat, .. } => format!("played {seat}"),
        Event::Drew { seat, .. } => format!("drew {seat}"),
        Event::Passed { seat } => format!("passed {seat}"),
        Event::MugginsTaken { seat, .. } => format!("muggins_taken {seat}"),
        Event::RoundEnded(_) => "round_ended".into(),
        Event::MatchEnded { reason, .. } => format!("match_ended {}", reason.as_str()),
        Event::TimedOut { seat } => format!("timed_out {seat}"),
        Event::Abandoned { seat } => format!("abandoned {seat}"),
        Event::Resigned { seat } => format!("resigned {seat}"),
    }
}

/// The numbers of a pip mask, lowest first.
fn pips(mask: u16) -> Vec<u8> {
    (0..16).filter(|p| mask & (1 << p) != 0).collect()
}

fn sorted_texts(moves: impl IntoIterator<Item = Move>) -> Vec<String> {
    let mut v: Vec<String> = moves.into_iter().map(move_text).collect();
    v.sort();
    v
}

fn sorted_tiles(list: impl IntoIterator<Item = Tile>) -> Vec<String> {
    let mut v: Vec<Tile> = list.into_iter().collect();
    v.sort();
    v.into_iter().map(|t| t.to_string()).collect()
}

fn build_deal(spec: &DealSpec, rules: &Rules) -> Deal {
    let hands: Vec<Vec<Tile>> = spec.hands.iter().map(|h| tiles(h)).collect();
    let mut boneyard = Vec::new();
    for (i, s) in spec.boneyard.iter().enumerate() {
        if s == "..." {
            assert_eq!(
                i + 1,
                spec.boneyard.len(),
                "\"...\" must be the last entry of the boneyard"
            );
            let named: TileSet = hands.iter().flatten().chain(&boneyard).copied().collect();
            boneyard.extend(Tile::all(rules.max_pip).filter(|t| !named.contains(*t)));
        } else {
            boneyard.push(tile(s));
        }
    }
    Deal { hands, boneyard }
}

/// The state in a few lines, for failure messages.
fn describe(game: &Game) -> String {
    let mut s = String::new();
    let ends: Vec<String> = game
        .layout()
        .tips()
        .open_ends()
        .map(|(e, v)| format!("{} {v}", e.as_str()))
        .collect();
    let view = game.project(None);
    writeln!(
        s,
        "  round {} (leader {}), turn {:?}, scores {:?}, count {}, open ends [{}], boneyard {}, unclaimed {:?}",
        game.round_number(),
        game.leader(),
        game.turn(),
        game.scores(),
        view.count,
        ends.join(", "),
        game.boneyard_count(),
        game.unclaimed()
    )
    .unwrap();
    for seat in 0..game.seats() {
        writeln!(
            s,
            "  seat {seat}: hand {:?}, legal [{}]",
            game.hand(seat),
            sorted_texts(game.legal_moves(seat)).join(", ")
        )
        .unwrap();
    }
    if let Some(r) = game.last_round() {
        writeln!(s, "  last round: {r:?}").unwrap();
    }
    s
}

struct Runner<'a> {
    name: &'a str,
    game: Game,
    failures: Vec<String>,
    step: usize,
    label: String,
}

impl Runner<'_> {
    fn fail(&mut self, what: String) {
        self.failures
            .push(format!("step {} ({}): {what}", self.step, self.label));
    }

    fn expect_eq<T: PartialEq + std::fmt::Debug>(&mut self, what: &str, got: T, want: T) {
        if got != want {
            self.fail(format!("{what}: expected {want:?}, got {got:?}"));
        }
    }

    fn seat_of(&self, spec: &Option<SeatSpec>) -> u8 {
        match spec {
            Some(SeatSpec::Seat(s)) => *s,
            Some(SeatSpec::Turn(t)) if t == "turn" => {
                self.game.turn().expect("\"turn\" after the match ended")
            }
            Some(SeatSpec::Turn(t)) => panic!(
                "{}: seat \"{t}\" is neither a number nor \"turn\"",
                self.name
            ),
            None => panic!("{}: step {} has a move but no seat", self.name, self.step),
        }
    }

    /// Applies one move, checking the generic rules of refusal and acceptance. Returns the
    /// events, or the error text when refused.
    fn apply(&mut self, seat: u8, mv: Move) -> Result<Vec<Event>, String> {
        let before = self.game.clone();
        let listed = self.game.legal_moves(seat);
        match self.game.check(seat, mv) {
            // The table actions are never listed: they are the server's, or a seat's own
            // request, never a choice offered to a client or a bot.
            _ if listed.iter().any(|m| m.is_table_action()) => {
                self.fail("a table action is listed as legal".into())
            }
            Ok(canonical) if mv.is_table_action() => {
                self.expect_eq("a table action's canonical form", canonical, mv)
            }
            Ok(canonical) if !listed.contains(&canonical) => self.fail(format!(
                "check accepts {} as {}, which legal_moves does not list",
                move_text(mv),
                move_text(canonical)
            )),
            Ok(_) => {}
            Err(_) if listed.contains(&mv) => {
                self.fail(format!("{} is listed as legal but refused", move_text(mv)))
            }
            Err(_) => {}
        }
        match self.game.play(seat, mv) {
            Ok(events) => {
                self.check_round_sums(&before, &events);
                Ok(events)
            }
            Err(e) => {
                if self.game != before {
                    self.fail(format!(
                        "the refused move {} changed the game",
                        move_text(mv)
                    ));
                }
                Err(e.to_string())
            }
        }
    }

    /// A round's result must add its awards (and the points of the move that ended it) to
    /// the scores before the move.
    fn check_round_sums(&mut self, before: &Game, events: &[Event]) {
        let rules = *before.rules();
        let mut scores = [0i32; 4];
        scores[..before.scores().len()].copy_from_slice(before.scores());
        for event in events {
            match *event {
                Event::Played {
                    seat,
                    points,
                    credited: true,
                    ..
                } => scores[rules.side_of(seat) as usize] += points as i32,
                Event::MugginsTaken { seat, points, .. } => {
                    scores[rules.side_of(seat) as usize] += points as i32
                }
                Event::RoundEnded(r) => {
                    for (s, a) in scores.iter_mut().zip(r.awards) {
                        *s += a;
                    }
                    if scores != r.scores {
                        self.fail(format!(
                            "round {}: scores before {:?} + points + awards {:?} = {scores:?}, but the result says {:?}",
                            r.number,
                            before.scores(),
                            r.awards,
                            r.scores
                        ));
                    }
                }
                _ => {}
            }
        }
    }

    /// Checks that hold after every step.
    fn check_always(&mut self) {
        if let Err(e) = self.game.check_invariants() {
            self.fail(format!("invariants: {e}"));
        }
        let view = self.game.project(None);
        if let Some(t) = view.start_tile
            && t.is_double()
        {
            self.fail(format!("the start tile {t} is a double"));
        }
        for seat in 0..self.game.seats() {
            let projected: Vec<Move> = self
                .game
                .project(Some(seat))
                .legal_moves
                .iter()
                .map(|l| l.mv)
                .collect();
            if projected != self.game.legal_moves(seat) {
                self.fail(format!(
                    "seat {seat}'s projection lists other legal moves than the game"
                ));
            }
        }
        let scores = self.game.scores().to_vec();
        let rules = *self.game.rules();
        let expected = {
            let penalty = rules.scoring == Scoring::Penalty;
            let reached = rules
                .target
                .is_some_and(|t| scores.iter().any(|&s| s >= t as i32));
            let all_rounds = rules.rounds.is_some_and(|r| self.game.rounds_done() >= r);
            (reached || all_rounds).then(|| {
                let best = if penalty {
                    *scores.iter().min().unwrap()
                } else {
                    *scores.iter().max().unwrap()
                };
                let best_sides: Vec<usize> =
                    (0..scores.len()).filter(|&s| scores[s] == best).collect();
                match best_sides[..] {
                    [side] => Outcome::Won { side: side as u8 },
                    _ => Outcome::Drawn,
                }
            })
        };
        // A resignation or a forfeit on time decides the match whatever the scores (the
        // step that ends it names the winner).
        if !matches!(
            self.game.match_end(),
            Some(MatchEnd::Resigned | MatchEnd::Timeout)
        ) {
            self.expect_eq("the outcome from the scores", self.game.outcome(), expected);
        }
        let end = match self.game.match_end() {
            None => None,
            Some(MatchEnd::Resigned | MatchEnd::Timeout) => self.game.match_end(),
            Some(_)
                if rules
                    .target
                    .is_some_and(|t| scores.iter().any(|&s| s >= t as i32)) =>
            {
                Some(MatchEnd::Target)
            }
            Some(_) => Some(MatchEnd::Rounds),
        };
        self.expect_eq("why the match ended", self.game.match_end(), end);
        self.expect_eq(
            "a match that ended says why",
            self.game.match_end().is_some(),
            self.game.outcome().is_some(),
        );
        if self.game.outcome().is_some() {
            self.expect_eq("turn once the match is over", self.game.turn(), None);
        }
        for seat in 0..self.game.seats() {
            let held = self.game.hand(seat).with_any_pip(view.voids[seat as usize]);
            if !held.is_empty() {
                self.fail(format!(
                    "seat {seat} is known not to hold {:?}, but holds {held:?}",
                    pips(view.voids[seat as usize])
                ));
            }
        }
    }

    fn check_legal(&mut self, seat: u8, want: &[String]) {
        let want: Vec<Move> = want
            .iter()
            .map(|m| {
                parse_move(m).unwrap_or_else(|e| panic!("{}: step {}: {e}", self.name, self.step))
            })
            .collect();
        let got = sorted_texts(self.game.legal_moves(seat));
        let want = sorted_texts(want);
        if got != want {
            self.fail(format!(
                "legal moves of seat {seat}: expected [{}], got [{}]",
                want.join(", "),
                got.join(", ")
            ));
        }
    }

    fn check_expectations(&mut self, step: &Step, events: &[Event]) {
        let sides = self.game.scores().len();
        // events
        let played = events.iter().find_map(|e| match *e {
            Event::Played {
                points, credited, ..
            } => Some((points, credited)),
            _ => None,
        });
        if let Some(p) = step.points {
            match played {
                Some((points, _)) => self.expect_eq("points of the play", points, p),
                None => self.fail("expected a play (points), none was made".into()),
            }
        }
        if let Some(c) = step.credited {
            self.expect_eq("points credited", played.map(|p| p.1), Some(c));
        }
        if let Some(d) = &step.drew {
            let drawn = events.iter().find_map(|e| match *e {
                Event::Drew { tile, .. } => tile,
                _ => None,
            });
            self.expect_eq("tile drawn", drawn, Some(tile(d)));
        }
        let ended: Option<RoundResult> = events.iter().find_map(|e| match *e {
            Event::RoundEnded(r) => Some(r),
            _ => None,
        });
        match (&step.round_ended, ended) {
            (None, Some(r)) => self.fail(format!("round {} ended unexpectedly: {r:?}", r.number)),
            (Some(_), None) => self.fail("expected the round to end; it did not".into()),
            (Some(spec), Some(r)) => {
                if let Some(reason) = &spec.reason {
                    self.expect_eq("round end reason", r.reason.as_str(), reason.as_str());
                }
                if let Some(w) = spec.winner {
                    self.expect_eq("round winner", r.winner, w);
                }
                if let Some(w) = spec.went_out {
                    self.expect_eq("seat that went out", r.went_out, w);
                }
                if let Some(a) = &spec.awards {
                    self.expect_eq("round awards", r.awards[..sides].to_vec(), a.clone());
                }
                if let Some(s) = &spec.scores {
                    self.expect_eq(
                        "scores after the round",
                        r.scores[..sides].to_vec(),
                        s.clone(),
                    );
                }
                if let Some(hands) = &spec.hands {
                    for (&seat, h) in hands {
                        let got = sorted_tiles(r.hands[seat as usize].iter());
                        self.expect_eq(
                            &format!("revealed hand of seat {seat}"),
                            got,
                            sorted_tiles(tiles(h)),
                        );
                    }
                }
                if r.reason == EndReason::Domino && r.went_out.is_none() {
                    self.fail("a domino without a seat that went out".into());
                }
            }
            (None, None) => {}
        }
        let match_end = events.iter().find_map(|e| match *e {
            Event::MatchEnded {
                outcome, reason, ..
            } => Some((outcome, reason)),
            _ => None,
        });
        match (&step.match_ended, match_end) {
            (None, Some(o)) => self.fail(format!("the match ended unexpectedly: {o:?}")),
            (Some(_), None) => self.fail("expected the match to end; it did not".into()),
            (Some(spec), Some((o, reason))) => {
                if let Some(w) = spec.winner {
                    self.expect_eq("match winner (null: drawn)", o.winner(), w);
                }
                if let Some(r) = &spec.reason {
                    self.expect_eq("why the match ended", reason.as_str(), r.as_str());
                }
                self.expect_eq("outcome", self.game.outcome(), Some(o));
                self.expect_eq("match end", self.game.match_end(), Some(reason));
            }
            (None, None) => {}
        }
        if let Some(want) = &step.events {
            let got: Vec<String> = events.iter().map(event_text).collect();
            self.expect_eq("events", got, want.clone());
        }
        // state
        let view = self.game.project(None);
        if let Some(c) = step.count {
            self.expect_eq("count", view.count, c);
        }
        if let Some(s) = &step.scores {
            self.expect_eq("scores", self.game.scores().to_vec(), s.clone());
        }
        if let Some(t) = step.turn {
            self.expect_eq("turn", self.game.turn(), t);
        }
        if let Some(l) = step.leader {
            self.expect_eq("leader", self.game.leader(), l);
        }
        if let Some(r) = step.round {
            self.expect_eq("round number", self.game.round_number(), r);
        }
        if let Some(r) = step.rounds_done {
            self.expect_eq("rounds done", self.game.rounds_done(), r);
        }
        if let Some(b) = step.boneyard_count {
            self.expect_eq("boneyard count", self.game.boneyard_count(), b);
        }
        if let Some(m) = &step.must_lead {
            self.expect_eq("must lead", view.must_lead, m.as_deref().map(tile));
        }
        if let Some(t) = &step.start_tile {
            self.expect_eq("start tile", view.start_tile, t.as_deref().map(tile));
        }
        if let Some(u) = &step.unclaimed {
            let got = self.game.unclaimed().map(|u| UnclaimedSpec {
                seat: u.seat,
                points: u.points,
            });
            self.expect_eq("unclaimed points", got.as_ref(), u.as_ref());
        }
        if let Some(ends) = &step.ends {
            let got: BTreeMap<String, u8> = self
                .game
                .layout()
                .tips()
                .open_ends()
                .map(|(e, v)| (e.as_str().to_owned(), v))
                .collect();
            self.expect_eq("open ends", got, ends.clone());
        }
        if let Some(want) = &step.abandoned {
            let got: Vec<u8> = (0..self.game.seats())
                .filter(|&s| self.game.abandoned(s))
                .collect();
            let mut want = want.clone();
            want.sort();
            self.expect_eq("abandoned seats", got, want);
            let view: Vec<bool> = (0..self.game.seats())
                .map(|s| self.game.abandoned(s))
                .collect();
            self.expect_eq(
                "abandoned seats seen",
                view.clone(),
                self.game.project(None).abandoned,
            );
        }
        if let Some(hands) = &step.hands {
            for (&seat, h) in hands {
                let got = sorted_tiles(self.game.hand(seat).iter());
                self.expect_eq(&format!("hand of seat {seat}"), got, sorted_tiles(tiles(h)));
            }
        }
        if let Some(known) = &step.known_missing {
            for (&seat, want) in known {
                let got = pips(view.voids[seat as usize]);
                let mut want = want.clone();
                want.sort();
                self.expect_eq(&format!("known_missing of seat {seat}"), got, want);
            }
        }
        if let Some(legal) = &step.legal {
            match self.game.turn() {
                Some(seat) => self.check_legal(seat, legal),
                None if legal.is_empty() => {
                    for seat in 0..self.game.seats() {
                        self.check_legal(seat, &[]);
                    }
                }
                None => self.fail("legal moves expected but the match is over".into()),
            }
        }
        if let Some(map) = &step.legal_for {
            for (&seat, legal) in map {
                self.check_legal(seat, legal);
            }
        }
        if step.opening_lead == Some(true) {
            self.check_opening_lead();
        }
        if step.leads_any_tile == Some(true) {
            match self.game.turn() {
                Some(seat) => {
                    let want: Vec<Move> = self.game.hand(seat).iter().map(Move::lead).collect();
                    let (want, got) = (
                        sorted_texts(want),
                        sorted_texts(self.game.legal_moves(seat)),
                    );
                    if !self.game.layout().is_empty() || view.must_lead.is_some() || want != got {
                        self.fail(format!(
                            "seat {seat} should lead with any of its tiles: expected [{}], got [{}]",
                            want.join(", "),
                            got.join(", ")
                        ));
                    }
                }
                None => self.fail("a lead expected but the match is over".into()),
            }
        }
    }

    fn check_opening_lead(&mut self) {
        let Some(seat) = self.game.turn() else {
            return self.fail("an opening lead expected but the match is over".into());
        };
        let all = (0..self.game.seats()).fold(TileSet::EMPTY, |a, s| a.union(self.game.hand(s)));
        let doubles: Vec<Tile> = all.iter().filter(|t| t.is_double()).collect();
        let want = match doubles.iter().max_by_key(|t| t.hi()) {
            Some(&d) => d,
            None => all
                .iter()
                .max_by_key(|t| (t.weight(), t.hi()))
                .expect("tiles in hand"),
        };
        if !self.game.hand(seat).contains(want) || !self.game.layout().is_empty() {
            self.fail(format!(
                "seat {seat} leads, but {want} (the opening tile) is not in its hand"
            ));
        }
        self.expect_eq("must lead", self.game.project(None).must_lead, Some(want));
        self.expect_eq(
            "legal opening",
            sorted_texts(self.game.legal_moves(seat)),
            vec![move_text(Move::lead(want))],
        );
    }

    fn run_step(&mut self, step: &Step) {
        self.label = match (&step.seat, &step.mv) {
            (Some(SeatSpec::Seat(s)), Some(m)) => format!("seat {s}: {m}"),
            (Some(SeatSpec::Turn(_)), Some(m)) => format!("seat to move: {m}"),
            (_, Some(m)) => m.clone(),
            (_, None) => "check".into(),
        };
        let mut events = Vec::new();
        if let Some(text) = &step.mv {
            let auto = text == "auto";
            let times = step.times.unwrap_or(1);
            let until = step.until.as_deref();
            assert!(
                until.is_none() || auto,
                "{}: \"until\" goes with \"auto\"",
                self.name
            );
            let mut done = 0u32;
            loop {
                let seat = self.seat_of(&step.seat);
                let mv = if auto {
                    let legal = self.game.legal_moves(seat);
                    match legal
                        .iter()
                        .copied()
                        .find(|m| *m != Move::Muggins)
                        .or(legal.first().copied())
                    {
                        Some(m) => m,
                        None => {
                            self.fail(format!("auto: seat {seat} has no legal move"));
                            return;
                        }
                    }
                } else {
                    parse_move(text)
                        .unwrap_or_else(|e| panic!("{}: step {}: {e}", self.name, self.step))
                };
                let result = self.apply(seat, mv);
                done += 1;
                let last = match until {
                    Some("round_end") => result
                        .as_ref()
                        .is_ok_and(|ev| ev.iter().any(|e| matches!(e, Event::RoundEnded(_)))),
                    Some("match_end") => self.game.is_over(),
                    Some(other) => panic!("{}: unknown \"until\": {other}", self.name),
                    None => done == times,
                } || self.game.is_over();
                match (result, &step.refused) {
                    (Err(e), None) => {
                        self.fail(format!("{} refused: {e}", move_text(mv)));
                        return;
                    }
                    (Err(e), Some(Refused::Because(why))) if !e.contains(why.as_str()) => {
                        self.fail(format!(
                            "refused with \"{e}\", expected it to say \"{why}\""
                        ));
                    }
                    (Err(_), Some(Refused::Yes(false))) => {
                        self.fail(format!("{} refused", move_text(mv)))
                    }
                    (Err(_), Some(_)) => {}
                    (Ok(_), Some(Refused::Yes(true) | Refused::Because(_))) => {
                        self.fail(format!(
                            "{} was accepted but should be refused",
                            move_text(mv)
                        ));
                        return;
                    }
                    (Ok(ev), _) => {
                        if !last && until.is_none() {
                            // intermediate repetitions must not end anything
                            if let Some(e) = ev.iter().find(|e| {
                                matches!(e, Event::RoundEnded(_) | Event::MatchEnded { .. })
                            }) {
                                self.fail(format!(
                                    "repetition {done} of {times} ended the round: {e:?}"
                                ));
                                return;
                            }
                        }
                        events.extend(ev.iter().copied().filter(|_| last));
                    }
                }
                if last {
                    break;
                }
                if done > 10_000 {
                    self.fail("auto: more than 10000 moves".into());
                    return;
                }
            }
        }
        self.check_always();
        self.check_expectations(step, &events);
    }
}

fn run(name: &str) {
    let path = scenario_dir().join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let sc: Scenario = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}.json: {e}"));
    let rules = sc.preset.rules().with(&sc.rules);
    let seed = Seed::from_text(sc.seed.as_deref().unwrap_or(name));
    let deal = sc.deal.as_ref().map(|d| build_deal(d, &rules));
    let game = Game::new(rules, sc.seats, seed, deal.clone())
        .unwrap_or_else(|e| panic!("{name}: the game was refused: {e}"));
    let twin = Game::new(rules, sc.seats, seed, deal.clone()).expect("the same input");
    assert!(
        game == twin,
        "{name}: the same rules, seed and deal built two different games"
    );
    assert_eq!(
        game.project(Some(0)),
        twin.project(Some(0)),
        "{name}: projections differ"
    );

    let mut runner = Runner {
        name,
        game,
        failures: Vec::new(),
        step: 0,
        label: String::new(),
    };
    for (i, step) in sc.steps.iter().enumerate() {
        runner.step = i + 1;
        let before = runner.failures.len();
        runner.run_step(step);
        if runner.failures.len() > before {
            let state = describe(&runner.game);
            runner
                .failures
                .push(format!("state after step {}:\n{state}", i + 1));
            break;
        }
    }
    if runner.failures.is_empty() {
        let (moves, _) = runner
            .game
            .replay_history()
            .unwrap_or_else(|e| panic!("{name}: the recorded history does not replay: {e}"));
        assert_eq!(moves.len(), runner.game.move_count(), "{name}");
        let (replayed, _) = Game::replay(rules, sc.seats, seed, deal, &moves)
            .unwrap_or_else(|(i, e)| panic!("{name}: replaying move {i} was refused: {e}"));
        assert!(
            replayed == runner.game,
            "{name}: replaying the history gives another game"
        );
    }
    assert!(
        runner.failures.is_empty(),
        "scenario {name}.json failed:\n{}",
        runner.failures.join("\n")
    );
}
