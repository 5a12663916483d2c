//! Starting a real server for a test, and a client to talk to it.

use std::sync::Once;
use std::time::Duration;

use actix_web::dev::ServerHandle;
use domino_server::settings::{LogFormat, Settings};
use domino_server::startup::Application;
use domino_server::telemetry;

/// Longest any test request may take: generous for a loaded CI machine, short enough that
/// a hang fails the test instead of the run.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(10);

/// Quiet by default; `TEST_LOG=1 cargo test` prints every line, debug included. The
/// subscriber is global, so it is installed once for every test of this binary.
fn init_tracing() {
    static TRACING: Once = Once::new();
    TRACING.call_once(|| {
        let installed = if std::env::var_os("TEST_LOG").is_some() {
            telemetry::init(LogFormat::Pretty, "debug", std::io::stdout)
        } else {
            // Still at debug, into a sink: the logging code paths run in every test.
            telemetry::init(LogFormat::Pretty, "debug", std::io::sink)
        };
        installed.expect("tracing installs once");
    });
}

pub struct TestApp {
    pub address: String,
    pub client: reqwest::Client,
    handle: ServerHandle,
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.address)
    }

    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.client
            .get(self.url(path))
            .send()
            .await
            .expect("the request is answered")
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        // The stop command is sent when `stop` is called; not awaiting it only means not
        // waiting for the workers to finish.
        drop(self.handle.stop(false));
    }
}

/// Settings for a test server: any free port on loopback, everything else default.
pub fn test_settings() -> Settings {
    Settings {
        bind_addr: "127.0.0.1:0".parse().unwrap(),
        ..Settings::default()
    }
}

/// The real server with the memory store.
pub async fn spawn_app() -> TestApp {
    spawn_app_with(test_settings()).await
}

/// The real server on Redis (`REDIS_URL`, or a local one), with a key prefix of its own
/// so tests never see each other's games.
pub async fn spawn_app_with_redis() -> TestApp {
    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned());
    spawn_app_with(Settings {
        redis_url: Some(url),
        redis_key_prefix: format!("test:{}:", uuid::Uuid::new_v4()),
        ..test_settings()
    })
    .await
}

pub async fn spawn_app_with(settings: Settings) -> TestApp {
    init_tracing();
    let app = Application::build(settings)
        .await
        .expect("the application builds");
    let port = app.port();
    let handle = app.handle();
    tokio::spawn(app.run_until_stopped());
    let client = reqwest::Client::builder()
        .timeout(CLIENT_TIMEOUT)
        // Redirects are part of what is tested.
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    TestApp {
        address: format!("http://127.0.0.1:{port}"),
        client,
        handle,
    }
}

/// Asserts an answer is a problem with this status and code; returns its body.
pub async fn assert_problem(res: reqwest::Response, status: u16, code: &str) -> serde_json::Value {
    assert_eq!(res.status().as_u16(), status, "status");
    let content_type = res
        .headers()
        .get("content-type")
        .expect("a content type")
        .to_str()
        .unwrap();
    assert_eq!(content_type, "application/problem+json");
    let body: serde_json::Value = res.json().await.expect("a JSON body");
    assert_eq!(body["code"], code, "{body}");
    assert_eq!(body["status"], status, "{body}");
    assert_eq!(
        body["type"],
        format!("https://domino.example/problems/{code}"),
        "{body}"
    );
    assert!(
        body["title"].as_str().is_some_and(|t| !t.is_empty()),
        "{body}"
    );
    assert!(
        body["detail"].as_str().is_some_and(|d| !d.is_empty()),
        "{body}"
    );
    body
}
