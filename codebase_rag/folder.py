"""The index folder: found by walking up from a path, as git finds .git, and the tool's
alone: it writes and deletes only inside a folder it made, found empty, or made in an
earlier version."""
from pathlib import Path

from .config import INDEX_DIRNAME
from .errors import UsageError

INDEX_MARKER = ".codebase-rag-index"     # in every index folder: the tool owns what is in it


def find_index(start):
    """The index folder for a path: walk up from it, as git finds .git."""
    p = Path(start).resolve()
    for d in (p, *p.parents):
        if (d / INDEX_DIRNAME / "index.sqlite").is_file():
            return d / INDEX_DIRNAME
    return None


def owned(folder):
    """Whether folder is an index folder this tool made (or an earlier version of it did)."""
    folder = Path(folder)
    if (folder / INDEX_MARKER).is_file():
        return True
    try:
        legacy = (folder / ".gitignore").read_text()[:100].startswith("# created by codebase-rag")
    except OSError:
        return False
    return legacy and (folder / "index.sqlite").is_file()


def claim_index_folder(folder):
    """Make folder the tool's index folder, or refuse with one line. The tool writes and
    deletes only inside a folder it created, found empty, or made in an earlier version."""
    folder = Path(folder)
    if owned(folder):
        for name, text in ((INDEX_MARKER, MARKER_TEXT), (".gitignore", GITIGNORE_TEXT)):
            if not (folder / name).is_file():
                (folder / name).write_text(text)
        return
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise UsageError(f"{folder} is not a codebase-rag index, and it is not an empty folder; "
                         f"the index needs a folder of its own: give --db a new or empty one")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".gitignore").write_text(GITIGNORE_TEXT)
    (folder / INDEX_MARKER).write_text(MARKER_TEXT)


MARKER_TEXT = ("This folder is a codebase-rag index. Everything in it was made by the tool, "
               "which may delete it.\n")
GITIGNORE_TEXT = "# created by codebase-rag\n*\n"
