#!/usr/bin/env python3
"""Issue 47's check, from outside the suite, on a copy of the bundled sample: the commands as
a user types them and the MCP server through the mcp SDK's own stdio client.

  callers     `query.py --callers EnergySystem.RefillTimers --json` names Program.cs's
              top-level statements with the call's line
  definition  `query.py --definition RefillTimers` gives Energy/EnergySystem.cs with its
              signature
  mcp         the server lists definition, callers, callees, references, impact and outline,
              and each answers as `query.py` prints the same question
  fresh       after an edit that adds a call (no hook, no reindex), the next `--callers`
              shows it, on the command line and in MCP

    python bench/refs_check.py [--keep DIR]

Prints one line per case; exits 0 only if all four pass.
"""
import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = {"definition": "RefillTimers", "callers": "EnergySystem.RefillTimers",
             "callees": "EnergySystem.RefillTimers", "references": "EnergySystem",
             "impact": "RefillTimers", "outline": "Energy/EnergySystem.cs"}
ADDED = ("namespace Arcadia.Backend.Energy;\n\npublic class Nightly\n{\n"
         "    public int Run(EnergySystem energy, System.DateTime now)\n    {\n"
         "        return energy.RefillTimers(now);\n    }\n}\n")


def env():
    e = {k: v for k, v in os.environ.items() if not k.startswith("CODEBASE_RAG_")}
    e.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return e


def query(db, *args):
    p = subprocess.run([sys.executable, str(ROOT / "query.py"), "--db", str(db), *args],
                       env=env(), capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise AssertionError(f"query.py {' '.join(args)}: exit {p.returncode}: "
                             f"{p.stderr.strip()[-300:]}")
    return p.stdout


def flag(mode, name):
    return [f"--{mode}", name] + (["--depth", "2"] if mode == "impact" else [])


async def mcp_answers(db, modes):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    params = StdioServerParameters(command=sys.executable, env=env(),
                                   args=[str(ROOT / "query.py"), "--mcp", "--db", str(db)])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {t.name for t in (await session.list_tools()).tools}
        answers = {}
        for mode, name in modes.items():
            arguments = {"file": name} if mode == "outline" else {"name": name}
            if mode == "impact":
                arguments["depth"] = 2
            result = await session.call_tool(mode, arguments)
            answers[mode] = "".join(c.text for c in result.content if c.type == "text")
        return tools, answers


def case_callers(db):
    hits = json.loads(query(db, "--callers", "EnergySystem.RefillTimers", "--json"))
    program = [h for h in hits if h["file"] == "Program.cs"]
    lines = [u["line"] for h in program for u in h["uses"]]
    source = (db.parent / "Program.cs").read_text().splitlines()
    right = [ln for ln in lines if "RefillTimers(" in source[ln - 1]]
    ok = bool(program) and program[0]["member"] == "<top-level>" and right == lines and lines
    return ok, f"Program.cs {program[0]['member'] if program else 'missing'}, lines {lines}"


def case_definition(db):
    out = query(db, "--definition", "RefillTimers")
    ok = "Energy/EnergySystem.cs:" in out and "public int RefillTimers(DateTime now)" in out
    return ok, out.strip().splitlines()[0] if out.strip() else "nothing"


def case_mcp(db):
    tools, answers = asyncio.run(mcp_answers(db, QUESTIONS))
    missing = set(QUESTIONS) - tools
    differ = [m for m, name in QUESTIONS.items()
              if answers[m].strip() != query(db, *flag(m, name)).strip()]
    return not missing and not differ, f"tools missing: {sorted(missing) or 'none'}; " \
                                       f"answers unlike query.py's: {differ or 'none'}"


def case_fresh(db):
    added = db.parent / "Energy" / "Nightly.cs"
    added.write_text(ADDED)
    hits = json.loads(query(db, "--callers", "EnergySystem.RefillTimers", "--json"))
    cli = any(h["file"] == "Energy/Nightly.cs" and h["member"] == "Run" for h in hits)
    added.write_text(ADDED.replace("energy.RefillTimers(now)", "0"))    # the call taken out
    _, answers = asyncio.run(mcp_answers(db, {"callers": "EnergySystem.RefillTimers"}))
    gone = "Nightly.cs" not in answers["callers"]
    return cli and gone, f"added call seen by --callers: {cli}; removed call gone in MCP: {gone}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keep", help="work here and keep it (default: a temporary folder)")
    args = ap.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="refs-check-"))
    tree = work / "sample"
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(ROOT / "tests" / "sample", tree)
    subprocess.run([sys.executable, str(ROOT / "index.py"), "--source", str(tree), "-q"],
                   env=env(), check=True, timeout=1800)
    db, passed = tree / ".codebase-rag", 0
    cases = {"callers": case_callers, "definition": case_definition, "mcp": case_mcp,
             "fresh": case_fresh}
    try:
        for name, case in cases.items():
            try:
                ok, detail = case(db)
            except Exception as e:                       # noqa: BLE001 (a case that broke)
                ok, detail = False, f"{type(e).__name__}: {e}"
            passed += bool(ok)
            print(f"{name:11} {'pass' if ok else 'FAIL'}  {detail}", flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{passed} of {len(cases)} pass")
    return 0 if passed == len(cases) else 1


if __name__ == "__main__":
    sys.exit(main())
