"""query.py --mcp through the mcp SDK's own stdio client, as Claude Code reaches it (and
through raw stdio where the client would refuse to send it): the handshake before the SDK
loads, every tool, wrong arguments and malformed input, a slow call, the signals that stop
it, a search during a first build and after a --rebuild, an edit made while the server
runs, and a server with no index."""
import asyncio
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from contextlib import asynccontextmanager

import pytest

from conftest import ROOT, SAMPLE, Cli, lines_of

from codebase_rag.languages import LANGUAGES

pytest.importorskip("mcp")
QUESTION = "how does the energy system refill timers?"
HELLO = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "test", "version": "0"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"}]


@pytest.fixture(scope="module")
def built(machine_cache, tmp_path_factory):
    """(cli, db): one index of the sample, for the tests that only read it."""
    cli = Cli(machine_cache)
    tree = tmp_path_factory.mktemp("mcp") / "src"
    shutil.copytree(SAMPLE, tree, ignore=shutil.ignore_patterns(".codebase-rag"))
    cli.index(tree, tree.parent / "db")
    return cli, tree.parent / "db"


def wrapped(code, db):
    """query.py --mcp's serve(db), after a few lines of code that change the server for a
    test (a shorter wait, a gate before the SDK loads)."""
    return ["-c", f"import codebase_rag.mcp_server as m\n{code}\nm.serve({str(db)!r})"]


@asynccontextmanager
async def server(cli, db=None, cwd=None, errlog=None, code=None, env=None):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    args = wrapped(code, db) if code else \
        [str(ROOT / "query.py"), "--mcp"] + (["--db", str(db)] if db else [])
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(cwd or ROOT),
                                   env={**cli.env, "PYTHONPATH": str(ROOT), **(env or {})})
    async with stdio_client(params, errlog=errlog or sys.stderr) as (read, write):
        async with ClientSession(read, write) as session:
            session.greeting = await session.initialize()
            yield session


class RawServer:
    """query.py --mcp on raw stdio: JSON-RPC lines in, the lines it answers out."""

    def __init__(self, cli, db, args=None):
        self.proc = subprocess.Popen(args or [sys.executable, str(ROOT / "query.py"), "--mcp",
                                              "--db", str(db)],
                                     env={**cli.env, "PYTHONPATH": str(ROOT)}, cwd=ROOT,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.lines = queue.Queue()
        threading.Thread(target=lambda: [self.lines.put(line) for line in self.proc.stdout],
                         daemon=True).start()

    def send(self, *messages):
        for m in messages:
            self.proc.stdin.write((m if isinstance(m, str) else json.dumps(m)).encode() + b"\n")
        self.proc.stdin.flush()

    def answer(self, timeout=60):
        """The next line it writes, parsed; None if it writes none in time."""
        try:
            return json.loads(self.lines.get(timeout=timeout))
        except queue.Empty:
            return None

    def stop(self, sig, timeout=10):
        """Send sig; (exit code or None if it is still running after timeout, its stderr)."""
        self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            code = None
            self.proc.kill()
            self.proc.wait()
        return code, self.proc.stderr.read().decode()


def tool_call(ident, name, **arguments):
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}


def text(result):
    assert not getattr(result, "structuredContent", None)     # text only: Claude Code shows it
    return "\n".join(c.text for c in result.content)


def all_hits(result):
    """(file, start, end, name) of each result line, best first."""
    hits = []
    for line in text(result).splitlines():
        if re.match(r"#\d+ \| ", line):
            _, where, name, _ = line.split(" | ")
            file, span = where.rsplit(":", 1)
            hits.append((file, *map(int, span.split("-")), name))
    return hits


def first_hit(result):
    return all_hits(result)[0]


def hit_named(result, name):
    """The result line of the member called name, or None."""
    return next((h for h in all_hits(result) if h[3] == name), None)


def test_the_tools_and_their_answers(built, tmp_path):
    cli, db = built

    errlog = open(tmp_path / "server.err", "w+")

    async def go():
        started = time.monotonic()
        async with server(cli, db, errlog=errlog) as s:
            handshake = time.monotonic() - started
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert set(tools) == {"search_code", "find_related", "index_status", "reindex",
                                  "definition", "callers", "callees", "references", "impact",
                                  "outline"}
            assert all(t.meta == {"anthropic/alwaysLoad": True} for t in tools.values())
            hit = first_hit(await s.call_tool("search_code", {"question": QUESTION, "k": 3}))
            assert hit[0] == "Energy/EnergySystem.cs" and hit[3] == "EnergySystem.RefillTimers"
            related = text(await s.call_tool("find_related", {"file": hit[0], "line": hit[1]}))
            assert "EnergySystem.RefillTimers" not in related.split("\n")[0] and "#1 | " in related
            for asked, read_as, said in ((QUESTION, None, "a question (read_as: question)"),
                                         ("refill timers", "doc",
                                          "a doc-comment sentence (read_as: doc)")):
                answer = text(await s.call_tool("search_code", {"question": asked, "read_as":
                                                                read_as}))
                assert answer.splitlines()[0] == f"read as {said}"
            assert "built" in text(await s.call_tool("index_status", {}))
            bad = await s.call_tool("search_code", {"question": QUESTION, "k": 0})
            assert bad.isError and text(bad) == "k must be between 1 and 50"
            wrong = await s.call_tool("find_related", {"file": "Nowhere.cs", "line": 3})
            assert wrong.isError and "no indexed member at Nowhere.cs:3" in text(wrong)
            huge = text(await s.call_tool("search_code", {"question": "energy", "k": 50,
                                                            "lines": -1}))
            assert len(huge) <= 90_000
            assert "built" in text(await s.call_tool("index_status", {}))    # still serving
        return handshake
    assert asyncio.run(go()) < 30         # a bound; bench/agent_loop.py times it
    time.sleep(1.0)                       # the server's exit, once its client has gone
    errlog.seek(0)
    assert "Traceback" not in errlog.read()


def test_it_declares_tools_and_nothing_it_does_not_serve(built):
    """No prompts, no resources: Claude Code adds three resource tools of its own to every
    request for a server that declares resources."""
    cli, db = built

    async def go():
        async with server(cli, db) as s:
            return s.greeting.capabilities
    capabilities = asyncio.run(go())
    assert capabilities.tools is not None
    assert capabilities.prompts is None and capabilities.resources is None


def test_a_wrong_argument_is_one_plain_line(built):
    cli, db = built
    calls = {
        ("find_related", json.dumps({"file": "Energy/EnergySystem.cs", "line": 10**21})):
            "line must be between 1 and 2147483647",
        ("search_code", json.dumps({"question": " \t\n "})):
            "question is empty: say in plain words what you are looking for",
        ("search_code", json.dumps({"question": QUESTION, "k": 51})):
            "k must be between 1 and 50",
        ("search_code", json.dumps({"question": QUESTION, "lang": "cobol"})):
            "lang must be one of " + ", ".join(lang.name for lang in LANGUAGES),
        ("search_code", json.dumps({"question": QUESTION, "mode": "fuzzy"})):
            "mode must be one of vector, lexical, hybrid",
        ("search_code", json.dumps({"question": QUESTION, "lines": "many"})):
            "lines must be a whole number",
        ("search_code", json.dumps({"question": QUESTION, "page": 2})):
            "search_code has no argument 'page' (it takes question, k, path, mode, lang, lines, "
            "read_as)",
        ("find_related", json.dumps({"line": 3})): "find_related needs file",
        ("reindex", json.dumps({"paths": "Energy/EnergySystem.cs"})):
            "paths must be a list of strings",
    }

    async def go():
        async with server(cli, db) as s:
            said = {}
            for name, arguments in calls:
                result = await s.call_tool(name, json.loads(arguments))
                said[name, arguments] = text(result) if result.isError else None
            said["still serving"] = first_hit(await s.call_tool(
                "search_code", {"question": QUESTION}))[3]
            return said
    said = asyncio.run(go())
    assert said.pop("still serving") == "EnergySystem.RefillTimers"
    assert said == calls


def test_malformed_input_gets_a_json_rpc_error_and_the_server_keeps_serving(built):
    cli, db = built
    raw = RawServer(cli, db)
    raw.send(*HELLO)
    assert raw.answer()["id"] == 0
    raw.send("this is not JSON", '{"id": 7, "method": "tools/list"}', "[1, 2]",
             '{"jsonrpc": "2.0", "id": 8, "method": "tools/call"}',
             '{"jsonrpc": "2.0", "id": 9, "method": "no/such/method"}',
             tool_call(10, "search_code", question=QUESTION))
    answers = [raw.answer(timeout=30) for _ in range(6)]
    code, err = raw.stop(signal.SIGTERM)
    assert None not in answers, answers
    errors = [(a["id"], a["error"]["code"]) for a in answers if "error" in a]
    assert [e for e in errors if e[0] in (None, 7)] == \
        [(None, -32700), (7, -32600), (None, -32600)]         # answered here, in order
    assert sorted(e for e in errors if e[0] in (8, 9)) == [(8, -32602), (9, -32602)]  # the SDK
    [search] = [a for a in answers if a["id"] == 10]
    assert "EnergySystem.RefillTimers" in search["result"]["content"][0]["text"]
    assert "Traceback" not in err


@pytest.mark.parametrize("when, sig", [("handshake", signal.SIGINT), ("idle", signal.SIGINT),
                                       ("busy", signal.SIGINT), ("idle", signal.SIGTERM)])
def test_a_signal_ends_it_at_once_without_a_traceback(built, when, sig):
    """Claude Code stops a server with SIGINT, then SIGTERM if it is still there: right
    after the handshake, between two calls, or with a call in hand."""
    cli, db = built
    raw = RawServer(cli, db)
    raw.send(*HELLO)
    assert raw.answer()["id"] == 0
    if when != "handshake":
        raw.send(tool_call(1, "search_code", question=QUESTION))
        assert raw.answer()["id"] == 1
    if when == "busy":
        raw.send(tool_call(2, "search_code", question="energy"))
    code, err = raw.stop(sig)
    assert code is not None, "still running 10 s after the signal"
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err


def test_reindex_says_which_paths_it_did_not_read(cli, sample_tree, tmp_path):
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    (sample_tree / "NOTES.md").write_text("# notes\n")
    (sample_tree / "bin").mkdir()
    (sample_tree / "bin" / "Generated.cs").write_text("public class Generated { }\n")
    (tmp_path / "Outside.cs").write_text("public class Outside { }\n")
    paths = ["Energy/EnergySystem.cs", "Nowhere.cs", "NOTES.md", "Energy", "bin/Generated.cs",
             "../Outside.cs", str(sample_tree / "Energy" / "EnergySystem.cs"), "Bad\0.cs",
             " "]

    async def go():
        async with server(cli, db) as s:
            said = text(await s.call_tool("reindex", {"paths": paths}))
            nothing = text(await s.call_tool("reindex", {"paths": ["Nowhere.cs"]}))
            return said, nothing
    said, nothing = asyncio.run(go())
    done, unread = said.split("\n")
    assert done.startswith("indexed again: Energy/EnergySystem.cs; ")     # once: one file
    assert unread == ("not read: Nowhere.cs (not there); NOTES.md (not in a language the "
                      "index reads); Energy (not a file); bin/Generated.cs (excluded "
                      "(.gitignore or the index's excludes)); ../Outside.cs (outside the "
                      f"indexed tree {sample_tree}); Bad\\x00.cs (not a file name);   (not a "
                      "file name)")          # before: a NUL in one path failed them all
    assert nothing == "not read: Nowhere.cs (not there)"


def test_hostile_requests_get_one_answer_each_and_the_server_keeps_serving(built):
    """Before: one request nested 5,000 deep killed the server (its JSON reader's
    RecursionError), before the SDK had loaded and after; half of a UTF-16 pair alone in an
    argument said 'failed: TypeError'. The client refuses to send either: raw stdio."""
    cli, db = built
    deep = ('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search_code",'
            '"arguments":{"question":' + "[" * 5000 + "]" * 5000 + "}}}")

    def call(ident, name, **arguments):          # JSON's own escapes kept as written
        return ('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s",'
                '"arguments":{%s}}}' % (ident, name, ",".join(
                    f'"{k}":{v}' for k, v in arguments.items())))
    raw = RawServer(cli, db)
    raw.send(deep % 1, *HELLO)                   # read before the SDK is up
    first = [raw.answer(timeout=60) for _ in range(2)]
    assert None not in first, first
    raw.send(deep % 2,
             call(3, "search_code", question='"caf\\ud800"'),
             call(4, "find_related", file='"Energy/\\udce9.cs"', line=1),
             call(5, "search_code", question=json.dumps(QUESTION), path='"src/\\ud800*"'),
             call(6, "reindex", paths='["caf\\ud800.cs", "../../etc/Passwd.cs"]'),
             tool_call(7, "search_code", question=QUESTION))
    answers = {a["id"]: a for a in first + [raw.answer(timeout=60) for _ in range(6)] if a}
    code, err = raw.stop(signal.SIGTERM)
    assert answers[0]["result"]["serverInfo"]["name"] == "codebase-rag"
    assert [answers[None]["error"]["code"]] == [-32700] and len(answers) == 7, answers
    said = {i: answers[i]["result"]["content"][0]["text"] for i in range(3, 8)}
    assert said[3] == ("question is not valid text: half of a UTF-16 surrogate pair at "
                       "character 4 (caf\\ud800)")
    assert said[4] == ("file is not valid text: half of a UTF-16 surrogate pair at "
                       "character 8 (Energy/\\udce9)")
    assert said[5].startswith("path is not valid text")
    assert said[6] == ("not read: caf\\ud800.cs (not valid text: half of a UTF-16 surrogate "
                       "pair at character 4 (caf\\ud800)); ../../etc/Passwd.cs (outside "
                       f"the indexed tree {db.parent / 'src'})")
    assert all(answers[i]["result"]["isError"] for i in (3, 4, 5))
    assert "EnergySystem.RefillTimers" in said[7]       # still serving
    assert "Traceback" not in err


def test_a_link_out_of_the_tree_made_while_the_server_runs_is_never_followed(
        cli, sample_tree, tmp_path):
    """The watcher's events name a new link as a new entry: the look that follows applies
    the walk's rule (before: a link to the tree's parent indexed the tree again under it,
    and answers came twice; a link to / was listed whole, past the call's deadline)."""
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "Secret.cs").write_text("class Secret { void Zanzibar() { var key = 1; } }")

    async def go():
        async with server(cli, db) as s:
            assert first_hit(await s.call_tool("search_code", {"question": QUESTION}))
            (sample_tree / "Leak").symlink_to(outside, target_is_directory=True)
            (sample_tree / "Parent").symlink_to(tmp_path, target_is_directory=True)
            (sample_tree / "Energy" / "Up").symlink_to("..", target_is_directory=True)
            answer = await s.call_tool("search_code", {"question": QUESTION, "k": 10})
            secret = await s.call_tool("search_code", {"question": "Zanzibar secret key"})
            return all_hits(answer), all_hits(secret)
    hits, secret = asyncio.run(go())
    files, members = [h[0] for h in hits], [(h[1], h[2], h[3]) for h in hits]
    assert "Energy/EnergySystem.cs" in files and len(members) == len(set(members)), hits
    assert not [f for f in files + [h[0] for h in secret]
                if f.startswith(("Leak/", "Parent/", "Energy/Up/"))]
    from codebase_rag.store import Store
    assert not [f for f in Store(db).manifest() if f.startswith(("Leak/", "Parent/", "Energy/Up"))]


def test_the_ranking_mode_follows_the_settings(built):
    """CODEBASE_RAG_MODE=lexical: words the index has never seen find nothing, as with
    query.py --mode lexical; asked for hybrid, the same words get the nearest guesses."""
    cli, db = built

    async def go():
        async with server(cli, db, env={"CODEBASE_RAG_MODE": "lexical"}) as s:
            listed = {t.name: t for t in (await s.list_tools()).tools}
            default = text(await s.call_tool("search_code", {"question": "xylophone quartz"}))
            hybrid = await s.call_tool("search_code", {"question": "xylophone quartz",
                                                       "mode": "hybrid"})
            return listed["search_code"].inputSchema, default, hybrid
    schema, default, hybrid = asyncio.run(go())
    assert schema["properties"]["mode"]["default"] == "lexical"
    assert default == "read as keywords or a name (read_as: keywords)\nno results\n"
    assert all_hits(hybrid)


def test_a_slow_call_never_holds_up_the_calls_behind_it(cli, sample_tree, tmp_path):
    """A search that cannot finish (here: its build.log is a FIFO nobody reads, so the
    writer it starts for the file it took in blocks) holds its worker; the search behind
    it gets a new worker within WAIT, and the stuck one says it gave up at DEADLINE."""
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    energy = sample_tree / "Energy" / "EnergySystem.cs"

    async def go():
        async with server(cli, db, code="m.WAIT, m.DEADLINE = 0.5, 8") as s:
            assert first_hit(await s.call_tool("search_code", {"question": QUESTION}))
            (db / "build.log").unlink(missing_ok=True)
            os.mkfifo(db / "build.log")
            energy.write_text(energy.read_text().replace("RefillTimers", "RechargeTimers"))
            stuck = asyncio.create_task(s.call_tool("search_code", {"question": QUESTION}))
            await asyncio.sleep(0.3)
            behind = await asyncio.wait_for(
                s.call_tool("search_code", {"question": QUESTION}), 30)
            stuck_done_first = stuck.done()
            gave_up = await asyncio.wait_for(stuck, 30)
            threading.Thread(target=lambda: open(db / "build.log", "rb").read(),
                             daemon=True).start()        # the stuck worker goes on, and ends
            after = await s.call_tool("search_code", {"question": QUESTION})
            return behind, stuck_done_first, gave_up, after
    behind, stuck_done_first, gave_up, after = asyncio.run(go())
    assert not stuck_done_first
    assert hit_named(behind, "EnergySystem.RechargeTimers")     # what the stuck one took in
    assert gave_up.isError and text(gave_up) == \
        "search_code gave up after 8 s; ask something narrower, or see index_status"
    assert hit_named(after, "EnergySystem.RechargeTimers")


def test_the_early_answers_are_the_sdks_own(cli, tmp_path):
    """initialize (in each protocol version) and tools/list are answered before the SDK
    has loaded, by early_answers(): what the SDK itself answers, asked with no early answers."""
    from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS
    from mcp.types import LATEST_PROTOCOL_VERSION
    from codebase_rag import mcp_server
    from codebase_rag.mcp_handshake import PROTOCOL_VERSIONS, asks, early_answers
    assert set(PROTOCOL_VERSIONS) <= set(SUPPORTED_PROTOCOL_VERSIONS)
    assert LATEST_PROTOCOL_VERSION in PROTOCOL_VERSIONS
    client = {"capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}
    asked = [{"jsonrpc": "2.0", "id": i, "method": "initialize",
              "params": {"protocolVersion": v, **client}} for i, v in enumerate(PROTOCOL_VERSIONS)]
    asked += [{"jsonrpc": "2.0", "method": "notifications/initialized"},
              {"jsonrpc": "2.0", "id": len(PROTOCOL_VERSIONS), "method": "tools/list"}]
    raw = RawServer(cli, tmp_path, [sys.executable] + wrapped(
        "import codebase_rag.mcp_handshake as h\nh.early_answers = lambda *a: {}", tmp_path))
    raw.send(*asked)
    said = {asks(m): raw.answer()["result"] for m in asked if "id" in m}
    raw.stop(signal.SIGTERM)
    ours = early_answers(mcp_server.NAME, mcp_server.VERSION, mcp_server.INSTRUCTIONS,
                         mcp_server.TOOLS)
    assert said == ours


def test_the_handshake_is_answered_before_the_sdk_loads_then_the_sdk_takes_over(
        built, tmp_path):
    """With the SDK held back until a gate opens, initialize and tools/list are answered
    all the same; once it is up, it takes over as if it had seen them (a tool call needs an
    initialized session) and answers each request once."""
    from codebase_rag import mcp_server
    from codebase_rag.mcp_handshake import early_answers
    cli, db = built
    gate = tmp_path / "gate"
    held = (f"import os, time\nbuild = m.build_server\n"
            f"def held(db):\n    while not os.path.exists({str(gate)!r}): time.sleep(0.01)\n"
            f"    import sys; assert 'mcp' not in sys.modules\n    return build(db)\n"
            f"m.build_server = held")
    raw = RawServer(cli, db, [sys.executable] + wrapped(held, db))
    started = time.monotonic()
    raw.send(*HELLO, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    greeting, listed = raw.answer(), raw.answer()
    handshake = time.monotonic() - started
    ours = early_answers(mcp_server.NAME, mcp_server.VERSION, mcp_server.INSTRUCTIONS,
                         mcp_server.TOOLS)
    assert greeting["result"] == ours["initialize", "2025-06-18"]
    assert listed["result"] == ours["tools/list", None]
    gate.touch()
    raw.send(tool_call(2, "search_code", question=QUESTION))
    search = raw.answer()
    assert search["id"] == 2 and "EnergySystem.RefillTimers" in \
        search["result"]["content"][0]["text"]
    raw.send({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
    assert raw.answer() == {"jsonrpc": "2.0", "id": 3, "result": ours["tools/list", None]}
    code, err = raw.stop(signal.SIGTERM)
    assert "Traceback" not in err and "AssertionError" not in err, err
    assert handshake < 30                 # a bound; bench/agent_loop.py times it


def test_every_change_while_the_server_runs_is_in_the_next_answer(cli, sample_tree, tmp_path):
    """The server follows the tree by inotify between questions: each change, made with no
    hook and no index.py, is in the very next answer, with its lines as they are now."""
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    energy = sample_tree / "Energy" / "EnergySystem.cs"
    gift = ("namespace Game.Gifts;\n\npublic class Gifting\n{\n"
            "    /// <summary>Sends some of a player's energy to a friend as a gift.</summary>\n"
            "    public void GiftEnergyToFriend(Player from, Player friend, int amount)\n"
            "    {\n        from.Energy -= amount;\n        friend.Energy += amount;\n    }\n}\n")

    def write(text):                  # a plain write
        energy.write_text(text)

    def save(text):                   # as editors save: a temporary file renamed over it
        (energy.parent / ".EnergySystem.cs.tmp").write_text(text)
        os.replace(energy.parent / ".EnergySystem.cs.tmp", energy)

    async def go():
        nonlocal energy
        async with server(cli, db) as s:
            async def hit(question=QUESTION):
                return first_hit(await s.call_tool("search_code", {"question": question}))

            async def hits(question=QUESTION):
                return await s.call_tool("search_code", {"question": question})
            before = hit_named(await hits(), "EnergySystem.RefillTimers")
            write("// one more line\n" + energy.read_text().replace("RefillTimers",
                                                                     "RechargeTimers"))
            now = await hits()          # the renamed member, where it is now; the old name gone
            assert hit_named(now, "EnergySystem.RefillTimers") is None
            after = hit_named(now, "EnergySystem.RechargeTimers")
            assert after and (after[1], after[2]) == (before[1] + 1, before[2] + 1)
            save("\n\n" + energy.read_text().replace("RechargeTimers", "RefuelTimers"))
            after = hit_named(await hits(), "EnergySystem.RefuelTimers")
            assert after and (after[1], after[2]) == lines_of(
                sample_tree, "Energy/EnergySystem.cs", "RefuelTimers")
            os.rename(sample_tree / "Energy", sample_tree / "Power")
            energy = sample_tree / "Power" / "EnergySystem.cs"
            files = {h[0] for h in all_hits(await hits())}
            assert "Power/EnergySystem.cs" in files and "Energy/EnergySystem.cs" not in files
            (sample_tree / "Gifts").mkdir()
            (sample_tree / "Gifts" / "Gifting.cs").write_text(gift)
            assert (await hit("give energy to a friend as a gift"))[3] == \
                "Gifting.GiftEnergyToFriend"
            (sample_tree / "Gifts" / "Gifting.cs").write_text(gift.replace("Friend", "Ally"))
            assert (await hit("give energy to a friend as a gift"))[3] == \
                "Gifting.GiftEnergyToAlly"   # a file in a folder made since the server began
            energy.unlink()
            assert "RefuelTimers" not in text(await s.call_tool("search_code",
                                                                {"question": QUESTION}))
    asyncio.run(go())


def test_searches_during_a_first_build_and_after_a_rebuild(cli, sample_tree, tmp_path):
    for i in range(150):
        (sample_tree / f"Bulk{i}.cs").write_text(
            f"namespace Bulk;\npublic class Bulk{i}\n{{\n"
            + "".join(f"    public int M{j}_{i}() {{ return {j}; }}\n" for j in range(4)) + "}\n")
    db = tmp_path / "db"

    async def go():
        build = subprocess.Popen([sys.executable, str(ROOT / "index.py"), "--source",
                                  str(sample_tree), "--db", str(db), "-q"], env=cli.env)
        while not (db / "index.sqlite").exists():
            await asyncio.sleep(0.1)
        async with server(cli, db) as s:
            seen = []
            while build.poll() is None:
                result = await s.call_tool("search_code", {"question": QUESTION})
                assert not result.isError or "being replaced" in text(result), text(result)
                seen.append(text(result))
                await asyncio.sleep(0.2)
            assert build.returncode == 0
            done = first_hit(await s.call_tool("search_code", {"question": QUESTION}))
            assert done[3] == "EnergySystem.RefillTimers"
            subprocess.run([sys.executable, str(ROOT / "index.py"), "--source", str(sample_tree),
                            "--db", str(db), "--rebuild", "-q"], env=cli.env, check=True)
            again = first_hit(await s.call_tool("search_code", {"question": QUESTION}))
            assert again == done
            return seen
    seen = asyncio.run(go())
    assert any("#1 | " in t for t in seen)       # it answered while the build ran


def test_every_change_during_a_first_build_is_in_the_next_answer(cli, sample_tree, tmp_path):
    """A new user's first session: SessionStart's build runs while the server answers. The
    server watches the tree from the build's walk on, not from its end."""
    from conftest import FrozenBuild, bulk_files
    bulk_files(sample_tree, 300)
    db = tmp_path / "db"
    build = FrozenBuild(cli, sample_tree, db, "embedding")
    energy = sample_tree / "Energy" / "EnergySystem.cs"
    gift = ("namespace Game.Gifts;\n\npublic class Gifting\n{\n"
            "    /// <summary>Sends some of a player's energy to a friend as a gift.</summary>\n"
            "    public void GiftEnergyToFriend(Player from, Player friend, int amount)\n"
            "    {\n        from.Energy -= amount;\n        friend.Energy += amount;\n    }\n}\n")

    async def go():
        async with server(cli, db) as s:
            async def hits(question=QUESTION):
                result = await s.call_tool("search_code", {"question": question, "k": 10})
                assert not result.isError, text(result)
                return result
            assert hit_named(await hits(), "EnergySystem.RefillTimers")
            energy.write_text(energy.read_text().replace("RefillTimers", "TopUpTimers"))
            now = await hits()                                  # sed -i
            assert hit_named(now, "EnergySystem.RefillTimers") is None
            assert hit_named(now, "EnergySystem.TopUpTimers")
            energy.write_text("// a new first line\n" + energy.read_text())
            top = hit_named(await hits(), "EnergySystem.TopUpTimers")
            assert (top[1], top[2]) == lines_of(sample_tree, "Energy/EnergySystem.cs",
                                                "TopUpTimers")
            (sample_tree / "Energy" / "Gifting.cs").write_text(gift)      # Write, with the hook
            cli.hook(db, sample_tree / "Energy" / "Gifting.cs", tool="Write", settle=False)
            assert hit_named(await hits("give energy to a friend as a gift"),
                             "Gifting.GiftEnergyToFriend")
            energy.unlink()                                     # rm
            assert not [h for h in all_hits(await hits()) if h[0] == "Energy/EnergySystem.cs"]
    try:
        asyncio.run(go())
    finally:
        build.kill()


def test_a_checkout_of_many_files_is_in_the_next_answer(cli, sample_tree, tmp_path):
    from conftest import bulk_files
    db = tmp_path / "db"
    cli.index(sample_tree, db)

    async def go():
        async with server(cli, db) as s:
            await s.call_tool("search_code", {"question": QUESTION})
            bulk_files(sample_tree, 60, "Generated")
            (sample_tree / "Generated" / "Gifting.cs").write_text(
                "class Gifting {\n  /// <summary>Sends energy to a friend as a gift.</summary>\n"
                "  void GiftEnergyToFriend(Player friend) { friend.Energy += 1; }\n}\n")
            result = await s.call_tool("search_code",
                                       {"question": "send energy to a friend as a gift"})
            assert first_hit(result)[3] == "Gifting.GiftEnergyToFriend", text(result)
    asyncio.run(go())


def test_a_server_with_no_index_says_what_to_run_and_keeps_serving(cli, tmp_path):
    async def go():
        async with server(cli, cwd=tmp_path) as s:
            status = text(await s.call_tool("index_status", {}))
            search = await s.call_tool("search_code", {"question": QUESTION})
            status_again = text(await s.call_tool("index_status", {}))
            return status, search, status_again
    status, search, again = asyncio.run(go())
    assert "no codebase-rag index found" in status and "index.py --source" in status
    assert len(status.splitlines()) == 1 and status == again
    assert search.isError and "no codebase-rag index found" in text(search)
