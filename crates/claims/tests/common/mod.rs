//! What the claims crate's integration tests share.

#![allow(dead_code)]

pub mod planted;
