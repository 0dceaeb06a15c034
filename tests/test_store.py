"""The store: index.sqlite and Chroma together, written with hand-made files and vectors
(no model). What it must guarantee: the folder is the tool's alone, a write replaces a
file's chunks and vectors whole, a write killed midway is repaired by the next, and Chroma
can always be refilled from the embedding cache."""
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from codebase_rag import flat as flatfile
from codebase_rag.config import INDEX_COMMAND
from codebase_rag.errors import OldFormat, UsageError
from codebase_rag.folder import claim_index_folder, owned
from codebase_rag.keywords import Fts5Keywords
from codebase_rag.nearest import CacheScan
from codebase_rag.store import FileIndex, IndexedChunk, Store, open_store_afresh


def vector_of(member):
    vec = np.random.default_rng(abs(hash(member)) % 2**32).standard_normal(384)
    return (vec / np.linalg.norm(vec)).astype(np.float32)


def file_index(rel, members, sha="sha"):
    """A FileIndex for a file with the given member names: one window each, whose cache
    key names the member."""
    chunks, windows = [], []
    for ordinal, member in enumerate(members):
        cid = f"{rel}#{ordinal}"
        row = IndexedChunk(cid, rel, "csharp", "N", "C", member, "method", ordinal * 10 + 1,
                           ordinal * 10 + 5, f"void {member}()", f"void {member}() {{ }}")
        chunks.append((row, (member, row.text)))
        windows.append((f"{cid}.0", cid, 0, f"key-{member}", f"method {member}"))
    return FileIndex(rel, 1, 1, sha, chunks, windows)


@pytest.fixture
def store(tmp_path):
    claim_index_folder(tmp_path / "db")
    return Store(tmp_path / "db", create=True, writer=True)


def write(store, *files):
    """Both steps of a build, with vectors made up for each member."""
    changes = store.replace_files(list(files))
    store.vectors.delete_doomed()
    pending = store.pending_windows(1000)
    store.vectors.cache_vectors((key, vector_of(key)) for _, key, _ in pending)
    store.vectors.upsert_windows([w for w, _, _ in pending], [vector_of(k) for _, k, _ in pending])
    return changes


def chroma_ids(store):
    return sorted(store.vectors.collection.get(embeddings=False)[0])


# ----------------------------------------------------------------------------- the folder
def test_the_tool_claims_only_new_empty_or_its_own_folders(tmp_path):
    claim_index_folder(tmp_path / "new")
    assert owned(tmp_path / "new") and (tmp_path / "new" / ".gitignore").is_file()
    (tmp_path / "empty").mkdir()
    claim_index_folder(tmp_path / "empty")
    assert owned(tmp_path / "empty")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    with pytest.raises(UsageError, match="not a codebase-rag index"):
        claim_index_folder(tmp_path / "mine")
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == ["notes.txt"]


def test_an_index_made_before_the_marker_existed_is_still_the_tools(tmp_path):
    old = tmp_path / "old"
    old.mkdir()
    (old / ".gitignore").write_text("# created by codebase-rag\n*\n")
    sqlite3.connect(old / "index.sqlite").close()
    claim_index_folder(old)
    assert (old / ".codebase-rag-index").is_file()


# ----------------------------------------------------------------------------- writes
def test_a_write_replaces_a_files_chunks_and_vectors_whole(store):
    assert write(store, file_index("A.cs", ["Load", "Save"]), file_index("B.cs", ["Run"])) == (3, 0, 0)
    assert chroma_ids(store) == ["A.cs#0.0", "A.cs#1.0", "B.cs#0.0"]
    assert write(store, file_index("A.cs", ["Load"], sha="sha2")) == (0, 1, 1)
    assert chroma_ids(store) == ["A.cs#0.0", "B.cs#0.0"]
    assert write(store, FileIndex("B.cs")) == (0, 0, 1)              # removed
    assert chroma_ids(store) == ["A.cs#0.0"] and list(store.manifest()) == ["A.cs"]
    assert store.embedded_count() == 1 and store.count("chunks") == 1
    assert list(Fts5Keywords(store).best("load", 10)) == ["A.cs#0"]
    assert Fts5Keywords(store).best("save", 10) == {}


def test_new_windows_wait_and_first_windows_go_first(store):
    f = file_index("A.cs", ["Load", "Save"])
    f.windows.append(("A.cs#0.1", "A.cs#0", 1, "key-Load-2", "method Load, later lines"))
    store.replace_files([f])
    assert store.count("windows") == 3 and store.embedded_count() == 0
    assert list(Fts5Keywords(store).best("save", 10)) == ["A.cs#1"]  # keywords work at once
    assert [w for w, _, _ in store.pending_windows(10)] == ["A.cs#0.0", "A.cs#1.0", "A.cs#0.1"]
    assert store.first_windows_pending()
    store.vectors.upsert_windows(["A.cs#0.0", "A.cs#1.0"], [vector_of("a"), vector_of("b")])
    assert not store.first_windows_pending() and store.embedded_count() == 2


def test_a_write_killed_midway_is_finished_by_the_next(store, monkeypatch):
    write(store, file_index("A.cs", ["Load", "Save"]))

    def crash(*args):
        raise KeyboardInterrupt               # as if killed while Chroma was written
    monkeypatch.setattr(type(store.vectors.collection), "delete", crash)
    store.replace_files([file_index("A.cs", ["Load"], sha="sha2")])
    with pytest.raises(KeyboardInterrupt):
        store.vectors.delete_doomed()
    monkeypatch.undo()
    assert store.count("doomed") == 1 and store.count("windows") == 1     # Save's window
    write(store)                              # the next run of any kind finishes the work
    assert store.count("doomed") == 0 and chroma_ids(store) == ["A.cs#0.0"]


def test_a_window_whose_text_survives_a_write_keeps_its_vector(store):
    """A window id names its text: chunking a file again that changed elsewhere (or not at
    all) leaves the unchanged windows embedded, and dooms only the ones that are gone."""
    write(store, file_index("A.cs", ["Load", "Save"]))
    store.replace_files([file_index("A.cs", ["Load", "Reset"], sha="sha2")])
    assert [w for w, _, _ in store.pending_windows(10)] == ["A.cs#1.0"]    # Reset, not Load
    assert store.window_chunks(["A.cs#0.0", "A.cs#1.0"]) == {"A.cs#0.0": "A.cs#0"}
    assert store.db.execute("SELECT id FROM doomed").fetchall() == [("A.cs#1.0",)]    # Save's


def test_a_lookup_by_window_or_file_costs_the_same_in_a_large_index(store):
    """What a query and a re-chunk look up by window id or by file costs SQLite the same
    work (virtual-machine steps, not seconds) in an index of 3,000 embedded windows as in
    one of 1: no lookup walks every embedded window."""
    def steps(work):
        count = [0]
        store.db.set_progress_handler(lambda: count.__setitem__(0, count[0] + 1), 10)
        work()
        store.db.set_progress_handler(None, 10)
        return count[0]

    def lookups():
        store.window_chunks(["A.cs#0.0", "A.cs#1.0"])
        store.replace_files([file_index("A.cs", ["Load", "Save"], sha=f"sha{len(counts)}")])
        store.vectors.delete_doomed()
        store.pending_windows(10, files=["A.cs"])
    counts = []
    for files in (0, 300):
        store.replace_files([file_index(f"F{i}.cs", [f"M{i}_{j}" for j in range(10)])
                             for i in range(files)] + [file_index("A.cs", ["Load", "Save"])])
        with store.db:
            store.db.execute("UPDATE windows SET embedded=1")
        counts.append(steps(lookups))
    assert store.embedded_count() >= 3000 and counts[1] < 2 * counts[0], counts


# ----------------------------------------------------------------------------- repair
def test_a_lost_chroma_is_refilled_from_the_embedding_cache(store, tmp_path):
    import shutil
    write(store, file_index("A.cs", ["Load", "Save"]), file_index("B.cs", ["Run"]))
    shutil.rmtree(tmp_path / "db" / "chroma")
    store.vectors._collection = None
    assert "3 windows to restore" in store.vectors.sync_vectors()
    assert store.embedded_count() == 0
    write(store)                              # their vectors come back from the cache
    assert chroma_ids(store) == ["A.cs#0.0", "A.cs#1.0", "B.cs#0.0"]
    assert np.allclose(store.vectors.collection.get(["A.cs#1.0"])[1][0], vector_of("key-Save"))
    assert store.vectors.sync_vectors() is None        # in step now: nothing to do


def test_stray_vectors_are_removed_and_missing_ones_restored(store):
    write(store, file_index("A.cs", ["Load", "Save"]))
    store.vectors.collection.delete(["A.cs#1.0"])
    store.vectors.collection.upsert(["Gone.cs#0.0", "Gone.cs#1.0"], [[1.0] + [0.0] * 383] * 2, None)
    assert "2 strays removed" in store.vectors.sync_vectors()
    write(store)
    assert chroma_ids(store) == ["A.cs#0.0", "A.cs#1.0"]


def test_a_window_with_neither_text_nor_cached_vector_sends_its_file_back(store):
    write(store, file_index("A.cs", ["Load"]))
    store.vectors.forget_vectors()
    store.vectors.collection.delete(["A.cs#0.0"])
    store.vectors.sync_vectors()                      # pending again, its text long gone
    [(wid, key, text)] = store.pending_windows(10)
    assert text is None and not store.vectors.cached_vectors([key])
    store.reread([wid])
    assert store.dirty_files() == ["A.cs"] and store.count("windows") == 0


def test_an_old_format_is_rebuilt_keeping_the_embedding_cache(store, tmp_path, capsys):
    write(store, file_index("A.cs", ["Load", "Save"]))
    with store.db:
        store.db.execute("UPDATE meta SET value='1' WHERE key='schema'")
    with pytest.raises(OldFormat):
        Store(tmp_path / "db")
    fresh = open_store_afresh(tmp_path / "db", "an older format")
    assert fresh.count("chunks") == 0
    assert set(fresh.vectors.cached_vectors({"key-Load", "key-Save"})) == {"key-Load", "key-Save"}
    assert "keeping 2 cached vectors" in capsys.readouterr().err


# ----------------------------------------------------------------------------- vectors.f32
def flat_in_step(store):
    """Whether vectors.f32 holds every cached vector at its seq, and flat_seq is the last."""
    rows = store.db.execute("SELECT seq, vec FROM vectors").fetchall()
    data = np.fromfile(store.vectors.flat_path(), dtype="<f4").reshape(-1, 384)
    return store.vectors.flat_seq() == max(s for s, _ in rows) and \
        all(data[s].tobytes() == vec for s, vec in rows)


def near(qvec, rng, spread=0.3):
    vec = qvec + spread * rng.standard_normal(384) / np.sqrt(384)
    return (vec / np.linalg.norm(vec)).astype(np.float32)


def many_members(store, files=20, members=20):
    """files x members windows, each with a random cached vector of its own."""
    store.replace_files([file_index(f"F{i}.cs", [f"M{i}_{j}" for j in range(members)])
                         for i in range(files)])
    store.vectors.cache_vectors((key, vector_of(key)) for _, key, _ in store.pending_windows(10**6))


def same_answer(got, want):
    """The same chunks in the same order at the same distances, to float32's rounding (a
    scan of the flat file and one of SQLite's blocks sum in different orders)."""
    return [c for c, _ in got] == [c for c, _ in want] and \
        [d for _, d in got] == pytest.approx([d for _, d in want], abs=1e-6)


def scan_agrees(store, qvec, n=3):
    """CacheScan's answer reading vectors.f32 (and SQLite for the rows above flat_seq only)
    is the one it gives without the file, and with the file cut short. Returns it."""
    read, blocks = [], store.vectors.vector_blocks
    store.vectors.vector_blocks = lambda after=0: (read.extend(r) or r for r in blocks(after))
    got = CacheScan(store).nearest(qvec, n)
    assert all(seq > store.vectors.flat_seq() for seq, _, _ in read)
    flat = store.vectors.flat_path()
    saved = flat.read_bytes()
    flat.unlink()
    for want in (CacheScan(store).nearest(qvec, n), None):
        if want is None:
            flat.write_bytes(saved[:len(saved) // 2])
            want = CacheScan(store).nearest(qvec, n)
        assert same_answer(got, want)
    flat.write_bytes(saved)
    restamp(store)                            # the same bytes: as the last write left them
    store.vectors.vector_blocks = blocks
    return got


def restamp(store):
    """Record vectors.f32's stamp as the last write's, whatever changed it."""
    with store.db:
        store.db.execute("UPDATE meta SET value=? WHERE key='flat_stamp'",
                         (flatfile.stamp(store.vectors.flat_path()),))


def test_each_cached_vector_is_in_the_flat_file_at_its_seq(store):
    many_members(store, files=3, members=4)
    assert store.vectors.flat_seq() == 12 and flat_in_step(store)
    store.vectors.cache_vectors([("key-M0_0", vector_of("again")), ("extra", vector_of("extra"))])
    assert store.vectors.flat_seq() == 14 and flat_in_step(store)     # a replaced key: a new seq
    store.vectors.forget_vectors()                                     # another model's: all dead
    assert store.vectors.flat_seq() == 0 and not store.vectors.flat_path().exists()
    store.vectors.cache_vectors([("key-M0_1", vector_of("key-M0_1"))])
    assert store.vectors.flat_seq() == 15 and flat_in_step(store)


def test_the_cache_scan_reads_the_flat_file_and_answers_as_sqlite_does(store):
    rng = np.random.default_rng(7)
    many_members(store)
    qvec = vector_of("the question")
    store.vectors.cache_vectors([("key-M3_4", near(qvec, rng, 0.1))])
    assert scan_agrees(store, qvec)[0][0] == "F3.cs#4"
    # 60 keys near the question, then replaced by far vectors: their rows, still in the
    # file, are nearer than any live one and must not crowd the live ones out
    keys = [f"key-M{i}_{j}" for i in range(5, 8) for j in range(20)]
    store.vectors.cache_vectors((k, near(qvec, rng, 0.05)) for k in keys)
    store.vectors.cache_vectors((k, vector_of(k + "far")) for k in keys)
    assert flat_in_step(store)
    assert scan_agrees(store, qvec)[0][0] == "F3.cs#4"
    for question in ("another", "a third"):
        scan_agrees(store, vector_of(question), n=10)


def test_rows_an_older_version_wrote_are_read_from_sqlite_until_a_sync(store):
    rng = np.random.default_rng(8)
    many_members(store)
    qvec = vector_of("the question")
    flat = store.vectors.flat_seq()
    with store.db:                           # an older version: SQL only, no file
        store.db.execute("DELETE FROM vectors WHERE key='key-M9_9'")
        store.db.execute("INSERT INTO vectors(key, vec) VALUES ('key-M9_9', ?)",
                         (near(qvec, rng, 0.1).tobytes(),))
    assert store.vectors.flat_seq() == flat and scan_agrees(store, qvec)[0][0] == "F9.cs#9"
    store.vectors.cache_vectors([("key-M2_2", near(qvec, rng, 0.05))])    # not alone above flat_seq
    assert store.vectors.flat_seq() == flat and scan_agrees(store, qvec)[0][0] == "F2.cs#2"
    store.vectors.sync_flat()
    assert flat_in_step(store) and store.vectors.flat_seq() == flat + 2
    assert scan_agrees(store, qvec)[0][0] == "F2.cs#2"


def test_a_lost_flat_file_is_read_from_sqlite_and_written_again(store):
    many_members(store, files=5)
    qvec = vector_of("the question")
    want = scan_agrees(store, qvec)
    store.vectors.flat_path().unlink()
    store.vectors.cache_vectors([("new", vector_of("new"))])     # it notices, writes nothing
    assert store.vectors.readable_flat_seq() == 0 and not store.vectors.flat_path().exists()
    assert same_answer(CacheScan(store).nearest(qvec, 3), want)
    store.vectors.sync_flat()
    assert flat_in_step(store) and same_answer(scan_agrees(store, qvec), want)


def test_check_compares_the_flat_file_with_the_cache(store):
    from codebase_rag.check import flat_problems
    many_members(store, files=2)
    assert flat_problems(store) == []
    with open(store.vectors.flat_path(), "r+b") as f:
        f.seek(5 * 384 * 4)
        f.write(vector_of("wrong").tobytes())
    [problem] = flat_problems(store)
    assert "1 of 40 sampled" in problem and problem.endswith(f"run: {INDEX_COMMAND}")
    restamp(store)                 # damage the stamp cannot see: the sample finds it
    store.vectors.sync_flat()
    assert flat_in_step(store) and flat_problems(store) == []


def test_a_scan_never_ranks_from_a_row_of_the_flat_file_that_the_cache_does_not_hold(store,
                                                                                   capsys):
    """Damage the file's stamp cannot see (a bad disk): one row made the question's own
    vector, one made NaN. The scan finds the first among its shortlist and the second in
    its product, answers from SQLite, and marks the file; until a writer's sync_flat makes
    it again, nobody writes it or reads it, and flat_seq moves up over none of its rows."""
    many_members(store)
    qvec = vector_of("the question")
    want = CacheScan(store).nearest(qvec, 5)
    for row in (qvec.tobytes(), np.full(384, np.nan, dtype="<f4").tobytes()):
        with open(store.vectors.flat_path(), "r+b") as f:
            f.seek(7 * 384 * 4)
            f.write(row)
        restamp(store)
        got = CacheScan(store).nearest(qvec, 5)
        assert same_answer(got, want) and all(0 <= d <= 2 for _, d in got)
        assert store.meta("flat_stamp") == "damaged" and store.vectors.readable_flat_seq() == 0
        damaged, flat = store.vectors.flat_path().read_bytes(), store.vectors.flat_seq()
        store.vectors.cache_vectors([(f"new{len(row)}", vector_of("new"))])     # alone above it
        assert store.vectors.flat_seq() == flat and store.vectors.flat_path().read_bytes() == damaged
        store.vectors.sync_flat()
        assert "vectors.f32: 1 of its rows differed" in capsys.readouterr().err
        assert flat_in_step(store) and same_answer(CacheScan(store).nearest(qvec, 5), want)


def test_a_chroma_vector_unlike_the_cache_makes_chroma_afresh(store):
    write(store, *[file_index(f"F{i}.cs", [f"M{i}_{j}" for j in range(5)]) for i in range(4)])
    assert store.vectors.sync_vectors() is None
    store.vectors.collection.upsert(["F2.cs#3.0"], [vector_of("wrong").tolist()], None)
    assert "1 of 20 sampled vectors were not the cache's" in store.vectors.sync_vectors()
    write(store)                              # every vector back from the cache
    ids, vectors = store.vectors.collection.get()
    keys = store.window_keys()
    cached = store.vectors.cached_vectors(keys.values())
    assert len(ids) == 20 and all(np.allclose(v, cached[keys[w]], atol=1e-6)
                                  for w, v in zip(ids, vectors))
    assert store.vectors.sync_vectors() is None


def test_an_index_started_afresh_has_its_own_flat_file(store, tmp_path):
    from codebase_rag.identity import Identity
    from codebase_rag.store import salvage
    many_members(store, files=3)
    store.set_identity(Identity("m", "int8", "/src", True, ("*.gen",)))
    store.vectors.forget_vectors(["key-M0_0", "key-M0_1"])
    store.vectors.cache_vectors([("key-M0_0", vector_of("again"))])       # the old file: 61 rows + 0
    with store.db:
        store.db.execute("UPDATE meta SET value='1' WHERE key='schema'")
    assert salvage(tmp_path / "db")[1] == Identity("m", "int8", "/src", True, ("*.gen",))
    fresh = open_store_afresh(tmp_path / "db", "an older format")
    assert fresh.identity == Store(tmp_path / "db").identity == Identity(
        "m", "int8", "/src", True, ("*.gen",))
    assert fresh.vectors.flat_seq() == 59 and flat_in_step(fresh)
    assert fresh.vectors.flat_path().stat().st_size == 60 * 384 * 4
    scan_agrees(fresh, vector_of("the question"))


def test_the_identity_is_read_once_and_written_by_its_writer(store, tmp_path):
    """An index's identity as meta holds it, and back; a precision never recorded is fp32
    (an index of before precisions), but a new index has chosen none yet."""
    from codebase_rag.identity import Identity
    assert store.identity == Identity() and store.identity.recorded_precision is None
    assert store.identity.precision == "fp32" and store.root == Path("")
    made = Identity("m", "int8", str(tmp_path / "src"), False, ("a/*", "b"))
    store.set_identity(made)
    assert Store(tmp_path / "db").identity == made == Identity.from_meta(made.to_meta())
    assert store.root == tmp_path / "src"
    store.set_meta(source="/elsewhere")                 # another process: read at open
    assert store.identity == made and Store(tmp_path / "db").identity.source == "/elsewhere"
    store.set_identity(Identity("m", None, "/x", True))
    assert Store(tmp_path / "db").root == (tmp_path / "db").absolute().parent


def test_a_long_lived_reader_follows_a_writers_new_identity(store, tmp_path):
    """The MCP server's reader keeps its Store open: when a writer records another tree or
    other excludes, the next question opens the index again and reads them."""
    from codebase_rag.identity import Identity
    from codebase_rag.reader import Reader
    store.set_identity(Identity("m", "fp32", str(tmp_path / "a"), False, ()))
    reader = Reader(db=tmp_path / "db")
    first = reader.open()
    assert reader.open() is first and first.root == tmp_path / "a"
    Store(tmp_path / "db").set_identity(Identity("m", "fp32", str(tmp_path / "b"), False,
                                                 ("gen/",)))
    again = reader.open()
    assert again is not first and again.root == tmp_path / "b"
    assert again.identity.excludes == ("gen/",) and reader.open() is again


def test_migrations_bring_an_older_index_of_this_schema_up_in_order(store, tmp_path):
    """An index an older version made at this schema gains what it lacks when a process
    that may write it opens it; once applied, they write nothing."""
    from codebase_rag.migrations import MIGRATIONS
    assert [m.__name__ for m in MIGRATIONS] == ["m001_vectors_team", "m002_windows_key",
                                                "m003_files_parse_errors"]
    with store.db:
        store.db.execute("DROP INDEX windows_key")
        store.db.execute("ALTER TABLE vectors DROP COLUMN team")
        store.db.execute("ALTER TABLE files DROP COLUMN parse_errors")
    store.close()
    again = Store(tmp_path / "db")
    for table, column in (("vectors", "team"), ("files", "parse_errors")):
        assert again.db.execute(f"SELECT 1 FROM pragma_table_info('{table}') WHERE "
                                f"name='{column}'").fetchone()
    assert again.db.execute("SELECT 1 FROM sqlite_master WHERE name='windows_key'").fetchone()
    seen = again.db.execute("PRAGMA data_version").fetchone()[0]
    Store(tmp_path / "db")              # a write by another connection would change it
    assert again.db.execute("PRAGMA data_version").fetchone()[0] == seen


# ----------------------------------------------------------------------------- the MCP reader
def test_a_large_memory_reader_shortlists_by_main_directions_and_answers_as_the_exact_scan(
        store, monkeypatch):
    """Above REDUCE_ABOVE windows the MCP server's reader ranks only a shortlist, made by
    the vectors' projections on their main directions. On vectors shaped as a sentence
    model's are (members of a few topics), its answers are the exact scan's, before and
    after a write."""
    from codebase_rag import nearest
    monkeypatch.setattr(nearest, "REDUCE_ABOVE", 1000)
    rng = np.random.default_rng(7)
    topics = [vector_of(f"topic {t}") for t in range(40)]

    def add(files, members=30):
        store.replace_files([file_index(f"F{i}.cs", [f"M{i}_{j}" for j in range(members)])
                             for i in files])
        store.vectors.cache_vectors((key, near(topics[int(key[5:].split("_")[0]) % 40], rng, 1.5))
                            for _, key, _ in store.pending_windows(10**6))
    add(range(60))
    memory = nearest.MemoryNearest(store)

    def agrees():
        for t in range(40):
            qvec = near(topics[t], rng, 2.0)
            got, want = memory.nearest(qvec, 10), nearest.CacheScan(store).nearest(qvec, 10)
            assert [c for c, _ in got] == [c for c, _ in want]
            assert [d for _, d in got] == pytest.approx([d for _, d in want], abs=1e-6)
        assert memory.reduced.shape == (len(memory.matrix), nearest.REDUCED_DIM)
    agrees()
    add(range(50, 70))                              # 10 files replaced, 10 new
    agrees()
