"""Check: verify every file of an index without changing it (index.py --check)."""
import os
import random
import sqlite3
from pathlib import Path

from .vectors import CHECKED
from .config import INDEX_COMMAND
from .embed import index_model
from .errors import UsageError
from .lock import is_locked, pending_entries
from .folder import owned
from .store import Store
from .walk import Ignore, read_source, walk


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
    if not store.count("files") and has_source(store.identity.source):
        problems.append(f"the index lists no files, but {store.identity.source} has source files; "
                        f"run: {INDEX_COMMAND}")
    problem = index_model(folder, store.identity.model, store.identity.precision).problem(full=True)
    if problem:
        problems.append(f"model: {problem}; run: {INDEX_COMMAND} (it exports the model again)")
    unfinished = store.count("windows") - len(windows) + store.count("doomed")
    dirty, queued = store.dirty_files(), len(pending_entries(store.folder))
    if (unfinished or dirty or queued) and not is_locked(folder):
        problems.append(f"an interrupted run left {unfinished:,} windows, {len(dirty):,} files and "
                        f"{queued:,} queued edits to finish; run: {INDEX_COMMAND}")
    problems += flat_problems(store)
    if not os.access(folder, os.W_OK | os.X_OK):
        return problems               # Chroma cannot open it; queries read the cache instead
    try:
        ids = set(store.vectors.collection.get(embeddings=False)[0]) if windows else set()
        missing, extra = set(windows) - ids, ids - set(windows)
        if (missing or extra) and not is_locked(folder):
            problems.append(f"chroma holds {len(ids):,} vectors for {len(windows):,} embedded "
                            f"windows ({len(missing):,} missing, {len(extra):,} extra); "
                            f"run: {INDEX_COMMAND}")
        sample = {w: k for w, k in store.vectors.window_sample(0, CHECKED).items() if w in ids}
        if store.vectors.chroma_differences(sample):
            problems.append(f"chroma: a sampled vector differs from the embedding cache; "
                            f"run: {INDEX_COMMAND}")
        if sample:
            _, vectors = store.vectors.collection.get(list(sample)[:1])
            found, _ = store.vectors.collection.query(list(map(float, vectors[0])), 1)
            if not found:
                problems.append(f"chroma: a search finds nothing; run: {INDEX_COMMAND} --rebuild")
    except UsageError as e:
        problems.append(str(e))
    if not problem:
        problems += team_problems(store, folder)
    return problems


def flat_problems(store):
    """vectors.f32 (what a query reads while a writer holds the lock): a query found a row
    of it wrong, or a sample of its rows differs from the embedding cache. A plain run
    compares the same sample and writes the file afresh."""
    if store.meta("flat_stamp") == "damaged":
        return [f"vectors.f32: a query found a row that differs from the embedding cache; "
                f"run: {INDEX_COMMAND}"]
    bad, compared = store.vectors.flat_differences(store.vectors.flat_sample(0))
    return [f"vectors.f32: {bad} of {compared} sampled vectors differ from the embedding "
            f"cache; run: {INDEX_COMMAND}"] if bad else []


TEAM_SAMPLE = 100             # vectors the team cache supplied that --check embeds again
                              # (about 2 s on a laptop CPU)


def team_problems(store, folder):
    """Embed here again a sample of the cached vectors that a team cache supplied (their
    windows' texts cut again from their files) and compare: a poisoned record that got in
    is found, and --rebuild --no-team-cache embeds them all here."""
    import numpy as np
    from .indexer import build_file
    from .team_policy import FLOOR
    from .text import cache_key
    keys = store.vectors.team_keys()
    if not keys:
        return []
    sample = set(random.SystemRandom().sample(keys, min(TEAM_SAMPLE, len(keys))))
    precision = store.identity.precision
    model = index_model(folder, store.identity.model, precision)
    root = store.root
    files = sorted({wid.rsplit("#", 1)[0] for wid, key in store.window_keys().items()
                    if key in sample})              # a window's id: file#ordinal.window.key
    texts, max_tokens = {}, model.max_tokens
    for rel in files:                   # cut as the build cut them
        text = read_source(root / rel, rel)
        built = build_file(rel, text, model.count_tokens, max_tokens) \
            if text is not None else None
        for _, _, _, window in built[1] if built else ():
            key = cache_key(window, precision)
            if key in sample:
                texts[key] = window
    if not texts:
        return []
    keys = sorted(texts)
    mine = model.embedder()([texts[k] for k in keys])
    cached = store.vectors.cached_vectors(keys)
    bad = sum(not float(np.dot(cached[k], v)) >= FLOOR[precision] for k, v in zip(keys, mine))
    if not bad:
        return []
    return [f"{bad} of {len(keys)} sampled vectors that the team cache supplied differ from "
            f"this machine's model; run: {INDEX_COMMAND} --rebuild --no-team-cache"]


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
            f"{store.embedded_count():,} vectors ({store.identity.precision})")


def forget_team_vectors(db):
    """For --no-team-cache: drop from the index's embedding cache every vector the team
    cache supplied (under the writer lock), so that this run embeds them here. Returns how
    many."""
    from .lock import writer_lock
    if not (Path(db) / "index.sqlite").is_file():
        return 0
    with writer_lock(db):
        store = Store(db)
        keys = store.vectors.team_keys()
        store.vectors.forget_vectors(keys)
    return len(keys)
