"""Keywords: the members that score best by BM25 on the question's words. Two sources of
one shape, each anything with
    best(question, n)   {chunk id: BM25 score, higher is better} of the n best, best first
- Fts5Keywords: SQLite's FTS5 index, for a reader that asks once (query.py);
- MemoryKeywords: that index's postings in memory, kept in step with it, for a reader that
  lives long (the MCP server). FTS5's bm25() looks up the length of every row that holds
  any of the words, and a common word is in many ("new" is in 41% of the members of a
  137,000-member index: 35-45 ms a question). Here the lengths are one array, and the scores
  are FTS5's own: the same tokens (FTS5's tokenizer made them), the same formula, added up
  in the same order.
said_words: a text's words as FTS5 stems them, to find a member's name in a sentence.
"""
import functools
import math
import sqlite3
import threading

import numpy as np

from .config import NAME_WEIGHT
from .store import TOKENIZER
from .text import fts_query, fts_words

K1, B = 1.2, 0.75                   # FTS5's bm25() constants
REREAD = 0.05                       # read every posting again once this share of rows is new


def fts5_tokenizer():
    """An in-memory FTS5 table read by the index's tokenizer (t), and its tokens (v)."""
    con = sqlite3.connect(":memory:")
    con.executescript(f"CREATE VIRTUAL TABLE t USING fts5(name, body, tokenize='{TOKENIZER}');"
                      f"CREATE VIRTUAL TABLE v USING fts5vocab(t, instance);")
    return con


_local = threading.local()


@functools.lru_cache(maxsize=65536)       # asked for every candidate's name
def said_words(text):
    """A text's keywords as FTS5's porter tokenizer stems them ('Renames', 'renaming' and
    'rename' -> 'renam'), to find a name's words in a sentence."""
    con = getattr(_local, "con", None)
    if con is None:
        con = _local.con = fts5_tokenizer()
    con.execute("INSERT INTO t(name, body) VALUES (?, '')", (" ".join(fts_words(text)),))
    words = frozenset(term for (term,) in con.execute("SELECT DISTINCT term FROM v"))
    con.execute("DELETE FROM t")
    return words


class Fts5Keywords:
    def __init__(self, store):
        self.store = store

    def best(self, question, n):
        match = fts_query(question)
        return dict(self.store.db.execute(              # ranked before the join: 2x faster
            "SELECT c.id, -score FROM (SELECT rowid AS hit, bm25(lexical, ?, 1.0) AS score "
            "FROM lexical WHERE lexical MATCH ? ORDER BY score LIMIT ?) JOIN chunks c ON "
            "c.rowid = hit ORDER BY score", (NAME_WEIGHT, match, n))) if match else {}


class MemoryKeywords:
    """Every token's postings (the rows that hold it, and how often in each column), as
    FTS5 holds them when first read, then the rows written since. A chunk's rowid is never
    used again (store.py), so what is new is what lies above the highest rowid read."""

    def __init__(self, store, background=False):
        """background: read every posting in a thread of its own (a first search of a big
        index would wait for it: a minute at 131,000 windows), FTS5 answering meanwhile
        with the same scores."""
        self.store, self.version, self.background = store, None, background
        self.tokenizer = fts5_tokenizer()               # FTS5's tokens, of text of ours
        self.tokens_of_word = {}
        self.read = 0                 # rows read whole at the last full read
        self.loading = None           # (thread, {"state": ...} or {"error": ...}) under way

    def best(self, question, n):
        tokens = self.tokens(fts_words(question))
        if tokens is None or not self.sync():   # a word FTS5 reads as a phrase of several
            return Fts5Keywords(self.store).best(question, n)   # tokens; or still reading
        rows = max(self.rows, 1)
        avgdl = self.total / rows
        score = np.zeros(len(self.length))
        for token in tokens:          # in the question's order, as FTS5 adds them up
            hits, name, body = self.postings_of(token)
            if not len(hits):
                continue
            idf = math.log((rows - len(hits) + 0.5) / (len(hits) + 0.5))
            freq = name * NAME_WEIGHT + body
            score[hits] += (idf if idf > 0 else 1e-6) * (
                (freq * (K1 + 1.0)) / (freq + K1 * (1 - B + B * self.length[hits] / avgdl)))
        found = np.flatnonzero(score)
        if len(found) > n:
            found = found[score[found] >= np.partition(score[found], len(found) - n)[-n]]
        found = found[np.lexsort((found, -score[found]))][:n].tolist()
        ids = dict(self.store.db.execute(
            f"SELECT rowid, id FROM chunks WHERE rowid IN ({','.join('?' * len(found))})", found))
        return {ids[r]: float(score[r]) for r in found if r in ids}

    def tokens(self, words):
        """The one token FTS5 makes of each word, or None if some word makes several."""
        new = [w for w in words if w not in self.tokens_of_word]
        if new:
            if len(self.tokens_of_word) > 50_000:
                self.tokens_of_word.clear()
            made = {}
            for token, row, _ in self.tokenize([(i, w, "") for i, w in enumerate(new)]):
                made.setdefault(new[row], []).append(token)
            self.tokens_of_word.update((w, made.get(w, [])) for w in new)
        made = [self.tokens_of_word[w] for w in words]
        return None if any(len(t) > 1 for t in made) else [t[0] for t in made if t]

    def tokenize(self, rows):
        """[(token, rowid, column)] of (rowid, name, body) rows, in order, as FTS5 makes them."""
        self.tokenizer.executemany("INSERT INTO t(rowid, name, body) VALUES (?, ?, ?)", rows)
        made = self.tokenizer.execute("SELECT term, doc, col FROM v ORDER BY doc, col, offset"
                                      ).fetchall()
        self.tokenizer.execute("DELETE FROM t")
        return made

    def postings_of(self, token):
        """(rows, name counts, body counts) of the live rows that hold token."""
        i = self.span.get(token)
        at = slice(self.starts[i], self.starts[i + 1]) if i is not None else slice(0, 0)
        hits, name, body = self.hits[at], self.name[at], self.body[at]
        if token in self.added:
            more = np.array(self.added[token], dtype=np.int64).reshape(-1, 3)
            hits, name, body = (np.concatenate([a, m]) for a, m in zip((hits, name, body), more.T))
        live = self.alive[hits]
        return hits[live], name[live], body[live]

    def sync(self):
        """Catch up with the index: rows gone, rows new, or everything read again. False
        while every posting is being read in the background."""
        if self.loading is not None:
            thread, got = self.loading
            if thread.is_alive():
                return False
            self.loading = None
            if "error" in got:                              # read here, as without a thread
                self.background = False
            else:
                self.__dict__.update(got["state"])
            self.version = None                             # then take in what came since
        version = self.store.version()
        if version == self.version:
            return True
        self.version = version
        db = self.store.db
        db.execute("BEGIN")                                 # one snapshot of the index
        try:
            new = self.read and db.execute("SELECT count(*) FROM chunks WHERE rowid > ?",
                                           (self.seen,)).fetchone()[0]
            if not self.read or self.new_rows + new > self.read * REREAD:
                if not self.background:
                    self.__dict__.update(read_all(db))
                    return True
                got = {}
                thread = threading.Thread(target=self.read_apart, args=(got,), daemon=True)
                self.loading, self.version = (thread, got), None
                thread.start()
                return False
            # read from the smallest index, not the table (whose rows hold every text)
            if db.execute("SELECT (SELECT count(*) FROM chunks) - ?", (new,)
                          ).fetchone()[0] != self.rows:
                rows = np.fromstring(db.execute("SELECT group_concat(rowid) FROM chunks")
                                     .fetchone()[0] or "0", dtype=np.int64, sep=",")
                live = np.zeros(len(self.alive), dtype=bool)
                live[rows[rows <= self.seen]] = True
                gone = self.alive & ~live
                self.rows -= int(gone.sum())
                self.total -= int(self.length[gone].sum())
                self.alive &= live
            if new:
                self.read_new(db)
        finally:
            db.execute("COMMIT")
        return True

    def read_apart(self, got):
        """read_all on a connection of this thread's own, into got."""
        try:
            db = sqlite3.connect(f"{(self.store.folder / 'index.sqlite').absolute().as_uri()}"
                                 f"?mode=ro", uri=True)
            try:
                db.execute("BEGIN")
                got["state"] = read_all(db)
            finally:
                db.close()
        except Exception as e:      # sqlite3's or numpy's: the next search reads it itself
            got["error"] = e

    def read_new(self, db):
        """The rows above the highest read, through our own FTS5 tokenizer."""
        rows = db.execute("SELECT rowid, name, body FROM lexical WHERE rowid > ?",
                          (self.seen,)).fetchall()
        counts = {}
        for token, row, column in self.tokenize(rows):
            count = counts.setdefault((token, row), [0, 0])
            count[column == "body"] += 1
        top = max(r for r, _, _ in rows)
        grow = top + 1 - len(self.alive)
        if grow > 0:
            self.alive = np.concatenate([self.alive, np.zeros(grow, dtype=bool)])
            self.length = np.concatenate([self.length, np.zeros(grow)])
        for (token, row), (name, body) in counts.items():
            self.added.setdefault(token, []).append((row, name, body))
            self.length[row] += name + body
        new = [r for r, _, _ in rows]
        self.alive[new] = True
        self.rows += len(new)
        self.new_rows += len(new)
        self.total += int(self.length[new].sum())
        self.seen = top


def read_all(db):
    """Every token's postings, from FTS5's own index: each token's instances (the row and
    column of each occurrence), parsed a batch of tokens at a time (a numpy array per
    token, or all at once, costs 40-90 MB more memory on jellyfin); as MemoryKeywords'
    fields."""
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.lexical_tokens USING "
               "fts5vocab(main, lexical, instance)")
    span, parts, batch, size = {}, [], [], 0
    for token, codes in db.execute("SELECT term, group_concat(doc * 2 + (col = 'body')) "
                                   "FROM temp.lexical_tokens GROUP BY term"):
        span[token] = len(span)
        batch.append(codes)
        size += len(codes)
        if size > 2 ** 21:
            parts.append(postings(batch, len(span) - len(batch)))
            batch, size = [], 0
    parts.append(postings(batch, len(span) - len(batch)))
    token, hits, name, body = (np.concatenate([p[i] for p in parts]) for i in range(4))
    del parts
    seen = db.execute("SELECT ifnull(max(rowid), 0) FROM chunks").fetchone()[0]
    rows = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
    length = np.bincount(hits, name + body.astype(np.float64), minlength=seen + 1)
    alive = np.zeros(seen + 1, dtype=bool)
    alive[[r for (r,) in db.execute("SELECT rowid FROM chunks")]] = True
    return dict(span=span, hits=hits, name=name, body=body, seen=seen, rows=rows, read=rows,
                starts=np.searchsorted(token, np.arange(len(span) + 1)), length=length,
                total=int(length.sum()), alive=alive, added={}, new_rows=0)


def postings(batch, first):
    """(token, row, name count, body count) of each (token, row) of a batch of tokens
    numbered from first, given each token's instances as "row * 2 + is body,..."."""
    if not batch:
        return (np.zeros(0, dtype=np.int32),) * 2 + (np.zeros(0, dtype=np.uint16),) * 2
    code = np.fromstring(",".join(batch), dtype=np.int64, sep=",")
    token = np.repeat(np.arange(first, first + len(batch)), [c.count(",") + 1 for c in batch])
    if np.any((token[1:] == token[:-1]) & (code[1:] < code[:-1])):   # FTS5 reads in order
        order = np.lexsort((code, token))
        token, code = token[order], code[order]
    row = code >> 1
    starts = np.flatnonzero(np.r_[True, (row[1:] != row[:-1]) | (token[1:] != token[:-1])])
    body = np.add.reduceat(code & 1, starts)
    name = np.diff(np.r_[starts, len(code)]) - body
    counts = np.uint16 if max(name.max(initial=0), body.max(initial=0)) < 2 ** 16 else np.int32
    return (token[starts].astype(np.int32), row[starts].astype(np.int32), name.astype(counts),
            body.astype(counts))
