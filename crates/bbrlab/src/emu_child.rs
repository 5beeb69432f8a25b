//! Running `bbrlab emu` as a child of this binary, for the commands that
//! measure real programs over an emulated path (`compare`, and through it
//! `validate`; `kernel jitter-sweep`).
//!
//! The emulator stops its own client at `--timeout`. This module bounds
//! the rest: an emulator that does not come back is stopped by its PID
//! (SIGTERM, so it removes its namespaces, then SIGKILL) at a deadline,
//! and a stop flag (Ctrl-C or SIGTERM to the parent) stops it the same
//! way. Its output goes to files, not pipes, so a chatty child can never
//! block on a full pipe while we wait for it.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long the emulator has, after SIGTERM, to stop its programs and
/// remove its namespaces before it is killed.
const GRACE: Duration = Duration::from_secs(15);
/// Slack beyond `--timeout` before the emulator counts as not coming back
/// (its start, the drain and the verdict).
const SLACK: Duration = Duration::from_secs(30);
/// How often the child is polled.
const POLL: Duration = Duration::from_millis(100);

/// One run of `bbrlab emu --scenario`.
pub struct EmuRun<'a> {
    /// This binary.
    pub exe: &'a Path,
    /// The scenario whose `[link]` is the path.
    pub scenario: &'a Path,
    /// The server's command (`{server}` is its address).
    pub server: &'a str,
    /// The client's command.
    pub client: &'a str,
    /// The emulator's own `--timeout`, s.
    pub timeout_s: u64,
    /// Where its standard output and error go (`emu.out`, `emu.err`).
    pub log_dir: &'a Path,
    /// More of the emulator's options (`--tcp-ecn`, `--log DIR`), for the
    /// runs that need them.
    pub extra_args: &'a [String],
}

/// How a run ended.
pub struct Ended {
    /// The emulator's exit status (`None`: it overran its deadline and was
    /// stopped).
    pub status: Option<ExitStatus>,
    /// Its standard output (the programs' JSON summaries).
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
    /// The file holding `stderr`, to point a reader at.
    pub err_path: PathBuf,
    /// The deadline it had.
    pub deadline: Duration,
}

/// Sends `sig` to `pid`, a child of ours.
fn signal(pid: u32, sig: i32) {
    // SAFETY: signalling our own child by its PID.
    unsafe { libc::kill(pid as i32, sig) };
}

/// Stops a child by its PID: SIGTERM, then SIGKILL after `grace`.
fn stop(child: &mut std::process::Child, grace: Duration) {
    if child.try_wait().ok().flatten().is_some() {
        return;
    }
    signal(child.id(), libc::SIGTERM);
    let t0 = Instant::now();
    while t0.elapsed() < grace {
        if child.try_wait().ok().flatten().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    signal(child.id(), libc::SIGKILL);
    let _ = child.wait();
}

/// Runs the emulator until it exits, overruns `timeout_s` + [`SLACK`], or
/// `stop` is raised (then `Err("interrupted …")`). `tick` is called with
/// the time elapsed at every poll, for progress displays.
pub fn run(
    r: &EmuRun<'_>,
    stop_flag: Option<&AtomicBool>,
    tick: &dyn Fn(Duration),
) -> Result<Ended, String> {
    let out_path = r.log_dir.join("emu.out");
    let err_path = r.log_dir.join("emu.err");
    let file = |p: &Path| fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()));
    let mut child = Command::new(r.exe)
        .args(["emu", "--scenario"])
        .arg(r.scenario)
        .args([
            "--timeout",
            &r.timeout_s.to_string(),
            "--server",
            r.server,
            "--client",
            r.client,
        ])
        .args(r.extra_args)
        .stdin(Stdio::null())
        .stdout(file(&out_path)?)
        .stderr(file(&err_path)?)
        .spawn()
        .map_err(|e| format!("cannot run {} emu: {e}", r.exe.display()))?;
    let t0 = Instant::now();
    let deadline = Duration::from_secs(r.timeout_s) + SLACK;
    let status = loop {
        if let Some(st) = child.try_wait().map_err(|e| e.to_string())? {
            break Some(st);
        }
        if stop_flag.is_some_and(|s| s.load(Ordering::Relaxed)) {
            stop(&mut child, GRACE);
            return Err("interrupted (stopped by a signal)".into());
        }
        if t0.elapsed() >= deadline {
            stop(&mut child, GRACE);
            break None;
        }
        tick(t0.elapsed());
        std::thread::sleep(POLL);
    };
    Ok(Ended {
        status,
        stdout: fs::read_to_string(&out_path).unwrap_or_default(),
        stderr: fs::read_to_string(&err_path).unwrap_or_default(),
        err_path,
        deadline,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in "emulator" (a shell script ignoring its arguments) shows
    /// the three endings without root: an exit, an overrun stopped at the
    /// deadline, and a stop flag.
    fn fake(dir: &Path, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let p = dir.join("fake-emu");
        fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    fn spec<'a>(exe: &'a Path, dir: &'a Path) -> EmuRun<'a> {
        EmuRun {
            exe,
            scenario: Path::new("unused.toml"),
            server: "s",
            client: "c",
            timeout_s: 0,
            log_dir: dir,
            extra_args: &[],
        }
    }

    #[test]
    fn an_exit_gives_its_status_and_output() {
        let d = tempfile::tempdir().unwrap();
        let exe = fake(d.path(), "echo '{\"ok\":1}'; echo oops >&2; exit 3");
        let e = run(&spec(&exe, d.path()), None, &|_| {}).unwrap();
        assert_eq!(e.status.and_then(|s| s.code()), Some(3));
        assert_eq!(e.stdout.trim(), "{\"ok\":1}");
        assert_eq!(e.stderr.trim(), "oops");
    }

    #[test]
    fn a_raised_stop_flag_stops_the_child_by_its_pid() {
        let d = tempfile::tempdir().unwrap();
        // Would run for 10 minutes; the flag is up before the first poll.
        let exe = fake(d.path(), "exec sleep 600");
        let stop_flag = AtomicBool::new(true);
        let t0 = Instant::now();
        let e = run(&spec(&exe, d.path()), Some(&stop_flag), &|_| {}).err();
        assert!(e.unwrap().contains("interrupted"));
        // Stopped by SIGTERM well before its 600 s (the bound is loose
        // on purpose: it only tells "stopped" from "ran to its end").
        assert!(t0.elapsed() < Duration::from_secs(120));
    }
}
