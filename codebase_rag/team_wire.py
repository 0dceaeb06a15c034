"""What every team store's requests share, whatever the store: a total deadline, a cap on
the size of an answer, faults of one line, and an address that may be printed."""
import socket
import ssl
import threading
import time
from urllib.parse import urlsplit

from .config import SERVER_TIMEOUT
from .errors import printable

MAX_ANSWER = 16 << 20         # bytes; 500 vectors take about 2.5 MB as JSON or as text


class ServerFault(Exception):
    """The server cannot serve this build; the reason is one line."""


class TooLarge(ServerFault):
    def __init__(self):
        super().__init__(f"its answer is larger than {MAX_ANSWER >> 20} MB")


def shown(url):
    """The server's address as it may be printed: never the user name or password in it,
    nor the query (which may hold a password). A malformed address is shown as written,
    less those."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:                    # postgresql://[::1 and the like
        scheme, _, rest = url.partition("://")
        rest = rest.split("?")[0].split("#")[0].rpartition("@")[2]
        return printable(f"{scheme}://{rest}")[:200]
    host = f"[{host}]" if ":" in host else host
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    return printable(f"{parts.scheme}://{host}{port}{parts.path.rstrip('/')}")[:200]


HOST_MISMATCH = (62, 64)      # OpenSSL's X509_V_ERR_HOSTNAME_MISMATCH, _IP_ADDRESS_MISMATCH


def tls_fault(e, host, trust, name):
    """One line for a TLS failure with host, or None if e is neither: a certificate that
    fails verification (its reason, and what to do: trust says how to trust its CA, name
    how to reach the server by a name its certificate holds), or a handshake that failed."""
    if isinstance(e, ssl.SSLCertVerificationError):
        reason = printable(str(e.verify_message or e.reason or e)).strip(". ")[:160]
        remedy = name if e.verify_code in HOST_MISMATCH else trust
        return f"the server's certificate failed verification for {printable(host)} " \
               f"({reason}); {remedy}"
    if type(e) is ssl.SSLError:           # a handshake's (its subclasses: a broken stream)
        reason = printable(str(e.reason or e))[:160]
        return f"TLS with {printable(host)} failed ({reason}); check that the server " \
               f"speaks TLS at that address"
    return None


class Deadline:
    """A total deadline for one request, from connecting to the last byte: when it passes,
    every socket it watches is shut down, so a server that never answers, or drips its
    answer, cannot hold the build. Use as a context manager; raise fault() when expired."""

    def __init__(self, timeout=None):
        self.timeout = SERVER_TIMEOUT if timeout is None else timeout
        self.expired = threading.Event()
        self.sockets = []
        self.timer = threading.Timer(self.timeout, self.expire)
        self.timer.daemon = True

    def __enter__(self):
        self.ends = time.monotonic() + self.timeout
        self.timer.start()
        return self

    def left(self):
        """Seconds until the deadline (a little, once it has passed)."""
        return max(self.ends - time.monotonic(), 0.001)

    def __exit__(self, *exc):
        self.timer.cancel()

    def watch(self, sock):
        self.sockets.append(sock)
        if self.expired.is_set():
            raise self.fault()

    def expire(self):
        self.expired.set()
        for sock in self.sockets:
            try:        # socket's own shutdown: a TLS socket's would unhook it as it reads
                socket.socket.shutdown(sock, socket.SHUT_RDWR)
            except OSError:
                pass

    def fault(self):
        return TimeoutError(f"no complete answer within {self.timeout:g} s by "
                            f"CODEBASE_RAG_SERVER_TIMEOUT")
