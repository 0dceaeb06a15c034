"""What every team store's requests share, whatever the store: a total deadline, a cap on
the size of an answer, faults of one line, and an address that may be printed."""
import socket
import threading
import time
from urllib.parse import urlsplit

from .config import SERVER_TIMEOUT

MAX_ANSWER = 16 << 20         # bytes; 500 vectors take about 2.5 MB as JSON or as text


class ServerFault(Exception):
    """The server cannot serve this build; the reason is one line."""


class TooLarge(ServerFault):
    def __init__(self):
        super().__init__(f"its answer is larger than {MAX_ANSWER >> 20} MB")


def shown(url):
    """The server's address as it may be printed: never the user name or password in it,
    nor the query (which may hold a password)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    return f"{parts.scheme}://{host}{port}{parts.path}".rstrip("/")


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
