//! The HTTP stack alone: actix-web answering `GET /healthz` with `ok`, nothing else (no
//! middleware, state or store). What a request costs here is the floor under any request
//! of the server's, on the same machine and with the same client:
//!
//! `cargo run --release --example bare_http -- 127.0.0.1:8090 &`, then
//! `cargo run --release --example load -- --url http://127.0.0.1:8090 --probe /healthz
//!  --server-pid $!` (its pid is printed too).

use actix_web::{App, HttpResponse, HttpServer, web};

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8090".to_owned());
    // As many workers as the server runs by default: one a core.
    let server = HttpServer::new(|| {
        App::new().route(
            "/healthz",
            web::get().to(|| async { HttpResponse::Ok().body("ok") }),
        )
    })
    .bind(&addr)?;
    println!("bare_http: pid {} listening on {addr}", std::process::id());
    server.run().await
}
