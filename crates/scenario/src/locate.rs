//! Where in a scenario file a key or value is: `file:line:col` for every
//! error, whether the TOML parser found it or a check after parsing did.
//!
//! The parser's errors carry a byte span; checks after parsing know only a
//! field path such as `flow[0].mss`. [`Located`] answers both ways from
//! one span-preserving parse of the text (toml_edit, which toml itself
//! uses): the path at a byte offset, and the position of a path.

use std::fmt;
use std::ops::Range;
use toml_edit::{ImDocument, Item, Value};

/// One step of a path: a table key or an array index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    /// A key.
    Key(String),
    /// An index into an array or array of tables.
    Index(usize),
}

/// A path into a TOML document, shown as `flow[0].jitter.alpha`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyPath(pub Vec<Seg>);

impl KeyPath {
    /// Parses `flow[0].mss` or `link.forward.rate` (no quoting: scenario
    /// keys are plain words).
    pub fn parse(s: &str) -> KeyPath {
        let mut segs = Vec::new();
        for part in s.split('.').filter(|p| !p.is_empty()) {
            let mut rest = part;
            if let Some(b) = rest.find('[') {
                segs.push(Seg::Key(rest[..b].to_string()));
                rest = &rest[b..];
                while let Some(stripped) = rest.strip_prefix('[') {
                    let end = stripped.find(']').unwrap_or(stripped.len());
                    if let Ok(i) = stripped[..end].parse() {
                        segs.push(Seg::Index(i));
                    }
                    rest = stripped.get(end + 1..).unwrap_or("");
                }
            } else {
                segs.push(Seg::Key(rest.to_string()));
            }
        }
        KeyPath(segs)
    }
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.0.iter().enumerate() {
            match s {
                Seg::Key(k) if i == 0 => write!(f, "{k}")?,
                Seg::Key(k) => write!(f, ".{k}")?,
                Seg::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

/// A scenario's text, parsed once with spans kept.
pub struct Located<'a> {
    src: &'a str,
    doc: Option<ImDocument<&'a str>>,
}

/// A node reached while walking a path.
#[derive(Clone, Copy)]
enum Node<'d> {
    Item(&'d Item),
    Value(&'d Value),
    /// A table of an array of tables (it has no `Item` of its own).
    Table(&'d toml_edit::Table),
}

impl<'d> Node<'d> {
    fn span(self) -> Option<Range<usize>> {
        match self {
            Node::Item(i) => i.span(),
            Node::Value(v) => v.span(),
            Node::Table(t) => t.span(),
        }
    }

    /// Children with the span of their key (for tables) and their node.
    fn children(self) -> Vec<(Seg, Option<Range<usize>>, Node<'d>)> {
        let mut out = Vec::new();
        let table_like: Option<&dyn toml_edit::TableLike> = match self {
            Node::Item(i) => i.as_table_like(),
            Node::Value(Value::InlineTable(t)) => Some(t),
            Node::Value(_) => None,
            Node::Table(t) => Some(t),
        };
        if let Some(t) = table_like {
            for (k, _) in t.iter() {
                if let Some((key, item)) = t.get_key_value(k) {
                    out.push((Seg::Key(k.to_string()), key.span(), Node::Item(item)));
                }
            }
            return out;
        }
        match self {
            Node::Item(Item::ArrayOfTables(a)) => {
                for (i, t) in a.iter().enumerate() {
                    out.push((Seg::Index(i), None, Node::Table(t)));
                }
            }
            Node::Item(Item::Value(Value::Array(a))) | Node::Value(Value::Array(a)) => {
                for (i, v) in a.iter().enumerate() {
                    out.push((Seg::Index(i), None, Node::Value(v)));
                }
            }
            _ => {}
        }
        out
    }
}

impl<'a> Located<'a> {
    /// Parses `src` keeping spans; a text that does not parse still gives
    /// positions from byte offsets.
    pub fn new(src: &'a str) -> Located<'a> {
        Located {
            src,
            doc: ImDocument::parse(src).ok(),
        }
    }

    /// 1-based line and column of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let before = &self.src[..offset.min(self.src.len())];
        let line = before.matches('\n').count() + 1;
        let col = before[before.rfind('\n').map_or(0, |i| i + 1)..]
            .chars()
            .count()
            + 1;
        (line, col)
    }

    /// The deepest path whose key or value contains byte `offset`.
    pub fn path_at(&self, offset: usize) -> Option<KeyPath> {
        let doc = self.doc.as_ref()?;
        let mut path = Vec::new();
        let mut node = Node::Item(doc.as_item());
        'descend: loop {
            for (seg, key_span, child) in node.children() {
                let in_key = key_span.as_ref().is_some_and(|r| r.contains(&offset));
                let in_value = child.span().is_some_and(|r| r.contains(&offset));
                if in_key || in_value || contains_deep(child, offset) {
                    path.push(seg);
                    if in_key {
                        break 'descend;
                    }
                    node = child;
                    continue 'descend;
                }
            }
            break;
        }
        (!path.is_empty()).then_some(KeyPath(path))
    }

    /// The byte span that best stands for `path`: its value (or table
    /// header), else the deepest part of the path that exists. The second
    /// value says whether the whole path was found.
    pub fn span_of(&self, path: &KeyPath) -> Option<(Range<usize>, bool)> {
        let doc = self.doc.as_ref()?;
        let mut node = Node::Item(doc.as_item());
        let mut best: Option<Range<usize>> = None;
        for seg in &path.0 {
            let Some((_, key_span, child)) = node.children().into_iter().find(|c| &c.0 == seg)
            else {
                return best.map(|b| (b, false));
            };
            best = child.span().or(key_span).or(best);
            node = child;
        }
        best.map(|b| (b, true))
    }
}

/// Whether any descendant of `node` has a span containing `offset`
/// (implicit and dotted tables have no span of their own).
fn contains_deep(node: Node<'_>, offset: usize) -> bool {
    node.children().into_iter().any(|(_, k, c)| {
        k.is_some_and(|r| r.contains(&offset))
            || c.span().is_some_and(|r| r.contains(&offset))
            || contains_deep(c, offset)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;
    use std::path::Path;

    fn err(src: &str) -> String {
        match parse(src, "s.toml", Path::new("."), Path::new("s.toml")) {
            Ok(_) => panic!("accepted:\n{src}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn paths_and_positions_round_trip() {
        let src = "a = 1\n[link.forward]\nrate = \"1mbit\"\njitter = { normal.sd = \"1ms\", reorder = true }\n[[flow]]\nx = 1\n[[flow]]\nmss = 9\n";
        let l = Located::new(src);
        let p = KeyPath::parse("flow[1].mss");
        assert_eq!(p.to_string(), "flow[1].mss");
        let (r, whole) = l.span_of(&p).unwrap();
        assert!(whole);
        assert_eq!(l.line_col(r.start), (8, 7));
        assert_eq!(l.path_at(r.start), Some(p));
        let sd = src.find("\"1ms\"").unwrap();
        assert_eq!(
            l.path_at(sd).unwrap().to_string(),
            "link.forward.jitter.normal.sd"
        );
        // A missing key points at the deepest part that exists.
        let (r, whole) = l.span_of(&KeyPath::parse("flow[0].mss")).unwrap();
        assert!(!whole);
        assert_eq!(l.line_col(r.start).0, 5);
    }

    /// Issue 13: inline tables printed ``link.forward.jitter = { normal.sd``.
    #[test]
    fn inline_table_errors_name_the_dotted_path() {
        let e = err("duration = \"1s\"\n[link.forward]\nrate = \"1mbit\"\njitter = { normal.sd = \"x\", normal.mean = \"1ms\" }\n[[flow]]\nalgorithm = \"bbr\"\n");
        assert!(
            e.starts_with("s.toml:4:24: `link.forward.jitter.normal.sd`:"),
            "{e}"
        );
    }

    /// Issue 13: errors after parsing (`flow[0].mss`) had no line.
    #[test]
    fn checks_after_parsing_name_line_and_column() {
        let e = err("duration = \"1s\"\n[link.forward]\nrate = \"1mbit\"\n[[flow]]\nalgorithm = \"bbr\"\n[[flow]]\nalgorithm = \"bbr\"\nmss = 20000\n");
        assert!(e.starts_with("s.toml:8:7: `flow[1].mss`: 20000"), "{e}");
        let e = err(
            "duration = \"0s\"\n[link.forward]\nrate = \"1mbit\"\n[[flow]]\nalgorithm = \"bbr\"\n",
        );
        assert!(e.starts_with("s.toml:1:12: `duration`"), "{e}");
    }

    /// Issue 13: errors inside `[sweep]` points named no line.
    #[test]
    fn sweep_errors_point_at_the_offending_value() {
        let base = "duration = \"1s\"\n[link.forward]\nrate = \"1mbit\"\n[[flow]]\nalgorithm = \"bbr\"\n[sweep]\n";
        // A bad value for a typed field (caught by the parser).
        let e = err(&format!(
            "{base}\"flow.algorithm\" = [\"bbr\", \"vegas\"]\n"
        ));
        assert!(e.starts_with("s.toml:7:28:") && e.contains("vegas"), "{e}");
        // A value caught by a check after parsing.
        let e = err(&format!("{base}\"flow.0.mss\" = [1500, 20000]\n"));
        assert!(
            e.starts_with("s.toml:7:23:") && e.contains("flow.0.mss=20000"),
            "{e}"
        );
        // A unit error.
        let e = err(&format!(
            "{base}\"link.forward.rate\" = [\"1mbit\", \"10MBps\"]\n"
        ));
        assert!(
            e.starts_with("s.toml:7:33:") && e.contains("ambiguous"),
            "{e}"
        );
        // Not an array; a bad path.
        let e = err(&format!("{base}\"flow.mss\" = 1500\n"));
        assert!(e.starts_with("s.toml:7:1") && e.contains("array"), "{e}");
        let e = err(&format!("{base}\"flow.7.mss\" = [1500]\n"));
        assert!(
            e.starts_with("s.toml:7:1") && e.contains("out of range"),
            "{e}"
        );
    }
}
