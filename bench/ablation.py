#!/usr/bin/env python3
"""Retrieval quality, lever by lever, on the eval kit in ../shared/eval/.

Runs the kit's harness (run_eval.py) on a snapshot of this checkout once per variant and
writes a Markdown table (R@1/5/10, MRR@10, tokens@5, index time) to
bench/RESULTS-quality.md. Variants that differ only at query time reuse one index, and
the embedding cache makes re-indexing cheap when only the lexical side changes.

    python bench/ablation.py --corpus CORPORA/ppy__osu [--subset 3000] [--only NAME ...]

The corpus comes from the kit's make_corpus.py (see ../shared/eval/README.md); it is
fetched public code, so keep it outside this repository.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KIT = ROOT.parent / "shared" / "eval"

# name: (index-time environment, query-time environment, what it shows)
VARIANTS = {
    "default": ({}, {}, "everything on: header, all windows, hybrid fusion"),
    "vector only": ({}, {"CODEBASE_RAG_MODE": "vector"}, "no lexical ranking"),
    "lexical only": ({}, {"CODEBASE_RAG_MODE": "lexical"}, "BM25 alone"),
    "no name weight": ({}, {"CODEBASE_RAG_NAME_WEIGHT": "1"}, "member names weigh as much as code in BM25"),
    "full text": ({}, {"CODEBASE_RAG_LINES": "-1"}, "results carry their whole chunk text, not 20 lines"),
    "no header": ({"CODEBASE_RAG_HEADER": "0"}, {}, "embed raw code, no context header"),
    "first window": ({"CODEBASE_RAG_WINDOWS": "first"}, {}, "long members truncated to one window"),
}


def snapshot(dest):
    """A copy of the scripts as they are now, so that edits made during a run don't leak in."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("index.py", "query.py"):
        shutil.copy(ROOT / name, dest / name)
    return dest


def run_variant(name, args, work, project, built):
    index_env, query_env, _ = VARIANTS[name]
    key = json.dumps(index_env, sort_keys=True)
    db = work / f"db-{abs(hash(key)) % 10**8}"
    cmd = [sys.executable, str(KIT / "run_eval.py"), "--project", str(project),
           "--python", args.python, "--data", str(args.data), "--corpus", str(args.corpus),
           "--db", str(db), "--keep-db", "--out", str(work / f"{name}.json")]
    if args.subset and (work / "subset").is_dir():        # made by the first variant
        cmd[cmd.index("--corpus") + 1] = str(work / "subset")
    elif args.subset:
        cmd += ["--subset", str(args.subset), "--subset-dir", str(work / "subset")]
    if key in built:
        cmd.append("--skip-index")
    env = {**os.environ, **index_env, **query_env}
    started = time.time()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    print(proc.stdout.strip() or proc.stderr.strip()[-2000:], flush=True)
    report = json.loads((work / f"{name}.json").read_text())
    if key not in built:
        built[key] = report.get("index_seconds")
    return dict(report["metrics"], index_seconds=built[key], wall=time.time() - started)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--corpus", required=True, type=Path, help="the stripped corpus folder")
    p.add_argument("--data", type=Path, default=KIT / "data" / "dev-ppy__osu.jsonl")
    p.add_argument("--subset", type=int, default=3000,
                   help="index about this many chunks (0: the full corpus)")
    p.add_argument("--only", nargs="+", choices=list(VARIANTS), help="run just these")
    p.add_argument("--work", type=Path, default=Path("/tmp/codebase-rag-ablation"))
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "RESULTS-quality.md")
    args = p.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    project = snapshot(args.work / "project")
    built, rows = {}, []
    for name in args.only or VARIANTS:
        m = run_variant(name, args, args.work, project, built)
        rows.append((name, m))
    scope = f"subset of ~{args.subset} chunks" if args.subset else "full corpus"
    lines = [f"# Retrieval quality: ablation ({scope}, {args.data.name})", "",
             "Each row turns one lever off (or changes it) against `default`. "
             f"Rerun: `python bench/ablation.py --corpus CORPUS --subset {args.subset}`.", "",
             "| variant | what changes | R@1 | R@5 | R@10 | MRR@10 | tokens@5 | index s |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, m in rows:
        idx = "" if m["index_seconds"] is None else f"{m['index_seconds']:.0f}"
        lines.append(f"| {name} | {VARIANTS[name][2]} | {m['R@1']:.3f} | {m['R@5']:.3f} | "
                     f"{m['R@10']:.3f} | {m['MRR@10']:.3f} | {m['tokens@5']:.0f} | {idx} |")
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
