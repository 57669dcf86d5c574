//! Filter benchmarks (being written).
fn main() {}
