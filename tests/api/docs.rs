use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use domino_server::api::ProblemCode;
use domino_server::settings::Settings;
use sha2::{Digest, Sha256};

use crate::helpers::spawn_app;

/// Standard base64 with padding, as a Content-Security-Policy writes a hash.
fn base64(bytes: &[u8]) -> String {
    const DIGITS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            let digit = (n >> (18 - 6 * i)) & 63;
            out.push(if i <= chunk.len() {
                char::from(DIGITS[digit as usize])
            } else {
                '='
            });
        }
    }
    out
}

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
async fn swagger_ui_and_its_assets_may_load_only_from_this_server_and_never_be_framed() {
    let app = spawn_app().await;
    // The one inline style the UI has, its logo's, allowed by its hash alone.
    let preset = app.get("/swagger-ui/swagger-ui-standalone-preset.js").await;
    let preset = preset.text().await.unwrap();
    let style = ".logo_small_svg__cls-2{fill:#fff}.logo_small_svg__cls-3{fill:#85ea2d}";
    assert!(
        preset.contains(style),
        "the logo's style changed: allow the new one"
    );
    let logo = format!("'sha256-{}'", base64(&Sha256::digest(style)));
    for path in [
        "/swagger-ui/",
        "/swagger-ui/index.html",
        "/swagger-ui/swagger-ui-bundle.js",
        "/swagger-ui/swagger-ui.css",
        "/swagger-ui/swagger-initializer.js",
    ] {
        let res = app.get(path).await;
        assert_eq!(res.status().as_u16(), 200, "{path}");
        crate::watch::assert_only_self_and_styles(&res, std::slice::from_ref(&logo));
    }
    // No inline script on the page: the policy would refuse it.
    let page = app.get("/swagger-ui/").await.text().await.unwrap();
    assert!(!page.contains("<script>"), "{page}");
}

#[tokio::test]
async fn head_on_swagger_ui_answers_as_get_does_without_a_body() {
    let app = spawn_app().await;
    for path in [
        "/swagger-ui/",
        "/swagger-ui/swagger-ui.css",
        "/swagger-ui/swagger-initializer.js",
    ] {
        let get = app.get(path).await;
        let head = app.client.head(app.url(path)).send().await.unwrap();
        assert_eq!(head.status().as_u16(), 200, "{path}");
        for name in ["content-type", "content-security-policy", "x-frame-options"] {
            assert_eq!(
                head.headers().get(name),
                get.headers().get(name),
                "{path}: {name}"
            );
        }
        assert!(head.bytes().await.unwrap().is_empty(), "{path}");
    }
    let head = app
        .client
        .head(app.url("/swagger-ui/no-such-file.js"))
        .send()
        .await
        .unwrap();
    assert_eq!(head.status().as_u16(), 404);
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
    // Every union is a list of named variants picked by `type` (the client generators
    // could not parse a union with a variant written inline, PlayerEvent's once).
    for (name, schema) in schemas.as_object().unwrap() {
        let Some(variants) = schema["oneOf"].as_array() else {
            continue;
        };
        let named = variants.iter().all(|v| v["$ref"].is_string());
        let tagged = variants
            .iter()
            .any(|v| v["$ref"].is_string() || v["properties"]["type"].is_object());
        if tagged && variants.len() > 1 && !variants.iter().any(|v| v["type"] == "null") {
            assert!(named, "{name}: a variant written inline");
            assert_eq!(schema["discriminator"]["propertyName"], "type", "{name}");
        }
    }
    // One bearer scheme takes a seat token or a player key, so Swagger UI asks once.
    let schemes = doc["components"]["securitySchemes"].as_object().unwrap();
    assert_eq!(schemes.keys().collect::<Vec<_>>(), ["bearer"]);
}

// ----- the docs' tables, held to the code -----
//
// Each table a reader is sent to lives once in docs/ and is checked here against the code
// that decides it, so a change to the code that the docs do not follow fails a test.

/// A file of the repository, as text.
fn repo_file(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// The markdown a reader is sent to: the README, the benchmarks and everything in docs/.
fn markdown_files() -> Vec<String> {
    let mut files = vec![
        "README.md".to_owned(),
        "BENCHMARKS.md".to_owned(),
        "bench/journal.md".to_owned(),
        "bench/arena/README.md".to_owned(),
    ];
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    for entry in std::fs::read_dir(docs).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".md") {
            files.push(format!("docs/{name}"));
        }
    }
    files.sort();
    files
}

/// A text without its fenced code blocks: where a table or a link is prose.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        let bare = line.trim_start().trim_start_matches("//!").trim_start();
        if bare.starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// A markdown table: its header's cells, then each row's.
struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

/// Every table of a text; Rust doc comments are read without their `//!`.
fn tables(text: &str) -> Vec<Table> {
    let cells = |line: &str| -> Vec<String> {
        let inner = line.strip_prefix('|').unwrap_or(line);
        let inner = inner.strip_suffix('|').unwrap_or(inner);
        inner.split('|').map(|c| c.trim().to_owned()).collect()
    };
    let mut found = Vec::new();
    let mut current: Option<Table> = None;
    for line in prose(text).lines() {
        let line = line.trim_start_matches("//!").trim();
        if !line.starts_with('|') {
            found.extend(current.take());
            continue;
        }
        let row = cells(line);
        let separator = row.iter().all(|c| c.chars().all(|ch| "-: ".contains(ch)));
        match &mut current {
            None => {
                current = Some(Table {
                    header: row,
                    rows: Vec::new(),
                })
            }
            Some(table) if !separator => table.rows.push(row),
            Some(_) => {}
        }
    }
    found.extend(current);
    found
}

/// The code spans of a cell: the text between its backticks.
fn code_spans(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

fn starts(table: &Table, first: &str, second: &str) -> bool {
    table.header.len() >= 2 && table.header[0] == first && table.header[1] == second
}

fn is_error_table(table: &Table) -> bool {
    starts(table, "status", "code")
}

fn is_settings_table(table: &Table) -> bool {
    starts(table, "variable", "default")
}

/// The one table of `path` that `is` picks, or a failure saying how many there were.
fn the_table(path: &str, is: fn(&Table) -> bool) -> Table {
    let mut found: Vec<Table> = tables(&repo_file(path)).into_iter().filter(is).collect();
    assert_eq!(found.len(), 1, "{path} has one such table");
    found.pop().unwrap()
}

/// Every problem code the server answers, with its status.
fn problem_statuses() -> BTreeMap<String, u16> {
    ProblemCode::ALL
        .iter()
        .map(|code| (code.as_str().to_owned(), code.status().as_u16()))
        .collect()
}

#[test]
fn the_error_table_of_the_docs_lists_every_problem_code_with_its_status() {
    let table = the_table("docs/api.md", is_error_table);
    let mut documented = BTreeMap::new();
    for row in &table.rows {
        let status: u16 = row[0]
            .parse()
            .unwrap_or_else(|_| panic!("docs/api.md: a row without a status: {row:?}"));
        for code in code_spans(&row[1]) {
            let twice = documented.insert(code.to_owned(), status);
            assert!(twice.is_none(), "docs/api.md lists {code} twice");
        }
    }
    let served = problem_statuses();
    let mut wrong = Vec::new();
    for (code, status) in &served {
        match documented.get(code) {
            None => wrong.push(format!("{code} ({status}) is not listed")),
            Some(listed) if listed != status => {
                wrong.push(format!("{code} is listed as {listed}, answers {status}"))
            }
            Some(_) => {}
        }
    }
    for code in documented.keys().filter(|code| !served.contains_key(*code)) {
        wrong.push(format!("{code} is listed, but no answer carries it"));
    }
    assert!(
        wrong.is_empty(),
        "docs/api.md's error table against src/api/error/table.rs:\n{}",
        wrong.join("\n")
    );
}

/// Every variable `src/settings/` reads: the string literals there that are a variable's
/// name (its tests left out).
fn variables_read() -> BTreeSet<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/settings");
    let mut read = BTreeSet::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for literal in text.split('"').skip(1).step_by(2) {
            let is_name = literal.contains('_')
                && literal
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
            if is_name {
                read.insert(literal.to_owned());
            }
        }
    }
    read
}

#[test]
fn the_settings_table_of_the_docs_lists_every_variable_read_with_its_default() {
    let table = the_table("docs/configuration.md", is_settings_table);
    let mut documented = BTreeMap::new();
    for row in &table.rows {
        let [var] = code_spans(&row[0])[..] else {
            panic!("docs/configuration.md: a row naming no one variable: {row:?}");
        };
        let twice = documented.insert(var.to_owned(), row[1].clone());
        assert!(twice.is_none(), "docs/configuration.md lists {var} twice");
    }
    let read = variables_read();
    let mut wrong = Vec::new();
    for var in read.iter().filter(|v| !documented.contains_key(*v)) {
        wrong.push(format!("{var} is read but not listed"));
    }
    for var in documented.keys().filter(|v| !read.contains(*v)) {
        wrong.push(format!("{var} is listed but never read"));
    }
    // A default written as one value must be the default: setting it changes nothing.
    // Defaults in words ("unset", "the rate", "the number of cores") are not checked.
    let defaults = format!("{:?}", Settings::default());
    for (var, default) in &documented {
        let [value] = code_spans(default)[..] else {
            continue;
        };
        if *default != format!("`{value}`") {
            continue;
        }
        match Settings::from_vars([(var.as_str(), value)]) {
            Err(e) => wrong.push(format!("{var}: its default `{value}` is refused: {e}")),
            Ok(set) if format!("{set:?}") != defaults => {
                wrong.push(format!("{var}: `{value}` is not its default"))
            }
            Ok(_) => {}
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/configuration.md's table against src/settings/:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn each_table_is_kept_once_and_a_status_named_with_a_code_is_that_code_s() {
    let statuses = problem_statuses();
    let mut wrong = Vec::new();
    let files = markdown_files().into_iter().chain(
        [
            "src/settings/mod.rs",
            "src/api/error/mod.rs",
            "src/api/error/table.rs",
        ]
        .map(str::to_owned),
    );
    for file in files {
        let text = repo_file(&file);
        for table in tables(&text) {
            if is_error_table(&table) && file != "docs/api.md" {
                wrong.push(format!(
                    "{file}: an error table (the one copy: docs/api.md)"
                ));
            }
            if is_settings_table(&table) && file != "docs/configuration.md" {
                wrong.push(format!(
                    "{file}: a settings table (the one copy: docs/configuration.md)"
                ));
            }
        }
        // "429 `rate_limited`", "`409 seat_taken`", "409\n`version_conflict`"; not
        // "`method_not_allowed` (405), `request_timeout`", where the status is the code's
        // before it.
        let punctuation = |c: char| !(c.is_ascii_alphanumeric() || c == '_');
        let words: Vec<&str> = text
            .split(|c: char| c.is_whitespace() || c == '`')
            .filter(|w| !w.is_empty())
            .collect();
        for pair in words.windows(2) {
            let status = pair[0].trim_start_matches(punctuation);
            let code = pair[1].trim_matches(punctuation);
            let (Ok(status), Some(&real)) = (status.parse::<u16>(), statuses.get(code)) else {
                continue;
            };
            if status != real {
                wrong.push(format!("{file}: \"{status} {code}\", which is {real}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_relative_link_of_the_docs_leads_to_a_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut broken = Vec::new();
    for file in markdown_files() {
        let text = prose(&repo_file(&file));
        let dir = Path::new(&file).parent().unwrap();
        for piece in text.split("](").skip(1) {
            let Some(target) = piece.split(')').next() else {
                continue;
            };
            let path = target.split('#').next().unwrap_or_default();
            if path.is_empty() || path.contains("://") || path.starts_with("mailto:") {
                continue;
            }
            if !root.join(dir).join(path).exists() {
                broken.push(format!("{file}: {target}"));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to nothing:\n{}",
        broken.join("\n")
    );
}

/// Every file of the repository the docs name by its path (`src/...`, `crates/...`,
/// `tests/...`, `scripts/...`, `examples/...`) is there: a doc that cites a file moved or
/// gone sends its reader nowhere. The journal is left as it was written: it tells what
/// was, dated, files since moved included.
#[test]
fn every_file_the_docs_name_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let roots = ["src/", "crates/", "tests/", "scripts/", "examples/"];
    let mut missing = Vec::new();
    let files = markdown_files()
        .into_iter()
        .filter(|f| f != "bench/journal.md");
    for file in files {
        let text = repo_file(&file);
        for word in text.split(|c: char| {
            c.is_whitespace() || matches!(c, '`' | '[' | ']' | '(' | ')' | ',' | ';' | '"' | '\'')
        }) {
            let word = word.trim_end_matches(['.', ':']);
            let path = word.split(['#', ':']).next().unwrap_or_default();
            let named = roots.iter().any(|r| path.starts_with(r))
                && path.rsplit('/').next().is_some_and(|last| last.contains('.'))
                && !path.contains(['*', '<', '{'])
                // What a reader's build makes (a runner compiled by `npm run build`).
                && !path.contains("/dist/");
            if named && !root.join(path).exists() {
                missing.push(format!("{file}: {path}"));
            }
        }
    }
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "files named that are not there:\n{}",
        missing.join("\n")
    );
}

/// The shell snippets of the README, docs/ and the clients' README name the server as
/// `$S`, set by `S=${S:-http://localhost:8080}` before its first use in the file, so a
/// server on another port needs `S` exported and nothing edited; no command names the
/// port itself (a comment may).
#[test]
fn every_snippet_names_the_server_as_s_with_8080_only_its_default() {
    let mut files: Vec<String> = markdown_files()
        .into_iter()
        .filter(|f| f == "README.md" || f.starts_with("docs/"))
        .collect();
    files.push("examples/clients/README.md".to_owned());
    let mut wrong = Vec::new();
    for file in files {
        let (mut fenced, mut set) = (false, false);
        for (n, line) in repo_file(&file).lines().enumerate() {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                continue;
            }
            let command = line.split(" #").next().unwrap_or_default();
            if !fenced || command.trim_start().starts_with('#') {
                continue;
            }
            let defaulted = command.contains("${S:-http://");
            set |= command.trim_start().starts_with("S=${S:-http://");
            let port = command.contains("localhost:8080") || command.contains("127.0.0.1:8080");
            if port && !defaulted {
                wrong.push(format!("{file}:{}: names the port: {line}", n + 1));
            }
            let uses =
                command.contains("$S/") || command.contains("\"$S\"") || command.contains("$S ");
            if uses && !set {
                wrong.push(format!("{file}:{}: $S before S=${{S:-...}}: {line}", n + 1));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

fn is_presets_table(table: &Table) -> bool {
    starts(table, "field", "`classic`")
}

/// A cell of the presets table as JSON: its emphasis (a rule that differs from the others)
/// and "(unused)" notes are the reader's, not the rule's.
fn preset_cell(cell: &str) -> serde_json::Value {
    let bare = cell.replace("**", "");
    let bare = bare.trim_end_matches("(unused)").trim();
    serde_json::from_str(bare).unwrap_or_else(|_| serde_json::Value::String(bare.to_owned()))
}

#[tokio::test]
async fn the_presets_table_of_the_docs_is_every_rule_of_every_preset_served() {
    let app = spawn_app().await;
    let served: Vec<serde_json::Value> = app.get("/v1/presets").await.json().await.unwrap();
    let table = the_table("docs/rules.md", is_presets_table);
    let columns: Vec<&str> = table.header[1..]
        .iter()
        .map(|name| code_spans(name)[0])
        .collect();
    let names: Vec<&str> = served.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(
        columns, names,
        "docs/rules.md's presets, in the served order"
    );

    let mut wrong = Vec::new();
    let mut fields = BTreeSet::new();
    for row in &table.rows {
        let field = code_spans(&row[0])[0];
        fields.insert(field.to_owned());
        for (preset, cell) in served.iter().zip(&row[1..]) {
            let rule = &preset["rules"][field];
            if *rule != preset_cell(cell) {
                wrong.push(format!(
                    "{} {field}: the docs say {cell}, served {rule}",
                    preset["name"]
                ));
            }
        }
    }
    for preset in &served {
        for field in preset["rules"].as_object().unwrap().keys() {
            if !fields.contains(field) {
                wrong.push(format!("{field} is served but not in the table"));
            }
        }
    }
    wrong.dedup();
    assert!(
        wrong.is_empty(),
        "docs/rules.md's presets table against GET /v1/presets:\n{}",
        wrong.join("\n")
    );
}

fn is_strength_table(table: &Table) -> bool {
    starts(table, "level", "against") && table.header.iter().any(|h| h.starts_with("wins"))
}

/// The bots' strength is measured once, in BENCHMARKS.md, where each run's command is;
/// docs/bots.md's table is the reader's copy of it, and the README names no figure.
#[test]
fn the_bots_strength_in_the_docs_is_the_one_measured_in_the_benchmarks() {
    let table = the_table("docs/bots.md", is_strength_table);
    let wins = table
        .header
        .iter()
        .position(|h| h.starts_with("wins"))
        .unwrap();
    let margin = table
        .header
        .iter()
        .position(|h| h.starts_with("margin"))
        .unwrap();
    let benchmarks = repo_file("BENCHMARKS.md");
    let mut wrong = Vec::new();
    for row in &table.rows {
        for figure in [&row[wins], &row[margin]] {
            // "+62.3 [+55.3, +69.3] (400 games)": the figure, without the reader's note.
            let figure = figure.split(" (").next().unwrap().trim();
            if figure != "not measured" && !benchmarks.contains(figure) {
                wrong.push(format!(
                    "{} against {} ({}): {figure}",
                    row[0], row[1], row[2]
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/bots.md's strength figures not found in BENCHMARKS.md:\n{}",
        wrong.join("\n")
    );
    let readme = repo_file("README.md");
    for row in &table.rows {
        let share = row[wins].split('%').next().unwrap();
        assert!(
            !readme.contains(&format!("{share}%")),
            "README.md repeats {share}%: it sends the reader to docs/bots.md instead"
        );
    }
}
