"""Derived files: vectors.f32 and Chroma hold copies of the embedding cache's vectors. Damaged
in place (same size, changed bytes), a plain run finds them and makes them again from the
cache, and no query ranks from a damaged row meanwhile. The real CLIs, with the real model
and a real ChromaDB."""
import shutil
import sqlite3
import struct
from contextlib import closing

import numpy as np
import pytest

from conftest import SAMPLE, Cli, assert_same_index

QUESTION = "how does the energy system refill timers?"
ANSWER = ("Energy/EnergySystem.cs", "RefillTimers")
WRONG = ("Auth/PasswordHasher.cs", "HashPassword")
OTHER = ("Store/PurchaseService.cs", "ValidateReceipt")
GARBAGE = struct.pack("<f", -2.6e37) * 384         # a row as issue 28 found one
ANTI_GARBAGE = struct.pack("<f", 2.6e37) * 384
ROW = 384 * 4


@pytest.fixture(scope="module")
def built(machine_cache, tmp_path_factory):
    """One sample index, built once; each test damages a copy of it."""
    cli = Cli(machine_cache)
    base = tmp_path_factory.mktemp("built")
    shutil.copytree(SAMPLE, base / "src", ignore=shutil.ignore_patterns(".codebase-rag"))
    cli.index(base / "src", base / "db")
    return base / "src", base / "db"


@pytest.fixture
def index(built, tmp_path):
    """(tree, a copy of the index as its last writer left it, the undamaged index)."""
    tree, clean = built
    db = tmp_path / "db"
    shutil.copytree(clean, db)
    keep_stamp(db)                           # a copy is a new file: as if written here
    return tree, db, clean


def current(db, key, first):
    """The file or folder of the current generation (meta flat_file, chroma_dir)."""
    with closing(sqlite3.connect(db / "index.sqlite")) as con:
        row = con.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return db / (row[0] if row else first)


def flat_file(db):
    return current(db, "flat_file", "vectors.f32")


def keep_stamp(db):
    """Record vectors.f32's stamp as its last writer's: damage the stamp cannot see, as a
    bad disk's (an older version knows no stamp: this changes nothing for it)."""
    from codebase_rag.flat import stamp
    with sqlite3.connect(db / "index.sqlite") as con:
        con.execute("INSERT OR REPLACE INTO meta VALUES ('flat_stamp', ?)", (stamp(flat_file(db)),))
    con.close()


def cached(db, member=None):
    """{seq: vector blob} of the embedding cache (of one member's windows)."""
    with sqlite3.connect(db / "index.sqlite") as con:
        if member is None:
            rows = con.execute("SELECT seq, vec FROM vectors").fetchall()
        else:
            rows = con.execute("SELECT v.seq, v.vec FROM vectors v JOIN windows w ON "
                               "w.key = v.key JOIN chunks c ON c.id = w.chunk WHERE c.file = ? "
                               "AND c.member = ?", member).fetchall()
    con.close()
    return dict(rows)


def damage_flat(db):
    """vectors.f32 damaged in place: the answer's rows garbage, another member's the same
    garbage with the other sign (one of the two meets the question at a cosine of 1e37),
    and a third member's the answer's first vector (a tie with the answer). Returns how
    many rows it changed."""
    answer = cached(db, ANSWER)
    damage = [(answer, GARBAGE), (cached(db, OTHER), ANTI_GARBAGE),
              (cached(db, WRONG), answer[min(answer)])]
    with open(flat_file(db), "r+b") as f:
        for rows, blob in damage:
            for seq in rows:
                f.seek(seq * ROW)
                f.write(blob)
    return sum(len(rows) for rows, _ in damage)


def flat_in_step(db):
    data = (flat_file(db)).read_bytes()
    return all(data[seq * ROW:(seq + 1) * ROW] == blob for seq, blob in cached(db).items())


def where(data, vec):
    """Where a vector (as Chroma keeps it: normalized again) starts in a file of floats."""
    for at in np.flatnonzero(np.isclose(data[:len(data) - len(vec)], vec[0], rtol=1e-5)):
        if np.allclose(data[at:at + len(vec)], vec, atol=1e-6):
            return at
    raise AssertionError("a cached vector is not in Chroma's file")


def check(cli, tree, db):
    return cli.run("index.py", "--db", db, "--source", tree, "--check", check=False)


@pytest.mark.parametrize("stamp", ["moved", "kept"])
def test_a_plain_run_writes_a_damaged_flat_file_again(cli, index, stamp):
    tree, db, _ = index
    size = (flat_file(db)).stat().st_size
    damaged = damage_flat(db)
    if stamp == "kept":
        keep_stamp(db)
    assert (flat_file(db)).stat().st_size == size
    assert check(cli, tree, db).returncode == 1
    proc = cli.index(tree, db)
    assert f"vectors.f32: {damaged} of its rows differed" in proc.stderr
    assert flat_in_step(db)
    assert check(cli, tree, db).returncode == 0


@pytest.mark.parametrize("stamp", ["moved", "kept"])
def test_a_query_under_the_writer_lock_never_ranks_from_a_damaged_row(cli, index, stamp):
    from codebase_rag.lock import writer_lock
    tree, db, _ = index
    with writer_lock(db):
        want = cli.query(db, QUESTION, "-k", "10")
    damage_flat(db)
    if stamp == "kept":
        keep_stamp(db)
    with writer_lock(db):
        got = cli.query(db, QUESTION, "-k", "10")
        assert (got[0]["file"], got[0]["member"]) == ANSWER
        assert all(0 <= r["distance"] <= 2 if r["distance"] is not None else
                   r["member"] == "<rest>" for r in got)     # lines no member holds: no vector
        assert [(r["file"], r["member"]) for r in got] == [(r["file"], r["member"]) for r in want]
        assert [r["distance"] for r in got] == pytest.approx([r["distance"] for r in want],
                                                             abs=1e-5)
    cli.index(tree, db)                          # the next writer mends it
    assert flat_in_step(db) and check(cli, tree, db).returncode == 0


def test_a_plain_run_makes_chroma_again_when_a_vector_in_it_is_damaged(cli, index):
    """A vector of Chroma's HNSW file overwritten in place with another member's: a search
    of Chroma finds the wrong member. The plain run samples Chroma's vectors (all of them in
    an index this small), finds one unlike the cache, and makes Chroma afresh."""
    tree, db, clean = index
    answer, wrong = cached(db, ANSWER), cached(db, WRONG)
    [hnsw] = current(db, "chroma_dir", "chroma").glob("*/data_level0.bin")
    data = np.fromfile(hnsw, dtype="<f4")
    for blob in answer.values():
        at = where(data, np.frombuffer(blob, dtype="<f4"))
        data[at:at + 384] = np.frombuffer(wrong[min(wrong)], dtype="<f4")
    with open(hnsw, "r+b") as f:                 # in place
        f.write(data.tobytes())
    assert (cli.query(db, QUESTION)[0]["file"], cli.query(db, QUESTION)[0]["member"]) != ANSWER
    proc = cli.index(tree, db)
    assert "repaired the vector store" in proc.stderr
    assert_same_index(db, clean)
    got = cli.query(db, QUESTION)
    assert (got[0]["file"], got[0]["member"]) == ANSWER
    assert check(cli, tree, db).returncode == 0


def test_a_flat_file_of_an_index_copied_elsewhere_is_checked_once_and_kept(cli, built,
                                                                          tmp_path):
    """A copy of the index (a backup restored, a folder moved across disks) has a new
    vectors.f32 as far as its stamp says: the next plain run compares it whole, finds it
    sound and says nothing; the run after that only looks at its stamp."""
    tree, clean = built
    db = tmp_path / "db"
    shutil.copytree(clean, db)
    proc = cli.index(tree, db)
    assert "vectors.f32" not in proc.stderr and flat_in_step(db)
    from codebase_rag.flat import stamp
    with sqlite3.connect(db / "index.sqlite") as con:
        assert con.execute("SELECT value FROM meta WHERE key='flat_stamp'").fetchone()[0] == \
            stamp(flat_file(db))
    con.close()
    assert np.array_equal(np.fromfile(flat_file(db), dtype="<f4"),
                          np.fromfile(flat_file(clean), dtype="<f4"))
