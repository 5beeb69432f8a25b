//! Changing a few keys of a scenario's text and keeping the rest as
//! written.
//!
//! A command that runs a scenario with some settings of its own (`bbrlab
//! compare` gives the simulated flow the real transport's packet size and
//! receiver) writes the scenario it ran beside the results, so that
//! `bbrlab sim` on that file gives the same bytes. Changing the parsed
//! configuration alone would leave the written file saying something else.
//! Editing the text, and parsing the edited text for the run, keeps one
//! source for both. The edit keeps the file's comments and layout
//! (`toml_edit`, the parser `toml` itself uses).

/// A TOML value, as the edits take it (re-exported so that callers need no
/// `toml` of their own).
pub use toml::Value;
use toml_edit::{DocumentMut, Item};

/// Where a key goes: the top level or the `index`-th `[[flow]]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    /// Top-level keys (`duration`, `sample_interval`, …).
    Top,
    /// The `[[flow]]` at this index, counting from 0.
    Flow(usize),
}

/// `src` with `key = value` set in `table` (replacing any value it had),
/// for each entry of `keys` in order. Errors name what is missing or not
/// TOML; nothing else in the text changes.
pub fn set_keys(src: &str, keys: &[(Table, &str, Value)]) -> Result<String, String> {
    let mut doc: DocumentMut = src
        .parse()
        .map_err(|e| format!("the scenario is not valid TOML: {e}"))?;
    for (table, key, value) in keys {
        let item = toml_edit::value(to_edit_value(value)?);
        match table {
            Table::Top => {
                doc.insert(key, item);
            }
            Table::Flow(i) => {
                let flows = doc
                    .get_mut("flow")
                    .and_then(Item::as_array_of_tables_mut)
                    .ok_or("the scenario has no [[flow]] tables")?;
                let n = flows.len();
                let flow = flows.get_mut(*i).ok_or_else(|| {
                    format!("the scenario has {n} [[flow]] table(s); no flow {i} to set `{key}` in")
                })?;
                flow.insert(key, item);
            }
        }
    }
    Ok(doc.to_string())
}

/// Whether `table` of `src` sets `key` itself. A caller that fills in a
/// setting of its own only where the file is silent asks this first
/// (`bbrlab compare` gives a QUIC-like source's simulation an ACK per
/// packet unless the scenario names a receiver), since the parsed
/// configuration cannot tell a default from a value written out.
pub fn has_key(src: &str, table: Table, key: &str) -> Result<bool, String> {
    let doc: DocumentMut = src
        .parse()
        .map_err(|e| format!("the scenario is not valid TOML: {e}"))?;
    Ok(match table {
        Table::Top => doc.contains_key(key),
        Table::Flow(i) => doc
            .get("flow")
            .and_then(Item::as_array_of_tables)
            .and_then(|f| f.get(i))
            .is_some_and(|t| t.contains_key(key)),
    })
}

/// `toml`'s value as `toml_edit`'s, through its TOML text (the two crates'
/// values are separate types).
fn to_edit_value(value: &Value) -> Result<toml_edit::Value, String> {
    value
        .to_string()
        .parse()
        .map_err(|e| format!("`{value}` is not a TOML value: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "# a comment kept\nduration = \"5s\"\n\n[[flow]]\nalgorithm = \"bbr\" # why bbr\n\n[[flow]]\nalgorithm = \"cubic\"\nmss = 1500\n\n[link.forward]\nrate = \"10Mbit\"\n";

    #[test]
    fn has_key_tells_a_key_written_from_one_left_to_its_default() {
        assert!(has_key(SRC, Table::Flow(1), "mss").unwrap());
        assert!(!has_key(SRC, Table::Flow(0), "mss").unwrap());
        assert!(!has_key(SRC, Table::Flow(2), "mss").unwrap());
        assert!(has_key(SRC, Table::Top, "duration").unwrap());
        assert!(!has_key(SRC, Table::Top, "seed").unwrap());
        assert!(has_key("x = [", Table::Top, "x").is_err());
    }

    #[test]
    fn sets_and_replaces_keys_where_asked_and_keeps_the_rest() {
        let out = set_keys(
            SRC,
            &[
                (Table::Flow(1), "mss", Value::Integer(1448)),
                (Table::Flow(1), "ack", Value::String("linux".into())),
                (Table::Top, "sample_interval", Value::String("10ms".into())),
            ],
        )
        .unwrap();
        let v: toml::Table = toml::from_str(&out).unwrap();
        let flows = v["flow"].as_array().unwrap();
        assert_eq!(flows[1]["mss"].as_integer(), Some(1448));
        assert_eq!(flows[1]["ack"].as_str(), Some("linux"));
        assert!(flows[0].get("ack").is_none(), "flow 0 untouched");
        assert_eq!(v["sample_interval"].as_str(), Some("10ms"));
        assert_eq!(v["link"]["forward"]["rate"].as_str(), Some("10Mbit"));
        assert!(out.starts_with("# a comment kept\n"), "{out}");
        assert!(out.contains("# why bbr"), "{out}");
    }

    #[test]
    fn a_missing_flow_or_bad_text_is_an_error_that_says_so() {
        let e = set_keys(SRC, &[(Table::Flow(2), "mss", Value::Integer(1))]).unwrap_err();
        assert!(e.contains("2 [[flow]]") && e.contains("no flow 2"), "{e}");
        let e = set_keys(
            "duration = \"5s\"\n",
            &[(Table::Flow(0), "mss", Value::Integer(1))],
        )
        .unwrap_err();
        assert!(e.contains("no [[flow]]"), "{e}");
        let e = set_keys("duration = ", &[]).unwrap_err();
        assert!(e.contains("not valid TOML"), "{e}");
    }
}
