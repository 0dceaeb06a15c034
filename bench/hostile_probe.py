#!/usr/bin/env python3
"""Issue 42's high and medium cases, from outside the test suite: each runs the commands as a
user or an agent would (index.py, query.py, `codebase-rag setup`, the MCP server on stdio)
against a tree this script writes, with a time limit on every process. Eight cases:

  hostile-build   a first build of a tree holding files shaped to make a regex quadratic
                  (capitals, spaces after `int`, `PRIVATE_` runs, doc lines of spaces,
                  unclosed tags) ends in time and the sample's answer is still first
  hostile-search  the same files added to a built index: the next search takes them in
                  (its sweep) in time, and the MCP server's index_status answers meanwhile
  folder-links    links to / and to the tree's parent added after a build: a search is quick,
                  names no path outside the tree and no file twice
  setup-links     `setup` with .claude, CLAUDE.md or .mcp.json linked out of the project:
                  exit 2, one line, nothing written outside; CLAUDE.md -> AGENTS.md written
                  through, the link kept
  lost-end        `setup` after the block's end marker was removed and notes added: exit 2,
                  nothing changed; `setup --remove` keeps CLAUDE.md and the notes
  begin-markers   `setup` on a CLAUDE.md of 40,000 begin markers: one line, in seconds
  mcp-nested      one MCP request nested 5,000 deep: a JSON-RPC error, the server still up
  non-utf8        a command-line question with a non-UTF-8 byte: exit 2, one line

    python bench/hostile_probe.py [--checkout DIR] [--keep DIR]

--checkout runs another checkout's commands (an older main, to see the cases fail there)
with this interpreter. Prints a table; exits 0 only if all eight pass.
"""
import argparse
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "how does the energy system refill timers?"
EXPECTED = "RefillTimers"
SIZE = 300_000                  # characters of each hostile run: hours if quadratic, ms if not


def hostile_files():
    """{path: text}: one file per shape of the issue, each a valid-looking source file."""
    caps, spaces = "ACGT" * (SIZE // 4), " " * SIZE
    return {
        "hostile/dna.py": f'SEQUENCE = "{caps}"\n\ndef read():\n    return SEQUENCE\n',
        "hostile/dna.cs": f'class Dna {{ const string S = "{caps}"; }}\n',
        "hostile/spaces.c": f"int{spaces}x;\nint main(void) {{ return 0; }}\n",
        "hostile/spaces.h": f"int{spaces}y;\n",
        "hostile/private.cpp": "class A {\n" + "PRIVATE_" * (SIZE // 8) + "\n};\n",
        "hostile/doc.go": f"package hostile\n\n//{spaces}x\nfunc F() {{}}\n",
        "hostile/Doc.java": f"class Doc {{\n  /**{spaces}@see x\n   */\n  void f() {{}}\n}}\n",
        "hostile/doc.rs": f"///{spaces}`x`\nfn f() {{}}\n",
        "hostile/tags.ts": "/** " + "{@link " * (SIZE // 7) + "\n */\nexport function f() {}\n",
        "hostile/tags.cs": "class T {\n/// " + "<see " * (SIZE // 5) + "\nvoid F() {}\n}\n",
    }


class Probe:
    def __init__(self, checkout, work):
        self.checkout, self.work = Path(checkout), Path(work)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("CODEBASE_RAG_")}
        self.env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
                        PYTHONPATH=str(self.checkout), CODEBASE_RAG_CACHE=str(work / "cache"))

    def run(self, args, timeout, cwd=None, stdin=None):
        """(exit code or 'timeout', stdout, stderr, seconds)."""
        started = time.monotonic()
        try:
            p = subprocess.run([sys.executable, *map(str, args)], cwd=cwd, env=self.env,
                               input=stdin, capture_output=True, timeout=timeout)
            code, out, err = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            code, out, err = "timeout", e.stdout or b"", e.stderr or b""
        return code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), \
            time.monotonic() - started

    def index(self, tree, *more, timeout=600):
        return self.run([self.checkout / "index.py", "--source", tree, *more], timeout)

    def query(self, tree, question, timeout=60, k=5):
        return self.run([self.checkout / "query.py", "--db", tree / ".codebase-rag", "--json",
                         "-k", k, question], timeout)

    def setup(self, project, *more, timeout=30):
        return self.run(["-m", "codebase_rag", "setup", *more], timeout, cwd=project)

    def sample_tree(self, name):
        tree = self.work / name
        shutil.copytree(ROOT / "tests" / "sample", tree)
        return tree


class Server:
    """query.py --mcp on stdio, spoken to line by line (MCP's stdio transport is one JSON
    message per line), so that a request the SDK's client would refuse to send can be sent."""

    def __init__(self, probe, db):
        self.proc = subprocess.Popen([sys.executable, str(probe.checkout / "query.py"), "--mcp",
                                      "--db", str(db)], env=probe.env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def __enter__(self):
        self.send_raw(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "hostile-probe", "version": "1"}}}))
        if self.read(1, timeout=120) is None:
            raise AssertionError("the MCP server did not answer initialize")
        self.send_raw('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        return self

    def __exit__(self, *_):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.returncode = self.proc.returncode

    returncode = None

    def send_raw(self, text):
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()

    def read(self, ident, timeout):
        """The answer to request `ident`, or None in time."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return None
            if line is None:
                return None
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if message.get("id") == ident and ("id" in message or "error" in message):
                return message

    def call(self, tool, arguments, ident, timeout=120):
        self.send_raw(json.dumps({"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                                  "params": {"name": tool, "arguments": arguments}}))
        return self.read(ident, timeout)


def hits(out):
    try:
        return json.loads(out)
    except ValueError:
        return None


def one_line(err):
    lines = [ln for ln in err.splitlines() if ln.strip()]
    return len(lines) == 1 and "Traceback" not in err


def write_all(tree, files):
    for rel, text in files.items():
        path = tree / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def case_hostile_build(p):
    tree = p.sample_tree("hostile-build")
    write_all(tree, hostile_files())
    code, _, err, took = p.index(tree, timeout=900)
    if code != 0:
        return False, f"build: exit {code} after {took:.0f} s: {err.strip()[-200:]}"
    code, out, err, qtook = p.query(tree, QUESTION)
    found = hits(out) if code == 0 else None
    ok = bool(found) and found[0]["member"].endswith(EXPECTED)
    return ok, f"build {took:.0f} s, query {qtook:.1f} s, first: " \
               f"{found[0]['member'] if found else (code, err.strip()[-120:])}"


def case_hostile_search(p):
    tree = p.sample_tree("hostile-search")
    code, _, err, _ = p.index(tree)
    if code != 0:
        return False, f"build: exit {code}: {err.strip()[-200:]}"
    write_all(tree, hostile_files())
    with Server(p, tree / ".codebase-rag") as server:
        server.call("search_code", {"question": QUESTION}, ident=2)      # absorbs them
        started = time.monotonic()
        status = server.call("index_status", {}, ident=3, timeout=30)
        status_took = time.monotonic() - started
    code, out, err, took = p.query(tree, "DNA sequence of capitals")
    ok = code == 0 and status is not None and status_took < 10 and took < 30
    return ok, f"index_status {status_took:.1f} s after a search, query {took:.1f} s " \
               f"(exit {code})"


def case_folder_links(p):
    tree = p.sample_tree("links")
    code, _, err, _ = p.index(tree)
    if code != 0:
        return False, f"build: exit {code}: {err.strip()[-200:]}"
    os.symlink("/", tree / "rootlink")
    os.symlink("..", tree / "up")
    code, out, err, took = p.query(tree, QUESTION, k=20, timeout=120)
    found = hits(out) or []
    files = [h["file"] for h in found]
    outside = [f for f in files if f.startswith(("rootlink/", "up/"))]
    twice = len(files) != len(set((h["file"], h["start_line"]) for h in found))
    ok = code == 0 and took < 15 and not outside and not twice and \
        err.count("\n") < 20
    return ok, f"query {took:.1f} s, exit {code}, {len(outside)} results through the links, " \
               f"{err.count(chr(10))} lines on stderr"


def case_setup_links(p):
    outside = p.work / "outside"
    (outside / "claude").mkdir(parents=True)
    (outside / "notes.md").write_text("someone's global notes\n")
    (outside / "mcp.json").write_text("{}\n")
    before = {f: f.read_bytes() for f in outside.rglob("*") if f.is_file()}
    verdicts = []
    for link, target in ((".claude", outside / "claude"), ("CLAUDE.md", outside / "notes.md"),
                         (".mcp.json", outside / "mcp.json")):
        project = p.work / f"setup-{link.strip('.').lower()}"
        project.mkdir()
        os.symlink(target, project / link)
        code, _, err, _ = p.setup(project)
        after = {f: f.read_bytes() for f in outside.rglob("*") if f.is_file()}
        verdicts.append((link, code == 2 and one_line(err) and after == before
                         and not (project / ".claude" / "settings.json").exists()
                         if link != ".claude" else code == 2 and after == before))
    project = p.work / "setup-agents"
    project.mkdir()
    (project / "AGENTS.md").write_text("# Agents\n")
    os.symlink("AGENTS.md", project / "CLAUDE.md")
    code, _, err, _ = p.setup(project)
    through = code == 0 and (project / "CLAUDE.md").is_symlink() and \
        "codebase-rag" in (project / "AGENTS.md").read_text()
    verdicts.append(("CLAUDE.md -> AGENTS.md", through))
    return all(ok for _, ok in verdicts), ", ".join(f"{n}: {'held' if ok else 'FAILED'}"
                                                    for n, ok in verdicts)


def case_lost_end(p):
    project = p.work / "lost-end"
    project.mkdir()
    (project / "CLAUDE.md").write_text("# My project\n\nMy own rules.\n")
    code, _, err, _ = p.setup(project)
    if code != 0:
        return False, f"first setup: exit {code}: {err.strip()[-200:]}"
    claude = project / "CLAUDE.md"
    text = claude.read_text()
    end = "<!-- codebase-rag: end -->"
    damaged = text.replace(end, "") + "\nNotes I added after the block.\n"
    claude.write_text(damaged)
    code, _, err, _ = p.setup(project)
    kept = claude.read_text() == damaged
    code2, _, err2, _ = p.setup(project)
    code3, _, err3, _ = p.setup(project, "--remove")
    survived = claude.exists() and "Notes I added" in claude.read_text() and \
        "My own rules." in claude.read_text()
    ok = code == 2 and one_line(err) and kept and code2 == 2 and survived
    return ok, f"setup exit {code} ({'unchanged' if kept else 'CHANGED'}), again {code2}, " \
               f"--remove exit {code3}, CLAUDE.md {'kept with the notes' if survived else 'LOST'}"


def case_begin_markers(p):
    project = p.work / "markers"
    project.mkdir()
    (project / "CLAUDE.md").write_text("<!-- codebase-rag: begin -->\n" * 40_000)
    code, _, err, took = p.setup(project, timeout=60)
    ok = code == 2 and one_line(err) and took < 10
    return ok, f"exit {code} in {took:.1f} s: {err.strip()[:100]}"


def case_mcp_nested(p):
    tree = p.sample_tree("nested")
    code, _, err, _ = p.index(tree)
    if code != 0:
        return False, f"build: exit {code}: {err.strip()[-200:]}"
    deep = "[" * 5000 + "]" * 5000
    with Server(p, tree / ".codebase-rag") as server:
        server.send_raw('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":'
                        '"search_code","arguments":{"question":' + deep + '}}}')
        answer = server.read(None, timeout=30)   # a parse error: JSON-RPC's id is null
        after = server.call("index_status", {}, ident=3, timeout=30)
    error = answer and answer.get("error", {}).get("code")
    ok = error == -32700 and after is not None and server.returncode in (None, 0)
    return ok, f"nested: {f'JSON-RPC error {error}' if error else 'no error answer'}, " \
               f"index_status after it: {'answered' if after else 'no answer'}"


def case_non_utf8(p):
    tree = p.sample_tree("bytes")
    code, _, err, _ = p.index(tree)
    if code != 0:
        return False, f"build: exit {code}: {err.strip()[-200:]}"
    started = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, str(p.checkout / "query.py"), "--db",
                               str(tree / ".codebase-rag"), b"energy \xff refill"],
                              env=p.env, capture_output=True, timeout=60)
        code, err = proc.returncode, proc.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        code, err = "timeout", ""
    ok = code == 2 and one_line(err) and "run --check" not in err
    return ok, f"exit {code} in {time.monotonic() - started:.1f} s: {err.strip()[:120]}"


CASES = {"hostile-build": case_hostile_build, "hostile-search": case_hostile_search,
         "folder-links": case_folder_links, "setup-links": case_setup_links,
         "lost-end": case_lost_end, "begin-markers": case_begin_markers,
         "mcp-nested": case_mcp_nested, "non-utf8": case_non_utf8}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkout", default=str(ROOT), help="the checkout whose commands run")
    ap.add_argument("--keep", help="work here and keep it (default: a temporary folder)")
    ap.add_argument("--only", nargs="*", choices=list(CASES), help="these cases only")
    args = ap.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="hostile-probe-"))
    work.mkdir(parents=True, exist_ok=True)
    p = Probe(Path(args.checkout).resolve(), work)
    passed = 0
    chosen = args.only or list(CASES)
    try:
        for name in chosen:
            try:
                ok, detail = CASES[name](p)
            except Exception as e:                       # noqa: BLE001 (a case that broke)
                ok, detail = False, f"{type(e).__name__}: {e}"
            passed += ok
            print(f"{name:15} {'pass' if ok else 'FAIL'}  {detail}", flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{passed} of {len(chosen)} pass")
    return 0 if passed == len(chosen) else 1


if __name__ == "__main__":
    sys.exit(main())
