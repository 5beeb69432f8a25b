//! Text into the report's HTML.

/// Escapes text for HTML.
pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The reports' style sheet (`reproduce`'s and `conformance`'s pages).
pub(crate) const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}\
h1{margin-bottom:.2em}section{border-top:1px solid #ccc;padding-top:1em;margin-top:2em}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}\
th{background:#f4f4f4}.ok{color:#fff;background:#2a7d2a;padding:.15em .5em;border-radius:3px}\
.no{color:#fff;background:#b52a2a;padding:.15em .5em;border-radius:3px}img{max-width:100%;border:1px solid #eee}\
pre{background:#f7f7f7;padding:.6em;overflow-x:auto;font-size:90%}details{margin:.5em 0}.pass{color:#2a7d2a}.fail{color:#b52a2a}";
