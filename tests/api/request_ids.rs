use crate::helpers::spawn_app;

fn request_id(res: &reqwest::Response) -> String {
    res.headers()
        .get("x-request-id")
        .expect("an X-Request-Id header")
        .to_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn every_answer_carries_a_request_id() {
    let app = spawn_app().await;
    for path in [
        "/healthz",
        "/readyz",
        "/metrics",
        "/openapi.json",
        "/swagger-ui/",
        "/swagger-ui",
        "/nope",
    ] {
        let res = app.get(path).await;
        let id = request_id(&res);
        assert!(
            uuid::Uuid::parse_str(&id).is_ok_and(|u| u.get_version_num() == 4),
            "{path}: {id}"
        );
    }
    let res = app.client.put(app.url("/healthz")).send().await.unwrap();
    request_id(&res);
}

#[tokio::test]
async fn each_request_gets_its_own_id() {
    let app = spawn_app().await;
    let first = request_id(&app.get("/healthz").await);
    let second = request_id(&app.get("/healthz").await);
    assert_ne!(first, second);
}

#[tokio::test]
async fn a_sane_incoming_request_id_is_kept() {
    let app = spawn_app().await;
    let res = app
        .client
        .get(app.url("/healthz"))
        .header("X-Request-Id", "lb-7f3a_01")
        .send()
        .await
        .unwrap();
    assert_eq!(request_id(&res), "lb-7f3a_01");
}

#[tokio::test]
async fn an_unsafe_or_overlong_incoming_request_id_is_replaced() {
    let app = spawn_app().await;
    for incoming in ["has spaces", "semi;colon", &"x".repeat(65), ""] {
        let res = app
            .client
            .get(app.url("/healthz"))
            .header("X-Request-Id", incoming)
            .send()
            .await
            .unwrap();
        let id = request_id(&res);
        assert_ne!(id, incoming);
        assert!(uuid::Uuid::parse_str(&id).is_ok(), "{id}");
    }
}
