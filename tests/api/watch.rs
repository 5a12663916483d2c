//! The pages (`GET /watch`, `GET /watch/{id}`, `GET /players/{name}`,
//! `GET /leaderboard/{preset}`, `GET /tournaments/{id}`): HTML, scripts and styles served
//! by the binary, under a Content-Security-Policy that lets them load and ask nothing but
//! this server. What the pages draw is tested in a browser (scripts/watch-check/).

use serde_json::json;

use crate::helpers::{TestApp, assert_problem, spawn_app};

/// The answer's header, as text.
fn header(res: &reqwest::Response, name: &str) -> String {
    res.headers()
        .get(name)
        .unwrap_or_else(|| panic!("{name} is missing"))
        .to_str()
        .unwrap()
        .to_owned()
}

/// The policy, as directive name -> its sources.
fn csp(res: &reqwest::Response) -> Vec<(String, Vec<String>)> {
    header(res, "content-security-policy")
        .split(';')
        .filter_map(|d| {
            let mut words = d.split_whitespace().map(str::to_owned);
            Some((words.next()?, words.collect()))
        })
        .collect()
}

/// The pages' policy: nothing but this server, no framing (also for browsers before
/// `frame-ancestors`), no sniffing, no `Referer`.
fn assert_only_self(res: &reqwest::Response) {
    assert_only_self_and_styles(res, &[]);
}

/// The same, with inline styles of these exact texts (by their hashes, `'sha256-...'`).
pub(crate) fn assert_only_self_and_styles(res: &reqwest::Response, hashes: &[String]) {
    let policy = csp(res);
    let sources = |name: &str| {
        policy
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s.clone())
            .unwrap_or_else(|| panic!("{name} in {policy:?}"))
    };
    assert_eq!(sources("default-src"), ["'none'"]);
    for directive in ["script-src", "connect-src"] {
        assert_eq!(sources(directive), ["'self'"], "{directive}");
    }
    let styles: Vec<String> = std::iter::once("'self'".to_owned())
        .chain(hashes.iter().cloned())
        .collect();
    assert_eq!(sources("style-src"), styles);
    assert_eq!(sources("frame-ancestors"), ["'none'"]);
    for (name, list) in &policy {
        for source in list {
            let hashed = name == "style-src" && hashes.contains(source);
            assert!(
                source == "'self'" || source == "'none'" || source == "data:" || hashed,
                "{name} allows {source}"
            );
        }
    }
    assert_eq!(header(res, "x-frame-options"), "DENY");
    assert_eq!(header(res, "x-content-type-options"), "nosniff");
    assert_eq!(header(res, "referrer-policy"), "no-referrer");
}

/// Every `/watch/assets/...` file the text names (`src`, `href`, `import ... from`).
fn assets_named(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for quote in ['"', '\''] {
        for piece in text.split(quote) {
            let name = piece
                .strip_prefix("/watch/assets/")
                .or_else(|| piece.strip_prefix("./"))
                .filter(|n| n.ends_with(".mjs") || n.ends_with(".css"));
            if let Some(name) = name
                && !name.contains('/')
            {
                found.push(name.to_owned());
            }
        }
    }
    found
}

async fn game(app: &TestApp) -> String {
    let (id, _) = app
        .create_game(json!({"preset": "all_fives", "bots": [{"seat": 1, "level": "greedy"}]}))
        .await;
    id
}

#[tokio::test]
async fn a_game_s_watch_page_is_html_that_may_load_and_ask_only_its_own_server() {
    let app = spawn_app().await;
    let id = game(&app).await;
    let res = app.get(&format!("/watch/{id}")).await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(header(&res, "content-type"), "text/html; charset=utf-8");
    assert_only_self(&res);
    let page = res.text().await.unwrap();
    assert!(
        !page.contains("http://") && !page.contains("https://") && !page.contains("//cdn"),
        "{page}"
    );
    assert!(page.contains("/watch/assets/game.mjs"), "{page}");
    // No inline script: the policy would refuse it.
    assert!(!page.contains("<script>"), "{page}");
}

#[tokio::test]
async fn every_script_and_stylesheet_of_the_pages_is_served_with_its_type() {
    let app = spawn_app().await;
    let id = game(&app).await;
    let mut queue = Vec::new();
    for page in [
        format!("/watch/{id}"),
        "/watch".to_owned(),
        "/players/ann".to_owned(),
        "/leaderboard/all_fives".to_owned(),
        "/tournaments/9b2d5c0e-4c83-4bb5-9a43-5f2a1f0e6a11".to_owned(),
        "/leagues/9b2d5c0e-4c83-4bb5-9a43-5f2a1f0e6a11".to_owned(),
        "/".to_owned(),
        "/tournaments".to_owned(),
        "/leagues".to_owned(),
        "/leaderboard".to_owned(),
    ] {
        queue.extend(assets_named(&app.get(&page).await.text().await.unwrap()));
    }
    let mut served = Vec::new();
    while let Some(name) = queue.pop() {
        if served.contains(&name) {
            continue;
        }
        let res = app.get(&format!("/watch/assets/{name}")).await;
        assert_eq!(res.status().as_u16(), 200, "{name}");
        let want = if name.ends_with(".css") {
            "text/css; charset=utf-8"
        } else {
            "text/javascript; charset=utf-8"
        };
        assert_eq!(header(&res, "content-type"), want, "{name}");
        assert_only_self(&res);
        let text = res.text().await.unwrap();
        // The SVG namespace is a name, not an address anything is fetched from.
        let addresses = text.replace("'http://www.w3.org/2000/svg'", "");
        assert!(
            !addresses.contains("http://") && !addresses.contains("https://"),
            "{name} names another origin"
        );
        queue.extend(assets_named(&text));
        served.push(name);
    }
    for module in [
        "game.mjs",
        "lobby.mjs",
        "geometry.mjs",
        "table.mjs",
        "scene.mjs",
        "player.mjs",
        "leaderboard.mjs",
        "chart.mjs",
        "tournament.mjs",
        "league.mjs",
        "home.mjs",
        "tournaments.mjs",
        "leagues.mjs",
        "leaderboards.mjs",
        "lists.mjs",
        "names.mjs",
        "watch.css",
    ] {
        assert!(served.iter().any(|s| s == module), "{module} in {served:?}");
    }
}

#[tokio::test]
async fn an_unknown_game_id_still_gets_the_page_which_says_so_itself() {
    let app = spawn_app().await;
    let res = app.get("/watch/9b2d5c0e-4c83-4bb5-9a43-5f2a1f0e6a11").await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(header(&res, "content-type"), "text/html; charset=utf-8");
}

#[tokio::test]
async fn an_address_that_is_no_game_id_or_no_file_of_the_pages_is_a_not_found_problem() {
    let app = spawn_app().await;
    assert_problem(app.get("/watch/not-a-game").await, 404, "not_found").await;
    assert_problem(app.get("/watch/assets/secrets.mjs").await, 404, "not_found").await;
    assert_problem(
        app.get("/watch/assets/../Cargo.toml").await,
        404,
        "not_found",
    )
    .await;
}

#[tokio::test]
async fn the_lobby_page_is_html_under_the_same_policy() {
    let app = spawn_app().await;
    let res = app.get("/watch").await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(header(&res, "content-type"), "text/html; charset=utf-8");
    assert_only_self(&res);
    assert!(
        res.text()
            .await
            .unwrap()
            .contains("/watch/assets/lobby.mjs")
    );
}

#[tokio::test]
async fn the_home_page_and_the_tournament_and_leaderboard_indexes_are_html_under_the_same_policy() {
    let app = spawn_app().await;
    for (path, module) in [
        ("/", "home.mjs"),
        ("/tournaments", "tournaments.mjs"),
        ("/leagues", "leagues.mjs"),
        ("/leaderboard", "leaderboards.mjs"),
    ] {
        let res = app.get(path).await;
        assert_eq!(res.status().as_u16(), 200, "{path}");
        assert_eq!(header(&res, "content-type"), "text/html; charset=utf-8");
        assert_only_self(&res);
        let page = res.text().await.unwrap();
        assert!(page.contains(&format!("/watch/assets/{module}")), "{path}");
    }
}

#[tokio::test]
async fn the_api_document_tells_its_readers_where_to_watch_a_game() {
    let app = spawn_app().await;
    let doc: serde_json::Value = app.get("/openapi.json").await.json().await.unwrap();
    let description = doc["info"]["description"].as_str().unwrap();
    assert!(
        description.contains("/watch/{id}") && description.contains("#token="),
        "{description}"
    );
}

#[tokio::test]
async fn a_players_page_and_a_leaderboards_are_html_under_the_same_policy() {
    let app = spawn_app().await;
    // Any name and any preset get the page, which says itself when there is none.
    for (path, module) in [
        ("/players/ann", "player.mjs"),
        ("/players/no%20such%20player", "player.mjs"),
        ("/leaderboard/all_fives", "leaderboard.mjs"),
        ("/leaderboard/chess", "leaderboard.mjs"),
    ] {
        let res = app.get(path).await;
        assert_eq!(res.status().as_u16(), 200, "{path}");
        assert_eq!(header(&res, "content-type"), "text/html; charset=utf-8");
        assert_only_self(&res);
        let page = res.text().await.unwrap();
        assert!(page.contains(&format!("/watch/assets/{module}")), "{path}");
        assert!(
            !page.contains("<script>") && !page.contains("https://"),
            "{path}"
        );
    }
}

/// A round robin named `name`, made by a new player: its id.
async fn tournament_named(app: &TestApp, name: &str) -> String {
    tournament_named_by(app, name, "tina").await
}

async fn tournament_named_by(app: &TestApp, name: &str, creator: &str) -> String {
    let (_, key) = app.new_player(creator).await;
    let body = json!({"name": name, "preset": "block", "format": "round_robin", "levels": ["random", "greedy"]});
    let res = app.post_as("/v1/tournaments", &key, Some(&body)).await;
    assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
    let made: serde_json::Value = res.json().await.unwrap();
    made["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_tournaments_page_is_html_under_the_same_policy_and_answers_head_without_a_body() {
    let app = spawn_app().await;
    let id = tournament_named(&app, "Friday fives").await;
    let path = format!("/tournaments/{id}");
    let res = app.get(&path).await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(header(&res, "content-type"), "text/html; charset=utf-8");
    assert_eq!(header(&res, "cache-control"), "no-cache");
    assert_only_self(&res);
    let length = header(&res, "content-length");
    let page = res.text().await.unwrap();
    assert!(page.contains("/watch/assets/tournament.mjs"), "{page}");
    assert!(
        !page.contains("<script>") && !page.contains("http://") && !page.contains("https://"),
        "{page}"
    );
    let head = app.client.head(app.url(&path)).send().await.unwrap();
    assert_eq!(head.status().as_u16(), 200);
    assert_eq!(header(&head, "content-type"), "text/html; charset=utf-8");
    assert_eq!(header(&head, "content-length"), length);
    assert_only_self(&head);
    assert!(head.bytes().await.unwrap().is_empty());
}

#[tokio::test]
async fn an_unknown_tournament_id_gets_the_page_which_says_so_and_no_id_is_a_not_found_problem() {
    let app = spawn_app().await;
    let unknown = "9b2d5c0e-4c83-4bb5-9a43-5f2a1f0e6a11";
    // What the page reads to say so.
    assert_problem(
        app.get(&format!("/v1/tournaments/{unknown}")).await,
        404,
        "not_found",
    )
    .await;
    let res = app.get(&format!("/tournaments/{unknown}")).await;
    assert_eq!(res.status().as_u16(), 200);
    assert_only_self(&res);
    assert_problem(app.get("/tournaments/friday-fives").await, 404, "not_found").await;
    let head = app
        .client
        .head(app.url("/tournaments/friday-fives"))
        .send()
        .await
        .unwrap();
    assert_eq!(head.status().as_u16(), 404);
}

#[tokio::test]
async fn a_tournament_named_as_markup_never_has_its_name_written_into_its_page() {
    let app = spawn_app().await;
    let name = "<img src=x onerror=alert(1)>";
    let id = tournament_named(&app, name).await;
    // The page is the same bytes for every tournament: its script writes the name as text
    // (scripts/watch-check/ checks that in a browser), so no name can become markup here.
    let page = app
        .get(&format!("/tournaments/{id}"))
        .await
        .text()
        .await
        .unwrap();
    assert!(
        !page.contains("<img") && !page.contains("onerror"),
        "{page}"
    );
    let other = tournament_named_by(&app, "Friday fives", "tom").await;
    assert_eq!(
        page,
        app.get(&format!("/tournaments/{other}"))
            .await
            .text()
            .await
            .unwrap()
    );
    // The name reaches the page's script as JSON, as it was given.
    let read: serde_json::Value = app
        .get(&format!("/v1/tournaments/{id}"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(read["name"], name);
    // Players, whose names the page shows too, cannot be named so at all.
    let res = app
        .post_json("/v1/players", &json!({"name": "<img src=x>"}))
        .await;
    let problem = assert_problem(res, 400, "bad_request").await;
    assert!(
        problem["detail"].as_str().unwrap().starts_with("name:"),
        "{problem}"
    );
}

#[tokio::test]
async fn a_leagues_page_is_html_under_the_same_policy_and_an_unknown_one_says_so_itself() {
    let app = spawn_app().await;
    let (_, key) = app.new_player("lena").await;
    let body =
        json!({"name": "<img src=x onerror=alert(1)>", "preset": "block", "levels": ["greedy"]});
    let res = app.post_as("/v1/leagues", &key, Some(&body)).await;
    assert_eq!(res.status().as_u16(), 201);
    let made: serde_json::Value = res.json().await.unwrap();
    let unknown = "9b2d5c0e-4c83-4bb5-9a43-5f2a1f0e6a11";
    let mut pages = Vec::new();
    for id in [made["id"].as_str().unwrap(), unknown] {
        let path = format!("/leagues/{id}");
        let res = app.get(&path).await;
        assert_eq!(res.status().as_u16(), 200, "{path}");
        assert_eq!(header(&res, "content-type"), "text/html; charset=utf-8");
        assert_eq!(header(&res, "cache-control"), "no-cache");
        assert_only_self(&res);
        let page = res.text().await.unwrap();
        assert!(page.contains("/watch/assets/league.mjs"), "{page}");
        // The same bytes for every league: its script writes the name as text.
        assert!(
            !page.contains("<script>") && !page.contains("<img") && !page.contains("https://"),
            "{page}"
        );
        pages.push(page);
    }
    assert_eq!(pages[0], pages[1]);
    // What the page reads to say there is no such league.
    assert_problem(
        app.get(&format!("/v1/leagues/{unknown}")).await,
        404,
        "not_found",
    )
    .await;
    assert_problem(app.get("/leagues/fives").await, 404, "not_found").await;
    let head = app
        .client
        .head(app.url(&format!("/leagues/{unknown}")))
        .send()
        .await
        .unwrap();
    assert_eq!(head.status().as_u16(), 200);
    assert_only_self(&head);
    assert!(head.bytes().await.unwrap().is_empty());
}
