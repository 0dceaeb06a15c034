"""The team cache: a real Chroma server (`chroma run`, from the chromadb wheel) on a free
loopback port, shared by clones of the sample tree. A clone takes what a teammate embedded;
every fault of the server is one warning and a build that completes locally."""
import http.server
import json
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from conftest import SAMPLE, assert_same_index

QUESTION = "how does the energy system refill timers?"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ChromaServer:
    def __init__(self, folder):
        self.folder, self.port = folder, free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = None

    def start(self):
        chroma = Path(sys.executable).parent / "chroma"
        self.proc = subprocess.Popen([str(chroma), "run", "--path", str(self.folder), "--host",
                                      "127.0.0.1", "--port", str(self.port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(300):
            try:
                urllib.request.urlopen(f"{self.url}/api/v2/heartbeat", timeout=1)
                return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("chroma run did not start")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def collection(self):
        """The team cache's collection, through chromadb's own client."""
        import chromadb
        client = chromadb.HttpClient(host="127.0.0.1", port=self.port)
        [col] = [c for c in client.list_collections() if c.name.startswith("codebase-rag-")]
        return col


@pytest.fixture
def server(tmp_path):
    srv = ChromaServer(tmp_path / "server").start()
    yield srv
    srv.stop()


class Proxy(http.server.ThreadingHTTPServer):
    """A reverse proxy in front of the server, as a team would put one: it checks the
    token (chroma run has no auth of its own) and can be made slow."""

    def __init__(self, upstream, token=None, delay=0.0):
        self.upstream, self.token, self.delay = upstream, token, delay
        super().__init__(("127.0.0.1", 0), ProxyHandler)
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        threading.Thread(target=self.serve_forever, daemon=True).start()


class ProxyHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def forward(self):
        time.sleep(self.server.delay)
        if self.server.token and self.headers.get("Authorization") != f"Bearer {self.server.token}":
            self.send_response(401)
            self.end_headers()
            self.wfile.write(b'{"error": "Unauthorized"}')
            return
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) or None
        request = urllib.request.Request(self.server.upstream + self.path, data=body,
                                         method=self.command,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request) as answer:
                status, data = answer.status, answer.read()
        except urllib.error.HTTPError as e:
            status, data = e.code, e.read()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_DELETE = forward


def clone(tmp_path, name):
    tree = tmp_path / name
    shutil.copytree(SAMPLE, tree, ignore=shutil.ignore_patterns(".codebase-rag"))
    return tree


def build(cli, tree, db, url, **env):
    return cli.index(tree, db, "--server", url, env={"CODEBASE_RAG_SERVER_TIMEOUT": "5", **env})


def embedded(proc):
    return int(proc.stdout.split(" windows embedded")[0].rsplit(" ", 1)[1])


def warnings(proc):
    return [line for line in proc.stderr.splitlines() if "team cache" in line]


# ----------------------------------------------------------------------------- sharing
def test_a_second_clone_embeds_nothing_a_teammate_embedded(cli, server, tmp_path):
    first, second = clone(tmp_path, "first"), clone(tmp_path, "second")
    one = build(cli, first, tmp_path / "db1", server.url)
    assert embedded(one) == 42 and server.collection().count() == 42
    two = build(cli, second, tmp_path / "db2", server.url)
    assert embedded(two) == 0 and "42 from the team cache" in two.stdout, two.stdout
    assert warnings(two) == []
    assert "42 windows of the last build came from the team cache" in \
        cli.run("index.py", "--db", tmp_path / "db2", "--status").stdout
    a, b = json.dumps(cli.query(tmp_path / "db1", QUESTION, "-k", "5")), \
        json.dumps(cli.query(tmp_path / "db2", QUESTION, "-k", "5"))
    assert a == b
    fresh = tmp_path / "fresh"
    cli.index(second, fresh)                          # no server: embedded here
    assert_same_index(tmp_path / "db2", fresh)


def test_only_vectors_cross_the_network(cli, server, tmp_path):
    build(cli, clone(tmp_path, "first"), tmp_path / "db1", server.url)
    got = server.collection().get(include=["embeddings", "documents", "metadatas"])
    assert all(len(i) == 40 and int(i, 16) >= 0 for i in got["ids"])    # text hashes
    assert got["documents"] == [None] * 42 and got["metadatas"] == [None] * 42
    identity = server.collection().metadata
    assert identity["model"].endswith("all-MiniLM-L6-v2") and identity["dim"] == 384


def test_push_only_warms_the_cache_and_keeps_no_index(cli, server, tmp_path):
    tree = clone(tmp_path, "ci")
    pushed = cli.run("index.py", "--source", tree, "--server", server.url, "--push-only")
    assert "pushed" in pushed.stdout and "no local index kept" in pushed.stdout
    assert not (tree / ".codebase-rag").exists() and server.collection().count() == 42
    assert embedded(build(cli, clone(tmp_path, "dev"), tmp_path / "db", server.url)) == 0


def test_two_builds_against_one_server_at_once(cli, server, tmp_path):
    trees = [clone(tmp_path, f"clone{i}") for i in range(2)]
    procs = [subprocess.Popen([sys.executable, str(Path(__file__).parents[1] / "index.py"),
                               "--source", str(t), "--db", str(tmp_path / f"db{i}"), "--server",
                               server.url], env=cli.env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
             for i, t in enumerate(trees)]
    for p in procs:
        assert p.wait(timeout=600) == 0, p.stderr.read()
    fresh = tmp_path / "fresh"
    cli.index(trees[0], fresh)
    for i in range(2):
        assert_same_index(tmp_path / f"db{i}", fresh)
    assert server.collection().count() == 42


# ----------------------------------------------------------------------------- faults
def test_a_server_killed_mid_build_leaves_a_complete_local_index(cli, server, tmp_path):
    tree = clone(tmp_path, "tree")
    for i in range(60):
        (tree / f"Extra{i}.cs").write_text(
            f"class Extra{i} {{\n" + "".join(f"    int M{j}() {{ return {i * j}; }}\n"
                                              for j in range(6)) + "}\n")
    db = tmp_path / "db"
    proc = subprocess.Popen([sys.executable, str(Path(__file__).parents[1] / "index.py"),
                             "--source", str(tree), "--db", str(db), "--server", server.url],
                            env={**cli.env, "CODEBASE_RAG_FLUSH": "16",
                                 "CODEBASE_RAG_SERVER_TIMEOUT": "3"},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:               # kill it once uploads have begun
        try:
            if server.collection().count() > 0:
                break
        except Exception:
            pass
        time.sleep(0.2)
    server.stop()
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert len([line for line in err.splitlines() if "team cache" in line]) == 1, err
    fresh = tmp_path / "fresh"
    cli.index(tree, fresh)
    assert_same_index(db, fresh)


def test_a_bad_token_is_one_clear_line(cli, server, tmp_path):
    guarded = Proxy(server.url, token="team-secret")
    tree = clone(tmp_path, "tree")
    bad = build(cli, tree, tmp_path / "bad", guarded.url, CODEBASE_RAG_SERVER_TOKEN="wrong")
    [line] = warnings(bad)
    assert "refused the token" in line and "CODEBASE_RAG_SERVER_TOKEN" in line
    assert embedded(bad) == 42
    good = build(cli, clone(tmp_path, "other"), tmp_path / "good", guarded.url,
                 CODEBASE_RAG_SERVER_TOKEN="team-secret")
    assert warnings(good) == [] and server.collection().count() == 42


def test_a_slow_server_never_hangs_a_build(cli, server, tmp_path):
    slow = Proxy(server.url, delay=4)
    proc = build(cli, clone(tmp_path, "tree"), tmp_path / "db", slow.url,
                 CODEBASE_RAG_SERVER_TIMEOUT="1")
    [line] = warnings(proc)
    assert "timed out" in line.lower() or "timeout" in line.lower(), line
    assert embedded(proc) == 42


def test_another_models_collection_and_vectors_of_another_size_are_refused(cli, server,
                                                                         tmp_path):
    build(cli, clone(tmp_path, "first"), tmp_path / "db1", server.url)
    col = server.collection()
    name, ids = col.name, col.get()["ids"]
    import chromadb
    client = chromadb.HttpClient(host="127.0.0.1", port=server.port)
    client.delete_collection(name)
    other = client.create_collection(name, metadata={**col.metadata, "model": "another/model"})
    other.add(ids=ids, embeddings=[[0.5] * 384] * len(ids))
    proc = build(cli, clone(tmp_path, "second"), tmp_path / "db2", server.url)
    [line] = warnings(proc)
    assert "another/model" in line and embedded(proc) == 42
    client.delete_collection(name)
    small = client.create_collection(name, metadata=col.metadata)
    small.add(ids=ids, embeddings=[[0.5] * 8] * len(ids))
    proc = build(cli, clone(tmp_path, "third"), tmp_path / "db3", server.url)
    [line] = warnings(proc)
    assert "8 dimensions" in line and embedded(proc) == 42


def test_a_poisoned_cache_is_caught_by_the_sample_check(cli, server, tmp_path):
    import numpy as np
    build(cli, clone(tmp_path, "first"), tmp_path / "db1", server.url)
    col = server.collection()
    got = col.get(include=["embeddings"])
    rng = np.random.default_rng(0)
    poison = rng.standard_normal((len(got["ids"]), 384))
    col.upsert(ids=got["ids"], embeddings=(poison / np.linalg.norm(poison, axis=1,
                                                                   keepdims=True)).tolist())
    second = clone(tmp_path, "second")
    proc = build(cli, second, tmp_path / "db2", server.url)
    [line] = warnings(proc)
    assert "differs from this machine's model" in line
    fresh = tmp_path / "fresh"
    cli.index(second, fresh)
    assert_same_index(tmp_path / "db2", fresh)                 # nothing poisoned stayed
