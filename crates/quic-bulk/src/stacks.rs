//! Every QUIC stack quic-bulk runs, by its `--stack` name: the one place
//! that names the stack modules, so they depend on [`crate::stack`]'s
//! contract and it on none of them.

use crate::stack::Stack;

/// Every stack, by `--stack` name.
pub fn by_name(name: &str) -> Result<&'static dyn Stack, String> {
    match name {
        "s2n" => Ok(&crate::s2n::S2n),
        "noq" => Ok(&crate::noq::Noq),
        "quinn" => Ok(&crate::quinn::Quinn),
        other => Err(format!(
            "--stack {other}: unknown QUIC stack; known stacks: s2n, noq, quinn"
        )),
    }
}
