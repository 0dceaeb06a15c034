"""The team store on PostgreSQL with pgvector: one table of records, a row per embedded
text and identity, its vector in a vector(384) column (so a team can search it with
pgvector's operators too), and one table of identities.

It talks through pg8000, a pure-Python driver, over a socket this module opens: that is
what lets every request have a total deadline (the socket is shut down when it passes) and
an answer a size cap (the socket counts what it receives). libpq, under psycopg, owns its
socket and buffers a whole row before a caller sees it.

The address is a libpq URL, postgresql://[user[:password]@][host][:port][/dbname][?...];
what it leaves out comes from PGHOST, PGPORT, PGUSER, PGPASSWORD (or PGPASSFILE, else
~/.pgpass), PGDATABASE, PGSSLMODE and PGSSLROOTCERT, as libpq takes them.
"""
import functools
import getpass
import json
import os
import re
import shlex
import socket
import ssl
import stat
import struct
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

from .config import DIM
from .errors import UsageError, printable, warn
from .oslayer import READ_ANY
from .team_wire import MAX_ANSWER, Deadline, ServerFault, TooLarge, shown, tls_fault

VECTORS, IDENTITIES = "codebase_rag_vectors", "codebase_rag_identities"
SETUP = [
    f"CREATE TABLE IF NOT EXISTS {IDENTITIES} (name text PRIMARY KEY, identity jsonb NOT NULL)",
    f"CREATE TABLE IF NOT EXISTS {VECTORS} (collection text NOT NULL REFERENCES {IDENTITIES} "
    f"ON DELETE CASCADE, id text NOT NULL, embedding vector({DIM}) NOT NULL, mac text, "
    f"PRIMARY KEY (collection, id))",
]
LOCK = 0x636f646562617365        # pg_advisory_xact_lock's key: two first builds make the
                                  # tables one at a time
BACKEND_MESSAGES = frozenset(bytes([c]) for c in b"123ACDEGHIKNRSTVWZcdnpstv")  # protocol 3
NO_PASSWORD = "the server asks for a password and none was given; put it in the address, " \
              "in PGPASSWORD or in the password file (PGPASSFILE, else ~/.pgpass, mode 600)"
SSLMODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")
PARAMETERS = {"host": "PGHOST", "port": "PGPORT", "user": "PGUSER", "password": "PGPASSWORD",
              "dbname": "PGDATABASE", "sslmode": "PGSSLMODE", "sslrootcert": "PGSSLROOTCERT",
              "application_name": "PGAPPNAME"}      # libpq's name: its variable


class PostgresStore:
    """Every method is one request within CODEBASE_RAG_SERVER_TIMEOUT over one connection
    (opened by the first, closed by any fault), and raises on any fault."""

    def __init__(self, url, token):
        if token:
            raise UsageError(f"CODEBASE_RAG_SERVER_TOKEN is for a Chroma server; the "
                             f"PostgreSQL store at {shown(url)} takes its password from the "
                             f"address or PGPASSWORD")
        self.params = conninfo(url)
        self.con = self.sock = None
        self.collection = None

    # -- one request
    def request(self, work):
        """work(connection) within a Deadline, with at most MAX_ANSWER bytes received."""
        with Deadline() as deadline:
            try:
                if self.con is None:
                    self.connect(deadline)
                else:
                    deadline.watch(self.sock)
                    self.sock.allowance = MAX_ANSWER
                result = work(self.con)
                if deadline.expired.is_set():
                    raise deadline.fault()
                return result
            except Exception as e:
                self.close()
                if deadline.expired.is_set() and not isinstance(e, TooLarge):
                    raise deadline.fault() from None
                raise

    def connect(self, deadline):
        import pg8000.native
        p = self.params
        self.sock = open_socket(p, deadline)
        try:
            self.con = pg8000.native.Connection(p["user"], database=p["dbname"],
                                                password=p["password"], sock=self.sock,
                                                ssl_context=False,
                                                application_name=p["application_name"])
        except Exception as e:
            # pg8000's words for a password the server asks for and nobody gave (under
            # scram-sha-256, an AttributeError)
            if p["password"] is None and (isinstance(e, AttributeError) or
                                          "no password was provided" in str(e)):
                raise ServerFault(NO_PASSWORD) from None
            raise

    def close(self):
        con, sock, self.con, self.sock = self.con, self.sock, None, None
        for thing in (con, sock):
            try:
                if thing is not None:
                    thing.close()
            except Exception:             # noqa: BLE001 (it is going anyway)
                pass

    # -- the store
    def open(self, name, identity, keyed):
        """Open (or make) the collection name; returns the identity it was made with."""
        held = "SELECT identity::text FROM " + IDENTITIES + " WHERE name = :name"

        def work(con):
            rows = con.run("SELECT to_regclass(:t) IS NOT NULL", t=VECTORS)
            found = rows[0][0] and con.run(held, name=name)
            if not found:                 # tables, extension or identity missing: add them
                con.run("BEGIN")
                con.run("SELECT pg_advisory_xact_lock(:lock)", lock=LOCK)
                if not con.run("SELECT 1 FROM pg_extension WHERE extname = 'vector'"):
                    con.run("CREATE EXTENSION vector")
                for statement in SETUP:
                    con.run(statement)
                con.run(f"INSERT INTO {IDENTITIES} VALUES (:name, CAST(:identity AS jsonb)) "
                        f"ON CONFLICT (name) DO NOTHING", name=name,
                        identity=json.dumps(identity))
                con.run("COMMIT")
                found = con.run(held, name=name)
            return found
        found = self.request(work)
        self.collection = name
        try:
            meta = json.loads(found[0][0])
        except (TypeError, ValueError, IndexError, KeyError):
            raise ServerFault("its answer to opening the collection is malformed") from None
        return meta if isinstance(meta, dict) else {}

    def get(self, ids, macs):
        """[(id, vector as sent, its HMAC or None)] of the records of ids it holds."""
        rows = self.request(lambda con: con.run(
            f"SELECT id, embedding::text AS embedding, mac FROM {VECTORS} "
            f"WHERE collection = :c AND id = ANY(CAST(:ids AS text[]))",
            c=self.collection, ids=list(ids)))
        if not isinstance(rows, list) or not all(
                isinstance(r, list) and len(r) == 3 and isinstance(r[0], str) for r in rows):
            raise ServerFault("its answer is malformed")
        return [(i, parsed(v), m if isinstance(m, str) else None) for i, v, m in rows]

    def put(self, records):
        """Upsert [(id, vector as a list, HMAC or None)]."""
        self.request(lambda con: con.run(
            f"INSERT INTO {VECTORS} SELECT :c, r.id, CAST(r.v AS vector), r.mac "
            f"FROM unnest(CAST(:ids AS text[]), CAST(:vs AS text[]), CAST(:macs AS text[])) "
            f"AS r(id, v, mac) ON CONFLICT (collection, id) "
            f"DO UPDATE SET embedding = EXCLUDED.embedding, mac = EXCLUDED.mac",
            c=self.collection, ids=[i for i, _, _ in records],
            vs=[json.dumps(v) for _, v, _ in records], macs=[m for _, _, m in records]))

    def heartbeat(self):
        self.request(lambda con: con.run("SELECT 1"))

    def describe(self, e):
        """One line for what went wrong; never a password."""
        fields = e.args[0] if e.args and isinstance(e.args[0], dict) else None
        if fields:                        # the server's error: its words, its SQLSTATE
            code, text = fields.get("C", ""), printable(str(fields.get("M", "")))[:160]
            if code in ("28P01", "28000"):
                return f"the server refused the credentials ({text}); check the user name " \
                       f"and password in the server's address, or PGUSER and PGPASSWORD"
            if "vector" in text and code in ("0A000", "42501", "42704", "58P01"):
                return f"{text}; the database needs pgvector (its owner can run: CREATE " \
                       f"EXTENSION vector)"
            return f"{text} (SQLSTATE {printable(str(code))[:5]})"
        tls = tls_fault(e, self.params["host"], "if the server is the right one, give the CA "
                        "certificate that signed its certificate as sslrootcert=FILE in the "
                        "address (or PGSSLROOTCERT), or use sslmode=require to encrypt without "
                        "checking it", "use a host name its certificate holds in the address, "
                        "or sslmode=verify-ca to check the certificate but not the name")
        if tls:
            return tls
        if isinstance(e, (KeyError, ValueError, struct.error, UnicodeError, IndexError)):
            return "its answer is not PostgreSQL's protocol"
        if str(e) == "network error":     # pg8000's words for a connection that broke
            cause = e.__cause__ or e.__context__
            return f"the connection broke ({cause})" if cause else \
                "the server closed the connection"
        text = str(e).strip().splitlines()[0][:160] if str(e).strip() else ""
        return text or type(e).__name__


def parsed(text):
    """A vector's text ('[0.1,0.2,...]', which is JSON) as a list; anything else as is, for
    validation to refuse."""
    try:
        return json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return text


# ----------------------------------------------------------------------------- connecting
def conninfo(url):
    """The connection's parameters: the URL's, else the environment's, else libpq's
    defaults. A URL libpq would not take, or one naming several hosts, is a UsageError."""
    invalid = UsageError(f"the team cache address {shown(url)} is not a valid "
                         f"postgresql://[user[:password]@][host][:port][/dbname] URL")
    try:
        parts = urlsplit(url)
        query = dict(parse_qsl(parts.query, keep_blank_values=True, strict_parsing=bool(
            parts.query)))
    except ValueError:
        raise invalid from None
    unknown = sorted(set(query) - set(PARAMETERS))
    if unknown:
        raise UsageError(f"the team cache address {shown(url)} has parameters this store does "
                         f"not take: {', '.join(unknown)} (it takes {', '.join(PARAMETERS)})")
    host = parts.netloc.rpartition("@")[2]    # as written: a socket's folder keeps its case
    if "," in host:
        several(url, host, "the address")
    try:
        port = parts.port
    except ValueError:
        raise invalid from None
    if host.startswith("["):
        host = parts.hostname
    elif ":" in host:
        host = host.rpartition(":")[0]
    given = dict(host=unquote(host or "") or None, port=None if port is None else str(port),
                 user=unquote(parts.username) if parts.username else None,
                 password=unquote(parts.password) if parts.password is not None else None,
                 dbname=unquote(parts.path.lstrip("/")) or None)
    p, origin = {}, {}                        # each parameter, and where it came from
    for k, var in PARAMETERS.items():
        found = [(value, where) for value, where in ((given.get(k), "the address"),
                                                     (query.get(k), "the address"),
                                                     (os.environ.get(var), var)) if value]
        p[k], origin[k] = found[0] if found else (None, None)
    for k in ("host", "port"):
        if "," in (p[k] or ""):
            several(url, p[k], origin[k])
    p["host"] = p["host"] or "localhost"
    p["user"] = p["user"] or getpass.getuser()
    p["dbname"] = p["dbname"] or p["user"]
    p["sslmode"] = p["sslmode"] or "prefer"
    port = p["port"] or "5432"
    if not (port.isascii() and port.isdigit() and 0 < int(port) < 65536):
        raise UsageError(f"the team cache's PostgreSQL port {printable(port)[:20]!r} (from "
                         f"{origin['port']}) is not a number from 1 to 65535")
    p["port"] = int(port)
    if p["sslmode"] not in SSLMODES:
        raise UsageError(f"the team cache's sslmode {p['sslmode']!r} is not one of "
                         f"{', '.join(SSLMODES)}")
    if p["password"] is None:
        p["password"] = pgpass(p)
    return p


def several(url, given, where):
    """libpq's list of hosts (to try in turn) is a UsageError here."""
    raise UsageError(f"the team cache at {shown(url)} is given several hosts or ports "
                     f"({printable(given)[:100]}, in {where}); this store connects to one: "
                     f"give a single host and port")


PASSFILE_CAP = 1 << 20        # bytes: a larger password file is ignored, never read whole


def pgpass(p):
    """The password for these parameters in PGPASSFILE (else ~/.pgpass), or None."""
    text = password_file(Path(os.environ.get("PGPASSFILE") or Path.home() / ".pgpass"))
    if text is None:
        return None
    host = "localhost" if p["host"].startswith("/") else p["host"]
    wanted = [host, str(p["port"]), p["dbname"], p["user"]]
    for line in text.splitlines():
        fields = [f.replace("\\:", ":").replace("\\\\", "\\")
                  for f in re.split(r"(?<!\\):", line, maxsplit=4)]
        if len(fields) == 5 and not line.startswith("#") and \
                all(f in ("*", w) for f, w in zip(fields, wanted)):
            return fields[4]
    return None


def password_file(path):
    """A password file's text, or None. As libpq: only a plain file is read (a FIFO or a
    device is never opened), and on POSIX not one its group or others have access to, with
    a warning; and here not one over PASSFILE_CAP either."""
    try:
        mode = path.stat().st_mode
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(mode):
        return ignored(path, "it is not a plain file")
    if os.name == "posix" and mode & (stat.S_IRWXG | stat.S_IRWXO):
        return ignored(path, f"its group or others have access to it (libpq ignores it too); "
                             f"run: chmod 600 {shlex.quote(str(path))}")
    try:        # READ_ANY: made a FIFO since the look above, it is refused, not waited on
        fd = os.open(path, READ_ANY)
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return ignored(path, "it is not a plain file")
            data = f.read(PASSFILE_CAP + 1)
    except OSError:
        return None
    if len(data) > PASSFILE_CAP:
        return ignored(path, f"it is larger than {PASSFILE_CAP >> 20} MB")
    try:
        return data.decode()
    except UnicodeError:
        return None


@functools.lru_cache(maxsize=None)
def ignored(path, why):
    """Warn, once in this process, that a password file is not used; None."""
    warn(f"the password file {printable(str(path))} is not used: {why}")


class Capped:
    """A socket that follows PostgreSQL's messages as they arrive: one of a type the
    protocol does not have, or longer than MAX_ANSWER, ends the request at once, and so
    does receiving more than the request's allowance in all."""
    allowance = MAX_ANSWER
    need = 0                  # bytes of the current message still to come
    head = b""                # what came of the next message's type and length

    def recv_into(self, buffer, *args):
        n = super().recv_into(buffer, *args)
        self.allowance -= n
        if self.allowance < 0:
            raise TooLarge()
        view = memoryview(buffer)[:n]
        while view:
            if self.need:
                step = min(self.need, len(view))
                self.need, view = self.need - step, view[step:]
                continue
            take = 5 - len(self.head)
            self.head, view = self.head + bytes(view[:take]), view[take:]
            if len(self.head) == 5:
                kind, size = self.head[:1], int.from_bytes(self.head[1:], "big", signed=True)
                self.head = b""
                if kind not in BACKEND_MESSAGES or size < 4:
                    raise ServerFault("its answer is not PostgreSQL's protocol")
                if size > MAX_ANSWER:
                    raise TooLarge()
                self.need = size - 4
        return n


class CappedSocket(Capped, socket.socket):
    pass


class CappedTLSSocket(Capped, ssl.SSLSocket):
    pass


def open_socket(p, deadline):
    """A connected socket, TLS as sslmode asks, watched by the deadline."""
    if p["host"].startswith("/"):                 # a Unix socket's folder, as libpq takes it
        sock = CappedSocket(socket.AF_UNIX, socket.SOCK_STREAM)
        deadline.watch(sock)
        sock.settimeout(deadline.left())
        sock.connect(f"{p['host']}/.s.PGSQL.{p['port']}")
        return sock
    fault = None
    for family, kind, proto, _, address in socket.getaddrinfo(p["host"], p["port"],
                                                              type=socket.SOCK_STREAM):
        sock = CappedSocket(family, kind, proto)
        deadline.watch(sock)
        sock.settimeout(deadline.left())
        try:
            sock.connect(address)
            break
        except OSError as e:
            sock.close()
            fault = e
    else:
        raise fault or OSError(f"no address for {p['host']}")
    sock.settimeout(deadline.timeout)             # later requests reuse it
    if p["sslmode"] == "disable":
        return sock
    sock.sendall(struct.pack("!ii", 8, 80877103))  # SSLRequest
    answer = sock.recv(1)
    if answer == b"S":
        tls = context(p).wrap_socket(sock, server_hostname=p["host"])
        deadline.watch(tls)
        return tls
    if answer != b"N":
        raise ServerFault("its answer to the TLS request is not PostgreSQL's protocol")
    if p["sslmode"] in ("require", "verify-ca", "verify-full"):
        raise ServerFault(f"the server does not offer TLS, and sslmode={p['sslmode']} "
                          f"requires it")
    return sock


def context(p):
    """TLS as libpq's sslmode means it: verify-full checks the chain and the host name,
    verify-ca the chain alone, the others encrypt without checking (unless a root
    certificate is given)."""
    root = p["sslrootcert"] or (Path.home() / ".postgresql" / "root.crt")
    root = None if root == "system" or not Path(root).is_file() else str(root)
    verify = p["sslmode"].startswith("verify") or root is not None
    ctx = ssl.create_default_context(cafile=root) if verify else ssl.SSLContext(
        ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = p["sslmode"] == "verify-full"
    ctx.verify_mode = ssl.CERT_REQUIRED if verify else ssl.CERT_NONE
    ctx.sslsocket_class = CappedTLSSocket
    return ctx
