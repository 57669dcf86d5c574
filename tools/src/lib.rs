//! The measurement harness behind `siftdb bench engine`, a library so that
//! the peer comparison (`tools/benches/engine.rs`, siftdb beside fjall in
//! one process) runs the very same workloads as the command line.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]
#![warn(missing_docs)]

pub mod engine;
pub mod keys;
pub mod latency;
pub mod summary;
pub mod workloads;
