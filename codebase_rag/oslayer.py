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
import shutil
import subprocess
import sys
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
    shutil.rmtree(aside, ignore_errors=True)
    return not aside.exists()


TRASH = ".removing-"          # a folder renamed aside on its way out (remove_unused)


def replace_file(source, target):
    """os.replace, or False where target is open elsewhere (Windows refuses): the caller
    keeps the old file and writes a new generation instead."""
    try:
        os.replace(source, target)
        return True
    except PermissionError:
        return False


# -- processes
def lock_held(path):
    """Whether some process holds the writer lock on this file (taken with filelock). The
    probe opens the file read-only (a read-only index answers too) and tries filelock's own
    primitive on it: flock on POSIX, LockFileEx on Windows."""
    from filelock import lock_descriptor, unlock_descriptor
    try:
        fd = os.open(path, READ)
    except OSError:
        return False                  # no lock file: nobody ever wrote here
    try:
        if lock_descriptor(fd, blocking=False):
            unlock_descriptor(fd)
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
    flags = getattr(subprocess, "DETACHED_PROCESS", None)
    if flags is None:
        return {"start_new_session": True}
    return {"creationflags": flags | subprocess.CREATE_NEW_PROCESS_GROUP |
            subprocess.CREATE_NO_WINDOW | CREATE_BREAKAWAY_FROM_JOB}


CREATE_BREAKAWAY_FROM_JOB = 0x01000000        # winbase.h; subprocess does not name it


def start_detached(argv, **popen):
    """subprocess.Popen(argv) as detached() says, and without leaving the job where the
    job refuses that (Windows answers such a request with access denied)."""
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
