//! The `pilotage` command line and the conformance linter of the Pilotage MCP extension.
//!
//! - [`cli`]: the subcommands (`pilotage validate`, `pilotage lint`, `discover`, `call`,
//!   `check`, `codegen`, `new`), each a function that
//!   writes to given writers and returns the exit status (0 success, 1 a failed check, 2
//!   unusable input or usage), so that `cargo xtask` and tests run them in-process;
//! - [`lint`]: the conformance linter, which checks a server surface against Part III (the
//!   MCP binding), with its rule table [`lint::RULES`].

pub mod check;
pub mod cli;
pub mod lint;
