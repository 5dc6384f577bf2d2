//! Extraction of every JSON block of Part III. A block starts at a line that begins with `{`
//! at column 0 (a one-line block such as `{}` included) and ends at the line where its braces balance again (braces inside strings do
//! not count). Each block is keyed by its section (the nearest heading above it, e.g. `9.4`)
//! and a short hash of its exact text, so a spec bump that edits a block is noticed.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// One JSON block of Part III.
#[derive(Debug, Clone)]
pub struct Block {
    /// The section number of the nearest heading above the block (`"4.1"`, `"9.4"`, `"2"`).
    pub section: String,
    /// 1-based line of the opening brace in the text.
    pub line: usize,
    /// The block's exact text.
    pub text: String,
    /// First 12 hex digits of the SHA-256 of `text`.
    pub hash: String,
    /// The parsed value, or the parse error.
    pub json: Result<Value, String>,
}

impl Block {
    /// `section#hash`, the key of the classification table.
    pub fn key(&self) -> String {
        format!("{}#{}", self.section, self.hash)
    }
}

/// The section number of a heading line such as `9.4 Successful execution#` or
/// `5. Program-valued tool declaration#`.
fn heading_section(line: &str) -> Option<String> {
    let title = line.strip_suffix('#')?;
    let (number, rest) = title.split_once(' ')?;
    let number = number.trim_end_matches('.');
    let numeric = !number.is_empty()
        && number
            .split('.')
            .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit()));
    (numeric && !rest.is_empty()).then(|| number.to_owned())
}

/// Brace depth change of one line, ignoring braces inside JSON strings.
fn brace_delta(line: &str, in_string: &mut bool) -> i64 {
    let mut delta = 0;
    let mut escaped = false;
    for c in line.chars() {
        if *in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => *in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => *in_string = true,
            '{' => delta += 1,
            '}' => delta -= 1,
            _ => {}
        }
    }
    delta
}

/// Every JSON block of `text`, in order.
pub fn blocks(text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut section = String::from("0");
    let mut found = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index];
        if let Some(number) = heading_section(line) {
            section = number;
        }
        if !line.starts_with('{') {
            index += 1;
            continue;
        }
        let start = index;
        let mut depth = 0;
        let mut in_string = false;
        while index < lines.len() {
            depth += brace_delta(lines[index], &mut in_string);
            index += 1;
            if depth == 0 {
                break;
            }
        }
        let block_text = lines[start..index].join("\n");
        let digest = Sha256::digest(block_text.as_bytes());
        let hash = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
        let json = serde_json::from_str(&block_text).map_err(|e| e.to_string());
        found.push(Block {
            section: section.clone(),
            line: start + 1,
            text: block_text,
            hash,
            json,
        });
    }
    found
}

/// The blocks of the vendored Part III.
pub fn vendored_blocks() -> Vec<Block> {
    blocks(&crate::read_workspace_file("schemas/pilotage-part-iii.txt"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extracts_blocks_with_sections_and_ignores_braces_in_strings() {
        let text = "1. Intro#\n\nprose {not json}\n{\n  \"a\": \"}{\",\n  \"b\": {}\n}\n4.1 Tool#\n{\n}\n\n{}\n";
        let found = blocks(text);
        assert_eq!(found.len(), 3);
        assert_eq!(found[2].text, "{}");
        assert_eq!(found[0].section, "1");
        assert_eq!(found[0].line, 4);
        assert_eq!(found[0].json.as_ref().unwrap()["a"], "}{");
        assert_eq!(found[1].section, "4.1");
        assert_eq!(found[1].json.as_ref().unwrap(), &serde_json::json!({}));
    }
}
