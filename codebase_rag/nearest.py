"""Nearest: where a question's vector finds the windows nearest in meaning. Three sources of
one shape, each anything with
    nearest(qvec, n)   [(chunk id, distance)] of the n chunks whose windows are nearest
- ChromaNearest: Chroma's HNSW index, for a reader that asks once (query.py);
- CacheScan: an exact scan of the embedding cache (vectors.f32, SQLite for what it lacks),
  for a reader that must not open Chroma (a writer is rewriting its files, or the folder is
  read-only);
- MemoryNearest: every vector in memory, kept in step with the index, for a reader that
  lives long (the MCP server): a search is one matrix product.
"""
import numpy as np

from . import flat as flatfile


def best_per_chunk(pairs):
    """{chunk id: its nearest window's distance} from (chunk id, distance) pairs. A distance
    outside [0, 2] by more than rounding is no cosine distance (a damaged vector): left out."""
    best = {}
    for cid, dist in pairs:                   # one comparison a pair: this loop is hot
        if -1e-3 <= dist < best.get(cid, 2.001):
            best[cid] = dist
    return {cid: d if 0.0 <= d <= 2.0 else min(max(d, 0.0), 2.0) for cid, d in best.items()}


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
            ids, distances = self.store.vectors.collection.query(qvec.tolist(), windows)
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


def best_rows(cosines, many):
    """Indices of the `many` highest cosines, best first, a tie to the lower index: the same
    rows however the cosines were split into blocks."""
    many = min(many, len(cosines))
    if not many:
        return np.zeros(0, dtype=np.int64)
    floor = np.partition(cosines, len(cosines) - many)[len(cosines) - many]
    rows = np.flatnonzero(cosines >= floor)
    return rows[np.lexsort((rows, -cosines[rows]))][:many]


class CacheScan:
    """An exact scan of the embedding cache: the same vectors as Chroma, for a reader that
    must not open Chroma (a writer is rewriting its files, or the folder is read-only).
    vectors.f32 is a copy of SQLite's rows: the rows it shortlists are checked against
    SQLite's, and if one differs (or the file holds a row that is no unit vector) this
    question is answered from SQLite alone and the file is marked for the next writer to
    write afresh."""

    def __init__(self, store):
        self.store = store

    def nearest(self, qvec, n):
        # the 16n nearest cached vectors (a join with the windows costs 4x), then the
        # windows of their keys; some keys no window has any more, and a long member's
        # windows count once: 16n keys for n chunks
        many = n * 16
        flat, path = self.store.vectors.readable_flat()
        top, from_file = self.shortlist(qvec, many, flat, path)
        if top is None or not self.agrees(top, from_file, path):
            self.store.vectors.mark_flat_damaged()
            top, _ = self.shortlist(qvec, many, 0, path)
        top = {key: cosine for cosine, _, key in top}       # best first, at most many
        best = best_per_chunk((cid, 1.0 - top[key]) for key, cid in self.store.key_chunks(top))
        return sorted(best.items(), key=lambda kv: kv[1])[:n]

    def shortlist(self, qvec, many, flat, path):
        """([(cosine, seq, key)] of the `many` nearest cached vectors, the highest seq read
        from vectors.f32): rows up to flat from the file (SQLite's rows cost 0.8 s of Python
        at 299,000), the rest from SQLite. None if the file holds a row that is no vector."""
        top, blocks = [], None
        try:
            blocks = flatfile.blocks(path, flat)
            if blocks is not None:
                cosines = np.concatenate([m @ qvec for m in blocks])
                if not np.all(np.abs(cosines) <= 1.001 * np.linalg.norm(qvec)):   # NaN too
                    return None, 0
                top = self.live(cosines, many)
        except OSError:                      # cut short while read: SQLite has every row
            blocks = None
        for rows in self.store.vectors.vector_blocks(flat if blocks is not None else 0):
            cosines = matrix_of(rows) @ qvec                    # memory bounded by one block
            top += [(float(cosines[i]), rows[i][0], rows[i][1]) for i in best_rows(cosines, many)]
            top = sorted(top, key=lambda t: (-t[0], t[1]))[:many]
        return top, flat if blocks is not None else 0

    def agrees(self, top, from_file, path):
        """Whether the shortlisted rows read from vectors.f32 are SQLite's, byte for byte (a
        row the cache replaced or dropped since is not compared)."""
        cached = self.store.vectors.vectors_at([seq for _, seq, _ in top if seq <= from_file])
        rows = flatfile.rows_at(path, cached)
        return all(rows.get(seq) == blob for seq, blob in cached.items())

    def live(self, cosines, many):
        """[(cosine, seq, key)] of the file's `many` best rows whose seq the cache still has
        (a deleted or replaced key's row stays in the file, a never-written one is zeros)."""
        look = many
        while True:
            seqs = best_rows(cosines, look).tolist()
            keys = self.store.vectors.seq_keys(seqs)
            live = [(float(cosines[s]), s, keys[s]) for s in seqs if s in keys]
            if len(live) >= many or look >= len(cosines):
                return live[:many]
            look *= 4


REDUCE_ABOVE = 100_000       # windows: below, the whole product takes under 10 ms
REDUCED_DIM = 128            # of 384: a third of the memory read
SHORTLIST = 16               # times the rows asked that the reduced product shortlists


def distances_for(store, qvec, chunk_ids):
    """Cosine distance of the question to each chunk's closest window, from the embedding
    cache, for chunks that only the lexical ranking found (one with no vector yet has none)."""
    return best_per_chunk((cid, 1.0 - cos) for cid, cos in
                          scan(store.window_vectors(chunk_ids), qvec))


class MemoryNearest:
    """Every window's vector in memory. Before each search it catches up with the index by
    what is new since it last looked (windows and vectors only ever get higher seqs), and by
    which windows are gone, so it stays right while hooks, queries and builds write.
    Above REDUCE_ABOVE windows the product of 384 dimensions is bound by memory reads (28
    ms at 300,000): each vector also has its projection on the vectors' own 128 main
    directions, whose product shortlists the rows that the whole vectors then rank. On real
    MiniLM vectors (jellyfin, 400 questions, the shortlist's share as at 300,000 windows)
    it finds every one of the exact scan's nearest members."""

    def __init__(self, store):
        self.store = store
        self.seen = self.seen_vec = 0         # the highest seqs read
        self.rows = {}                        # window seq -> (chunk id, cache key)
        self.by_key = {}                      # cache key -> window seqs that have it
        self.vectors = {}                     # window seq -> row of self.matrix
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.chunk_of = []                    # row of self.matrix -> chunk id
        self.version = None
        self.basis = self.reduced = None      # 384 x 128; self.matrix @ self.basis

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
        kept = [self.vectors[s] for s in keep]
        old = self.matrix[kept] if keep else \
            np.zeros((0, self.matrix.shape[1] if self.matrix.size else 0), dtype=np.float32)
        added = sorted(new_vectors)
        fresh = np.frombuffer(b"".join(new_vectors[s] for s in added), dtype=np.float32) \
            .reshape(len(added), -1) if added else None
        self.matrix = old if fresh is None else fresh if not len(old) else np.vstack([old, fresh])
        if self.basis is None and len(self.matrix) > REDUCE_ABOVE:
            sample = self.matrix[::len(self.matrix) // 20_000 + 1]
            self.basis = np.ascontiguousarray(
                np.linalg.svd(sample, full_matrices=False)[2][:REDUCED_DIM].T)
            self.reduced = self.matrix @ self.basis
        elif self.basis is not None:
            self.reduced = np.vstack([self.reduced[kept]] + ([fresh @ self.basis] if added else []))
        order = keep + added
        self.vectors = {seq: i for i, seq in enumerate(order)}
        self.chunk_of = [self.rows[seq][0] for seq in order]

    def nearest(self, qvec, n):
        self.sync()
        if not len(self.chunk_of):
            return []
        many = n * 8                                  # a member's windows count once
        if self.reduced is None:
            rows = np.arange(len(self.matrix))
            cosines = self.matrix @ qvec
        else:
            rows = np.sort(best_rows(self.reduced @ (qvec @ self.basis), many * SHORTLIST))
            cosines = self.matrix[rows] @ qvec
        best = best_per_chunk((self.chunk_of[rows[i]], 1.0 - float(cosines[i]))
                              for i in best_rows(cosines, many))
        return sorted(best.items(), key=lambda kv: kv[1])[:n]
