"""Flat: vectors.f32 in the index folder, the embedding cache's vectors as one float32 matrix
on disk, row r the vector whose vectors.seq is r (never-written rows are zeros). A reader
that must scan the whole cache (a writer holds the lock) reads it instead of SQLite's rows:
0.8 s of Python for 299,000 rows. store.py keeps it in step (meta flat_seq: every row with
seq <= flat_seq is in the file) and is its only writer; this module knows only the file.
"""
import os
from itertools import groupby
from pathlib import Path

from .config import DIM

NAME, ROW = "vectors.f32", DIM * 4


def write(folder, rows, flat):
    """Write (seq, vector blob) rows, by seq, at their rows. False, writing nothing, if the
    file lacks some row up to flat (deleted, cut short: it is no longer in step); raises
    OSError if a write fails. Durable on return, before the caller commits flat_seq."""
    if any(len(blob) != ROW for _, blob in rows):
        raise OSError(f"{NAME}: a vector of another size")
    fd = os.open(Path(folder) / NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if flat and os.fstat(fd).st_size < (flat + 1) * ROW:
            return False
        for _, run in groupby(enumerate(rows), lambda r: r[1][0] - r[0]):   # runs of seqs
            run = [row for _, row in run]
            data = b"".join(blob for _, blob in run)
            if os.pwrite(fd, data, run[0][0] * ROW) != len(data):
                raise OSError(f"{NAME}: short write")
        if rows:
            os.fdatasync(fd)
        return True
    finally:
        os.close(fd)


def drop(folder):
    """The file gone (a reader that has it open keeps its rows: none is rewritten under it)."""
    (Path(folder) / NAME).unlink(missing_ok=True)


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
    """{seq: vector blob} of these rows as the file holds them (missing: none)."""
    try:
        with open(Path(folder) / NAME, "rb") as f:
            return {s: os.pread(f.fileno(), ROW, s * ROW) for s in seqs}
    except OSError:
        return {}

