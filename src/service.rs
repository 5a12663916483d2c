//! The one place that joins the engine, the bots and the store.
//!
//! A request travels: load the game's record → check the seat token → run the engine (and
//! the bots whose turn follows) → store the record with a compare-and-set on its version,
//! together with the idempotency record and the public event → answer. A lost race
//! retries on fresh state, unless the client pinned `expected_version`.
//!
//! It knows no HTTP: handlers turn requests into calls here and map [`Error`] to
//! problems. It never logs a token or a hidden tile: moves are logged in their public
//! form (a draw does not name its tile).

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::StreamExt;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::bots::{self, Level};
use crate::engine::{
    Deal, Event, Game, LegalMove, Move, MoveError, Preset, Rules, RulesError, RulesPatch, Seed,
};
use crate::metrics::Metrics;
use crate::store::any::AnyStore;
use crate::store::{GameStore, IdempotencyRecord, Save, SaveOutcome, StoreError};

/// Attempts at a compare-and-set before giving up (each loses only to a concurrent move
/// of the same game, so a handful is plenty).
const MAX_ATTEMPTS: usize = 16;
/// A safety net on bots moving inside one request (a whole match of four bots is ~200).
const MAX_BOT_MOVES: usize = 5_000;
/// Player names: 1 to this many characters.
pub const MAX_NAME_CHARS: usize = 32;

/// What went wrong, in domain words; the API maps each to its problem code.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("no such game")]
    NotFound,
    #[error("{0}")]
    Unauthorized(&'static str),
    #[error("{0}")]
    NotYourTurn(String),
    #[error("the game is at version {current}")]
    VersionConflict { current: u64 },
    #[error("the game has not started: seats are still free")]
    NotStarted,
    #[error("the match is over")]
    Finished,
    #[error("{0}")]
    SeatTaken(String),
    #[error("every seat is taken")]
    GameFull,
    #[error("{message}")]
    IllegalMove {
        message: String,
        legal: Vec<LegalMove>,
    },
    #[error("{0}")]
    InvalidRules(String),
    #[error("this Idempotency-Key was used with another request")]
    IdempotencyKeyReused,
    #[error("{0}")]
    BadRequest(String),
    #[error("the game is not finished: the export reveals every hand")]
    NotFinished,
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Internal(String),
}

impl From<RulesError> for Error {
    fn from(e: RulesError) -> Error {
        Error::InvalidRules(e.to_string())
    }
}

/// One seat of a game as stored.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SeatRecord {
    pub name: Option<String>,
    /// The first 128 bits of the token's SHA-256: the token itself is never stored. Tokens
    /// are 256 random bits, so finding another token with these 128 bits is out of reach,
    /// and every stored game is 32 bytes smaller than with the whole hash.
    token_hash: Option<[u8; 16]>,
    pub bot: Option<Level>,
}

impl SeatRecord {
    pub fn is_taken(&self) -> bool {
        self.token_hash.is_some() || self.bot.is_some()
    }
}

/// A game as stored: the lobby's facts around the engine's game.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Record {
    pub created_ms: u64,
    pub preset: Preset,
    pub prearranged: bool,
    pub seats: Vec<SeatRecord>,
    pub game: Game,
}

/// The record's storage format: one byte, then postcard. The engine's game is embedded
/// directly (not as its own versioned bytes) to keep a move's (de)serialisation to one
/// pass; bump this whenever `Record` or the engine's `Game` changes shape, and keep
/// reading the old one (a Redis shared across a deploy holds games in play).
/// Format 1 embedded the engine's game format 1 (moves as `(seat, move)`) and whole token
/// hashes.
const RECORD_FORMAT: u8 = 2;

/// A record as format 1 stored it.
#[derive(Deserialize)]
struct RecordV1 {
    created_ms: u64,
    preset: Preset,
    prearranged: bool,
    seats: Vec<SeatRecordV1>,
    game: crate::engine::storage::GameV1,
}

/// A seat as format 1 stored it: with the token's whole SHA-256.
#[derive(Deserialize)]
struct SeatRecordV1 {
    name: Option<String>,
    token_hash: Option<[u8; 32]>,
    bot: Option<Level>,
}

impl From<SeatRecordV1> for SeatRecord {
    fn from(old: SeatRecordV1) -> SeatRecord {
        SeatRecord {
            name: old.name,
            token_hash: old.token_hash.map(|h| short_hash(&h)),
            bot: old.bot,
        }
    }
}

impl Record {
    pub fn status(&self) -> Status {
        if self.seats.iter().any(|s| !s.is_taken()) {
            Status::Waiting
        } else if self.game.is_over() {
            Status::Finished
        } else {
            Status::Playing
        }
    }

    fn encode(&self) -> Vec<u8> {
        postcard::to_extend(self, vec![RECORD_FORMAT]).expect("a record always serialises")
    }

    fn decode(bytes: &[u8]) -> Result<Record, Error> {
        let unreadable =
            |e: &dyn std::fmt::Display| Error::Internal(format!("stored game unreadable: {e}"));
        let record = match bytes.split_first() {
            Some((&RECORD_FORMAT, rest)) => {
                postcard::from_bytes::<Record>(rest).map_err(|e| unreadable(&e))?
            }
            Some((&1, rest)) => {
                let old: RecordV1 = postcard::from_bytes(rest).map_err(|e| unreadable(&e))?;
                Record {
                    created_ms: old.created_ms,
                    preset: old.preset,
                    prearranged: old.prearranged,
                    seats: old.seats.into_iter().map(SeatRecord::from).collect(),
                    game: Game::try_from(old.game).map_err(|e| unreadable(&e))?,
                }
            }
            _ => return Err(Error::Internal("stored game has an unknown format".into())),
        };
        record
            .game
            .check_invariants()
            .map_err(|e| Error::Internal(format!("stored game invalid: {e}")))?;
        Ok(record)
    }

    /// The seat a bearer token belongs to. Every seat's hash is compared, in constant time,
    /// so the answer's timing says nothing about the token.
    fn seat_of(&self, token: &str) -> Option<u8> {
        let hash = token_hash(token);
        let mut found = None;
        for (i, seat) in self.seats.iter().enumerate() {
            if let Some(h) = &seat.token_hash
                && bool::from(h.ct_eq(&hash))
            {
                found = Some(i as u8);
            }
        }
        found
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Waiting,
    Playing,
    Finished,
}

fn token_hash(token: &str) -> [u8; 16] {
    short_hash(&Sha256::digest(token.as_bytes()).into())
}

/// The first 128 bits of a SHA-256, as seats keep them.
fn short_hash(digest: &[u8; 32]) -> [u8; 16] {
    let mut hash = [0; 16];
    hash.copy_from_slice(&digest[..16]);
    hash
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A loaded game: its record, the version it carries, and who is looking.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub id: String,
    pub version: u64,
    pub record: Record,
    /// The caller's seat, or `None` for a spectator.
    pub viewer: Option<u8>,
}

/// A new game, as the lobby asks for it.
#[derive(Debug, Clone)]
pub struct NewGame {
    pub preset: Preset,
    pub overrides: RulesPatch,
    pub seats: u8,
    pub bots: Vec<(u8, Level)>,
    pub seed: Option<String>,
    pub deal: Option<Deal>,
}

/// A move request after parsing.
#[derive(Debug, Clone, Copy)]
pub struct MoveRequest {
    pub mv: Move,
    pub expected_version: Option<u64>,
}

/// The public fact of one stored version: what the event stream carries. No tile in any
/// hand can be in it: moves are in their public form.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PublicEvent {
    pub version: u64,
    pub status: Status,
    pub turn: Option<u8>,
    /// The moves stored with this version (a player's and the bots' after it), public form.
    pub moves: Vec<(u8, Move)>,
}

/// The stored and published form of a public event: this byte, then postcard. About 15
/// bytes for one move where JSON took about 110, and every game keeps its last
/// [`EVENT_HISTORY`](crate::store::memory::EVENT_HISTORY) events in the store.
const EVENT_FORMAT: u8 = 1;

impl PublicEvent {
    pub fn encode(&self) -> Vec<u8> {
        postcard::to_extend(self, vec![EVENT_FORMAT]).expect("an event always serialises")
    }

    /// An event as [`PublicEvent::encode`] wrote it, or as JSON (the form of earlier
    /// versions, which a Redis shared across a deploy may still hold or publish).
    pub fn decode(bytes: &[u8]) -> Option<PublicEvent> {
        match bytes.split_first() {
            Some((&EVENT_FORMAT, rest)) => postcard::from_bytes(rest).ok(),
            Some((b'{', _)) => serde_json::from_slice(bytes).ok(),
            _ => None,
        }
    }
}

/// The answer to a move: rendered once, stored with the move for idempotent retries.
pub struct MoveAnswer {
    pub body: Vec<u8>,
}

/// What an idempotency key says about a request.
enum Earlier {
    /// No request was stored under the key.
    None,
    /// This request was made before: its first answer.
    Answer(MoveAnswer),
    /// This request was made, and stored after the game was loaded.
    AfterLoad,
}

/// What the store keeps under an idempotency key: enough to render the first answer again
/// (see [`GameService::make_move`]). One format byte, then postcard: about 8 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Receipt {
    seat: u8,
    /// The version the move made.
    version: u64,
    /// The match's move count before the move and after it (and the bots' that followed).
    from: u32,
    to: u32,
}

/// Never `{`, which the whole JSON answers stored by earlier versions begin with.
const RECEIPT_FORMAT: u8 = 1;

impl Receipt {
    fn encode(&self) -> Vec<u8> {
        postcard::to_extend(self, vec![RECEIPT_FORMAT]).expect("a receipt always serialises")
    }

    fn decode(bytes: &[u8]) -> Option<Receipt> {
        match bytes.split_first() {
            Some((&RECEIPT_FORMAT, rest)) => postcard::from_bytes(rest).ok(),
            _ => None,
        }
    }

    /// The answer as it was first rendered: the game replayed to the receipt's moves, seen
    /// by its seat, with the events those moves caused. `record` is the game as loaded at
    /// the receipt's version or later.
    fn answer(self, id: &str, record: &Record, render: Render<'_>) -> Result<MoveAnswer, Error> {
        let damaged = |why: String| Error::Internal(format!("an idempotency record: {why}"));
        if self.from > self.to || self.seat >= record.game.seats() {
            return Err(damaged("it is not from this game's past".into()));
        }
        let (game, events) = record.game.after_moves(self.to as usize).map_err(damaged)?;
        let caused: Vec<Event> = events[self.from as usize + 1..]
            .iter()
            .flatten()
            .map(|e| e.visible_to(Some(self.seat)))
            .collect();
        let snapshot = Snapshot {
            id: id.to_string(),
            version: self.version,
            record: Record {
                created_ms: record.created_ms,
                preset: record.preset,
                prearranged: record.prearranged,
                seats: record.seats.clone(),
                game,
            },
            viewer: Some(self.seat),
        };
        Ok(MoveAnswer {
            body: render(&snapshot, &caused),
        })
    }
}

/// A renderer of the move answer from the state after the move (kept by the API so the
/// service knows nothing of JSON views).
pub type Render<'a> = &'a (dyn Fn(&Snapshot, &[Event]) -> Vec<u8> + Sync);

pub struct GameService {
    store: Arc<AnyStore>,
    metrics: Arc<Metrics>,
    long_poll_max: Duration,
}

impl GameService {
    pub fn new(
        store: Arc<AnyStore>,
        metrics: Arc<Metrics>,
        long_poll_max: Duration,
    ) -> GameService {
        GameService {
            store,
            metrics,
            long_poll_max,
        }
    }

    pub fn store(&self) -> &AnyStore {
        &self.store
    }

    /// The effective rules of a new game (preset + overrides), validated.
    pub fn rules_for(preset: Preset, overrides: &RulesPatch, seats: u8) -> Result<Rules, Error> {
        let rules = preset.rules().with(overrides);
        rules.validate(seats)?;
        Ok(rules)
    }

    pub async fn create(&self, new: NewGame) -> Result<Snapshot, Error> {
        let rules = GameService::rules_for(new.preset, &new.overrides, new.seats)?;
        let mut seats: Vec<SeatRecord> = (0..new.seats)
            .map(|_| SeatRecord {
                name: None,
                token_hash: None,
                bot: None,
            })
            .collect();
        for &(seat, level) in &new.bots {
            let slot = seats.get_mut(seat as usize).ok_or_else(|| {
                Error::InvalidRules(format!(
                    "bots: there is no seat {seat} in a {}-seat game",
                    new.seats
                ))
            })?;
            if slot.bot.is_some() {
                return Err(Error::InvalidRules(format!(
                    "bots: seat {seat} is given two bots"
                )));
            }
            slot.bot = Some(level);
            slot.name = Some(format!("{} bot", level.as_str()));
        }
        let prearranged = new.seed.is_some() || new.deal.is_some();
        let seed = match &new.seed {
            Some(text) => Seed::from_text(text),
            None => {
                let mut bytes = [0u8; 32];
                rand::rng().fill_bytes(&mut bytes);
                Seed(bytes)
            }
        };
        let game = Game::new(rules, new.seats, seed, new.deal)?;
        let mut record = Record {
            created_ms: now_ms(),
            preset: new.preset,
            prearranged,
            seats,
            game,
        };
        let id = uuid::Uuid::new_v4().to_string();
        // A game of bots only starts at once: the bots play it inside this request.
        let bot_moves = run_bots(&mut record, &mut Vec::new());
        // Nobody could ever move in a game of bots only that they did not finish here
        // (the safety net stopped them): refuse it rather than store it stuck forever.
        if record.status() == Status::Playing && record.seats.iter().all(|s| s.bot.is_some()) {
            return Err(Error::InvalidRules(format!(
                "bots: a game of bots only is played inside this request and must end within \
                 {MAX_BOT_MOVES} moves; this one did not (lower the target or the rounds)"
            )));
        }
        let listed = record.status() == Status::Waiting;
        self.store
            .create(&id, record.encode(), listed, record.created_ms)
            .await?;
        self.metrics.games_created.inc();
        self.metrics.moves_applied.inc_by(bot_moves.len() as u64);
        tracing::info!(game_id = %id, preset = new.preset.name(), seats = new.seats, bots = new.bots.len(), prearranged, "game created");
        Ok(Snapshot {
            id,
            version: 1,
            record,
            viewer: None,
        })
    }

    async fn load(&self, id: &str) -> Result<(u64, Record), Error> {
        let stored = self.store.load(id).await?.ok_or(Error::NotFound)?;
        Ok((stored.version, Record::decode(&stored.bytes)?))
    }

    /// The game as `token`'s seat (or a spectator, without a token) may see it.
    pub async fn view(&self, id: &str, token: Option<&str>) -> Result<Snapshot, Error> {
        let (version, record) = self.load(id).await?;
        let viewer = match token {
            None => None,
            Some(t) => Some(
                record
                    .seat_of(t)
                    .ok_or(Error::Unauthorized("the token is not a seat of this game"))?,
            ),
        };
        Ok(Snapshot {
            id: id.to_string(),
            version,
            record,
            viewer,
        })
    }

    /// Long poll: answers as soon as the version is greater than `after`, or after `wait`.
    pub async fn view_after(
        &self,
        id: &str,
        token: Option<&str>,
        after: u64,
        wait: Duration,
    ) -> Result<Snapshot, Error> {
        let wait = wait.min(self.long_poll_max);
        // Subscribe before looking, so a move stored in between still wakes us.
        let mut events = self.store.subscribe(id).await?;
        let snapshot = self.view(id, token).await?;
        if snapshot.version > after || wait.is_zero() {
            return Ok(snapshot);
        }
        let woke = tokio::time::timeout(wait, async {
            while let Some(event) = events.next().await {
                if event.version > after {
                    return true;
                }
            }
            false
        })
        .await;
        match woke {
            Ok(_) => self.view(id, token).await,
            Err(_) => Ok(snapshot),
        }
    }

    /// Takes a seat; the last seat taken starts the game (and bots that lead move).
    /// Returns the seat, its token (shown once) and the state after.
    pub async fn join(
        &self,
        id: &str,
        name: &str,
        wanted: Option<u8>,
    ) -> Result<(u8, String, Snapshot), Error> {
        let name = name.trim();
        if name.is_empty()
            || name.chars().count() > MAX_NAME_CHARS
            || name.chars().any(char::is_control)
        {
            return Err(Error::BadRequest(format!(
                "name: 1 to {MAX_NAME_CHARS} characters, no control characters"
            )));
        }
        let mut token_bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut token_bytes);
        let token = hex::encode(token_bytes);
        for _ in 0..MAX_ATTEMPTS {
            let (version, mut record) = self.load(id).await?;
            let free: Vec<u8> = (0..record.seats.len() as u8)
                .filter(|&s| !record.seats[s as usize].is_taken())
                .collect();
            if free.is_empty() {
                return Err(Error::GameFull);
            }
            let seat = match wanted {
                Some(s) if s as usize >= record.seats.len() => {
                    return Err(Error::BadRequest(format!(
                        "seat: this game has seats 0 to {}",
                        record.seats.len() - 1
                    )));
                }
                Some(s) if !free.contains(&s) => {
                    return Err(Error::SeatTaken(format!("seat {s} is taken")));
                }
                Some(s) => s,
                None => free[0],
            };
            record.seats[seat as usize] = SeatRecord {
                name: Some(name.to_string()),
                token_hash: Some(token_hash(&token)),
                bot: None,
            };
            let started = record.status() != Status::Waiting;
            let moves = run_bots_if_started(&mut record);
            let event = PublicEvent {
                version: version + 1,
                status: record.status(),
                turn: record.game.turn(),
                moves: moves.clone(),
            };
            let save = Save {
                expected: version,
                bytes: record.encode(),
                idempotency: None,
                event: Some(event.encode()),
                unlist: started,
                finished: record.status() == Status::Finished,
            };
            match self.store.save(id, save).await? {
                SaveOutcome::Saved { version } => {
                    self.metrics.moves_applied.inc_by(moves.len() as u64);
                    tracing::info!(game_id = %id, seat, started, version, "seat taken");
                    return Ok((
                        seat,
                        token,
                        Snapshot {
                            id: id.to_string(),
                            version,
                            record,
                            viewer: Some(seat),
                        },
                    ));
                }
                SaveOutcome::Conflict { .. } => {
                    self.metrics.store_conflicts.inc();
                }
                SaveOutcome::Missing => return Err(Error::NotFound),
            }
        }
        Err(Error::Internal(
            "too many concurrent changes to this game; try again".into(),
        ))
    }

    /// Makes a move for `token`'s seat, then lets the bots whose turn follows move, and
    /// stores it all as one version. `idempotency`: `(key, fingerprint of the request)`.
    pub async fn make_move(
        &self,
        id: &str,
        token: &str,
        request: MoveRequest,
        idempotency: Option<(String, Vec<u8>)>,
        render: Render<'_>,
    ) -> Result<MoveAnswer, Error> {
        for _ in 0..MAX_ATTEMPTS {
            let (version, mut record) = self.load(id).await?;
            // Looked up after the load, never before: the record is saved with the game,
            // so a copy of this request stored in a state at or before the one just
            // loaded is seen here, and a retry never meets the game it already changed
            // (which would refuse it, say as not your turn).
            match self
                .earlier_answer(id, version, &record, &idempotency, render)
                .await?
            {
                Earlier::Answer(answer) => return Ok(answer),
                // The copy was stored after this load: load again to render it.
                Earlier::AfterLoad => continue,
                Earlier::None => {}
            }
            let seat = record
                .seat_of(token)
                .ok_or(Error::Unauthorized("the token is not a seat of this game"))?;
            match record.status() {
                Status::Waiting => return Err(Error::NotStarted),
                Status::Finished => return Err(Error::Finished),
                Status::Playing => {}
            }
            if let Some(expected) = request.expected_version
                && expected != version
            {
                return Err(Error::VersionConflict { current: version });
            }
            let mut events = Vec::new();
            let moves_before = record.game.move_count();
            let played = record
                .game
                .play_into(seat, request.mv, &mut events)
                .map_err(|e| refuse(&record.game, seat, e))?;
            let mut moves = vec![(seat, played)];
            moves.extend(run_bots(&mut record, &mut events));
            let snapshot = Snapshot {
                id: id.to_string(),
                version: version + 1,
                record,
                viewer: Some(seat),
            };
            let visible: Vec<Event> = events.iter().map(|e| e.visible_to(Some(seat))).collect();
            let body = render(&snapshot, &visible);
            let event = PublicEvent {
                version: version + 1,
                status: snapshot.record.status(),
                turn: snapshot.record.game.turn(),
                moves: moves.clone(),
            };
            let save = Save {
                expected: version,
                bytes: snapshot.record.encode(),
                idempotency: idempotency
                    .as_ref()
                    .map(|(key, fingerprint)| IdempotencyRecord {
                        key: key.clone(),
                        fingerprint: fingerprint.clone(),
                        response: Receipt {
                            seat,
                            version: version + 1,
                            from: moves_before as u32,
                            to: snapshot.record.game.move_count() as u32,
                        }
                        .encode(),
                    }),
                event: Some(event.encode()),
                unlist: false,
                finished: snapshot.record.status() == Status::Finished,
            };
            match self.store.save(id, save).await? {
                SaveOutcome::Saved { version } => {
                    self.metrics.moves_applied.inc_by(moves.len() as u64);
                    for (s, mv) in &moves {
                        tracing::info!(game_id = %id, seat = s, mv = ?mv, version, "move applied");
                    }
                    if snapshot.record.status() == Status::Finished {
                        tracing::info!(game_id = %id, scores = ?snapshot.record.game.scores(), "match ended");
                    }
                    return Ok(MoveAnswer { body });
                }
                SaveOutcome::Conflict { .. } => {
                    self.metrics.store_conflicts.inc();
                    // Another request of this game won. Look again: if it was a copy of
                    // this one (same key), its answer is this one's too, pinned version
                    // or not; else a pinned version is refused as stale after the load.
                }
                SaveOutcome::Missing => return Err(Error::NotFound),
            }
        }
        Err(Error::Internal(
            "too many concurrent moves in this game; try again".into(),
        ))
    }

    /// The answer stored under this request's idempotency key, if any: the same answer
    /// again for the same request, a refusal for another one. The store keeps a receipt
    /// (which seat, which version, which moves), not the answer: the answer is rendered
    /// again from `record` (the game as loaded, at `version` or later) replayed to the
    /// receipt's version, so a key on every move costs a few dozen bytes each.
    async fn earlier_answer(
        &self,
        id: &str,
        version: u64,
        record: &Record,
        idempotency: &Option<(String, Vec<u8>)>,
        render: Render<'_>,
    ) -> Result<Earlier, Error> {
        let Some((key, fingerprint)) = idempotency else {
            return Ok(Earlier::None);
        };
        let previous = match self.store.idempotency(id, key).await? {
            Some(previous) if &previous.fingerprint == fingerprint => previous,
            Some(_) => return Err(Error::IdempotencyKeyReused),
            None => return Ok(Earlier::None),
        };
        let Some(receipt) = Receipt::decode(&previous.response) else {
            // Stored by an earlier version of the server, which kept the whole answer.
            if previous.response.first() == Some(&b'{') {
                return Ok(Earlier::Answer(MoveAnswer {
                    body: previous.response,
                }));
            }
            return Err(Error::Internal(
                "an idempotency record is unreadable".into(),
            ));
        };
        if receipt.version > version {
            return Ok(Earlier::AfterLoad);
        }
        receipt.answer(id, record, render).map(Earlier::Answer)
    }

    /// Open games, newest first.
    pub async fn list_open(&self, offset: usize, limit: usize) -> Result<Vec<Snapshot>, Error> {
        let ids = self.store.list_open(offset, limit).await?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            // A game may have started or expired since it was listed: skip it.
            if let Ok((version, record)) = self.load(&id).await
                && record.status() == Status::Waiting
            {
                out.push(Snapshot {
                    id,
                    version,
                    record,
                    viewer: None,
                });
            }
        }
        Ok(out)
    }

    /// The finished game's whole record (rules, seed, deals and moves).
    pub async fn export(&self, id: &str) -> Result<Snapshot, Error> {
        let (version, record) = self.load(id).await?;
        if record.status() != Status::Finished {
            return Err(Error::NotFinished);
        }
        Ok(Snapshot {
            id: id.to_string(),
            version,
            record,
            viewer: None,
        })
    }
}

/// Maps an engine refusal to the service's error, with the seat's legal moves.
fn refuse(game: &Game, seat: u8, e: MoveError) -> Error {
    match e {
        MoveError::GameOver => Error::Finished,
        MoveError::NotYourTurn { .. } => Error::NotYourTurn(e.to_string()),
        other => Error::IllegalMove {
            message: other.to_string(),
            legal: game.project(Some(seat)).legal_moves,
        },
    }
}

fn run_bots_if_started(record: &mut Record) -> Vec<(u8, Move)> {
    if record.status() == Status::Waiting {
        Vec::new()
    } else {
        run_bots(record, &mut Vec::new())
    }
}

/// Lets the bots move while one of them may: an out-of-turn muggins call first, then the
/// seat to move. Deterministic: each bot's RNG comes from the game's seed and the move
/// number, so a prearranged game with bots replays the same.
fn run_bots(record: &mut Record, events: &mut Vec<Event>) -> Vec<(u8, Move)> {
    let mut moves = Vec::new();
    if record.status() == Status::Waiting {
        return moves;
    }
    for _ in 0..MAX_BOT_MOVES {
        let Some(turn) = record.game.turn() else {
            break;
        };
        let seats = record.game.seats();
        // Bots off turn take unclaimed points before the seat to move plays on.
        let mover = (0..seats)
            .map(|i| (turn + i) % seats)
            .filter(|&s| record.seats[s as usize].bot.is_some())
            .find(|&s| {
                if s == turn {
                    true
                } else {
                    record.game.legal_moves(s).contains(&Move::Muggins)
                }
            });
        let Some(seat) = mover else { break };
        let level = record.seats[seat as usize].bot.expect("a bot seat");
        let mut seed = Sha256::new();
        seed.update(record.game.seed().0);
        seed.update((record.game.move_count() as u64).to_le_bytes());
        let mut rng = ChaCha8Rng::from_seed(seed.finalize().into());
        let view = record.game.project(Some(seat));
        let Some(mv) = bots::choose(level, &view, &mut rng) else {
            break;
        };
        match record.game.play_into(seat, mv, events) {
            Ok(played) => moves.push((seat, played)),
            Err(e) => {
                // A bot only picks from its legal moves; if it ever did not, stop rather
                // than loop, and say so.
                tracing::error!(seat, error = %e, "a bot chose an illegal move");
                break;
            }
        }
    }
    moves
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{End, Tile};

    #[test]
    fn a_record_stored_in_format_1_reads_and_its_tokens_still_match() {
        let mut game = Game::new(Preset::Draw.rules(), 2, Seed::from_text("r1"), None).unwrap();
        for _ in 0..9 {
            let seat = game.turn().unwrap();
            let mv = *game.legal_moves(seat).last().unwrap();
            game.play(seat, mv).unwrap();
        }
        // Format 1: the same fields, whole token hashes, and the engine's game format 1.
        type SeatV1 = (Option<String>, Option<[u8; 32]>, Option<Level>);
        let seats: Vec<SeatV1> = vec![
            (
                Some("ann".into()),
                Some(Sha256::digest(b"token-a").into()),
                None,
            ),
            (None, None, Some(Level::Greedy)),
        ];
        let mut bytes = postcard::to_extend(&(7u64, Preset::Draw, false, seats), vec![1]).unwrap();
        bytes.extend(game.to_v1_postcard());
        let record = Record::decode(&bytes).unwrap();
        assert_eq!(record.game, game);
        assert_eq!((record.created_ms, record.preset), (7, Preset::Draw));
        assert_eq!(record.seats[0].name.as_deref(), Some("ann"));
        assert_eq!(record.seat_of("token-a"), Some(0));
        assert_eq!(record.seat_of("token-b"), None);
        assert_eq!(record.seats[1].bot, Some(Level::Greedy));
        // Stored again, it is format 2, and reads back the same.
        let again = Record::decode(&record.encode()).unwrap();
        assert_eq!(again.game, game);
        assert_eq!(again.seat_of("token-a"), Some(0));
    }

    #[test]
    fn public_events_are_compact_and_earlier_json_ones_still_read() {
        let event = PublicEvent {
            version: 141,
            status: Status::Playing,
            turn: Some(1),
            moves: vec![(
                0,
                Move::Play {
                    tile: "5-3".parse::<Tile>().unwrap(),
                    end: Some(End::Left),
                    claim: None,
                },
            )],
        };
        let bytes = event.encode();
        assert!(bytes.len() <= 16, "{} bytes", bytes.len());
        assert_eq!(PublicEvent::decode(&bytes), Some(event.clone()));
        let json = serde_json::to_vec(&event).unwrap();
        assert_eq!(PublicEvent::decode(&json), Some(event));
        assert_eq!(PublicEvent::decode(b""), None);
        assert_eq!(PublicEvent::decode(&[9, 1, 2]), None);
    }
}
