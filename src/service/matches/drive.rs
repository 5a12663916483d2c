//! Driving a running match: the results of its games that ended counted, its next games
//! named (in its record, before they are made) and made, and the games the admission
//! refused taken out again until there is room.

use std::time::Duration;

use crate::domain::MatchId;
use crate::engine::Outcome;
use crate::store::SaveOutcome;

use super::series::{Series, SeriesGame, VOID};
use super::{ATTEMPTS, Match, MatchNotice, Matches};
use crate::service::error::Error;
use crate::service::games::Progress;
use crate::service::games::admit::{Admission, Parent};
use crate::service::matchmaking::invitation::{ChallengeStatus, Opponent};
use crate::service::shared::now_ms;

/// A running match is looked at this often at least (a game's end pokes it sooner).
const POLL: Duration = Duration::from_secs(2);

/// How long after it was named a game missing from the store is still to be made (its
/// process died between naming and making it); after that it expired, and is void.
const MAKE_WITHIN: Duration = Duration::from_secs(60);

/// A running match whose games take long is saved again after this, to stay kept.
const RENEW: Duration = Duration::from_secs(3600);

impl Matches {
    /// Moves accepted match `id` on: the results of its games that ended, new games up to
    /// `parallel`, and the games it named but nobody made. Returns whether it is done.
    pub(crate) async fn drive_series(&self, id: MatchId) -> Result<bool, Error> {
        for _ in 0..ATTEMPTS {
            let (version, mut found) = self.records.load(id).await?;
            if found.status_now() != ChallengeStatus::Accepted {
                return Ok(true);
            }
            let series = found.series_mut();
            let mut changed = false;
            let mut missing = Vec::new();
            for game in series.games.iter_mut().filter(|g| g.result.is_none()) {
                match self.games.progress(game.game_id).await? {
                    Progress::Ended {
                        outcome, scores, ..
                    } => {
                        let (mine, theirs) = (game.seat as usize, 1 - game.seat as usize);
                        let result = match outcome {
                            Outcome::Won { side } if side == game.seat => 10,
                            Outcome::Won { .. } => 0,
                            Outcome::Drawn => 5,
                        };
                        game.result = Some((scores[mine], scores[theirs], result));
                        changed = true;
                    }
                    Progress::InPlay => {}
                    Progress::Gone
                        if now_ms().saturating_sub(game.named_ms)
                            < MAKE_WITHIN.as_millis() as u64 =>
                    {
                        missing.push(game.index);
                    }
                    Progress::Gone => {
                        tracing::info!(match_id = %id, game_id = %game.game_id, "a match game expired unfinished: void");
                        game.result = Some((0, 0, VOID));
                        changed = true;
                    }
                }
            }
            // A deal's games start together, so neither is played after the other ended
            // (whose last round shows every hand).
            // So `parallel` counts whole deals: an odd one is rounded up.
            let per_deal = if series.duplicate { 2 } else { 1 };
            let most = usize::from(series.parallel).div_ceil(per_deal) * per_deal;
            let mut named = Vec::new();
            while !series.canceled
                && series.in_play() + per_deal <= most
                && (series.games.len() as u32) < series.total()
            {
                for _ in 0..per_deal {
                    let index = series.games.len() as u32;
                    series.games.push(SeriesGame {
                        index,
                        game_id: Series::game_id(id, index),
                        seat: series.challenger_seat(index),
                        result: None,
                        named_ms: now_ms(),
                    });
                    named.push(index);
                }
            }
            let done = series.in_play() == 0
                && (series.canceled || series.games.len() as u32 == series.total());
            let renew = now_ms().saturating_sub(series.saved_ms) >= RENEW.as_millis() as u64;
            if changed || !named.is_empty() || renew {
                series.saved_ms = now_ms();
                match self.records.save(id, version, &found).await? {
                    SaveOutcome::Saved { .. } => {}
                    SaveOutcome::Conflict { .. } => continue,
                    SaveOutcome::Missing => return Err(Error::MatchNotFound),
                }
                let players = found.invitation().player_ids();
                self.tell(&players, MatchNotice::Updated(&found)).await;
            }
            let mut refused = Vec::new();
            for index in missing.into_iter().chain(named) {
                match self.start_series_game(&found, index).await {
                    Ok(()) => {}
                    Err(e) if e.refuses_a_game() => refused.push(index),
                    Err(e) => return Err(e),
                }
            }
            if !refused.is_empty() {
                tracing::info!(match_id = %id, games = refused.len(), "a match's games were refused (its maker's address is at its cap); it waits for room");
                self.unname(id, &refused).await?;
            }
            let next = (!done).then(|| now_ms() + POLL.as_millis() as u64);
            self.records.index_due(id, next).await?;
            if done {
                tracing::info!(match_id = %id, "match over");
            }
            return Ok(done);
        }
        Ok(false)
    }

    /// Takes the games the admission refused (`refused`) out of match `id` again, from its
    /// end: named, never made, they are named again when a poll finds room. A refused game
    /// with a made one after it stays named and is made (or void) as any missing game.
    async fn unname(&self, id: MatchId, refused: &[u32]) -> Result<(), Error> {
        for _ in 0..ATTEMPTS {
            let (version, mut found) = self.records.load(id).await?;
            let series = found.series_mut();
            let before = series.games.len();
            while let Some(game) = series.games.last()
                && game.result.is_none()
                && refused.contains(&game.index)
                // Made meanwhile by another process's drive: it stays.
                && !self.games.exists(game.game_id).await?
            {
                series.games.pop();
            }
            if series.games.len() == before {
                return Ok(());
            }
            match self.records.save(id, version, &found).await? {
                SaveOutcome::Saved { .. } => return Ok(()),
                SaveOutcome::Conflict { .. } => continue,
                SaveOutcome::Missing => return Err(Error::MatchNotFound),
            }
        }
        Ok(())
    }

    /// Makes game `index` of match `m` unless it exists: its deal's seed, the
    /// challenger at its seat, the opponent (a player or a level) at the other; at 4
    /// seats, the partner level two seats on from each.
    async fn start_series_game(&self, m: &Match, index: u32) -> Result<(), Error> {
        let (id, series, invitation) = (m.id(), m.series(), m.invitation());
        let game = &series.games[index as usize];
        let seat = game.seat;
        let mut new = invitation.new_game();
        new.bots.clear();
        if let Some(Opponent::Level(level)) = invitation.opponents().first() {
            new.bots.push((1 - seat, *level));
        }
        if let Some(level) = series.stand_in {
            new.bots.push((seat, level));
        }
        if let Some(Opponent::Level(partner)) = invitation.opponents().get(1) {
            new.bots
                .extend([(seat + 2, *partner), (3 - seat, *partner)]);
        }
        let seed = series.seed_of(series.deal_of(index));
        // A seeded match's deals are known: its games say so (prearranged).
        let server_seed = if series.seeded {
            new.seed = Some(seed);
            None
        } else {
            Some(seed)
        };
        let record = self.games.record_from(&new, server_seed)?;
        let mut players = Vec::new();
        if series.stand_in.is_none() {
            players.push((seat, invitation.challenger()));
        }
        if let Some(Opponent::Player { party, .. }) = invitation.opponents().first() {
            players.push((1 - seat, party));
        }
        let admission = Admission {
            id: game.game_id,
            record,
            rated: invitation.rated(),
            parent: Some(Parent::Match(id)),
            twins: series.twins_of(id, index),
            players: players
                .into_iter()
                .map(|(seat, party)| (seat, party.id.as_str(), party.name.as_str()))
                .collect(),
            // Counted against its maker's address, as any table it made.
            from: m.address(),
        };
        if self.games.admit(admission).await?.is_some() {
            tracing::info!(game_id = %game.game_id, match_id = %id, index, "match game created");
        }
        Ok(())
    }

    /// After the save that ended a game of a match: the match moves on at once (its
    /// view counts the game as soon as the game's last move is answered); should that
    /// fail, its next poll does.
    pub(crate) async fn poke(&self, series: MatchId) {
        if let Err(e) = self.drive_series(series).await {
            tracing::warn!(match_id = %series, error = %e, "a match did not move on; its poll comes");
        }
    }
}
