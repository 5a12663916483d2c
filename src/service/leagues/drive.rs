//! Moving a league on: the matches that ended counted, who can be paired now looked at,
//! and the next matches named, all in one compare-and-set of its record; then the
//! matches named are made. A match named but not in the store is made by the next drive
//! (its process died in between), unless it was named long ago: then it expired unplayed,
//! and counts for nobody.

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use futures_util::future::join_all;

use crate::domain::{LeagueId, MatchId};
use crate::store::SaveOutcome;
use crate::store::leagues::LeagueStore;

use super::record::{League, Running};
use super::stream::Told;
use super::{ATTEMPTS, Leagues};
use crate::service::Error;
use crate::service::matches::league::{LeagueMatch, LeagueOutcome};
use crate::service::matchmaking::invitation::{Opponent, Party};
use crate::service::shared::now_ms;

/// A league is driven this often.
const POLL: Duration = Duration::from_secs(2);
/// A match named this long ago and still not in the store expired unmade.
const MAKE_WITHIN: Duration = Duration::from_secs(60);
/// Due leagues one read of the index takes.
const SWEEP_BATCH: usize = 50;
/// Due leagues driven at once (each mostly waits for the store).
const SWEEP_AT_ONCE: usize = 8;
/// How long one sweep goes on taking batches while more are due.
const SWEEP_PASS: Duration = Duration::from_secs(1);

impl Leagues {
    /// Drives the due leagues, earliest due first, [`SWEEP_AT_ONCE`] at a time, batch
    /// after batch until none is due or [`SWEEP_PASS`] is spent. Each drive sets its league
    /// due again [`POLL`] later, so a league due at `t` waits only for those due before.
    /// Returns how many it drove.
    pub async fn sweep_leagues(&self) -> Result<usize, Error> {
        let began = Instant::now();
        let mut driven = 0;
        loop {
            let due = self
                .ctx
                .store
                .leagues()
                .leagues_due(now_ms(), SWEEP_BATCH)
                .await?;
            if due.is_empty() {
                return Ok(driven);
            }
            let ids: Vec<LeagueId> = due.iter().filter_map(|id| LeagueId::stored(id)).collect();
            driven += ids.len();
            futures_util::stream::iter(ids)
                .for_each_concurrent(SWEEP_AT_ONCE, |id| async move {
                    if let Err(e) = self.drive(id).await {
                        tracing::warn!(league_id = %id, error = %e, "a league did not move on; its next poll tries again");
                    }
                })
                .await;
            if due.len() < SWEEP_BATCH || began.elapsed() >= SWEEP_PASS {
                return Ok(driven);
            }
        }
    }

    /// Moves league `id` on once: counts, pairs, makes; then sets it due again.
    pub async fn drive(&self, id: LeagueId) -> Result<(), Error> {
        let store = &self.ctx.store;
        // Due again first: a drive that fails midway is tried again, by any process.
        store
            .leagues()
            .index_league_due(&id, Some(now_ms() + POLL.as_millis() as u64))
            .await?;
        for _ in 0..ATTEMPTS {
            let (version, mut league) = match self.load(id).await {
                Ok(loaded) => loaded,
                Err(Error::LeagueNotFound) => {
                    store.leagues().index_league_due(&id, None).await?;
                    return Ok(());
                }
                Err(e) => return Err(e),
            };
            let outcomes = join_all(
                league
                    .running
                    .iter()
                    .map(|r| self.matches.league_outcome(r.match_id)),
            )
            .await;
            let now = now_ms();
            let rest = self.ctx.lifetimes.league_rest.as_millis() as u64;
            let mut changed = false;
            let mut unmade = Vec::new();
            let mut told = Vec::new();
            let running = league.running.clone();
            for (r, outcome) in running.iter().zip(outcomes) {
                let mut timed_out = [false; 2];
                let counted = match outcome? {
                    LeagueOutcome::Running => continue,
                    LeagueOutcome::Finished {
                        points_diff,
                        margin_per_deal,
                        timed_out: sides,
                        ..
                    } => {
                        timed_out = sides;
                        // One side stopped answering: its loss, whatever the points (a
                        // game lost on time may score none for either side).
                        let diff = match sides {
                            [true, false] => -1,
                            [false, true] => 1,
                            _ => points_diff,
                        };
                        Some((diff, margin_per_deal))
                    }
                    LeagueOutcome::Missing
                        if r.started_ms + MAKE_WITHIN.as_millis() as u64 > now =>
                    {
                        unmade.push(r.clone());
                        continue;
                    }
                    LeagueOutcome::Void | LeagueOutcome::Missing => None,
                };
                if league.count(r.match_id, counted, now) {
                    changed = true;
                    for (entrant, _) in [r.a, r.b].iter().zip(timed_out).filter(|(_, t)| *t) {
                        let e = &mut league.entrants[usize::from(*entrant)];
                        e.rest_until_ms = now + rest;
                        tracing::info!(league_id = %id, entrant = %e.id, "a league entrant stopped answering in a match: it rests");
                    }
                    let result = if counted.is_some() { "played" } else { "void" };
                    self.ctx.metrics.league_match_counted(result);
                    told.push(Told::Finished {
                        match_id: r.match_id,
                        a: league.entrants[usize::from(r.a)].id.clone(),
                        b: league.entrants[usize::from(r.b)].id.clone(),
                        result: league.recent.last().and_then(|c| c.result),
                        at_ms: now,
                    });
                }
            }
            let per_hour = self.ctx.caps.league_matches_per_hour.unwrap_or(usize::MAX);
            let available = self.available(&league, now).await?;
            for (entrant, available) in league.entrants.iter_mut().zip(&available) {
                changed |= entrant.available != *available;
                entrant.available = *available;
            }
            let pairs = league.pairings(&available, per_hour, now);
            for pair in &pairs {
                league.start(MatchId::random(), *pair, now);
                changed = true;
            }
            if changed {
                match store
                    .leagues()
                    .save_league(&id, version, league.encode())
                    .await?
                {
                    SaveOutcome::Saved { .. } => {}
                    SaveOutcome::Conflict { .. } => continue,
                    SaveOutcome::Missing => return Ok(()),
                }
            }
            // The matches named by this save, and those named before and never made.
            let named = league.running.len() - pairs.len();
            for r in &league.running[named..] {
                told.push(Told::Started {
                    match_id: r.match_id,
                    a: league.entrants[usize::from(r.a)].id.clone(),
                    b: league.entrants[usize::from(r.b)].id.clone(),
                    at_ms: now,
                });
            }
            unmade.extend(league.running[named..].iter().cloned());
            for r in &unmade {
                if let Err(e) = self.make(&league, r).await {
                    tracing::warn!(league_id = %id, match_id = %r.match_id, error = %e, "a league's match was not made; the next drive tries again");
                }
            }
            for told in &told {
                self.publish(id, told).await;
            }
            self.ctx
                .metrics
                .league_matches_made
                .inc_by(pairs.len() as u64);
            if !pairs.is_empty() {
                tracing::info!(league_id = %id, paired = pairs.len(), running = league.running.len(), "league paired");
            }
            return Ok(());
        }
        Err(Error::Internal(
            "a league kept changing under its drive".into(),
        ))
    }

    /// Who can be paired now, by entrant: a level always; a player that has not left and
    /// does not rest, with an active webhook or a stream open (one or two reads). A player
    /// playing all the matches it may at once is looked at too: its row says whether it
    /// still answers (a closed stream is away, whatever it is in).
    async fn available(&self, league: &League, now: u64) -> Result<Vec<bool>, Error> {
        let looked = join_all(league.entrants.iter().enumerate().map(|(i, e)| async move {
            if e.left || league.resting(i, now) {
                return Ok(false);
            }
            if e.level.is_some() {
                return Ok(true);
            }
            let id = crate::domain::PlayerId::stored(e.id.clone());
            if self.players.hook_of(&id).await?.is_some() {
                return Ok(true);
            }
            self.players.is_present(&id).await
        }))
        .await;
        looked.into_iter().collect()
    }

    /// Makes match `r` of `league` (a no-op if it exists).
    async fn make(&self, league: &League, r: &Running) -> Result<(), Error> {
        let (a, b) = (
            &league.entrants[usize::from(r.a)],
            &league.entrants[usize::from(r.b)],
        );
        let party = |e: &super::record::Entrant| Party {
            id: e.id.clone(),
            name: e.name.clone(),
        };
        let opponent = match b.level {
            Some(level) => Opponent::Level(level),
            None => Opponent::Player {
                party: party(b),
                accepted: true,
            },
        };
        let new = LeagueMatch {
            challenger: party(a),
            opponent,
            preset: league.preset,
            overrides: league.overrides,
            clock: league.clock,
            deals: u32::from(league.deals_per_match),
        };
        self.matches.make_for_league(r.match_id, new).await
    }
}
