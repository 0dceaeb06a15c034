"""Flat: the embedding cache's vectors as one float32 matrix on disk, row r the vector whose
vectors.seq is r (never-written rows are zeros). A reader that must scan the whole cache (a
writer holds the lock) reads it instead of SQLite's rows: 0.8 s of Python for 299,000 rows.
vectors.py keeps it in step (meta flat_file: which file it is; flat_seq: every row with seq <=
flat_seq is in the file; flat_stamp: the file's stamp as its last write left it) and is its
only writer; this module knows only the files.

A file is never renamed over or deleted while a reader may hold it (Windows refuses both):
a rewrite is a new generation (vectors.N.f32) beside the old one, which the writer points to
in the same transaction that records its stamp; old generations are removed once unused.
"""
import os
import re
from itertools import groupby
from pathlib import Path

from .config import DIM
from .oslayer import BINARY, CLOEXEC, READ, read_at, remove_unused, sync_data, sync_folder, \
    write_at

NAME, ROW = "vectors.f32", DIM * 4            # the first generation's name
GENERATION = re.compile(r"vectors(?:\.(\d+))?\.f32(?:\.new)?")    # .new: an older version's


def stamp_of(st):
    """What the filesystem says of a file: which one it is, its size, its last write and its
    last change of any kind. Any write, truncation, replacement, chmod or `touch` moves it
    (ctime cannot be set back from user space); damage below the filesystem (a bad disk) or
    within the same clock tick as the last write does not."""
    return f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def stamp(path):
    """The file's stamp, '' if there is none."""
    try:
        return stamp_of(os.stat(path))
    except FileNotFoundError:
        return ""


def put(fd, rows):
    """(seq, vector blob) rows, by seq, at their rows of an open file."""
    if any(len(blob) != ROW for _, blob in rows):
        raise OSError("vectors.f32: a vector of another size")
    for _, run in groupby(enumerate(rows), lambda r: r[1][0] - r[0]):       # runs of seqs
        run = [row for _, row in run]
        data = b"".join(blob for _, blob in run)
        if write_at(fd, data, run[0][0] * ROW) != len(data):
            raise OSError("vectors.f32: short write")


def write(path, rows, expect):
    """Write (seq, vector blob) rows, by seq, at their rows, if the file's stamp is `expect`
    ('': there is no file yet). Returns the stamp after the write, or None, writing nothing,
    if the file is not as expected (it changed behind the writers' back: it waits for
    Store.vectors.sync_flat); raises OSError if a write fails. Durable on return, before the
    caller commits the stamp."""
    if not rows:
        return expect
    try:
        fd = os.open(path, os.O_RDWR | BINARY | CLOEXEC | (os.O_CREAT | os.O_EXCL if not expect
                                                           else 0), 0o644)
    except (FileExistsError, FileNotFoundError):
        return None
    try:
        if expect and stamp_of(os.fstat(fd)) != expect:
            return None
        put(fd, rows)
        sync_data(fd)
        return stamp_of(os.fstat(fd))
    finally:
        os.close(fd)


def next_name(folder, current):
    """A name for the next generation: one more than the current's number, past any file
    an earlier generation left that could not be removed yet."""
    match = GENERATION.fullmatch(current or "")
    n = int(match.group(1) or 0) if match else 0
    while True:
        n += 1
        name = f"vectors.{n}.f32"
        if not os.path.lexists(Path(folder) / name):
            return name


class Rewrite:
    """A new generation written whole beside the current one: a reader that has the old one
    open keeps reading it whole, and a rewrite killed midway leaves the old one as it was.
    The caller points to it (meta flat_file) once finish() returns."""

    def __init__(self, folder, current):
        self.folder, self.name = Path(folder), next_name(folder, current)
        self.fd = os.open(self.folder / self.name, os.O_RDWR | os.O_CREAT | os.O_EXCL | BINARY
                          | CLOEXEC, 0o644)
        self.done = False

    def put(self, rows):
        put(self.fd, rows)

    def finish(self):
        """The new file durable, and closed; returns its stamp."""
        os.fsync(self.fd)
        os.close(self.fd)
        self.fd = None
        sync_folder(self.folder)
        return stamp(self.folder / self.name)

    def close(self, kept):
        """kept: the caller points to the new file; else it is deleted (nobody knows it)."""
        if self.fd is not None:
            os.close(self.fd)
        if not kept:
            (self.folder / self.name).unlink(missing_ok=True)


def sweep(folder, current):
    """Every generation but the current one removed, where no reader holds it any more."""
    for entry in os.scandir(folder):
        if entry.name != current and GENERATION.fullmatch(entry.name):
            remove_unused(entry.path)


def blocks(path, flat, size=20_000):
    """Float32 matrices of rows 0..flat, one block of size rows at a time in one reused
    buffer (memory stays bounded), or None if the file lacks some of them. A file cut short
    while read raises OSError."""
    import numpy as np
    try:
        f = open(path, "rb", buffering=0)
    except OSError:
        return None
    if not flat or os.fstat(f.fileno()).st_size < (flat + 1) * ROW:
        f.close()
        return None

    def read():
        with f:
            buf = np.empty((min(size, flat + 1), DIM), dtype="<f4")
            for start in range(0, flat + 1, size):
                view, got = buf[:min(size, flat + 1 - start)], 0
                into = memoryview(view).cast("B")
                while got < view.nbytes and (n := f.readinto(into[got:])):
                    got += n
                if got < view.nbytes:
                    raise OSError("vectors.f32 was cut short while read")
                yield view
    return read()


def rows_at(path, seqs):
    """{seq: vector blob} of these rows as the file holds them (b'' past its end; none at
    all if there is no file)."""
    try:
        fd = os.open(path, READ)
    except OSError:
        return {}
    try:
        return {s: read_at(fd, ROW, s * ROW) for s in seqs}
    except OSError:
        return {}
    finally:
        os.close(fd)
