"""Search: the question's vector ranking and a BM25 keyword ranking, fused by reciprocal
rank, without overlapping duplicates. Takes the question's vector; it embeds nothing."""
import fnmatch
import os
from pathlib import Path

from .config import CANDIDATES, CONFIDENT, K, MODE, NAME_WEIGHT, RRF_K
from .embed import ExportedModel, resolve_model
from .errors import UsageError
from .lock import is_locked
from .store import Store, find_index
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
    if problem == "not exported" and is_locked(folder):
        return store, None            # the build exports it in a moment: keywords until then
    if problem:
        exported.embedder()           # raises the one line that says how to repair it
    exported.preload()
    if store.embedded_count() and os.access(store.folder, os.W_OK):
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
    if not os.access(store.folder, os.W_OK):
        # Chroma cannot open a read-only folder; the embedding cache holds the same vectors
        return sorted(distances_for(store, qvec).items(), key=lambda kv: kv[1])[:n]
    ids, distances = store.collection.query(qvec.tolist(), n)
    best = {}
    for wid, dist in zip(ids, distances):
        cid = wid.rsplit(".", 1)[0]   # window id: chunk id + "." + its ordinal
        if cid not in best or dist < best[cid]:
            best[cid] = dist
    return sorted(best.items(), key=lambda kv: kv[1])


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


def fuse(rankings, rrf_k=RRF_K):
    """Chunk ids best first by reciprocal rank fusion of several rankings (each best first)."""
    scores = {}
    for ranking in rankings:
        for rank, cid in enumerate(ranking):
            scores[cid] = scores.get(cid, 0.0) + 1.0 / (rrf_k + rank + 1)
    return sorted(scores, key=lambda c: -scores[c])


def search(store, question, qvec, k=K, mode=MODE, path_glob=None):
    """The k best chunks as dicts, best first, without overlapping duplicates. qvec None
    (no model yet): keywords only, without distances."""
    n = CANDIDATES * (4 if path_glob else 1)
    vector = vector_ranking(store, qvec, n) if mode != "lexical" else []
    lexical = lexical_ranking(store, question, n) if mode != "vector" else []
    ranked = fuse([[cid for cid, _ in vector], lexical])
    distance = dict(vector)
    results = []
    for start in range(0, len(ranked), 50):
        part = ranked[start:start + 50]
        rows = store.chunk_rows(part)
        for cid in part:
            row = rows.get(cid)
            if row is None or path_glob and not fnmatch.fnmatch(row["file"], path_glob):
                continue
            if any(r["file"] == row["file"] and r["start_line"] <= row["end_line"]
                   and row["start_line"] <= r["end_line"] for r in results):
                continue                                   # overlaps a better hit
            results.append(row)
            if len(results) == k:
                break
        if len(results) == k:
            break
    missing = [r["id"] for r in results if r["id"] not in distance]
    if missing and qvec is not None:
        distance.update(distances_for(store, qvec, missing))
    for r in results:
        r["distance"] = round(distance.get(r["id"], 2.0), 4) if qvec is not None else None
        r["method"] = r["member"]
        r["confident"] = r["distance"] is not None and r["distance"] <= CONFIDENT
        del r["id"]
    return results
