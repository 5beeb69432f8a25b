//! The QUIC stacks' controllers, attached to the flows that name them.
//!
//! A scenario names a stack's controller (`s2n:bbr2`) without linking the
//! stack: its flow carries a [`netsim::CustomCc::named`] controller, which
//! the simulator refuses to run. Running is this crate's job, so it builds
//! the controllers here, from `quic-controllers`, before every run.

use netsim::{CustomCc, FlowConfig, SimConfig, Workload};
use std::borrow::Cow;

/// Whether `f` names a controller that has no constructor yet.
fn unbuilt(f: &FlowConfig) -> bool {
    f.custom_cc.as_ref().is_some_and(|c| !c.is_built())
}

/// `f` with the constructor of the stack controller it names attached; a
/// named controller that is no stack's is left as it is, and the
/// simulator reports it.
fn attach_flow(f: &mut FlowConfig) {
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

/// `cfg` and `work` with the constructor of each stack controller their
/// flows name attached: the listed flows and the templates of generated
/// flows (`[[arrivals]]`). Each is borrowed unchanged when none of its
/// flows names one.
pub fn attach<'a>(
    cfg: &'a SimConfig,
    work: &'a Workload,
) -> (Cow<'a, SimConfig>, Cow<'a, Workload>) {
    let cfg = if cfg.flows.iter().any(unbuilt) {
        let mut c = cfg.clone();
        c.flows.iter_mut().for_each(attach_flow);
        Cow::Owned(c)
    } else {
        Cow::Borrowed(cfg)
    };
    let work = if work.arrivals.iter().any(|a| unbuilt(&a.template)) {
        let mut w = work.clone();
        w.arrivals
            .iter_mut()
            .for_each(|a| attach_flow(&mut a.template));
        Cow::Owned(w)
    } else {
        Cow::Borrowed(work)
    };
    (cfg, work)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// A scenario's `s2n:bbr2` flow arrives by name; attached, it runs
    /// s2n-quic's controller under that name, and a config without one is
    /// not copied.
    #[test]
    fn a_stack_flow_gets_its_controller_and_others_stay_borrowed() {
        let text = "duration = \"1s\"\n[[flow]]\nalgorithm = \"s2n:bbr2\"\n\
                    [link.forward]\nrate = \"10Mbit\"\ndelay = \"10ms\"\n";
        let sc = scenario::parse(text, "t.toml", Path::new("."), Path::new("t.toml")).unwrap();
        let run = &sc.runs[0];
        let custom = run.config.flows[0].custom_cc.as_ref().unwrap();
        assert!(!custom.is_built(), "the parser links no stack");
        let err = netsim::run(&run.config, &mut netsim::NoRecorder).unwrap_err();
        assert!(err.to_string().contains("s2n:bbr2"), "{err}");
        let (cfg, work) = attach(&run.config, &run.workload);
        assert!(matches!(cfg, Cow::Owned(_)) && matches!(work, Cow::Borrowed(_)));
        let summary = netsim::run(&cfg, &mut netsim::NoRecorder).unwrap();
        assert_eq!(summary.flows[0].algorithm, "s2n:bbr2");
        assert!(
            summary.flows[0].goodput_bps > 5e6,
            "{}",
            summary.flows[0].goodput_bps
        );
        let plain = text.replace("s2n:bbr2", "bbr");
        let sc = scenario::parse(&plain, "t.toml", Path::new("."), Path::new("t.toml")).unwrap();
        let (cfg, work) = attach(&sc.runs[0].config, &sc.runs[0].workload);
        assert!(matches!(cfg, Cow::Borrowed(_)) && matches!(work, Cow::Borrowed(_)));
    }

    /// Generated flows (`[[arrivals]]`) naming a stack's controller get it
    /// too, through the runner as through this function.
    #[test]
    fn arrivals_of_a_stack_controller_run_through_the_runner() {
        let text = "duration = \"2s\"\nseed = 2\n[link.forward]\nrate = \"10Mbit\"\ndelay = \"10ms\"\n\
                    [[arrivals]]\nalgorithm = \"quinn:cubic\"\nrate = 5.0\nsize = { dist = \"fixed\", bytes = \"50kB\" }\n";
        let sc = scenario::parse(text, "t.toml", Path::new("."), Path::new("t.toml"))
            .unwrap_or_else(|e| panic!("{e}"));
        let run = &sc.runs[0];
        let err =
            netsim::run_workload(&run.config, &run.workload, &mut netsim::NoRecorder).unwrap_err();
        assert!(err.to_string().contains("quinn:cubic"), "{err}");
        let (cfg, work) = attach(&run.config, &run.workload);
        assert!(matches!(work, Cow::Owned(_)));
        netsim::run_workload(&cfg, &work, &mut netsim::NoRecorder).unwrap();
        let dir = tempfile::tempdir().unwrap();
        crate::sweep::run_one("t", run, dir.path()).unwrap();
        let fct = std::fs::read_to_string(dir.path().join("fct.csv")).unwrap();
        assert!(fct.lines().count() > 2, "generated flows finished: {fct}");
    }
}
