//! Pairing: a pool's seeks matched into games (where a seek arrives, and by the sweep of
//! the pools due), each matched game created once, and due seeks expired or given their
//! fallback.

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use crate::bots::Level;
use crate::domain::GameId;
use crate::service::games::admit::Admission;
use crate::store::seeks::{SeekStore, Settled};

use super::super::seek::{Pool, Seek};
use super::super::{Error, Notice};
use super::{
    PAIRINGS_AT_ONCE, POOL_RETRY, RATED_GAP, RECOVER_AFTER, Refused, SWEEP_BATCH, Seeks, now_ms,
    wish_game,
};

impl Seeks {
    /// Matches games out of `pool` while it holds enough seeks; returns how many. A game
    /// refused because of seek `arriving` (its address's cap) ends the pairing with that
    /// refusal: the request that made the seek answers it.
    pub(super) async fn pair(&self, pool: &Pool, arriving: Option<&str>) -> Result<usize, Error> {
        let gap = pool.rated().then_some(RATED_GAP);
        let (name, seats) = (pool.name(), usize::from(pool.seats()));
        let mut made = 0;
        while made < PAIRINGS_AT_ONCE {
            let game = GameId::random();
            let now = now_ms();
            let recover = now + RECOVER_AFTER.as_millis() as u64;
            let retry = now + POOL_RETRY.as_millis() as u64;
            let ids = self
                .store()
                .pair_seeks(name, seats, &game, now, recover, retry, gap)
                .await?;
            if ids.is_empty() {
                break;
            }
            made += 1;
            match self.start_matched(game, arriving).await {
                Ok(Some(refused)) if Some(refused.seek.as_str()) == arriving => {
                    return Err(refused.why);
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(game_id = %game, error = %e, "a matched game was not created; a sweep creates it");
                }
            }
        }
        Ok(made)
    }

    /// Creates matched game `game` from the seeks matched to it, unless it exists: their
    /// players in seats drawn at random, built-in levels in the seats left (a fallback).
    /// A game the admission refuses is [`Refused`], its seeks unmatched.
    pub(super) async fn start_matched(
        &self,
        game: GameId,
        arriving: Option<&str>,
    ) -> Result<Option<Refused>, Error> {
        let ids = self.store().seeks_of_game(&game).await?;
        let mut seeks = Vec::with_capacity(ids.len());
        for id in &ids {
            if let Some(entry) = self.store().load_seek(id).await? {
                seeks.push(Seek::of(entry)?);
            }
        }
        let Some(first) = seeks.first() else {
            // Its seeks are gone (no longer kept): nothing can be made of it.
            self.store().started(&game).await?;
            return Ok(None);
        };
        let wish = first.wish().clone();
        let mut seats: Vec<u8> = (0..wish.seats).collect();
        seats.shuffle(&mut ChaCha8Rng::from_seed(self.ctx.dealer.secret()));
        let level = first.fallback().map_or(Level::Greedy, |(_, level)| level);
        let bots: Vec<(u8, Level)> = seats[seeks.len()..].iter().map(|&s| (s, level)).collect();
        let record = self.games.new_record(&wish_game(&wish, bots))?;
        // The game counts against the address of the seek that completed it: the one whose
        // request paired it, else the newest.
        let newest = seeks
            .iter()
            .find(|seek| Some(seek.id()) == arriving)
            .or_else(|| {
                seeks
                    .iter()
                    .max_by_key(|seek| (seek.created_ms(), seek.id()))
            })
            .expect("one seek at least");
        let admission = Admission {
            id: game,
            record,
            rated: wish.rated,
            parent: None,
            twins: Vec::new(),
            players: seeks
                .iter()
                .zip(&seats)
                .map(|(seek, &seat)| (seat, seek.player().id.as_str(), seek.player().name.as_str()))
                .collect(),
            from: newest.address(),
        };
        match self.games.admit(admission).await {
            Ok(Some(_)) => {}
            Ok(None) => {
                self.store().started(&game).await?;
                return Ok(None);
            }
            // Refused: nothing is promised. The seek it was to count against is canceled,
            // the others wait again, and nobody tries this game again.
            Err(e) if e.refuses_a_game() => {
                let back = self.store().unmatch(&game, newest.id(), now_ms()).await?;
                tracing::info!(game_id = %game, seek_id = %newest.id(), waiting_again = back.len(), error = %e, "a matched game was refused: its seeks unmatched");
                self.ctx.metrics.seek("refused");
                return Ok(Some(Refused {
                    seek: newest.id().to_owned(),
                    why: e,
                }));
            }
            Err(e) => return Err(e),
        }
        self.store().started(&game).await?;
        let now = now_ms();
        for seek in &seeks {
            self.ctx
                .metrics
                .seek_waits
                .observe(now.saturating_sub(seek.created_ms()) as f64 / 1000.0);
        }
        let fell_back = seeks.len() < usize::from(wish.seats);
        self.ctx
            .metrics
            .seek(if fell_back { "fell_back" } else { "matched" });
        tracing::info!(game_id = %game, pool = %wish.pool().name(), players = seeks.len(), fell_back, "game created for seeks");
        Ok(None)
    }

    /// One pass over the seeks (run by every process's sweep): the pools due paired, due
    /// seeks expired or given their fallback, and games matched by a process that died
    /// before creating them created. Returns how many it acted on.
    pub async fn sweep_seeks(&self) -> Result<usize, Error> {
        let mut acted = 0;
        for name in self.store().pools_due(now_ms(), SWEEP_BATCH).await? {
            self.ctx.metrics.seek_pools_swept.inc();
            let Some(pool) = Pool::parse(&name) else {
                continue;
            };
            acted += self.pair(&pool, None).await?;
        }
        let now = now_ms();
        for id in self.store().due_seeks(now, SWEEP_BATCH).await? {
            let game = GameId::random();
            let recover = now + RECOVER_AFTER.as_millis() as u64;
            match self.store().settle_seek(&id, now, &game, recover).await? {
                Settled::Nothing => {}
                Settled::Expired => {
                    acted += 1;
                    self.ctx.metrics.seek("expired");
                    if let Some(entry) = self.store().load_seek(&id).await? {
                        let seek = Seek::of(entry)?;
                        tracing::info!(seek_id = %id, "seek expired");
                        let player = [seek.player().id.clone()];
                        self.tell(&player, Notice::SeekExpired(&seek)).await;
                    }
                }
                Settled::FellBack => {
                    acted += 1;
                    match self.start_matched(game, None).await {
                        Ok(_) => {}
                        Err(e) => {
                            tracing::warn!(game_id = %game, error = %e, "a fallback game was not created; a sweep creates it");
                        }
                    }
                }
            }
        }
        for text in self.store().starting_due(now, SWEEP_BATCH).await? {
            let Some(game) = GameId::stored(&text) else {
                tracing::warn!(game_id = %text, "matched seeks name no game id: left alone");
                continue;
            };
            if !self.games.exists(game).await? {
                tracing::warn!(game_id = %game, "matched seeks had no game: creating it");
            }
            self.start_matched(game, None).await?;
            acted += 1;
        }
        Ok(acted)
    }
}
