//! A tournament as it is stored and as everyone sees it: its settings, its entrants in
//! entry order, and every pairing and bye so far, each pairing naming its games before
//! they are made. Standings are never stored: they are computed from the pairings'
//! results ([`Tournament::standings`]), so they cannot drift from the games.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::address::AddressKey;
use crate::bots::Level;
use crate::domain::{EntrantId, GameId, PlayerId, TournamentId};
use crate::engine::{Seed, rules::Scoring};
use crate::service::Error;
use crate::service::codec;
use crate::service::matchmaking::invitation::Party;
use crate::tournament::{self, Bye, Entrant, History, Played, Standing, Winner};

pub use super::terms::{Format, Terms};

/// The record's format byte, then postcard. Tournaments last: a later format keeps a
/// reader for the one before until a migration has rewritten every record. Format 2
/// appends [`Extras`] (deals a pairing, and why a round waits) to format 1's record.
const FORMAT: u8 = 2;
/// Format 1: the record alone (one deal a pairing, never waiting).
const FORMAT_1: u8 = 1;

/// The result of a game that expired unfinished, in records of builds that voided such
/// games: it counts for neither side. No game is voided now (a game missing from the store
/// is made again), but a result stored so is still read.
pub const VOID: u8 = u8::MAX;

/// The most deals a pairing may play.
pub const MAX_DEALS_PER_PAIRING: u16 = 10;

/// Where a tournament stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TournamentStatus {
    Registering,
    Running,
    Finished,
    Canceled,
}

impl TournamentStatus {
    pub const ALL: [TournamentStatus; 4] = [
        TournamentStatus::Registering,
        TournamentStatus::Running,
        TournamentStatus::Finished,
        TournamentStatus::Canceled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TournamentStatus::Registering => "registering",
            TournamentStatus::Running => "running",
            TournamentStatus::Finished => "finished",
            TournamentStatus::Canceled => "canceled",
        }
    }

    /// Over: nothing changes any more.
    pub fn over(self) -> bool {
        matches!(
            self,
            TournamentStatus::Finished | TournamentStatus::Canceled
        )
    }
}

/// Who an entrant is: a player (a person or a bot account), or a built-in level. A level
/// may be entered more than once (a field of bots): each copy after the first is
/// numbered, from 2.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Entry {
    Player { party: Party, bot: bool },
    Level { level: Level, copy: u16 },
}

impl Entry {
    /// Level `level`'s next copy among `entrants`: the first number none holds (one
    /// removed before the start leaves its number free).
    pub(crate) fn next_level(entrants: &[EntrantRecord], level: Level) -> Entry {
        let held = |c: u16| {
            entrants
                .iter()
                .any(|e| e.entry == Entry::Level { level, copy: c })
        };
        let copy = (1..)
            .find(|&c| !held(c))
            .expect("fewer entrants than copies");
        Entry::Level { level, copy }
    }
}

/// One entrant, in entry order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntrantRecord {
    pub(super) entry: Entry,
    /// Withdrawn (by itself, or after too many losses on time): paired no more.
    pub(super) withdrawn: bool,
    /// Games it lost on time.
    pub(super) timeouts: u8,
}

impl EntrantRecord {
    /// Withdrawn (by itself, or after too many losses on time): paired no more.
    pub fn withdrawn(&self) -> bool {
        self.withdrawn
    }

    /// Its id as the API shows it: the player's id, or the level's name (`greedy`; a
    /// later copy's with its number, `greedy-2`).
    pub fn id(&self) -> String {
        match &self.entry {
            Entry::Player { party, .. } => party.id.clone(),
            &Entry::Level { level, copy } => EntrantId::Level { level, copy }.to_string(),
        }
    }

    /// Its name as people see it (`greedy`, `greedy 2`).
    pub fn name(&self) -> String {
        match &self.entry {
            Entry::Player { party, .. } => party.name.clone(),
            Entry::Level { level, copy: 1 } => level.as_str().to_owned(),
            Entry::Level { level, copy } => format!("{} {copy}", level.as_str()),
        }
    }

    /// Plays by program: a bot account or a level.
    pub fn bot(&self) -> bool {
        match &self.entry {
            Entry::Player { bot, .. } => *bot,
            Entry::Level { .. } => true,
        }
    }

    pub fn player_id(&self) -> Option<&str> {
        match &self.entry {
            Entry::Player { party, .. } => Some(&party.id),
            Entry::Level { .. } => None,
        }
    }
}

/// One game of a pairing, named before it is made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairingGame {
    pub(super) game_id: GameId,
    /// The seat of the pairing's `a` (`b` holds the other).
    pub(super) a_seat: u8,
    /// Once over: a's final points, b's, and a's result in tenths (10 a win, 5 a draw,
    /// 0 a loss) or [`VOID`].
    pub(super) result: Option<(i32, i32, u8)>,
    /// When it was named (epoch ms): a game gone long after that expired unfinished.
    pub(super) named_ms: u64,
}

/// Two entrants of one round, and their games.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pairing {
    pub(super) round: u16,
    pub(super) a: Entrant,
    pub(super) b: Entrant,
    pub(super) games: Vec<PairingGame>,
}

impl Pairing {
    pub fn round(&self) -> u16 {
        self.round
    }

    pub fn a(&self) -> Entrant {
        self.a
    }

    pub fn b(&self) -> Entrant {
        self.b
    }

    pub fn games(&self) -> &[PairingGame] {
        &self.games
    }

    /// Every game over.
    pub fn over(&self) -> bool {
        self.games.iter().all(|g| g.result.is_some())
    }

    /// a's points minus b's over its games (the other way round under penalty scoring,
    /// where fewer points are better).
    pub fn margin_a(&self, penalty: bool) -> i32 {
        let margin: i32 = self
            .games
            .iter()
            .filter_map(|g| g.result)
            .filter(|r| r.2 != VOID)
            .map(|(a, b, _)| a - b)
            .sum();
        if penalty { -margin } else { margin }
    }

    /// Its result once every game is over: with more than one game (duplicate), who
    /// scored better over them, then who won more of them (a game lost on time or
    /// resigned may end with even points), else a draw; with one, that game's result.
    pub fn winner(&self, penalty: bool) -> Option<Winner> {
        if !self.over() {
            return None;
        }
        let decided: Vec<u8> = self
            .games
            .iter()
            .filter_map(|g| g.result)
            .map(|r| r.2)
            .filter(|&r| r != VOID)
            .collect();
        // a's results less b's, in tenths: each game's is 10 to b's 0, or 5 to 5.
        let games = decided.iter().map(|&r| 2 * i32::from(r) - 10).sum::<i32>();
        let lead = match decided.as_slice() {
            [_] => games,
            _ => match self.margin_a(penalty) {
                0 => games,
                margin => margin,
            },
        };
        Some(match lead {
            0 => Winner::Draw,
            l if l > 0 => Winner::A,
            _ => Winner::B,
        })
    }
}

/// A round an entrant was not paired in, scored as a win.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ByeRecord {
    pub(super) round: u16,
    pub(super) entrant: Entrant,
}

/// A tournament, as stored. Only the tournaments change it; everyone reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tournament {
    pub(super) id: TournamentId,
    /// What it was made to be: its fields stood here, inline, before it had a type.
    pub(super) terms: Terms,
    pub(super) status: TournamentStatus,
    /// Why it was canceled (or ended early).
    pub(super) reason: Option<String>,
    pub(super) entrants: Vec<EntrantRecord>,
    /// The round in play (or last played); 0 before the start.
    pub(super) round: u16,
    pub(super) pairings: Vec<Pairing>,
    pub(super) byes: Vec<ByeRecord>,
    /// What every deal's seed is made from: a secret, shown once it is over.
    pub(super) seed: [u8; 32],
    /// The address its games count against (its creator's, from its making).
    pub(super) address: Option<AddressKey>,
    pub(super) saved_ms: u64,
    /// Deals each pairing plays (each twice, the seats swapped, when duplicate); format 2.
    #[serde(skip)]
    pub(super) deals_per_pairing: u16,
    /// Why the round in play waits for games not yet made (the admission refused them:
    /// its creator's address at its cap, a full store), and since when; format 2.
    #[serde(skip)]
    pub(super) waiting: Option<Waiting>,
}

impl ByeRecord {
    pub fn round(&self) -> u16 {
        self.round
    }

    pub fn entrant(&self) -> Entrant {
        self.entrant
    }
}

impl PairingGame {
    pub fn game_id(&self) -> GameId {
        self.game_id
    }

    /// The seat of the pairing's `a`.
    pub fn a_seat(&self) -> u8 {
        self.a_seat
    }

    /// Once over: a's final points, b's, and a's result in tenths.
    pub fn result(&self) -> Option<(i32, i32, u8)> {
        self.result
    }
}

impl Waiting {
    pub fn since_ms(&self) -> u64 {
        self.since_ms
    }

    pub fn reason(&self) -> &str {
        &self.reason
    }
}

/// Why a round waits for some of its games to be made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Waiting {
    pub(super) since_ms: u64,
    pub(super) reason: String,
}

/// What format 2 appends to the record.
#[derive(Serialize, Deserialize)]
struct Extras {
    deals_per_pairing: u16,
    waiting: Option<Waiting>,
}

impl Tournament {
    pub fn id(&self) -> TournamentId {
        self.id
    }

    /// What it was made to be.
    pub fn terms(&self) -> &Terms {
        &self.terms
    }

    pub fn status(&self) -> TournamentStatus {
        self.status
    }

    /// Why it was canceled (or ended early).
    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// Its entrants, in entry order.
    pub fn entrants(&self) -> &[EntrantRecord] {
        &self.entrants
    }

    /// The round in play (or last played); 0 before the start.
    pub fn round(&self) -> u16 {
        self.round
    }

    pub fn pairings(&self) -> &[Pairing] {
        &self.pairings
    }

    pub fn byes(&self) -> &[ByeRecord] {
        &self.byes
    }

    /// Deals each pairing plays.
    pub fn deals_per_pairing(&self) -> u16 {
        self.deals_per_pairing
    }

    /// Why the round in play waits for games not yet made, and since when.
    pub fn waiting(&self) -> Option<&Waiting> {
        self.waiting.as_ref()
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        let extras = Extras {
            deals_per_pairing: self.deals_per_pairing,
            waiting: self.waiting.clone(),
        };
        codec::Encoder::new(FORMAT, self).then(&extras).finish()
    }

    pub(crate) fn decode(bytes: &[u8]) -> Result<Tournament, Error> {
        match codec::open("tournament", bytes)? {
            (FORMAT, mut body) => {
                let mut t: Tournament = body.next()?;
                let extras: Extras = body.last()?;
                t.deals_per_pairing = extras.deals_per_pairing.max(1);
                t.waiting = extras.waiting;
                Ok(t)
            }
            (FORMAT_1, body) => {
                let mut t: Tournament = body.last()?;
                t.deals_per_pairing = 1;
                Ok(t)
            }
            (other, body) => Err(body.unknown(other)),
        }
    }

    /// Games a pairing plays: its deals, each twice when duplicate.
    pub fn games_per_pairing(&self) -> usize {
        usize::from(self.deals_per_pairing.max(1)) * if self.terms.duplicate { 2 } else { 1 }
    }

    /// The deal game `game` of a pairing plays (from 0).
    pub fn deal_of(&self, game: usize) -> u32 {
        (if self.terms.duplicate { game / 2 } else { game }) as u32
    }

    pub fn penalty(&self) -> bool {
        self.terms
            .preset
            .rules()
            .with(&self.terms.overrides)
            .scoring
            == Scoring::Penalty
    }

    /// The pairings' results as the pairing crate reads them.
    pub(crate) fn played(&self) -> Vec<Played> {
        let penalty = self.penalty();
        self.pairings
            .iter()
            .map(|p| Played {
                round: p.round,
                a: p.a,
                b: p.b,
                winner: p.winner(penalty),
                margin_a: p.margin_a(penalty),
            })
            .collect()
    }

    /// Who withdrew, and the byes, as the pairing crate reads them.
    fn withdrawn_and_byes(&self) -> (Vec<bool>, Vec<Bye>) {
        let withdrawn = self.entrants.iter().map(|e| e.withdrawn).collect();
        let byes = self
            .byes
            .iter()
            .map(|b| Bye {
                round: b.round,
                entrant: b.entrant,
            })
            .collect();
        (withdrawn, byes)
    }

    /// The standings, computed from the results.
    pub fn standings(&self) -> Vec<Standing> {
        let (played, (withdrawn, byes)) = (self.played(), self.withdrawn_and_byes());
        tournament::standings(&History {
            entrants: self.entrants.len() as u16,
            withdrawn: &withdrawn,
            played: &played,
            byes: &byes,
        })
    }

    /// Round `round`'s pairings by the format, or `None` when none is possible.
    pub(crate) fn pair(&self, round: u16) -> Option<tournament::Round> {
        let (played, (withdrawn, byes)) = (self.played(), self.withdrawn_and_byes());
        let history = History {
            entrants: self.entrants.len() as u16,
            withdrawn: &withdrawn,
            played: &played,
            byes: &byes,
        };
        match self.terms.format {
            Format::Swiss => tournament::swiss(&history, round),
            Format::RoundRobin => Some(tournament::round_robin(&history, round)),
        }
    }

    /// The games in play (named, not over).
    pub fn in_play(&self) -> usize {
        self.pairings
            .iter()
            .flat_map(|p| &p.games)
            .filter(|g| g.result.is_none())
            .count()
    }

    /// Game `game` of pairing `board` of round `round`: an id derived from them, so a
    /// pairing named again (after a crash) names the same games.
    pub(crate) fn game_id(&self, round: u16, board: usize, game: usize) -> GameId {
        let mut hash = Sha256::new();
        hash.update(self.id.as_bytes());
        hash.update(round.to_le_bytes());
        hash.update((board as u32).to_le_bytes());
        hash.update((game as u32).to_le_bytes());
        let bytes: [u8; 16] = hash.finalize()[..16].try_into().expect("16 of 32 bytes");
        GameId::from(uuid::Builder::from_random_bytes(bytes).into_uuid())
    }

    /// The seed of deal `deal` of pairing `board` in round `round` (a duplicate deal's two
    /// games both play it). The first deal's is that of a tournament of one deal a pairing.
    pub(crate) fn seed_of(&self, round: u16, board: usize, deal: u32) -> Seed {
        let mut hash = Sha256::new();
        hash.update(self.seed);
        hash.update(round.to_le_bytes());
        hash.update((board as u32).to_le_bytes());
        if deal > 0 {
            hash.update(deal.to_le_bytes());
        }
        Seed(hash.finalize().into())
    }

    /// The secret the deals were made from, in hex, once it is over with no game in play.
    pub fn revealed_seed(&self) -> Option<String> {
        (self.status.over() && self.in_play() == 0)
            .then(|| self.seed.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// The entrant playing as `player`, if any.
    pub(crate) fn entrant_of(&self, player: &PlayerId) -> Option<Entrant> {
        self.entrants
            .iter()
            .position(|e| e.player_id() == Some(player.as_str()))
            .map(|i| i as Entrant)
    }
}
