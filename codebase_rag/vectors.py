"""Vectors: the part of the index folder that holds vectors. The embedding cache (index.sqlite's
vectors table: a vector per embedded text, keyed by the text's hash and the precision),
vectors.f32 (flat.py), its rows in one flat file, and Chroma (chroma.py), one vector per
embedded window; this module keeps the last two in step with the first. IndexVectors is a
part a store.Store holds (store.vectors), on its connection: see store.py for the two-step
write they share.

Both copies are made afresh as a new generation beside the old one (a file or folder of its
own name, which meta flat_file or chroma_dir points to), never by renaming over or deleting
what a reader may have open: Windows refuses both. Old generations are swept by the next
writer once no process holds them (oslayer.remove_unused).
"""
import os
import random
import re
import sqlite3
import struct

from . import flat as flatfile
from .chroma import Vectors as Chroma
from .errors import DamagedIndex, warn
from .oslayer import TRASH, remove_unused

BUSY_MS = 60_000              # how long a write waits for another's to end
CHROMA_DIR = "chroma"         # Chroma's first generation; chroma.N after it
CHROMA_GENERATION = re.compile(r"chroma(?:\.\d+)?")
CHECKED = 20                  # sampled windows whose Chroma vector --check compares
SAME = 0.999                  # the least cosine of a Chroma vector to its cached one


def marks(items):
    return ",".join("?" * len(items))


def parts(items, size=500):
    items = list(items)
    return (items[i:i + size] for i in range(0, len(items), size))


def read_meta(db, key, default=None):
    row = db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return row[0] if row else default


class IndexVectors:
    """The vectors of an index folder, on its Store's connection db: the embedding cache,
    vectors.f32 and Chroma. writer: this process holds, or is about to take, the writer lock
    (build_runs.py opens such Stores), and so may create Chroma; a reader finding none is told so.
    read_only: nobody can write the folder."""

    def __init__(self, db, folder, writer=False, read_only=False):
        self.db, self.folder, self.writer, self.read_only = db, folder, writer, read_only
        self._collection = None
        self.remade = False           # Chroma made afresh by this run already

    def meta(self, key, default=None):
        return read_meta(self.db, key, default)

    def embedded_count(self):
        return self.db.execute("SELECT COUNT(*) FROM windows WHERE embedded=1").fetchone()[0]

    @property
    def collection(self):
        """Chroma, created on a writer's first use (a reader finding none is told so)."""
        if self._collection is None:
            self._collection = Chroma(self.chroma_path(), create=self.writer,
                                      nothing_stored=not self.embedded_count())
        return self._collection

    def chroma_path(self):
        """The folder of Chroma's current generation."""
        return self.folder / self.meta("chroma_dir", CHROMA_DIR)

    def chroma_afresh(self):
        """From now on an empty Chroma, in a new folder (the old one is swept once unused):
        every embedded window is pending again (call in a write transaction)."""
        self._collection = None
        current = self.meta("chroma_dir", CHROMA_DIR)
        n = int(current.rpartition(".")[2]) if "." in current else 0
        while os.path.lexists(self.folder / f"{CHROMA_DIR}.{n + 1}"):
            n += 1
        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('chroma_dir', ?)",
                        (f"{CHROMA_DIR}.{n + 1}",))
        self.db.execute("UPDATE windows SET embedded=0")

    def remake_chroma(self):
        """Chroma afresh in its own transaction, the old generation swept (a writer's)."""
        with self.db:
            self.chroma_afresh()
        self.sweep()

    def sweep(self):
        """Old generations of vectors.f32 and Chroma removed where no process holds them any
        more (a writer's job, under the lock)."""
        chroma, flat = self.meta("chroma_dir", CHROMA_DIR), self.meta("flat_file", flatfile.NAME)
        flatfile.sweep(self.folder, flat)
        for entry in os.scandir(self.folder):
            if entry.name != chroma and (CHROMA_GENERATION.fullmatch(entry.name) or
                                         TRASH in entry.name):
                remove_unused(entry.path)

    # -- the embedding cache
    def vector_blocks(self, after=0, size=20_000):
        """[(seq, cache key, vector blob)] of the cache's rows with seq > after, in blocks of
        at most size rows, in the table's order: a scan holds one block at a time."""
        while rows := self.db.execute("SELECT seq, key, vec FROM vectors WHERE seq > ? "
                                      "ORDER BY seq LIMIT ?", (after, size)).fetchall():
            after = rows[-1][0]
            yield rows

    def vectors_at(self, seqs):
        """{seq: vector blob} of those seqs the embedding cache still has."""
        return {s: v for part in parts(seqs) for s, v in self.db.execute(
            f"SELECT seq, vec FROM vectors WHERE seq IN ({marks(part)})", part)}

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

    # -- vectors.f32: written under SQLite's write lock, its stamp committed with each write
    def flat_seq(self):
        return int(self.meta("flat_seq", 0))

    def flat_path(self):
        """The current generation of vectors.f32."""
        return self.folder / self.meta("flat_file", flatfile.NAME)

    def readable_flat(self):
        """(how far, which file): how far a reader may read vectors.f32 instead of SQLite: to
        flat_seq if the file is as its last write left it, else not at all (it changed
        behind the writers' back, or a query found a row wrong). In a read-only folder
        nobody could have written it, and a copy has a stamp of its own: it is read as it is
        (CacheScan checks what it reads)."""
        meta = dict(self.db.execute("SELECT key, value FROM meta WHERE key IN "
                                    "('flat_seq', 'flat_stamp', 'flat_file')"))
        flat, path = int(meta.get("flat_seq", 0)), self.folder / meta.get("flat_file",
                                                                          flatfile.NAME)
        return (flat if self.read_only or meta.get("flat_stamp") == flatfile.stamp(path)
                else 0), path

    def readable_flat_seq(self):
        return self.readable_flat()[0]

    def put_flat(self, rows):
        """In a write transaction: rows (seq, blob) into vectors.f32, if it is as the last
        write left it (else it waits for sync_flat, and readers read SQLite). flat_seq moves
        up to their last if they are every row above it up to there."""
        expect = self.meta("flat_stamp")
        if not rows or expect is None:          # None: an older version's file, not stamped
            return
        flat, last = self.flat_seq(), rows[-1][0]
        try:
            stamp = flatfile.write(self.flat_path(), rows, expect)
        except OSError:
            return                      # its stamp moved: sync_flat writes it afresh
        if stamp is None:
            return
        alone = last > flat and self.db.execute(      # none an older version wrote
            "SELECT COUNT(*) FROM vectors WHERE seq > ? AND seq <= ?",
            (flat, last)).fetchone()[0] == sum(seq > flat for seq, _ in rows)
        self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [
            ("flat_stamp", stamp)] + ([("flat_seq", str(last))] if alone else []))

    def sync_flat(self):
        """vectors.f32 in step with the embedding cache; call with the writer lock held. If
        the file is not as its last write left it, or a sample of its rows differs from the
        cache (what --check compares, and more), it is written afresh from the cache; else
        the cache's rows above flat_seq (an older version's, or a writer's that was not
        alone) are added, a block at a time. Old generations of both copies are swept first."""
        self.sweep()
        if self.meta("flat_stamp") != flatfile.stamp(self.flat_path()) or \
                self.flat_differences(self.flat_sample(0) | self.flat_sample(None))[0]:
            return self.rewrite_flat()
        for rows in self.vector_blocks(self.flat_seq()):
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")      # alone among writers for the count
                self.put_flat([(seq, blob) for seq, _, blob in rows])

    def rewrite_flat(self):
        """vectors.f32 written afresh from the embedding cache, as a new generation
        (flat.Rewrite), warning how many of the old one's rows up to flat_seq differed from
        it."""
        stamped, trusted = self.meta("flat_stamp") is not None, self.flat_seq()
        differ = last = 0
        new, kept, current = None, False, self.meta("flat_file", flatfile.NAME)
        try:
            new = flatfile.Rewrite(self.folder, current)
            # the rows so far without the lock (other writers add rows only at new seqs),
            # then with it the rows that came meanwhile, and the new file pointed to
            for rows in self.vector_blocks():
                old = flatfile.rows_at(self.folder / current,
                                       [s for s, _, _ in rows if s <= trusted])
                differ += sum(old[seq] != blob for seq, _, blob in rows if seq in old)
                new.put([(seq, blob) for seq, _, blob in rows])
                last = rows[-1][0]
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                for rows in self.vector_blocks(last):
                    new.put([(seq, blob) for seq, _, blob in rows])
                    last = rows[-1][0]
                self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [
                    ("flat_stamp", new.finish()), ("flat_seq", str(last)),
                    ("flat_file", new.name)])
            kept = True
        except OSError as e:
            return warn(f"vectors.f32 could not be written ({e}); queries under the writer "
                        f"lock read SQLite's rows instead")
        finally:
            if new:
                new.close(kept)
        flatfile.sweep(self.folder, new.name)
        if stamped and differ:
            warn(f"vectors.f32: {differ:,} of its rows differed from the embedding cache; "
                 f"written again from it")

    def drop_flat(self):
        """In a write transaction: no vectors.f32 (written again from the cache, as a new
        generation; the next writer sweeps the old one)."""
        name = flatfile.next_name(self.folder, self.meta("flat_file", flatfile.NAME))
        self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                            [("flat_seq", "0"), ("flat_stamp", ""), ("flat_file", name)])

    def flat_sample(self, seed, size=100):
        """Up to size seqs of vectors.f32 (1 to flat_seq) at random: the same ones for a seed
        while flat_seq stays (--check's), others every time for None."""
        flat = self.flat_seq()
        rng = random.Random(seed) if seed is not None else random.SystemRandom()
        return set(rng.sample(range(1, flat + 1), min(size, flat)))

    def flat_differences(self, seqs):
        """(how many, of how many the cache still has) of these rows of vectors.f32 differ
        from the embedding cache."""
        cached = self.vectors_at(seqs)
        rows = flatfile.rows_at(self.flat_path(), cached)
        return sum(rows.get(s) != blob for s, blob in cached.items()), len(cached)

    def mark_flat_damaged(self):
        """For a reader that found a row of vectors.f32 that is not the cache's: nobody reads
        or writes the file until the next writer's sync_flat writes it afresh. Skipped if
        SQLite stays busy for a second (the next reader to find it marks it)."""
        if self.read_only:
            return
        try:
            self.db.execute("PRAGMA busy_timeout=1000")
            with self.db:
                self.db.execute("INSERT OR REPLACE INTO meta VALUES ('flat_stamp', 'damaged')")
        except sqlite3.OperationalError:
            pass
        finally:
            self.db.execute(f"PRAGMA busy_timeout={BUSY_MS}")

    def team_keys(self):      # of the cached vectors a team cache supplied that a window uses
        return [k for (k,) in self.db.execute(
            "SELECT key FROM vectors WHERE team=1 AND key IN (SELECT key FROM windows)")]

    def forget_vectors(self, keys=None):
        """Drop these vectors (or all; another model, a foreign team cache's) from the cache."""
        with self.db:
            if keys is None:
                self.db.execute("DELETE FROM vectors")
                self.drop_flat()                        # else its rows stay, all dead
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
        if (self.chroma_path() / "chroma.sqlite3").is_file():
            for part in parts(ids, 4000):
                self.collection.delete(part)
        with self.db:
            self.db.executemany("DELETE FROM doomed WHERE id=?", [(i,) for i in ids])
            self.db.execute("DELETE FROM doomed WHERE EXISTS (SELECT 1 FROM windows w WHERE "
                            "w.id = doomed.id AND +w.embedded=1)")

    def upsert_windows(self, ids, vectors):
        """Give these windows their vectors in Chroma, then mark them embedded. A Chroma that
        cannot be written (a run killed while Chroma rewrote its id map, a file it does not
        write atomically) is made afresh, once a run: False, and every window is pending
        again, its vector in the cache."""
        if not ids:
            return True
        try:
            self.collection.tune()
            self.collection.upsert(list(ids), [v.tolist() for v in vectors], None)
        except DamagedIndex as e:
            if self.remade:
                raise
            self.remade = True
            self.remake_chroma()
            warn(f"repaired the vector store: it could not be written ({e.what}); "
                 f"{self.db.execute('SELECT COUNT(*) FROM windows').fetchone()[0]:,} "
                 f"windows to restore")
            return False
        with self.db:
            self.db.executemany("UPDATE windows SET embedded=1, text=NULL WHERE id=?",
                                [(i,) for i in ids])
        return True

    def sync_vectors(self):
        """The cheap check: Chroma holds as many vectors as there are embedded windows, and a
        sample of them (what --check compares, and more) are the embedding cache's. If not,
        strays are deleted and missing windows marked pending again (their vectors come back
        from the cache); a Chroma that cannot be read, or holds a vector that is not the
        cache's, is made afresh. Returns what it did, or None. Call with the writer lock
        held."""
        done, afresh = self.embedded_count(), None
        try:
            if not (self.chroma_path() / "chroma.sqlite3").is_file() and not done:
                return None
            if self.collection.count() == done:
                sample = self.window_sample(0, CHECKED) | self.window_sample(None)
                wrong = self.chroma_differences(sample)
                if not wrong:
                    return None
                afresh = f"{len(wrong):,} of {len(sample):,} sampled vectors were not the cache's"
            else:
                have = set(self.collection.get(embeddings=False)[0])
                note = "it held another number of vectors than the windows"
        except DamagedIndex as e:
            afresh = f"it was unreadable ({e.what})"
        if afresh:
            self.remake_chroma()
            return f"{afresh}; {done:,} windows to restore"
        want = {wid for (wid,) in self.db.execute("SELECT id FROM windows WHERE embedded=1")}
        extra, missing = sorted(have - want), sorted(want - have)
        for part in parts(extra, 4000):
            self.collection.delete(part)
        with self.db:
            for part in parts(missing):
                self.db.execute(f"UPDATE windows SET embedded=0 WHERE id IN ({marks(part)})", part)
        return f"{note}; {len(missing):,} windows to restore" + \
            (f", {len(extra):,} strays removed" if extra else "")

    def window_sample(self, seed, size=100):
        """{window id: cache key} of size embedded windows, or all if there are no more:
        drawn by seq, the same ones for a seed while the windows stay (--check's), others
        every time for None."""
        if self.embedded_count() <= size:
            return dict(self.db.execute("SELECT id, key FROM windows WHERE embedded=1"))
        top = self.db.execute("SELECT max(seq) FROM windows").fetchone()[0]
        rng = random.Random(seed) if seed is not None else random.SystemRandom()
        found = (self.db.execute("SELECT id, key FROM windows WHERE seq >= ? AND +embedded=1 "
                                 "ORDER BY seq LIMIT 1", (at,)).fetchone()
                 for at in rng.sample(range(1, top + 1), min(size, top)))
        return dict(row for row in found if row)

    def chroma_differences(self, sample):
        """The windows of a sample {window id: cache key} whose vector Chroma lacks, or holds
        other than the embedding cache's (a damaged file of Chroma's). In plain Python: a
        plain run that changes nothing imports no numpy (0.2 s)."""
        if not sample:
            return set()
        got, vectors = self.collection.get(list(sample))
        cached = {k: struct.unpack(f"<{len(v) // 4}f", v) for part in parts(set(sample.values()))
                  for k, v in self.db.execute(
                      f"SELECT key, vec FROM vectors WHERE key IN ({marks(part)})", part)}
        return set(sample) - set(got) | {
            wid for wid, vec in zip(got, vectors) if sample[wid] in cached and not sum(
                a * b for a, b in zip(cached[sample[wid]], vec)) >= SAME}
