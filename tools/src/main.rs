//! The siftdb command line (being written).
fn main() {}
