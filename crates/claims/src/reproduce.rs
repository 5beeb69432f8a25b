//! `bbrlab reproduce`: run one scenario per published claim (C1–C14 in
//! CLAIMS.md), judge each against its published figure with a stated
//! tolerance, and write a static HTML report with the figures.
//!
//! The scenario files are `scenarios/claims/*.toml`, compiled into the
//! binary so the command works from any directory; the report shows each
//! file's text. The claims, with their verdict rules and tolerances, are
//! listed in [`crate::evaluate`].

use crate::evaluate::{self as claims, ClaimDef, Eval};
use crate::html::esc;
use crate::meta;
pub use crate::runs::RunData;
use runner::output::SummaryJson;
use runner::sweep::{run_one_with, run_parallel, View};
use scenario::Run;
use serde::Serialize;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A claim's outcome, as written to `claims.json`.
#[derive(Serialize)]
pub struct Outcome {
    /// C1 … C14.
    pub id: String,
    /// Short title.
    pub title: String,
    /// Seed file and figure.
    pub source: String,
    /// Reproduced or not.
    pub reproduced: bool,
    /// Published figure, measured figure, per quantity.
    pub rows: Vec<claims::Row>,
    /// Each tolerance check and whether it held.
    pub checks: Vec<claims::Check>,
    /// Why, when not reproduced (analysis), or remarks.
    pub notes: Vec<String>,
    /// Figure file stems, relative to the report directory.
    pub figures: Vec<String>,
    /// Wall-clock seconds spent simulating this claim's runs.
    pub seconds: f64,
    /// Each run: its sweep parameters and its directory (relative).
    pub runs: Vec<(String, String)>,
}

/// Options of the `reproduce` command.
pub struct Options {
    /// Report directory.
    pub out: PathBuf,
    /// Shorter durations (for CI).
    pub quick: bool,
    /// Only these claim ids (lowercase, e.g. `c1`), or all.
    pub only: Option<Vec<String>>,
    /// Worker threads.
    pub jobs: Option<usize>,
    /// No progress bar or table.
    pub quiet: bool,
}

fn select(only: &Option<Vec<String>>) -> Result<Vec<&'static ClaimDef>, String> {
    let all = claims::all();
    let Some(ids) = only else {
        return Ok(all.iter().collect());
    };
    let mut out = Vec::new();
    for id in ids {
        let want = id.trim().to_ascii_lowercase();
        let found = all.iter().find(|c| {
            let cid = c.meta.id.to_ascii_lowercase();
            cid == want
                || cid == format!("c{}", want.trim_start_matches('c').trim_start_matches('0'))
        });
        match found {
            Some(c) => out.push(c),
            None => {
                let known: Vec<&str> = all.iter().map(|c| c.meta.id.as_str()).collect();
                return Err(format!(
                    "--only {id}: no such claim; known: {}",
                    known.join(", ")
                ));
            }
        }
    }
    Ok(out)
}

/// Parses a claim's embedded scenario, applying the quick duration.
fn load(def: &ClaimDef, quick: bool) -> Result<Vec<Run>, String> {
    let file = format!("scenarios/claims/{}.toml", def.file);
    let sc = scenario::parse(def.toml, &file, Path::new("."), Path::new(&file))
        .map_err(|e| e.to_string())?;
    let mut runs = sc.runs;
    if quick {
        if let Some(secs) = def.meta.quick_seconds {
            for r in &mut runs {
                r.config.duration_ns = secs * 1_000_000_000;
            }
        }
    }
    Ok(runs)
}

/// The `reproduce` command.
/// Runs the selected claims' scenarios, judges each claim and writes the
/// report; the runs' progress goes to `view` (the command line's terminal,
/// Python's own, or [`runner::sweep::Quiet`]).
pub fn run(opts: &Options, view: &dyn View) -> Result<Vec<Outcome>, String> {
    let defs = select(&opts.only)?;
    let t_all = Instant::now();
    fs::create_dir_all(&opts.out)
        .map_err(|e| format!("cannot create {}: {e}", opts.out.display()))?;
    // Every run of every selected claim goes in one job list, so the
    // workers stay busy across claims (C2's two long runs start first).
    struct Job {
        claim: usize,
        index: usize,
        run: Run,
        dir: PathBuf,
    }
    let mut jobs = Vec::new();
    let mut per_claim = Vec::new();
    for (ci, def) in defs.iter().enumerate() {
        let runs = load(def, opts.quick)?;
        let cdir = opts.out.join(def.file);
        if cdir.exists() {
            fs::remove_dir_all(&cdir)
                .map_err(|e| format!("cannot clear {}: {e}", cdir.display()))?;
        }
        fs::create_dir_all(&cdir).map_err(|e| format!("cannot create {}: {e}", cdir.display()))?;
        fs::write(cdir.join("scenario.toml"), def.toml)
            .map_err(|e| format!("cannot write {}: {e}", cdir.display()))?;
        per_claim.push(runs.len());
        for (i, run) in runs.into_iter().enumerate() {
            jobs.push(Job {
                claim: ci,
                index: i,
                dir: cdir.join(format!("run-{i:04}")),
                run,
            });
        }
    }
    // Longest first: simulated packets ≈ rate × duration.
    jobs.sort_by(|a, b| {
        let cost = |j: &Job| {
            j.run.config.duration_ns as f64 * j.run.config.forward.rate.peak_bps().min(1e12)
        };
        cost(b).total_cmp(&cost(a))
    });
    let done = run_parallel(
        &jobs,
        opts.jobs,
        view,
        |j| {
            (
                format!("{} run {}", defs[j.claim].meta.id, j.index),
                j.run.config.duration_ns,
            )
        },
        |j, clock| {
            let t0 = Instant::now();
            run_one_with(defs[j.claim].file, &j.run, &j.dir, clock)
                .map(|s| (s, t0.elapsed().as_secs_f64()))
        },
    );
    type Slot = Option<Result<(SummaryJson, f64), String>>;
    let mut results: Vec<Vec<Slot>> = per_claim
        .iter()
        .map(|&k| (0..k).map(|_| None).collect())
        .collect();
    for (j, r) in jobs.iter().zip(done) {
        results[j.claim][j.index] = r;
    }
    // Put the jobs back in claim/run order to pair them with results.
    jobs.sort_by_key(|j| (j.claim, j.index));
    let mut outcomes = Vec::new();
    let mut job_iter = jobs.into_iter().peekable();
    for (ci, def) in defs.iter().enumerate() {
        let mut data = Vec::new();
        let mut seconds = 0.0;
        for (ri, slot) in results[ci].iter_mut().enumerate() {
            let job = job_iter.next().expect("one job per result");
            let (summary, secs) = match slot.take() {
                Some(Ok(v)) => v,
                Some(Err(e)) => return Err(format!("{} run {ri}: {e}", def.meta.id)),
                None => return Err(format!("{} run {ri} did not complete", def.meta.id)),
            };
            seconds += secs;
            data.push(RunData {
                params: job.run.params.clone(),
                summary,
                href: format!("{}/run-{ri:04}", def.file),
                dir: job.dir,
                duration_s: job.run.config.duration_ns as f64 / 1e9,
            });
        }
        let cdir = opts.out.join(def.file);
        let eval =
            (def.evaluate)(&data, &cdir, &def.meta).map_err(|e| format!("{}: {e}", def.meta.id))?;
        let mut outcome = outcome(def, eval, seconds);
        outcome.runs = data
            .iter()
            .map(|d| {
                let p = d
                    .params
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                (
                    if p.is_empty() {
                        "the run".to_string()
                    } else {
                        p
                    },
                    d.href.clone(),
                )
            })
            .collect();
        if !opts.quiet {
            println!("{}", one_line(&outcome));
        }
        write_claim_files(&cdir, &data).map_err(|e| format!("{}: {e}", def.meta.id))?;
        outcomes.push(outcome);
    }
    let total = t_all.elapsed().as_secs_f64();
    let json = serde_json::to_string_pretty(&outcomes).map_err(|e| e.to_string())?;
    fs::write(opts.out.join("claims.json"), json + "\n")
        .map_err(|e| format!("writing claims.json: {e}"))?;
    // Linux TCP measured on this kernel (`kernel jitter-sweep`): shown in
    // the last of C11/C12 selected, beside the simulator's result.
    let linux_tcp = defs
        .iter()
        .rposition(|d| LINUX_TCP_CLAIMS.contains(&d.meta.id.as_str()))
        .map(|i| {
            (
                i,
                crate::linux_tcp::report_section(&crate::linux_tcp::data_dir(), &opts.out),
            )
        });
    let html = report_html(&defs, &outcomes, opts.quick, total, linux_tcp);
    fs::write(opts.out.join("index.html"), html).map_err(|e| format!("writing index.html: {e}"))?;
    if !opts.quiet {
        let ok = outcomes.iter().filter(|o| o.reproduced).count();
        println!(
            "{ok} of {} claims reproduced in {total:.1} s; report: {}",
            outcomes.len(),
            opts.out.join("index.html").display()
        );
    }
    Ok(outcomes)
}

/// `reproduce --strict`'s verdict: an error naming every claim that was
/// not reproduced, so CI fails on a regression; `Ok` when all were. Without
/// `--strict` the command exits 0 either way, because a claim that does not
/// reproduce is a result the report explains, not a broken run.
pub fn require_all(outcomes: &[Outcome]) -> Result<(), String> {
    let missed: Vec<&str> = outcomes
        .iter()
        .filter(|o| !o.reproduced)
        .map(|o| o.id.as_str())
        .collect();
    if missed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "--strict: {} of {} claims not reproduced: {} (see the report)",
            missed.len(),
            outcomes.len(),
            missed.join(", ")
        ))
    }
}

/// Writes the claim's combined summary (all runs) as JSON and CSV.
fn write_claim_files(cdir: &Path, data: &[RunData]) -> Result<(), String> {
    let summaries: Vec<&SummaryJson> = data.iter().map(|d| &d.summary).collect();
    let name = summaries.first().map_or("", |s| s.scenario.as_str());
    runner::output::write_summaries(cdir, name, &summaries).map_err(|e| e.to_string())
}

/// A claim's outcome from its evaluation. Its notes are the metadata's
/// remarks, then the evaluation's, then, when it is not reproduced, the
/// analysis of why.
fn outcome(def: &ClaimDef, eval: Eval, seconds: f64) -> Outcome {
    let reproduced = !eval.checks.is_empty() && eval.checks.iter().all(|c| c.ok);
    let mut notes = def.meta.notes.clone();
    notes.extend(eval.notes);
    if !reproduced {
        if let Some(a) = &def.meta.analysis {
            notes.push(a.clone());
        }
    }
    Outcome {
        id: def.meta.id.clone(),
        title: def.meta.title.clone(),
        source: def.meta.source.clone(),
        reproduced,
        rows: eval.rows,
        checks: eval.checks,
        notes,
        figures: eval
            .figures
            .iter()
            .map(|f| format!("{}/{f}", def.file))
            .collect(),
        seconds,
        runs: Vec::new(),
    }
}

fn one_line(o: &Outcome) -> String {
    let verdict = if o.reproduced {
        "reproduced    "
    } else {
        "NOT reproduced"
    };
    let key = o
        .rows
        .iter()
        .take(2)
        .map(|r| format!("{}: {} (published {})", r.quantity, r.measured, r.published))
        .collect::<Vec<_>>()
        .join("; ");
    format!("{:<4} {verdict}  {}", o.id, key)
}

/// The seed numbers a claim's `source` names ("seed 000 fig. 8; seed 003").
fn seeds_cited(source: &str) -> Vec<&'static str> {
    meta::references()
        .iter()
        .filter(|r| source.contains(&format!("seed {}", r.seed)))
        .map(|r| r.seed.as_str())
        .collect()
}

/// The UTC calendar date of `secs` since the Unix epoch, as YYYY-MM-DD
/// (the civil-from-days rule; no date crate needed for one stamp).
pub fn utc_date(secs: u64) -> String {
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}\
h1{margin-bottom:.2em}section{border-top:1px solid #ccc;padding-top:1em;margin-top:2em}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}\
th{background:#f4f4f4}.ok{color:#fff;background:#2a7d2a;padding:.15em .5em;border-radius:3px}\
.no{color:#fff;background:#b52a2a;padding:.15em .5em;border-radius:3px}img{max-width:100%;border:1px solid #eee}\
pre{background:#f7f7f7;padding:.6em;overflow-x:auto;font-size:90%}details{margin:.5em 0}.pass{color:#2a7d2a}.fail{color:#b52a2a}";

/// The claims whose experiment `bbrlab kernel jitter-sweep` repeats on real
/// Linux TCP.
const LINUX_TCP_CLAIMS: [&str; 2] = ["C11", "C12"];

/// The report page. `linux_tcp` is the "Linux TCP (kernel, measured)"
/// block and the index (into `defs`) of the claim section it goes in; the
/// other of C11/C12 links to it.
fn report_html(
    defs: &[&ClaimDef],
    outcomes: &[Outcome],
    quick: bool,
    total_s: f64,
    linux_tcp: Option<(usize, String)>,
) -> String {
    let mut h = String::new();
    let ok = outcomes.iter().filter(|o| o.reproduced).count();
    let _ = write!(
        h,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>bbrlab: reproduced claims</title><style>{STYLE}</style></head><body>\
         <h1>bbrlab: published BBR results, reproduced</h1>\
         <p>{ok} of {} claims reproduced{}. Simulated by bbrlab's deterministic packet-level simulator (netsim) with the <code>congestion</code> crate's \
         BBR v1 (Linux <code>tcp_bbr</code> semantics), <code>bbr-jitter</code>, CUBIC and Reno; total {total_s:.1} s wall-clock. \
         Each claim below gives its source, the scenario file, the published figure next to the measured one, every tolerance check, and the verdict. \
         Published values are drawn as black triangles on the plots.</p>\
         <p>bbrlab {} (git commit {}), generated {} UTC. Sources: see the <a href=\"#references\">references</a>.</p>",
        outcomes.len(),
        if quick { " (quick mode: shortened durations)" } else { "" },
        env!("CARGO_PKG_VERSION"),
        esc(runner::provenance().1),
        utc_date(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        ),
    );
    h.push_str("<table><tr><th>claim</th><th>source</th><th>verdict</th><th>key figures (measured vs published)</th></tr>");
    for o in outcomes {
        let badge = if o.reproduced {
            "<span class=\"ok\">reproduced</span>"
        } else {
            "<span class=\"no\">not reproduced</span>"
        };
        let key = o
            .rows
            .iter()
            .take(2)
            .map(|r| {
                format!(
                    "{}: {} vs {}",
                    esc(&r.quantity),
                    esc(&r.measured),
                    esc(&r.published)
                )
            })
            .collect::<Vec<_>>()
            .join("<br>");
        let _ = write!(
            h,
            "<tr><td><a href=\"#{id}\">{id}</a> {}</td><td>{}</td><td>{badge}</td><td>{key}</td></tr>",
            esc(&o.title),
            esc(&o.source),
            id = o.id
        );
    }
    h.push_str("</table>");
    for (i, (def, o)) in defs.iter().zip(outcomes).enumerate() {
        let badge = if o.reproduced {
            "<span class=\"ok\">reproduced</span>"
        } else {
            "<span class=\"no\">not reproduced</span>"
        };
        let _ = write!(
            h,
            "<section id=\"{id}\"><h2>{id}: {} {badge}</h2><p><b>Source:</b> {}. <b>Published:</b> {}</p>",
            esc(&o.title),
            esc(&o.source),
            esc(&def.meta.published),
            id = o.id
        );
        for id in seeds_cited(&o.source) {
            if let Some(r) = meta::references().iter().find(|r| r.seed == id) {
                let _ = write!(h, "<p class=\"ref\">[{id}] {}</p>", esc(&r.text));
            }
        }
        h.push_str("<table><tr><th>quantity</th><th>published</th><th>measured</th></tr>");
        for r in &o.rows {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&r.quantity),
                esc(&r.published),
                esc(&r.measured)
            );
        }
        h.push_str("</table>");
        for f in &o.figures {
            let _ = write!(
                h,
                "<p><a href=\"{f}.png\"><img src=\"{f}.svg\" alt=\"{}\"></a></p>",
                esc(f)
            );
        }
        h.push_str("<p><b>Checks</b> (each tolerance and its reason):</p><ul>");
        for c in &o.checks {
            let (cls, mark) = if c.ok {
                ("pass", "✓")
            } else {
                ("fail", "✗")
            };
            let _ = write!(h, "<li class=\"{cls}\">{mark} {}</li>", esc(&c.what));
        }
        h.push_str("</ul>");
        for n in &o.notes {
            let _ = write!(h, "<p><b>Analysis:</b> {}</p>", esc(n));
        }
        match &linux_tcp {
            Some((at, block)) if *at == i => h.push_str(block),
            Some((at, _)) if LINUX_TCP_CLAIMS.contains(&def.meta.id.as_str()) => {
                let _ = write!(
                    h,
                    "<p>The same path on real Linux TCP (kernel <code>bbr</code> against the BPF <code>bbrlab_jitter</code>): <a href=\"#linux-tcp\">Linux TCP (kernel, measured)</a>, under {}.</p>",
                    esc(&defs[*at].meta.id)
                );
            }
            _ => {}
        }
        let _ = write!(
            h,
            "<p>Data: <a href=\"{f}/summary.json\">summary.json</a> · <a href=\"{f}/summary.csv\">summary.csv</a> · \
             <a href=\"{f}/scenario.toml\">scenario.toml</a> ({:.1} s of simulation wall time). Per-run time series:</p><ul>",
            o.seconds,
            f = def.file
        );
        for (label, href) in &o.runs {
            let _ = write!(
                h,
                "<li>{}: <a href=\"{href}/flows.csv\">flows.csv</a> · <a href=\"{href}/link.csv\">link.csv</a> · <a href=\"{href}/summary.json\">summary.json</a></li>",
                esc(label)
            );
        }
        let _ = write!(
            h,
            "</ul><details><summary>Scenario file</summary><pre>{}</pre></details></section>",
            esc(def.toml)
        );
    }
    h.push_str("<section id=\"references\"><h2>References</h2><ol>");
    for r in meta::references() {
        let _ = write!(h, "<li>[{}] {}</li>", r.seed, esc(&r.text));
    }
    h.push_str("</ol></section></body></html>\n");
    h
}

/// Escapes a cell for a Markdown table (pipes and line breaks).
fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The claims table (the book's "Reproduced claims" chapter), from a `claims.json` that `reproduce`
/// wrote: a row per claim, its published and measured figures per
/// quantity (`;`-joined), and the verdict. The book pastes this output,
/// so the table always matches a run that anyone can repeat.
pub fn table_from_json(text: &str) -> Result<String, String> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not a claims.json: {e}"))?;
    let claims = v
        .as_array()
        .ok_or("not a claims.json: expected a list of claims")?;
    let mut out =
        String::from("| claim | published | measured | verdict |\n| --- | --- | --- | --- |\n");
    for c in claims {
        let field = |k: &str| {
            c[k].as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("not a claims.json: a claim without `{k}`"))
        };
        let rows = c["rows"].as_array().cloned().unwrap_or_default();
        let join = |k: &str| {
            rows.iter()
                .map(|r| {
                    format!(
                        "{}: {}",
                        r["quantity"].as_str().unwrap_or("?"),
                        r[k].as_str().unwrap_or("?")
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        let verdict = match c["reproduced"].as_bool() {
            Some(true) => "reproduced",
            Some(false) => "**not reproduced**",
            None => return Err("not a claims.json: a claim without `reproduced`".into()),
        };
        out.push_str(&format!(
            "| {} {} | {} | {} | {} |\n",
            field("id")?,
            md_cell(&field("title")?),
            md_cell(&join("published")),
            md_cell(&join("measured")),
            verdict
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod table_tests {
    use super::{require_all, seeds_cited, table_from_json, utc_date, Outcome};

    fn outcome(id: &str, reproduced: bool) -> Outcome {
        Outcome {
            id: id.into(),
            title: String::new(),
            source: String::new(),
            reproduced,
            rows: Vec::new(),
            checks: Vec::new(),
            notes: Vec::new(),
            figures: Vec::new(),
            seconds: 0.0,
            runs: Vec::new(),
        }
    }

    #[test]
    fn strict_fails_exactly_when_a_claim_is_not_reproduced() {
        assert!(require_all(&[]).is_ok());
        assert!(require_all(&[outcome("C1", true), outcome("C2", true)]).is_ok());
        let e = require_all(&[
            outcome("C1", true),
            outcome("C7", false),
            outcome("C11", false),
        ])
        .unwrap_err();
        assert!(e.contains("2 of 3 claims not reproduced: C7, C11"), "{e}");
    }

    #[test]
    fn claims_cite_their_seeds_and_dates_are_civil() {
        assert_eq!(seeds_cited("seed 000 fig. 8; seed 003"), ["000", "003"]);
        assert_eq!(seeds_cited("seed 004 (Linux commit)"), ["004"]);
        assert!(seeds_cited("elsewhere").is_empty());
        assert_eq!(utc_date(0), "1970-01-01");
        // 2026-11-23 00:00 UTC and the leap day 2024-02-29.
        assert_eq!(utc_date(1_795_392_000), "2026-11-23");
        assert_eq!(utc_date(1_709_164_800 + 86_399), "2024-02-29");
    }

    #[test]
    fn the_claims_table_is_built_from_claims_json() {
        let json = r#"[
          {"id": "C1", "title": "random loss", "reproduced": true,
           "rows": [{"quantity": "BBR at 5 %", "published": "≈ 95", "measured": "94.1"},
                    {"quantity": "CUBIC a|b", "published": "30 %", "measured": "42 %"}]},
          {"id": "C7", "title": "buffer sweep", "reproduced": false, "rows": []}
        ]"#;
        let t = table_from_json(json).unwrap();
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(
            lines[2],
            "| C1 random loss | BBR at 5 %: ≈ 95; CUBIC a\\|b: 30 % | BBR at 5 %: 94.1; CUBIC a\\|b: 42 % | reproduced |"
        );
        assert!(lines[3].ends_with("| **not reproduced** |"));
        assert!(table_from_json("{}").is_err());
        assert!(table_from_json(r#"[{"id": "C1"}]"#).is_err());
    }
}
