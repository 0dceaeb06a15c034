"""MCP: `query.py --mcp`, a stdio server for Claude Code and any agent, on the official mcp
SDK (1.x). One Reader lives as long as the server, with every vector in memory, so a warm
search is a few milliseconds; each question still finds what changed on disk first.

The handshake never waits for the index or the model: they load in a worker thread after
the server is up, and every tool runs in that one thread (SQLite connections stay in the
thread that opened them) while the event loop keeps answering.
"""
import asyncio
import io
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Literal

from pydantic import Field

from .config import INDEX_COMMAND, K, LINES
from .errors import UsageError, one_line
from .languages import LANGUAGES
from .lock import detach, is_locked, queue_pending
from .reader import Reader
from .render import print_results

LANGUAGE_NAMES = tuple(lang.name for lang in LANGUAGES)
ALWAYS_LOAD = {"anthropic/alwaysLoad": True}   # never deferred behind Claude Code's tool search
MAX_CHARS = 90_000                              # under 25,000 tokens, whatever k and lines say
INSTRUCTIONS = (
    "Semantic code search over this repository's index (C#, TypeScript/JavaScript, Python). "
    "Ask search_code in plain words before grepping or reading whole files: it returns the "
    "few members that answer, with file:start-end and Class.Member. Distances below 0.45 "
    "are usually the thing asked about; above 0.62 nothing in the index is about it. Grep "
    "for exact strings.")


def render(answer, lines):
    """An Answer as the text a model reads: its notes, then the hits as query.py prints them,
    shortened until it fits MAX_CHARS."""
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
    from mcp.server.fastmcp import FastMCP
    from mcp.server.fastmcp.exceptions import ToolError
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
            if model:
                model.embedder()
        except Exception:
            pass                      # the first tool call says what is wrong
    threading.Timer(0.3, lambda: worker.submit(warm)).start()

    server = FastMCP("codebase-rag", instructions=INSTRUCTIONS)
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

    server.run("stdio")


def reindex_now(reader, paths):
    """reindex's work, in the worker thread."""
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
