"""The team store on a Chroma server (`chroma run`, Chroma Cloud or a distributed
deployment): one collection per identity, a record per embedded text (its id, its vector
and, with a team key, its HMAC in the metadata).

This speaks Chroma's HTTP API (v2) itself, with the standard library: that is what lets
a request have a total deadline and an answer a size cap.
"""
import base64
import http.client
import json
import socket
from urllib.parse import quote, unquote, urlsplit

from .errors import UsageError, printable
from .team_wire import MAX_ANSWER, Deadline, ServerFault, TooLarge, shown, tls_fault

API = "/api/v2/tenants/default_tenant/databases/default_database"


class ChromaStore:
    """url: http(s)://[user:password@]host[:port][/path]. token: sent as Chroma's bearer
    token. Every method is one request within CODEBASE_RAG_SERVER_TIMEOUT, and raises
    on any fault."""

    def __init__(self, url, token):
        self.url = url
        self.headers = connection(url, token)[3]
        self.collection = None            # the collection's id on the server

    def post(self, path, body):
        return request(self.url, self.headers, "POST", API + path, body)

    def open(self, name, identity, keyed):
        """Open (or make) the collection name; returns the identity it was made with."""
        # signed records live in l2 space, where Chroma keeps vectors bit for bit (cosine
        # renormalises them, and the HMAC covers their bytes)
        got = self.post("/collections", dict(name=name, metadata=identity,
                                             configuration={"hnsw": {
                                                 "space": "l2" if keyed else "cosine"}},
                                             get_or_create=True))
        if not isinstance(got, dict) or not isinstance(got.get("id"), str):
            raise ServerFault("its answer to opening the collection is malformed")
        self.collection = quote(got["id"], safe="")
        meta = got.get("metadata")
        return meta if isinstance(meta, dict) else {}

    def get(self, ids, macs):
        """[(id, vector as sent, its HMAC or None)] of the records of ids it holds."""
        got = self.post(f"/collections/{self.collection}/get",
                        dict(ids=ids, include=["embeddings", "metadatas"] if macs
                             else ["embeddings"]))
        records = records_of(got, macs)
        if records is None:
            raise ServerFault("its answer is malformed")
        return records

    def put(self, records):
        """Upsert [(id, vector as a list, HMAC or None)]."""
        body = dict(ids=[i for i, _, _ in records], embeddings=[v for _, v, _ in records])
        if records and records[0][2] is not None:
            body["metadatas"] = [{"mac": m} for _, _, m in records]
        self.post(f"/collections/{self.collection}/upsert", body)

    def heartbeat(self):
        request(self.url, self.headers, "GET", "/api/v2/heartbeat")

    def describe(self, e):
        return describe(e, self.url)


def records_of(got, with_meta):
    """[(id, raw vector, HMAC or None)] of a get's answer, or None if it is malformed."""
    ids = got.get("ids") if isinstance(got, dict) else None
    if ids == []:
        return []
    vectors, metas = got.get("embeddings"), got.get("metadatas") if with_meta else None
    if not isinstance(ids, list) or not isinstance(vectors, list) or \
            not all(isinstance(i, str) for i in ids):
        return None
    metas = metas if isinstance(metas, list) else [None] * len(ids)
    if not len(ids) == len(vectors) == len(metas):
        return None
    return [(i, v, m.get("mac") if isinstance(m, dict) else None)
            for i, v, m in zip(ids, vectors, metas)]


def connection(url, token):
    """(scheme, host, port, headers) for the server at url. Credentials in the URL
    (http://user:pass@host) are sent as HTTP basic auth, the token as a bearer token."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        parts, port = urlsplit(""), -1
    if parts.scheme not in ("http", "https") or not parts.hostname or port == -1:
        raise UsageError(f"the team cache address {shown(url)!r} is not an http(s)://host[:port] "
                         f"URL")
    headers = {"Content-Type": "application/json"}
    if parts.username is not None or parts.password is not None:
        if token:
            raise UsageError(f"the team cache address {shown(url)} has credentials in it and "
                             f"CODEBASE_RAG_SERVER_TOKEN is set too; give one of them")
        pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    elif token:
        headers.update({"Authorization": f"Bearer {token}", "X-Chroma-Token": token})
    return parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80), \
        headers


def request(url, headers, method, path, body=None, timeout=None):
    """One HTTP request, JSON in and out, within a Deadline (default SERVER_TIMEOUT). An
    answer over MAX_ANSWER, not JSON, or an HTTP error is a ServerFault."""
    scheme, host, port, _ = connection(url, None)
    base = urlsplit(url).path.rstrip("/")
    kind = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
    with Deadline(timeout) as deadline:
        conn = kind(host, port, timeout=deadline.timeout)
        try:
            data = None if body is None else json.dumps(body).encode()
            conn.connect()
            deadline.watch(conn.sock)     # the answer may hold it after conn lets go (HTTP/1.0)
            conn.request(method, base + path, body=data, headers=headers)
            answer = conn.getresponse()
            size = answer.getheader("Content-Length")
            if size and size.isdigit() and int(size) > MAX_ANSWER:
                raise TooLarge()
            content = answer.read(MAX_ANSWER + 1)
            if deadline.expired.is_set():
                raise deadline.fault()
        except (OSError, http.client.HTTPException) as e:
            if deadline.expired.is_set() or isinstance(e, (TimeoutError, socket.timeout)):
                raise deadline.fault() from None
            raise
        finally:
            conn.close()
    if len(content) > MAX_ANSWER:
        raise TooLarge()
    if answer.status >= 400:
        text = printable(content[:160].decode("utf-8", "replace").strip())   # a server's words
        raise ServerFault(f"HTTP {answer.status}{': ' + text if text else ''}")
    try:
        return json.loads(content)
    except ValueError:
        raise ServerFault("its answer is not JSON") from None


def describe(e, url=""):
    tls = tls_fault(e, urlsplit(url).hostname or "", "if the server is the right one, give "
                    "the CA certificate that signed its certificate in SSL_CERT_FILE=FILE",
                    "use a host name its certificate holds in the address")
    if tls:
        return tls
    text = str(e).strip().splitlines()[0][:160] if str(e).strip() else type(e).__name__
    if "401" in text or "403" in text or "nauthori" in text or "orbidden" in text:
        if urlsplit(url).username is not None:
            return f"the server refused the credentials ({text}); check the user name and " \
                   f"password in the server's address"
        return f"the server refused the token ({text}); check CODEBASE_RAG_SERVER_TOKEN"
    return text
