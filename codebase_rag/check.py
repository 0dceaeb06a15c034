"""Check: verify every file of an index without changing it (index.py --check)."""
import os
import random
import sqlite3
from pathlib import Path

from .embed import index_model
from .errors import UsageError
from .lock import is_locked, pending_entries
from .folder import owned
from .store import Store
from .walk import Ignore, walk


def check_index(folder):
    """Every problem found in the index at folder, one line each ([] if it is sound)."""
    folder = Path(folder)
    problems = []
    if not owned(folder):
        return [f"{folder} is not a codebase-rag index folder"]
    try:
        store = Store(folder)
        problems += [f"index.sqlite: {r}" for r in store.integrity_problems()[:5]]
        windows = store.window_keys()             # the embedded windows: id -> cache key
    except (UsageError, sqlite3.DatabaseError) as e:
        return problems + [str(e)]
    if not store.count("files") and has_source(store.meta("source")):
        problems.append(f"the index lists no files, but {store.meta('source')} has source files; "
                        f"run: python index.py")
    problem = index_model(folder, store.meta("model"), store.meta("precision")).problem(full=True)
    if problem:
        problems.append(f"model: {problem}; run: python index.py (it exports the model again)")
    unfinished = store.count("windows") - len(windows) + store.count("doomed")
    dirty, queued = store.dirty_files(), len(pending_entries(store.folder))
    if (unfinished or dirty or queued) and not is_locked(folder):
        problems.append(f"an interrupted run left {unfinished:,} windows, {len(dirty):,} files and "
                        f"{queued:,} queued edits to finish; run: python index.py")
    if not os.access(folder, os.W_OK | os.X_OK):
        return problems               # Chroma cannot open it; queries read the cache instead
    try:
        ids = set(store.collection.get(embeddings=False)[0]) if windows else set()
        missing, extra = set(windows) - ids, ids - set(windows)
        if (missing or extra) and not is_locked(folder):
            problems.append(f"chroma holds {len(ids):,} vectors for {len(windows):,} embedded "
                            f"windows ({len(missing):,} missing, {len(extra):,} extra); "
                            f"run: python index.py")
        sample = random.Random(0).sample(sorted(ids & set(windows)), min(20, len(ids & set(windows))))
        if sample:
            got, vectors = store.collection.get(sample)
            cached = store.cached_vectors({windows[w] for w in got})
            import numpy as np
            for wid, vec in zip(got, vectors):
                want = cached.get(windows[wid])
                if want is None or float(np.dot(want, np.asarray(vec))) < 0.999:
                    problems.append(f"chroma: the vector of {wid} differs from the embedding "
                                    f"cache; run: python index.py --rebuild")
                    break
            found, _ = store.collection.query(list(map(float, vectors[0])), 1)
            if not found:
                problems.append("chroma: a search finds nothing; run: python index.py --rebuild")
    except UsageError as e:
        problems.append(str(e))
    return problems


def has_source(root):
    """Whether the tree at root has a file the index would read (the first one will do)."""
    if not root or not Path(root).is_dir():
        return False
    return next(walk(root, Ignore(root)), None) is not None


def read_only_note(folder):
    """For --check on an index this process may not write: what that means."""
    if os.access(folder, os.W_OK | os.X_OK):
        return None
    return (f"note: the index at {folder} is read-only; queries answer from it as it is, and "
            f"a problem below is for whoever can write it to repair")


def describe(folder):
    store = Store(folder)
    return (f"{store.count('files'):,} files, {store.count('chunks'):,} chunks, "
            f"{store.embedded_count():,} vectors ({store.meta('precision') or 'fp32'})")
