"""The OS layer: every difference between Linux, macOS and Windows that the tool meets, in
one module (tests/test_layout.py keeps fcntl, inotify, /proc, fdatasync, O_NONBLOCK, getuid,
os.kill and pwrite out of every other). Each difference is found by looking for the feature
itself (a function, a module, a file), never by the system's name alone, so a system that
lacks one gets the way that works without it; the tests take each feature away on Linux
(tests/emulate_os.py) to run those ways.

Files another process has open: POSIX lets a file be renamed over or deleted while others
read it (they keep what they opened); Windows refuses. So the index never renames over or
deletes a file a reader may hold: it writes a new generation beside the old one, points to
it (a row of index.sqlite), and removes old generations only when nothing holds them
(`remove_unused`; docs/architecture.md, "Files in use").
"""
import os
from pathlib import Path

# -- opening files
BINARY = getattr(os, "O_BINARY", 0)           # Windows: without it os.open reads and writes
                                              # text, turning \n into \r\n
CLOEXEC = getattr(os, "O_CLOEXEC", 0)
NONBLOCK = getattr(os, "O_NONBLOCK", 0)       # a FIFO opens without waiting for a writer
                                              # (Windows has no FIFOs among files)
READ = os.O_RDONLY | BINARY | CLOEXEC
READ_ANY = READ | NONBLOCK                    # a path that may not be a regular file


def sync_data(fd):
    """A file's data on disk before the caller records it as written: fdatasync where the
    system has it (Linux), else fsync (macOS, Windows), which also writes its times."""
    (getattr(os, "fdatasync", None) or os.fsync)(fd)


def sync_folder(folder):
    """A rename in folder made durable. POSIX: fsync the folder. Windows cannot open a
    folder as a file, and NTFS journals the rename itself."""
    try:
        fd = os.open(folder, os.O_RDONLY | BINARY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass                          # a folder some systems will not sync: the rename stands
    finally:
        os.close(fd)


def write_at(fd, data, offset):
    """Write data at offset of an open file; returns the bytes written. pwrite where the
    system has it, else seek and write (the caller is the file's one writer)."""
    if hasattr(os, "pwrite"):
        return os.pwrite(fd, data, offset)
    os.lseek(fd, offset, os.SEEK_SET)
    written = 0
    while written < len(data):
        written += os.write(fd, data[written:])
    return written


def read_at(fd, size, offset):
    """Up to size bytes at offset of an open file (pread, else seek and read)."""
    if hasattr(os, "pread"):
        return os.pread(fd, size, offset)
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, size)


# -- files in use by another process
def remove_unused(path):
    """Delete a file or folder unless some process has it (or a file in it) open; returns
    whether it is gone. POSIX deletes it anyway (a reader keeps what it opened); Windows
    refuses, and it stays for a later try. A folder is first renamed aside, which Windows
    refuses while a file in it is open, so it goes whole or not at all: never half-deleted."""
    path = Path(path)
    try:
        if not path.is_dir() or path.is_symlink():
            path.unlink(missing_ok=True)
            return True
        aside = path.with_name(f"{path.name}{TRASH}{os.getpid()}")
        os.rename(path, aside)
    except FileNotFoundError:
        return True
    except OSError:                   # in use (Windows), or not ours to delete
        return False
    import shutil
    shutil.rmtree(aside, ignore_errors=True)
    return not aside.exists()


TRASH = ".removing-"          # a folder renamed aside on its way out (remove_unused)


def replace_soon(source, target, seconds=2.0):
    """os.replace, tried again for a while where another process has target open for a
    moment (Windows refuses the rename then): for files that readers hold only while they
    read them (a model's manifest, its tokenizer, a project's settings)."""
    import time
    deadline = time.monotonic() + seconds
    while True:
        try:
            return os.replace(source, target)
        except PermissionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def replace_file(source, target):
    """os.replace, or False where target is open elsewhere (Windows refuses): the caller
    keeps the old file and writes a new generation instead."""
    try:
        os.replace(source, target)
        return True
    except PermissionError:
        return False


# -- names on a case-insensitive volume (APFS and NTFS by default, FAT, exFAT): a path spelled
# in another case opens the same file
def case_insensitive(folder):
    """Whether the volume of folder matches names whatever their case: an entry looked up
    with its case swapped is there, though no entry is spelled so. Looked at once per
    folder (None: nothing in it to tell by, as case-sensitive)."""
    folder = str(folder)
    if folder not in _CASE:
        _CASE[folder] = False
        try:
            names = os.listdir(folder)
        except OSError:
            return False
        for name in names:
            swapped = name.swapcase()
            if swapped != name and swapped not in names:
                _CASE[folder] = os.path.lexists(os.path.join(folder, swapped))
                break
    return _CASE[folder]


_CASE = {}


def spelled_on_disk(root, rel):
    """rel ('/'-separated, under root) as the folders' entries spell it, so that the index
    keeps one key per file whatever spelling a hook or a user gave; rel itself where the
    volume tells case apart, or where some part of it is not there."""
    if not case_insensitive(root):
        return rel
    folder, parts = Path(root), rel.split("/")
    for i, part in enumerate(parts):
        try:
            names = os.listdir(folder)
        except OSError:
            return rel
        if part not in names:
            same = [n for n in names if n.casefold() == part.casefold()]
            if len(same) != 1:
                return rel
            parts[i] = same[0]
        folder = folder / parts[i]
    return "/".join(parts)


# -- processes
def lock_held(path):
    """Whether some process holds the writer lock on this file (taken with filelock). The
    probe opens the file read-only (a read-only index answers too) and tries the lock
    filelock takes: flock where the system has it (POSIX; imported in no time, as a hook
    needs), else filelock's own primitive (LockFileEx on Windows)."""
    try:
        import fcntl

        def lock(fd):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                return False
        unlock = lambda fd: fcntl.flock(fd, fcntl.LOCK_UN)      # noqa: E731
    except ImportError:
        from filelock import lock_descriptor, unlock_descriptor
        lock, unlock = (lambda fd: lock_descriptor(fd, blocking=False)), unlock_descriptor
    try:
        fd = os.open(path, READ)
    except OSError:
        return False                  # no lock file: nobody ever wrote here
    try:
        if lock(fd):
            unlock(fd)
            return False
        return True
    except OSError:
        return False                  # a file system without locks: nobody can hold one
    finally:
        os.close(fd)


def alive(pid):
    """Whether a process of that id runs. Never a signal: on Windows os.kill(pid, 0) sends
    Ctrl+C to the process group pid."""
    import psutil
    return psutil.pid_exists(pid)


def owned_by_me(st):
    """Whether a file (its stat) is this user's. Where files carry no owner id (Windows:
    st_uid is 0, and a user's temporary folder is theirs alone), every file is."""
    getuid = getattr(os, "getuid", None)
    return getuid is None or st.st_uid == getuid()


def detached():
    """Popen arguments for a process that outlives whoever started it (a hook, a terminal,
    Claude Code's console), with no window. POSIX: a session of its own. Windows: detached
    from the console, in a process group of its own, out of the starter's job object where
    that job allows it (a job that kills its processes when it closes would take the writer
    with it); start_detached tries without that where it does not."""
    import subprocess
    flags = getattr(subprocess, "DETACHED_PROCESS", None)
    if flags is None:
        return {"start_new_session": True}
    return {"creationflags": flags | subprocess.CREATE_NEW_PROCESS_GROUP |
            subprocess.CREATE_NO_WINDOW | CREATE_BREAKAWAY_FROM_JOB}


CREATE_BREAKAWAY_FROM_JOB = 0x01000000        # winbase.h; subprocess does not name it


def start_detached(argv, **popen):
    """subprocess.Popen(argv) as detached() says, and without leaving the job where the
    job refuses that (Windows answers such a request with access denied)."""
    import subprocess
    how = detached()
    try:
        return subprocess.Popen(argv, **popen, **how)
    except PermissionError:
        if "creationflags" not in how:
            raise
        how["creationflags"] &= ~CREATE_BREAKAWAY_FROM_JOB
        return subprocess.Popen(argv, **popen, **how)


def die_with_parent():
    """An export must not outlive the build that asked for it: a build killed outright would
    otherwise leave a 650 MB process behind. Linux: the kernel kills it (prctl's parent-death
    signal), where libc has prctl; everywhere: a thread that exits once the parent is gone
    (its id changed: POSIX gives an orphan a new parent; Windows never does, so the parent
    is looked up)."""
    import signal
    import threading
    import time
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)    # PR_SET_PDEATHSIG
    except (OSError, AttributeError, TypeError):
        pass          # no prctl (macOS), no SIGKILL or no CDLL(None) (Windows): the thread
    parent = os.getppid()

    def watch():
        while os.getppid() == parent and alive(parent):
            time.sleep(1)
        os._exit(1)
    threading.Thread(target=watch, daemon=True).start()


# -- the CPU
# the CPU's feature names as numpy calls them -> as Linux does (/proc/cpuinfo's flags)
NUMPY_FLAGS = {"AVX512VNNI": "avx512_vnni", "AVX2": "avx2"}


def cpu_flags():
    """The CPU's feature flags, as Linux names them: /proc/cpuinfo where it can be read,
    else numpy's own detection (macOS, Windows), which knows AVX-512 VNNI and AVX2 but not
    AVX-VNNI or AMX (such a CPU then gets AVX2's precision: slower than it could be, never
    wrong). An ARM CPU has none of them (fp32 until measured)."""
    try:
        with open("/proc/cpuinfo") as f:
            return set(next((line for line in f if line.startswith("flags")), "").split())
    except OSError:
        pass
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as found
    except ImportError:
        try:
            from numpy.core._multiarray_umath import __cpu_features__ as found   # numpy 1
        except ImportError:
            return set()
    return {ours for theirs, ours in NUMPY_FLAGS.items() if found.get(theirs)}


# -- what changed in a tree: the events the system queues as each write, rename or deletion
# completes, for a reader that lives long (fresh.Watcher). Each source gives
#   watch(dirs)  start watching these directories (relative, '' the root) if not yet;
#                True if it did (what they held before that: one whole sweep)
#   drain()      (files, directories, whole): the paths the events named since the last
#                call, the directories that gained or lost an entry, and whether only a
#                whole sweep can tell (a directory made, moved or deleted; a full queue)
#   close()
def tree_events(root, index):
    """Linux's inotify where libc has it (a watch on each directory the index knows, read
    in place: nothing to wait for), else the system's own through watchfiles (FSEvents,
    ReadDirectoryChangesW: one recursive watch), else None (a stat sweep every time)."""
    for source in (Inotify, Notify):
        try:
            return source(root, index)
        except Exception:             # noqa: BLE001 (not on this system, no watches left)
            continue
    return None


class Inotify:
    IN_MODIFY, IN_ATTRIB, IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = \
        0x2, 0x4, 0x40, 0x80, 0x100, 0x200              # inotify.h
    IN_DELETE_SELF, IN_MOVE_SELF, IN_Q_OVERFLOW, IN_IGNORED, IN_ISDIR = \
        0x400, 0x800, 0x4000, 0x8000, 0x40000000
    ENTRY = IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE      # a file came or went
    WHOLE = IN_DELETE_SELF | IN_MOVE_SELF | IN_Q_OVERFLOW
    MASK = IN_MODIFY | IN_ATTRIB | ENTRY | IN_DELETE_SELF | IN_MOVE_SELF

    def __init__(self, root, index=None):
        import ctypes
        import struct
        self.ctypes, self.event = ctypes, struct.Struct("iIII")   # wd, mask, cookie, length
        self.watched, self.names = {}, set()  # {watch: its folders (a link's too)}, all those
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(NONBLOCK | CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")

    def watch(self, dirs):
        """A watch on each folder of dirs ({folder of the tree: its real path}) that has none
        yet; True if one was added (what it held before: one sweep)."""
        import errno
        added = False
        for rel_dir in dirs.keys() - self.names:
            wd = self.libc.inotify_add_watch(self.fd, os.fsencode(dirs[rel_dir]), self.MASK)
            if wd >= 0:                       # a folder and a link to it share one watch
                self.watched.setdefault(wd, []).append(rel_dir)
                self.names.add(rel_dir)
                added = True
            elif self.ctypes.get_errno() != errno.ENOENT:
                raise OSError(self.ctypes.get_errno(), "inotify_add_watch")   # out of watches
        return added

    def drain(self):
        files, dirs, whole = set(), set(), False
        while True:
            try:
                data = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                return files, dirs, whole
            at = 0
            while at < len(data):
                wd, mask, _, size = self.event.unpack_from(data, at)
                name = os.fsdecode(data[at + 16:at + 16 + size].rstrip(b"\0"))
                at += 16 + size
                folders = self.watched.get(wd, ())
                if mask & self.IN_IGNORED:     # the watch is gone
                    self.names.difference_update(self.watched.pop(wd, ()))
                elif mask & self.WHOLE or mask & self.IN_ISDIR and mask & self.ENTRY:
                    whole = True
                    if mask & self.IN_MOVE_SELF and folders:   # its name is wrong now
                        self.libc.inotify_rm_watch(self.fd, wd)
                elif not mask & self.IN_ISDIR:
                    for rel_dir in folders:
                        files.add(f"{rel_dir}/{name}" if rel_dir else name)
                        if mask & self.ENTRY:
                            dirs.add(rel_dir)     # a file came or went: read the directory

    def close(self):
        if self.fd >= 0:
            os.close(self.fd)
        self.fd = -1


class Notify:
    """One recursive watch on the tree through watchfiles (the notify crate: FSEvents on
    macOS, ReadDirectoryChangesW on Windows), whose events a thread of its own collects.
    So that a question sees every change made before it was asked, drain() writes a mark in
    the index folder and waits for the mark's own event: the system queues one watch's
    events in order, so every earlier change has arrived by then."""
    ADDED, DELETED = 1, 3             # watchfiles.Change
    MARK = "watch.mark"
    WAIT = 2.0                        # seconds for the mark's event, else a whole sweep

    def __init__(self, root, index):
        from watchfiles._rust_notify import RustNotify      # its documented low-level API
        self.root, self.index = Path(root).absolute(), Path(index).absolute()
        paths = [str(self.root)] + ([] if self.index.is_relative_to(self.root)
                                    else [str(self.index)])
        self.notify = RustNotify(paths, False, False, 0, True, True)
        self.mark, self.started, self.known = self.index / self.MARK, False, set()

    def watch(self, dirs):
        self.known = set(dirs)
        started, self.started = self.started, True
        return not started

    def drain(self):
        import time
        files, dirs, whole = set(), set(), False
        try:
            self.mark.write_text(str(time.time_ns()))
        except OSError:
            return files, dirs, True          # a read-only index: no barrier, sweep
        deadline, seen = time.monotonic() + self.WAIT, False
        while not seen:
            found = self.notify.watch(0, 0, 1, None)
            if found in ("signal", "stop") or time.monotonic() > deadline:
                return files, dirs, True
            for change, path in found if isinstance(found, set) else ():
                if Path(path) == self.mark:
                    seen = True
                    continue
                rel = self.relative(path)
                if rel is None:
                    continue
                if rel in self.known or rel == "" or os.path.isdir(path):
                    whole = True              # a directory made, moved or deleted
                    continue
                files.add(rel)
                if change in (self.ADDED, self.DELETED):
                    dirs.add(rel.rpartition("/")[0])
        return files, dirs, whole

    def relative(self, path):
        """path relative to the tree, '/'-separated; None outside it or in the index."""
        path = Path(path)
        if path.is_relative_to(self.index) or not path.is_relative_to(self.root):
            return None
        rel = path.relative_to(self.root).as_posix()
        return "" if rel == "." else rel

    def close(self):
        self.notify.close()
