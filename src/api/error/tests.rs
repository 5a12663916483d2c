//! The error table checked against the contract: every code's status, title and body.

use super::*;
use crate::service;
use crate::store::StoreError;

#[test]
fn every_code_has_its_contract_status() {
    use ProblemCode::*;
    let table = [
        (BadRequest, 400),
        (Unauthorized, 401),
        (NotFound, 404),
        (NotYourTurn, 409),
        (VersionConflict, 409),
        (GameNotStarted, 409),
        (GameFinished, 409),
        (SeatTaken, 409),
        (SeatAbandoned, 409),
        (GameFull, 409),
        (IdempotencyKeyInUse, 409),
        (PreconditionFailed, 412),
        (RequestTimeout, 408),
        (PayloadTooLarge, 413),
        (IllegalMove, 422),
        (InvalidRules, 422),
        (IdempotencyKeyReused, 422),
        (RateLimited, 429),
        (TooManyGames, 429),
        (Forbidden, 403),
        (StoreUnavailable, 503),
    ];
    for (code, status) in table {
        assert_eq!(code.status().as_u16(), status, "{code:?}");
    }
    for &code in ProblemCode::ALL {
        let wire = serde_json::to_value(code).unwrap();
        assert_eq!(wire, code.as_str(), "serde and the table agree");
    }
}

#[test]
fn a_version_conflict_carries_the_current_version() {
    let body = serde_json::to_value(ApiError::version_conflict(7).problem()).unwrap();
    assert_eq!(body["code"], "version_conflict");
    assert_eq!(body["status"], 409);
    assert_eq!(body["current_version"], 7);
    assert_eq!(
        body["type"],
        "https://domino.example/problems/version_conflict"
    );
    assert!(body.get("legal_moves").is_none());
}

#[test]
fn an_illegal_move_carries_the_legal_moves() {
    let err = ApiError::illegal_move(
        "no",
        vec![MoveBody::Draw {
            points: None,
            expected_version: None,
        }],
    );
    let body = serde_json::to_value(err.problem()).unwrap();
    assert_eq!(body["legal_moves"], serde_json::json!([{"type": "draw"}]));
    assert!(body.get("current_version").is_none());
}

#[test]
fn store_errors_never_reach_the_client() {
    let err = ApiError::from(service::Error::from(StoreError::Unavailable(
        "connection refused at 10.0.0.7:6379".into(),
    )));
    let res = err.error_response();
    assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(res.headers().get(header::RETRY_AFTER).unwrap(), "1");
    assert_eq!(
        res.headers().get(header::CONTENT_TYPE).unwrap(),
        PROBLEM_JSON
    );
    assert!(!err.problem().detail.contains("10.0.0.7"));
    assert!(
        err.to_string().contains("10.0.0.7"),
        "the cause stays for the logs"
    );

    let err = ApiError::from(service::Error::from(StoreError::Exists));
    assert_eq!(err.problem().status, 500);
    assert!(!err.problem().detail.contains("exists"));
}

#[test]
fn a_change_of_unknown_fate_says_so_and_how_to_retry() {
    let err = ApiError::unsettled("Redis did not answer save within 1s", Fate::Unknown);
    let res = err.error_response();
    assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(res.headers().get(header::RETRY_AFTER).unwrap(), "1");
    let body = serde_json::to_value(err.problem()).unwrap();
    assert_eq!(body["code"], "store_unavailable");
    assert_eq!(body["outcome"], "unknown");
    assert!(body["detail"].as_str().unwrap().contains("Idempotency-Key"));
    assert!(!body["detail"].as_str().unwrap().contains("Redis"));
    let plain = serde_json::to_value(ApiError::store_unavailable(String::new()).problem());
    assert!(plain.unwrap().get("outcome").is_none());
}

#[test]
fn caps_answer_their_code_with_a_retry_after() {
    let waiting = ApiError::from(service::Error::from(StoreError::TooManyWaiting { max: 20 }));
    assert_eq!(waiting.code(), ProblemCode::TooManyGames);
    assert!(waiting.problem().detail.contains("MAX_WAITING_PER_IP"));
    let res = waiting.error_response();
    assert_eq!(
        res.headers().get(header::RETRY_AFTER).unwrap(),
        &WAITING_RETRY_AFTER_SECS.to_string()
    );
    let games = ApiError::from(service::Error::from(StoreError::TooManyGames { max: 100 }));
    assert_eq!(games.code(), ProblemCode::TooManyGames);
    assert!(games.problem().detail.contains("MAX_GAMES_PER_IP"));
    assert!(
        games
            .error_response()
            .headers()
            .contains_key(header::RETRY_AFTER)
    );
    let frees_in = std::time::Duration::from_millis(90_500);
    let full = ApiError::from(service::Error::from(StoreError::Full {
        max: 100_000,
        frees_in,
    }));
    assert_eq!(full.code(), ProblemCode::StoreUnavailable);
    assert!(full.problem().detail.contains("MEMORY_MAX_GAMES"));
    assert!(full.problem().detail.contains("expires in 91 s"));
    let res = full.error_response();
    assert_eq!(res.headers().get(header::RETRY_AFTER).unwrap(), "91");
}

#[test]
fn an_unauthorized_answer_names_the_bearer_scheme() {
    let res = ApiError::unauthorized("no token").error_response();
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        res.headers().get(header::WWW_AUTHENTICATE).unwrap(),
        "Bearer"
    );
    let other = ApiError::not_found("no such game").error_response();
    assert!(!other.headers().contains_key(header::WWW_AUTHENTICATE));
}
