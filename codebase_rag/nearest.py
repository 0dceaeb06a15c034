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
DEAD_KEPT = 1000             # dead rows kept in memory (MemoryNearest), and their share
DEAD_SHARE = 0.25            # of all rows, before the live ones are copied anew


def distances_for(store, qvec, chunk_ids):
    """Cosine distance of the question to each chunk's closest window, from the embedding
    cache, for chunks that only the lexical ranking found (one with no vector yet has none)."""
    return best_per_chunk((cid, 1.0 - cos) for cid, cos in
                          scan(store.window_vectors(chunk_ids), qvec))


class MemoryNearest:
    """Every window's vector in memory. Before each search it catches up with the index by
    what is new since it last looked (windows and vectors only ever get higher seqs), and by
    which windows are gone, so it stays right while hooks, queries and builds write. What
    is new is appended (room doubles as it fills) and what is gone is marked dead, so a
    search after a write costs what the write added, not a copy of every window; the dead
    rows are dropped once they are a quarter of them.
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
        self.vectors = {}                     # window seq -> its row of self.matrix
        self.matrix = np.zeros((0, 0), dtype=np.float32)  # rows [0, used) filled, then room
        self.used = 0
        self.dead = np.zeros(0, dtype=bool)   # rows whose window is gone, or re-embedded
        self.chunk_of = []                    # row of self.matrix -> chunk id
        self.version = None
        self.basis = self.reduced = None      # 384 x 128; self.matrix @ self.basis

    def sync(self):
        db = self.store.db
        version = self.store.version()
        if version == self.version:
            return
        self.version = version
        # a window gone leaves fewer up to the highest seq read. Both are read from the
        # smallest index, not the table (a range of seqs walks every window's row: 6x)
        if db.execute("SELECT (SELECT COUNT(*) FROM windows) - (SELECT COUNT(*) FROM windows "
                      "WHERE seq > ?)", (self.seen,)).fetchone()[0] != len(self.rows):
            live = db.execute("SELECT group_concat(seq) FROM windows").fetchone()[0]
            live = np.fromstring(live or "0", dtype=np.int64, sep=",")   # 10x a row each
            known = np.fromiter(self.rows, dtype=np.int64, count=len(self.rows))
            for seq in known[~np.isin(known, live, assume_unique=True)].tolist():
                self.by_key.get(self.rows.pop(seq)[1], set()).discard(seq)
                self.bury(seq)
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
        added = sorted(new_vectors)
        for seq in added:
            self.bury(seq)                                 # its older vector, if any
        if added:
            self.append(added, np.frombuffer(b"".join(new_vectors[s] for s in added),
                                             dtype=np.float32).reshape(len(added), -1))
        if self.dead[:self.used].sum() > max(DEAD_KEPT, self.used * DEAD_SHARE):
            self.compact()

    def bury(self, seq):
        row = self.vectors.pop(seq, None)
        if row is not None:
            self.dead[row] = True

    def append(self, seqs, fresh):
        """fresh (a row per seq) after the rows in use, with room made by doubling."""
        end = self.used + len(seqs)
        if end > len(self.matrix) or self.matrix.shape[1] != fresh.shape[1]:
            room = max(end, 2 * len(self.matrix), 1024)
            self.matrix = grown(self.matrix, self.used, room, fresh.shape[1])
            self.dead = np.concatenate([self.dead[:self.used],
                                        np.zeros(room - self.used, dtype=bool)])
            if self.reduced is not None:
                self.reduced = grown(self.reduced, self.used, room, REDUCED_DIM)
        self.matrix[self.used:end] = fresh
        self.vectors.update((seq, self.used + i) for i, seq in enumerate(seqs))
        self.chunk_of.extend(self.rows[seq][0] for seq in seqs)
        if self.reduced is not None:
            self.reduced[self.used:end] = fresh @ self.basis
        self.used = end
        if self.basis is None and self.used - self.dead[:self.used].sum() > REDUCE_ABOVE:
            self.compact()
            sample = self.matrix[:self.used:self.used // 20_000 + 1]
            self.basis = np.ascontiguousarray(
                np.linalg.svd(sample, full_matrices=False)[2][:REDUCED_DIM].T)
            self.reduced = grown(self.matrix[:self.used] @ self.basis, self.used,
                                 len(self.matrix), REDUCED_DIM)

    def compact(self):
        """The live rows only, in seq order (ties between equal cosines go as the exact scan
        sends them: to the lower seq)."""
        order = sorted(self.vectors)
        rows = np.array([self.vectors[seq] for seq in order], dtype=np.int64)
        room = len(self.matrix)
        self.matrix = grown(self.matrix[rows], len(rows), room, self.matrix.shape[1])
        if self.reduced is not None:
            self.reduced = grown(self.reduced[rows], len(rows), room, REDUCED_DIM)
        self.dead = np.zeros(room, dtype=bool)
        self.chunk_of = [self.rows[seq][0] for seq in order]
        self.vectors = {seq: i for i, seq in enumerate(order)}
        self.used = len(rows)

    def nearest(self, qvec, n):
        self.sync()
        if not self.vectors:
            return []
        many = n * 8                                  # a member's windows count once
        dead = self.dead[:self.used]
        if self.reduced is None:
            rows = np.arange(self.used)
            cosines = self.matrix[:self.used] @ qvec
            cosines[dead] = -np.inf
        else:
            shortlist = self.reduced[:self.used] @ (qvec @ self.basis)
            shortlist[dead] = -np.inf
            rows = np.sort(best_rows(shortlist, many * SHORTLIST))
            cosines = self.matrix[rows] @ qvec
            cosines[dead[rows]] = -np.inf
        best = best_per_chunk((self.chunk_of[rows[i]], 1.0 - float(cosines[i]))
                              for i in best_rows(cosines, many))
        return sorted(best.items(), key=lambda kv: kv[1])[:n]


def grown(matrix, used, room, width):
    """A matrix of `room` rows and `width` columns that starts with matrix's first `used`."""
    out = np.zeros((room, width), dtype=np.float32)
    if used:
        out[:used] = matrix[:used]
    return out
