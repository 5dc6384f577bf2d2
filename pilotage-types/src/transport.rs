//! The MCP streamable HTTP transport's rules for `Host` and `Origin` (the transport's security
//! warning: a server validates `Origin` to prevent DNS rebinding, and one run locally binds to
//! loopback), as data any HTTP server of an engine applies: rmcp's
//! `StreamableHttpServerConfig::with_allowed_hosts` / `with_allowed_origins` take them as they
//! are.
//!
//! *Foreign* Hosts and Origins are refused; the loopback names (`localhost`, `127.0.0.1`,
//! `[::1]`) are served **with any port**, over `http` and `https`: a browser page on the
//! same machine (`Origin: http://127.0.0.1:PORT`) is the local client the rule protects, not
//! the attacker.

/// The loopback host names every local server accepts in `Host` (any port).
pub const LOOPBACK_HOSTS: &[&str] = &["localhost", "127.0.0.1", "::1"];

/// The loopback Origins, any port, in the `scheme://host:*` form rmcp's allow-list reads.
pub const LOOPBACK_ORIGINS: &[&str] = &[
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// The Hosts to allow: the loopback names, then `extra` (the names an operator adds for a
/// deployment beyond loopback), each once.
pub fn allowed_hosts<'a>(extra: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut hosts: Vec<String> = LOOPBACK_HOSTS.iter().map(|h| (*h).to_owned()).collect();
    for host in extra {
        if !hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
            hosts.push(host.to_owned());
        }
    }
    hosts
}

/// The Origins to allow: the loopback Origins (any port), then `extra` (for example
/// `https://app.example.com`), each once.
pub fn allowed_origins<'a>(extra: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut origins: Vec<String> = LOOPBACK_ORIGINS.iter().map(|o| (*o).to_owned()).collect();
    for origin in extra {
        if !origins.iter().any(|o| o.eq_ignore_ascii_case(origin)) {
            origins.push(origin.to_owned());
        }
    }
    origins
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_first_then_the_operator_s_names_once() {
        assert_eq!(
            allowed_hosts(["mcp.example.com", "LOCALHOST"]),
            ["localhost", "127.0.0.1", "::1", "mcp.example.com"]
        );
        let origins = allowed_origins(["https://app.example.com", "http://127.0.0.1:*"]);
        assert_eq!(origins.len(), LOOPBACK_ORIGINS.len() + 1);
        assert_eq!(origins.last().map(String::as_str), Some("https://app.example.com"));
    }
}
