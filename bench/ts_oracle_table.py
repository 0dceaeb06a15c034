#!/usr/bin/env python3
"""The TS/JS chunker against the TypeScript compiler oracle, per repository and extension:

    python bench/ts_oracle_table.py SRC [SRC ...] > table.md

For each tree: the chunks of bench/chunk_dump.py, then the kit's check (tests/oracle/ts/
check_ts_chunks.py, needs node and TS_ORACLE_TYPESCRIPT) on a view of the tree holding only
the files of one extension (symlinks under a temporary folder). Prints a markdown table of
exact / bogus / class chain per extension with targets.
"""
import io
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KIT = ROOT / "tests" / "oracle" / "ts"


def load(name, path):
    """A script beside this one, or of the oracle kit, by its path (no sys.path edit)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


chunk_dump = load("chunk_dump", ROOT / "bench" / "chunk_dump.py")
tsoracle = load("tsoracle", KIT / "tsoracle.py")

SKIP = {".git", "node_modules", ".codebase-rag"}       # what the check itself skips


def files_by_ext(src):
    found = defaultdict(list)
    for root, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if d not in SKIP]
        for name in files:
            if tsoracle.is_source(name):
                found[os.path.splitext(name)[1].lower()].append(
                    os.path.relpath(os.path.join(root, name), src))
    return found


def score(src, ext, rels, chunks, tmp):
    view = os.path.join(tmp, ext.lstrip("."))
    for rel in rels:
        os.makedirs(os.path.dirname(os.path.join(view, rel)), exist_ok=True)
        os.symlink(os.path.abspath(os.path.join(src, rel)), os.path.join(view, rel))
    listed = os.path.join(tmp, ext.lstrip(".") + ".jsonl")
    with open(listed, "w") as f:
        f.writelines(c for c in chunks if json.loads(c)["file"].lower().endswith(ext))
    out = subprocess.run([sys.executable, str(KIT / "check_ts_chunks.py"), view, listed],
                         capture_output=True, text=True, check=True).stdout
    return out.strip().splitlines()[-1]


def main():
    print("| tree | ext | files | result |\n| --- | --- | --- | --- |")
    for src in sys.argv[1:]:
        buf = io.StringIO()
        chunk_dump.dump(src, tuple(chunk_dump.typescript.GRAMMAR), buf)
        chunks = buf.getvalue().splitlines(keepends=True)
        with tempfile.TemporaryDirectory() as tmp:
            for ext, rels in sorted(files_by_ext(src).items()):
                print(f"| {src} | {ext} | {len(rels):,} | {score(src, ext, rels, chunks, tmp)} |",
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
