//! A TCP proxy that delays every byte by a fixed time each way: a Redis "across a
//! network" for the load benchmark (`scripts/bench-trip.sh`), on one machine.
//!
//! `cargo run --release --example delay_proxy -- --to 127.0.0.1:6379 --delay-us 150`
//! prints `listening on 127.0.0.1:<port>` and forwards each connection to `--to`; what
//! either side sends is written to the other `--delay-us` after it was read, so a request
//! and its answer take twice that longer, and pipelined commands keep their pipelining (a
//! delay, not a narrower pipe). Each direction of each connection has a reading thread
//! and a writing thread (the server's and the benchmark's few connections to Redis: a
//! handful of threads), and the writing threads sleep with a timer slack of 1 ns, so a
//! delay is kept to within tens of microseconds rather than the kernel's default 50.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use clap::Parser;

#[derive(Parser, Debug)]
#[command(about = "A TCP proxy adding a fixed delay each way")]
struct Args {
    /// Where to listen (port 0: any free one, printed).
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: String,
    /// Where to forward.
    #[arg(long)]
    to: String,
    /// Microseconds each byte waits, each way.
    #[arg(long, default_value_t = 150)]
    delay_us: u64,
}

/// Copies `from` to `to`, each chunk written `delay` after it was read.
fn pump(mut from: TcpStream, mut to: TcpStream, delay: Duration) {
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    let writer = thread::spawn(move || {
        // SAFETY: prctl with PR_SET_TIMERSLACK only sets this thread's timer slack.
        unsafe {
            libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
        }
        for (due, chunk) in rx {
            let now = Instant::now();
            if due > now {
                thread::sleep(due - now);
            }
            if to.write_all(&chunk).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if tx
                    .send((Instant::now() + delay, buf[..n].to_vec()))
                    .is_err()
                {
                    break;
                }
            }
        }
    }
    drop(tx);
    let _ = writer.join();
}

fn main() -> std::io::Result<()> {
    let args = Args::parse();
    let delay = Duration::from_micros(args.delay_us);
    let listener = TcpListener::bind(&args.listen)?;
    println!("listening on {}", listener.local_addr()?);
    std::io::stdout().flush()?;
    for client in listener.incoming() {
        let Ok(client) = client else { continue };
        let Ok(server) = TcpStream::connect(&args.to) else {
            continue;
        };
        for stream in [&client, &server] {
            stream.set_nodelay(true)?;
        }
        let (client_in, server_out) = (client.try_clone()?, server.try_clone()?);
        thread::spawn(move || pump(client_in, server_out, delay));
        thread::spawn(move || pump(server, client, delay));
    }
    Ok(())
}
