"""Search: the members nearest the question's vector and the best by BM25 keywords, their
scores fused, adjusted by priors, without overlapping duplicates. It takes the question's
vector and a source of nearest windows (nearest.py); it embeds nothing and opens nothing."""
import functools
import re
from dataclasses import dataclass

from .chunkers import REST_MEMBER
from .config import CANDIDATES, CONFIDENT, DEMO_WEIGHT, K, KEYWORD_SCORES, MODE, NAME_SAID, \
    QUESTION_SHARE, SHORT_LINES, SHORT_WEIGHT, TEST_WEIGHT, VECTOR_SHARE
from .languages import language_for
from .keywords import Fts5Keywords, said_words
from .nearest import distances_for
from .store import IndexedChunk
from .text import query_shape


@dataclass
class Hit:
    """One answer: the chunk, its cosine distance to the question (None before the model is
    ready), whether that distance makes it a confident match, and whether it is stale."""
    chunk: IndexedChunk
    distance: float | None
    confident: bool
    stale: bool = False           # its file changed since, in a way the query could not absorb

    @property
    def pending(self):
        """Whether its vector is still to come (a <rest> chunk has none: keywords only)."""
        return self.distance is None and self.chunk.member != REST_MEMBER


def fuse(cosines, bm25, share=VECTOR_SHARE):
    """{chunk id: score}, a convex combination of each candidate's cosine to the question and
    its BM25 score, each as a fraction of the best one's. Unlike a fusion of ranks it keeps
    the margins: a member much nearer in meaning than the rest stays ahead of members that
    are a little better on both. A member with no vector yet (just written, or a build
    still embedding) counts as near as its keywords are good: never pushed out for lacking
    one."""
    top_cos = max(cosines.values(), default=0.0) or 1.0
    top_bm25 = max(bm25.values(), default=0.0) or 1.0
    scores = {}
    for cid in cosines.keys() | bm25.keys():
        keywords = bm25.get(cid, 0.0) / top_bm25
        meaning = max(0.0, cosines[cid] / top_cos) if cid in cosines else keywords
        scores[cid] = share * meaning + (1 - share) * keywords
    return scores


def vector_share(shape):
    """The share of meaning in the fusion of a search's candidates."""
    return QUESTION_SHARE if shape == "question" else VECTOR_SHARE


@functools.lru_cache(maxsize=65536)       # asked for every candidate of every question
def is_test(path, namespace=""):
    """Test code, by the conventions of its language."""
    lang = language_for(path)
    return lang is not None and lang.is_test(path, namespace)


ASKS_ABOUT_TESTS = re.compile(r"\btest(s|ing|ed)?\b", re.I)
ASKS_FOR_EXAMPLES = re.compile(r"\b(examples?|demos?|samples?|benchmarks?)\b", re.I)


@functools.lru_cache(maxsize=65536)
def in_demo_folder(path):
    lang = language_for(path)
    return lang is not None and lang.is_demo(path)


def is_demo(row):
    """Examples, demos, benchmarks, a script's main block: by the conventions of its language."""
    if row.kind == "module":                    # the only kind a main block can be
        lang = language_for(row.file)
        return lang is not None and lang.is_demo(row.file, row.kind, row.text)
    return in_demo_folder(row.file)


def rescore(scores, rows, question, shape):
    """The fused scores, adjusted by priors. A sentence that says what a member does, as its
    doc comment would, mostly says the member's name in words ("Checks if this subject must
    be soft-removed.": mustBeSoftRemoved), so when the caller reads the question so (shape
    'doc'), a member gains by the share of its name's words that it says (questions and
    keyword lists name members less reliably, and lose by it). Test code counts for less
    unless the question is about tests, and so do examples, demos and benchmarks (they
    show the library; they are not it) unless it asks for examples; so does a member of a
    few lines (short texts sit near many questions, in BM25 and in embedding space
    alike)."""
    said = said_words(question) if NAME_SAID and shape == "doc" else None
    tests_too = TEST_WEIGHT == 1 or ASKS_ABOUT_TESTS.search(question)
    demos_too = DEMO_WEIGHT == 1 or ASKS_FOR_EXAMPLES.search(question)
    for cid, row in rows.items():
        name = said and said_words(row.member or "")
        if name:
            scores[cid] += NAME_SAID * len(name & said) / len(name)
        if not tests_too and is_test(row.file, row.namespace):
            scores[cid] *= TEST_WEIGHT
        if not demos_too and is_demo(row):
            scores[cid] *= DEMO_WEIGHT
        if row.end_line - row.start_line < SHORT_LINES:
            scores[cid] *= SHORT_WEIGHT
    return scores


@functools.lru_cache(maxsize=64)
def path_matcher(glob):
    """Whether a file is one `--path` names: a folder or file name anywhere (`middleware`,
    `Relay.*`) or a glob (`src/*`, `Server/**/Net*`), read as `--exclude` and a .gitignore
    read theirs, so the same words select what they would leave out."""
    import pathspec
    return pathspec.GitIgnoreSpec.from_lines([glob]).match_file


def search(store, question, qvec, nearest, k=K, mode=MODE, path_glob=None, language=None,
           keywords=None, shape=None):
    """The k best chunks as Hits, best first, without overlapping duplicates, of files that
    match path_glob and of one language, if given. qvec None (no model yet): keywords only,
    without distances; a member with no vector yet has none either. nearest: a source of
    nearest windows; keywords: of BM25 scores (FTS5's, unless given); shape: how the
    question reads (text.SHAPES; query_shape's reading unless given)."""
    shape = shape or query_shape(question)
    wide = 4 if path_glob or language else 1
    vector = dict(nearest.nearest(qvec, CANDIDATES * wide)) \
        if mode != "lexical" and qvec is not None else {}
    # keywords score more members than become candidates: a member found by meaning alone
    # still gets its keyword score, since the fusion needs both halves of each candidate
    bm25 = (keywords or Fts5Keywords(store)).best(question, KEYWORD_SCORES * wide) \
        if mode != "vector" else {}
    candidates = vector.keys() | list(bm25)[:CANDIDATES * wide]
    if qvec is not None:
        vector.update(distances_for(store, qvec, [c for c in candidates if c not in vector]))
    share = {"vector": 1.0, "lexical": 0.0}.get(mode, vector_share(shape) if qvec is not None
                                                 else 0.0)
    rows = store.chunk_rows(candidates)
    # lines no member holds never get a vector: their meaning counts nothing, not as much
    # as their keywords (a member waiting for its vector's does); ranked as near as their
    # keywords, imports and fields took the places of members on every dev set
    cosines = {c: 1.0 - vector[c] if c in vector else 0.0 for c in candidates
               if c in vector or c in rows and rows[c].member == REST_MEMBER}
    scores = fuse(cosines, {c: bm25[c] for c in candidates if c in bm25}, share)
    scores = rescore(scores, rows, question, shape)
    results, in_path = [], path_matcher(path_glob) if path_glob else None
    for cid in sorted(scores, key=lambda c: -scores[c]):
        row = rows.get(cid)
        if row is None or in_path and not in_path(row.file) or \
                language and row.language != language:
            continue
        if any(r.file == row.file and r.start_line <= row.end_line and
               row.start_line <= r.end_line for r in results):
            continue                                   # overlaps a better hit
        results.append(row)
        if len(results) == k:
            break
    hits = []
    for r in results:
        dist = round(vector[r.id], 4) if r.id in vector else None  # None: no vector yet
        hits.append(Hit(r, dist, dist is not None and dist <= CONFIDENT))
    return hits
