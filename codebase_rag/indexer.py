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
from stat import S_ISREG

from .languages import chunk_source, language_for
from .config import CHUNK_SECONDS, FLUSH, MAX_TOKENS, PROGRESS_EVERY
from .embed import SMOKE_TEXT, index_model
from .export import resolve_model
from .chunkers import PLAIN_LINES, REST_MEMBER, ChunkerLimit, OverBudget, budget, cover_rest, \
    plain_windows
from .errors import one_line, printable, warn
from .lock import HOLDER, has_pending, record_holder, take_pending, take_refresh, writer_lock
from .oslayer import remove_unused
from .store import FileIndex, IndexedChunk
from .text import cache_key, chunk_body, chunk_header, chunk_text, lexical_text, \
    member_windows, text_key
from .uses import extract, new_use
from .walk import listed, read_source, tree_is_there, walk

FILES_PER_WRITE = 200         # step 1 commits this often, so a query soon sees the first files
SLICE = 64                    # windows the model embeds between two writes to the cache
SAVE_EVERY = 2.0              # seconds between two writes of the embedding rate (--status)


def chunk_file(rel, text):
    """The chunks of one file, as its chunker cuts them (build_file and --dry-run add the
    chunks of the lines they leave: chunkers.cover_rest), within CHUNK_SECONDS of CPU: one
    file must never block the whole index, nor a search or a hook that reads it. A file
    over the budget, or one its chunker fails on, is the plain windows of the whole file
    (with a warning naming it), still found by meaning and keywords; None (with a warning)
    for a file beyond any chunker (minified, nested too deep)."""
    try:
        with budget(CHUNK_SECONDS):
            return chunk_source(rel, text)
    except ChunkerLimit as e:
        warn(f"skipping {printable(rel)}: {e}")
        return None
    except OverBudget:
        why = f"its chunking took over {CHUNK_SECONDS:g}s of CPU"
    except Exception as e:
        why = f"the chunker failed ({' '.join(one_line(e).split())[:200]})"
    warn(f"{printable(rel)}: {why}; indexed as plain windows of {PLAIN_LINES} lines")
    return plain_windows(text)


def language_of(rel, chunks):
    """The language a file's chunks were read as: its extension's, or the one its content
    decided (a .h of C++ is cpp)."""
    return getattr(chunks, "language", "") or language_for(rel).name   # C#'s is a plain list


def build_file(rel, text, count_tokens, max_tokens=MAX_TOKENS):
    """(chunk rows with their keyword text, windows as (id, chunk id, ordinal, text), the
    file's parse errors, its uses, its decls (uses/)) for one file's text, or None if it
    cannot be chunked.
    count_tokens: word pieces per text; max_tokens: the most the model reads at once."""
    chunks = chunk_file(rel, text)
    if chunks is None:
        return None
    language = language_of(rel, chunks)
    uses, decls = extract_uses(rel, text, chunks, language)     # of the chunker's chunks
    chunks, place = cover_rest(text, chunks)
    uses = [u if u.chunk is None else new_use((place[u.chunk], *u[1:])) for u in uses]
    lines = text.split("\n")
    rows, window_texts = [], []
    for ordinal, c in enumerate(chunks):
        cid = f"{rel}#{ordinal}"
        row = IndexedChunk(cid, rel, language, c.namespace, c.cls, c.member, c.kind,
                           c.start_line, c.end_line, c.signature, chunk_text(lines, c))
        rows.append((row, lexical_text(rel, c, row.text)))
        if c.member == REST_MEMBER:        # imports, fields, a class's header: found by their
            continue                       # keywords; embedding them cost 14-19% of a build
        texts = member_windows(chunk_header(rel, c), chunk_body(lines, c), c.signature,
                               count_tokens, max_tokens)
        for w, wtext in enumerate(texts):
            window_texts.append((f"{cid}.{w}", cid, w, wtext.lstrip("\n")))
    return rows, window_texts, getattr(chunks, "parse_errors", 0), uses, decls


def extract_uses(rel, text, chunks, language):
    """(uses, decls) of a file; none, with a warning, if the extraction fails: the file's
    chunks are indexed all the same."""
    try:
        return extract(text, chunks, language)
    except Exception as e:
        warn(f"{printable(rel)}: its members' uses are not read ({type(e).__name__}: {e})")
        return [], []


class Indexer:
    """One writing run over an index. embedder: any Embedder (see embed.py); default: the
    index's exported model, at the index's precision. progress: notes and progress lines
    (not --quiet). A whole-tree run (build_runs.index_tree) says what it is: rebuild, drop
    everything first (under the lock); team, a TeamCache (team_policy.py) for a run with a
    server; record, a full run whose state, progress and errors --status reports. named:
    files a hook or --single named, read even if their size and time look the same (a second
    edit within the file system's time granularity)."""

    def __init__(self, store, root, ignore, model=None, progress=True, embedder=None, *,
                 rebuild=False, team=None, record=False, named=()):
        self.store, self.root, self.ignore = store, Path(root), ignore
        self.model_path, self.model_id = resolve_model(model)
        self.precision = store.identity.precision
        self.model = index_model(store.folder, self.model_id, self.precision)
        self.embedder = embedder
        # the tokenizer alone needs no model loaded: a build that embeds nothing is quick
        self.count_tokens = embedder.count_tokens if embedder else self.model.count_tokens
        self.max_tokens = getattr(embedder, "max_tokens", MAX_TOKENS) if embedder else \
            self.model.max_tokens     # each window fits the model: none is cut short
        self.progress = progress
        self.bar = progress and sys.stderr.isatty()
        self.meter = None             # step 2's progress, while it runs
        self.walked = set()           # paths the walk already found indexable
        self.read = set()             # files read and chunked by this run
        self.named = set(named)
        self.stats = dict(files=0, gone=0, added=0, updated=0, removed=0, embedded=0, cached=0,
                          server=0, parse_errors=0)
        self.rebuild, self.team, self.record = rebuild, team, record

    # -- step 1
    def run(self, work, deadline=None):
        """work: {relative path: os.stat_result or None (gone)}. Chunk what changed, files
        gone first. deadline (time.monotonic()): read no file after it; returns the paths
        left unread."""
        manifest = self.store.manifest()
        batch, left = [], set()
        for rel, st in sorted(work.items(), key=lambda item: (item[1] is not None, item[0])):
            known = manifest.get(rel)
            if st is None or not S_ISREG(st.st_mode) or rel not in self.walked and not (
                    self.ignore.included(rel) and listed(self.root, rel)):
                if known:                 # gone, ignored now, or no longer a file
                    tree_is_there(self.root)
                    batch.append(FileIndex(rel))
                    self.stats["gone"] += 1
                continue
            if known and known[2] and known[:2] == (st.st_mtime_ns, st.st_size) and \
                    rel not in self.named:
                continue
            if deadline is not None and time.monotonic() > deadline:
                left.add(rel)
                continue
            tree_is_there(self.root)          # before the read, whose failure would warn first
            text = read_source(self.root / rel, rel)
            sha = text_key(text) if text is not None else None
            if known and sha and known[2] == sha:
                self.store.touch(rel, st)
                continue
            built = build_file(rel, text, self.count_tokens, self.max_tokens) \
                if text is not None else None
            if built is None:                               # unreadable now: forget it
                if known:
                    batch.append(FileIndex(rel))
                continue
            rows, window_texts, parse_errors, uses, decls = built
            self.read.add(rel)
            self.stats["files"] = len(self.read)
            self.stats["parse_errors"] += bool(parse_errors)
            keys = [cache_key(text, self.precision) for _, _, _, text in window_texts]
            batch.append(FileIndex(rel, st.st_mtime_ns, st.st_size, sha, rows, [
                (f"{wid}.{key[:12]}", cid, w, key, text)        # an id that names its text
                for (wid, cid, w, text), key in zip(window_texts, keys)], uses, decls,
                parse_errors))
            if len(batch) >= FILES_PER_WRITE:
                self.write(batch)
                batch = []
        self.write(batch)
        return left

    def walk_tree(self):
        """{path: stat or None} for a whole-tree run (call with the lock held): every file the
        walk yields, and every file of the manifest it no longer yields (gone, or newly
        ignored). The directories' times are recorded at once, so that from now on, while
        this run still reads and embeds, a query finds a file added since the walk."""
        dirs = {}
        work = {rel: st for rel, _, st in walk(self.root, self.ignore, dirs)}
        self.walked |= set(work)
        work.update({rel: None for rel in self.store.manifest() if rel not in work})
        self.store.set_dirs(dirs, whole=True)
        return work

    def finished(self):
        """What a whole-tree run leaves for --status: the last build is the last run that
        changed the index; a run that found nothing to do only says when it looked."""
        now = time.time()
        s = self.stats
        if s["files"] or s["gone"] or s["embedded"] or s["server"]:
            took = now - float(self.store.meta("build_started", now))
            return dict(build_finished=f"{now:.1f}", build_took=f"{took:.1f}", checked_at="")
        return dict(checked_at=f"{now:.1f}")

    def write(self, files):
        added, updated, removed = self.store.replace_files(files)
        self.stats["added"] += added
        self.stats["updated"] += updated
        self.stats["removed"] += removed

    # -- both steps, under the lock
    def drain(self, work, rebuild=False):
        """Both steps over work, then over whatever came meanwhile, until nothing is left;
        then Chroma in step with the windows (call with the lock held). What came meanwhile
        is taken in one place (take_arrivals) before every batch of embedding, so an edit
        never waits for a long build. The model's export, if needed, runs meanwhile in a
        child process. rebuild: drop everything first, once the model is known to embed."""
        store = self.store
        export = self.model.ensure(self.progress) if self.embedder is None else None
        if rebuild:
            if export:
                export.result()
            self.embed([SMOKE_TEXT])
            store.prepare_rebuild()
        store.vectors.sync_flat()      # an older version's cache rows into vectors.f32
        while True:
            work = self.take_arrivals(work)
            if work:
                self.run(work)
                store.set_meta(reading="")
                work = {}
            if export:
                export.result()
                export = None
            if self.embed_batch():
                continue
            repaired = store.vectors.sync_vectors()
            if repaired:
                warn(f"repaired the vector store: {repaired}")
            elif not has_pending(store.folder) and not store.dirty_files():
                break
        if self.team:
            self.team.finish(store)

    def take_arrivals(self, work):
        """work, with what came since the last look: a whole-tree refresh asked for (a
        checkout), the files hooks queued, and the files left dirty (their windows' texts
        were lost)."""
        if take_refresh(self.store.folder):
            work = {**self.walk_tree(), **work}
        queued = take_pending(self.store.folder) if has_pending(self.store.folder) else set()
        self.named |= queued
        extra = set(self.store.dirty_files()) | queued
        return {**work, **{rel: stat_or_none(self.root / rel) for rel in extra if rel not in work}}

    # -- step 2
    def embed_batch(self):
        """Give up to FLUSH pending windows their vectors, in Chroma; False if none was
        pending (the step's progress then ends)."""
        store = self.store
        store.vectors.delete_doomed()
        rows = store.pending_windows(FLUSH)
        if not rows:
            if self.meter:
                self.meter.close()
                self.meter = None
            return False
        if self.meter is None:
            todo = store.count("windows") - store.embedded_count()
            self.meter = Meter(store, todo, self.progress, self.bar)
        vectors = self.vectors({key: text for _, key, text in rows})
        lost = [wid for wid, key, _ in rows if key not in vectors]
        if lost:                        # no text and no cached vector: read the file again
            store.reread(lost)
        ready = [(wid, vectors[key]) for wid, key, _ in rows if key in vectors]
        if not store.vectors.upsert_windows([w for w, _ in ready], [v for _, v in ready]):
            self.meter.close()         # Chroma made afresh: every window is to do again
            self.meter = None
        if self.record and not store.meta("members_covered_after") and \
                not store.first_windows_pending():
            since = float(store.meta("build_started", time.time()))
            store.set_meta(members_covered_after=f"{time.time() - since:.1f}")
        return True

    def vectors(self, texts):
        """{cache key: vector} for {cache key: text}: from the local cache, else from the
        team cache, else from the model (then cached, and shared). A key whose text is gone
        and that no cache holds is left out. The model's vectors are cached a slice at a
        time, so --status moves and a killed build keeps what it made."""
        found = self.store.vectors.cached_vectors(texts)
        missing = {k: t for k, t in texts.items() if k not in found and t is not None}
        self.stats["cached"] += len(texts) - len(missing)
        team = self.team if self.team and self.team.on else None
        if missing and team:
            shared = team.lookup(missing)
            if shared and not team.check(shared, missing, self.embed):
                self.store.vectors.forget_vectors(team.taken)   # all it gave: embed them here
                shared = {}
            self.store.vectors.cache_vectors(shared.items(), team=True)
            found.update(shared)
            self.stats["server"] += len(shared)
            missing = {k: t for k, t in missing.items() if k not in shared}
        if self.meter:
            self.meter.add(len(texts) - len(missing))
        self.stats["embedded"] += len(missing)
        made, keys = [], list(missing)
        for at in range(0, len(keys), SLICE):
            part = keys[at:at + SLICE]
            vectors = list(zip(part, self.embed([missing[k] for k in part])))
            self.store.vectors.cache_vectors(vectors)
            made += vectors
            if self.meter:
                self.meter.add(len(part))
        found.update(made)
        if made and team and team.on:
            team.upload(made)
        return found

    def embed(self, texts):
        return (self.embedder or self.model.embedder())(texts)


class Meter:
    """How far step 2 is: a bar on a terminal, else a line now and then (a CI log, an
    agent's shell); and its rate, written to the index every few seconds for --status."""

    def __init__(self, store, todo, lines, bar):
        self.store, self.todo, self.lines, self.done = store, todo, lines, 0
        self.started = self.saved = self.said = time.monotonic()
        self.bar, self.said_share = None, 0.0
        if bar and todo >= 100:
            from tqdm import tqdm
            self.bar = tqdm(total=todo, unit="window", desc="embedding", leave=False)
        elif lines:
            warn(f"embedding {todo:,} windows...")

    def add(self, n):
        self.done += n
        if self.bar:
            self.bar.update(n)
        now = time.monotonic()
        rate = self.done / max(now - self.started, 1e-3)
        if now - self.saved >= SAVE_EVERY:
            self.store.set_meta(embed_rate=f"{rate:.2f}")
            self.saved = now
        share = self.done / self.todo
        if self.lines and not self.bar and self.done < self.todo and (
                now - self.said >= PROGRESS_EVERY or share - self.said_share >= 0.1 and
                now - self.said >= PROGRESS_EVERY / 6):
            left = (self.todo - self.done) / max(rate, 1e-3)
            made, total = self.store.progress()       # the index's, as --status says it
            warn(f"embedding: {made:,} of {total:,} windows ({made / total:.0%}), "
                 f"{rate:.1f} windows/s, about {duration(left)} left")
            self.said, self.said_share = now, share

    def close(self):
        self.store.set_meta(embed_rate=f"{self.done / max(time.monotonic() - self.started, 1e-3):.2f}")
        if self.bar:
            self.bar.close()


def duration(seconds):
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m {seconds % 60:02d}s"
    return f"{seconds // 3600}h {seconds % 3600 // 60:02d}m"


def stat_or_none(path):
    try:
        return Path(path).stat()
    except OSError:
        return None


def write_under_lock(store, indexer, work, wait=None, kind="files"):
    """Run both steps over work (None: the whole tree, walked once the lock is held; and
    whatever comes meanwhile: Indexer.drain) holding the writer lock, with the run's state
    recorded for --status (what holds the lock, kind: build, files, hook; and for a full
    run, indexer.record, its progress and errors). An edit or a refresh asked for after the
    last look but before the release is taken by another turn, waiting a second at most.
    With wait set, give up after that many seconds; False if it did."""
    if not store.vectors.writer:
        raise ValueError("write_under_lock needs a Store opened with writer=True")
    turn = 0
    while lock := acquire(store.folder, wait if turn == 0 else 1, indexer.progress):
        record = indexer.record and turn == 0
        try:
            if record:                # from scratch: a first build (or one resumed), a rebuild
                scratch = indexer.rebuild or not store.embedded_count() or \
                    store.meta("from_scratch")
                store.set_meta(build_state="building", build_started=f"{time.time():.1f}",
                               members_covered_after="", from_scratch="1" if scratch else "")
            if work is None:
                work = indexer.walk_tree()
                store.set_meta(reading=str(sum(st is not None for st in work.values())))
            record_holder(store.folder, kind, len(work))
            indexer.drain(work, rebuild=indexer.rebuild and turn == 0)
            if record or indexer.walked:  # a whole-tree pass, done: the index is built
                store.set_meta(build_state="built", from_scratch="", **indexer.finished())
        except Exception as e:
            if record:
                store.set_meta(build_state="failed", last_error=one_line(e),
                               last_error_at=f"{time.time():.1f}")
            raise
        finally:
            remove_unused(store.folder / HOLDER)    # (a --status reading it: stays, harmless)
            lock.release()
        if not has_pending(store.folder):
            return True
        work, turn = {}, turn + 1
    return turn > 0


def acquire(folder, wait, progress):
    """The writer lock of the index folder, held; None if wait (seconds) ran out first."""
    from filelock import Timeout
    lock = writer_lock(folder)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        if wait is not None and wait <= 0:
            return None
        if progress:
            warn("waiting for another indexing run to finish...")
        try:
            lock.acquire(timeout=-1 if wait is None else wait)
        except Timeout:
            return None
    return lock
