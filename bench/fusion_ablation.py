#!/usr/bin/env python3
"""What each part of the ranking buys, in process, on a dev index built by this code.
Every variant reads the same vectors, so the comparison costs no index.

    python bench/fusion_ablation.py DB DATA.jsonl CORPUS [--share S] [--windows]

Default: fusion by rank (reciprocal rank, k 20, as before) or by score (search.fuse), each
with and without the members' signature windows (a member's header and signature alone).
--windows: the shipped fusion with only some kinds of window searched, as if only those
were embedded: the first window of a member's code, its second, its third and later, its
signature window; each row says the share of the windows and of their word pieces (what
embedding them costs) that it keeps.

DB: an index of CORPUS (kept by the kit's run_eval.py --keep-db); DATA: a kit dev set. The
row with every window and score fusion is the shipped search and repeats run_eval.py's
figures (without --share, each question's share is the shipped one: search.vector_share).
Questions with a "kind" (the NL sets) get R@5 per kind too.
"""
import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path

import numpy as np

from codebase_rag.config import CANDIDATES, KEYWORD_SCORES
from codebase_rag.indexer import build_file, chunk_file
from codebase_rag.keywords import Fts5Keywords
from codebase_rag.reader import Reader
from codebase_rag.search import fuse, rescore, vector_share
from codebase_rag.text import query_shape
from codebase_rag.text import cache_key, chunk_header, windows

KIT = Path(os.environ.get("EVAL_KIT", "/work/shared/eval"))    # the eval kit's folder


def kit_module(name):
    """A script of the eval kit (which is no package), loaded from its file."""
    spec = importlib.util.spec_from_file_location(name, KIT / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


run_eval = kit_module("run_eval")         # its hit rule


def rank_fusion(cosines, bm25, k=20.0):
    scores = {}
    for ranking in (sorted(cosines, key=lambda c: -cosines[c]), list(bm25)):
        for rank, cid in enumerate(ranking[:CANDIDATES]):
            scores[cid] = scores.get(cid, 0.0) + 1.0 / (k + rank + 1)
    return scores


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("db")
    p.add_argument("data")
    p.add_argument("corpus")
    p.add_argument("--share", type=float, help="one share of meaning for every question")
    p.add_argument("--windows", action="store_true", help="window kinds instead of fusions")
    args = p.parse_args()
    questions = [json.loads(line) for line in open(args.data) if line.strip()]
    store, model, _, _ = Reader(args.db).prepare()
    qvecs = np.array(model.embedder()([q["query"] for q in questions]), dtype=np.float32)
    precision = store.identity.precision
    signature_keys, tokens_of = set(), {}        # the windows cut again (the index keeps no text)
    for rel in store.manifest():
        text = (Path(args.corpus) / rel).read_text(encoding="utf-8", errors="replace")
        texts = [w[3] for w in (build_file(rel, text, model.count_tokens) or ((), ()))[1]]
        tokens_of.update(zip((cache_key(t, precision) for t in texts), model.count_tokens(texts)))
        for c in chunk_file(rel, text) or ():
            if c.signature:
                signature_keys.add(cache_key(windows(chunk_header(rel, c), c.signature,
                                                     model.count_tokens)[0], precision))
    rows = store.db.execute("SELECT w.chunk, w.key, v.vec FROM windows w "
                            "JOIN vectors v ON v.key = w.key ORDER BY w.chunk, w.ordinal").fetchall()
    is_signature = np.array([key in signature_keys for _, key, _ in rows])
    chunk_of = [r[0] for r in rows]
    code_index, seen = [], {}                    # 0: a member's first code window, 1: ...
    for chunk, signature in zip(chunk_of, is_signature):
        code_index.append(-1 if signature else seen.get(chunk, 0))
        seen[chunk] = seen.get(chunk, 0) + (not signature)
    code_index = np.array(code_index)
    tokens = np.array([tokens_of.get(key, 0) for _, key, _ in rows])
    matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    print(f"{len(rows):,} windows of {len(seen):,} members, {int(is_signature.sum()):,} of them "
          f"signature windows", file=sys.stderr)
    chunk_rows = store.chunk_rows(set(chunk_of))
    share = args.share or "shipped"
    every = np.ones(len(rows), bool)
    if args.windows:
        first = code_index == 0
        variants = {"every window (shipped)": (fuse, every),
                    "no signature windows": (fuse, ~is_signature),
                    "first and second code windows, signature": (fuse, is_signature | (code_index <= 1)),
                    "first code window, signature": (fuse, is_signature | first),
                    "first code window only": (fuse, first)}
    else:
        variants = {"rank fusion, code windows": (rank_fusion, ~is_signature),
                    "rank fusion + signature windows": (rank_fusion, every),
                    f"score fusion {share}, code windows": (fuse, ~is_signature),
                    f"score fusion {share} + signature windows": (fuse, every)}
    ranks = {name: [] for name in variants}
    for q, qvec in zip(questions, qvecs):
        cos_all = matrix @ qvec
        bm25 = Fts5Keywords(store).best(q["query"], KEYWORD_SCORES)
        for name, (fusion, kept) in variants.items():
            best = {}
            for i in np.flatnonzero(kept):
                c = chunk_of[i]
                if cos_all[i] > best.get(c, -2.0):
                    best[c] = float(cos_all[i])
            near = sorted(best, key=lambda c: -best[c])[:CANDIDATES]
            candidates = set(near) | set(list(bm25)[:CANDIDATES])
            cosines = {c: best[c] for c in candidates if c in best}
            keywords = {c: bm25[c] for c in candidates if c in bm25}
            scores = fusion(cosines, keywords, args.share or vector_share(query_shape(q["query"]))) \
                if fusion is fuse else \
                fusion(cosines, bm25)
            scores = rescore(scores, {c: chunk_rows[c] for c in scores}, q["query"], query_shape(q["query"]))
            found, rank = [], None
            for c in sorted(scores, key=lambda c: -scores[c]):
                r = chunk_rows[c]
                if any(f.file == r.file and f.start_line <= r.end_line and r.start_line <= f.end_line
                       for f in found):
                    continue
                found.append(r)
                if run_eval.is_hit({"file": r.file, "start_line": r.start_line,
                                    "end_line": r.end_line}, q, 10, [args.corpus]):
                    rank = len(found)
                    break
                if len(found) == 10:
                    break
            ranks[name].append(rank)
    kinds = sorted({q["kind"] for q in questions if "kind" in q})
    print("| variant | windows | word pieces | R@1 | R@5 | R@10 | MRR@10 |"
          + "".join(f" {k} R@5 |" for k in kinds))
    print("| --- " * (7 + len(kinds)) + "|")
    for name, got in ranks.items():
        n, kept = len(got), variants[name][1]
        at = [sum(1 for r in got if r and r <= k) / n for k in (1, 5, 10)]
        mrr = sum(1 / r for r in got if r) / n
        per_kind = ""
        for kind in kinds:
            of_kind = [r for r, q in zip(got, questions) if q.get("kind") == kind]
            per_kind += f" {sum(1 for r in of_kind if r and r <= 5) / len(of_kind):.3f} |"
        print(f"| {name} | {kept.mean():.1%} | {tokens[kept].sum() / tokens.sum():.1%} | "
              f"{at[0]:.3f} | {at[1]:.3f} | {at[2]:.3f} | {mrr:.3f} |{per_kind}")


if __name__ == "__main__":
    main()
