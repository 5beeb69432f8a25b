//! Every scenario file committed under `scenarios/` loads: a new check in
//! the reader must not refuse a file the book, the claims or the tests
//! run.
use std::path::{Path, PathBuf};

fn toml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            // `meta/` holds the claims' and results' descriptions, not
            // scenarios.
            if p.file_name().is_some_and(|n| n != "meta") {
                toml_files(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "toml") {
            out.push(p);
        }
    }
}

#[test]
fn every_committed_scenario_loads() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files = Vec::new();
    toml_files(&root, &mut files);
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
