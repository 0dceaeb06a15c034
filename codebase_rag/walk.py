"""Walk: the files a build indexes. It follows .gitignore files (nested ones too), the
default and --exclude globs, each language's own excludes, and reads only regular files
inside the source tree."""
import os
import stat
from pathlib import Path

from .languages import LANGUAGES
from .config import DEFAULT_EXCLUDES, MAX_FILE_BYTES
from .errors import UsageError, encodable, printable, warn
from .oslayer import READ_ANY, case_insensitive


class Ignore:
    """The files a build must skip: default and --exclude globs, plus every .gitignore
    from the source root down (deeper files win, as in git), plus what each language says
    holds none of its source (a folder is walked while some language may have files there)."""

    def __init__(self, root, excludes=(), languages=LANGUAGES):
        import pathspec
        self.pathspec = pathspec
        self.root = Path(root)
        # as git matches on a case-insensitive volume (core.ignorecase): patterns and paths
        # alike in lower case
        self.fold = str.lower if ignores_case(root) else str
        self.extensions = tuple(ext for lang in languages for ext in lang.extensions)
        self.base = self.spec(list(DEFAULT_EXCLUDES) + [d for lang in languages
                                                       for d in lang.never_walked]
                              + list(excludes))
        self.scoped = [(lang.extensions, self.spec(lang.excludes)) for lang in languages]
        self.beside = {}              # folder name -> the marker folder that must sit beside it
        for lang in languages:
            for marker, folders in lang.beside:
                self.beside.update(dict.fromkeys(folders, marker))
        self.specs = {}               # directory (relative, '' = root) -> spec or None

    def spec_for(self, rel_dir):
        """The .gitignore of a directory (relative, '' = root), or None."""
        if rel_dir not in self.specs:
            gi = self.root / rel_dir / ".gitignore"
            spec = None
            try:
                if gi.is_file():
                    spec = self.spec(gi.read_text(encoding="utf-8",
                                                  errors="replace").splitlines())
            except OSError as e:
                warn(f"cannot read {gi}: {e.strerror}")
            self.specs[rel_dir] = spec
        return self.specs[rel_dir]

    def spec(self, lines):
        return self.pathspec.GitIgnoreSpec.from_lines([self.fold(line) for line in lines])

    def chain(self, rel_dir, parent_chain):
        """The .gitignore files that rule inside a directory, deepest first, as (directory,
        spec): its parent's chain, plus its own. The walk passes each directory's chain to
        its children, so no path is ever split into all its ancestors (a tree 1,000 levels
        deep costs no more per file than a flat one)."""
        spec = self.spec_for(rel_dir)
        return [(rel_dir, spec)] + parent_chain if spec is not None else parent_chain

    def ignored(self, rel, is_dir, chain):
        """rel: path relative to the root, '/'-separated; chain: the .gitignore chain of its
        directory. Assumes its parents are not ignored."""
        folded = self.fold(rel)
        probe = folded + "/" if is_dir else folded
        if self.base.match_file(probe):
            return True
        name = rel.rsplit("/", 1)[-1]
        marker = self.beside.get(name) if is_dir else None
        if marker and (self.root / rel / ".." / marker).is_dir():
            return True
        if is_dir and all(spec.match_file(probe) for _, spec in self.scoped):
            return True                   # no language has source there
        if not is_dir and any(spec.match_file(probe) for exts, spec in self.scoped
                              if rel.endswith(exts)):
            return True
        for base, spec in chain:                          # deepest .gitignore first
            sub = folded[len(self.fold(base)) + 1:] if base else folded
            result = spec.check_file(sub + "/" if is_dir else sub).include
            if result is not None:
                return result
        return False

    def chain_of(self, rel_dir):
        """The .gitignore chain of a directory, or None if the directory is ignored."""
        chain, folder = self.chain("", []), ""
        for part in rel_dir.split("/") if rel_dir else ():
            folder = f"{folder}/{part}" if folder else part
            if self.ignored(folder, True, chain):
                return None
            chain = self.chain(folder, chain)
        return chain

    def included(self, rel):
        """Whether a build would index this file: no ignored parent, not ignored itself."""
        if not rel.endswith(self.extensions):
            return False
        chain = self.chain_of(rel.rsplit("/", 1)[0] if "/" in rel else "")
        return chain is not None and not self.ignored(rel, False, chain)


def ignores_case(root):
    """Whether git matches ignore rules whatever the case here: the repository's
    core.ignorecase (git sets it true on a case-insensitive volume), else the volume's own
    way (oslayer)."""
    git = Path(root) / ".git"
    try:
        if git.is_file():                 # a worktree's or a submodule's: "gitdir: PATH"
            git = (Path(root) / git.read_text().partition(":")[2].strip())
            if (git / "commondir").is_file():
                git = git / (git / "commondir").read_text().strip()
        text = (git / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return case_insensitive(root)
    section = ""
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line.strip("[]").strip().lower()
        elif section == "core" and line.partition("=")[0].strip().lower() == "ignorecase":
            return line.partition("=")[2].strip().lower() in ("true", "yes", "on", "1")
    return False


def inside(path, root):
    """Whether path, every symlink resolved, lies within the directory root."""
    real, base = os.path.realpath(path), os.path.realpath(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def walk(root, ignore, dirs=None, start=""):
    """Yield (relative path, absolute path, os.stat_result) for every indexable file: regular
    files only, and a symlink only when its target lies inside the tree. dirs: a dict that
    receives {directory: mtime_ns} of every directory read. start: a directory to walk
    below, instead of the whole tree."""
    root = Path(root)
    seen_dirs = set()
    # (directory, its real path, reached through a symlink, its .gitignore chain); a real
    # path is its parent's plus its name unless it is a link (realpath of each directory
    # would cost a syscall per level: quadratic in a deep tree)
    chain = ignore.chain_of(start)
    if chain is None:
        return                                # the start is ignored: nothing below it counts
    stack = [(start, os.path.realpath(root / start), False, chain)]
    while stack:
        rel_dir, real, linked, chain = stack.pop()
        full = root / rel_dir
        try:
            if linked and real in seen_dirs:
                warn(f"skipping {printable(rel_dir)}: symlink loop")
                continue
            seen_dirs.add(real)
            if dirs is not None:
                dirs[rel_dir] = os.stat(full).st_mtime_ns
            entries = sorted(os.scandir(full), key=lambda e: e.name)
        except OSError as e:
            tree_is_there(root)
            warn(f"skipping {printable(rel_dir) or '.'}: {e.strerror}")
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if not encodable(entry.name):     # a Latin-1 checkout: SQLite and the model need text
                if entry.is_dir() or entry.name.endswith(ignore.extensions):
                    warn(f"skipping {printable(rel)}: its name is not valid UTF-8")
                continue
            try:
                if entry.is_dir():
                    if ignore.ignored(rel, True, chain):
                        continue
                    linked = entry.is_symlink()
                    if linked and not inside(entry.path, root):
                        warn(f"skipping {printable(rel)}: a symlink to outside the tree")
                        continue
                    stack.append((rel, os.path.realpath(entry.path) if linked else
                                  os.path.join(real, entry.name), linked, ignore.chain(rel, chain)))
                elif entry.name.endswith(ignore.extensions) and not ignore.ignored(rel, False,
                                                                                   chain):
                    if entry.is_symlink() and not inside(entry.path, root):
                        warn(f"skipping {printable(rel)}: a symlink to outside the tree")
                        continue
                    st = entry.stat()
                    if not stat.S_ISREG(st.st_mode):
                        warn(f"skipping {printable(rel)}: not a regular file")
                        continue
                    yield rel, entry.path, st
            except OSError as e:
                tree_is_there(root)           # not thousands of lines for a tree that moved
                warn(f"skipping {printable(rel)}: {e.strerror}")


def tree_is_there(root):
    """Before a file is dropped or skipped as gone: a tree moved or deleted mid-run must not
    empty its index, nor fill a log with a line per file."""
    if not os.path.isdir(root):
        raise UsageError(f"{printable(str(root))} moved or was deleted while it was being "
                         f"indexed; the index keeps what it had: run index.py where the tree "
                         f"is now")


def read_source(path, size=None):
    """The file's text, or None (with a warning) when it cannot be indexed. Only a regular
    file is read (a FIFO or a device never blocks or floods the run), and never more than
    the size cap. size: the caller's idea of it, unused (the open file's own size counts)."""
    try:
        fd = os.open(path, READ_ANY)          # a FIFO never blocks the run (oslayer)
    except OSError as e:
        warn(f"skipping {printable(str(path))}: {e.strerror}")
        return None
    try:
        st = os.fstat(fd)             # a directory opens too: look before reading
        if not stat.S_ISREG(st.st_mode):
            warn(f"skipping {printable(str(path))}: not a regular file")
            return None
        if st.st_size > MAX_FILE_BYTES:
            warn(f"skipping {printable(str(path))}: {st.st_size:,} bytes is over the "
                 f"{MAX_FILE_BYTES:,}-byte cap")
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        warn(f"skipping {printable(str(path))}: {e.strerror}")
        return None
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        warn(f"skipping {printable(str(path))}: over the {MAX_FILE_BYTES:,}-byte cap")
        return None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace").replace("\r\n", "\n")
    if b"\0" in data[:8192]:
        warn(f"skipping {printable(str(path))}: binary content")
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        warn(f"{printable(str(path))}: not valid UTF-8, read as Windows-1252")
        text = data.decode("cp1252", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n")
