"""The team cache: embeddings shared through a team store, so that no clone embeds what a
teammate already embedded. This module is its policy, whatever the store; each store is a
row of STORES, chosen by the address's scheme.

One collection per embedding identity (model, precision, embedded-text format; and a team
key's, as an HMAC). A record's id is the hash of one embedded text and it holds only the
vector (and, with a team key, its HMAC): no source text, no path, no name ever leaves the
machine. The local index stays the source of truth; queries never touch the network. Any
fault (server down, slow, refusing the credentials, answering garbage) is one warning, and
the build goes on embedding locally. Every vector the server supplies is validated before
it is cached; with CODEBASE_RAG_SERVER_KEY each record must carry a valid HMAC too; and a
sample of every lookup is embedded here as well and compared.

A store is an object of four methods, each one request within a total deadline of
CODEBASE_RAG_SERVER_TIMEOUT and an answer cap of 16 MB (team_wire.py), raising on any fault:
open(name, identity, keyed) -> the identity the collection was made with; get(ids, macs) ->
[(id, vector as sent, HMAC or None)]; put([(id, vector, HMAC or None)]); heartbeat(); and
describe(exception) -> one line.
"""
import hashlib
import hmac
import importlib
import math
import os
import random
from collections import Counter
from dataclasses import dataclass
from urllib.parse import urlsplit

from .config import DIM, SERVER_KEY, SERVER_SAMPLE
from .errors import UsageError, warn
from .oslayer import alive, owned_by_me
from .team_wire import ServerFault, shown
from .text import TEXT_FORMAT

# cosine under which a server's vector is not this model's: the same text on this machine
# gives 1.0 at fp32; int8 leaves room for another CPU's rounding (README, Team cache)
FLOOR = {"fp32": 0.999, "int8": 0.98, "int8-reduced": 0.98}
NORM_TOLERANCE = 1e-3         # a model's vectors are unit vectors: |norm - 1| at most this
BATCH = 500                   # ids per request


@dataclass(frozen=True)
class TeamStore:
    name: str                 # as messages call it
    schemes: tuple            # the address's schemes that choose it
    form: str                 # its address, as a message shows it
    module: str               # this package's module whose class `kind` speaks to it
    kind: str

    def open(self, url, token):
        """A store object for url (its module is imported on first use)."""
        return getattr(importlib.import_module(f"{__package__}.{self.module}"),
                       self.kind)(url, token)


STORES = (
    TeamStore("Chroma", ("http", "https"), "http(s)://host[:port]",
              "team_chroma", "ChromaStore"),
    TeamStore("PostgreSQL with pgvector", ("postgresql", "postgres"),
              "postgresql://[user[:password]@]host[:port]/dbname",
              "team_postgres", "PostgresStore"),
)


def store_for(url, token):
    """The store object for a team cache's address; a UsageError if no row takes it or its
    store refuses it (as libpq or an HTTP client would). It opens no connection, so a
    command checks the address with it before it answers (--background) or starts work."""
    try:
        scheme = urlsplit(url).scheme.lower()
    except ValueError as e:               # postgresql://[::1 and the like
        raise UsageError(f"the team cache address {shown(url)!r} is not a valid URL ({e})") \
            from None
    row = next((s for s in STORES if scheme in s.schemes), None)
    if row is None:
        forms = "; ".join(f"{s.form} ({s.name})" for s in STORES)
        raise UsageError(f"the team cache address {shown(url)!r} is not one of: {forms}")
    return row.open(url, token)


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
    """A shared embedding cache in the team store at url. Every request has a total
    deadline of SERVER_TIMEOUT; after the first fault the cache switches itself off for
    the build. key: the team's HMAC key (None: records are trusted as they are)."""

    def __init__(self, url, token, model_id, precision, key=SERVER_KEY, sample=SERVER_SAMPLE,
                 seed=None):
        self.url, self.shown = url, shown(url)
        self.store = store_for(url, token)
        self.key = key or None
        self.identity = dict(model=model_id, precision=precision, text_format=TEXT_FORMAT,
                             dim=DIM, **({"signed": True} if self.key else {}))
        self.signing = f"{model_id}|{precision}|{TEXT_FORMAT}"
        self.name = collection_name(model_id, precision, self.key)
        self.floor = FLOOR[precision]
        self.sample = sample
        self.rng = random.Random(seed if seed is not None else os.urandom(16))
        self.opened = False
        self.on = True
        self.fault = None                 # the one line of the fault that switched it off
        self.dropped = Counter()          # reason -> records refused in this build
        self.taken = []                   # keys whose vectors came from the server
        self.fetched = self.sent = self.checked = 0

    def connect(self):
        held = self.store.open(self.name, self.identity, bool(self.key))
        wrong = [f"{k} {held.get(k)!r}, not {v!r}" for k, v in self.identity.items()
                 if held.get(k) != v]
        if wrong:
            raise ServerFault(f"its collection holds other vectors: {'; '.join(wrong)}")
        self.opened = True

    def call(self, doing, method, *args):
        """Run one of the store's requests; on any fault warn once, switch the cache off,
        return FAILED."""
        if not self.on:
            return FAILED
        try:
            if not self.opened:
                self.connect()
            return getattr(self.store, method)(*args)
        except UsageError:
            raise
        except Exception as e:            # noqa: BLE001 (whatever the server did, one line)
            self.switch_off(f"{doing} failed ({self.store.describe(e)})")
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
        for i in range(0, len(keys), BATCH):
            asked = keys[i:i + BATCH]
            records = self.call("a lookup", "get", asked, bool(self.key))
            if records is FAILED:
                break
            wanted = set(asked)
            for key, raw, given in records:
                vec, why = (None, "not asked for") if key not in wanted else validated(raw)
                if vec is not None and self.key and not self.authentic(key, vec, given):
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

    def authentic(self, key, vec, given):
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
            records = [(k, v.tolist(), mac(self.key, k, self.signing, v) if self.key else None)
                       for k, v in part]
            if self.call("an upload", "put", records) is FAILED:
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


def preflight(url, token):
    """For --push-only: a UsageError line now if the server cannot be reached, rather than
    after the whole tree was embedded for nothing."""
    store = store_for(url, token)
    try:
        store.heartbeat()
    except UsageError:
        raise
    except Exception as e:                # noqa: BLE001
        raise UsageError(f"--push-only: the team cache at {shown(url)} cannot be reached "
                         f"({store.describe(e)}); nothing pushed") from None


def scratch_folder():
    """A new temporary folder for --push-only's throwaway index, after deleting those that
    pushes killed before they could delete theirs (named by their process id)."""
    import shutil
    import tempfile
    from pathlib import Path
    prefix = "codebase-rag-push-"
    for stale in Path(tempfile.gettempdir()).glob(prefix + "*-*"):
        pid = stale.name[len(prefix):].split("-")[0]
        if pid.isdigit() and not alive(int(pid)) and owned_by_me(stale.stat()):
            shutil.rmtree(stale, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-"))
