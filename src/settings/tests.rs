use super::*;

fn settings(vars: &[(&str, &str)]) -> Result<Settings, SettingsError> {
    Settings::from_vars(vars.iter().copied())
}

#[test]
fn no_variables_gives_the_documented_defaults() {
    let s = settings(&[]).unwrap();
    assert_eq!(s.bind_addr.to_string(), "0.0.0.0:8080");
    assert_eq!(s.redis_url, None);
    assert_eq!(s.redis_key_prefix, "domino:");
    assert_eq!(s.game_idle_ttl, Duration::from_secs(86_400));
    assert_eq!(s.store_timeout, Duration::from_millis(1000));
    assert_eq!(s.log_format, LogFormat::Pretty);
    assert_eq!(s.log_filter, "info");
    assert_eq!(s.max_body_bytes, 16_384);
    assert_eq!(s.long_poll_max, Duration::from_secs(30));
    assert_eq!(s.rate_limit_per_ip, Some(limit(2000, 2000)));
    assert_eq!(s.rate_limit_per_token, Some(limit(200, 200)));
    assert_eq!(s.proxy_hops, 0);
    assert_eq!(s.max_streams_per_ip, 32);
    assert_eq!(s.max_streams, None);
    assert_eq!(s.body_timeout, Duration::from_millis(5000));
    assert_eq!(s.head_timeout, Duration::from_millis(5000));
    assert_eq!(s.max_connections_per_ip, Some(256));
    assert!(s.allow_prearranged);
    assert_eq!(s.cors_origins, CorsOrigins::None);
}

fn limit(per_second: u32, burst: u32) -> RateLimit {
    RateLimit {
        per_second: NonZeroU32::new(per_second).unwrap(),
        burst: NonZeroU32::new(burst).unwrap(),
    }
}

#[test]
fn every_variable_is_read() {
    let s = settings(&[
        ("BIND_ADDR", "127.0.0.1:0"),
        ("REDIS_URL", "redis://db:6379/2"),
        ("REDIS_KEY_PREFIX", "t:"),
        ("GAME_IDLE_TTL_SECS", "60"),
        ("STORE_TIMEOUT_MS", "250"),
        ("LOG_FORMAT", "JSON"),
        ("RUST_LOG", "debug"),
        ("MAX_BODY_BYTES", "100"),
        ("LONG_POLL_MAX_SECS", "5"),
        ("SHUTDOWN_TIMEOUT_SECS", "0"),
        ("RATE_LIMIT_PER_IP", "50"),
        ("RATE_LIMIT_PER_IP_BURST", "80"),
        ("RATE_LIMIT_PER_TOKEN", "5"),
        ("RATE_LIMIT_PER_TOKEN_BURST", "1"),
        ("RATE_LIMIT_PROXY_HOPS", "2"),
        ("MAX_STREAMS_PER_IP", "2"),
        ("MAX_STREAMS", "50"),
        ("BODY_TIMEOUT_MS", "1000"),
        ("HEAD_TIMEOUT_MS", "700"),
        ("MAX_CONNECTIONS_PER_IP", "40"),
        ("ALLOW_PREARRANGED", "false"),
        (
            "CORS_ORIGINS",
            "https://play.example.com, http://localhost:3000",
        ),
    ])
    .unwrap();
    assert_eq!(s.bind_addr.port(), 0);
    assert_eq!(s.redis_url.as_deref(), Some("redis://db:6379/2"));
    assert_eq!(s.redis_key_prefix, "t:");
    assert_eq!(s.game_idle_ttl, Duration::from_secs(60));
    assert_eq!(s.store_timeout, Duration::from_millis(250));
    assert_eq!(s.log_format, LogFormat::Json);
    assert_eq!(s.log_filter, "debug");
    assert_eq!(s.max_body_bytes, 100);
    assert_eq!(s.long_poll_max, Duration::from_secs(5));
    assert_eq!(s.shutdown_timeout, Duration::ZERO);
    assert_eq!(s.rate_limit_per_ip, Some(limit(50, 80)));
    assert_eq!(s.rate_limit_per_token, Some(limit(5, 1)));
    assert_eq!(s.proxy_hops, 2);
    assert_eq!(s.max_streams_per_ip, 2);
    assert_eq!(s.max_streams, Some(50));
    assert_eq!(s.body_timeout, Duration::from_millis(1000));
    assert_eq!(s.head_timeout, Duration::from_millis(700));
    assert_eq!(s.max_connections_per_ip, Some(40));
    assert!(!s.allow_prearranged);
    assert_eq!(
        s.cors_origins,
        CorsOrigins::List(vec![
            "https://play.example.com".into(),
            "http://localhost:3000".into()
        ])
    );
}

#[test]
fn cors_origins_are_a_star_or_a_list_of_origins() {
    assert_eq!(
        settings(&[("CORS_ORIGINS", " * ")]).unwrap().cors_origins,
        CorsOrigins::Any
    );
    for not_an_origin in [
        "play.example.com",
        "https://play.example.com/",
        "https://*.example.com",
    ] {
        let err = settings(&[("CORS_ORIGINS", not_an_origin)]).unwrap_err();
        assert_eq!(err.var, "CORS_ORIGINS");
    }
}

#[test]
fn a_rate_limit_of_zero_is_no_limit_and_the_burst_follows_the_rate() {
    let s = settings(&[("RATE_LIMIT_PER_IP", "0"), ("RATE_LIMIT_PER_TOKEN", "30")]).unwrap();
    assert_eq!(s.rate_limit_per_ip, None);
    assert_eq!(s.rate_limit_per_token, Some(limit(30, 30)));
}

#[test]
fn the_caps_on_games_default_on_and_zero_lifts_them() {
    let s = settings(&[]).unwrap();
    assert_eq!(s.max_waiting_per_ip, Some(20));
    assert_eq!((s.max_games_per_ip, s.bot_tables), (Some(100), 16));
    assert_eq!(s.memory_max_games, Some(100_000));
    let s = settings(&[("MAX_WAITING_PER_IP", "3"), ("MEMORY_MAX_GAMES", "0")]).unwrap();
    assert_eq!(s.max_waiting_per_ip, Some(3));
    assert_eq!(s.memory_max_games, None);
    assert_eq!(Settings::default().game_cache_games, 10_000);
    let s = settings(&[("GAME_CACHE_GAMES", "0")]).unwrap();
    assert_eq!(s.game_cache_games, 0);
    assert!(settings(&[("GAME_CACHE_GAMES", "many")]).is_err());
    let bad = settings(&[("MAX_WAITING_PER_IP", "many")]).unwrap_err();
    assert_eq!(bad.var, "MAX_WAITING_PER_IP");
    let s = settings(&[("MAX_GAMES_PER_IP", "0"), ("BOT_TABLES", "2")]).unwrap();
    assert_eq!((s.max_games_per_ip, s.bot_tables), (None, 2));
    let bad = settings(&[("BOT_TABLES", "0")]).unwrap_err();
    assert_eq!(bad.var, "BOT_TABLES");
}

#[test]
fn the_connection_cap_leaves_room_beyond_the_stream_cap_unless_behind_proxies() {
    let s = settings(&[("MAX_CONNECTIONS_PER_IP", "0")]).unwrap();
    assert_eq!(s.max_connections_per_ip, None);
    let err = settings(&[("MAX_CONNECTIONS_PER_IP", "32")]).unwrap_err();
    assert_eq!(err.var, "MAX_CONNECTIONS_PER_IP");
    assert!(err.to_string().contains("MAX_STREAMS_PER_IP"), "{err}");
    let err = settings(&[("MAX_STREAMS_PER_IP", "300")]).unwrap_err();
    assert_eq!(err.var, "MAX_CONNECTIONS_PER_IP");
    // Behind proxies every connection comes from a proxy: the cap is not applied.
    settings(&[
        ("MAX_STREAMS_PER_IP", "300"),
        ("RATE_LIMIT_PROXY_HOPS", "1"),
    ])
    .unwrap();
    settings(&[("MAX_CONNECTIONS_PER_IP", "33")]).unwrap();
}

#[test]
fn cluster_nodes_are_a_list_and_exclude_redis_url() {
    let s = settings(&[
        ("REDIS_CLUSTER_NODES", "redis://a:7000, redis://b:7001"),
        ("REDIS_WAIT_REPLICAS", "2"),
    ])
    .unwrap();
    assert_eq!(s.redis_cluster_nodes, ["redis://a:7000", "redis://b:7001"]);
    assert_eq!(s.redis_wait_replicas, Some(2));
    assert_eq!(settings(&[]).unwrap().redis_wait_replicas, None);
    let err = settings(&[
        ("REDIS_URL", "redis://db:6379"),
        ("REDIS_CLUSTER_NODES", "redis://a:7000"),
    ])
    .unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("REDIS_CLUSTER_NODES") && message.contains("REDIS_URL"),
        "{message}"
    );
}

#[test]
fn an_empty_redis_url_means_the_memory_store() {
    assert_eq!(settings(&[("REDIS_URL", "")]).unwrap().redis_url, None);
}

#[test]
fn a_bad_value_is_an_error_naming_the_variable() {
    for (var, value) in [
        ("BIND_ADDR", "localhost"),
        ("GAME_IDLE_TTL_SECS", "0"),
        ("STORE_TIMEOUT_MS", "soon"),
        ("LOG_FORMAT", "xml"),
        ("MAX_BODY_BYTES", "-1"),
        ("LONG_POLL_MAX_SECS", "1.5"),
        ("SHUTDOWN_TIMEOUT_SECS", "x"),
        ("RATE_LIMIT_PER_IP", "-5"),
        ("RATE_LIMIT_PER_TOKEN", "fast"),
        ("RATE_LIMIT_PER_TOKEN_BURST", "0"),
        ("RATE_LIMIT_PROXY_HOPS", "300"),
        ("REDIS_CLUSTER_NODES", "a:7000"),
        ("REDIS_WAIT_REPLICAS", "-1"),
        ("MAX_STREAMS_PER_IP", "0"),
        ("MAX_STREAMS", "many"),
        ("BODY_TIMEOUT_MS", "0"),
        ("HEAD_TIMEOUT_MS", "0"),
        ("MAX_CONNECTIONS_PER_IP", "-1"),
        ("ALLOW_PREARRANGED", "perhaps"),
        ("CORS_ORIGINS", "localhost:3000"),
    ] {
        let err = settings(&[(var, value)]).unwrap_err();
        assert_eq!(err.var, var);
        let message = err.to_string();
        assert!(
            message.starts_with(var) && message.contains(value),
            "{message}"
        );
    }
}
