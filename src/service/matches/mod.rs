//! Matches, the duplicate arena: a series of games between two players (or a player and
//! a built-in level) on deals the server makes from one secret seed, each deal played
//! twice with the sides swapped when `duplicate`, so the luck of the deal cancels out of
//! the margin ([`crate::margin`]).
//!
//! A match is an aggregate of its own: [`record`] (the stored [`Match`], and the reader of
//! one stored the old way, as a challenge with a series), [`series`] (its games, seed,
//! score and margin), `stored` (`MatchRecords`: where it is kept, under a challenge's
//! key, through the challenge store), `invite` (its invitation, answered at the challenge routes by the
//! rules matchmaking owns, and its due entry tended) and `drive` (its games made and
//! counted). Once accepted the sweep drives it: every change to it is a compare-and-set
//! on its record, which names each game before it is created, so two processes driving
//! one match never make a game twice, and a game a dead process named but never made is
//! made by the next drive. The games are ordinary games with both seats bound; each one's
//! end pokes its match. What its players are to hear goes up through [`MatchReactions`].

mod drive;
mod invite;
pub mod league;
pub mod record;
pub mod series;
mod stored;
#[cfg(test)]
mod tests;

use std::sync::{Arc, Weak};

use futures_util::future::BoxFuture;
use futures_util::future::join_all;

use crate::address::AddressKey;
use crate::bots::Level;
use crate::domain::{Caller, MatchId, Who};
use crate::engine::{Preset, RulesPatch};
use crate::store::SaveOutcome;
use crate::store::challenges::Direction;

use super::Error;
use super::games::Games;
use super::games::clock::ClockSettings;
use super::idempotency::{self, Before, Create, RequestKey};
use super::matchmaking::Challenges;
use super::matchmaking::invitation::{Answer, ChallengeStatus, Invitation, Party, Terms};
use super::page::page_offset;
use super::players::{PlayerRecord, Players};
use super::shared::{Port, Shared, now_ms};
pub use record::Match;
use series::Series;
use stored::MatchRecords;

/// Deals a match plays at most.
pub const MAX_DEALS: u32 = 500;
/// Games of one match in play at once, at most.
pub const MAX_PARALLEL: u8 = 8;
/// Running matches a player may have made, at most: each keeps up to `parallel` games
/// in play, and those against levels keep the bots thinking.
pub const MAX_RUNNING: usize = 4;
/// A player's newest challenges each way that its list of matches looks at.
const LISTED: usize = 200;
/// Compare-and-set attempts on a match before a change gives up (the next sweep goes on).
const ATTEMPTS: usize = 8;

/// A new match, as its challenger asks for it.
#[derive(Debug, Clone)]
pub struct NewMatch {
    /// A built-in level, or a player's name or id (who accepts as a challenge).
    pub opponent: Who,
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

/// What the players are to hear of a match.
pub enum MatchNotice<'a> {
    /// It was made, to its opponent: an invitation to answer.
    Offered(&'a Match),
    /// Its invitation closed unaccepted: declined, canceled or expired.
    Closed(&'a Match),
    /// It moved on: a game started or ended, or it is over.
    Updated(&'a Match),
}

/// The reactions to a match's changes, run by the dispatcher.
pub trait MatchReactions: Send + Sync {
    /// Tells `players` of `notice`, on their streams.
    fn tell<'a>(&'a self, players: &'a [String], notice: MatchNotice<'a>) -> BoxFuture<'a, ()>;
}

/// The matches aggregate: the duplicate arena's use cases, its invitations, and driving a
/// match's series of games.
pub struct Matches {
    ctx: Arc<Shared>,
    players: Arc<Players>,
    games: Arc<Games>,
    challenges: Arc<Challenges>,
    records: MatchRecords,
    reactions: Port<dyn MatchReactions>,
}

impl Matches {
    pub(super) fn new(
        ctx: Arc<Shared>,
        players: Arc<Players>,
        games: Arc<Games>,
        challenges: Arc<Challenges>,
    ) -> Arc<Matches> {
        Arc::new(Matches {
            records: MatchRecords::new(Arc::clone(&ctx)),
            ctx,
            players,
            games,
            challenges,
            reactions: Port::new(),
        })
    }

    /// Where what follows a change is handed up; set once, by `Services::new`.
    pub(super) fn react_with(&self, reactions: Weak<dyn MatchReactions>) {
        self.reactions.set(reactions);
    }

    /// Tells `players` of `notice` (best effort, as all news).
    async fn tell(&self, players: &[String], notice: MatchNotice<'_>) {
        if let Some(reactions) = self.reactions.get() {
            reactions.tell(players, notice).await;
        }
    }

    /// Makes a match for the key's player; one against a built-in level starts at once.
    /// With `request` (its `Idempotency-Key`) a retry answers the same match, made once.
    pub async fn create_match(
        &self,
        caller: &Caller,
        new: NewMatch,
        from: Option<AddressKey>,
        request: Option<&RequestKey>,
    ) -> Result<Match, Error> {
        check(&new, self.ctx.allow_prearranged)?;
        let (_, me) = self.players.authenticate(caller).await?;
        let too_many = match self.running_matches(me.id()).await? {
            running if running >= MAX_RUNNING => Err(Error::TooManyMatches { max: MAX_RUNNING }),
            _ => Ok(()),
        };
        let (caller, id) = (me.id().clone(), MatchId::random());
        let make = async {
            let made = self.make(me, id, new, from, too_many).await?;
            self.records.index_running(&caller, made.id(), true).await?;
            Ok(made)
        };
        let again = |before: Before| async move {
            let found = match MatchId::stored(&before.id) {
                Some(id) => self.get_match(id).await,
                None => Err(Error::MatchNotFound),
            };
            before.found(found)
        };
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
        if made.invitation().saved_status() == ChallengeStatus::Accepted
            && let Err(e) = self.drive_series(made.id()).await
        {
            tracing::warn!(match_id = %made.id(), error = %e, "a match did not start; a sweep starts it");
        }
        Ok(made)
    }

    /// Makes match `id` for player `me`, refused as `too_many` says once its opponent is
    /// found. One against a level is accepted at once (the caller moves it on); one
    /// against a player waits for its answer, counted against the caps on open
    /// invitations as a challenge is.
    async fn make(
        &self,
        me: PlayerRecord,
        id: MatchId,
        new: NewMatch,
        from: Option<AddressKey>,
        too_many: Result<(), Error>,
    ) -> Result<Match, Error> {
        let mut series = Series::new(
            new.deals,
            new.duplicate,
            new.parallel,
            new.seed.as_deref(),
            self.ctx.dealer.secret(),
        );
        series.stand_in = new.play_as;
        let now = now_ms();
        let challenger = Party {
            id: me.id().to_string(),
            name: me.name().to_owned(),
        };
        let terms = Terms {
            preset: new.preset,
            overrides: new.overrides,
            seats: new.seats,
            clock: new.clock,
            rated: new.rated,
        };
        let expires_ms = now + self.ctx.lifetimes.challenge.as_millis() as u64;
        let mut invitation = Invitation::new(challenger, terms, now, expires_ms);
        // Its games count against its maker's address.
        invitation.set_address(from);
        // At 4 seats each side's second seat is played by the same level, so the margin
        // still measures the two players.
        let mut opponents = vec![new.opponent];
        if new.seats == 4 {
            let partner = Who::of_level(new.partner.unwrap_or(Level::Greedy));
            opponents.extend([partner.clone(), partner]);
        }
        // The rules, seats and clock are checked as a game's are.
        self.challenges
            .check_game(&invitation.new_game(), new.rated)?;
        for who in &opponents {
            invitation.add_opponent(self.challenges.opponent("opponent", who, &me).await?);
        }
        too_many?;
        let accepted = invitation.all_accepted();
        if accepted {
            invitation.accept_at_once();
        }
        let made = Match::new(id, invitation, series);
        if accepted {
            self.records.store_new(&made, Some(now_ms())).await?;
        } else {
            self.challenges.count_open(made.counted()).await?;
            if let Err(e) = self.records.store_new(&made, Some(expires_ms)).await {
                self.challenges.uncount_open(made.counted()).await;
                return Err(e);
            }
            let opponents = made.invitation().opponent_ids();
            self.tell(&opponents, MatchNotice::Offered(&made)).await;
        }
        self.ctx.metrics.challenge("made");
        let status = made.invitation().saved_status().as_str();
        tracing::info!(match_id = %id, challenger = %me.id(), status, "match made");
        Ok(made)
    }

    /// A match by id: anyone may read one.
    pub async fn get_match(&self, id: MatchId) -> Result<Match, Error> {
        let (_, found) = self.records.load(id).await?;
        Ok(found)
    }

    /// The key's player's matches (made or received), newest first: a page (from 1) of
    /// those its newest challenges hold (the store keeps a match a day after its last
    /// change, so a match lists while it runs and a day after).
    pub async fn my_matches(
        &self,
        caller: &Caller,
        page: usize,
        per_page: usize,
    ) -> Result<Vec<Match>, Error> {
        let (_, me) = self.players.authenticate(caller).await?;
        self.matches_of(me.id(), page, per_page).await
    }

    /// A player's matches (by id, name or level), listed as [`Self::my_matches`] lists
    /// the key's: anyone may read a match, as anyone may watch its games.
    pub async fn player_matches(
        &self,
        who: &Who,
        page: usize,
        per_page: usize,
    ) -> Result<Vec<Match>, Error> {
        let id = self.players.known(who).await?;
        self.matches_of(&id, page, per_page).await
    }

    async fn matches_of(
        &self,
        player: &str,
        page: usize,
        per_page: usize,
    ) -> Result<Vec<Match>, Error> {
        let skip = page_offset(page, per_page, "per_page")?;
        let mut ids = Vec::new();
        for direction in [Direction::Out, Direction::In] {
            ids.extend(self.records.listed(player, direction, LISTED).await?);
        }
        // Challenges' and matches' ids, as the store's index lists them.
        let mut ids: Vec<MatchId> = ids.iter().filter_map(|id| MatchId::stored(id)).collect();
        ids.sort();
        ids.dedup();
        let loaded = join_all(ids.iter().map(|&id| self.records.find(id))).await;
        let mut found = Vec::new();
        for stored in loaded {
            match stored? {
                Some((_, m)) if m.invitation().has_player(player) => found.push(m),
                _ => {}
            }
        }
        let newest = |m: &Match| (m.invitation().created_ms(), m.id());
        found.sort_by_key(|m| std::cmp::Reverse(newest(m)));
        Ok(found.into_iter().skip(skip).take(per_page).collect())
    }

    /// Cancels a match: before it is accepted as a challenge is canceled (the
    /// challenger) or declined (the opponent); once running, either player stops it
    /// starting games (those in play go on).
    pub async fn cancel_match(&self, caller: &Caller, id: MatchId) -> Result<Match, Error> {
        let (_, me) = self.players.authenticate(caller).await?;
        let (_, found) = self.records.load(id).await?;
        if found.status_now() == ChallengeStatus::Open {
            let answer = match found.invitation().challenger().id == me.id().as_str() {
                true => Answer::Cancel,
                false => Answer::Decline,
            };
            return self.answer_as(&me, id, answer).await;
        }
        for _ in 0..ATTEMPTS {
            let (version, mut found) = self.records.load(id).await?;
            if !found.invitation().has_player(me.id()) {
                return Err(Error::Forbidden(
                    "this match is between other players".into(),
                ));
            }
            let accepted = found.status_now() == ChallengeStatus::Accepted;
            if found.series().canceled || !accepted {
                return Ok(found);
            }
            found.series_mut().cancel();
            match self.records.save(id, version, &found).await? {
                SaveOutcome::Saved { .. } => {
                    tracing::info!(match_id = %id, player_id = %me.id(), "match canceled");
                    return Ok(found);
                }
                SaveOutcome::Conflict { .. } => continue,
                SaveOutcome::Missing => return Err(Error::MatchNotFound),
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
        let ids = self.records.running_ids(player).await?;
        let loaded = join_all(ids.iter().map(|&id| self.records.find(id))).await;
        let mut running = 0;
        for (&id, stored) in ids.iter().zip(loaded) {
            match stored?.map(|(_, m)| m) {
                Some(m) if m.running() => running += 1,
                // Not yet answered: it may still run.
                Some(m) if m.status_now() == ChallengeStatus::Open => {}
                _ => self.records.index_running(player, id, false).await?,
            }
        }
        Ok(running)
    }
}

/// Refuses a match no rule allows, naming the field: before anything is read, so a
/// wrong body is told so whoever sends it.
fn check(new: &NewMatch, allow_prearranged: bool) -> Result<(), Error> {
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
    if new.seed.is_some() && !allow_prearranged {
        return Err(Error::InvalidRules(
            "seed: this server does not accept prearranged games \
             (ALLOW_PREARRANGED=false); make the match without seed"
                .into(),
        ));
    }
    Ok(())
}
