#!/usr/bin/env python3
"""Fuzz the C# chunker: random token soup and mutated real C#, seeded and repeatable.

    python bench/fuzz_chunker.py --source REPO [--cases 100000] [--seed 1]

Each case must chunk without an exception (a ChunkerLimit for nesting beyond the stated
limit is the one allowed, since the indexer reports it), within --slow seconds, and give
sane chunks: lines in order and inside the file, a known kind, never a keyword for a name.
Prints a summary line and the first failures; exit 1 if any case failed.
"""
import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from codebase_rag.chunkers import ChunkerLimit, csharp  # noqa: E402
from codebase_rag.walk import read_source  # noqa: E402

KINDS = {"method", "constructor", "destructor", "operator", "conversion", "property",
         "indexer", "event", "class", "struct", "record", "record struct", "interface",
         "enum", "delegate", "top-level", "file"}
FRAGMENTS = [
    "class", "struct", "record", "interface", "enum", "namespace", "delegate", "event",
    "operator", "this", "where", "new", "void", "int", "M", "X", "get", "set", "public",
    "static", "partial", "using", "if", "for", "return", "(", ")", "{", "}", "[", "]", ";",
    "=", "=>", "<", ">", ",", ":", ".", "~", "\\", "{{", "}}", '"', "'", '@"', '$"', '$@"',
    '"""', '$$"""', "//", "/*", "*/", "///", "#if A\n", "#elif B\n", "#else\n", "#endif\n",
    "\n", " ", "\t",
]


def problems(text, chunks):
    n_lines = text.count("\n") + 1
    bad = []
    for c in chunks:
        if not 1 <= c.start_line <= c.sig_line <= c.end_line <= n_lines:
            bad.append(f"lines out of order or outside 1..{n_lines}: {c}")
        if c.kind not in KINDS:
            bad.append(f"unknown kind: {c.kind}")
        if c.member in csharp.KEYWORDS:
            bad.append(f"named after a keyword: {c.member}")
    return bad


def soup(rng):
    return "".join(rng.choice(FRAGMENTS) if rng.random() < 0.85 else chr(rng.randint(0, 0x2FF))
                   for _ in range(rng.randint(0, 80)))


def deep(rng):
    depth = rng.choice([10, 300, 3000])
    opener = rng.choice(["class C {", "namespace N {", '$"{', "void M() {", "#if A\n{", "(", "{"])
    return opener * depth + rng.choice(["", "x", "void M() { }"]) + rng.choice(["}", '}"', ")"]) * depth


def mutate(rng, text):
    """A slice of real C#, cut at random points and damaged one to five times."""
    start = rng.randrange(len(text)) if text else 0
    text = text[start:start + rng.randint(200, 6000)]
    for _ in range(rng.randint(1, 5)):
        if not text:
            break
        i, j = sorted(rng.randrange(len(text) + 1) for _ in range(2))
        op = rng.randrange(5)
        if op == 0:
            text = text[:i] + text[j:]                              # delete a span
        elif op == 1:
            text = text[:j] + text[i:j] + text[j:]                  # repeat a span
        elif op == 2:
            text = text[:i] + rng.choice(FRAGMENTS) + text[i:]      # insert a token
        elif op == 3:
            text = text[:i] + chr(rng.randint(0, 0x2FF)) + text[i + 1:]
        else:
            text = text[:i]                                         # cut off
    return text


def run(sources, cases, seed, slow=2.0, report=5):
    rng = random.Random(seed)
    failures, slowest, started = [], 0.0, time.perf_counter()
    kinds = {"soup": 0, "deep": 0, "real": 0}
    for case in range(cases):
        kind = "real" if sources and rng.random() < 0.6 else ("deep" if rng.random() < 0.02
                                                             else "soup")
        kinds[kind] += 1
        text = mutate(rng, rng.choice(sources)) if kind == "real" else \
            deep(rng) if kind == "deep" else soup(rng)
        t = time.perf_counter()
        try:
            bad = problems(text, csharp.chunk(text))
        except ChunkerLimit:
            bad = []
        except Exception as e:                 # noqa: BLE001 - every exception is a finding
            bad = [f"{type(e).__name__}: {e}"]
        took = time.perf_counter() - t
        slowest = max(slowest, took)
        if took > slow:
            bad.append(f"took {took:.1f}s")
        if bad:
            failures.append((case, kind, bad[0], text[:200]))
    print(f"fuzz: seed {seed}, {cases:,} cases ({kinds['real']:,} mutated real C#, "
          f"{kinds['soup']:,} token soup, {kinds['deep']:,} deep nesting) from "
          f"{len(sources):,} files: {len(failures)} failures; slowest case {slowest:.3f}s; "
          f"{time.perf_counter() - started:.0f}s in all")
    for case, kind, problem, text in failures[:report]:
        print(f"  case {case} ({kind}): {problem}\n    {text!r}")
    return failures


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--source", action="append", default=[], metavar="DIR",
                   help="a tree of real C# to mutate (repeatable)")
    p.add_argument("--cases", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--slow", type=float, default=2.0, help="seconds that count as a hang")
    args = p.parse_args()
    sources = []
    for root in args.source:
        for path in sorted(Path(root).rglob("*.cs")):
            text = read_source(path)
            if text:
                sources.append(text)
    return 1 if run(sources, args.cases, args.seed, args.slow) else 0


if __name__ == "__main__":
    sys.exit(main())
