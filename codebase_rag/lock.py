"""The writer lock and the queue beside it. One writer at a time: an edit (a hook) or a
refresh (--background) that finds a writer leaves a durable mark in pending/, and whoever
holds the lock honours every mark before letting go, so no change is ever dropped."""
import json
import os
import re
import time
from pathlib import Path

from .config import INDEX_ARGV
from .errors import encodable
from .oslayer import lock_held, replace_file, start_detached

PENDING_ENTRY = re.compile(r"\A\d+\.\d+")     # the names queue_pending gives its entries
REFRESH = "refresh"                           # pending/refresh: walk the whole tree again
HOLDER = "writer.json"                        # who holds the lock: kind, pid, start


def writer_lock(index):
    from filelock import FileLock
    return FileLock(str(Path(index) / "write.lock"))


def queue_pending(index, rels):
    """Queue these paths for the writer; written whole or not at all."""
    folder = Path(index) / "pending"
    folder.mkdir(exist_ok=True)
    for rel in rels:
        if not encodable(rel):
            continue                          # no index may hold it (the walk skips it too)
        tmp = folder / f".{os.getpid()}.{time.time_ns()}"
        try:
            tmp.write_text(rel, encoding="utf-8")
            os.replace(tmp, folder / tmp.name[1:])
        finally:
            tmp.unlink(missing_ok=True)


def request_refresh(index):
    """Ask the writer (now or next) to walk the whole tree again before it lets go."""
    folder = Path(index) / "pending"
    folder.mkdir(exist_ok=True)
    (folder / REFRESH).touch()


def take_refresh(index):
    """Whether a refresh was asked for; the mark is gone after (call with the lock held)."""
    try:
        (Path(index) / "pending" / REFRESH).unlink()
    except FileNotFoundError:
        return False
    except PermissionError:
        pass                                  # open in a request_refresh (Windows): next time
    return True


def pending_entries(index):
    folder = Path(index) / "pending"
    return [e for e in (sorted(folder.iterdir()) if folder.is_dir() else [])
            if PENDING_ENTRY.fullmatch(e.name)]


def queued(index):
    """The queued paths, left in the queue: a query takes them in too (their files may be
    new, which only the queue names until the writer reads them)."""
    rels = set()
    for entry in pending_entries(index):
        try:
            rels.add(entry.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            pass                              # taken by the writer meanwhile
    return rels


def take_pending(index):
    """The queued paths, removing exactly the entries read (call with the lock held)."""
    rels = set()
    for entry in pending_entries(index):
        try:
            rels.add(entry.read_text(encoding="utf-8"))
            entry.unlink()
        except (OSError, UnicodeDecodeError):
            pass
    return rels


def has_pending(index):
    return bool(pending_entries(index)) or (Path(index) / "pending" / REFRESH).exists()


def is_locked(index):
    """Whether some process holds the writer lock of the index folder. A probe that needs
    no write access (filelock opens the file for writing), so a read-only index answers."""
    return lock_held(Path(index) / "write.lock")


def record_holder(index, kind, files=0):
    """Say who holds the lock (for --status): written once the lock is held."""
    path = Path(index) / HOLDER
    path.write_text(json.dumps({"kind": kind, "pid": os.getpid(), "started": time.time(),
                                "files": files}))


def holder(index):
    """{kind, pid, started, files} of the process holding the lock, or None."""
    try:
        return json.loads((Path(index) / HOLDER).read_text()) if is_locked(index) else None
    except (OSError, ValueError):
        return None


LOG = "build.log"             # what detached writers print


def apply_soon(index, rels=()):
    """Queue these paths for the writer, and start one in the background to apply them,
    unless some process holds the lock (a writer applies the queue before it lets go). The
    one way a hook, a search and the MCP server hand edits over."""
    queue_pending(index, rels)
    if not is_locked(index):
        detach(index, ["--db", str(index), "--apply-queue"], "applying edits")


def start_refresh(index, what, source=None, excludes=(), model=None, rebuild=False, env=None):
    """Start a detached whole-tree run: a build, a refresh, an upgrade (source None: the tree
    the index records). It leaves the work to a writer that already holds the lock."""
    args = ["--source", str(source)] if source else []
    args += ["--db", str(index), "--quiet", "--detached"]
    args += [f"--exclude={glob}" for glob in excludes]
    args += ["--model", model] if model else []
    args += ["--rebuild"] if rebuild else []
    detach(index, args, what, env)


def detach(db, args, what, env=None):
    """Run index.py with args detached (killing the hook, the terminal or the console that
    started it does not stop it: oslayer.detached), its output appended to build.log in the
    index folder, in UTF-8 whatever the system's code page (a file name outside Windows'
    ANSI code page would otherwise stop it)."""
    import subprocess
    log = Path(db) / LOG
    if log.is_file() and log.stat().st_size > 1_000_000:
        replace_file(log, log.with_suffix(".log.1"))      # not while a writer has it open
    with open(log, "a", encoding="utf-8") as out:
        out.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} {what}\n")
        out.flush()
        start_detached([*INDEX_ARGV, *args], stdin=subprocess.DEVNULL, stdout=out,
                       stderr=subprocess.STDOUT, close_fds=True,
                       env={**os.environ, "PYTHONIOENCODING": "utf-8:backslashreplace",
                            **(env or {})})
