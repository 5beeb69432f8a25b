//! Seed 001's jitter experiment (claims C11 and C12) measured on real
//! stacks through `bbrlab emu`, as a second result beside the simulator's:
//! C11/C12's path (3 Mbit/s, a 1000-packet buffer, every data packet's
//! delay drawn from Normal(60 ms, sd) floored at 1 ms, so packets reorder)
//! for each RTT standard deviation and seed, on one of two [`Source`]s:
//!
//! - **Linux TCP**: the kernel's own `bbr` against seed 001's variant as a
//!   BPF congestion control (`bbrlab_jitter`; `bbrlab kernel jitter-sweep`).
//! - **a real QUIC stack (s2n-quic)**: bbrlab's `bbr` and `bbr-jitter`
//!   inside s2n-quic through the `bbrlab-s2n` adapter, and s2n-quic's own
//!   BBRv2 (`s2n:bbr2`) as a third line (`bbrlab jitter-sweep --source s2n`,
//!   which runs `quic-bulk`). Seed 001's authors ran QUIC, so this is the
//!   measurement closest to their setup that can be made today.
//!
//! The simulator's C11/C12 judge the published claims; these are what an
//! implementer who puts the variant into a real stack would see, so the
//! report and the book show them beside the claims as measured results
//! that never touch a verdict. This module owns the sweeps' data — the CSV
//! (through the `csv` crate, one schema for both sources), its provenance,
//! the book's Markdown table and the report's section — so the committed
//! data, the book and the report cannot drift apart. Running a sweep needs
//! root and the emulator, so it lives in `testbed`.

use crate::claim::c12_jitter_sweep;
use crate::html::esc;
use crate::seeds::{band, Spread};
use figures::{self as plots, Figure};
use runner::stats::Stats;
use scenario::builder::{millis, Direction, Jitter, Queue, ScenarioBuilder};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where a sweep was measured. Everything that differs between the two
/// stacks (names, where the data lives, how to measure it again, how a
/// control is labelled) is here; the CSV, the table and the report are
/// shared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Linux TCP: the kernel's controls and bbrlab's BPF ones.
    LinuxTcp,
    /// s2n-quic through `quic-bulk`: bbrlab's controllers through the
    /// `bbrlab-s2n` adapter and s2n-quic's own (`s2n:…`).
    S2nQuic,
}

impl Source {
    /// Both, in the order the report shows them.
    pub const ALL: [Source; 2] = [Source::LinuxTcp, Source::S2nQuic];

    /// The name `--source` takes and the provenance records.
    pub fn key(self) -> &'static str {
        match self {
            Source::LinuxTcp => "linux-tcp",
            Source::S2nQuic => "s2n",
        }
    }

    /// Parses `--source` (or a provenance's `source`).
    pub fn parse(s: &str) -> Result<Source, String> {
        Source::ALL
            .into_iter()
            .find(|x| x.key() == s)
            .ok_or_else(|| {
                format!(
                    "unknown source `{s}`; a jitter sweep runs on {}",
                    Source::ALL
                        .map(|x| format!("`{}` ({})", x.key(), x.label()))
                        .join(" or ")
                )
            })
    }

    /// How the report and the book name it.
    pub fn label(self) -> &'static str {
        match self {
            Source::LinuxTcp => "Linux TCP",
            Source::S2nQuic => "a real QUIC stack (s2n-quic)",
        }
    }

    /// The report's heading of its block.
    pub fn heading(self) -> &'static str {
        match self {
            Source::LinuxTcp => "Linux TCP (kernel, measured)",
            Source::S2nQuic => "A real QUIC stack (s2n-quic), measured",
        }
    }

    /// The block's HTML id (C11 links to it).
    pub fn anchor(self) -> &'static str {
        match self {
            Source::LinuxTcp => "linux-tcp",
            Source::S2nQuic => "quic-stack",
        }
    }

    /// The stack's short name in figure legends.
    fn short(self) -> &'static str {
        match self {
            Source::LinuxTcp => "Linux TCP",
            Source::S2nQuic => "s2n-quic",
        }
    }

    /// The report directory its figures and data are copied to, and the
    /// default directory of its committed sweeps under `docs/`.
    pub fn dir_name(self) -> &'static str {
        match self {
            Source::LinuxTcp => "kernel-tcp",
            Source::S2nQuic => "quic",
        }
    }

    /// The variable that points the report at other data.
    pub fn env_var(self) -> &'static str {
        match self {
            Source::LinuxTcp => "BBRLAB_KERNEL_TCP_DIR",
            Source::S2nQuic => "BBRLAB_QUIC_DIR",
        }
    }

    /// Where the report looks for measured sweeps: [`Source::env_var`],
    /// else the checkout's `docs/<dir_name>` (the binary's source tree).
    /// Each subdirectory holding a [`CSV_FILE`] is one sweep.
    pub fn data_dir(self) -> PathBuf {
        std::env::var_os(self.env_var())
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../../docs")
                    .join(self.dir_name())
            })
    }

    /// The command that measures the committed sweep, as the report and
    /// the book give it.
    pub fn regenerate(self) -> &'static str {
        match self {
            Source::LinuxTcp => LINUX_TCP_REGENERATE,
            Source::S2nQuic => QUIC_REGENERATE,
        }
    }

    /// The command a sweep's provenance starts with.
    pub fn command(self) -> &'static str {
        match self {
            Source::LinuxTcp => "bbrlab kernel jitter-sweep",
            Source::S2nQuic => "bbrlab jitter-sweep --source s2n",
        }
    }

    /// A control's column heading in the table. The kernel's own controls
    /// are marked; bbrlab's BPF ones carry their `bbrlab_` prefix, and in
    /// s2n-quic the stack's own carry their `s2n:` prefix.
    fn cc_heading(self, cc: &str) -> String {
        match self {
            Source::LinuxTcp if !is_bpf(cc) => format!("{cc} (kernel) Mbit/s"),
            _ => format!("{cc} Mbit/s"),
        }
    }

    /// A control's name in the figure's legend: whose implementation runs.
    fn cc_legend(self, cc: &str) -> String {
        match self {
            Source::LinuxTcp if is_bpf(cc) => format!("{cc} (BPF)"),
            Source::LinuxTcp => format!("{cc} (kernel)"),
            Source::S2nQuic if cc.starts_with("s2n:") => format!("{cc} (s2n-quic's own)"),
            Source::S2nQuic => format!("{cc} (bbrlab via bbrlab-s2n)"),
        }
    }

    /// The block's first paragraph: what ran, on which path.
    fn intro_html(self) -> &'static str {
        match self {
            Source::LinuxTcp => "<p>Not the simulator: real Linux TCP through <code>bbrlab emu</code> on C11/C12's path \
                 (3 Mbit/s, 1000-packet buffer, each data packet delayed by Normal(60 ms, sd) floored at 1 ms, \
                 so packets reorder), the kernel's own <code>bbr</code> against seed 001's variant as a BPF \
                 congestion control (<code>bbrlab_jitter</code>, loaded with <code>bbrlab kernel load</code>). \
                 A second, labelled result: it does not enter C11's or C12's verdict.</p>",
            Source::S2nQuic => "<p>Not the simulator: a real QUIC stack, s2n-quic, between two processes \
                 (<code>quic-bulk</code>) through <code>bbrlab emu</code> on C11/C12's path \
                 (3 Mbit/s, 1000-packet buffer, each data packet delayed by Normal(60 ms, sd) floored at 1 ms, \
                 so packets reorder): bbrlab's <code>bbr</code> against seed 001's variant \
                 (<code>bbr-jitter</code>), both inside s2n-quic through the <code>bbrlab-s2n</code> adapter, \
                 and s2n-quic's own BBRv2 (<code>s2n:bbr2</code>) as a third line. Seed 001's authors ran QUIC, \
                 so this is the closest measurement to their setup; their stack was Chromium's QUIC of 2018, \
                 whose loss thresholds were close to s2n-quic's RFC 9002 ones (3 packets; 1.25 against 9/8 of an RTT). \
                 Goodput is the bytes the peer acknowledged over the time from the end of the handshake to the last \
                 acknowledgement; retx is lost packets over packets sent (s2n-quic retransmits the lost data in new \
                 packets). A second, labelled result: it does not enter C11's or C12's verdict.</p>",
        }
    }

    /// What a committed sweep shows, shown after that sweep (named by its
    /// directory) and no other, since the text quotes its numbers: for
    /// s2n-quic, its shape against the paper's and the model's, and why it
    /// differs (the book's "Seed 001 on a real QUIC stack" has it in full).
    /// Linux TCP's analysis is in the book's kernel chapter only.
    fn findings_html(self) -> Option<(&'static str, &'static str)> {
        match self {
            Source::LinuxTcp => None,
            Source::S2nQuic => Some(("seed001-750kb", "<p><b>What it shows</b> (the 750 kB sweep of 2026-11-24): on s2n-quic every control \
                 collapses as soon as there is jitter. <code>bbr</code> falls from 2.61 Mbit/s at sd 0 to 0.39 at 20 ms \
                 and 0.22–0.23 beyond, which is the paper's shape for <code>bbr</code> (≈ 0.5 beyond 30 ms), reached \
                 earlier and lower. The variant's half is not there: <code>bbr-jitter</code> gets what <code>bbr</code> \
                 gets at every sd (0.38, 0.24, 0.21 Mbit/s at 20, 40, 60 ms), not the published ≈ 2.55. \
                 s2n-quic's own BBRv2 does a little better (0.53, 0.34, 0.34) while declaring 37–51 % of its packets lost. \
                 The model of the 2018 stack (C12's first result) shows <code>bbr</code>'s collapse too \
                 (0.73, 0.44, 0.42) but keeps the variant 1.4–2.9× above it (1.04, 1.29, 0.76); s2n-quic is below the \
                 model for both. Why, from the time series: s2n-quic declares 19–39 % of the adapter's packets lost \
                 (RFC 9002's 3-packet and 9/8-RTT thresholds under reordering, no undo) and forgets a packet it declared \
                 lost, so when that packet's ACK arrives it counts for nothing and its data is sent again; the \
                 simulator's sender counts such a late ACK as a delivery in that ACK's rate sample and cancels the \
                 repair (<code>Sender::on_late_ack</code>, after Linux's <code>tcp_sacktag_one()</code>). Without \
                 those deliveries the rate samples stay near what was sent, less what was declared lost; the bandwidth \
                 estimate (0.41–0.64 Mbit/s beyond 20 ms, against 1.5–2.7 in the simulator on the same loss detection) \
                 sets the pacing rate and, through bw × min_rtt (min_rtt ≈ 5 ms), the window, so the sender cannot send \
                 faster than it measured. Once more than 20 % of what is sent is missed, even PROBE_BW's 1.25 gain \
                 cannot raise the estimate. The variant's BDP on srtt multiplies that low estimate and changes nothing. \
                 This is a finding about the model, not a change to it: whether Chromium's QUIC of 2018 counted late ACKs \
                 of packets it had declared lost decides whether C11/C12's model should.</p>")),
        }
    }

    /// How the provenance's command was run.
    fn how_run(self) -> &'static str {
        match self {
            Source::LinuxTcp => " (as root, between <code>bbrlab kernel load</code> and <code>bbrlab kernel unload</code>, all under <code>flock /tmp/bbrlab-kernel-cc.lock</code>)",
            Source::S2nQuic => " (as root, with <code>quic-bulk</code> built next to <code>bbrlab</code>)",
        }
    }

    /// How long measuring the committed sweep takes, for the no-data note.
    fn takes(self) -> &'static str {
        match self {
            Source::LinuxTcp => {
                "about 20 minutes; the lock keeps other users of the BPF controls out"
            }
            Source::S2nQuic => "about 25 minutes",
        }
    }
}

/// Whether a Linux-TCP control is one of bbrlab's BPF controls rather
/// than one of the kernel's own.
fn is_bpf(cc: &str) -> bool {
    congestion::kernel_names::is_bpf_control(cc)
}

/// The command that measures the committed sweep (3 MB per run), as the
/// report and the book give it.
pub const LINUX_TCP_REGENERATE: &str = "sudo flock /tmp/bbrlab-kernel-cc.lock sh -c 'bbrlab kernel load && bbrlab kernel jitter-sweep --out docs/kernel-tcp/seed001-3mb --bytes 3000000; bbrlab kernel unload --force'";

/// The command that measures the committed s2n-quic sweep.
///
/// 750 kB per run, not a duration: quic-bulk's `--duration` stops
/// writing on time but then waits for everything s2n-quic has buffered
/// (up to its 16 MiB send buffer) to be acknowledged, which at the few
/// hundred kbit/s the controls fall to under jitter takes minutes. 750 kB
/// is 2 s at the line rate and about 25 s at 0.25 Mbit/s, which keeps the
/// 60 runs under 30 minutes.
pub const QUIC_REGENERATE: &str = "cargo build --release -p bbrlab -p quic-bulk && sudo target/release/bbrlab jitter-sweep --source s2n --out docs/quic/seed001-750kb --sds 0,20,40,60 --seeds 1,2,3,4,5 --cc bbr,bbr-jitter,s2n:bbr2 --bytes 750000";

/// The sweep's CSV, in `--out`.
pub const CSV_FILE: &str = "jitter-sweep.csv";
/// Its provenance, beside it.
pub const PROVENANCE_FILE: &str = "jitter-sweep.json";

/// The CSV's columns, in order, the same for both sources. The first
/// eight are the old script's (`crates/kernel-cc/experiments/seed001-linux-tcp.sh`);
/// `bytes` and `duration_s` are what each run was asked to send (one of
/// them empty), `kernel` the release it ran on (for s2n-quic: the kernel
/// under its UDP sockets and the emulator; the stack's version is in the
/// provenance), and `error` why a run gave no figures (empty when it did).
pub const CSV_COLUMNS: [&str; 12] = [
    "sd_ms",
    "seed",
    "cc",
    "goodput_bps",
    "seconds",
    "retransmitted_fraction",
    "rtt_median_ms",
    "using_srtt_fraction",
    "bytes",
    "duration_s",
    "kernel",
    "error",
];

/// C11/C12's path, as the emulator's `[link]` table: the jitter is on the
/// data direction only, drawn per packet, so packets overtake each other
/// as they would behind a netem-style impairment.
pub const RATE: &str = "3mbit";
/// Mean one-way data delay (the RTT's mean: the ACK path adds nothing).
pub const MEAN_DELAY_MS: f64 = 60.0;
/// The bottleneck buffer, packets.
pub const QUEUE_PACKETS: u64 = 1000;
/// No packet is delayed less than this.
pub const FLOOR_MS: f64 = 1.0;

/// One run of the sweep: a row of the CSV.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepRow {
    /// The delay's standard deviation, ms.
    pub sd_ms: f64,
    /// The emulator's seed (loss and jitter draws).
    pub seed: u64,
    /// Congestion control.
    pub cc: String,
    /// Bytes delivered × 8 / `seconds`. Linux TCP: bytes verified by the
    /// receiver; s2n-quic: bytes the peer acknowledged.
    pub goodput_bps: Option<f64>,
    /// Linux TCP: from the first write to the receiver's verdict, s;
    /// s2n-quic: from the end of the handshake to the last byte
    /// acknowledged.
    pub seconds: Option<f64>,
    /// Linux TCP: retransmitted / data segments sent (the kernel's
    /// counters); s2n-quic: packets declared lost / packets sent (it
    /// resends lost data in new packets).
    pub retransmitted_fraction: Option<f64>,
    /// Median sampled srtt, ms.
    pub rtt_median_ms: Option<f64>,
    /// Share of the variant's samples with its BDP built on srtt (rttvar >
    /// 0.3·srtt); empty for controls without that state (the kernel's,
    /// s2n-quic's own) or when the source does not report it.
    pub using_srtt_fraction: Option<f64>,
    /// The bytes each run sends (with `--bytes`).
    pub bytes: Option<u64>,
    /// How long each run sends, s (with `--duration`).
    pub duration_s: Option<f64>,
    /// The kernel release it ran on.
    pub kernel: String,
    /// Why the run produced no figures; `None` when it did.
    pub error: Option<String>,
}

fn cell<T: ToString>(v: Option<T>) -> String {
    v.map_or(String::new(), |x| x.to_string())
}

impl SweepRow {
    fn record(&self) -> Vec<String> {
        vec![
            self.sd_ms.to_string(),
            self.seed.to_string(),
            self.cc.clone(),
            cell(self.goodput_bps.map(|g| format!("{g:.0}"))),
            cell(self.seconds.map(|s| format!("{s:.3}"))),
            cell(self.retransmitted_fraction.map(|f| format!("{f:.4}"))),
            cell(self.rtt_median_ms.map(|r| format!("{r:.3}"))),
            cell(self.using_srtt_fraction.map(|f| format!("{f:.3}"))),
            cell(self.bytes),
            cell(self.duration_s),
            self.kernel.clone(),
            self.error.clone().unwrap_or_default(),
        ]
    }
}

/// Writes `rows` to `path` with the header [`CSV_COLUMNS`].
pub fn write_csv(path: &Path, rows: &[SweepRow]) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("cannot write {}: {e}", path.display());
    let mut w = csv::Writer::from_path(path).map_err(|e| err(&e))?;
    w.write_record(CSV_COLUMNS).map_err(|e| err(&e))?;
    for r in rows {
        w.write_record(r.record()).map_err(|e| err(&e))?;
    }
    w.flush().map_err(|e| err(&e))
}

/// Reads a sweep's CSV.
pub fn read_csv(path: &Path) -> Result<Vec<SweepRow>, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_csv(&text, &path.display().to_string())
}

/// Parses a sweep's CSV (`origin` names it in errors). Columns are found
/// by name, so their order may change; every one of [`CSV_COLUMNS`] must
/// be there. Every error names the file, the line and the column, what
/// was found and what is allowed.
pub fn parse_csv(text: &str, origin: &str) -> Result<Vec<SweepRow>, String> {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let head = r
        .headers()
        .map_err(|e| format!("{origin}: not a CSV file: {e}"))?
        .clone();
    let mut index = Vec::new();
    for c in CSV_COLUMNS {
        match head.iter().position(|h| h == c) {
            Some(i) => index.push(i),
            None => {
                return Err(format!(
                    "{origin}: line 1: no column `{c}`; a jitter sweep's CSV has the columns {}",
                    CSV_COLUMNS.join(",")
                ))
            }
        }
    }
    let mut rows = Vec::new();
    for rec in r.records() {
        let rec = rec.map_err(|e| format!("{origin}: {e}"))?;
        let line = rec.position().map_or(0, |p| p.line());
        let get = |k: usize| rec.get(index[k]).unwrap_or("").trim();
        let at = |k: usize, what: &str| {
            format!(
                "{origin}: line {line}, column `{}`: `{}` is not {what}",
                CSV_COLUMNS[k],
                get(k)
            )
        };
        let number = |k: usize| -> Result<Option<f64>, String> {
            match get(k) {
                "" => Ok(None),
                s => s
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .map(Some)
                    .ok_or_else(|| at(k, "a number ≥ 0 (or empty)")),
            }
        };
        let sd_ms = number(0)?.ok_or_else(|| at(0, "an RTT standard deviation in ms"))?;
        let seed = get(1)
            .parse::<u64>()
            .map_err(|_| at(1, "a seed (a whole number ≥ 0)"))?;
        let cc = get(2).to_string();
        if cc.is_empty() {
            return Err(at(2, "a congestion control's name"));
        }
        let bytes = match get(8) {
            "" => None,
            s => Some(
                s.parse::<u64>()
                    .map_err(|_| at(8, "a byte count (or empty)"))?,
            ),
        };
        let error = Some(get(11).to_string()).filter(|e| !e.is_empty());
        let row = SweepRow {
            sd_ms,
            seed,
            cc,
            goodput_bps: number(3)?,
            seconds: number(4)?,
            retransmitted_fraction: number(5)?,
            rtt_median_ms: number(6)?,
            using_srtt_fraction: number(7)?,
            bytes,
            duration_s: number(9)?,
            kernel: get(10).to_string(),
            error,
        };
        if row.error.is_none() && row.goodput_bps.is_none() {
            return Err(format!(
                "{origin}: line {line}: a run with neither a goodput nor an error; \
                 a run that failed says why in `error`"
            ));
        }
        rows.push(row);
    }
    Ok(rows)
}

/// Where and how a sweep was measured, written beside its CSV so that a
/// table or figure made from it can say which kernel, code and command
/// produced it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Provenance {
    /// `uname -r`.
    pub kernel_release: String,
    /// bbrlab's version.
    pub bbrlab_version: String,
    /// The git commit bbrlab was built from.
    pub bbrlab_commit: String,
    /// Sweeps before issue 21 only: the checkout at the time of the sweep
    /// and whether crates/kernel-cc had uncommitted changes, which the
    /// build's commit did not show then. The build's commit now carries
    /// `-dirty` for any uncommitted change, so a new sweep leaves this
    /// empty and does not write it: one source of provenance.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source_tree: String,
    /// When the sweep started, UTC (ISO 8601).
    pub started_utc: String,
    /// When it ended, UTC.
    pub finished_utc: String,
    /// The command that made it (rerun it, as root with the controls
    /// loaded, to measure again).
    pub command: String,
    /// RTT standard deviations, ms.
    pub sds_ms: Vec<f64>,
    /// Seeds.
    pub seeds: Vec<u64>,
    /// Congestion controls.
    pub ccs: Vec<String>,
    /// Bytes per run (with `--bytes`).
    pub bytes: Option<u64>,
    /// Seconds per run (with `--duration`).
    pub duration_s: Option<f64>,
    /// The path: rate, mean delay, buffer, floor, reordering.
    pub path: String,
    /// Runs made and runs that failed.
    pub runs: usize,
    /// See `runs`.
    pub failed: usize,
    /// Which [`Source`] measured it ([`Source::key`]); sweeps before the
    /// s2n-quic one have none and are Linux TCP's.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
    /// The QUIC stack and its version (`s2n-quic 1.91.0`); empty for
    /// Linux TCP, whose stack is the kernel (`kernel_release`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stack: String,
    /// The 1-minute load average when the sweep started (other work on
    /// the machine perturbs the emulator's timing).
    pub loadavg_at_start: f64,
    /// The same at its end.
    #[serde(default)]
    pub loadavg_at_end: f64,
}

/// The path in words, for the provenance and the report.
pub fn path_words() -> String {
    format!(
        "{RATE}, {QUEUE_PACKETS}-packet buffer, data delay ~ Normal({MEAN_DELAY_MS} ms, sd) \
         per packet floored at {FLOOR_MS} ms, reordering allowed; no delay on the ACK path"
    )
}

/// The label of one run: `sd 40 ms, seed 2, bbrlab_jitter`.
pub fn label(sd: f64, seed: u64, cc: &str) -> String {
    format!("sd {sd} ms, seed {seed}, {cc}")
}

/// The emulator's `[link]` file for one (sd, seed): the same path as
/// C11/C12's scenarios.
pub fn link_toml(sd_ms: f64, seed: u64) -> String {
    ScenarioBuilder::new(
        Direction::new()
            .set("rate", RATE)
            .delay(Duration::ZERO)
            .queue(Queue::packets(QUEUE_PACKETS))
            .jitter(&Jitter {
                mean: millis(MEAN_DELAY_MS),
                sd: millis(sd_ms),
                floor: millis(FLOOR_MS),
                reorder: true,
            }),
    )
    .seed(seed)
    .reverse(Direction::new().delay(Duration::ZERO))
    .to_toml()
}

// ----- tables, figures and the report ---------------------------------------

/// The statistics of one (sd, cc) over its seeds.
struct Cell {
    goodput_mbps: Stats,
    retx_pct: Stats,
    srtt_pct: Stats,
    failed: usize,
}

/// The sweep's controls in order of first appearance and its sds in
/// ascending order.
fn axes(rows: &[SweepRow]) -> (Vec<String>, Vec<f64>) {
    let mut ccs: Vec<String> = Vec::new();
    let mut sds: Vec<f64> = Vec::new();
    for r in rows {
        if !ccs.contains(&r.cc) {
            ccs.push(r.cc.clone());
        }
        if !sds.contains(&r.sd_ms) {
            sds.push(r.sd_ms);
        }
    }
    sds.sort_by(f64::total_cmp);
    (ccs, sds)
}

fn cell_of(rows: &[SweepRow], sd: f64, cc: &str) -> Cell {
    let at: Vec<&SweepRow> = rows
        .iter()
        .filter(|r| r.sd_ms == sd && r.cc == cc)
        .collect();
    let ok: Vec<&&SweepRow> = at.iter().filter(|r| r.error.is_none()).collect();
    let stats = |f: &dyn Fn(&SweepRow) -> Option<f64>, scale: f64| {
        Stats::of(
            &ok.iter()
                .map(|r| f(r).map_or(f64::NAN, |x| x * scale))
                .collect::<Vec<_>>(),
        )
    };
    Cell {
        goodput_mbps: stats(&|r| r.goodput_bps, 1e-6),
        retx_pct: stats(&|r| r.retransmitted_fraction, 100.0),
        srtt_pct: stats(&|r| r.using_srtt_fraction, 100.0),
        failed: at.len() - ok.len(),
    }
}

/// "2.86 ± 0.01 (n = 3)", with the failed runs counted beside it.
fn show_goodput(c: &Cell) -> String {
    let mut s = if c.goodput_mbps.n == 0 {
        "–".to_string()
    } else {
        format!(
            "{:.2} ± {:.2} (n = {})",
            c.goodput_mbps.mean, c.goodput_mbps.sd, c.goodput_mbps.n
        )
    };
    if c.failed > 0 {
        let _ = write!(s, "; {} failed", c.failed);
    }
    s
}

fn show_pct(s: &Stats) -> String {
    if s.n == 0 {
        "–".into()
    } else {
        format!("{:.0} %", s.mean)
    }
}

/// The controls whose runs report the share of samples on srtt (the
/// variant's state): any run of theirs has a value.
fn with_srtt_state(rows: &[SweepRow], ccs: &[String]) -> Vec<String> {
    ccs.iter()
        .filter(|c| {
            rows.iter()
                .any(|r| &r.cc == *c && r.using_srtt_fraction.is_some())
        })
        .cloned()
        .collect()
}

/// The table's header and rows as plain cells: RTT sd, then per control
/// goodput (mean ± sd over seeds), then per control the retransmitted
/// share, then, for the controls that report it, the share of samples on
/// srtt.
fn table_cells(source: Source, rows: &[SweepRow]) -> (Vec<String>, Vec<Vec<String>>) {
    let (ccs, sds) = axes(rows);
    let ours = with_srtt_state(rows, &ccs);
    let mut head = vec!["RTT sd (ms)".to_string()];
    head.extend(ccs.iter().map(|c| source.cc_heading(c)));
    head.extend(ccs.iter().map(|c| format!("{c} retx")));
    head.extend(ours.iter().map(|c| format!("{c} BDP on srtt")));
    let body = sds
        .iter()
        .map(|&sd| {
            let cells: Vec<Cell> = ccs.iter().map(|c| cell_of(rows, sd, c)).collect();
            let mut r = vec![format!("{sd}")];
            r.extend(cells.iter().map(show_goodput));
            r.extend(cells.iter().map(|c| show_pct(&c.retx_pct)));
            r.extend(
                ccs.iter()
                    .zip(&cells)
                    .filter(|(cc, _)| ours.contains(cc))
                    .map(|(_, c)| show_pct(&c.srtt_pct)),
            );
            r
        })
        .collect();
    (head, body)
}

/// The book's table of a sweep: a row per RTT sd, goodput as mean ±
/// sample sd over the seeds that completed (failed runs counted in the
/// cell), retransmitted share and, for our controls, the share of samples
/// with the BDP on srtt (means over seeds). `jitter-sweep --table` prints
/// it, so the book's table is always one a command made.
pub fn markdown(source: Source, rows: &[SweepRow]) -> String {
    let (head, body) = table_cells(source, rows);
    let mut out = format!("| {} |\n|", head.join(" | "));
    out.push_str(&" --- |".repeat(head.len()));
    out.push('\n');
    for r in body {
        let _ = writeln!(out, "| {} |", r.join(" | "));
    }
    out
}

/// Which [`Source`] measured the sweep in `csv`: its provenance file
/// beside it says (one with no `source` is Linux TCP's, as the sweeps
/// before the s2n-quic one are). Without that file the CSV alone cannot
/// tell, and the error asks for `--source`.
pub fn source_of(csv: &Path) -> Result<Source, String> {
    let prov_path = csv.with_file_name(PROVENANCE_FILE);
    let prov = read_provenance(csv)?.ok_or_else(|| {
        format!(
            "{}: not found; without the sweep's {PROVENANCE_FILE} beside {} nothing says which stack measured it: give --source ({})",
            prov_path.display(),
            csv.display(),
            Source::ALL.map(|x| x.key()).join(" or ")
        )
    })?;
    match prov.source.as_str() {
        "" => Ok(Source::LinuxTcp),
        key => Source::parse(key).map_err(|e| format!("{}: {e}", prov_path.display())),
    }
}

/// The provenance file beside the sweep's `csv`, parsed; `None` when there
/// is none (sweeps measured before provenance was recorded have none). Any
/// other failure, an unreadable or malformed file, is an error naming the
/// file: it must not pass for a missing one.
fn read_provenance(csv: &Path) -> Result<Option<Provenance>, String> {
    let prov_path = csv.with_file_name(PROVENANCE_FILE);
    match fs::read_to_string(&prov_path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| format!("{}: {e}", prov_path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: {e}", prov_path.display())),
    }
}

/// The source a `jitter-sweep` command names: its `--source` (`key`)
/// when given, else the provenance of its `--table` CSV ([`source_of`]).
pub fn source_given(key: Option<&str>, table: Option<&Path>) -> Result<Source, String> {
    match (key, table) {
        (Some(k), _) => Source::parse(k),
        (None, Some(csv)) => source_of(csv),
        (None, None) => Err(format!(
            "--source is required ({})",
            Source::ALL.map(|x| x.key()).join(" or ")
        )),
    }
}

/// `jitter-sweep --table CSV`.
pub fn table_from(source: Source, path: &Path) -> Result<String, String> {
    Ok(markdown(source, &read_csv(path)?))
}

/// One measured sweep in the report: its table, its goodput-vs-sd figure
/// (written into `fig_dir`, linked as `href`) and its provenance.
fn sweep_html(source: Source, csv: &Path, fig_dir: &Path, href: &str) -> Result<String, String> {
    let rows = read_csv(csv)?;
    let prov_path = csv.with_file_name(PROVENANCE_FILE);
    let prov = read_provenance(csv)?;
    fs::create_dir_all(fig_dir).map_err(|e| format!("{}: {e}", fig_dir.display()))?;
    fs::copy(csv, fig_dir.join(CSV_FILE)).map_err(|e| format!("{}: {e}", csv.display()))?;
    if prov.is_some() {
        fs::copy(&prov_path, fig_dir.join(PROVENANCE_FILE))
            .map_err(|e| format!("{}: {e}", prov_path.display()))?;
    }
    let (ccs, sds) = axes(&rows);
    let seeds = {
        let mut s: Vec<u64> = rows.iter().map(|r| r.seed).collect();
        s.sort_unstable();
        s.dedup();
        s.len()
    };
    let bands: Vec<plots::Band> = ccs
        .iter()
        .map(|cc| {
            let pts: Vec<(f64, Stats)> = sds
                .iter()
                .map(|&sd| (sd, cell_of(&rows, sd, cc).goodput_mbps))
                .collect();
            band(
                &format!(
                    "{}, {} (mean, min–max over {seeds} seed{})",
                    source.cc_legend(cc),
                    source.short(),
                    if seeds == 1 { "" } else { "s" }
                ),
                &pts,
                Spread::MinMax,
            )
        })
        .collect();
    let first = rows.first();
    let amount = match (
        first.and_then(|r| r.bytes),
        first.and_then(|r| r.duration_s),
    ) {
        // Below a megabyte in kB: "0.8 MB" would misstate 750 kB.
        (Some(b), _) if b < 1_000_000 => format!("{} kB per run", b as f64 / 1e3),
        (Some(b), _) => format!("{:.1} MB per run", b as f64 / 1e6),
        (None, Some(d)) => format!("{d} s per run"),
        (None, None) => "no rows".to_string(),
    };
    let title = format!(
        "{}: goodput vs RTT sd, 3 Mbit/s, {amount} (▲ seed 001's bbr)",
        source.heading()
    );
    // Seed 001's bbr as C12 draws it.
    let published = crate::evaluate::all()
        .iter()
        .find(|c| c.meta.id == "C12")
        .ok_or("no claim C12")?
        .meta
        .points(c12_jitter_sweep::FIGURE, None)?;
    plots::figure_with_bands(
        &Figure {
            stem: &fig_dir.join("goodput-vs-sd"),
            title: &title,
            x_label: "RTT standard deviation (ms)",
            y_label: "goodput (Mbit/s)",
            log_x: false,
            log_y: false,
            series: &[],
            published: &published,
            published_label: None,
        },
        &bands,
    )?;
    let mut h = String::new();
    let _ = write!(h, "<h4>{}</h4><table><tr>", esc(&amount));
    let (head, body) = table_cells(source, &rows);
    for c in &head {
        let _ = write!(h, "<th>{}</th>", esc(c));
    }
    h.push_str("</tr>");
    for r in &body {
        h.push_str("<tr>");
        for c in r {
            let _ = write!(h, "<td>{}</td>", esc(c));
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
    let _ = write!(
        h,
        "<p><a href=\"{href}/goodput-vs-sd.png\"><img src=\"{href}/goodput-vs-sd.svg\" alt=\"{}\"></a></p>",
        esc(&title)
    );
    let failed: Vec<&SweepRow> = rows.iter().filter(|r| r.error.is_some()).collect();
    if !failed.is_empty() {
        h.push_str("<p><b>Failed runs</b> (left out of the means):</p><ul>");
        for r in failed {
            let _ = write!(
                h,
                "<li>{}: {}</li>",
                esc(&label(r.sd_ms, r.seed, &r.cc)),
                esc(r.error.as_deref().unwrap_or(""))
            );
        }
        h.push_str("</ul>");
    }
    match &prov {
        Some(p) => {
            let _ = write!(
                h,
                "<p><b>Provenance:</b> {}kernel {}, measured {} to {} UTC, bbrlab {} (git commit {}{}), {} runs ({} failed), load average {:.2} at the start and {:.2} at the end. Path: {}. Command: <code>{}</code>{}. Data: <a href=\"{href}/{CSV_FILE}\">{CSV_FILE}</a> · <a href=\"{href}/{PROVENANCE_FILE}\">{PROVENANCE_FILE}</a> (from {}).</p>",
                if p.stack.is_empty() {
                    String::new()
                } else {
                    format!("{} on ", esc(&p.stack))
                },
                esc(&p.kernel_release),
                esc(&p.started_utc),
                esc(&p.finished_utc),
                esc(&p.bbrlab_version),
                esc(&p.bbrlab_commit),
                if p.source_tree.is_empty() {
                    String::new()
                } else {
                    format!("; checkout {}", esc(&p.source_tree))
                },
                p.runs,
                p.failed,
                p.loadavg_at_start,
                p.loadavg_at_end,
                esc(&p.path),
                esc(&p.command),
                source.how_run(),
                esc(&csv.display().to_string()),
            );
        }
        None => {
            let _ = write!(
                h,
                "<p><b>Provenance:</b> no {PROVENANCE_FILE} beside {}; kernel {} (from the CSV). Data: <a href=\"{href}/{CSV_FILE}\">{CSV_FILE}</a>.</p>",
                esc(&csv.display().to_string()),
                esc(&rows.first().map_or("unknown".into(), |r| r.kernel.clone())),
            );
        }
    }
    Ok(h)
}

/// A source's block in the report for C11/C12 ("Linux TCP (kernel,
/// measured)", "A real QUIC stack (s2n-quic), measured"): every sweep under
/// `data` (a subdirectory with a [`CSV_FILE`]), each with its table,
/// figure (written under `out/<dir_name>/`) and provenance. It is a second
/// result beside the simulator's and judges nothing. Without data it says
/// how to measure it; a sweep that cannot be read shows its error in place
/// of its table, so the rest of the report is still written.
pub fn report_section(source: Source, data: &Path, out: &Path) -> String {
    let mut h = format!(
        "<h3 id=\"{}\">{}</h3>{}",
        source.anchor(),
        esc(source.heading()),
        source.intro_html()
    );
    let mut sweeps: Vec<PathBuf> = fs::read_dir(data)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.join(CSV_FILE).is_file())
                .collect()
        })
        .unwrap_or_default();
    sweeps.sort();
    if sweeps.is_empty() {
        let _ = write!(
            h,
            "<p><b>No measurement found</b> in <code>{}</code> (a subdirectory with {CSV_FILE}). \
             To measure it (root, {}): \
             <code>{}</code>, then run <code>bbrlab reproduce</code> again.</p>",
            esc(&data.display().to_string()),
            source.takes(),
            esc(source.regenerate())
        );
        return h;
    }
    for s in sweeps {
        let name = s
            .file_name()
            .map_or("sweep".into(), |n| n.to_string_lossy().into_owned());
        let href = format!("{}/{name}", source.dir_name());
        match sweep_html(source, &s.join(CSV_FILE), &out.join(&href), &href) {
            Ok(block) => {
                h.push_str(&block);
                if let Some((dir, text)) = source.findings_html() {
                    if name == dir {
                        h.push_str(text);
                    }
                }
            }
            Err(e) => {
                eprintln!("reproduce: {} data: {e}", source.short());
                let _ = write!(
                    h,
                    "<p class=\"fail\"><b>Cannot show {}:</b> {}</p>",
                    esc(&name),
                    esc(&e)
                );
            }
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A missing provenance file is "none"; a malformed or unreadable one
    /// is an error naming it, so a table never silently loses its stack.
    #[test]
    fn provenance_missing_is_none_and_broken_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join(CSV_FILE);
        assert_eq!(read_provenance(&csv), Ok(None));
        let e = source_of(&csv).unwrap_err();
        assert!(
            e.contains("give --source") && e.contains(PROVENANCE_FILE),
            "{e}"
        );

        let prov = dir.path().join(PROVENANCE_FILE);
        fs::write(&prov, "{ not json").unwrap();
        let e = read_provenance(&csv).unwrap_err();
        assert!(e.starts_with(&prov.display().to_string()), "{e}");
        let e = source_of(&csv).unwrap_err();
        assert!(!e.contains("give --source"), "{e}");

        // A directory where the file should be: a read error other than
        // "not found", which the report's reader once took for a missing
        // file.
        fs::remove_file(&prov).unwrap();
        fs::create_dir(&prov).unwrap();
        let e = read_provenance(&csv).unwrap_err();
        assert!(e.starts_with(&prov.display().to_string()), "{e}");
    }
}
