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
run from another installation replaces them, --remove takes them out again, and everything
else in those files is kept as it was.
"""
import copy
import difflib
import json
import os
import re
import shlex
from pathlib import Path

from .config import INDEX_ARGV, QUERY_ARGV
from .errors import ArgParser, UsageError, printable, report

SERVER = "codebase-rag"
HOOK_TIMEOUT = 10             # seconds; the hooks return at once (their work is detached)
EDIT_TOOLS = "Edit|Write"
BEGIN = "<!-- codebase-rag: begin (codebase-rag setup wrote this block; setup --remove " \
        "takes it out) -->"
END = "<!-- codebase-rag: end -->"
BLOCK = re.compile(r"<!-- codebase-rag: begin.*?<!-- codebase-rag: end -->\n?", re.S)
PLACEHOLDER = "QUERY_COMMAND"        # in claude_block.md


def hooks(index_argv=INDEX_ARGV):
    """The hooks, as .claude/settings.json (and hooks.json.example) hold them."""
    command = shlex.join(index_argv)
    return {
        "PostToolUse": [{"matcher": EDIT_TOOLS, "hooks": [
            {"type": "command", "command": f"{command} --hook", "timeout": HOOK_TIMEOUT}]}],
        "SessionStart": [{"hooks": [
            {"type": "command", "command": f'{command} --source "$CLAUDE_PROJECT_DIR" --background',
             "timeout": HOOK_TIMEOUT}]}],
    }


def mcp_server(query_argv=QUERY_ARGV):
    return {"type": "stdio", "command": query_argv[0], "args": [*query_argv[1:], "--mcp"],
            "env": {}, "alwaysLoad": True}


def claude_block(query_command=shlex.join(QUERY_ARGV)):
    """The CLAUDE.md block, with the shell command of this installation."""
    text = (Path(__file__).with_name("claude_block.md")).read_text(encoding="utf-8")
    return f"{BEGIN}\n{text.replace(PLACEHOLDER, query_command).rstrip()}\n{END}\n"


def is_ours(command, event):
    """Whether a hook's command is one of ours, from any installation."""
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    program = any(Path(w).name in ("index.py", "codebase-rag") for w in words[:3])
    return program and ("--hook" if event == "PostToolUse" else "--background") in words


# ----------------------------------------------------------------------------- each file
def merge_hooks(settings, remove=False):
    """settings (.claude/settings.json) with our hooks in, or out; the user's kept."""
    settings = copy.deepcopy(settings)
    events = a_dict(settings, "hooks")
    for event, groups in hooks().items():
        ours = groups[0]["hooks"][0]["command"]
        kept, present = [], False
        for group in events.get(event) or []:
            entries = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(entries, list):
                kept.append(group)
                continue
            mine = [h for h in entries if isinstance(h, dict) and
                    is_ours(str(h.get("command", "")), event)]
            if remove or any(h.get("command") != ours for h in mine):
                group = {**group, "hooks": [h for h in entries if h not in mine]}
                if not group["hooks"]:
                    continue              # a group that held ours alone goes with them
            else:
                present = present or bool(mine)
            kept.append(group)
        if not remove and not present:
            kept += groups
        if kept:
            events[event] = kept
        else:
            events.pop(event, None)
    return put(settings, "hooks", events)


def merge_mcp(config, remove=False):
    """.mcp.json with our server in (replacing any of that name), or out."""
    config = copy.deepcopy(config)
    servers = a_dict(config, "mcpServers")
    servers.pop(SERVER, None)
    if not remove:
        servers[SERVER] = mcp_server()
    return put(config, "mcpServers", servers)


def merge_approval(local, remove=False):
    """.claude/settings.local.json with our server approved, unless the user disabled it."""
    local = copy.deepcopy(local)
    enabled = local.get("enabledMcpjsonServers")
    enabled = [s for s in enabled if s != SERVER] if isinstance(enabled, list) else []
    if not remove and SERVER not in (local.get("disabledMcpjsonServers") or []):
        enabled.append(SERVER)
    return put(local, "enabledMcpjsonServers", enabled)


def a_dict(data, key):
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise UsageError(f'"{key}" is not a JSON object there; fix it, then run setup again '
                         f"(nothing was changed)")
    return value


def put(data, key, value):
    """data with key set to value, or without it if value is empty."""
    if value:
        data[key] = value
    else:
        data.pop(key, None)
    return data


def merge_block(text, remove=False):
    """CLAUDE.md's text with our block in its place (or at the end), or out."""
    found = BLOCK.search(text)
    if remove:
        if not found:
            return text
        before, after = text[:found.start()].rstrip("\n"), text[found.end():].lstrip("\n")
        rest = before + ("\n\n" if before and after else "") + after
        return rest.rstrip("\n") + "\n" if rest.strip() else ""
    if found:
        return text[:found.start()] + claude_block() + text[found.end():]
    return (text.rstrip("\n") + "\n\n" if text.strip() else "") + claude_block()


# ----------------------------------------------------------------------------- the command
def project_root(start):
    """The folder Claude Code runs in: the repository around start, else start."""
    start = Path(start).resolve()
    return next((d for d in (start, *start.parents) if (d / ".git").exists()), start)


def planned(project, remove):
    """[(path, old text or None, new text or None: delete)] for every file setup touches."""
    plans = []
    for rel, merge in ((".claude/settings.json", merge_hooks), (".mcp.json", merge_mcp),
                       (".claude/settings.local.json", merge_approval)):
        path = project / rel
        old = read(path)
        data = {} if old is None else parse(path, old)
        try:
            new = merge(data, remove)
        except UsageError as e:
            raise UsageError(f"{printable(str(path))}: {e}") from None
        if new == data:
            plans.append((path, old, old))     # the same: not even reformatted
        else:
            text = json.dumps(new, indent=indent_of(old)) + "\n" if new else None
            plans.append((path, old, text))
    path = project / "CLAUDE.md"
    old = read(path)
    new = merge_block(old or "", remove)
    plans.append((path, old, old if new == (old or "") else new or None))
    return plans


def read(path):
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read {printable(str(path))}: {e}") from None


def parse(path, text):
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError as e:
        raise UsageError(f"{printable(str(path))} is not valid JSON ({e}); fix it, then run "
                         f"setup again (nothing was changed)") from None
    if not isinstance(data, dict):
        raise UsageError(f"{printable(str(path))} holds no JSON object; fix it, then run "
                         f"setup again (nothing was changed)")
    return data


def indent_of(text):
    """The indent a JSON file uses (its first indented line's), so a merge keeps its look."""
    found = re.search(r"\n([ \t]+)\S", text or "")
    return found[1] if found else 2


def apply(plans):
    for path, old, new in plans:
        if new == old:
            continue
        if new is None:
            path.unlink()
            if path.parent.name == ".claude" and not any(path.parent.iterdir()):
                path.parent.rmdir()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(new, encoding="utf-8")
        os.replace(tmp, path)


def show(plans, project):
    """A unified diff of each file that would change."""
    for path, old, new in plans:
        if new != old:
            rel = path.relative_to(project).as_posix()
            yield from difflib.unified_diff((old or "").splitlines(keepends=True),
                                            (new or "").splitlines(keepends=True),
                                            f"a/{rel}" if old is not None else "/dev/null",
                                            f"b/{rel}" if new is not None else "/dev/null")


def run(args):
    project = project_root(args.project or os.getcwd())
    plans = planned(project, args.remove)
    changed = [path.relative_to(project).as_posix() for path, old, new in plans if new != old]
    if args.dry_run:
        print("".join(show(plans, project)), end="")
        print(f"setup --dry-run: {len(changed)} file(s) would change in {project}"
              + (f": {', '.join(changed)}" if changed else ""))
        return 0
    apply(plans)
    done = "took codebase-rag out of" if args.remove else "wired Claude Code to codebase-rag in"
    print(f"{done} {project}: " + (f"changed {', '.join(changed)}" if changed
                                   else "nothing to change"))
    if not args.remove:
        print(f"the SessionStart hook builds the index when a session starts; to build it "
              f"now: {shlex.join(INDEX_ARGV)} --source {shlex.quote(str(project))}")
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
