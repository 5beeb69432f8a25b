//! Where `quic-bulk` (the QUIC bulk-transfer program over s2n-quic, noq
//! and quinn) is: one rule for every command that runs it (`quic`,
//! `compare`'s s2n-quic source, `validate`, the s2n-quic jitter sweep,
//! `bench --transport`), with one message when it is missing.

use std::path::{Path, PathBuf};

/// `quic-bulk --timeout`: how long either end waits for a silent peer.
pub const PEER_TIMEOUT_S: u64 = 30;

/// `given` (`--quic-bulk PATH`) if there is one, which must be a file;
/// else `quic-bulk` next to the running program, where `cargo build`
/// puts both into the same `target/<profile>/`.
pub fn locate(given: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(p) = given {
        return if p.is_file() {
            Ok(p.to_path_buf())
        } else {
            Err(format!("--quic-bulk {}: no such file", p.display()))
        };
    }
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot find this program itself: {e}"))?;
    beside(&exe)
}

/// `quic-bulk` in `exe`'s directory, or how to build it there.
fn beside(exe: &Path) -> Result<PathBuf, String> {
    let p = exe.with_file_name("quic-bulk");
    if p.is_file() {
        Ok(p)
    } else {
        Err(format!(
            "quic-bulk (the QUIC bulk-transfer program) was not found next to bbrlab ({}): \
             build it with `cargo build --release -p quic-bulk` (the same profile as this \
             bbrlab), or pass --quic-bulk PATH",
            p.display()
        ))
    }
}

/// The version of `stack` (`s2n-quic`, `quinn`, `noq`) the quic-bulk at
/// `path` was built with, as `quic-bulk --version` says it ("quic-bulk
/// 0.1.0 (s2n-quic 1.91.0, quinn 0.11.12, noq 1.4.0)"): the program that
/// runs names its own stack, which holds for an installed binary as for
/// one built beside this checkout. `stack` alone when it cannot tell.
pub fn stack_version(path: &Path, stack: &str) -> String {
    let out = std::process::Command::new(path)
        .arg("--version")
        .stderr(std::process::Stdio::null())
        .output();
    let text = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        _ => String::new(),
    };
    stack_in_version(&text, stack).unwrap_or_else(|| stack.to_string())
}

/// `stack` with its version from `quic-bulk --version`'s line.
fn stack_in_version(line: &str, stack: &str) -> Option<String> {
    let inner = line.split_once('(')?.1.rsplit_once(')')?.0;
    inner
        .split(", ")
        .find(|part| {
            part.strip_prefix(stack).is_some_and(|v| {
                v.starts_with(' ') && v[1..].starts_with(|c: char| c.is_ascii_digit())
            })
        })
        .map(str::to_string)
}

/// The receiver's and the sender's command lines for one QUIC transfer
/// (`{server}` stands for the receiver's address, as in `bbrlab emu`'s
/// commands; loopback passes the address itself). `extra` goes after the
/// sender's `--cc` (`--bbr3-profile`, `--ecn`). The one spelling of
/// quic-bulk's arguments for every command that runs it: `quic`,
/// `compare`, `bench --transport`.
pub struct QuicCommands<'a> {
    pub quic_bulk: &'a Path,
    pub stack: &'a str,
    pub cc: &'a str,
    pub extra: &'a str,
    /// Host (or `{server}`) and port.
    pub server: &'a str,
    pub cert: &'a Path,
    pub seconds: u64,
    pub interval_ms: u64,
    /// The sender's time series (`--log`); `None` for a run that only
    /// wants its summary (`bench --transport`, which times the transfer
    /// and writes nothing more than it must).
    pub log: Option<&'a Path>,
}

impl QuicCommands<'_> {
    /// `quic-bulk recv …`, as arguments.
    pub fn recv_args(&self) -> Vec<String> {
        vec![
            "recv".into(),
            "--stack".into(),
            self.stack.into(),
            "--listen".into(),
            self.server.into(),
            "--cert".into(),
            self.cert.display().to_string(),
            "--timeout".into(),
            PEER_TIMEOUT_S.to_string(),
        ]
    }

    /// `quic-bulk send …`, as arguments.
    pub fn send_args(&self) -> Vec<String> {
        let mut v: Vec<String> = vec![
            "send".into(),
            "--stack".into(),
            self.stack.into(),
            "--to".into(),
            self.server.into(),
            "--cert".into(),
            self.cert.display().to_string(),
            "--cc".into(),
            self.cc.into(),
        ];
        v.extend(self.extra.split_whitespace().map(String::from));
        v.extend([
            "--duration".into(),
            format!("{}s", self.seconds),
            "--interval".into(),
            format!("{}ms", self.interval_ms),
        ]);
        if let Some(log) = self.log {
            v.extend(["--log".into(), log.display().to_string()]);
        }
        v.extend(["--timeout".into(), PEER_TIMEOUT_S.to_string()]);
        v
    }

    /// Both as shell command lines for `bbrlab emu --server/--client`.
    pub fn shell(&self) -> (String, String) {
        let line = |args: Vec<String>| {
            std::iter::once(self.quic_bulk.display().to_string())
                .chain(args)
                .collect::<Vec<_>>()
                .join(" ")
        };
        (line(self.recv_args()), line(self.send_args()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stack's version is read from `quic-bulk --version`, the
    /// program that runs; a program that cannot say gives the name alone.
    #[test]
    fn the_stacks_version_comes_from_the_program_that_runs() {
        let line = "quic-bulk 0.1.0 (s2n-quic 1.91.0, quinn 0.11.12, noq 1.4.0)\n";
        assert_eq!(
            stack_in_version(line, "s2n-quic").as_deref(),
            Some("s2n-quic 1.91.0")
        );
        assert_eq!(
            stack_in_version(line, "quinn").as_deref(),
            Some("quinn 0.11.12")
        );
        assert_eq!(stack_in_version(line, "noq").as_deref(), Some("noq 1.4.0"));
        let unknown = "quic-bulk 0.1.0 (s2n-quic (version unknown), quinn 0.11.12)";
        assert_eq!(stack_in_version(unknown, "s2n-quic"), None);
        assert_eq!(stack_in_version("quic-bulk 0.1.0", "s2n-quic"), None);
        // (quic-bulk's own test runs the real `--version`.)
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            stack_version(&dir.path().join("absent"), "s2n-quic"),
            "s2n-quic"
        );
    }

    /// Without a log (`bench --transport`) the sender's line has no
    /// `--log`, and is otherwise the one `quic` and `compare` run.
    #[test]
    fn a_run_without_a_log_omits_only_the_log() {
        let mut c = QuicCommands {
            quic_bulk: Path::new("/t/quic-bulk"),
            stack: "quinn",
            cc: "quinn:bbr",
            extra: "",
            server: "127.0.0.1:4433",
            cert: Path::new("/o/cert.pem"),
            seconds: 2,
            interval_ms: 10,
            log: None,
        };
        assert_eq!(
            c.send_args().join(" "),
            "send --stack quinn --to 127.0.0.1:4433 --cert /o/cert.pem --cc quinn:bbr \
             --duration 2s --interval 10ms --timeout 30"
        );
        assert_eq!(
            c.recv_args().join(" "),
            "recv --stack quinn --listen 127.0.0.1:4433 --cert /o/cert.pem --timeout 30"
        );
        c.log = Some(Path::new("/o/flows.csv"));
        assert!(c
            .send_args()
            .join(" ")
            .ends_with("--interval 10ms --log /o/flows.csv --timeout 30"));
    }

    #[test]
    fn a_given_path_must_be_a_file() {
        let d = tempfile::tempdir().unwrap();
        let e = locate(Some(&d.path().join("quic-bulk"))).unwrap_err();
        assert!(e.contains("quic-bulk: no such file"), "{e}");
        let p = d.path().join("qb");
        std::fs::write(&p, "").unwrap();
        assert_eq!(locate(Some(&p)).unwrap(), p);
    }

    #[test]
    fn otherwise_it_is_looked_for_beside_the_program_with_how_to_build_it() {
        let d = tempfile::tempdir().unwrap();
        let exe = d.path().join("bbrlab");
        let e = beside(&exe).unwrap_err();
        assert!(
            e.contains("cargo build --release -p quic-bulk") && e.contains("--quic-bulk PATH"),
            "{e}"
        );
        std::fs::write(d.path().join("quic-bulk"), "").unwrap();
        assert_eq!(beside(&exe).unwrap(), d.path().join("quic-bulk"));
    }
}
