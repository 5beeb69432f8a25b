//! `validate --sim-timestamps`: the simulations matched to kernel TCP keep
//! TCP timestamps as Linux does (the flow key `timestamps`), where by
//! default it keeps none. Linux sends them on every connection
//! (`net.ipv4.tcp_timestamps = 1`), and they change what its sender undoes
//! and samples and what its receiver discards (Notes on fidelity, "With
//! timestamps"); this option judges the simulator with them against the
//! same kernel runs before they become the default.

use serde_json::Value;

/// Whether the run a `validate.json` records had its simulations keep
/// timestamps (`simulator_timestamps`); a file from before the option
/// has none and ran without.
pub fn of_json(doc: &Value) -> Result<bool, String> {
    match &doc["simulator_timestamps"] {
        Value::Null => Ok(false),
        Value::Bool(b) => Ok(*b),
        other => Err(format!("simulator_timestamps `{other}`: not true or false")),
    }
}

/// What a table's caption says of it: nothing without timestamps, which
/// every run before the option had.
pub fn caption(doc: &Value) -> &'static str {
    match of_json(doc) {
        Ok(false) => "",
        Ok(true) => "; the simulated TCP flows keep TCP timestamps (`--sim-timestamps`)",
        Err(_) => "; whether the simulations kept TCP timestamps is not recorded in a form this version knows",
    }
}

/// `scenario` (the text of a scenario of `flows` flows) with every flow
/// keeping timestamps. The simulations matched to the UDP transport and
/// to s2n-quic drop the key again (`testbed::compare`): those have no TCP
/// timestamps.
pub fn apply(scenario: &str, flows: usize) -> Result<String, String> {
    use scenario::edit::{set_keys, Table, Value};
    let keys: Vec<_> = (0..flows)
        .map(|i| (Table::Flow(i), "timestamps", Value::Boolean(true)))
        .collect();
    set_keys(scenario, &keys)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_record_reads_back_and_an_old_file_ran_without() {
        assert_eq!(of_json(&json!({})), Ok(false));
        assert_eq!(of_json(&json!({ "simulator_timestamps": true })), Ok(true));
        assert_eq!(
            of_json(&json!({ "simulator_timestamps": false })),
            Ok(false)
        );
        let e = of_json(&json!({ "simulator_timestamps": "yes" })).unwrap_err();
        assert!(e.contains("not true or false"), "{e}");
        assert_eq!(caption(&json!({})), "");
        assert!(caption(&json!({ "simulator_timestamps": true })).contains("--sim-timestamps"));
    }

    #[test]
    fn apply_sets_the_flow_key_and_the_scenario_still_parses() {
        let text = crate::validate::scenario_toml_paced(
            &crate::validate::MATRIX[0],
            "bbr",
            6,
            1,
            crate::validate::SimPacer::Linux,
        );
        let stamped = apply(&text, 1).unwrap();
        let parse = |t: &str| {
            scenario::parse(
                t,
                "v.toml",
                std::path::Path::new("."),
                std::path::Path::new("v.toml"),
            )
            .unwrap()
        };
        assert!(parse(&stamped).runs[0].config.flows[0].timestamps);
        assert!(!parse(&text).runs[0].config.flows[0].timestamps);
    }
}
