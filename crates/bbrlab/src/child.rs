//! Child processes whose CPU time is measured: the programs a transfer
//! runs (`bbrlab send`/`recv`, `quinn-bulk`, `quic-bulk`) are waited for
//! with `wait4`, which returns their rusage, and bounded by a deadline
//! after which they are killed by PID. Shared by `bench --transport` and
//! `quic`.

use std::time::{Duration, Instant};

/// What one process of a transfer left behind.
#[derive(Debug)]
pub(crate) struct Exited {
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    /// User + system CPU seconds (from `wait4`'s rusage).
    pub(crate) cpu_s: f64,
    /// Its exit code (`None`: killed by a signal, or by us at the deadline).
    pub(crate) code: Option<i32>,
    /// It overran its deadline and was killed.
    pub(crate) overran: bool,
}

impl Exited {
    /// Its stderr's last line that is not empty: the one-line reason the
    /// programs print on failure (`quic-bulk: …`).
    pub(crate) fn reason(&self) -> &str {
        self.stderr
            .lines()
            .rev()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("(nothing on stderr)")
    }
}

/// Waits for `child` until `deadline` (then kills it by its PID and reaps
/// it) and returns its output, exit code and the CPU time it used.
///
/// Its stdout and stderr, when piped, are read after it exits: fine for
/// programs that print a summary line, not for chatty ones (a full pipe
/// would stall them until the deadline).
pub(crate) fn wait_measured(
    mut child: std::process::Child,
    what: &str,
    deadline: Instant,
) -> Result<Exited, String> {
    use std::io::Read;
    let pid = child.id() as libc::pid_t;
    let mut overran = false;
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
                "{what}: wait4: {}",
                std::io::Error::last_os_error()
            ));
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            overran = true;
            // SAFETY: as above; reaps the killed child.
            unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
            break (status, ru);
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = o.read_to_string(&mut stdout);
    }
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut stderr);
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Ok(Exited {
        stdout,
        stderr,
        cpu_s: secs(ru.ru_utime) + secs(ru.ru_stime),
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        overran,
    })
}

/// [`wait_measured`], failing unless the child exited with status 0.
pub(crate) fn finish(
    child: std::process::Child,
    what: &str,
    deadline: Instant,
) -> Result<Exited, String> {
    let pid = child.id();
    let e = wait_measured(child, what, deadline)?;
    if e.overran {
        return Err(format!(
            "{what} (pid {pid}) overran its time and was killed"
        ));
    }
    if e.code != Some(0) {
        return Err(format!(
            "{what} failed (exit status {}): {}",
            e.code
                .map_or("none: killed by a signal".into(), |c| c.to_string()),
            e.stderr.trim()
        ));
    }
    Ok(e)
}

/// A loopback port that was free a moment ago.
pub(crate) fn free_udp_port() -> Result<u16, String> {
    let s = std::net::UdpSocket::bind("127.0.0.1:0").map_err(|e| format!("bind: {e}"))?;
    Ok(s.local_addr().map_err(|e| e.to_string())?.port())
}

/// A loopback TCP port that was free a moment ago.
pub(crate) fn free_tcp_port() -> Result<u16, String> {
    let s = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("bind: {e}"))?;
    Ok(s.local_addr().map_err(|e| e.to_string())?.port())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    fn sh(script: &str) -> std::process::Child {
        Command::new("sh")
            .args(["-c", script])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    #[test]
    fn a_failing_childs_status_and_last_stderr_line_come_back() {
        let far = Instant::now() + Duration::from_secs(60);
        let e = wait_measured(
            sh("echo '{\"a\":1}'; echo detail >&2; echo 'quic-bulk: unknown cc' >&2; exit 2"),
            "x",
            far,
        )
        .unwrap();
        assert_eq!((e.code, e.overran), (Some(2), false));
        assert_eq!(e.stdout.trim(), "{\"a\":1}");
        assert_eq!(e.reason(), "quic-bulk: unknown cc");
        let err = finish(sh("echo bad >&2; exit 3"), "prog", far).unwrap_err();
        assert!(err.contains("prog failed (exit status 3): bad"), "{err}");
        assert!(finish(sh("true"), "prog", far).is_ok());
    }

    #[test]
    fn a_child_past_its_deadline_is_killed_and_reaped() {
        let child = sh("exec sleep 600");
        let pid = child.id();
        let e = wait_measured(
            child,
            "sleeper",
            Instant::now() + Duration::from_millis(200),
        )
        .unwrap();
        assert!(e.overran);
        assert_eq!(e.code, None);
        // Reaped: the PID is no longer our child.
        // SAFETY: waitpid on a PID that is no longer our child only fails.
        let r = unsafe { libc::waitpid(pid as i32, std::ptr::null_mut(), libc::WNOHANG) };
        assert_eq!(r, -1);
    }
}
