"""Runs: a whole tree (in the foreground, or detached in the background), a few files, a
hook's event; and what --status says about them."""
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

from .languages import EXTENSIONS, LANGUAGES, language_for
from .config import HOOK_WAIT, INDEX_DIRNAME, PRECISION, SERVER, SERVER_TOKEN
from .embed import resolve_model, resolve_precision
from .errors import DamagedIndex, OldFormat, UsageError, warn
from .indexer import Indexer, chunk_file, stat_or_none, write_under_lock
from .lock import is_locked, queue_pending
from .store import Store, claim_index_folder, find_index, open_store_afresh
from .walk import Ignore, inside, read_source, walk


def locate(source, db):
    """(source root, index folder) for a full run. Inside an indexed tree, with neither a
    source nor a db given, it is that tree's index, as query.py would find it."""
    if source is None and db is None:
        found = find_index(os.getcwd())
        if found is not None:
            return found.parent, found
    root = Path(source or ".").resolve()
    if not root.is_dir():
        raise UsageError(f"source directory not found: {source}")
    return root, Path(db).resolve() if db else root / INDEX_DIRNAME


def open_for_write(db, source, model, rebuild=False):
    """The Store for source (created if needed), checked against its model and root. A
    tree moved together with its index (in its default place) is simply the new root."""
    claim_index_folder(db)
    try:
        store = Store(db, create=True)
    except OldFormat:
        store = open_store_afresh(db, "upgrading the index to this version's format")
    except DamagedIndex as e:
        if not rebuild:
            raise
        store = open_store_afresh(db, str(e).split(";")[0])
    model_id = resolve_model(model)[1]
    root = str(Path(source).resolve())
    known_model, known_root = store.meta("model"), store.meta("source")
    in_tree = Path(db) == Path(root) / INDEX_DIRNAME    # moves along with its tree
    if known_model and known_model != model_id and not rebuild:
        raise UsageError(f"the index at {db} was built with {known_model}, not {model_id}; "
                         f"use --rebuild to start over with the new model")
    if known_root and known_root != root and not rebuild and not in_tree:
        raise UsageError(f"the index at {db} belongs to {known_root}; "
                         f"use --db to put the index for {root} elsewhere, or --rebuild")
    known_precision = store.meta("precision")
    asked = PRECISION if PRECISION != "auto" else None
    if known_precision and asked and asked != known_precision and not rebuild:
        raise UsageError(f"the index at {db} holds {known_precision} vectors, and an index never "
                         f"mixes two precisions; use --rebuild to switch it to {asked}")
    precision = resolve_precision(None if rebuild and asked else known_precision)
    if known_model and known_model != model_id:     # --rebuild with another model
        import shutil
        store.forget_vectors()
        shutil.rmtree(store.model_dir, ignore_errors=True)
    store.set_meta(model=model_id, source=root, in_tree="1" if in_tree else "0",
                   precision=precision)
    return store


def rechunk_changed_languages(store):
    """Files of a language whose chunker changed since the index was built are read and
    chunked again by this run; their vectors come back from the cache."""
    versions = {lang.name: lang.version for lang in LANGUAGES}
    known = json.loads(store.meta("chunkers", "{}"))
    changed = tuple(ext for lang in LANGUAGES if known.get(lang.name) != lang.version
                    for ext in lang.extensions)
    store.forget_shas(lambda path: path.endswith(changed))
    store.set_meta(chunkers=json.dumps(versions))


def index_tree(source, db, model=None, excludes=(), rebuild=False, progress=True,
               embedder=None, detached=False, server=SERVER):
    """Index (or refresh) a whole tree; returns its summary line. detached: a background
    build, which leaves the work to a build already running. server: a team cache."""
    source, db = locate(source, db)
    started = time.time()
    store = open_for_write(db, source, model, rebuild)
    store.set_meta(excludes=json.dumps(list(excludes)))
    rechunk_changed_languages(store)
    ignore = Ignore(source, excludes)
    indexer = Indexer(store, source, ignore, model, progress, embedder)
    indexer.rebuild = rebuild
    if server:
        from .remote import TeamCache
        indexer.team = TeamCache(server, SERVER_TOKEN, indexer.model_id, indexer.precision)
    work = {rel: st for rel, _, st in walk(source, ignore)}
    indexer.walked = set(work)
    work.update({rel: None for rel in store.manifest() if rel not in work})
    # detached, leave the work to a build that holds the lock (not to a --status that
    # holds it for a moment to see whether one does)
    if not write_under_lock(store, indexer, work, wait=5 if detached else None, record=True):
        return f"another build of {db} is running; it will pick up every change"
    s = indexer.stats
    shared = f", {s['server']} from the team cache" if server else ""
    store.set_meta(from_server=str(s["server"]))
    return (f"indexed {source}: {len(work)} files ({s['files']} changed), chunks "
            f"+{s['added']} ~{s['updated']} -{s['removed']} (total {store.count('chunks')}), "
            f"{s['embedded']} windows embedded, {s['cached']} from cache{shared} "
            f"({store.meta('precision')}), {time.time() - started:.1f}s")


def push_only(source, server, excludes=(), model=None, progress=True):
    """Embed a tree into the team cache without keeping a local index (a CI job's pre-warm):
    a build into a temporary folder that is deleted after."""
    import shutil
    import tempfile
    if not server:
        raise UsageError("--push-only needs a team cache: --server URL or CODEBASE_RAG_SERVER")
    source, _ = locate(source, None)
    scratch = Path(tempfile.mkdtemp(prefix="codebase-rag-push-"))
    try:
        line = index_tree(str(source), str(scratch / "index"), model, excludes,
                          progress=progress, server=server)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return line.replace("indexed", "pushed", 1) + "; no local index kept"


def dry_run(source, excludes=()):
    """Yield (relative path, Chunk) for every chunk a build would index; embed nothing."""
    source, _ = locate(source, None)
    for rel, path, _ in walk(source, Ignore(source, excludes)):
        text = read_source(path)
        for c in (chunk_file(rel, text) or ()) if text is not None else ():
            yield rel, c


def chunk_record(rel, c):
    """A chunk as --dry-run --json prints it."""
    row = asdict(c)
    row["class"] = row.pop("cls")
    return {"file": rel, "language": language_for(rel).name, **row}


def store_for_file(path, db=None, cwd=None):
    """(store, source root, relative path) for a file, or None if no index covers it, or
    if it lies outside the indexed tree (after resolving '..' and symlinks)."""
    path = os.path.normpath(os.path.join(cwd or os.getcwd(), os.path.expanduser(path)))
    folder = Path(db) if db else find_index(Path(path).parent)
    if folder is None or not (Path(folder) / "index.sqlite").is_file():
        return None
    store = Store(folder)
    root = Path(store.meta("source", ""))
    if store.meta("in_tree") == "1":
        root = Path(folder).absolute().parent       # wherever the tree has moved since
    for base in dict.fromkeys((str(root), os.path.realpath(root))):
        if path.startswith(base.rstrip(os.sep) + os.sep) and inside(path, root):
            return store, root, Path(os.path.relpath(path, base)).as_posix()
    return None


def reindex_files(paths, db=None, model=None, wait=None, progress=True, cwd=None):
    """Re-index the given files in whatever index covers each. Returns the stats of each
    index written. With wait set (a hook), paths no index covers are skipped silently."""
    groups = {}
    for p in paths:
        found = store_for_file(p, db, cwd)
        if found is None:
            if wait is None:
                raise UsageError(f"no index covers {p}, or it lies outside the indexed tree; "
                                 f"run index.py in its source tree first")
            continue
        store, root, rel = found
        groups.setdefault(str(store.folder), (store, root, set()))[2].add(rel)
    done = []
    for store, root, rels in groups.values():
        claim_index_folder(store.folder)
        if store.meta("source") != str(root):
            store.set_meta(source=str(root))
        ignore = Ignore(root, json.loads(store.meta("excludes", "[]")))
        indexer = Indexer(store, root, ignore, model or store.meta("model"), progress)
        if store.meta("model") != indexer.model_id:
            raise UsageError(f"the index at {store.folder} was built with "
                             f"{store.meta('model')}, not {indexer.model_id}")
        work = {rel: stat_or_none(root / rel) for rel in rels}
        indexer.model.preload()
        if wait is not None:
            queue_pending(store.folder, rels)
            work = {}
        if write_under_lock(store, indexer, work, wait):
            done.append(indexer.stats)
        else:
            warn(f"index busy; {len(rels)} file(s) queued for the running indexer")
    return done


HOOK_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")


def handle_hook(event, db=None, model=None):
    """A Claude Code PostToolUse event (parsed JSON): re-index the file it edited."""
    if not isinstance(event, dict) or event.get("tool_name", "Edit") not in HOOK_TOOLS:
        return
    tool_input = event.get("tool_input") or {}
    path = tool_input.get("file_path") or tool_input.get("notebook_path")
    if not isinstance(path, str) or not path.endswith(EXTENSIONS):
        return
    path = path.replace("\\", "/")
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
    reindex_files([path], db, model, wait=HOOK_WAIT, progress=False, cwd=cwd)


# ----------------------------------------------------------------------------- background
LOG = "build.log"


def start_background(source, db, excludes=(), model=None, server=None):
    """Start (or leave running) a detached build of the tree; returns at once with one line.
    The build runs in a session of its own, so killing the hook or terminal that started it
    does not stop it; its output goes to build.log in the index folder."""
    source, db = locate(source, db)
    claim_index_folder(db)
    if is_locked(db):
        return f"a build of {db} is already running; see: python index.py --status"
    Store(db, create=True).set_meta(build_state="starting", build_started=f"{time.time():.1f}")
    log = Path(db) / LOG
    if log.is_file() and log.stat().st_size > 1_000_000:
        os.replace(log, log.with_suffix(".log.1"))
    command = [sys.executable, str(Path(__file__).resolve().parents[1] / "index.py"),
               "--source", str(source), "--db", str(db), "--quiet", "--detached"]
    command += [f"--exclude={glob}" for glob in excludes]
    command += ["--model", model] if model else []
    command += ["--server", server] if server else []
    with open(log, "a") as out:
        out.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} background build of {source}\n")
        out.flush()
        child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out,
                                 stderr=subprocess.STDOUT, start_new_session=True,
                                 close_fds=True)
    return (f"building {source} in the background (pid {child.pid}); queries work meanwhile; "
            f"see: python index.py --status")
