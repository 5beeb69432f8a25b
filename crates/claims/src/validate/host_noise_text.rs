//! How a table's heading says what timing noise the simulator put on its
//! ACKs: both validate tables (single flow and competing flows) record it
//! the same way, as `simulator_host_noise = { mean_us, sd_us }`.

use serde_json::Value;

/// `; <whose> comes back M µs ± SD µs later (…)` for a recorded noise,
/// nothing for a run that had none (older runs recorded none).
pub(super) fn host_noise_text(noise: &Value, whose: &str) -> String {
    match (noise["mean_us"].as_u64(), noise["sd_us"].as_u64()) {
        (Some(m), Some(sd)) => format!(
            "; {whose} comes back {m} µs ± {sd} µs later (the hosts' timing noise, normal, in order)"
        ),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_recorded_noise_is_said_and_a_missing_one_is_not() {
        assert_eq!(
            host_noise_text(&json!({"mean_us": 50, "sd_us": 20}), "each ACK"),
            "; each ACK comes back 50 µs ± 20 µs later (the hosts' timing noise, normal, in order)"
        );
        assert_eq!(host_noise_text(&Value::Null, "each ACK"), "");
        assert_eq!(host_noise_text(&json!({"mean_us": 50}), "each ACK"), "");
    }
}
