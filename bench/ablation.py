#!/usr/bin/env python3
"""Retrieval quality, lever by lever, on the eval kit in ../shared/eval/.

Runs the kit's harness (run_eval.py) on a snapshot of this checkout once per variant and
prints a Markdown table (R@1/5/10, MRR@10, tokens@5, index time) of every variant
reported in --work so far; bench/RESULTS-quality.md quotes it. Variants that differ only
at query time reuse one index, and an index already in --work is reused.

    python bench/ablation.py --corpus CORPORA/ppy__osu [--subset 1500] [--only NAME ...]
        [--work DIR] [--out FILE]

The corpus comes from the kit's make_corpus.py (see ../shared/eval/README.md); it is
fetched public code, so keep it outside this repository.
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
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
    "header without path": ({"CODEBASE_RAG_HEADER": "owner,name,doc"}, {}, "no file path in the header"),
    "header without owner": ({"CODEBASE_RAG_HEADER": "path,name,doc"}, {}, "no namespace.class in the header"),
    "header without name": ({"CODEBASE_RAG_HEADER": "path,owner,doc"}, {},
                            "no kind, member name and its split words in the header"),
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
    db = work / f"db-{hashlib.sha1(key.encode()).hexdigest()[:8]}"
    cmd = [sys.executable, str(KIT / "run_eval.py"), "--project", str(project),
           "--python", args.python, "--data", str(args.data), "--corpus", str(args.corpus),
           "--db", str(db), "--keep-db", "--out", str(work / f"{name}.json")]
    if args.subset and (work / "subset").is_dir():        # made by the first variant
        cmd[cmd.index("--corpus") + 1] = str(work / "subset")
    elif args.subset:
        cmd += ["--subset", str(args.subset), "--subset-dir", str(work / "subset")]
    if key in built or (db / "index.sqlite").is_file():
        cmd.append("--skip-index")
    out = work / f"{name}.json"
    earlier = json.loads(out.read_text()).get("index_seconds") if out.is_file() else None
    env = {**os.environ, **index_env, **query_env}
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    print(proc.stdout.strip() or proc.stderr.strip()[-2000:], flush=True)
    built.add(key)
    report = json.loads(out.read_text())
    if report.get("index_seconds") is None and earlier:     # keep the time of the build
        report["index_seconds"] = earlier
        out.write_text(json.dumps(report, indent=1))


def table_rows(work):
    """(name, metrics, index seconds) for every variant with a report in work, in VARIANTS
    order; a variant that reused an index gets the time of the run that built it."""
    reports = {n: json.loads((work / f"{n}.json").read_text())
               for n in VARIANTS if (work / f"{n}.json").is_file()}
    build_time = {}
    for name, r in reports.items():
        if r.get("index_seconds"):
            build_time[json.dumps(VARIANTS[name][0], sort_keys=True)] = r["index_seconds"]
    return [(n, r["metrics"], build_time.get(json.dumps(VARIANTS[n][0], sort_keys=True)))
            for n, r in reports.items()]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--corpus", required=True, type=Path, help="the stripped corpus folder")
    p.add_argument("--data", type=Path, default=KIT / "data" / "dev-ppy__osu.jsonl")
    p.add_argument("--subset", type=int, default=3000,
                   help="index about this many chunks (0: the full corpus)")
    p.add_argument("--only", nargs="+", choices=list(VARIANTS), help="run just these")
    p.add_argument("--work", type=Path, default=Path("/tmp/codebase-rag-ablation"))
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--out", type=Path, help="also write the table here")
    args = p.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    project = snapshot(args.work / "project")
    built = set()
    for name in args.only or VARIANTS:
        run_variant(name, args, args.work, project, built)
    scope = f"subset of ~{args.subset} chunks" if args.subset else "full corpus"
    lines = [f"# Retrieval quality: ablation ({scope}, {args.data.name})", "",
             "Each row turns one lever off (or changes it) against `default`. "
             f"Rerun: `python bench/ablation.py --corpus CORPUS --subset {args.subset}`.", "",
             "| variant | what changes | R@1 | R@5 | R@10 | MRR@10 | tokens@5 | index s |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, m, seconds in table_rows(args.work):
        idx = "" if seconds is None else f"{seconds:.0f}"
        lines.append(f"| {name} | {VARIANTS[name][2]} | {m['R@1']:.3f} | {m['R@5']:.3f} | "
                     f"{m['R@10']:.3f} | {m['MRR@10']:.3f} | {m['tokens@5']:.0f} | {idx} |")
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
