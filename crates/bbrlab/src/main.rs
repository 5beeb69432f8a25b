//! `bbrlab`: BBR congestion control, done properly, as software people can use.
//!
//! Subcommands:
//! - `reproduce`: run every published claim (C1–C14) and the BBRv3 results
//!   (V1 …) and write the report
//! - `sim`: run a scenario file in the packet-level simulator
//! - `plot`: draw the figures of a run directory, or the throughput
//!   against delay plot of a sweep
//! - `emu`: run real programs over an emulated path (root)
//! - `tcp`: kernel-TCP bulk sender/receiver that records Linux's BBR
//! - `kernel`: load/unload bbrlab's BBR, bbr-jitter and BBRv3 as BPF congestion
//!   controls in Linux TCP, and run seed 001's jitter sweep on them
//! - `jitter-sweep`: seed 001's jitter sweep on a real stack (`--source
//!   s2n`: s2n-quic through quic-bulk; `--source linux-tcp`)
//! - `send` / `recv`: the UDP transport
//! - `compare`: one scenario in the simulator, over UDP and over kernel TCP
//! - `quic`: bulk transfers over real QUIC stacks (`quic-bulk`), their own
//!   controllers and bbrlab's through the adapters, on loopback or through
//!   the emulator beside kernel TCP
//! - `fuzz`: random paths on every controller, held to invariants
//! - `search`: the worst path inside a budget, by CMA-ES against random
//! - `bench`: measure the simulator's speed on the standard dumbbell
//! - `bbr3-signals`: the simulator's bbr3 with v3's exact signals against
//!   the stock kernel's substitutes, on validate's paths
//!
//! A thin binary over the library crates (scenario, runner, figures,
//! claims, tcp-probe, linkem, transport, kernel-cc, testbed): `cli` holds
//! the command-line types, each command's glue is in a module of its own
//! under `cmd/`, `terminal` the progress display the sweeping commands
//! share, and `main` only dispatches and turns an error into exit status 1.

use std::process::ExitCode;

use cli::{Cli, Command, KernelAction};

mod cli;
mod cmd;
mod terminal;

use cmd::{
    bbr3_signals, bench, compare, conformance, emu, fuzz, jitter_sweep, kernel, plot, quic,
    reproduce, search, sim, stacks, tcp, udp, validate,
};

fn main() -> ExitCode {
    // A command line tool's output is often piped into `head` or `less`:
    // when the reader goes away, end quietly as other Unix tools do,
    // instead of panicking on the next `println!` (Rust ignores SIGPIPE
    // by default, so every write would fail with EPIPE).
    // SAFETY: restoring a signal's default disposition at the start of
    // main, before any thread exists, has no memory-safety preconditions.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse_args();
    let result = match cli.command {
        Command::Sim {
            scenario,
            out,
            jobs,
            quiet,
            no_plots,
            force,
            qlog,
            packets,
        } => sim::run(
            &scenario,
            out,
            jobs,
            quiet,
            !no_plots,
            force,
            runner::sweep::Logs { qlog, packets },
        ),
        Command::Plot(a) => plot::command(a),
        Command::Reproduce(a) => reproduce::command(a),
        Command::Tcp { side } => tcp::command(side),
        Command::Kernel { action } => match action {
            KernelAction::Load { names } => kernel::load(&names),
            KernelAction::Unload { names, force } => kernel::unload(&names, force),
            KernelAction::List => kernel::list(),
            KernelAction::JitterSweep(a) => {
                jitter_sweep::command(claims::jitter_sweep::Source::LinuxTcp, None, a)
            }
        },
        Command::JitterSweep(a) => {
            claims::jitter_sweep::source_given(a.source.as_deref(), a.sweep.table.as_deref())
                .and_then(|s| jitter_sweep::command(s, a.quic_bulk, a.sweep))
        }
        Command::Validate(a) => validate::command(a),
        Command::Compare(a) => compare::command(a),
        Command::Quic(a) => quic::command(a),
        Command::Send(a) => udp::send(a),
        Command::Recv {
            listen,
            output,
            window,
            idle_timeout,
            accept_timeout,
        } => udp::recv(listen, output, window, &idle_timeout, &accept_timeout),
        Command::Emu(args) => match emu::command(args) {
            Ok(0) => Ok(()),
            Ok(code) => {
                eprintln!("emu: the client exited with status {code}");
                return ExitCode::from(code.clamp(1, 255) as u8);
            }
            Err(e) => Err(e),
        },
        Command::Bbr3Signals(a) => bbr3_signals::command(a),
        Command::Stacks(a) => stacks::command(a),
        Command::Conformance(a) => conformance::command(a),
        Command::Fuzz(a) => fuzz::command(a),
        Command::Search(a) => search::command(a),
        Command::Bench(a) => {
            if a.transport {
                bench::transport(a.seconds, a.runs, a.quic_bulk)
            } else {
                testbed::sim_bench::run(a.seconds, a.large, a.reps, a.min_wall)
            }
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
