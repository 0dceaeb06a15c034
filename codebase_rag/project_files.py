"""The files setup changes in a project, which is untrusted input: found only inside it (a
link out stops setup), read as they are (BOM and line ends kept), and written all or
nothing, each through its in-tree link."""
import os
import stat
from contextlib import suppress
from pathlib import Path
from typing import NamedTuple

from .errors import UsageError, printable
from .oslayer import BINARY, replace_soon

AGAIN = "then run setup again (nothing was changed)"


class Change(NamedTuple):
    name: str                 # as setup knows it (CLAUDE.md)
    path: Path                # the real file (AGENTS.md, where CLAUDE.md links to it)
    old: str | None           # None: no such file
    new: str | None           # None: delete it
    shown: bool = True        # False: setup's own record, in the index folder


def inside(root, name):
    """The real path of root/name (root real itself). Each folder on the way, and the file,
    is resolved; one that leads out of the project stops setup: a repository can carry a
    link to the user's own files (~/.claude, where every project would run our hooks)."""
    path, parts = root, Path(name).parts
    for i, part in enumerate(parts):
        path = Path(os.path.realpath(path / part))
        if not path.is_relative_to(root):
            link = printable(str(root.joinpath(*parts[:i + 1])))
            raise UsageError(f"{link} leads out of the project (to {printable(str(path))}) and "
                             f"setup writes only inside it: remove the link or point it "
                             f"inside, {AGAIN}")
    return path


def read(path):
    """A file's text (None if there is none), its BOM and line ends as they are."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):     # a folder, or a FIFO that would hang
            raise UsageError(f"{printable(str(path))} is not a file; move it away, {AGAIN}")
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise UsageError(f"cannot read {printable(str(path))}: {e.strerror or e}; fix it, "
                         f"{AGAIN}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UsageError(f"{printable(str(path))} is not UTF-8 text (byte {e.start}); save it "
                         f"as UTF-8, {AGAIN}") from None


def temporary(path):
    return path.with_name(f".{path.name}.codebase-rag-{os.getpid()}.tmp")


def write_aside(path, text):
    """text in a new temporary file beside path, with path's permissions; its name."""
    tmp = temporary(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | BINARY, 0o666)
    try:
        with suppress(FileNotFoundError):       # by name: Windows has no fchmod
            os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8"))
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def apply(changes, root, prune=()):
    """All or nothing: each new text is written beside its file and each file to delete is
    moved aside; only when all of that worked does any take its place. A failure puts
    everything back and names the file (not its temporary name). The folders of prune that
    a deletion empties go too."""
    staged, made = [], []
    try:
        for change in changes:
            if change.new is None:
                staged.append((change, temporary(change.path)))
                os.rename(change.path, staged[-1][1])
            else:
                missing = [f for f in (change.path.parent, *change.path.parent.parents)
                           if f.is_relative_to(root) and not f.exists()]
                for folder in reversed(missing):
                    folder.mkdir()
                    made.append(folder)
                staged.append((change, write_aside(change.path, change.new)))
    except OSError as e:
        for done, tmp in reversed(staged):
            with suppress(OSError):
                os.rename(tmp, done.path) if done.new is None else tmp.unlink()
        for folder in reversed(made):
            with suppress(OSError):
                folder.rmdir()
        verb = "remove" if change.new is None else "write"
        raise UsageError(f"cannot {verb} {printable(str(change.path))}: {e.strerror or e} "
                         f"(nothing was changed)") from None
    for change, tmp in staged:          # (a file an editor reads this moment: Windows
        tmp.unlink() if change.new is None else replace_soon(tmp, change.path)   # waits)
    for folder in prune:
        if any(c.new is None and c.path.parent == folder for c in changes) and \
                not folder.is_symlink() and not any(folder.iterdir()):
            folder.rmdir()
