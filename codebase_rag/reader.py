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

from .config import K, MODE
from .embed import ExportedModel, resolve_model
from .errors import UsageError
from .lock import is_locked
from .search import CacheScan, ChromaNearest, Hit, search
from .store import Store, find_index


@dataclass
class Answer:
    """The hits for one question, and the notes that qualify them."""
    question: str
    hits: list[Hit]
    notes: list[str] = field(default_factory=list)
    semantic_index_built: float = 1.0     # the share of windows with a vector


class Reader:
    """Questions to the index at db, or to the one found by walking up from cwd."""

    def __init__(self, db=None, model=None, cwd=None):
        self.db, self.model_asked, self.cwd = db, model, cwd
        self.store = self.exported = None
        self.opened = None            # (folder, inode of index.sqlite) of the open store

    def folder(self):
        folder = Path(self.db) if self.db else find_index(self.cwd or os.getcwd())
        if folder is None or not (folder / "index.sqlite").is_file():
            raise UsageError(f"no codebase-rag index found at or above "
                             f"{folder or self.cwd or os.getcwd()}; create one with: "
                             f"python index.py --source DIR")
        return folder

    def open(self):
        """The store, opened again if the index was rebuilt since (a new index.sqlite)."""
        folder = self.folder()
        try:
            opened = (folder, (folder / "index.sqlite").stat().st_ino)
        except OSError:
            raise UsageError(f"the index at {folder} is being replaced; ask again") from None
        if opened != self.opened:
            store = Store(folder)
            built_with = store.meta("model")
            if self.model_asked and resolve_model(self.model_asked)[1] != built_with:
                raise UsageError(f"the index was built with {built_with}, not "
                                 f"{resolve_model(self.model_asked)[1]}; re-index with --rebuild")
            self.store, self.opened = store, opened
            self.exported = ExportedModel(store.model_dir, store.meta("precision") or "fp32")
        return self.store

    def embedder(self, locked):
        """The model, already loading; None while a first build is still exporting it."""
        problem = self.exported.problem()
        if problem and locked:
            return None               # the build (re)makes it in a moment: keywords until then
        if problem:
            self.exported.embedder()  # raises the one line that says how to repair it
        self.exported.preload()
        return self.exported

    def ask(self, questions, k=K, mode=MODE, path_glob=None, max_distance=None):
        """An Answer per question, in order (an empty question gets no hits)."""
        store = self.open()
        locked = is_locked(store.folder)
        model = self.embedder(locked)
        scan = locked or not os.access(store.folder, os.W_OK)
        nearest = CacheScan(store) if scan else ChromaNearest(store)
        if not scan and store.embedded_count():
            store.collection          # open Chroma while the model loads
        asked = [q for q in questions if q]
        vectors = dict(zip(asked, model.embedder()(asked))) if asked and model else {}
        total, done = store.count("windows"), store.embedded_count()
        notes = [] if done >= total else [
            f"semantic index {done / total:.0%} built ({done:,} of {total:,} windows); "
            f"ranking leans on keywords until it is done"]
        answers = []
        for q in questions:
            hits = search(store, q, vectors.get(q), nearest, k, mode, path_glob) if q else []
            if max_distance is not None:
                hits = [h for h in hits if (h.distance or 0) <= max_distance]
            answers.append(Answer(q, hits, list(notes),
                                  round(done / total, 3) if done < total else 1.0))
        return answers

    def status(self):
        """What --status prints: built or building, progress, time left, the last error."""
        return status(self.folder())


def status(db):
    if not (Path(db) / "index.sqlite").is_file():
        raise UsageError(f"no codebase-rag index at {db}; create one with: python index.py")
    store = Store(db)
    meta = dict(store.db.execute("SELECT key, value FROM meta"))
    total, done = store.count("windows"), store.embedded_count()
    running = is_locked(db)
    state = meta.get("build_state") or ("built" if store.count("files") else "not built yet")
    started = float(meta.get("build_started", 0) or 0)
    if running:
        state = "building"
    elif state == "starting" and time.time() - started > 60 or state == "building":
        state = "interrupted (the next index.py run finishes it)"
    lines = [f"{state}: {db} ({meta.get('precision', 'fp32')}), {store.count('files'):,} files, "
             f"{store.count('chunks'):,} chunks"]
    left = total - done
    line = f"windows: {done:,} of {total:,} embedded ({done / total:.0%})" if total else \
        "windows: none yet"
    rate = float(meta.get("embed_rate", 0) or 0)
    if left:
        line += f", {left:,} left" + (f", about {duration(left / rate)} at {rate:.1f} windows/s"
                                      if rate and running else "")
    lines.append(line)
    if running and started:
        lines.append(f"running for {duration(time.time() - started)}")
    elif meta.get("build_finished") and state == "built":
        finished = float(meta["build_finished"])
        lines.append(f"last build finished {time.strftime('%Y-%m-%d %H:%M', time.localtime(finished))}"
                     f", in {duration(finished - started)}")
    if meta.get("from_server") not in (None, "", "0"):
        lines.append(f"{int(meta['from_server']):,} windows of the last build came from the "
                     f"team cache")
    if meta.get("members_covered_after"):
        lines.append(f"every member had a vector {duration(float(meta['members_covered_after']))} "
                     f"into the build")
    if meta.get("last_error"):
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(float(meta.get("last_error_at", 0))))
        lines.append(f"last error ({when}): {meta['last_error']}")
    return "\n".join(lines)


def duration(seconds):
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m {seconds % 60:02d}s"
    return f"{seconds // 3600}h {seconds % 3600 // 60:02d}m"
