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


class DiskFull(UsageError):
    """A write that found no space left: nothing is damaged, the index keeps what it had."""

    def __init__(self, what):
        super().__init__(f"the disk is full ({what}); free some space, then run the command "
                         f"again (the index keeps what it had)")


def damaged(folder, what, error):
    """A DamagedIndex whose reason is the first line of the error that revealed it; or
    DiskFull, when that error says the disk is full (Chroma and SQLite say so in text)."""
    text = str(error).strip()
    reason = f"{what}: {text.splitlines()[0][:160] if text else type(error).__name__}"
    if disk_full(error) or "disk is full" in text or no_space_at(folder):
        return DiskFull(reason)       # SQLite says 'disk I/O error' when it cannot make -shm
    return DamagedIndex(folder, reason)


CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def printable(name):
    """A path or name as it may be shown: bytes that are not UTF-8 as \\xNN, control
    characters (a newline in a file name could forge a result line) escaped too."""
    try:
        text = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:        # half of a UTF-16 pair (JSON's "\ud800"): \ud800
        text = name.encode("utf-8", "backslashreplace").decode("utf-8")
    return CONTROL.sub(lambda m: repr(m[0])[1:-1], text)


def encodable(name):
    """Whether a name (from the file system, argv or JSON) is valid Unicode throughout."""
    try:
        name.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def not_text(what, value, bytes_read=True):
    """The one line for a string that is not valid text where text is needed: bytes_read,
    from bytes decoded with surrogateescape (argv, a file), else from JSON (a lone
    "\\ud800")."""
    at = next(i for i, c in enumerate(value) if "\ud800" <= c <= "\udfff")
    why = "a byte that is not UTF-8" if bytes_read else "half of a UTF-16 surrogate pair"
    shown = value[max(0, at - 20):at + 1]
    if not bytes_read:                # as JSON wrote it: \udce9, not the byte \xe9
        shown = shown.encode("utf-8", "backslashreplace").decode("utf-8")
    return f"{what} is not valid text: {why} at character {at + 1:,} ({printable(shown)})"


def read_json(text, what):
    """Parsed JSON from input (an event, a settings file), or a UsageError of one line:
    text that is not JSON, or nested deeper than the parser follows (RecursionError)."""
    import json
    try:
        return json.loads(text)
    except RecursionError:
        raise UsageError(f"{what} is nested too deeply to read") from None
    except ValueError as e:
        raise UsageError(f"{what} is not JSON ({e})") from None


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
    """argparse, but a bad flag is one line on stderr, like every other expected error; and
    every argument must be text (a byte that is not UTF-8 reaches Python as a lone
    surrogate, which no file name of an index, SQLite or the model can take)."""

    def error(self, message):
        warn(f"{self.prog}: {message} (see --help)")
        sys.exit(2)

    def parse_known_args(self, args=None, namespace=None):
        parsed, extra = super().parse_known_args(args, namespace)
        for action in self._actions:
            value = getattr(parsed, action.dest, None)
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, str) and not encodable(item):
                    name = action.option_strings[0] if action.option_strings else action.dest
                    warn(f"{self.prog}: {not_text(name, item)}")
                    sys.exit(2)
        return parsed, extra

    def add_setting(self, name, **kwargs):
        """The flag of a setting in config: its default and help come from there."""
        from . import config
        s = config.SETTINGS[name]
        if s.lever:
            raise ValueError(f"{s.env} is a benchmark lever: no flag shows it to users")
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
    if isinstance(e, RecursionError):         # input nested deeper than Python follows
        warn(f"the input is nested too deeply to read ({one_line(e)})")
        return 2
    if isinstance(e, UnicodeError):           # text where only bytes that are not UTF-8 came
        warn(f"the input is not valid text ({one_line(e)})")
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


SPACE_NEEDED = 1 << 20        # below this much free space, nothing the tool writes fits


def no_space_at(folder):
    """Whether the disk of a folder is (nearly) full."""
    import shutil
    try:
        return shutil.disk_usage(folder).free < SPACE_NEEDED
    except (OSError, ValueError):
        return False


def disk_full(e):
    """Whether an error says the disk (or a quota) is full: SQLite's SQLITE_FULL, or ENOSPC
    and EDQUOT from a write of ours."""
    import errno
    import sqlite3
    if isinstance(e, sqlite3.DatabaseError):
        return getattr(e, "sqlite_errorcode", None) == 13 or "disk is full" in str(e)
    return isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT)
