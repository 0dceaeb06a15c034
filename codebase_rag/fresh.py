"""Fresh: before a query answers, it finds what changed on disk since the index last read it,
whatever changed it (an Edit the hook saw, a shell command, a generator, git), and absorbs it,
so that no answer carries an old member or old lines, during a first build too.

Finding costs one stat per indexed file and per directory: a file whose size or time moved
has changed, and a directory whose time moved has gained or lost a file (a build records the
directories' times when it walks, before it reads a file). A reader that lives long (the MCP
server) stats only what the system's file events named since its last question. Files queued for the writer
(a hook's edit) are looked at too. Absorbing changed files is step 1 of a build (chunks,
keywords, pending windows: SQLite only, which needs no writer lock), deletions first, as many
files as a time budget allows; then their first windows are embedded on the spot, and a
detached writer gives Chroma their vectors. What a query cannot absorb (a read-only index,
more files than its budget, SQLite busy) is named in a line above the results, and the
results it touches are marked stale.
"""
import os
import sqlite3
import stat
import time

from .config import ABSORB_SECONDS, ON_THE_SPOT
from .errors import disk_full as disk_full_error, no_space_at, printable
from .indexer import Indexer
from .lock import apply_soon, is_locked, pending_entries, queue_pending, queued, request_refresh, \
    start_refresh
from .oslayer import tree_events
from .walk import Ignore, OutOfTime, entered, listed, walk


class Changes(dict):
    """{path: os.stat_result, or None if gone} of changed files, and in folders the
    folders a sweep had no time to list (a checkout of a huge new folder): it still holds
    something to take in while they are there. full: the disk is full, so nothing was."""

    def __init__(self, files=(), folders=(), full=False):
        super().__init__(files)
        self.folders, self.full = list(folders), full

    def __bool__(self):
        return bool(len(self) or self.folders)


def changed_files(store, root, ignore=None, among=None, budget=ABSORB_SECONDS):
    """(Changes: the files that changed since the index read them, new ones included;
    {directory: mtime_ns} of directories that changed). among: (files, directories) a
    Watcher saw touched: only those are looked at, and the files queued for the writer (a
    hook's edit, which may be a file no directory time has shown yet: the build that
    records them may not have walked it). The folders whose time moved are listed for up to
    budget seconds; those it had no time for are named in the Changes' folders."""
    files, dirs = among or (None, None)
    queued_now = queued(store.folder)
    if files is not None:
        files = files | queued_now
    manifest = store.manifest(None if files is None or dirs else files)
    base = os.path.join(root, "")         # joined by hand: this loop runs on every query
    changed = Changes()
    for rel, (mtime, size, _) in manifest.items():
        if files is not None and rel not in files:
            continue
        try:
            st = os.stat(base + rel)
        except OSError:
            changed[rel] = None
            continue
        if st.st_mtime_ns != mtime or st.st_size != size:
            changed[rel] = st
    for rel in queued_now - manifest.keys():
        ignore = ignore or Ignore(root, store.identity.excludes)
        st = indexable(root, rel, ignore)
        if st is not None:
            changed[rel] = st
    known_dirs = store.dirs()
    moved = {}
    for rel_dir, mtime in known_dirs.items() if dirs is None else \
            ((d, known_dirs[d]) for d in dirs if d in known_dirs):
        try:
            now = os.stat(base + rel_dir).st_mtime_ns
        except OSError:
            continue                  # gone: its files are gone from the manifest's view too
        if now != mtime:
            moved[rel_dir] = now
    if moved:
        ignore = ignore or Ignore(root, store.identity.excludes)
        todo, deadline = sorted(moved), time.monotonic() + budget
        while todo:
            try:
                for rel, _, st in walk(root, ignore, moved, todo[0], deadline, known_dirs):
                    if rel not in manifest:
                        changed[rel] = st
            except OutOfTime as cut:      # the new folder it was in, then the rest
                below = cut.folder[len(todo[0]) + bool(todo[0]):].split("/")[0]
                changed.folders = [f"{todo[0]}/{below}" if todo[0] and below else
                                   below or todo[0]] + todo[1:]
                break
            todo.pop(0)
    return changed, moved


def indexable(root, rel, ignore):
    """The stat of a file a build would read, or None."""
    full = os.path.join(root, rel)
    try:
        st = os.stat(full)
        if stat.S_ISREG(st.st_mode) and ignore.included(rel) and listed(root, rel):
            return st
    except (OSError, UnicodeEncodeError, ValueError):
        pass
    return None


class Watcher:
    """The system's file events on the tree (oslayer.tree_events: inotify on Linux, FSEvents
    on macOS, ReadDirectoryChangesW on Windows) for a reader that lives long (the MCP
    server): a question looks only at what changed since the last one, instead of at every
    file, and still misses nothing done before it was asked. What the events do not follow
    well (a directory made, renamed or deleted, a new watch, a full event queue, changes a
    question could not absorb) costs one whole sweep; no events (none on this system, no
    watches left): the sweep every time."""

    def __init__(self, root):
        self.root, self.whole, self.version, self.known = root, True, None, False
        self.events = self.started = None
        self.real = {}                # {folder the index knows: its real path, or None}

    def changes(self, store):
        """As changed_files, for what changed since the last call that settled."""
        if not self.started:                      # its first question: the index is known
            self.started, self.events = True, tree_events(self.root, store.folder)
        files = dirs = ()
        if self.events is not None:
            try:
                files, dirs, whole = self.events.drain()
                version = store.version()
                if version != self.version:       # the index may know new directories
                    self.version = version
                    known = store.dirs()          # watched before the sweep: nothing falls
                    self.known = bool(known)      # between
                    whole = self.events.watch(self.entered(known)) or whole
                self.whole = self.whole or whole
            except Exception:                     # noqa: BLE001 (no watches left): sweep
                self.close()
        if self.events is None:
            return changed_files(store, self.root)
        if not self.known:            # no directory known yet (a build has not walked)
            self.whole = True
        if not (self.whole or files or dirs or pending_entries(store.folder)):
            return {}, {}
        among = None if self.whole else (set(files), set(dirs))
        self.whole = True             # until settled(): what is not absorbed is looked at again
        return changed_files(store, self.root, among=among)

    def settled(self):
        """The last changes were absorbed: from now on, only what the events name."""
        self.whole = False

    def entered(self, known_dirs):
        """{folder: its real path} of the folders the index knows that the walk enters (a
        folder replaced since by a link out of the tree is not watched); each new folder
        is looked at once, parents first."""
        base, memo = os.path.realpath(self.root), {}
        for rel_dir in sorted(set(known_dirs) - self.real.keys()):
            found, _ = entered(self.root, rel_dir, base, memo)
            self.real[rel_dir] = found and found[0]
        return {rel: self.real[rel] for rel in known_dirs if self.real[rel]}

    def close(self):
        if self.events is not None:
            self.events.close()
        self.events = None


def absorb(store, changed, moved, embedder=None, budget=ABSORB_SECONDS):
    """Bring the index up to date with changed files, as far as a query can in its time
    budget: deletions first, then as many files as it can read and chunk (step 1 of a
    build: SQLite only, no writer lock), then their first windows embedded on the spot
    (embedder: the query's model; None: they keep their keyword rank meanwhile). A writer
    is left, or started, to finish (a whole-tree one if a folder was not listed). Returns
    the Changes it could not take in (a read-only index, a full disk, SQLite busy, the
    budget spent)."""
    folders = getattr(changed, "folders", [])
    if not os.access(store.folder, os.W_OK):
        return Changes(changed, folders)      # a read-only index: answer from it as it is
    if no_space_at(store.folder):
        return Changes(changed, folders, full=True)
    root = store.root
    indexer = Indexer(store, root, Ignore(root, store.identity.excludes), store.identity.model,
                      progress=False, embedder=embedder)
    try:
        left = indexer.run(changed, deadline=time.monotonic() + budget)
        if not left and not folders:  # else the next query looks in those folders again
            store.set_dirs(moved)
        taken = [rel for rel in changed if rel not in left]
        if embedder is not None and taken:
            rows = store.pending_windows(ON_THE_SPOT, files=taken[:500])
            indexer.vectors({key: text for _, key, text in rows})
    except sqlite3.OperationalError as e:     # a build's write held SQLite too long: next
        return Changes(changed, folders, full=disk_full_error(e))         # time
    queue_pending(store.folder, taken)        # for Chroma: the writer that holds the lock
    if left or folders:                       # takes them, else a detached one
        request_refresh(store.folder)
    start_writer(store, whole=bool(left or folders))
    return Changes({rel: changed[rel] for rel in left}, folders)


def interrupted(store):
    """Whether a whole-tree build was killed: it never ended, and no writer holds the lock."""
    state = store.meta("build_state")
    since = time.time() - float(store.meta("build_started", 0) or 0)
    return (state == "building" or state == "starting" and since > 30) and \
        not is_locked(store.folder)


def start_writer(store, whole=False):
    """Leave the work to the writer that holds the lock, else start one in the background: a
    whole-tree run for files a query could not take in, or for a build that was killed (an
    index is never left half-read for good), else one that applies the queue."""
    if is_locked(store.folder) or not os.access(store.folder, os.W_OK):
        return
    if interrupted(store):
        whole = True
        store.set_meta(build_state="starting", build_started=f"{time.time():.1f}")
    if whole:
        start_refresh(store.folder, "a refresh asked by a search", store.root)
    else:
        apply_soon(store.folder)


def unread_note(left, known, read_only=False):
    """One line for the changed files a query could not take in (left: Changes); known:
    those of them the index holds (their results are marked stale), the others are new to
    it."""
    gone = sum(st is None for st in left.values())
    new = sum(rel not in known and st is not None for rel, st in left.items())
    changed = len(left) - gone - new
    parts = [f"{n:,} {what}" for n, what in ((new, "new"), (changed, "changed"),
                                             (gone, "deleted")) if n]
    what = [f"{', '.join(parts)} file{'s' if len(left) > 1 else ''}"] if left.keys() else []
    folders = getattr(left, "folders", [])
    if folders:
        names = [printable(f) + "/" if f else "the tree's top folder" for f in folders[:3]]
        what.append(f"what is new in {names[0]}" if len(folders) == 1 else
                    f"what is new in {len(folders):,} folders ({', '.join(names)}"
                    f"{', ...' if len(folders) > 3 else ''})")
    said = " and ".join(what)
    if read_only or getattr(left, "full", False):
        why = "the index is read-only" if read_only else "the disk is full"
        return f"{said} since the index was made: {why}, so answers show the code as it was"
    return f"{said} not taken in yet (being indexed now); ask again in a few seconds"
