#!/usr/bin/env python3
"""How long `query.py --mcp` takes to answer initialize and tools/list, from spawn, the way
Claude Code starts it (stdio, cwd = the project). Headless Claude Code (`claude -p`) connects
a server without server-level "alwaysLoad" in the background, so a server slower than the
session's first turns is not offered to the model in those turns.

    python bench/e2e/mcp_handshake.py CHECKOUT PROJECT [N]
"""
import json
import statistics
import subprocess
import sys
import time


def once(tool, project):
    t0 = time.perf_counter()
    p = subprocess.Popen([f"{tool}/.venv/bin/python", f"{tool}/query.py", "--mcp"], cwd=project,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)

    def send(o):
        p.stdin.write(json.dumps(o) + "\n")
        p.stdin.flush()

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                     "clientInfo": {"name": "e2e", "version": "1"}}})
    p.stdout.readline()
    t1 = time.perf_counter()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    tools = json.loads(p.stdout.readline())["result"]["tools"]
    t2 = time.perf_counter()
    p.kill()
    p.wait()
    return t1 - t0, t2 - t0, [t["name"] for t in tools]


def main():
    tool, project = sys.argv[1:3]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    init, listed = [], []
    for _ in range(n):
        a, b, names = once(tool, project)
        init.append(a)
        listed.append(b)
    print(f"initialize from spawn: median {statistics.median(init):.2f} s "
          f"(min {min(init):.2f}, max {max(init):.2f}); tools/list: median "
          f"{statistics.median(listed):.2f} s; tools {names}; n={n}")


if __name__ == "__main__":
    main()
