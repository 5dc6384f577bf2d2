//! Library side of `cargo xtask`, so tests can run the same functions the commands run
//! (the drift check is also a `#[test]` in `pilotage-tests`).

pub mod agree;
pub mod bench;
pub mod codegen;
pub mod corpus;
pub mod public_api;
#[cfg(feature = "cli")]
pub mod soak;
