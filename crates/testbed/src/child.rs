//! Supervised child processes: every real program bbrlab runs (`bbrlab
//! emu`, `bbrlab send`/`recv`, `quic-bulk`, `quinn-bulk`) is started here
//! and waited for under one set of rules.
//!
//! - **Output to files, never pipes.** A child that writes more than a
//!   pipe holds would block until its deadline while we wait for it to
//!   exit; files cannot fill. The caller names the files (kept as part of
//!   a run's record) or they are temporary and removed once read.
//! - **A deadline and a stop flag.** At the deadline, or when the flag
//!   (Ctrl-C, SIGTERM: [`crate::signals`]) is raised, the child is stopped
//!   by its PID: SIGTERM, then SIGKILL after a grace period, so an
//!   emulator can remove its namespaces before it goes.
//! - **CPU time from `wait4`.** The child is reaped with `wait4`, which
//!   returns its rusage, so a transfer's CPU cost is measured without
//!   sampling.
//! - **Why it failed** is its last line on stderr, where bbrlab's programs
//!   print their one-line reason.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often a running child is polled (a `wait4` with `WNOHANG`).
const POLL: Duration = Duration::from_millis(10);

/// Where a child's standard output and error go.
pub enum Output {
    /// Temporary files, read when it exits and then removed.
    Temporary,
    /// These files (created or truncated), kept.
    Files {
        /// Standard output.
        stdout: PathBuf,
        /// Standard error.
        stderr: PathBuf,
    },
}

/// A child process started by [`spawn`].
pub struct Running {
    child: std::process::Child,
    what: String,
    stdout: PathBuf,
    stderr: PathBuf,
    /// The temporary directory holding `stdout` and `stderr`, if they are
    /// temporary (removed when this is dropped).
    _temp: Option<tempfile::TempDir>,
}

/// How to wait for a [`Running`] child.
pub struct Supervise<'a> {
    /// When it is stopped if it has not exited.
    pub deadline: Instant,
    /// Raised: it is stopped at once, and [`Running::wait`] says so.
    pub stop: Option<&'a AtomicBool>,
    /// How long it has after SIGTERM before SIGKILL.
    pub grace: Duration,
    /// Called with the time elapsed at every poll (progress displays).
    pub tick: Option<&'a dyn Fn(Duration)>,
}

impl Supervise<'_> {
    /// Until `deadline`, with no stop flag, a second's grace and no
    /// progress display.
    pub fn until(deadline: Instant) -> Self {
        Supervise {
            deadline,
            stop: None,
            grace: Duration::from_secs(1),
            tick: None,
        }
    }
}

/// How a child ended.
#[derive(Debug)]
pub struct Exited {
    /// What it is, for messages ("bbrlab send").
    pub what: String,
    /// Its PID.
    pub pid: u32,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
    /// The file that held its standard error (gone if it was temporary).
    pub stderr_path: PathBuf,
    /// User + system CPU seconds (from `wait4`'s rusage).
    pub cpu_s: f64,
    /// Its exit code (`None`: ended by a signal, ours or another's).
    pub code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    /// It ran past its deadline and was stopped.
    pub overran: bool,
    /// It was stopped because the stop flag was raised.
    pub interrupted: bool,
    /// How long it ran.
    pub elapsed: Duration,
}

impl Exited {
    /// Its last line on stderr that is not empty: the one-line reason
    /// bbrlab's programs print when they fail (`quic-bulk: …`).
    pub fn reason(&self) -> &str {
        self.stderr
            .lines()
            .rev()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("(nothing on stderr)")
    }

    /// Whether it exited by itself with status 0.
    pub fn succeeded(&self) -> bool {
        self.code == Some(0) && !self.overran && !self.interrupted
    }

    /// Itself if it succeeded, else why not ([`Exited::failure`]).
    pub fn ok(self) -> Result<Exited, String> {
        match self.failure() {
            Some(why) => Err(why),
            None => Ok(self),
        }
    }

    /// Why it failed, in one line naming it, or `None` if it succeeded:
    /// the one wording every supervised child's failure gets. Stopped by
    /// the stop flag; past its deadline; its arguments refused (exit
    /// status 2, clap's and bbrlab's programs' usage error, with what
    /// they allow); another exit status; or a signal; each with its own
    /// message ([`Exited::reason`]).
    pub fn failure(&self) -> Option<String> {
        let what = &self.what;
        if self.interrupted {
            return Some(format!("{what}: interrupted (stopped by a signal)"));
        }
        if self.overran {
            return Some(format!(
                "{what} (pid {}) overran its time and was stopped after {:.1} s",
                self.pid,
                self.elapsed.as_secs_f64()
            ));
        }
        match (self.code, self.signal) {
            (Some(0), _) => None,
            (Some(2), _) => Some(format!("{what} rejected its arguments: {}", self.reason())),
            (Some(c), _) => Some(format!(
                "{what} failed (exit status {c}): {}",
                self.reason()
            )),
            (None, Some(s)) => Some(format!(
                "{what} was killed by signal {s}: {}",
                self.reason()
            )),
            (None, None) => Some(format!(
                "{what} ended without an exit status: {}",
                self.reason()
            )),
        }
    }
}

/// Starts `cmd` (its stdin from /dev/null) with its output going to `out`.
/// `what` names it in messages.
pub fn spawn(cmd: &mut Command, what: &str, out: Output) -> Result<Running, String> {
    let (stdout, stderr, temp) = match out {
        Output::Files { stdout, stderr } => (stdout, stderr, None),
        Output::Temporary => {
            let dir = tempfile::Builder::new()
                .prefix("bbrlab-child-")
                .tempdir()
                .map_err(|e| format!("{what}: cannot make a temporary directory: {e}"))?;
            (
                dir.path().join("stdout"),
                dir.path().join("stderr"),
                Some(dir),
            )
        }
    };
    let file = |p: &Path| fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()));
    let child = cmd
        .stdin(Stdio::null())
        .stdout(file(&stdout)?)
        .stderr(file(&stderr)?)
        .spawn()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    Ok(Running {
        child,
        what: what.to_string(),
        stdout,
        stderr,
        _temp: temp,
    })
}

impl Running {
    /// Its PID.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits until it exits, `s.deadline` passes or `s.stop` is raised (then
    /// it is stopped by its PID: SIGTERM, SIGKILL after `s.grace`), reaps
    /// it and returns how it ended. An error only when it cannot be waited
    /// for at all.
    pub fn wait(self, s: &Supervise<'_>) -> Result<Exited, String> {
        let pid = self.child.id() as libc::pid_t;
        let t0 = Instant::now();
        let (mut overran, mut interrupted) = (false, false);
        let mut term_sent: Option<Instant> = None;
        let (status, ru) = loop {
            let mut status = 0;
            // SAFETY: rusage is plain data; zero is a valid value.
            let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: pid is our unreaped child; status and ru are valid.
            let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru) };
            if r == pid {
                break (status, ru);
            }
            if r < 0 {
                return Err(format!(
                    "{}: wait4: {}",
                    self.what,
                    std::io::Error::last_os_error()
                ));
            }
            let now = Instant::now();
            match term_sent {
                None => {
                    if s.stop.is_some_and(|f| f.load(Ordering::Relaxed)) {
                        interrupted = true;
                    } else if now >= s.deadline {
                        overran = true;
                    }
                    if interrupted || overran {
                        signal(pid, libc::SIGTERM);
                        term_sent = Some(now);
                    }
                }
                Some(t) if now.duration_since(t) >= s.grace => {
                    signal(pid, libc::SIGKILL);
                    // SAFETY: as above; blocks until the killed child is reaped.
                    unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
                    break (status, ru);
                }
                Some(_) => {}
            }
            if let Some(tick) = s.tick {
                tick(t0.elapsed());
            }
            std::thread::sleep(POLL);
        };
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        Ok(Exited {
            what: self.what.clone(),
            pid: pid as u32,
            stdout: fs::read_to_string(&self.stdout).unwrap_or_default(),
            stderr: fs::read_to_string(&self.stderr).unwrap_or_default(),
            stderr_path: self.stderr.clone(),
            cpu_s: secs(ru.ru_utime) + secs(ru.ru_stime),
            code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
            signal: libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status)),
            overran,
            interrupted,
            elapsed: t0.elapsed(),
        })
    }
}

/// Waits for `r` until `deadline` ([`Supervise::until`]) and fails unless
/// it exited by itself with status 0 ([`Exited::ok`]).
pub fn finish(r: Running, deadline: Instant) -> Result<Exited, String> {
    r.wait(&Supervise::until(deadline))?.ok()
}

/// Sends `sig` to `pid`, a child of ours not yet reaped.
fn signal(pid: libc::pid_t, sig: i32) {
    // SAFETY: signalling our own unreaped child by its PID.
    unsafe { libc::kill(pid, sig) };
}

/// A loopback UDP port that was free a moment ago.
pub fn free_udp_port() -> Result<u16, String> {
    let s = std::net::UdpSocket::bind("127.0.0.1:0").map_err(|e| format!("bind: {e}"))?;
    Ok(s.local_addr().map_err(|e| e.to_string())?.port())
}

/// A loopback TCP port that was free a moment ago.
pub fn free_tcp_port() -> Result<u16, String> {
    let s = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("bind: {e}"))?;
    Ok(s.local_addr().map_err(|e| e.to_string())?.port())
}

/// The first line of a child's `stdout` that is a JSON object with `key`:
/// the programs print their summaries as JSON lines (and the emulator
/// passes on its server's and client's).
pub fn json_line_with(stdout: &str, key: &str) -> Option<serde_json::Value> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l.trim()).ok())
        .find(|v| v.get(key).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, out: Output) -> Running {
        spawn(Command::new("sh").args(["-c", script]), "sh", out).unwrap()
    }

    fn far() -> Instant {
        Instant::now() + Duration::from_secs(60)
    }

    #[test]
    fn a_failing_childs_status_and_last_stderr_line_come_back() {
        let e = sh(
            "echo '{\"a\":1}'; echo detail >&2; echo 'quic-bulk: unknown cc' >&2; exit 2",
            Output::Temporary,
        )
        .wait(&Supervise::until(far()))
        .unwrap();
        assert_eq!((e.code, e.overran, e.interrupted), (Some(2), false, false));
        assert_eq!(e.stdout.trim(), "{\"a\":1}");
        assert_eq!(e.reason(), "quic-bulk: unknown cc");
        // One wording for every child: a usage error (exit 2) says its
        // arguments were refused, with the program's last line; a signal
        // names itself.
        assert_eq!(
            e.failure().as_deref(),
            Some("sh rejected its arguments: quic-bulk: unknown cc")
        );
        let killed = sh("echo dying >&2; kill -9 $$", Output::Temporary)
            .wait(&Supervise::until(far()))
            .unwrap();
        assert_eq!(
            killed.failure().as_deref(),
            Some("sh was killed by signal 9: dying")
        );
        let err = sh("echo bad >&2; exit 3", Output::Temporary)
            .wait(&Supervise::until(far()))
            .unwrap()
            .ok()
            .unwrap_err();
        assert!(err.contains("sh failed (exit status 3): bad"), "{err}");
        assert!(sh("true", Output::Temporary)
            .wait(&Supervise::until(far()))
            .unwrap()
            .succeeded());
    }

    /// More output than a pipe holds (64 KiB) does not stall the child.
    #[test]
    fn a_chatty_child_never_blocks() {
        let e = sh("head -c 1000000 /dev/zero | tr '\\0' x", Output::Temporary)
            .wait(&Supervise::until(Instant::now() + Duration::from_secs(20)))
            .unwrap();
        assert!(e.succeeded(), "{e:?}");
        assert_eq!(e.stdout.len(), 1_000_000);
    }

    #[test]
    fn a_child_past_its_deadline_is_stopped_and_reaped() {
        let r = sh("exec sleep 600", Output::Temporary);
        let pid = r.pid();
        let e = r
            .wait(&Supervise::until(
                Instant::now() + Duration::from_millis(200),
            ))
            .unwrap();
        assert!(e.overran && !e.succeeded());
        assert_eq!(e.code, None);
        assert!(e.ok().unwrap_err().contains("overran its time"));
        // Reaped: the PID is no longer our child.
        // SAFETY: waitpid on a PID that is no longer our child only fails.
        let r = unsafe { libc::waitpid(pid as i32, std::ptr::null_mut(), libc::WNOHANG) };
        assert_eq!(r, -1);
    }

    /// SIGTERM first: a child that cleans up on SIGTERM gets to, and one
    /// that ignores it is killed after the grace period. The flag goes up
    /// once the child says its handler is in place (a signal before that
    /// would find the shell's default action).
    #[test]
    fn a_raised_stop_flag_stops_the_child_gracefully_then_by_force() {
        let d = tempfile::tempdir().unwrap();
        let (ready, done) = (d.path().join("ready"), d.path().join("cleaned-up"));
        let run = |trap: &str, grace: Duration| {
            let _ = std::fs::remove_file(&ready);
            let flag = AtomicBool::new(false);
            let raise = |_: Duration| {
                if ready.exists() {
                    flag.store(true, Ordering::Relaxed);
                }
            };
            let script = format!(
                "trap {trap} TERM; touch {}; while :; do sleep 0.05; done",
                ready.display()
            );
            let t0 = Instant::now();
            let e = sh(&script, Output::Temporary)
                .wait(&Supervise {
                    deadline: far(),
                    stop: Some(&flag),
                    grace,
                    tick: Some(&raise),
                })
                .unwrap();
            (e, t0.elapsed())
        };
        let (e, _) = run(
            &format!("'touch {}; exit 0'", done.display()),
            Duration::from_secs(30),
        );
        assert!(e.interrupted && !e.succeeded());
        assert!(done.exists(), "the child's TERM handler ran");
        assert!(e.ok().unwrap_err().contains("interrupted"));
        let (e, took) = run("''", Duration::from_millis(300));
        assert!(e.interrupted && e.code.is_none());
        assert_eq!(e.signal, Some(libc::SIGKILL));
        assert!(took < Duration::from_secs(20));
    }

    #[test]
    fn named_files_are_kept() {
        let d = tempfile::tempdir().unwrap();
        let (o, e) = (d.path().join("out"), d.path().join("err"));
        let x = sh(
            "echo hello; echo oops >&2",
            Output::Files {
                stdout: o.clone(),
                stderr: e.clone(),
            },
        )
        .wait(&Supervise::until(far()))
        .unwrap();
        assert_eq!(x.stdout, "hello\n");
        assert_eq!(std::fs::read_to_string(&e).unwrap(), "oops\n");
        assert_eq!(x.stderr_path, e);
    }

    #[test]
    fn the_senders_summary_is_found_among_the_emulators_output() {
        let out = "emu: path up\n{\"bytes\":5,\"goodput_bps\":1.0}\n{\"cc\":\"bbr\",\"pmtu\":1500,\"mss\":1448}\nnot json\n";
        let v = json_line_with(out, "pmtu").unwrap();
        assert_eq!(v["mss"].as_u64(), Some(1448));
        assert!(json_line_with(out, "datagrams_per_syscall").is_none());
    }
}
