//! The speed guard's benchmarks: instruction counts under Callgrind
//! (gungraun), one per hot path. `scripts/speed-guard.sh` runs them and
//! compares with `baseline.json`. What each measures is in `src/lib.rs`
//! and the scenario files' comments.

use congestion::Algorithm;
use gungraun::{library_benchmark, library_benchmark_group, main};
use speed_guard::{load, send_and_ack, simulate, Simulation};
use std::hint::black_box;

#[library_benchmark]
#[bench::bbr(args = ("one-flow", 0), setup = load)]
#[bench::bbr3(args = ("one-flow", 1), setup = load)]
#[bench::cubic(args = ("one-flow", 2), setup = load)]
#[bench::reno(args = ("one-flow", 3), setup = load)]
#[bench::dumbbell_10(args = ("dumbbell-10", 0), setup = load)]
#[bench::fq_codel(args = ("fq-codel", 0), setup = load)]
#[bench::poisson_2000(args = ("poisson-2000", 0), setup = load)]
#[bench::c2_10g(args = ("c2-10g", 0), setup = load)]
fn sim(s: Simulation) -> u64 {
    black_box(simulate(&s))
}

#[library_benchmark]
#[bench::bbr(Algorithm::Bbr)]
#[bench::bbr3(Algorithm::Bbr3)]
#[bench::cubic(Algorithm::Cubic)]
#[bench::reno(Algorithm::Reno)]
fn per_ack(a: Algorithm) -> u64 {
    black_box(send_and_ack(a, 20_000))
}

library_benchmark_group!(name = simulator; benchmarks = sim);
library_benchmark_group!(name = controller; benchmarks = per_ack);
main!(library_benchmark_groups = simulator, controller);
