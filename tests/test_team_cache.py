"""The team cache: a real Chroma server (`chroma run`, from the chromadb wheel) and a real
PostgreSQL with pgvector (from the pgserver wheel), each on a free loopback port, shared by
clones of the sample tree. A clone takes what a teammate embedded; every fault of the server
is one warning and a build that completes locally. The tests of what a store must guarantee
run on both rows of team_policy.STORES (the `store` fixture)."""
import json
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import SAMPLE, assert_same_index
from team_proxy import Drip, PgProxy, PostgresServer, Proxy, self_signed

QUESTION = "how does the energy system refill timers?"
WINDOWS = 62                  # the sample's windows: 42 of code, 20 of members' signatures (the
                              # lines no member holds are keywords only: cover_rest)


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


class ChromaRow:
    """The Chroma store, as the tests of both rows see it."""
    name = "chroma"

    def __init__(self, tmp_path):
        self.server = ChromaServer(tmp_path / "server").start()
        self.url = self.server.url

    def hostile(self, **kw):
        """The address of a proxy in front of it (team_proxy.Proxy's arguments)."""
        return Proxy(self.url, **kw).url

    def records(self):
        """[(id, vector, HMAC or None)] of every record it holds."""
        got = self.server.collection().get(include=["embeddings", "metadatas"])
        return [(i, list(v), (m or {}).get("mac"))
                for i, v, m in zip(got["ids"], got["embeddings"], got["metadatas"])]

    def collections(self):
        import chromadb
        return [c.name for c in chromadb.HttpClient(host="127.0.0.1", port=self.server.port)
                .list_collections()]

    def guarded(self, user, password):
        """An address (without credentials) that takes only these."""
        return Proxy(self.url, basic=f"{user}:{password}").url

    def nowhere(self):
        """An address of this kind where nothing listens."""
        return f"http://127.0.0.1:{free_port()}"

    def kill(self):
        self.server.stop()

    stop = kill


class PostgresRow:
    """The PostgreSQL store: a database of a server of its own."""
    name = "postgres"

    def __init__(self, tmp_path):
        self.server = PostgresServer().start()
        self.db = self.server.database("team")
        self.url = self.server.url(self.db)

    def hostile(self, **kw):
        """The address of a proxy in front of it (team_proxy.PgProxy's arguments)."""
        return self.server.url(self.db, port=PgProxy(self.server.port, **kw).port)

    def records(self):
        return [(i, json.loads(v), m) for i, v, m in self.server.sql(
            "SELECT id, embedding::text, mac FROM codebase_rag_vectors", db=self.db)]

    def collections(self):
        return [n for [n] in self.server.sql("SELECT name FROM codebase_rag_identities",
                                             db=self.db)]

    def guarded(self, user, password):
        self.server.sql(f"CREATE ROLE {user} LOGIN PASSWORD '{password}'")
        self.server.sql(f"ALTER DATABASE {self.db} OWNER TO {user}")
        self.server.sql("CREATE EXTENSION vector", db=self.db)      # a superuser's to make
        return f"postgresql://127.0.0.1:{self.server.port}/{self.db}"

    def nowhere(self):
        return self.server.url(self.db, port=free_port())

    def kill(self):
        self.server.stop()

    def stop(self):
        self.server.remove()


@pytest.fixture(params=[ChromaRow, PostgresRow], ids=["chroma", "postgres"])
def store(request, tmp_path):
    row = request.param(tmp_path)
    yield row
    row.stop()


def clone(tmp_path, name):
    tree = tmp_path / name
    shutil.copytree(SAMPLE, tree, ignore=shutil.ignore_patterns(".codebase-rag"))
    return tree


def build(cli, tree, db, url, check=True, **env):
    return cli.index(tree, db, "--server", url, check=check,
                     env={"CODEBASE_RAG_SERVER_TIMEOUT": "5", **env})


def embedded(proc):
    return int(proc.stdout.split(" windows embedded")[0].rsplit(" ", 1)[1])


def warnings(proc):
    return [line for line in proc.stderr.splitlines() if "team cache" in line]


# ----------------------------------------------------------------------------- sharing
def test_a_second_clone_embeds_nothing_a_teammate_embedded(cli, store, tmp_path):
    first, second = clone(tmp_path, "first"), clone(tmp_path, "second")
    one = build(cli, first, tmp_path / "db1", store.url)
    assert embedded(one) == WINDOWS and len(store.records()) == WINDOWS
    two = build(cli, second, tmp_path / "db2", store.url)
    assert embedded(two) == 0 and f"{WINDOWS} from the team cache" in two.stdout, two.stdout
    assert warnings(two) == []
    assert f"{WINDOWS} windows of the last build came from the team cache" in \
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
    assert got["documents"] == [None] * WINDOWS and got["metadatas"] == [None] * WINDOWS
    identity = server.collection().metadata
    assert identity["model"].endswith("all-MiniLM-L6-v2") and identity["dim"] == 384


def test_the_postgres_table_holds_vectors_a_team_can_search(cli, tmp_path):
    row = PostgresRow(tmp_path)
    try:
        build(cli, clone(tmp_path, "first"), tmp_path / "db1", row.url)
        columns = row.server.sql("SELECT column_name, format_type(atttypid, atttypmod) FROM "
                                 "information_schema.columns JOIN pg_attribute ON attrelid = "
                                 "'codebase_rag_vectors'::regclass AND attname = column_name "
                                 "WHERE table_name = 'codebase_rag_vectors'", db=row.db)
        assert sorted(columns) == [["collection", "text"], ["embedding", "vector(384)"],
                                   ["id", "text"], ["mac", "text"]]          # no text, no path
        [(some, vector, _)] = row.records()[:1]
        [[nearest]] = row.server.sql("SELECT id FROM codebase_rag_vectors ORDER BY embedding "
                                     "<=> CAST(:v AS vector) LIMIT 1", db=row.db, v=str(vector))
        assert nearest == some and len(some) == 40
    finally:
        row.stop()


DEBIAN_POSTGRES = Path("/usr/lib/postgresql/15")        # postgresql-15, on this machine kind


@pytest.fixture(scope="module")
def tls_postgres():
    """A PostgreSQL server with TLS on, by a self-signed certificate for localhost and
    127.0.0.1: (its address, up to ?sslmode=, and the certificate's file). The wheel's
    PostgreSQL has no TLS: this is Debian's (no pgvector)."""
    if not DEBIAN_POSTGRES.is_dir():
        pytest.skip("needs Debian's postgresql-15")
    server = PostgresServer(install=DEBIAN_POSTGRES)
    cert, key = self_signed(server.folder / "tls")
    server.own(key)
    server.settings = dict(ssl="on", ssl_cert_file=cert, ssl_key_file=key)
    try:
        server.start()
        yield server.url(server.database("team")) + "?sslmode=", cert
    finally:
        server.remove()


def test_postgres_over_tls_and_its_answer_cap(tls_postgres):
    """sslmode as libpq means it, and the 16 MB cap on the bytes that TLS decrypts."""
    import ssl

    from codebase_rag.team_postgres import PostgresStore
    from codebase_rag.team_wire import TooLarge
    url, cert = tls_postgres
    tls = "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()"
    for mode, encrypted in [("disable", False), ("prefer", True), ("require", True)]:
        used = PostgresStore(url + mode, None).request(lambda con: con.run(tls))
        assert used == [[encrypted]], mode
    PostgresStore(f"{url}verify-full&sslrootcert={cert}", None).heartbeat()
    with pytest.raises(ssl.SSLCertVerificationError):       # the system's CAs
        PostgresStore(url + "verify-full", None).heartbeat()
    store = PostgresStore(url + "require", None)
    with pytest.raises(TooLarge):
        store.request(lambda con: con.run("SELECT repeat('x', 17 << 20)"))
    assert store.request(lambda con: con.run("SELECT length(repeat('x', 15 << 20))"))


def test_a_postgres_certificate_that_fails_verification_is_one_clear_line(tls_postgres):
    """Not "not PostgreSQL's protocol" (the error is a ValueError too): the host, the
    reason, and what to do, in the line a build warns with and --push-only exits with."""
    from codebase_rag.errors import UsageError
    from codebase_rag.team_policy import preflight
    from codebase_rag.team_postgres import PostgresStore
    url, cert = tls_postgres
    store = PostgresStore(url + "verify-full", None)
    with pytest.raises(Exception) as fault:
        store.heartbeat()
    line = store.describe(fault.value)
    assert "certificate failed verification for 127.0.0.1 (self-signed certificate" in line
    assert "sslrootcert=FILE" in line and "PGSSLROOTCERT" in line, line
    with pytest.raises(UsageError) as refused:
        preflight(url + "verify-full", None)
    assert line in str(refused.value) and "nothing pushed" in str(refused.value)
    PostgresStore(f"{url}verify-full&sslrootcert={cert}", None).heartbeat()   # the remedy


def test_a_chroma_certificate_that_fails_verification_is_one_clear_line(server, tmp_path,
                                                                       monkeypatch):
    """https to a Chroma server behind a reverse proxy with a certificate of its own."""
    from codebase_rag.team_chroma import ChromaStore
    cert, key = self_signed(tmp_path / "tls", names="IP:127.0.0.1")
    proxy = Proxy(server.url, tls=(cert, key))

    def fault(url):
        store = ChromaStore(url, None)
        with pytest.raises(Exception) as raised:
            store.heartbeat()
        return store.describe(raised.value)
    line = fault(proxy.url)
    assert "certificate failed verification for 127.0.0.1 (self-signed certificate" in line
    assert "SSL_CERT_FILE=FILE" in line, line
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))          # the remedy: trust its CA
    ChromaStore(proxy.url, None).heartbeat()
    line = fault(proxy.url.replace("127.0.0.1", "localhost"))   # a name it does not hold
    assert "for localhost (" in line and "a host name its certificate holds" in line, line
    line = fault(server.url.replace("http:", "https:"))    # a server that speaks no TLS
    assert "TLS with 127.0.0.1 failed" in line and "speaks TLS" in line, line
    proxy.stop()


def test_push_only_warms_the_cache_and_keeps_no_index(cli, store, tmp_path):
    tree = clone(tmp_path, "ci")
    pushed = cli.run("index.py", "--source", tree, "--server", store.url, "--push-only")
    assert "pushed" in pushed.stdout and "no local index kept" in pushed.stdout
    assert not (tree / ".codebase-rag").exists() and len(store.records()) == WINDOWS
    assert embedded(build(cli, clone(tmp_path, "dev"), tmp_path / "db", store.url)) == 0


def test_two_builds_against_one_server_at_once(cli, store, tmp_path):
    trees = [clone(tmp_path, f"clone{i}") for i in range(2)]
    procs = [subprocess.Popen([sys.executable, str(Path(__file__).parents[1] / "index.py"),
                               "--source", str(t), "--db", str(tmp_path / f"db{i}"), "--server",
                               store.url], env=cli.env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
             for i, t in enumerate(trees)]
    for p in procs:
        assert p.wait(timeout=600) == 0, p.stderr.read()
    fresh = tmp_path / "fresh"
    cli.index(trees[0], fresh)
    for i in range(2):
        assert_same_index(tmp_path / f"db{i}", fresh)
    assert len(store.records()) == WINDOWS


# ----------------------------------------------------------------------------- faults
def test_a_server_killed_mid_build_leaves_a_complete_local_index(cli, store, tmp_path):
    tree = clone(tmp_path, "tree")
    for i in range(60):
        (tree / f"Extra{i}.cs").write_text(
            f"class Extra{i} {{\n" + "".join(f"    int M{j}() {{ return {i * j}; }}\n"
                                              for j in range(6)) + "}\n")
    db = tmp_path / "db"
    proc = subprocess.Popen([sys.executable, str(Path(__file__).parents[1] / "index.py"),
                             "--source", str(tree), "--db", str(db), "--server", store.url],
                            env={**cli.env, "CODEBASE_RAG_FLUSH": "16",
                                 "CODEBASE_RAG_SERVER_TIMEOUT": "3"},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:               # kill it once uploads have begun
        try:
            if store.records():
                break
        except Exception:
            pass
        time.sleep(0.2)
    store.kill()
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
    assert embedded(bad) == WINDOWS
    good = build(cli, clone(tmp_path, "other"), tmp_path / "good", guarded.url,
                 CODEBASE_RAG_SERVER_TOKEN="team-secret")
    assert warnings(good) == [] and server.collection().count() == WINDOWS


def test_a_slow_server_never_hangs_a_build(cli, store, tmp_path):
    proc = build(cli, clone(tmp_path, "tree"), tmp_path / "db", store.hostile(delay=4),
                 CODEBASE_RAG_SERVER_TIMEOUT="1")
    [line] = warnings(proc)
    assert "timed out" in line.lower() or "timeout" in line.lower(), line
    assert embedded(proc) == WINDOWS


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
    assert "another/model" in line and embedded(proc) == WINDOWS
    client.delete_collection(name)
    small = client.create_collection(name, metadata=col.metadata)
    small.add(ids=ids, embeddings=[[0.5] * 8] * len(ids))
    proc = build(cli, clone(tmp_path, "third"), tmp_path / "db3", server.url)
    [line] = warnings(proc)
    assert "8 dimensions" in line and embedded(proc) == WINDOWS


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


# ----------------------------------------------------------------------------- a hostile server
KEY = "the team's shared secret"


def fill(cli, tmp_path, url, **env):
    """A first clone embeds the sample tree and fills the server."""
    assert embedded(build(cli, clone(tmp_path, "first"), tmp_path / "db1", url, **env)) == WINDOWS


def fresh_build(cli, tree, tmp_path):
    cli.index(tree, tmp_path / "fresh")
    return tmp_path / "fresh"


def swap_one(n, got):
    """One member's vector replaced by another member's genuine record (HMAC and all)."""
    got["embeddings"][0] = got["embeddings"][1]
    if got.get("metadatas"):
        got["metadatas"][0] = got["metadatas"][1]
    return got


def test_non_finite_and_scaled_vectors_are_refused_before_they_are_cached(cli, store,
                                                                        tmp_path):
    fill(cli, tmp_path, store.url)

    def bad(n, got):
        vectors = got["embeddings"]
        vectors[0] = [x * 1e40 for x in vectors[0]]   # finite in JSON, inf as float32
        vectors[1][5] = 1e39
        vectors[2] = [x * 100 for x in vectors[2]]    # "confident" negative distances
        vectors[3] = [x * 1.01 for x in vectors[3]]
        return got
    tree, db = clone(tmp_path, "second"), tmp_path / "db2"
    proc = build(cli, tree, db, store.hostile(corrupt=bad))
    [line] = warnings(proc)
    assert "dropped 4 records" in line and "2 not finite" in line, line
    assert "2 not of unit length" in line and embedded(proc) == 4
    cli.index(tree, db)                               # nothing bad was cached: every later
    cli.index(tree, db, "--rebuild")                  # run works, with no server too
    assert_same_index(db, fresh_build(cli, tree, tmp_path))


def test_with_a_key_no_poisoned_record_reaches_the_index(cli, store, tmp_path):
    fill(cli, tmp_path, store.url, CODEBASE_RAG_SERVER_KEY=KEY)
    assert all(len(mac) == 64 for _, _, mac in store.records())
    tree, db = clone(tmp_path, "second"), tmp_path / "db2"
    proc = build(cli, tree, db, store.hostile(corrupt=swap_one),
                 CODEBASE_RAG_SERVER_KEY=KEY, CODEBASE_RAG_SERVER_SAMPLE="0")
    [line] = warnings(proc)
    assert "dropped 1 records" in line and "failed the key check" in line, line
    assert embedded(proc) == 1 and f"{WINDOWS - 1} from the team cache" in proc.stdout
    assert_same_index(db, fresh_build(cli, tree, tmp_path))
    assert "verified with CODEBASE_RAG_SERVER_KEY" in \
        cli.run("index.py", "--db", db, "--status").stdout


def test_a_clone_with_another_key_never_evicts_the_teams_records(cli, store, tmp_path):
    fill(cli, tmp_path, store.url, CODEBASE_RAG_SERVER_KEY=KEY)
    other = build(cli, clone(tmp_path, "other"), tmp_path / "db2", store.url,
                  CODEBASE_RAG_SERVER_KEY="another key")
    assert warnings(other) == [] and embedded(other) == WINDOWS     # a collection of its own
    team = build(cli, clone(tmp_path, "team"), tmp_path / "db3", store.url,
                 CODEBASE_RAG_SERVER_KEY=KEY)
    assert warnings(team) == [] and embedded(team) == 0, team.stderr
    names = store.collections()
    assert len(names) == 2 and not any("secret" in n or "another" in n for n in names)


def test_a_server_that_lies_after_some_lookups_is_caught(cli, server, tmp_path):
    import numpy as np
    fill(cli, tmp_path, server.url)
    rng = np.random.default_rng(0)

    def liar(n, got):
        if n > 6 and got["ids"]:
            poison = rng.standard_normal((len(got["ids"]), 384))
            got["embeddings"] = (poison / np.linalg.norm(poison, axis=1, keepdims=True)).tolist()
        return got
    tree, db = clone(tmp_path, "second"), tmp_path / "db2"
    proc = build(cli, tree, db, Proxy(server.url, corrupt=liar).url, CODEBASE_RAG_FLUSH="4")
    [line] = warnings(proc)
    assert "differs from this machine's model" in line
    assert_same_index(db, fresh_build(cli, tree, tmp_path))


def test_check_finds_and_no_team_cache_repairs_what_a_trusted_cache_planted(cli, server,
                                                                            tmp_path):
    fill(cli, tmp_path, server.url)
    tree, db = clone(tmp_path, "second"), tmp_path / "db2"
    proc = build(cli, tree, db, Proxy(server.url, corrupt=swap_one).url,
                 CODEBASE_RAG_SERVER_SAMPLE="0")            # no key, and no sample: it gets in
    assert warnings(proc) == [] and embedded(proc) == 0
    assert "trusted as is" in cli.run("index.py", "--db", db, "--status").stdout
    check = cli.run("index.py", "--db", db, "--check", check=False)
    # the sample's 82 windows are fewer than --check samples (100): the planted one is among them
    assert check.returncode == 1 and re.search(r"^codebase-rag: 1 of \d+ sampled vectors that "
                                               r"the team cache supplied differ", check.stderr)
    assert "--rebuild --no-team-cache" in check.stderr, check.stderr
    cli.index(tree, db, "--rebuild", "--no-team-cache")
    assert "index OK" in cli.run("index.py", "--db", db, "--check").stdout
    assert_same_index(db, fresh_build(cli, tree, tmp_path))


def test_an_index_from_before_the_origin_table_keeps_working(cli, server, tmp_path):
    fill(cli, tmp_path, server.url)
    tree, db = clone(tmp_path, "second"), tmp_path / "db2"
    build(cli, tree, db, server.url)
    con = sqlite3.connect(db / "index.sqlite")
    assert con.execute("SELECT COUNT(*) FROM vectors WHERE team=1").fetchone() == (WINDOWS,)
    con.execute("ALTER TABLE vectors DROP COLUMN team")   # as the version before left it
    con.commit()
    con.close()
    assert cli.query(db, QUESTION, "-k", "1")
    assert "index OK" in cli.run("index.py", "--db", db, "--check").stdout
    cli.run("index.py", "--db", db, "--status")
    (tree / "Added.cs").write_text("class Added { int Size() { return 1; } }\n")
    build(cli, tree, db, server.url)
    cli.index(tree, db, "--rebuild", "--no-team-cache")
    assert_same_index(db, fresh_build(cli, tree, tmp_path))


def test_null_string_and_unasked_records_are_one_warning(cli, store, tmp_path):
    fill(cli, tmp_path, store.url)

    def odd(n, got):
        got["embeddings"][0] = None
        got["embeddings"][1] = "0.1, 0.2"
        got["embeddings"][3][7] = float("nan")        # NaN, as Python's json writes it
        got["ids"].append("f" * 40)                   # an id nobody asked for
        got["embeddings"].append(got["embeddings"][2])
        return got
    tree, db = clone(tmp_path, "second"), tmp_path / "db2"
    proc = build(cli, tree, db, store.hostile(corrupt=odd))
    [line] = warnings(proc)
    assert "dropped 4 records" in line and "2 not a list of numbers" in line, line
    assert "1 not asked for" in line and "1 not finite" in line and embedded(proc) == 3
    assert_same_index(db, fresh_build(cli, tree, tmp_path))


@pytest.mark.parametrize("answer, says", [
    (lambda n, got: b"\x00<html>garbage", "not JSON"),
    (lambda n, got: {"ids": ["a"], "embeddings": 5}, "malformed"),
    (lambda n, got: {"ids": "abc"}, "malformed"),
], ids=["garbage", "not-a-list", "ids-not-a-list"])
def test_a_broken_answer_is_one_warning(cli, server, tmp_path, answer, says):
    proc = build(cli, clone(tmp_path, "tree"), tmp_path / "db",
                 Proxy(server.url, corrupt=answer).url)
    [line] = warnings(proc)
    assert says in line and embedded(proc) == WINDOWS, line


def test_an_answer_not_in_the_protocol_is_one_warning(cli, store, tmp_path):
    proc = build(cli, clone(tmp_path, "tree"), tmp_path / "db",
                 store.hostile(corrupt=lambda n, got: b"\x00<html>garbage"))
    [line] = warnings(proc)
    says = {"chroma": "not JSON", "postgres": "not PostgreSQL's protocol"}[store.name]
    assert says in line and embedded(proc) == WINDOWS, line


@pytest.mark.parametrize("pad", [17 << 20, 40_000], ids=["one-huge-part", "many-parts"])
def test_an_answer_over_16_mb_is_cut_off(cli, store, tmp_path, pad):
    """One part over the cap (a JSON field, a table row), or many under it that add up."""
    def oversized(n, got):
        return {**got, "pad": "x" * pad} if pad > 16 << 20 else \
            {**got, "ids": [f"{i:040x}" for i in range(500)], "embeddings": ["x" * pad] * 500}
    proc = build(cli, clone(tmp_path, "tree"), tmp_path / "db", store.hostile(corrupt=oversized))
    [line] = warnings(proc)
    assert "larger than 16 MB" in line and embedded(proc) == WINDOWS, line


def test_a_dripping_server_is_cut_off_at_the_deadline(cli, store, tmp_path):
    drip = store.hostile(corrupt=lambda n, got: Drip(got))
    started = time.monotonic()
    proc = build(cli, clone(tmp_path, "tree"), tmp_path / "db", drip,
                 CODEBASE_RAG_SERVER_TIMEOUT="2")
    took = time.monotonic() - started
    [line] = warnings(proc)
    assert "no complete answer within 2 s" in line and embedded(proc) == WINDOWS, line
    assert took < 40, took                            # the answer alone would drip for 50 s


def detached_argv(db, timeout=20):
    """The command line of the detached build writing db, as ps shows it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for proc in Path("/proc").iterdir():
            try:
                argv = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"--detached" in argv and str(db).encode() in argv:
                return int(proc.name), b" ".join(argv).decode()
        time.sleep(0.05)
    raise AssertionError("no detached build found")


def test_credentials_in_the_url_are_used_and_never_shown(cli, store, tmp_path):
    guarded = store.guarded("alice", "s3cret-pw")
    with_creds = guarded.replace("://", "://alice:s3cret-pw@")
    proc = build(cli, clone(tmp_path, "tree"), tmp_path / "db", with_creds)
    assert warnings(proc) == [] and len(store.records()) == WINDOWS
    wrong = guarded.replace("://", "://alice:wrong-pw@")
    bad = build(cli, clone(tmp_path, "other"), tmp_path / "bad", wrong)
    [line] = warnings(bad)
    assert "refused" in line and "wrong-pw" not in bad.stderr + bad.stdout
    both = build(cli, clone(tmp_path, "both"), tmp_path / "both", wrong,
                 CODEBASE_RAG_SERVER_TOKEN="t0ken", check=False)
    assert both.returncode == 2 and len(both.stderr.splitlines()) == 1
    assert "wrong-pw" not in both.stderr and "t0ken" not in both.stderr
    # a background build: the address travels in the environment, and nothing prints it
    tree, db = clone(tmp_path, "bg"), tmp_path / "bg-db"
    cli.run("index.py", "--source", tree, "--db", db, "--background", "--server", wrong,
            env={"CODEBASE_RAG_SERVER_TOKEN": ""})
    pid, argv = detached_argv(db)
    assert "wrong-pw" not in argv and guarded.split("//")[1] not in argv, argv
    while Path(f"/proc/{pid}").exists():
        time.sleep(0.1)
    log = (db / "build.log").read_text()
    assert "refused" in log and "wrong-pw" not in log, log
    assert "wrong-pw" not in cli.run("index.py", "--db", db, "--status").stdout


def test_postgres_takes_its_login_from_the_pg_variables(cli, tmp_path):
    row = PostgresRow(tmp_path)
    try:
        address = row.guarded("alice", "s3cret-pw")       # no user, no password in it
        one = build(cli, clone(tmp_path, "first"), tmp_path / "db1", address,
                    PGUSER="alice", PGPASSWORD="s3cret-pw")
        assert warnings(one) == [] and len(row.records()) == WINDOWS
        passfile = tmp_path / "pgpass"
        passfile.write_text("# host:port:db:user:password\n127.0.0.1:*:*:alice:s3cret-pw\n")
        passfile.chmod(0o644)             # others may read it: libpq ignores it, and so do we
        push = cli.run("index.py", "--source", clone(tmp_path, "ci"), "--server", address,
                       "--push-only", env={"PGUSER": "alice", "PGPASSFILE": str(passfile)},
                       check=False)
        ignored, refused = push.stderr.splitlines()
        assert f"password file {passfile} is not used: its group or others have access to " \
               f"it" in ignored and f"run: chmod 600 {passfile}" in ignored, ignored
        assert push.returncode == 2 and "asks for a password and none was given" in refused, \
            push.stderr
        passfile.chmod(0o600)
        two = build(cli, clone(tmp_path, "second"), tmp_path / "db2", address, PGUSER="alice",
                    PGPASSFILE=str(passfile))
        assert warnings(two) == [] and embedded(two) == 0
        odd = build(cli, clone(tmp_path, "third"), tmp_path / "db3", address + "?sslkey=k",
                    check=False)
        assert odd.returncode == 2 and len(odd.stderr.splitlines()) == 1, odd.stderr
        assert "sslkey" in odd.stderr
        assert not any("s3cret-pw" in p.stdout + p.stderr for p in (one, push, two, odd))
    finally:
        row.stop()


@pytest.mark.parametrize("kind", ["fifo", "device", "huge"])
def test_a_password_file_that_is_no_plain_file_or_huge_is_never_read(cli, tmp_path, kind):
    """PGPASSFILE (or ~/.pgpass) as a FIFO held the build for ever; as /dev/zero it read
    gigabytes. libpq reads only a plain file; here a plain one of at most 1 MB."""
    import os
    import resource
    passfile = tmp_path / "pgpass"
    if kind == "fifo":
        os.mkfifo(passfile, 0o600)
    elif kind == "huge":                  # a matching line, then more than the cap
        passfile.write_text("*:*:*:*:s3cret-pw\n" + "#" * (2 << 20) + "\n")
        passfile.chmod(0o600)
    else:
        passfile = Path("/dev/zero")
    nowhere = f"postgresql://alice@127.0.0.1:{free_port()}/team"

    def bounded():                        # were it read whole, the test must not take the
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))    # machine down
    proc = subprocess.run([sys.executable, str(Path(__file__).parents[1] / "index.py"),
                           "--source", str(clone(tmp_path, "ci")), "--server", nowhere,
                           "--push-only"], env={**cli.env, "PGPASSFILE": str(passfile)},
                          capture_output=True, text=True, timeout=60, preexec_fn=bounded)
    ignored, down = proc.stderr.splitlines()
    why = "is larger than 1 MB" if kind == "huge" else "is not a plain file"
    assert ignored == f"codebase-rag: the password file {passfile} is not used: it {why}"
    assert proc.returncode == 2 and "cannot be reached" in down and "s3cret" not in down


def test_push_only_to_an_unreachable_or_broken_server_fails(cli, store, tmp_path):
    tree = clone(tmp_path, "ci")
    down = cli.run("index.py", "--source", tree, "--server", store.nowhere(), "--push-only",
                   check=False)
    assert down.returncode == 2 and "pushed" not in down.stdout, down.stdout
    assert len(down.stderr.splitlines()) == 1 and "nothing pushed" in down.stderr, down.stderr
    broken = store.hostile(corrupt=lambda n, got: b"garbage")
    proc = cli.run("index.py", "--source", tree, "--server", broken, "--push-only",
                   check=False)
    assert proc.returncode == 2 and "pushed" not in proc.stdout, proc.stdout
    assert "not everything reached the team cache" in proc.stderr.splitlines()[-1]


@pytest.mark.parametrize("address, env, says", [
    ("postgresql://alice:s3cret-pw@[::1/team", {}, "'postgresql://[::1/team' is not a valid URL"),
    ("http://alice:s3cret-pw@[::1", {}, "'http://[::1' is not a valid URL"),
    ("postgresql://alice:s3cret-pw@h1,h2/team", {}, "several hosts or ports (h1,h2, in the "
                                                    "address)"),
    ("postgres://alice:s3cret-pw@h1:5432,h2:5433/team", {}, "several hosts or ports"),
    ("postgresql:///team", {"PGHOST": "h1,h2"}, "several hosts or ports (h1,h2, in PGHOST)"),
    ("postgresql://alice:s3cret-pw@127.0.0.1/team", {"PGPORT": "-1"},
     "port '-1' (from PGPORT) is not a number from 1 to 65535"),
    ("postgresql://alice:s3cret-pw@127.0.0.1/team", {"PGPORT": "70000"}, "(from PGPORT)"),
    ("postgresql://alice:s3cret-pw@127.0.0.1:0/team", {}, "(from the address)"),
], ids=["ipv6-unclosed", "http-ipv6-unclosed", "hosts", "hosts-ports", "pghost", "pgport",
        "pgport-range", "port-0"])
def test_an_address_its_store_would_refuse_is_one_line_before_any_work(cli, tmp_path, address,
                                                                        env, says):
    """A build, and --background before it says the index is ready or being built."""
    tree, db = clone(tmp_path, "tree"), tmp_path / "db"
    for background in ([], ["--background"]):
        proc = cli.index(tree, db, "--server", address, *background, check=False, env=env)
        assert proc.returncode == 2 and proc.stdout == "", proc.stdout
        [line] = proc.stderr.splitlines()
        assert says in line and "s3cret-pw" not in line, line
    assert not db.exists()                # nothing written, no build started


def test_an_address_is_printed_as_its_scheme_host_port_and_path():
    from codebase_rag.team_wire import shown
    assert [shown(url) for url in ("postgres://", "postgresql:///team",
                                   "postgresql://alice:pw@[::1]:5433/team/?password=pw",
                                   "https://alice:pw@[::1/x?token=t")] == \
        ["postgres://", "postgresql:///team", "postgresql://[::1]:5433/team", "https://[::1/x"]


def test_an_address_with_everything_from_the_pg_variables_is_printed_whole(cli, tmp_path):
    proc = cli.run("index.py", "--source", clone(tmp_path, "ci"), "--server", "postgres://",
                   "--push-only", check=False,
                   env={"PGHOST": "127.0.0.1", "PGPORT": str(free_port())})
    [line] = proc.stderr.splitlines()
    assert "the team cache at postgres:// cannot be reached" in line, line


def test_a_failed_background_build_is_the_last_error_in_status(cli, tmp_path):
    """A detached build that fails before its build begins (here: --db names another tree's
    index) says so in --status, not "starting" and then "interrupted"."""
    first, other, db = clone(tmp_path, "first"), clone(tmp_path, "other"), tmp_path / "db"
    cli.index(first, db)
    cli.run("index.py", "--source", other, "--db", db, "--background")
    deadline = time.monotonic() + 120
    while "belongs to" not in (db / "build.log").read_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    status = cli.run("index.py", "--db", db, "--status").stdout
    assert status.startswith("failed: "), status
    assert re.search(r"^last error \(.*\): the index at .* belongs to .*first", status, re.M), \
        status


def test_push_only_leaves_no_temp_files(cli, server, tmp_path):
    tmp = tmp_path / "tmp"
    stale = tmp / "codebase-rag-push-999999999-abcd" / "index"    # a killed push's (no such pid)
    stale.mkdir(parents=True)
    (stale / "index.sqlite").write_bytes(b"x" * 1000)
    pushed = cli.run("index.py", "--source", clone(tmp_path, "ci"), "--server", server.url,
                     "--push-only", env={"TMPDIR": str(tmp)})
    assert "pushed" in pushed.stdout
    assert list(tmp.iterdir()) == []
