//! `bbrlab kernel load|unload|list`: bbrlab's BBR (`bbrlab_bbr`), seed
//! 001's variant (`bbrlab_jitter`) and BBRv3 (`bbrlab_bbr3`) as BPF
//! congestion controls inside Linux TCP (crate `kernel-cc`), so kernel TCP — `bbrlab tcp send --cc
//! bbrlab_jitter`, iperf3 `-C`, or `sysctl net.ipv4.tcp_congestion_control`
//! — can run them without a kernel module.

/// Which controls a command acts on: the names given, or all of ours.
#[cfg(feature = "kernel")]
fn names(given: &[String]) -> Result<Vec<String>, String> {
    if given.is_empty() {
        return Ok(kernel_cc::NAMES.iter().map(|s| s.to_string()).collect());
    }
    for n in given {
        if !kernel_cc::is_ours(n) {
            return Err(format!(
                "unknown congestion control '{n}': bbrlab provides {}",
                kernel_cc::NAMES.join(", ")
            ));
        }
    }
    Ok(given.to_vec())
}

/// `kernel load [NAME...]`: every name must load; one that fails leaves
/// the ones before it loaded (and says so).
#[cfg(feature = "kernel")]
pub fn load(given: &[String]) -> Result<(), String> {
    let mut done = Vec::new();
    for n in names(given)? {
        kernel_cc::load(&n).map_err(|e| {
            if done.is_empty() {
                e
            } else {
                format!("{e}\n(loaded before the failure: {})", done.join(", "))
            }
        })?;
        println!(
            "loaded {n}: `bbrlab tcp send --cc {n}` or TCP_CONGESTION={n}; pinned at {}",
            kernel_cc::pin_dir(&n).display()
        );
        done.push(n);
    }
    Ok(())
}

/// `kernel unload [NAME...] [--force]`: without names, every one of ours
/// that is loaded.
#[cfg(feature = "kernel")]
pub fn unload(given: &[String], force: bool) -> Result<(), String> {
    let list: Vec<String> = if given.is_empty() {
        kernel_cc::list()
            .into_iter()
            .filter(|s| s.loaded)
            .map(|s| s.name)
            .collect()
    } else {
        names(given)?
    };
    if list.is_empty() {
        println!("nothing to unload: no bbrlab congestion control is loaded");
        return Ok(());
    }
    for n in list {
        let u = kernel_cc::unload(&n, force)?;
        if u.sockets_left > 0 {
            println!(
                "unloaded {n}; {} socket(s) keep running it until they close",
                u.sockets_left
            );
        } else {
            println!("unloaded {n}");
        }
        if u.still_default {
            eprintln!(
                "warning: {n} is still this namespace's default congestion control: new sockets \
                 keep getting it until net.ipv4.tcp_congestion_control is changed"
            );
        }
    }
    Ok(())
}

/// `kernel list`: each control, whether loaded and registered, and how
/// many sockets run it.
#[cfg(feature = "kernel")]
pub fn list() -> Result<(), String> {
    if let Err(e) = kernel_cc::built() {
        println!("note: {e}");
    }
    println!(
        "{:<15} {:<7} {:<11} sockets",
        "name", "loaded", "registered"
    );
    for s in kernel_cc::list() {
        println!(
            "{:<15} {:<7} {:<11} {}",
            s.name,
            if s.loaded { "yes" } else { "no" },
            if s.registered { "yes" } else { "no" },
            s.live_sockets
        );
    }
    println!("kernel offers: {}", kernel_cc::available().join(" "));
    Ok(())
}

#[cfg(not(feature = "kernel"))]
use testbed::kernel::missing;

/// Without the `kernel` feature, `load`, `unload` and `list` say what is
/// missing and how to build it in.
#[cfg(not(feature = "kernel"))]
pub fn load(_given: &[String]) -> Result<(), String> {
    Err(missing("kernel load"))
}

/// See [`load`].
#[cfg(not(feature = "kernel"))]
pub fn unload(_given: &[String], _force: bool) -> Result<(), String> {
    Err(missing("kernel unload"))
}

/// See [`load`].
#[cfg(not(feature = "kernel"))]
pub fn list() -> Result<(), String> {
    Err(missing("kernel list"))
}

#[cfg(all(test, not(feature = "kernel")))]
mod missing_tests {
    #[test]
    fn without_the_feature_every_kernel_action_is_refused_with_it() {
        for r in [super::load(&[]), super::unload(&[], true), super::list()] {
            assert!(r.unwrap_err().contains("--features kernel"));
        }
    }
}
