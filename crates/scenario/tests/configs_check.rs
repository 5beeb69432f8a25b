//! Every scenario under `scenarios/` builds congestion configs that
//! `congestion::Config::check` accepts: the reader refuses a file's values
//! with that check (`jitter.alpha` in (0, 1], say), and the presets the
//! reader picks (QUIC's 2018 BBR, Linux's v3) are defined settings.

use std::path::{Path, PathBuf};

fn toml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            toml_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "toml") {
            out.push(p);
        }
    }
}

#[test]
fn every_scenarios_flows_pass_the_config_check() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files = Vec::new();
    toml_files(&root, &mut files);
    files.sort();
    let mut flows = 0;
    for f in &files {
        // Some files there are not scenarios (a study's list of
        // references); the reader's own tests cover its refusals.
        let Ok(s) = scenario::load(f) else { continue };
        for run in &s.runs {
            for flow in &run.config.flows {
                if let Err(e) = flow.cc.check() {
                    panic!("{}: flow {}: {e}", f.display(), flow.name);
                }
                flows += 1;
            }
        }
    }
    assert!(
        flows > 100,
        "only {flows} flows read from {}",
        root.display()
    );
}

/// Every scenario file committed under `scenarios/` loads (`meta/`
/// directories hold the claims' and results' descriptions, not
/// scenarios): a new check in the reader must not refuse a file the book,
/// the claims or the tests run.
#[test]
fn every_committed_scenario_loads() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files = Vec::new();
    toml_files(&root, &mut files);
    files.retain(|f| !f.components().any(|c| c.as_os_str() == "meta"));
    assert!(
        files.len() > 50,
        "{} files under {}",
        files.len(),
        root.display()
    );
    let failed: Vec<String> = files
        .iter()
        .filter_map(|f| {
            scenario::load(f)
                .err()
                .map(|e| format!("{}: {e}", f.display()))
        })
        .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
