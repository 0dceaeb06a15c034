"""query.py --mcp through the mcp SDK's own stdio client, as Claude Code reaches it: the
handshake before anything loads, every tool, a bad argument, a search during a first build
and after a --rebuild, an edit made while the server runs, and a server with no index."""
import asyncio
import json
import os
import subprocess
import sys
import time
from contextlib import asynccontextmanager

import pytest

from conftest import ROOT, lines_of

pytest.importorskip("mcp")
QUESTION = "how does the energy system refill timers?"


@asynccontextmanager
async def server(cli, db=None, cwd=None, errlog=None):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    args = [str(ROOT / "query.py"), "--mcp"] + (["--db", str(db)] if db else [])
    params = StdioServerParameters(command=sys.executable, args=args, env=cli.env,
                                   cwd=str(cwd or ROOT))
    async with stdio_client(params, errlog=errlog or sys.stderr) as (read, write):
        async with ClientSession(read, write) as session:
            session.greeting = await session.initialize()
            yield session


def text(result):
    assert not getattr(result, "structuredContent", None)     # text only: Claude Code shows it
    return "\n".join(c.text for c in result.content)


def first_hit(result):
    """(file, start, end, name) of the first result line."""
    line = next(l for l in text(result).splitlines() if l.startswith("#1 | "))
    _, where, name, _ = line.split(" | ")
    file, span = where.rsplit(":", 1)
    start, end = map(int, span.split("-"))
    return file, start, end, name


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


def test_the_handshake_answers_before_the_sdk_loads_with_what_the_sdk_said(cli, sample_tree,
                                                                          tmp_path, onnx_export):
    """initialize and tools/list are answered from the machine's cache while the SDK is
    still importing, then the SDK takes over. The answers are the SDK's own: learned by a
    process that index.py leaves behind, so even the first start on a machine has them."""
    cache = tmp_path / "cache"
    cli.private_cache(onnx_export, cache)
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    deadline = time.monotonic() + 60
    while not any("tools/list {}" in f.read_text() for f in cache.glob("mcp-answers-*.json")):
        assert time.monotonic() < deadline, "index.py left no process that learned them"
        time.sleep(0.1)
    [cached] = cache.glob("mcp-answers-*.json")
    assert {"initialize 2025-06-18", "tools/list {}"} <= set(json.loads(cached.read_text()))

    async def start():
        async with server(cli, db) as s:
            listed = await s.list_tools()
            hit = first_hit(await s.call_tool("search_code", {"question": QUESTION}))
            return s.greeting.model_dump(), listed.model_dump(), hit
    learned = asyncio.run(start())                 # from the cache
    cached.write_text("{not json")
    assert asyncio.run(start()) == learned         # a damaged cache: the SDK's own answers
    known = json.loads(cached.read_text())         # ... learned again
    for tool in known["tools/list {}"]["tools"]:
        tool["description"] = "from the cache"
    cached.write_text(json.dumps(known))
    greeting, listed, hit = asyncio.run(start())
    assert {t["description"] for t in listed["tools"]} == {"from the cache"}
    assert (greeting, hit) == (learned[0], learned[2])  # and the SDK took over for the search


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
            before = await hit()
            write("// one more line\n" + energy.read_text().replace("RefillTimers",
                                                                     "RechargeTimers"))
            after = await hit()
            assert after[3] == "EnergySystem.RechargeTimers"
            assert (after[1], after[2]) == (before[1] + 1, before[2] + 1)
            save("\n\n" + energy.read_text().replace("RechargeTimers", "RefuelTimers"))
            after = await hit()
            assert after[3] == "EnergySystem.RefuelTimers"
            assert (after[1], after[2]) == lines_of(sample_tree, "Energy/EnergySystem.cs",
                                                    "RefuelTimers")
            os.rename(sample_tree / "Energy", sample_tree / "Power")
            energy = sample_tree / "Power" / "EnergySystem.cs"
            assert (await hit())[0] == "Power/EnergySystem.cs"
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
