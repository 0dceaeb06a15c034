"""Test-only servers for the team cache: a reverse proxy in front of a real `chroma run`, a
real PostgreSQL server with pgvector (from the pgserver wheel), and a proxy in front
of that. The proxies forward everything, can check a token or basic-auth credentials (the
PostgreSQL server checks its own), be slow, and misbehave on the answers to lookups as a
broken or hostile team cache would."""
import base64
import http.server
import importlib.util
import json
import os
import pwd
import shutil
import signal
import socket
import socketserver
import ssl
import struct
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path


class Proxy(http.server.ThreadingHTTPServer):
    """upstream: the real server's URL. token: the bearer token it demands. basic: the
    "user:password" it demands. delay: seconds before each answer. corrupt(n, answer):
    given the n-th lookup's answer (a dict of ids, embeddings and metadatas, as Chroma
    sends it; n from 1), returns what to send instead: a dict, raw bytes, or a Drip.
    tls: (certificate, key) files: it speaks https with them, as a reverse proxy that
    terminates TLS does."""
    daemon_threads = True

    def __init__(self, upstream, token=None, basic=None, delay=0.0, corrupt=None, tls=None):
        self.upstream, self.token, self.basic, self.delay = upstream, token, basic, delay
        self.corrupt, self.lookups, self.seen = corrupt, 0, []
        super().__init__(("127.0.0.1", 0), ProxyHandler)
        scheme = "http"
        if tls:                        # a handshake the client refuses is the accept's error
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*map(str, tls))
            self.socket, scheme = context.wrap_socket(self.socket, server_side=True), "https"
        self.url = f"{scheme}://127.0.0.1:{self.server_address[1]}"
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def stop(self):
        self.shutdown()
        self.server_close()


def self_signed(folder, names="DNS:localhost,IP:127.0.0.1"):
    """(certificate, key) files of a new self-signed certificate for these names (openssl's
    subjectAltName), valid for a day."""
    folder.mkdir(parents=True, exist_ok=True)
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-keyout", str(key), "-out", str(cert), "-subj", "/CN=codebase-rag test",
                    "-addext", f"subjectAltName={names}"], check=True, capture_output=True)
    key.chmod(0o600)
    return cert, key


class Drip:
    """An answer (a dict or raw bytes) sent one byte every `pause` seconds."""
    pause = 0.5

    def __init__(self, answer):
        self.answer = answer


class ProxyHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def refuse(self):
        self.send_response(401)
        self.end_headers()
        self.wfile.write(b'{"error": "Unauthorized"}')

    def forward(self):
        server = self.server
        time.sleep(server.delay)
        given = self.headers.get("Authorization")
        server.seen.append(given)
        if server.token and given != f"Bearer {server.token}":
            return self.refuse()
        if server.basic and given != "Basic " + base64.b64encode(server.basic.encode()).decode():
            return self.refuse()
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) or None
        request = urllib.request.Request(server.upstream + self.path, data=body,
                                         method=self.command,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request) as answer:
                status, data = answer.status, answer.read()
        except urllib.error.HTTPError as e:
            status, data = e.code, e.read()
        if server.corrupt and self.command == "POST" and self.path.endswith("/get"):
            server.lookups += 1
            data = server.corrupt(server.lookups, json.loads(data))
            drip = isinstance(data, Drip)
            data = data.answer if drip else data
            data = json.dumps(data).encode() if isinstance(data, dict) else data
            data = Drip(data) if drip else data
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        if not isinstance(data, Drip) and len(data) < 1 << 20:
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()             # HTTP/1.0: without a length, the answer ends at close
        try:
            if isinstance(data, Drip):
                for i in range(len(data.answer)):
                    self.wfile.write(data.answer[i:i + 1])
                    self.wfile.flush()
                    time.sleep(data.pause)
            else:
                self.wfile.write(data)
        except OSError:                # the client gave up
            pass

    do_GET = do_POST = do_PUT = do_DELETE = forward


# ----------------------------------------------------------------------------- PostgreSQL
PG_PASSWORD = "team-cache-test"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """A real PostgreSQL with the real pgvector, from the pgserver wheel, in a folder
    of its own: TCP on 127.0.0.1 (scram-sha-256, user postgres, password PG_PASSWORD) and a
    Unix socket in that folder (trusted, for the tests' own queries). Postgres refuses to
    run as root: as root, it runs as nobody. settings: more of postgres's -c settings.
    install: another PostgreSQL's folder of bin/ (Debian's has TLS, and no pgvector)."""

    def __init__(self, install=None, **settings):
        self.port, self.settings = free_port(), settings
        self.folder = Path(tempfile.mkdtemp(prefix="codebase-rag-pg-"))
        self.as_user, self.proc = {}, None
        if os.getuid() == 0:
            nobody = pwd.getpwnam("nobody")
            self.as_user = dict(user=nobody.pw_uid, group=nobody.pw_gid, extra_groups=[])
            os.chown(self.folder, nobody.pw_uid, nobody.pw_gid)
        # the wheel's binaries, found without importing its Python side
        self.install = Path(install or Path(importlib.util.find_spec("pgserver").origin).parent
                            / "pginstall")
        if self.as_user and not all(p.stat().st_mode & 0o001 for p in self.install.parents):
            # a folder above the wheel is closed to nobody: run a copy from its own folder
            self.install = Path(shutil.copytree(self.install, self.folder / "pginstall",
                                                ignore=shutil.ignore_patterns("include")))
        self.socket = f"{self.folder}/.s.PGSQL.{self.port}"

    def start(self):
        data, secret = self.folder / "data", self.folder / "password"
        secret.write_text(PG_PASSWORD)
        self.own(secret)
        subprocess.run([str(self.install / "bin" / "initdb"), "-D", str(data), "-U", "postgres",
                        "--auth-local=trust", "--auth-host=scram-sha-256",
                        f"--pwfile={secret}", "-E", "UTF8", "--no-sync", "--no-instructions"],
                       cwd=self.folder, capture_output=True, check=True, **self.as_user)
        self.proc = subprocess.Popen(
            [str(self.install / "bin" / "postgres"), "-D", str(data), "-k", str(self.folder),
             "-p", str(self.port), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off",
             "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
             *[f"-c{k}={v}" for k, v in self.settings.items()]],
            cwd=self.folder, stdout=subprocess.DEVNULL, stderr=open(self.folder / "log", "wb"),
            **self.as_user)
        for _ in range(300):
            try:
                self.sql("SELECT 1")
                return self
            except Exception:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.1)
        raise RuntimeError("postgres did not start")

    def own(self, path):
        """Make a file of this test the server's (a TLS key must be)."""
        if self.as_user:
            os.chown(path, self.as_user["user"], self.as_user["group"])
        return path

    def sql(self, statement, db="postgres", **params):
        """Run one statement as the superuser, over the Unix socket."""
        import pg8000.native
        con = pg8000.native.Connection("postgres", unix_sock=self.socket, database=db)
        try:
            return con.run(statement, **params)
        finally:
            con.close()

    def database(self, name):
        self.sql(f'CREATE DATABASE "{name}"')
        return name

    def url(self, db, port=None, user="postgres", password=PG_PASSWORD):
        login = f"{user}:{password}@" if password is not None else f"{user}@"
        return f"postgresql://{login}127.0.0.1:{port or self.port}/{db}"

    def stop(self):
        """An immediate shutdown: the server and every backend exit at once."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            self.proc.wait(timeout=60)

    def remove(self):
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


def read_exactly(sock, n):
    data = b""
    while len(data) < n:
        block = sock.recv(n - len(data))
        if not block:
            raise ConnectionError("closed")
        data += block
    return data


def message(kind, body):
    return kind + struct.pack("!i", len(body) + 4) + body


def lookup_rows(got):
    """The DataRows (and CommandComplete) a lookup's answer in the proxies' shape is."""
    rows = []
    pad = [("pad", got["pad"], None)] if "pad" in got else []
    metas = got.get("metadatas") or []
    metas = metas + [None] * (len(got["ids"]) - len(metas))
    for i, vec, meta in [*zip(got["ids"], got["embeddings"], metas), *pad]:
        text = vec if isinstance(vec, str) or vec is None else json.dumps(vec)
        mac = meta.get("mac") if isinstance(meta, dict) else None
        fields = [f.encode() if f is not None else None for f in (i, text, mac)]
        rows.append(message(b"D", struct.pack("!h", 3) + b"".join(
            struct.pack("!i", -1) if f is None else struct.pack("!i", len(f)) + f
            for f in fields)))
    return b"".join(rows) + message(b"C", b"SELECT %d\0" % len(rows))


class PgProxy(socketserver.ThreadingTCPServer):
    """A proxy in front of the PostgreSQL server on upstream_port, as Proxy is in front of
    Chroma: delay (seconds before each request goes on) and corrupt(n, answer) for the n-th
    lookup's answer (its rows as a dict of ids, embeddings and metadatas)."""
    daemon_threads = True

    def __init__(self, upstream_port, delay=0.0, corrupt=None):
        self.upstream_port, self.delay, self.corrupt, self.lookups = upstream_port, delay, \
            corrupt, 0
        super().__init__(("127.0.0.1", 0), PgProxyHandler)
        self.port = self.server_address[1]
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def stop(self):
        self.shutdown()
        self.server_close()


class PgProxyHandler(socketserver.BaseRequestHandler):
    def handle(self):
        client, server = self.request, self.server
        first = read_exactly(client, 8)
        if struct.unpack("!ii", first) == (8, 80877103):      # SSLRequest: no TLS here
            client.sendall(b"N")
            first = b""
        up = socket.create_connection(("127.0.0.1", server.upstream_port))
        up.sendall(first)
        threading.Thread(target=self.requests, args=(client, up), daemon=True).start()
        try:
            self.answers(up, client)
        except OSError:
            pass
        finally:
            up.close()

    def requests(self, client, up):
        try:
            while block := client.recv(65536):
                time.sleep(self.server.delay)
                up.sendall(block)
        except OSError:
            pass
        finally:
            up.close()

    def answers(self, up, client):
        server, lookup = self.server, None
        while True:
            head = read_exactly(up, 5)
            body = read_exactly(up, struct.unpack("!i", head[1:])[0] - 4)
            kind = head[:1]
            if kind == b"T":
                names, at = [], 2
                for _ in range(struct.unpack("!h", body[:2])[0]):
                    end = body.index(b"\0", at)
                    names.append(body[at:end])
                    at = end + 1 + 18             # the name, then six numbers of 18 bytes
                lookup = dict(row=head + body, ids=[], embeddings=[], metadatas=[]) \
                    if server.corrupt and names == [b"id", b"embedding", b"mac"] else None
                if lookup:
                    continue
            elif lookup and kind == b"D":
                fields, at = [], 2
                for _ in range(struct.unpack("!h", body[:2])[0]):
                    size = struct.unpack("!i", body[at:at + 4])[0]
                    fields.append(None if size < 0 else body[at + 4:at + 4 + size].decode())
                    at += 4 + max(size, 0)
                lookup["ids"].append(fields[0])
                lookup["embeddings"].append(json.loads(fields[1]) if fields[1] else None)
                lookup["metadatas"].append({"mac": fields[2]} if fields[2] else None)
                continue
            elif lookup and kind == b"C":
                server.lookups += 1
                row = lookup.pop("row")
                answer = server.corrupt(server.lookups, lookup)
                drip = isinstance(answer, Drip)
                answer = answer.answer if drip else answer
                data = row + lookup_rows(answer) if isinstance(answer, dict) else answer
                lookup = None
                if drip:
                    for i in range(len(data)):
                        client.sendall(data[i:i + 1])
                        time.sleep(Drip.pause)
                else:
                    client.sendall(data)
                continue
            client.sendall(head + body)
