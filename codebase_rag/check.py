"""Check: verify every file of an index without changing it (index.py --check)."""
import random
import sqlite3
from pathlib import Path

from .embed import model_problem
from .errors import UsageError
from .lock import has_pending, pending_entries
from .store import Store, owned


def check_index(folder):
    """Every problem found in the index at folder, one line each ([] if it is sound)."""
    folder = Path(folder)
    problems = []
    if not owned(folder):
        return [f"{folder} is not a codebase-rag index folder"]
    try:
        store = Store(folder)
        problems += [f"index.sqlite: {r}" for r in store.integrity_problems()[:5]]
        windows = store.windows()
    except (UsageError, sqlite3.DatabaseError) as e:
        return problems + [str(e)]
    problem = model_problem(store.model_dir, full=True)
    if problem:
        problems.append(f"model: {problem}; run: python index.py (it exports the model again)")
    dirty = store.dirty_files()
    if dirty or has_pending(store):
        problems.append(f"{len(dirty)} files from an interrupted run and {len(pending_entries(store))} "
                        f"queued edits await indexing; run: python index.py")
    try:
        ids, _, _ = store.collection.get(embeddings=False)
        missing, extra = set(windows) - set(ids), set(ids) - set(windows)
        if missing or extra:
            problems.append(f"chroma holds {len(ids):,} vectors for {len(windows):,} windows "
                            f"({len(missing):,} missing, {len(extra):,} extra); run: python index.py")
        sample = random.Random(0).sample(sorted(set(ids) & set(windows)),
                                         min(20, len(set(ids) & set(windows))))
        if sample:
            got_ids, _, vectors = store.collection.get(sample)
            cached = store.cached_vectors({windows[w][0] for w in got_ids})
            import numpy as np
            for wid, vec in zip(got_ids, vectors):
                want = cached.get(windows[wid][0])
                if want is None or float(np.dot(want, np.asarray(vec))) < 0.999:
                    problems.append(f"chroma: the vector of {wid} differs from the embedding "
                                    f"cache; run: python index.py --rebuild")
                    break
            found, _, _ = store.collection.query(list(map(float, vectors[0])), 1)
            if not found:
                problems.append("chroma: a search finds nothing; run: python index.py --rebuild")
    except UsageError as e:
        problems.append(str(e))
    return problems


def describe(folder):
    store = Store(folder)
    return (f"{store.count('files'):,} files, {store.count('chunks'):,} chunks, "
            f"{store.window_count():,} vectors")
