//! Helpers the simulator's integration tests share.

use std::path::Path;

/// A link direction from its scenario TOML (`rate`, `delay`, `queue`,
/// ...), resolved as a scenario's is; panics on text a test got wrong.
pub fn direction(toml_text: &str) -> link::ResolvedDirection {
    let cfg: link::DirectionConfig = toml::from_str(toml_text).expect("valid direction");
    cfg.resolve(Path::new(".")).expect("resolves")
}
