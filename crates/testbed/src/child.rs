//! Supervised child processes: every real program bbrlab runs (`bbrlab
//! emu`, `bbrlab send`/`recv`, `quic-bulk`, `quinn-bulk`) is started here
//! and waited for under one set of rules.
//!
//! - **Output to files, never pipes.** A child that writes more than a
//!   pipe holds would block until its deadline while we wait for it to
//!   exit; files cannot fill. The caller names the files (kept as part of
//!   a run's record) or they are temporary and removed once read; or the
//!   child writes where this process writes ([`Output::Inherit`]).
//! - **A deadline and a stop flag.** At the deadline, or when the flag
//!   (Ctrl-C, SIGTERM: [`crate::signals`]) is raised, the child is stopped
//!   by its PID: SIGTERM, then SIGKILL after a grace period, so an
//!   emulator can remove its namespaces before it goes. A child that
//!   runs a shell command line leads its own process group
//!   ([`spawn_group`]), and the group is stopped with it.
//! - **No child outlives its [`Running`].** One dropped without being
//!   waited for (an early return on an error, a panic) is stopped and
//!   reaped there.
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
    /// This process's own standard output and error: for a child whose
    /// output *is* the caller's, as `bbrlab emu`'s client and server,
    /// whose JSON summaries the emulator's callers read from its stdout
    /// (a file already, see [`crate::emu`]). Nothing is captured:
    /// [`Exited::stdout`] and [`Exited::stderr`] are empty.
    Inherit,
}

/// A child process started by [`spawn`] or [`spawn_group`]. Dropped
/// without [`Running::wait`] or [`Running::stop`], it is stopped and
/// reaped as `stop` does with a second's grace.
pub struct Running {
    child: std::process::Child,
    what: String,
    /// Its output files (`None`: [`Output::Inherit`]).
    stdout: Option<PathBuf>,
    stderr: Option<PathBuf>,
    /// It leads its own process group, which its stop signals go to.
    group: bool,
    /// It has been reaped (or cannot be waited for): its PID is no longer
    /// ours to signal.
    reaped: bool,
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
    /// The file that held its standard error (gone if it was temporary;
    /// `None` if it was [`Output::Inherit`]).
    pub stderr_path: Option<PathBuf>,
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
        if self.stderr_path.is_none() {
            return "(its standard error was not captured)";
        }
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
    start(cmd, what, out, false)
}

/// [`spawn`], with the child leading a new process group, to which every
/// signal that stops it goes (`kill(-pid)`: still by its PID, never by a
/// name). For a child that is a shell command line (`sh -c 'a; b'`, `ip
/// netns exec NS sh -c …`): the shell forks the programs it runs, and a
/// SIGTERM to the shell alone would leave them running, orphaned. Its own
/// group also keeps it from the terminal's Ctrl-C, which reaches this
/// process's stop flag instead, so it is stopped by the same path as at
/// a deadline.
pub fn spawn_group(cmd: &mut Command, what: &str, out: Output) -> Result<Running, String> {
    use std::os::unix::process::CommandExt;
    start(cmd.process_group(0), what, out, true)
}

fn start(cmd: &mut Command, what: &str, out: Output, group: bool) -> Result<Running, String> {
    let (paths, temp) = match out {
        Output::Files { stdout, stderr } => (Some((stdout, stderr)), None),
        Output::Temporary => {
            let dir = tempfile::Builder::new()
                .prefix("bbrlab-child-")
                .tempdir()
                .map_err(|e| format!("{what}: cannot make a temporary directory: {e}"))?;
            (
                Some((dir.path().join("stdout"), dir.path().join("stderr"))),
                Some(dir),
            )
        }
        Output::Inherit => (None, None),
    };
    let file = |p: &Path| {
        fs::File::create(p)
            .map(Stdio::from)
            .map_err(|e| format!("{}: {e}", p.display()))
    };
    let (out, err) = match &paths {
        Some((o, e)) => (file(o)?, file(e)?),
        None => (Stdio::inherit(), Stdio::inherit()),
    };
    let child = cmd
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    let (stdout, stderr) = paths.unzip();
    Ok(Running {
        child,
        what: what.to_string(),
        stdout,
        stderr,
        group,
        reaped: false,
        _temp: temp,
    })
}

/// How [`Running::reap`] ended.
struct Reaped {
    status: i32,
    ru: libc::rusage,
    overran: bool,
    interrupted: bool,
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
    pub fn wait(mut self, s: &Supervise<'_>) -> Result<Exited, String> {
        let t0 = Instant::now();
        let r = self.reap(s, false)?;
        Ok(self.exited(r, t0.elapsed()))
    }

    /// Stops it now, whatever it is doing: SIGTERM, SIGKILL if it has not
    /// exited after `grace`; reaps it and returns how it ended (neither
    /// `overran` nor `interrupted`: the caller asked, for its own reason,
    /// such as a server no longer needed once its client has ended). One
    /// that had already exited is only reaped.
    pub fn stop(mut self, grace: Duration) -> Result<Exited, String> {
        let t0 = Instant::now();
        let s = Supervise {
            grace,
            ..Supervise::until(t0)
        };
        let r = self.reap(&s, true)?;
        Ok(self.exited(r, t0.elapsed()))
    }

    /// Polls it until it exits, stopping it (at once if `now`, else at
    /// `s.deadline` or when `s.stop` is raised), and reaps it.
    fn reap(&mut self, s: &Supervise<'_>, now: bool) -> Result<Reaped, String> {
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
                // Not ours to wait for (or signal) any more.
                self.reaped = true;
                return Err(format!(
                    "{}: wait4: {}",
                    self.what,
                    std::io::Error::last_os_error()
                ));
            }
            let t = Instant::now();
            match term_sent {
                None => {
                    if !now {
                        interrupted = s.stop.is_some_and(|f| f.load(Ordering::Relaxed));
                        overran = !interrupted && t >= s.deadline;
                    }
                    if now || interrupted || overran {
                        signal(pid, self.group, libc::SIGTERM);
                        term_sent = Some(t);
                    }
                }
                Some(sent) if t.duration_since(sent) >= s.grace => {
                    signal(pid, self.group, libc::SIGKILL);
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
        self.reaped = true;
        Ok(Reaped {
            status,
            ru,
            overran,
            interrupted,
        })
    }

    /// How it ended, from its wait status and output.
    fn exited(&self, r: Reaped, elapsed: Duration) -> Exited {
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        let read = |p: &Option<PathBuf>| {
            p.as_ref()
                .and_then(|p| fs::read_to_string(p).ok())
                .unwrap_or_default()
        };
        let status = r.status;
        Exited {
            what: self.what.clone(),
            pid: self.child.id(),
            stdout: read(&self.stdout),
            stderr: read(&self.stderr),
            stderr_path: self.stderr.clone(),
            cpu_s: secs(r.ru.ru_utime) + secs(r.ru.ru_stime),
            code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
            signal: libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status)),
            overran: r.overran,
            interrupted: r.interrupted,
            elapsed,
        }
    }
}

impl Drop for Running {
    /// One not waited for (the code that started it returned early on an
    /// error, or panicked) is stopped and reaped here, so no child (nor,
    /// for [`spawn_group`], its group) outlives the code that started it.
    fn drop(&mut self) {
        if !self.reaped {
            let _ = self.reap(&Supervise::until(Instant::now()), true);
        }
    }
}

/// Waits for `r` until `deadline` ([`Supervise::until`]) and fails unless
/// it exited by itself with status 0 ([`Exited::ok`]).
pub fn finish(r: Running, deadline: Instant) -> Result<Exited, String> {
    r.wait(&Supervise::until(deadline))?.ok()
}

/// Sends `sig` to `pid`, a child of ours not yet reaped, or with `group`
/// to the process group it leads.
fn signal(pid: libc::pid_t, group: bool, sig: i32) {
    let target = if group { -pid } else { pid };
    // SAFETY: signalling our own unreaped child (or the group it leads, whose
    // ID cannot be reused while it is unreaped) by its PID.
    unsafe { libc::kill(target, sig) };
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
        assert_eq!(x.stderr_path, Some(e));
    }

    /// An inherited child writes where this process writes (its stdout
    /// is the same file), and nothing of it is captured.
    #[test]
    fn an_inherited_childs_output_is_this_processs() {
        let d = tempfile::tempdir().unwrap();
        let seen = d.path().join("fd1");
        let e = sh(
            &format!(
                "fd1=$(readlink /proc/$$/fd/1); echo \"$fd1\" > {}",
                seen.display()
            ),
            Output::Inherit,
        )
        .wait(&Supervise::until(far()))
        .unwrap();
        assert!(e.succeeded(), "{e:?}");
        let ours = std::fs::read_link("/proc/self/fd/1").unwrap();
        assert_eq!(
            std::fs::read_to_string(&seen).unwrap().trim_end(),
            ours.to_string_lossy()
        );
        assert_eq!((e.stdout.as_str(), e.stderr_path.as_deref()), ("", None));
        assert_eq!(e.reason(), "(its standard error was not captured)");
    }

    /// Waits (bounded) until `p` exists.
    fn until_exists(p: &Path) {
        let t0 = Instant::now();
        while !p.exists() {
            assert!(t0.elapsed() < Duration::from_secs(20), "{p:?} never came");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Whether `pid` runs (a zombie, reparented to an init that does not
    /// reap it, does not).
    fn alive(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| !s[s.rfind(')').unwrap_or(0)..].starts_with(") Z"))
    }

    /// A shell's own children go with it when it leads its group: the
    /// background `sleep` here would outlive a SIGTERM to the shell alone.
    #[test]
    fn a_group_leaders_children_are_stopped_with_it() {
        let d = tempfile::tempdir().unwrap();
        let pidfile = d.path().join("pid");
        let r = spawn_group(
            Command::new("sh").args([
                "-c",
                &format!(
                    "sleep 600 & echo $! > {}.t; mv {0}.t {0}; wait",
                    pidfile.display()
                ),
            ]),
            "sh",
            Output::Temporary,
        )
        .unwrap();
        until_exists(&pidfile);
        let sleeper: u32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(alive(sleeper));
        let e = r
            .wait(&Supervise::until(
                Instant::now() + Duration::from_millis(100),
            ))
            .unwrap();
        assert!(e.overran);
        let t0 = Instant::now();
        while alive(sleeper) && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(!alive(sleeper), "the shell's child {sleeper} still runs");
    }

    /// `stop` asks at once (SIGTERM first, so a child can clean up) and
    /// says neither overran nor interrupted; one that ignores SIGTERM is
    /// killed after the grace.
    #[test]
    fn stop_ends_a_child_now_gracefully_then_by_force() {
        let d = tempfile::tempdir().unwrap();
        let ready = d.path().join("ready");
        let script = |trap: &str| {
            format!(
                "trap {trap} TERM; touch {}; while :; do sleep 0.05; done",
                ready.display()
            )
        };
        let r = sh(&script("'exit 0'"), Output::Temporary);
        until_exists(&ready);
        let e = r.stop(Duration::from_secs(30)).unwrap();
        assert!(e.succeeded(), "{e:?}");
        std::fs::remove_file(&ready).unwrap();
        let r = sh(&script("''"), Output::Temporary);
        until_exists(&ready);
        let t0 = Instant::now();
        let e = r.stop(Duration::from_millis(200)).unwrap();
        assert_eq!(
            (e.signal, e.overran, e.interrupted),
            (Some(libc::SIGKILL), false, false)
        );
        assert!(t0.elapsed() < Duration::from_secs(10));
        // One that already exited is only reaped.
        let r = sh("exit 4", Output::Temporary);
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(r.stop(Duration::from_secs(1)).unwrap().code, Some(4));
    }

    /// Dropped unwaited (an early return), it is stopped and reaped.
    #[test]
    fn a_dropped_child_is_stopped_and_reaped() {
        let r = sh("exec sleep 600", Output::Temporary);
        let pid = r.pid();
        let t0 = Instant::now();
        drop(r);
        assert!(t0.elapsed() < Duration::from_secs(10));
        // SAFETY: waitpid on a PID that is no longer our child only fails.
        let w = unsafe { libc::waitpid(pid as i32, std::ptr::null_mut(), libc::WNOHANG) };
        assert_eq!(w, -1);
        assert!(!alive(pid));
    }

    #[test]
    fn the_senders_summary_is_found_among_the_emulators_output() {
        let out = "emu: path up\n{\"bytes\":5,\"goodput_bps\":1.0}\n{\"cc\":\"bbr\",\"pmtu\":1500,\"mss\":1448}\nnot json\n";
        let v = json_line_with(out, "pmtu").unwrap();
        assert_eq!(v["mss"].as_u64(), Some(1448));
        assert!(json_line_with(out, "datagrams_per_syscall").is_none());
    }
}
