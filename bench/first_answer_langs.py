#!/usr/bin/env python3
"""First answer on a fresh tree of each language: how soon a query answers once a first
build of a 2,000-file tree starts, per language (target: 30 s).

    python bench/first_answer_langs.py --tree go=DIR --tree java=DIR ... [--files 2000]
                                       [--work DIR] [--question TEXT]

For each language: a fresh tree of --files files of it (copied from DIR, its files cycled
under new names when DIR has fewer), then `index.py --source TREE` is started and
`query.py` is asked every POLL seconds from inside the tree until it prints a result with
exit status 0; the build is then stopped (the rest of it is not what this measures). Prints
a markdown row per language: files, seconds to the first answer, and the answer's first line.
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from codebase_rag.languages import LANGUAGES
from codebase_rag.walk import Ignore, walk

ROOT = Path(__file__).resolve().parents[1]
POLL = 1.0
LIMIT = 300.0


def make_tree(lang, source, into, n):
    exts = next(row for row in LANGUAGES if row.name == lang).extensions
    files = [p for rel, p, _ in walk(source, Ignore(source)) if rel.endswith(exts)]
    into.mkdir(parents=True)
    for i in range(n):
        src = Path(files[i % len(files)])
        dst = into / f"d{i // 100:02d}" / f"{i:04d}_{src.name}"
        dst.parent.mkdir(exist_ok=True)
        shutil.copyfile(src, dst)
    return n


def first_answer(tree, question, env):
    build = subprocess.Popen([sys.executable, str(ROOT / "index.py"), "--source", str(tree)],
                             cwd=tree, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    started = time.monotonic()
    try:
        while time.monotonic() - started < LIMIT:
            out = subprocess.run([sys.executable, str(ROOT / "query.py"), "-k", "1", "--lines",
                                  "0", question], cwd=tree, env=env, capture_output=True,
                                 text=True)
            first = next((x for x in out.stdout.splitlines() if x.startswith("#1 ")), None)
            if out.returncode == 0 and first:
                return time.monotonic() - started, first
            time.sleep(POLL)
        return None, "no answer"
    finally:
        os.killpg(build.pid, signal.SIGTERM)
        build.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", action="append", required=True, metavar="LANG=DIR")
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--work", help="where the trees go (default: a temporary folder)")
    ap.add_argument("--question", default="where is the configuration parsed and validated")
    a = ap.parse_args()
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    work = Path(a.work or tempfile.mkdtemp(prefix="first-answer-"))
    print("| language | files | first answer | the answer |\n| --- | --- | --- | --- |")
    for spec in a.tree:
        lang, _, source = spec.partition("=")
        tree = work / lang
        if tree.exists():
            shutil.rmtree(tree)
        n = make_tree(lang, source, tree, a.files)
        seconds, line = first_answer(tree, a.question, env)
        took = f"{seconds:.1f} s" if seconds is not None else "none"
        print(f"| {lang} | {n:,} | {took} | `{line[:90]}` |", flush=True)
        shutil.rmtree(tree, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
