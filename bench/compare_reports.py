#!/usr/bin/env python3
"""Two run_eval.py reports of one dev set, question by question: how many answers moved up
and down, and the change in R@5 and MRR@10 with a 90% bootstrap interval over questions
(paired: each draw takes the same questions from both reports).

    python bench/compare_reports.py BEFORE.json AFTER.json [--draws 4000] [--seed 0]
"""
import argparse
import json

import numpy as np


def ranks(path):
    """{query id: rank of the first hit, or None}, from a run_eval.py report."""
    return {q["id"]: q.get("rank") for q in json.load(open(path))["per_query"]}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("--draws", type=int, default=4000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    a, b = ranks(args.before), ranks(args.after)
    if a.keys() != b.keys():
        p.error("the two reports do not hold the same questions")
    ids = sorted(a)
    place = lambda r: r or 99                         # noqa: E731  (missed: below any rank)
    up = sum(place(b[i]) < place(a[i]) for i in ids)
    down = sum(place(b[i]) > place(a[i]) for i in ids)
    in5 = lambda r: float(bool(r) and r <= 5)         # noqa: E731
    rr = lambda r: 1 / r if r else 0.0                # noqa: E731
    draws = np.random.default_rng(args.seed).integers(0, len(ids), (args.draws, len(ids)))
    print(f"{len(ids)} questions: {up} up, {down} down")
    for name, f in (("R@5", in5), ("MRR@10", rr)):
        d = np.array([f(b[i]) - f(a[i]) for i in ids]) * 100
        lo, hi = np.percentile(d[draws].mean(1), [5, 95])
        print(f"{name}: {d.mean():+.1f} points [{lo:+.1f}, {hi:+.1f}]")


if __name__ == "__main__":
    main()
