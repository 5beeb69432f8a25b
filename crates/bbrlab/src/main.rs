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
//! - `bench`: measure the simulator's speed on the standard dumbbell
//! - `bbr3-signals`: the simulator's bbr3 with v3's exact signals against
//!   the stock kernel's substitutes, on validate's paths
//!
//! A thin binary over the library crates (scenario, runner, figures,
//! claims, tcp-probe, linkem, transport, kernel-cc): `cli` holds the
//! command-line types, each command's glue is in a module of its own, and
//! `main` only dispatches and turns an error into exit status 1.

use clap::Parser;
use std::process::ExitCode;

use claims::reproduce;
use cli::{Cli, Command, KernelAction};

mod cli;
mod cmd;

use claims::bbr3_signals;
use cmd::{bench, emu, jitter_sweep, kernel, sim, tcp, udp};
use testbed::{compare, quic, validate};

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
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Sim {
            scenario,
            out,
            jobs,
            quiet,
            no_plots,
            force,
        } => sim::run(&scenario, out, jobs, quiet, !no_plots, force),
        Command::Plot {
            run_dir,
            jain_window,
            jain_step,
            jain_threshold,
        } => runner::draw::jain_params(jain_window, jain_step, jain_threshold)
            .and_then(|j| runner::draw::draw_dir(&run_dir, j))
            .map(|made| {
                for m in made {
                    println!("wrote {}", run_dir.join(format!("{m}.svg")).display());
                }
            }),
        Command::Reproduce {
            table: Some(json), ..
        } => std::fs::read_to_string(&json)
            .map_err(|e| format!("{}: {e}", json.display()))
            .and_then(|t| {
                reproduce::table_from_json(&t).map_err(|e| format!("{}: {e}", json.display()))
            })
            .map(|t| print!("{t}")),
        Command::Reproduce {
            out,
            quick,
            only,
            jobs,
            quiet,
            table: None,
            strict,
        } => reproduce::run(
            &reproduce::Options {
                out,
                quick,
                only,
                jobs,
                quiet,
            },
            &sim::TerminalView::new(quiet),
        )
        .and_then(|outcomes| {
            if strict {
                reproduce::require_all(&outcomes)
            } else {
                Ok(())
            }
        }),
        Command::Tcp { side } => tcp::command(side),
        Command::Kernel { action } => match action {
            KernelAction::Load { names } => kernel::load(&names),
            KernelAction::Unload { names, force } => kernel::unload(&names, force),
            KernelAction::List => kernel::list(),
            KernelAction::JitterSweep(a) => {
                jitter_sweep::command(claims::jitter_sweep::Source::LinuxTcp, None, a)
            }
        },
        Command::JitterSweep(a) => claims::jitter_sweep::Source::parse(&a.source)
            .and_then(|s| jitter_sweep::command(s, a.quic_bulk, a.sweep)),
        Command::Validate {
            out,
            quick,
            multiflow,
            only,
            reps,
            seconds,
            sim_ack,
            sim_phases,
            resimulate,
            algorithms,
            update,
            jobs,
            strict,
            table,
            receivers,
            quic_bulk,
        } => match (table, receivers) {
            (_, Some(files)) => {
                validate::receivers::table_from(&files[0], &files[1]).map(|t| println!("{t}"))
            }
            (Some(json), None) => validate::table_from(&json).map(|t| println!("{t}")),
            (None, None) if multiflow => validate::multiflow::run(&validate::multiflow::Options {
                out,
                quick,
                only,
                reps: reps.map(|r| r as usize),
                seconds,
                ack: sim_ack.name(),
                phases: sim_phases as usize,
                resimulate,
            })
            .and_then(|ok| {
                if strict && !ok {
                    Err(
                        "validate: some competing-flow paths miss their bounds (see validate.md)"
                            .into(),
                    )
                } else {
                    Ok(())
                }
            }),
            (None, None) => validate::run(&validate::Options {
                out,
                quick,
                only,
                reps: reps.map(|r| r as usize),
                seconds,
                // Resimulating, no list means every row the earlier run has.
                algorithms: algorithms.unwrap_or_else(|| {
                    if resimulate {
                        Vec::new()
                    } else {
                        vec!["bbr".into(), "cubic".into()]
                    }
                }),
                quic_bulk,
                ack: sim_ack.name(),
                update,
                jobs: jobs as usize,
                resimulate,
            })
            .and_then(|ok| {
                if strict && !ok {
                    Err("validate: some paths miss their bounds (see validate.md)".into())
                } else {
                    Ok(())
                }
            }),
        },
        Command::Compare {
            scenario,
            with,
            out,
            quic_bulk,
        } => compare::parse_sources(&with)
            .and_then(|w| compare::run(&scenario, &w, out, quic_bulk.as_deref())),
        Command::Quic(a) => quic::run(&quic::Options {
            stacks: a.stack,
            ccs: a.cc,
            seconds: a.seconds,
            scenario: a.scenario,
            out: a.out,
            quic_bulk: a.quic_bulk,
            interval: a.interval,
            no_kernel: a.no_kernel,
            rounds: a.rounds,
        }),
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
        Command::Bbr3Signals {
            out,
            only,
            seeds,
            seconds,
        } => bbr3_signals::run(&bbr3_signals::Options {
            out: out.clone(),
            only,
            seeds,
            seconds,
        })
        .map(|md| {
            print!("{md}");
            println!("wrote {}", out.display());
        }),
        Command::Stacks { out, quick, jobs } => {
            let d = if quick {
                claims::stacks::Durations::QUICK
            } else {
                claims::stacks::Durations::FULL
            };
            claims::stacks::run(&out, d, jobs).and_then(|rows| {
                claims::stacks::write(&out, &rows)?;
                print!("{}", claims::stacks::markdown(&rows));
                println!("wrote {}", out.display());
                Ok(())
            })
        }
        Command::Bench {
            seconds,
            reps,
            min_wall,
            large,
            transport,
            runs,
            quic_bulk,
        } => {
            if transport {
                bench::transport(seconds, runs, quic_bulk)
            } else {
                bench::run(seconds, large, reps, min_wall)
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
