//! HTTP for client authors: CORS for pages on other origins (`CORS_ORIGINS`), compressed
//! answers that leave the event stream and the seat token alone, `HEAD` wherever `GET` is allowed, and
//! `Vary` on answers that differ by seat token.

use std::io::Read;
use std::num::NonZeroU32;
use std::time::Duration;

use domino_server::settings::{CorsOrigins, RateLimit, Settings};
use serde_json::json;

use crate::helpers::{EventStream, TestApp, spawn_app, spawn_app_with, test_settings};

const PAGE: &str = "http://localhost:3000";

fn with_cors(origins: CorsOrigins) -> Settings {
    Settings {
        cors_origins: origins,
        ..test_settings()
    }
}

/// A browser's preflight for a move: `OPTIONS` with the origin, method and headers the
/// page is about to use.
async fn preflight(app: &TestApp, origin: &str) -> reqwest::Response {
    app.client
        .request(
            reqwest::Method::OPTIONS,
            app.url("/v1/games/9b2d5c0e-4c83-4bb5-9a43-5f2a1f0e6a11/moves"),
        )
        .header("origin", origin)
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "authorization, content-type, idempotency-key",
        )
        .send()
        .await
        .unwrap()
}

async fn get_from(app: &TestApp, path: &str, origin: &str) -> reqwest::Response {
    app.client
        .get(app.url(path))
        .header("origin", origin)
        .send()
        .await
        .unwrap()
}

/// A comma-separated header, every line of it, as lowercase items.
fn list(res: &reqwest::Response, name: &str) -> Vec<String> {
    res.headers()
        .get_all(name)
        .iter()
        .flat_map(|v| v.to_str().unwrap().split(','))
        .map(|item| item.trim().to_ascii_lowercase())
        .filter(|item| !item.is_empty())
        .collect()
}

fn has_cors_headers(res: &reqwest::Response) -> bool {
    res.headers()
        .keys()
        .any(|name| name.as_str().starts_with("access-control-"))
}

#[tokio::test]
async fn only_a_listed_origin_gets_a_preflight_saying_what_its_page_may_send_and_read() {
    let app = spawn_app_with(with_cors(CorsOrigins::List(vec![
        "https://other.example".into(),
        PAGE.into(),
    ])))
    .await;
    let res = preflight(&app, PAGE).await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(res.headers()["access-control-allow-origin"], PAGE);
    assert!(list(&res, "access-control-allow-methods").contains(&"post".to_owned()));
    let allowed = list(&res, "access-control-allow-headers");
    for header in [
        "authorization",
        "content-type",
        "idempotency-key",
        "if-match",
        "if-none-match",
        "last-event-id",
    ] {
        assert!(
            allowed.contains(&header.to_owned()),
            "{header}: {allowed:?}"
        );
    }
    assert!(res.headers().contains_key("access-control-max-age"));

    // The request itself: the page may read the answer and the headers a client needs.
    let res = get_from(&app, "/v1/presets", PAGE).await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(res.headers()["access-control-allow-origin"], PAGE);
    let exposed = list(&res, "access-control-expose-headers");
    for header in [
        "etag",
        "location",
        "retry-after",
        "ratelimit",
        "ratelimit-policy",
        "x-request-id",
    ] {
        assert!(
            exposed.contains(&header.to_owned()),
            "{header}: {exposed:?}"
        );
    }
    assert!(list(&res, "vary").contains(&"origin".to_owned()));

    // A page from another origin gets no leave to call: forbidden, naming the origin.
    let res = preflight(&app, "http://localhost:3001").await;
    assert_eq!(res.status().as_u16(), 403);
    assert!(!res.headers().contains_key("access-control-allow-origin"));
    assert_eq!(res.headers()["content-type"], "application/problem+json");
    let problem: serde_json::Value = res.json().await.unwrap();
    assert_eq!(problem["code"], "forbidden");
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.contains("http://localhost:3001"), "{detail}");
    assert!(detail.contains("CORS_ORIGINS"), "{detail}");
    // A non-browser client sending an Origin is still served; a browser would not hand
    // the answer to the page.
    let res = get_from(&app, "/v1/presets", "http://localhost:3001").await;
    assert_eq!(res.status().as_u16(), 200);
    assert!(!res.headers().contains_key("access-control-allow-origin"));
}

#[tokio::test]
async fn without_cors_origins_no_answer_carries_cors_headers() {
    let unset = spawn_app().await;
    let listed = spawn_app_with(with_cors(CorsOrigins::List(vec![PAGE.into()]))).await;
    for (app, expected) in [(&unset, false), (&listed, true)] {
        let res = preflight(app, PAGE).await;
        assert_eq!(res.status().is_success(), expected, "{}", res.status());
        assert_eq!(has_cors_headers(&res), expected, "{:?}", res.headers());
        let res = get_from(app, "/v1/presets", PAGE).await;
        assert_eq!(res.status().as_u16(), 200);
        assert_eq!(has_cors_headers(&res), expected, "{:?}", res.headers());
    }
}

#[tokio::test]
async fn any_origin_is_answered_with_a_wildcard_even_when_rate_limited() {
    let app = spawn_app_with(Settings {
        rate_limit_per_ip: Some(RateLimit::per_second(NonZeroU32::new(1).unwrap())),
        ..with_cors(CorsOrigins::Any)
    })
    .await;
    let res = preflight(&app, "https://anywhere.example").await;
    assert_eq!(res.headers()["access-control-allow-origin"], "*");
    let mut res = get_from(&app, "/v1/presets", "https://anywhere.example").await;
    assert_eq!(res.headers()["access-control-allow-origin"], "*");
    // Unless this machine took a whole second over the requests, one is refused: a page
    // must be able to read that answer and its Retry-After.
    for _ in 0..5 {
        if res.status().as_u16() == 429 {
            break;
        }
        res = get_from(&app, "/v1/presets", "https://anywhere.example").await;
    }
    assert_eq!(res.status().as_u16(), 429);
    assert_eq!(res.headers()["access-control-allow-origin"], "*");
    assert!(list(&res, "access-control-expose-headers").contains(&"retry-after".to_owned()));
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut out)
        .expect("a gzip stream");
    out
}

#[tokio::test]
async fn an_answer_is_gzipped_when_asked_and_decodes_to_the_same_document() {
    let app = spawn_app().await;
    let plain = app.get("/openapi.json").await;
    assert!(!plain.headers().contains_key("content-encoding"));
    let plain = plain.bytes().await.unwrap();

    let res = app
        .client
        .get(app.url("/openapi.json"))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(res.headers()["content-encoding"], "gzip");
    assert!(list(&res, "vary").contains(&"accept-encoding".to_owned()));
    let gzipped = res.bytes().await.unwrap();
    assert!(
        gzipped.len() * 3 < plain.len(),
        "{} bytes gzipped, {} plain",
        gzipped.len(),
        plain.len()
    );
    assert_eq!(gunzip(&gzipped), plain);
}

#[tokio::test]
async fn the_event_stream_is_never_compressed_and_its_first_event_arrives_at_once() {
    let app = spawn_app().await;
    let (id, _) = app.create_game(json!({"preset": "classic"})).await;
    let gzip = |path: String| {
        app.client
            .get(app.url(&path))
            .header("accept-encoding", "gzip")
            .send()
    };
    // Answers are compressed on request...
    let view = gzip(format!("/v1/games/{id}")).await.unwrap();
    assert_eq!(view.headers()["content-encoding"], "gzip");
    // ... but not the stream: a compressor holds small writes back, so a waiting game's
    // first event would not arrive until much more followed.
    let res = gzip(format!("/v1/games/{id}/events")).await.unwrap();
    assert!(
        !res.headers().contains_key("content-encoding"),
        "{:?}",
        res.headers()
    );
    let mut stream = EventStream::of(res);
    let event = stream
        .next(Duration::from_secs(5))
        .await
        .expect("the opening event, at once");
    assert_eq!(event.id, Some(1));
}

#[tokio::test]
async fn the_join_answer_which_carries_the_seat_token_is_never_compressed() {
    let app = spawn_app().await;
    let (id, _) = app.create_game(json!({"preset": "classic"})).await;
    let join = app
        .client
        .post(app.url(&format!("/v1/games/{id}/seats")))
        .header("accept-encoding", "gzip")
        .json(&json!({"name": "ann"}))
        .send()
        .await
        .unwrap();
    assert_eq!(join.status().as_u16(), 201);
    assert!(
        !join.headers().contains_key("content-encoding"),
        "{:?}",
        join.headers()
    );
    let granted: serde_json::Value = join.json().await.expect("plain JSON");
    assert!(granted["token"].as_str().is_some_and(|t| !t.is_empty()));
    // The same request header gets the view compressed.
    let view = app
        .client
        .get(app.url(&format!("/v1/games/{id}")))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(view.headers()["content-encoding"], "gzip");
}

#[tokio::test]
async fn head_answers_wherever_get_does_with_the_same_headers_and_no_body() {
    let app = spawn_app().await;
    let (id, _) = app
        .create_game(json!({"preset": "classic", "bots": [{"seat": 1, "level": "random"}]}))
        .await;
    let seat = app.take_seat(&id, "ann").await;
    for (path, token) in [
        ("/v1/presets".to_owned(), None),
        ("/v1/games".to_owned(), None),
        (format!("/v1/games/{id}"), Some(&seat.token)),
        (format!("/v1/games/{id}/log"), Some(&seat.token)),
        ("/openapi.json".to_owned(), None),
        ("/healthz".to_owned(), None),
        ("/readyz".to_owned(), None),
    ] {
        let send = |method: reqwest::Method| {
            let mut req = app.client.request(method, app.url(&path));
            if let Some(token) = token {
                req = req.bearer_auth(token);
            }
            req.send()
        };
        let get = send(reqwest::Method::GET).await.unwrap();
        let head = send(reqwest::Method::HEAD).await.unwrap();
        assert_eq!(head.status(), get.status(), "{path}");
        for name in ["content-type", "content-length", "etag", "vary"] {
            assert_eq!(
                head.headers().get(name),
                get.headers().get(name),
                "{path}: {name}"
            );
        }
        assert!(head.bytes().await.unwrap().is_empty(), "{path}: a body");
        assert!(!get.bytes().await.unwrap().is_empty(), "{path}");
    }
    // The stream's head comes at once, and leaves the connection free for the next
    // request (one connection: the next request must reuse it).
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .pool_max_idle_per_host(1)
        .build()
        .unwrap();
    let head = client
        .head(app.url(&format!("/v1/games/{id}/events")))
        .send()
        .await
        .unwrap();
    assert_eq!(head.status().as_u16(), 200);
    assert_eq!(head.headers()["content-type"], "text/event-stream");
    assert!(head.bytes().await.unwrap().is_empty());
    let next = client.get(app.url("/healthz")).send().await;
    assert!(
        next.is_ok_and(|res| res.status().is_success()),
        "the connection is still held by the stream"
    );
}

#[tokio::test]
async fn answers_that_differ_by_seat_token_say_vary_authorization() {
    let app = spawn_app().await;
    let (id, players) = app.start_game(json!({"preset": "classic"})).await;
    let token = players[0].token.as_str();
    let varies = |res: &reqwest::Response| list(res, "vary").contains(&"authorization".to_owned());

    for path in [format!("/v1/games/{id}"), format!("/v1/games/{id}/log")] {
        // A spectator's answer too: a cache must not hand it to a seat, nor the reverse.
        for who in [Some(token), None] {
            let res = app.get_as(&path, who).await;
            assert_eq!(res.status().as_u16(), 200, "{path}");
            assert!(varies(&res), "{path} as {who:?}: {:?}", res.headers());
        }
    }
    // A 304 names what a 200 would have.
    let etag = app
        .get_as(&format!("/v1/games/{id}"), Some(token))
        .await
        .headers()["etag"]
        .clone();
    let res = app
        .client
        .get(app.url(&format!("/v1/games/{id}")))
        .bearer_auth(token)
        .header("if-none-match", etag)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 304);
    assert!(varies(&res), "{:?}", res.headers());
    // The same for everyone: no Vary on the token.
    assert!(!varies(&app.get("/v1/presets").await));
}
