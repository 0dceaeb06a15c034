"""macOS or Windows on Linux, as far as this tool can tell: what those systems lack is taken
away, in this process and, through sitecustomize.py beside this file (put this folder on
PYTHONPATH and EMULATE_OS in the environment), in every Python process a run starts, the
detached writers and the model's export among them.

macOS:   no os.fdatasync; no /proc (the tool's own reads of it fail); libc without inotify
         or prctl.
Windows: no /proc and no fcntl module for the tool; no os.O_NONBLOCK, pwrite, pread, fdatasync, getuid,
         fchmod, signal.SIGKILL for it; its os.kill(pid, 0) is an error (Windows sends
         Ctrl+C there); its os.open without O_BINARY is text mode (\\n written as \\r\\n);
         ctypes.CDLL(None) raises TypeError; and a file or folder that any process has
         open (a descriptor, a memory map, a working directory) can be neither renamed
         nor deleted, nor replaced by a rename: PermissionError, as Windows says.

Whatever is taken from "the tool" is taken from code of the codebase_rag package only:
libraries keep what they use on Linux, as on the real system they use that system's own
way (filelock its LockFileEx, psutil its OpenProcess). The case-insensitive file names of
macOS and Windows are not emulated here: tests/test_portable_casefold.py mounts a real
FAT file system for that.
"""
import builtins
import ctypes
import errno
import os
import pathlib
import signal
import sys
import types

KINDS = ("macos", "windows")
APPLIED = []


class Forever:
    """How a process's emulation changes things: for good (pytest's MonkeyPatch, whose
    setattr and delattr undo at the test's end, stands in for it in the suite)."""
    @staticmethod
    def setattr(target, name, value, raising=True):
        setattr(target, name, value)

    @staticmethod
    def delattr(target, name, raising=True):
        delattr(target, name)


def from_the_tool(depth=2):
    """Whether the caller's caller is code of the codebase_rag package."""
    try:
        frame = sys._getframe(depth)
    except ValueError:
        return False
    return frame.f_globals.get("__name__", "").startswith("codebase_rag")


def apply(kind, patch=Forever):
    """Take away what kind lacks; patch: setattr and delattr as MonkeyPatch has them."""
    if kind not in KINDS:
        raise ValueError(f"EMULATE_OS: {kind!r} is none of {KINDS}")
    if patch is Forever:
        if APPLIED:
            return
        APPLIED.append(kind)
    (macos if kind == "macos" else windows)(patch)


def take(patch, target, *names):
    for name in names:
        if hasattr(target, name):
            patch.delattr(target, name)


# ----------------------------------------------------------------------------- macOS
def macos(patch):
    take(patch, os, "fdatasync")
    hide_proc(patch)
    refuse_libc(patch, ("inotify_init", "inotify_init1", "inotify_add_watch",
                        "inotify_rm_watch", "prctl"))


def hide_proc(patch):
    real_open, real_os_open = builtins.open, os.open

    def gone(path):
        return isinstance(path, (str, bytes, os.PathLike)) and \
            os.fsdecode(os.fspath(path)).startswith("/proc")

    def open_(file, *args, **kw):
        if gone(file) and from_the_tool():
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", file)
        return real_open(file, *args, **kw)

    def os_open(path, *args, **kw):
        if gone(path) and from_the_tool():
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
        return real_os_open(path, *args, **kw)
    patch.setattr(builtins, "open", open_)
    patch.setattr(os, "open", os_open)


def refuse_libc(patch, names):
    real = ctypes.CDLL.__getattr__

    def getattr_(self, name):
        if name in names:
            raise AttributeError(f"{name}: not in this system's libc")
        return real(self, name)
    patch.setattr(ctypes.CDLL, "__getattr__", getattr_)


# ----------------------------------------------------------------------------- Windows
O_BINARY = 0x8000             # Windows' value; on Linux x86-64, O_LARGEFILE: no effect


def windows(patch):
    hide_proc(patch)
    patch.setattr(os, "O_BINARY", O_BINARY, raising=False)
    opened_as_text = text_mode(patch)
    tool_sees(patch, {
        "os": Without(os, ("O_NONBLOCK", "pwrite", "pread", "fdatasync", "getuid", "fchmod"),
                      kill=kill_but_zero, open=opened_as_text),
        "signal": Without(signal, ("SIGKILL",)),
        "fcntl": None,
    })
    no_cdll_none(patch)
    refuse_in_use(patch)


class Without(types.ModuleType):
    """A module as the tool sees it: some names gone, some replaced (the libraries it calls
    keep the real module, as on the real system they have that system's own)."""

    def __init__(self, real, hidden, **replaced):
        super().__init__(real.__name__, real.__doc__)
        self.__dict__.update(hidden_=set(hidden), real_=real, replaced_=replaced)

    def __getattr__(self, name):
        if name in self.hidden_:
            raise AttributeError(f"module {self.real_.__name__!r} has no attribute {name!r}")
        if name in self.replaced_:
            return self.replaced_[name]
        return getattr(self.real_, name)


def tool_sees(patch, modules):
    """`import name` in the tool's code gives modules[name] (None: no such module)."""
    real = builtins.__import__

    def import_(module, globals=None, locals=None, fromlist=(), level=0):
        if module in modules and level == 0 and \
                (globals or {}).get("__name__", "").startswith("codebase_rag"):
            if modules[module] is None:
                raise ModuleNotFoundError(f"No module named {module!r}", name=module)
            return modules[module]
        return real(module, globals, locals, fromlist, level)
    patch.setattr(builtins, "__import__", import_)


def no_cdll_none(patch):
    real = ctypes.CDLL.__init__

    def init(self, name, *args, **kw):
        if name is None:
            raise TypeError("expected str, bytes or os.PathLike object, not NoneType")
        real(self, name, *args, **kw)
    patch.setattr(ctypes.CDLL, "__init__", init)


def kill_but_zero(pid, sig):
    if sig == 0:
        raise AssertionError("os.kill(pid, 0) on Windows sends Ctrl+C to that process group")
    return os.kill(pid, sig)


def text_mode(patch):
    """The tool's os.open without O_BINARY opens in text mode: \\n written as \\r\\n,
    \\r\\n read as \\n (by os.write and os.read; a descriptor is known by its file, so a
    number that another open reuses is never taken for it). Returns that os.open."""
    real_open, real_write, real_read = os.open, os.write, os.read
    text = {}

    def identity(fd):
        st = os.fstat(fd)
        return st.st_dev, st.st_ino

    def is_text(fd):
        try:
            return fd in text and text[fd] == identity(fd)
        except OSError:
            return False

    def open_(path, flags, *args, **kw):
        fd = real_open(path, flags, *args, **kw)
        if flags & O_BINARY:
            text.pop(fd, None)
        else:
            text[fd] = identity(fd)
        return fd

    def write(fd, data):
        if is_text(fd):
            real_write(fd, bytes(data).replace(b"\n", b"\r\n"))
            return len(data)
        return real_write(fd, data)

    def read(fd, n):
        data = real_read(fd, n)
        return data.replace(b"\r\n", b"\n") if is_text(fd) else data
    patch.setattr(os, "write", write)
    patch.setattr(os, "read", read)
    return open_


# -- files in use
def in_use(path):
    """Whether any process has path open (a descriptor, a memory map, its working
    directory), or for a folder, anything inside it."""
    path = os.path.realpath(path)
    inside = path.rstrip("/") + "/"
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        held = []
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    held.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
                except OSError:
                    pass
            held.append(os.readlink(f"/proc/{pid}/cwd"))
            with open(f"/proc/{pid}/maps") as maps:
                held += [line.split(None, 5)[5].strip() for line in maps
                         if len(line.split(None, 5)) == 6]
        except OSError:
            continue
        for target in held:
            target = target.removesuffix(" (deleted)")
            if target == path or target.startswith(inside):
                return True
    return False


def full_path(path, dir_fd=None):
    path = os.fsdecode(os.fspath(path))
    if dir_fd is not None and not os.path.isabs(path):
        return os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), path)
    return os.path.abspath(path)


def refuse_in_use(patch):
    def refusing(real):
        def call(*args, **kw):
            src_fd, dst_fd = kw.get("src_dir_fd", kw.get("dir_fd")), kw.get("dst_dir_fd")
            paths = [full_path(args[0], src_fd)] + ([full_path(args[1], dst_fd)]
                                                    if len(args) > 1 else [])
            for path in paths:
                if os.path.lexists(path) and not os.path.islink(path) and in_use(path):
                    raise PermissionError(errno.EACCES, "The process cannot access the file "
                                          "because it is being used by another process", path)
            return real(*args, **kw)
        return call
    for name in ("rename", "replace", "unlink", "remove", "rmdir"):
        patch.setattr(os, name, refusing(getattr(os, name)))
    accessor = getattr(pathlib, "_NormalAccessor", None)     # Python 3.10: Path.unlink and
    for name in ("rename", "replace", "unlink", "rmdir"):     # the rest call os's functions
        if accessor is not None and hasattr(accessor, name):  # as they were at import
            patch.setattr(accessor, name, staticmethod(getattr(os, name)))
