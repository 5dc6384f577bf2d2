//! `#[derive(PilotageTool)]` (Part III 4.3 to 4.6, 5, 3.4): turns an annotated engine struct into
//! a loop tool whose MCP definition is conformant by construction.
