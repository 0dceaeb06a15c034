"""Expected failures, and the one line each one prints. Nothing here imports more than
the standard library and the configuration."""
import argparse
import re
import sys
from pathlib import Path

from .config import INDEX_COMMAND


class UsageError(Exception):
    """An expected failure: printed as one line, exit code 2."""


class DamagedIndex(UsageError):
    """A file of the index cannot be read: one line that names it and the remedy."""

    def __init__(self, folder, what):
        super().__init__(f"the index at {folder} is damaged ({what}); "
                         f"run: {INDEX_COMMAND} --db {folder} --rebuild")
        self.what = what


class OldFormat(UsageError):
    """An index written by an older version of the tool, in tables it no longer reads; it
    knows the folder, and the tree the index recorded (None if it recorded none)."""

    def __init__(self, folder, source):
        super().__init__(f"the index at {folder} has an older format; run: {INDEX_COMMAND} "
                         f"--db {folder} (it upgrades the index, reusing its embeddings)")
        self.folder, self.source = Path(folder), source


def damaged(folder, what, error):
    """A DamagedIndex whose reason is the first line of the error that revealed it."""
    text = str(error).strip()
    return DamagedIndex(folder, f"{what}: {text.splitlines()[0][:160] if text else type(error).__name__}")


CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def printable(name):
    """A path or name as it may be shown: bytes that are not UTF-8 as \\xNN, control
    characters (a newline in a file name could forge a result line) escaped too."""
    text = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return CONTROL.sub(lambda m: repr(m[0])[1:-1], text)


def encodable(name):
    """Whether a name (from the file system, argv or JSON) is valid Unicode throughout."""
    try:
        name.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def warn(msg):
    print(f"codebase-rag: {msg}", file=sys.stderr)


def one_line(e):
    """An exception as one line a user can act on."""
    if isinstance(e, UsageError):
        return str(e)
    if isinstance(e, FileNotFoundError) and not e.filename:
        return "the current directory no longer exists; cd into your project or pass --db"
    if isinstance(e, OSError) and e.strerror:
        return f"{e.filename or ''}: {e.strerror}".lstrip(": ")
    return f"{type(e).__name__}: {e}"


class ArgParser(argparse.ArgumentParser):
    """argparse, but a bad flag is one line on stderr, like every other expected error."""

    def error(self, message):
        warn(f"{self.prog}: {message} (see --help)")
        sys.exit(2)

    def add_setting(self, name, **kwargs):
        """The flag of a setting in config: its default and help come from there."""
        from . import config
        s = config.SETTINGS[name]
        value = getattr(config, name)
        shown = f"; default {value}" if value is not None else ""
        doc = kwargs.pop("help", s.doc)
        kind = type(s.default) if s.default is not None else str

        def checked(raw):
            value = kind(raw)
            problem = s.problem(value, s.flag)
            if problem:
                raise argparse.ArgumentTypeError(problem)
            return value
        checked.__name__ = kind.__name__        # argparse names the type in its message
        self.add_argument(s.flag, default=value, choices=s.choices, type=checked,
                          help=f"{doc}{shown}; env {s.env}", **kwargs)


def report(e):
    """Print the one line an exception deserves; return the exit code (2: expected)."""
    import sqlite3

    from . import config
    if isinstance(e, (UsageError, OSError)) and not disk_full(e):
        warn(one_line(e))
        return 2
    if config.DEBUG:
        raise e
    if disk_full(e):
        warn(f"the disk is full ({one_line(e)}); free some space, then run the command again "
             f"(the index keeps what it had)")
        return 2
    if isinstance(e, sqlite3.DatabaseError) and "locked" not in str(e):
        warn(f"the index is damaged (index.sqlite: {e}); run: {INDEX_COMMAND} --rebuild")
    else:
        warn(f"failed: {one_line(e)}; run {INDEX_COMMAND} --check to see whether the index "
             f"is sound")
    return 1


def disk_full(e):
    """Whether an error says the disk (or a quota) is full: SQLite's SQLITE_FULL, or ENOSPC
    and EDQUOT from a write of ours."""
    import errno
    import sqlite3
    if isinstance(e, sqlite3.DatabaseError):
        return getattr(e, "sqlite_errorcode", None) == 13 or "disk is full" in str(e)
    return isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT)
