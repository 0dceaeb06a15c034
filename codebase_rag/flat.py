"""Flat: vectors.f32 in the index folder, the embedding cache's vectors as one float32 matrix
on disk, row r the vector whose vectors.seq is r (never-written rows are zeros). A reader
that must scan the whole cache (a writer holds the lock) reads it instead of SQLite's rows:
0.8 s of Python for 299,000 rows. cache.py keeps it in step (meta flat_seq: every row with
seq <= flat_seq is in the file; meta flat_stamp: the file's stamp as its last write left it)
and is its only writer; this module knows only the file.
"""
import os
from itertools import groupby
from pathlib import Path

from .config import DIM

NAME, ROW = "vectors.f32", DIM * 4
NEW = NAME + ".new"                   # a rewrite, renamed over NAME once whole


def stamp_of(st):
    """What the filesystem says of a file: which one it is, its size, its last write and its
    last change of any kind. Any write, truncation, replacement, chmod or `touch` moves it
    (ctime cannot be set back from user space); damage below the filesystem (a bad disk) or
    within the same clock tick as the last write does not."""
    return f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def stamp(folder):
    """The file's stamp, '' if there is none."""
    try:
        return stamp_of(os.stat(Path(folder) / NAME))
    except FileNotFoundError:
        return ""


def put(fd, rows):
    """(seq, vector blob) rows, by seq, at their rows of an open file."""
    if any(len(blob) != ROW for _, blob in rows):
        raise OSError(f"{NAME}: a vector of another size")
    for _, run in groupby(enumerate(rows), lambda r: r[1][0] - r[0]):       # runs of seqs
        run = [row for _, row in run]
        data = b"".join(blob for _, blob in run)
        if os.pwrite(fd, data, run[0][0] * ROW) != len(data):
            raise OSError(f"{NAME}: short write")


def write(folder, rows, expect):
    """Write (seq, vector blob) rows, by seq, at their rows, if the file's stamp is `expect`
    ('': there is no file yet). Returns the stamp after the write, or None, writing nothing,
    if the file is not as expected (it changed behind the writers' back: it waits for
    store.sync_flat); raises OSError if a write fails. Durable on return, before the caller
    commits the stamp."""
    if not rows:
        return expect
    try:
        fd = os.open(Path(folder) / NAME, os.O_RDWR | (os.O_CREAT | os.O_EXCL if not expect
                                                       else 0), 0o644)
    except (FileExistsError, FileNotFoundError):
        return None
    try:
        if expect and stamp_of(os.fstat(fd)) != expect:
            return None
        put(fd, rows)
        os.fdatasync(fd)
        return stamp_of(os.fstat(fd))
    finally:
        os.close(fd)


class Rewrite:
    """A new vectors.f32 written beside the old one and renamed over it once whole: a reader
    that has the old one open keeps reading it whole, and a rewrite killed midway leaves the
    old one as it was."""

    def __init__(self, folder):
        self.folder = Path(folder)
        self.fd = os.open(self.folder / NEW, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)

    def put(self, rows):
        put(self.fd, rows)

    def replace(self):
        """The new file in the old one's place, durably; returns its stamp."""
        os.fsync(self.fd)
        os.replace(self.folder / NEW, self.folder / NAME)
        folder = os.open(self.folder, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
        return stamp(self.folder)

    def close(self):
        os.close(self.fd)
        (self.folder / NEW).unlink(missing_ok=True)


def drop(folder):
    """The file gone (a reader that has it open keeps its rows: none is rewritten under it)."""
    for name in (NAME, NEW):
        (Path(folder) / name).unlink(missing_ok=True)


def blocks(folder, flat, size=20_000):
    """Float32 matrices of rows 0..flat, one block of size rows at a time in one reused
    buffer (memory stays bounded), or None if the file lacks some of them. A file cut short
    while read raises OSError."""
    import numpy as np
    try:
        f = open(Path(folder) / NAME, "rb", buffering=0)
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
                    raise OSError(f"{NAME} was cut short while read")
                yield view
    return read()


def rows_at(folder, seqs):
    """{seq: vector blob} of these rows as the file holds them (b'' past its end; none at
    all if there is no file)."""
    try:
        with open(Path(folder) / NAME, "rb") as f:
            return {s: os.pread(f.fileno(), ROW, s * ROW) for s in seqs}
    except OSError:
        return {}
