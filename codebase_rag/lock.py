"""The writer lock and the queue beside it. One writer at a time: a hook that cannot get
the lock soon leaves its file in pending/, and whoever holds the lock re-indexes pending
files before letting go."""
import os
import re
import time
from pathlib import Path

PENDING_ENTRY = re.compile(r"\d+\.\d+")       # the names queue_pending gives its entries


def writer_lock(index):
    from filelock import FileLock
    return FileLock(str(Path(index) / "write.lock"))


def queue_pending(index, rels):
    folder = Path(index) / "pending"
    folder.mkdir(exist_ok=True)
    for rel in rels:
        tmp = folder / f".{os.getpid()}.{time.time_ns()}"
        tmp.write_text(rel, encoding="utf-8")
        os.replace(tmp, folder / tmp.name[1:])


def pending_entries(index):
    folder = Path(index) / "pending"
    return [e for e in (sorted(folder.iterdir()) if folder.is_dir() else [])
            if PENDING_ENTRY.fullmatch(e.name)]


def take_pending(index):
    """The queued paths, removing exactly the entries read (call with the lock held)."""
    rels = set()
    for entry in pending_entries(index):
        try:
            rels.add(entry.read_text(encoding="utf-8"))
            entry.unlink()
        except OSError:
            pass
    return rels


def has_pending(index):
    return bool(pending_entries(index))


def is_locked(index):
    """Whether some process holds the writer lock of the index folder."""
    from filelock import Timeout
    lock = writer_lock(index)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return True
    lock.release()
    return False
