//! Tournaments: players (people, bot accounts, built-in levels) on one preset, paired
//! round after round by their standings (Swiss or round robin, [`crate::tournament`]),
//! each pairing a duplicate deal by default.
//!
//! A tournament is its own stored record ([`record`]), changed only by compare-and-set,
//! kept with its indexes (by status, and each player's places) by `kept`'s
//! `TournamentRecords`.
//! The driver ([`drive`]) moves it on: it names a round's pairings and games in one save
//! before making any game (each game's id derived from the tournament, the round and the
//! board), so two processes driving one tournament never make a game twice, and a game a
//! dead process named but never made is made by the next drive. Every game goes through
//! the one admission path, counted against its creator's address. The end of a game pokes
//! it (through the dispatcher); the sweep polls the due ones, so a crash loses nothing.

mod creator;
pub mod drive;
mod entered;
mod joined;
mod kept;
pub mod record;
pub mod stream;
pub mod terms;

pub use creator::CANCELED_BY_CREATOR;

use std::sync::{Arc, Weak};

use futures_util::future::{BoxFuture, join_all};

use crate::address::AddressKey;
use crate::bots::Level;
use crate::domain::{Caller, PlayerId, TournamentId, visible_text};
use crate::engine::{Preset, RulesPatch};
use crate::store::SaveOutcome;
use crate::store::players::PlayerAdmission;
use crate::store::tournaments::TournamentStore;
use crate::tournament::{MAX_ROUND_ROBIN, MAX_ROUNDS};

use super::Error;
use super::games::Games;
use super::games::clock::{ClockSettings, OnTimeout};
use super::idempotency::{self, Before, Create, RequestKey};
use super::matchmaking::invitation::Party;
use super::page::page_offset;
use super::players::{CREATION_WINDOW, Players};
use super::shared::{Port, Shared, now_ms};
use kept::TournamentRecords;
use record::{
    EntrantRecord, Entry, Format, MAX_DEALS_PER_PAIRING, Terms, Tournament, TournamentStatus,
};

/// A creator's claim on a tournament not stored this long after is a create that failed.
const CLAIM_MADE_WITHIN_MS: u64 = 60_000;
/// A tournament name: 1 to this many characters.
pub const MAX_TOURNAMENT_NAME: usize = 64;
/// How long after its making a tournament starts unless it says (or is started early).
pub const DEFAULT_START_IN_MS: u64 = 10 * 60 * 1000;
/// How far ahead a tournament may be set to start.
pub const MAX_START_IN_MS: u64 = 7 * 24 * 3600 * 1000;
/// The clock of a tournament's games unless it says: 5 minutes a player, and a seat that
/// runs out of time loses the game.
pub const DEFAULT_CLOCK: ClockSettings = ClockSettings {
    bank_secs: 300,
    increment_secs: 0,
    on_timeout: OnTimeout::Forfeit,
    timeout_bot: Level::Greedy,
    abandon_after: 1,
};
/// Games an entrant may lose on time before it is withdrawn (it is absent).
pub const MAX_TIMEOUTS: u8 = 2;
/// Compare-and-set attempts on a tournament before a change gives up.
const ATTEMPTS: usize = 8;

/// A new tournament, as its creator asks for it.
#[derive(Debug, Clone)]
pub struct NewTournament {
    pub name: String,
    pub preset: Preset,
    pub overrides: RulesPatch,
    pub format: Format,
    pub rounds: Option<u16>,
    pub duplicate: bool,
    pub deals_per_pairing: Option<u16>,
    pub clock: Option<ClockSettings>,
    pub starts_at_ms: Option<u64>,
    pub max_players: Option<u16>,
    pub rated: bool,
    pub levels: Vec<Level>,
}

/// Who joins: the key's player, or (its creator asking) a built-in level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Joiner {
    Me,
    Level(Level),
}

/// What a tournament's player hears of it: handed up, made news by the dispatcher.
pub enum TournamentNotice {
    /// A round started: the player's games in it (none: a bye).
    Round {
        tournament: TournamentId,
        round: u16,
        game_ids: Vec<String>,
    },
    /// It finished (or was canceled): where the player ended.
    Finished {
        tournament: TournamentId,
        status: &'static str,
        rank: u16,
        score: f64,
    },
}

/// The reactions to a tournament's changes, run by the dispatcher.
pub trait TournamentReactions: Send + Sync {
    /// Tells `player` of `notice`, on its stream.
    fn tell<'a>(&'a self, player: &'a str, notice: TournamentNotice) -> BoxFuture<'a, ()>;
}

/// The tournaments aggregate: its use cases, and driving each one's rounds.
pub struct Tournaments {
    ctx: Arc<Shared>,
    players: Arc<Players>,
    games: Arc<Games>,
    records: TournamentRecords,
    reactions: Port<dyn TournamentReactions>,
}

impl Tournaments {
    pub(super) fn new(ctx: Arc<Shared>, players: Arc<Players>, games: Arc<Games>) -> Arc<Self> {
        Arc::new(Tournaments {
            records: TournamentRecords::new(Arc::clone(&ctx)),
            ctx,
            players,
            games,
            reactions: Port::new(),
        })
    }

    /// Where what its players hear is handed up; set once, by `Services::new`.
    pub(super) fn react_with(&self, reactions: Weak<dyn TournamentReactions>) {
        self.reactions.set(reactions);
    }

    /// Tells `player` of `notice` (best effort, as all news).
    async fn tell(&self, player: &str, notice: TournamentNotice) {
        if let Some(reactions) = self.reactions.get() {
            reactions.tell(player, notice).await;
        }
    }

    fn max_players(&self) -> usize {
        self.ctx.caps.tournament_players.unwrap_or(usize::MAX)
    }

    /// Makes a tournament for the key's player, open for registration until it starts.
    /// With `request` (its `Idempotency-Key`) a retry answers the same tournament.
    pub async fn create(
        &self,
        caller: &Caller,
        new: NewTournament,
        from: Option<AddressKey>,
        request: Option<&RequestKey>,
    ) -> Result<Tournament, Error> {
        let now = now_ms();
        let tournament = self.checked(new, now)?;
        let (_, me) = self.players.authenticate(caller).await?;
        let creator = Party {
            id: me.id().to_string(),
            name: me.name().to_owned(),
        };
        let id = TournamentId::random();
        let make = async {
            let max = self.ctx.caps.tournaments_per_player;
            if max.is_some() {
                self.records.release_over(me.id(), now).await?;
            }
            let store = &self.ctx.store;
            // Counted per address in the store's window of creations, as players are (a
            // tournament is kept a day whether it started or not: a flood of ones that
            // cancel themselves would fill the store for a day).
            if let Some((address, max)) = from.zip(self.ctx.caps.tournaments_per_ip)
                && let PlayerAdmission::Refused { frees_in } = store
                    .player_index()
                    .admit(&format!("tournaments@{address}"), max, CREATION_WINDOW)
                    .await?
            {
                return Err(Error::TooManyTournamentsMade { max, frees_in });
            }
            if !store
                .tournaments()
                .claim_creator_tournament(me.id(), &id, now, max)
                .await?
            {
                let max = max.unwrap_or_default();
                return Err(Error::TooManyTournaments { max });
            }
            let seed = self.ctx.dealer.secret();
            let mut tournament = tournament;
            tournament.terms.creator = creator;
            tournament.terms.created_ms = now;
            let tournament = Tournament {
                id,
                seed,
                address: from,
                saved_ms: now,
                ..tournament
            };
            self.ctx
                .store
                .tournaments()
                .create_tournament(&id, tournament.encode())
                .await?;
            self.records.listed(&tournament).await?;
            self.records.index_levels(&tournament).await?;
            store
                .tournaments()
                .index_tournament_due(&id, Some(tournament.terms.starts_at_ms))
                .await?;
            tracing::info!(tournament_id = %id, player_id = %me.id(), format = tournament.terms.format.as_str(), "tournament created");
            Ok(tournament)
        };
        let again = |before: Before| async move {
            before.found(self.records.load_listed(&before.id).await.map(|(_, t)| t))
        };
        let caller = me.id().clone();
        idempotency::once(
            &self.ctx.store,
            request,
            Create::Tournament,
            Some(&caller),
            &id,
            None,
            make,
            again,
        )
        .await
    }

    /// `new` checked, as a tournament still to be given its id, creator and seed.
    fn checked(&self, new: NewTournament, now: u64) -> Result<Tournament, Error> {
        visible_text("name", &new.name, MAX_TOURNAMENT_NAME)?;
        let rules = new.preset.rules().with(&new.overrides);
        rules.validate(2)?;
        let invalid = |why: String| Err(Error::InvalidRules(why));
        let rounds = match (new.format, new.rounds) {
            (Format::Swiss, Some(r)) if !(1..=MAX_ROUNDS).contains(&r) => {
                return invalid(format!("rounds: 1 to {MAX_ROUNDS} (got {r})"));
            }
            (Format::RoundRobin, Some(_)) => {
                return invalid(
                    "rounds: a round robin plays everyone once, so its rounds follow from its \
                     players; leave rounds out"
                        .into(),
                );
            }
            (_, rounds) => rounds,
        };
        let most = match new.format {
            Format::Swiss => self.max_players(),
            Format::RoundRobin => self.max_players().min(usize::from(MAX_ROUND_ROBIN)),
        };
        let max_players = usize::from(new.max_players.unwrap_or(most as u16));
        if !(2..=most).contains(&max_players) {
            return invalid(format!(
                "max_players: 2 to {most} for a {} tournament (got {max_players})",
                new.format.as_str()
            ));
        }
        let clock = new.clock.unwrap_or(DEFAULT_CLOCK);
        clock.validate().map_err(Error::InvalidRules)?;
        if new.rated && new.overrides != RulesPatch::default() {
            return invalid(
                "rated: a rated game has two sides (2 seats, or 4 in teams) and the \
                 preset's rules as they stand (no rules overrides)"
                    .into(),
            );
        }
        let deals_per_pairing = new.deals_per_pairing.unwrap_or(1);
        if !(1..=MAX_DEALS_PER_PAIRING).contains(&deals_per_pairing) {
            return invalid(format!(
                "deals_per_pairing: 1 to {MAX_DEALS_PER_PAIRING} (got {deals_per_pairing})"
            ));
        }
        // A start in the past is now: no tournament is due before it was made, so the due
        // index serves them in the order they became due (a flood of tournaments due "at
        // 0" cannot sort ahead of one made earlier).
        let starts_at_ms = new
            .starts_at_ms
            .unwrap_or(now + DEFAULT_START_IN_MS)
            .max(now);
        if starts_at_ms > now + MAX_START_IN_MS {
            return invalid(format!(
                "starts_at_ms: at most {} days from now",
                MAX_START_IN_MS / 86_400_000
            ));
        }
        let mut entrants = Vec::new();
        for level in new.levels {
            entrants.push(EntrantRecord {
                entry: Entry::next_level(&entrants, level),
                withdrawn: false,
                timeouts: 0,
            });
        }
        if entrants.len() > max_players {
            return invalid(format!("levels: more than max_players ({max_players})"));
        }
        Ok(Tournament {
            id: TournamentId::from(uuid::Uuid::nil()),
            terms: Terms {
                name: new.name,
                creator: Party {
                    id: String::new(),
                    name: String::new(),
                },
                created_ms: now,
                preset: new.preset,
                overrides: new.overrides,
                format: new.format,
                rounds: rounds.unwrap_or(0),
                rounds_asked: rounds,
                duplicate: new.duplicate,
                clock,
                starts_at_ms,
                max_players: max_players as u16,
                rated: new.rated,
            },
            status: TournamentStatus::Registering,
            reason: None,
            entrants,
            round: 0,
            pairings: Vec::new(),
            byes: Vec::new(),
            seed: [0; 32],
            address: None,
            saved_ms: now,
            deals_per_pairing,
            waiting: None,
        })
    }

    /// A tournament by id: anyone may read one.
    pub async fn get(&self, id: TournamentId) -> Result<Tournament, Error> {
        Ok(self.records.load(id).await?.1)
    }

    /// The tournaments of `status`, newest first: page `page` (from 1).
    pub async fn list(
        &self,
        status: TournamentStatus,
        page: usize,
        per_page: usize,
    ) -> Result<Vec<Tournament>, Error> {
        let skip = page_offset(page, per_page, "per_page")?;
        let ids = self
            .ctx
            .store
            .tournaments()
            .tournaments(status.as_str(), skip, per_page)
            .await?;
        let loaded = join_all(ids.iter().map(|id| self.records.load_listed(id))).await;
        let mut found = Vec::new();
        for loaded in loaded {
            match loaded {
                // The list is a hint: one that moved on since shows under its new status.
                Ok((_, t)) if t.status == status => found.push(t),
                Ok(_) | Err(Error::TournamentNotFound) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(found)
    }

    /// Enters the key's player (or, its creator asking, a built-in level).
    pub async fn join(
        &self,
        caller: &Caller,
        id: TournamentId,
        joiner: Joiner,
    ) -> Result<Tournament, Error> {
        let (_, me) = self.players.authenticate(caller).await?;
        if joiner == Joiner::Me {
            self.records.claim_join(me.id(), id).await?;
        }
        let joined = self
            .change(id, |t| {
                registering(t, "joined")?;
                let entry = match joiner {
                    Joiner::Me => Entry::Player {
                        party: Party {
                            id: me.id().to_string(),
                            name: me.name().to_owned(),
                        },
                        bot: me.is_bot(),
                    },
                    Joiner::Level(level) if t.terms.creator.id == me.id().as_str() => {
                        Entry::next_level(&t.entrants, level)
                    }
                    Joiner::Level(_) => {
                        return Err(Error::Forbidden(
                            "level: only the tournament's creator enters built-in levels".into(),
                        ));
                    }
                };
                if t.entrants.iter().any(|e| e.entry == entry) {
                    return Err(Error::AlreadyEntered(
                        "this player has entered this tournament already".into(),
                    ));
                }
                if t.entrants.len() >= usize::from(t.terms.max_players) {
                    return Err(Error::TournamentFull {
                        max: usize::from(t.terms.max_players),
                    });
                }
                t.entrants.push(EntrantRecord {
                    entry,
                    withdrawn: false,
                    timeouts: 0,
                });
                Ok(())
            })
            .await;
        match (&joined, joiner) {
            (Err(_), Joiner::Me) => self.records.unclaim_join(me.id(), id).await?,
            (Ok(t), Joiner::Me) => self.records.index_entered(t, me.id(), true).await?,
            (Ok(t), Joiner::Level(level)) => {
                let level = PlayerId::of_level(level);
                self.records.index_entered(t, &level, true).await?;
            }
            (Err(_), Joiner::Level(_)) => {}
        }
        joined
    }

    /// Withdraws the key's player: before the start it is removed; after, it is paired no
    /// more (its games played stand).
    pub async fn withdraw(&self, caller: &Caller, id: TournamentId) -> Result<Tournament, Error> {
        let (_, me) = self.players.authenticate(caller).await?;
        let withdrawn = self
            .change(id, |t| {
                if t.status.over() {
                    return Err(Error::TournamentClosed(format!(
                        "the tournament is {} already",
                        t.status.as_str()
                    )));
                }
                let Some(entrant) = t.entrant_of(me.id()) else {
                    return Err(Error::Forbidden(
                        "this player has not entered this tournament".into(),
                    ));
                };
                match t.status {
                    TournamentStatus::Registering => {
                        t.entrants.remove(usize::from(entrant));
                    }
                    _ => t.entrants[usize::from(entrant)].withdrawn = true,
                }
                Ok(())
            })
            .await?;
        let store = &self.ctx.store;
        store
            .tournaments()
            .release_joined_tournament(me.id(), &id)
            .await?;
        if withdrawn.status == TournamentStatus::Registering {
            // Removed, not withdrawn: it was never in this tournament's games.
            self.records
                .index_entered(&withdrawn, me.id(), false)
                .await?;
        }
        if withdrawn.status == TournamentStatus::Running {
            // With too few left it ends now, not at its next poll.
            self.poke(id).await;
        }
        Ok(withdrawn)
    }

    /// Starts the tournament now (its creator), as its start time would.
    pub async fn start(&self, caller: &Caller, id: TournamentId) -> Result<Tournament, Error> {
        let (_, me) = self.players.authenticate(caller).await?;
        let (_, t) = self.records.load(id).await?;
        if t.terms.creator.id != me.id().as_str() {
            return Err(Error::Forbidden(
                "only the tournament's creator starts it".into(),
            ));
        }
        registering(&t, "started")?;
        let least = least_players(t.terms.format);
        if t.entrants.len() < least {
            return Err(Error::InvalidRules(format!(
                "players: a {} tournament starts with at least {least} (it has {})",
                t.terms.format.as_str(),
                t.entrants.len()
            )));
        }
        self.drive_now(id, true).await?;
        self.get(id).await
    }

    /// Applies `change` to tournament `id` by compare-and-set, and answers it as saved.
    async fn change(
        &self,
        id: TournamentId,
        change: impl Fn(&mut Tournament) -> Result<(), Error>,
    ) -> Result<Tournament, Error> {
        for _ in 0..ATTEMPTS {
            let (version, mut t) = self.records.load(id).await?;
            change(&mut t)?;
            t.saved_ms = now_ms();
            match self
                .ctx
                .store
                .tournaments()
                .save_tournament(&id, version, t.encode())
                .await?
            {
                SaveOutcome::Saved { .. } => return Ok(t),
                SaveOutcome::Conflict { .. } => continue,
                SaveOutcome::Missing => return Err(Error::TournamentNotFound),
            }
        }
        Err(Error::Internal(
            "a tournament kept changing under a change".into(),
        ))
    }
}

/// Refuses `what` unless `t` is still registering.
fn registering(t: &Tournament, what: &str) -> Result<(), Error> {
    match t.status {
        TournamentStatus::Registering => Ok(()),
        status => Err(Error::TournamentClosed(format!(
            "the tournament is {} already: no player is {what} now",
            status.as_str()
        ))),
    }
}

/// The fewest players a tournament of `format` starts with.
pub fn least_players(format: Format) -> usize {
    match format {
        Format::Swiss => 3,
        Format::RoundRobin => 2,
    }
}
