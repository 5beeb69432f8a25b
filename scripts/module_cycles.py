#!/usr/bin/env python3
"""Import cycles between the top-level modules of each crate (issue 32).

A file's module is its first path segment under src/ (src/a.rs and
src/a/b.rs are both `a`); an edge a -> b is a `crate::b` path in a's code
(comments, test modules and tests.rs files left out). Prints each cycle and exits 1 if
there is one. Stdlib only; run by scripts/check-layers.sh.
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


def cycles_of(src):
    mods = modules(src)
    edges = {m: set() for m in mods}
    for m, files in mods.items():
        for f in files:
            for line in code_lines(f.read_text()):
                for ref in re.findall(r"crate::([a-z_][a-z0-9_]*)", line):
                    if ref in mods and ref != m:
                        edges[m].add(ref)
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


def main():
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
