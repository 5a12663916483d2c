//! Idempotency keys: what makes two requests the same ([`RequestKey`]), for every request
//! that takes an `Idempotency-Key`; and the claims that make a create (a player, a
//! challenge, a seek, a match) happen once ([`claim`]). A move or a join keeps its receipt
//! in its game (`games::idempotency`); a create has no game yet, so its key is claimed in
//! the store before anything is made, holding the id of what it is about to make, and a
//! retry answers with that thing as it is now.
//!
//! **A player's creation answers its key again to a retry**, as a join its seat's token:
//! the claim holds the key's secret sealed with the idempotency key and the body, which
//! the store never holds (only a hash of the key), so only that very request unseals it.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{Error, codec};
use crate::domain::{GameId, Id};
use crate::service::shared::Stores;
use crate::store::IdempotencyRecord;
use crate::store::claims::ClaimStore;

/// Characters an `Idempotency-Key` of a join has at least: it unlocks the seat's token.
pub const MIN_JOIN_KEY: usize = 16;

/// Distinct characters such a key has at least: `1111111111111111` is 16 characters and
/// no secret. Six refuses repeats and short cycles, and almost never a random key (16
/// random hex digits have fewer about once in 70,000 keys; a UUID practically never).
pub const MIN_KEY_DISTINCT: usize = 6;

/// Whether `key` may guard a secret (a join's seat token, a player's key): at least
/// [`MIN_JOIN_KEY`] characters, [`MIN_KEY_DISTINCT`] of them distinct.
pub fn strong_key(key: &str) -> bool {
    let mut seen = std::collections::BTreeSet::new();
    key.len() >= MIN_JOIN_KEY
        && key
            .bytes()
            .any(|b| seen.insert(b) && seen.len() >= MIN_KEY_DISTINCT)
}

/// A request's `Idempotency-Key` and what it must match to count as the same request.
#[derive(Debug, Clone)]
pub struct RequestKey {
    key: String,
    pub(in crate::service) fingerprint: [u8; 16],
    /// A join's (or a player's creation): what seals its secret in the receipt (`None`
    /// for a move).
    pad: Option<[u8; 32]>,
    /// A join's token (a player's key's secret), sealed, for its receipt.
    pub(in crate::service) sealed: Option<[u8; 32]>,
    /// A create's kind (`None` for a move or a join).
    kind: Option<Create>,
}

impl RequestKey {
    /// A move's key: the same key is the same request only from the same seat (its token)
    /// with the same body, byte for byte.
    pub fn new(key: String, token: &str, body: &[u8]) -> RequestKey {
        let mut hash = Sha256::new();
        hash.update(Sha256::digest(token.as_bytes()));
        hash.update(body);
        RequestKey {
            key,
            fingerprint: first_16(hash.finalize().into()),
            pad: None,
            sealed: None,
            kind: None,
        }
    }

    /// A join's key: the same request has the same body, byte for byte (whoever sends it:
    /// the key is the secret).
    pub fn for_join(key: String, game_id: GameId, body: &[u8]) -> RequestKey {
        let fingerprint = first_16(
            Sha256::new()
                .chain_update(b"join\0")
                .chain_update(body)
                .finalize()
                .into(),
        );
        let pad = Sha256::new()
            .chain_update(b"domino seat token\0")
            .chain_update(game_id.as_bytes())
            .chain_update(b"\0")
            .chain_update(key.as_bytes())
            .chain_update(b"\0")
            .chain_update(body)
            .finalize()
            .into();
        RequestKey {
            key,
            fingerprint,
            pad: Some(pad),
            sealed: None,
            kind: None,
        }
    }

    /// Whether this is a join's key.
    pub(in crate::service) fn is_join(&self) -> bool {
        self.pad.is_some()
    }

    /// This join's key, carrying `token` sealed for its receipt.
    pub(in crate::service) fn sealing(&self, token: &[u8; 32]) -> RequestKey {
        RequestKey {
            sealed: self.pad.map(|pad| xor(&pad, token)),
            ..self.clone()
        }
    }

    /// The token a receipt of this join's key sealed.
    pub(in crate::service) fn unseal(&self, sealed: &[u8; 32]) -> Option<[u8; 32]> {
        self.pad.map(|pad| xor(&pad, sealed))
    }

    /// The name the store keeps the key under: a move's in its seat's scope, a join's as
    /// a hash (the key unseals a token; the store must not hold it).
    pub(in crate::service) fn stored_name(&self, seat: Option<u8>) -> String {
        match seat {
            Some(seat) if !self.is_join() => format!("s{seat}:{}", self.key),
            _ => format!(
                "join:{}",
                hex::encode(first_16(Sha256::digest(self.key.as_bytes()).into()))
            ),
        }
    }
}

fn first_16(hash: [u8; 32]) -> [u8; 16] {
    // 128 bits are ample to tell requests apart, and halve what each record keeps.
    let mut out = [0; 16];
    out.copy_from_slice(&hash[..16]);
    out
}

fn xor(a: &[u8; 32], b: &[u8; 32]) -> [u8; 32] {
    std::array::from_fn(|i| a[i] ^ b[i])
}

/// How long a create's key answers a retry once the thing is made: a client retries within
/// minutes; a day covers one that was offline meanwhile.
pub const CREATE_KEY_KEPT: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// What a create makes: the scope of its keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Create {
    Player,
    Game,
    Challenge,
    Seek,
    Match,
    Tournament,
    League,
}

impl Create {
    fn as_str(self) -> &'static str {
        match self {
            Create::Player => "player",
            Create::Game => "game",
            Create::Challenge => "challenge",
            Create::Seek => "seek",
            Create::Match => "match",
            Create::Tournament => "tournament",
            Create::League => "league",
        }
    }
}

impl RequestKey {
    /// A create's key: the same request makes the same kind of thing with the same body
    /// (`body`: the request as parsed, so spacing does not matter). A player's creation
    /// seals the key it answers, as a join seals its token.
    pub fn for_create(key: String, kind: Create, body: &[u8]) -> RequestKey {
        let fingerprint = first_16(
            Sha256::new()
                .chain_update(kind.as_str())
                .chain_update(b"\0")
                .chain_update(body)
                .finalize()
                .into(),
        );
        let pad = (kind == Create::Player).then(|| {
            Sha256::new()
                .chain_update(b"domino player key\0")
                .chain_update(key.as_bytes())
                .chain_update(b"\0")
                .chain_update(body)
                .finalize()
                .into()
        });
        RequestKey {
            key,
            fingerprint,
            pad,
            sealed: None,
            kind: Some(kind),
        }
    }

    /// The name a create's claim is stored under: the caller's player (none for an
    /// anonymous create: a player's, whose key is the secret, or a game's) and a hash of
    /// the key. Not its kind: a key is one request of one kind, so the same key for
    /// another kind of create finds this claim, whose fingerprint (made with the kind)
    /// is not its own, and is refused.
    fn claim_name(&self, caller: Option<&str>) -> String {
        format!(
            "c:{}:{}",
            caller.unwrap_or(""),
            hex::encode(first_16(Sha256::digest(self.key.as_bytes()).into()))
        )
    }
}

/// A create's receipt: what it made, by id, and whether that is made yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct CreateReceipt {
    id: String,
    /// A player's creation: its key's secret, sealed.
    sealed: Option<[u8; 32]>,
    made: bool,
    /// The request answered something there before it (a player's waiting seek), `id`.
    existing: bool,
}

/// The receipt before `existing`.
#[derive(Deserialize)]
struct CreateReceiptV3 {
    id: String,
    sealed: Option<[u8; 32]>,
    made: bool,
}

/// A create's receipt: one format byte (after those of moves and joins), then postcard.
const CREATE_FORMAT: u8 = 4;
/// The format before: the same without `existing` (still read: keys are kept a day).
const CREATE_FORMAT_V3: u8 = 3;

/// What a create answers. By default, the thing made under the id its key claimed.
pub(super) trait Answered {
    /// The id of what the create answered instead, something there before it (a player's
    /// waiting seek): a retry is to answer that.
    fn existing(&self) -> Option<&str> {
        None
    }
}

impl CreateReceipt {
    fn record(&self, fingerprint: &[u8; 16], name: &str) -> IdempotencyRecord {
        IdempotencyRecord {
            key: name.to_owned(),
            fingerprint: fingerprint.to_vec(),
            response: codec::encode(CREATE_FORMAT, self),
        }
    }

    fn decode(bytes: &[u8]) -> Option<CreateReceipt> {
        match codec::open("receipt", bytes).ok()? {
            (CREATE_FORMAT, body) => body.last().ok(),
            (CREATE_FORMAT_V3, body) => {
                let v3: CreateReceiptV3 = body.last().ok()?;
                Some(CreateReceipt {
                    id: v3.id,
                    sealed: v3.sealed,
                    made: v3.made,
                    existing: false,
                })
            }
            _ => None,
        }
    }
}

/// What a create's key says before anything is made.
enum Claim {
    /// The key is this request's: make the thing under the id claimed, then [`Fresh::settle`].
    Fresh(Fresh),
    /// This request was made before: it made (or is making) `id`.
    Before(Before),
}

/// A claim this request holds.
struct Fresh {
    name: String,
    receipt: CreateReceipt,
    fingerprint: [u8; 16],
}

/// What an earlier copy of this request made.
pub(super) struct Before {
    pub id: String,
    /// It answered `id`, there before it, rather than making it.
    pub existing: bool,
    sealed: Option<[u8; 32]>,
    made: bool,
    pad: Option<[u8; 32]>,
}

impl Before {
    /// A player's creation: the secret of the key it answered.
    pub(super) fn secret(&self) -> Option<[u8; 32]> {
        Some(xor(&self.pad?, &self.sealed?))
    }

    /// `found`, what it made as loaded now; if that is not there, it is gone once it was
    /// made, else the first copy is still making it (or died doing so: its claim lapses).
    pub(super) fn found<T>(&self, found: Result<T, Error>) -> Result<T, Error> {
        match found {
            Err(
                Error::PlayerNotFound
                | Error::ChallengeNotFound
                | Error::SeekNotFound
                | Error::MatchNotFound
                | Error::TournamentNotFound,
            ) if !self.made => Err(Error::KeyInFlight),
            found => found,
        }
    }
}

/// Makes something once per `request` (its key, if the client sent one): `make` runs under
/// a claim on the key, to make it with id `id` (and `secret`, a player's key's); a retry
/// of a request made before gets `again` of what that made, as it is now.
#[allow(clippy::too_many_arguments)] // each is one fact of the create
pub(super) async fn once<T, Again>(
    store: &Stores,
    request: Option<&RequestKey>,
    kind: Create,
    caller: Option<&str>,
    id: &impl Id,
    secret: Option<&[u8; 32]>,
    make: impl Future<Output = Result<T, Error>>,
    again: impl FnOnce(Before) -> Again,
) -> Result<T, Error>
where
    Again: Future<Output = Result<T, Error>>,
{
    let key = (request, kind, caller);
    once_noting(store, key, id, secret, make, again, |_: &T| None).await
}

/// [`once`] for a create that may answer something there before it ([`Answered`]): its
/// key then keeps that thing's id, for a retry to answer it again.
#[allow(clippy::too_many_arguments)] // as `once`
pub(super) async fn once_answered<T: Answered, Again>(
    store: &Stores,
    request: Option<&RequestKey>,
    kind: Create,
    caller: Option<&str>,
    id: &impl Id,
    secret: Option<&[u8; 32]>,
    make: impl Future<Output = Result<T, Error>>,
    again: impl FnOnce(Before) -> Again,
) -> Result<T, Error>
where
    Again: Future<Output = Result<T, Error>>,
{
    let key = (request, kind, caller);
    let existing = |made: &T| made.existing().map(str::to_owned);
    once_noting(store, key, id, secret, make, again, existing).await
}

async fn once_noting<T, Again>(
    store: &Stores,
    (request, kind, caller): (Option<&RequestKey>, Create, Option<&str>),
    id: &impl Id,
    secret: Option<&[u8; 32]>,
    make: impl Future<Output = Result<T, Error>>,
    again: impl FnOnce(Before) -> Again,
    existing: impl FnOnce(&T) -> Option<String>,
) -> Result<T, Error>
where
    Again: Future<Output = Result<T, Error>>,
{
    let Some(request) = request else {
        return make.await;
    };
    match claim(store, request, kind, caller, id, secret).await? {
        Claim::Fresh(claim) => {
            let made = make.await;
            let found = made.as_ref().ok().and_then(existing);
            claim.settle(store, &made, found).await;
            made
        }
        Claim::Before(before) => again(before).await,
    }
}

/// Claims `key` for a create of `kind` by `caller` that is to make `id` (with `secret`,
/// a player's key's, sealed). An earlier copy's claim answers [`Claim::Before`]; another
/// request's under the same key is refused.
async fn claim(
    store: &Stores,
    key: &RequestKey,
    kind: Create,
    caller: Option<&str>,
    id: &impl Id,
    secret: Option<&[u8; 32]>,
) -> Result<Claim, Error> {
    debug_assert_eq!(key.kind, Some(kind), "a create's key made for another kind");
    let name = key.claim_name(caller);
    let receipt = CreateReceipt {
        id: id.to_string(),
        sealed: key.pad.zip(secret).map(|(pad, s)| xor(&pad, s)),
        made: false,
        existing: false,
    };
    let Some(held) = store
        .claims()
        .claim_key(&receipt.record(&key.fingerprint, &name))
        .await?
    else {
        return Ok(Claim::Fresh(Fresh {
            name,
            receipt,
            fingerprint: key.fingerprint,
        }));
    };
    if held.fingerprint != key.fingerprint {
        return Err(Error::IdempotencyKeyReused);
    }
    let earlier = CreateReceipt::decode(&held.response)
        .ok_or_else(|| Error::Internal("an idempotency record is unreadable".into()))?;
    Ok(Claim::Before(Before {
        id: earlier.id,
        existing: earlier.existing,
        sealed: earlier.sealed,
        made: earlier.made,
        pad: key.pad,
    }))
}

impl Fresh {
    /// After the create: a claim on what was made is kept [`CREATE_KEY_KEPT`]; a refusal gives the key up (nothing was made: a retry tries afresh); an
    /// answer the store did not give leaves the claim to lapse (a retry meanwhile waits).
    async fn settle<T>(
        mut self,
        store: &Stores,
        made: &Result<T, Error>,
        existing: Option<String>,
    ) {
        let done = match made {
            Ok(_) => {
                // A retry answers what this answered, not the id claimed for nothing.
                if let Some(id) = existing {
                    self.receipt.id = id;
                    self.receipt.existing = true;
                }
                self.receipt.made = true;
                let record = self.receipt.record(&self.fingerprint, &self.name);
                store.claims().keep_key(&record, CREATE_KEY_KEPT).await
            }
            Err(
                Error::StoreUnavailable(_)
                | Error::StoreNotReady(_)
                | Error::Unsettled { .. }
                | Error::Internal(_),
            ) => return,
            Err(_) => store.claims().release_key(&self.name).await,
        };
        if let Err(e) = done {
            tracing::warn!(error = %e, "an idempotency key's claim could not be settled");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_player_creation_s_key_unseals_only_with_its_idempotency_key_and_body() {
        let secret = [9u8; 32];
        let body = br#"{"bot":false,"name":"ann"}"#;
        let key = RequestKey::for_create("k".repeat(20), Create::Player, body);
        let sealed = key.pad.map(|pad| xor(&pad, &secret)).unwrap();
        assert_ne!(sealed, secret);
        let before = |key: &RequestKey| Before {
            id: "p".into(),
            existing: false,
            sealed: Some(sealed),
            made: true,
            pad: key.pad,
        };
        assert_eq!(before(&key).secret(), Some(secret));
        for other in [
            RequestKey::for_create("k".repeat(21), Create::Player, body),
            RequestKey::for_create(
                "k".repeat(20),
                Create::Player,
                br#"{"bot":false,"name":"bob"}"#,
            ),
        ] {
            assert_ne!(before(&other).secret(), Some(secret));
        }
        // The other creates seal nothing, and their kinds tell their keys apart.
        let seek = RequestKey::for_create("k".repeat(20), Create::Seek, body);
        assert!(seek.pad.is_none());
        assert_ne!(seek.fingerprint, key.fingerprint);
        assert_ne!(seek.claim_name(Some("p1")), seek.claim_name(Some("p2")));
        // One key, one kind: another kind's same key meets this claim, and not its print.
        let challenge = RequestKey::for_create("k".repeat(20), Create::Challenge, body);
        assert_eq!(
            seek.claim_name(Some("p1")),
            challenge.claim_name(Some("p1"))
        );
        assert_ne!(seek.fingerprint, challenge.fingerprint);
    }

    #[test]
    fn a_key_guarding_a_secret_is_long_and_varied() {
        assert!(!strong_key("1111111111111111"));
        assert!(!strong_key("1212121212121212"));
        assert!(!strong_key("abcd-abcd-abcd-abcd"));
        assert!(!strong_key("a1b2c3d4e5f"));
        assert!(strong_key("3f1c0b6a9d2e4f5a"));
        assert!(strong_key(&uuid::Uuid::new_v4().to_string()));
    }

    #[test]
    fn a_receipt_of_the_format_before_reads_as_one_that_made_its_id() {
        #[derive(Serialize)]
        struct V3<'a> {
            id: &'a str,
            sealed: Option<[u8; 32]>,
            made: bool,
        }
        let v3 = V3 {
            id: "s1",
            sealed: None,
            made: true,
        };
        let bytes = postcard::to_extend(&v3, vec![CREATE_FORMAT_V3]).unwrap();
        let read = CreateReceipt::decode(&bytes).unwrap();
        assert_eq!(
            (read.id.as_str(), read.made, read.existing),
            ("s1", true, false)
        );
        let now = CreateReceipt {
            existing: true,
            ..read
        };
        let bytes = now.record(&[0; 16], "k").response;
        assert_eq!(CreateReceipt::decode(&bytes), Some(now));
    }
}
