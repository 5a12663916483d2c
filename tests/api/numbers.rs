//! Every number a client sends is refused in words naming its field and its range, as
//! the OpenAPI document states it (`deals must be between 1 and 500`), never in the
//! parser's (`invalid value: integer -5, expected u32`). The fields are walked from the
//! served document, so a number added to a body or a query is tested the day it is.

use serde_json::{Value, json};

use crate::helpers::spawn_app;

/// A number the document names: where (`clock.bank_secs`, `bots[].seat`), its range,
/// and whether it is 64 bits wide (the only kind that may leave out its maximum).
#[derive(Debug)]
struct Number {
    path: String,
    lo: Option<u64>,
    hi: Option<u64>,
    wide: bool,
}

impl Number {
    fn words(&self, whole: bool) -> String {
        let hi = self.hi.unwrap_or(u64::MAX);
        let what = if whole {
            "a whole number between"
        } else {
            "between"
        };
        format!(
            "{} must be {what} {} and {hi}",
            self.path,
            self.lo.unwrap_or(0)
        )
    }
}

fn resolve<'a>(doc: &'a Value, mut schema: &'a Value) -> &'a Value {
    while let Some(name) = schema["$ref"].as_str() {
        schema = &doc["components"]["schemas"][name.trim_start_matches("#/components/schemas/")];
    }
    schema
}

fn is_integer(schema: &Value) -> bool {
    match &schema["type"] {
        Value::String(t) => t == "integer",
        Value::Array(all) => all.iter().any(|t| t == "integer"),
        _ => false,
    }
}

/// Every integer `schema` holds, at `path`.
fn numbers(doc: &Value, schema: &Value, path: &str, found: &mut Vec<Number>) {
    let schema = resolve(doc, schema);
    for branches in ["allOf", "oneOf", "anyOf"] {
        for branch in schema[branches].as_array().into_iter().flatten() {
            numbers(doc, branch, path, found);
        }
    }
    if is_integer(schema) && !found.iter().any(|n| n.path == path) {
        found.push(Number {
            path: path.to_owned(),
            lo: schema["minimum"].as_u64(),
            hi: schema["maximum"].as_u64(),
            wide: schema["format"] != "int32",
        });
    }
    for (name, field) in schema["properties"].as_object().into_iter().flatten() {
        let at = match path {
            "" => name.clone(),
            _ => format!("{path}.{name}"),
        };
        numbers(doc, field, &at, found);
    }
    if let Some(items) = schema.get("items") {
        numbers(doc, items, &format!("{path}[]"), found);
    }
}

/// `body` with `value` at `path`, each object on the way made whole with `around`'s.
fn with(mut body: Value, path: &str, value: Value) -> Value {
    let around = |parent: &str| match parent {
        "clock" => json!({"bank_secs": 60}),
        "bots[]" => json!({"seat": 1, "level": "greedy"}),
        "fallback" => json!({"after_secs": 10, "level": "greedy"}),
        "rules" => json!({}),
        other => panic!("a number inside `{other}`: say here what surrounds it"),
    };
    let mut at = &mut body;
    let mut walked = String::new();
    let parts: Vec<&str> = path.split('.').collect();
    for (i, part) in parts.iter().enumerate() {
        walked = if walked.is_empty() {
            (*part).to_owned()
        } else {
            format!("{walked}.{part}")
        };
        let (name, listed) = match part.strip_suffix("[]") {
            Some(name) => (name, true),
            None => (*part, false),
        };
        if i + 1 == parts.len() && !listed {
            at[name] = value;
            return body;
        }
        if listed {
            if !at[name].is_array() {
                at[name] = json!([around(&walked)]);
            }
            at = &mut at[name][0];
        } else {
            if !at[name].is_object() {
                at[name] = around(&walked);
            }
            at = &mut at[name];
        }
    }
    *at = value;
    body
}

#[tokio::test]
async fn every_number_of_every_body_and_query_is_refused_naming_its_range() {
    let app = spawn_app().await;
    let doc: Value = app.get("/openapi.json").await.json().await.unwrap();
    let (_, key) = app.new_player("numbers").await;
    let (game, _) = app
        .create_game(json!({"preset": "block", "bots": [{"seat": 1, "level": "greedy"}]}))
        .await;
    let seat = app.take_seat(&game, "ann").await;
    // Seats free, for the joins.
    let (open, _) = app.create_game(json!({"preset": "block"})).await;
    // A body whose only fault will be the number under test, and who sends it.
    let base = |method: &str, path: &str| -> Option<(String, Value, Option<String>)> {
        let key = Some(key.clone());
        let (url, body, auth) = match (method, path) {
            ("post", "/v1/games") => (path.to_owned(), json!({"preset": "block"}), None),
            ("post", "/v1/games/{id}/seats") => (
                format!("/v1/games/{open}/seats"),
                json!({"name": "bo"}),
                None,
            ),
            ("post", "/v1/games/{id}/moves") => (
                format!("/v1/games/{game}/moves"),
                json!({"type": "play", "tile": "6-6"}),
                Some(seat.token.clone()),
            ),
            ("post", "/v1/challenges") => (
                path.to_owned(),
                json!({"opponents": ["greedy"], "preset": "block"}),
                key,
            ),
            ("post", "/v1/matches") => (
                path.to_owned(),
                json!({"opponent": "greedy", "preset": "block"}),
                key,
            ),
            ("post", "/v1/seeks") => (path.to_owned(), json!({"preset": "block"}), key),
            ("post", "/v1/tournaments") => (
                path.to_owned(),
                json!({"name": "Cup", "preset": "block", "format": "swiss"}),
                key,
            ),
            ("post", "/v1/leagues") => (
                path.to_owned(),
                json!({"name": "League", "preset": "block"}),
                key,
            ),
            _ => return None,
        };
        Some((url, body, auth))
    };
    let send = |method: String, url: String, body: Value, auth: Option<String>| {
        let app = &app;
        async move {
            let mut req = match method.as_str() {
                "post" => app.client.post(app.url(&url)),
                "put" => app.client.put(app.url(&url)),
                other => panic!("a body sent by {other}"),
            };
            if let Some(auth) = auth {
                req = req.bearer_auth(auth);
            }
            req.json(&body).send().await.unwrap()
        }
    };
    let (mut tried, mut wrong) = (Vec::new(), Vec::new());
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let Some(schema) = op.pointer("/requestBody/content/application~1json/schema") else {
                continue;
            };
            let mut found = Vec::new();
            numbers(&doc, schema, "", &mut found);
            if found.is_empty() {
                continue;
            }
            let (url, body, auth) = base(method, path).unwrap_or_else(|| {
                panic!("{method} {path} takes numbers: give it a body in this test")
            });
            for number in &found {
                let what = format!("{method} {path} {}", number.path);
                assert!(number.lo.is_some(), "{what}: no minimum in the document");
                assert!(
                    number.hi.is_some() || number.wide,
                    "{what}: no maximum in the document"
                );
                for (value, whole) in [
                    (json!(-5), false),
                    (json!(1e30), false),
                    (json!(2.5), true),
                    (json!("7"), true),
                ] {
                    let sent = with(body.clone(), &number.path, value.clone());
                    let res = send(method.clone(), url.clone(), sent, auth.clone()).await;
                    let status = res.status().as_u16();
                    let problem: Value = res.json().await.unwrap();
                    if status != 400 || problem["detail"] != number.words(whole).as_str() {
                        wrong.push(format!("{what} = {value}: {status} {}", problem["detail"]));
                    }
                }
                // Just past either end, where the type still holds it: refused too, in
                // words naming the field and that end (the service's check, or the above).
                let past = [
                    number
                        .hi
                        .filter(|&hi| hi < u64::from(u32::MAX))
                        .map(|hi| (hi + 1, hi)),
                    number.lo.filter(|&lo| lo > 0).map(|lo| (lo - 1, lo)),
                ];
                for (value, end) in past.into_iter().flatten() {
                    let sent = with(body.clone(), &number.path, json!(value));
                    let res = send(method.clone(), url.clone(), sent, auth.clone()).await;
                    let status = res.status().as_u16();
                    let problem: Value = res.json().await.unwrap();
                    let detail = problem["detail"].as_str().unwrap_or_default();
                    let leaf = number
                        .path
                        .rsplit('.')
                        .next()
                        .unwrap()
                        .trim_end_matches("[]");
                    // The end, or the number sent when the end depends on the rest of
                    // the body (`bots: there is no seat 4 in a 2-seat game`).
                    let told = [end, value].map(|n| n.to_string());
                    if !(matches!(status, 400 | 409 | 422)
                        && detail.contains(leaf)
                        && told.iter().any(|n| detail.contains(n.as_str())))
                    {
                        wrong.push(format!("{what} = {value}: {status} {detail}"));
                    }
                }
                tried.push(what);
            }
        }
    }
    for named in [
        "post /v1/matches deals",
        "post /v1/leagues max_concurrent",
        "post /v1/tournaments clock.bank_secs",
        "post /v1/tournaments deals_per_pairing",
        "post /v1/games rules.target",
    ] {
        assert!(
            tried.iter().any(|t| t == named),
            "{named} not walked: {tried:?}"
        );
    }

    // The queries: each integer parameter of each operation.
    let mut queried = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        let Some(op) = item.get("get") else { continue };
        for parameter in op["parameters"].as_array().into_iter().flatten() {
            let schema = resolve(&doc, &parameter["schema"]);
            if parameter["in"] != "query" || !is_integer(schema) {
                continue;
            }
            let name = parameter["name"].as_str().unwrap();
            let number = Number {
                path: name.to_owned(),
                lo: schema["minimum"].as_u64(),
                hi: schema["maximum"].as_u64(),
                wide: schema["format"] != "int32",
            };
            let what = format!("get {path} ?{name}");
            assert!(number.lo.is_some(), "{what}: no minimum in the document");
            assert!(
                number.hi.is_some() || number.wide,
                "{what}: no maximum in the document"
            );
            let url = path
                .replace("{id}", &game)
                .replace("{who}", "numbers")
                .replace("{preset}", "block");
            for (text, whole) in [
                ("-5", false),
                ("1e30", false),
                ("2.5", true),
                ("seven", true),
            ] {
                let res = app
                    .get_as(&format!("{url}?{name}={text}"), Some(&key))
                    .await;
                let status = res.status().as_u16();
                let problem: Value = res.json().await.unwrap_or_default();
                if status != 400 || problem["detail"] != number.words(whole).as_str() {
                    wrong.push(format!("{what}={text}: {status} {}", problem["detail"]));
                }
            }
            queried.push(what);
        }
    }
    for named in [
        "get /v1/tournaments ?per_page",
        "get /v1/games/{id}/log ?limit",
    ] {
        assert!(
            queried.iter().any(|q| q == named),
            "{named} not walked: {queried:?}"
        );
    }
    assert!(wrong.is_empty(), "refused otherwise:\n{}", wrong.join("\n"));
}
