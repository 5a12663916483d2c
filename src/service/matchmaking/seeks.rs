//! Seeks: matchmaking. A player asks for a game with anyone of the same pool (preset,
//! seats, clock, `rated`); as soon as the pool holds enough seeks of distinct players,
//! they are matched into one game, seats drawn at random. The store decides each match in
//! one step (see [`crate::store::seeks`]), so a seek is used once and a player sits once
//! however many processes pair at the same moment: the request that made a seek pairs its
//! pool at once, and every process's sweep pairs every pool, so no seek waits on a request.
//!
//! A seek with a `fallback` that waited `after_secs` gets a table with built-in levels in
//! the missing seats; a seek lives `SEEK_TTL_SECS`, then expires (`seek_expired` on the
//! player's stream). A rated pool pairs close ratings first ([`RATED_GAP`]); others,
//! first come first served.
//!
//! A pool is paired where a seek arrives; the sweep pairs only the pools due (one whose
//! seek's request did not pair it, or one holding enough seeks for a game that a rated gap
//! kept apart, again every [`POOL_RETRY`]), so its cost follows the pools due, not the
//! pools: ten thousand pools of one waiting seek each cost it nothing. The pairing and the
//! sweep are `pairing`'s; this file holds a seek's use cases.

use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::bots::Level;
use crate::domain::{Caller, SeekId};
use crate::engine::RulesPatch;
use crate::service::games::Games;
use crate::service::games::admit::NewGame;
use crate::service::idempotency::{self, Before, Create, RequestKey};
use crate::service::page::page_offset;
use crate::service::players::{PlayerRecord, Players};
use crate::service::shared::{Port, Shared, now_ms};
use crate::store::seeks::{Added, Gap, SeekEntry, SeekState, SeekStore};

use super::seek::{NewSeek, Seek, Wish};

mod pairing;
use super::{Error, MatchmakingReactions, Notice};

/// Waiting seeks a player may have at once.
pub const MAX_OPEN_SEEKS: usize = 5;
/// A fallback waits this long at most.
pub const MAX_FALLBACK_SECS: u64 = 300;
/// How far apart two ratings a rated pool pairs: 100 points at first, 10 more each second
/// the older seek has waited, and any gap once it has waited 30 s (no seek waits longer
/// while a compatible one is waiting).
const RATED_GAP: Gap = Gap {
    base: 100.0,
    per_sec: 10.0,
    open_after_ms: 30_000,
};
/// How long after a match a sweep makes sure its game exists.
const RECOVER_AFTER: Duration = Duration::from_secs(10);
/// How soon a pool holding enough seeks for a game that did not pair (a rated gap kept
/// them apart) is paired again: the gap widens 10 points a second.
const POOL_RETRY: Duration = Duration::from_secs(1);
/// Due seeks, pools and starting games a sweep acts on at most (each kind).
const SWEEP_BATCH: usize = 64;
/// Games one pool makes at most in one go (a pool of many waiting seeks drains over a
/// few sweeps rather than holding one).
const PAIRINGS_AT_ONCE: usize = 64;

/// A game matched from seeks that the admission refused, because of seek `seek` (its
/// address's cap), for `why`: the seeks are unmatched, and the request that made `seek`
/// answers `why`.
struct Refused {
    seek: String,
    why: Error,
}

/// A seek's create answers the seek, and whether it made it: one it did not make is the
/// player's waiting seek, which a retry answers again.
impl idempotency::Answered for (Seek, bool) {
    fn existing(&self) -> Option<&str> {
        (!self.1).then_some(self.0.id())
    }
}

/// The seeks: waiting in their pools, paired, expired.
pub struct Seeks {
    ctx: Arc<Shared>,
    players: Arc<Players>,
    games: Arc<Games>,
    reactions: Port<dyn MatchmakingReactions>,
}

impl Seeks {
    pub(in crate::service) fn new(
        ctx: Arc<Shared>,
        players: Arc<Players>,
        games: Arc<Games>,
    ) -> Arc<Seeks> {
        Arc::new(Seeks {
            ctx,
            players,
            games,
            reactions: Port::new(),
        })
    }

    /// Where what follows a change is handed up; set once, by `Services::new`.
    pub(in crate::service) fn react_with(&self, reactions: Weak<dyn MatchmakingReactions>) {
        self.reactions.set(reactions);
    }

    /// The seeks' part of the store.
    fn store(&self) -> &impl SeekStore {
        self.ctx.store.seeks()
    }

    /// Tells `players` of `notice` (best effort, as all news).
    async fn tell(&self, players: &[String], notice: Notice<'_>) {
        if let Some(reactions) = self.reactions.get() {
            reactions.tell(players, notice).await;
        }
    }

    /// Makes a seek for the key's player and pairs its pool at once: the answer says
    /// `Matched` when this seek completed a game. A player already waiting in the pool is
    /// answered that seek, with `false` (nothing made): a pool pairs a player once anyway.
    /// With `request` (its `Idempotency-Key`) a retry answers the same seek, made once.
    pub async fn seek(
        &self,
        caller: &Caller,
        new: NewSeek,
        request: Option<&RequestKey>,
    ) -> Result<(Seek, bool), Error> {
        let (_, me) = self.players.authenticate(caller).await?;
        let (caller, id) = (me.id().clone(), SeekId::random());
        let make = self.seek_as(me, id, new);
        let caller = caller.as_str();
        idempotency::once_answered(
            &self.ctx.store,
            request,
            Create::Seek,
            Some(caller),
            &id,
            None,
            make,
            |before: Before| async move {
                // A retry is answered as the request was: made, or the one waiting.
                before.found(
                    self.seek_listed(caller, &before.id)
                        .await
                        .map(|seek| (seek, !before.existing)),
                )
            },
        )
        .await
    }

    /// Makes seek `id` for player `me`.
    async fn seek_as(
        &self,
        me: PlayerRecord,
        id: SeekId,
        new: NewSeek,
    ) -> Result<(Seek, bool), Error> {
        let wish = new.wish;
        // The seats and clock are checked as a game's are.
        self.games.new_record(&wish_game(&wish, Vec::new()))?;
        if wish.rated && wish.preset.rules().sides(wish.seats) != 2 {
            return Err(Error::InvalidRules(
                "rated: a rated game has two sides (2 seats, or 4 in teams)".into(),
            ));
        }
        if let Some((after, _)) = new.fallback
            && !(1..=MAX_FALLBACK_SECS).contains(&after.as_secs())
        {
            return Err(Error::InvalidRules(format!(
                "fallback.after_secs: 1 to {MAX_FALLBACK_SECS}"
            )));
        }
        let now = now_ms();
        let entry = SeekEntry {
            id: id.to_string(),
            player: me.id().to_string(),
            pool: wish.pool().into_name(),
            created_ms: now,
            expires_ms: now + self.ctx.lifetimes.seek.as_millis() as u64,
            rating: me.rating_in(wish.preset.name()).rating,
            fallback_ms: new
                .fallback
                .map(|(after, _)| now + after.as_millis() as u64),
            state: SeekState::Waiting,
            bytes: Seek::blob(me.name(), &wish, new.fallback, new.from),
        };
        match self.store().add_seek(&entry, MAX_OPEN_SEEKS, now).await? {
            Added::Added => {}
            Added::Waiting(waiting) => {
                return Ok((self.seek_listed(me.id(), &waiting).await?, false));
            }
            Added::TooMany => {
                return Err(Error::TooManySeeks {
                    max: MAX_OPEN_SEEKS,
                });
            }
        }
        self.ctx.metrics.seek("made");
        tracing::info!(seek_id = %entry.id, player_id = %me.id(), pool = %entry.pool, "seek made");
        match self.pair(&wish.pool(), Some(&entry.id)).await {
            Ok(_) => {}
            Err(e) if e.refuses_a_game() => return Err(e),
            Err(e) => {
                tracing::warn!(pool = %entry.pool, error = %e, "a pool could not be paired; the sweep pairs it");
            }
        }
        Ok((self.seek_of(me.id(), id).await?, true))
    }

    /// The key's player's waiting seeks, newest first: a page (from 1) of them.
    pub async fn my_seeks(
        &self,
        caller: &Caller,
        page: usize,
        per_page: usize,
    ) -> Result<Vec<Seek>, Error> {
        let skip = page_offset(page, per_page, "per_page")?;
        let (_, me) = self.players.authenticate(caller).await?;
        let mut waiting = Vec::new();
        // A player has at most MAX_OPEN_SEEKS waiting (and a few stale ids): few loads.
        for id in self.store().player_seeks(me.id()).await? {
            let Some(entry) = self.store().load_seek(&id).await? else {
                continue;
            };
            let seek = Seek::of(entry)?;
            if seek.player().id == me.id().as_str() && seek.state_now() == SeekState::Waiting {
                waiting.push(seek);
            }
        }
        waiting.sort_by(|a, b| (b.created_ms(), &b.id()).cmp(&(a.created_ms(), &a.id())));
        Ok(waiting.into_iter().skip(skip).take(per_page).collect())
    }

    /// A seek, for its player.
    pub async fn my_seek(&self, caller: &Caller, id: SeekId) -> Result<Seek, Error> {
        let (_, me) = self.players.authenticate(caller).await?;
        self.seek_of(me.id(), id).await
    }

    /// Cancels the key's player's seek if it still waits; answers it as it is after.
    pub async fn cancel_seek(&self, caller: &Caller, id: SeekId) -> Result<Seek, Error> {
        let (_, me) = self.players.authenticate(caller).await?;
        let seek = self.seek_of(me.id(), id).await?;
        if *seek.state() != SeekState::Waiting {
            return Ok(seek);
        }
        let entry = self
            .store()
            .cancel_seek(&id)
            .await?
            .ok_or(Error::SeekNotFound)?;
        let seek = Seek::of(entry)?;
        if *seek.state() == SeekState::Canceled {
            self.ctx.metrics.seek("canceled");
            tracing::info!(seek_id = %id, "seek canceled");
        }
        Ok(seek)
    }

    /// Seek `text` names, for its player, as the store (or a create's claim) holds it:
    /// only ids this server made are held, so any other names none.
    async fn seek_listed(&self, player: &str, text: &str) -> Result<Seek, Error> {
        let id = SeekId::stored(text).ok_or(Error::SeekNotFound)?;
        self.seek_of(player, id).await
    }

    async fn seek_of(&self, player: &str, id: SeekId) -> Result<Seek, Error> {
        let entry = self
            .store()
            .load_seek(&id)
            .await?
            .ok_or(Error::SeekNotFound)?;
        if entry.player != player {
            return Err(Error::Forbidden("this seek is another player's".into()));
        }
        Seek::of(entry)
    }
}

/// The game a wish asks for, with `bots` seated.
fn wish_game(wish: &Wish, bots: Vec<(u8, Level)>) -> NewGame {
    NewGame {
        preset: wish.preset,
        overrides: RulesPatch::default(),
        seats: wish.seats,
        bots,
        seed: None,
        deal: None,
        clock: wish.clock,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::PlayerName;
    use crate::engine::Preset;
    use crate::service::matchmaking::seek::Pool;
    use crate::service::{ClockSettings, OnTimeout};

    #[test]
    fn equal_wishes_share_a_pool_and_any_difference_makes_another() {
        let wish = Wish {
            preset: Preset::AllFives,
            seats: 2,
            clock: None,
            rated: true,
        };
        assert_eq!(wish.pool(), wish.clone().pool());
        let read = Pool::parse(wish.pool().name()).expect("a wish's pool reads back");
        assert_eq!(read, wish.pool());
        assert_eq!((read.seats(), read.rated()), (2, true));
        let others = [
            Wish {
                rated: false,
                ..wish.clone()
            },
            Wish {
                seats: 4,
                ..wish.clone()
            },
            Wish {
                preset: Preset::Block,
                ..wish.clone()
            },
            Wish {
                clock: Some(ClockSettings {
                    bank_secs: 60,
                    increment_secs: 0,
                    on_timeout: OnTimeout::Bot,
                    timeout_bot: Level::Greedy,
                    abandon_after: 3,
                }),
                ..wish.clone()
            },
        ];
        for other in others {
            assert_ne!(other.pool(), wish.pool(), "{other:?}");
        }
    }

    /// A clock of `bank_secs`: each its own pool.
    fn clock(bank_secs: u64) -> Option<ClockSettings> {
        Some(ClockSettings {
            bank_secs,
            increment_secs: 0,
            on_timeout: OnTimeout::Bot,
            timeout_bot: Level::Greedy,
            abandon_after: 3,
        })
    }

    #[tokio::test]
    async fn a_sweep_visits_the_pools_due_not_every_pool() {
        let service = crate::service::Services::on_memory(Duration::from_secs(1));
        let swept = || service.ctx.metrics.seek_pools_swept.get();
        // 10,000 pools of one waiting seek each: 2,000 players, 5 seeks apiece, each with
        // a clock of its own.
        for p in 0..2_000u64 {
            let player = service
                .players
                .create_player(
                    &PlayerName::parse(&format!("p{p}")).unwrap(),
                    false,
                    None,
                    None,
                )
                .await
                .unwrap();
            for s in 0..5 {
                let wish = Wish {
                    preset: Preset::Block,
                    seats: 2,
                    clock: clock(p * 5 + s + 1),
                    rated: false,
                };
                let new = NewSeek {
                    wish,
                    fallback: None,
                    from: None,
                };
                let seek = service
                    .seeks
                    .seek(&Caller::of(Some(&player.key)), new, None)
                    .await
                    .unwrap();
                assert_eq!(*seek.0.state(), SeekState::Waiting);
            }
        }
        service.seeks.sweep_seeks().await.unwrap();
        assert_eq!(swept(), 0, "each pool was paired where its seek arrived");
        // Two rated seeks too far apart to pair yet, stored without their requests'
        // pairing (as if their process had died): their pool alone is due, at once, then
        // again a second later while the gap widens.
        let wish = Wish {
            preset: Preset::Block,
            seats: 2,
            clock: None,
            rated: true,
        };
        let now = now_ms();
        for (player, rating) in [("x", 1100.0), ("y", 1600.0)] {
            let entry = SeekEntry {
                id: uuid::Uuid::new_v4().to_string(),
                player: player.into(),
                pool: wish.pool().into_name(),
                created_ms: now,
                expires_ms: now + 60_000,
                rating,
                fallback_ms: None,
                state: SeekState::Waiting,
                bytes: Seek::blob(player, &wish, None, None),
            };
            service
                .ctx
                .store
                .seeks()
                .add_seek(&entry, 5, now)
                .await
                .unwrap();
        }
        assert_eq!(service.seeks.sweep_seeks().await.unwrap(), 0);
        assert_eq!(swept(), 1);
        service.seeks.sweep_seeks().await.unwrap();
        assert_eq!(swept(), 1, "not due again before {POOL_RETRY:?}");
        let due = service
            .ctx
            .store
            .seeks()
            .pools_due(now + POOL_RETRY.as_millis() as u64 + 1_000, 10)
            .await
            .unwrap();
        assert_eq!(due, [wish.pool().into_name()]);
    }
}
