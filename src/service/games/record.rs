//! A game as the store keeps it: the lobby's facts around the engine's game, and its one
//! byte format.

use serde::{Deserialize, Serialize};

use crate::bots::Level;
use crate::domain::{GameId, MatchId, Seat, TournamentId};
use crate::engine::{Game, Preset};

use super::Error;
use super::called::Called;
use super::clock::{ClockSettings, GameClock};
use super::seating::Seating;
use crate::service::codec::{self, Encoder};

/// The record's format byte, then postcard: the record, then its twins, then its
/// tournament, then its webhook seats (each appended apart, so formats 9, 8 and 7 read
/// with the same struct and games in play survive the upgrade). The engine's game is
/// embedded directly (not as bytes of its own) so a move costs one (de)serialisation
/// pass. Bump it when `Record` or the engine's `Game` changes shape.
const FORMAT: u8 = 10;
/// The format before: the same without webhook seats.
const FORMAT_V9: u8 = 9;
/// The format before: the same without a tournament.
const FORMAT_V8: u8 = 8;
/// The format before that: without twins either.
const FORMAT_V7: u8 = 7;

/// Where a game stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Waiting,
    Playing,
    Finished,
}

/// Why a game made rated moves no rating.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Aborted {
    /// It ended before every side made a move of its own (lichess aborts such games too):
    /// a game resigned, timed out or abandoned at once would let two accounts farm ratings.
    NoMove,
}

/// A game as stored. Its fields are the games aggregate's to write (another aggregate's
/// part goes in through its admission): read outside through the methods below.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Record {
    pub(super) created_ms: u64,
    pub(super) preset: Preset,
    /// Made with a seed or a fixed deal: its creator may know every deal.
    pub(super) prearranged: bool,
    /// Made by a rated challenge or seek: its result is to move its players' ratings.
    pub(super) rated: bool,
    /// The match (duplicate arena) it is a game of, by its id: its end moves the match on.
    pub(super) series: Option<MatchId>,
    /// Who sits where (stored in its place: the same bytes as its fields were inline).
    seating: Seating,
    pub(super) clock: Option<GameClock>,
    pub(super) game: Game,
    /// In a duplicate match, the other games of its deal (the same hands): while one of
    /// them is in play, this one is sealed ([`super::Games::unsealed`]). Stored after the
    /// rest ([`FORMAT`]).
    #[serde(skip)]
    pub(super) twins: Vec<GameId>,
    /// The tournament it is a game of, by its id: its end moves the tournament on.
    /// Stored after the twins ([`FORMAT`]).
    #[serde(skip)]
    pub(super) tournament: Option<TournamentId>,
    /// Its webhook seats, and where the turn's calls stand. Stored after the tournament
    /// ([`FORMAT`]).
    #[serde(skip)]
    pub(super) called: Called,
}

impl Record {
    /// When it was made (epoch ms).
    pub fn created_ms(&self) -> u64 {
        self.created_ms
    }

    pub fn preset(&self) -> Preset {
        self.preset
    }

    /// Made with a seed or a fixed deal: its creator may know every deal.
    pub fn prearranged(&self) -> bool {
        self.prearranged
    }

    /// Its result is to move its players' ratings.
    pub fn rated(&self) -> bool {
        self.rated
    }

    /// The match it is a game of.
    pub fn series(&self) -> Option<MatchId> {
        self.series
    }

    /// The tournament it is a game of.
    pub fn tournament(&self) -> Option<TournamentId> {
        self.tournament
    }

    /// The other games of its deal, in a duplicate match or tournament.
    pub fn twins(&self) -> &[GameId] {
        &self.twins
    }

    /// Who sits where.
    pub fn seating(&self) -> &Seating {
        &self.seating
    }

    pub(super) fn seating_mut(&mut self) -> &mut Seating {
        &mut self.seating
    }

    pub fn clock(&self) -> Option<&GameClock> {
        self.clock.as_ref()
    }

    pub fn game(&self) -> &Game {
        &self.game
    }

    /// The same game as if made at `created_ms`: a test's second game of one record.
    #[cfg(test)]
    pub(crate) fn made_at(&mut self, created_ms: u64) {
        self.created_ms = created_ms;
    }

    /// A new game's record: every seat free but the bots'.
    pub fn new(
        created_ms: u64,
        preset: Preset,
        prearranged: bool,
        clock: Option<ClockSettings>,
        game: Game,
    ) -> Record {
        let seats = game.seats() as usize;
        Record {
            created_ms,
            preset,
            prearranged,
            rated: false,
            series: None,
            seating: Seating::free(seats),
            clock: clock.map(|c| GameClock::new(c, game.seats())),
            game,
            twins: Vec::new(),
            tournament: None,
            called: Called::default(),
        }
    }

    /// The same table around another state of its game (a replay).
    pub fn with_game(&self, game: Game) -> Record {
        Record {
            created_ms: self.created_ms,
            preset: self.preset,
            prearranged: self.prearranged,
            rated: self.rated,
            series: self.series,
            seating: self.seating.clone(),
            clock: self.clock.clone(),
            game,
            twins: self.twins.clone(),
            tournament: self.tournament,
            called: self.called.clone(),
        }
    }

    pub fn status(&self) -> Status {
        let seats = self.seating.occupants().len() as u8;
        if (0..seats).any(|s| !self.seating.is_taken(Seat::new(s))) {
            Status::Waiting
        } else if self.game.is_over() {
            Status::Finished
        } else {
            Status::Playing
        }
    }

    /// Why this game, made rated, moves no rating: it finished before every side moved.
    /// `None` for a game not made rated, one in play, or one rated.
    pub fn aborted(&self) -> Option<Aborted> {
        if !self.rated || self.status() != Status::Finished {
            return None;
        }
        // A record that does not replay is refused as it is read; none gets here.
        match self.game.sides_moved() {
            Ok(moved) if moved.contains(&false) => Some(Aborted::NoMove),
            _ => None,
        }
    }

    /// A rated game's end: its ratings are to move, once.
    pub fn rated_end(&self) -> bool {
        self.rated && self.status() == Status::Finished && self.aborted().is_none()
    }

    /// Per seat, the bot that plays it: its own, or for a seat abandoned by its player
    /// the clock's `timeout_bot` (greedy without a clock). `None` for a human.
    pub fn bots(&self) -> Vec<Option<Level>> {
        let stand_in = self
            .clock
            .as_ref()
            .map_or(Level::Greedy, |c| c.settings.timeout_bot);
        self.seating
            .occupants()
            .iter()
            .enumerate()
            .map(|(i, s)| s.bot.or(self.game.abandoned(i as u8).then_some(stand_in)))
            .collect()
    }

    /// The human seat to move in a game in play: the seat whose clock runs.
    pub fn human_to_move(&self) -> Option<u8> {
        if self.status() != Status::Playing {
            return None;
        }
        let turn = self.game.turn()?;
        let bot = self.seating.occupants()[turn as usize].bot;
        (bot.is_none() && !self.game.abandoned(turn)).then_some(turn)
    }

    /// A bot may move now (the game is in play and a bot seat is to move, or may take
    /// points): the bots owe the table moves, played in a request's budget or after it.
    pub fn bots_to_move(&self) -> bool {
        self.status() == Status::Playing
            && crate::bots::turns::next_bot(&self.game, &self.bots()).is_some()
    }

    /// No human plays this game any more: every seat is a bot's, or abandoned to one.
    pub fn bots_alone(&self) -> bool {
        let seats = self.seating.occupants();
        (0..seats.len()).all(|s| seats[s].bot.is_some() || self.game.abandoned(s as u8))
    }

    /// When the sweep must next act on this game (epoch ms): `now` while bots are to move
    /// (they play on in the background, on whichever process sweeps first), else when the
    /// running clock runs out; `None` when nothing will come due by itself. A table of bots
    /// alone takes its place in the store's queue instead, behind the tables that have
    /// moved less and apart from every clock.
    pub fn due(&self, now: u64) -> Option<u64> {
        if self.bots_to_move() {
            return Some(if self.bots_alone() {
                crate::store::queue_place(self.game.move_count() as u64)
            } else {
                now
            });
        }
        let deadline = self.clock.as_ref().and_then(|c| c.deadline());
        let call = self.called_to_move().and_then(|_| self.call_due(now));
        match (deadline, call) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The seat to move, if the server calls its player's webhook.
    pub fn called_to_move(&self) -> Option<u8> {
        self.human_to_move()
            .filter(|&seat| self.called.is_hooked(seat))
    }

    /// The seat to move, if its webhook is to be called now (at `now`).
    pub fn call_owed(&self, now: u64) -> Option<u8> {
        self.called_to_move()
            .filter(|_| self.call_due(now).is_some_and(|due| due <= now))
    }

    /// When the seat to move is next to be called (see [`Called::due`]).
    pub(super) fn call_due(&self, now: u64) -> Option<u64> {
        self.called.due(self.game.move_count() as u32, now)
    }

    /// Its webhook seats (whose players' webhooks the server calls), and where the turn's
    /// calls stand.
    pub(super) fn called(&self) -> &Called {
        &self.called
    }

    pub(super) fn called_mut(&mut self) -> &mut Called {
        &mut self.called
    }

    /// This turn's calls failed: called again at `retry`, or never (its clock decides).
    pub(super) fn calls_failed(&mut self, retry: Option<u64>) {
        self.called.failed(self.game.move_count() as u32, retry);
    }

    pub fn encode(&self) -> Vec<u8> {
        Encoder::new(FORMAT, self)
            .then(&self.twins)
            .then(&self.tournament)
            .then(&self.called)
            .finish()
    }

    /// A stored record, refused unless it is whole and its game keeps every invariant: a
    /// damaged record must never reach the engine.
    pub fn decode(bytes: &[u8]) -> Result<Record, Error> {
        let record: Record = match codec::open("game", bytes)? {
            (FORMAT, mut body) => {
                let mut record: Record = body.next()?;
                record.twins = body.next()?;
                record.tournament = body.next()?;
                record.called = body.last()?;
                record
            }
            (FORMAT_V9, mut body) => {
                let mut record: Record = body.next()?;
                record.twins = body.next()?;
                record.tournament = body.last()?;
                record
            }
            (FORMAT_V8, mut body) => {
                let mut record: Record = body.next()?;
                record.twins = body.last()?;
                record
            }
            (FORMAT_V7, body) => body.last()?,
            (other, body) => return Err(body.unknown(other)),
        };
        let seats = record.game.seats() as usize;
        if record.seating.counts() != [seats; 3] {
            return Err(Error::Internal(
                "stored game unreadable: its seats do not match its game".into(),
            ));
        }
        record
            .game
            .check_invariants()
            .map_err(|e| Error::Internal(format!("stored game invalid: {e}")))?;
        Ok(record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Seed;
    use crate::service::games::seating::TokenHash;

    fn record() -> Record {
        let game = Game::new(Preset::Draw.rules(), 2, Seed::from_text("r1"), None).unwrap();
        let mut record = Record::new(7, Preset::Draw, false, None, game);
        record.seating.seat_bot(1, Level::Greedy, 2).unwrap();
        record
    }

    #[test]
    fn a_table_of_bots_alone_waits_in_the_queue_behind_the_tables_that_moved_less() {
        let mut table = record();
        table.seating.seat_bot(0, Level::Greedy, 2).unwrap();
        assert!(table.bots_alone() && table.bots_to_move());
        let now = 1_800_000_000_000;
        assert_eq!(
            table.due(now),
            Some(0),
            "a table just made is first, whenever made"
        );
        let mut runs = 3;
        let mut keep_going = || {
            runs -= 1;
            runs > 0
        };
        let played = super::super::bot_work::bots_play(
            &mut table,
            &mut Vec::new(),
            &mut keep_going,
            crate::bots::Thinking::work(1),
        );
        assert!(!played.is_empty());
        let moved = table.game.move_count() as u64;
        assert_eq!(table.due(now), Some(moved));
        assert_eq!(
            table.due(now + 60_000),
            Some(moved),
            "time does not move it"
        );
    }

    #[test]
    fn a_record_reads_back_and_its_tokens_match_only_their_seat() {
        let mut record = record();
        assert_eq!(record.status(), Status::Waiting);
        assert_eq!(record.seating.free_seats(), vec![0]);
        record.seating.seat_player(Seat::new(0), "ann", "token-a");
        assert_eq!(record.status(), Status::Playing);
        let again = Record::decode(&record.encode()).unwrap();
        assert_eq!(again.game, record.game);
        assert_eq!(again.seating.occupants(), record.seating.occupants());
        assert_eq!(again.seating.seat_of(&TokenHash::of("token-a")), Some(0));
        assert_eq!(again.seating.seat_of(&TokenHash::of("token-b")), None);
        assert!(again.seating.free_seats().is_empty());
        assert_eq!(again.seating.seat_of_player("p1"), None);
    }

    #[test]
    fn the_seating_is_stored_where_its_fields_stood_so_format_10_is_unchanged() {
        let mut record = record();
        record
            .seating
            .seat_bound(Seat::new(0), "ann", "token-a", "p1");
        let r = &record;
        // The fields in their order as `Record` held them before `Seating` (commit
        // 45671cc): postcard writes a struct as its fields, a tuple alike.
        let (seats, tokens, players) = (
            r.seating.occupants().to_vec(),
            vec![Some(TokenHash::of("token-a")), None],
            vec![Some("p1".to_owned()), None::<String>],
        );
        let flat = (
            r.created_ms,
            r.preset,
            r.prearranged,
            r.rated,
            r.series,
            seats,
        );
        let flat = (flat, tokens, players, &r.clock, &r.game);
        assert_eq!(
            postcard::to_allocvec(&flat).unwrap(),
            postcard::to_allocvec(r).unwrap()
        );
    }

    #[test]
    fn a_bound_seat_reads_back_with_its_player_and_its_token() {
        let mut record = record();
        record
            .seating
            .seat_bound(Seat::new(0), "ann", "token-a", "p1");
        let again = Record::decode(&record.encode()).unwrap();
        assert_eq!(again.seating.seat_of_player("p1"), Some(0));
        assert_eq!(again.seating.seat_of_player("p2"), None);
        assert_eq!(again.seating.seat_of(&TokenHash::of("token-a")), Some(0));
        assert_eq!(again.seating.occupants()[0].name.as_deref(), Some("ann"));
    }

    #[test]
    fn a_game_stored_in_format_7_reads_without_twins_and_twins_read_back() {
        let record = record();
        let v7 = postcard::to_extend(&record, vec![FORMAT_V7]).unwrap();
        let read = Record::decode(&v7).unwrap();
        assert_eq!(read.game, record.game);
        assert!(read.twins.is_empty());
        let mut twinned = record;
        let twin = GameId::random();
        twinned.twins = vec![twin];
        let again = Record::decode(&twinned.encode()).unwrap();
        assert_eq!(again.twins, [twin]);
        assert_eq!(again.game, twinned.game);
    }

    #[test]
    fn a_game_stored_in_format_8_reads_without_a_tournament_and_one_reads_back() {
        let mut record = record();
        let twin = GameId::random();
        record.twins = vec![twin];
        let v8 = postcard::to_extend(&record, vec![FORMAT_V8]).unwrap();
        // As a format 8 record held them: text.
        let v8 = postcard::to_extend(&vec![twin.to_string()], v8).unwrap();
        let read = Record::decode(&v8).unwrap();
        assert_eq!(
            (read.twins.as_slice(), read.tournament),
            (&[twin][..], None)
        );
        let tournament = TournamentId::random();
        record.tournament = Some(tournament);
        let again = Record::decode(&record.encode()).unwrap();
        assert_eq!(again.tournament, Some(tournament));
        assert_eq!(again.twins, [twin]);
    }

    #[test]
    fn a_record_of_another_format_or_with_seats_its_game_lacks_is_refused() {
        let mut bytes = record().encode();
        bytes[0] = FORMAT + 1;
        assert!(Record::decode(&bytes).is_err());
        let mut odd = record();
        odd.seating = Seating::free(3);
        assert!(Record::decode(&odd.encode()).is_err());
        assert!(Record::decode(&[]).is_err());
    }
}
