//! Terminal output shared by the commands that run sweeps (`sim`,
//! `reproduce`): a sweep's progress, drawn with indicatif. Not a command,
//! so the commands use it without importing one another.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use runner::progress::{slowest, RunStatus};
use runner::sweep::View;
use std::sync::Mutex;
use std::time::Duration;

/// Most per-run progress lines shown; with more workers, the overall line
/// still names the slowest run.
const MAX_RUN_LINES: usize = 8;

/// A sweep's progress on the terminal (indicatif): one line per running run
/// with its simulated time and ETA, and an overall line with the runs
/// finished and the slowest run under way (see [`runner::progress`]).
/// Hidden entirely with `quiet`.
pub struct TerminalView {
    quiet: bool,
    multi: MultiProgress,
    bar: ProgressBar,
    lines: Mutex<Vec<ProgressBar>>,
}

impl TerminalView {
    /// A view drawing on stderr, or nothing when `quiet`.
    pub fn new(quiet: bool) -> TerminalView {
        let multi = MultiProgress::with_draw_target(if quiet {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        });
        let bar = multi.add(ProgressBar::new(0));
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} runs  {msg}",
            )
            .expect("static template"),
        );
        TerminalView {
            quiet,
            multi,
            bar,
            lines: Mutex::new(Vec::new()),
        }
    }
}

impl View for TerminalView {
    fn live(&self) -> bool {
        !self.quiet
    }

    fn start(&self, total: usize, workers: usize) {
        self.bar.set_length(total as u64);
        self.bar.set_position(0);
        let style = ProgressStyle::with_template("    {msg}").expect("static template");
        let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        for _ in lines.len()..workers.min(MAX_RUN_LINES) {
            let l = self.multi.add(ProgressBar::new_spinner());
            l.set_style(style.clone());
            lines.push(l);
        }
        if !self.quiet {
            self.bar.enable_steady_tick(Duration::from_millis(200));
        }
    }

    fn update(&self, now: &[Option<RunStatus>]) {
        let running: Vec<_> = now.iter().flatten().cloned().collect();
        match slowest(&running) {
            Some(i) if running.len() > 1 => self
                .bar
                .set_message(format!("slowest: {}", running[i].describe())),
            _ => self.bar.set_message(""),
        }
        let lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        for (l, st) in lines.iter().zip(now) {
            l.set_message(st.as_ref().map_or(String::new(), |s| s.describe()));
        }
    }

    fn finished_one(&self) {
        self.bar.inc(1);
    }

    fn finish(&self) {
        for l in self
            .lines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
        {
            l.finish_and_clear();
        }
        self.bar.finish_and_clear();
    }
}
