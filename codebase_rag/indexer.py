"""Index: walk -> chunk -> embed -> store, for a whole tree, a few files or a hook's event.
Only what changed is read again; a window whose text was embedded before takes its vector
from the cache."""
import json
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path

from .chunkers import EXTENSIONS, chunker_for
from .config import BATCH, FLUSH, HOOK_WAIT, INDEX_DIRNAME, WINDOWS
from .embed import ExportedModel, resolve_model
from .errors import DamagedIndex, OldFormat, UsageError, warn
from .lock import has_pending, queue_pending, take_pending, writer_lock
from .store import (WINDOW_FIELDS, FileIndex, Store, claim_index_folder, find_index,
                    open_store_afresh)
from .text import chunk_body, chunk_header, chunk_text, lexical_text, text_key, windows
from .walk import Ignore, inside, read_source, walk


def chunk_file(rel, text):
    """The chunks of one file, or None (with a warning naming it) if its chunker fails:
    one file must never block the whole index."""
    try:
        return chunker_for(rel)(text)
    except Exception as e:
        warn(f"skipping {rel}: the chunker failed ({type(e).__name__}: {e})")
        return None


def build_file(rel, text, count_tokens):
    """(chunk rows with their lexical text, window texts) for one file's text, or None if
    it cannot be chunked. count_tokens: word pieces per text, for cutting windows."""
    chunks = chunk_file(rel, text)
    if chunks is None:
        return None
    lines = text.split("\n")
    rows, window_texts = [], []
    for ordinal, c in enumerate(chunks):
        cid = f"{rel}#{ordinal}"
        row = dict(id=cid, file=rel, namespace=c.namespace, **{"class": c.cls},
                   member=c.member, kind=c.kind, start_line=c.start_line,
                   end_line=c.end_line, signature=c.signature, text=chunk_text(lines, c))
        rows.append((row, lexical_text(rel, c, row["text"])))
        meta = {k: row[k] for k in WINDOW_FIELDS} | {"chunk": cid}
        texts = windows(chunk_header(rel, c), chunk_body(lines, c), count_tokens)
        for w, wtext in enumerate(texts[:1] if WINDOWS == "first" else texts):
            window_texts.append((f"{cid}.{w}", wtext.lstrip("\n"), meta))
    return rows, window_texts


class Indexer:
    """Turns files into FileIndex entries and writes them. One per writing run.
    embedder: any Embedder (texts -> unit vectors); default: the index's exported model."""

    def __init__(self, store, root, ignore, model=None, progress=True, embedder=None):
        self.store, self.root, self.ignore = store, Path(root), ignore
        self.model_path, self.model_id = resolve_model(model)
        self.model = ExportedModel(store.model_dir)
        self.embedder = embedder
        # the export's tokenizer needs no model loaded: a build that embeds nothing is quick
        self.count_tokens = embedder.count_tokens if embedder else self.model.count_tokens
        self.progress = progress and sys.stderr.isatty()
        self.walked = set()           # paths the walk already found indexable
        self.stats = dict(files=0, added=0, updated=0, removed=0, embedded=0, cached=0)
        self.rebuild = False          # drop everything first (under the lock)

    def embed(self, texts):
        """(cache keys, vectors) for texts, taking vectors from the cache where possible."""
        keys = [text_key(t) for t in texts]
        found = self.store.cached_vectors(set(keys))
        missing = sorted({k: t for k, t in zip(keys, texts) if k not in found}.items(),
                         key=lambda kv: len(kv[1]))        # similar lengths batch together
        self.stats["cached"] += len(keys) - len(missing)
        self.stats["embedded"] += len(missing)
        if missing:
            embedder = self.embedder or self.model.embedder()
            bar = None
            if self.progress and len(missing) >= 100:
                from tqdm import tqdm
                bar = tqdm(total=len(missing), unit="chunk", desc="embedding", leave=False)
            for i in range(0, len(missing), BATCH * 8):
                part = missing[i:i + BATCH * 8]
                vecs = embedder([t for _, t in part])
                self.store.cache_vectors(zip([k for k, _ in part], vecs))
                found.update(zip([k for k, _ in part], vecs))
                if bar:
                    bar.update(len(part))
            if bar:
                bar.close()
        return keys, [found[k] for k in keys]

    def run(self, work):
        """work: {relative path: os.stat_result or None (gone)}. Re-index what changed."""
        manifest = self.store.manifest()
        pending = []
        for rel, st in sorted(work.items()):
            known = manifest.get(rel)
            if st is None or rel not in self.walked and not (
                    self.ignore.included(rel) and inside(self.root / rel, self.root)):
                if known:
                    pending.append((FileIndex(rel), []))
                continue
            if known and known[2] and known[:2] == (st.st_mtime_ns, st.st_size):
                continue
            text = read_source(self.root / rel)
            sha = text_key(text) if text is not None else None
            if known and sha and known[2] == sha:
                self.store.touch(rel, st)
                continue
            built = build_file(rel, text, self.count_tokens) if text is not None else None
            if built is None:                               # unreadable now: forget it
                if known:
                    pending.append((FileIndex(rel), []))
                continue
            rows, window_texts = built
            self.stats["files"] += 1
            pending.append((FileIndex(rel, st.st_mtime_ns, st.st_size, sha, rows), window_texts))
            if sum(len(w) for _, w in pending) >= FLUSH:
                self.flush(pending)
                pending = []
        self.flush(pending)

    def flush(self, pending):
        texts = [t for _, wins in pending for _, t, _ in wins]
        keys, vectors = self.embed(texts) if texts else ([], [])
        embedded = iter(zip(keys, vectors))
        for f, wins in pending:
            f.windows = [(wid, vec.tolist(), meta, key)
                         for (wid, _, meta), (key, vec) in zip(wins, embedded)]
        added, updated, removed = self.store.write([f for f, _ in pending])
        self.stats["added"] += added
        self.stats["updated"] += updated
        self.stats["removed"] += removed


def stat_or_none(path):
    try:
        return os.stat(path)
    except OSError:
        return None


def write_under_lock(store, indexer, work, wait=None):
    """Run the indexer over work (and any dirty or pending files) holding the lock, after
    repairing the model export; then bring Chroma in step with the chunks. With wait set,
    give up after that many seconds; return False if it did."""
    from filelock import Timeout
    lock = writer_lock(store)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        if wait is not None and wait <= 0:
            return False
        if indexer.progress:
            warn("waiting for another indexing run to finish...")
        try:
            lock.acquire(timeout=-1 if wait is None else wait)
        except Timeout:
            return False
    try:
        store.writer = True
        if indexer.embedder is None:  # queries need the export even if nothing changed
            indexer.model.ensure(indexer.model_path, indexer.progress)
        if indexer.rebuild:
            (indexer.embedder or indexer.model.embedder())(["public void Refill()"])
            store.drop()              # only once the model is known to embed
        while True:
            extra = set(store.dirty_files()) | take_pending(store)
            work = dict(work)
            work.update({rel: stat_or_none(indexer.root / rel) for rel in extra if rel not in work})
            indexer.run(work)
            repaired = store.sync_vectors()
            if repaired:
                warn(f"repaired the vector store: {repaired}")
                continue               # re-embed whatever the cache could not restore
            if not has_pending(store):
                break
            work = {}
    finally:
        store.writer = False
        lock.release()
    # a hook may have queued a file after the last look but before the release
    if has_pending(store):
        return write_under_lock(store, indexer, {}, wait=0) or True
    return True


# ----------------------------------------------------------------------------- commands
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
    except (OldFormat, DamagedIndex) as e:
        if not rebuild:
            raise
        store = open_store_afresh(db, str(e).split(";")[0])
    model_path, model_id = resolve_model(model)
    root = str(Path(source).resolve())
    known_model, known_root = store.meta("model"), store.meta("source")
    in_tree = Path(db) == Path(root) / INDEX_DIRNAME    # moves along with its tree
    if known_model and known_model != model_id and not rebuild:
        raise UsageError(f"the index at {db} was built with {known_model}, not {model_id}; "
                         f"use --rebuild to start over with the new model")
    if known_root and known_root != root and not rebuild and not in_tree:
        raise UsageError(f"the index at {db} belongs to {known_root}; "
                         f"use --db to put the index for {root} elsewhere, or --rebuild")
    if known_model and known_model != model_id:     # --rebuild with another model
        import shutil
        shutil.rmtree(store.model_dir, ignore_errors=True)
        store.forget_vectors()
    store.set_meta(model=model_id, source=root, in_tree="1" if in_tree else "0")
    return store


def index_tree(source, db, model=None, excludes=(), rebuild=False, progress=True,
               embedder=None):
    """Index (or refresh) a whole tree; returns its summary line."""
    source, db = locate(source, db)
    started = time.time()
    store = open_for_write(db, source, model, rebuild)
    store.set_meta(excludes=json.dumps(list(excludes)))
    ignore = Ignore(source, excludes, EXTENSIONS)
    indexer = Indexer(store, source, ignore, model, progress, embedder)
    indexer.rebuild = rebuild
    work = {rel: st for rel, _, st in walk(source, ignore)}
    indexer.walked = set(work)
    work.update({rel: None for rel in store.manifest() if rel not in work})
    write_under_lock(store, indexer, work)
    s = indexer.stats
    return (f"indexed {source}: {len(work)} files ({s['files']} changed), chunks "
            f"+{s['added']} ~{s['updated']} -{s['removed']} (total {store.count('chunks')}), "
            f"{s['embedded']} embedded, {s['cached']} from cache, {time.time() - started:.1f}s")


def dry_run(source, excludes=()):
    """Yield (relative path, Chunk) for every chunk a build would index; embed nothing."""
    source, _ = locate(source, None)
    for rel, path, _ in walk(source, Ignore(source, excludes, EXTENSIONS)):
        text = read_source(path)
        for c in (chunk_file(rel, text) or ()) if text is not None else ():
            yield rel, c


def chunk_record(rel, c):
    """A chunk as --dry-run --json prints it."""
    row = asdict(c)
    row["class"] = row.pop("cls")
    return {"file": rel, **row}


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
        ignore = Ignore(root, json.loads(store.meta("excludes", "[]")), EXTENSIONS)
        indexer = Indexer(store, root, ignore, model or store.meta("model"), progress)
        if store.meta("model") != indexer.model_id:
            raise UsageError(f"the index at {store.folder} was built with "
                             f"{store.meta('model')}, not {indexer.model_id}")
        work = {rel: stat_or_none(root / rel) for rel in rels}
        indexer.model.preload()
        if wait is not None:
            queue_pending(store, rels)
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
