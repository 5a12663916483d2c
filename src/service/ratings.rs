//! Rated play: when a rated game finishes, every player's rating in its preset moves once
//! (Glicko-2, [`crate::rating`]), whichever process finishes the game, with any number of
//! processes, and across a crash between the game's last save and the update.
//!
//! How once is kept:
//! 1. Before the save that finishes a rated game, the game is indexed as due a little
//!    later (by the games' write path): should the process stop after the save, the
//!    games' sweep finds it due and the dispatcher settles it.
//! 2. Settling claims the game's rating record in the store: who is rated, from which
//!    ratings (the snapshot), with which score. The first claim is kept, so every process
//!    settling the game works from the same snapshot.
//! 3. Each player's rating moves by a compare-and-set on its record, which remembers the
//!    rated games that moved it: a second settling of the game skips it.
//! 4. The rating record is marked done; then the dispatcher has the games aggregate drop
//!    the game's due entry.
//!
//! Each player is rated against the other side's snapshot (its mean, in teams), from its
//! own rating as it is when it moves, so two games of one player finishing at once both
//! count. The built-in levels keep fixed reference ratings ([`reference_rating`]): a player
//! is rated against a level's, which no game moves, so nobody can farm a level's public
//! rating by losing to it on purpose. A level's record (under its name, created on its
//! first rated game) counts its rated games and places it on the leaderboard.

use std::sync::{Arc, Weak};

use futures_util::future::BoxFuture;

use serde::{Deserialize, Serialize};

use crate::bots::Level;
use crate::domain::{GameId, PlayerId, Seat};
use crate::engine::Outcome;
use crate::rating::{self, Rating};
use crate::store::SaveOutcome;
use crate::store::ratings::RatingStore;

use super::Error;
use super::codec;
use super::games::record::Record;
use super::page::page_offset;
use super::players::Players;
use super::shared::{Port, Shared};
/// Compare-and-set attempts on one record before giving up (the sweep tries again).
const ATTEMPTS: usize = 8;
/// A provisional rating's place on a leaderboard is its rating less this: after every
/// established one.
const PROVISIONAL_PENALTY: f64 = 100_000.0;

/// The deviation of a level's reference rating: established, as measured over 1,000
/// arena matches, and not provisional.
const REFERENCE_DEVIATION: f64 = 50.0;

/// A built-in level's fixed rating in every preset, from the duplicate arena's all_fives
/// runs against `master` (bench/arena/README.md: 59.1% against expert, 77.3% against
/// greedy, 96.6% against random), each win rate read as a rating gap the Elo way
/// (400·log10(p/(1-p)): 63, 213 and 581 points), with greedy anchored at 1500, a newcomer's
/// rating. One table for every preset: block's runs give other gaps (254 to greedy, 405
/// to random), a refinement for when levels are measured per preset.
pub fn reference_rating(level: Level) -> Rating {
    let rating = match level {
        Level::Random => 1130.0,
        Level::Greedy => 1500.0,
        Level::Expert => 1650.0,
        Level::Master => 1715.0,
    };
    Rating {
        rating,
        deviation: REFERENCE_DEVIATION,
        volatility: Rating::default().volatility,
    }
}

/// The rating record's format byte, then postcard.
const FORMAT: u8 = 1;

/// One seat of a rated game, as its rating record holds it.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Rated {
    /// A player's id, or a built-in level's name.
    who: String,
    side: u8,
    /// Its rating when the game was settled first: what its opponents are rated against.
    before: Rating,
    /// 1 a win, 0.5 a draw, 0 a loss.
    score: f64,
}

/// A rated game's rating record.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Job {
    seats: Vec<Rated>,
    done: bool,
}

impl Job {
    fn encode(&self) -> Vec<u8> {
        codec::encode(FORMAT, self)
    }

    fn decode(bytes: &[u8]) -> Result<Job, Error> {
        match codec::open("ratings", bytes)? {
            (FORMAT, body) => body.last(),
            (other, body) => Err(body.unknown(other)),
        }
    }
}

/// One place on a leaderboard.
#[derive(Debug, Clone, PartialEq)]
pub struct Placing {
    pub id: String,
    pub name: String,
    pub bot: bool,
    pub rating: Rating,
    pub games: u64,
}

/// A rating's change, as a player hears of it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RatingChange {
    pub before: Rating,
    pub after: Rating,
}

/// The reactions to a player's rating moving, run by the dispatcher.
pub trait RatingReactions: Send + Sync {
    /// Tells `player` that game `id` (as `record`) finished, with its rating's `change`.
    fn rated<'a>(
        &'a self,
        id: GameId,
        record: &'a Record,
        player: &'a str,
        change: RatingChange,
    ) -> BoxFuture<'a, ()>;
}

/// The ratings aggregate: the rating records of rated games, the moves of players'
/// ratings, and the leaderboards.
pub struct Ratings {
    ctx: Arc<Shared>,
    players: Arc<Players>,
    reactions: Port<dyn RatingReactions>,
}

impl Ratings {
    pub(super) fn new(ctx: Arc<Shared>, players: Arc<Players>) -> Arc<Ratings> {
        Arc::new(Ratings {
            ctx,
            players,
            reactions: Port::new(),
        })
    }

    /// Where a rating's move is handed up; set once, by `Services::new`.
    pub(super) fn react_with(&self, reactions: Weak<dyn RatingReactions>) {
        self.reactions.set(reactions);
    }

    /// The test-only fault hook: the process that finishes a rated game leaves its
    /// ratings to a sweep.
    pub(crate) fn skips_settling(&self) -> bool {
        self.ctx.faults.skip_settling
    }

    /// Moves the ratings of finished rated game `id` (as `record`), once. The game's due
    /// entry, which stands for this until it is done, is the games aggregate's to drop.
    pub(crate) async fn settle(&self, id: GameId, record: &Record) -> Result<(), Error> {
        if !record.rated_end() {
            return Ok(());
        }
        let preset = record.preset().name();
        let Some(outcome) = record.game().outcome() else {
            return Ok(());
        };
        let rules = *record.game().rules();
        let mut seats = Vec::with_capacity(record.seating().occupants().len());
        for seat in 0..record.seating().occupants().len() as u8 {
            let who = match (
                record.seating().player_at(Seat::new(seat)),
                record.seating().occupants()[seat as usize].bot,
            ) {
                (Some(player), _) => player.to_owned(),
                (None, Some(level)) => level.as_str().to_owned(),
                // A seat nobody bound (not made by a challenge or a seek): not rated.
                (None, None) => continue,
            };
            let side = rules.side_of(seat);
            let before = match who.parse::<Level>() {
                Ok(level) => reference_rating(level),
                Err(_) => match self
                    .players
                    .player_record(&PlayerId::stored(who.clone()))
                    .await?
                {
                    Some((_, player)) => player.rating_in(preset),
                    None => Rating::default(),
                },
            };
            let score = match outcome {
                Outcome::Won { side: winner } if winner == side => 1.0,
                Outcome::Won { .. } => 0.0,
                Outcome::Drawn => 0.5,
            };
            seats.push(Rated {
                who,
                side,
                before,
                score,
            });
        }
        let claimed = Job { seats, done: false };
        let (mut job_version, mut job) = self.claim(id, &claimed).await?;
        for _ in 0..ATTEMPTS {
            if job.done {
                break;
            }
            for rated in &job.seats {
                let opponents: Vec<Rating> = job
                    .seats
                    .iter()
                    .filter(|o| o.side != rated.side)
                    .map(|o| o.before)
                    .collect();
                let opponent = Rating::mean_of(&opponents);
                let who = PlayerId::stored(rated.who.clone());
                let level = who.parse::<Level>().ok();
                let rate = |before| match level {
                    Some(level) => reference_rating(level),
                    None => rating::update(before, &[(opponent, rated.score)]),
                };
                let Some((before, after)) = self
                    .players
                    .apply_rating(&who, id, record.preset(), rate)
                    .await?
                else {
                    continue;
                };
                let place = if after.provisional() {
                    after.rating - PROVISIONAL_PENALTY
                } else {
                    after.rating
                };
                self.ctx.store.ratings().rank(preset, &who, place).await?;
                if level.is_none()
                    && let Some(reactions) = self.reactions.get()
                {
                    let change = RatingChange { before, after };
                    reactions.rated(id, record, &rated.who, change).await;
                }
            }
            let mut finished = job.clone();
            finished.done = true;
            match self
                .ctx
                .store
                .ratings()
                .save_ratings(&id, job_version, finished.encode())
                .await?
            {
                SaveOutcome::Saved { .. } => {
                    self.ctx.metrics.rated_games.inc();
                    tracing::info!(game_id = %id, preset, "ratings moved");
                    break;
                }
                SaveOutcome::Conflict { .. } => {
                    (job_version, job) = self.claim(id, &claimed).await?
                }
                SaveOutcome::Missing => break,
            }
        }
        Ok(())
    }

    /// Game `id`'s rating record, `claimed` unless one is stored already: its version and
    /// the record as stored.
    async fn claim(&self, id: GameId, claimed: &Job) -> Result<(u64, Job), Error> {
        let store = self.ctx.store.ratings();
        let stored = store.claim_ratings(&id, claimed.encode()).await?;
        Ok((stored.version, Job::decode(&stored.bytes)?))
    }

    /// A page (from 1) of `preset`'s leaderboard: players with a rated game there, highest
    /// rating first, provisional ones last.
    pub async fn leaderboard(
        &self,
        preset: crate::engine::Preset,
        page: usize,
        per_page: usize,
    ) -> Result<Vec<Placing>, Error> {
        let offset = page_offset(page, per_page, "per_page")?;
        if offset > 1_000_000 {
            return Err(Error::BadRequest(
                "page: too far down any leaderboard".into(),
            ));
        }
        let places = self
            .ctx
            .store
            .ratings()
            .leaderboard(preset.name(), offset, per_page)
            .await?;
        let mut out = Vec::with_capacity(places.len());
        for (id, _) in places {
            let id = PlayerId::stored(id);
            let Some((_, player)) = self.players.player_record(&id).await? else {
                continue;
            };
            let Some(rated) = player.ratings().get(preset.name()) else {
                continue;
            };
            out.push(Placing {
                id: player.id().to_string(),
                name: player.name().to_owned(),
                bot: id.is_level() || player.is_bot(),
                rating: rated.rating,
                games: rated.games,
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use crate::domain::{Caller, GameId, PlayerName, Who};
    use crate::engine::{Move, Preset, RulesPatch};

    use crate::service::shared::now_ms;
    use crate::service::{MoveRequest, NewChallenge, Services};
    use crate::store::GameStore;

    fn service() -> Arc<Services> {
        crate::service::Services::on_memory(Duration::from_secs(1))
    }

    /// Ann resigns a rated block game against Bob, made by a challenge; the game's id,
    /// Ann's key and Bob's id.
    async fn finished_rated_game(service: &Services) -> (GameId, String, String) {
        let ann = service
            .players
            .create_player(&PlayerName::parse("ann").unwrap(), false, None, None)
            .await
            .unwrap();
        let bob = service
            .players
            .create_player(&PlayerName::parse("bob").unwrap(), false, None, None)
            .await
            .unwrap();
        let challenge = service
            .challenges
            .challenge(
                &Caller::of(Some(&ann.key)),
                NewChallenge {
                    opponents: vec![Who::parse("bob")],
                    preset: Preset::Block,
                    overrides: RulesPatch::default(),
                    seats: 2,
                    clock: None,
                    rated: true,
                },
                None,
                None,
            )
            .await
            .unwrap();
        let accepted = service
            .challenges
            .accept(&Caller::of(Some(&bob.key)), challenge.id(), None)
            .await
            .unwrap();
        let game = accepted.game_id().unwrap();
        // Each side moves first: a game resigned at once is aborted, not rated.
        loop {
            let (_, record) = service.games.load(game).await.unwrap();
            if !record.game().sides_moved().unwrap().contains(&false) {
                break;
            }
            let turn = record.game().turn().unwrap();
            let mv = record.game().project(Some(turn)).legal_moves[0].mv;
            let key = if record.seating().seat_of_player(&ann.profile.id) == Some(turn) {
                &ann.key
            } else {
                &bob.key
            };
            let request = MoveRequest {
                mv,
                expected_version: None,
            };
            service
                .games
                .make_move(game, &Caller::of(Some(key)), None, request, None)
                .await
                .unwrap();
        }
        service
            .games
            .make_move(
                game,
                &Caller::of(Some(&ann.key)),
                None,
                MoveRequest {
                    mv: Move::Resign,
                    expected_version: None,
                },
                None,
            )
            .await
            .unwrap();
        (game, ann.key, bob.profile.id)
    }

    async fn block_rating(service: &Services, who: &str) -> Option<(f64, u64)> {
        let profile = service.players.profile(&Who::parse(who)).await.unwrap();
        profile
            .ratings
            .get("block")
            .map(|r| (r.rating.rating, r.games))
    }

    #[tokio::test]
    async fn a_rated_game_moves_each_rating_once_however_often_it_is_settled() {
        let service = service();
        let (game, _, bob) = finished_rated_game(&service).await;
        let (bob_after, games) = block_rating(&service, &bob).await.unwrap();
        assert!(bob_after > 1500.0, "{bob_after}");
        assert_eq!(games, 1);
        let (ann_after, _) = block_rating(&service, "ann").await.unwrap();
        assert!(ann_after < 1500.0, "{ann_after}");
        // Settled again, by the sweep or by another process, at once or later: no change.
        let (_, record) = service.games.load(game).await.unwrap();
        let again =
            futures_util::future::join_all((0..4).map(|_| service.ratings.settle(game, &record)))
                .await;
        assert!(again.iter().all(Result::is_ok), "{again:?}");
        assert_eq!(block_rating(&service, &bob).await, Some((bob_after, 1)));
        assert_eq!(block_rating(&service, "ann").await, Some((ann_after, 1)));
        let board = service
            .ratings
            .leaderboard(Preset::Block, 1, 10)
            .await
            .unwrap();
        let names: Vec<&str> = board.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["bob", "ann"]);
    }

    #[tokio::test]
    async fn a_rated_game_left_unsettled_by_its_process_is_settled_by_a_sweep() {
        let service = service();
        let (game, _, bob) = finished_rated_game(&service).await;
        let (bob_after, _) = block_rating(&service, &bob).await.unwrap();
        // As if the process had stopped between the last save and the ratings: a new
        // game of the same two, finished, its rating record never claimed.
        let (_, mut record) = service.games.load(game).await.unwrap();
        let other = GameId::stored("11111111-2222-3333-4444-555555555555").unwrap();
        record.made_at(record.created_ms() + 1);
        service
            .ctx
            .store
            .games()
            .create_by(&other, record.encode(), None, None)
            .await
            .unwrap();
        crate::service::games::due_for_settling(&service.ctx.store, other, 1).await;
        assert_eq!(block_rating(&service, &bob).await.unwrap().1, 1);
        // The sweep finds it due once the recovery delay passed; here it is told so.
        service
            .ctx
            .store
            .games()
            .index_deadline(&other, 1, Some(now_ms()))
            .await
            .unwrap();
        service.sweep().await.unwrap();
        let (after_two, games) = block_rating(&service, &bob).await.unwrap();
        assert_eq!(games, 2);
        assert!(after_two > bob_after);
        // And only once.
        service.sweep().await.unwrap();
        assert_eq!(block_rating(&service, &bob).await.unwrap().1, 2);
    }
}
