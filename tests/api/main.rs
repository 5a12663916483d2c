//! Black-box tests of the HTTP service: each starts the real server on a free port and
//! talks to it over HTTP, as a client would.

mod docs;
mod errors;
mod faults;
mod helpers;
mod hostile;
mod ops;
#[path = "../support/proxy.rs"]
mod proxy;
mod request_ids;
