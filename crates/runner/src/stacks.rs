//! The QUIC stacks' controllers, attached to the flows that name them.
//!
//! A scenario names a stack's controller (`s2n:bbr2`) without linking the
//! stack: its flow carries a [`netsim::CustomCc::named`] controller, which
//! the simulator refuses to run. Running is this crate's job, so it builds
//! the controllers here, from `quic-controllers`, before every run.

use netsim::{CustomCc, SimConfig};
use std::borrow::Cow;

/// `cfg` with the constructor of each stack controller its flows name
/// attached; borrowed unchanged when no flow names one. A named controller
/// that is no stack's is left as it is, and the simulator reports it.
pub fn attach(cfg: &SimConfig) -> Cow<'_, SimConfig> {
    let unbuilt = |c: &Option<CustomCc>| c.as_ref().is_some_and(|c| !c.is_built());
    if !cfg.flows.iter().any(|f| unbuilt(&f.custom_cc)) {
        return Cow::Borrowed(cfg);
    }
    let mut cfg = cfg.clone();
    for f in &mut cfg.flows {
        let stack = f
            .custom_cc
            .as_ref()
            .filter(|c| !c.is_built())
            .and_then(|c| c.name.parse::<quic_controllers::StackAlgorithm>().ok());
        if let Some(alg) = stack {
            f.custom_cc = Some(CustomCc::new(alg.name(), move |cc, now| {
                quic_controllers::build(alg, cc, now)
            }));
        }
    }
    Cow::Owned(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scenario's `s2n:bbr2` flow arrives by name; attached, it runs
    /// s2n-quic's controller under that name, and a config without one is
    /// not copied.
    #[test]
    fn a_stack_flow_gets_its_controller_and_others_stay_borrowed() {
        let text = "duration = \"1s\"\n[[flow]]\nalgorithm = \"s2n:bbr2\"\n\
                    [link.forward]\nrate = \"10Mbit\"\ndelay = \"10ms\"\n";
        let sc = scenario::parse(
            text,
            "t.toml",
            std::path::Path::new("."),
            std::path::Path::new("t.toml"),
        )
        .unwrap();
        let cfg = &sc.runs[0].config;
        let custom = cfg.flows[0].custom_cc.as_ref().unwrap();
        assert!(!custom.is_built(), "the parser links no stack");
        let err = netsim::run(cfg, &mut netsim::NoRecorder).unwrap_err();
        assert!(err.to_string().contains("s2n:bbr2"), "{err}");
        let attached = attach(cfg);
        assert!(matches!(attached, Cow::Owned(_)));
        let summary = netsim::run(&attached, &mut netsim::NoRecorder).unwrap();
        assert_eq!(summary.flows[0].algorithm, "s2n:bbr2");
        assert!(
            summary.flows[0].goodput_bps > 5e6,
            "{}",
            summary.flows[0].goodput_bps
        );
        let plain = text.replace("s2n:bbr2", "bbr");
        let sc = scenario::parse(
            &plain,
            "t.toml",
            std::path::Path::new("."),
            std::path::Path::new("t.toml"),
        )
        .unwrap();
        assert!(matches!(attach(&sc.runs[0].config), Cow::Borrowed(_)));
    }
}
