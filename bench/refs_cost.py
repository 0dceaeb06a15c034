#!/usr/bin/env python3
"""What the references cost (issue 47): a first build's keyword phase (step 1: read, chunk,
cut windows, write SQLite) with and without the uses' extraction; the
uses and decls tables' size on disk; and how fast a warm --callers answers.

    python bench/refs_cost.py TREE [TREE ...] [--runs 3] [--names 30] [--out FILE]
    python bench/refs_cost.py --db DB [--names 20] [--repeat 3]     (--callers only)

Step 1 runs as a build runs it (indexer.Indexer.run over the whole walk, the index's real
tokenizer counting each window), into a new index each run, each run a process of its own,
with and without in turn, the order alternated (the pairs' ratios go to stderr); "without"
replaces the extraction by one that reads nothing. The runs with it also time, inside the
run, the CPU of the extraction and of writing the uses' rows: their share of the rest of
the same run does not move with the shared host's speed, which drifts between runs by 20%
and more. Sizes come from SQLite's dbstat (each table with its indexes). --callers is
timed in process on a warm index (the questions' median over `--names` members whose names
are called most, each asked once: afresh as query.py asks, and in turn on a long-lived
index as the MCP server asks), and as the whole query.py command (its median over 5 runs
of one name).
"""
import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def step_one(tree, db, extract):
    """(wall, CPU seconds) of step 1 over the whole tree into a new index at db, and the CPU
    seconds spent inside it extracting the uses and writing their rows (0 without)."""
    from codebase_rag import indexer as indexer_module
    from codebase_rag.build_runs import open_for_write
    from codebase_rag.store import Store
    from codebase_rag.walk import Ignore
    saved = indexer_module.extract, Store.write_uses
    spent = [0.0]

    def timed(function):
        def run(*args):
            started = time.process_time()
            try:
                return function(*args)
            finally:
                spent[0] += time.process_time() - started
        return run
    if extract:
        indexer_module.extract, Store.write_uses = timed(saved[0]), timed(saved[1])
    else:
        indexer_module.extract = lambda text, chunks, language: ([], [])
    try:
        shutil.rmtree(db, ignore_errors=True)
        store = open_for_write(db, tree, None)
        ix = indexer_module.Indexer(store, tree, Ignore(tree), progress=False)
        work = ix.walk_tree()
        started = time.process_time(), time.perf_counter()
        ix.run(work)
        return time.perf_counter() - started[1], time.process_time() - started[0], spent[0]
    finally:
        indexer_module.extract, Store.write_uses = saved


def table_sizes(db):
    """{table: bytes, its indexes included} of index.sqlite."""
    con = sqlite3.connect(Path(db) / "index.sqlite")
    owner = {name: tbl for name, tbl in con.execute(
        "SELECT name, tbl_name FROM sqlite_master WHERE type IN ('table', 'index')")}
    sizes = {}
    for name, size in con.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name"):
        table = owner.get(name, name)
        sizes[table] = sizes.get(table, 0) + size
    rows = {t: con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
            for t in ("chunks", "uses", "decls")}
    total = os.path.getsize(Path(db) / "index.sqlite")
    return sizes, rows, total


def callers_latency(db, names):
    """(median, max) seconds of --callers in process, each name asked once: (a) as
    query.py asks, its lookups read afresh for each question; (b) as the MCP server asks,
    one after the other on a long-lived index (the lookups of earlier questions kept)."""
    from codebase_rag import references
    from codebase_rag.store import Store
    store = Store(db)
    fresh, kept = [], []
    for name in names:
        references._last = (None, None, None)
        started = time.perf_counter()
        references.ask(store, "callers", name)
        fresh.append(time.perf_counter() - started)
    references._last = (None, None, None)
    for name in names:
        started = time.perf_counter()
        references.ask(store, "callers", name)
        kept.append(time.perf_counter() - started)
    return [(statistics.median(t), max(t)) for t in (fresh, kept)]


def busiest(db, count):
    """`Class.Member` of members whose name is used most, a sample of the index."""
    con = sqlite3.connect(Path(db) / "index.sqlite")
    rows = con.execute("SELECT c.class, c.member FROM chunks c JOIN (SELECT name, COUNT(*) n "
                       "FROM uses WHERE kind='call' GROUP BY name ORDER BY n DESC LIMIT ?) u "
                       "ON u.name = c.member WHERE c.class != '' GROUP BY c.member",
                       (count * 3,)).fetchall()
    random.Random(1).shuffle(rows)
    return [f"{cls.rpartition('.')[2]}.{member}" for cls, member in rows[:count]]


def cli_latency(db, name, runs=5):
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, str(HERE.parent / "query.py"), "--db", str(db),
                        "--callers", name], capture_output=True, check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("trees", nargs="*", type=Path)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--names", type=int, default=30)
    p.add_argument("--work", type=Path, default=None)
    p.add_argument("--out", type=Path)
    p.add_argument("--db", type=Path, help="only time --callers on this built index (its "
                   "--names most called names), --repeat times: each time's medians")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--one", nargs=3, metavar=("DB", "TREE", "EXTRACT"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.one:                              # one run of step 1, in a process of its own
        db, tree, extract = args.one
        print(json.dumps(step_one(Path(tree), Path(db), extract == "1")))
        return
    if args.db:
        names = busiest(args.db, args.names)
        times = [callers_latency(args.db, names) for _ in range(args.repeat)]
        for (fresh, _), (kept, _) in times:
            print(f"afresh {fresh * 1000:.1f} ms, long-lived {kept * 1000:.1f} ms")
        print(f"median afresh {statistics.median(t[0][0] for t in times) * 1000:.1f} ms, "
              f"long-lived {statistics.median(t[1][0] for t in times) * 1000:.1f} ms")
        return
    work = args.work or Path(tempfile.mkdtemp(prefix="refs-cost-"))
    lines = ["| tree | files | step 1 without (s) | with (s) | added | CPU without (s) | "
             "with (s) | added | within the runs with: uses' CPU (s), share of the rest |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    sizes_lines, latency_lines = [], []
    for tree in args.trees:
        tree = tree.resolve()
        db = work / f"{tree.name}.db"
        runs = {True: [], False: []}
        for r in range(args.runs):            # each run its own process, the order alternated
            for extract in (False, True) if r % 2 == 0 else (True, False):
                into = db if extract else db.with_suffix(".without")     # db: a with run's
                out = subprocess.run([sys.executable, __file__, "--one", str(into), str(tree),
                                      str(int(extract))], capture_output=True, text=True,
                                     check=True, env={**os.environ, "PYTHONPATH": str(
                                         HERE.parent)}).stdout
                runs[extract].append(json.loads(out.splitlines()[-1]))
                print(tree.name, "with" if extract else "without", runs[extract][-1],
                      file=sys.stderr, flush=True)
        files = sqlite3.connect(db / "index.sqlite").execute(
            "SELECT COUNT(*) FROM files").fetchone()[0]
        wall = {k: statistics.median(r[0] for r in v) for k, v in runs.items()}
        cpu = {k: statistics.median(r[1] for r in v) for k, v in runs.items()}
        # the share measured inside each run with the extraction: the machine's speed, which
        # drifts between runs on a shared host, is the same for both parts of it
        uses = statistics.median(r[2] for r in runs[True])
        pairs = [w[1] / wo[1] for w, wo in zip(runs[True], runs[False])]
        print(tree.name, "the pairs' CPU ratios", [round(x, 3) for x in pairs], "median",
              round(statistics.median(pairs), 3), file=sys.stderr, flush=True)
        share = statistics.median(r[2] / (r[1] - r[2]) for r in runs[True])
        lines.append(f"| {tree.name} | {files:,} | {wall[False]:.1f} | {wall[True]:.1f} | "
                     f"{wall[True] / wall[False] - 1:+.1%} | {cpu[False]:.1f} | "
                     f"{cpu[True]:.1f} | {cpu[True] / cpu[False] - 1:+.1%} | "
                     f"{uses:.2f}, {share:+.1%} |")
        sizes, rows, total = table_sizes(db)     # the last run with the extraction
        sizes_lines.append(
            f"| {tree.name} | {rows['chunks']:,} | {rows['uses']:,} | {rows['decls']:,} | "
            f"{sizes.get('uses', 0) / 2**20:.1f} | {sizes.get('decls', 0) / 2**20:.1f} | "
            f"{total / 2**20:.1f} | "
            f"{(sizes.get('uses', 0) + sizes.get('decls', 0)) / total:.1%} |")
        names = busiest(db, args.names)
        (fresh, fresh_max), (kept, kept_max) = callers_latency(db, names)
        whole = cli_latency(db, names[0]) if names else float("nan")
        latency_lines.append(f"| {tree.name} | {len(names)} | {fresh * 1000:.1f} "
                             f"({fresh_max * 1000:.0f}) | {kept * 1000:.1f} "
                             f"({kept_max * 1000:.0f}) | {whole * 1000:.0f} |")
    out = ["## Step 1 (the keyword phase), medians of "
           f"{args.runs} runs each, taken in turn", "", *lines, "",
           "## The tables on disk (after step 1; chunks' text, windows and FTS make the rest)",
           "", "| tree | chunks | uses | decls | uses MB | decls MB | index.sqlite MB | "
           "share |", "|---|---:|---:|---:|---:|---:|---:|---:|", *sizes_lines, "",
           "## --callers on a warm index (the most called names)", "",
           "| tree | names | each question afresh, median (max) ms | long-lived (MCP), "
           "median (max) ms | query.py --callers, median of 5, ms |", "|---|---:|---:|---:|---:|",
           *latency_lines]
    text = "\n".join(out) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
