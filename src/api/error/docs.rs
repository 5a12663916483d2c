//! The problem body's schema and the reusable problem responses of the OpenAPI document,
//! their examples made by the real serialisation.

use std::borrow::Cow;

use utoipa::openapi::example::ExampleBuilder;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{ContentBuilder, Ref, RefOr, Response, ResponseBuilder};
use utoipa::{PartialSchema, ToResponse, ToSchema};

use crate::api::wire::{MoveBody, TileText};
use crate::engine::{End, Tile};
use crate::service::Fate;

use super::*;

// `body = ApiError` in a path documents the problem body.
impl PartialSchema for ApiError {
    fn schema() -> RefOr<utoipa::openapi::schema::Schema> {
        Problem::schema()
    }
}

impl ToSchema for ApiError {
    fn name() -> Cow<'static, str> {
        Problem::name()
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<utoipa::openapi::schema::Schema>)>) {
        schemas.push((ProblemCode::name().into_owned(), ProblemCode::schema()));
        Problem::schemas(schemas);
    }
}

/// A problem response for the OpenAPI document, its examples made by the real
/// serialisation so the document cannot drift from what the server sends.
fn problem_response(description: &str, samples: &[ApiError]) -> RefOr<Response> {
    let examples = samples.iter().map(|err| {
        let value = serde_json::to_value(err.problem()).expect("a problem serialises");
        (
            err.code().as_str(),
            ExampleBuilder::new()
                .summary(err.code().title())
                .value(Some(value))
                .build(),
        )
    });
    let content = ContentBuilder::new()
        .schema(Some(Ref::from_schema_name(Problem::name())))
        .examples_from_iter(examples)
        .build();
    let mut response = ResponseBuilder::new()
        .description(description)
        .content(PROBLEM_JSON, content);
    if samples.iter().any(|err| err.retry_after_secs.is_some()) {
        response = response.header(
            "Retry-After",
            HeaderBuilder::new()
                .schema(Some(
                    ObjectBuilder::new()
                        .schema_type(Type::Integer)
                        .minimum(Some(0)),
                ))
                .description(Some("Seconds to wait before retrying."))
                .build(),
        );
    }
    if samples
        .iter()
        .any(|err| err.code == ProblemCode::Unauthorized)
    {
        response = response.header(
            "WWW-Authenticate",
            HeaderBuilder::new()
                .schema(Some(
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .enum_values(Some([BEARER_CHALLENGE])),
                ))
                .description(Some(
                    "The scheme to authenticate with (RFC 6750): the seat token as a bearer token.",
                ))
                .build(),
        );
    }
    response.build().into()
}

/// Reusable responses for `#[utoipa::path(responses(...))]`: `(status = 404, response =
/// problems::NotFound)`. Each is listed once in the document's components.
pub mod problems {
    use super::*;

    macro_rules! problem_responses {
        ($($name:ident => $description:literal, [$($sample:expr),+ $(,)?];)+) => {$(
            #[doc = $description]
            pub struct $name;

            impl<'r> ToResponse<'r> for $name {
                fn response() -> (&'r str, RefOr<Response>) {
                    (stringify!($name), problem_response($description, &[$($sample),+]))
                }
            }
        )+};
    }

    problem_responses! {
        BadRequest => "Malformed request: bad JSON, an unknown field, a wrong type, bad tile text, or an `Accept-Encoding` that rules out every coding the server has.",
            [ApiError::bad_request(
                "the body is not acceptable: unknown field `colour`, expected one of `type`, `tile`, `end`, `claim`, `expected_version` at line 1 column 9",
            )];
        Unauthorized => "No seat token, or not a valid one for this game.",
            [ApiError::unauthorized("send the seat's token as `Authorization: Bearer <token>`")];
        Forbidden => "A valid player key, acting on what is not its player's.",
            [ApiError::new(ProblemCode::Forbidden, "this game has no seat bound to the key's player")];
        NotFound => "No such resource (or the game expired).",
            [ApiError::not_found("no such resource")];
        Conflict => "The request clashes with the state of the game, the name or the challenge, or with a create under the same `Idempotency-Key` still under way.",
            [
                ApiError::new(ProblemCode::NotYourTurn, "it is seat 2's turn"),
                ApiError::version_conflict(18),
                ApiError::new(ProblemCode::GameNotStarted, "the game waits for 2 more players"),
                ApiError::new(ProblemCode::GameFinished, "the match is over"),
                ApiError::new(ProblemCode::SeatTaken, "seat 2 is taken"),
                ApiError::new(ProblemCode::SeatAbandoned, "this seat was abandoned to a bot: it may still read the game, not move"),
                ApiError::new(ProblemCode::GameFull, "every seat is taken"),
                ApiError::new(ProblemCode::NameTaken, "the name \"alice\" is taken"),
                ApiError::new(ProblemCode::ChallengeClosed, "this challenge is declined already"),
                ApiError::new(ProblemCode::IdempotencyKeyInUse, "the first request with this Idempotency-Key is still being made; retry in a second with the same key"),
            ];
        PreconditionFailed => "A conditional request's precondition did not hold.",
            [ApiError::new(ProblemCode::PreconditionFailed, "the game is not at the version given in If-Match")];
        PayloadTooLarge => "The request body is larger than the server accepts (`MAX_BODY_BYTES`).",
            [ApiError::payload_too_large(Some(16_384))];
        UnprocessableContent => "Well-formed, but the game cannot accept it.",
            [
                ApiError::illegal_move(
                    "5-3 fits neither end",
                    vec![
                        MoveBody::Play {
                            tile: TileText(Tile::new(4, 6)),
                            end: Some(End::Left),
                            claim: None,
                            points: Some(0),
                            expected_version: None,
                        },
                        MoveBody::Draw { points: Some(0), expected_version: None },
                    ],
                ),
                ApiError::new(ProblemCode::InvalidRules, "hand_size 20 does not fit 4 seats in a double-six set"),
                ApiError::new(ProblemCode::InvalidWebhook, "the ping failed: no whole answer within the time allowed"),
                ApiError::new(ProblemCode::IdempotencyKeyReused, "this Idempotency-Key was used with another body"),
            ];
        RateLimited => "Too many requests (`rate_limited`), too many event streams and long polls open (`MAX_STREAMS_PER_IP`, `MAX_STREAMS`: `rate_limited`), too many players created by this address (`MAX_PLAYERS_PER_IP`) or open challenges of this player (20), or to the player challenged (`MAX_CHALLENGES_TO_PLAYER`): `rate_limited`; or, creating a game, too many games of this address waiting or in play (`MAX_WAITING_PER_IP`, `MAX_GAMES_PER_IP`: `too_many_games`): wait `Retry-After` seconds. A player in its most tournaments registering or running, made (`MAX_TOURNAMENTS_PER_PLAYER`) or joined (`MAX_TOURNAMENTS_JOINED`), is `too_many_tournaments`, with no `Retry-After`: a place frees only when one of them ends (or, joined, the player withdraws).",
            [
                ApiError::rate_limited(
                    "per-token limit (200/s a token, 200 at once)",
                    2,
                ),
                ApiError::from(crate::service::Error::TooManyWaiting { max: 20 }),
                ApiError::from(crate::service::Error::TooManyTournamentsJoined { max: 10 }),
            ];
        RequestTimeout => "The body did not arrive within `BODY_TIMEOUT_MS`; the connection is closed.",
            [ApiError::request_timeout(5000)];
        StoreUnavailable => "The game store did not answer in time: retry after `Retry-After` seconds.",
            [
                ApiError::store_unavailable(String::new()),
                ApiError::unsettled(String::new(), Fate::Unknown),
            ];
        InternalError => "A bug on the server's side; the request changed nothing.",
            [ApiError::internal(String::new())];
    }
}
