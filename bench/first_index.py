#!/usr/bin/env python3
"""A first index as a new user meets it: how soon it answers, how soon every member has a
vector, how long the whole build takes, and what it costs, against a baseline checkout
measured in the same run, run by run in turn.

    python bench/first_index.py --repo JELLYFIN --bossroom BOSSROOM --baseline CHECKOUT
                                [--runs 3] [--work DIR] [--out bench/RESULTS-first-index.md]

For each run, on a fresh copy of the repo (ONNX export included, as on a first use):
  - time to first answer: from `index.py` starting to the first `query.py` (polled every
    POLL seconds) that prints at least one result with exit status 0;
  - time until every member has a vector (ours: recorded by the build itself);
  - the full build's wall time and peak RSS (/usr/bin/time).
Ours runs with the default precision (auto); the baseline checkout is the code at the start
of this work, fp32. BossRoom compares our first build with bench/naive_index.py (the
original scripts' pipeline). `--background` and `--status` are timed on the built index.
"""
import argparse
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import speed  # its runner, environment and machine description (a file beside this one)

HERE = Path(__file__).resolve().parent

QUESTION = "how are user passwords hashed and verified"
POLL = 1.0


def first_build(code, tree, env=None):
    """(time to first answer, build wall, peak MB, seconds until every member had a vector
    or None, summary line) of one first build of tree with the checkout at code."""
    db = tree / ".codebase-rag"
    with tempfile.NamedTemporaryFile(suffix=".time") as tf:
        started = time.perf_counter()
        build = subprocess.Popen(["/usr/bin/time", "-o", tf.name, "-f", "%e %M", sys.executable,
                                  str(code / "index.py"), "--source", str(tree), "-q"],
                                 env={**speed.child_env(), **(env or {})},
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first_answer = None
        while build.poll() is None and first_answer is None:
            time.sleep(POLL)
            if (db / "index.sqlite").is_file():
                asked = subprocess.run([sys.executable, str(code / "query.py"), "--db", str(db),
                                        "--json", "-k", "1", QUESTION], env=speed.child_env(),
                                       capture_output=True, text=True)
                if asked.returncode == 0 and asked.stdout.strip() not in ("", "[]"):
                    first_answer = time.perf_counter() - started
        out, err = build.communicate()
        wall = time.perf_counter() - started
        if build.returncode != 0:
            raise speed.Failed(f"{code / 'index.py'} exited {build.returncode}: {err[-800:]}")
        peak = int(Path(tf.name).read_text().split()[-1]) / 1024
    covered = None
    try:
        con = sqlite3.connect(db / "index.sqlite")
        row = con.execute("SELECT value FROM meta WHERE key='members_covered_after'").fetchone()
        covered = float(row[0]) if row and row[0] else None
        con.close()
    except sqlite3.Error:
        pass
    return first_answer or wall, wall, peak, covered, out.strip().splitlines()[-1]


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def span(values):
    values = [v for v in values if v is not None]
    return f" ({min(values):.0f}-{max(values):.0f})" if len(values) > 1 else ""


def timed(cmd, runs=5):
    """Median wall seconds of a quick command."""
    walls = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(cmd, env=speed.child_env(), capture_output=True, check=True)
        walls.append(time.perf_counter() - started)
    return statistics.median(walls)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repo", type=Path, help="the main tree (jellyfin); without it, only BossRoom")
    p.add_argument("--bossroom", type=Path, help="the small Unity tree, against the naive scripts")
    p.add_argument("--baseline", type=Path,
                   help="a checkout of the code to compare with (the start of this work)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--work", type=Path, help="scratch folder (default: a temp dir)")
    p.add_argument("--out", type=Path, default=HERE / "RESULTS-first-index.md")
    args = p.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="rag-first-"))
    work.mkdir(parents=True, exist_ok=True)
    code = speed.snapshot(work / "code")
    results = {"ours": [], "baseline": []}
    started = time.time()
    for run in range(args.runs if args.repo else 0):
        order = [("ours", code, None), ("baseline", args.baseline,
                                        {"CODEBASE_RAG_PRECISION": "fp32"})]
        for name, checkout, env in order if run % 2 == 0 else order[::-1]:
            tree = speed.fresh_copy(args.repo, work / f"tree-{name}")
            speed.log(f"run {run + 1}/{args.runs}: {name}")
            results[name].append(first_build(checkout, tree, env))
            speed.log(f"  {results[name][-1]}")
    background = status = None
    if args.repo:
        ours_tree = work / "tree-ours"
        background = timed([sys.executable, code / "index.py", "--source", ours_tree,
                            "--background"])
        time.sleep(10)                       # let the no-op refreshes it started finish
        status = timed([sys.executable, code / "index.py", "--source", ours_tree, "--status"])
    boss = {"ours": [], "naive": []}
    for run in range(args.runs if args.bossroom else 0):
        for name in ("ours", "naive") if run % 2 == 0 else ("naive", "ours"):
            tree = speed.fresh_copy(args.bossroom, work / "boss")
            if name == "ours":
                boss["ours"].append(first_build(code, tree)[1])
                continue
            naive_db = work / "boss-naive"
            shutil.rmtree(naive_db, ignore_errors=True)
            started_naive = time.perf_counter()
            subprocess.run([sys.executable, HERE / "naive_index.py", "--source", tree, "--db",
                            naive_db], env=speed.child_env(), capture_output=True, check=True)
            boss["naive"].append(time.perf_counter() - started_naive)
        speed.log(f"bossroom run {run + 1}: ours {boss['ours'][-1]:.0f} s, naive "
                  f"{boss['naive'][-1]:.0f} s")
    write(args, results, background, status, boss, started)
    print(args.out.read_text())


def write(args, results, background, status, boss, started):
    ours, base = results["ours"], results["baseline"]
    rows = [] if not ours else repo_rows(results, background, status)
    if boss["ours"]:
        bo, bn = median(boss["ours"]), median(boss["naive"])
        rows.append(("BossRoom first build vs the original scripts", f"{bo:.0f} s{span(boss['ours'])}",
                     f"{bn:.0f} s{span(boss['naive'])}", f"{bn / bo:.2f}x", "no slower",
                     bo <= bn))
    lines = [
        "# First index", "",
        f"Generated by `python bench/first_index.py {' '.join(sys.argv[1:])}` on "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))} "
        f"({(time.time() - started) / 60:.0f} min).", "",
        f"- machine: {speed.machine()}",
        f"- ours: this checkout ({speed.git_state().split(';')[0]}), default precision "
        f"(auto); baseline: `{args.baseline}`, fp32; {args.runs} runs each, in turn",
        f"- repo: `{args.repo}`; medians, min-max in brackets; each build starts from a fresh "
        f"copy with no index and no model export",
    ]
    if ours:
        lines.append(f"- last summary lines: ours `{ours[-1][4]}`; baseline `{base[-1][4]}`")
    lines += ["", "| measurement | ours | baseline | ratio | target | result |",
              "| --- | --- | --- | --- | --- | --- |"]
    for what, o, b, ratio, target, ok in rows:
        verdict = "-" if ok is None else "**pass**" if ok else "**FAIL**"
        lines.append(f"| {what} | {o} | {b} | {ratio} | {target} | {verdict} |")
    args.out.write_text("\n".join(lines) + "\n")


def repo_rows(results, background, status):
    col = {k: [list(x) for x in zip(*v)] for k, v in results.items()}
    o_first, o_wall, o_peak, o_cov = (median(c) for c in col["ours"][:4])
    b_first, b_wall, b_peak = (median(c) for c in col["baseline"][:3])
    return [
        ("time to first answer", f"{o_first:.0f} s{span(col['ours'][0])}",
         f"{b_first:.0f} s{span(col['baseline'][0])}", f"{b_first / o_first:.1f}x",
         "≤ 30 s", o_first <= 30),
        ("every member has a vector", f"{o_cov:.0f} s{span(col['ours'][3])}, "
         f"{o_cov / o_wall:.0%} of the build" if o_cov else "-", "-", "-", "report", None),
        ("full first build", f"{o_wall:.0f} s{span(col['ours'][1])}",
         f"{b_wall:.0f} s{span(col['baseline'][1])}", f"{b_wall / o_wall:.2f}x",
         "≥ 1.8x (VNNI)", b_wall / o_wall >= 1.8),
        ("peak RSS of the build", f"{o_peak:.0f} MB", f"{b_peak:.0f} MB", "-", "≤ 1.0 GB",
         o_peak <= 1024),
        ("`index.py --background` returns", f"{background:.2f} s", "-", "-", "≤ 1 s",
         background <= 1),
        ("`index.py --status`", f"{status:.2f} s", "-", "-", "≤ 0.5 s", status <= 0.5),
    ]


if __name__ == "__main__":
    sys.exit(main())
