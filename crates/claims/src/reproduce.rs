//! `bbrlab reproduce`: run one scenario per published claim (C1–C14 in the
//! book's Claims chapter), judge each against its published figure with a stated
//! tolerance, and write a static HTML report with the figures. The BBRv3
//! results (V1 …) run after the claims, in the same job list, and get a
//! section of their own in the same report.
//!
//! The scenario files are `scenarios/claims/*.toml` and
//! `scenarios/bbr3/*.toml`, compiled into the binary so the command works
//! from any directory; the report shows each file's text. The claims and
//! results, with their verdict rules and tolerances, are listed in
//! [`crate::evaluate`].

use crate::evaluate::{self as claims, ClaimDef, Eval, Suite};
use crate::html::{esc, STYLE};
use crate::jitter_sweep;
use crate::meta;
pub use crate::runs::RunData;
use runner::output::SummaryJson;
use runner::sweep::{run_one_logged, run_parallel, View};
use scenario::Run;
use serde::Serialize;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A claim's outcome, as written to `claims.json`.
#[derive(Serialize)]
pub struct Outcome {
    /// C1 … C14, or V1 … for a BBRv3 result.
    pub id: String,
    /// `claims` or `bbr3` (the BBRv3 suite).
    pub suite: &'static str,
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
    /// Only these claim or BBRv3 result ids (e.g. `c1`, `V2`), or all.
    pub only: Option<Vec<String>>,
    /// Worker threads.
    pub jobs: Option<usize>,
    /// No progress bar or table.
    pub quiet: bool,
    /// Also write each run's qlog (`flow-<i>.sqlog` in its run directory).
    pub qlog: bool,
}

/// The claims and BBRv3 results `only` names (`C3`, `3`, `c03`, `V1`), in
/// the order given, or all of them, claims first.
fn select(only: &Option<Vec<String>>) -> Result<Vec<&'static ClaimDef>, String> {
    let Some(ids) = only else {
        return Ok(claims::everything().collect());
    };
    let mut out = Vec::new();
    for id in ids {
        let want = id.trim().to_ascii_lowercase();
        let found = claims::everything().find(|c| {
            let cid = c.meta.id.to_ascii_lowercase();
            cid == want
                || (c.suite == Suite::Claims
                    && cid == format!("c{}", want.trim_start_matches('c').trim_start_matches('0')))
                || (c.suite == Suite::Bbr3
                    && want.starts_with('v')
                    && cid == format!("v{}", want.trim_start_matches('v').trim_start_matches('0')))
        });
        match found {
            Some(c) => out.push(c),
            None => {
                let known: Vec<&str> = claims::everything().map(|c| c.meta.id.as_str()).collect();
                return Err(format!(
                    "--only {id}: no such claim or BBRv3 result; known: {}",
                    known.join(", ")
                ));
            }
        }
    }
    Ok(out)
}

/// Parses a claim's embedded scenario, applying the quick duration. The
/// duration is set in the text, so each run's scenario.toml is what ran.
fn load(def: &ClaimDef, quick: bool) -> Result<Vec<Run>, String> {
    let file = def.scenario_path();
    let text = match (quick, def.meta.quick_seconds) {
        (true, Some(secs)) => scenario::edit::set_keys(
            def.toml,
            &[(
                scenario::edit::Table::Top,
                "duration",
                scenario::edit::Value::String(format!("{secs}s")),
            )],
        )
        .map_err(|e| format!("{file}: {e}"))?,
        _ => def.toml.to_string(),
    };
    let sc = scenario::parse(&text, &file, Path::new("."), Path::new(&file))
        .map_err(|e| e.to_string())?;
    Ok(sc.runs)
}

/// Checks that `ids` names at least one claim or BBRv3 result and nothing
/// else, before anything runs: the error of a caller's bad input, apart
/// from the failures a run may meet (Python raises the one as
/// `ValueError`, the other as `RuntimeError`).
pub fn check_only(ids: &[String]) -> Result<(), String> {
    if ids.is_empty() {
        return Err("no claim named; give ids such as C3 or V1".into());
    }
    select(&Some(ids.to_vec())).map(|_| ())
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
            run_one_logged(
                defs[j.claim].file,
                &j.run,
                &j.dir,
                clock,
                runner::sweep::Logs {
                    qlog: opts.qlog,
                    packets: false,
                },
            )
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
    // Seed 001's sweep measured on real stacks (Linux TCP, then s2n-quic):
    // shown in the last of C11/C12 selected, beside the simulator's result.
    let measured = defs
        .iter()
        .rposition(|d| MEASURED_CLAIMS.contains(&d.meta.id.as_str()))
        .map(|i| {
            let blocks: String = jitter_sweep::Source::ALL
                .iter()
                .map(|&s| jitter_sweep::report_section(s, &s.data_dir(), &opts.out))
                .collect();
            (i, blocks)
        });
    let earlier = earlier_results(&defs, &opts.out);
    if !opts.quiet && !earlier.is_empty() {
        println!(
            "note: {} also holds results of an earlier run that this one did not rerun ({}); index.html and claims.json cover this run only",
            opts.out.display(),
            earlier.join(", ")
        );
    }
    let html = report_html(&defs, &outcomes, opts.quick, total, measured, &earlier);
    fs::write(opts.out.join("index.html"), html).map_err(|e| format!("writing index.html: {e}"))?;
    if !opts.quiet {
        println!(
            "{} in {total:.1} s; report: {}",
            tally(&outcomes),
            opts.out.join("index.html").display()
        );
    }
    Ok(outcomes)
}

/// The claims' directories in `out` left by an earlier run that `defs`
/// (this run's selection, `--only`) did not rerun. They stay, as --only
/// means, but they are not this run's: the report and the terminal say
/// so, since a directory beside fresh ones looks as current as they do.
/// Only directories holding the `scenario.toml` a run writes count.
fn earlier_results(defs: &[&ClaimDef], out: &Path) -> Vec<String> {
    claims::everything()
        .filter(|c| !defs.iter().any(|d| d.file == c.file))
        .filter(|c| out.join(c.file).join("scenario.toml").is_file())
        .map(|c| c.file.to_string())
        .collect()
}

/// How many of each suite were reproduced: "12 of 14 claims reproduced",
/// "… and 4 of 6 BBRv3 results", or the BBRv3 part alone.
fn tally(outcomes: &[Outcome]) -> String {
    let count = |suite: Suite| {
        let of: Vec<&Outcome> = outcomes.iter().filter(|o| o.suite == suite.dir()).collect();
        (of.iter().filter(|o| o.reproduced).count(), of.len())
    };
    let (c_ok, c_n) = count(Suite::Claims);
    let (v_ok, v_n) = count(Suite::Bbr3);
    match (c_n, v_n) {
        (_, 0) => format!("{c_ok} of {c_n} claims reproduced"),
        (0, _) => format!("{v_ok} of {v_n} BBRv3 results reproduced"),
        _ => format!("{c_ok} of {c_n} claims and {v_ok} of {v_n} BBRv3 results reproduced"),
    }
}

/// `reproduce --strict`'s verdict: an error naming every claim (or BBRv3
/// result) that was not reproduced, so CI fails on a regression; `Ok` when
/// all were. Without
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
            "--strict: {} of {} claims and results not reproduced: {} (see the report)",
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
        suite: def.suite.dir(),
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

/// The claims whose experiment the jitter sweeps repeat on real stacks
/// (Linux TCP, `bbrlab kernel jitter-sweep`; s2n-quic, `bbrlab
/// jitter-sweep --source s2n`).
const MEASURED_CLAIMS: [&str; 2] = ["C11", "C12"];

/// The report page. `measured` is the real stacks' blocks ("Linux TCP
/// (kernel, measured)", "A real QUIC stack (s2n-quic), measured") and the
/// index (into `defs`) of the claim section they go in; the other of
/// C11/C12 links to them. The BBRv3 results, if any were run, follow
/// the claims under a heading of their own with their own summary table.
fn report_html(
    defs: &[&ClaimDef],
    outcomes: &[Outcome],
    quick: bool,
    total_s: f64,
    measured: Option<(usize, String)>,
    earlier: &[String],
) -> String {
    let mut h = String::new();
    let in_suite = |suite: Suite| {
        outcomes
            .iter()
            .enumerate()
            .filter(move |(_, o)| o.suite == suite.dir())
            .map(|(i, _)| i)
            .collect::<Vec<usize>>()
    };
    let (claims, bbr3) = (in_suite(Suite::Claims), in_suite(Suite::Bbr3));
    let _ = write!(
        h,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>bbrlab: reproduced claims</title><style>{STYLE}</style></head><body>\
         <h1>bbrlab: published BBR results, reproduced</h1>\
         <p>{}{}. Simulated by bbrlab's deterministic packet-level simulator (netsim) with the <code>congestion</code> crate's \
         BBR v1 (Linux <code>tcp_bbr</code> semantics), <code>bbr-jitter</code>, BBRv3 (<code>bbr3</code>), CUBIC and Reno; total {total_s:.1} s wall-clock. \
         Each claim below gives its source, the scenario file, the published figure next to the measured one, every tolerance check, and the verdict. \
         Published values are drawn as black triangles on the plots.{}</p>\
         <p>bbrlab {} (git commit {}), generated {} UTC. Sources: see the <a href=\"#references\">references</a>.</p>",
        tally(outcomes),
        if quick { " (quick mode: shortened durations)" } else { "" },
        if bbr3.is_empty() {
            ""
        } else {
            " The <a href=\"#bbr3\">BBRv3 results</a> follow the claims."
        },
        env!("CARGO_PKG_VERSION"),
        esc(runner::provenance().1),
        hostfacts::utc_today(),
    );
    if !earlier.is_empty() {
        let _ = write!(
            h,
            "<p><strong>This report covers {} only</strong> (<code>--only</code>). The output directory also holds results of an earlier run that this one did not rerun, not part of this report: {}.</p>",
            esc(&outcomes.iter().map(|o| o.id.as_str()).collect::<Vec<_>>().join(", ")),
            earlier.iter().map(|f| format!("<code>{}</code>", esc(f))).collect::<Vec<_>>().join(", ")
        );
    }
    if !claims.is_empty() {
        summary_table(&mut h, "claim", claims.iter().map(|&i| &outcomes[i]));
    }
    for &i in &claims {
        section(&mut h, defs[i], &outcomes[i], |h| match &measured {
            Some((at, block)) if *at == i => h.push_str(block),
            Some((at, _)) if MEASURED_CLAIMS.contains(&defs[i].meta.id.as_str()) => {
                let _ = write!(
                    h,
                    "<p>The same path on real stacks, under {}: <a href=\"#{}\">{}</a> (kernel <code>bbr</code> against the BPF <code>bbrlab_jitter</code>) and <a href=\"#{}\">{}</a> (bbrlab's <code>bbr</code> and <code>bbr-jitter</code> inside s2n-quic, and s2n-quic's own BBRv2).</p>",
                    esc(&defs[*at].meta.id),
                    jitter_sweep::Source::LinuxTcp.anchor(),
                    jitter_sweep::Source::LinuxTcp.heading(),
                    jitter_sweep::Source::S2nQuic.anchor(),
                    jitter_sweep::Source::S2nQuic.heading(),
                );
            }
            _ => {}
        });
    }
    if !bbr3.is_empty() {
        h.push_str(
            "<section id=\"bbr3\"><h2>BBRv3 results</h2>\
             <p>What BBRv3's authors and independent evaluations published about v3, each on a path of its own with \
             <code>bbr3</code> beside v1 <code>bbr</code> on the same scenario (and CUBIC where the result is about sharing). \
             These are not claims C15 and on: C1–C14 are the v1 paper's. Most published v3 results come from real networks or \
             emulators and give a shape, not numbers a simulator can hit, so most checks are about the shape \
             (who is below whom, where a curve bends) and each says where its range comes from.</p>",
        );
        summary_table(&mut h, "result", bbr3.iter().map(|&i| &outcomes[i]));
        h.push_str("</section>");
        for &i in &bbr3 {
            section(&mut h, defs[i], &outcomes[i], |_| {});
        }
    }
    h.push_str("<section id=\"references\"><h2>References</h2><ol>");
    for r in meta::references() {
        let _ = write!(h, "<li>[{}] {}</li>", r.seed, esc(&r.text));
    }
    if !bbr3.is_empty() {
        for d in meta::documents() {
            let _ = write!(h, "<li>[{}] {}</li>", esc(&d.tag), esc(&d.text));
        }
    }
    h.push_str("</ol></section></body></html>\n");
    h
}

/// The verdict's badge.
fn badge(reproduced: bool) -> &'static str {
    if reproduced {
        "<span class=\"ok\">reproduced</span>"
    } else {
        "<span class=\"no\">not reproduced</span>"
    }
}

/// The table of verdicts at the top of the page (`what`: "claim") or of
/// the BBRv3 section ("result").
fn summary_table<'a>(h: &mut String, what: &str, outcomes: impl Iterator<Item = &'a Outcome>) {
    let _ = write!(
        h,
        "<table><tr><th>{what}</th><th>source</th><th>verdict</th><th>key figures (measured vs published)</th></tr>"
    );
    for o in outcomes {
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
            "<tr><td><a href=\"#{id}\">{id}</a> {}</td><td>{}</td><td>{}</td><td>{key}</td></tr>",
            esc(&o.title),
            esc(&o.source),
            badge(o.reproduced),
            id = o.id
        );
    }
    h.push_str("</table>");
}

/// One claim's or result's section; `extra` adds what goes after its
/// analysis (C11/C12's Linux TCP block).
fn section(h: &mut String, def: &ClaimDef, o: &Outcome, extra: impl FnOnce(&mut String)) {
    let _ = write!(
        h,
        "<section id=\"{id}\"><h2>{id}: {} {}</h2><p><b>Source:</b> {}. <b>Published:</b> {}</p>",
        esc(&o.title),
        badge(o.reproduced),
        esc(&o.source),
        esc(&def.meta.published),
        id = o.id
    );
    for (label, text) in meta::cited(&o.source) {
        let _ = write!(h, "<p class=\"ref\">[{}] {}</p>", esc(label), esc(text));
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
    extra(h);
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

/// Escapes a cell for a Markdown table (pipes and line breaks).
fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The claims table (the book's "Reproduced claims" chapter), from a `claims.json` that `reproduce`
/// wrote: a row per claim, its published and measured figures per
/// quantity (`;`-joined), and the verdict. The book pastes this output,
/// so the table always matches a run that anyone can repeat. BBRv3 results
/// (`"suite": "bbr3"`), if the run had any, get a second table of the
/// same form after a blank line (the book's "BBRv3 results" chapter).
pub fn table_from_json(text: &str) -> Result<String, String> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not a claims.json: {e}"))?;
    let all = v
        .as_array()
        .ok_or("not a claims.json: expected a list of claims")?;
    // A claims.json from before the suite existed has no `suite`: claims.
    let (bbr3, claims): (Vec<&serde_json::Value>, Vec<&serde_json::Value>) = all
        .iter()
        .partition(|c| c["suite"].as_str() == Some(Suite::Bbr3.dir()));
    let mut out = String::new();
    for (what, list) in [("claim", claims), ("result", bbr3)] {
        if list.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!(
            "| {what} | published | measured | verdict |\n| --- | --- | --- | --- |\n"
        ));
        for c in list {
            out.push_str(&table_row(c)?);
        }
    }
    if out.is_empty() {
        out.push_str("| claim | published | measured | verdict |\n| --- | --- | --- | --- |\n");
    }
    Ok(out)
}

/// One claim's row of [`table_from_json`]'s table.
fn table_row(c: &serde_json::Value) -> Result<String, String> {
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
    Ok(format!(
        "| {} {} | {} | {} | {} |\n",
        field("id")?,
        md_cell(&field("title")?),
        md_cell(&join("published")),
        md_cell(&join("measured")),
        verdict
    ))
}

#[cfg(test)]
mod table_tests {
    use super::{load, require_all, select, table_from_json, tally, Outcome};
    use crate::meta;
    use std::path::Path;

    fn outcome(id: &str, reproduced: bool) -> Outcome {
        Outcome {
            id: id.into(),
            suite: if id.starts_with('V') {
                "bbr3"
            } else {
                "claims"
            },
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

    /// `--quick` shortens a claim's runs in the scenario's text, so the
    /// text each run keeps (written as its scenario.toml) says the quick
    /// duration too.
    #[test]
    fn quick_runs_carry_their_duration_in_their_text() {
        let def = crate::evaluate::all()
            .iter()
            .find(|d| d.meta.quick_seconds.is_some())
            .expect("a claim with a quick duration");
        let secs = def.meta.quick_seconds.unwrap();
        let runs = load(def, true).unwrap();
        for r in &runs {
            assert_eq!(r.config.duration_ns, secs * 1_000_000_000);
            let again =
                scenario::parse(&r.text, "t.toml", Path::new("."), Path::new("t.toml")).unwrap();
            assert_eq!(again.runs[0].config.duration_ns, secs * 1_000_000_000);
        }
        let full = load(def, false).unwrap();
        assert_ne!(full[0].config.duration_ns, secs * 1_000_000_000);
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
        assert!(
            e.contains("2 of 3 claims and results not reproduced: C7, C11"),
            "{e}"
        );
    }

    #[test]
    fn claims_cite_their_seeds() {
        let seeds = |s: &str| meta::cited(s).iter().map(|c| c.0).collect::<Vec<_>>();
        assert_eq!(seeds("seed 000 fig. 8; seed 003"), ["000", "003"]);
        assert_eq!(seeds("seed 004 (Linux commit)"), ["004"]);
        assert!(seeds("elsewhere").is_empty());
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

    #[test]
    fn bbr3_results_get_a_table_of_their_own_after_the_claims() {
        let json = r#"[
          {"id": "C1", "suite": "claims", "title": "random loss", "reproduced": true, "rows": []},
          {"id": "V2", "suite": "bbr3", "title": "sharing", "reproduced": false,
           "rows": [{"quantity": "share", "published": "fair", "measured": "0.4"}]}
        ]"#;
        let t = table_from_json(json).unwrap();
        let tables: Vec<&str> = t.split("\n\n").collect();
        assert_eq!(tables.len(), 2, "{t}");
        assert!(tables[0].starts_with("| claim |") && tables[0].contains("| C1 random loss |"));
        assert!(!tables[0].contains("V2"));
        assert!(tables[1].starts_with("| result |"));
        assert!(
            tables[1].ends_with("| V2 sharing | share: fair | share: 0.4 | **not reproduced** |\n")
        );
        // Only results: one table, of results.
        let only =
            r#"[{"id": "V1", "suite": "bbr3", "title": "t", "reproduced": true, "rows": []}]"#;
        assert!(table_from_json(only).unwrap().starts_with("| result |"));
    }

    #[test]
    fn the_tally_counts_each_suite_and_only_selects_either() {
        assert_eq!(
            tally(&[outcome("C1", true), outcome("C2", false)]),
            "1 of 2 claims reproduced"
        );
        assert_eq!(
            tally(&[
                outcome("C1", true),
                outcome("V1", false),
                outcome("V2", true)
            ]),
            "1 of 1 claims and 1 of 2 BBRv3 results reproduced"
        );
        assert_eq!(
            tally(&[outcome("V1", true)]),
            "1 of 1 BBRv3 results reproduced"
        );
        let ids = |only: &[&str]| {
            select(&Some(only.iter().map(|s| s.to_string()).collect()))
                .map(|d| d.iter().map(|d| d.meta.id.clone()).collect::<Vec<_>>())
        };
        assert_eq!(
            ids(&["V1", "c3", "03", "v02"]).unwrap(),
            ["V1", "C3", "C3", "V2"]
        );
        let e = ids(&["V99"]).unwrap_err();
        assert!(
            e.contains("no such claim or BBRv3 result") && e.contains("C14, V1"),
            "{e}"
        );
        // All: the claims first, then the suite.
        let all = select(&None).unwrap();
        assert_eq!(all[0].meta.id, "C1");
        assert_eq!(all[14].meta.id, "V1");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `reproduce --only` into a directory of an earlier full run: the
    /// other claims' directories stay, and are named as not this run's
    /// (the report and claims.json said nothing of them, and they looked
    /// as current as the rerun ones). A directory without the scenario.toml
    /// a run writes is not counted.
    #[test]
    fn an_only_run_names_the_earlier_results_it_did_not_rerun() {
        let all: Vec<&ClaimDef> = claims::everything().collect();
        let (this, old, other) = (all[0], all[1], all[2]);
        let out = tempfile::tempdir().unwrap();
        for d in [this, old] {
            fs::create_dir_all(out.path().join(d.file)).unwrap();
            fs::write(out.path().join(d.file).join("scenario.toml"), d.toml).unwrap();
        }
        fs::create_dir_all(out.path().join(other.file)).unwrap();
        assert_eq!(earlier_results(&[this], out.path()), [old.file]);
        assert!(earlier_results(&all, out.path()).is_empty());
        let html = report_html(&[], &[], false, 0.0, None, &[old.file.to_string()]);
        assert!(
            html.contains("This report covers")
                && html.contains(&format!("<code>{}</code>", old.file)),
            "{html}"
        );
    }
}
