"""The team cache: embeddings shared through a Chroma server, so that no clone embeds what
a teammate already embedded.

One collection per embedding identity (model, precision, embedded-text format). A record's
id is the hash of one embedded text and it holds only the vector (and, with a team key,
its HMAC): no source text, no path, no name ever leaves the machine. The local index stays
the source of truth; queries never touch the network. Any fault (server down, slow,
refusing the token, answering garbage) is one warning, and the build goes on embedding
locally. Every vector the server supplies is validated before it is cached; with
CODEBASE_RAG_SERVER_KEY each record must carry a valid HMAC too; and a sample of every
lookup is embedded here as well and compared.

This speaks Chroma's HTTP API (v2) itself, with the standard library: that is what lets
a request have a total deadline and an answer a size cap.
"""
import base64
import hashlib
import hmac
import http.client
import json
import math
import os
import random
import socket
import threading
from collections import Counter
from urllib.parse import quote, urlsplit

from .config import DIM, SERVER_KEY, SERVER_SAMPLE, SERVER_TIMEOUT
from .errors import UsageError, printable, warn
from .text import TEXT_FORMAT

# cosine under which a server's vector is not this model's: the same text on this machine
# gives 1.0 at fp32; int8 leaves room for another CPU's rounding (README, Team cache)
FLOOR = {"fp32": 0.999, "int8": 0.98}
NORM_TOLERANCE = 1e-3         # a model's vectors are unit vectors: |norm - 1| at most this
BATCH = 500                   # ids per request
MAX_ANSWER = 16 << 20         # bytes; 500 vectors as JSON take about 2.5 MB
API = "/api/v2/tenants/default_tenant/databases/default_database"


class ServerFault(Exception):
    """The server cannot serve this build; the reason is one line."""


FAILED = object()             # what call() returns when the server let a request down


def collection_name(model_id, precision, key=None):
    """The collection of one embedding identity. A keyed team's is named by an HMAC of the
    identity under its key, so each key has a collection of its own (a clone with another
    key never overwrites the team's records) and the name tells no more of the key than a
    record's HMAC does."""
    identity = f"{model_id}|{precision}|{TEXT_FORMAT}"
    if key:
        named = hmac.new(key.encode(), b"collection\0" + identity.encode(), hashlib.sha256)
        return "codebase-rag-k" + named.hexdigest()[:24]
    return "codebase-rag-" + hashlib.sha1(identity.encode()).hexdigest()[:16]


def shown(url):
    """The server's address as it may be printed: never the user name or password in it."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    return f"{parts.scheme}://{host}{port}{parts.path}".rstrip("/")


def mac(key, record_id, identity, vec):
    """The HMAC-SHA256 that binds a record's vector to its id (the hash of its text) and to
    the embedding identity, under the team's key."""
    import numpy as np
    message = b"\0".join([record_id.encode(), identity.encode(),
                          np.asarray(vec, dtype="<f4").tobytes()])
    return hmac.new(key.encode(), message, hashlib.sha256).hexdigest()


def validated(raw):
    """(float32 vector, None) if raw is a vector this model could have made: DIM finite
    numbers of unit norm; else (None, the reason)."""
    import numpy as np
    if not isinstance(raw, list) or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in raw):
        return None, "not a list of numbers"
    if len(raw) != DIM:
        return None, f"of {len(raw)} dimensions, not {DIM}"
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            vec = np.asarray(raw, dtype=np.float32)
            norm = float(np.linalg.norm(vec.astype(np.float64)))
    except OverflowError:                   # an integer beyond any float
        return None, "not finite"
    if not np.isfinite(vec).all():
        return None, "not finite"
    if abs(norm - 1) > NORM_TOLERANCE:
        return None, "not of unit length"
    return vec, None


class TeamCache:
    """A shared embedding cache on the Chroma server at url. Every request has a total
    deadline of SERVER_TIMEOUT; after the first fault the cache switches itself off for
    the build. key: the team's HMAC key (None: records are trusted as they are)."""

    def __init__(self, url, token, model_id, precision, key=SERVER_KEY, sample=SERVER_SAMPLE,
                 seed=None):
        self.url, self.shown = url, shown(url)
        self.headers = connection(url, token)[3]
        self.key = key or None
        self.identity = dict(model=model_id, precision=precision, text_format=TEXT_FORMAT,
                             dim=DIM, **({"signed": True} if self.key else {}))
        self.signing = f"{model_id}|{precision}|{TEXT_FORMAT}"
        self.name = collection_name(model_id, precision, self.key)
        self.floor = FLOOR[precision]
        self.sample = sample
        self.rng = random.Random(seed if seed is not None else os.urandom(16))
        self.collection = None            # the collection's id on the server
        self.on = True
        self.fault = None                 # the one line of the fault that switched it off
        self.dropped = Counter()          # reason -> records refused in this build
        self.taken = []                   # keys whose vectors came from the server
        self.fetched = self.sent = self.checked = 0

    # -- HTTP
    def post(self, path, body):
        """One request to the server, JSON in and out, finished within SERVER_TIMEOUT."""
        return request(self.url, self.headers, "POST", API + path, body)

    def connect(self):
        # signed records live in l2 space, where Chroma keeps vectors bit for bit (cosine
        # renormalises them, and the HMAC covers their bytes)
        space = "l2" if self.key else "cosine"
        got = self.post("/collections", dict(name=self.name, metadata=self.identity,
                                             configuration={"hnsw": {"space": space}},
                                             get_or_create=True))
        if not isinstance(got, dict) or not isinstance(got.get("id"), str):
            raise ServerFault("its answer to opening the collection is malformed")
        meta = got.get("metadata") or {}
        wrong = [f"{k} {meta.get(k)!r}, not {v!r}" for k, v in self.identity.items()
                 if meta.get(k) != v]
        if wrong:
            raise ServerFault(f"its collection holds other vectors: {'; '.join(wrong)}")
        self.collection = quote(got["id"], safe="")

    def call(self, doing, path, body):
        """Run one request; on any fault warn once, switch the cache off, return FAILED."""
        if not self.on:
            return FAILED
        try:
            if self.collection is None:
                self.connect()
            return self.post(f"/collections/{self.collection}{path}", body)
        except UsageError:
            raise
        except Exception as e:
            self.switch_off(f"{doing} failed ({describe(e, self.url)})")
            return FAILED

    def switch_off(self, why):
        self.on = False
        self.fault = why
        warn(f"team cache at {self.shown}: {why}; embedding locally for the rest of this build")

    # -- lookups
    def lookup(self, keys):
        """{key: vector} for those of keys the server holds, each one validated (and with a
        key, authenticated); a record that fails is dropped and counted."""
        found = {}
        keys = list(keys)
        include = ["embeddings", "metadatas"] if self.key else ["embeddings"]
        for i in range(0, len(keys), BATCH):
            asked = keys[i:i + BATCH]
            got = self.call("a lookup", "/get", dict(ids=asked, include=include))
            if got is FAILED:
                break
            records = records_of(got, self.key)
            if records is None:
                self.switch_off("it answered a lookup with a malformed response")
                break
            wanted = set(asked)
            for key, raw, meta in records:
                vec, why = (None, "not asked for") if key not in wanted else validated(raw)
                if vec is not None and self.key and not self.authentic(key, vec, meta):
                    vec, why = None, "failed the key check (CODEBASE_RAG_SERVER_KEY)"
                if why and why.endswith(f"dimensions, not {DIM}"):    # another model's
                    self.switch_off(f"it holds vectors {why}")
                    return {}
                if vec is None:
                    self.dropped[why] += 1
                    continue
                wanted.discard(key)
                found[key] = vec
        self.fetched += len(found)
        self.taken += found
        return found

    def authentic(self, key, vec, meta):
        given = meta.get("mac") if isinstance(meta, dict) else None
        return isinstance(given, str) and hmac.compare_digest(
            given, mac(self.key, key, self.signing, vec))

    def check(self, found, texts, embedder):
        """Embed a sample of the vectors the server supplied here too and compare: a
        fraction of every lookup (at least one), all build long. A mismatch means a poisoned
        cache or another model's vectors. Returns False if the server must go."""
        if not found or not self.sample:
            return True
        sample = self.pick(sorted(found))
        self.checked += len(sample)
        mine = embedder([texts[k] for k in sample])
        for key, vec in zip(sample, mine):
            cosine = float(vec @ found[key])
            if not cosine >= self.floor:
                self.switch_off(f"a vector it supplied differs from this machine's model "
                                f"(cosine {cosine:.3f}); not using it for this build")
                return False
        return True

    def pick(self, keys):
        """The sample of one lookup's keys that check() embeds again."""
        return self.rng.sample(keys, min(len(keys), max(1, math.ceil(self.sample * len(keys)))))

    # -- uploads
    def upload(self, items):
        """Send freshly embedded (key, vector) pairs (signed, with a key); upserts, so
        racing clones agree."""
        items = list(items)
        for i in range(0, len(items), BATCH):
            part = items[i:i + BATCH]
            body = dict(ids=[k for k, _ in part], embeddings=[v.tolist() for _, v in part])
            if self.key:
                body["metadatas"] = [{"mac": mac(self.key, k, self.signing, v)} for k, v in part]
            if self.call("an upload", "/upsert", body) is FAILED:
                return
            self.sent += len(part)

    def finish(self, store):
        """At the end of a build: one warning for the records refused, and what happened
        recorded for --status and --push-only."""
        if self.dropped:
            reasons = ", ".join(f"{n} {why}" for why, n in self.dropped.most_common())
            warn(f"team cache at {self.shown}: dropped {sum(self.dropped.values())} records "
                 f"it supplied ({reasons}); embedded them here")
            self.dropped.clear()
        store.set_meta(team_signed="1" if self.key else "0", team_sent=str(self.sent),
                       team_fault=self.fault or "")


def records_of(got, with_meta):
    """[(id, raw vector, metadata)] of a get's answer, or None if it is malformed."""
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
    return list(zip(ids, vectors, metas))


# ----------------------------------------------------------------------------- HTTP
def connection(url, token):
    """(scheme, host, port, headers) for the server at url. Credentials in the URL
    (http://user:pass@host) are sent as HTTP basic auth, the token as a bearer token."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = -1
    if parts.scheme not in ("http", "https") or not parts.hostname or port == -1:
        raise UsageError(f"the team cache address {shown(url)!r} is not an http(s)://host[:port] "
                         f"URL")
    headers = {"Content-Type": "application/json"}
    if parts.username is not None or parts.password is not None:
        if token:
            raise UsageError(f"the team cache address {shown(url)} has credentials in it and "
                             f"CODEBASE_RAG_SERVER_TOKEN is set too; give one of them")
        from urllib.parse import unquote
        pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    elif token:
        headers.update({"Authorization": f"Bearer {token}", "X-Chroma-Token": token})
    return parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80), \
        headers


def request(url, headers, method, path, body=None, timeout=None):
    """One HTTP request, JSON in and out. timeout (default SERVER_TIMEOUT) bounds the whole
    of it, from connecting to the last byte: at the deadline the socket is shut down, so a
    server that drips its answer cannot hold the build. An answer over MAX_ANSWER, not
    JSON, or an HTTP error is a ServerFault."""
    timeout = SERVER_TIMEOUT if timeout is None else timeout
    scheme, host, port, _ = connection(url, None)
    base = urlsplit(url).path.rstrip("/")
    kind = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
    conn = kind(host, port, timeout=timeout)
    expired, sockets = threading.Event(), []

    def expire():
        expired.set()
        for sock in sockets:      # the answer may hold it after conn lets go (HTTP/1.0)
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
    timer = threading.Timer(timeout, expire)
    timer.daemon = True
    timer.start()
    try:
        data = None if body is None else json.dumps(body).encode()
        conn.connect()
        sockets.append(conn.sock)
        if expired.is_set():
            raise TimeoutError
        conn.request(method, base + path, body=data, headers=headers)
        answer = conn.getresponse()
        size = answer.getheader("Content-Length")
        if size and size.isdigit() and int(size) > MAX_ANSWER:
            raise ServerFault(f"its answer is larger than {MAX_ANSWER >> 20} MB")
        content = answer.read(MAX_ANSWER + 1)
        if expired.is_set():
            raise TimeoutError
    except (OSError, http.client.HTTPException) as e:
        if expired.is_set() or isinstance(e, (TimeoutError, socket.timeout)):
            raise TimeoutError(f"no complete answer within {timeout:g} s "
                               f"by CODEBASE_RAG_SERVER_TIMEOUT") from None
        raise
    finally:
        timer.cancel()
        conn.close()
    if len(content) > MAX_ANSWER:
        raise ServerFault(f"its answer is larger than {MAX_ANSWER >> 20} MB")
    if answer.status >= 400:
        text = printable(content[:160].decode("utf-8", "replace").strip())   # a server's words
        raise ServerFault(f"HTTP {answer.status}{': ' + text if text else ''}")
    try:
        return json.loads(content)
    except ValueError:
        raise ServerFault("its answer is not JSON") from None


def describe(e, url=""):
    text = str(e).strip().splitlines()[0][:160] if str(e).strip() else type(e).__name__
    if "401" in text or "403" in text or "nauthori" in text or "orbidden" in text:
        if urlsplit(url).username is not None:
            return f"the server refused the credentials ({text}); check the user name and " \
                   f"password in the server's address"
        return f"the server refused the token ({text}); check CODEBASE_RAG_SERVER_TOKEN"
    return text


def preflight(url, token):
    """For --push-only: a UsageError line now if the server cannot be reached, rather than
    after the whole tree was embedded for nothing."""
    try:
        request(url, connection(url, token)[3], "GET", "/api/v2/heartbeat")
    except UsageError:
        raise
    except Exception as e:
        raise UsageError(f"--push-only: the team cache at {shown(url)} cannot be reached "
                         f"({describe(e, url)}); nothing pushed") from None


def scratch_folder():
    """A new temporary folder for --push-only's throwaway index, after deleting those that
    pushes killed before they could delete theirs (named by their process id)."""
    import shutil
    import tempfile
    from pathlib import Path
    prefix = "codebase-rag-push-"
    for stale in Path(tempfile.gettempdir()).glob(prefix + "*-*"):
        pid = stale.name[len(prefix):].split("-")[0]
        if pid.isdigit() and not alive(int(pid)) and stale.stat().st_uid == os.getuid():
            shutil.rmtree(stale, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-"))


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True
