//! The tournaments' shapes: making one, joining, a tournament with its standings,
//! pairings and byes, and its stream's events.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::engine::{Rules, RulesPatch};
use crate::service::tournaments::record::{Pairing, Tournament, TournamentStatus};
use crate::service::tournaments::stream::{Told, Update};
use crate::tournament::Winner;

use super::*;

/// `POST /v1/tournaments`. `name`, `preset` and `format` are required.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"name": "Friday fives", "preset": "all_fives", "format": "swiss", "rounds": 5, "levels": ["greedy", "expert"]}))]
pub struct CreateTournament {
    /// 1 to 64 characters, shown on its page.
    #[schema(example = "Friday fives")]
    pub name: String,
    #[schema(schema_with = preset_schema)]
    pub preset: String,
    #[serde(default, deserialize_with = "super::rules::rules_named")]
    #[schema(value_type = Option<RulesOverridesDoc>)]
    pub rules: Option<RulesPatch>,
    /// `swiss` or `round_robin`.
    #[schema(example = "swiss")]
    pub format: String,
    /// Swiss only: rounds played, 1 to 20; default enough to separate the players
    /// (about log2 of their number), never more than the players less one. A round
    /// robin's rounds follow from its players (leave it out).
    #[schema(minimum = 1, maximum = 20)]
    pub rounds: Option<u16>,
    /// Each pairing plays one deal twice with the seats swapped, decided by the points
    /// over both games; default true. Without it a pairing is one game.
    pub duplicate: Option<bool>,
    /// Deals each pairing plays, 1 to 10 (each twice with the seats swapped when
    /// duplicate); default 1. Its winner is who scored more over all its games: more deals
    /// measure more and leave less to the luck of one deal.
    #[schema(minimum = 1, maximum = 10, example = 2)]
    pub deals_per_pairing: Option<u16>,
    /// The clock of every game; default 300 s a player, no increment, and a seat that
    /// runs out of time loses (`on_timeout: forfeit`).
    pub clock: Option<ClockBody>,
    /// When it starts (epoch ms) with enough players (3, or 2 for a round robin), or is
    /// canceled; default 10 minutes from now, at most 7 days. Its creator may start it
    /// sooner (`POST /v1/tournaments/{id}/start`).
    pub starts_at_ms: Option<u64>,
    /// 2 to `MAX_TOURNAMENT_PLAYERS` (default 64), at most 16 for a round robin; default
    /// that most. (The maximum below is what is read at all; the server's cap is lower.)
    #[schema(minimum = 2, maximum = 65535)]
    pub max_players: Option<u16>,
    /// Whether its games move ratings (the preset's rules as they stand; a game of two
    /// built-in levels never does); default false.
    #[serde(default)]
    pub rated: bool,
    /// Built-in levels entered as players. A level named more than once enters a copy
    /// each time (ids `greedy`, `greedy-2`, ...): a field of bots.
    #[schema(value_type = Option<Vec<super::rules::BotLevelDoc>>, example = json!(["greedy", "expert"]))]
    pub levels: Option<Vec<String>>,
}

/// `POST /v1/tournaments/{id}/players`: an empty body (or none) enters the key's player;
/// `level` (its creator only) enters a built-in level.
#[derive(Deserialize, ToSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct JoinTournament {
    #[schema(value_type = Option<super::rules::BotLevelDoc>, example = "expert")]
    pub level: Option<String>,
}

/// One player of a tournament, in standings order.
#[derive(Serialize, ToSchema, Clone, PartialEq)]
pub struct TournamentPlayer {
    /// The player's id; a built-in level's is its name (`greedy`; a second copy of it
    /// `greedy-2`).
    #[schema(example = "3f1c0b6a9d2e4f5a8b7c6d5e4f3a2b1c")]
    pub id: String,
    #[schema(example = "alice")]
    pub name: String,
    /// A bot account or a built-in level.
    pub bot: bool,
    /// 1 a pairing won, 0.5 drawn, 1 a bye.
    #[schema(example = 2.5)]
    pub score: f64,
    /// The sum of its opponents' scores.
    pub buchholz: f64,
    /// Its beaten opponents' scores plus half its drawn opponents'.
    pub sonneborn_berger: f64,
    /// Its points less its opponents' over all its games (the other way round under
    /// penalty scoring).
    pub margin: i64,
    /// Paired no more (withdrawn by itself, or after losing on time twice).
    pub withdrawn: bool,
    /// Its place: score, then Buchholz, Sonneborn-Berger, margin, then the earlier entry.
    pub rank: u16,
    /// Its place in the order of entry, from 0: the standings' last tiebreak.
    pub entry: u16,
}

/// One pairing: two players of a round and their games.
#[derive(Serialize, ToSchema)]
pub struct TournamentPairing {
    pub round: u16,
    /// The players by id: `a` takes the first seat of the first game.
    pub a: String,
    pub b: String,
    /// Its games (two in a duplicate tournament: the same deal, the seats swapped).
    #[schema(value_type = Vec<String>, format = Uuid)]
    pub games: Vec<String>,
    /// `a`, `b` or `draw` once every game is over; null before.
    #[schema(required = true, example = "a")]
    pub result: Option<&'static str>,
}

/// A bye: a round a player was not paired in, worth a win.
#[derive(Serialize, ToSchema)]
pub struct TournamentBye {
    pub round: u16,
    /// The player's id.
    pub player: String,
}

/// Why a round waits for some of its games.
#[derive(Serialize, ToSchema, Clone, PartialEq)]
pub struct TournamentWaiting {
    /// Since when (epoch ms).
    pub since_ms: u64,
    #[schema(
        example = "the games of this tournament's creator's address are at their cap (MAX_GAMES_PER_IP 100); the round waits for some to finish"
    )]
    pub reason: String,
}

/// A tournament: its settings, standings, pairings and byes. Anyone may read one.
#[derive(Serialize, ToSchema)]
pub struct TournamentView {
    #[schema(format = Uuid)]
    pub id: String,
    pub name: String,
    /// `registering`, `running`, `finished` or `canceled`.
    #[schema(example = "running")]
    pub status: &'static str,
    /// Why it was canceled, or ended before its last round; null otherwise.
    #[schema(required = true)]
    pub reason: Option<String>,
    /// `swiss` or `round_robin`.
    #[schema(example = "swiss")]
    pub format: &'static str,
    #[schema(example = "all_fives")]
    pub preset: &'static str,
    #[schema(value_type = RulesDoc)]
    pub rules: Rules,
    pub duplicate: bool,
    /// Deals each pairing plays (each twice when duplicate).
    pub deals_per_pairing: u16,
    /// Rounds it plays (known at the start; before it, the rounds asked for, or 0).
    pub rounds: u16,
    /// The round in play (or last played); 0 before the start.
    pub round: u16,
    pub rated: bool,
    pub clock: ClockSettingsView,
    pub starts_at_ms: u64,
    pub max_players: u16,
    /// Its creator's player id.
    pub creator: String,
    pub created_ms: u64,
    /// The secret every deal was made from, in hex, once it is over with no game in
    /// play: the deal of round `r`'s pairing `p` (from 0) has the seed SHA-256 of these
    /// 32 bytes, `r` as 2 and `p` as 4 little-endian bytes. Null before.
    #[schema(required = true, example = json!(null))]
    pub seed: Option<String>,
    /// Set while the round in play waits for games the server could not make yet (its
    /// creator's address has its most games in play, or the store is full): the round
    /// goes on once they are made, and no game is scored before it is played. Null
    /// otherwise.
    #[schema(required = true)]
    pub waiting: Option<TournamentWaiting>,
    pub players: Vec<TournamentPlayer>,
    pub pairings: Vec<TournamentPairing>,
    pub byes: Vec<TournamentBye>,
}

impl TournamentView {
    pub fn of(t: &Tournament) -> TournamentView {
        let id_of = |entrant: u16| t.entrants()[usize::from(entrant)].id();
        let penalty = t.penalty();
        TournamentView {
            id: t.id().to_string(),
            name: t.terms().name().to_owned(),
            status: t.status().as_str(),
            reason: t.reason().map(str::to_owned),
            format: t.terms().format().as_str(),
            preset: t.terms().preset().name(),
            rules: t.terms().preset().rules().with(t.terms().overrides()),
            duplicate: t.terms().duplicate(),
            deals_per_pairing: t.deals_per_pairing(),
            rounds: t.terms().rounds(),
            round: t.round(),
            rated: t.terms().rated(),
            clock: ClockSettingsView::of(t.terms().clock()),
            starts_at_ms: t.terms().starts_at_ms(),
            max_players: t.terms().max_players(),
            creator: t.terms().creator().id.clone(),
            created_ms: t.terms().created_ms(),
            seed: t.revealed_seed(),
            waiting: TournamentWaiting::of(t),
            players: TournamentPlayer::rows(t),
            pairings: t
                .pairings()
                .iter()
                .map(|p| TournamentPairing::of(p, penalty, &id_of))
                .collect(),
            byes: t
                .byes()
                .iter()
                .map(|b| TournamentBye {
                    round: b.round(),
                    player: id_of(b.entrant()),
                })
                .collect(),
        }
    }
}

impl TournamentPairing {
    fn of(p: &Pairing, penalty: bool, id_of: &impl Fn(u16) -> String) -> TournamentPairing {
        TournamentPairing {
            round: p.round(),
            a: id_of(p.a()),
            b: id_of(p.b()),
            games: p.games().iter().map(|g| g.game_id().to_string()).collect(),
            result: p.winner(penalty).map(|w| match w {
                Winner::A => "a",
                Winner::B => "b",
                Winner::Draw => "draw",
            }),
        }
    }
}

/// A tournament in a list: its settings and how many entered, not who (nor its pairings):
/// `GET /v1/tournaments/{id}` has them all.
#[derive(Serialize, ToSchema)]
pub struct TournamentSummary {
    #[schema(format = Uuid)]
    pub id: String,
    pub name: String,
    /// `registering`, `running`, `finished` or `canceled`.
    #[schema(example = "registering")]
    pub status: &'static str,
    /// Why it was canceled, or ended before its last round; null otherwise.
    #[schema(required = true)]
    pub reason: Option<String>,
    /// `swiss` or `round_robin`.
    #[schema(example = "swiss")]
    pub format: &'static str,
    #[schema(example = "all_fives")]
    pub preset: &'static str,
    pub duplicate: bool,
    /// Rounds it plays (known at the start; before it, the rounds asked for, or 0).
    pub rounds: u16,
    /// The round in play (or last played); 0 before the start.
    pub round: u16,
    pub rated: bool,
    pub starts_at_ms: u64,
    pub max_players: u16,
    /// How many entered (withdrawn ones included).
    #[schema(example = 12)]
    pub players_count: usize,
    /// Once finished, the name of the player at the top of its standings; null before.
    #[schema(required = true, example = "greedy")]
    pub winner: Option<String>,
    /// Its creator's player id.
    pub creator: String,
    pub created_ms: u64,
}

impl TournamentSummary {
    pub fn of(t: &Tournament) -> TournamentSummary {
        TournamentSummary {
            id: t.id().to_string(),
            name: t.terms().name().to_owned(),
            status: t.status().as_str(),
            reason: t.reason().map(str::to_owned),
            format: t.terms().format().as_str(),
            preset: t.terms().preset().name(),
            duplicate: t.terms().duplicate(),
            rounds: t.terms().rounds(),
            round: t.round(),
            rated: t.terms().rated(),
            starts_at_ms: t.terms().starts_at_ms(),
            max_players: t.terms().max_players(),
            players_count: t.entrants().len(),
            winner: (t.status() == TournamentStatus::Finished)
                .then(|| {
                    t.standings()
                        .first()
                        .map(|s| t.entrants()[usize::from(s.entrant)].name())
                })
                .flatten(),
            creator: t.terms().creator().id.clone(),
            created_ms: t.terms().created_ms(),
        }
    }
}

/// A page of tournaments, newest first.
#[derive(Serialize, ToSchema)]
pub struct TournamentList {
    pub tournaments: Vec<TournamentSummary>,
    pub page: usize,
    pub per_page: usize,
}

/// One event of a tournament's stream (`GET /v1/tournaments/{id}/events`). The first
/// event, and `tournament_finished`, hold the whole tournament; the others say only what
/// changed, so an event's size does not grow with the tournament.
#[derive(Serialize, ToSchema)]
pub struct TournamentEvent {
    /// `standings` (a game ended: the players whose line changed; also the first event,
    /// with the whole tournament), `round_started` (a round was paired: its pairings and
    /// byes), `pairing_finished` (`pairing` is over) or `tournament_finished` (the last
    /// event, with the whole tournament).
    #[serde(rename = "type")]
    #[schema(example = "round_started")]
    pub kind: &'static str,
    /// `registering`, `running`, `finished` or `canceled`.
    #[schema(example = "running")]
    pub status: &'static str,
    /// The round in play (or last played).
    pub round: u16,
    /// As in the tournament: why the round in play waits for games not made yet.
    #[schema(required = true)]
    pub waiting: Option<TournamentWaiting>,
    /// The whole tournament, on the first event of a stream (and again to a follower
    /// that fell behind) and on `tournament_finished`; null on the others.
    #[schema(required = true)]
    pub tournament: Option<TournamentView>,
    /// The pairing that finished, in `pairing_finished`; null otherwise.
    #[schema(required = true)]
    pub pairing: Option<TournamentPairing>,
    /// Without `tournament`: the pairings new or decided since the stream's last event
    /// (a new round's, in `round_started`; the finished one, in `pairing_finished`),
    /// each as in the tournament's `pairings`, where a pairing is known by its games.
    pub pairings: Vec<TournamentPairing>,
    /// Without `tournament`: the byes given since the last event.
    pub byes: Vec<TournamentBye>,
    /// In `standings` without `tournament`: the players whose score, tiebreaks, margin
    /// or withdrawal changed, each with its new rank. The others keep their numbers;
    /// their order is the standings' (score, Buchholz, Sonneborn-Berger, margin, then
    /// `entry`), so a client sorts again to rank them.
    pub players: Vec<TournamentPlayer>,
}

impl TournamentPlayer {
    /// `t`'s standings, in order.
    pub fn rows(t: &Tournament) -> Vec<TournamentPlayer> {
        t.standings()
            .iter()
            .map(|s| {
                let e = &t.entrants()[usize::from(s.entrant)];
                TournamentPlayer {
                    id: e.id(),
                    name: e.name(),
                    bot: e.bot(),
                    score: s.score(),
                    buchholz: s.buchholz(),
                    sonneborn_berger: s.sonneborn_berger(),
                    margin: s.margin(),
                    withdrawn: e.withdrawn(),
                    rank: s.rank,
                    entry: s.entrant,
                }
            })
            .collect()
    }

    /// Whether its numbers differ from `before`'s (its rank aside: that follows from the
    /// order).
    fn changed_from(&self, before: &TournamentPlayer) -> bool {
        self.score != before.score
            || self.buchholz != before.buchholz
            || self.sonneborn_berger != before.sonneborn_berger
            || self.margin != before.margin
            || self.withdrawn != before.withdrawn
            || self.name != before.name
    }
}

impl TournamentEvent {
    fn of_kind(told: Told) -> &'static str {
        match told {
            Told::RoundStarted => "round_started",
            Told::PairingFinished { .. } => "pairing_finished",
            Told::Standings => "standings",
            Told::Finished => "tournament_finished",
        }
    }

    fn bare(kind: &'static str, t: &Tournament) -> TournamentEvent {
        TournamentEvent {
            kind,
            status: t.status().as_str(),
            round: t.round(),
            waiting: TournamentWaiting::of(t),
            tournament: None,
            pairing: None,
            pairings: Vec::new(),
            byes: Vec::new(),
            players: Vec::new(),
        }
    }

    /// The whole of `t`: a stream's first event (`tournament_finished` once it is over).
    pub fn whole(t: &Tournament) -> TournamentEvent {
        let kind = if t.status().over() {
            "tournament_finished"
        } else {
            "standings"
        };
        TournamentEvent {
            tournament: Some(TournamentView::of(t)),
            ..TournamentEvent::bare(kind, t)
        }
    }

    /// What `update` changed since `before` (the tournament as the last event left it):
    /// `before_rows` and `now_rows` are their standings rows by player id.
    pub fn change(
        update: &Update,
        before: &Tournament,
        before_rows: &HashMap<String, TournamentPlayer>,
        now_rows: &HashMap<String, TournamentPlayer>,
    ) -> TournamentEvent {
        let t = &update.tournament;
        if update.told == Told::Finished {
            return TournamentEvent::whole(t);
        }
        let mut event = TournamentEvent::bare(TournamentEvent::of_kind(update.told), t);
        let id_of = |entrant: u16| t.entrants()[usize::from(entrant)].id();
        let penalty = t.penalty();
        // Every pairing new or newly decided since the last event: a word lost between
        // (a subscription made again) loses nothing.
        event.pairings = t
            .pairings()
            .iter()
            .enumerate()
            .filter(|&(i, p)| {
                before
                    .pairings()
                    .get(i)
                    .is_none_or(|b| b.winner(penalty) != p.winner(penalty))
            })
            .map(|(_, p)| TournamentPairing::of(p, penalty, &id_of))
            .collect();
        event.byes = t.byes()[before.byes().len().min(t.byes().len())..]
            .iter()
            .map(|b| TournamentBye {
                round: b.round(),
                player: id_of(b.entrant()),
            })
            .collect();
        if let Told::PairingFinished { pairing } = update.told {
            event.pairing = t
                .pairings()
                .get(pairing)
                .map(|p| TournamentPairing::of(p, penalty, &id_of));
        }
        let mut players: Vec<TournamentPlayer> = now_rows
            .values()
            .filter(|row| before_rows.get(&row.id).is_none_or(|b| row.changed_from(b)))
            .cloned()
            .collect();
        players.sort_by_key(|row| row.rank);
        event.players = players;
        event
    }
}

impl TournamentWaiting {
    fn of(t: &Tournament) -> Option<TournamentWaiting> {
        t.waiting().map(|w| TournamentWaiting {
            since_ms: w.since_ms(),
            reason: w.reason().to_owned(),
        })
    }
}
