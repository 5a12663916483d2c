//! Matches, the duplicate arena: a series of games between two players (or a player and
//! a built-in level) on deals the server makes from one secret seed, each deal played
//! twice with the sides swapped when `duplicate`, so the luck of the deal cancels out of
//! the margin ([`crate::margin`]).
//!
//! A match is a challenge with a series ([`Series`], stored in the challenge as
//! [`crate::service::matchmaking::series`] has it): it is made, accepted (a level accepts
//! at once), declined or canceled as a challenge is, and once accepted the sweep drives it: every change to it is a compare-and-set on the challenge, which names each
//! game before it is created, so two processes driving one match never make a game twice,
//! and a game a dead process named but never made is made by the next drive. The games
//! are ordinary games with both seats bound; each one's end pokes its match.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::join_all;

use crate::address::AddressKey;
use crate::bots::Level;
use crate::engine::{Outcome, Preset, RulesPatch, rules::Scoring};
use crate::store::SaveOutcome;
use crate::store::challenges::{ChallengeStore, Direction};

use super::Error;
use super::games::admit::Admission;
use super::games::clock::ClockSettings;
use super::games::{Games, Progress};
use super::idempotency::{self, Before, Create, RequestKey};
use super::matchmaking::Matchmaking;
use super::matchmaking::challenge::{Challenge, ChallengeStatus, NewChallenge, Opponent};
use super::matchmaking::series::{MatchStatus, Series, SeriesGame, VOID};
use super::news::PlayerNews;
use super::page::page_offset;
use super::players::{NO_KEY, Players};
use super::shared::{Shared, now_ms};

/// Deals a match plays at most.
pub const MAX_DEALS: u32 = 500;
/// Games of one match in play at once, at most.
pub const MAX_PARALLEL: u8 = 8;
/// Running matches a player may have made, at most: each keeps up to `parallel` games
/// in play, and those against levels keep the bots thinking.
pub const MAX_RUNNING: usize = 4;
/// A player's newest challenges each way that its list of matches looks at.
const LISTED: usize = 200;
/// A running match is looked at this often at least (a game's end pokes it sooner).
const POLL: Duration = Duration::from_secs(2);
/// Compare-and-set attempts on a match before a drive gives up (the next sweep goes on).
const ATTEMPTS: usize = 8;

/// How long after it was named a game missing from the store is still to be made (its
/// process died between naming and making it); after that it expired, and is void.
const MAKE_WITHIN: Duration = Duration::from_secs(60);

/// A running match whose games take long is saved again after this, to stay kept.
const RENEW: Duration = Duration::from_secs(3600);

/// A new match, as its challenger asks for it.
#[derive(Debug, Clone)]
pub struct NewMatch {
    /// A built-in level, or a player's name or id (who accepts as a challenge).
    pub opponent: String,
    pub preset: Preset,
    pub overrides: RulesPatch,
    pub seats: u8,
    pub deals: u32,
    pub duplicate: bool,
    pub clock: Option<ClockSettings>,
    pub parallel: u8,
    pub rated: bool,
    /// Seed text: the same text, the same deals (the games are prearranged, so unrated).
    pub seed: Option<String>,
    /// A built-in level to play the challenger's side (unrated).
    pub play_as: Option<Level>,
    /// At 4 seats (teams): the level beside each side's player (default greedy).
    pub partner: Option<Level>,
}

/// The matches aggregate: the duplicate arena's use cases, and driving a match's series
/// of games (stored in its challenge, which the matchmaking aggregate makes and answers).
pub struct Matches {
    ctx: Arc<Shared>,
    players: Arc<Players>,
    games: Arc<Games>,
    matchmaking: Arc<Matchmaking>,
}

impl Matches {
    pub(super) fn new(
        ctx: Arc<Shared>,
        players: Arc<Players>,
        games: Arc<Games>,
        matchmaking: Arc<Matchmaking>,
    ) -> Arc<Matches> {
        Arc::new(Matches {
            ctx,
            players,
            games,
            matchmaking,
        })
    }

    /// Makes a match for the key's player; one against a built-in level starts at once.
    /// With `request` (its `Idempotency-Key`) a retry answers the same match, made once.
    pub async fn create_match(
        &self,
        key: Option<&str>,
        new: NewMatch,
        from: Option<AddressKey>,
        request: Option<&RequestKey>,
    ) -> Result<Challenge, Error> {
        let teams = new.preset.rules().with(&new.overrides).teams;
        match (new.seats, teams) {
            (2, _) if new.partner.is_some() => {
                return Err(Error::InvalidRules(
                    "partner: only a 4-seat match, in teams, has partners".into(),
                ));
            }
            (2, _) | (4, true) => {}
            _ => {
                return Err(Error::InvalidRules(
                    "seats: a match is between two sides: 2 seats, or 4 in teams \
                     (rules.teams)"
                        .into(),
                ));
            }
        }
        if new.rated && new.seats != 2 {
            return Err(Error::InvalidRules(
                "rated: a rated match is played at 2 seats".into(),
            ));
        }
        if !(1..=MAX_DEALS).contains(&new.deals) {
            return Err(Error::InvalidRules(format!("deals: 1 to {MAX_DEALS}")));
        }
        if !(1..=MAX_PARALLEL).contains(&new.parallel) {
            return Err(Error::InvalidRules(format!(
                "parallel: 1 to {MAX_PARALLEL}"
            )));
        }
        if new.rated && (new.seed.is_some() || new.play_as.is_some()) {
            let field = if new.seed.is_some() {
                "seed"
            } else {
                "play_as"
            };
            return Err(Error::InvalidRules(format!(
                "rated: a match with {field} is unrated (rated games are played by \
                 players on deals nobody knows)"
            )));
        }
        if new.seed.is_some() && !self.ctx.allow_prearranged {
            return Err(Error::InvalidRules(
                "seed: this server does not accept prearranged games \
                 (ALLOW_PREARRANGED=false); make the match without seed"
                    .into(),
            ));
        }
        // At 4 seats each side's second seat is played by the same level, so the margin
        // still measures the two players.
        let mut opponents = vec![new.opponent];
        if new.seats == 4 {
            let partner = new.partner.unwrap_or(Level::Greedy).as_str();
            opponents.extend([partner.to_owned(), partner.to_owned()]);
        }
        let challenge = NewChallenge {
            opponents,
            preset: new.preset,
            overrides: new.overrides,
            seats: new.seats,
            clock: new.clock,
            rated: new.rated,
        };
        let mut series = Series::new(new.deals, new.duplicate, new.parallel, new.seed.as_deref());
        series.stand_in = new.play_as;
        let (_, me) = self.players.authenticate(key.ok_or(NO_KEY)?).await?;
        let too_many = match self.running_matches(&me.id).await? {
            running if running >= MAX_RUNNING => Err(Error::TooManyMatches { max: MAX_RUNNING }),
            _ => Ok(()),
        };
        let (caller, id) = (me.id.clone(), uuid::Uuid::new_v4().to_string());
        let make = async {
            let made = self
                .matchmaking
                .challenge_with(me, id.clone(), challenge, from, Some((series, too_many)))
                .await?;
            self.ctx.store.index_match(&caller, &made.id, true).await?;
            Ok(made)
        };
        let again = |before: Before| async move { before.found(self.get_match(&before.id).await) };
        let made = idempotency::once(
            &self.ctx.store,
            request,
            Create::Match,
            Some(&caller),
            &id,
            None,
            make,
            again,
        )
        .await?;
        // A match against a level is accepted at once: it starts now.
        if made.status == ChallengeStatus::Accepted
            && let Err(e) = self.drive_series(&made.id).await
        {
            tracing::warn!(match_id = %made.id, error = %e, "a match did not start; a sweep starts it");
        }
        Ok(made)
    }

    /// A match by id: anyone may read one.
    pub async fn get_match(&self, id: &str) -> Result<Challenge, Error> {
        let (_, challenge) = self.load_match(id).await?;
        Ok(challenge)
    }

    /// The key's player's matches (made or received), newest first: a page (from 1) of
    /// those its newest challenges hold (the store keeps a challenge a day after its last
    /// change, so a match lists while it runs and a day after).
    pub async fn my_matches(
        &self,
        key: Option<&str>,
        page: usize,
        per_page: usize,
    ) -> Result<Vec<Challenge>, Error> {
        let skip = page_offset(page, per_page, "per_page")?;
        let (_, me) = self.players.authenticate(key.ok_or(NO_KEY)?).await?;
        let mut ids = Vec::new();
        for direction in [Direction::Out, Direction::In] {
            ids.extend(
                self.ctx
                    .store
                    .player_challenges(&me.id, direction, 0, LISTED)
                    .await?,
            );
        }
        ids.sort();
        ids.dedup();
        let loaded = join_all(ids.iter().map(|id| self.ctx.store.load_challenge(id))).await;
        let mut found = Vec::new();
        for stored in loaded {
            let Some(stored) = stored? else { continue };
            let challenge = Challenge::decode(&stored.bytes)?;
            if challenge.series.is_some() && challenge.player_ids().contains(&me.id) {
                found.push(challenge);
            }
        }
        found.sort_by(|a, b| (b.created_ms, &b.id).cmp(&(a.created_ms, &a.id)));
        Ok(found.into_iter().skip(skip).take(per_page).collect())
    }

    /// Cancels a match: before it is accepted as its challenge is canceled (the
    /// challenger) or declined (the opponent); once running, either player stops it
    /// starting games (those in play go on).
    pub async fn cancel_match(&self, key: Option<&str>, id: &str) -> Result<Challenge, Error> {
        let (_, me) = self.players.authenticate(key.ok_or(NO_KEY)?).await?;
        let (_, challenge) = self.load_match(id).await?;
        if challenge.status_now() == ChallengeStatus::Open {
            return if challenge.challenger.id == me.id {
                self.matchmaking.cancel_challenge(key, id).await
            } else {
                self.matchmaking.decline(key, id).await
            };
        }
        for _ in 0..ATTEMPTS {
            let (version, mut challenge) = self.load_match(id).await?;
            let player = challenge.challenger.id == me.id
                || challenge
                    .opponents
                    .iter()
                    .any(|o| matches!(o, Opponent::Player { party, .. } if party.id == me.id));
            if !player {
                return Err(Error::Forbidden(
                    "this match is between other players".into(),
                ));
            }
            let accepted = challenge.status_now() == ChallengeStatus::Accepted;
            let series = challenge.series.as_mut().expect("a match has a series");
            if series.canceled || !accepted {
                return Ok(challenge);
            }
            series.canceled = true;
            match self
                .ctx
                .store
                .save_challenge(id, version, challenge.encode())
                .await?
            {
                SaveOutcome::Saved { .. } => {
                    tracing::info!(match_id = %id, player_id = %me.id, "match canceled");
                    return Ok(challenge);
                }
                SaveOutcome::Conflict { .. } => continue,
                SaveOutcome::Missing => return Err(Error::ChallengeNotFound),
            }
        }
        Err(Error::Internal(
            "a match kept changing under a cancel".into(),
        ))
    }

    /// The running matches `player` made, however many challenges it made: read from the
    /// store's set of its matches that may still run, whose entries for matches found
    /// over (or gone) are dropped on the way.
    pub(super) async fn running_matches(&self, player: &str) -> Result<usize, Error> {
        let ids = self.ctx.store.player_matches(player).await?;
        let loaded = join_all(ids.iter().map(|id| self.ctx.store.load_challenge(id))).await;
        let mut running = 0;
        for (id, stored) in ids.iter().zip(loaded) {
            let challenge = stored?
                .map(|stored| Challenge::decode(&stored.bytes))
                .transpose()?;
            let state = challenge.as_ref().and_then(|challenge| {
                let series = challenge.series.as_ref()?;
                Some((challenge.status_now(), series.status(true)))
            });
            match state {
                Some((ChallengeStatus::Accepted, MatchStatus::Running)) => running += 1,
                // Not yet answered: it may still run.
                Some((ChallengeStatus::Open, _)) => {}
                _ => self.ctx.store.index_match(player, id, false).await?,
            }
        }
        Ok(running)
    }

    async fn load_match(&self, id: &str) -> Result<(u64, Challenge), Error> {
        match self.matchmaking.load_challenge(id).await {
            Ok((version, challenge)) if challenge.series.is_some() => Ok((version, challenge)),
            Ok(_) | Err(Error::ChallengeNotFound) => Err(Error::MatchNotFound),
            Err(e) => Err(e),
        }
    }

    /// Moves accepted match `id` on: the results of its games that ended, new games up to
    /// `parallel`, and the games it named but nobody made. Returns whether it is done.
    pub(crate) async fn drive_series(&self, id: &str) -> Result<bool, Error> {
        for _ in 0..ATTEMPTS {
            let (version, mut challenge) = self.load_match(id).await?;
            if challenge.status_now() != ChallengeStatus::Accepted {
                return Ok(true);
            }
            let series = challenge.series.as_mut().expect("a match has a series");
            let mut changed = false;
            let mut missing = Vec::new();
            for game in series.games.iter_mut().filter(|g| g.result.is_none()) {
                match self.games.progress(&game.game_id).await? {
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
                match self
                    .ctx
                    .store
                    .save_challenge(id, version, challenge.encode())
                    .await?
                {
                    SaveOutcome::Saved { .. } => {}
                    SaveOutcome::Conflict { .. } => continue,
                    SaveOutcome::Missing => return Err(Error::MatchNotFound),
                }
                let news = PlayerNews::MatchUpdated(Box::new(challenge.clone()));
                for player in challenge.player_ids() {
                    self.players.tell(&player, &news).await;
                }
            }
            let mut refused = Vec::new();
            for index in missing.into_iter().chain(named) {
                match self.start_series_game(&challenge, index).await {
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
            self.ctx.store.index_challenge_due(id, next).await?;
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
    async fn unname(&self, id: &str, refused: &[u32]) -> Result<(), Error> {
        for _ in 0..ATTEMPTS {
            let (version, mut challenge) = self.load_match(id).await?;
            let series = challenge.series.as_mut().expect("a match has a series");
            let before = series.games.len();
            while let Some(game) = series.games.last()
                && game.result.is_none()
                && refused.contains(&game.index)
                // Made meanwhile by another process's drive: it stays.
                && !self.games.exists(&game.game_id).await?
            {
                series.games.pop();
            }
            if series.games.len() == before {
                return Ok(());
            }
            match self
                .ctx
                .store
                .save_challenge(id, version, challenge.encode())
                .await?
            {
                SaveOutcome::Saved { .. } => return Ok(()),
                SaveOutcome::Conflict { .. } => continue,
                SaveOutcome::Missing => return Err(Error::MatchNotFound),
            }
        }
        Ok(())
    }

    /// Makes game `index` of match `challenge` unless it exists: its deal's seed, the
    /// challenger at its seat, the opponent (a player or a level) at the other; at 4
    /// seats, the partner level two seats on from each.
    async fn start_series_game(&self, challenge: &Challenge, index: u32) -> Result<(), Error> {
        let series = challenge.series.as_ref().expect("a match has a series");
        let game = &series.games[index as usize];
        let seat = game.seat;
        let mut new = challenge.new_game();
        new.bots.clear();
        if let Some(Opponent::Level(level)) = challenge.opponents.first() {
            new.bots.push((1 - seat, *level));
        }
        if let Some(level) = series.stand_in {
            new.bots.push((seat, level));
        }
        if let Some(Opponent::Level(partner)) = challenge.opponents.get(1) {
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
        let mut record = self.games.record_from(&new, server_seed)?;
        record.rated = challenge.rated;
        record.series = Some(challenge.id.clone());
        record.twins = series.twins_of(&challenge.id, index);
        let mut players = Vec::new();
        if series.stand_in.is_none() {
            players.push((seat, &challenge.challenger));
        }
        if let Some(Opponent::Player { party, .. }) = challenge.opponents.first() {
            players.push((1 - seat, party));
        }
        let admission = Admission {
            id: &game.game_id,
            record,
            players: players
                .into_iter()
                .map(|(seat, party)| (seat, party.id.as_str(), party.name.as_str()))
                .collect(),
            // Counted against its maker's address, as any table it made.
            from: challenge.address,
        };
        if self.games.admit(admission).await?.is_some() {
            tracing::info!(game_id = %game.game_id, match_id = %challenge.id, index, "match game created");
        }
        Ok(())
    }

    /// After the save that ended a game of a match: the match moves on at once (its
    /// view counts the game as soon as the game's last move is answered); should that
    /// fail, its next poll does.
    pub(crate) async fn poke(&self, series: &str) {
        if let Err(e) = self.drive_series(series).await {
            tracing::warn!(match_id = %series, error = %e, "a match did not move on; its poll comes");
        }
    }
}

/// Whether points in `preset` are penalties (the margin is the other way round).
pub fn penalty_scoring(challenge: &Challenge) -> bool {
    challenge.preset.rules().with(&challenge.overrides).scoring == Scoring::Penalty
}
