//! Memtable (in progress).
