//! Black-box tests of the HTTP service: each starts the real server on a free port and
//! talks to it over HTTP, as a client would.

mod docs;
mod errors;
mod helpers;
mod hostile;
mod ops;
mod request_ids;
