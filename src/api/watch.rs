//! The pages a person watches games with: `GET /` the home page (games in play, the latest
//! finished, tournaments, leagues, the leaderboards), `GET /watch` lists the open games
//! and those in play with their players, `GET /watch/{id}` draws one game's table, live
//! from its event stream (with `#token=...` in the fragment, that seat's hand too, played
//! by clicking), `GET /players/{name}` a player's ratings (each with its chart), recent
//! games and leagues, `GET /leaderboard` every preset's top and `GET /leaderboard/{preset}`
//! a preset's leaderboard, a page at a time, `GET /tournaments` every tournament by
//! status, `GET /tournaments/{id}` a tournament's standings, rounds and crosstable, live
//! from its event stream, `GET /leagues` every league, and `GET /leagues/{id}` a league's
//! table, its matches in play and the latest counted, and each entrant's league rating
//! over time, live from its event stream (read every few seconds while that is not open).
//! Plain HTML, CSS and JavaScript modules from `src/api/watch/`, compiled into the binary:
//! the pages need no network beyond this server, and the JavaScript reads the game
//! through the public API like any client.
//!
//! Any well-formed game, tournament or league id, any name and any preset gets its page
//! (the page itself says when there is no such thing): serving it touches no store, so a
//! page load costs nothing but the bytes.

use actix_web::http::header;
use actix_web::{HttpResponse, web};

use crate::api::error::ApiError;
use crate::api::headers::{PAGE_CSP, get_and_head, page_headers};

const GAME_PAGE: &str = include_str!("watch/game.html");
const LOBBY_PAGE: &str = include_str!("watch/lobby.html");
const PLAYER_PAGE: &str = include_str!("watch/player.html");
const LEADERBOARD_PAGE: &str = include_str!("watch/leaderboard.html");
const TOURNAMENT_PAGE: &str = include_str!("watch/tournament.html");
const LEAGUE_PAGE: &str = include_str!("watch/league.html");
const LEAGUES_PAGE: &str = include_str!("watch/leagues.html");
const HOME_PAGE: &str = include_str!("watch/home.html");
const TOURNAMENTS_PAGE: &str = include_str!("watch/tournaments.html");
const LEADERBOARDS_PAGE: &str = include_str!("watch/leaderboards.html");

/// The pages' scripts and styles, by the name they are served under.
const ASSETS: &[(&str, &str, &str)] = &[
    ("watch.css", CSS, include_str!("watch/watch.css")),
    ("game.mjs", JS, include_str!("watch/game.mjs")),
    ("lobby.mjs", JS, include_str!("watch/lobby.mjs")),
    ("api.mjs", JS, include_str!("watch/api.mjs")),
    ("draw.mjs", JS, include_str!("watch/draw.mjs")),
    ("geometry.mjs", JS, include_str!("watch/geometry.mjs")),
    ("table.mjs", JS, include_str!("watch/table.mjs")),
    ("scene.mjs", JS, include_str!("watch/scene.mjs")),
    ("player.mjs", JS, include_str!("watch/player.mjs")),
    ("leaderboard.mjs", JS, include_str!("watch/leaderboard.mjs")),
    ("chart.mjs", JS, include_str!("watch/chart.mjs")),
    ("tournament.mjs", JS, include_str!("watch/tournament.mjs")),
    ("league.mjs", JS, include_str!("watch/league.mjs")),
    ("leagues.mjs", JS, include_str!("watch/leagues.mjs")),
    ("home.mjs", JS, include_str!("watch/home.mjs")),
    ("tournaments.mjs", JS, include_str!("watch/tournaments.mjs")),
    (
        "leaderboards.mjs",
        JS,
        include_str!("watch/leaderboards.mjs"),
    ),
    ("lists.mjs", JS, include_str!("watch/lists.mjs")),
    ("names.mjs", JS, include_str!("watch/names.mjs")),
];
const CSS: &str = "text/css; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";
const HTML: &str = "text/html; charset=utf-8";

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(get_and_head("/", home_page))
        .service(get_and_head("/tournaments", tournaments_page))
        .service(get_and_head("/leagues", leagues_page))
        .service(get_and_head("/leaderboard", leaderboards_page))
        .service(get_and_head("/watch", lobby_page))
        .service(get_and_head("/watch/assets/{name}", asset))
        .service(get_and_head("/watch/{id}", game_page))
        .service(get_and_head("/players/{name}", player_page))
        .service(get_and_head("/leaderboard/{preset}", leaderboard_page))
        .service(get_and_head("/tournaments/{id}", tournament_page))
        .service(get_and_head("/leagues/{id}", league_page));
}

fn page(content_type: &'static str, body: &'static str) -> HttpResponse {
    page_headers(&mut HttpResponse::Ok(), PAGE_CSP)
        .content_type(content_type)
        // Small, and changed with the binary: always revalidated.
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .body(body)
}

/// The home page: games in play, the latest finished, tournaments, the leaderboards.
pub async fn home_page() -> HttpResponse {
    page(HTML, HOME_PAGE)
}

/// Every tournament, by status.
pub async fn tournaments_page() -> HttpResponse {
    page(HTML, TOURNAMENTS_PAGE)
}

/// Every league, newest first.
pub async fn leagues_page() -> HttpResponse {
    page(HTML, LEAGUES_PAGE)
}

/// Every preset's leaderboard, its top players.
pub async fn leaderboards_page() -> HttpResponse {
    page(HTML, LEADERBOARDS_PAGE)
}

/// The lobby page: open games and games in play, each with a link to its table.
pub async fn lobby_page() -> HttpResponse {
    page(HTML, LOBBY_PAGE)
}

/// One game's table. The id must be a game id's shape (else the usual 404 problem).
pub async fn game_page(_id: web::Path<uuid::Uuid>) -> HttpResponse {
    page(HTML, GAME_PAGE)
}

/// A player's page: its ratings with their charts, and its recent games.
pub async fn player_page(_name: web::Path<String>) -> HttpResponse {
    page(HTML, PLAYER_PAGE)
}

/// A preset's leaderboard page.
pub async fn leaderboard_page(_preset: web::Path<String>) -> HttpResponse {
    page(HTML, LEADERBOARD_PAGE)
}

/// A tournament's page. The id must be a tournament id's shape (else the usual 404 problem).
pub async fn tournament_page(_id: web::Path<uuid::Uuid>) -> HttpResponse {
    page(HTML, TOURNAMENT_PAGE)
}

/// A league's page. The id must be a league id's shape (else the usual 404 problem).
pub async fn league_page(_id: web::Path<uuid::Uuid>) -> HttpResponse {
    page(HTML, LEAGUE_PAGE)
}

pub async fn asset(name: web::Path<String>) -> Result<HttpResponse, ApiError> {
    ASSETS
        .iter()
        .find(|(n, _, _)| *n == name.as_str())
        .map(|&(_, content_type, body)| page(content_type, body))
        .ok_or_else(|| ApiError::not_found("no such file of the watch pages"))
}
