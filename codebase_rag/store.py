"""Store: the index folder. index.sqlite holds the file manifest, each chunk's text and
lines, the keyword (FTS5) index, each chunk's windows (the texts the model reads) and an
embedding cache keyed by the hash of the embedded text (and the model's precision), team=1
if a team cache gave it; Chroma (chroma.py) holds one vector per window, and vectors.f32
(flat.py) the cache's vectors in one flat file: vectors.py keeps those two in step with the
cache. These two are the only modules that write SQL.
"""
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from .config import FLUSH
from .vectors import BUSY_MS, IndexVectors, marks, parts, read_meta
from .errors import OldFormat, UsageError, damaged, warn
from .identity import KEYS, Identity
from .migrations import migrate
from .oslayer import TRASH
from .languages import SHARED_EXTENSIONS, by_language
from .uses import USES_SCHEMA

# A build writes in two steps, so that keyword search works within seconds and semantic
# search fills in as embedding goes on: (1) per batch of files, one SQLite transaction
# replaces their chunks, keyword rows and windows (new windows are pending), and lists
# their old window ids as doomed; (2) doomed ids are deleted from Chroma, then pending
# windows get their vectors (first windows of every member before any later one) and are
# upserted into Chroma, then marked embedded. Every step is idempotent: a run killed
# anywhere leaves doomed and pending rows, which the next run of any kind finishes first.
#
# Step 1 touches SQLite only, so a query may run it for files that changed (fresh.py)
# without the writer lock; Chroma is written only under the lock. A window's id names its
# text (chunk id, ordinal, a prefix of the text's hash), so a vector Chroma holds under an
# id is always that window's, and a window whose text survives a re-chunk keeps its vector.
# windows.seq, vectors.seq and chunks.rowid (meta chunk_seq) only grow: a long-lived reader
# catches up by what is new.
# A lookup by id or file writes +embedded: without it SQLite walks windows_todo, every
# embedded window, a cost that grows with the index (74 ms a query on ppy/osu).
# vectors.f32 (flat.py) gets rows only at new seqs: none changes under a reader.

SCHEMA_VERSION = "6"          # bump when the tables change; a plain run upgrades an older
                              # index from its embedding cache (smaller changes: migrations.py)
TOKENIZER = "porter unicode61"         # FTS5's, which keywords.py reads the same way
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files(path TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER,
                                 sha TEXT, parse_errors INTEGER);
CREATE TABLE IF NOT EXISTS chunks(rowid INTEGER PRIMARY KEY, id TEXT UNIQUE, file TEXT,
    language TEXT, namespace TEXT, class TEXT, member TEXT, kind TEXT, start_line INTEGER,
    end_line INTEGER, signature TEXT, text TEXT);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file);
CREATE VIRTUAL TABLE IF NOT EXISTS lexical USING fts5(name, body, tokenize='{TOKENIZER}');
CREATE TABLE IF NOT EXISTS windows(seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE,
    file TEXT, chunk TEXT, ordinal INTEGER, key TEXT, text TEXT,
    embedded INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS windows_todo ON windows(embedded, ordinal);
CREATE INDEX IF NOT EXISTS windows_file ON windows(file);
CREATE INDEX IF NOT EXISTS windows_chunk ON windows(chunk);
CREATE INDEX IF NOT EXISTS windows_key ON windows(key);
CREATE TABLE IF NOT EXISTS doomed(id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS dirs(path TEXT PRIMARY KEY, mtime_ns INTEGER);
CREATE TABLE IF NOT EXISTS vectors(seq INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT UNIQUE,
    vec BLOB, team INTEGER);
{USES_SCHEMA}INSERT OR IGNORE INTO meta VALUES ('schema', '{SCHEMA_VERSION}');
INSERT OR IGNORE INTO meta VALUES ('flat_stamp', '');
"""


@dataclass
class IndexedChunk:
    """A chunk as the index holds it: where it is, what it is, and its source text."""
    id: str             # file#ordinal
    file: str           # relative to the source root, '/'-separated
    language: str
    namespace: str
    cls: str
    member: str
    kind: str
    start_line: int
    end_line: int
    signature: str
    text: str


CHUNK_FIELDS = tuple(IndexedChunk.__dataclass_fields__)
CHUNK_COLUMNS = ",".join("class" if f == "cls" else f for f in CHUNK_FIELDS)


class Store:
    """index.sqlite (the manifest, the chunks, their lexical index), and its vectors (the
    embedding cache, vectors.f32 and the Chroma collection beside it: store.vectors,
    vectors.py). Writers claim the folder before opening it, and open it with writer=True:
    then Chroma may be created (take the writer lock before writing it)."""

    def __init__(self, folder, create=False, read_only=False, writer=False):
        self.folder = Path(folder)
        path = self.folder / "index.sqlite"
        # a read-only index (a shared mount, a CI cache, a full disk): nobody can write it
        self.read_only = read_only or not create and not os.access(self.folder, os.W_OK)
        try:
            if self.read_only:
                # as_uri: a Windows path, or a name with ? or #, is a valid URI
                self.db = sqlite3.connect(f"{path.absolute().as_uri()}?immutable=1", uri=True)
            else:
                self.db = sqlite3.connect(path, timeout=BUSY_MS / 1000)
                if create:                # a writer's choice; the file keeps it
                    self.db.execute("PRAGMA journal_mode=WAL")
            if create and not self.db.execute("SELECT 1 FROM sqlite_master").fetchone():
                self.db.executescript(f"BEGIN; {SCHEMA} COMMIT;")    # a reader sees all or none
            version = self.meta("schema")
            if version == SCHEMA_VERSION and os.access(self.folder, os.W_OK):
                migrate(self.db)
            self.identity = self.recorded_identity()
        except sqlite3.DatabaseError as e:
            self.close()
            if "locked" in str(e):
                raise
            raise damaged(self.folder, "index.sqlite", e) from None
        if version != SCHEMA_VERSION:
            self.close()              # closed now, not when the traceback lets go of it: an
            raise OldFormat(self.folder, self.identity.source or None)  # upgrade replaces it
        self.vectors = IndexVectors(self.db, self.folder, writer, self.read_only)
        self._counts = (None, {})

    def close(self):
        if getattr(self, "db", None) is not None:
            self.db.close()

    def meta(self, key, default=None):
        return read_meta(self.db, key, default)

    def set_meta(self, **values):
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", values.items())

    def recorded_identity(self):
        """The identity as meta holds it now (another process may have written it since)."""
        return Identity.from_meta(dict(self.db.execute(
            f"SELECT key, value FROM meta WHERE key IN ({marks(KEYS)})", KEYS)))

    def set_identity(self, identity):
        """The writer's: what the index is of from now on (identity.py)."""
        self.set_meta(**identity.to_meta())
        self.identity = identity

    @property
    def root(self):
        """The source tree: where it was indexed, or wherever it moved with its index."""
        return self.identity.root(self.folder)

    def version(self):
        """Changes whenever the database does, by this connection or any other."""
        return self.db.execute("PRAGMA data_version").fetchone()[0], self.db.total_changes

    def count(self, table, where=""):
        """Rows of table, counted again once the database changed (a question asks often)."""
        assert table in ("files", "chunks", "windows", "doomed")
        version = self.version()
        if self._counts[0] != version:
            self._counts = (version, {})
        if (table, where) not in self._counts[1]:
            self._counts[1][table, where] = self.db.execute(
                f"SELECT COUNT(*) FROM {table} {where}").fetchone()[0]
        return self._counts[1][table, where]

    def embedded_count(self):
        return self.count("windows", "WHERE embedded=1")

    def progress(self):
        """(windows with a vector, windows), what every progress line says: in Chroma, or in
        the writer's batch with its vector made (searches use it: CacheScan). One statement,
        one snapshot: a batch marked meanwhile counts once."""
        return self.db.execute(
            "SELECT (SELECT COUNT(*) FROM windows WHERE embedded=1) + (SELECT COUNT(*) FROM "
            "(SELECT key FROM windows WHERE embedded=0 ORDER BY ordinal, seq LIMIT ?) "
            "WHERE key IN (SELECT key FROM vectors)), (SELECT COUNT(*) FROM windows)",
            (FLUSH,)).fetchone()

    def integrity_problems(self):
        return [r for (r,) in self.db.execute("PRAGMA integrity_check") if r != "ok"]

    # -- lookups for the search
    def window_vectors(self, chunk_ids):
        """[(chunk id, vector blob)] of the given chunks' windows with a cached vector."""
        query = "SELECT w.chunk, v.vec FROM windows w JOIN vectors v ON v.key = w.key"
        return [row for part in parts(chunk_ids) for row in self.db.execute(
            f"{query} WHERE w.chunk IN ({marks(part)})", part)]

    def key_chunks(self, keys):
        """[(cache key, chunk id)] of the windows whose text has one of these keys."""
        return [row for part in parts(keys) for row in self.db.execute(
            f"SELECT key, chunk FROM windows WHERE key IN ({marks(part)})", part)]

    def window_chunks(self, window_ids):
        """{window id: its chunk id} of those windows whose vector in Chroma is theirs (not one
        the index no longer knows, or knows with another text not yet written)."""
        return {w: c for part in parts(window_ids) for w, c in self.db.execute(
            f"SELECT id, chunk FROM windows WHERE +embedded=1 AND id IN ({marks(part)})", part)}

    def fresh_vectors(self):
        """[(chunk id, vector blob)] of windows cached but not yet in Chroma (by a query)."""
        return self.db.execute("SELECT w.chunk, v.vec FROM windows w JOIN vectors v "
                               "ON v.key = w.key WHERE w.embedded = 0").fetchall()

    def chunk_at(self, file, line):
        """The innermost chunk of file that holds line, or None."""
        row = self.db.execute(f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE file=? AND "
                              f"start_line<=? AND end_line>=? ORDER BY end_line-start_line "
                              f"LIMIT 1", (file, line, line)).fetchone()
        return IndexedChunk(*row) if row else None

    def chunk_rows(self, ids):
        """{chunk id: IndexedChunk} for the given ids."""
        return {r[0]: IndexedChunk(*r) for part in parts(ids) for r in self.db.execute(
            f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE id IN ({marks(part)})", part)}

    def window_keys(self):
        """{window id: cache key} of the embedded windows."""
        return dict(self.db.execute("SELECT id, key FROM windows WHERE embedded=1"))

    # -- the manifest
    def dirs(self):
        """{directory: mtime_ns} of every directory the last full walk read ('' the root):
        a directory whose time changed has gained or lost a file since."""
        return dict(self.db.execute("SELECT path, mtime_ns FROM dirs"))

    def set_dirs(self, dirs, whole=False):
        """Record these directories' times (whole: they are every directory of the tree)."""
        with self.db:
            if whole:
                self.db.execute("DELETE FROM dirs")
            self.db.executemany("INSERT OR REPLACE INTO dirs VALUES (?, ?)", dirs.items())

    def manifest(self, paths=None):
        """{path: (mtime_ns, size, sha)} of every indexed file, or of those among paths."""
        query = "SELECT path, mtime_ns, size, sha FROM files"
        rows = self.db.execute(query) if paths is None else (row for part in parts(paths) for
            row in self.db.execute(f"{query} WHERE path IN ({marks(part)})", part))
        return {p: (m, s, sha) for p, m, s, sha in rows}

    def languages(self):
        """'csharp 4,802, cpp 52': files per language (a .h as its chunks were read)."""
        paths = self.manifest()
        shared = [p for p in paths if p.endswith(SHARED_EXTENSIONS)]
        owned = dict(row for part in parts(shared) for row in self.db.execute(
            f"SELECT file, language FROM chunks WHERE file IN ({marks(part)}) GROUP BY file",
            part))
        return by_language(paths, owned)

    def dirty_files(self):
        """Files to read again at the next run (their windows' texts were lost)."""
        return [p for (p,) in self.db.execute("SELECT path FROM files WHERE sha IS NULL")]

    def forget_shas(self, matches):
        """Files whose path matches are read again at the next run, whatever their time."""
        with self.db:
            self.db.executemany("UPDATE files SET sha=NULL WHERE path=?",
                                [(p,) for (p,) in self.db.execute("SELECT path FROM files")
                                 if matches(p)])

    def touch(self, rel, st):
        with self.db:
            self.db.execute("UPDATE files SET mtime_ns=?, size=? WHERE path=?",
                            (st.st_mtime_ns, st.st_size, rel))

    # -- step 1: files in, their old windows doomed
    def replace_files(self, files):
        """One transaction: each FileIndex's chunks, keyword rows and (pending) windows
        replace the file's old ones; chunks None removes the file. Returns the chunks
        (added, updated, removed)."""
        paths = [f.rel for f in files]
        if not paths:
            return 0, 0, 0
        with self.db:
            before, embedded = {}, set()
            row = self.db.execute("SELECT max(ifnull(max(rowid), 0), ifnull((SELECT CAST(value "
                                  "AS INTEGER) FROM meta WHERE key='chunk_seq'), 0)) FROM chunks"
                                  ).fetchone()[0]
            for part in parts(paths):
                for cid, path in self.db.execute(
                        f"SELECT id, file FROM chunks WHERE file IN ({marks(part)})", part):
                    before.setdefault(path, set()).add(cid)
                for wid, key in self.db.execute(f"SELECT id, key FROM windows WHERE +embedded=1 "
                                                f"AND file IN ({marks(part)})", part):
                    embedded.add((wid, key))
                self.db.execute(f"INSERT OR IGNORE INTO doomed SELECT id FROM windows "
                                f"WHERE file IN ({marks(part)})", part)
                self.db.execute(f"DELETE FROM windows WHERE file IN ({marks(part)})", part)
                self.db.execute(f"DELETE FROM lexical WHERE rowid IN (SELECT rowid FROM chunks "
                                f"WHERE file IN ({marks(part)}))", part)
                self.db.execute(f"DELETE FROM uses WHERE chunk IN (SELECT rowid FROM chunks "
                                f"WHERE file IN ({marks(part)}))", part)
                self.db.execute(f"DELETE FROM chunks WHERE file IN ({marks(part)})", part)
                self.db.execute(f"DELETE FROM uses WHERE file IN ({marks(part)})", part)
                self.db.execute(f"DELETE FROM decls WHERE file IN ({marks(part)})", part)
            changes = [0, 0, 0]
            for f in files:
                old, new = before.get(f.rel, set()), {c.id for c, _ in f.chunks or ()}
                changes = [changes[0] + len(new - old), changes[1] + len(new & old),
                           changes[2] + len(old - new)]
                if f.chunks is None:
                    self.db.execute("DELETE FROM files WHERE path=?", (f.rel,))
                    continue
                rowids = []
                for c, lexical in f.chunks:
                    row += 1
                    rowids.append(row)
                    self.db.execute(f"INSERT INTO chunks(rowid, {CHUNK_COLUMNS}) VALUES "
                                    f"(?, {marks(CHUNK_FIELDS)})",
                                    [row] + [getattr(c, k) for k in CHUNK_FIELDS])
                    self.db.execute("INSERT INTO lexical(rowid, name, body) VALUES (?, ?, ?)",
                                    (row, *lexical))
                self.write_uses(f, rowids)
                # a window whose id and text survive keeps its vector in Chroma
                kept = [(wid, key) in embedded for wid, _, _, key, _ in f.windows]
                self.db.executemany(
                    "INSERT INTO windows(id, file, chunk, ordinal, key, text, embedded) "
                    "VALUES (?,?,?,?,?,?,?)",
                    [(wid, f.rel, cid, ordinal, key, None if keep else text, int(keep))
                     for (wid, cid, ordinal, key, text), keep in zip(f.windows, kept)])
                self.db.executemany("DELETE FROM doomed WHERE id=?",
                                    [(w[0],) for w, keep in zip(f.windows, kept) if keep])
                self.db.execute("INSERT OR REPLACE INTO files(path, mtime_ns, size, sha, "
                                "parse_errors) VALUES (?, ?, ?, ?, ?)",
                                (f.rel, f.mtime_ns, f.size, f.sha, f.parse_errors))
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('chunk_seq', ?)", (row,))
        return tuple(changes)

    def write_uses(self, f, rowids):
        """A file's uses (each under its chunk's rowid, rowids: its chunks' in order; a use
        outside every chunk under its file) and declarations, inside replace_files'
        transaction: they change with its chunks."""
        self.db.executemany("INSERT INTO uses(chunk, file, lines, name, kind, qualifier) "
                            "VALUES (?,?,?,?,?,?)",
                            [(rowids[u.chunk], None, *u[1:]) if u.chunk is not None else
                             (None, f.rel, *u[1:]) for u in f.uses])
        self.db.executemany("INSERT INTO decls(file, kind, scope, name, target, line, "
                            "end_line) VALUES (?,?,?,?,?,?,?)", [(f.rel, *d) for d in f.decls])

    # -- step 2: the windows left to embed (vectors.py gives them their vectors)
    def pending_windows(self, limit, files=None):
        """[(window id, cache key, text)] of windows without a vector in Chroma (of these
        files, or of all): every member's first window before any later one, then in file
        order."""
        if files is None:
            return self.db.execute("SELECT id, key, text FROM windows WHERE embedded=0 "
                                   "ORDER BY ordinal, seq LIMIT ?", (limit,)).fetchall()
        return self.db.execute(f"SELECT id, key, text FROM windows WHERE +embedded=0 AND file "
                               f"IN ({marks(files)}) ORDER BY ordinal, seq LIMIT ?",
                               (*files, limit)).fetchall()

    def first_windows_pending(self):
        """Whether some member has no vector yet."""
        return self.db.execute("SELECT 1 FROM windows WHERE embedded=0 AND ordinal=0 "
                               "LIMIT 1").fetchone() is not None

    def reread(self, window_ids):
        """Windows pending without text or cached vector (a repair lost both): their files
        are read again at the next run."""
        with self.db:
            for part in parts(window_ids):
                self.db.execute(f"UPDATE files SET sha=NULL WHERE path IN "
                                f"(SELECT file FROM windows WHERE id IN ({marks(part)}))", part)
                self.db.execute(f"DELETE FROM windows WHERE id IN ({marks(part)})", part)

    def prepare_rebuild(self):
        """For --rebuild: every file is read and chunked again, and Chroma is made afresh
        (its vectors come back from the embedding cache). Nothing is deleted first: until a
        file's turn comes, queries answer from its old chunks, and a run that fails midway
        leaves an index no emptier than before. Chroma and vectors.f32 start as new
        generations: a reader that has the old ones open keeps them."""
        with self.db:
            self.db.execute("UPDATE files SET sha=NULL")
            self.db.execute("DELETE FROM doomed")
            self.vectors.chroma_afresh()    # every window pending: vectors from the cache
            self.vectors.drop_flat()        # written again from the cache
        self.vectors.sweep()


def salvage(folder):
    """(embedding-cache rows, the Identity an upgrade keeps) still readable in a damaged or
    old index.sqlite."""
    from contextlib import closing
    rows, meta = [], {}
    try:
        uri = (Path(folder) / "index.sqlite").absolute().as_uri()
        with closing(sqlite3.connect(f"{uri}?mode=ro", uri=True)) as con:
            meta = {k: v for k, v in con.execute("SELECT key, value FROM meta")
                    if k in KEYS}
            team = "team" in {r[1] for r in con.execute("PRAGMA table_info(vectors)")}
            rows = con.execute(f"SELECT key, vec, {'team' if team else 'NULL'} "
                               f"FROM vectors").fetchall()
    except sqlite3.Error:
        pass
    return rows, Identity.from_meta(meta)


def set_aside(folder, reason):
    """index.sqlite and its journal files renamed aside, all or none: a database another
    process has open cannot be renamed on Windows, and then nothing is touched. Returns the
    names they went to (deleted by the caller)."""
    import gc
    gc.collect()              # this process's own connections no longer used, closed first
    moved = []
    for old in sorted(Path(folder).glob("index.sqlite*")):     # the database before its -wal
        if TRASH in old.name:
            continue
        target = old.with_name(f"{old.name}{TRASH}{os.getpid()}")
        try:
            os.replace(old, target)
        except OSError:
            for back, aside in reversed(moved):
                os.replace(aside, back)
            raise UsageError(f"{reason}, but another process has its index.sqlite open (a "
                             f"search server of Claude Code, or a query): close it, then run "
                             f"this again") from None
        moved.append((old, target))
    return [aside for _, aside in moved]


def open_store_afresh(folder, reason):
    """For an unreadable index.sqlite (--rebuild) or one of an older format (any run): a new
    one, with the old embedding cache and settings where they can still be read. The old
    vectors.f32 and Chroma become old generations (swept once unused): the new index has
    new ones."""
    rows, identity = salvage(folder)
    for aside in set_aside(folder, reason):
        aside.unlink(missing_ok=True)
    store = Store(folder, create=True, writer=True)
    with store.db:
        store.vectors.drop_flat()             # the old file's rows are at the old seqs
        store.vectors.chroma_afresh()
    with store.db:
        store.db.executemany("INSERT OR REPLACE INTO vectors(key, vec, team) VALUES (?,?,?)", rows)
    store.set_identity(identity)
    store.vectors.sync_flat()
    warn(f"{reason}; started index.sqlite afresh, keeping {len(rows):,} cached vectors")
    return store


@dataclass
class FileIndex:
    rel: str
    mtime_ns: int = None
    size: int = None
    sha: str = None
    chunks: list = None        # [(IndexedChunk, lexical text)]; None: remove the file
    windows: list = ()         # [(window id, chunk id, ordinal, cache key, text)]
    uses: list = ()            # [uses.Use]: what its members use (Use.chunk: an index in chunks)
    decls: list = ()           # [(kind, scope, name, target, line, end_line)] (uses/__init__.py)
    parse_errors: int = 0      # its parser's errors (its chunker recovered): --status names it
