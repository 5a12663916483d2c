//! A tournament's creator's tools and the limits around who enters: canceling (registering
//! or running), removing an entrant before the start, the caps on tournaments made and
//! joined at once (no `Retry-After`: a place frees only when something ends), the level
//! copies' ids reserved, the list's count of entrants, and tournament names that show.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use domino_server::service::tournaments::CANCELED_BY_CREATOR;
use domino_server::settings::Settings;

use crate::helpers::{EventStream, TestApp, assert_problem, on_both_stores};

on_both_stores!(
    the_creator_cancels_a_registering_tournament_and_frees_its_place,
    a_running_tournament_canceled_by_its_creator_ends_and_its_game_in_play_goes_on,
    the_creator_removes_an_entrant_by_player_or_level_id_before_the_start_only,
    a_player_joins_a_capped_number_of_tournaments_and_each_end_frees_a_place,
    a_player_cannot_take_the_id_of_a_level_copy_as_its_name,
    the_tournament_list_counts_the_entrants_and_the_tournament_lists_them,
    a_tournament_name_must_show_as_a_seat_name_must,
    a_players_tournaments_are_listed_newest_first_without_those_it_left,
);

async fn create(app: &TestApp, key: &str, body: Value) -> Value {
    let res = app.post_as("/v1/tournaments", key, Some(&body)).await;
    assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
    res.json().await.unwrap()
}

/// A tournament of `key`'s player, registering for an hour, with `levels` entered: its id.
async fn registering(app: &TestApp, key: &str, levels: Value) -> String {
    let body = json!({"name": "Open", "preset": "block", "format": "swiss",
        "starts_at_ms": now_ms() + 3_600_000, "levels": levels});
    create(app, key, body).await["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn tournament(app: &TestApp, id: &str) -> Value {
    let res = app.get(&format!("/v1/tournaments/{id}")).await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    res.json().await.unwrap()
}

async fn join(app: &TestApp, id: &str, key: &str) -> reqwest::Response {
    app.post_as(&format!("/v1/tournaments/{id}/players"), key, None)
        .await
}

async fn joined(app: &TestApp, id: &str, key: &str) {
    let res = join(app, id, key).await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
}

async fn delete(app: &TestApp, path: &str, key: &str) -> reqwest::Response {
    app.client
        .delete(app.url(path))
        .bearer_auth(key)
        .send()
        .await
        .expect("the request is answered")
}

async fn listed(app: &TestApp, status: &str) -> Vec<Value> {
    let res = app
        .get(&format!("/v1/tournaments?status={status}&per_page=100"))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let page: Value = res.json().await.unwrap();
    page["tournaments"].as_array().unwrap().clone()
}

fn ids(list: &[Value]) -> Vec<&str> {
    list.iter().map(|t| t["id"].as_str().unwrap()).collect()
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

fn player_ids(t: &Value) -> Vec<&str> {
    t["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect()
}

/// A refusal at one of the tournament caps: 429 `too_many_tournaments`, its detail naming
/// `setting`, and no `Retry-After` (waiting alone frees nothing).
async fn assert_tournament_cap(res: reqwest::Response, setting: &str) {
    assert!(
        res.headers().get("retry-after").is_none(),
        "no Retry-After: {:?}",
        res.headers()
    );
    let body = assert_problem(res, 429, "too_many_tournaments").await;
    let detail = body["detail"].as_str().unwrap();
    assert!(detail.contains(setting), "{detail}");
    assert!(detail.contains("waiting alone frees nothing"), "{detail}");
}

/// The next event named `name` on `stream`, within `within`.
async fn until_event(stream: &mut EventStream, name: &str, within: Duration) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let event = stream.next(left).await;
        let event = event.unwrap_or_else(|| panic!("no {name} within {within:?}"));
        if event.event.as_deref() == Some(name) {
            return event.data;
        }
    }
}

/// The caps the tests' servers keep: the settings' defaults.
fn per_player_and_joined() -> (usize, usize) {
    let defaults = Settings::default();
    let cap = |c: Option<usize>| c.expect("capped by default");
    (
        cap(defaults.max_tournaments_per_player),
        cap(defaults.max_tournaments_joined),
    )
}

async fn the_creator_cancels_a_registering_tournament_and_frees_its_place(app: TestApp) {
    let (per_player, _) = per_player_and_joined();
    let (_, org) = app.new_player("org").await;
    let (_, ann) = app.new_player("ann").await;
    let made: Vec<String> = {
        let mut made = Vec::new();
        for _ in 0..per_player {
            made.push(registering(&app, &org, json!(["greedy"])).await);
        }
        made
    };
    let body = json!({"name": "One more", "preset": "block", "format": "swiss"});
    let res = app.post_as("/v1/tournaments", &org, Some(&body)).await;
    assert_tournament_cap(res, "MAX_TOURNAMENTS_PER_PLAYER").await;

    let id = &made[0];
    joined(&app, id, &ann).await;
    let mut news = app.player_stream(&ann).await;
    let follow = app
        .client
        .get(app.url(&format!("/v1/tournaments/{id}/events")))
        .send()
        .await
        .unwrap();
    let mut follow = EventStream::of(follow);
    until_event(&mut follow, "standings", Duration::from_secs(5)).await;

    let path = format!("/v1/tournaments/{id}");
    assert_problem(delete(&app, &path, &ann).await, 403, "forbidden").await;
    let res = delete(&app, &path, &org).await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    let canceled: Value = res.json().await.unwrap();
    assert_eq!(canceled["status"], "canceled");
    assert_eq!(canceled["reason"], CANCELED_BY_CREATOR);
    assert_eq!(tournament(&app, id).await["status"], "canceled");

    let told = until_event(&mut follow, "tournament_finished", Duration::from_secs(10)).await;
    assert_eq!(told["tournament"]["status"], "canceled");
    let told = until_event(&mut news, "tournament_finished", Duration::from_secs(10)).await;
    assert_eq!(
        (told["tournament_id"].as_str(), told["status"].as_str()),
        (Some(id.as_str()), Some("canceled"))
    );
    assert!(ids(&listed(&app, "canceled").await).contains(&id.as_str()));
    assert!(!ids(&listed(&app, "registering").await).contains(&id.as_str()));

    // Over: canceling again, or joining, is refused; its creator may make another.
    assert_problem(delete(&app, &path, &org).await, 409, "tournament_closed").await;
    assert_problem(join(&app, id, &ann).await, 409, "tournament_closed").await;
    create(&app, &org, body).await;
    let unknown = format!("/v1/tournaments/{}", uuid::Uuid::new_v4());
    assert_problem(delete(&app, &unknown, &org).await, 404, "not_found").await;
}

async fn a_running_tournament_canceled_by_its_creator_ends_and_its_game_in_play_goes_on(
    app: TestApp,
) {
    let (_, org) = app.new_player("org").await;
    let (_, ann) = app.new_player("ann").await;
    let body = json!({"name": "Short", "preset": "block", "rules": {"target": null, "rounds": 1},
        "format": "round_robin", "duplicate": false, "levels": ["greedy"]});
    let id = create(&app, &org, body).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    joined(&app, &id, &ann).await;
    let mut news = app.player_stream(&ann).await;
    let res = app
        .post_as(&format!("/v1/tournaments/{id}/start"), &org, None)
        .await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    let running: Value = res.json().await.unwrap();
    assert_eq!(running["status"], "running");
    let game = running["pairings"][0]["games"][0]
        .as_str()
        .unwrap()
        .to_owned();
    until_event(&mut news, "tournament_round", Duration::from_secs(10)).await;

    let res = delete(&app, &format!("/v1/tournaments/{id}"), &org).await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    let canceled: Value = res.json().await.unwrap();
    assert_eq!(
        (canceled["status"].as_str(), canceled["reason"].as_str()),
        (Some("canceled"), Some(CANCELED_BY_CREATOR))
    );
    let told = until_event(&mut news, "tournament_finished", Duration::from_secs(10)).await;
    assert_eq!(told["status"], "canceled");

    // Its game goes on to its end, and its result no longer changes the tournament.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let view = app.view(&game, Some(&ann)).await;
        if view["status"] == "finished" {
            break;
        }
        assert!(Instant::now() < deadline, "the game never ended: {view}");
        if view["your_turn"] == true {
            let res = app.post_move(&game, &ann, &view["legal_moves"][0]).await;
            assert!([200, 409].contains(&res.status().as_u16()));
        } else {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    // Not a wait for a result: what is checked must NOT happen (the canceled tournament
    // taking the game's result), so no poll can end early; the game's end pokes it at once.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = tournament(&app, &id).await;
    assert_eq!(after["status"], "canceled");
    assert_eq!(after["round"], 1);
    assert_eq!(after["pairings"], canceled["pairings"], "{after}");
    assert!(after["pairings"][0]["result"].is_null(), "{after}");
    assert!(
        after["players"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["score"] == 0.0),
        "{after}"
    );
}

async fn the_creator_removes_an_entrant_by_player_or_level_id_before_the_start_only(app: TestApp) {
    let (_, org) = app.new_player("org").await;
    let (ann_id, ann) = app.new_player("ann").await;
    let id = registering(&app, &org, json!(["greedy", "greedy", "random"])).await;
    joined(&app, &id, &ann).await;
    let mut all = player_ids(&tournament(&app, &id).await)
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>();
    all.sort();
    let mut expected = vec!["greedy", "greedy-2", "random", &ann_id];
    expected.sort();
    assert_eq!(all, expected);

    let path = |who: &str| format!("/v1/tournaments/{id}/players/{who}");
    assert_problem(
        delete(&app, &path("greedy-2"), &ann).await,
        403,
        "forbidden",
    )
    .await;
    for nobody in ["expert", "greedy-3", "alice"] {
        assert_problem(delete(&app, &path(nobody), &org).await, 404, "not_found").await;
    }
    let res = delete(&app, &path("greedy-2"), &org).await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    let t: Value = res.json().await.unwrap();
    assert!(!player_ids(&t).contains(&"greedy-2"), "{t}");
    assert!(player_ids(&t).contains(&"greedy"), "{t}");
    // Named by any spelling of its UUID, as a player is.
    let hyphenated = uuid::Uuid::parse_str(&ann_id).unwrap().hyphenated();
    let res = delete(&app, &path(&hyphenated.to_string()), &org).await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    let t: Value = res.json().await.unwrap();
    assert_eq!(player_ids(&t), ["greedy", "random"].map(str::to_owned));
    assert_problem(delete(&app, &path(&ann_id), &org).await, 404, "not_found").await;

    // A level entered again takes the number its removed copy left free.
    let again = json!({"level": "greedy"});
    let res = app
        .post_as(&format!("/v1/tournaments/{id}/players"), &org, Some(&again))
        .await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    let t: Value = res.json().await.unwrap();
    assert!(player_ids(&t).contains(&"greedy-2"), "{t}");

    joined(&app, &id, &ann).await;
    let res = app
        .post_as(&format!("/v1/tournaments/{id}/start"), &org, None)
        .await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    assert_problem(
        delete(&app, &path("random"), &org).await,
        409,
        "tournament_closed",
    )
    .await;
    assert_problem(
        delete(&app, &path(&ann_id), &org).await,
        409,
        "tournament_closed",
    )
    .await;
    assert!(player_ids(&tournament(&app, &id).await).contains(&ann_id.as_str()));
}

async fn a_player_joins_a_capped_number_of_tournaments_and_each_end_frees_a_place(app: TestApp) {
    let (per_player, joined_cap) = per_player_and_joined();
    // Enough tournaments for the cap and one more for each way a place frees.
    let wanted = joined_cap + 4;
    let mut creators = Vec::new();
    let mut open = Vec::new();
    while open.len() < wanted {
        let (_, key) = app.new_player(&format!("org{}", creators.len())).await;
        for _ in 0..per_player.min(wanted - open.len()) {
            open.push((registering(&app, &key, json!([])).await, key.clone()));
        }
        creators.push(key);
    }
    let (ann_id, ann) = app.new_player("ann").await;
    let (_, bob) = app.new_player("bob").await;
    for (id, _) in &open[..joined_cap] {
        joined(&app, id, &ann).await;
    }
    let mut next = joined_cap;
    let res = join(&app, &open[next].0, &ann).await;
    assert_tournament_cap(res, "MAX_TOURNAMENTS_JOINED").await;
    assert!(!player_ids(&tournament(&app, &open[next].0).await).contains(&ann_id.as_str()));
    // Another player is not held by ann's cap, and joining again where ann is changes
    // nothing.
    joined(&app, &open[next].0, &bob).await;
    let again = join(&app, &open[0].0, &ann).await;
    assert_problem(again, 409, "already_entered").await;
    assert_tournament_cap(
        join(&app, &open[next].0, &ann).await,
        "MAX_TOURNAMENTS_JOINED",
    )
    .await;

    // Withdrawing frees a place.
    let (first, _) = &open[0];
    let res = delete(&app, &format!("/v1/tournaments/{first}/players/me"), &ann).await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    joined(&app, &open[next].0, &ann).await;
    next += 1;
    assert_tournament_cap(
        join(&app, &open[next].0, &ann).await,
        "MAX_TOURNAMENTS_JOINED",
    )
    .await;

    // So does being removed by a creator.
    let (second, its_creator) = &open[1];
    let res = delete(
        &app,
        &format!("/v1/tournaments/{second}/players/{ann_id}"),
        its_creator,
    )
    .await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    joined(&app, &open[next].0, &ann).await;
    next += 1;
    assert_tournament_cap(
        join(&app, &open[next].0, &ann).await,
        "MAX_TOURNAMENTS_JOINED",
    )
    .await;

    // And a tournament canceled by its creator.
    let (third, its_creator) = &open[2];
    let res = delete(&app, &format!("/v1/tournaments/{third}"), its_creator).await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    joined(&app, &open[next].0, &ann).await;
    next += 1;
    assert_tournament_cap(
        join(&app, &open[next].0, &ann).await,
        "MAX_TOURNAMENTS_JOINED",
    )
    .await;

    // And one that ends by itself: due now with too few players, it is canceled.
    let (_, late) = app.new_player("late").await;
    let body = json!({"name": "Soon", "preset": "block", "format": "swiss",
        "starts_at_ms": now_ms() + 1_000});
    let soon = create(&app, &late, body).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let res = delete(
        &app,
        &format!("/v1/tournaments/{}/players/me", open[3].0),
        &ann,
    )
    .await;
    assert_eq!(res.status().as_u16(), 200);
    joined(&app, &soon, &ann).await;
    assert_tournament_cap(
        join(&app, &open[next].0, &ann).await,
        "MAX_TOURNAMENTS_JOINED",
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while tournament(&app, &soon).await["status"] == "registering" {
        assert!(Instant::now() < deadline, "never started nor canceled");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(tournament(&app, &soon).await["status"], "canceled");
    joined(&app, &open[next].0, &ann).await;
}

async fn a_player_cannot_take_the_id_of_a_level_copy_as_its_name(app: TestApp) {
    for name in [
        "greedy-2",
        "random-8",
        "Master-64",
        "expert-10",
        "greedy",
        "random-bot",
    ] {
        let res = app.post_json("/v1/players", &json!({ "name": name })).await;
        let body = assert_problem(res, 409, "name_taken").await;
        assert!(
            body["detail"].as_str().unwrap().contains("reserved"),
            "{body}"
        );
    }
    let res = app.get("/v1/players/greedy-2").await;
    assert_problem(res, 404, "not_found").await;
    // A name that merely starts like a level's is a name like any other.
    app.new_player("greedy-fan").await;
}

async fn the_tournament_list_counts_the_entrants_and_the_tournament_lists_them(app: TestApp) {
    let (_, org) = app.new_player("org").await;
    let (ann_id, ann) = app.new_player("ann").await;
    let id = registering(&app, &org, json!(["greedy", "greedy", "expert"])).await;
    joined(&app, &id, &ann).await;
    let list = listed(&app, "registering").await;
    let item = list.iter().find(|t| t["id"] == id.as_str()).unwrap();
    assert_eq!(item["players_count"], 4, "{item}");
    assert_eq!(item["name"], "Open");
    assert_eq!(item["status"], "registering");
    for left_out in ["players", "pairings", "byes"] {
        assert!(item.get(left_out).is_none(), "{left_out} in {item}");
    }
    let whole = tournament(&app, &id).await;
    assert_eq!(whole["players"].as_array().unwrap().len(), 4);
    assert!(player_ids(&whole).contains(&ann_id.as_str()));
}

async fn a_tournament_name_must_show_as_a_seat_name_must(app: TestApp) {
    let (_, org) = app.new_player("org").await;
    let stacked = format!("Zalgo{}", "\u{0301}".repeat(12));
    let (game, _) = app
        .create_game(json!({"preset": "block", "seed": "names"}))
        .await;
    for name in [
        "\u{3164}",
        "Cup \u{3164}\u{3164}",
        "\u{115F}\u{1160}",
        "\u{2800}",
        "   ",
        stacked.as_str(),
    ] {
        let body = json!({"name": name, "preset": "block", "format": "swiss"});
        let res = app.post_as("/v1/tournaments", &org, Some(&body)).await;
        let problem = assert_problem(res, 400, "bad_request").await;
        assert!(
            problem["detail"].as_str().unwrap().starts_with("name: "),
            "{problem}"
        );
        // The same rule as a seat's name: one owner.
        let res = app.join(&game, json!({ "name": name })).await;
        assert_problem(res, 400, "bad_request").await;
    }
    assert!(
        listed(&app, "registering").await.is_empty(),
        "none was made"
    );
    let fine = json!({"name": "Tết cup 🏆", "preset": "block", "format": "swiss"});
    create(&app, &org, fine).await;
}

/// `GET /v1/players/{who}/tournaments`, what a profile lists: the tournaments a player (or
/// a level) entered, newest first, by id or name, a page at a time; one it left before the
/// start or was removed from is not listed, one it withdrew from after the start is.
async fn a_players_tournaments_are_listed_newest_first_without_those_it_left(app: TestApp) {
    let (_, org) = app.new_player("org").await;
    let (ann_id, ann) = app.new_player("ann").await;
    let (_, bob) = app.new_player("bob").await;
    let list = |who: String, query: &'static str| {
        let app = &app;
        async move {
            let res = app
                .get(&format!("/v1/players/{who}/tournaments{query}"))
                .await;
            assert_eq!(res.status().as_u16(), 200, "{who}");
            let page: Value = res.json().await.unwrap();
            let items = page["tournaments"].as_array().unwrap().clone();
            items
                .iter()
                .map(|t| t["id"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        }
    };
    let first = registering(&app, &org, json!(["greedy"])).await;
    let left = registering(&app, &org, json!([])).await;
    let removed = registering(&app, &org, json!([])).await;
    // Another creator: a player makes 3 at most at once.
    let (_, other) = app.new_player("org2").await;
    let last = registering(&app, &other, json!(["expert"])).await;
    for id in [&first, &left, &removed, &last] {
        joined(&app, id, &ann).await;
    }
    joined(&app, &first, &bob).await;
    assert_eq!(
        list("ann".into(), "").await,
        newest_first(&app, &[&last, &removed, &left, &first]).await
    );
    let res = delete(&app, &format!("/v1/tournaments/{left}/players/me"), &ann).await;
    assert_eq!(res.status().as_u16(), 200);
    let path = format!("/v1/tournaments/{removed}/players/{ann_id}");
    assert_eq!(delete(&app, &path, &org).await.status().as_u16(), 200);
    assert_eq!(
        list("ANN".into(), "").await,
        newest_first(&app, &[&last, &first]).await
    );
    let both = newest_first(&app, &[&last, &first]).await;
    assert_eq!(list(ann_id.clone(), "?page=2&per_page=1").await, both[1..]);
    assert!(list("ann".into(), "?page=3&per_page=1").await.is_empty());
    assert_eq!(
        list("bob".into(), "").await,
        newest_first(&app, &[&first]).await
    );
    // A level lists the tournaments it was entered in, once however many copies.
    assert_eq!(
        list("greedy".into(), "").await,
        newest_first(&app, &[&first]).await
    );
    assert_eq!(
        list("expert".into(), "").await,
        newest_first(&app, &[&last]).await
    );
    assert!(list("org".into(), "").await.is_empty());
    // Withdrawn after the start: its games stand, so the tournament stays its.
    start_now(&app, &first, &org).await;
    let res = delete(&app, &format!("/v1/tournaments/{first}/players/me"), &bob).await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(
        list("bob".into(), "").await,
        newest_first(&app, &[&first]).await
    );
    let res = app.get("/v1/players/nobody/tournaments").await;
    assert_problem(res, 404, "not_found").await;
    let res = app.get("/v1/players/ann/tournaments?per_page=0").await;
    assert_problem(res, 400, "bad_request").await;
}

async fn start_now(app: &TestApp, id: &str, key: &str) {
    let res = app
        .post_as(&format!("/v1/tournaments/{id}/start"), key, None)
        .await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
}

/// `ids` newest first as the lists order them: by creation time, then id, descending
/// (tournaments made within one millisecond tie on the first).
async fn newest_first(app: &TestApp, ids: &[&String]) -> Vec<String> {
    let mut made = Vec::new();
    for id in ids {
        let created = tournament(app, id).await["created_ms"].as_u64().unwrap();
        made.push((created, (*id).clone()));
    }
    made.sort_by(|a, b| b.cmp(a));
    made.into_iter().map(|(_, id)| id).collect()
}
