//! Running a scenario's runs: one run into a directory, or many on worker
//! threads with their progress reported to a [`View`].
//!
//! Layout (one shape for one run and for a sweep): the output directory
//! holds `scenario.toml` (the file as given), `summary.json` and
//! `summary.csv` for all runs, and one `run-NNNN/` per run with its time
//! series, figures, summary and `scenario.toml` as run (sweep values set).
//! A directory that is not empty is refused unless forced, which first
//! removes what an earlier run wrote there (and nothing else).
//!
//! Nothing here draws: the progress of a sweep goes to a [`View`], so the
//! command line renders it with a terminal library and Python with its
//! own, and this crate needs neither.

use crate::output::{write_summaries, CsvRecorder, SummaryJson};
use crate::progress::{Board, RunStatus, SimClock};
use scenario::Run;
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

/// The run's name: its directory's if that is `run-NNNN`, else `run-0000`.
fn run_name(dir: &Path) -> String {
    dir.file_name()
        .and_then(|n| n.to_str())
        .filter(|n| n.starts_with("run-"))
        .unwrap_or("run-0000")
        .to_string()
}

/// Runs one simulation into `dir` (through [`crate::run::simulate`], as
/// every front end does, with the CSV files as its sink); returns its
/// summary. `dir` gets `flows.csv`, `link.csv`, `summary.json`,
/// `summary.csv` and the scenario as run (`scenario.toml`).
pub fn run_one(name: &str, run: &Run, dir: &Path) -> Result<SummaryJson, String> {
    run_one_with(name, run, dir, &SimClock::default())
}

/// [`run_one`], advancing `clock` to the simulated time of each sample
/// written, for the progress display.
pub fn run_one_with(
    name: &str,
    run: &Run,
    dir: &Path,
    clock: &SimClock,
) -> Result<SummaryJson, String> {
    run_one_logged(name, run, dir, clock, Logs::default())
}

/// The optional files a run writes besides its time series and summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Logs {
    /// Each listed flow's qlog file (`flow-<i>.sqlog`, [`crate::qlog`]).
    pub qlog: bool,
    /// Every packet the run's links took in (`packets.csv`,
    /// [`netsim::packet_log`]).
    pub packets: bool,
}

/// [`run_one_with`], also writing the files `logs` asks for.
pub fn run_one_logged(
    name: &str,
    run: &Run,
    dir: &Path,
    clock: &SimClock,
    logs: Logs,
) -> Result<SummaryJson, String> {
    fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create output directory {}: {e}", dir.display()))?;
    fs::write(dir.join("scenario.toml"), &run.text)
        .map_err(|e| format!("writing scenario.toml in {}: {e}", dir.display()))?;
    let mut csv =
        CsvRecorder::create(dir).map_err(|e| format!("cannot write in {}: {e}", dir.display()))?;
    if logs.qlog {
        let names = run.config.flows.iter().map(|f| f.name.clone()).collect();
        let title = format!("{name} {}", run_name(dir));
        csv = csv.with_qlog(crate::qlog::QlogWriter::new(dir, &title, names));
    }
    if logs.packets {
        csv = csv
            .with_packets()
            .map_err(|e| format!("cannot write in {}: {e}", dir.display()))?;
    }
    let (json, ()) = crate::run::simulate(name, &run_name(dir), run, csv, clock).map_err(|e| {
        if e.get_ref().is_some_and(|i| i.is::<netsim::RunStopped>()) {
            format!("the run stopped: {e}")
        } else {
            format!("writing time series in {}: {e}", dir.display())
        }
    })?;
    write_summaries(dir, name, &[&json])
        .map_err(|e| format!("writing summaries in {}: {e}", dir.display()))?;
    Ok(json)
}

/// Whether `name` (an entry of an output directory) is something `bbrlab
/// sim` writes, so `--force` may remove it.
fn ours(name: &str, is_dir: bool) -> bool {
    if is_dir {
        return name.len() == 8
            && name.starts_with("run-")
            && name[4..].bytes().all(|c| c.is_ascii_digit());
    }
    const FILES: [&str; 9] = [
        "flows.csv",
        "fct.csv",
        "model.csv",
        "link.csv",
        "packets.csv",
        "summary.json",
        "summary.csv",
        "scenario.toml",
        "bbrlab.log",
    ];
    const FIGURES: [&str; 10] = [
        "throughput",
        "rtt",
        "inflight",
        "bw_estimate",
        "queue",
        "fairness",
        "queue_cdf",
        "fct_cdf",
        "slowdown_cdf",
        "pantheon",
    ];
    let qlog = name
        .strip_prefix("flow-")
        .and_then(|n| n.strip_suffix(".sqlog"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()));
    FILES.contains(&name)
        || qlog
        || FIGURES
            .iter()
            .any(|f| name == format!("{f}.svg") || name == format!("{f}.png"))
}

/// Where `bbrlab sim` writes a scenario's results: `given` (`--out`, or
/// the file's `output`), else `out/<name>`. The name must then be one
/// plain path component: an empty name, `.`, `..`, or one with a separator
/// or a root would write straight into `out/` or outside it (`name =
/// "../../x"` wrote two levels up).
pub fn output_dir(given: Option<PathBuf>, name: &str) -> Result<PathBuf, String> {
    if let Some(dir) = given {
        return Ok(dir);
    }
    let mut parts = Path::new(name).components();
    match (parts.next(), parts.next()) {
        (Some(Component::Normal(p)), None) if p == name => Ok(Path::new("out").join(name)),
        _ => Err(format!(
            "the scenario's name {name:?} cannot name its output directory out/<name>: it must be one plain file name (not empty, `.` or `..`, no `/`); give --out, or `output` in the file, or another `name`"
        )),
    }
}

/// What a `run-NNNN/` directory holds that `bbrlab sim` does not write
/// there (named `run-NNNN/entry`): a run directory is a run's results
/// alone, files only, so anything else in it was put there by someone else
/// and `--force` must not remove it with the directory.
fn foreign_in_run_dir(dir: &Path) -> Result<Vec<String>, String> {
    let run = dir
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let rd = fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut foreign = Vec::new();
    for e in rd {
        let e = e.map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        let name = e.file_name().to_string_lossy().into_owned();
        let is_file = e.file_type().is_ok_and(|t| t.is_file());
        if !(is_file && ours(&name, false)) {
            foreign.push(format!("{run}/{name}"));
        }
    }
    foreign.sort_unstable();
    Ok(foreign)
}

/// Makes `out` ready for a new set of results: created if missing; if not
/// empty, refused unless `force`, and then emptied of what bbrlab wrote
/// (anything else there is an error, so `--force` never deletes a file
/// bbrlab did not write).
pub fn prepare_output(out: &Path, force: bool) -> Result<(), String> {
    let entries: Vec<(String, bool)> = match fs::read_dir(out) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => {
            return Err(format!(
                "cannot read output directory {}: {e}",
                out.display()
            ))
        }
        Ok(rd) => rd
            .filter_map(|e| e.ok())
            .map(|e| {
                (
                    e.file_name().to_string_lossy().into_owned(),
                    e.file_type().is_ok_and(|t| t.is_dir()),
                )
            })
            .collect(),
    };
    if !entries.is_empty() {
        let mut names: Vec<&str> = entries.iter().map(|e| e.0.as_str()).collect();
        names.sort_unstable();
        let shown = names.iter().take(5).copied().collect::<Vec<_>>().join(", ");
        if !force {
            return Err(format!(
                "output directory {} is not empty ({} entries: {shown}{}); earlier results would mix with new ones. Use --force to replace bbrlab's earlier results there, or choose another --out",
                out.display(),
                names.len(),
                if names.len() > 5 { ", ..." } else { "" }
            ));
        }
        let mut foreign: Vec<String> = Vec::new();
        for (n, d) in &entries {
            if !ours(n, *d) {
                foreign.push(n.clone());
            } else if *d {
                foreign.extend(foreign_in_run_dir(&out.join(n))?);
            }
        }
        if !foreign.is_empty() {
            return Err(format!(
                "output directory {} holds files bbrlab did not write ({}); --force only removes earlier bbrlab results (run-NNNN/ holding only its results, flows.csv, link.csv, summary.*, scenario.toml, figures). Move them or choose another --out",
                out.display(),
                if foreign.len() > 10 {
                    format!("{}, and {} more", foreign[..10].join(", "), foreign.len() - 10)
                } else {
                    foreign.join(", ")
                }
            ));
        }
        for (n, is_dir) in &entries {
            let p = out.join(n);
            let r = if *is_dir {
                fs::remove_dir_all(&p)
            } else {
                fs::remove_file(&p)
            };
            r.map_err(|e| format!("--force: cannot remove {}: {e}", p.display()))?;
        }
    }
    fs::create_dir_all(out)
        .map_err(|e| format!("cannot create output directory {}: {e}", out.display()))
}

/// How often a live [`View`] is updated while runs are under way.
pub const UPDATE_EVERY: Duration = Duration::from_millis(250);

/// Where the progress of [`run_parallel`] goes. Every method has a default
/// that shows nothing, so a front end implements only what it draws.
pub trait View: Sync {
    /// Whether to send periodic [`View::update`]s while runs are under way
    /// (a ticker thread runs only then).
    fn live(&self) -> bool {
        false
    }
    /// The sweep starts: `total` runs on `workers` workers.
    fn start(&self, _total: usize, _workers: usize) {}
    /// Every [`UPDATE_EVERY`] (when [`View::live`]): each worker's run, in
    /// worker order (`None` for an idle worker).
    fn update(&self, _running: &[Option<RunStatus>]) {}
    /// One more run has finished.
    fn finished_one(&self) {}
    /// Every run has finished.
    fn finish(&self) {}
}

/// A [`View`] that shows nothing.
pub struct Quiet;
impl View for Quiet {}

/// `-j`/`--jobs` of every command that runs things in parallel (the
/// value parser clap calls): a count of at least 1. Zero would run
/// nothing, or divide by zero in a rate; clap's own range message
/// ("0 is not in 1..18446744073709551615") said neither what the flag is
/// nor what to give.
pub fn parse_jobs(v: &str) -> Result<usize, String> {
    match v.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "-j/--jobs is how many runs go at once (parallel jobs): give a whole number of at least 1, such as 2, or leave it out for the command's default (see --help); this machine has {} cores",
            std::thread::available_parallelism().map_or(1, |p| p.get())
        )),
    }
}

/// Runs `f` over `items` on `jobs` worker threads (default: all cores);
/// results come back in item order. `describe` gives an item's label and
/// simulated duration (ns); `f` advances the [`SimClock`] it is given
/// (through [`run_one_with`]), which `view` sees as the run's progress.
/// `None` marks an item whose worker died (it cannot, short of a panic).
pub fn run_parallel<T: Sync, R: Send>(
    items: &[T],
    jobs: Option<usize>,
    view: &dyn View,
    describe: impl Fn(&T) -> (String, u64) + Sync,
    f: impl Fn(&T, &SimClock) -> R + Sync,
) -> Vec<Option<R>> {
    let n = items.len();
    let workers = jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |p| p.get()))
        .clamp(1, n.max(1));
    view.start(n, workers);
    let board = Board::new(workers);
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..n).map(|_| None).collect());
    let (stop, stopped) = mpsc::channel::<()>();
    std::thread::scope(|s| {
        if view.live() {
            let board = &board;
            s.spawn(move || loop {
                view.update(&board.snapshot(Instant::now()));
                // Until every worker is done (the sender is dropped).
                if let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(UPDATE_EVERY) {
                    continue;
                }
                break;
            });
        }
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let (board, next, results) = (&board, &next, &results);
                let (describe, f) = (&describe, &f);
                s.spawn(move || loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let (label, duration_ns) = describe(&items[i]);
                    let clock = board.start(w, label, duration_ns, Instant::now());
                    let r = f(&items[i], &clock);
                    board.finish(w);
                    results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
                    view.finished_one();
                })
            })
            .collect();
        for h in handles {
            // A worker that panicked leaves its item `None`.
            let _ = h.join();
        }
        drop(stop);
    });
    view.finish();
    results.into_inner().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command's `-j` parser: 1 and up pass, 0 and words are told
    /// what the flag is (clap's range message did not).
    #[test]
    fn jobs_are_one_or_more_and_zero_says_what_jobs_is() {
        assert_eq!(parse_jobs("1"), Ok(1));
        assert_eq!(parse_jobs("12"), Ok(12));
        for bad in ["0", "-1", "two", ""] {
            let e = parse_jobs(bad).unwrap_err();
            assert!(
                e.contains("how many runs go at once") && e.contains("at least 1"),
                "{e}"
            );
        }
    }

    /// `--force` may remove the metrics figures `bbrlab sim` and `bbrlab
    /// plot` draw, and still nothing else.
    #[test]
    fn force_knows_the_metrics_figures() {
        for f in [
            "fairness.svg",
            "queue_cdf.png",
            "fct_cdf.svg",
            "slowdown_cdf.png",
            "pantheon.svg",
            "pantheon.png",
        ] {
            assert!(ours(f, false), "{f}");
        }
        assert!(!ours("notes.svg", false));
        assert!(!ours("pantheon.pdf", false));
        assert!(ours("flow-0.sqlog", false) && ours("flow-12.sqlog", false));
        assert!(!ours("flow-.sqlog", false) && !ours("flow-x.sqlog", false));
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pantheon.svg"), "x").unwrap();
        std::fs::write(dir.path().join("summary.json"), "{}").unwrap();
        prepare_output(dir.path(), true).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    /// Only a plain file name makes `out/<name>`.
    #[test]
    fn the_default_output_is_one_directory_under_out() {
        assert_eq!(
            output_dir(None, "c1-loss"),
            Ok(PathBuf::from("out/c1-loss"))
        );
        assert_eq!(
            output_dir(Some("x/y".into()), ".."),
            Ok(PathBuf::from("x/y"))
        );
        assert_eq!(
            output_dir(None, "a \"quoted\" name"),
            Ok(PathBuf::from("out/a \"quoted\" name"))
        );
        for bad in ["", ".", "..", "../../escape", "/tmp/x", "a/b", "a/"] {
            let e = output_dir(None, bad).unwrap_err();
            assert!(e.contains("one plain file name"), "{bad}: {e}");
        }
    }

    /// A run directory with a file bbrlab did not write in it is refused
    /// whole, naming that file, and nothing is removed; one with only
    /// bbrlab's files goes.
    #[test]
    fn force_keeps_a_run_directory_holding_someone_elses_file() {
        let dir = tempfile::tempdir().unwrap();
        let run0 = dir.path().join("run-0000");
        let run5 = dir.path().join("run-0005");
        for d in [&run0, &run5] {
            std::fs::create_dir(d).unwrap();
            std::fs::write(d.join("flows.csv"), "x").unwrap();
        }
        std::fs::write(run0.join("mydata.txt"), "precious").unwrap();
        std::fs::create_dir(run5.join("notes")).unwrap();
        let e = prepare_output(dir.path(), true).unwrap_err();
        assert!(
            e.contains("run-0000/mydata.txt") && e.contains("run-0005/notes"),
            "{e}"
        );
        assert!(run0.join("mydata.txt").exists() && run5.join("flows.csv").exists());
        std::fs::remove_file(run0.join("mydata.txt")).unwrap();
        std::fs::remove_dir(run5.join("notes")).unwrap();
        std::fs::write(run5.join("packets.csv"), "x").unwrap();
        prepare_output(dir.path(), true).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
