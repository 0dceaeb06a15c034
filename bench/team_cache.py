#!/usr/bin/env python3
"""The team cache on a real tree: a second clone with a warm store against a cold local
build, for each team store (Chroma, PostgreSQL with pgvector) in the same run, with the
windows embedded, whether the answers are the same, the bytes that crossed the wire and
the store's disk use.

    python bench/team_cache.py --repo TREE [--stores chroma,postgres] [--warm-runs 3]
                               [--work DIR] [--out bench/RESULTS-team-cache.md]

Everything stays on this machine: `chroma run` and PostgreSQL (the pgserver wheel's, with
pgvector, as the tests start it) listen on 127.0.0.1, each behind a small counting proxy
(also on 127.0.0.1) that measures the bytes each build sends and receives.
Steps, each on a fresh copy of the repo with no index and no model export:
  1. a cold local build (no server): the baseline, and its answers to QUESTIONS;
  2. for each store: a first clone with --server embeds everything and fills the store;
  3. then WARM_RUNS second clones with --server take the vectors from it; each one's
     answers to QUESTIONS are compared with the cold build's.
The section for these stores in --out is rewritten; the rest of the file is kept.
"""
import argparse
import http.client
import http.server
import importlib.util
import json
import re
import shutil
import socket
import socketserver
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import speed  # its runner and environment (a file beside this one)

HERE = Path(__file__).resolve().parent


def tests_module(name):
    """A helper of the tests (tests/ is no package), loaded from its file."""
    spec = importlib.util.spec_from_file_location(name, HERE.parent / "tests" / f"{name}.py")
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PostgresServer = tests_module("team_proxy").PostgresServer    # PostgreSQL with pgvector

QUESTIONS = [                 # werkzeug's; any tree answers them with something
    "how are cookies parsed from a request header?",
    "where does the router match a URL against its rules?",
    "how are multipart form uploads parsed into files?",
    "what answers an HTTP range request?",
    "how does the interactive debugger evaluate code in a frame?",
    "check whether a password matches its salted hash",
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class CountingProxy(http.server.ThreadingHTTPServer):
    """Forwards to the Chroma server and counts the bytes of every request and response."""
    daemon_threads = True

    def __init__(self, upstream_port):
        self.upstream_port, self.sent, self.received = upstream_port, 0, 0
        self.count_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), Forward)
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def reset(self):
        with self.count_lock:
            counts, self.sent, self.received = (self.sent, self.received), 0, 0
        return counts


class Forward(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def relay(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        up = http.client.HTTPConnection("127.0.0.1", self.server.upstream_port, timeout=120)
        headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
        up.request(self.command, self.path, body=body, headers=headers)
        resp = up.getresponse()
        data = resp.read()
        self.send_response(resp.status)
        for k, v in resp.getheaders():
            if k.lower() not in ("content-length", "transfer-encoding", "connection"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        up.close()
        head = len(self.requestline) + sum(len(k) + len(v) + 4 for k, v in self.headers.items())
        with self.server.count_lock:
            self.server.sent += head + len(body)
            self.server.received += len(data) + sum(len(k) + len(v) + 4
                                                    for k, v in resp.getheaders())

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = relay


class CountingRelay(socketserver.ThreadingTCPServer):
    """Forwards TCP to the PostgreSQL server and counts the bytes each way."""
    daemon_threads = True

    def __init__(self, upstream_port):
        self.upstream_port, self.sent, self.received = upstream_port, 0, 0
        self.count_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), Relay)
        self.port = self.server_address[1]
        threading.Thread(target=self.serve_forever, daemon=True).start()

    reset = CountingProxy.reset

    def count(self, sent=0, received=0):
        with self.count_lock:
            self.sent += sent
            self.received += received


class Relay(socketserver.BaseRequestHandler):
    def handle(self):
        up = socket.create_connection(("127.0.0.1", self.server.upstream_port))

        def pump(src, dst, outgoing):
            try:
                while block := src.recv(1 << 16):
                    dst.sendall(block)
                    self.server.count(**{"sent" if outgoing else "received": len(block)})
            except OSError:
                pass
            finally:
                for sock in (src, dst):
                    try:
                        sock.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
        back = threading.Thread(target=pump, args=(up, self.request, False), daemon=True)
        back.start()
        pump(self.request, up, True)
        back.join()
        up.close()


def start_chroma(folder, port):
    proc = subprocess.Popen([str(Path(sys.executable).parent / "chroma"), "run", "--path",
                             str(folder), "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(600):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1)
            return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise speed.Failed("chroma run did not start")


def build(code, tree, server=None):
    """(wall seconds, peak MB, summary line, answers) of one first build of tree."""
    cmd = [sys.executable, str(code / "index.py"), "--source", str(tree), "-q"]
    cmd += ["--server", server] if server else []
    with tempfile.NamedTemporaryFile(suffix=".time") as tf:
        started = time.perf_counter()
        done = subprocess.run(["/usr/bin/time", "-o", tf.name, "-f", "%M"] + cmd,
                              env=speed.child_env(), capture_output=True, text=True)
        wall = time.perf_counter() - started
        if done.returncode != 0:
            raise speed.Failed(f"index.py exited {done.returncode}: {done.stderr[-800:]}")
        peak = int(Path(tf.name).read_text().split()[-1]) / 1024
    warnings = [line for line in done.stderr.splitlines() if "team cache" in line]
    if warnings:
        raise speed.Failed(f"the build warned: {warnings[0]}")
    asked = subprocess.run([sys.executable, str(code / "query.py"), "--db",
                            str(tree / ".codebase-rag"), "--batch", "-", "-k", "10"],
                           input="\n".join(QUESTIONS) + "\n", env=speed.child_env(),
                           capture_output=True, text=True, check=True)
    answers = [[(r["file"], r["start_line"], r["distance"]) for r in json.loads(line)]
               for line in asked.stdout.splitlines()]
    return wall, peak, done.stdout.strip().splitlines()[-1], answers


def windows_embedded(line):
    return sum(int(n.replace(",", "")) for n in
               re.findall(r"([\d,]+) (?:windows embedded|from the team cache)", line))


def du(folder):
    return sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file())


def lscpu_flags():
    flags = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    return next((" ".join(line.split()) for line in flags.splitlines()
                 if line.startswith("Flags")), "Flags: ?")


def start_postgres():
    """(server, its address behind a counting relay, relay)."""
    server = PostgresServer().start()
    db = server.database("team")
    relay = CountingRelay(server.port)
    return server, server.url(db, port=relay.port), relay


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repo", required=True, type=Path, help="the tree to clone")
    p.add_argument("--stores", default="chroma,postgres",
                   help="team stores to measure, in order (chroma, postgres)")
    p.add_argument("--warm-runs", type=int, default=3)
    p.add_argument("--work", type=Path, help="scratch folder (default: a temp dir)")
    p.add_argument("--out", type=Path, default=HERE / "RESULTS-team-cache.md")
    args = p.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="rag-team-"))
    work.mkdir(parents=True, exist_ok=True)
    code = speed.snapshot(work / "code")
    started, machine = time.time(), speed.machine() + "; lscpu " + lscpu_flags()
    speed.log("cold local build (no server)")
    cold = build(code, speed.fresh_copy(args.repo, work / "cold"))
    speed.log(f"  {cold[:3]}")
    rows = {}
    for name in args.stores.split(","):
        if name == "chroma":
            data = work / "chroma"
            shutil.rmtree(data, ignore_errors=True)
            port = free_port()
            server = start_chroma(data, port)
            counter = CountingProxy(port)
            url = counter.url
        else:
            server, url, counter = start_postgres()
        try:
            speed.log(f"{name}: first clone, fills the store")
            fill = build(code, speed.fresh_copy(args.repo, work / "fill"), url)
            fill_bytes = counter.reset()
            speed.log(f"  {fill[:3]} {fill_bytes}")
            warm, warm_bytes = [], []
            for run in range(args.warm_runs):
                speed.log(f"{name}: second clone, warm store, run {run + 1}/{args.warm_runs}")
                warm.append(build(code, speed.fresh_copy(args.repo, work / "warm"), url))
                warm_bytes.append(counter.reset())
                speed.log(f"  {warm[-1][:3]} {warm_bytes[-1]}")
            if name == "chroma":
                disk = du(data)
            else:
                [[disk]] = server.sql("SELECT pg_total_relation_size('codebase_rag_vectors')",
                                      db="team")
        finally:
            counter.shutdown()
            if name == "chroma":
                server.kill()
                server.wait()
            else:
                server.remove()
        rows[name] = (fill, fill_bytes, warm, warm_bytes, disk)
    write(args, machine, cold, rows, started)
    print(args.out.read_text())


STORE_NAMES = {"chroma": "Chroma (`chroma run`)",
               "postgres": "PostgreSQL 16 with pgvector 0.6 (the pgserver wheel's)"}


def write(args, machine, cold, rows, started):
    mb = 1024 * 1024
    title = f"## Stores side by side: {', '.join(rows)}"
    lines = [
        title, "",
        f"Generated by `python bench/team_cache.py {' '.join(sys.argv[1:])}` on "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))} "
        f"({(time.time() - started) / 60:.0f} min).", "",
        f"- machine: {machine}",
        f"- code: {speed.git_state().split(';')[0]}; default precision (auto); repo "
        f"`{args.repo}`; stores: {'; '.join(STORE_NAMES[n] for n in rows)}, each on 127.0.0.1 "
        f"behind a counting proxy on 127.0.0.1 (nothing leaves this machine)",
        f"- every build starts from a fresh copy with no index and no model export; warm: "
        f"median of {args.warm_runs} runs (min-max in brackets); same answers: the top 10 "
        f"(file, line, distance) of {len(QUESTIONS)} questions, against the cold build's", "",
        "| build | wall | vs cold local | windows embedded | same answers | sent | received "
        "| summary line |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
        f"| cold local (no server) | {cold[0]:.1f} s | 1.00x | {embedded(cold[2]):,} | - | - "
        f"| - | `{cold[2]}` |",
    ]
    for name, (fill, fill_bytes, warm, warm_bytes, disk) in rows.items():
        walls = [w[0] for w in warm]
        wall = statistics.median(walls)
        same = sum(all(w[3][i] == cold[3][i] for w in warm) for i in range(len(QUESTIONS)))
        lines += [
            f"| {name}: first clone (fills the store) | {fill[0]:.1f} s | "
            f"{cold[0] / fill[0]:.2f}x | {embedded(fill[2]):,} | "
            f"{sum(fill[3][i] == cold[3][i] for i in range(len(QUESTIONS)))} of "
            f"{len(QUESTIONS)} | {fill_bytes[0] / mb:.1f} MB | {fill_bytes[1] / mb:.1f} MB | "
            f"`{fill[2]}` |",
            f"| {name}: second clone, warm store | {wall:.1f} s ({min(walls):.1f}-"
            f"{max(walls):.1f}) | **{cold[0] / wall:.1f}x** | "
            f"{max(embedded(w[2]) for w in warm):,} (most of {len(warm)}) | {same} of "
            f"{len(QUESTIONS)} | {statistics.median(b[0] for b in warm_bytes) / mb:.1f} MB | "
            f"{statistics.median(b[1] for b in warm_bytes) / mb:.1f} MB | `{warm[-1][2]}` |",
        ]
    lines += ["", "A warm clone's time is walking and chunking, the one-time model export (each "
              "build here starts without one) and the 1% sample of the store's vectors it "
              "embeds again to check them.", ""]
    lines += [f"{name} disk after the first clone: {rows[name][4] / mb:.1f} MB for "
                     f"{windows_embedded(rows[name][0][2]):,} windows." for name in rows]
    if {"chroma", "postgres"} <= set(rows):
        c, p = (statistics.median(w[0] for w in rows[n][2]) for n in ("chroma", "postgres"))
        lines.append(f"Warm second clone: PostgreSQL {p:.1f} s, Chroma {c:.1f} s (PostgreSQL "
                     f"takes {p / c:.2f}x Chroma's time).")
    section = "\n".join(lines) + "\n"
    old = args.out.read_text() if args.out.exists() else "# Team cache\n"
    if title in old:                      # replace this section, keep the others
        before, _, after = old.partition(title)
        after = after[after.index("\n## "):] if "\n## " in after else ""
        text = before + section + after
    else:
        text = old.rstrip("\n") + "\n\n" + section
    args.out.write_text(text)


def embedded(line):
    return int(re.search(r"([\d,]+) windows embedded", line).group(1).replace(",", ""))


if __name__ == "__main__":
    sys.exit(main())
