//! Challenges: a player invites players or built-in levels to a game. Each human opponent
//! accepts or declines; the challenger may cancel; an open challenge expires after
//! `CHALLENGE_TTL_SECS`. When every opponent has accepted (levels accept at once), the game
//! is created with every seat bound, and starts.
//!
//! All of it is in the store, so any process can answer what another received. Every
//! change is a compare-and-set on the challenge's version, and the one that makes it
//! accepted also names its game's id: a challenge becomes exactly one game, created by the
//! request that completed it, or (if that process died in between) by a sweep.

use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::address::AddressKey;
use crate::domain::MatchId;
use crate::domain::{Caller, ChallengeId, GameId, Who};
use crate::engine::RulesPatch;
use crate::service::games::Games;
use crate::service::games::admit::{Admission, NewGame};
use crate::service::idempotency::{self, Before, Create, RequestKey};
use crate::service::players::{PlayerRecord, Players};
use crate::service::shared::{Port, Shared, now_ms};
use crate::store::SaveOutcome;
use crate::store::challenges::{ChallengeStore, Parties};

use super::challenge::{Challenge, NewChallenge};
use super::invitation::{Answer, ChallengeStatus, Invitation, Opponent, Party, Terms};
use super::{Error, MatchmakingReactions, Notice};

/// Open challenges a player may have made at once.
pub const MAX_OPEN_CHALLENGES: usize = 20;
/// How long after its acceptance a sweep makes sure a challenge's game exists (the
/// accepting request creates it at once; this is for a process that died in between).
const RECOVER_AFTER: Duration = Duration::from_secs(10);
/// Due challenges a sweep acts on at most.
const SWEEP_BATCH: usize = 64;
/// Compare-and-set attempts before a change gives up (each loss means another answer
/// came in meanwhile; a handful of opponents cannot race for long).
pub(super) const ATTEMPTS: usize = 8;

/// The challenges: made, answered, expired, each becoming at most one game.
pub struct Challenges {
    pub(super) ctx: Arc<Shared>,
    pub(super) players: Arc<Players>,
    pub(super) games: Arc<Games>,
    reactions: Port<dyn MatchmakingReactions>,
}

impl Challenges {
    pub(in crate::service) fn new(
        ctx: Arc<Shared>,
        players: Arc<Players>,
        games: Arc<Games>,
    ) -> Arc<Challenges> {
        Arc::new(Challenges {
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

    /// Tends match `id`, unless the services are gone (stopping).
    async fn tend_match(&self, id: MatchId) -> Result<(), Error> {
        match self.reactions.get() {
            Some(reactions) => reactions.tend_match(id).await,
            None => Ok(()),
        }
    }

    /// Tells `players` of `notice` (best effort, as all news).
    pub(super) async fn tell(&self, players: &[String], notice: Notice<'_>) {
        if let Some(reactions) = self.reactions.get() {
            reactions.tell(players, notice).await;
        }
    }

    /// Makes a challenge for the key's player. One of built-in levels only is accepted at
    /// once: its game is created in this request (counted against `from`'s games).
    /// With `request` (its `Idempotency-Key`) a retry answers the same challenge, made once.
    pub async fn challenge(
        &self,
        caller: &Caller,
        new: NewChallenge,
        from: Option<AddressKey>,
        request: Option<&RequestKey>,
    ) -> Result<Challenge, Error> {
        let (_, me) = self.players.authenticate(caller).await?;
        let (caller, id) = (me.id().clone(), ChallengeId::random());
        let make = self.make(me, id, new, from);
        idempotency::once(
            &self.ctx.store,
            request,
            Create::Challenge,
            Some(&caller),
            &id,
            None,
            make,
            |before: Before| async move {
                before.found(self.load_listed(&before.id).await.map(|(_, c)| c))
            },
        )
        .await
    }

    /// Makes challenge `id` for player `me`. One of built-in levels only is accepted at
    /// once: its game is made first, counted against `from`.
    async fn make(
        &self,
        me: PlayerRecord,
        id: ChallengeId,
        new: NewChallenge,
        from: Option<AddressKey>,
    ) -> Result<Challenge, Error> {
        let field = "opponents";
        let others = usize::from(new.seats.saturating_sub(1));
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
        let now = now_ms();
        let expires_ms = now + self.ctx.lifetimes.challenge.as_millis() as u64;
        let mut invitation = Invitation::new(challenger, terms, now, expires_ms);
        // The seats first: a count out of range is told as such, not as opponents missing.
        self.check_game(&invitation.new_game(), new.rated)?;
        if new.opponents.len() != others {
            return Err(Error::BadRequest(format!(
                "opponents: one per seat after the challenger's: {others} for {} seats",
                new.seats
            )));
        }
        for who in &new.opponents {
            let opponent = self.opponent(field, who, &me).await?;
            if let Some(party) = opponent.player()
                && invitation.opponent_ids().contains(&party.id)
            {
                return Err(Error::BadRequest(format!(
                    "{field}: {who:?} is named twice; a player sits once"
                )));
            }
            invitation.add_opponent(opponent);
        }
        // A challenge accepted at once (levels only) has its game made by this request.
        if invitation.all_accepted() {
            invitation.set_address(from);
            invitation.accept_at_once();
        }
        let mut challenge = Challenge::new(id, invitation);
        let opponents = challenge.invitation().opponent_ids();
        let parties = Parties {
            challenger: me.id(),
            opponents: &opponents,
        };
        if challenge.invitation().all_accepted() {
            // Levels only: the game first (it may be refused by the address's cap), then
            // the challenge that names it.
            challenge.set_game(Some(GameId::random()));
            self.start(&challenge).await?;
            self.ctx
                .store
                .challenges()
                .create_challenge(&id, challenge.encode(), now, parties, None)
                .await?;
        } else {
            self.count_open(challenge.counted()).await?;
            let created = self
                .ctx
                .store
                .challenges()
                .create_challenge(
                    &id,
                    challenge.encode(),
                    now,
                    parties.clone(),
                    Some(expires_ms),
                )
                .await;
            if let Err(e) = created {
                self.uncount_open(challenge.counted()).await;
                return Err(e.into());
            }
            self.tell(&opponents, Notice::Challenged(&challenge)).await;
        }
        self.ctx.metrics.challenge("made");
        let status = challenge.invitation().saved_status().as_str();
        tracing::info!(challenge_id = %id, challenger = %me.id(), status, game_id = ?challenge.game_id(), "challenge made");
        Ok(challenge)
    }

    /// A challenge, for one of its players.
    pub async fn challenge_of(&self, caller: &Caller, id: ChallengeId) -> Result<Challenge, Error> {
        let (_, me) = self.players.authenticate(caller).await?;
        let (_, challenge) = self.load_challenge(id).await?;
        if !challenge.invitation().has_player(me.id().as_str()) {
            return Err(Error::Forbidden(
                "this challenge is between other players".into(),
            ));
        }
        Ok(challenge)
    }

    /// An opponent accepts; the last acceptance creates the game, counted against `from`'s
    /// games in play. Should the game be refused (that cap, or a full store), the answer
    /// is that refusal and the challenge is open again, this acceptance undone: no game is
    /// promised that is not made.
    pub async fn accept(
        &self,
        caller: &Caller,
        id: ChallengeId,
        from: Option<AddressKey>,
    ) -> Result<Challenge, Error> {
        self.answer(caller, id, Answer::Accept, from).await
    }

    /// An opponent declines: the challenge is closed for everyone.
    pub async fn decline(&self, caller: &Caller, id: ChallengeId) -> Result<Challenge, Error> {
        self.answer(caller, id, Answer::Decline, None).await
    }

    /// The challenger takes its challenge back.
    pub async fn cancel_challenge(
        &self,
        caller: &Caller,
        id: ChallengeId,
    ) -> Result<Challenge, Error> {
        self.answer(caller, id, Answer::Cancel, None).await
    }

    async fn answer(
        &self,
        caller: &Caller,
        id: ChallengeId,
        answer: Answer,
        from: Option<AddressKey>,
    ) -> Result<Challenge, Error> {
        let (_, me) = self.players.authenticate(caller).await?;
        for _ in 0..ATTEMPTS {
            let (version, mut challenge) = self.load_challenge(id).await?;
            let invitation = challenge.invitation_mut();
            if !invitation.answer(answer, me.id(), now_ms())? {
                return Ok(challenge);
            }
            if invitation.saved_status() == ChallengeStatus::Accepted {
                invitation.set_address(from);
                challenge.set_game(Some(GameId::random()));
            }
            match self
                .ctx
                .store
                .challenges()
                .save_challenge(&id, version, challenge.encode())
                .await?
            {
                SaveOutcome::Saved { .. } => {}
                SaveOutcome::Conflict { .. } => continue,
                SaveOutcome::Missing => return Err(Error::ChallengeNotFound),
            }
            let status = challenge.invitation().saved_status();
            tracing::info!(challenge_id = %id, player_id = %me.id(), ?answer, status = status.as_str(), "challenge answered");
            if let Err(refused) = self.closed(&challenge, me.id()).await {
                self.reopen(&challenge, me.id()).await;
                return Err(refused);
            }
            // Counted once it stands: an acceptance whose game was refused is undone.
            if status != ChallengeStatus::Open {
                self.ctx.metrics.challenge(status.as_str());
            }
            return Ok(challenge);
        }
        Err(Error::Internal(
            "a challenge kept changing under an answer".into(),
        ))
    }

    /// After a change of `challenge` made by player `by`: its game created if it was
    /// accepted, the players told if it closed otherwise, and the index of due challenges
    /// set to what is left to do. The error is the refusal of an accepted challenge's
    /// game ([`Error::refuses_a_game`]): nothing was made, and the caller reopens it.
    async fn closed(&self, challenge: &Challenge, by: &str) -> Result<(), Error> {
        let status = challenge.invitation().saved_status();
        self.closed_in_store(challenge.counted(), status).await;
        let id = challenge.id();
        match status {
            ChallengeStatus::Open => return Ok(()),
            ChallengeStatus::Accepted => {
                // Should this process stop before the game is created, a sweep creates it.
                let recover = Some(now_ms() + RECOVER_AFTER.as_millis() as u64);
                self.set_challenge_due(id, recover).await;
                match self.start(challenge).await {
                    Ok(()) => self.set_challenge_due(id, None).await,
                    Err(e) if e.refuses_a_game() => return Err(e),
                    Err(e) => {
                        tracing::warn!(challenge_id = %id, error = %e, "an accepted challenge's game was not created; a sweep creates it");
                    }
                }
                return Ok(());
            }
            ChallengeStatus::Declined | ChallengeStatus::Canceled | ChallengeStatus::Expired => {}
        }
        self.set_challenge_due(id, None).await;
        let others: Vec<String> = challenge
            .invitation()
            .player_ids()
            .into_iter()
            .filter(|player| player != by)
            .collect();
        self.tell(&others, Notice::Closed(challenge)).await;
        Ok(())
    }

    /// Creates accepted `challenge`'s game, every seat bound, unless it exists already,
    /// counted against its address; then tells its players it started.
    async fn start(&self, challenge: &Challenge) -> Result<(), Error> {
        let game_id = challenge
            .game_id()
            .ok_or_else(|| Error::Internal("an accepted challenge names no game".into()))?;
        let invitation = challenge.invitation();
        let record = self.games.new_record(&invitation.new_game())?;
        let players = std::iter::once((0u8, invitation.challenger()))
            .chain(
                invitation
                    .opponents()
                    .iter()
                    .enumerate()
                    .filter_map(|(i, o)| Some((i as u8 + 1, o.player()?))),
            )
            .map(|(seat, party)| (seat, party.id.as_str(), party.name.as_str()))
            .collect();
        let admission = Admission {
            id: game_id,
            record,
            rated: invitation.rated(),
            parent: None,
            twins: Vec::new(),
            players,
            from: invitation.address(),
        };
        let Some(record) = self.games.admit(admission).await? else {
            return Ok(());
        };
        tracing::info!(game_id = %game_id, challenge_id = %challenge.id(), preset = invitation.preset().name(), rated = record.rated(), "game created for a challenge");
        Ok(())
    }

    /// One pass over the due challenges (run by every process's sweep): open ones past
    /// their expiry are closed and their players told, and accepted ones get their game
    /// if the process that accepted them died before creating it. Returns how many it
    /// acted on.
    pub async fn sweep_challenges(&self) -> Result<usize, Error> {
        let now = now_ms();
        let due = self
            .ctx
            .store
            .challenges()
            .challenges_due(now, SWEEP_BATCH)
            .await?;
        let mut acted = 0;
        for id in due {
            // Only ids this server made are indexed.
            let Some(id) = ChallengeId::stored(&id) else {
                continue;
            };
            match self.tend_challenge(id, now).await {
                Ok(true) => acted += 1,
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(challenge_id = %id, error = %e, "a due challenge could not be acted on; retried on the next sweep");
                }
            }
        }
        Ok(acted)
    }

    async fn tend_challenge(&self, id: ChallengeId, now: u64) -> Result<bool, Error> {
        let Some(stored) = self.ctx.store.challenges().load_challenge(&id).await? else {
            self.set_challenge_due(id, None).await;
            return Ok(false);
        };
        // A match's entry in the due index shared with it: the matches tend it.
        let Some(mut challenge) = Challenge::read(&stored.bytes)? else {
            self.tend_match(id.as_match()).await?;
            return Ok(true);
        };
        let version = stored.version;
        if challenge.invitation_mut().expire(now) {
            return match self
                .ctx
                .store
                .challenges()
                .save_challenge(&id, version, challenge.encode())
                .await?
            {
                // The winner of the compare-and-set tells, exactly once.
                SaveOutcome::Saved { .. } => {
                    tracing::info!(challenge_id = %id, "challenge expired");
                    self.ctx.metrics.challenge("expired");
                    self.closed(&challenge, "").await?;
                    Ok(true)
                }
                // Answered meanwhile: the next sweep sees what it became.
                SaveOutcome::Conflict { .. } => Ok(false),
                SaveOutcome::Missing => Ok(false),
            };
        }
        match challenge.invitation().saved_status() {
            ChallengeStatus::Open => {
                let expires_ms = challenge.invitation().expires_ms();
                self.set_challenge_due(id, Some(expires_ms)).await;
                Ok(false)
            }
            ChallengeStatus::Accepted => {
                let made = match challenge.game_id() {
                    Some(game_id) => self.games.exists(game_id).await?,
                    None => false,
                };
                if !made {
                    tracing::warn!(challenge_id = %id, game_id = ?challenge.game_id(), "an accepted challenge had no game: creating it");
                    match self.start(&challenge).await {
                        Ok(()) => {}
                        // Refused now: open again rather than tried for ever.
                        Err(e) if e.refuses_a_game() => {
                            let by = challenge
                                .invitation()
                                .opponent_ids()
                                .pop()
                                .unwrap_or_default();
                            self.reopen(&challenge, &by).await;
                            return Ok(true);
                        }
                        Err(e) => return Err(e),
                    }
                }
                self.set_challenge_due(id, None).await;
                Ok(true)
            }
            _ => {
                self.set_challenge_due(id, None).await;
                Ok(false)
            }
        }
    }

    /// Challenge `id` as stored, with its version. A match's record under its key is no
    /// challenge: not found here (the challenge routes ask the matches next).
    pub(crate) async fn load_challenge(&self, id: ChallengeId) -> Result<(u64, Challenge), Error> {
        let stored = self
            .ctx
            .store
            .challenges()
            .load_challenge(&id)
            .await?
            .ok_or(Error::ChallengeNotFound)?;
        let challenge = Challenge::read(&stored.bytes)?.ok_or(Error::ChallengeNotFound)?;
        Ok((stored.version, challenge))
    }

    /// Checks the game an invitation asks for as a game is checked (rules, seats, clock),
    /// and that a rated one has two sides and the preset's rules as they stand.
    pub(in crate::service) fn check_game(&self, game: &NewGame, rated: bool) -> Result<(), Error> {
        self.games.new_record(game)?;
        let rules = game.preset.rules().with(&game.overrides);
        if rated && (rules.sides(game.seats) != 2 || game.overrides != RulesPatch::default()) {
            return Err(Error::InvalidRules(
                "rated: a rated game has two sides (2 seats, or 4 in teams) and the \
                 preset's rules as they stand (no rules overrides)"
                    .into(),
            ));
        }
        Ok(())
    }

    /// Challenge `text` names, as a create's claim holds it: only ids this server made
    /// are held, so any other names none.
    async fn load_listed(&self, text: &str) -> Result<(u64, Challenge), Error> {
        let id = ChallengeId::stored(text).ok_or(Error::ChallengeNotFound)?;
        self.load_challenge(id).await
    }

    pub(in crate::service) async fn set_challenge_due(&self, id: ChallengeId, due: Option<u64>) {
        if let Err(e) = self
            .ctx
            .store
            .challenges()
            .index_challenge_due(&id, due)
            .await
        {
            tracing::warn!(challenge_id = %id, error = %e, "could not index a challenge's next step");
        }
    }

    /// An opponent named `who` (a level, or a player's name or id) for challenger `me`.
    pub(in crate::service) async fn opponent(
        &self,
        field: &str,
        who: &Who,
        me: &PlayerRecord,
    ) -> Result<Opponent, Error> {
        if let Some(level) = who.level() {
            return Ok(Opponent::Level(level));
        }
        let player = match self.players.id_of(who).await? {
            Some(id) => self.players.player_record(&id).await?.map(|(_, p)| p),
            None => None,
        };
        let player =
            player.ok_or_else(|| Error::OpponentNotFound(format!("{field}: no player {who:?}")))?;
        if player.id() == me.id() {
            return Err(Error::BadRequest(format!(
                "{field}: a player cannot challenge itself"
            )));
        }
        Ok(Opponent::Player {
            party: Party {
                id: player.id().to_string(),
                name: player.name().to_owned(),
            },
            accepted: false,
        })
    }
}
