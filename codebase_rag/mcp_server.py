"""MCP: `query.py --mcp`, a stdio server for Claude Code and any agent, on the official mcp
SDK (1.x). One Reader lives as long as the server, with every vector in memory, so a warm
search is a few milliseconds; each question still finds what changed on disk first.

The handshake waits for nothing: importing the SDK alone takes 0.6 s, so `initialize` and
the tool listing are answered, until the SDK is up, with what the SDK itself answers,
shipped with the code (EarlyAnswers). The index and the model load in a worker thread after that, and every
tool runs in that one thread (SQLite connections stay in the thread that opened them) while
the event loop keeps answering.
"""
import asyncio
import io
import json
import os
import sys
import threading
from pathlib import Path

from .config import INDEX_COMMAND, K, LINES, SETTINGS
from .errors import UsageError, one_line
from .languages import LANGUAGES

LANGUAGE_NAMES = tuple(lang.name for lang in LANGUAGES)
ALWAYS_LOAD = {"anthropic/alwaysLoad": True}   # never deferred behind Claude Code's tool search
MAX_CHARS = 90_000                              # under 25,000 tokens, whatever k and lines say
INSTRUCTIONS = (
    "Semantic code search over this repository's index (C#, TypeScript/JavaScript, Python). "
    "Ask search_code in plain words before grepping or reading whole files: it returns the "
    "few members that answer, with file:start-end and Class.Member. Distances below 0.45 "
    "are usually the thing asked about; above 0.62 nothing in the index is about it. Grep "
    "for exact strings.")
FIXED = ("initialize", "tools/list", "prompts/list", "resources/list",   # their answers
         "resources/templates/list")                                   # never change
SHIPPED_ANSWERS = Path(__file__).with_name("mcp_answers.json")


class EarlyAnswers:
    """The SDK's own answers to the requests whose answer never changes (initialize, in each
    protocol version the SDK speaks, and the listings), shipped beside this file
    (mcp_answers.json; tests/test_mcp.py holds them equal to what the installed SDK says).
    Until the SDK is imported they answer; the first request they cannot answer hands over
    to the SDK, which is first shown every message it missed, and whose second answers to
    those are dropped."""

    def __init__(self):
        try:
            self.known = json.loads(SHIPPED_ANSWERS.read_text())
        except (OSError, ValueError):
            self.known = {}
        if (K, LINES) != (SETTINGS["K"].default, SETTINGS["LINES"].default):
            self.known = {}           # the tools show other defaults: the SDK says them
        self.early = []               # the lines read before the SDK took over
        self.sent = set()             # ids answered from here: the SDK's answers are dropped

    @staticmethod
    def what(message):
        """What a request asks, without its id; None if its answer may change."""
        method, params = message.get("method"), message.get("params") or {}
        if method not in FIXED or "id" not in message:
            return None
        if method == "initialize":
            return f"initialize {params.get('protocolVersion')}"
        return f"{method} {json.dumps(params, sort_keys=True)}"

    def answer_early(self, stdin, stdout):
        """Answer from what was shipped until a request needs the SDK; False at the end of
        input."""
        while line := stdin.readline():
            self.early.append(line.decode("utf-8", "replace"))
            try:
                message = json.loads(line)
                what = self.what(message)
            except (ValueError, AttributeError):
                return True
            if "id" not in message:
                continue                  # a notification: the SDK sees it later
            if what not in self.known:
                return True
            stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result":
                                     self.known[what]}, separators=(",", ":")).encode() + b"\n")
            stdout.flush()
            self.sent.add(json.dumps(message["id"]))
        return False

    def said(self, line):
        """Whether the SDK's line goes out (not if it answers what was answered early)."""
        if not self.sent:
            return True
        try:
            ident = json.dumps(json.loads(line).get("id"))
        except (ValueError, AttributeError):
            return True
        if ident in self.sent:
            self.sent.discard(ident)
            return False
        return True


class SdkStdin:
    """stdin as the SDK reads it: the lines read before it took over, then the rest."""

    def __init__(self, answers):
        import anyio
        self.answers = answers
        self.rest = anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8",
                                                     errors="replace"))

    async def __aiter__(self):
        for line in self.answers.early:
            yield line
        async for line in self.rest:
            yield line


class SdkStdout:
    """stdout as the SDK writes it, without the answers already sent."""

    def __init__(self, answers):
        import anyio
        self.answers = answers
        self.out = anyio.wrap_file(io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8"))

    async def write(self, text):
        if self.answers.said(text):
            await self.out.write(text)

    async def flush(self):
        await self.out.flush()


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


def serve(db=None):
    """The stdio server: the handshake from what was shipped while the SDK imports in a thread,
    then the SDK, shown what it missed."""
    answers = EarlyAnswers()
    built = {}

    def build():
        try:
            built["server"] = build_server(db)
        except Exception as e:        # said once the handshake needs the SDK
            built["error"] = e
    sdk = threading.Thread(target=build, daemon=True)
    sdk.start()
    if not answers.answer_early(sys.stdin.buffer, sys.stdout.buffer):
        return                        # the client left before it asked for more
    sdk.join()
    if "error" in built:
        raise UsageError(f"the MCP server does not start ({one_line(built['error'])}); "
                         f"install the requirements: pip install -r requirements.txt")
    server = built["server"]

    async def run():
        from mcp.server.stdio import stdio_server
        async with stdio_server(SdkStdin(answers), SdkStdout(answers)) as (read, write):
            low = server._mcp_server      # what FastMCP.run("stdio") runs, on these streams
            await low.run(read, write, low.create_initialization_options())
    import anyio
    anyio.run(run)


def build_server(db):
    """The FastMCP server with its tools, and the Reader that loads in the worker thread."""
    from concurrent.futures import ThreadPoolExecutor
    from typing import Annotated, Literal

    from mcp.server.fastmcp import FastMCP
    from mcp.server.fastmcp.exceptions import ToolError
    from pydantic import Field

    from .reader import Reader
    reader = Reader(db, cwd=os.getcwd(), memory=True)
    worker = ThreadPoolExecutor(1, thread_name_prefix="codebase-rag")

    async def run(fn, *args):
        """fn in the worker thread; an expected failure becomes the one line it deserves."""
        try:
            return await asyncio.get_running_loop().run_in_executor(worker, fn, *args)
        except UsageError as e:
            raise ToolError(str(e)) from None
        except Exception as e:
            raise ToolError(f"failed: {one_line(e)}") from None

    def warm():
        try:
            store, model, _, nearest = reader.prepare()
            nearest.sync()
            reader.keywords.sync()
            if model:
                model.embedder()
        except Exception:
            pass                      # the first tool call says what is wrong
    worker.submit(warm)

    server = FastMCP("codebase-rag", instructions=INSTRUCTIONS, log_level="WARNING")
    tool = server.tool(meta=ALWAYS_LOAD, structured_output=False)

    @tool
    async def search_code(
            question: Annotated[str, Field(min_length=1, description="what you are looking "
                                           "for, in plain words")],
            k: Annotated[int, Field(ge=1, le=50, description="number of results")] = K,
            path: Annotated[str | None, Field(description="only files matching this glob, "
                                              "e.g. 'src/*'")] = None,
            mode: Literal["hybrid", "vector", "lexical"] = "hybrid",
            lang: Annotated[Literal[LANGUAGE_NAMES] | None,
                            Field(description="only results in this language")] = None,
            lines: Annotated[int, Field(ge=-1, le=500, description="lines of each result "
                                        "to show (-1: all)")] = LINES) -> str:
        """Find the members (methods, functions, classes, ...) that answer a question about
        this codebase: file:start-end, Class.Member, cosine distance, and their first lines."""
        [answer] = await run(reader.ask, [question.strip()], k, mode, path, None, lang)
        return render(answer, lines)

    @tool
    async def find_related(
            file: Annotated[str, Field(description="a file of the index, relative to the "
                                       "repository root")],
            line: Annotated[int, Field(ge=1, description="a line inside the member")],
            k: Annotated[int, Field(ge=1, le=50)] = K) -> str:
        """The members nearest in meaning to the one at file:line: its callers' kin, its
        siblings in other files, the code that does the same thing elsewhere."""
        file = file.replace("\\", "/").removeprefix("./")
        return render(await run(reader.related, file, line, k), LINES)

    @tool
    async def index_status() -> str:
        """Whether the index is built or building, how far, and when it last changed."""
        try:
            return await run(reader.status)
        except ToolError as e:
            return str(e)             # no index yet: the line that says what to run

    @tool
    async def reindex(
            paths: Annotated[list[str] | None, Field(description="files to index again "
                                                     "now; none: the whole tree, in the "
                                                     "background")] = None) -> str:
        """Bring the index up to date: these files now, or the whole tree in the background.
        Searches already find changed files by themselves; this is for after a big change."""
        return await run(reindex_now, reader, paths)

    return server


def reindex_now(reader, paths):
    """reindex's work, in the worker thread."""
    from .lock import detach, is_locked, queue_pending
    folder = reader.folder()
    store = reader.open()
    root = store.root()
    if not paths:
        detach(folder, ["--source", str(root), "--db", str(folder), "--quiet", "--detached"],
               "refresh asked by the MCP tool reindex")
        return f"refreshing {root} in the background; see index_status"
    rels = []
    for p in paths:
        full = os.path.normpath(os.path.join(root, p))
        if not full.startswith(str(root).rstrip(os.sep) + os.sep):
            raise UsageError(f"{p} lies outside the indexed tree {root}")
        rels.append(os.path.relpath(full, root).replace(os.sep, "/"))
    queue_pending(folder, rels)
    reader.prepare()                  # absorbs them now, as a search would
    if not is_locked(folder):
        detach(folder, ["--db", str(folder), "--apply-queue"], "applying edits")
    return f"indexed {len(rels)} file(s) again; their vectors follow in the background" \
           f" (run {INDEX_COMMAND} for a whole refresh)"
