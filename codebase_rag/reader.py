"""Read: the one place that answers questions about an index, for query.py (one question,
then gone) and the MCP server (many, for as long as it lives). It opens the index, embeds
the questions, searches, and says how complete and fresh the answers are; it also says
what state the index is in (--status).

Each question decides afresh what it reads, so a long-lived reader stays right while hooks
and builds write: Chroma when nobody writes; the embedding cache while a writer holds the
lock (a writer rewrites Chroma's HNSW files in place, and a reader that loads them
half-written can crash) or when the folder is read-only (Chroma cannot open it); and an
index rebuilt since the last question is opened again.
"""
import os
import time

from dataclasses import dataclass, field
from pathlib import Path

from .chunkers import REST_MEMBER
from .config import CONFIDENT, DIM, INDEX_COMMAND, K, MAX_GLOB, MAX_QUESTION, MODE, \
    command_line
from .embed import index_model
from .export import model_name, resolve_model
from .errors import UsageError, no_space_at, printable
from .indexer import duration
from .fresh import Watcher, absorb, changed_files, interrupted, start_writer, unread_note
from .lock import holder, is_locked
from .text import query_shape
from .folder import find_index
from .store import Store


@dataclass
class Answer:
    """The hits for one question, and the notes that qualify them."""
    question: str
    hits: list                            # search.Hit (search, numpy: imported when asked)
    notes: list[str] = field(default_factory=list)
    semantic_index_built: float = 1.0     # during a first build: the share of windows with a vector
    unread_files: int = 0                 # files changed or new that it could not search
    read_as: str = ""                     # how the question was read (text.SHAPES)


class Reader:
    """Questions to the index at db, or to the one found by walking up from cwd. memory: a
    reader that lives long (the MCP server) keeps every vector and keyword posting in memory."""

    def __init__(self, db=None, model=None, cwd=None, memory=False):
        self.db, self.model_asked, self.cwd, self.memory = db, model, cwd, memory
        self.store = self.exported = self.in_memory = self.keywords = None
        self.opened = None            # (folder, inode of index.sqlite) of the open store
        self.watcher = None           # a long-lived reader's: what changed on disk since
        self.tree_gone = False        # the indexed tree was not there at the last question

    def folder(self):
        folder = Path(self.db) if self.db else find_index(self.cwd or os.getcwd())
        if folder is None or not (folder / "index.sqlite").is_file():
            raise UsageError(f"no codebase-rag index found at or above "
                             f"{folder or self.cwd or os.getcwd()}; create one with: "
                             f"{INDEX_COMMAND} --source DIR")
        return folder

    def open(self):
        """The store, opened again if the index was rebuilt since (a new index.sqlite), or
        a writer changed what it is of (its tree, its excludes, its model)."""
        folder = self.folder()
        try:
            opened = (folder, (folder / "index.sqlite").stat().st_ino)
        except OSError:
            raise UsageError(f"the index at {folder} is being replaced; ask again") from None
        if opened != self.opened or self.store.identity != self.store.recorded_identity():
            store = open_store(folder)
            store.db.execute("PRAGMA busy_timeout=2000")    # a query never waits long to write
            built_with = store.identity.model
            asked = self.model_asked and resolve_model(self.model_asked)[1]
            if asked and asked != built_with:
                own, other = model_name(built_with), model_name(asked)
                raise UsageError(f"the index at {folder} was built with {own}, not {other}; "
                                 f"ask it with {command_line(['--model', own])}, or give "
                                 f"--db an index built with {other}")
            self.store, self.opened = store, opened
            self.exported = index_model(folder, built_with, store.identity.precision)
            if self.memory:
                from .keywords import MemoryKeywords
                from .nearest import MemoryNearest
            self.in_memory = MemoryNearest(store) if self.memory else None
            self.keywords = MemoryKeywords(store, background=True) if self.memory else None
            self.forget_watcher()
        return self.store

    def forget_watcher(self):
        if self.watcher:
            self.watcher.close()
        self.watcher = None

    def embedder(self, locked):
        """The model, already loading; None while a first build is still exporting it."""
        if self.exported.loaded:
            return self.exported
        problem = self.exported.problem()
        if problem and locked:
            return None               # the build (re)makes it in a moment: keywords until then
        if problem:
            self.exported.embedder()  # raises the one line that says how to repair it
        self.exported.preload()
        return self.exported

    def prepare(self, semantic=True):
        """What every question starts with: the index open, what changed on disk absorbed,
        and the source of nearest windows chosen for this moment. Returns (store, the model
        or None, {path: stat or None} of the changes not taken in, the source). semantic
        False: a question of names (references.py), which needs neither model nor vectors."""
        store = self.open()
        locked = is_locked(store.folder)
        model = self.embedder(locked) if semantic else None
        root = store.root
        self.tree_gone = not root.is_dir()              # moved or deleted: answer as it was
        if self.tree_gone:
            self.forget_watcher()     # if it comes back, a new one sweeps it first
            changed, moved = {}, {}
        elif self.memory:
            if self.watcher is None or self.watcher.root != root:
                self.forget_watcher()
                self.watcher = Watcher(root)
            changed, moved = self.watcher.changes(store)
        else:
            changed, moved = changed_files(store, root)
        left = absorb(store, changed, moved, model.embedder() if model else None) \
            if changed or moved else {}
        if self.watcher and not left:
            self.watcher.settled()    # else the next question sweeps again
        if not (changed or moved or self.tree_gone) and interrupted(store):
            start_writer(store)
        if not semantic:
            return store, None, left, None
        from .nearest import CacheScan, ChromaNearest
        if self.in_memory is not None:
            return store, model, left, self.in_memory
        if locked or not os.access(store.folder, os.W_OK) or no_space_at(store.folder):
            return store, model, left, CacheScan(store)     # Chroma cannot open on a full disk
        if store.embedded_count():
            store.vectors.collection.load(DIM)    # while the model loads
        return store, model, left, ChromaNearest(store)

    def ask(self, questions, k=K, mode=MODE, path_glob=None, max_distance=None, language=None,
            read_as=None):
        """An Answer per question, in order (an empty question gets no hits); read_as: how
        to read each question (text.SHAPES; by default from its form: query_shape)."""
        for q in questions:
            if len(q) > MAX_QUESTION:
                raise UsageError(f"the question is {len(q):,} characters long; the limit is "
                                 f"{MAX_QUESTION:,} (the model reads about the first 1,000)")
        if path_glob is not None and len(path_glob) > MAX_GLOB:
            raise UsageError(f"the path glob is {len(path_glob):,} characters long; the limit "
                             f"is {MAX_GLOB}")
        store, model, left, nearest = self.prepare()
        from .search import search
        asked = [q for q in questions if q]
        vectors = dict(zip(asked, model.embedder()(asked))) if asked and model else {}
        answers = []
        for q in questions:
            shape = read_as or query_shape(q)
            hits = search(store, q, vectors.get(q), nearest, k, mode, path_glob,
                          language, self.keywords, shape) if q else []
            answers.append(self.answer(store, q, hits, left, max_distance))
            answers[-1].read_as = shape
        return answers

    def related(self, file, line, k=K):
        """The members nearest in meaning to the one at file:line (its own file's others too)."""
        import numpy as np
        from .search import Hit
        store, model, left, nearest = self.prepare()
        here = store.chunk_at(file, line)
        if here is None or here.member == REST_MEMBER:     # lines no member holds
            raise UsageError(f"no indexed member at {file}:{line}; give a line inside a "
                             f"method, function or type of an indexed file")
        vectors = [np.frombuffer(v, dtype=np.float32) for _, v in store.window_vectors([here.id])]
        if not vectors:
            raise UsageError(f"{file}:{line} ({here.member}) has no vector yet; ask again soon")
        centre = np.mean(vectors, axis=0)
        centre /= np.linalg.norm(centre)
        found = [(c, d) for c, d in nearest.nearest(centre, k * 2 + 1) if c != here.id]
        rows = store.chunk_rows([c for c, _ in found])
        hits = [Hit(rows[c], round(d, 4), d <= CONFIDENT) for c, d in found if c in rows][:k]
        return self.answer(store, f"{file}:{line}", hits, left)

    def structure(self, ask):
        """ask(store) -> a references.RefAnswer, after what changed on disk was taken in
        (without the model); its notes say what is not."""
        store, _, left, _ = self.prepare(semantic=False)
        answer = ask(store)
        answer.notes[:0] = [n for n in self.answer(store, "", [], left).notes
                            if not n.startswith("semantic index")]
        return answer

    def answer(self, store, question, hits, left, max_distance=None):
        """The Answer for hits: those of files changed but not taken in marked stale, and the
        notes that say what the index has not taken in yet."""
        done, total = store.progress()
        notes, unread = [], 0
        reading = int(store.meta("reading") or 0)
        if reading > store.count("files"):            # a first build's step 1, under way
            unread = reading - store.count("files")
            notes.append(f"the index has read {store.count('files'):,} of the tree's "
                         f"{reading:,} files so far; the rest are not searched yet (a few "
                         f"seconds)")
        first_build = done < total and store.meta("from_scratch")
        if first_build:
            notes.append(f"semantic index {done / total:.0%} built ({done:,} of {total:,} "
                         f"windows); until then members without a vector rank by keywords")
        if self.tree_gone:
            notes.append(f"{printable(str(store.root))} is not there any more: these answers "
                         f"come from the index as it was (run {INDEX_COMMAND} in the tree's "
                         f"new place)")
        if left:
            known = store.manifest(list(left))
            notes.append(unread_note(left, known, not os.access(store.folder, os.W_OK)))
            unread += len(left) + len(getattr(left, "folders", ()))   # a folder not listed: 1
        for h in hits:
            h.stale = h.chunk.file in left
        if max_distance is not None:
            unknown = sum(h.pending for h in hits)
            hits = [h for h in hits if h.distance is not None and h.distance <= max_distance]
            if unknown:
                notes.append(f"--max-distance dropped {unknown} keyword results whose distance "
                             f"is not known yet (not embedded yet)")
        return Answer(question, hits, notes, round(done / total, 3) if first_build else 1.0,
                      unread)

    def status(self):
        """What --status prints: built or building, progress, time left, the last error."""
        return status(self.folder())


def open_store(folder):
    """The index's Store for reading. On a full disk SQLite cannot make its -shm file (a
    'disk I/O error'), and nothing can write the index meanwhile: it is read as it is."""
    try:
        return Store(folder)
    except UsageError:
        if not no_space_at(folder):
            raise
        return Store(folder, read_only=True)


SHOWN = 5                     # files that did not parse, named by --status


def status(db, every=False):
    """The index's state: built or building, its model, progress, time left, the files that
    did not parse (the first SHOWN of them; every: all), the last error."""
    if not (Path(db) / "index.sqlite").is_file():
        raise UsageError(f"no codebase-rag index at {db}; create one with: {INDEX_COMMAND} "
                         f"--source DIR")
    store = open_store(db)
    meta = dict(store.db.execute("SELECT key, value FROM meta"))
    done, total = store.progress()
    held = holder(db) or ({"kind": "build"} if is_locked(db) else None)
    running = held is not None and held["kind"] == "build"
    state = meta.get("build_state") or ("built" if store.count("files") else "not built yet")
    started = float(meta.get("build_started", 0) or 0)
    if running:
        state = "building"
    elif state == "starting" and time.time() - started > 60 or state == "building" and not held:
        state = "interrupted (the next search or index.py run finishes it)"
    lines = [f"{state}: {db} ({store.identity.precision}), {store.count('files'):,} files "
             f"({store.languages() or 'none'}), {store.count('chunks'):,} chunks",
             f"model: {model_name(store.identity.model) or 'none yet'}"]
    unparsed = [p for (p,) in store.db.execute(
        "SELECT path FROM files WHERE parse_errors > 0 ORDER BY path")]
    if unparsed:
        shown = unparsed if every else unparsed[:SHOWN]
        more = len(unparsed) - len(shown)
        lines.append(f"{len(unparsed):,} files with parse errors (what their parser could read "
                     f"is indexed): {', '.join(printable(p) for p in shown)}" +
                     (f", and {more:,} more (--status --verbose lists them)" if more else ""))
    reading = int(meta.get("reading") or 0)
    if reading > store.count("files"):
        lines.append(f"files: {store.count('files'):,} of {reading:,} read")
    left = total - done
    line = f"windows: {done:,} of {total:,} embedded ({done / total:.0%})" if total else \
        "windows: none yet"
    rate = float(meta.get("embed_rate", 0) or 0)
    if left:
        line += f", {left:,} left" + (f", about {duration(left / rate)} at {rate:.1f} windows/s"
                                      if rate and held else "")
    lines.append(line)
    if running and started:
        lines.append(f"running for {duration(time.time() - started)}")
    elif held:
        since = duration(time.time() - held.get("started", time.time()))
        lines.append(f"applying edits to {held.get('files') or 'some'} file(s) ({held['kind']}, "
                     f"for {since})")
    if meta.get("build_finished") and not running:
        finished = float(meta["build_finished"])
        took = float(meta.get("build_took") or finished - started)
        lines.append(f"last build finished {when(finished)}, in {duration(took)}" +
                     (f"; last looked for changes {when(float(meta['checked_at']))}: none"
                      if meta.get("checked_at") else ""))
    if meta.get("from_server") not in (None, "", "0"):
        lines.append(f"{int(meta['from_server']):,} windows of the last build came from the "
                     f"team cache")
    if meta.get("team_signed") == "1":
        lines.append("team cache: records verified with CODEBASE_RAG_SERVER_KEY (HMAC-SHA256), "
                     "and a sample embedded here too")
    elif meta.get("team_signed") is not None:      # a build used a team cache with no key
        lines.append("team cache: trusted as is (no CODEBASE_RAG_SERVER_KEY): its vectors are "
                     "validated and a sample of each lookup is embedded here too, but a few "
                     "poisoned records can pass; index.py --check compares a sample, and "
                     "index.py --rebuild --no-team-cache embeds them all here")
    if meta.get("members_covered_after"):
        lines.append(f"every member had a vector {duration(float(meta['members_covered_after']))} "
                     f"into the build")
    if meta.get("last_error"):
        lines.append(f"last error ({when(float(meta.get('last_error_at', 0)))}): "
                     f"{meta['last_error']}")
    return "\n".join(lines)


def when(seconds):
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))
