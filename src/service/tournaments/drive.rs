//! Moving a tournament on: its start (or cancel) when due, its games' results as they
//! end, and each next round once every game of the one before has finished. Every step is
//! one compare-and-set on the record, which names a round's games before any is made, so
//! whichever process drives it, each round is paired once and each game made once.

use std::time::{Duration, Instant};

use futures_util::StreamExt;

use crate::domain::TournamentId;
use crate::engine::{MatchEnd, Outcome};
use crate::store::SaveOutcome;
use crate::store::tournaments::TournamentStore;
use crate::tournament::{default_swiss_rounds, round_robin_rounds};

use super::record::{
    ByeRecord, Entry, Format, Pairing, PairingGame, Tournament, TournamentStatus, Waiting,
};
use super::stream::Told;
use super::{ATTEMPTS, MAX_TIMEOUTS, TournamentNotice, Tournaments, least_players};
use crate::service::Error;
use crate::service::games::Progress;
use crate::service::games::admit::{Admission, NewGame, Parent};
use crate::service::shared::now_ms;

/// A running tournament is looked at this often at least (a game's end pokes it sooner).
const POLL: Duration = Duration::from_secs(2);
/// Due tournaments one read of the index takes.
const SWEEP_BATCH: usize = 50;
/// Due tournaments driven at once (each mostly waits for the store).
const SWEEP_AT_ONCE: usize = 8;
/// How long one sweep goes on taking batches while more are due.
const SWEEP_PASS: Duration = Duration::from_secs(1);

/// What one drive changed, to tell once it is saved.
#[derive(Default)]
struct Changes {
    results: bool,
    /// Pairings (by index) whose last game ended.
    finished: Vec<usize>,
    started: bool,
    round_started: bool,
    ended: bool,
    /// The round paired, and how long its pairing took (standings, byes, brackets).
    paired: Option<(u16, Duration)>,
}

impl Tournaments {
    /// Moves the due tournaments on, earliest due first, [`SWEEP_AT_ONCE`] at a time, batch
    /// after batch until none is due or [`SWEEP_PASS`] is spent. Each drive takes its
    /// tournament out of the due ones until its next due time, and no tournament is due
    /// before it was made, so one due at `t` waits only for those due before `t`: a flood of
    /// tournaments made later cannot pass it. Returns how many it looked at.
    pub async fn sweep_tournaments(&self) -> Result<usize, Error> {
        let began = Instant::now();
        let mut looked = 0;
        loop {
            let due = self
                .ctx
                .store
                .tournaments()
                .tournaments_due(now_ms(), SWEEP_BATCH)
                .await?;
            looked += due.len();
            futures_util::stream::iter(&due)
                .for_each_concurrent(SWEEP_AT_ONCE, |id| async move {
                    // Only ids this server made are indexed.
                    let Some(id) = TournamentId::stored(id) else {
                        return;
                    };
                    if let Err(e) = self.drive_now(id, false).await {
                        tracing::warn!(tournament_id = %id, error = %e, "a tournament did not move on; its next poll tries again");
                    }
                })
                .await;
            if due.len() < SWEEP_BATCH || began.elapsed() >= SWEEP_PASS {
                return Ok(looked);
            }
        }
    }

    /// After the save that ended one of its games: the tournament moves on at once; should
    /// that fail, its next poll does.
    pub(crate) async fn poke(&self, id: TournamentId) {
        if let Err(e) = self.drive_now(id, false).await {
            tracing::warn!(tournament_id = %id, error = %e, "a tournament did not move on; its poll comes");
        }
    }

    /// Moves tournament `id` on (`start`: its creator starts it now). Whatever happens, it
    /// stays in the index of due ones until it is over: a drive that fails is tried again.
    pub(super) async fn drive_now(&self, id: TournamentId, start: bool) -> Result<(), Error> {
        let next = match self.drive_once(id, start).await {
            Ok(next) => next,
            // Gone (expired, once over): nothing is left to drive.
            Err(Error::TournamentNotFound) => {
                self.ctx
                    .store
                    .tournaments()
                    .index_tournament_due(&id, None)
                    .await?;
                return Err(Error::TournamentNotFound);
            }
            Err(e) => {
                let again = now_ms() + POLL.as_millis() as u64;
                if let Err(index) = self
                    .ctx
                    .store
                    .tournaments()
                    .index_tournament_due(&id, Some(again))
                    .await
                {
                    tracing::warn!(tournament_id = %id, error = %index, "a tournament that did not move on could not be indexed again");
                }
                return Err(e);
            }
        };
        self.ctx
            .store
            .tournaments()
            .index_tournament_due(&id, next)
            .await?;
        Ok(())
    }

    /// One drive of tournament `id`: answers when it is next due (`None` once over).
    async fn drive_once(&self, id: TournamentId, start: bool) -> Result<Option<u64>, Error> {
        let poll = || Some(now_ms() + POLL.as_millis() as u64);
        for _ in 0..ATTEMPTS {
            let (version, mut t) = self.records.load(id).await?;
            let now = now_ms();
            let mut changes = Changes::default();
            let mut missing = Vec::new();
            match t.status {
                TournamentStatus::Registering if start || now >= t.terms.starts_at_ms => {
                    begin(&mut t, &mut changes);
                }
                TournamentStatus::Registering => return Ok(Some(t.terms.starts_at_ms)),
                TournamentStatus::Running => {
                    missing = self.results(&mut t, &mut changes).await?;
                    if missing.is_empty() && t.in_play() == 0 {
                        next_round(&mut t, &mut changes, now);
                    }
                }
                TournamentStatus::Finished | TournamentStatus::Canceled => return Ok(None),
            }
            let changed =
                changes.results || changes.started || changes.round_started || changes.ended;
            if changed {
                t.saved_ms = now;
                match self
                    .ctx
                    .store
                    .tournaments()
                    .save_tournament(&id, version, t.encode())
                    .await?
                {
                    SaveOutcome::Saved { .. } => {}
                    SaveOutcome::Conflict { .. } => {
                        self.ctx.metrics.store_conflicts.inc();
                        continue;
                    }
                    SaveOutcome::Missing => return Err(Error::TournamentNotFound),
                }
            }
            // The games of a new round, and those not made yet (refused, or named by a
            // process that died); then the news, so a player told of a round finds its
            // games made.
            if changes.round_started {
                missing.extend(
                    t.pairings
                        .iter()
                        .enumerate()
                        .filter(|(_, p)| p.round == t.round)
                        .flat_map(|(i, p)| (0..p.games.len()).map(move |g| (i, g))),
                );
            }
            let mut made = Ok(None);
            for (pairing, game) in missing {
                made = self.make_game(&t, pairing, game).await;
                if !matches!(made, Ok(None)) {
                    break;
                }
            }
            if changed {
                self.after(&t, &changes).await?;
            }
            let refused = made?;
            self.wait_or_go_on(&t, refused).await;
            return Ok(if t.status.over() { None } else { poll() });
        }
        Ok(poll())
    }

    /// Records why the round waits (`refused`: a game the admission refused), or that it
    /// waits no more, when that differs from what `t` says. Best effort: the next poll
    /// looks again.
    async fn wait_or_go_on(&self, t: &Tournament, refused: Option<Error>) {
        let reason = refused.map(|e| waiting_reason(&e));
        if t.status.over() || t.waiting.as_ref().map(|w| &w.reason) == reason.as_ref() {
            return;
        }
        if let Some(reason) = &reason {
            if t.waiting.is_none() {
                self.ctx.metrics.tournament_rounds_waiting.inc();
            }
            tracing::info!(tournament_id = %t.id, round = t.round, reason = %reason, "a tournament round waits for games the admission refused");
        } else {
            tracing::info!(tournament_id = %t.id, round = t.round, "a tournament round has all its games made");
        }
        let changed = self
            .change(t.id, |now| {
                now.waiting = match (&reason, now.waiting.take()) {
                    (None, _) => None,
                    (Some(r), Some(w)) => Some(Waiting {
                        since_ms: w.since_ms,
                        reason: r.clone(),
                    }),
                    (Some(r), None) => Some(Waiting {
                        since_ms: now_ms(),
                        reason: r.clone(),
                    }),
                };
                Ok(())
            })
            .await;
        match changed {
            // Its followers see it wait, or go on.
            Ok(now) => self.publish(&now, Told::Standings).await,
            Err(e) => {
                tracing::warn!(tournament_id = %t.id, error = %e, "a tournament's waiting was not saved; its next poll tries again")
            }
        }
    }

    /// Reads the results of the games in play into `t`; answers the games named but not
    /// in the store, to make: refused by the admission, named by a process that died
    /// before making them, or (a store that lost them) made and gone. None is ever scored
    /// without being played: a game missing is made again, from the same deal.
    async fn results(
        &self,
        t: &mut Tournament,
        changes: &mut Changes,
    ) -> Result<Vec<(usize, usize)>, Error> {
        let mut missing = Vec::new();
        let mut timed_out = Vec::new();
        for (i, pairing) in t.pairings.iter_mut().enumerate() {
            if pairing.over() {
                continue;
            }
            for (g, game) in pairing.games.iter_mut().enumerate() {
                if game.result.is_some() {
                    continue;
                }
                match self.games.progress(game.game_id).await? {
                    Progress::Ended {
                        outcome,
                        end,
                        scores,
                        ..
                    } => {
                        let (a, b) = (usize::from(game.a_seat), 1 - usize::from(game.a_seat));
                        let a_result = match outcome {
                            Outcome::Won { side } if usize::from(side) == a => 10,
                            Outcome::Won { .. } => 0,
                            Outcome::Drawn => 5,
                        };
                        game.result = Some((scores[a], scores[b], a_result));
                        if end == MatchEnd::Timeout {
                            timed_out.push(if a_result == 0 { pairing.a } else { pairing.b });
                        }
                        changes.results = true;
                    }
                    Progress::InPlay => {}
                    Progress::Gone => missing.push((i, g)),
                }
            }
            if pairing.over() {
                changes.finished.push(i);
            }
        }
        for entrant in timed_out {
            let e = &mut t.entrants[usize::from(entrant)];
            e.timeouts = e.timeouts.saturating_add(1);
            if e.timeouts >= MAX_TIMEOUTS && !e.withdrawn {
                e.withdrawn = true;
                tracing::info!(tournament_id = %t.id, entrant = e.id(), "withdrawn after losing on time {MAX_TIMEOUTS} times");
            }
        }
        Ok(missing)
    }

    /// Makes game `game` of pairing `pairing` unless it exists, through the one admission
    /// path: its deal's seed, a at its seat and b at the other, bound to their players (a
    /// level plays as a bot). A game the admission refuses (the creator's address at its
    /// cap, a full store) stays named, and the next poll tries again: the refusal is
    /// answered (`Ok(Some)`), for the round to say why it waits.
    async fn make_game(
        &self,
        t: &Tournament,
        pairing: usize,
        game: usize,
    ) -> Result<Option<Error>, Error> {
        let p = &t.pairings[pairing];
        let g = &p.games[game];
        let board = t.pairings[..pairing]
            .iter()
            .filter(|q| q.round == p.round)
            .count();
        let mut new = NewGame {
            preset: t.terms.preset,
            overrides: t.terms.overrides,
            seats: 2,
            bots: Vec::new(),
            seed: None,
            deal: None,
            clock: Some(t.terms.clock),
        };
        let mut players = Vec::new();
        for (entrant, seat) in [(p.a, g.a_seat), (p.b, 1 - g.a_seat)] {
            match &t.entrants[usize::from(entrant)].entry {
                Entry::Level { level, .. } => new.bots.push((seat, *level)),
                Entry::Player { party, .. } => {
                    players.push((seat, party.id.as_str(), party.name.as_str()))
                }
            }
        }
        let deal = t.deal_of(game);
        let record = self
            .games
            .record_from(&new, Some(t.seed_of(p.round, board, deal)))?;
        // Its twins: the other games of its deal (the same hands, the seats swapped).
        let twins = p
            .games
            .iter()
            .enumerate()
            .filter(|&(o, other)| o != game && t.deal_of(o) == deal && other.game_id != g.game_id)
            .map(|(_, other)| other.game_id)
            .collect();
        let admission = Admission {
            id: g.game_id,
            record,
            // A game of two levels would only move the levels' reference ratings, which no
            // game moves.
            rated: t.terms.rated && !players.is_empty(),
            parent: Some(Parent::Tournament(t.id)),
            twins,
            players,
            from: t.address,
        };
        match self.games.admit(admission).await {
            Ok(Some(_)) => {
                tracing::info!(game_id = %g.game_id, tournament_id = %t.id, round = p.round, "tournament game created");
                Ok(None)
            }
            Ok(None) => Ok(None),
            Err(e) if e.refuses_a_game() => {
                tracing::warn!(game_id = %g.game_id, tournament_id = %t.id, error = %e, "a tournament game was refused; the next poll tries again");
                Ok(Some(e))
            }
            Err(e) => Err(e),
        }
    }

    /// What follows an end saved elsewhere (its creator canceled it), as for any end.
    pub(super) async fn after_end(&self, t: &Tournament) -> Result<(), Error> {
        let ended = Changes {
            ended: true,
            ..Changes::default()
        };
        self.after(t, &ended).await
    }

    /// What follows a saved change: the lists, the creator's index, the news.
    async fn after(&self, t: &Tournament, changes: &Changes) -> Result<(), Error> {
        if changes.started || changes.ended {
            self.records.listed(t).await?;
        }
        if changes.ended {
            self.ctx
                .store
                .tournaments()
                .release_creator_tournament(&t.terms.creator.id, &t.id)
                .await?;
            self.records.release_joins(t).await?;
            // Kept a while for its page (TOURNAMENT_KEPT_SECS), then gone with its entries.
            self.ctx
                .store
                .tournaments()
                .keep_tournament_for(&t.id, self.ctx.lifetimes.tournament)
                .await?;
            tracing::info!(tournament_id = %t.id, status = t.status.as_str(), reason = t.reason.as_deref().unwrap_or(""), "tournament over");
        }
        for &pairing in &changes.finished {
            self.publish(t, Told::PairingFinished { pairing }).await;
        }
        if changes.results {
            self.publish(t, Told::Standings).await;
        }
        if let Some((round, took)) = changes.paired {
            self.ctx.metrics.tournament_rounds_paired.inc();
            self.ctx
                .metrics
                .tournament_pairing
                .observe(took.as_secs_f64());
            tracing::info!(tournament_id = %t.id, round, entrants = t.entrants.len(), pairing_us = took.as_micros() as u64, "tournament round paired");
        }
        if changes.round_started {
            self.publish(t, Told::RoundStarted).await;
            for (entrant, e) in t.entrants.iter().enumerate() {
                let Some(player) = e.player_id() else {
                    continue;
                };
                let game_ids: Vec<String> = t
                    .pairings
                    .iter()
                    .filter(|p| {
                        p.round == t.round && (p.a as usize == entrant || p.b as usize == entrant)
                    })
                    .flat_map(|p| p.games.iter().map(|g| g.game_id.to_string()))
                    .collect();
                let notice = TournamentNotice::Round {
                    tournament: t.id,
                    round: t.round,
                    game_ids,
                };
                self.tell(player, notice).await;
            }
        }
        if changes.ended {
            self.publish(t, Told::Finished).await;
            let standings = t.standings();
            for s in &standings {
                let Some(player) = t.entrants[usize::from(s.entrant)].player_id() else {
                    continue;
                };
                let notice = TournamentNotice::Finished {
                    tournament: t.id,
                    status: t.status.as_str(),
                    rank: s.rank,
                    score: s.score(),
                };
                self.tell(player, notice).await;
            }
        }
        Ok(())
    }
}

/// Starts `t`, or cancels it when too few entered.
fn begin(t: &mut Tournament, changes: &mut Changes) {
    let least = least_players(t.terms.format);
    let entered = t.entrants.len();
    if entered < least {
        t.status = TournamentStatus::Canceled;
        t.reason = Some(format!(
            "too few players: {entered} entered, a {} tournament needs {least}",
            t.terms.format.as_str()
        ));
        changes.ended = true;
        return;
    }
    let n = entered as u16;
    t.terms.rounds = match t.terms.format {
        Format::Swiss => t
            .terms
            .rounds_asked
            .unwrap_or_else(|| default_swiss_rounds(n))
            .min(n.saturating_sub(1).max(1)),
        Format::RoundRobin => round_robin_rounds(n),
    };
    t.status = TournamentStatus::Running;
    changes.started = true;
    next_round(t, changes, now_ms());
}

/// Pairs `t`'s next round (every game of the one before is over), or ends it: its last
/// round played, too few left to pair, or no pairing left without a repeat.
fn next_round(t: &mut Tournament, changes: &mut Changes, now: u64) {
    let active = t.entrants.iter().filter(|e| !e.withdrawn).count();
    let end = if t.round >= t.terms.rounds {
        Some(None)
    } else if active < 2 {
        Some(Some("fewer than two players are left".to_owned()))
    } else {
        None
    };
    let round = t.round + 1;
    let began = Instant::now();
    let paired = match end {
        Some(_) => None,
        None => t.pair(round),
    };
    if paired.is_some() {
        changes.paired = Some((round, began.elapsed()));
    }
    let Some(paired) = paired else {
        t.status = TournamentStatus::Finished;
        t.reason = end.unwrap_or_else(|| {
            Some(format!(
                "no pairing of round {round} is left in which nobody meets an opponent again"
            ))
        });
        changes.ended = true;
        return;
    };
    t.round = round;
    let games = t.games_per_pairing();
    for (board, &(a, b)) in paired.pairs.iter().enumerate() {
        let games = (0..games)
            .map(|g| PairingGame {
                game_id: t.game_id(round, board, g),
                // a takes the first seat of each deal's first game, the second of its twin
                // (of the next deal, without duplicate).
                a_seat: (g % 2) as u8,
                result: None,
                named_ms: now,
            })
            .collect();
        t.pairings.push(Pairing { round, a, b, games });
    }
    t.byes.extend(
        paired
            .byes
            .iter()
            .map(|&entrant| ByeRecord { round, entrant }),
    );
    changes.round_started = true;
    // A round of byes alone (everyone else withdrew) has nothing to wait for.
    if paired.pairs.is_empty() {
        next_round(t, changes, now);
    }
}

/// Why a round waits, as its page says it: the admission's refusal of one of its games.
fn waiting_reason(refused: &Error) -> String {
    match refused {
        Error::TooManyGames { max } => format!(
            "the games of this tournament's creator's address are at their cap \
             (MAX_GAMES_PER_IP {max}); the round goes on as some finish"
        ),
        Error::StoreFull { .. } | Error::StoreFullBytes { .. } => {
            format!("{refused}; the round goes on once games finish or expire")
        }
        other => format!("{other}; the round goes on once its games can be made"),
    }
}
