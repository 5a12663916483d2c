//! The committed `openapi/openapi.json` is what the server serves. When the code changes
//! the document, run `UPDATE_OPENAPI=1 cargo test --test openapi` and commit the file.

use std::path::PathBuf;
use std::time::Duration;

use domino_server::settings::Settings;
use domino_server::startup::Application;

#[tokio::test]
async fn committed_openapi_document_matches_the_served_one() {
    let app = Application::build(Settings {
        bind_addr: "127.0.0.1:0".parse().unwrap(),
        ..Settings::default()
    })
    .await
    .expect("the application builds");
    let url = format!("http://127.0.0.1:{}/openapi.json", app.port());
    let handle = app.handle();
    tokio::spawn(app.run_until_stopped());

    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let res = client
        .get(&url)
        .send()
        .await
        .expect("the document is served");
    assert_eq!(res.status().as_u16(), 200);
    let served = res.text().await.expect("the document is read");
    handle.stop().await;
    serde_json::from_str::<serde_json::Value>(&served).expect("the document is JSON");
    // Compared as text, so the committed file also keeps the served key order.
    let served = format!("{}\n", served.trim_end());

    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("openapi/openapi.json");
    if std::env::var_os("UPDATE_OPENAPI").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &served).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == served,
        "openapi/openapi.json differs from the document the server serves.\n\
         Run `UPDATE_OPENAPI=1 cargo test --test openapi` and commit the result."
    );
}
