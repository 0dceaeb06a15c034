"""Search: the question's vector ranking and a BM25 keyword ranking, fused by reciprocal
rank, without overlapping duplicates. Takes the question's vector; it embeds nothing."""
import fnmatch
from dataclasses import dataclass
import os
import re
from pathlib import Path

from .config import (CANDIDATES, CLASS_WEIGHT, CONFIDENT, K, MODE, NAME_WEIGHT,
                     PER_FILE, PRF, RRF_K, SHORT_LINES, SHORT_WEIGHT, TEST_WEIGHT,
                     VECTOR_WEIGHT)
from .languages import language_for
from .embed import ExportedModel, resolve_model
from .errors import UsageError
from .lock import is_locked
from .store import IndexedChunk, Store, find_index
from .text import fts_query


def open_index(db=None, model=None):
    """(store, its exported model already loading, or None while a first build is still
    making it) for a query: the index at db, or the one found by walking up from the
    current directory."""
    folder = Path(db) if db else find_index(os.getcwd())
    if folder is None or not (folder / "index.sqlite").is_file():
        raise UsageError(f"no codebase-rag index found at or above {folder or os.getcwd()}; "
                         f"create one with: python index.py --source DIR")
    store = Store(folder)
    built_with = store.meta("model")
    if model and resolve_model(model)[1] != built_with:
        raise UsageError(f"the index was built with {built_with}, not "
                         f"{resolve_model(model)[1]}; re-index with --rebuild")
    exported = ExportedModel(store.model_dir, store.meta("precision") or "fp32")
    problem = exported.problem()
    locked = is_locked(folder)
    if problem and locked:
        return store, None            # the build (re)makes it in a moment: keywords until then
    if problem:
        exported.embedder()           # raises the one line that says how to repair it
    exported.preload()
    # Chroma cannot open a read-only folder, and a writer rewrites its HNSW files in place (a
    # reader that loads them half-written can crash): then scan the embedding cache instead
    store.scan_cache = locked or not os.access(store.folder, os.W_OK)
    if store.embedded_count() and not store.scan_cache:
        store.collection              # open Chroma while the model loads
    return store, exported


def progress_note(store):
    """One line while the semantic index is incomplete (a build is running or was cut
    short), else None; and the share built."""
    total, done = store.count("windows"), store.embedded_count()
    if done >= total:
        return None, 1.0
    return (f"semantic index {done / total:.0%} built ({done:,} of {total:,} windows); "
            f"ranking leans on keywords until it is done"), round(done / total, 3)


def vector_ranking(store, qvec, n):
    """[(chunk id, distance)] best first; a long member's windows count once."""
    if qvec is None or not store.embedded_count():     # nothing embedded yet
        return []
    if store.scan_cache or not os.access(store.folder, os.W_OK):
        # the embedding cache holds the same vectors (exact, and fast enough at this size)
        return sorted(distances_for(store, qvec).items(), key=lambda kv: kv[1])[:n]
    for windows in (n, n * 8):
        # a member of many windows can fill the first n; then look further, once
        ids, distances = store.collection.query(qvec.tolist(), windows)
        best = {}
        for wid, dist in zip(ids, distances):
            cid = wid.rsplit(".", 1)[0]   # window id: chunk id + "." + its ordinal
            if cid not in best or dist < best[cid]:
                best[cid] = dist
        if len(best) >= n // 2 or len(ids) < windows:
            break
    return sorted(best.items(), key=lambda kv: kv[1])[:n]


def lexical_ranking(store, question, n):
    """[chunk id] best first, by BM25 over identifier-split text."""
    match = fts_query(question)
    return store.lexical_search(match, NAME_WEIGHT, n) if match else []


def distances_for(store, qvec, chunk_ids=None):
    """Cosine distance of the question to each chunk's closest window, from the embedding
    cache: for chunks that only the lexical ranking found, or for every chunk."""
    import numpy as np
    rows = store.window_vectors(chunk_ids)
    best = {cid: 2.0 for cid in chunk_ids or ()}
    if not rows:
        return best
    matrix = np.frombuffer(b"".join(vec for _, vec in rows), dtype=np.float32).reshape(len(rows), -1)
    for (cid, _), dist in zip(rows, (1.0 - matrix @ qvec).tolist()):
        if dist < best.get(cid, 3.0):
            best[cid] = dist
    return best


def fuse(rankings, rrf_k=RRF_K, weights=None):
    """{chunk id: score} by reciprocal rank fusion of several rankings (each best first)."""
    scores = {}
    for ranking, weight in zip(rankings, weights or [1.0] * len(rankings)):
        for rank, cid in enumerate(ranking):
            scores[cid] = scores.get(cid, 0.0) + weight / (rrf_k + rank + 1)
    return scores


def is_test(path):
    """Test code, by the conventions of its language."""
    lang = language_for(path)
    return lang is not None and lang.is_test(path)


ASKS_ABOUT_TESTS = re.compile(r"\btest(s|ing|ed)?\b", re.I)


def rescore(scores, rows, question):
    """The fused scores, adjusted by priors: test code counts for less unless the question
    is about tests; so does a member of a few lines (short texts sit near many questions,
    in BM25 and in embedding space alike); and a member may gain a share of the scores of
    its class's other candidates."""
    if TEST_WEIGHT != 1 and not ASKS_ABOUT_TESTS.search(question):
        scores = {cid: s * (TEST_WEIGHT if cid in rows and is_test(rows[cid].file) else 1)
                  for cid, s in scores.items()}
    if SHORT_WEIGHT != 1:
        scores = {cid: s * (SHORT_WEIGHT if cid in rows and
                            rows[cid].end_line - rows[cid].start_line < SHORT_LINES else 1)
                  for cid, s in scores.items()}
    if CLASS_WEIGHT:
        totals = {}
        for cid, score in scores.items():
            if cid in rows:
                owner = (rows[cid].file, rows[cid].cls)
                totals[owner] = totals.get(owner, 0.0) + score
        scores = {cid: s + CLASS_WEIGHT * (totals[(rows[cid].file, rows[cid].cls)] - s)
                  if cid in rows else s for cid, s in scores.items()}
    return scores


def search(store, question, qvec, k=K, mode=MODE, path_glob=None):
    """The k best chunks as Hits, best first, without overlapping duplicates and at most
    PER_FILE from one file. qvec None (no model yet): keywords only, without distances."""
    n = CANDIDATES * (4 if path_glob else 1)
    vector = vector_ranking(store, qvec, n) if mode != "lexical" else []
    lexical = lexical_ranking(store, question, n) if mode != "vector" else []

    def ranked(vector):
        scores = fuse([[cid for cid, _ in vector], lexical], weights=[VECTOR_WEIGHT, 1.0])
        rows = store.chunk_rows(scores)
        return rescore(scores, rows, question), rows
    scores, rows = ranked(vector)
    distance = dict(vector)           # to the question itself, whatever PRF does below
    if PRF and qvec is not None and vector:
        # pseudo-relevance feedback: search again from the question moved toward its best hits
        best = sorted(scores, key=lambda c: -scores[c])[:3]
        blobs = [vec for _, vec in store.window_vectors(best)]
        if blobs:
            import numpy as np
            hits = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)
            moved = qvec + PRF * hits.mean(0)
            scores, rows = ranked(vector_ranking(store, moved / np.linalg.norm(moved), n))
    results = []
    for cid in sorted(scores, key=lambda c: -scores[c]):
        row = rows.get(cid)
        if row is None or path_glob and not fnmatch.fnmatch(row.file, path_glob):
            continue
        same_file = [r for r in results if r.file == row.file]
        if PER_FILE and len(same_file) >= PER_FILE:
            continue
        if any(r.start_line <= row.end_line and row.start_line <= r.end_line
               for r in same_file):
            continue                                   # overlaps a better hit
        results.append(row)
        if len(results) == k:
            break
    missing = [r.id for r in results if r.id not in distance]
    if missing and qvec is not None:
        distance.update(distances_for(store, qvec, missing))
    hits = []
    for r in results:
        dist = round(distance.get(r.id, 2.0), 4) if qvec is not None else None
        hits.append(Hit(r, dist, dist is not None and dist <= CONFIDENT))
    return hits


@dataclass
class Hit:
    """One answer: the chunk, its cosine distance to the question (None before the model is
    ready), and whether that distance makes it a confident match."""
    chunk: IndexedChunk
    distance: float | None
    confident: bool
