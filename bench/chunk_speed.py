#!/usr/bin/env python3
"""Chunking throughput per language in one run: files/s of each language's chunker over a
tree of it, against C#'s in the same run.

    python bench/chunk_speed.py --tree csharp=DIR --tree go=DIR ... [--rounds 3]
                                [--files 1000]

The files are those a build indexes (the tool's own walk), read beforehand, the first
--files of each tree; each round chunks them all as a build does (languages.chunk_source;
a file the chunker refuses counts as chunked). Prints a markdown table: files, MB, the
median files/s by the wall clock and per CPU second (steadier on a shared machine), and
the CPU-second rate as a share of C#'s, and the same in MB (files differ in size by
language).
"""
import argparse
import statistics
import sys
import time

from codebase_rag.chunkers import ChunkerLimit
from codebase_rag.languages import LANGUAGES, chunk_source
from codebase_rag.walk import Ignore, read_source, walk


def texts_of(lang, source, limit):
    exts = next(row for row in LANGUAGES if row.name == lang).extensions
    out = []
    for rel, path, _ in walk(source, Ignore(source)):
        if rel.endswith(exts):
            text = read_source(path)
            if text is not None:
                out.append((rel, text))
        if len(out) >= limit:
            break
    return out


def rate(texts, rounds):
    wall, cpu = [], []
    for _ in range(rounds):
        t, c = time.perf_counter(), time.process_time()
        for rel, text in texts:
            try:
                chunk_source(rel, text)
            except ChunkerLimit:
                pass
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return len(texts) / statistics.median(wall), len(texts) / statistics.median(cpu)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", action="append", required=True, metavar="LANG=DIR")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--files", type=int, default=1000)
    a = ap.parse_args()
    rows = []
    for spec in a.tree:
        lang, _, source = spec.partition("=")
        texts = texts_of(lang, source, a.files)
        size = sum(len(t.encode("utf-8", "surrogatepass")) for _, t in texts)
        rows.append((lang, source, len(texts), size, *rate(texts, a.rounds)))
    base = next((r[5] for r in rows if r[0] == "csharp"), None)
    print("| language | tree | files | MB | files/s (wall) | files/s per CPU second | vs C# "
          "| MB per CPU second |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for lang, source, n, size, wall, cpu in rows:
        share = f"{cpu / base:.2f}x" if base else "-"
        print(f"| {lang} | {source.rstrip('/').rsplit('/', 1)[-1]} | {n:,} | {size / 1e6:.1f} | "
              f"{wall:,.0f} | {cpu:,.0f} | {share} | {cpu * size / n / 1e6:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
