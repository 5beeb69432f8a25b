//! `bbrlab search`: the worst path inside a budget for a controller, by
//! CMA-ES against a random baseline (`claims::search`); writes each
//! method's worst path as a scenario file, the history as CSV and a
//! figure, the worst path's own figures (its rate and round trip against
//! what the flows made of them), search.json, and prints the reading.

use crate::cli::SearchArgs;
use claims::search::{self, spec::Spec, Progress, Report};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::fs;
use std::path::Path;

/// The progress line: the method, evaluations done of the budget.
struct Line(ProgressBar);

impl Progress for Line {
    fn update(&self, method: &'static str, done: usize, of: usize) {
        self.0.set_length(of as u64);
        self.0.set_position(done as u64);
        self.0.set_message(method);
    }
}

/// Runs the search and reports.
pub fn command(a: SearchArgs) -> Result<(), String> {
    let seed = a.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64 % (1 << 32))
    });
    let jobs = a
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let opts = Spec {
        cc: a.cc,
        objective: a.objective,
        rate: a.rate,
        rate_ratio: a.rate_ratio,
        delay: a.delay,
        jitter: a.jitter,
        loss: a.loss,
        packet_jitter: a.packet_jitter,
        packet_jitter_dist: a.packet_jitter_dist,
        pieces: a.pieces,
        min_piece: a.min_piece,
        duration: a.duration,
        buffer: a.buffer,
        aqm: a.aqm,
        flows: a.flows,
        stack: a.stack,
        tcp_like: a.tcp_like,
        evaluations: a.evaluations,
        warmup: a.warmup,
        seed,
        run_timeout_s: a.run_timeout,
    }
    .options(jobs)?;
    if a.confirm {
        // Before the search: a controller the kernel lacks, or no root,
        // is known now.
        testbed::search_confirm::kernel_ccs(&opts, &opts.budget.path(&[]))?;
        if !testbed::host::is_root() {
            return Err("--confirm runs kernel TCP through `bbrlab emu`, which makes network namespaces: it needs root (run it with sudo)".into());
        }
    }
    fs::create_dir_all(&a.out).map_err(|e| format!("cannot create {}: {e}", a.out.display()))?;
    eprintln!(
        "search: seed {seed} (repeat with --seed {seed}), {} free number(s), {} evaluations each for CMA-ES and the random baseline, {jobs} worker(s)",
        opts.budget.dimensions().len(),
        opts.evaluations
    );
    for why in opts.controllers.iter().filter_map(|c| c.not_repeatable()) {
        eprintln!("search: note: {why}");
    }
    let bar = ProgressBar::with_draw_target(
        Some(opts.evaluations as u64),
        if a.quiet {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        },
    );
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {msg:>6} {bar:30} {pos}/{len} evaluations ({per_sec})",
        )
        .expect("static template"),
    );
    let report = search::run(&opts, &Line(bar.clone()))?;
    bar.finish_and_clear();
    // The worst path run once more, for its reading and its figures, when
    // either is wanted (a reading is for BBR controllers only).
    let worst_run =
        (opts.reads_worst_path() || !a.no_plots).then(|| opts.simulate(&report.cmaes.worst().path));
    let reading =
        worst_run
            .as_ref()
            .and_then(|r| r.as_ref().ok())
            .and_then(|(samples, payload)| {
                opts.reading_of(&report.cmaes.worst().path, samples, *payload)
            });
    write(&a.out, &opts, &report, reading.as_deref(), !a.no_plots)?;
    if let Some(worst_run) = worst_run.as_ref().filter(|_| !a.no_plots) {
        match worst_run {
            Ok((samples, payload)) => {
                search::figure::WorstSeries::new(
                    &report.cmaes.worst().path,
                    samples,
                    *payload,
                    &report.flows,
                )
                .draw(
                    &a.out,
                    "worst",
                    &format!("{}: the worst path", report.flows.join(" vs ")),
                )?;
            }
            // Its evaluation failed the same way; the history names it.
            Err(e) => eprintln!("search: no figure of the worst path: its run failed: {e}"),
        }
    }
    print(&a.out, &report, reading.as_deref(), !a.no_plots);
    if a.confirm {
        let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
        let worst = &report.cmaes.worst().path;
        eprintln!(
            "confirm: replaying the worst path through the emulator with kernel TCP, {} time(s) ({} s each)",
            a.confirm_replays,
            worst.duration_ns / 1_000_000_000
        );
        let c = testbed::search_confirm::confirm(
            &opts,
            worst,
            &exe,
            &a.out.join("confirm"),
            a.confirm_replays as usize,
            &|line| {
                if !a.quiet {
                    eprintln!("{line}")
                }
            },
        )?;
        let json = serde_json::to_string_pretty(&c).map_err(|e| format!("confirm.json: {e}"))?;
        let p = a.out.join("confirm.json");
        fs::write(&p, json).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
        let stalled = c.replays.iter().filter(|r| r.stalled).count();
        println!(
            "confirm: on the path as the kernel's flows met it ({:.2} s after the emulator's start), {} by {}, the median of {} replay(s): kernel {}{}, simulator {} with flows made like the kernel's (--tcp-like, started in the order the kernel's reached the emulator, the median of {} seeds a replay), {} with plain flows; the search's figure on its own path {}.{} Wrote {}",
            c.lag_s,
            c.kernel_ccs.join(" against "),
            report.objective,
            c.replays.len(),
            show(&report, c.kernel),
            if c.replays.len() > 1 {
                format!(
                    " (replays {} to {})",
                    show(&report, c.kernel_range[0]),
                    show(&report, c.kernel_range[1])
                )
            } else {
                String::new()
            },
            show(&report, c.simulator),
            testbed::search_confirm::SIM_DRAWS,
            show(&report, c.simulator_plain_flows),
            show(&report, report.cmaes.worst().value),
            if stalled > 0 {
                format!(" {stalled} replay(s) kept although the emulator's forwarder stalled longer than the path allows (a busy machine; confirm.json marks them).")
            } else {
                String::new()
            },
            p.display()
        );
    }
    Ok(())
}

/// `value unit`, to the objective's precision.
fn show(r: &Report, v: f64) -> String {
    let n = if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    if r.unit.is_empty() {
        n
    } else {
        format!("{n} {}", r.unit)
    }
}

fn write(
    out: &Path,
    o: &search::Options,
    r: &Report,
    reading: Option<&str>,
    plots: bool,
) -> Result<(), String> {
    let put = |name: &str, text: &str| {
        let p = out.join(name);
        fs::write(&p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))
    };
    for (m, other, file) in [
        (&r.cmaes, &r.random, "worst.toml"),
        (&r.random, &r.cmaes, "baseline-worst.toml"),
    ] {
        let w = m.worst();
        let mut header = vec![
            format!(
                "Written by `bbrlab search` (seed {}): the worst path {} found for {} by {}, {} of {} evaluations.",
                r.seed,
                if m.method == "cmaes" { "CMA-ES" } else { "the random baseline" },
                r.flows.join(" against "),
                r.objective,
                m.worst + 1,
                m.history.len()
            ),
            format!(
                "{}: {} (measured from {:.1} s); {}'s worst: {}.",
                r.objective,
                show(r, w.value),
                r.warmup_s,
                if other.method == "cmaes" { "CMA-ES" } else { "the random baseline" },
                show(r, other.worst().value)
            ),
            format!("The path: {}.", w.path.describe()),
            format!("Reproduce: bbrlab sim {}", out.join(file).display()),
        ];
        header.extend(
            o.controllers
                .iter()
                .filter_map(|c| c.not_repeatable())
                .map(|why| format!("Note: {why}.")),
        );
        put(file, &o.scenario(&w.path, &header))?;
    }
    let mut csv = csv::Writer::from_writer(Vec::new());
    let io = |e: csv::Error| format!("history.csv: {e}");
    csv.write_record(["method", "evaluation", r.objective, "worst_so_far", "path"])
        .map_err(io)?;
    let mut lines = Vec::new();
    for m in [&r.cmaes, &r.random] {
        let mut worst = f64::NAN;
        let mut points = Vec::new();
        for (i, e) in m.history.iter().enumerate() {
            let b = if r.lower_is_worse { -e.value } else { e.value };
            let wb = if r.lower_is_worse { -worst } else { worst };
            if worst.is_nan() || b > wb {
                worst = e.value;
            }
            csv.write_record([
                m.method.to_string(),
                (i + 1).to_string(),
                format!("{:.6}", e.value),
                format!("{worst:.6}"),
                e.path.describe(),
            ])
            .map_err(io)?;
            points.push(((i + 1) as f64, worst));
        }
        lines.push(figures::Series {
            label: if m.method == "cmaes" {
                "CMA-ES (worst so far)".into()
            } else {
                "random baseline (worst so far)".into()
            },
            points,
        });
    }
    let bytes = csv.into_inner().map_err(|e| format!("history.csv: {e}"))?;
    put("history.csv", &String::from_utf8_lossy(&bytes))?;
    // An earlier search's figures go first: they would seem to show
    // this one's results (as would the worst path's, if its run fails).
    let removed = search::figure::remove_figures(out)?;
    if plots {
        search::figure::draw_history(out, r, &lines)?;
    } else if !removed.is_empty() {
        let (dir, list) = (out.display(), removed.join(", "));
        eprintln!(
            "search: --no-plots: removed the figures an earlier search drew in {dir}: {list}"
        );
    }
    #[derive(serde::Serialize)]
    struct Json<'a> {
        #[serde(flatten)]
        report: &'a Report,
        reading: Option<&'a str>,
    }
    let json = serde_json::to_string_pretty(&Json { report: r, reading })
        .map_err(|e| format!("search.json: {e}"))?;
    put("search.json", &json)
}

fn print(out: &Path, r: &Report, reading: Option<&str>, plots: bool) {
    let (c, b) = (r.cmaes.worst(), r.random.worst());
    println!(
        "search: {} by {} over {} evaluations each in {:.1} s (seed {})",
        r.flows.join(" against "),
        r.objective,
        r.cmaes.history.len(),
        r.seconds,
        r.seed
    );
    println!(
        "  CMA-ES's worst:          {} at evaluation {}: {}",
        show(r, c.value),
        r.cmaes.worst + 1,
        c.path.describe()
    );
    println!(
        "  random baseline's worst: {} at evaluation {}: {}",
        show(r, b.value),
        r.random.worst + 1,
        b.path.describe()
    );
    println!(
        "  {}",
        if r.beat_baseline {
            "CMA-ES found a worse path than the baseline"
        } else {
            "CMA-ES did not beat the baseline in this budget (try more --evaluations)"
        }
    );
    if !r.failures.is_empty() {
        println!(
            "  {} run(s) did not complete (counted at the objective's worst; see search.json), the first: {}",
            r.failures.len(),
            r.failures[0].message
        );
    }
    if let Some(t) = reading {
        println!("\n{t}\n");
    }
    println!(
        "wrote {}, {}, {} and {}{}",
        out.join("worst.toml").display(),
        out.join("baseline-worst.toml").display(),
        out.join("history.csv").display(),
        out.join("search.json").display(),
        if plots {
            ", with the history's and the worst path's figures (history, worst-rate, worst-rtt: .svg and .png)"
        } else {
            ""
        }
    );
}
