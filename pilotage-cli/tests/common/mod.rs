//! Fixtures shared by the integration tests: a conformant surface built from the toolkit.
#![allow(dead_code)]

pub mod surface;
