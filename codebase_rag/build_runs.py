"""Build runs: what index.py runs to write an index: a whole tree (in the foreground, or
detached in the background), a few files (--single), a hook's queue, --push-only, and the
chunks a --dry-run would index. (--status is the reader's: reader.status.)"""
import json
import os
import time
from dataclasses import asdict, replace
from pathlib import Path

from .config import (
    HOOK_WAIT,
    INDEX_DIRNAME,
    PRECISION,
    QUERY_COMMAND,
    SERVER,
    SERVER_TOKEN,
    SETTINGS,
    command_line,
)
from .embed import index_model, resolve_precision
from .errors import DamagedIndex, OldFormat, UsageError, encodable, one_line, printable
from .export import model_name, resolve_model
from .chunkers import COVER_VERSION, cover_rest
from .folder import claim_index_folder, find_index
from .hook import store_for_file
from .identity import Identity
from .indexer import Indexer, chunk_file, language_of, stat_or_none, write_under_lock
from .languages import LANGUAGES
from .lock import is_locked, request_refresh, start_refresh
from .oslayer import remove_unused
from .store import Store, open_store_afresh
from .uses import USES_VERSIONS
from .text import TEXT_FORMAT
from .walk import Ignore, read_source, walk


def locate(source, db):
    """(source root, index folder) for a full run. Inside an indexed tree, with neither a
    source nor a db given, it is that tree's index, as query.py would find it."""
    if source is None and db is None:
        found = find_index(os.getcwd())
        if found is not None:
            return found.parent, found
    if source is None and db is not None:
        source = recorded_source(Path(db))
    root = Path(source or ".").resolve()
    if not root.is_dir():
        raise UsageError(f"source directory not found: {source}")
    return root, Path(db).resolve() if db else root / INDEX_DIRNAME


def recorded_source(db):
    """The tree an existing index was built from, also from an older version's index (a
    hook's detached run gives only --db); None for a new one."""
    if db.name == INDEX_DIRNAME and (db / "index.sqlite").is_file():
        return db.parent                      # the default place moves along with its tree
    try:
        return Store(db).identity.source or None if (db / "index.sqlite").is_file() else None
    except OldFormat as e:
        return e.source
    except DamagedIndex:
        return None


def refuse_read_only(db):
    """One line for an index this process may not write (a shared mount, a CI cache)."""
    if Path(db).is_dir() and not os.access(db, os.W_OK | os.X_OK):
        raise UsageError(f"the index at {db} is read-only: queries answer from it as it is; "
                         f"to update it, run index.py where the index can be written")


def open_for_write(db, source, model, rebuild=False, excludes=None):
    """The Store for source (created if needed), checked against its model and root, with
    its identity written (excludes None: the ones it has). A tree moved together with its
    index (in its default place) is simply the new root."""
    refuse_read_only(db)
    claim_index_folder(db)
    try:
        store = Store(db, create=True, writer=True)
    except OldFormat:
        store = open_store_afresh(db, "upgrading the index to this version's format")
    except DamagedIndex as e:
        if not rebuild:
            raise
        store = open_store_afresh(db, str(e).split(";")[0])
    model_id = resolve_model(model)[1]
    root = str(Path(source).resolve())
    known = store.identity
    known_model, known_root = known.model, known.source
    in_tree = Path(db) == Path(root) / INDEX_DIRNAME    # moves along with its tree
    if known_model and known_model != model_id and not rebuild:
        own, other = model_name(known_model), model_name(model_id)
        raise UsageError(f"the index at {db} was built with {own}, not {other}; add to it "
                         f"with {command_line(['--model', own])}, or give {other} an index "
                         f"of its own with --db DIR")
    if known_root and known_root != root and not rebuild and not in_tree:
        raise UsageError(f"the index at {db} belongs to {known_root}; "
                         f"use --db to put the index for {root} elsewhere, or --rebuild")
    known_precision = known.recorded_precision
    asked = PRECISION if PRECISION != "auto" else None
    if known_precision and asked and asked != known_precision and not rebuild:
        raise UsageError(f"the index at {db} holds {known_precision} vectors, and an index never "
                         f"mixes two precisions; use --rebuild to switch it to {asked}")
    precision = resolve_precision(None if rebuild and asked else known_precision)
    if known_model and known_model != model_id:     # --rebuild with another model
        store.vectors.forget_vectors()
    own_export = Path(db) / "model"       # an older version's export, or another model's
    if own_export.is_dir() and index_model(db, model_id, precision).folder != own_export:
        remove_unused(own_export)         # whole, once no server maps its weights (Windows)
    store.set_identity(Identity(model_id, precision, root, in_tree,
                                known.excludes if excludes is None else tuple(excludes)))
    return store


def rechunk_changed_languages(store):
    """Files of a language whose chunker changed since the index was built, or of every
    language if the texts the model reads changed shape (or which lines have a chunk of
    their own: cover_rest), are read and chunked again by this run; the vectors of windows
    whose text stayed come back from the cache."""
    versions = {lang.name: lang.version for lang in LANGUAGES} | {"text": TEXT_FORMAT} | \
        {f"uses {name}": v for name, v in USES_VERSIONS.items()} | {"rest": COVER_VERSION}
    known = json.loads(store.meta("chunkers", "{}"))
    changed = tuple(ext for lang in LANGUAGES if known.get(lang.name) != lang.version or
                    known.get("text") != TEXT_FORMAT or known.get("rest") != COVER_VERSION or
                    known.get(f"uses {lang.name}") != USES_VERSIONS.get(lang.name)
                    for ext in lang.extensions)
    store.forget_shas(lambda path: path.endswith(changed))
    store.set_meta(chunkers=json.dumps(versions))


def index_tree(source, db, model=None, excludes=(), rebuild=False, progress=True,
               embedder=None, detached=False, server=SERVER):
    """Index (or refresh) a whole tree; returns its summary line. detached: a background
    build, which leaves the work to a build already running. server: a team cache."""
    source, db = locate(source, db)
    started = time.time()
    refuse_bad_address(server)
    store = open_for_write(db, source, model, rebuild, excludes)
    rechunk_changed_languages(store)
    team = None
    if server:
        from .team_policy import TeamCache
        team = TeamCache(server, SERVER_TOKEN, store.identity.model, store.identity.precision)
    indexer = Indexer(store, source, Ignore(source, excludes), model, progress, embedder,
                      rebuild=rebuild, team=team, record=True)
    before = store.count("chunks")
    # detached, leave the work to a build that holds the lock (not to a --status that
    # holds it for a moment to see whether one does), with a mark it honours before it ends
    if not write_under_lock(store, indexer, None, wait=5 if detached else None, kind="build"):
        request_refresh(db)
        return f"another build of {db} is running; it will pick up every change"
    s = indexer.stats
    shared = f", {s['server']} from the team cache" if server else ""
    store.set_meta(from_server=str(s["server"]))
    files, chunks = store.count("files"), store.count("chunks")
    gone = f", {s['gone']} removed" if s["gone"] else ""
    errors = f", {s['parse_errors']} with parse errors: --status names them" \
        if s["parse_errors"] else ""
    others = chunks - (before + s["added"] - s["removed"])      # queries absorbing edits
    others = f", {others:+} by searches meanwhile" if others else ""
    return (f"indexed {source}: {files} files ({store.languages() or 'none'}; "
            f"{s['files']} changed{gone}{errors}), chunks "
            f"+{s['added']} ~{s['updated']} -{s['removed']}{others} (total {chunks}), "
            f"{s['embedded']} windows embedded, {s['cached']} from cache{shared} "
            f"({store.identity.precision}), {time.time() - started:.1f}s")


def push_only(source, server, excludes=(), model=None, progress=True):
    """Embed a tree into the team cache without keeping a local index (a CI job's pre-warm):
    a build into a temporary folder that is deleted after. A UsageError (exit 2) unless
    every window reached the server."""
    import shutil
    from .team_policy import preflight, scratch_folder, shown
    if not server:
        raise UsageError("--push-only needs a team cache: --server URL or CODEBASE_RAG_SERVER")
    source, _ = locate(source, None)
    preflight(server, SERVER_TOKEN)
    scratch = scratch_folder()
    try:
        line = index_tree(str(source), str(scratch / "index"), model, excludes,
                          progress=progress, server=server)
        fault = Store(scratch / "index").meta("team_fault")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if fault or fault is None:
        raise UsageError(f"--push-only: not everything reached the team cache at "
                         f"{shown(server)} ({fault or 'it was not used'}); run it again")
    return line.replace("indexed", "pushed", 1) + "; no local index kept"


def refuse_bad_address(server):
    """A team cache address its store would refuse is one line now, before anything is
    written or a detached build says it started (no connection is opened)."""
    if server:
        from .team_policy import store_for
        store_for(server, SERVER_TOKEN)


def record_failure(db, e):
    """A detached build that failed, also before its build began: its error, for --status
    (the process that started it has gone, and its output went to build.log). A writer
    that holds the lock meanwhile has the say on the state."""
    if is_locked(db):
        return
    try:
        Store(db).set_meta(build_state="failed", last_error=one_line(e),
                           last_error_at=f"{time.time():.1f}")
    except Exception:                   # noqa: BLE001 (no index to record it in)
        pass


def dry_run(source, excludes=()):
    """Yield (relative path, language, Chunk) for every chunk a build would index; embed
    nothing."""
    source, _ = locate(source, None)
    for rel, path, _ in walk(source, Ignore(source, excludes)):
        text = read_source(path, rel)
        chunks = chunk_file(rel, text) if text is not None else None
        chunks = cover_rest(text, chunks)[0] if chunks is not None else None
        for c in chunks or ():
            yield rel, language_of(rel, chunks), c


def chunk_record(rel, language, c):
    """A chunk as --dry-run --json prints it."""
    row = asdict(c)
    row["class"] = row.pop("cls")
    return {"file": rel, "language": language, **row}


def reindex_files(paths, db=None, model=None, progress=True, cwd=None):
    """Re-index the given files (--single) in whatever index covers each, waiting for the
    writer lock: a folder stands for the files the walk lists in it (and those the index
    holds there); a file gone from disk is removed. Returns (the stats of each index
    written, with asked: the files looked at; [(path, why)] of the paths with nothing to
    index). A path that is not there and that the index never held is a UsageError."""
    groups, skipped = {}, []
    for p in paths:
        if not encodable(p):
            raise UsageError(f"{printable(p)}: its name is not valid UTF-8, so no index holds it")
        found = store_for_file(p, db, cwd, writer=True)
        if found is None:
            raise UsageError(f"no index covers {printable(p)}, or it lies outside the indexed "
                             f"tree; run index.py in its source tree first")
        store, root, rel = found
        rels, why = single_targets(store, root, rel)
        if why and not os.path.lexists(root / rel):
            raise UsageError(f"{printable(p)}: {why}; nothing to do")
        if why:
            skipped.append((printable(p), why))
        groups.setdefault(str(store.folder), (store, root, set()))[2].update(rels)
    done = []
    for store, root, rels in groups.values():
        if not rels:
            continue
        refuse_read_only(store.folder)
        indexer = writer_for(store, root, model, progress, named=rels)
        write_under_lock(store, indexer, {rel: stat_or_none(root / rel) for rel in rels})
        done.append({**indexer.stats, "asked": len(rels)})
    return done, skipped


def single_targets(store, root, rel):
    """(the files --single looks at for a path, why there are none or None)."""
    full = root / rel
    held = {r for r in store.manifest() if r == rel or r.startswith(f"{rel}/")} if \
        full.is_dir() or not os.path.lexists(full) else set()      # removed if gone
    if full.is_dir():
        ignore = Ignore(root, store.identity.excludes)
        rels = held | {r for r, _, _ in walk(root, ignore, start=rel)}
        return rels, None if rels else "a folder with no file the index reads"
    if not os.path.lexists(full):
        return held, None if held else "no such file, and the index holds none by that name"
    if not Ignore(root, store.identity.excludes).included(rel):
        return set(), ("not a file the index reads (not in one of its languages, or "
                       "excluded by .gitignore or --exclude)")
    return {rel}, None


def writer_for(store, root, model=None, progress=False, named=()):
    """An Indexer for a run over part of an indexed tree (files, a hook's queue; named: the
    files asked for by name)."""
    claim_index_folder(store.folder)
    if store.identity.source != str(root):      # moved with its index: now it is here
        store.set_identity(replace(store.identity, source=str(root)))
    ignore = Ignore(root, store.identity.excludes)
    indexer = Indexer(store, root, ignore, model or store.identity.model, progress,
                      named=named)
    if store.identity.model != indexer.model_id:
        raise UsageError(f"the index at {store.folder} was built with "
                         f"{store.identity.model}, not {indexer.model_id}")
    return indexer


def apply_queue(db):
    """What the detached process of a hook runs: the queued edits, under the lock (a writer
    that holds it already applies them itself)."""
    store = Store(db, writer=True)
    write_under_lock(store, writer_for(store, store.root), {}, wait=HOOK_WAIT, kind="hook")


# ----------------------------------------------------------------------------- background


def start_background(source, db, excludes=(), model=None, server=None, rebuild=False):
    """Start a detached build or refresh of the tree; returns at once with one line, written
    for the model that reads it (Claude Code puts a SessionStart hook's output in its
    context): the state, and the exact tool or command that searches, with absolute paths.
    If a writer holds the lock it is left a mark to walk the tree again before it lets go."""
    source, db = locate(source, db)
    refuse_bad_address(server)
    refuse_read_only(db)
    claim_index_folder(db)
    try:
        store = Store(db, create=True)
    except OldFormat:
        store = None                  # an older version's index: the build upgrades it
    if is_locked(db):
        request_refresh(db)
    else:
        if store is not None:
            store.set_meta(build_state="starting", build_started=f"{time.time():.1f}")
        # the server's address travels in the environment, never on a command line (ps)
        start_refresh(db, f"background build of {source}", source, excludes, model, rebuild,
                      {SETTINGS["SERVER"].env: server} if server else {})
    search = (f'search it with the MCP tool search_code if it is connected, else run: '
              f'{QUERY_COMMAND} --db {db} "your question"')
    if store is None:
        return f"codebase-rag: the index of {source} is being upgraded in the background; {search}"
    files, languages = store.count("files"), store.languages()
    done, total = store.progress()
    if files and done == total and store.meta("build_state") in ("built", "starting"):
        return (f"codebase-rag: the index of {source} is ready ({files:,} files: {languages}) "
                f"and takes in changed files before every search; {search}")
    progress = f", {done / total:.0%} embedded" if total else ""
    return (f"codebase-rag: the index of {source} is being built in the background ({files:,} "
            f"files so far{progress}); searches answer meanwhile, ranked mostly by keywords "
            f"until it is done; {search}")
