//! Claims on the keys of creates on Redis: one key a claim (`claim:{<name>}`, in the
//! name's own slot), holding the record as a game's idempotency hash holds one; claimed
//! with `SET NX GET`, so two processes racing for a key see one winner.

use std::time::Duration;

use super::RedisStore;
use super::format::{decode_record, encode_record};
use super::keys::Keys;
use super::players::millis;
use crate::claims::{ClaimStore, PENDING};
use crate::{IdempotencyRecord, StoreError};

impl Keys {
    fn claim(&self, name: &str) -> String {
        format!("{}claim:{{{name}}}", self.prefix)
    }
}

impl ClaimStore for RedisStore {
    async fn claim_key(
        &self,
        record: &IdempotencyRecord,
    ) -> Result<Option<IdempotencyRecord>, StoreError> {
        let mut conn = self.conns.writer()?;
        let held: Option<Vec<u8>> = self
            .bounded(
                "claim key",
                redis::cmd("SET")
                    .arg(self.keys.claim(&record.key))
                    .arg(encode_record(record))
                    .arg("NX")
                    .arg("GET")
                    .arg("PX")
                    .arg(millis(PENDING))
                    .query_async(&mut conn),
            )
            .await?;
        held.map(|raw| {
            decode_record(&record.key, &raw)
                .ok_or_else(|| super::connection::corrupt("claimed key"))
        })
        .transpose()
    }

    async fn keep_key(&self, record: &IdempotencyRecord, ttl: Duration) -> Result<(), StoreError> {
        let mut conn = self.conns.writer()?;
        self.bounded(
            "keep key",
            redis::cmd("SET")
                .arg(self.keys.claim(&record.key))
                .arg(encode_record(record))
                .arg("XX")
                .arg("PX")
                .arg(millis(ttl))
                .exec_async(&mut conn),
        )
        .await
    }

    async fn release_key(&self, key: &str) -> Result<(), StoreError> {
        let mut conn = self.conns.writer()?;
        self.bounded(
            "release key",
            redis::cmd("DEL")
                .arg(self.keys.claim(key))
                .exec_async(&mut conn),
        )
        .await
    }
}
