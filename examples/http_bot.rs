//! A complete bot that plays over the public HTTP API only: plain JSON over HTTP, nothing
//! from this crate. Use it as a template for a bot in any language (see docs/bots.md).
//!
//! `cargo run --example http_bot -- --server http://127.0.0.1:8080 [--game <id>]
//!  [--preset all_fives] [--opponent greedy] [--name mybot]`
//!
//! Without `--game` it creates a two-seat game with a built-in bot in seat 1 and takes
//! seat 0; with `--game` it takes the lowest free seat of that game. Then it plays until
//! the match is over and prints the result.
//!
//! The loop: wait on the event stream until an event says it is our turn, fetch our view,
//! pick one of its `legal_moves`, post it, repeat. Built-in bots move inside the request
//! that hands them the turn, so the answer to our move may already be our turn again.

use std::time::Duration;

use clap::Parser;
use serde::{Deserialize, Serialize};

type Error = Box<dyn std::error::Error + Send + Sync>;

#[derive(Parser, Debug, Clone)]
#[command(about = "An example bot that plays a whole match over the HTTP API")]
pub struct Args {
    /// Base URL of the server.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    pub server: String,
    /// Join this game instead of creating one.
    #[arg(long)]
    pub game: Option<String>,
    /// Preset of the game created (without --game).
    #[arg(long, default_value = "all_fives")]
    pub preset: String,
    /// Built-in opponent's level (random, greedy, expert) for the game created.
    #[arg(long, default_value = "greedy")]
    pub opponent: String,
    /// Our name at the table.
    #[arg(long, default_value = "http_bot")]
    pub name: String,
}

// ----- The JSON we read: only the fields this bot needs (serde skips the rest). -----

/// `POST /v1/games/{id}/seats` answers with our seat, its secret token and our view.
#[derive(Deserialize)]
struct SeatGranted {
    seat: u8,
    token: String,
    view: View,
}

/// Our view of the game (`GET /v1/games/{id}` with our token, or a move's answer).
#[derive(Deserialize, Debug)]
pub struct View {
    pub game_id: String,
    pub version: u64,
    pub status: String, // "waiting" | "playing" | "finished"
    pub your_turn: bool,
    pub legal_moves: Vec<LegalMove>,
    pub rules: Rules,
    pub scores: Vec<i32>,
    pub result: Option<MatchResult>,
}

/// One entry of `legal_moves`. It is also a valid move body: we post it back as it is.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct LegalMove {
    #[serde(rename = "type")]
    pub kind: String, // "play" | "draw" | "pass" | "muggins"
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tile: Option<String>, // "5-3"
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end: Option<String>, // "left" | "right" | "up" | "down"
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claim: Option<u16>, // muggins rules: the points claimed with the play
    #[serde(default)]
    pub points: u16, // what the move scores (the server ignores it in a body)
}

#[derive(Deserialize, Debug)]
pub struct Rules {
    pub muggins: bool, // points must be claimed with the play, or opponents may take them
}

#[derive(Deserialize, Debug, Clone)]
pub struct MatchResult {
    pub winner: Option<u8>, // a seat (a team under team rules), or null for a draw
    pub scores: Vec<i32>,
}

/// The `data:` of one Server-Sent Event: public facts about a new version.
#[derive(Deserialize)]
struct VersionEvent {
    version: u64,
    status: String,
    turn: Option<u8>,
    moves: Vec<SeatMove>,
}

#[derive(Deserialize)]
struct SeatMove {
    seat: u8,
    #[serde(rename = "move")]
    mv: LegalMove,
}

/// An error answer (`application/problem+json`): `code` says what went wrong.
#[derive(Deserialize)]
struct Problem {
    code: String,
    detail: String,
}

/// What a finished run reports.
#[derive(Debug)]
pub struct Summary {
    pub game_id: String,
    pub seat: u8,
    pub moves_made: usize,
    pub final_view: View,
}

// ----- Choosing a move -----

/// Take muggins points whenever offered; else the play scoring most (claimed, so nobody
/// can take the points), then the heaviest tile (to shed pips); a draw or pass last.
fn choose(view: &View) -> Option<LegalMove> {
    let moves = &view.legal_moves;
    if let Some(m) = moves.iter().find(|m| m.kind == "muggins") {
        return Some(m.clone());
    }
    if !view.your_turn {
        return None;
    }
    let weight = |m: &LegalMove| -> u32 {
        let tile = m.tile.as_deref().unwrap_or("");
        tile.split('-').filter_map(|n| n.parse::<u32>().ok()).sum()
    };
    let rank = |m: &LegalMove| (m.kind == "play", m.points, m.claim.is_some(), weight(m));
    moves.iter().max_by_key(|m| rank(m)).cloned()
}

// ----- HTTP -----

/// Sends a request, retrying on network errors, 429 and 5xx with exponential backoff
/// (or the server's `Retry-After`). `build` makes the same request every time, so a
/// retried move carries the same `Idempotency-Key` and body: the server applies it once.
async fn send(build: impl Fn() -> reqwest::RequestBuilder) -> Result<reqwest::Response, Error> {
    let mut backoff = Duration::from_millis(100);
    for _ in 0..8 {
        let wait = match build().send().await {
            Ok(res) if res.status() == 429 || res.status().is_server_error() => {
                let retry_after = res.headers().get("retry-after");
                let secs = retry_after.and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
                secs.map(Duration::from_secs).unwrap_or(backoff)
            }
            Ok(res) => return Ok(res),
            Err(e) => {
                eprintln!("network error, retrying: {e}");
                backoff
            }
        };
        tokio::time::sleep(wait).await;
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
    Err("the server kept failing; giving up".into())
}

/// Passes a 2xx answer through; turns an error answer into an error naming its code.
async fn ok(res: reqwest::Response) -> Result<reqwest::Response, Error> {
    if res.status().is_success() {
        return Ok(res);
    }
    let status = res.status();
    let p: Problem = res.json().await?;
    Err(format!("{status} {}: {}", p.code, p.detail).into())
}

/// Reads a 2xx answer as JSON (see [`ok`] for the others).
async fn json<T: for<'de> Deserialize<'de>>(res: reqwest::Response) -> Result<T, Error> {
    Ok(ok(res).await?.json().await?)
}

struct Bot {
    http: reqwest::Client,
    base: String, // e.g. http://127.0.0.1:8080/v1/games/<id>
    seat: u8,
    token: String,
    muggins: bool,
    moves_made: usize,
}

impl Bot {
    /// Our view: the bearer token makes the server show our hand and legal moves.
    async fn view(&self) -> Result<View, Error> {
        json(send(|| self.http.get(&self.base).bearer_auth(&self.token)).await?).await
    }

    /// Plays while there is something to play; returns the last view seen.
    async fn act(&mut self, mut view: View) -> Result<View, Error> {
        while let Some(mv) = choose(&view) {
            let key = uuid::Uuid::new_v4().to_string(); // a fresh key per intended move
            let url = format!("{}/moves", self.base);
            let post = || {
                let req = self.http.post(&url).bearer_auth(&self.token).json(&mv);
                req.header("Idempotency-Key", &key)
            };
            let res = send(post).await?;
            if res.status() == 409 {
                // not_your_turn or version_conflict: the game moved on. Look again.
                let p: Problem = res.json().await?;
                eprintln!("409 {}: re-reading the view", p.code);
                view = self.view().await?;
                continue;
            }
            // The answer is our new view (after any built-in bots moved) plus "events".
            // If a bot handed the turn straight back, `your_turn` is already true.
            view = json(res).await?;
            self.moves_made += 1;
        }
        Ok(view)
    }

    /// Whether an event may give us something to do: our turn, or (muggins rules) an
    /// opponent's play that may have left points for us to take out of turn.
    fn may_act(&self, event: &VersionEvent) -> bool {
        let opponent_played = |m: &SeatMove| m.seat != self.seat && m.mv.kind == "play";
        event.turn == Some(self.seat) || (self.muggins && event.moves.iter().any(opponent_played))
    }

    /// Follows the event stream until the match is over, acting whenever the game may
    /// want a move from us. `seen`: the last version handled; a new stream resumes after it.
    async fn follow(&mut self, mut seen: u64) -> Result<View, Error> {
        let url = format!("{}/events", self.base);
        loop {
            let req = || self.http.get(&url).header("Last-Event-ID", seen);
            let mut res = ok(send(req).await?).await?;
            let resumed_at = seen;
            let mut buf: Vec<u8> = Vec::new(); // bytes received, not yet a whole line
            let mut data = String::new(); // the `data:` of the event being read
            // `chunk()` gives the body piece by piece, as the server sends it. A piece may
            // end mid-line, so whole lines are cut from `buf` as they complete.
            while let Ok(Some(chunk)) = res.chunk().await {
                buf.extend_from_slice(&chunk);
                while let Some(newline) = buf.iter().position(|&b| b == b'\n') {
                    let line: Vec<u8> = buf.drain(..=newline).collect();
                    let line = String::from_utf8_lossy(&line);
                    let line = line.trim_end_matches(['\n', '\r']);
                    if let Some(value) = line.strip_prefix("data:") {
                        if !data.is_empty() {
                            data.push('\n'); // several data lines make one value
                        }
                        data.push_str(value.strip_prefix(' ').unwrap_or(value));
                        continue;
                    }
                    // Other lines: `id:` (the version, also in the data), `event:`,
                    // `retry:`, and `:` comments (the server's keep-alives): all skipped.
                    if !line.is_empty() || data.is_empty() {
                        continue;
                    }
                    // A blank line ends an event.
                    let event: VersionEvent = serde_json::from_str(&data)?;
                    data.clear();
                    if event.version <= seen {
                        continue; // already handled (our own move's answer showed it)
                    }
                    seen = event.version;
                    if event.status == "finished" {
                        return self.view().await;
                    }
                    if self.may_act(&event) {
                        let view = self.act(self.view().await?).await?;
                        if view.status == "finished" {
                            return Ok(view);
                        }
                        seen = seen.max(view.version);
                    }
                }
            }
            // The stream ended or broke. Look at the game (a version may have been
            // missed), then reconnect: `Last-Event-ID` resumes after `seen`.
            let view = self.act(self.view().await?).await?;
            if view.status == "finished" {
                return Ok(view);
            }
            if seen == resumed_at {
                // Nothing came through this time: pause rather than hammer the server.
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            seen = seen.max(view.version);
        }
    }
}

/// Creates a game (unless `args.game` names one), takes a seat and plays to the end.
pub async fn run(args: Args) -> Result<Summary, Error> {
    let http = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(5))
        // The event stream sends a keep-alive every 15 s: a longer silence is a dead line.
        .read_timeout(Duration::from_secs(60))
        .build()?;
    let server = args.server.trim_end_matches('/');
    // Creating and seating are not retried idempotently: a retry after a lost answer may
    // leave an unused game, or find the seat taken (by us). Only moves have keys.
    let game_id = match args.game {
        Some(id) => id,
        None => {
            let body = serde_json::json!({
                "preset": args.preset,
                "seats": 2,
                "bots": [{"seat": 1, "level": args.opponent}],
            });
            let res = send(|| http.post(format!("{server}/v1/games")).json(&body)).await?;
            json::<View>(res).await?.game_id
        }
    };
    let base = format!("{server}/v1/games/{game_id}");
    let body = serde_json::json!({"name": args.name});
    let res = send(|| http.post(format!("{base}/seats")).json(&body)).await?;
    let granted: SeatGranted = json(res).await?;
    println!("game {game_id}: playing seat {}", granted.seat);
    println!("watch it at {server}/watch/{game_id}");
    let mut bot = Bot {
        http,
        base,
        seat: granted.seat,
        token: granted.token,
        muggins: granted.view.rules.muggins,
        moves_made: 0,
    };
    // Taking the last seat starts the game: it may be our move already.
    let mut view = bot.act(granted.view).await?;
    if view.status != "finished" {
        view = bot.follow(view.version).await?;
    }
    Ok(Summary {
        game_id,
        seat: bot.seat,
        moves_made: bot.moves_made,
        final_view: view,
    })
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let summary = run(Args::parse()).await?;
    let view = &summary.final_view;
    let winner = match view.result.as_ref().and_then(|r| r.winner) {
        Some(w) if w == summary.seat => format!("seat {w} (us)"),
        Some(w) => format!("seat {w}"),
        None => "nobody (a draw)".to_owned(),
    };
    println!(
        "game {} finished: scores {:?}, winner {winner}; we made {} moves",
        summary.game_id, view.scores, summary.moves_made
    );
    Ok(())
}
