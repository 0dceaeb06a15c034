"""The MCP server's in-memory reader against the exact answers, on an index you built:
  keywords   MemoryKeywords' scores against FTS5's bm25() (identical dicts expected)
  shortlist  MemoryNearest's 128-dimension shortlist against the exact product: the recall
             of the n nearest members (index with the real model; with n small, the
             shortlist is the share of the rows it is at 300,000 windows)

    python bench/mcp_reader.py --db /tmp/jfreal --questions ../shared/eval/data/dev-ppy__osu.jsonl --n 6 3 60

Used for RESULTS-speed ("Inside the agent's loop, with keyword postings in memory").
"""
import argparse
import json
import statistics
import time

import numpy as np

from codebase_rag import nearest
from codebase_rag.keywords import Fts5Keywords, MemoryKeywords
from codebase_rag.reader import Reader


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--db", required=True, help="an index folder")
    p.add_argument("--questions", required=True, help="a .jsonl with a 'query' per line")
    p.add_argument("--n", type=int, nargs="+", default=[6, 3, 60])
    p.add_argument("--settings", default="96x16,128x8,128x16", help="dims x shortlist, ...")
    a = p.parse_args()
    qs = [json.loads(line)["query"] for line in open(a.questions)]
    reader = Reader(db=a.db, memory=True)
    store, model, _, exact = reader.prepare()
    memory = MemoryKeywords(store)
    same = sum(memory.best(q, 200) == Fts5Keywords(store).best(q, 200) for q in qs)
    print(f"keywords: {same}/{len(qs)} questions with identical top-200 scores")
    vecs = model.embedder()(qs)
    exact.sync()                                   # the whole product, as below REDUCE_ABOVE
    assert exact.reduced is None, "an index above REDUCE_ABOVE: no exact reference"
    wants = {n: [{c for c, _ in exact.nearest(v, n)} for v in vecs] for n in a.n}
    nearest.REDUCE_ABOVE = 0
    for setting in a.settings.split(","):
        nearest.REDUCED_DIM, nearest.SHORTLIST = map(int, setting.split("x"))
        short = nearest.MemoryNearest(store)
        short.sync()
        for n in a.n:
            recall, times = [], []
            for v, want in zip(vecs, wants[n]):
                t = time.perf_counter()
                got = {c for c, _ in short.nearest(v, n)}
                times.append(time.perf_counter() - t)
                recall.append(len(got & want) / len(want))
            print(f"{setting} n={n}: {len(short.matrix):,} rows, recall mean {np.mean(recall):.4f}"
                  f" worst {min(recall):.3f}, {statistics.median(times) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
