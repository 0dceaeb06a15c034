"""A test-only reverse proxy in front of a real `chroma run`: it forwards every request, can
check a token or basic-auth credentials, be slow, and misbehave on the answers to lookups
(POST .../get) as a broken or hostile team cache would."""
import base64
import http.server
import json
import threading
import time
import urllib.error
import urllib.request


class Proxy(http.server.ThreadingHTTPServer):
    """upstream: the real server's URL. token: the bearer token it demands. basic: the
    "user:password" it demands. delay: seconds before each answer. corrupt(n, answer):
    given the n-th lookup's answer (a dict, n from 1), returns what to send instead: a
    dict, raw bytes, or a Drip."""
    daemon_threads = True

    def __init__(self, upstream, token=None, basic=None, delay=0.0, corrupt=None):
        self.upstream, self.token, self.basic, self.delay = upstream, token, basic, delay
        self.corrupt, self.lookups, self.seen = corrupt, 0, []
        super().__init__(("127.0.0.1", 0), ProxyHandler)
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def stop(self):
        self.shutdown()
        self.server_close()


class Drip(bytes):
    """An answer sent one byte every `pause` seconds."""
    pause = 0.5


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
            if isinstance(data, dict):
                data = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        if not isinstance(data, Drip) and len(data) < 1 << 20:
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()             # HTTP/1.0: without a length, the answer ends at close
        try:
            if isinstance(data, Drip):
                for i in range(len(data)):
                    self.wfile.write(data[i:i + 1])
                    self.wfile.flush()
                    time.sleep(data.pause)
            else:
                self.wfile.write(data)
        except OSError:                # the client gave up
            pass

    do_GET = do_POST = do_PUT = do_DELETE = forward
