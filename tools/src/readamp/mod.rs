//! `siftdb bench`: read amplification of every filter policy against a
//! no-filter baseline, on identical data and identical lookups.

pub mod svg;
pub mod workload;
