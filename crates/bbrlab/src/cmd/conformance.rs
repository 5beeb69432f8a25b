//! `bbrlab conformance`: the draft's example test cases on each named
//! controller, over the grid of path sizes.

use crate::cli::ConformanceArgs;
use crate::terminal::TerminalView;
use claims::conformance::{self, figures, grid, html, report};
use std::collections::BTreeMap;
use std::fs;

/// Runs the suite, prints the matrix, writes conformance.md,
/// conformance.json, conformance.html with a figure per case (unless
/// --no-plots) and, with --qlog, each run's qlog; with --strict, an error
/// when bbrlab's own bbr3 (draft) fails a case.
pub fn command(a: ConformanceArgs) -> Result<(), String> {
    let controllers = grid::Controller::parse_list(&a.cc)?;
    let opts = conformance::Options {
        cases: a.cases.clone(),
        only: a.only.clone(),
        controllers,
        grid: if a.quick {
            grid::Grid::Quick
        } else {
            grid::Grid::Full
        },
        jobs: a.jobs,
        timeout: std::time::Duration::from_secs(a.timeout),
        qlog: a.qlog.then(|| a.out.join("qlog")),
    };
    // The case files first, so a bad one is reported before any run.
    let cases = conformance::select(&opts)?;
    fs::create_dir_all(&a.out).map_err(|e| format!("cannot create {}: {e}", a.out.display()))?;
    let results = conformance::run(&opts, &TerminalView::new(a.quiet))?;
    let names: Vec<String> = opts.controllers.iter().map(|c| c.name.clone()).collect();
    let md = report::markdown(&cases, &names, &results);
    let json = report::Json {
        cases: cases.iter().map(report::JsonCase::of).collect(),
        controllers: &names,
        runs: &results,
    };
    let json = serde_json::to_string_pretty(&json).map_err(|e| format!("conformance.json: {e}"))?;
    let mut figs = BTreeMap::new();
    if !a.no_plots {
        let dir = a.out.join("figures");
        fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        for c in &cases {
            let point = conformance::figure_point(c);
            let runs: Vec<&conformance::RunResult> =
                results.iter().filter(|r| r.case == c.id).collect();
            let path = conformance::path_at(c, point)?;
            figs.insert(c.id.clone(), figures::draw(&dir, c, &path, &runs)?);
        }
    }
    let how = format!(
        "{} grid ({}); controllers {}; figures at {} for grid cases. Command: bbrlab conformance{}",
        if a.quick { "The quick" } else { "The full" },
        if a.quick {
            "50 Mbit/s, 40 ms"
        } else {
            "10, 50 and 250 Mbit/s × 10, 40 and 200 ms"
        },
        names.join(", "),
        "50 Mbit/s, 40 ms",
        std::env::args()
            .skip(2)
            .map(|s| format!(" {s}"))
            .collect::<String>()
    );
    let page = html::page(&cases, &names, &results, &figs, &how);
    for (file, text) in [
        ("conformance.md", &md),
        ("conformance.json", &json),
        ("conformance.html", &page),
    ] {
        let p = a.out.join(file);
        fs::write(&p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
    }
    print!("{md}");
    println!(
        "wrote {}, {} and {}{}",
        a.out.join("conformance.md").display(),
        a.out.join("conformance.json").display(),
        a.out.join("conformance.html").display(),
        if a.qlog {
            format!(
                ", and each run's qlog under {}",
                a.out.join("qlog").display()
            )
        } else {
            String::new()
        }
    );
    if a.strict {
        let reference: Vec<&str> = opts
            .controllers
            .iter()
            .filter(|c| c.is_reference())
            .map(|c| c.name.as_str())
            .collect();
        let failed: Vec<String> = results
            .iter()
            .filter(|r| reference.contains(&r.controller.as_str()) && r.failed())
            .map(|r| format!("{} at {}", r.case, r.point))
            .collect();
        if !failed.is_empty() {
            return Err(format!(
                "--strict: bbrlab's bbr3 (draft) failed {}",
                failed.join(", ")
            ));
        }
    }
    Ok(())
}
