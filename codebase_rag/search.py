"""Search: the question's vector ranking and a BM25 keyword ranking, fused by reciprocal
rank, adjusted by two priors, without overlapping duplicates. It takes the question's
vector and a source of nearest windows (nearest.py); it embeds nothing and opens nothing."""
import fnmatch
import functools
import re
from dataclasses import dataclass

from .config import CANDIDATES, CONFIDENT, K, MODE, NAME_WEIGHT, RRF_K, SHORT_LINES, \
    SHORT_WEIGHT, TEST_WEIGHT
from .languages import language_for
from .nearest import distances_for
from .store import IndexedChunk
from .text import fts_query


@dataclass
class Hit:
    """One answer: the chunk, its cosine distance to the question (None before the model is
    ready), whether that distance makes it a confident match, and whether it is stale."""
    chunk: IndexedChunk
    distance: float | None
    confident: bool
    stale: bool = False           # its file changed since, in a way the query could not absorb


def lexical_ranking(store, question, n):
    """[chunk id] best first, by BM25 over identifier-split text."""
    match = fts_query(question)
    return store.lexical_search(match, NAME_WEIGHT, n) if match else []


def fuse(rankings, rrf_k=RRF_K):
    """{chunk id: score} by reciprocal rank fusion of several rankings (each best first)."""
    scores = {}
    for ranking in rankings:
        for rank, cid in enumerate(ranking):
            scores[cid] = scores.get(cid, 0.0) + 1.0 / (rrf_k + rank + 1)
    return scores


@functools.lru_cache(maxsize=65536)       # asked for every candidate of every question
def is_test(path):
    """Test code, by the conventions of its language."""
    lang = language_for(path)
    return lang is not None and lang.is_test(path)


ASKS_ABOUT_TESTS = re.compile(r"\btest(s|ing|ed)?\b", re.I)


def rescore(scores, rows, question):
    """The fused scores, adjusted by priors: test code counts for less unless the question
    is about tests; so does a member of a few lines (short texts sit near many questions,
    in BM25 and in embedding space alike)."""
    tests_too = TEST_WEIGHT == 1 or ASKS_ABOUT_TESTS.search(question)
    for cid, row in rows.items():
        if not tests_too and is_test(row.file):
            scores[cid] *= TEST_WEIGHT
        if row.end_line - row.start_line < SHORT_LINES:
            scores[cid] *= SHORT_WEIGHT
    return scores


def search(store, question, qvec, nearest, k=K, mode=MODE, path_glob=None, language=None):
    """The k best chunks as Hits, best first, without overlapping duplicates, of files that
    match path_glob and of one language, if given. qvec None (no model yet): keywords only,
    without distances; a member with no vector yet has none either. nearest: a source of
    nearest windows."""
    n = CANDIDATES * (4 if path_glob or language else 1)
    vector = nearest.nearest(qvec, n) if mode != "lexical" and qvec is not None else []
    lexical = lexical_ranking(store, question, n) if mode != "vector" else []
    scores = fuse([[cid for cid, _ in vector], lexical])
    if vector and store.embedded_count() < store.count("windows"):
        # a member with no vector yet (just written, or a build still embedding) ranks as
        # if its vector placed it where its keywords do: never pushed out for lacking one
        have = store.chunks_with_vectors(lexical)
        for rank, cid in enumerate(lexical):
            if cid not in have:
                scores[cid] += 1.0 / (RRF_K + rank + 1)
    rows = store.chunk_rows(scores)
    scores = rescore(scores, rows, question)
    distance = dict(vector)
    results = []
    for cid in sorted(scores, key=lambda c: -scores[c]):
        row = rows.get(cid)
        if row is None or path_glob and not fnmatch.fnmatch(row.file, path_glob) or \
                language and row.language != language:
            continue
        if any(r.file == row.file and r.start_line <= row.end_line and
               row.start_line <= r.end_line for r in results):
            continue                                   # overlaps a better hit
        results.append(row)
        if len(results) == k:
            break
    missing = [r.id for r in results if r.id not in distance]
    if missing and qvec is not None:
        distance.update(distances_for(store, qvec, missing))
    hits = []
    for r in results:
        dist = round(distance[r.id], 4) if r.id in distance else None  # None: no vector yet
        hits.append(Hit(r, dist, dist is not None and dist <= CONFIDENT))
    return hits
