//! Webhook seats played: when a seat whose player has an active webhook is to move, the
//! process driving the game (under its lease: one call at a time, whichever process) POSTs
//! the seat's view to the webhook and plays the answer through a seat's own move path. A
//! failure (late, refused, unreadable, illegal) is called once more while the budget
//! allows; then the seat's clock decides, as for an absent player (a game without a clock
//! calls again a little later). Failures in a row pause the webhook.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::value::RawValue;

use crate::domain::{Caller, GameId, PlayerId, Seat};
use crate::service::page::MAX_PER_PAGE;
use crate::service::players::{Counted, Hook, WebhookSet};
use crate::service::shared::now_ms;

use crate::metrics::BotPlace;

use super::play::{MoveRequest, seat_moves};
use super::record::{Record, Status};
use super::view::View;
use super::write::{Change, Decision, Written};
use super::{Error, Games};

/// How the api writes a seat's view and reads a move: handed to the service when it is
/// built, so a webhook is sent exactly what `GET /v1/games/{id}` answers that seat and its
/// answer is read as `POST /v1/games/{id}/moves` reads a body.
pub trait CallWire: Send + Sync + 'static {
    /// The view as JSON.
    fn view_json(&self, view: &View) -> String;
    /// A move body, or why it is not one.
    fn read_move(&self, body: &[u8]) -> Result<MoveRequest, String>;
}

/// Webhook seats played: their calls, and the answers played. Apart from [`Games`], whose
/// write path it plays the answers through.
pub struct Calls {
    games: Arc<Games>,
    /// How webhook calls are written and their answers read (the api's wire).
    wire: Option<Arc<dyn CallWire>>,
}

impl Calls {
    pub(in crate::service) fn new(
        games: Arc<Games>,
        wire: Option<Arc<dyn CallWire>>,
    ) -> Arc<Calls> {
        Arc::new(Calls { games, wire })
    }
}

/// Below this much budget left, no call is made: nobody answers in less.
const MIN_BUDGET: Duration = Duration::from_millis(50);
/// A game without a clock calls a failed turn again this long after it failed.
const RETRY_WITHOUT_CLOCK: Duration = Duration::from_secs(1);

/// The body of a call.
#[derive(Serialize)]
struct MoveCall<'a> {
    r#type: &'static str,
    call_id: &'a str,
    game_id: String,
    seat: u8,
    deadline_ms: u64,
    view: &'a RawValue,
}

/// One turn's call, made once or twice.
struct Call<'a> {
    id: GameId,
    version: u64,
    seat: u8,
    player: &'a str,
    hook: &'a Hook,
    call_id: String,
    view: &'a RawValue,
}

/// What became of one call.
enum Called {
    /// The answer was played (the game after it), and how long the call took.
    Played(Box<Record>, Duration),
    /// The game moved on meanwhile (another answer, a timeout): nothing to do.
    Moot,
    /// No playable answer, for this reason (its kind for the metrics).
    Failed(&'static str, String),
}

impl Calls {
    /// The wire the calls are written in, if the server has one (a unit test's services
    /// have none: their webhook seats are played by pulling).
    fn wire(&self) -> Option<&Arc<dyn CallWire>> {
        self.wire.as_ref()
    }

    /// Registers the key's player's webhook ([`crate::service::Players::set_webhook`])
    /// and has the server call its seats in the games it is playing already, those of a
    /// webhook paused before too: each from its next turn, a turn owed now at once.
    pub async fn set_webhook(&self, caller: &Caller, url: &str) -> Result<WebhookSet, Error> {
        let set = self.games.players.set_webhook(caller, url).await?;
        let (mut offset, mut hooked) = (0, 0);
        // The player's index is capped (PLAYER_GAMES_KEPT): a bounded walk.
        loop {
            let (ids, _) = self
                .games
                .ctx
                .store
                .player_index()
                .player_games(set.player.as_str(), offset, MAX_PER_PAGE)
                .await?;
            if ids.is_empty() {
                break;
            }
            offset += ids.len();
            for id in ids.iter().filter_map(|id| GameId::stored(id)) {
                hooked += usize::from(self.hook_player_seat(id, &set.player).await?);
            }
        }
        tracing::info!(player_id = %set.player, games = hooked, "webhook seats hooked in games in play");
        Ok(set)
    }

    /// Hooks `player`'s seat in game `id` if the game is not finished and it is not
    /// hooked yet: whether it did.
    async fn hook_player_seat(&self, id: GameId, player: &PlayerId) -> Result<bool, Error> {
        let written = self
            .games
            .update(id, None, |_, _, record| {
                let seat = record.seating().seat_of_player(player.as_str());
                match seat.filter(|&s| {
                    record.status() != Status::Finished && !record.called().is_hooked(s)
                }) {
                    Some(seat) => {
                        record.called_mut().hook(seat);
                        Ok(Decision::Store(Change::quiet(())))
                    }
                    None => Ok(Decision::Leave(())),
                }
            })
            .await;
        match written {
            Ok(Written::Saved { .. }) => Ok(true),
            Ok(Written::Unchanged { .. } | Written::Repeated { .. }) | Err(Error::NotFound) => {
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Calls the webhook of game `id`'s seat to move, if a call is owed now, and plays its
    /// answer. Returns whether more is owed at once (bots to move, or a seat to call).
    pub(crate) async fn call_turn(&self, id: GameId) -> Result<bool, Error> {
        let (version, record) = self.games.load(id).await?;
        let now = now_ms();
        let Some(seat) = record.call_owed(now) else {
            return Ok(false);
        };
        let player = PlayerId::stored(
            record
                .seating()
                .player_at(Seat::new(seat))
                .ok_or_else(|| Error::Internal("a webhook seat bound to no player".into()))?
                .to_owned(),
        );
        let (Some(hook), Some(wire)) = (self.games.players.hook_of(&player).await?, self.wire())
        else {
            // Removed or paused since the seat was bound: it plays by pulling.
            self.change_calls(id, version, |record| record.called_mut().unhook(seat))
                .await?;
            tracing::info!(game_id = %id, seat, player_id = %player, "webhook seat unhooked: no active webhook");
            return Ok(false);
        };
        let settings = &self.games.ctx.webhooks;
        // Each call's budget: the webhook's own, never past the seat's clock.
        let began = Instant::now();
        let clock_left = record
            .clock
            .as_ref()
            .and_then(|c| c.deadline())
            .map(|deadline| Duration::from_millis(deadline.saturating_sub(now)));
        let budget = || {
            clock_left.map_or(settings.timeout, |left| {
                left.saturating_sub(began.elapsed()).min(settings.timeout)
            })
        };
        let view = wire.view_json(&View::of(id, version, &record, Some(seat)));
        let view = RawValue::from_string(view)
            .map_err(|e| Error::Internal(format!("a view is not JSON: {e}")))?;
        let call = Call {
            id,
            version,
            seat,
            player: &player,
            hook: &hook,
            // The same id for the call made again (here, or by another process after this
            // one died): the bot may answer it twice, and only one move is played.
            call_id: format!("{id}.{version}"),
            view: &view,
        };
        let mut last_failure = String::new();
        for attempt in 1..=2 {
            let left = budget();
            if left < MIN_BUDGET {
                break;
            }
            let called = self.call_once(&call, wire, left).await?;
            let (outcome, counted) = match &called {
                Called::Played(_, took) => ("played", Ok(*took)),
                Called::Moot => return Ok(false),
                Called::Failed(kind, why) => (*kind, Err(why.clone())),
            };
            self.games.ctx.metrics.webhook_call(outcome);
            match &counted {
                Ok(took) => self
                    .games
                    .ctx
                    .metrics
                    .webhook_latency
                    .observe(took.as_secs_f64()),
                Err(why) => {
                    tracing::info!(game_id = %id, seat, player_id = %player, attempt, failure = outcome, reason = %why, "webhook call failed");
                    last_failure = why.clone();
                }
            }
            match self
                .games
                .players
                .count_call(&player, &hook.secret, counted)
                .await?
            {
                Counted::Paused(reason) => {
                    self.games.ctx.metrics.webhooks_paused.inc();
                    tracing::info!(player_id = %player, %reason, "webhook paused");
                    if let Some(reactions) = self.games.reactions.get() {
                        reactions.webhook_paused(&player, &reason).await;
                    }
                    // Its seats are played as absent players' are from now on.
                    if !matches!(called, Called::Played(..)) {
                        self.change_calls(id, version, |record| record.called_mut().unhook(seat))
                            .await?;
                        return Ok(false);
                    }
                }
                Counted::Active | Counted::Gone => {}
            }
            if let Called::Played(record, _) = called {
                return Ok(record.bots_to_move() || record.call_owed(now_ms()).is_some());
            }
        }
        // No call brought a move: the clock decides this turn; without one, it is called
        // again a little later.
        let retry = record
            .clock
            .is_none()
            .then(|| now_ms() + RETRY_WITHOUT_CLOCK.as_millis() as u64);
        self.change_calls(id, version, |record| record.calls_failed(retry))
            .await?;
        tracing::debug!(game_id = %id, seat, reason = %last_failure, "webhook turn left to the clock");
        Ok(false)
    }

    /// One call within `budget` and, if it answered a move, its play.
    async fn call_once(
        &self,
        call: &Call<'_>,
        wire: &Arc<dyn CallWire>,
        budget: Duration,
    ) -> Result<Called, Error> {
        let body = serde_json::to_vec(&MoveCall {
            r#type: "move",
            call_id: &call.call_id,
            game_id: call.id.to_string(),
            seat: call.seat,
            deadline_ms: now_ms() + budget.as_millis() as u64,
            view: call.view,
        })
        .map_err(|e| Error::Internal(format!("a call does not serialize: {e}")))?;
        let answer = match self
            .games
            .ctx
            .webhooks
            .client
            .call(
                call.player,
                &call.hook.url,
                call.hook.secret.as_bytes(),
                &call.call_id,
                body,
                budget,
            )
            .await
        {
            Ok(answer) => answer,
            Err(failure) => return Ok(Called::Failed(failure.kind(), failure.to_string())),
        };
        let request = match wire.read_move(&answer.body) {
            Ok(request) => request,
            Err(why) => {
                return Ok(Called::Failed(
                    "unreadable",
                    format!("not a move body: {why}"),
                ));
            }
        };
        Ok(
            match self
                .play_called(call.id, call.seat, call.version, request)
                .await
            {
                Ok(record) => Called::Played(Box::new(record), answer.took),
                Err(Error::VersionConflict { .. } | Error::Finished | Error::SeatAbandoned) => {
                    Called::Moot
                }
                Err(e @ (Error::IllegalMove { .. } | Error::NotYourTurn(_))) => {
                    Called::Failed("illegal", format!("the answer was refused: {e}"))
                }
                // The store's trouble is not the bot's: not counted against it.
                Err(e) => return Err(e),
            },
        )
    }

    /// Stores `change` to game `id`'s webhook seats, unless the game moved on from
    /// `version` (then what it said is out of date, and nothing is stored).
    async fn change_calls(
        &self,
        id: GameId,
        version: u64,
        change: impl Fn(&mut Record),
    ) -> Result<(), Error> {
        let updated = self
            .games
            .update(id, None, |at, _, record| {
                if at != version {
                    return Ok(Decision::Leave(()));
                }
                change(record);
                Ok(Decision::Store(Change::quiet(())))
            })
            .await?;
        if let Written::Unchanged { .. } = updated {
            tracing::debug!(game_id = %id, "the game moved on before its webhook seats changed");
        }
        Ok(())
    }

    /// Plays `request` for seat `seat` of game `id`, as its webhook answered it at
    /// `version` (the view it was sent): through the same checks as a seat's own move, and
    /// only at that version, so an answer that comes twice moves once. Returns the record
    /// after it (bots that follow moved in the same write).
    pub(super) async fn play_called(
        &self,
        id: GameId,
        seat: u8,
        version: u64,
        request: MoveRequest,
    ) -> Result<Record, Error> {
        let request = MoveRequest {
            expected_version: Some(request.expected_version.unwrap_or(version)),
            ..request
        };
        let updated = self
            .games
            .update::<_, Infallible>(id, None, |version, _, record| {
                seat_moves(version, record, seat, request, BotPlace::Background)
            })
            .await?;
        match updated {
            Written::Saved { record, .. } => Ok(record),
            Written::Repeated { record, .. } => Ok(record),
        }
    }
}
