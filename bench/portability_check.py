#!/usr/bin/env python3
"""The tool under an emulation of macOS and of Windows, from outside the test suite: every
Python process of each case (the commands, the hook's detached writer, the model's export,
the MCP server) starts with tests/emulation on PYTHONPATH and EMULATE_OS set, so its
sitecustomize.py takes away what that system lacks (tests/emulation/emulate_os.py says
what). Four cases per system, eight in all:

  build   a first build on a machine that never exported the model, then a query
  hook    a hook for a new file (its detached writer applies it), then a query finds it
  mcp     the MCP server (the mcp SDK's stdio client) answers, and sees a member added to
          the tree after it started, with no hook
  int8    the build chose the precision this CPU calls for (int8 with AVX-512 VNNI,
          int8-reduced with AVX2 alone), with /proc/cpuinfo out of the tool's reach

    python bench/portability_check.py [--keep DIR]

Prints a table and exits 0 only if all eight pass. Needs Linux (the emulation reads /proc)
and an x86-64 CPU with AVX2 or AVX-512 VNNI for the int8 case.
"""
import argparse
import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from codebase_rag.embed import auto_precision

ROOT = Path(__file__).resolve().parents[1]
EMULATION = ROOT / "tests" / "emulation"
SAMPLE = ROOT / "tests" / "sample"
QUESTION = "how does the energy system refill timers?"
GIFT = "give energy to a friend as a gift"
NEW = ("namespace Game.Gifts;\n\npublic class Gifting\n{\n"
       "    /// <summary>Sends some of a player's energy to a friend as a gift.</summary>\n"
       "    public void GiftEnergyToFriend(Player from, Player friend, int amount)\n"
       "    {\n        from.Energy -= amount;\n        friend.Energy += amount;\n    }\n}\n")


def environment(kind, cache):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEBASE_RAG_")}
    env.update(EMULATE_OS=kind, PYTHONPATH=os.pathsep.join([str(EMULATION), str(ROOT)]),
               CODEBASE_RAG_CACHE=str(cache), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return env


def run(env, script, *args, stdin=None):
    proc = subprocess.run([sys.executable, str(ROOT / script), *map(str, args)], env=env,
                          input=stdin, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise AssertionError(f"{script} exited {proc.returncode}: {proc.stderr.strip()[-400:]}")
    return proc


def first(env, db, question):
    hits = json.loads(run(env, "query.py", "--db", db, "--json", "-k", "3", question).stdout)
    return hits[0]["member"] if hits else None


def settled(db, timeout=120):
    """Until no writer holds the index and nothing is queued (probed from outside)."""
    from codebase_rag.lock import has_pending, is_locked
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not has_pending(db) and not is_locked(db):
            time.sleep(0.1)
            if not has_pending(db) and not is_locked(db):
                return
        time.sleep(0.1)
    raise AssertionError("the hook's writer never finished")


def case_build(env, tree, db):
    run(env, "index.py", "--source", tree, "--db", db, "-q")
    got = first(env, db, QUESTION)
    assert got == "RefillTimers", f"the first answer is {got}"
    return "built, exported the model, answered RefillTimers"


def case_hook(env, tree, db):
    (tree / "Gifting.cs").write_text(NEW)
    event = json.dumps({"tool_name": "Write", "tool_input": {"file_path": str(tree /
                                                                              "Gifting.cs")}})
    proc = run(env, "index.py", "--hook", "--db", db, stdin=event)
    assert proc.stderr == "", proc.stderr
    settled(db)
    got = first(env, db, GIFT)
    assert got == "GiftEnergyToFriend", f"after the hook the first answer is {got}"
    assert "Traceback" not in (db / "build.log").read_text(encoding="utf-8")
    return "the detached writer took the new file in"


def case_mcp(env, tree, db):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def go():
        params = StdioServerParameters(command=sys.executable, args=[
            str(ROOT / "query.py"), "--mcp", "--db", str(db)], env=env, cwd=str(tree))
        with open(db.parent / "mcp.log", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    ask = lambda q: session.call_tool("search_code", {"question": q, "k": 1})  # noqa: E731
                    before = (await ask(QUESTION)).content[0].text
                    (tree / "Later").mkdir()
                    (tree / "Later" / "Sharing.cs").write_text(
                        NEW.replace("Gifting", "Sharing").replace("GiftEnergyToFriend",
                                                                  "ShareEnergyWithAlly"))
                    after = (await ask("share energy with an ally")).content[0].text
                    return before, after
    before, after = asyncio.run(go())
    assert "EnergySystem.RefillTimers" in before, before
    assert "Sharing.ShareEnergyWithAlly" in after, after
    return "answered, then found a member added after it started"


def case_int8(env, tree, db):
    with open("/proc/cpuinfo") as f:          # this checker may read it; the tool could not
        flags = set(next((ln for ln in f if ln.startswith("flags")), "").split())
    expected = auto_precision(flags)
    if expected == "fp32":
        raise AssertionError("this CPU has neither AVX-512 VNNI nor AVX2: the case cannot run")
    con = sqlite3.connect(db / "index.sqlite")
    (precision,), = con.execute("SELECT value FROM meta WHERE key='precision'")
    con.close()
    assert precision == expected, f"the build chose {precision}, this CPU calls for {expected}"
    return f"auto chose {precision} from numpy's CPU features (the CPU has " \
           f"{'AVX-512 VNNI' if expected == 'int8' else 'AVX2, no VNNI'})"


CASES = {"build": case_build, "hook": case_hook, "mcp": case_mcp, "int8": case_int8}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = p.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="portability-"))
    rows, passed = [], 0
    for kind in ("macos", "windows"):
        base = work / kind
        shutil.rmtree(base, ignore_errors=True)
        tree, db = base / "src", base / "db"
        shutil.copytree(SAMPLE, tree, ignore=shutil.ignore_patterns(".codebase-rag"))
        env = environment(kind, base / "cache")           # a machine that exported nothing
        for name, case in CASES.items():
            started = time.time()
            try:
                said, ok = case(env, tree, db), True
            except Exception as e:                # noqa: BLE001 (the table says it)
                said, ok = f"{type(e).__name__}: {e}", False
            passed += ok
            rows.append((kind, name, "pass" if ok else "FAIL", f"{time.time() - started:.1f}",
                         said.replace("\n", " ")[:160]))
            print(f"{kind:8} {name:6} {rows[-1][2]:5} {rows[-1][3]:>6}s  {rows[-1][4]}",
                  flush=True)
    print("\n| system | case | result | seconds | what |\n| --- | --- | --- | --- | --- |")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(f"\n{passed} of {len(rows)} passed")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if passed == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
