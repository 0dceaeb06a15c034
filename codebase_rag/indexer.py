"""Index: walk -> chunk -> embed -> store, in two steps so that keyword search works
within seconds and semantic search fills in as the model works through the windows:
    1. every changed file is read, chunked and cut into windows; its chunks, keyword rows
       and windows replace the old ones (the new windows pending);
    2. pending windows get their vectors, from the cache or the model, every member's
       first window before any later one, and go into Chroma.
A window whose text was embedded before takes its vector from the cache."""
import sys
import time
from pathlib import Path

from .languages import chunk_source, language_for
from .config import FLUSH
from .embed import SMOKE_TEXT, index_model
from .export import resolve_model
from .chunkers import ChunkerLimit
from .errors import UsageError, one_line, printable, warn
from .lock import HOLDER, has_pending, record_holder, take_pending, take_refresh, writer_lock
from .store import FileIndex, IndexedChunk
from .text import cache_key, chunk_body, chunk_header, chunk_text, lexical_text, \
    member_windows, text_key
from .walk import inside, read_source, walk

FILES_PER_WRITE = 200         # step 1 commits this often, so a query soon sees the first files


def chunk_file(rel, text):
    """The chunks of one file, or None (with a warning naming it) if its chunker fails:
    one file must never block the whole index."""
    try:
        return chunk_source(rel, text)
    except ChunkerLimit as e:
        warn(f"skipping {printable(rel)}: {e}")
    except Exception as e:
        warn(f"skipping {printable(rel)}: the chunker failed ({type(e).__name__}: {e})")
    return None


def build_file(rel, text, count_tokens):
    """(chunk rows with their keyword text, windows as (id, chunk id, ordinal, text), the
    file's parse errors) for one file's text, or None if it cannot be chunked.
    count_tokens: word pieces per text."""
    chunks = chunk_file(rel, text)
    if chunks is None:
        return None
    lines = text.split("\n")
    language = language_for(rel).name
    rows, window_texts = [], []
    for ordinal, c in enumerate(chunks):
        cid = f"{rel}#{ordinal}"
        row = IndexedChunk(cid, rel, language, c.namespace, c.cls, c.member, c.kind,
                           c.start_line, c.end_line, c.signature, chunk_text(lines, c))
        rows.append((row, lexical_text(rel, c, row.text)))
        texts = member_windows(chunk_header(rel, c), chunk_body(lines, c), c.signature,
                               count_tokens)
        for w, wtext in enumerate(texts):
            window_texts.append((f"{cid}.{w}", cid, w, wtext.lstrip("\n")))
    return rows, window_texts, getattr(chunks, "parse_errors", 0)


class Indexer:
    """One writing run over an index. embedder: any Embedder (see embed.py); default: the
    index's exported model, at the index's precision."""

    def __init__(self, store, root, ignore, model=None, progress=True, embedder=None):
        self.store, self.root, self.ignore = store, Path(root), ignore
        self.model_path, self.model_id = resolve_model(model)
        self.precision = store.meta("precision") or "fp32"
        self.model = index_model(store.folder, self.model_id, self.precision)
        self.embedder = embedder
        # the tokenizer alone needs no model loaded: a build that embeds nothing is quick
        self.count_tokens = embedder.count_tokens if embedder else self.model.count_tokens
        self.progress = progress and sys.stderr.isatty()
        self.walked = set()           # paths the walk already found indexable
        self.stats = dict(files=0, added=0, updated=0, removed=0, embedded=0, cached=0,
                          server=0, parse_errors=0)
        self.team = None              # a TeamCache (remote.py), for full runs with a server
        self.rebuild = False          # drop everything first (under the lock)
        self.record = False           # a full run: keep its state for --status
        self.dirs = None              # {directory: mtime_ns} of a whole-tree walk

    # -- step 1
    def run(self, work):
        """work: {relative path: os.stat_result or None (gone)}. Chunk what changed."""
        manifest = self.store.manifest()
        batch = []
        for rel, st in sorted(work.items()):
            known = manifest.get(rel)
            if st is None or rel not in self.walked and not (
                    self.ignore.included(rel) and inside(self.root / rel, self.root)):
                if known:
                    self.tree_is_there()
                    batch.append(FileIndex(rel))
                continue
            if known and known[2] and known[:2] == (st.st_mtime_ns, st.st_size):
                continue
            self.tree_is_there()          # before the read, whose failure would warn first
            text = read_source(self.root / rel)
            sha = text_key(text) if text is not None else None
            if known and sha and known[2] == sha:
                self.store.touch(rel, st)
                continue
            built = build_file(rel, text, self.count_tokens) if text is not None else None
            if built is None:                               # unreadable now: forget it
                if known:
                    batch.append(FileIndex(rel))
                continue
            rows, window_texts, parse_errors = built
            self.stats["files"] += 1
            self.stats["parse_errors"] += bool(parse_errors)
            keys = [cache_key(text, self.precision) for _, _, _, text in window_texts]
            batch.append(FileIndex(rel, st.st_mtime_ns, st.st_size, sha, rows, [
                (f"{wid}.{key[:12]}", cid, w, key, text)        # an id that names its text
                for (wid, cid, w, text), key in zip(window_texts, keys)]))
            if len(batch) >= FILES_PER_WRITE:
                self.write(batch)
                batch = []
        self.write(batch)

    def tree_is_there(self):
        """Before a file is dropped or skipped as gone: a tree moved or deleted mid-run must
        not empty its index."""
        if not self.root.is_dir():
            raise UsageError(f"{printable(str(self.root))} moved or was deleted while it was being "
                             f"indexed; the index keeps what it had: run index.py where the "
                             f"tree is now")

    def write(self, files):
        added, updated, removed = self.store.replace_files(files)
        self.stats["added"] += added
        self.stats["updated"] += updated
        self.stats["removed"] += removed

    # -- step 2
    def embed_pending(self):
        """Give every pending window its vector, in Chroma. Files queued by hooks meanwhile
        are chunked between two batches, so an edit never waits for a long build."""
        store = self.store
        store.delete_doomed()
        todo = store.count("windows") - store.embedded_count()
        if not todo:
            return
        bar = None
        if self.progress and todo >= 100:
            from tqdm import tqdm
            bar = tqdm(total=todo, unit="window", desc="embedding", leave=False)
        started, done = time.time(), 0
        while True:
            if has_pending(store.folder):
                self.run({rel: stat_or_none(self.root / rel) for rel in take_pending(store.folder)})
                store.delete_doomed()
            rows = store.pending_windows(FLUSH)
            if not rows:
                break
            vectors = self.vectors({key: text for _, key, text in rows})
            lost = [wid for wid, key, _ in rows if key not in vectors]
            if lost:                    # no text and no cached vector: read the file again
                store.reread(lost)
            ready = [(wid, vectors[key]) for wid, key, _ in rows if key in vectors]
            store.upsert_windows([w for w, _ in ready], [v for _, v in ready])
            done += len(rows)
            store.set_meta(embed_rate=f"{done / max(time.time() - started, 1e-3):.2f}")
            if self.record and not store.meta("members_covered_after") and \
                    not store.first_windows_pending():
                since = float(store.meta("build_started", started))
                store.set_meta(members_covered_after=f"{time.time() - since:.1f}")
            if bar:
                bar.update(len(rows))
        if bar:
            bar.close()

    def vectors(self, texts):
        """{cache key: vector} for {cache key: text}: from the local cache, else from the
        team cache, else from the model (then cached, and shared). A key whose text is gone
        and that no cache holds is left out."""
        found = self.store.cached_vectors(texts)
        missing = {k: t for k, t in texts.items() if k not in found and t is not None}
        self.stats["cached"] += len(texts) - len(missing)
        team = self.team if self.team and self.team.on else None
        if missing and team:
            shared = team.lookup(missing)
            if shared and not team.check(shared, missing, self.embed):
                self.store.forget_vectors(team.taken)   # all it gave: embed them here
                shared = {}
            self.store.cache_vectors(shared.items(), team=True)
            found.update(shared)
            self.stats["server"] += len(shared)
            missing = {k: t for k, t in missing.items() if k not in shared}
        self.stats["embedded"] += len(missing)
        if missing:
            made = list(zip(missing, self.embed(list(missing.values()))))
            self.store.cache_vectors(made)
            found.update(made)
            if team and team.on:
                team.upload(made)
        return found

    def embed(self, texts):
        return (self.embedder or self.model.embedder())(texts)


def stat_or_none(path):
    try:
        return Path(path).stat()
    except OSError:
        return None


def tree_work(store, indexer):
    """{path: stat or None} for a whole-tree refresh: every file the walk yields, and every
    file of the manifest it no longer yields (gone, or newly ignored)."""
    indexer.dirs = {}                         # recorded once the run is done (see below)
    work = {rel: st for rel, _, st in walk(indexer.root, indexer.ignore, indexer.dirs)}
    indexer.walked |= set(work)
    work.update({rel: None for rel in store.manifest() if rel not in work})
    return work


def write_under_lock(store, indexer, work, wait=None, record=False, kind="files"):
    """Run both steps over work (and any dirty or queued files) holding the lock; then bring
    Chroma in step with the windows. The model's export, if needed, runs meanwhile in a
    child process. With wait set, give up after that many seconds; False if it did.
    record: a full run, whose state, progress and errors --status reports. kind: what
    --status says holds the lock (build, files, hook)."""
    from filelock import Timeout
    lock = writer_lock(store.folder)
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
    indexer.record = record
    try:
        record_holder(store.folder, kind, len(work))
        store.writer = True
        if record:
            store.set_meta(build_state="building", build_started=f"{time.time():.1f}",
                           members_covered_after="")
        export = indexer.model.ensure(indexer.progress) if indexer.embedder is None else None
        if indexer.rebuild:
            if export:
                export.result()
            (indexer.embedder or indexer.model.embedder())([SMOKE_TEXT])
            store.prepare_rebuild()   # only once the model is known to embed
        store.sync_flat()             # an older version's cache rows into vectors.f32
        while True:
            if take_refresh(store.folder):
                work = {**tree_work(store, indexer), **work}
            extra = set(store.dirty_files()) | take_pending(store.folder)
            work = dict(work)
            work.update({rel: stat_or_none(indexer.root / rel) for rel in extra if rel not in work})
            indexer.run(work)
            if export:
                export.result()
                export = None
            indexer.embed_pending()
            repaired = store.sync_vectors()
            if repaired:
                warn(f"repaired the vector store: {repaired}")
            elif not has_pending(store.folder) and not store.dirty_files():
                break
            work = {}
        if indexer.team:
            indexer.team.finish(store)
        if indexer.dirs is not None:          # the times as the walk saw them: a file added
            store.set_dirs(indexer.dirs, whole=True)     # since is found by the next query
        if record:
            store.set_meta(build_state="built", build_finished=f"{time.time():.1f}")
    except Exception as e:
        if record:
            store.set_meta(build_state="failed", last_error=one_line(e),
                           last_error_at=f"{time.time():.1f}")
        raise
    finally:
        store.writer = False
        (store.folder / HOLDER).unlink(missing_ok=True)
        lock.release()
    # an edit or a refresh may have been asked for after the last look but before the release
    if has_pending(store.folder):
        return write_under_lock(store, indexer, {}, wait=1, kind=kind) or True
    return True
