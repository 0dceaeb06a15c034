"""The team cache: embeddings shared through a Chroma server, so that no clone embeds what
a teammate already embedded.

One collection per embedding identity (model, precision, embedded-text format). A record's
id is the hash of one embedded text and it holds only the vector: no source text, no path,
no name ever leaves the machine. The local index stays the source of truth; queries never
touch the network. Any fault (server down, slow, refusing the token, holding vectors of
another size or another model) is one warning, and the build goes on embedding locally.
"""
import hashlib
import random

from .config import DIM, SERVER_TIMEOUT
from .errors import UsageError, warn
from .text import TEXT_FORMAT

CHECKS_PER_BUILD = 8          # server vectors re-embedded locally to catch a poisoned cache
# cosine under which a server's vector is not this model's: the same text on this machine
# gives 1.0 at fp32; int8 leaves room for another CPU's rounding (README, Team cache)
FLOOR = {"fp32": 0.999, "int8": 0.98}
BATCH = 500                   # ids per request


class ServerUnusable(Exception):
    """The server cannot serve this build; the reason is one line."""


FAILED = object()             # what call() returns when the server let a request down


def collection_name(model_id, precision):
    identity = f"{model_id}|{precision}|{TEXT_FORMAT}"
    return "codebase-rag-" + hashlib.sha1(identity.encode()).hexdigest()[:16]


class TeamCache:
    """A shared embedding cache on the Chroma server at url. Every call is bounded by
    SERVER_TIMEOUT; after the first fault the cache switches itself off for the build."""

    def __init__(self, url, token, model_id, precision):
        self.url, self.token = url, token
        self.identity = dict(model=model_id, precision=precision, text_format=TEXT_FORMAT,
                             dim=DIM)
        self.name = collection_name(model_id, precision)
        self.floor = FLOOR[precision]
        self.collection = None
        self.on = True
        self.checks_left = CHECKS_PER_BUILD
        self.taken = []               # keys whose vectors came from the server in this build
        self.fetched = self.sent = 0

    def connect(self):
        import chromadb
        from chromadb.config import Settings
        from urllib.parse import urlsplit
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(f"the team cache address {self.url!r} is not an http(s):// URL")
        headers = {"Authorization": f"Bearer {self.token}", "X-Chroma-Token": self.token} \
            if self.token else {}
        client = chromadb.HttpClient(
            host=parts.hostname, port=parts.port or (443 if parts.scheme == "https" else 80),
            ssl=parts.scheme == "https", headers=headers,
            settings=Settings(anonymized_telemetry=False))
        import httpx
        client._server._session.timeout = httpx.Timeout(SERVER_TIMEOUT)   # never None
        self.collection = client.get_or_create_collection(
            self.name, metadata=self.identity, embedding_function=None,
            configuration={"hnsw": {"space": "cosine"}})
        meta = self.collection.metadata or {}
        wrong = [f"{k} {meta.get(k)!r}, not {v!r}" for k, v in self.identity.items()
                 if meta.get(k) != v]
        if wrong:
            raise ServerUnusable(f"its collection holds other vectors: {'; '.join(wrong)}")

    def call(self, doing, fn):
        """Run one request; on any fault warn once, switch the cache off, return FAILED."""
        if not self.on:
            return FAILED
        try:
            if self.collection is None:
                self.connect()
            return fn()
        except UsageError:
            raise
        except Exception as e:
            self.on = False
            warn(f"team cache at {self.url}: {doing} failed ({describe(e)}); embedding "
                 f"locally for the rest of this build")
            return FAILED

    def lookup(self, keys):
        """{key: vector} for those of keys the server holds."""
        import numpy as np
        found = {}
        keys = list(keys)
        for i in range(0, len(keys), BATCH):
            got = self.call("a lookup", lambda: self.collection.get(
                ids=keys[i:i + BATCH], include=["embeddings"]))
            if got is FAILED:
                break
            for key, vec in zip(got["ids"], got["embeddings"]):
                vec = np.asarray(vec, dtype=np.float32)
                if vec.shape != (DIM,):
                    self.on = False
                    warn(f"team cache at {self.url}: it holds vectors of {vec.shape[0]} "
                         f"dimensions, not {DIM}; embedding locally")
                    return {}
                found[key] = vec
        self.fetched += len(found)
        self.taken += found
        return found

    def check(self, found, texts, embedder):
        """Re-embed a few of the vectors the server supplied and compare: a mismatch means a
        poisoned cache or another model's vectors. Returns False if the server must go."""
        if not self.checks_left or not found:
            return True
        sample = random.sample(sorted(found), min(self.checks_left, 2, len(found)))
        self.checks_left -= len(sample)
        mine = embedder([texts[k] for k in sample])
        for key, vec in zip(sample, mine):
            if float(vec @ found[key]) < self.floor:
                self.on = False
                warn(f"team cache at {self.url}: a vector it supplied differs from this "
                     f"machine's model (cosine {float(vec @ found[key]):.3f}); not using it "
                     f"for this build")
                return False
        return True

    def upload(self, items):
        """Send freshly embedded (key, vector) pairs; upserts, so racing clones agree."""
        items = list(items)
        for i in range(0, len(items), BATCH):
            part = items[i:i + BATCH]
            if self.call("an upload", lambda: self.collection.upsert(
                    ids=[k for k, _ in part], embeddings=[v.tolist() for _, v in part])) is FAILED:
                return
            self.sent += len(part)


def describe(e):
    text = str(e).strip().splitlines()[0][:160] if str(e).strip() else type(e).__name__
    if "401" in text or "403" in text or "nauthori" in text or "orbidden" in text:
        return f"the server refused the token ({text}); check CODEBASE_RAG_SERVER_TOKEN"
    return text
