//! The suite's results for people and programs: a Markdown matrix of case
//! × controller (each cell: passed at every point, failed at n of them
//! with the first failing check's numbers, or checks skipped and why) and
//! `conformance.json` with every check of every run.

use super::case::Case;
use super::check::Outcome;
use super::RunResult;
use serde::Serialize;
use std::fmt::Write as _;

/// One cell of the matrix: a case on a controller, over its points.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cell {
    /// Runs (grid points) in all.
    pub runs: usize,
    /// Of those, runs that failed.
    pub failed: usize,
    /// The first failure, in words.
    pub first_failure: Option<String>,
    /// Checks skipped, and why (once each).
    pub skipped: Vec<String>,
}

impl Cell {
    /// `✓`, `✗ n/N`, with `(skipped: why)` after.
    pub fn text(&self) -> String {
        let mut t = if self.failed == 0 {
            "✓".to_string()
        } else {
            format!("✗ {}/{}", self.failed, self.runs)
        };
        if !self.skipped.is_empty() {
            let _ = write!(
                t,
                " ({} check(s) skipped: {})",
                self.skipped.len(),
                self.skipped.join("; ")
            );
        }
        t
    }
}

/// The cell of `case` on `controller`.
pub fn cell(results: &[RunResult], case: &str, controller: &str) -> Cell {
    let runs: Vec<&RunResult> = results
        .iter()
        .filter(|r| r.case == case && r.controller == controller)
        .collect();
    let failed: Vec<&&RunResult> = runs.iter().filter(|r| r.failed()).collect();
    let first_failure = failed.first().map(|r| {
        if let Some(e) = &r.error {
            return format!("{}: {e}", r.point);
        }
        let c = r
            .checks
            .iter()
            .find(|c| c.outcome.failed())
            .expect("a failed run without an error has a failed check");
        match &c.outcome {
            Outcome::Fail { measured, allowed } => {
                format!("{}: {}: {measured}, allowed {allowed}", r.point, c.check)
            }
            _ => unreachable!("found as failed"),
        }
    });
    let mut skipped: Vec<String> = Vec::new();
    for r in &runs {
        for c in &r.checks {
            if let Outcome::Skipped { why } = &c.outcome {
                let s = format!("{} ({why})", c.check);
                if !skipped.contains(&s) {
                    skipped.push(s);
                }
            }
        }
    }
    Cell {
        runs: runs.len(),
        failed: failed.len(),
        first_failure,
        skipped,
    }
}

/// The Markdown matrix, then each failure's numbers.
pub fn markdown(cases: &[Case], controllers: &[String], results: &[RunResult]) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "| case | {} |\n| --- |{}",
        controllers.join(" | "),
        " --- |".repeat(controllers.len())
    );
    let mut failures = Vec::new();
    for c in cases {
        let cells: Vec<String> = controllers
            .iter()
            .map(|cc| {
                let cell = cell(results, &c.id, cc);
                if let Some(f) = &cell.first_failure {
                    failures.push(format!(
                        "- **{} on {cc}** ({} of {} runs): {f}",
                        c.id, cell.failed, cell.runs
                    ));
                }
                cell.text()
            })
            .collect();
        let _ = writeln!(md, "| {} {} | {} |", c.id, c.title, cells.join(" | "));
    }
    if !failures.is_empty() {
        let _ = writeln!(
            md,
            "\nFailures (the first failing check of the first failing run):\n"
        );
        for f in failures {
            let _ = writeln!(md, "{f}");
        }
    }
    md
}

/// `conformance.json`: the cases (with each check's reason), the
/// controllers, every run's checks, and the matrix.
#[derive(Serialize)]
pub struct Json<'a> {
    /// The cases, with their checks and the reasons for the bounds.
    pub cases: Vec<JsonCase>,
    /// The controllers, in order.
    pub controllers: &'a [String],
    /// Every run.
    pub runs: &'a [RunResult],
}

/// A case as `conformance.json` lists it.
#[derive(Serialize)]
pub struct JsonCase {
    /// Its id.
    pub id: String,
    /// The draft's title.
    pub title: String,
    /// Where the draft states it.
    pub section: String,
    /// Its checks in words, each with why.
    pub checks: Vec<(String, String)>,
}

impl JsonCase {
    /// From a case.
    pub fn of(c: &Case) -> JsonCase {
        JsonCase {
            id: c.id.clone(),
            title: c.title.clone(),
            section: c.section.clone(),
            checks: c
                .checks
                .iter()
                .map(|k| (k.kind.text(), k.why.clone()))
                .collect(),
        }
    }
}
