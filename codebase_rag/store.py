"""Store: the index folder. index.sqlite holds the file manifest, each chunk's text and
lines, the keyword (FTS5) index and the embedding cache; Chroma (chroma.py) holds one
vector per window. This is the only module that writes SQL.
"""
import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from .chroma import Vectors
from .config import INDEX_DIRNAME
from .errors import DamagedIndex, OldFormat, UsageError, damaged, warn

# The index folder holds Chroma (one vector per window, with the member's metadata) and
# index.sqlite: the file manifest, each chunk's text, the lexical (FTS5) index and an
# embedding cache keyed by the hash of the embedded text.
#
# Chroma and SQLite cannot share a transaction, so every write goes: (1) mark the files
# dirty in SQLite, listing every id they may own in Chroma; (2) write Chroma; (3) commit
# the new state in SQLite. A run killed anywhere leaves dirty rows, which the next run of
# any kind repairs before anything else.

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files(path TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER,
                                 sha TEXT, ids TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks(rowid INTEGER PRIMARY KEY, id TEXT UNIQUE, file TEXT,
    namespace TEXT, class TEXT, member TEXT, kind TEXT, start_line INTEGER, end_line INTEGER,
    signature TEXT, text TEXT, vectors TEXT);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file);
CREATE VIRTUAL TABLE IF NOT EXISTS lexical USING fts5(name, body, tokenize='porter unicode61');
CREATE TABLE IF NOT EXISTS vectors(key TEXT PRIMARY KEY, vec BLOB);
"""
SCHEMA_VERSION = "2"          # bump when the tables change; older indexes need --rebuild
CHUNK_FIELDS = ("id", "file", "namespace", "class", "member", "kind", "start_line",
                "end_line", "signature", "text")
WINDOW_FIELDS = ("file", "namespace", "class", "member", "kind", "start_line", "end_line")



INDEX_MARKER = ".codebase-rag-index"     # in every index folder: the tool owns what is in it


def find_index(start):
    """The index folder for a path: walk up from it, as git finds .git."""
    p = Path(start).resolve()
    for d in (p, *p.parents):
        if (d / INDEX_DIRNAME / "index.sqlite").is_file():
            return d / INDEX_DIRNAME
    return None


def owned(folder):
    """Whether folder is an index folder this tool made (or an earlier version of it did)."""
    folder = Path(folder)
    if (folder / INDEX_MARKER).is_file():
        return True
    try:
        legacy = (folder / ".gitignore").read_text()[:100].startswith("# created by codebase-rag")
    except OSError:
        return False
    return legacy and (folder / "index.sqlite").is_file()


def claim_index_folder(folder):
    """Make folder the tool's index folder, or refuse with one line. The tool writes and
    deletes only inside a folder it created, found empty, or made in an earlier version."""
    folder = Path(folder)
    if owned(folder):
        for name, text in ((INDEX_MARKER, MARKER_TEXT), (".gitignore", GITIGNORE_TEXT)):
            if not (folder / name).is_file():
                (folder / name).write_text(text)
        return
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise UsageError(f"{folder} is not a codebase-rag index, and it is not an empty folder; "
                         f"the index needs a folder of its own: give --db a new or empty one")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".gitignore").write_text(GITIGNORE_TEXT)
    (folder / INDEX_MARKER).write_text(MARKER_TEXT)


MARKER_TEXT = ("This folder is a codebase-rag index. Everything in it was made by the tool, "
               "which may delete it.\n")
GITIGNORE_TEXT = "# created by codebase-rag\n*\n"


class Store:
    """index.sqlite (the manifest, the chunks, their lexical index, the embedding cache)
    and the Chroma collection beside it. Writers claim the folder before opening it."""

    def __init__(self, folder, create=False):
        self.folder = Path(folder)
        path = self.folder / "index.sqlite"
        try:
            if not create and not os.access(self.folder, os.W_OK):
                # a read-only index (a shared mount, a CI cache): nobody can write it either
                self.db = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
            else:
                self.db = sqlite3.connect(path, timeout=60)
                self.db.execute("PRAGMA journal_mode=WAL")
            if create and not self.db.execute("SELECT 1 FROM sqlite_master").fetchone():
                self.db.executescript(SCHEMA)
                self.set_meta(schema=SCHEMA_VERSION)
            version = self.meta("schema")
        except sqlite3.DatabaseError as e:
            if "locked" in str(e):
                raise
            raise damaged(self.folder, "index.sqlite", e) from None
        if version != SCHEMA_VERSION:
            raise OldFormat(f"the index at {self.folder} has an older format; rebuild it "
                            f"with: python index.py --rebuild")
        self._collection = None

    @property
    def model_dir(self):
        return self.folder / "model"

    def meta(self, key, default=None):
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, **values):
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", values.items())

    @property
    def collection(self):
        """Chroma, created on a writer's first use (a reader finding none is told so)."""
        if self._collection is None:
            self._collection = Vectors(self.folder / "chroma", create=self.writer)
        return self._collection

    writer = False                # set by the process that holds the writer lock

    def window_count(self):
        """Vectors the committed chunks own in Chroma."""
        return self.db.execute("SELECT COALESCE(SUM(json_array_length(vectors)), 0) "
                               "FROM chunks").fetchone()[0]

    def windows(self):
        """{window id: (cache key, Chroma metadata)} for every committed chunk."""
        out = {}
        for row in self.db.execute(f"SELECT {','.join(CHUNK_FIELDS)}, vectors FROM chunks"):
            meta = dict(zip(CHUNK_FIELDS, row))
            keys = json.loads(row[-1])
            meta = {k: meta[k] for k in WINDOW_FIELDS} | {"chunk": meta["id"]}
            for w, key in enumerate(keys):
                out[f"{meta['chunk']}.{w}"] = (key, meta)
        return out

    def sync_vectors(self):
        """Make Chroma hold exactly the committed windows, with vectors from the embedding
        cache; a Chroma that cannot be read at all is made afresh. Returns what it did, or
        None if Chroma was already in step. Call with the writer lock held."""
        try:
            if self.collection.count() == self.window_count():
                return None
            have = set(self.collection.get(embeddings=False)[0])
            note = "it held another number of vectors than the chunks"
        except DamagedIndex as e:
            import shutil
            self._collection = None
            shutil.rmtree(self.folder / "chroma", ignore_errors=True)
            have = set()
            note = f"it was unreadable ({e.what})"
        want = self.windows()
        extra = sorted(have - set(want))
        missing = sorted(set(want) - have)
        cached = self.cached_vectors({want[w][0] for w in missing})
        lost = {w for w in missing if want[w][0] not in cached}
        if lost:                      # not in the cache: re-embed their files on this run
            files = {want[w][1]["file"] for w in lost}
            with self.db:
                self.db.executemany("UPDATE files SET sha=NULL WHERE path=?", [(f,) for f in files])
            missing = [w for w in missing if w not in lost]
        for i in range(0, len(extra), 4000):
            self.collection.delete(extra[i:i + 4000])
        for i in range(0, len(missing), 4000):
            part = missing[i:i + 4000]
            self.collection.upsert(part, [cached[want[w][0]].tolist() for w in part],
                                   [want[w][1] for w in part])
        return f"{note}; restored {len(missing)} vectors from the embedding cache" + \
            (f", removed {len(extra)} strays" if extra else "") + \
            (f", {len(lost)} to re-embed" if lost else "")

    def count(self, table):
        assert table in ("files", "chunks")
        return self.db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]

    # -- lookups for the search
    def lexical_search(self, match, name_weight, n):
        """[chunk id] best first, by BM25 over the FTS5 query match."""
        return [cid for (cid,) in self.db.execute(
            "SELECT c.id FROM lexical JOIN chunks c ON c.rowid = lexical.rowid "
            "WHERE lexical MATCH ? ORDER BY bm25(lexical, ?, 1.0) LIMIT ?",
            (match, name_weight, n))]

    def window_vectors(self, chunk_ids=None):
        """[(chunk id, vector blob)] for every window of the given chunks (or all chunks),
        from the embedding cache."""
        query = ("SELECT c.id, v.vec FROM chunks c, json_each(c.vectors) w "
                 "JOIN vectors v ON v.key = w.value")
        args = list(chunk_ids or ())
        if chunk_ids is not None:
            query += f" WHERE c.id IN ({','.join('?' * len(args))})"
        return self.db.execute(query, args).fetchall()

    def chunk_rows(self, ids):
        """{chunk id: row dict} for the given ids."""
        ids = list(ids)
        return {r[0]: dict(zip(CHUNK_FIELDS, r)) for r in self.db.execute(
            f"SELECT {','.join(CHUNK_FIELDS)} FROM chunks WHERE id IN ({','.join('?' * len(ids))})",
            ids)}

    # -- the manifest
    def manifest(self):
        return {p: (m, s, sha) for p, m, s, sha in
                self.db.execute("SELECT path, mtime_ns, size, sha FROM files")}

    def dirty_files(self):
        return [p for (p,) in self.db.execute("SELECT path FROM files WHERE sha IS NULL")]

    def touch(self, rel, st):
        with self.db:
            self.db.execute("UPDATE files SET mtime_ns=?, size=? WHERE path=?",
                            (st.st_mtime_ns, st.st_size, rel))

    # -- the embedding cache
    def cached_vectors(self, keys):
        import numpy as np
        found = {}
        keys = list(keys)
        for i in range(0, len(keys), 500):
            part = keys[i:i + 500]
            q = f"SELECT key, vec FROM vectors WHERE key IN ({','.join('?' * len(part))})"
            for key, blob in self.db.execute(q, part):
                found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    def cache_vectors(self, items):
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                                ((k, v.astype("float32").tobytes()) for k, v in items))

    # -- writing files
    def write(self, files):
        """files: list of FileIndex; one with chunks=None is removed from the index.
        Returns the chunks (added, updated, removed)."""
        if not files:
            return 0, 0, 0
        paths = [f.rel for f in files]
        old = {p: set(json.loads(ids)) for p, ids in self.db.execute(
            f"SELECT path, ids FROM files WHERE path IN ({','.join('?' * len(paths))})", paths)}
        changes = [0, 0, 0]
        for f in files:
            before = {i.rsplit(".", 1)[0] for i in old.get(f.rel, ())}
            after = {r["id"] for r, _ in (f.chunks or ())}
            changes = [changes[0] + len(after - before), changes[1] + len(after & before),
                       changes[2] + len(before - after)]
        with self.db:                                                  # (1) mark dirty
            self.db.executemany(
                "INSERT OR REPLACE INTO files VALUES (?, NULL, NULL, NULL, ?)",
                [(f.rel, json.dumps(sorted(old.get(f.rel, set()) | f.window_ids())))
                 for f in files])
        upserts = [w for f in files for w in f.windows]               # (2) Chroma
        self.collection.tune()
        stale = sorted(set().union(*old.values()) - {w[0] for w in upserts}) if old else []
        step = 4000
        for i in range(0, len(upserts), step):
            part = upserts[i:i + step]
            self.collection.upsert([w[0] for w in part], [w[1] for w in part],
                                   [w[2] for w in part])
        for i in range(0, len(stale), step):
            self.collection.delete(stale[i:i + step])
        with self.db:                                                  # (3) commit
            marks = ",".join("?" * len(paths))
            self.db.execute(f"DELETE FROM lexical WHERE rowid IN "
                            f"(SELECT rowid FROM chunks WHERE file IN ({marks}))", paths)
            self.db.execute(f"DELETE FROM chunks WHERE file IN ({marks})", paths)
            for f in files:
                if f.chunks is None:
                    self.db.execute("DELETE FROM files WHERE path=?", (f.rel,))
                    continue
                keys = {}                 # chunk id -> the cache keys of its windows' vectors
                for wid, _, meta, key in f.windows:
                    keys.setdefault(meta["chunk"], []).append(key)
                for row, lex in f.chunks:
                    cur = self.db.execute(
                        f"INSERT INTO chunks({','.join(CHUNK_FIELDS)}, vectors) VALUES "
                        f"({','.join('?' * (len(CHUNK_FIELDS) + 1))})",
                        [row[k] for k in CHUNK_FIELDS] + [json.dumps(keys.get(row["id"], []))])
                    self.db.execute("INSERT INTO lexical(rowid, name, body) VALUES (?, ?, ?)",
                                    (cur.lastrowid, *lex))
                self.db.execute("UPDATE files SET mtime_ns=?, size=?, sha=?, ids=? WHERE path=?",
                                (f.mtime_ns, f.size, f.sha, json.dumps(sorted(f.window_ids())),
                                 f.rel))
        return tuple(changes)

    def forget_vectors(self):
        """Empty the embedding cache (for a rebuild with another model)."""
        with self.db:
            self.db.execute("DELETE FROM vectors")

    def integrity_problems(self):
        return [r for (r,) in self.db.execute("PRAGMA integrity_check") if r != "ok"]

    def drop(self):
        """For --rebuild: forget every file and chunk (the embedding cache stays)."""
        import shutil
        with self.db:
            self.db.execute("DELETE FROM files")
            self.db.execute("DELETE FROM chunks")
            self.db.execute("DELETE FROM lexical")
        shutil.rmtree(self.folder / "chroma", ignore_errors=True)
        self._collection = None


def salvage_cache(folder):
    """The embedding-cache rows still readable in a damaged or old index.sqlite."""
    rows = []
    try:
        con = sqlite3.connect(f"file:{Path(folder) / 'index.sqlite'}?mode=ro", uri=True)
        for row in con.execute("SELECT key, vec FROM vectors"):
            rows.append(row)
    except sqlite3.Error:
        pass
    return rows


def open_store_afresh(folder, reason):
    """For --rebuild of an unreadable or old index.sqlite: a new one, with the old
    embedding cache when it can still be read."""
    rows = salvage_cache(folder)
    for old in Path(folder).glob("index.sqlite*"):
        old.unlink()
    store = Store(folder, create=True)
    with store.db:
        store.db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", rows)
    warn(f"{reason}; started index.sqlite afresh, keeping {len(rows):,} cached vectors")
    return store


@dataclass
class FileIndex:
    rel: str
    mtime_ns: int = None
    size: int = None
    sha: str = None
    chunks: list = None        # [(row dict, lexical text)]; None: remove the file
    windows: list = ()         # [(id, vector, metadata, cache key)]

    def window_ids(self):
        return {w[0] for w in self.windows}
