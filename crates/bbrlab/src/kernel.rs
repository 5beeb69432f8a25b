//! `bbrlab kernel load|unload|list`: bbrlab's BBR (`bbrlab_bbr`) and seed
//! 001's variant (`bbrlab_jitter`) as BPF congestion controls inside Linux
//! TCP (crate `kernel-cc`), so kernel TCP — `bbrlab tcp send --cc
//! bbrlab_jitter`, iperf3 `-C`, or `sysctl net.ipv4.tcp_congestion_control`
//! — can run them without a kernel module.

/// Which controls a command acts on: the names given, or all of ours.
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
    }
    Ok(())
}

/// `kernel list`: each control, whether loaded and registered, and how
/// many sockets run it.
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
