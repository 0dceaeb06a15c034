#!/usr/bin/env python3
"""What a distance means, and what an answer costs, measured on the eval kit.

Needs an index and a report from the kit's run_eval.py (run with --keep-db), and the corpus:

    python bench/calibrate.py --db DB --report REPORT.json --corpus CORPORA/ppy__osu

1. Distance scale: the cosine distance of the rank-1 result for the dev questions (split
   into hits and misses) and for off-topic questions (bench/offtopic.txt), as percentiles,
   and what share of each a given "confident" threshold keeps.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def percentiles(values, points=(5, 25, 50, 75, 95)):
    values = sorted(values)
    if not values:
        return {p: float("nan") for p in points}
    return {p: values[min(len(values) - 1, int(p / 100 * len(values)))] for p in points}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--db", required=True)
    p.add_argument("--report", required=True, type=Path)
    p.add_argument("--corpus", required=True, type=Path)
    p.add_argument("--offtopic", type=Path, default=ROOT / "bench" / "offtopic.txt")
    args = p.parse_args()
    import query

    report = json.loads(args.report.read_text())
    per_query = report["per_query"]
    top1_hit = [q["top"][0]["distance"] for q in per_query if q["top"] and q["top"][0]["hit"]]
    top1_miss = [q["top"][0]["distance"] for q in per_query if q["top"] and not q["top"][0]["hit"]]
    run = subprocess.run([sys.executable, str(ROOT / "query.py"), "--db", args.db, "--json",
                          "-k", "5", "--batch", str(args.offtopic)],
                         capture_output=True, text=True, check=True)
    off = [json.loads(line)[0]["distance"] for line in run.stdout.splitlines()]

    out = ["## Distance of the rank-1 result (cosine, 0..2)", "",
           "| questions | n | p5 | p25 | median | p75 | p95 |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, values in (("dev, rank 1 is the answer", top1_hit),
                         ("dev, rank 1 is not the answer", top1_miss),
                         ("off-topic (bench/offtopic.txt)", off)):
        pc = percentiles(values)
        out.append(f"| {name} | {len(values)} | " + " | ".join(f"{pc[k]:.3f}" for k in pc) + " |")
    out += ["", "| confident if distance <= | dev rank-1 hits kept | dev questions flagged | off-topic flagged |",
            "| --- | --- | --- | --- |"]
    dev_top = top1_hit + top1_miss
    for t in (0.45, 0.5, 0.55, 0.6, 0.62, 0.65, 0.7):
        out.append(f"| {t:.2f} | {sum(d <= t for d in top1_hit) / len(top1_hit):.0%} | "
                   f"{sum(d > t for d in dev_top) / len(dev_top):.0%} | "
                   f"{sum(d > t for d in off) / len(off):.0%} |")

    # token savings: rerun the dev questions to print the default human output too
    questions = [q["query"] for q in per_query]
    batch = args.report.with_suffix(".questions.txt")
    batch.write_text("\n".join(questions) + "\n")
    run = subprocess.run([sys.executable, str(ROOT / "query.py"), "--db", args.db, "--json",
                          "-k", "5", "--batch", str(batch)], capture_output=True, text=True,
                         check=True)
    ratios_json, ratios_print, file_tokens, json_tokens, print_tokens = [], [], [], [], []
    for q, line in zip(per_query, run.stdout.splitlines()):
        results = json.loads(line)
        whole = len((args.corpus / q["file"]).read_text(encoding="utf-8", errors="replace")) / 4
        as_json = len(line) / 4
        buf = io.StringIO()
        query.print_results(results, query.SHOW_LINES, out=buf)
        printed = len(buf.getvalue()) / 4
        file_tokens.append(whole)
        json_tokens.append(as_json)
        print_tokens.append(printed)
        ratios_json.append(whole / as_json)
        ratios_print.append(whole / printed)
    out += ["", "## Tokens: the default answer (top 5) against reading the answer's whole file", "",
            "| what | median tokens | median ratio file / answer |", "| --- | --- | --- |",
            f"| whole file holding the answer | {statistics.median(file_tokens):.0f} | |",
            f"| printed output (`query.py \"...\"`) | {statistics.median(print_tokens):.0f} | "
            f"{statistics.median(ratios_print):.1f}x |",
            f"| JSON output (`--json`, all fields) | {statistics.median(json_tokens):.0f} | "
            f"{statistics.median(ratios_json):.1f}x |"]
    print("\n".join(out))


if __name__ == "__main__":
    main()
