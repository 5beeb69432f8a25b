//! Running `bbrlab emu` as a supervised child, for the commands that
//! measure real programs over an emulated path (`compare`, and through it
//! `validate`; the jitter sweeps).
//!
//! The emulator stops its own client at `--timeout`; [`crate::child`]
//! bounds the rest. An emulator that does not come back by the timeout
//! plus [`SLACK`], or whose parent is asked to stop, gets SIGTERM (so it
//! removes its namespaces) and [`GRACE`] before SIGKILL. Its output goes
//! to `emu.out` and `emu.err` in the run's directory, kept with the run.

use crate::child::{self, Output, Supervise};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// How long the emulator has, after SIGTERM, to stop its programs and
/// remove its namespaces before it is killed.
pub const GRACE: Duration = Duration::from_secs(15);
/// Slack beyond `--timeout` before the emulator counts as not coming back
/// (its start, the drain and the verdict).
pub const SLACK: Duration = Duration::from_secs(30);

/// One run of `bbrlab emu --scenario`.
pub struct EmuRun<'a> {
    /// The bbrlab binary.
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

/// Runs the emulator until it exits, overruns `timeout_s` + [`SLACK`], or
/// `stop` is raised (then `Err("interrupted …")`). `tick` is called with
/// the time elapsed at every poll, for progress displays.
pub fn run(
    r: &EmuRun<'_>,
    stop: Option<&AtomicBool>,
    tick: &dyn Fn(Duration),
) -> Result<Ended, String> {
    use std::os::unix::process::ExitStatusExt;
    let err_path = r.log_dir.join("emu.err");
    let mut cmd = Command::new(r.exe);
    cmd.args(["emu", "--scenario"])
        .arg(r.scenario)
        .args([
            "--timeout",
            &r.timeout_s.to_string(),
            "--server",
            r.server,
            "--client",
            r.client,
        ])
        .args(r.extra_args);
    let what = format!("{} emu", r.exe.display());
    let running = child::spawn(
        &mut cmd,
        &what,
        Output::Files {
            stdout: r.log_dir.join("emu.out"),
            stderr: err_path.clone(),
        },
    )?;
    let deadline = Duration::from_secs(r.timeout_s) + SLACK;
    let e = running.wait(&Supervise {
        deadline: Instant::now() + deadline,
        stop,
        grace: GRACE,
        tick: Some(tick),
    })?;
    if e.interrupted {
        return Err("interrupted (stopped by a signal)".into());
    }
    // The wait status in std's form: an exit code, or the signal that
    // ended it (not ours: ours come only with `overran`).
    let status = (!e.overran).then(|| match (e.code, e.signal) {
        (Some(c), _) => ExitStatus::from_raw(c << 8),
        (None, sig) => ExitStatus::from_raw(sig.unwrap_or(libc::SIGKILL)),
    });
    Ok(Ended {
        status,
        stdout: e.stdout,
        stderr: e.stderr,
        err_path,
        deadline,
    })
}

/// Runs the emulator (through [`run`], so one that does not
/// come back is stopped at a deadline); returns its standard output, which
/// carries the client's and server's JSON summaries. Its output files stay
/// in `log_dir`.
pub fn run_emu(
    exe: &Path,
    scenario: &Path,
    programs: (&str, &str),
    timeout: u64,
    log_dir: &Path,
) -> Result<String, String> {
    run_emu_with(exe, scenario, programs, timeout, log_dir, &[])
}

/// Where [`run_emu_with`] has the emulator write its own figures
/// (`--stats`), in the run's log directory.
pub const EMU_STATS: &str = "emu.json";

/// The emulator's figures of the run whose log directory is `log_dir`
/// (see [`EMU_STATS`]); `None` if it wrote none (it did not end normally).
pub fn emu_stats(log_dir: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(log_dir.join(EMU_STATS)).ok()?;
    serde_json::from_str(&text).ok()
}

/// [`run_emu`] with more of the emulator's options (`--tcp-ecn`, `--log
/// DIR`). The emulator writes its own figures to [`EMU_STATS`] in
/// `log_dir`.
pub fn run_emu_with(
    exe: &Path,
    scenario: &Path,
    (server, client): (&str, &str),
    timeout: u64,
    log_dir: &Path,
    extra_args: &[String],
) -> Result<String, String> {
    let stats = log_dir.join(EMU_STATS);
    let _ = std::fs::remove_file(&stats);
    let mut extra_args = extra_args.to_vec();
    extra_args.push("--stats".into());
    extra_args.push(stats.display().to_string());
    let extra_args = &extra_args[..];
    let ended = crate::emu::run(
        &crate::emu::EmuRun {
            exe,
            scenario,
            server,
            client,
            timeout_s: timeout,
            log_dir,
            extra_args,
        },
        None,
        &|_| {},
    )?;
    match ended.status {
        Some(st) if st.success() => Ok(ended.stdout),
        Some(_) => Err(format!("the emulator run failed: {}", ended.stderr.trim())),
        None => Err(format!(
            "the emulator did not exit within {} s; stopped it (log: {})",
            ended.deadline.as_secs(),
            ended.err_path.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// A stand-in "emulator" (a shell script ignoring its arguments) shows
    /// the endings without root: an exit and a stop flag.
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
        assert_eq!(
            fs::read_to_string(d.path().join("emu.err")).unwrap(),
            "oops\n"
        );
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
