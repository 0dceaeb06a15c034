"""Fresh: before a query answers, it finds what changed on disk since the index last read it,
whatever changed it (an Edit the hook saw, a shell command, a generator, git), and absorbs it,
so that no answer carries an old member or old lines.

Finding costs one stat per indexed file and per directory: a file whose size or time moved
has changed, and a directory whose time moved has gained or lost a file. Absorbing a few
changed files is step 1 of a build (chunks, keywords, pending windows: SQLite only, which
needs no writer lock), then their first windows embedded on the spot, and the files queued
for a detached writer, which gives Chroma their vectors. A change the query cannot absorb
(a read-only index, too many files at once, SQLite busy) marks the results it touches.
"""
import os
import sqlite3
import stat

from .indexer import Indexer
from .lock import detach, is_locked, queue_pending, request_refresh
from .walk import Ignore, inside, walk

MAX_ABSORB = 50               # changed files a query chunks itself; more: a background refresh
ON_THE_SPOT = 16              # windows of changed files a query embeds before it answers


def changed_files(store, root, ignore=None):
    """({path: os.stat_result, or None if gone} of the files that changed since the index
    read them, new ones included; {directory: mtime_ns} of directories that changed)."""
    manifest = store.manifest()
    base = os.path.join(root, "")         # joined by hand: this loop runs on every query
    changed = {}
    for rel, (mtime, size, _) in manifest.items():
        try:
            st = os.stat(base + rel)
        except OSError:
            changed[rel] = None
            continue
        if st.st_mtime_ns != mtime or st.st_size != size:
            changed[rel] = st
    known_dirs = store.dirs()
    moved = {}
    for rel_dir, mtime in known_dirs.items():
        try:
            now = os.stat(base + rel_dir).st_mtime_ns
        except OSError:
            continue                  # gone: its files are gone from the manifest's view too
        if now != mtime:
            moved[rel_dir] = now
    if moved:
        ignore = ignore or Ignore(root, store.excludes())
        for rel, st in new_files(root, ignore, moved, known_dirs, manifest):
            changed[rel] = st
    return changed, moved


def new_files(root, ignore, moved, known_dirs, manifest):
    """(path, stat) of indexable files the index does not know in the directories that
    moved, and anywhere below a directory that is new."""
    for rel_dir in list(moved):
        try:
            entries = list(os.scandir(os.path.join(root, rel_dir)))
        except OSError:
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                if entry.is_dir():
                    if rel not in known_dirs:
                        yield from ((r, st) for r, _, st in walk(root, ignore, moved, rel)
                                    if r not in manifest)
                elif rel not in manifest and ignore.included(rel) and \
                        inside(entry.path, root) and stat.S_ISREG(entry.stat().st_mode):
                    yield rel, entry.stat()
            except (OSError, UnicodeEncodeError):
                continue


def absorb(store, changed, moved, embedder=None):
    """Bring the index up to date with changed files, as far as a query can; returns the
    paths it could not absorb (their results are stale). embedder: the query's model, for
    the changed files' first windows (None: they keep their keyword rank meanwhile)."""
    root = store.root()
    if not os.access(store.folder, os.W_OK):
        return set(changed)           # a read-only index: answer from it as it is
    if len(changed) > MAX_ABSORB:     # a checkout, a generator: a background refresh
        request_refresh(store.folder)
        if not is_locked(store.folder):
            detach(store.folder, ["--source", str(root), "--db", str(store.folder), "--quiet",
                                  "--detached"], f"refresh of {len(changed)} changed files")
        return set(changed)
    indexer = Indexer(store, root, Ignore(root, store.excludes()), store.meta("model"),
                      progress=False, embedder=embedder)
    try:
        indexer.run(changed)
        store.set_dirs(moved)
        if embedder is not None:
            rows = store.pending_windows(ON_THE_SPOT, files=list(changed))
            indexer.vectors({key: text for _, key, text in rows})
    except sqlite3.OperationalError:  # a build's write held SQLite too long: next time
        return set(changed)
    queue_pending(store.folder, changed)      # for Chroma: the writer that holds the lock
    if not is_locked(store.folder):           # takes them, else a detached one
        detach(store.folder, ["--db", str(store.folder), "--apply-queue"], "applying edits")
    return set()


def stale_note(paths):
    """One line for results whose files changed in a way the query could not absorb."""
    shown = ", ".join(sorted(paths)[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    return (f"{shown} changed since the index read {'it' if len(paths) == 1 else 'them'}; "
            f"lines from {'it' if len(paths) == 1 else 'them'} may be off until the index "
            f"catches up (python index.py)")

