//! What a run that needs bbrlab's BPF congestion controls tells a user
//! whose bbrlab was built without them: the controls need the `kernel`
//! cargo feature, which is off by default because building it needs
//! clang, bpftool, libbpf, libelf and zlib.

/// The exact command that builds the `kernel` feature in, for a binary
/// built without it.
pub const BUILD_WITH_KERNEL: &str =
    "bash scripts/setup.sh && cargo run --release -p bbrlab --features kernel -- kernel ...";

/// What to tell a user who asks for `bbrlab {what}` when it was built
/// without the `kernel` feature: what is missing and how to get it.
pub fn missing(what: &str) -> String {
    format!(
        "`bbrlab {what}` needs bbrlab's BPF congestion controls, and this bbrlab was built without them \
         (cargo feature `kernel`, off by default because it needs clang, bpftool, libbpf, libelf and zlib). \
         Build it in with: {BUILD_WITH_KERNEL}"
    )
}

#[cfg(test)]
mod tests {
    /// A binary without the feature must say what is missing and give the
    /// command that builds it in, not a bare "unknown command".
    #[test]
    fn the_message_names_the_feature_and_the_command_that_builds_it() {
        let m = super::missing("kernel load");
        assert!(m.contains("`bbrlab kernel load`"), "{m}");
        assert!(m.contains("feature `kernel`"), "{m}");
        assert!(m.contains("--features kernel"), "{m}");
        assert!(m.contains("scripts/setup.sh"), "{m}");
    }
}
