//! Records which versions of the QUIC stacks quic-bulk is built with, so
//! `quic-bulk --version` can say them and every result a run of it feeds
//! names the stack that produced it. Read from the workspace's Cargo.lock
//! at build time: at run time the checkout may be another one, or gone
//! (an installed binary).

use std::path::Path;

/// The stacks quic-bulk links, as Cargo.lock names them.
const STACKS: [&str; 3] = ["s2n-quic", "quinn", "noq"];

fn main() {
    let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let text = std::fs::read_to_string(&lock).unwrap_or_default();
    let stacks: Vec<String> = STACKS
        .iter()
        .map(|name| match version_in_lock(&text, name) {
            Some(v) => format!("{name} {v}"),
            None => format!("{name} (version unknown)"),
        })
        .collect();
    println!("cargo:rustc-env=QUIC_BULK_STACKS={}", stacks.join(", "));
}

/// The version of package `name` in a Cargo.lock's text: the `version`
/// line that follows its `name` line in its `[[package]]` table.
fn version_in_lock<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let want = format!("name = \"{name}\"");
    let mut lines = text.lines();
    while let Some(l) = lines.next() {
        if l.trim() == want {
            return lines
                .next()
                .and_then(|v| v.trim().strip_prefix("version = \""))
                .and_then(|v| v.strip_suffix('"'));
        }
    }
    None
}
