#!/usr/bin/env python3
"""The code blocks and links of README.md and the book (docs/): finding
them, checking them, and running the shell blocks. Python stdlib only.

The convention (scripts/test-docs.sh states it for readers):

- Every fenced block names its language in the info string: `sh`, `bash`,
  `console` (shell), `python`, `rust`, `toml` or `text` (output, listings,
  diagrams: nothing to run).
- An HTML comment on the line just before the opening fence says how the
  block is tested:
    <!-- not run: REASON -->          never run; REASON is required
    <!-- run: as-root needs=ip,iperf3 timeout=180 -->
                                       shell blocks only: run only as root
                                       (else SKIP), only when the commands
                                       exist (else SKIP), with this time bound
    <!-- run: output=next -->          and its standard output must be the
                                       next fenced block (`text`), line for
                                       line, trailing spaces aside (a pasted
                                       output that a code change would
                                       leave stale fails instead)
- Shell blocks without `not run` are run here (`run-shell`); Python blocks
  by crates/bbrlab-py/tests/test_doc_examples.py; TOML blocks are parsed
  here (`{{#include FILE}}` inside one is read from FILE); Rust blocks in
  the book are compiled and run by `mdbook test` unless `ignore`, which
  needs a `not run` marker naming the test that covers the same code.

Usage:
  docblocks.py check REPO [BOOK_HTML_DIR]   conventions, TOML, links
  docblocks.py run-shell REPO SCRATCH [FILE.md ...]
                                            every runnable shell block (of
                                            these files only, if named)
  docblocks.py list REPO                    every block and how it is tested
"""

from __future__ import annotations

import html.parser
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

SHELL = {"sh", "bash", "console"}
LANGS = SHELL | {"python", "rust", "toml", "text"}
DEFAULT_TIMEOUT_S = 300
#: Top-level entries of the repository linked into each scratch directory
#: (so `scenarios/x.toml`, `docs/...`, `target/release/bbrlab` resolve);
#: never Cargo.toml, so cargo finds the real workspace above the scratch
#: directory and reuses its build.
LINKED = ["scenarios", "docs", "examples", "crates", "scripts", "fuzz", "target", "README.md"]

MARKER = re.compile(r"^\s*<!--\s*(not run|run)\s*:(.*?)-->\s*$")
FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")


@dataclass
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    info: str
    body: str
    marker: Optional[Tuple[str, str]] = None  # ("not run" | "run", text)
    # --- derived
    lang: str = ""
    attrs: List[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        words = re.split(r"[\s,]+", self.info.strip()) if self.info.strip() else []
        self.lang = words[0] if words else ""
        self.attrs = words[1:]

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def not_run(self) -> Optional[str]:
        if self.marker and self.marker[0] == "not run":
            return self.marker[1].strip()
        return None

    def run_options(self) -> Dict[str, str]:
        opts: Dict[str, str] = {}
        if self.marker and self.marker[0] == "run":
            for word in self.marker[1].split():
                k, _, v = word.partition("=")
                opts[k] = v
        return opts


def doc_files(repo: Path) -> List[Path]:
    """README.md and every Markdown file of the book's tree (docs/)."""
    files = [repo / "README.md"]
    files += sorted(p for p in (repo / "docs").rglob("*.md") if p.is_file())
    return files


def parse(path: Path) -> List[Block]:
    lines = path.read_text(encoding="utf-8").split("\n")
    blocks: List[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or (m.group(2)[0] == "`" and "`" in m.group(3)):
            i += 1
            continue
        indent, fence, info = m.group(1), m.group(2), m.group(3)
        start = i
        body: List[str] = []
        i += 1
        while i < len(lines):
            c = FENCE.match(lines[i])
            if c and c.group(2)[0] == fence[0] and len(c.group(2)) >= len(fence) and not c.group(3).strip():
                break
            line = lines[i]
            # Strip the fence's own indentation (blocks inside list items).
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            i += 1
        marker = None
        if start > 0:
            mm = MARKER.match(lines[start - 1])
            if mm:
                marker = (mm.group(1), mm.group(2))
        blocks.append(Block(path, start + 1, info, "\n".join(body) + "\n", marker))
        i += 1
    return blocks


def expected_output(b: Block, blocks: List[Block]) -> Optional[Block]:
    """The `text` block that follows `b` in its file, when `b` is marked
    `output=next`; None when it is not, or when no such block follows."""
    if b.run_options().get("output") != "next":
        return None
    later = [x for x in blocks if x.path == b.path and x.line > b.line]
    return later[0] if later and later[0].lang == "text" else None


def check_outputs(blocks: List[Block]) -> List[str]:
    """An `output=next` block must be followed, next in its file, by a
    `text` block to hold its output."""
    return [
        f"{b.where}: `output=next` needs a ```text block next in the file, holding the output"
        for b in blocks
        if b.run_options().get("output") == "next" and expected_output(b, blocks) is None
    ]


def all_blocks(repo: Path) -> List[Block]:
    out: List[Block] = []
    for f in doc_files(repo):
        out += parse(f)
    return out


# ---------------------------------------------------------------- checks


def expand_includes(text: str, base: Path) -> str:
    """mdBook's `{{#include FILE}}` (whole files only), relative to base."""

    def sub(m: "re.Match[str]") -> str:
        target = (base / m.group(1).strip()).resolve()
        return expand_includes(target.read_text(encoding="utf-8"), target.parent)

    return re.sub(r"\{\{#include\s+([^}:]+)\}\}", sub, text)


def check_block(b: Block, repo: Path) -> List[str]:
    errs: List[str] = []
    if not b.lang:
        return [f"{b.where}: a fenced block without a language; name one of {sorted(LANGS)}"]
    if b.lang not in LANGS:
        return [f"{b.where}: unknown block language {b.lang!r}; use one of {sorted(LANGS)}"]
    if b.marker and b.marker[0] == "not run" and not b.not_run:
        errs.append(f"{b.where}: `not run:` needs a reason")
    if b.marker and b.marker[0] == "run":
        if b.lang not in SHELL:
            errs.append(f"{b.where}: `run:` options apply to shell blocks only")
        for k, v in b.run_options().items():
            if k not in {"as-root", "needs", "timeout", "output"}:
                errs.append(f"{b.where}: unknown run option {k!r} (as-root, needs=, timeout=, output=next)")
            if k == "timeout" and not v.isdigit():
                errs.append(f"{b.where}: timeout= takes whole seconds")
            if k == "output" and v != "next":
                errs.append(f"{b.where}: output= takes `next` (the next fenced block holds the output), not {v!r}")
    if b.lang == "rust":
        in_book = (repo / "docs" / "src") in b.path.parents
        if "ignore" in b.attrs or "no_run" in b.attrs:
            if b.not_run is None:
                errs.append(f"{b.where}: a rust,ignore block needs `<!-- not run: REASON -->` naming the doctest that covers it")
        elif not in_book and b.not_run is None:
            errs.append(f"{b.where}: only the book's Rust blocks are run (mdbook test); mark this one not run")
    if b.lang == "toml" and b.not_run is None:
        try:
            import tomllib  # Python 3.11
        except ImportError:  # pragma: no cover
            errs.append(f"{b.where}: cannot check TOML: Python 3.11's tomllib is missing")
        else:
            try:
                tomllib.loads(expand_includes(b.body, b.path.parent))
            except Exception as e:  # noqa: BLE001 - any parse error is the finding
                errs.append(f"{b.where}: TOML does not parse: {e}")
    return errs


def slug(heading: str) -> str:
    """A heading's anchor as GitHub and mdBook make it."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    out = []
    for ch in text.strip().lower():
        if ch.isalnum() or ch in "_-":
            out.append(ch)
        elif ch.isspace():
            out.append("-")
    return "".join(out)


def strip_code(text: str, inline: bool = True) -> str:
    """The text with fenced blocks (and, with `inline`, code spans) blanked,
    line numbers kept, so links and headings are looked for in prose only."""
    lines = text.split("\n")
    out = []
    fence: Optional[str] = None
    for line in lines:
        m = FENCE.match(line)
        if fence is None and m and not (m.group(2)[0] == "`" and "`" in m.group(3)):
            fence = m.group(2)
            out.append("")
            continue
        if fence is not None:
            if m and m.group(2)[0] == fence[0] and len(m.group(2)) >= len(fence) and not m.group(3).strip():
                fence = None
            out.append("")
            continue
        out.append(re.sub(r"(`+)(?:(?!\1).)+?\1", "``", line) if inline else line)
    return "\n".join(out)


def anchors_of(md: Path) -> Set[str]:
    text = strip_code(expand_includes(md.read_text(encoding="utf-8"), md.parent), inline=False)
    seen: Set[str] = set()
    for line in text.split("\n"):
        m = re.match(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m.group(1))
        cand, n = base, 1
        while cand in seen:
            cand, n = f"{base}-{n}", n + 1
        seen.add(cand)
    # Explicit anchors: <a id="..."> / <a name="...">
    seen |= set(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", text))
    return seen


#: A repository path named in the prose (a code span) or in a `not run`
#: reason, e.g. `crates/bbrlab/tests/validate.rs`: it must exist, so a
#: moved file cannot leave the docs pointing at nothing.
REPO_PATH = re.compile(r"(?<![\w/.-])((?:crates|scenarios|docs|scripts|examples|fuzz)/[A-Za-z0-9_./-]*[A-Za-z0-9_/])")


def check_repo_paths(md: Path, repo: Path) -> List[str]:
    errs: List[str] = []
    text = strip_code(md.read_text(encoding="utf-8"), inline=False)
    for lineno, line in enumerate(text.split("\n"), 1):
        spans = re.findall(r"`([^`]+)`", line)
        marker = MARKER.match(line)
        if marker and marker.group(1) == "not run":
            spans.append(marker.group(2))
        for span in spans:
            for p in REPO_PATH.findall(span):
                if not (repo / p).exists():
                    errs.append(f"{md}:{lineno}: names {p}, which does not exist")
    return errs


LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.M)


def check_md_links(md: Path) -> List[str]:
    errs: List[str] = []
    text = strip_code(md.read_text(encoding="utf-8"))
    for lineno, line in enumerate(text.split("\n"), 1):
        targets = LINK.findall(line) + REFDEF.findall(line)
        for target in targets:
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("//"):
                continue  # a URL: not checked (no network in tests)
            path, _, anchor = target.partition("#")
            path = path.split("?")[0]
            dest = (md.parent / path).resolve() if path else md.resolve()
            if not dest.exists():
                errs.append(f"{md}:{lineno}: link to {target}: {dest} does not exist")
                continue
            if anchor and dest.suffix == ".md" and anchor not in anchors_of(dest):
                errs.append(f"{md}:{lineno}: link to {target}: no heading #{anchor} in {dest.name}")
    return errs


class _Html(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: Set[str] = set()
        self.refs: List[Tuple[str, int]] = []

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        for k, v in attrs:
            if v is None:
                continue
            if k in ("id", "name"):
                self.ids.add(v)
            if (k == "href" and tag in ("a", "link")) or (k == "src" and tag in ("img", "script")):
                self.refs.append((v, self.getpos()[0]))


def check_html(book: Path) -> List[str]:
    """Every relative href/src in the built book resolves, with its anchor."""
    errs: List[str] = []
    parsed: Dict[Path, _Html] = {}

    def load(p: Path) -> _Html:
        if p not in parsed:
            h = _Html()
            h.feed(p.read_text(encoding="utf-8", errors="replace"))
            parsed[p] = h
        return parsed[p]

    pages = sorted(book.rglob("*.html"))
    if not pages:
        return [f"{book}: no HTML pages; was the book built?"]
    for page in pages:
        if page.name == "404.html":  # absolute links under the site's root
            continue
        for ref, line in load(page).refs:
            if re.match(r"^[a-z][a-z0-9+.-]*:", ref, re.I) or ref.startswith("//") or ref.startswith("{{"):
                continue
            path, _, anchor = ref.partition("#")
            path = path.split("?")[0]
            dest = (page.parent / path) if path else page
            if dest.is_dir():
                dest = dest / "index.html"
            if not dest.exists():
                errs.append(f"{page.relative_to(book)}:{line}: {ref} does not exist in the built book")
                continue
            if anchor and dest.suffix == ".html" and anchor not in load(dest).ids:
                errs.append(f"{page.relative_to(book)}:{line}: {ref}: no id {anchor!r} in {dest.relative_to(book)}")
    return errs


def check(repo: Path, book: Optional[Path]) -> int:
    errs: List[str] = []
    blocks = all_blocks(repo)
    for b in blocks:
        errs += check_block(b, repo)
    errs += check_outputs(blocks)
    for md in doc_files(repo):
        errs += check_md_links(md)
        errs += check_repo_paths(md, repo)
    if book is not None:
        errs += check_html(book)
    for e in errs:
        print(f"docs: {e}", file=sys.stderr)
    n_run = sum(1 for b in blocks if b.lang in SHELL | {"python"} and b.not_run is None)
    n_not = sum(1 for b in blocks if b.not_run is not None)
    print(
        f"docs: {len(blocks)} blocks in {len(doc_files(repo))} files: {n_run} shell/python blocks run, "
        f"{n_not} marked not run; links and named paths checked in Markdown{' and the built book' if book else ''}: "
        f"{'ok' if not errs else f'{len(errs)} problem(s)'}"
    )
    return 1 if errs else 0


# ---------------------------------------------------------------- running


def scratch_dir(repo: Path, where: Path) -> Path:
    """A fresh directory whose top-level entries link to the repository's,
    so a block's relative paths resolve and its outputs stay out of the tree."""
    if where.exists():
        shutil.rmtree(where)
    where.mkdir(parents=True)
    for name in LINKED:
        src = repo / name
        if name == "target":
            src = Path(os.environ.get("CARGO_TARGET_DIR") or src)
        if src.exists():
            (where / name).symlink_to(src)
    return where


def shell_script(b: Block) -> str:
    if b.lang == "console":  # only the commands: lines after a `$ ` prompt
        return "\n".join(l[2:] for l in b.body.split("\n") if l.startswith("$ ")) + "\n"
    return b.body


def run_shell(repo: Path, scratch: Path, only: List[str]) -> int:
    failed: List[str] = []
    ran = skipped = 0
    by_file: Dict[Path, List[Block]] = {}
    wanted = {(repo / f).resolve() for f in only}
    everything = all_blocks(repo)
    for b in everything:
        if wanted and b.path.resolve() not in wanted:
            continue
        if b.lang in SHELL and b.not_run is None:
            by_file.setdefault(b.path, []).append(b)
    for path, blocks in by_file.items():
        rel = path.relative_to(repo)
        cwd = scratch_dir(repo, scratch / str(rel).replace("/", "__"))
        for b in blocks:
            opts = b.run_options()
            label = f"{rel}:{b.line}"
            why = None
            if "as-root" in opts and os.geteuid() != 0:
                why = "needs root"
            missing = [c for c in filter(None, opts.get("needs", "").split(",")) if shutil.which(c) is None]
            if why is None and missing:
                why = f"needs {', '.join(missing)} (scripts/setup.sh installs them)"
            if why is not None:
                print(f"docs: SKIP {label}: {why}")
                skipped += 1
                continue
            timeout = int(opts.get("timeout") or DEFAULT_TIMEOUT_S)
            print(f"docs: RUN  {label} (in {cwd.relative_to(repo)}, at most {timeout} s)", flush=True)
            t0 = time.monotonic()
            # Standard output apart from standard error only when it is
            # compared with the book (cargo's progress goes to stderr).
            expected = expected_output(b, everything)
            # Its own process group, so a block that overruns is stopped
            # whole: SIGTERM first (bbrlab emu then removes its namespaces),
            # SIGKILL if it has not gone 15 s later.
            proc = subprocess.Popen(
                ["bash", "-euo", "pipefail", "-c", shell_script(b)],
                cwd=cwd,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE if expected else subprocess.STDOUT,
                start_new_session=True,
            )
            try:
                raw, err = proc.communicate(timeout=timeout)
                ok, verdict = proc.returncode == 0, f"exit {proc.returncode}"
            except subprocess.TimeoutExpired:
                for sig, grace in ((signal.SIGTERM, 15), (signal.SIGKILL, 15)):
                    try:
                        os.killpg(proc.pid, sig)
                    except ProcessLookupError:
                        pass
                    try:
                        raw, err = proc.communicate(timeout=grace)
                        break
                    except subprocess.TimeoutExpired:
                        raw, err = b"", b""
                ok, verdict = False, f"stopped at its time limit ({timeout} s)"
            out = (raw or b"").decode(errors="replace")
            if expected is not None and ok:
                diff = output_difference(out, expected.body)
                if diff:
                    ok, verdict = False, f"its output is not the book's ({expected.path.relative_to(repo)}:{expected.line}): {diff}"
            if err:
                out += err.decode(errors="replace")
            dt = time.monotonic() - t0
            ran += 1
            if ok:
                print(f"docs: ok   {label} ({dt:.1f} s)")
            else:
                print(f"docs: FAIL {label}: {verdict} after {dt:.1f} s; its output:\n{out[-6000:]}", file=sys.stderr)
                failed.append(label)
    print(f"docs: shell blocks: {ran} run, {skipped} skipped, {len(failed)} failed")
    return 1 if failed else 0


def output_difference(got: str, pasted: str) -> Optional[str]:
    """None when a block's output is the pasted text (trailing spaces and
    blank lines aside); else the first line that differs, both ways."""
    a = [l.rstrip() for l in got.rstrip().split("\n")]
    b = [l.rstrip() for l in pasted.rstrip().split("\n")]
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else "(no more lines)"
        y = b[i] if i < len(b) else "(no more lines)"
        if x != y:
            return f"line {i + 1} is {x!r}, the book has {y!r}"
    return None


def list_blocks(repo: Path) -> int:
    for b in all_blocks(repo):
        how = (
            f"not run: {b.not_run}" if b.not_run is not None
            else "run by scripts/test-docs.sh, its output checked" if b.lang in SHELL and b.run_options().get("output") == "next"
            else "run by scripts/test-docs.sh" if b.lang in SHELL
            else "run by test_doc_examples.py" if b.lang == "python"
            else "parsed" if b.lang == "toml"
            else "mdbook test" if b.lang == "rust"
            else "output/listing"
        )
        print(f"{b.path.relative_to(repo)}:{b.line}\t{b.lang}\t{how}")
    return 0


def main(argv: List[str]) -> int:
    if len(argv) < 3 or argv[1] not in {"check", "run-shell", "list"}:
        print(__doc__, file=sys.stderr)
        return 2
    repo = Path(argv[2]).resolve()
    if argv[1] == "check":
        return check(repo, Path(argv[3]).resolve() if len(argv) > 3 else None)
    if argv[1] == "run-shell":
        if len(argv) < 4:
            print("usage: docblocks.py run-shell REPO SCRATCH [FILE.md ...]", file=sys.stderr)
            return 2
        return run_shell(repo, Path(argv[3]).resolve(), argv[4:])
    return list_blocks(repo)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
