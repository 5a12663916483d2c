use crate::helpers::{assert_problem, spawn_app};

#[tokio::test]
async fn unknown_route_is_a_404_problem() {
    let app = spawn_app().await;
    let res = app.get("/v1/no-such-thing").await;
    assert_problem(res, 404, "not_found").await;
}

#[tokio::test]
async fn wrong_method_is_a_405_problem_that_says_what_is_allowed() {
    let app = spawn_app().await;
    let res = app.client.delete(app.url("/healthz")).send().await.unwrap();
    assert_eq!(res.headers()["allow"], "GET, HEAD");
    assert_problem(res, 405, "method_not_allowed").await;
}

#[tokio::test]
async fn a_missing_swagger_asset_is_a_404_problem() {
    let app = spawn_app().await;
    let res = app.get("/swagger-ui/no-such-file.js").await;
    assert_problem(res, 404, "not_found").await;
}

#[tokio::test]
async fn an_oversized_body_to_an_unknown_route_is_still_a_problem() {
    let app = spawn_app().await;
    let res = app
        .client
        .post(app.url("/v1/nowhere"))
        .body(vec![b'x'; 100_000])
        .send()
        .await
        .unwrap();
    assert_problem(res, 404, "not_found").await;
}
