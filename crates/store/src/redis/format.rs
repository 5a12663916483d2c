//! The bytes the Redis store keeps beside a game's value (whose format is the crate's
//! `value`, shared with the memory store): an idempotency record.

use crate::IdempotencyRecord;

pub(super) fn encode_record(record: &IdempotencyRecord) -> Vec<u8> {
    let len = u32::try_from(record.fingerprint.len()).expect("a fingerprint is a short hash");
    let mut raw = Vec::with_capacity(4 + record.fingerprint.len() + record.response.len());
    raw.extend_from_slice(&len.to_be_bytes());
    raw.extend_from_slice(&record.fingerprint);
    raw.extend_from_slice(&record.response);
    raw
}

pub(super) fn decode_record(key: &str, raw: &[u8]) -> Option<IdempotencyRecord> {
    let (len, rest) = raw.split_first_chunk::<4>()?;
    let len = usize::try_from(u32::from_be_bytes(*len)).ok()?;
    if rest.len() < len {
        return None;
    }
    let (fingerprint, response) = rest.split_at(len);
    Some(IdempotencyRecord {
        key: key.to_owned(),
        fingerprint: fingerprint.to_vec(),
        response: response.to_vec(),
    })
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn a_record_round_trips_through_its_bytes() {
        let record = IdempotencyRecord {
            key: "k".into(),
            fingerprint: vec![1, 2, 3],
            response: b"{}".to_vec(),
        };
        assert_eq!(decode_record("k", &encode_record(&record)), Some(record));
        assert!(decode_record("k", &[0, 0, 0, 9, 1]).is_none());
    }
}
