#!/usr/bin/env python3
"""Fuzz the Python chunker: random token soup, deep nesting and mutated real Python,
seeded and repeatable.

    python bench/fuzz_python.py --source REPO [--cases 20000] [--seed 1]

Each case must chunk without an exception (a ChunkerLimit for nesting beyond the stated
limit is the one allowed, since the indexer reports it), within --slow seconds, and give
sane chunks by the one chunk contract (codebase_rag/chunkers/contract.py): lines in order
and inside the file, a known kind, a name that is an identifier and never a keyword, doc
lines inside the chunk, chunks in file order.
Prints a summary line and the first failures; exit 1 if any case failed.
"""
import argparse
import random
import sys
import time
from pathlib import Path

from codebase_rag.chunkers import ChunkerLimit, Chunks, contract, python
from codebase_rag.walk import read_source

FRAGMENTS = [
    "def", "class", "async", "await", "@", "lambda", "if", "elif", "else", "try", "except",
    "finally", "with", "for", "while", "match", "case", "return", "yield", "import", "from",
    "pass", "...", "f", "self", "x", "(", ")", "[", "]", "{", "}", ":", ",", "=", "->", "*",
    "**", ".", ";", "\\\n", '"', "'", '"""', "'''", 'f"', "rb'", "#", "\n", " ", "    ", "\t",
    "def f():\n", "class C:\n", "    def m(self):\n", "@dec\n", '"""doc"""\n',
]


def problems(text, result):
    """What is wrong with the chunks of text (the one chunk contract): [] when all is sane."""
    bad = contract.problems(text, result, "python")
    return bad + ([] if isinstance(result, Chunks) else [f"not a Chunks: {result!r}"])


def soup(rng):
    return "".join(rng.choice(FRAGMENTS) if rng.random() < 0.85 else chr(rng.randint(0, 0x2FF))
                   for _ in range(rng.randint(0, 80)))


def deep(rng):
    """Nesting: classes or ifs by indentation, or brackets, strings and decorators."""
    depth = rng.choice([10, 100, 400])
    shape = rng.randrange(4)
    if shape == 0:
        head = rng.choice(["class C{}:\n", "if x:\n", "def f{}():\n", "try:\n"])
        return "".join(" " * i + head.format(i) for i in range(depth)) + \
            " " * depth + rng.choice(["def m(self): pass\n", "pass\n", "x = (\n"])
    if shape == 1:
        return "x = " + rng.choice(["(", "[", "{", "f'{", "lambda: "]) * (depth * 10) + \
            "\ndef after(): pass\n"
    if shape == 2:
        return "@d\n" * depth + "def f(): pass\n"
    return "def f(a=" + "(" * depth + "):\n    pass\n" * rng.randint(1, 3)


def mutate(rng, text):
    """A slice of real Python, cut at random points and damaged one to five times."""
    start = rng.randrange(len(text)) if text else 0
    start = text.rfind("\n", 0, start) + 1 if rng.random() < 0.7 else start   # at a line
    text = text[start:start + rng.randint(200, 6000)]
    for _ in range(rng.randint(1, 5)):
        if not text:
            break
        i, j = sorted(rng.randrange(len(text) + 1) for _ in range(2))
        op = rng.randrange(6)
        if op == 0:
            text = text[:i] + text[j:]                              # delete a span
        elif op == 1:
            text = text[:j] + text[i:j] + text[j:]                  # repeat a span
        elif op == 2:
            text = text[:i] + rng.choice(FRAGMENTS) + text[i:]      # insert a token
        elif op == 3:
            text = text[:i] + chr(rng.randint(0, 0x2FF)) + text[i + 1:]
        elif op == 4:                                               # shift indentation
            text = text[:i] + text[i:j].replace("\n", "\n" + " " * rng.randint(1, 4)) + text[j:]
        else:
            text = text[:i]                                         # cut off
    return text


def run(sources, cases, seed, slow=2.0, report=5):
    rng = random.Random(seed)
    failures, slowest, started = [], 0.0, time.perf_counter()
    kinds = {"soup": 0, "deep": 0, "real": 0}
    for case in range(cases):
        kind = "real" if sources and rng.random() < 0.7 else ("deep" if rng.random() < 0.05
                                                             else "soup")
        kinds[kind] += 1
        text = mutate(rng, rng.choice(sources)) if kind == "real" else \
            deep(rng) if kind == "deep" else soup(rng)
        ext = ".pyi" if rng.random() < 0.1 else ".py"
        t = time.perf_counter()
        try:
            bad = problems(text, python.chunk(text, ext))
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
    print(f"fuzz: seed {seed}, {cases:,} cases ({kinds['real']:,} mutated real Python, "
          f"{kinds['soup']:,} token soup, {kinds['deep']:,} deep nesting) from "
          f"{len(sources):,} files: {len(failures)} failures; slowest case {slowest:.3f}s; "
          f"{time.perf_counter() - started:.0f}s in all")
    for case, kind, problem, text in failures[:report]:
        print(f"  case {case} ({kind}): {problem}\n    {text!r}")
    return failures


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--source", action="append", default=[], metavar="DIR",
                   help="a tree of real Python to mutate (repeatable)")
    p.add_argument("--cases", type=int, default=20_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--slow", type=float, default=2.0, help="seconds that count as a hang")
    args = p.parse_args()
    sources = []
    for root in args.source:
        for path in sorted(Path(root).rglob("*.py")):
            if path.is_file() and not path.is_symlink():
                text = read_source(path)
                if text:
                    sources.append(text)
    return 1 if run(sources, args.cases, args.seed, args.slow) else 0


if __name__ == "__main__":
    sys.exit(main())
