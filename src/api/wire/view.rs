//! The game as the caller may see it, and the answer to a move: built from the service's
//! answer and showing nothing it does not hold.

use std::cell::RefCell;

use serde::Serialize;
use serde_json::value::RawValue;
use utoipa::ToSchema;

use crate::bots::Level;
use crate::domain::Seat;
use crate::engine::{End, EndReason, MatchEnd, Outcome, RoundResult, Rules};
use crate::service::{self, Status, View};

use super::*;

/// One seat as everyone sees it.
#[derive(Serialize, ToSchema)]
pub struct SeatView {
    pub seat: u8,
    pub name: Option<String>,
    /// The player this seat is bound to (taken with a player's key), by id; absent for a
    /// seat taken anonymously, whatever name it shows.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "3f1c0b6a9d2e4f5a8b7c6d5e4f3a2b1c")]
    pub player_id: Option<String>,
    #[schema(value_type = Option<super::rules::BotLevelDoc>)]
    pub bot: Option<Level>,
    pub hand_count: u8,
    /// The seat's team under `rules.teams` (0: seats 0+2, 1: seats 1+3), else null.
    pub team: Option<u8>,
    /// Numbers this seat is publicly known not to hold (from its passes and forced
    /// draws), so every player starts from the same information.
    pub known_missing: Vec<u8>,
    /// Its player left (resigned among three or more, or ran out of time too often): a
    /// bot plays it to the end.
    pub abandoned: bool,
}

/// An open end of the layout.
#[derive(Serialize, ToSchema)]
pub struct EndView {
    #[schema(value_type = super::rules::EndNameDoc)]
    pub end: End,
    pub value: u8,
    /// The tip is a crosswise double (it counts both halves under fives).
    pub double: bool,
}

/// The arms' tiles from the lead (or, for up and down, the spinner) outward; each tile's
/// first half faces the lead.
#[derive(Serialize, ToSchema, Default)]
pub struct Arms {
    #[schema(value_type = Vec<TileText>)]
    pub left: Vec<String>,
    #[schema(value_type = Vec<TileText>)]
    pub right: Vec<String>,
    #[schema(value_type = Vec<TileText>)]
    pub up: Vec<String>,
    #[schema(value_type = Vec<TileText>)]
    pub down: Vec<String>,
}

#[derive(Serialize, ToSchema)]
pub struct LayoutView {
    #[schema(value_type = Option<TileText>)]
    pub lead: Option<String>,
    pub arms: Arms,
    pub ends: Vec<EndView>,
    /// The sum of the open ends as fives scoring counts it.
    pub count: u32,
}

#[derive(Serialize, ToSchema)]
pub struct UnclaimedView {
    pub seat: u8,
    pub points: u16,
}

#[derive(Serialize, ToSchema)]
pub struct RoundView {
    pub number: u16,
    pub leader: u8,
    /// The seat to move; null once the match is over.
    pub turn: Option<u8>,
    pub boneyard_count: u8,
    /// Points made but not claimed (muggins), open to the opponents until the next move.
    pub unclaimed: Option<UnclaimedView>,
    pub layout: LayoutView,
    /// The tile turned up to start the round (`opening: start_tile`).
    #[schema(value_type = Option<TileText>)]
    pub start_tile: Option<String>,
    /// In the leader's own view, the tile it must lead when the opening rule forces one
    /// (the highest double dealt, or the heaviest tile); null once the lead is down, when
    /// any tile may lead, and in every other view (the tile is in the leader's hidden hand
    /// until it is played).
    #[schema(value_type = Option<TileText>)]
    pub must_lead: Option<String>,
}

/// A finished round: every hand revealed.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct RoundResultView {
    pub number: u16,
    #[schema(value_type = super::rules::RoundEndReasonDoc)]
    pub reason: EndReason,
    /// The winning seat (a team under `rules.teams`), or null.
    pub winner: Option<u8>,
    /// The seat that played its last tile, for a domino.
    pub went_out: Option<u8>,
    #[schema(value_type = Vec<Vec<TileText>>)]
    pub hands: Vec<Vec<String>>,
    /// Per seat, or per team.
    pub awards: Vec<i32>,
    pub scores: Vec<i32>,
}

impl RoundResultView {
    pub fn of(r: &RoundResult, seats: usize, sides: usize) -> RoundResultView {
        RoundResultView {
            number: r.number,
            reason: r.reason,
            winner: r.winner,
            went_out: r.went_out,
            hands: r.hands[..seats]
                .iter()
                .map(|h| h.iter().map(|t| t.to_string()).collect())
                .collect(),
            awards: r.awards[..sides].to_vec(),
            scores: r.scores[..sides].to_vec(),
        }
    }
}

/// The match's result.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct MatchResult {
    /// The winning seat (team under `rules.teams`); null for a drawn match.
    pub winner: Option<u8>,
    pub scores: Vec<i32>,
    #[schema(value_type = super::rules::MatchEndDoc)]
    pub reason: MatchEnd,
}

impl MatchResult {
    pub(super) fn of(outcome: Outcome, reason: MatchEnd, scores: &[i32]) -> MatchResult {
        MatchResult {
            winner: outcome.winner(),
            scores: scores.to_vec(),
            reason,
        }
    }

    /// The result a projection shows, once the match is over.
    pub(super) fn of_projection(
        p: &crate::engine::Projection,
        scores: &[i32],
    ) -> Option<MatchResult> {
        Some(MatchResult::of(p.outcome?, p.match_end?, scores))
    }
}

/// A game's clock as an answer shows it: its settings, and the banks now.
#[derive(Serialize, ToSchema)]
pub struct ClockView {
    pub bank_secs: u64,
    pub increment_secs: u64,
    pub on_timeout: service::OnTimeout,
    #[schema(value_type = super::rules::BotLevelDoc)]
    pub timeout_bot: Level,
    pub abandon_after: u64,
    /// Per seat, its bank now in milliseconds; null for a seat a bot plays.
    pub banks_ms: Vec<Option<u64>>,
    /// When the human seat to move runs out (epoch milliseconds); null when no human seat
    /// is to move. Compare it with `now_ms`, not with your own clock.
    #[schema(required = true)]
    pub deadline_ms: Option<u64>,
    /// The server's clock when it answered (epoch milliseconds).
    pub now_ms: u64,
}

impl ClockView {
    fn of(c: &service::ClockState) -> ClockView {
        let s = c.settings;
        ClockView {
            bank_secs: s.bank_secs,
            increment_secs: s.increment_secs,
            on_timeout: s.on_timeout,
            timeout_bot: s.timeout_bot,
            abandon_after: s.abandon_after,
            banks_ms: c.banks_ms.clone(),
            deadline_ms: c.deadline_ms,
            now_ms: c.now_ms,
        }
    }
}

/// The game as the caller may see it: a seat's view with its token, else the spectator's.
#[derive(Serialize, ToSchema)]
#[schema(example = view_example)]
pub struct GameView {
    #[schema(format = Uuid)]
    pub game_id: String,
    /// Grows by one with every stored change; the `ETag`.
    pub version: u64,
    pub status: Status,
    #[schema(schema_with = preset_schema)]
    pub preset: &'static str,
    #[schema(value_type = RulesDoc)]
    pub rules: RulesJson,
    /// Made with a seed or a fixed deal.
    pub prearranged: bool,
    /// Your seat, or null for a spectator.
    #[schema(required = true)]
    pub you: Option<u8>,
    pub seats: Vec<SeatView>,
    /// Per seat, or per team under `rules.teams`; penalty points under penalty scoring.
    pub scores: Vec<i32>,
    /// Null while the game waits for players.
    #[schema(required = true)]
    pub round: Option<RoundView>,
    /// Your tiles; null for a spectator (and while waiting).
    #[schema(required = true, value_type = Option<Vec<TileText>>)]
    pub hand: Option<Vec<String>>,
    pub your_turn: bool,
    /// Every move you may make now, in the body form of `POST .../moves`.
    pub legal_moves: Vec<MoveBody>,
    /// The round that ended last, every hand revealed; null before the first ends.
    #[schema(required = true)]
    pub last_round: Option<RoundResultView>,
    /// Null until the match is over.
    #[schema(required = true)]
    pub result: Option<MatchResult>,
    /// Null for a game without a clock.
    #[schema(required = true)]
    pub clock: Option<ClockView>,
    /// Whether its end moves ratings: made by a rated challenge or seek, and not aborted.
    pub rated: bool,
    /// Why a game made rated was not rated; null otherwise.
    #[schema(required = true)]
    pub aborted: Option<service::Aborted>,
}

/// A game's rules in a view, serialised as [`Rules`] is, but once per rule set and worker
/// thread: they never change during a game, and every move's answer shows them (a third
/// of the answer's serialising).
#[derive(Clone, Copy, Debug)]
pub struct RulesJson(pub Rules);

/// Rule sets a worker keeps serialised: games mostly play presets, a few custom sets.
const RULES_KEPT: usize = 16;

/// The rule sets serialised last on one thread, the oldest replaced first.
struct KeptRules {
    sets: Vec<(Rules, Box<RawValue>)>,
    next: usize,
}

thread_local! {
    static KEPT_RULES: RefCell<KeptRules> = const {
        RefCell::new(KeptRules {
            sets: Vec::new(),
            next: 0,
        })
    };
}

impl Serialize for RulesJson {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        KEPT_RULES.with_borrow_mut(|kept| {
            let at = match kept.sets.iter().position(|(rules, _)| *rules == self.0) {
                Some(at) => at,
                None => {
                    let json = serde_json::value::to_raw_value(&self.0)
                        .map_err(serde::ser::Error::custom)?;
                    if kept.sets.len() < RULES_KEPT {
                        kept.sets.push((self.0, json));
                        kept.sets.len() - 1
                    } else {
                        let at = kept.next;
                        kept.sets[at] = (self.0, json);
                        kept.next = (at + 1) % RULES_KEPT;
                        at
                    }
                }
            };
            kept.sets[at].1.serialize(serializer)
        })
    }
}

/// The answer to a move: your new view plus what the move (and the bots after it) caused.
#[derive(Serialize, ToSchema)]
#[schema(example = move_result_example)]
pub struct MoveResult {
    #[serde(flatten)]
    pub view: GameView,
    pub events: Vec<EventView>,
}

// Examples for the document, taken from a real game (seat 0 against a greedy bot).
fn view_example() -> serde_json::Value {
    serde_json::from_str(include_str!("../examples/view.json")).expect("the example is JSON")
}

fn move_result_example() -> serde_json::Value {
    serde_json::from_str(include_str!("../examples/move_result.json")).expect("the example is JSON")
}

pub(super) fn pips(mask: u16) -> Vec<u8> {
    (0..16).filter(|p| mask & (1 << p) != 0).collect()
}

impl GameView {
    pub fn of(s: &View) -> GameView {
        let p = s.projection.as_ref();
        let sides = s.scores.len();
        let seats = s
            .seats
            .iter()
            .enumerate()
            .map(|(i, seat)| SeatView {
                seat: i as u8,
                name: seat.name.clone(),
                player_id: s.players[i].clone(),
                bot: seat.bot,
                hand_count: p.map_or(0, |p| p.hand_counts[i]),
                team: s.team(Seat::new(i as u8)),
                abandoned: p.is_some_and(|p| p.abandoned[i]),
                known_missing: p.map_or_else(Vec::new, |p| pips(p.voids[i])),
            })
            .collect();
        let round = p.map(|p| {
            let arms = p.layout.arms();
            let strings = |arm: &Vec<(u8, u8)>| {
                arm.iter()
                    .map(|(a, b)| format!("{a}-{b}"))
                    .collect::<Vec<_>>()
            };
            let tips = p.layout.tips();
            RoundView {
                number: p.round,
                leader: p.leader,
                turn: p.turn,
                boneyard_count: p.boneyard_count,
                unclaimed: p.unclaimed.map(|u| UnclaimedView {
                    seat: u.seat,
                    points: u.points,
                }),
                layout: LayoutView {
                    lead: p.layout.lead().map(|t| t.to_string()),
                    arms: Arms {
                        left: strings(&arms[0]),
                        right: strings(&arms[1]),
                        up: strings(&arms[2]),
                        down: strings(&arms[3]),
                    },
                    ends: tips
                        .open_ends()
                        .map(|(end, value)| EndView {
                            end,
                            value,
                            double: tips.counts_double(end, &p.rules),
                        })
                        .collect(),
                    count: p.count,
                },
                start_tile: p.start_tile.map(|t| t.to_string()),
                must_lead: p
                    .must_lead
                    .filter(|_| p.viewer == Some(p.leader))
                    .map(|t| t.to_string()),
            }
        });
        GameView {
            game_id: s.id.clone(),
            version: s.version,
            status: s.status,
            preset: s.preset.name(),
            rules: RulesJson(s.rules),
            prearranged: s.prearranged,
            you: s.viewer,
            seats,
            scores: s.scores.clone(),
            round,
            hand: p
                .and_then(|p| p.hand)
                .map(|h| h.iter().map(|t| t.to_string()).collect()),
            your_turn: s.your_turn(),
            legal_moves: p.map_or_else(Vec::new, |p| MoveBody::listed(&p.legal_moves)),
            last_round: p
                .and_then(|p| p.last_round)
                .map(|r| RoundResultView::of(&r, s.seats.len(), sides)),
            result: p.and_then(|p| MatchResult::of_projection(p, &s.scores)),
            clock: s.clock.as_ref().map(ClockView::of),
            rated: s.rated,
            aborted: s.aborted,
        }
    }
}

impl MoveResult {
    pub fn of(moved: &service::AfterMove) -> MoveResult {
        MoveResult {
            view: GameView::of(&moved.view),
            events: EventView::all(&moved.events, &moved.view),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Preset;

    #[test]
    fn rules_serialise_as_the_engine_s_rules_whether_kept_or_not() {
        // More rule sets than a thread keeps, twice over: each is written fresh, then kept,
        // then (after it was replaced) fresh again.
        let sets: Vec<Rules> = Preset::ALL
            .iter()
            .flat_map(|p| {
                (1..=4).map(move |t| Rules {
                    target: Some(t * 50),
                    ..p.rules()
                })
            })
            .collect();
        assert!(sets.len() > RULES_KEPT);
        for _ in 0..2 {
            for rules in &sets {
                let plain = serde_json::to_string(rules).unwrap();
                assert_eq!(serde_json::to_string(&RulesJson(*rules)).unwrap(), plain);
                assert_eq!(serde_json::to_string(&RulesJson(*rules)).unwrap(), plain);
            }
        }
    }
}
