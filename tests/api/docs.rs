use crate::helpers::spawn_app;

#[tokio::test]
async fn openapi_document_is_served_as_openapi_3_1() {
    let app = spawn_app().await;
    let res = app.get("/openapi.json").await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(res.headers()["content-type"], "application/json");
    let doc: serde_json::Value = res.json().await.unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    for path in ["/healthz", "/readyz", "/metrics", "/openapi.json"] {
        assert!(
            doc["paths"][path]["get"].is_object(),
            "{path} is documented"
        );
    }
    assert!(doc["components"]["schemas"]["Problem"].is_object());
    let conflict =
        &doc["components"]["responses"]["Conflict"]["content"]["application/problem+json"];
    assert_eq!(
        conflict["examples"]["version_conflict"]["value"]["current_version"],
        18
    );
}

#[tokio::test]
async fn swagger_ui_is_served_without_network() {
    let app = spawn_app().await;
    let res = app.get("/swagger-ui/").await;
    assert_eq!(res.status().as_u16(), 200);
    assert!(
        res.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    let page = res.text().await.unwrap();
    // Every script and stylesheet the page loads is served by the binary itself.
    assert!(
        !page.contains("http://") && !page.contains("https://") && !page.contains("//cdn"),
        "{page}"
    );
    for asset in [
        "swagger-ui-bundle.js",
        "swagger-ui.css",
        "swagger-initializer.js",
    ] {
        let res = app.get(&format!("/swagger-ui/{asset}")).await;
        assert_eq!(res.status().as_u16(), 200, "{asset}");
    }
    let init = app
        .get("/swagger-ui/swagger-initializer.js")
        .await
        .text()
        .await
        .unwrap();
    assert!(
        init.contains("/openapi.json"),
        "the UI loads our document:\n{init}"
    );
}

#[tokio::test]
async fn swagger_ui_without_slash_redirects() {
    let app = spawn_app().await;
    let res = app.get("/swagger-ui").await;
    assert_eq!(res.status().as_u16(), 301);
    assert_eq!(res.headers()["location"], "/swagger-ui/");
}

/// The keys of an object, and of the objects under `nested` keys (first array element).
fn keys(value: &serde_json::Value, nested: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
    for key in nested {
        let inner = match &value[key] {
            serde_json::Value::Array(items) => items.first().cloned(),
            other => Some(other.clone()),
        };
        if let Some(serde_json::Value::Object(object)) = inner {
            out.extend(object.keys().map(|k| format!("{key}.{k}")));
        }
    }
    out.sort();
    out
}

#[tokio::test]
async fn the_documented_view_and_move_answer_show_the_fields_real_ones_have() {
    let app = spawn_app().await;
    let doc: serde_json::Value = app.get("/openapi.json").await.json().await.unwrap();
    let (id, players) = app
        .start_game(serde_json::json!({"preset": "all_fives", "seed": "example", "bots": [{"seat": 1, "level": "greedy"}]}))
        .await;
    let view = app.view(&id, Some(&players[0].token)).await;
    let mv = view["legal_moves"][0].clone();
    let moved = app.play(&id, &players[0].token, &mv).await;
    let nested = ["seats", "round", "legal_moves", "events"];
    for (schema, real) in [("GameView", view), ("MoveResult", moved)] {
        let example = &doc["components"]["schemas"][schema]["example"];
        assert!(example.is_object(), "{schema} has an example");
        assert_eq!(keys(example, &nested), keys(&real, &nested), "{schema}");
    }
}

#[tokio::test]
async fn the_document_lists_each_get_once_and_says_that_head_answers_too() {
    let app = spawn_app().await;
    let doc: serde_json::Value = app.get("/openapi.json").await.json().await.unwrap();
    for (path, item) in doc["paths"].as_object().unwrap() {
        assert!(item.get("head").is_none(), "{path} lists a HEAD twin");
    }
    let description = doc["info"]["description"].as_str().unwrap();
    assert!(description.contains("`HEAD`"), "{description}");
    // ... and HEAD is still answered, headers only.
    let res = app
        .client
        .head(app.url("/v1/presets"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
}

#[tokio::test]
async fn the_schema_tells_a_client_author_what_every_answer_holds() {
    let app = spawn_app().await;
    let doc: serde_json::Value = app.get("/openapi.json").await.json().await.unwrap();
    let schemas = &doc["components"]["schemas"];
    let required = |schema: &str| -> Vec<String> {
        schemas[schema]["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect()
    };
    // Always present, null where they can be.
    let view = required("GameView");
    for field in [
        "clock",
        "hand",
        "round",
        "result",
        "you",
        "last_round",
        "legal_moves",
    ] {
        assert!(view.contains(&field.to_owned()), "GameView.{field}");
    }
    assert!(required("ClockView").contains(&"deadline_ms".to_owned()));
    // The preset is one of the presets.
    let presets = &schemas["GameView"]["properties"]["preset"]["enum"];
    assert!(
        presets
            .as_array()
            .is_some_and(|p| p.contains(&"all_fives".into())),
        "{presets}"
    );
    // Game ids are UUIDs.
    for schema in ["GameView", "GameSummary", "GameLog", "GameExport"] {
        assert_eq!(
            schemas[schema]["properties"]["game_id"]["format"], "uuid",
            "{schema}"
        );
    }
    // Tiles have a pattern, which the server's own tiles match.
    let pattern = schemas["Tile"]["pattern"].as_str().unwrap();
    assert_eq!(pattern, "^(0?[0-9]|1[0-5])-(0?[0-9]|1[0-5])$");
    assert_eq!(
        schemas["GameView"]["properties"]["hand"]["type"],
        serde_json::json!(["array", "null"])
    );
    assert_eq!(
        schemas["GameView"]["properties"]["hand"]["items"]["$ref"],
        "#/components/schemas/Tile"
    );
    // A move as made is picked by `type`, the server's moves too.
    let mapping = &schemas["MadeMove"]["discriminator"]["mapping"];
    for tag in ["play", "draw", "pass", "resign", "timed_out"] {
        assert!(mapping[tag].is_string(), "MadeMove: {tag} in {mapping}");
    }
    // An event stream's `data` is JSON of a named schema.
    for (frame, event) in [
        ("VersionEventFrame", "VersionEvent"),
        ("LobbyEventFrame", "LobbyEvent"),
    ] {
        let data = &schemas[frame]["properties"]["data"];
        assert_eq!(data["contentMediaType"], "application/json", "{frame}");
        assert_eq!(
            data["contentSchema"]["$ref"],
            format!("#/components/schemas/{event}"),
            "{frame}"
        );
        assert!(schemas[event].is_object(), "{event} is in the document");
    }
}
