//! The server binary as a child process on Redis, for the tests where a process dies:
//! SIGKILL, with no graceful shutdown and nothing flushed.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::proxy::redis_url;

/// The server binary on Redis under a key prefix, killed with SIGKILL on drop.
pub struct ChildServer {
    child: Child,
    /// `http://127.0.0.1:port`.
    pub base: String,
}

impl ChildServer {
    /// Starts the binary on Redis under `prefix` and waits until it listens.
    pub fn start(prefix: &str) -> ChildServer {
        ChildServer::start_with(prefix, &[])
    }

    /// [`ChildServer::start`], with these settings (`NAME`, value) in its environment.
    pub fn start_with(prefix: &str, settings: &[(&str, &str)]) -> ChildServer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_domino-server"))
            .envs(settings.iter().copied())
            .env("BIND_ADDR", "127.0.0.1:0")
            .env("REDIS_URL", redis_url())
            // scripts/test.sh also exports a cluster's nodes; this server is on one Redis.
            .env_remove("REDIS_CLUSTER_NODES")
            .env("REDIS_KEY_PREFIX", prefix)
            .env("LOG_FORMAT", "json")
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the server binary starts");
        // Find the port in the "listening" line, then keep draining the log so the
        // server never blocks on a full pipe.
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let addr = loop {
            let line = lines
                .next()
                .expect("the server logs that it listens")
                .unwrap();
            if line.contains("\"listening\"") {
                let log: Value = serde_json::from_str(&line).unwrap();
                break log["addr"].as_str().expect("an addr").to_owned();
            }
        };
        std::thread::spawn(move || lines.for_each(drop));
        ChildServer {
            child,
            base: format!("http://{addr}"),
        }
    }

    /// SIGKILL (`Child::kill` on Unix): no graceful shutdown, no flush.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for ChildServer {
    fn drop(&mut self) {
        self.kill();
    }
}
