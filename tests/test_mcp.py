"""query.py --mcp through the mcp SDK's own stdio client, as Claude Code reaches it: the
handshake before anything loads, every tool, a bad argument, a search during a first build
and after a --rebuild, an edit made while the server runs, and a server with no index."""
import asyncio
import json
import os
import re
import subprocess
import sys
import time
from contextlib import asynccontextmanager

import pytest

from conftest import ROOT, lines_of

pytest.importorskip("mcp")
QUESTION = "how does the energy system refill timers?"


# query.py --mcp, with the handshake answers read from another file than the shipped one
WITH_ANSWERS = ("import sys; from pathlib import Path; "
                "import codebase_rag.mcp_server as m; m.SHIPPED_ANSWERS = Path(sys.argv[1]); "
                "m.serve(sys.argv[2] if len(sys.argv) > 2 else None)")


@asynccontextmanager
async def server(cli, db=None, cwd=None, errlog=None, answers=None):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    args = [str(ROOT / "query.py"), "--mcp"] + (["--db", str(db)] if db else [])
    env = cli.env
    if answers:
        args = ["-c", WITH_ANSWERS, str(answers)] + ([str(db)] if db else [])
        env = {**env, "PYTHONPATH": str(ROOT)}
    params = StdioServerParameters(command=sys.executable, args=args, env=env,
                                   cwd=str(cwd or ROOT))
    async with stdio_client(params, errlog=errlog or sys.stderr) as (read, write):
        async with ClientSession(read, write) as session:
            session.greeting = await session.initialize()
            yield session


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


def test_the_tools_and_their_answers(cli, sample_tree, tmp_path):
    db = tmp_path / "db"
    cli.index(sample_tree, db)

    errlog = open(tmp_path / "server.err", "w+")

    async def go():
        started = time.monotonic()
        async with server(cli, db, errlog=errlog) as s:
            handshake = time.monotonic() - started
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert set(tools) == {"search_code", "find_related", "index_status", "reindex"}
            assert all(t.meta == {"anthropic/alwaysLoad": True} for t in tools.values())
            hit = first_hit(await s.call_tool("search_code", {"question": QUESTION, "k": 3}))
            assert hit[0] == "Energy/EnergySystem.cs" and hit[3] == "EnergySystem.RefillTimers"
            related = text(await s.call_tool("find_related", {"file": hit[0], "line": hit[1]}))
            assert "EnergySystem.RefillTimers" not in related.split("\n")[0] and "#1 | " in related
            assert "built" in text(await s.call_tool("index_status", {}))
            bad = await s.call_tool("search_code", {"question": QUESTION, "k": 0})
            assert bad.isError and "greater than or equal to 1" in text(bad)
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


def sdk_answers(tmp_path):
    """What the installed SDK answers to the requests whose answer never changes, asked
    in every protocol version it speaks, of a server with no answers of its own."""
    from mcp.server.fastmcp.server import FastMCP  # noqa: F401  (the SDK is installed)
    from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS
    from codebase_rag.mcp_server import FIXED, EarlyAnswers
    client = {"capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}
    asked = [("initialize", {"protocolVersion": v, **client}) for v in SUPPORTED_PROTOCOL_VERSIONS]
    asked += [("notifications/initialized", None)] + [(m, {}) for m in FIXED[1:]]
    lines = [{"jsonrpc": "2.0", "method": m, **({"id": i, "params": p} if p is not None else {})}
             for i, (m, p) in enumerate(asked)]
    server = subprocess.Popen([sys.executable, "-c", WITH_ANSWERS, str(tmp_path / "none.json")],
                              cwd=tmp_path, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    server.stdin.write("".join(json.dumps(m) + "\n" for m in lines))
    server.stdin.flush()
    answers = {}
    for _ in range(sum("id" in m for m in lines)):      # every answer, then goodbye
        answer = json.loads(server.stdout.readline())
        answers[answer["id"]] = answer["result"]
    server.stdin.close()
    server.wait(timeout=60)
    return {EarlyAnswers.what(m): answers[m["id"]] for m in lines if "id" in m}


def comparable(answers):
    """Answers without what an SDK release may word differently without changing them."""
    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "title"}
        return [strip(v) for v in value] if isinstance(value, list) else value
    answers = strip(answers)
    for what, answer in answers.items():
        if what.startswith("initialize"):
            answer["serverInfo"].pop("version")
    return answers


def test_the_shipped_handshake_answers_are_the_sdks_own(tmp_path):
    """The server answers initialize and the listings before the SDK has loaded, from
    codebase_rag/mcp_answers.json: it must say what the installed SDK says."""
    said = sdk_answers(tmp_path)
    (tmp_path / "mcp_answers.json").write_text(json.dumps(said, indent=1) + "\n")
    shipped = json.loads((ROOT / "codebase_rag" / "mcp_answers.json").read_text())
    assert "tools/list {}" in shipped and "initialize 2025-06-18" in shipped
    assert comparable(shipped) == comparable({w: said[w] for w in shipped if w in said}), \
        f"the tools changed: copy {tmp_path / 'mcp_answers.json'} to codebase_rag/"


def test_the_handshake_is_answered_before_the_sdk_loads_then_the_sdk_takes_over(
        cli, sample_tree, tmp_path):
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    answers = tmp_path / "answers.json"

    async def start():
        async with server(cli, db, answers=answers) as s:
            listed = await s.list_tools()
            hit = first_hit(await s.call_tool("search_code", {"question": QUESTION}))
            return s.greeting.model_dump(), listed.model_dump(), hit
    answers.write_text((ROOT / "codebase_rag" / "mcp_answers.json").read_text())
    shipped = asyncio.run(start())
    answers.write_text("{not json")
    assert asyncio.run(start()) == shipped          # none to give: the SDK's, the same
    known = json.loads((ROOT / "codebase_rag" / "mcp_answers.json").read_text())
    for tool in known["tools/list {}"]["tools"]:
        tool["description"] = "from the file"
    answers.write_text(json.dumps(known))
    greeting, listed, hit = asyncio.run(start())
    assert {t["description"] for t in listed["tools"]} == {"from the file"}  # answered early
    assert (greeting, hit) == (shipped[0], shipped[2])   # and the SDK took over for the search


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
