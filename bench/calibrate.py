#!/usr/bin/env python3
"""What a distance means, and what an answer costs, measured on the eval kit's dev sets.

Needs, per dev set, an index, a report from the kit's run_eval.py (run with --keep-db) and
the corpus it was built from:

    python bench/calibrate.py --set summaries DB REPORT.json CORPORA/ppy__osu \
                              --set questions DB REPORT.json OSU_TREE

1. Distance scale: the cosine distance of the rank-1 result for the dev questions (split
   into hits and misses, per set and pooled) and for off-topic questions
   (bench/offtopic.txt), as percentiles, and what share of each a "confident" threshold
   keeps.
2. Token savings: for each dev question, the tokens of the default output (top 5, JSON and
   printed) against the tokens of reading the whole file that holds the answer.
Tokens are counted as the kit counts them: characters / 4.
"""
import argparse
import io
import json
import statistics
import subprocess
import sys
from pathlib import Path

from codebase_rag.config import LINES
from codebase_rag.render import print_results
from codebase_rag.search import Hit
from codebase_rag.store import IndexedChunk

ROOT = Path(__file__).resolve().parents[1]


def as_hits(results):
    """JSON results back as the Hits query.py printed them from."""
    return [Hit(IndexedChunk("", r["file"], r["language"], r["namespace"], r["class"],
                             r["member"], r["kind"], r["start_line"], r["end_line"],
                             r["signature"], r["text"]), r["distance"], r["confident"])
            for r in results]


def percentiles(values, points=(5, 25, 50, 75, 95)):
    values = sorted(values)
    if not values:
        return {p: float("nan") for p in points}
    return {p: values[min(len(values) - 1, int(p / 100 * len(values)))] for p in points}


def ask(db, questions_file):
    run = subprocess.run([sys.executable, str(ROOT / "query.py"), "--db", str(db), "--json",
                          "-k", "5", "--batch", str(questions_file)],
                         capture_output=True, text=True, check=True)
    return [json.loads(line) for line in run.stdout.splitlines()]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--set", nargs=4, action="append", required=True,
                   metavar=("NAME", "DB", "REPORT", "CORPUS"))
    p.add_argument("--offtopic", type=Path, default=ROOT / "bench" / "offtopic.txt")
    args = p.parse_args()

    rows, hits, misses, off = [], [], [], []
    savings = []
    for name, db, report, corpus in args.set:
        per_query = json.loads(Path(report).read_text())["per_query"]
        hit = [q["top"][0]["distance"] for q in per_query if q["top"] and q["top"][0]["hit"]]
        miss = [q["top"][0]["distance"] for q in per_query if q["top"] and not q["top"][0]["hit"]]
        away = [r[0]["distance"] for r in ask(db, args.offtopic) if r]
        rows += [(f"{name}, rank 1 is the answer", hit), (f"{name}, rank 1 is not", miss),
                 (f"off-topic against the {name} index", away)]
        hits, misses, off = hits + hit, misses + miss, off + away
        batch = Path(report).with_suffix(".questions.txt")
        batch.write_text("\n".join(q["query"] for q in per_query) + "\n")
        for q, results in zip(per_query, ask(db, batch)):
            whole = len((Path(corpus) / q["file"]).read_text(encoding="utf-8", errors="replace")) / 4
            buf = io.StringIO()
            print_results(as_hits(results), LINES, out=buf)
            savings.append((whole, len(json.dumps(results)) / 4, len(buf.getvalue()) / 4))
    rows += [("all dev questions, rank 1 is the answer", hits),
             ("all dev questions, rank 1 is not", misses), ("all off-topic", off)]
    out = ["## Distance of the rank-1 result (cosine, 0..2)", "",
           "| questions | n | p5 | p25 | median | p75 | p95 |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, values in rows:
        pc = percentiles(values)
        out.append(f"| {name} | {len(values)} | " + " | ".join(f"{pc[k]:.3f}" for k in pc) + " |")
    out += ["", "| confident if distance <= | right rank-1 answers kept | right rank-1 answers "
            "flagged | dev questions flagged | off-topic flagged | off-topic let through |",
            "| --- | --- | --- | --- | --- | --- |"]
    dev_top = hits + misses
    for t in (0.5, 0.55, 0.6, 0.62, 0.65, 0.7):
        out.append(f"| {t:.2f} | {sum(d <= t for d in hits) / len(hits):.0%} | "
                   f"{sum(d > t for d in hits)} | {sum(d > t for d in dev_top) / len(dev_top):.0%} | "
                   f"{sum(d > t for d in off)} of {len(off)} | {sum(d <= t for d in off)} |")
    files, as_json, printed = (list(x) for x in zip(*savings))
    out += ["", "## Tokens: the default answer (top 5) against reading the answer's whole file", "",
            "| what | median tokens | median ratio file / answer |", "| --- | --- | --- |",
            f"| whole file holding the answer | {statistics.median(files):.0f} | |",
            f"| printed output (`query.py \"...\"`) | {statistics.median(printed):.0f} | "
            f"{statistics.median([f / t for f, t in zip(files, printed)]):.1f}x |",
            f"| JSON output (`--json`, all fields) | {statistics.median(as_json):.0f} | "
            f"{statistics.median([f / t for f, t in zip(files, as_json)]):.1f}x |"]
    print("\n".join(out))


if __name__ == "__main__":
    main()
