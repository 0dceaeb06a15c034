#!/usr/bin/env python3
"""Retrieval quality, lever by lever, on both dev sets of the eval kit (../shared/eval/):
the natural-language questions (dev-nl-osu, against the original osu tree) and the doc
summaries (dev-ppy__osu, against the stripped corpus), per kind for the first.

    python bench/ablation.py --nl-corpus OSU_TREE --sum-corpus CORPORA/ppy__osu \
        [--seed-nl DB] [--seed-sum DB] [--only NAME ...] [--work DIR] [--out FILE]

Every lever is a setting (codebase_rag/config.py), switched through the environment.
Variants that differ only at query time share one index per set; each index is built once
with `index.py --rebuild`, from a copy of --seed-* when given, so that texts embedded
before come from its embedding cache (index seconds then count only what was embedded).
Runs on a snapshot of this checkout, so edits made meanwhile do not leak in. The corpora
are fetched public code: keep them outside this repository.
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import speed  # bench/speed.py: the snapshot of this checkout the runs use

ROOT = Path(__file__).resolve().parents[1]
KIT = ROOT.parent / "shared" / "eval"
SETS = {"nl": "dev-nl-osu.jsonl", "sum": "dev-ppy__osu.jsonl"}
KINDS = ("agent", "behaviour", "grep-hard", "locate")

# name: (index-time environment, query-time environment, what it shows)
BEFORE = {"CODEBASE_RAG_TEST_WEIGHT": "1", "CODEBASE_RAG_SHORT_WEIGHT": "1",
          "CODEBASE_RAG_LINES": "20"}
# Levers that lost their ablation (vector weight, class share, a per-file cap, PRF, shorter
# later headers, first window only) were measured in bench/RESULTS-quality.md and deleted.
VARIANTS = {
    "default": ({}, {}, "the defaults"),
    "ranking before the NL work": ({}, BEFORE, "no test or short-member priors, 20 lines"),
    "vector only": ({}, {"CODEBASE_RAG_MODE": "vector"}, "no keyword ranking"),
    "lexical only": ({}, {"CODEBASE_RAG_MODE": "lexical"}, "BM25 alone"),
    "no test prior": ({}, {"CODEBASE_RAG_TEST_WEIGHT": "1"}, "test code counts as much"),
    "test prior 0.3": ({}, {"CODEBASE_RAG_TEST_WEIGHT": "0.3"}, "test code counts 0.3"),
    "no short prior": ({}, {"CODEBASE_RAG_SHORT_WEIGHT": "1"}, "short members count as much"),
    "short prior 0.5": ({}, {"CODEBASE_RAG_SHORT_WEIGHT": "0.5"}, "short members count 0.5"),
    "vector share 0.45": ({}, {"CODEBASE_RAG_VECTOR_SHARE": "0.45"}, "fusion leans on keywords"),
    "vector share 0.65": ({}, {"CODEBASE_RAG_VECTOR_SHARE": "0.65"}, "fusion leans on meaning"),
    "20 lines": ({}, {"CODEBASE_RAG_LINES": "20"}, "results carry 20 lines (recall unchanged)"),
}


def env_key(env):
    return hashlib.sha1(json.dumps(env, sort_keys=True).encode()).hexdigest()[:8]


def build(args, project, which, index_env):
    """The index of one set for one index-time environment; returns its folder."""
    db = args.work / f"db-{which}-{env_key(index_env)}"
    done = db.with_suffix(".json")
    if done.is_file():
        return db
    shutil.rmtree(db, ignore_errors=True)
    seed = getattr(args, f"seed_{which}")
    if seed:
        shutil.copytree(seed, db)
    corpus = args.nl_corpus if which == "nl" else args.sum_corpus
    started = time.time()
    proc = subprocess.run([args.python, str(project / "index.py"), "--rebuild", "--source",
                           str(corpus), "--db", str(db), "-q"],
                          env={**os.environ, **index_env}, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"building {db} failed: {proc.stderr[-2000:]}")
    done.write_text(json.dumps({"seconds": time.time() - started, "summary": proc.stdout.strip(),
                                "env": index_env}))
    print(f"built {db.name} in {time.time() - started:.0f} s: {proc.stdout.strip()}", flush=True)
    return db


def evaluate(args, project, which, name):
    index_env, query_env, _ = VARIANTS[name]
    db = build(args, project, which, index_env)
    out = args.work / f"{which}-{name}.json"
    corpus = args.nl_corpus if which == "nl" else args.sum_corpus
    proc = subprocess.run([args.python, str(KIT / "run_eval.py"), "--project", str(project),
                           "--python", args.python, "--data", str(KIT / "data" / SETS[which]),
                           "--corpus", str(corpus), "--db", str(db), "--keep-db",
                           "--skip-index", "--out", str(out)],
                          env={**os.environ, **index_env, **query_env}, capture_output=True,
                          text=True)
    print(proc.stdout.strip() or proc.stderr.strip()[-2000:], flush=True)


def row(args, name):
    cells = [name, VARIANTS[name][2]]
    for which in SETS:
        path = args.work / f"{which}-{name}.json"
        if not path.is_file():
            cells += ["-"] * (7 if which == "nl" else 3)
            continue
        report = json.loads(path.read_text())
        m = report["metrics"]
        cells += [f"{m['R@5']:.3f}", f"{m['MRR@10']:.3f}", f"{m['tokens@5']:.0f}"]
        if which == "nl":
            by_kind = report.get("metrics_by_kind", {})
            cells += [f"{by_kind.get(k, {}).get('R@5', float('nan')):.3f}" for k in KINDS]
    built = [json.loads((args.work / f"db-{w}-{env_key(VARIANTS[name][0])}.json").read_text())
             ["seconds"] for w in SETS
             if (args.work / f"db-{w}-{env_key(VARIANTS[name][0])}.json").is_file()]
    cells.append(" + ".join(f"{s:.0f}" for s in built) if VARIANTS[name][0] else "(default)")
    return "| " + " | ".join(cells) + " |"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nl-corpus", required=True, type=Path, help="a work tree of ppy/osu")
    p.add_argument("--sum-corpus", required=True, type=Path, help="the kit's stripped corpus")
    p.add_argument("--seed-nl", type=Path, help="an index of the NL corpus to copy first")
    p.add_argument("--seed-sum", type=Path, help="an index of the summary corpus to copy first")
    p.add_argument("--only", nargs="+", choices=list(VARIANTS), help="run just these")
    p.add_argument("--sets", nargs="+", choices=list(SETS), default=list(SETS))
    p.add_argument("--work", type=Path, default=Path("/tmp/codebase-rag-ablation"))
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--out", type=Path, help="also write the table here")
    args = p.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    project = speed.snapshot(args.work / "project")
    for name in args.only or VARIANTS:
        for which in args.sets:
            evaluate(args, project, which, name)
    lines = ["| variant | what changes | NL R@5 | NL MRR@10 | NL tokens@5 | "
             + " | ".join(f"NL {k} R@5" for k in KINDS)
             + " | summary R@5 | summary MRR@10 | summary tokens@5 | index s (NL + summary) |",
             "|" + " --- |" * 13]
    lines += [row(args, name) for name in VARIANTS
              if any((args.work / f"{w}-{name}.json").is_file() for w in SETS)]
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
