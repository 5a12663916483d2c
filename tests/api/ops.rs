use std::time::{Duration, Instant};

use domino_server::settings::Settings;

use crate::helpers::{
    assert_problem, spawn_app, spawn_app_with, spawn_app_with_cluster, spawn_app_with_redis,
    test_settings,
};

#[tokio::test]
async fn healthz_answers_ok() {
    let app = spawn_app().await;
    let res = app.get("/healthz").await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(res.headers()["cache-control"], "no-store");
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(body, serde_json::json!({"status": "ok"}));
}

#[tokio::test]
async fn readyz_answers_ok_with_the_memory_store() {
    let app = spawn_app().await;
    let res = app.get("/readyz").await;
    assert_eq!(res.status().as_u16(), 200);
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(
        body,
        serde_json::json!({"status": "ready", "store": "memory", "degraded": []})
    );
}

#[tokio::test]
async fn readyz_answers_ok_when_redis_answers() {
    let app = spawn_app_with_redis().await;
    let res = app.get("/readyz").await;
    assert_eq!(res.status().as_u16(), 200);
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(body["store"], "redis");
}

#[tokio::test]
async fn readyz_says_the_store_is_a_redis_cluster_when_it_is_one() {
    let app = spawn_app_with_cluster().await;
    let res = app.get("/readyz").await;
    assert_eq!(res.status().as_u16(), 200);
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(
        body,
        serde_json::json!({"status": "ready", "store": "redis-cluster", "degraded": []})
    );
}

#[tokio::test]
async fn readyz_answers_503_promptly_when_no_cluster_node_answers() {
    let timeout = Duration::from_millis(300);
    let started = Instant::now();
    let app = spawn_app_with(Settings {
        redis_cluster_nodes: vec![
            "redis://127.0.0.1:1".to_owned(),
            "redis://127.0.0.1:2".to_owned(),
        ],
        store_timeout: timeout,
        ..test_settings()
    })
    .await;
    // Generous bounds for a loaded machine: what they rule out is waiting on the cluster
    // for good (the client's own timeout is 10 s).
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "the server starts without its cluster"
    );
    let started = Instant::now();
    let res = app.get("/readyz").await;
    let took = started.elapsed();
    assert_problem(res, 503, "store_unavailable").await;
    assert!(took < Duration::from_secs(8), "took {took:?}");
    // And a game cannot be created (the cluster store is in use, not memory).
    let res = app
        .post_json("/v1/games", &serde_json::json!({"preset": "block"}))
        .await;
    assert_problem(res, 503, "store_unavailable").await;
}

#[tokio::test]
async fn readyz_answers_503_when_redis_is_unreachable() {
    let timeout = Duration::from_millis(300);
    let app = spawn_app_with(Settings {
        // Port 1 (tcpmux) has no Redis anywhere.
        redis_url: Some("redis://127.0.0.1:1".to_owned()),
        store_timeout: timeout,
        ..test_settings()
    })
    .await;

    let started = Instant::now();
    let res = app.get("/readyz").await;
    let took = started.elapsed();
    assert_eq!(res.headers()["retry-after"], "1");
    let body = assert_problem(res, 503, "store_unavailable").await;
    // Generous for a loaded machine: it rules out waiting on Redis for good.
    assert!(took < Duration::from_secs(8), "took {took:?}");
    // Nothing about the connection leaks out.
    assert!(!body.to_string().contains("127.0.0.1"), "{body}");

    // The process itself is fine.
    assert_eq!(app.get("/healthz").await.status().as_u16(), 200);
}

#[tokio::test]
async fn metrics_are_prometheus_text() {
    let app = spawn_app().await;
    app.get("/healthz").await;
    app.get("/no/such/page").await;

    let res = app.get("/metrics").await;
    assert_eq!(res.status().as_u16(), 200);
    let content_type = res.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(
        content_type.starts_with("application/openmetrics-text"),
        "{content_type}"
    );
    let text = res.text().await.unwrap();
    for expected in [
        r#"http_requests_total{method="GET",route="/healthz",status="2xx"} 1"#,
        r#"http_requests_total{method="GET",route="unmatched",status="4xx"} 1"#,
        r#"http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/healthz"} 1"#,
        "# TYPE domino_games_created counter",
        "domino_moves_applied_total 0",
        "domino_store_conflicts_total 0",
    ] {
        assert!(text.contains(expected), "missing {expected} in\n{text}");
    }
    assert!(text.ends_with("# EOF\n"), "{text}");
}

#[tokio::test]
async fn metrics_label_routes_by_pattern_not_path() {
    let app = spawn_app().await;
    for _ in 0..3 {
        app.get("/swagger-ui/swagger-ui.css").await;
    }
    let text = app.get("/metrics").await.text().await.unwrap();
    assert!(
        text.contains(r#"route="/swagger-ui/{_:.*}",status="2xx"} 3"#),
        "{text}"
    );
    assert!(!text.contains("swagger-ui.css"), "{text}");
}
