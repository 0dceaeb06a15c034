"""Setup (codebase-rag setup): wire Claude Code into a project with this installation's
absolute commands, merged into what the project already has:

    .claude/settings.json        the PostToolUse hook (an edit reaches the index) and the
                                 SessionStart hook (builds or refreshes it in the background)
    .mcp.json                    the MCP server, with alwaysLoad (never deferred)
    .claude/settings.local.json  this user's approval of that server (Claude Code asks for
                                 it at the first start; a headless run never asks)
    CLAUDE.md                    the block that tells the model when to search (claude_block.md)

Our entries are known by their commands (index.py or codebase-rag, with --hook or
--background), the server's name and the block's markers, so a second run changes nothing, a
run from another installation updates them, --remove takes them out again, and everything
else in those files is kept as it was (a key a user added to one of our entries too).

A repository is untrusted input: setup reads and writes only inside the project (a link
inside, CLAUDE.md -> AGENTS.md, is written through), stops at a damaged block rather than
guess, changes all of its files or none, and --remove gives back byte for byte a file setup
found (docs/architecture.md#setup says how).
"""
import difflib
import hashlib
import json
import os
import re
import shlex
from pathlib import Path

from .config import INDEX_ARGV, INDEX_COMMAND, INDEX_DIRNAME, QUERY_ARGV, QUERY_COMMAND, \
    command_line
from .errors import ArgParser, UsageError, encodable, printable, report
from .folder import GITIGNORE_TEXT, INDEX_MARKER, MARKER_TEXT, owned
from .project_files import AGAIN, Change, apply, inside, read

SERVER = "codebase-rag"
SERVER_KEYS = ("type", "command", "args", "alwaysLoad")   # ours; any other key is the user's
HOOK_TIMEOUT = 10             # seconds; the hooks return at once (their work is detached)
EDIT_TOOLS = "Edit|Write"
BEGIN_MARK = "<!-- codebase-rag: begin"
BEGIN = BEGIN_MARK + " (codebase-rag setup wrote this block; setup --remove takes it out) -->"
END = "<!-- codebase-rag: end -->"
PLACEHOLDER = "QUERY_COMMAND"        # in claude_block.md
LANGUAGE_NAMES = "LANGUAGE_NAMES"    # in claude_block.md: the languages of the table
BOM = "\ufeff"
MAX_INDENT = 8                       # a longer "indent" is no look anyone chose: 2 instead
STORE = "setup.json"                 # in the index folder: the texts setup replaced


def hooks(index_argv=INDEX_ARGV):
    """The hooks, as .claude/settings.json (and hooks.json.example) hold them: in exec form,
    the program and its arguments apart, which Claude Code runs with no shell on every
    system (a path's spaces, quotes or backslashes reach the program as they are, and
    neither bash nor PowerShell is needed); it puts the project's folder in place of
    ${CLAUDE_PROJECT_DIR}."""
    program, *args = index_argv
    return {
        "PostToolUse": [{"matcher": EDIT_TOOLS, "hooks": [
            {"type": "command", "command": program, "args": [*args, "--hook"],
             "timeout": HOOK_TIMEOUT}]}],
        "SessionStart": [{"hooks": [
            {"type": "command", "command": program,
             "args": [*args, "--source", PROJECT_DIR, "--background"],
             "timeout": HOOK_TIMEOUT}]}],
    }


PROJECT_DIR = "${CLAUDE_PROJECT_DIR}"     # Claude Code's placeholder in an exec-form hook


def mcp_server(query_argv=QUERY_ARGV):
    return {"type": "stdio", "command": query_argv[0], "args": [*query_argv[1:], "--mcp"],
            "env": {}, "alwaysLoad": True}


def claude_block(query_command=QUERY_COMMAND):
    """The CLAUDE.md block, with the shell command of this installation."""
    from .languages import LANGUAGES
    text = (Path(__file__).with_name("claude_block.md")).read_text(encoding="utf-8")
    text = text.replace(LANGUAGE_NAMES, ", ".join(lang.name for lang in LANGUAGES))
    return f"{BEGIN}\n{text.replace(PLACEHOLDER, query_command).rstrip()}\n{END}\n"


def is_ours(hook, event):
    """Whether a hook (its entry) is one of ours, from any installation: in exec form (a
    command and its args) or an older one's shell form (one command line)."""
    command, args = str(hook.get("command", "")), hook.get("args")
    if isinstance(args, list):
        words = [command, *map(str, args)]
    elif "index.py" not in command and "codebase-rag" not in command:
        return False                          # most of a user's hooks: no need to split them
    else:
        try:
            words = shlex.split(command)
        except ValueError:
            return False
    program = any(re.split(r"[\\/]", w)[-1] in PROGRAMS for w in words[:3])
    return program and ("--hook" if event == "PostToolUse" else "--background") in words


PROGRAMS = ("index.py", "codebase-rag", "codebase-rag.exe")     # ours, on any system


# ----------------------------------------------------------------------------- each file
def merge_hooks(settings, remove=False):
    """settings (.claude/settings.json) with our hooks in, or out. A hook of ours (from any
    installation) is updated where it stands, keeping the keys a user added to it."""
    events = dict(member(settings, "hooks", dict))
    for event, groups in hooks().items():
        ours = groups[0]["hooks"][0]
        old = events.get(event, [])
        if not isinstance(old, list):
            raise UsageError(f'"hooks.{event}" is not a list there; make it a list of hook '
                             f'groups, {AGAIN}')
        kept, present = [], False
        for group in old:
            entries = group.get("hooks") if isinstance(group, dict) else None
            mine = [isinstance(h, dict) and is_ours(h, event)
                    for h in entries] if isinstance(entries, list) else []
            if not any(mine):
                kept.append(group)
                continue
            present = True
            if remove:
                entries = [h for h, m in zip(entries, mine) if not m]
            else:
                entries = [{**h, "type": ours["type"], "command": ours["command"],
                            "args": ours["args"], "timeout": h.get("timeout", HOOK_TIMEOUT)}
                           if m else h for h, m in zip(entries, mine)]
            if entries:                   # a group that held ours alone goes with them
                kept.append({**group, "hooks": entries})
        if not (remove or present):
            kept += groups
        put(events, event, kept)
    return put(dict(settings), "hooks", events)


def merge_mcp(config, remove=False):
    """.mcp.json with our server in, or out. A server of that name is updated: our keys are
    written into it, the user's kept (its env: a team's server and key). --remove takes it
    out only if it holds nothing of the user's."""
    servers = dict(member(config, "mcpServers", dict))
    entry, ours = servers.get(SERVER), mcp_server()
    if entry is not None and not isinstance(entry, dict):
        raise UsageError(f'"mcpServers.{SERVER}" is not a JSON object there; fix it, {AGAIN}')
    if not remove:
        servers[SERVER] = {**ours, **(entry or {}), **{k: ours[k] for k in SERVER_KEYS}}
    elif entry is not None and set(entry) <= set(ours) and not entry.get("env"):
        del servers[SERVER]
    return put(dict(config), "mcpServers", servers)


def merge_approval(local, remove=False):
    """.claude/settings.local.json with our server approved, unless the user disabled it."""
    enabled = member(local, "enabledMcpjsonServers", list)
    if remove or SERVER in member(local, "disabledMcpjsonServers", list):
        enabled = [s for s in enabled if s != SERVER]
    elif SERVER not in enabled:
        enabled = [*enabled, SERVER]
    return put(dict(local), "enabledMcpjsonServers", enabled)


def member(data, key, kind):
    """data[key], which must be of kind (dict or list) if it is there at all."""
    value = data.get(key, kind())
    if not isinstance(value, kind):
        raise UsageError(f'"{key}" is not a {KINDS[kind]} there; fix it, {AGAIN}')
    return value


KINDS = {dict: "JSON object", list: "list"}


def put(data, key, value):
    """data with key set to value; a value we emptied takes its key out (one the user left
    empty stays)."""
    if value:
        data[key] = value
    elif key in data and data[key] != value:
        del data[key]
    return data


def find_block(text):
    """(start, stop) of our block in CLAUDE.md's text (stop past its line end), or None.
    Plain search, linear in the text; markers that do not pair up are damage only the user
    can mend (the text between them may be theirs), so setup stops at them."""
    begin, end = text.find(BEGIN_MARK), text.find(END)
    if begin < 0 and end < 0:
        return None
    again, end_again = text.find(BEGIN_MARK, begin + 1), text.find(END, end + 1)
    line = lambda at: text.count("\n", 0, at) + 1    # noqa: E731
    if again >= 0:
        problem = (f"lines {line(begin)} and {line(again)} both begin a codebase-rag block; "
                   f"delete all but one block, markers included")
    elif end_again >= 0:
        problem = (f"lines {line(end)} and {line(end_again)} both end a codebase-rag block; "
                   f"delete all but one block, markers included")
    elif end < 0:
        problem = (f"the codebase-rag block of line {line(begin)} has lost its end marker; "
                   f"put {END} back where the block ends (or delete the block)")
    elif begin < 0 or end < begin:
        problem = (f"line {line(end)} ends a codebase-rag block that does not begin before "
                   f"it; delete that line")
    else:
        stop = end + len(END)
        return begin, stop + (2 if text.startswith("\r\n", stop) else text.startswith("\n", stop))
    raise UsageError(f"{problem}, {AGAIN}")


def merge_block(text, remove=False):
    """CLAUDE.md's text with our block in its place (or at the end), or out."""
    found, nl = find_block(text), newline_of(text)
    if remove:
        if not found:
            return text
        before, after = text[:found[0]], text[found[1]:]
        if not after and before.endswith(nl * 2):
            before = before[:-len(nl)]            # the blank line setup put before it
        return before + after
    block = claude_block().replace("\n", nl)
    if found:
        return text[:found[0]] + block + text[found[1]:]
    return text + (nl if text.endswith("\n") else nl * 2 if text else "") + block


def newline_of(text):
    """The line end a file uses: its first line's."""
    at = text.find("\n")
    return "\r\n" if at > 0 and text[at - 1] == "\r" else "\n"


def indent_of(text):
    """The indent a JSON file uses (its first indented line's), so a merge keeps its look."""
    for line in (text or "").splitlines()[1:]:
        body = line.lstrip(" \t")
        if body and body != line:
            indent = line[:len(line) - len(body)]
            return indent if len(indent) <= MAX_INDENT else 2
    return 2


def parse(path, text):
    body = text.removeprefix(BOM)
    try:
        data = json.loads(body) if body.strip() else {}
    except ValueError as e:
        raise UsageError(f"{printable(str(path))} is not valid JSON ({e}); fix it, {AGAIN}") \
            from None
    if not isinstance(data, dict):
        raise UsageError(f"{printable(str(path))} holds no JSON object; fix it, {AGAIN}")
    return data


def dump(path, data, old):
    """data as the text of a JSON file that held old: its indent, BOM, line ends and final
    newline (or none) kept; the user's characters as they wrote them, not escaped."""
    old = old or ""
    try:
        text = json.dumps(data, indent=indent_of(old), ensure_ascii=False, allow_nan=False)
        if not encodable(text):                   # a lone surrogate ("\ud800") stays escaped
            text = json.dumps(data, indent=indent_of(old), allow_nan=False)
    except ValueError:
        raise UsageError(f"{printable(str(path))} holds a number JSON cannot hold (NaN, "
                         f"Infinity or too large); fix it, {AGAIN}") from None
    text += "" if old and not old.endswith("\n") else "\n"
    return ("" if not old.startswith(BOM) else BOM) + text.replace("\n", newline_of(old))


def edit(path, name, old, remove):
    """(new text, whether nothing is left in it, whether old holds entries of ours) for one
    of our files; new is old itself when the merge changes nothing (not even reformatted)."""
    if name == "CLAUDE.md":
        text = old or ""
        new = merge_block(text, remove)
        return (old if new == text else new), not new.strip(), find_block(text) is not None
    merge = MERGES[name]
    data = {} if old is None else parse(path, old)
    new = merge(data, remove)
    held_ours = new != data if remove else merge(data, remove=True) != data
    return (old if new == data else dump(path, new, old)), not new, held_ours


MERGES = {".claude/settings.json": merge_hooks, ".mcp.json": merge_mcp,
          ".claude/settings.local.json": merge_approval}
NAMES = (*MERGES, "CLAUDE.md")


# ----------------------------------------------------------------------------- the files
def project_root(start):
    """The folder Claude Code runs in: the repository around start, else start."""
    start = Path(start).resolve()
    return next((d for d in (start, *start.parents) if (d / ".git").exists()), start)


def digest(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def record_path(root):
    """Where setup keeps the texts it replaced (the index folder), or None where it cannot:
    that folder is not the tool's, or leads out of the project."""
    try:
        path = inside(root, f"{INDEX_DIRNAME}/{STORE}")
    except UsageError:
        return None
    return path if not path.parent.exists() or (path.parent.is_dir() and owned(path.parent)) \
        else None


def load_record(path):
    """{name: {"was": text, "wrote": digest}}; a record that cannot be read holds nothing."""
    try:
        files = json.loads(read(path) or "{}").get("files", {})
        return {name: {"was": e["was"], "wrote": e["wrote"]} for name, e in files.items()
                if name in NAMES and isinstance(e.get("was"), str) and encodable(e["was"])
                and isinstance(e.get("wrote"), str)}
    except (UsageError, ValueError, RecursionError, AttributeError, TypeError):
        return {}


def planned(root, remove):
    """[Change] for every file setup would touch, and the lines to say about them."""
    where = record_path(root)
    record = load_record(where) if where else {}
    kept, changes, seen = {}, [], {}
    for name in NAMES:
        path = inside(root, name)
        if path in seen:
            raise UsageError(f"{name} and {seen[path]} are the same file ({printable(str(path))});"
                             f" setup needs them apart: replace the link, {AGAIN}")
        seen[path] = name
        old = read(path)
        try:
            new, empty, held_ours = edit(path, name, old, remove)
        except RecursionError:
            raise UsageError(f"{printable(str(path))} is nested too deeply to read; fix it, "
                             f"{AGAIN}") from None
        except UsageError as e:
            raise e if str(e).startswith(printable(str(path))) else \
                UsageError(f"{printable(str(path))}: {e}") from None
        entry = record.get(name)
        unedited = entry is not None and old is not None and digest(old) == entry["wrote"]
        if remove and unedited:
            new = entry["was"]                  # as it was before setup, to the byte
        elif remove and empty and held_ours and entry is None:
            new = None                          # setup made it, and only ours was in it
        elif not remove and new != old and (unedited or old is not None and not held_ours):
            kept[name] = {"was": entry["was"] if unedited else old, "wrote": digest(new)}
        elif not remove and new == old and entry is not None:
            kept[name] = entry
        changes.append(Change(name, path, old, new))
    if where and kept != record:
        changes += record_changes(where, kept)
    notes = [f"kept your own {SERVER} server in .mcp.json (it was there before setup, or holds "
             f"settings of yours); delete it by hand if you want it gone"
             for c in changes if remove and c.name == ".mcp.json" and c.new and
             SERVER in parse(c.path, c.new).get("mcpServers", {})]
    return [c for c in changes if c.new != c.old], notes


def record_changes(path, kept):
    """Writing (or deleting) setup's record in the index folder; a folder setup makes for it
    is made as the index makes it, and taken away again when nothing else is in it."""
    folder, own = path.parent, {INDEX_MARKER: MARKER_TEXT, ".gitignore": GITIGNORE_TEXT}
    text = json.dumps({"about": "codebase-rag setup: the texts it replaced, given back by "
                       "setup --remove while each file still holds what setup wrote (wrote: "
                       "its sha256)", "files": kept}, indent=1) + "\n"
    if kept:                  # (old "": not shown, and never read: it may be a link out)
        return [Change(STORE, path, "", text, False),
                *(Change(n, folder / n, None, t, False) for n, t in own.items()
                  if not os.path.lexists(folder / n))]
    changes = [Change(STORE, path, "", None, False)]
    if folder.is_dir() and {p.name for p in folder.iterdir()} <= {*own, STORE}:
        changes += [Change(n, folder / n, "", None, False) for n in own
                    if os.path.lexists(folder / n)]
    return changes


def label(change, root):
    rel = change.path.relative_to(root).as_posix()
    return rel if rel == change.name else f"{rel} (through {change.name})"


def show(changes, root):
    """A unified diff of each file that would change."""
    for c in changes:
        if c.shown:
            rel = c.path.relative_to(root).as_posix()
            yield from difflib.unified_diff((c.old or "").splitlines(keepends=True),
                                            (c.new or "").splitlines(keepends=True),
                                            f"a/{rel}" if c.old is not None else "/dev/null",
                                            f"b/{rel}" if c.new is not None else "/dev/null")


def run(args):
    root = project_root(args.project or os.getcwd())
    changes, notes = planned(root, args.remove)
    changed = [label(c, root) for c in changes if c.shown]
    if args.dry_run:
        print("".join(show(changes, root)), end="")
        print(f"setup --dry-run: {len(changed)} file(s) would change in {root}"
              + (f": {', '.join(changed)}" if changed else ""))
        return 0
    apply(changes, root, prune=(root / ".claude", root / INDEX_DIRNAME))
    done = "took codebase-rag out of" if args.remove else "wired Claude Code to codebase-rag in"
    print(f"{done} {root}: " + (f"changed {', '.join(changed)}" if changed
                                else "nothing to change"))
    for note in notes:
        print(note)
    if not args.remove:
        print(f"the SessionStart hook builds the index when a session starts; to build it "
              f"now: {INDEX_COMMAND} --source {command_line([str(root)])}")
    return 0


def main(argv=None, prog="codebase-rag setup"):
    p = ArgParser(prog=prog, description="Wire Claude Code into a project: the hooks into "
                  ".claude/settings.json, the MCP server into .mcp.json (approved in "
                  ".claude/settings.local.json), the search guide into CLAUDE.md, each "
                  "with this installation's absolute commands. Run it again to check; "
                  "nothing changes.")
    p.add_argument("--project", metavar="DIR", help="the project (default: the git "
                   "repository around the current directory, else the current directory)")
    p.add_argument("--dry-run", action="store_true", help="show the changes, write nothing")
    p.add_argument("--remove", action="store_true", help="take codebase-rag's entries out")
    args = p.parse_args(argv)
    try:
        return run(args)
    except Exception as e:               # one line each (CODEBASE_RAG_DEBUG=1: a traceback)
        return report(e)
