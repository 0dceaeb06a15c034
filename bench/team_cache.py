#!/usr/bin/env python3
"""The team cache on a real tree: a second clone with a warm server against a cold local
build, in the same run, with the bytes that crossed the wire and the server's disk use.

    python bench/team_cache.py --repo JELLYFIN [--warm-runs 3] [--work DIR]
                               [--out bench/RESULTS-team-cache.md]

Everything stays on this machine: `chroma run` listens on 127.0.0.1, behind a small
counting proxy (also on 127.0.0.1) that measures the bytes each build sends and receives.
Steps, each on a fresh copy of the repo with no index and no model export:
  1. a cold local build (no server): the baseline;
  2. a first clone with --server: embeds everything, fills the server;
  3. WARM_RUNS second clones with --server: take the vectors from the server.
"""
import argparse
import http.client
import http.server
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import speed  # noqa: E402


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
    """(wall seconds, peak MB, summary line) of one first build of tree."""
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
    return wall, peak, done.stdout.strip().splitlines()[-1]


def windows_embedded(line):
    return sum(int(n.replace(",", "")) for n in
               re.findall(r"([\d,]+) (?:windows embedded|from the team cache)", line))


def du(folder):
    return sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file())


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repo", required=True, type=Path, help="the tree to clone (jellyfin)")
    p.add_argument("--warm-runs", type=int, default=3)
    p.add_argument("--work", type=Path, help="scratch folder (default: a temp dir)")
    p.add_argument("--out", type=Path, default=HERE / "RESULTS-team-cache.md")
    args = p.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="rag-team-"))
    work.mkdir(parents=True, exist_ok=True)
    code = speed.snapshot(work / "code")
    started = time.time()
    data = work / "server"
    shutil.rmtree(data, ignore_errors=True)
    port = free_port()
    chroma = start_chroma(data, port)
    proxy = CountingProxy(port)
    try:
        speed.log("cold local build (no server)")
        cold = build(code, speed.fresh_copy(args.repo, work / "cold"))
        speed.log(f"  {cold}")
        speed.log("first clone, fills the server")
        fill = build(code, speed.fresh_copy(args.repo, work / "fill"), proxy.url)
        fill_bytes = proxy.reset()
        speed.log(f"  {fill} {fill_bytes}")
        warm, warm_bytes = [], []
        for run in range(args.warm_runs):
            speed.log(f"second clone, warm server, run {run + 1}/{args.warm_runs}")
            warm.append(build(code, speed.fresh_copy(args.repo, work / "warm"), proxy.url))
            warm_bytes.append(proxy.reset())
            speed.log(f"  {warm[-1]} {warm_bytes[-1]}")
    finally:
        proxy.shutdown()
        chroma.kill()
        chroma.wait()
    disk = du(data)
    windows = windows_embedded(fill[2])
    write(args, cold, fill, fill_bytes, warm, warm_bytes, disk, windows, started)
    print(args.out.read_text())


def write(args, cold, fill, fill_bytes, warm, warm_bytes, disk, windows, started):
    warm_wall = statistics.median(w[0] for w in warm)
    mb = 1024 * 1024
    lines = [
        "# Team cache", "",
        f"Generated by `python bench/team_cache.py {' '.join(sys.argv[1:])}` on "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))} "
        f"({(time.time() - started) / 60:.0f} min).", "",
        f"- machine: {speed.machine()}",
        f"- code: {speed.git_state().split(';')[0]}; default precision (auto); repo "
        f"`{args.repo}`; server: `chroma run` on 127.0.0.1 behind a counting proxy on "
        f"127.0.0.1 (nothing leaves this machine)",
        f"- every build starts from a fresh copy with no index and no model export; warm: "
        f"median of {len(warm)} runs (min-max in brackets)", "",
        "| build | wall | vs cold local | peak RSS | sent | received | summary line |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        f"| cold local (no server) | {cold[0]:.0f} s | 1.00x | {cold[1]:.0f} MB | - | - | "
        f"`{cold[2]}` |",
        f"| first clone (fills the server) | {fill[0]:.0f} s | {cold[0] / fill[0]:.2f}x | "
        f"{fill[1]:.0f} MB | {fill_bytes[0] / mb:.1f} MB | {fill_bytes[1] / mb:.1f} MB | "
        f"`{fill[2]}` |",
        f"| second clone, warm server | {warm_wall:.1f} s ({min(w[0] for w in warm):.1f}-"
        f"{max(w[0] for w in warm):.1f}) | **{cold[0] / warm_wall:.1f}x** | "
        f"{statistics.median(w[1] for w in warm):.0f} MB | "
        f"{statistics.median(b[0] for b in warm_bytes) / mb:.1f} MB | "
        f"{statistics.median(b[1] for b in warm_bytes) / mb:.1f} MB | `{warm[-1][2]}` |", "",
        f"Server disk after the first clone: {disk / mb:.0f} MB for {windows:,} windows, "
        f"**{disk / mb / max(windows, 1) * 10000:.0f} MB per 10k windows**.",
        f"Target: warm second clone ≥ 10x faster than the cold local build: "
        f"{'**pass**' if cold[0] / warm_wall >= 10 else '**FAIL**'}.",
    ]
    args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
