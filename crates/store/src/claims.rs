//! Idempotency keys of creates (a player, a challenge, a seek, a match): a request that
//! makes something new has no game to keep its key in, so its key is claimed here first,
//! holding the id of what it is about to make, and a retry finds the claim. The records
//! are the games' ([`IdempotencyRecord`]): the fingerprint and the answer are the service's,
//! opaque here.
//!
//! A claim is first [`PENDING`]: a request that dies before making anything leaves its key
//! free again soon; once the thing is made, the claim is kept its whole ttl.

use std::future::Future;
use std::time::Duration;

use super::{IdempotencyRecord, StoreError};

/// How long a claim lives before what it names is made.
pub const PENDING: Duration = Duration::from_secs(30);

/// The contract both stores keep for the keys of creates.
pub trait ClaimStore: Send + Sync + 'static {
    /// Claims `record.key` for [`PENDING`] holding `record`, unless it is claimed: then
    /// the record that holds it, unchanged.
    fn claim_key(
        &self,
        record: &IdempotencyRecord,
    ) -> impl Future<Output = Result<Option<IdempotencyRecord>, StoreError>> + Send;

    /// Keeps the claim on `record.key` for `ttl` from now, holding `record` (what it names
    /// was made); nothing when the claim lapsed meanwhile.
    fn keep_key(
        &self,
        record: &IdempotencyRecord,
        ttl: Duration,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Gives up the claim on `key`: its request was refused and made nothing.
    fn release_key(&self, key: &str) -> impl Future<Output = Result<(), StoreError>> + Send;
}
