"""Hook: what Claude Code's PostToolUse hook runs after an Edit or a Write. It records the
edit durably and returns at once (Claude Code waits for it), importing only what that takes;
a detached writer applies it, and whatever happens to that one, the next query finds the
edit anyway (fresh.py)."""
import os
from pathlib import Path

from .errors import OldFormat, encodable
from .folder import find_index
from .languages import EXTENSIONS
from .lock import apply_soon, is_locked, start_refresh
from .oslayer import case_insensitive, spelled_on_disk
from .store import Store
from .walk import in_tree


def store_for_file(path, db=None, cwd=None, writer=False):
    """(store, source root, relative path) for a file, or None if no index covers it, or
    if it lies outside the indexed tree (after resolving '..' and symlinks: a path through
    a link the walk does not follow names the file it reaches). writer: the store is for a
    run that writes it."""
    path = os.path.normpath(os.path.join(cwd or os.getcwd(), os.path.expanduser(path)))
    folder = Path(db) if db else find_index(Path(path).parent)
    if folder is None or not (Path(folder) / "index.sqlite").is_file():
        return None
    store = Store(folder, writer=writer)
    root = store.root                     # wherever the tree has moved since
    if case_insensitive(root):            # C:\Users is c:\users: the root as the index has it
        for base in dict.fromkeys((str(root), os.path.realpath(root))):
            prefix = base.rstrip(os.sep) + os.sep
            if path[:len(prefix)].casefold() == prefix.casefold():
                path = prefix + path[len(prefix):]
                break
    rel = in_tree(path, root)             # the walk's rule for symlinks, '..' resolved
    return (store, root, spelled_on_disk(root, rel)) if rel is not None else None  # one key


HOOK_TOOLS = ("Edit", "Write", "MultiEdit")     # MultiEdit: older Claude Code releases


def handle_hook(event, db=None):
    """A Claude Code PostToolUse event (parsed JSON): queue the file it edited and return.
    A detached process applies the queue (Claude Code cancels what a hook leaves running
    when it exits; a process of a session of its own it does not); a writer that already
    holds the lock applies it before it lets go."""
    if not isinstance(event, dict) or event.get("tool_name", "Edit") not in HOOK_TOOLS:
        return
    tool_input = event.get("tool_input")
    path = tool_input.get("file_path") if isinstance(tool_input, dict) else None
    if not isinstance(path, str) or not path.endswith(EXTENSIONS) or not encodable(path):
        return
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
    try:
        found = store_for_file(path.replace("\\", "/"), db, cwd)
    except OldFormat as e:            # a plain run upgrades it, and takes in this edit too
        if os.access(e.folder, os.W_OK) and not is_locked(e.folder):
            start_refresh(e.folder, "upgrading")
        return
    if found is None or not os.access(found[0].folder, os.W_OK):
        return
    store, _, rel = found
    apply_soon(store.folder, [rel])


