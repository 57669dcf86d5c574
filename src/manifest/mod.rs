//! Manifest (in progress).
