//! Leagues: bots (and people) entered once, paired again and again in duplicate matches
//! whenever they are free, and a table of where each stands on a scale the built-in
//! levels anchor.
//!
//! A league is its own stored record ([`record`]), changed only by compare-and-set. Its
//! drive ([`drive`]) counts the matches that ended and names the next ones in one save
//! before making any (through the matches aggregate, under the ids named), so two
//! processes driving one league never pair or count twice, and a match a dead process
//! named but never made is made by the next drive. The sweep drives the due leagues, each
//! every few seconds.

pub mod drive;
pub mod entrant;
pub mod record;
pub mod stream;

use std::sync::Arc;

use futures_util::future::join_all;

use crate::bots::Level;
use crate::domain::{Caller, LeagueId, Who, visible_text};
use crate::engine::{Preset, RulesPatch};
use crate::store::SaveOutcome;
use crate::store::leagues::LeagueStore;

use super::Error;
use super::games::clock::ClockSettings;
use super::idempotency::{self, Before, Create, RequestKey};
use super::matches::Matches;
use super::matchmaking::invitation::Party;
use super::page::page_offset;
use super::players::{Keyed, Players, Profile, ProfileLeague};
use super::shared::{Shared, now_ms};
use record::{Entrant, League, MAX_CONCURRENT, MAX_DEALS_PER_MATCH};

/// A league name: 1 to this many characters.
pub const MAX_LEAGUE_NAME: usize = 64;
/// A match's deals unless the league says.
pub const DEFAULT_DEALS_PER_MATCH: u16 = 2;
/// Matches an entrant plays at once unless the league says.
pub const DEFAULT_MAX_CONCURRENT: u8 = 2;
/// Compare-and-set attempts on a league before a change gives up.
const ATTEMPTS: usize = 8;

/// A new league, as its creator asks for it.
#[derive(Debug, Clone)]
pub struct NewLeague {
    pub name: String,
    pub preset: Preset,
    pub overrides: RulesPatch,
    pub clock: Option<ClockSettings>,
    pub deals_per_match: Option<u16>,
    pub max_concurrent: Option<u8>,
    pub levels: Vec<Level>,
}

/// The leagues aggregate: its use cases, and driving each league's pairings.
pub struct Leagues {
    ctx: Arc<Shared>,
    players: Arc<Players>,
    matches: Arc<Matches>,
}

impl Leagues {
    pub(super) fn new(ctx: Arc<Shared>, players: Arc<Players>, matches: Arc<Matches>) -> Arc<Self> {
        Arc::new(Leagues {
            ctx,
            players,
            matches,
        })
    }

    /// Makes a league for the key's player, its levels entered; it pairs from now on.
    /// With `request` (its `Idempotency-Key`) a retry answers the same league, made once.
    pub async fn create(
        &self,
        caller: &Caller,
        new: NewLeague,
        request: Option<&RequestKey>,
    ) -> Result<League, Error> {
        let now = now_ms();
        let mut league = self.checked(new, now)?;
        let (_, me) = self.players.authenticate(caller).await?;
        let id = LeagueId::random();
        let caller = me.id().clone();
        let make = async move {
            let max = self.ctx.caps.leagues_per_player;
            let store = &self.ctx.store;
            if !store
                .leagues()
                .claim_creator_league(me.id(), &id, now, max)
                .await?
            {
                return Err(Error::TooManyLeagues {
                    max: max.unwrap_or_default(),
                });
            }
            league.id = id;
            league.creator = Party {
                id: me.id().to_string(),
                name: me.name().to_owned(),
            };
            if let Err(e) = store
                .leagues()
                .create_league(&id, now, league.encode())
                .await
            {
                store.leagues().release_creator_league(me.id(), &id).await?;
                return Err(e.into());
            }
            store.leagues().index_league_due(&id, Some(now)).await?;
            tracing::info!(league_id = %id, player_id = %me.id(), "league created");
            Ok(league)
        };
        let again = |before: Before| async move {
            let found = match LeagueId::stored(&before.id) {
                Some(id) => self.get(id).await,
                None => Err(Error::LeagueNotFound),
            };
            before.found(found)
        };
        idempotency::once(
            &self.ctx.store,
            request,
            Create::League,
            Some(&caller),
            &id,
            None,
            make,
            again,
        )
        .await
    }

    /// `new` checked, as a league still to be given its id and creator.
    fn checked(&self, new: NewLeague, now: u64) -> Result<League, Error> {
        visible_text("name", &new.name, MAX_LEAGUE_NAME)?;
        let rules = new.preset.rules().with(&new.overrides);
        rules.validate(2)?;
        let invalid = |why: String| Err(Error::InvalidRules(why));
        let deals_per_match = new.deals_per_match.unwrap_or(DEFAULT_DEALS_PER_MATCH);
        if !(1..=MAX_DEALS_PER_MATCH).contains(&deals_per_match) {
            return invalid(format!(
                "deals_per_match: 1 to {MAX_DEALS_PER_MATCH} (got {deals_per_match})"
            ));
        }
        let max_concurrent = new.max_concurrent.unwrap_or(DEFAULT_MAX_CONCURRENT);
        if !(1..=MAX_CONCURRENT).contains(&max_concurrent) {
            return invalid(format!(
                "max_concurrent: 1 to {MAX_CONCURRENT} (got {max_concurrent})"
            ));
        }
        if let Some(clock) = &new.clock {
            clock.validate().map_err(Error::InvalidRules)?;
        }
        let mut levels = new.levels;
        let asked = levels.len();
        levels.sort_by_key(|l| l.as_str());
        levels.dedup();
        if levels.len() != asked {
            return invalid("levels: each built-in level once".into());
        }
        if let Some(max) = self.ctx.caps.league_entrants
            && levels.len() > max
        {
            return invalid(format!("levels: more than the league's {max} entrants"));
        }
        let nobody = Party {
            id: String::new(),
            name: String::new(),
        };
        Ok(League::new(
            LeagueId::from(uuid::Uuid::nil()),
            new.name,
            nobody,
            now,
            (new.preset, new.overrides, new.clock),
            (deals_per_match, max_concurrent),
            levels.into_iter().map(|l| Entrant::level(l, now)).collect(),
        ))
    }

    /// A league by id: anyone may read one.
    pub async fn get(&self, id: LeagueId) -> Result<League, Error> {
        Ok(self.load(id).await?.1)
    }

    /// The leagues, newest first: page `page` (from 1).
    pub async fn list(&self, page: usize, per_page: usize) -> Result<Vec<League>, Error> {
        let skip = page_offset(page, per_page, "per_page")?;
        let ids = self.ctx.store.leagues().leagues(skip, per_page).await?;
        let loaded = join_all(ids.iter().map(|id| async move {
            match LeagueId::stored(id) {
                Some(id) => self.load(id).await.map(|(_, l)| Some(l)),
                None => Ok(None),
            }
        }))
        .await;
        let mut found = Vec::new();
        for loaded in loaded {
            match loaded {
                Ok(Some(league)) => found.push(league),
                Ok(None) | Err(Error::LeagueNotFound) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(found)
    }

    /// The profile of a player by id or name ([`Players::profile`]), with its leagues.
    pub async fn profile(&self, who: &Who) -> Result<Profile, Error> {
        let profile = self.players.profile(who).await?;
        self.with_leagues(profile).await
    }

    /// The key's player's profile ([`Players::me`]), with its leagues.
    pub async fn my_profile(&self, caller: &Caller) -> Result<Profile, Error> {
        let profile = self.players.me(caller).await?;
        self.with_leagues(profile).await
    }

    /// A new key for the key's player ([`Players::rotate_key`]), its profile with its
    /// leagues.
    pub async fn rotate_key(&self, caller: &Caller) -> Result<Keyed, Error> {
        let mut keyed = self.players.rotate_key(caller).await?;
        keyed.profile = self.with_leagues(keyed.profile).await?;
        Ok(keyed)
    }

    /// `profile` with the leagues its player entered and has not left, by name (then id).
    /// At most `MAX_LEAGUES_ENTERED` of them, each one read of the store; an entry whose
    /// league is gone, or that the league no longer holds (a leave half done), is left
    /// out. A built-in level is entered by each league's creator, never counted as an
    /// entry: it lists none.
    async fn with_leagues(&self, mut profile: Profile) -> Result<Profile, Error> {
        let store = &self.ctx.store;
        let ids = store.leagues().league_entries(&profile.id).await?;
        let loaded = join_all(ids.iter().filter_map(|id| LeagueId::stored(id)).map(
            |id| async move {
                match self.load(id).await {
                    Ok((_, league)) => Ok(Some(league)),
                    Err(Error::LeagueNotFound) => Ok(None),
                    Err(e) => Err(e),
                }
            },
        ))
        .await;
        let mut found = Vec::new();
        for league in loaded {
            if let Some(league) = league?
                && league.entrant_of(&profile.id).is_some()
            {
                found.push(ProfileLeague {
                    id: league.id.to_string(),
                    name: league.name,
                });
            }
        }
        found.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.id.cmp(&b.id)));
        profile.leagues = found;
        Ok(profile)
    }

    /// Enters the key's player: it is paired from the league's next drive on, whenever it
    /// is available.
    pub async fn enter(&self, caller: &Caller, id: LeagueId) -> Result<League, Error> {
        let (_, me) = self.players.authenticate(caller).await?;
        let max = self.ctx.caps.leagues_entered;
        let store = &self.ctx.store;
        if !store
            .leagues()
            .claim_league_entry(me.id(), &id, now_ms(), max)
            .await?
        {
            return Err(Error::TooManyLeaguesEntered {
                max: max.unwrap_or_default(),
            });
        }
        let most = self.ctx.caps.league_entrants;
        let entered = self
            .change(id, |league| {
                if league.entrant_of(me.id()).is_some() {
                    return Err(Error::AlreadyEntered(
                        "this player has entered this league already".into(),
                    ));
                }
                let present = league.entrants.iter().filter(|e| !e.left).count();
                if let Some(max) = most
                    && present >= max
                {
                    return Err(Error::LeagueFull { max });
                }
                let party = Party {
                    id: me.id().to_string(),
                    name: me.name().to_owned(),
                };
                // One that left and comes back takes up its row again, its rating kept.
                match league.entrants.iter().position(|e| e.id == party.id) {
                    Some(row) => league.entrants[row].left = false,
                    None => league
                        .entrants
                        .push(Entrant::player(party, me.is_bot(), now_ms())),
                }
                Ok(())
            })
            .await;
        match entered {
            Ok(league) => {
                tracing::info!(league_id = %id, player_id = %me.id(), "league entered");
                Ok(league)
            }
            Err(e) => {
                if !matches!(e, Error::AlreadyEntered(_)) {
                    store.leagues().release_league_entry(me.id(), &id).await?;
                }
                Err(e)
            }
        }
    }

    /// The key's player leaves: it is paired no more (its matches in play finish and
    /// count); its row stays in the table.
    pub async fn leave(&self, caller: &Caller, id: LeagueId) -> Result<League, Error> {
        let (_, me) = self.players.authenticate(caller).await?;
        let left = self
            .change(id, |league| {
                let Some(row) = league.entrant_of(me.id()) else {
                    return Err(Error::Forbidden(
                        "this player has not entered this league".into(),
                    ));
                };
                league.entrants[row].left = true;
                league.entrants[row].available = false;
                Ok(())
            })
            .await?;
        self.ctx
            .store
            .leagues()
            .release_league_entry(me.id(), &id)
            .await?;
        tracing::info!(league_id = %id, player_id = %me.id(), "league left");
        Ok(left)
    }

    /// Changes league `id` by compare-and-set, `change` applied to the league as it is
    /// now on each attempt.
    async fn change(
        &self,
        id: LeagueId,
        change: impl Fn(&mut League) -> Result<(), Error>,
    ) -> Result<League, Error> {
        for _ in 0..ATTEMPTS {
            let (version, mut league) = self.load(id).await?;
            change(&mut league)?;
            match self
                .ctx
                .store
                .leagues()
                .save_league(&id, version, league.encode())
                .await?
            {
                SaveOutcome::Saved { .. } => return Ok(league),
                SaveOutcome::Conflict { .. } => continue,
                SaveOutcome::Missing => return Err(Error::LeagueNotFound),
            }
        }
        Err(Error::Internal(
            "a league kept changing under a change".into(),
        ))
    }

    pub(super) async fn load(&self, id: LeagueId) -> Result<(u64, League), Error> {
        match self.ctx.store.leagues().load_league(&id).await? {
            Some(stored) => Ok((stored.version, League::decode(&stored.bytes)?)),
            None => Err(Error::LeagueNotFound),
        }
    }
}
