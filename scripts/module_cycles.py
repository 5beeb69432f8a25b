#!/usr/bin/env python3
"""Import cycles between the top-level modules of each crate (issue 32).

A file's module is its first path segment under src/ (src/a.rs and
src/a/b.rs are both `a`); an edge a -> b is a path to b in a's code
(comments, test modules and tests.rs files left out):
- `crate::b`, or `crate::X` where the crate root re-exports X from b;
- from a top-level module's own file, `super::b` or `super::X` (the same,
  through the crate root), and with `use super::*` any name the crate
  root re-exports from b (sibling modules that share the root's names
  reach each other that way).
Prints each cycle and exits 1 if there is one. Stdlib only; run by
scripts/check-layers.sh.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def code_lines(text):
    """The file's lines outside comments and #[cfg(test)] modules."""
    out, skip_depth, depth, pending_test = [], None, 0, False
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("//"):
            continue
        if s.startswith("#[cfg(test)]"):
            pending_test = True
            continue
        if pending_test and s.startswith("mod ") and skip_depth is None:
            skip_depth = depth
        pending_test = False if not s.startswith("#[") else pending_test
        opens, closes = line.count("{"), line.count("}")
        if skip_depth is None:
            out.append(line.split("//")[0])
        depth += opens - closes
        if skip_depth is not None and depth <= skip_depth:
            skip_depth = None
    return out


def modules(src):
    mods = {}
    for f in src.rglob("*.rs"):
        rel = f.relative_to(src)
        # A module's unit tests in their own file (`#[cfg(test)] mod tests;`).
        if rel.name == "tests.rs" or "tests" in rel.parts[:-1]:
            continue
        top = rel.parts[0].removesuffix(".rs")
        if top in ("lib", "main"):
            continue
        mods.setdefault(top, []).append(f)
    return mods


def root_reexports(src, mods):
    """Names the crate root (lib.rs or main.rs) re-exports, each with the
    top-level module it comes from: `pub use b::{X, Y}`, `use b::X`."""
    names = {}
    for root in ("lib.rs", "main.rs"):
        f = src / root
        if not f.exists():
            continue
        text = " ".join(code_lines(f.read_text()))
        # `use b::*`: every item b declares visible to the root.
        for m in re.findall(r"\buse\s+(?:crate::|self::)?([a-z_][a-z0-9_]*)::\*", text):
            for g in mods.get(m, []):
                for line in code_lines(g.read_text()):
                    # Items of the module itself (at column 0), not
                    # methods or fields.
                    d = re.match(r"pub(?:\([^)]*\))?\s+(?:unsafe\s+)?(?:fn|struct|enum|const|static|type|trait)\s+([A-Za-z_][A-Za-z0-9_]*)", line)
                    if d:
                        names.setdefault(d.group(1), m)
        for m, body in re.findall(r"\buse\s+(?:crate::|self::)?([a-z_][a-z0-9_]*)::(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*)", text):
            if m not in mods:
                continue
            for name in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", body):
                if name not in ("self", "super", "crate"):
                    names.setdefault(name, m)
    return names


def is_top_file(src, f):
    """Whether `super` in f is the crate root: f is src/a.rs or src/a/mod.rs."""
    rel = f.relative_to(src)
    return len(rel.parts) == 1 or (len(rel.parts) == 2 and rel.name == "mod.rs")


def cycles_of(src):
    mods = modules(src)
    exported = root_reexports(src, mods)
    edges = {m: set() for m in mods}

    def target(name):
        return name if name in mods else exported.get(name)

    for m, files in mods.items():
        for f in files:
            lines = code_lines(f.read_text())
            top = is_top_file(src, f)
            glob = top and any(re.search(r"\buse\s+super::\*", l) for l in lines)
            for line in lines:
                refs = re.findall(r"crate::([A-Za-z_][A-Za-z0-9_]*)", line)
                if top:
                    refs += re.findall(r"(?<![:\w])super::([A-Za-z_][A-Za-z0-9_]*)", line)
                    for group in re.findall(r"(?<![:\w])super::\{([^}]*)\}", line):
                        refs += re.findall(r"(?:^|,)\s*([A-Za-z_][A-Za-z0-9_]*)", group)
                if glob:
                    # A bare name (not a method, field or other path's
                    # segment; string literals left out).
                    bare = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)
                    refs += [w for w in re.findall(r"(?<![.\w:])([A-Za-z_][A-Za-z0-9_]*)\b", bare) if w in exported]
                for ref in refs:
                    t = target(ref)
                    if t is not None and t != m:
                        edges[m].add(t)
                # `use crate::{a, b::c}` groups
                for group in re.findall(r"crate::\{([^}]*)\}", line):
                    for ref in re.findall(r"(?:^|,)\s*([a-z_][a-z0-9_]*)", group):
                        if ref in mods and ref != m:
                            edges[m].add(ref)
    found, seen = [], set()

    def walk(node, path):
        for nxt in sorted(edges[node]):
            if nxt in path:
                cyc = path[path.index(nxt):] + [nxt]
                key = frozenset(cyc)
                if key not in seen:
                    seen.add(key)
                    found.append(cyc)
            elif len(path) < 12:
                walk(nxt, path + [nxt])

    for m in sorted(edges):
        walk(m, [m])
    return found


def selftest():
    """The checker on planted crates: a cycle through the crate root's
    names (`use super::*`) is found, the same modules without the back
    edge are not flagged, and a method or a string that shares a name
    makes no edge."""
    import tempfile

    def crate(files):
        d = pathlib.Path(tempfile.mkdtemp()) / "src"
        d.mkdir()
        for name, text in files.items():
            (d / name).write_text(text)
        return d

    root = "mod a;\nmod b;\nuse a::*;\nuse b::*;\n"
    a = "use super::*;\npub(crate) fn from_a() -> u32 { from_b() }\n"
    b_back = "use super::*;\npub(crate) fn from_b() -> u32 { 1 }\nfn x() -> u32 { from_a() }\n"
    b_clean = ('use super::*;\npub(crate) fn from_b() -> u32 { 1 }\n'
               'fn y(s: &S) -> u32 { s.from_a(); let _ = "from_a"; 2 }\n')
    assert cycles_of(crate({"lib.rs": root, "a.rs": a, "b.rs": b_back})) == [["a", "b", "a"]]
    assert cycles_of(crate({"lib.rs": root, "a.rs": a, "b.rs": b_clean})) == []
    print("module_cycles: self-test ok", file=sys.stderr)
    return 0


def main():
    if sys.argv[1:] == ["--selftest"]:
        return selftest()
    bad = 0
    for src in sorted(ROOT.glob("crates/*/src")):
        for cyc in cycles_of(src):
            print(f"module_cycles: {src.parent.name}: {' -> '.join(cyc)}", file=sys.stderr)
            bad += 1
    if bad:
        print(f"module_cycles: {bad} import cycle(s) between modules; move the shared "
              "type or function into a small module both use", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
