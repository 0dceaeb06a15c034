#!/usr/bin/env python3
"""Check a natural-language dev set (the eval kits' format) against the tool's own chunks.

    python bench/devsets/check_nl.py --data bench/devsets/nl-rust-ripgrep.jsonl \
        --source /work/repos/ripgrep [--chunks CHUNKS.json] [--min 60] [--oracle rust]

CHUNKS.json is `index.py --source TREE --dry-run --json` (one chunk a line); without it the
script runs that command of this checkout. Every target must:
  - name a file of the tree, outside test code (a tests/ or test/ folder, a Rust
    `#[cfg(test)] mod`, a C `#ifdef REDIS_TEST` block);
  - have start_line inside a chunk of the same file, and the innermost such chunk must have
    the target's member name and class, its signature line == start_line and its last
    line == end_line;
  - have the member's name on its start_line (what `sed -n Np` shows).
And the set: unique ids, kinds from the four, 1-3 targets a question, no file a target of
more than 3 questions, no target member in two questions, at least --min questions.
With --oracle LANG, each target is also looked up in the compiler's parse of its file
(bench/oracle_lang.py: syn, clang, go/ast, javac): a unit of that name must start its
signature on start_line and end on end_line.
Prints the counts per kind and the problems; exit 1 when there is a problem.
"""
import argparse
import importlib.util
import json
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KINDS = ("behaviour", "locate", "agent", "grep-hard")
SHARE = {"behaviour": 0.40, "locate": 0.25, "agent": 0.25, "grep-hard": 0.10}
MAX_PER_FILE = 3
_TEST_DIR = re.compile(r"(^|/)(tests?|testdata|benches|examples)/")
_RUST_TEST_MOD = re.compile(r"^#\[cfg\(test\)\]\s*$")
_C_TEST_IF = re.compile(r"^\s*#\s*(ifdef\s+REDIS_TEST\b|if\s+defined\(?\s*REDIS_TEST\b)")
_C_IF = re.compile(r"^\s*#\s*if")
_C_ENDIF = re.compile(r"^\s*#\s*endif")


def load_chunks(args):
    if args.chunks:
        text = Path(args.chunks).read_text(encoding="utf-8")
    else:
        text = subprocess.run([sys.executable, str(ROOT / "index.py"), "--source", args.source,
                               "--dry-run", "--json"], capture_output=True, text=True,
                              check=True).stdout
    by_file = defaultdict(list)
    for line in text.splitlines():
        if line.strip():
            c = json.loads(line)
            by_file[c["file"]].append(c)
    return by_file


def test_lines(path, lines):
    """1-based line numbers that are test code inside a source file."""
    out = set()
    if path.endswith(".rs"):
        for k, x in enumerate(lines):
            nxt = next((y for y in lines[k + 1:] if y.strip()), "")
            if _RUST_TEST_MOD.match(x) and nxt.startswith("mod "):
                return set(range(k + 1, len(lines) + 1))   # a test module runs to the file's end
        return out
    depth_stack = []                                     # per #if level: is it a test block
    for k, x in enumerate(lines, 1):
        if _C_IF.match(x):
            depth_stack.append(bool(_C_TEST_IF.match(x)))
        elif _C_ENDIF.match(x) and depth_stack:
            depth_stack.pop()
        if any(depth_stack):
            out.add(k)
    return out


def check(rows, by_file, source, min_questions):
    problems, seen_ids, per_file, members = [], set(), Counter(), {}
    sources = {}
    for q in rows:
        qid = q.get("id")
        if qid in seen_ids:
            problems.append(f"{qid}: duplicate id")
        seen_ids.add(qid)
        if q.get("kind") not in KINDS:
            problems.append(f"{qid}: kind {q.get('kind')!r}")
        targets = q.get("targets") or []
        if not 1 <= len(targets) <= 3:
            problems.append(f"{qid}: {len(targets)} targets")
        for f in {t["file"] for t in targets}:
            per_file[f] += 1
        for t in targets:
            f, cls, name = t["file"], t["class"], t["method"]
            s, e = t["start_line"], t["end_line"]
            where = f"{qid}: {f}:{s} {cls + '::' if cls else ''}{name}"
            key = (f, cls, name, s)
            if key in members and members[key] != qid:
                problems.append(f"{where}: also a target of {members[key]}")
            members[key] = qid
            path = Path(source) / f
            if not path.is_file():
                problems.append(f"{where}: no such file")
                continue
            if f not in sources:
                lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
                sources[f] = (lines, test_lines(f, lines))
            lines, tests = sources[f]
            if _TEST_DIR.search(f) or s in tests:
                problems.append(f"{where}: test code")
            if not 1 <= s <= len(lines) or name not in lines[s - 1]:
                problems.append(f"{where}: line {s} does not name {name}")
            around = [c for c in by_file.get(f, []) if c["kind"] != "file"
                      and c["start_line"] <= s <= c["end_line"]]
            if not around:
                problems.append(f"{where}: no chunk holds line {s}")
                continue
            c = min(around, key=lambda c: c["end_line"] - c["start_line"])
            if (c["member"], c["class"]) != (name, cls):
                problems.append(f"{where}: the chunk there is {c['class']}::{c['member']}")
            elif (c["sig_line"], c["end_line"]) != (s, e):
                problems.append(f"{where}: span {s}-{e}, the chunk's {c['sig_line']}-{c['end_line']}")
    for f, n in per_file.items():
        if n > MAX_PER_FILE:
            problems.append(f"{f}: a target of {n} questions (at most {MAX_PER_FILE})")
    if len(rows) < min_questions:
        problems.append(f"{len(rows)} questions (at least {min_questions})")
    return problems, per_file


def check_oracle(rows, source, lang):
    """Problems where the compiler's parse disagrees with a target's name or span."""
    # the compilers' parsers, loaded only with --oracle (it imports the installed package)
    spec = importlib.util.spec_from_file_location("oracle_lang", ROOT / "bench" / "oracle_lang.py")
    oracle = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(oracle)
    files = sorted({t["file"] for q in rows for t in q.get("targets", [])})
    found = oracle.run_oracle(lang, [str(Path(source) / f) for f in files])
    problems = []
    for q in rows:
        for t in q.get("targets", []):
            got = found.get(str(Path(source) / t["file"]), {"error": "no answer"})
            if "error" in got:
                problems.append(f"{q['id']}: {t['file']}: the oracle: {got['error']}")
                continue
            spans = {(u["sig"], u["end"]) for u in got["units"] if u["name"] == t["method"]}
            if (t["start_line"], t["end_line"]) not in spans:
                problems.append(f"{q['id']}: {t['file']}:{t['start_line']}-{t['end_line']} "
                                f"{t['method']}: the oracle has {sorted(spans) or 'no such unit'}")
    return problems


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--source", required=True, help="the tree the set's paths are relative to")
    ap.add_argument("--chunks", help="index.py --dry-run --json output (default: run it)")
    ap.add_argument("--min", type=int, default=60, help="fewest questions (default 60)")
    ap.add_argument("--oracle", choices=["go", "java", "rust", "c", "cpp"],
                    help="also check every span against this language's compiler parser")
    args = ap.parse_args(argv)
    rows = [json.loads(x) for x in Path(args.data).read_text(encoding="utf-8").splitlines()
            if x.strip()]
    problems, per_file = check(rows, load_chunks(args), args.source, args.min)
    if args.oracle:
        problems += check_oracle(rows, args.source, args.oracle)
    kinds = Counter(q.get("kind") for q in rows)
    n = len(rows)
    targets = [t for q in rows for t in q.get("targets", [])]
    ntargets = Counter(len(q.get("targets", [])) for q in rows)
    print(f"questions: {n}; targets: {len(targets)} "
          f"({', '.join(f'{ntargets[k]} with {k}' for k in sorted(ntargets))}); "
          f"distinct files: {len(per_file)}")
    for k in KINDS:
        print(f"  {k}: {kinds[k]} ({kinds[k] / max(n, 1):.0%}, spec about {SHARE[k]:.0%})")
    for p in problems:
        print("PROBLEM", p)
    print("ok" if not problems else f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
