"""Cache: the part of the index folder that holds vectors. The embedding cache (index.sqlite's
vectors table: a vector per embedded text, keyed by the text's hash and the precision),
vectors.f32 (flat.py), its rows in one flat file, and Chroma (chroma.py), one vector per
embedded window; this module keeps the last two in step with the first. EmbeddingCache is a
part of store.Store, on its connection: see store.py for the two-step write they share.
"""
from . import flat as flatfile
from .chroma import Vectors
from .errors import DamagedIndex


def marks(items):
    return ",".join("?" * len(items))


def parts(items, size=500):
    items = list(items)
    return (items[i:i + size] for i in range(0, len(items), size))


class EmbeddingCache:
    """The vectors of a Store (its db, folder and meta): the embedding cache, vectors.f32
    and Chroma."""

    @property
    def collection(self):
        """Chroma, created on a writer's first use (a reader finding none is told so)."""
        if self._collection is None:
            self._collection = Vectors(self.folder / "chroma", create=self.writer,
                                       nothing_stored=not self.embedded_count())
        return self._collection

    writer = False                # set by the process that holds the writer lock

    # -- the embedding cache
    def vector_blocks(self, after=0, size=20_000):
        """[(seq, cache key, vector blob)] of the cache's rows with seq > after, in blocks of
        at most size rows, in the table's order: a scan holds one block at a time."""
        while rows := self.db.execute("SELECT seq, key, vec FROM vectors WHERE seq > ? "
                                      "ORDER BY seq LIMIT ?", (after, size)).fetchall():
            after = rows[-1][0]
            yield rows

    def seq_keys(self, seqs):
        """{seq: cache key} of those seqs the embedding cache still has."""
        return {s: k for part in parts(seqs) for s, k in self.db.execute(
            f"SELECT seq, key FROM vectors WHERE seq IN ({marks(part)})", part)}

    def cached_vectors(self, keys):
        import numpy as np
        return {key: np.frombuffer(blob, dtype=np.float32) for part in parts(keys)
                for key, blob in self.db.execute(
                    f"SELECT key, vec FROM vectors WHERE key IN ({marks(part)})", part)}

    def cache_vectors(self, items, team=False):     # team: a team cache supplied them
        blobs = {k: v.astype("<f4").tobytes() for k, v in items}
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO vectors(key, vec, team) VALUES (?,?,?)",
                                ((k, b, team or None) for k, b in blobs.items()))
            # the INSERT holds SQLite's write lock: no other writer's row comes in meanwhile
            self.put_flat(sorted((s, blobs[k]) for part in parts(blobs) for s, k in self.db.execute(
                f"SELECT seq, key FROM vectors WHERE key IN ({marks(part)})", part)))

    def flat_seq(self):
        return int(self.meta("flat_seq", 0))

    def put_flat(self, rows):
        """In a write transaction: rows (seq, blob) into vectors.f32. flat_seq moves up to
        their last if they are every row above it up to there, to 0 if the file lost rows."""
        flat, last = self.flat_seq(), rows[-1][0] if rows else 0
        try:
            kept = flatfile.write(self.folder, rows, flat)
        except OSError:
            return                      # rows above flat_seq are read from SQLite until a sync
        alone = last > flat and self.db.execute(      # none an older version wrote
            "SELECT COUNT(*) FROM vectors WHERE seq > ? AND seq <= ?",
            (flat, last)).fetchone()[0] == sum(seq > flat for seq, _ in rows)
        if not kept or alone:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('flat_seq', ?)",
                            (str(last if kept else 0),))

    def sync_flat(self):
        """Every cached vector above flat_seq into vectors.f32 (an older version's rows, or a
        writer's that was not alone), a block at a time. Call with the writer lock held."""
        with self.db:
            self.put_flat([])                           # flat_seq 0 if the file lost rows
        for rows in self.vector_blocks(self.flat_seq()):
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")      # alone among writers for the count
                self.put_flat([(seq, blob) for seq, _, blob in rows])

    def team_keys(self):      # of the cached vectors a team cache supplied that a window uses
        return [k for (k,) in self.db.execute(
            "SELECT key FROM vectors WHERE team=1 AND key IN (SELECT key FROM windows)")]

    def forget_vectors(self, keys=None):
        """Drop these vectors (or all; another model, a foreign team cache's) from the cache."""
        with self.db:
            if keys is None:
                self.db.execute("DELETE FROM vectors")
                flatfile.drop(self.folder)              # else its rows stay, all dead
                self.db.execute("INSERT OR REPLACE INTO meta VALUES ('flat_seq', '0')")
                return
            for part in parts(keys):
                self.db.execute(f"DELETE FROM vectors WHERE key IN ({marks(part)})", part)
                self.db.execute(f"UPDATE windows SET embedded=0 WHERE key IN ({marks(part)})", part)

    # -- Chroma follows the windows
    def delete_doomed(self):
        """Delete the doomed window ids from Chroma: exactly those read, and none that a
        writer without the lock (a query, see reader.py) has made live again since."""
        ids = [i for (i,) in self.db.execute(
            "SELECT id FROM doomed d WHERE NOT EXISTS (SELECT 1 FROM windows w WHERE w.id = d.id "
            "AND +w.embedded=1)")]
        if (self.folder / "chroma" / "chroma.sqlite3").is_file():
            for part in parts(ids, 4000):
                self.collection.delete(part)
        with self.db:
            self.db.executemany("DELETE FROM doomed WHERE id=?", [(i,) for i in ids])
            self.db.execute("DELETE FROM doomed WHERE EXISTS (SELECT 1 FROM windows w WHERE "
                            "w.id = doomed.id AND +w.embedded=1)")

    def upsert_windows(self, ids, vectors):
        """Give these windows their vectors in Chroma, then mark them embedded."""
        if not ids:
            return
        self.collection.tune()
        self.collection.upsert(list(ids), [v.tolist() for v in vectors], None)
        with self.db:
            self.db.executemany("UPDATE windows SET embedded=1, text=NULL WHERE id=?",
                                [(i,) for i in ids])

    def sync_vectors(self):
        """The cheap check: Chroma holds as many vectors as there are embedded windows. If
        not, strays are deleted and missing windows marked pending again (their vectors come
        back from the cache); a Chroma that cannot be read is made afresh. Returns what it
        did, or None. Call with the writer lock held."""
        done = self.embedded_count()
        try:
            if not (self.folder / "chroma" / "chroma.sqlite3").is_file() and not done:
                return None
            if self.collection.count() == done:
                return None
            have = set(self.collection.get(embeddings=False)[0])
            note = "it held another number of vectors than the windows"
        except DamagedIndex as e:
            import shutil
            self._collection = None
            shutil.rmtree(self.folder / "chroma", ignore_errors=True)
            have = set()
            note = f"it was unreadable ({e.what})"
        want = set(self.window_keys())
        extra, missing = sorted(have - want), sorted(want - have)
        for part in parts(extra, 4000):
            self.collection.delete(part)
        with self.db:
            for part in parts(missing):
                self.db.execute(f"UPDATE windows SET embedded=0 WHERE id IN ({marks(part)})", part)
        return f"{note}; {len(missing):,} windows to restore" + \
            (f", {len(extra):,} strays removed" if extra else "")
