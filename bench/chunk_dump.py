#!/usr/bin/env python3
"""Print the TypeScript/JavaScript chunker's chunks of a tree, in `index.py --dry-run --json`
form (one JSON object a line: file, start_line, end_line, class, member, kind), for the kit's
check:

    python bench/chunk_dump.py SRC [--ext .ts,.tsx] > chunks.jsonl
    python /work/shared/eval/ts/check_ts_chunks.py SRC chunks.jsonl

    python bench/chunk_dump.py SRC --time [--csharp CS_SRC] [--repeat 5]

--time prints files/s instead (median of --repeat passes over texts read beforehand), and with
--csharp the C# chunker's files/s on CS_SRC in the same run. Files are read as the kit reads
them (UTF-8, BOM dropped, CRLF -> LF); node_modules, dist, build, out, coverage, .next and
*.min.js are skipped. A file the chunker refuses (ChunkerLimit) is one line on stderr.
"""
import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from codebase_rag.chunkers import ChunkerLimit, csharp, typescript

SKIP_DIRS = {".git", "node_modules", "dist", "build", "out", "coverage", ".next"}


def read_text(path):
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("cp1252", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def sources(root, exts):
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            if name.endswith(exts) and not name.endswith(".min.js"):
                path = os.path.join(dirpath, name)
                if os.path.isfile(path) and not os.path.islink(path):
                    yield os.path.relpath(path, root).replace(os.sep, "/"), path


def ext_of(name):
    return os.path.splitext(name)[1].lower()


def dump(root, exts, out=sys.stdout):
    for rel, path in sources(root, exts):
        try:
            chunks = typescript.chunk(read_text(path), ext_of(rel))
        except ChunkerLimit as e:
            print(f"skipping {rel}: {e}", file=sys.stderr)
            continue
        for c in chunks:
            out.write(json.dumps({"file": rel, "start_line": c.start_line, "end_line": c.end_line,
                                  "class": c.cls, "member": c.member, "kind": c.kind}) + "\n")


def files_per_second(texts, chunk, repeat):
    """Median files/s over `repeat` passes of chunk() over every text."""
    rates = []
    for _ in range(repeat):
        t = time.perf_counter()
        for text, ext in texts:
            try:
                chunk(text, ext)
            except ChunkerLimit:
                pass
        rates.append(len(texts) / (time.perf_counter() - t))
    return statistics.median(rates)


def timing(root, exts, cs_root, repeat):
    ts_texts = [(read_text(p), ext_of(r)) for r, p in sources(root, exts)]
    typescript.chunk("", ".ts"), typescript.chunk("", ".tsx"), typescript.chunk("", ".js")
    rows = [("typescript", root, ts_texts, typescript.chunk)]
    if cs_root:
        cs_texts = [(read_text(p), ".cs") for _, p in sources(cs_root, (".cs",))]
        rows.append(("csharp", cs_root, cs_texts, lambda text, ext: csharp.chunk(text)))
    for name, where, texts, chunk in rows:
        mb = sum(len(t) for t, _ in texts) / 1e6
        rate = files_per_second(texts, chunk, repeat)
        print(f"{name:10s} {where}: {len(texts):,} files, {mb:.1f} M chars: "
              f"{rate:,.0f} files/s (median of {repeat})")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("src")
    p.add_argument("--ext", default=",".join(typescript.GRAMMAR),
                   help="comma-separated extensions (default: all TS/JS ones)")
    p.add_argument("--time", action="store_true", help="print files/s instead of chunks")
    p.add_argument("--csharp", metavar="CS_SRC", help="with --time: also time the C# chunker")
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args()
    exts = tuple(e if e.startswith(".") else "." + e for e in a.ext.split(","))
    if a.time:
        timing(a.src, exts, a.csharp, a.repeat)
    else:
        dump(a.src, exts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
