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
    if samples.iter().any(|err| err.retry_after_secs().is_some()) {
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
            [ApiError::BadRequest(
                "the body is not acceptable: unknown field `colour`, expected one of `type`, `tile`, `end`, `claim`, `expected_version` at line 1 column 9".into(),
            )];
        Unauthorized => "No seat token, or not a valid one for this game.",
            [ApiError::Unauthorized("send the seat's token as `Authorization: Bearer <token>`".into())];
        Forbidden => "A valid player key, acting on what is not its player's.",
            [ApiError::Forbidden("this game has no seat bound to the key's player".into())];
        NotFound => "No such resource (or the game expired).",
            [ApiError::NotFound("no such resource".into())];
        Conflict => "The request clashes with the game's state.",
            [
                ApiError::NotYourTurn("it is seat 2's turn".into()),
                ApiError::VersionConflict { current_version: 18 },
                ApiError::GameNotStarted("the game waits for 2 more players".into()),
                ApiError::GameFinished("the match is over".into()),
                ApiError::SeatTaken("seat 2 is taken".into()),
                ApiError::SeatAbandoned("this seat was abandoned to a bot: it may still read the game, not move".into()),
                ApiError::GameFull("every seat is taken".into()),
                ApiError::NameTaken("the name \"alice\" is taken".into()),
            ];
        PreconditionFailed => "A conditional request's precondition did not hold.",
            [ApiError::PreconditionFailed("the game is not at the version given in If-Match".into())];
        PayloadTooLarge => "The request body is larger than the server accepts (`MAX_BODY_BYTES`).",
            [ApiError::PayloadTooLarge { limit: Some(16_384) }];
        UnprocessableContent => "Well-formed, but the game cannot accept it.",
            [
                ApiError::IllegalMove {
                    detail: "5-3 fits neither end".into(),
                    legal_moves: vec![
                        MoveBody::Play {
                            tile: TileText(Tile::new(4, 6)),
                            end: Some(End::Left),
                            claim: None,
                            points: Some(0),
                            expected_version: None,
                        },
                        MoveBody::Draw { points: Some(0), expected_version: None },
                    ],
                },
                ApiError::InvalidRules("hand_size 20 does not fit 4 seats in a double-six set".into()),
                ApiError::IdempotencyKeyReused("this Idempotency-Key was used with another body".into()),
            ];
        RateLimited => "Too many requests, or too many event streams and long polls open (`MAX_STREAMS_PER_IP`, `MAX_STREAMS`): wait `Retry-After` seconds.",
            [ApiError::RateLimited { retry_after_secs: 2 }];
        RequestTimeout => "The body did not arrive within `BODY_TIMEOUT_MS`; the connection is closed.",
            [ApiError::RequestTimeout { limit_ms: 5000 }];
        StoreUnavailable => "The game store did not answer in time: retry after `Retry-After` seconds.",
            [
                ApiError::StoreUnavailable(String::new()),
                ApiError::StoreUnsettled { cause: String::new(), outcome: "unknown" },
            ];
        InternalError => "A bug on the server's side; the request changed nothing.",
            [ApiError::Internal(String::new())];
    }
}
