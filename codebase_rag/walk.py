"""Walk: the files a build indexes. It follows .gitignore files (nested ones too), the
default and --exclude globs, each language's own excludes, and reads only regular files
inside the source tree."""
import os
import stat
import time
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
                warn(f"cannot read {printable(f'{rel_dir}/.gitignore'.lstrip('/'))}: "
                     f"{e.strerror}")
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


def within(path, folder):
    """Whether a real path is folder itself or lies below it."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


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
    return within(os.path.realpath(path), os.path.realpath(root))


# The one rule for symlinks, which the walk, a search's sweep, a hook, --single, the MCP
# server's watcher and its reindex all apply (through the functions below): a link is
# followed only to a target inside the tree, and a link to a folder is never entered when
# that folder holds the link (a loop: a link to the root, to a parent, or around a cycle).
OUTSIDE = "a symlink to outside the tree"
LOOP = "a symlink to a folder that holds it (a loop)"
AGAIN = "a symlink to a folder read already"


def refused(target, holder, base, through=()):
    """Why the walk does not enter a symlinked folder, or None. target: the link's real
    path; holder: the real path of the folder it is in; base: the tree's real root;
    through: the real paths of the folders that held the links taken on the way here."""
    if not within(target, base):
        return OUTSIDE
    if any(within(folder, target) for folder in (holder, *through)):
        return LOOP
    return None


def entered(root, rel_dir, base=None, memo=None):
    """((real path, the holders of the links on its way), None) for a folder of the tree
    that the walk enters, else (None, why not): every folder link on its way must pass the
    rule. One lstat per level, as realpath; memo: a dict of the answers so far, for a
    caller that asks about many folders, parents first (each then costs one lstat)."""
    base = base or os.path.realpath(root)
    parent, _, last = rel_dir.rpartition("/")
    known = memo.get(parent) if memo is not None and rel_dir else None
    if known is not None and known[0] is None:
        return known
    real, through = known[0] if known else (base, ())
    answer = (real, through), None
    for part in [last] if known else rel_dir.split("/") if rel_dir else ():
        if part in ("", ".", ".."):
            answer = None, "not a folder of the tree"
            break
        path = os.path.join(real, part)
        if os.path.islink(path):
            target = os.path.realpath(path)
            why = refused(target, real, base, through)
            if why:
                answer = None, why
                break
            real, through = target, through + (real,)
        else:
            real = path
        answer = (real, through), None
    if memo is not None:
        memo[rel_dir] = answer
    return answer


def listed(root, rel, base=None):
    """Whether the walk lists this path (relative, '/'-separated) if it is a file there:
    every folder on its way entered, and the file, if it is a link, to one inside the
    tree. The ignore rules are Ignore.included's."""
    base = base or os.path.realpath(root)
    folder, _, name = rel.rpartition("/")
    found, _ = entered(root, folder, base)
    if found is None or name in ("", ".", ".."):
        return False
    path = os.path.join(found[0], name)
    return not os.path.islink(path) or within(os.path.realpath(path), base)


def in_tree(path, root):
    """The path relative to root ('/'-separated) under which the walk lists the file at
    path (absolute and normalized, '..' resolved), or None if it is not in the tree. A
    path through a link the walk does not follow names the file it reaches, when that one
    is inside the tree (an edit through an alias is an edit of the real file)."""
    if "\0" in path:
        return None
    for base in dict.fromkeys((str(root), os.path.realpath(root))):
        if path.startswith(base.rstrip(os.sep) + os.sep):
            rel = Path(os.path.relpath(path, base)).as_posix()
            if listed(root, rel):
                return rel
    real, base = os.path.realpath(path), os.path.realpath(root)
    if real != base and within(real, base):
        return Path(os.path.relpath(real, base)).as_posix()
    return None


class OutOfTime(Exception):
    """A walk given a deadline ran past it; folder: the one it was reading."""

    def __init__(self, folder):
        super().__init__(folder)
        self.folder = folder


def walk(root, ignore, dirs=None, start="", deadline=None, known=()):
    """Yield (relative path, absolute path, os.stat_result) for every indexable file: regular
    files only, and symlinks as the rule above says. dirs: a dict that receives
    {directory: mtime_ns} of every directory read. start: a directory to walk below,
    instead of the whole tree (entered only if the walk from the root would enter it).
    deadline (time.monotonic()): raise OutOfTime past it. known: folders below start not
    to descend (a search's sweep looks into those whose time moved by themselves)."""
    root = Path(root)
    base = os.path.realpath(root)
    seen_dirs = set()
    chain = ignore.chain_of(start)
    if chain is None:
        return                                # the start is ignored: nothing below it counts
    found, why = entered(root, start, base)
    if found is None:
        warn(f"skipping {printable(start)}: {why}")
        return
    # (directory, its real path, reached through a symlink, the holders of the links on the
    # way, its .gitignore chain); a real path is its parent's plus its name unless it is a
    # link (realpath of each directory would cost a syscall per level: quadratic in a deep
    # tree)
    stack = [(start, found[0], False, found[1], chain)]
    while stack:
        rel_dir, real, linked, through, chain = stack.pop()
        if deadline is not None and time.monotonic() > deadline:
            raise OutOfTime(rel_dir)
        try:
            if linked and real in seen_dirs:
                warn(f"skipping {printable(rel_dir)}: {AGAIN}")
                continue
            seen_dirs.add(real)
            if dirs is not None:
                dirs[rel_dir] = os.stat(real).st_mtime_ns
            entries = listing(real, deadline, rel_dir)
        except OSError as e:
            tree_is_there(root)
            warn(f"skipping {printable(rel_dir) or '.'}: {e.strerror}")
            continue
        for number, entry in enumerate(entries):
            if deadline is not None and number % 64 == 63 and time.monotonic() > deadline:
                raise OutOfTime(rel_dir)
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if not encodable(entry.name):     # a Latin-1 checkout: SQLite and the model need text
                if entry.is_dir() or entry.name.endswith(ignore.extensions):
                    warn(f"skipping {printable(rel)}: its name is not valid UTF-8")
                continue
            try:
                if entry.is_dir():
                    if rel in known or ignore.ignored(rel, True, chain):
                        continue
                    target, holders = os.path.join(real, entry.name), through
                    if entry.is_symlink():
                        target = os.path.realpath(entry.path)
                        why = refused(target, real, base, through)
                        if why:
                            warn(f"skipping {printable(rel)}: {why}")
                            continue
                        holders = through + (real,)
                    stack.append((rel, target, entry.is_symlink(), holders,
                                  ignore.chain(rel, chain)))
                elif entry.name.endswith(ignore.extensions) and not ignore.ignored(rel, False,
                                                                                   chain):
                    if entry.is_symlink() and not within(os.path.realpath(entry.path), base):
                        warn(f"skipping {printable(rel)}: {OUTSIDE}")
                        continue
                    st = entry.stat()
                    if not stat.S_ISREG(st.st_mode):
                        warn(f"skipping {printable(rel)}: not a regular file")
                        continue
                    yield rel, entry.path, st
            except OSError as e:
                tree_is_there(root)           # not thousands of lines for a tree that moved
                warn(f"skipping {printable(rel)}: {e.strerror}")


def listing(folder, deadline, rel_dir):
    """A folder's entries, by name; past the deadline, OutOfTime (a folder of a million
    files takes a second to list)."""
    entries = []
    with os.scandir(folder) as found:
        for entry in found:
            entries.append(entry)
            if deadline is not None and len(entries) % 1024 == 0 and \
                    time.monotonic() > deadline:
                raise OutOfTime(rel_dir)
    return sorted(entries, key=lambda e: e.name)


def tree_is_there(root):
    """Before a file is dropped or skipped as gone: a tree moved or deleted mid-run must not
    empty its index, nor fill a log with a line per file."""
    if not os.path.isdir(root):
        raise UsageError(f"{printable(str(root))} moved or was deleted while it was being "
                         f"indexed; the index keeps what it had: run index.py where the tree "
                         f"is now")


def read_source(path, rel=None):
    """The file's text, or None (with a warning) when it cannot be indexed. Only a regular
    file is read (a FIFO or a device never blocks or floods the run), and never more than
    the size cap. rel: its path in the tree, which the warnings name (as the walk's and the
    results do); else the path."""
    shown = printable(str(path) if rel is None else rel)
    try:
        fd = os.open(path, READ_ANY)          # a FIFO never blocks the run (oslayer)
    except OSError as e:
        warn(f"skipping {shown}: {e.strerror}")
        return None
    try:
        st = os.fstat(fd)             # a directory opens too: look before reading
        if not stat.S_ISREG(st.st_mode):
            warn(f"skipping {shown}: not a regular file")
            return None
        if st.st_size > MAX_FILE_BYTES:
            warn(f"skipping {shown}: {st.st_size:,} bytes is over the "
                 f"{MAX_FILE_BYTES:,}-byte cap")
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        warn(f"skipping {shown}: {e.strerror}")
        return None
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        warn(f"skipping {shown}: over the {MAX_FILE_BYTES:,}-byte cap")
        return None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace").replace("\r\n", "\n")
    if b"\0" in data[:8192]:
        warn(f"skipping {shown}: binary content")
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        warn(f"{shown}: not valid UTF-8, read as Windows-1252")
        text = data.decode("cp1252", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n")
