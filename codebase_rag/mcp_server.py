"""MCP: `query.py --mcp`, a stdio server for Claude Code and any agent, on the mcp SDK's
low-level Server (1.x). It declares tools and nothing else; each tool's schema is data
here, and so are the instructions, built from the settings and the language table, so the
handshake (mcp_handshake.py) can answer from them before the SDK has loaded.

The index lives in the Server's lifespan context: Workers, whose thread keeps one Reader
with every vector in memory (a warm search is a few milliseconds; each question still finds
what changed on disk first). A Reader is used by the thread that made it alone (SQLite
connections stay in the thread that opened them), so tool calls queue for that thread;
a call that waits too long behind another gets a new thread with a new Reader, and no
call outlasts DEADLINE: it says why it stopped instead.
"""
import collections
import io
import os
import threading
import time
from contextlib import asynccontextmanager

from . import __version__ as VERSION
from .config import CONFIDENT, INDEX_COMMAND, K, LINES, MAX_FILE_BYTES, MODE, SETTINGS
from .errors import UsageError, encodable, not_text, one_line, printable
from .languages import LANGUAGES, language_for
from .text import SHAPES

NAME = "codebase-rag"


MAX_CHARS = 90_000            # an answer stays under 25,000 tokens, whatever k and lines say
MAX_K, MAX_LINES, MAX_LINE = 50, 500, 2**31 - 1
MAX_IMPACT_DEPTH = 10
WAIT = 5.0                    # the longest a call waits behind another call's work
DEADLINE = 60.0               # the longest a call takes before it says it gave up
INSTRUCTIONS = (
    f"Semantic code search over this repository's index of its "
    f"{', '.join(lang.name for lang in LANGUAGES)} code. Ask search_code in plain words "
    f"before grepping or reading whole files: it returns the few members that answer, with "
    f"file:start-end and Class.Member. Distances below 0.45 are usually the thing asked "
    f"about; above {CONFIDENT} nothing in the index is about it. For structure, exact and "
    f"never stale: definition (does X exist, its signature), callers, callees, references, "
    f"impact (what breaks if X changes) and outline (a file's members). Grep for exact "
    f"strings.")
NAME_DOC = ("a member or type: Member, Class.Member (any tail of its namespace and classes) "
            "or file:line")


def argument(kind, doc, default=None, **schema):
    return {"type": kind, "description": doc, **({} if default is None else
                                                 {"default": default}), **schema}


# name: (description, {argument: JSON schema}, the required ones)
TOOL_SPECS = {
    "search_code": (
        "Find the members (methods, functions, classes, ...) that answer a question about "
        "this codebase: file:start-end, Class.Member, cosine distance, and their first lines.",
        {"question": argument("string", "what you are looking for, in plain words",
                              minLength=1),
         "k": argument("integer", "number of results", min(K, MAX_K), minimum=1,
                       maximum=MAX_K),
         "path": argument("string", "only these files: a folder or file name anywhere "
                                    "('middleware', 'Relay.*') or a glob ('src/*')"),
         "mode": argument("string", SETTINGS["MODE"].doc, MODE,
                          enum=list(SETTINGS["MODE"].choices)),
         "lang": argument("string", "only results in this language",
                          enum=[lang.name for lang in LANGUAGES]),
         "lines": argument("integer", "lines of each result to show (-1: all)",
                           min(LINES, MAX_LINES), minimum=-1, maximum=MAX_LINES),
         "read_as": argument("string", "how to read the question: " + "; ".join(
             f"{name}: {what}" for name, what in SHAPES.items()) + " (default: a question "
             "if it reads as one, else keywords; the answer says how it was read)",
             enum=list(SHAPES))},
        ["question"]),
    "find_related": (
        "The members nearest in meaning to the one at file:line: its callers' kin, its "
        "siblings in other files, the code that does the same thing elsewhere.",
        {"file": argument("string", "a file of the index, relative to the repository root",
                          minLength=1),
         "line": argument("integer", "a line inside the member", minimum=1, maximum=MAX_LINE),
         "k": argument("integer", "number of results", min(K, MAX_K), minimum=1,
                       maximum=MAX_K)},
        ["file", "line"]),
    "definition": (
        "What a name denotes: each member or type of that name, with file:start-end and its "
        "signature. Answers 'does X exist, and how is it called' exactly.",
        {"name": argument("string", NAME_DOC, minLength=1)}, ["name"]),
    "callers": (
        "The members that call a method, function or constructor, with the line of each "
        "call (resolved by the language's scoping; ambiguous calls are marked).",
        {"name": argument("string", NAME_DOC, minLength=1)}, ["name"]),
    "callees": (
        "The members a method or function calls, in the order it calls them, and the calls "
        "that leave the index.",
        {"name": argument("string", NAME_DOC, minLength=1)}, ["name"]),
    "references": (
        "Every member that uses a name: calls, constructions, type and member references, "
        "with the line of each use.",
        {"name": argument("string", NAME_DOC, minLength=1)}, ["name"]),
    "impact": (
        "What a change to a member may break: its callers, their callers, ... up to depth "
        "levels.",
        {"name": argument("string", NAME_DOC, minLength=1),
         "depth": argument("integer", "levels of callers to follow", 2, minimum=1,
                           maximum=MAX_IMPACT_DEPTH)}, ["name"]),
    "outline": (
        "A file's types and members with their lines and signatures, without its code.",
        {"file": argument("string", "a file of the index, relative to the repository root",
                          minLength=1)}, ["file"]),
    "index_status": (
        "Whether the index is built or building, how far, and when it last changed.", {}, []),
    "reindex": (
        "Bring the index up to date: these files now, or the whole tree in the background. "
        "Searches already find changed files by themselves; this is for after a big change.",
        {"paths": argument("array", "files to index again now, relative to the repository "
                           "root; none: the whole tree, in the background",
                           items={"type": "string"})},
        []),
}
TOOLS = [{"name": name, "description": doc,
          "inputSchema": {"type": "object", "properties": props, "required": required,
                          "additionalProperties": False},
          "_meta": {"anthropic/alwaysLoad": True}}  # never deferred behind Claude Code's search
         for name, (doc, props, required) in TOOL_SPECS.items()]


def checked(tool, given):
    """A tool's arguments, checked against its schema and completed with the defaults; a
    wrong one is a UsageError of one line."""
    _, props, required = TOOL_SPECS[tool]
    given = {k: v for k, v in (given or {}).items() if v is not None}
    for name in given.keys() - props.keys():
        raise UsageError(f"{tool} has no argument {name!r} (it takes "
                         f"{', '.join(props) or 'none'})")
    for name in required:
        if name not in given:
            raise UsageError(f"{tool} needs {name}")
    values = {name: schema.get("default") for name, schema in props.items()}
    for name, value in given.items():
        schema = props[name]
        if schema["type"] == "integer":
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if not isinstance(value, int) or isinstance(value, bool):
                raise UsageError(f"{name} must be a whole number")
            low, high = schema["minimum"], schema["maximum"]
            if not low <= value <= high:
                raise UsageError(f"{name} must be between {low} and {high}")
        elif schema["type"] == "string":
            if not isinstance(value, str):
                raise UsageError(f"{name} must be a string")
            if not encodable(value):      # JSON's "\ud800" alone: no file or model reads it
                raise UsageError(not_text(name, value, bytes_read=False))
            if "enum" in schema and value not in schema["enum"]:
                raise UsageError(f"{name} must be one of {', '.join(schema['enum'])}")
            if schema.get("minLength") and not value.strip():
                raise UsageError(f"{name} is empty" + (": say in plain words what you are "
                                 "looking for" if name == "question" else ""))
        elif not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise UsageError(f"{name} must be a list of strings")
        values[name] = value
    return values


# ----------------------------------------------------------------------------- the tools
def search_code(reader, question, k, path, mode, lang, lines, read_as):
    [answer] = reader.ask([question.strip()], k, mode, path, None, lang, read_as)
    answer.notes.append(f"read as {SHAPES[answer.read_as]} (read_as: {answer.read_as})")
    return render(answer, lines)


def find_related(reader, file, line, k):
    return render(reader.related(file.replace("\\", "/").removeprefix("./"), line, k), LINES)


def structure(mode):
    """The tool that answers one of references.py's questions, as query.py prints it."""
    def tool(reader, name, depth=2):
        from .references import ask, render_text
        answer = reader.structure(lambda store: ask(store, mode, name, depth))
        out = io.StringIO()
        render_text(reader.store, mode, answer, out)
        text = out.getvalue()
        if len(text) > MAX_CHARS:
            cut = text.rfind("\n#", 0, MAX_CHARS)
            text = text[:cut if cut > 0 else MAX_CHARS] + \
                f"\n... (cut at {MAX_CHARS:,} characters: ask about a narrower name)\n"
        return text
    tool.__name__ = mode
    return tool


def reindex(reader, paths):
    """Queue the files that can be indexed and take them in now; say which were not read,
    and why, each (one bad path never stops the others)."""
    from .lock import apply_soon, queue_pending, start_refresh
    from .walk import Ignore
    folder = reader.folder()
    root = reader.open().root
    if not paths:
        start_refresh(folder, "refresh asked by the MCP tool reindex", root)
        return f"refreshing {printable(str(root))} in the background; see index_status"
    ignore = Ignore(root, reader.store.identity.excludes)
    read, unread = [], []
    for path in paths:
        try:
            why, rel = unreadable(root, ignore, path)
        except (OSError, ValueError) as e:    # gone meanwhile, a name the system refuses
            why, rel = one_line(e), None
        if why:
            unread.append(f"{printable(path)} ({why})")
        elif rel not in read:
            read.append(rel)
    said = []
    if read:
        queue_pending(folder, read)   # first: a search takes in the queued files too
        reader.prepare()              # takes in what changed on disk now, as a search would
        apply_soon(folder)
        said.append(f"indexed again: {', '.join(map(printable, read))}; their vectors follow "
                    f"in the background (run {INDEX_COMMAND} for a whole refresh)")
    if unread:
        said.append(f"not read: {'; '.join(unread)}")
    return "\n".join(said)


def unreadable(root, ignore, path):
    """(why a path given to reindex cannot be indexed, or None; its path in the index)."""
    from .walk import in_tree
    if not encodable(path):
        return not_text("the name", path, bytes_read=False).removeprefix("the name is "), None
    if "\0" in path or not path.strip():
        return "not a file name", None
    full = os.path.normpath(os.path.join(root, path))
    rel = in_tree(full, root)
    if rel is None:
        return f"outside the indexed tree {printable(str(root))}", None
    full = os.path.join(root, rel)
    if not os.path.lexists(full):
        return "not there", None
    if not os.path.isfile(full):
        return "not a file", None
    if language_for(rel) is None:
        return "not in a language the index reads", None
    if not ignore.included(rel):
        return "excluded (.gitignore or the index's excludes)", None
    if os.path.getsize(full) > MAX_FILE_BYTES:
        return f"over the {MAX_FILE_BYTES:,}-byte cap", None
    return None, rel


def index_status(db, cwd):
    """Outside the workers: it opens the index afresh, and answers while a search is slow."""
    from .reader import Reader
    try:
        return Reader(db, cwd=cwd).status()
    except UsageError as e:
        return str(e)                 # no index yet: the line that says what to run


def render(answer, lines):
    """An Answer as the text a model reads: its notes, then the hits as query.py prints them,
    shortened until it fits MAX_CHARS."""
    from .render import print_results
    while True:
        out = io.StringIO()
        for note in answer.notes:
            print(note, file=out)
        print_results(answer.hits, lines, out)
        text = out.getvalue()
        if len(text) <= MAX_CHARS or lines == 0:
            return text
        lines = max(0, (lines if lines > 0 else 200) // 2)


# ----------------------------------------------------------------------------- the workers
class Worker:
    """A thread and the Reader that only it uses. The first one warms the Reader up (the
    model, every vector, the keyword postings) before the first call needs them."""

    def __init__(self, workers, warm):
        self.workers, self.job, self.since = workers, None, time.monotonic()
        self.thread = threading.Thread(target=self.run, args=(warm,), name=NAME, daemon=True)
        self.thread.start()

    def run(self, warm):
        from .reader import Reader
        reader = Reader(self.workers.db, cwd=self.workers.cwd, memory=True)
        if warm:
            try:
                _, model, _, nearest = reader.prepare()
                nearest.sync()
                reader.keywords.sync()
                if model:
                    model.embedder()
            except Exception:
                pass                  # the first call says what is wrong
        while (job := self.workers.next_job(self)) is not None:
            fn, args, future = job
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn(reader, *args))
                except BaseException as e:
                    future.set_exception(e)
        reader.forget_watcher()


class Workers:
    """The calls that need the index, run in turn by the current Worker. A call that has
    waited WAIT behind another call's work sets that Worker aside (it finishes that work
    and ends) and a new one takes the queue; two at most, so a second slow call waits."""

    def __init__(self, db, cwd):
        self.db, self.cwd = db, cwd
        self.jobs = collections.deque()
        self.turn = threading.Condition()
        self.aside = None
        self.current = Worker(self, warm=True)

    def next_job(self, worker):
        """The next job for a worker; None once it is set aside."""
        with self.turn:
            worker.job = None
            while worker is self.current and not self.jobs:
                self.turn.wait()
            if worker is not self.current:
                return None
            worker.job, worker.since = self.jobs.popleft(), time.monotonic()
            return worker.job

    def unblock(self):
        """Set the current worker aside if it has been busy with one call for WAIT."""
        with self.turn:
            busy = self.current
            if busy is None or busy.job is None or time.monotonic() - busy.since < WAIT or \
                    self.aside is not None and self.aside.thread.is_alive():
                return
            self.aside, self.current = busy, Worker(self, warm=False)
            self.turn.notify_all()

    async def call(self, tool, *args):
        """tool(reader, *args) in a worker; its result, or a UsageError by DEADLINE."""
        import asyncio
        from concurrent.futures import Future
        future = Future()
        job = (tool, args, future)
        with self.turn:
            self.jobs.append(job)
            self.turn.notify_all()
        answer = asyncio.wrap_future(future)
        give_up = time.monotonic() + DEADLINE
        try:
            while (left := give_up - time.monotonic()) > 0 and not future.done():
                try:
                    return await asyncio.wait_for(asyncio.shield(answer), min(left, WAIT))
                except asyncio.TimeoutError:
                    if not future.running():
                        self.unblock()
            if future.done():
                return future.result()
        finally:
            future.cancel()           # not started yet: it never will be
        if future.running():
            raise UsageError(f"{tool.__name__} gave up after {DEADLINE:g} s; ask something "
                             f"narrower, or see index_status")
        raise UsageError(f"{tool.__name__} waited {DEADLINE:g} s for the index, busy with "
                         f"earlier calls or still loading; ask again in a moment")

    def close(self):
        with self.turn:
            self.current = None
            self.turn.notify_all()


# ----------------------------------------------------------------------------- the server
def serve(db=None):
    """The stdio server (query.py --mcp)."""
    from . import mcp_handshake
    mcp_handshake.serve(mcp_handshake.early_answers(NAME, VERSION, INSTRUCTIONS, TOOLS),
                        lambda: build_server(db))


def build_server(db):
    """The SDK's low-level Server: the tools, over the Workers of its lifespan."""
    import asyncio

    from mcp import types
    from mcp.server.lowlevel import Server

    @asynccontextmanager
    async def lifespan(_):
        workers = Workers(db, os.getcwd())
        try:
            yield workers
        finally:
            workers.close()
    server = Server(NAME, version=VERSION, instructions=INSTRUCTIONS, lifespan=lifespan)
    tools = [types.Tool.model_validate(tool) for tool in TOOLS]

    @server.list_tools()
    async def list_tools():
        return tools

    @server.call_tool(validate_input=False)       # checked() says what is wrong in a line
    async def call_tool(name, arguments):
        workers = server.request_context.lifespan_context
        try:
            if name not in TOOL_SPECS:
                raise UsageError(f"no tool {name!r}; the tools: {', '.join(TOOL_SPECS)}")
            args = checked(name, arguments)
            if name == "index_status":
                text = await asyncio.to_thread(index_status, db, workers.cwd)
            else:
                text = await workers.call(TOOL_CALLS[name], *args.values())
            failed = False
        except UsageError as e:
            text, failed = str(e), True
        except Exception as e:
            text, failed = f"failed: {one_line(e)}", True
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    isError=failed)
    return server


TOOL_CALLS = {"search_code": search_code, "find_related": find_related, "reindex": reindex,
              **{mode: structure(mode) for mode in ("definition", "callers", "callees",
                                                     "references", "impact", "outline")}}
