"""Nearest: where a question's vector finds the windows nearest in meaning. Three sources of
one shape, each anything with
    nearest(qvec, n)   [(chunk id, distance)] of the n chunks whose windows are nearest
- ChromaNearest: Chroma's HNSW index, for a reader that asks once (query.py);
- CacheScan: an exact scan of the embedding cache, for a reader that must not open Chroma
  (a writer is rewriting its files, or the folder is read-only);
- MemoryNearest: every vector in memory, kept in step with the index, for a reader that
  lives long (the MCP server): a search is one matrix product.
"""
import numpy as np


def best_per_chunk(pairs):
    """{chunk id: its nearest window's distance} from (chunk id, distance) pairs."""
    best = {}
    for cid, dist in pairs:
        if dist < best.get(cid, 3.0):
            best[cid] = dist
    return best


class ChromaNearest:
    """Chroma's HNSW index over every embedded window, and an exact scan of the few windows
    embedded since the last write (a query embeds a changed file's windows on the spot)."""

    def __init__(self, store):
        self.store = store

    def nearest(self, qvec, n):
        fresh = [(cid, 1.0 - float(dist)) for cid, dist in scan(self.store.fresh_vectors(), qvec)]
        if not self.store.embedded_count():
            return sorted(best_per_chunk(fresh).items(), key=lambda kv: kv[1])[:n]
        for windows in (n, n * 8):
            # a member of many windows can fill the first n; then look further, once
            ids, distances = self.store.collection.query(qvec.tolist(), windows)
            chunk_of = self.store.window_chunks(ids)
            best = best_per_chunk([(chunk_of[w], d) for w, d in zip(ids, distances)
                                   if w in chunk_of] + fresh)
            if len(best) >= n // 2 or len(ids) < windows:
                break
        return sorted(best.items(), key=lambda kv: kv[1])[:n]


def matrix_of(rows):
    """The vectors of rows that end with a vector blob, one per row of a matrix."""
    return np.frombuffer(b"".join(r[-1] for r in rows), dtype=np.float32).reshape(len(rows), -1)


def scan(rows, qvec):
    """[(chunk id, cosine)] for (chunk id, vector blob) rows."""
    if not rows:
        return []
    return list(zip((cid for cid, _ in rows), (matrix_of(rows) @ qvec).tolist()))


def top_rows(cosines, many):
    """Indices of the `many` highest cosines, in no particular order."""
    many = min(many, len(cosines))
    return np.argpartition(-cosines, many - 1)[:many] if many else []


class CacheScan:
    """An exact scan of the embedding cache: the same vectors as Chroma, for a reader that
    must not open Chroma (a writer is rewriting its files, or the folder is read-only)."""

    def __init__(self, store):
        self.store = store

    def nearest(self, qvec, n):
        # the cache in its own order (a join with the windows costs 4x), then the windows
        # of the nearest keys; some keys no window has any more, and a long member's
        # windows count once: 16n keys for n chunks
        top = {}                                           # cache key -> cosine
        for rows in self.store.vector_blocks():            # memory bounded by one block
            cosines = matrix_of(rows) @ qvec
            top.update((rows[i][1], float(cosines[i])) for i in top_rows(cosines, n * 16))
            top = dict(sorted(top.items(), key=lambda kv: -kv[1])[:n * 16])
        best = best_per_chunk((cid, 1.0 - top[key]) for key, cid in self.store.key_chunks(top))
        return sorted(best.items(), key=lambda kv: kv[1])[:n]


def distances_for(store, qvec, chunk_ids):
    """Cosine distance of the question to each chunk's closest window, from the embedding
    cache, for chunks that only the lexical ranking found (one with no vector yet has none)."""
    return best_per_chunk((cid, 1.0 - cos) for cid, cos in
                          scan(store.window_vectors(chunk_ids), qvec))


class MemoryNearest:
    """Every window's vector in memory. Before each search it catches up with the index by
    what is new since it last looked (windows and vectors only ever get higher seqs), and by
    which windows are gone, so it stays right while hooks, queries and builds write."""

    def __init__(self, store):
        self.store = store
        self.seen = self.seen_vec = 0         # the highest seqs read
        self.rows = {}                        # window seq -> (chunk id, cache key)
        self.by_key = {}                      # cache key -> window seqs that have it
        self.vectors = {}                     # window seq -> row of self.matrix
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.chunk_of = []                    # row of self.matrix -> chunk id
        self.version = None

    def sync(self):
        db = self.store.db
        version = self.store.version()
        if version == self.version:
            return
        self.version = version
        live = {seq for (seq,) in db.execute("SELECT seq FROM windows")}
        for seq in set(self.rows) - live:                 # windows gone
            self.by_key.get(self.rows.pop(seq)[1], set()).discard(seq)
            self.vectors.pop(seq, None)
        new_vectors = {}
        for seq, chunk, key, vec in db.execute(
                "SELECT w.seq, w.chunk, w.key, v.vec FROM windows w LEFT JOIN vectors v "
                "ON v.key = w.key WHERE w.seq > ?", (self.seen,)):
            self.rows[seq] = (chunk, key)
            self.by_key.setdefault(key, set()).add(seq)
            if vec is not None:
                new_vectors[seq] = vec
            self.seen = max(self.seen, seq)
        for vseq, key, vec in db.execute("SELECT seq, key, vec FROM vectors WHERE seq > ?",
                                         (self.seen_vec,)):
            for seq in self.by_key.get(key, ()):          # a new vector, or a new one
                new_vectors[seq] = vec                     # for a key (a repaired cache)
            self.seen_vec = max(self.seen_vec, vseq)
        keep = sorted(seq for seq in self.vectors if seq in self.rows and seq not in new_vectors)
        old = self.matrix[[self.vectors[s] for s in keep]] if keep else \
            np.zeros((0, self.matrix.shape[1] if self.matrix.size else 0), dtype=np.float32)
        added = sorted(new_vectors)
        fresh = np.frombuffer(b"".join(new_vectors[s] for s in added), dtype=np.float32) \
            .reshape(len(added), -1) if added else None
        self.matrix = old if fresh is None else fresh if not len(old) else np.vstack([old, fresh])
        order = keep + added
        self.vectors = {seq: i for i, seq in enumerate(order)}
        self.chunk_of = [self.rows[seq][0] for seq in order]

    def nearest(self, qvec, n):
        self.sync()
        if not len(self.chunk_of):
            return []
        cosines = self.matrix @ qvec
        best = best_per_chunk((self.chunk_of[i], 1.0 - float(cosines[i]))
                              for i in top_rows(cosines, n * 8))   # a member's windows count once
        return sorted(best.items(), key=lambda kv: kv[1])[:n]
