#!/usr/bin/env python3
"""codebase-rag's Claude Code integration, end to end, as a user gets it.

The real Claude Code CLI (from npm) runs non-interactively in a small C# project that
codebase-rag has indexed, wired one of three ways (--wire):
  manual  the tool checkout's hooks.json.example (its placeholder paths replaced by the
          checkout) in the project's .claude/settings.json, and the MCP server registered
          with `claude mcp add codebase-rag -s project -- PY query.py --mcp` (the default)
  setup   `codebase-rag setup` run in the project (as `PY -m codebase_rag setup`): hooks,
          .mcp.json, its approval and CLAUDE.md, nothing copied by hand; the CLI cases run
          the query command that setup wrote into CLAUDE.md
  plugin  every claude command given `--plugin-dir CHECKOUT` (the checkout's Claude Code
          plugin: hooks, MCP server, skill); nothing in the project; the CLI cases run the
          plugin's launcher, CHECKOUT/plugin/codebase-rag query
Its model is a scripted stand-in of the Anthropic Messages API on 127.0.0.1, and everything
runs in a network namespace that has only loopback, so nothing can leave the machine.

Each case replays a session: the stand-in answers with tool_use blocks (Read, Edit, Write,
Bash) that change the project, then a query of the index (a Bash call of query.py, or the
MCP tool search_code), then a last text. The tool_result that Claude Code sends back is what
the model saw; it is checked for the new member and for its exact file:start-end, computed
from the file on disk afterwards by matching braces.

    python bench/claude_code_e2e.py --tool CHECKOUT [--wire setup] [--cases 1,2,6] [--repeat N] [--json OUT]
    python bench/claude_code_e2e.py --table before=OLD.json now=NEW.json

Cases on a built index: 1 Edit, then query; 2 Write (a new file), then query; 3 `sed -i`
through Bash (a rename and an added line), then query; 4 a line put at the top of a file by
a shell rewrite (printf | cat > tmp && mv), then query; 5 an Edit as the last step before
the session ends, then a new session's first query; 7 `git checkout` of a branch that adds
60 files (more than a query takes in itself), one holding the member asked about; 6 =
6.1-6.5 and 6.7, the same with the MCP tool instead of the CLI.

Cases during a first build (8 = 8.1-8.5, and 9 = 9.1-9.5 through MCP): the project has no
index, and 300 generated files besides (a build of minutes); the SessionStart hook starts
the build (index.py --background). The session's first turn waits until the build has read
every file (--no-hold: it does not), then: 8.1 Write a new file; 8.2 the `sed -i` of case 3;
8.3 the top line of case 4; 8.4 `rm` of a file (no hit from it may come back); 8.5 the
checkout of case 7; each followed at once by the query. index.py --status is taken beside
each turn: the build ran through the query if it said "building" both as the query was
sent and as its answer came back. The build is ended once the case is judged.

Per case: saw change (the new member, or for a shift other lines than before; for `rm`: no
hit from the file), right lines (that member at its lines on disk, and no hit with its old
name), marked (a line above the results says files are not all in the index yet or changed
since it read them; the "semantic index N% built" and "no confident match" lines do not
count), and right or marked, the target. Also printed: `claude mcp get codebase-rag` (it
must say "Connected"; it exits 0 either way), what the SessionStart hook put into the
model's context, and the codebase-rag tools the model was offered.

Needs: root (for `unshare -n`), `ip`, git, and the CLI, which the README's test command
installs into .cache/node (--claude or CLAUDE_E2E_BIN to point elsewhere). The checkout needs its .venv. bypassPermissions refuses
to run as root unless IS_SANDBOX=1, which the sessions set (the namespace is the sandbox).
"""
import argparse
import errno
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "e2e" / "project"
DEFAULT_CLAUDE = str(HERE.parent / ".cache" / "node" / "node_modules" / ".bin" / "claude")
PLACEHOLDER = "/abs/path/to/codebase-rag"
SERVER = "codebase-rag"
PLUGIN = "codebase-rag"       # the plugin's name: Claude Code calls its server plugin:NAME:SERVER
WIRES = ("manual", "setup", "plugin")


def server_id(wire):
    """The server's name for `claude mcp get`, and the prefix of its tools' names."""
    name = f"plugin:{PLUGIN}:{SERVER}" if wire == "plugin" else SERVER
    return name, "mcp__" + re.sub(r"[^a-zA-Z0-9_-]", "_", name) + "__"


WIRE = "manual"               # inside() sets both for the run's wiring
MCP_PREFIX = server_id(WIRE)[1]
K = 3
SESSION_TIMEOUT = 240

# -- the sessions ------------------------------------------------------------------------

REFUND = """\
        public void RefundDeposit(decimal amount, string reason)
        {
            if (string.IsNullOrEmpty(reason))
                throw new ArgumentException("a refund needs a reason");
            _balance -= amount;
            _history.Add("refund " + amount + ": " + reason);
        }

"""
LATE_FEE = """\
using System;

namespace Shop.Billing
{
    public class LateFeePolicy
    {
        private const decimal DailyRate = 0.0005m;
        private const decimal MaxFee = 250m;

        public decimal ComputeLateFee(decimal amountDue, DateTime dueDate, DateTime paidOn)
        {
            int daysLate = (paidOn.Date - dueDate.Date).Days;
            if (daysLate <= 0)
                return 0m;
            decimal fee = amountDue * DailyRate * daysLate;
            return Math.Min(fee, MaxFee);
        }
    }
}
"""
REHASH = """\
        public bool NeedsRehash(string stored)
        {
            int iterations = int.Parse(stored.Split('.')[0]);
            return iterations < Iterations;
        }

"""
WALLET = "src/Billing/Wallet.cs"
INVOICE = "src/Billing/Invoice.cs"
ROUTER = "src/Shipping/ParcelRouter.cs"
HASHER = "src/Accounts/PasswordHasher.cs"
LATE = "src/Billing/LateFeePolicy.cs"
CATALOG = "src/Catalog/ProductSearch.cs"
VAT = "src/Reports/VatReturnReport.cs"
FEATURE = "reports"           # the branch a checkout case switches to
VAT_REPORT = """\
using System;
using System.Collections.Generic;

namespace Shop.Reports
{
    public class VatReturnReport
    {
        private readonly decimal _standardRate;

        public VatReturnReport(decimal standardRate)
        {
            _standardRate = standardRate;
        }

        public decimal ComputeVatReturn(IEnumerable<decimal> salesNet, IEnumerable<decimal> purchasesVat)
        {
            decimal outputVat = 0m;
            foreach (var sale in salesNet)
                outputVat += sale * _standardRate;
            decimal inputVat = 0m;
            foreach (var paid in purchasesVat)
                inputVat += paid;
            return Math.Round(outputVat - inputVat, 2);
        }
    }
}
"""

# -- generated C#: the bulk of a first-build project, and the files a checkout adds ------
# Words far from every question asked here, so that the filler competes for rank only as
# much as any unrelated code does; every member's text differs (the index would embed a
# repeated window once).
NOUNS = ("Orbit", "Sensor", "Glyph", "Palette", "Sprite", "Recipe", "Garden", "Lesson",
         "Turbine", "Valve", "Lantern", "Harbor", "Orchard", "Meadow", "Comet", "Fossil",
         "Lichen", "Quartz", "Beacon", "Canopy", "Tundra", "Rivet", "Spindle", "Marble",
         "Nebula", "Pigment", "Trellis", "Sonar", "Prism", "Bramble")
ROLES = ("Tracker", "Mixer", "Planner", "Sampler", "Renderer", "Catalogue", "Keeper",
         "Tuner", "Sorter", "Weaver", "Painter", "Survey")
VERBS = ("Normalize", "Merge", "Rotate", "Scale", "Collect", "Rank", "Calibrate", "Blend",
         "Smooth", "Align", "Trim", "Mirror", "Gather", "Shuffle", "Stretch", "Polish")
BODIES = (
    """        public double {v}{n}Total(IEnumerable<{n}Entry> entries, double factor)
        {{
            double total = 0;
            foreach (var entry in entries)
            {{
                if (entry.Weight <= {a})
                    continue;
                total += entry.Weight * factor;
            }}
            return Math.Round(total, {b});
        }}
""",
    """        public Dictionary<string, int> {v}{n}ByLabel(IEnumerable<{n}Entry> entries)
        {{
            var counts = new Dictionary<string, int>();
            foreach (var entry in entries)
            {{
                counts.TryGetValue(entry.Label, out int seen);
                counts[entry.Label] = seen + {b};
            }}
            return counts;
        }}
""",
    """        public int {v}{n}Level(int level, int step)
        {{
            int next = level + step * {b};
            if (next < 0)
                return 0;
            return next > {a} ? {a} : next;
        }}
""",
    """        public string {v}{n}Caption({n}Entry entry, bool loud)
        {{
            var caption = entry.Label.Trim() + "-{a}";
            return loud ? caption.ToUpperInvariant() : caption;
        }}
""",
    """        public List<{n}Entry> {v}{n}Window(List<{n}Entry> entries, double limit)
        {{
            var kept = new List<{n}Entry>();
            for (int i = 0; i < entries.Count; i += {b})
                if (entries[i].Weight < limit * {a})
                    kept.Add(entries[i]);
            return kept;
        }}
""",
)


def generated_file(i, namespace):
    """(class name, C# text) of generated file number i: an entry type and a class of seven
    members."""
    noun, role = NOUNS[i % len(NOUNS)], ROLES[i // len(NOUNS) % len(ROLES)]
    name = f"{noun}{role}{i // (len(NOUNS) * len(ROLES)) or ''}"
    members = []
    for j in range(7):
        verb = VERBS[(i * 7 + j) % len(VERBS)]
        members.append(BODIES[(i + j) % len(BODIES)].format(
            v=verb, n=noun, a=(i * 13 + j * 7) % 97 + 3, b=j % 4 + 1))
    return name, (f"using System;\nusing System.Collections.Generic;\n\nnamespace {namespace}\n{{\n"
                  f"    public class {noun}Entry\n    {{\n"
                  f"        public double Weight {{ get; set; }}\n"
                  f"        public string Label {{ get; set; }}\n    }}\n\n"
                  f"    public class {name}\n    {{\n" + "\n".join(members) + "    }\n}\n")


FILLER = 300                  # generated files: 2,422 members, 4,115 windows at 5e53519,
                              # over two minutes of embedding at ~30 windows/s


def filler_files(count):
    """{path: text} of the generated files that make a first build last."""
    out = {}
    for i in range(count):
        role = ROLES[i // len(NOUNS) % len(ROLES)]
        name, text = generated_file(i, f"Shop.Workshop.{role}")
        out[f"src/Workshop/{role}/{name}.cs"] = text
    return out


def feature_files():
    """{path: text} of the files the checkout adds: 60 (more than fresh.MAX_ABSORB), one
    holding the member asked about."""
    out = {VAT: VAT_REPORT}
    for i in range(59):
        name, text = generated_file(i * 7 + 3, "Shop.Reports")
        out[f"src/Reports/{name}Report.cs"] = text
    return out


def base_cases():
    """Cases 1-5: (id, what, sessions, expect). A session is a list of steps: (tool, input)
    with file paths relative to the project, or ("query", question)."""
    return [
        ("1", "Edit, then query at once",
         [[("Read", {"file_path": WALLET}),
           ("Edit", {"file_path": WALLET, "old_string": "        public bool TryWithdraw(",
                     "new_string": REFUND + "        public bool TryWithdraw("}),
           ("query", "refund a deposit out of the wallet and record the reason in its history")]],
         {"file": WALLET, "member": "Wallet.RefundDeposit", "signature": "void RefundDeposit("}),
        ("2", "Write a new file, then query at once",
         [[("Write", {"file_path": LATE, "content": LATE_FEE}),
           ("query", "late fee charged per day on an overdue invoice payment")]],
         {"file": LATE, "member": "LateFeePolicy.ComputeLateFee",
          "signature": "decimal ComputeLateFee("}),
        ("3", "sed -i through Bash (rename + added line), then query",
         [[("Bash", {"command": "sed -i -e 's/EstimateDays/EstimateTransitDays/' "
                                "-e 's|^\\( *\\)days += distanceKm / 500;|&\\n\\1if (distanceKm > 2000) days += 1;|' "
                                + ROUTER,
                     "description": "Rename EstimateDays and add a long-distance day"}),
           ("query", "estimate how many days a parcel is in transit for a carrier and distance")]],
         {"file": ROUTER, "member": "ParcelRouter.EstimateTransitDays",
          "signature": "int EstimateTransitDays(", "forbid": ["ParcelRouter.EstimateDays"]}),
        ("4", "a line inserted at the top by a shell rewrite (shifts lines), then query",
         [[("Bash", {"command": f"printf 'using System.Linq;\\n' | cat - {INVOICE} > /tmp/e2e-invoice.$$ "
                                f"&& mv /tmp/e2e-invoice.$$ {INVOICE}",
                     "description": "Add a using at the top of Invoice.cs"}),
           ("query", "apply a percentage discount to the invoice, rejecting more than 50 percent")]],
         {"file": INVOICE, "member": "Invoice.ApplyDiscount", "signature": "void ApplyDiscount(",
          "shift": True}),
        ("5", "Edit as the last step, then a new session's first query",
         [[("Read", {"file_path": HASHER}),
           ("Edit", {"file_path": HASHER, "old_string": "        public bool Verify(",
                     "new_string": REHASH + "        public bool Verify("})],
          [("query", "does a stored password hash need rehashing because its iteration count is too low")]],
         {"file": HASHER, "member": "PasswordHasher.NeedsRehash", "signature": "bool NeedsRehash("}),
    ]


def checkout_case(cid):
    """A git checkout that adds more files than a query takes in itself (fresh.MAX_ABSORB,
    50 at 5e53519), one of them holding the member asked about."""
    return (cid, f"`git checkout` adding {len(feature_files())} files, then query",
            [[("Bash", {"command": f"git checkout -q {FEATURE}",
                        "description": "Check out the reports branch"}),
              ("query", "VAT owed for the quarter: output tax on sales minus input tax paid "
                        "on purchases")]],
            {"file": VAT, "member": "VatReturnReport.ComputeVatReturn",
             "signature": "decimal ComputeVatReturn("})


def first_build_cases():
    """Cases 8.1-8.5: a project with no index yet, whose first build the SessionStart hook
    starts (index.py --background); each change, and the query at once, while it runs."""
    by_id = {cid: (what, sessions, expect) for cid, what, sessions, expect in base_cases()}
    out = []
    for sub, cid in (("1", "2"), ("2", "3"), ("3", "4")):
        what, sessions, expect = by_id[cid]
        out.append((f"8.{sub}", what.replace("then query", "during the first build, then query"),
                    sessions, expect))
    out.append(("8.4", "`rm` of a file during the first build, then query",
                [[("Bash", {"command": f"rm {CATALOG}", "description": "Delete ProductSearch.cs"}),
                  ("query", "products in stock under a maximum price, cheapest first")]],
                {"gone": CATALOG}))
    cid, what, sessions, expect = checkout_case("8.5")
    out.append((cid, what.replace("then query", "during the first build, then query"),
                sessions, expect))
    return out


def all_cases():
    """Every case, as the CLI (a Bash call of query.py) and the MCP tool search_code ask:
    1-5, 7 and their twins 6.1-6.5, 6.7 on a built index; 8.1-8.5 and their twins 9.1-9.5
    during a first build."""
    built = base_cases() + [checkout_case("7")]
    cases = []
    for cid, what, sessions, expect in built:
        cases.append({"id": cid, "via": "cli", "what": what, "sessions": sessions,
                      "expect": expect, "fresh": False})
    for cid, what, sessions, expect in built:
        cases.append({"id": "6." + cid, "via": "mcp", "what": what + " (MCP search_code)",
                      "sessions": sessions, "expect": expect, "fresh": False})
    for cid, what, sessions, expect in first_build_cases():
        cases.append({"id": cid, "via": "cli", "what": what, "sessions": sessions,
                      "expect": expect, "fresh": True})
    for cid, what, sessions, expect in first_build_cases():
        cases.append({"id": "9." + cid[2:], "via": "mcp", "what": what + " (MCP search_code)",
                      "sessions": sessions, "expect": expect, "fresh": True})
    return cases


def select(spec):
    cases = all_cases()
    if not spec:
        return cases
    wanted = [s.strip() for s in spec.split(",") if s.strip()]
    chosen = [c for c in cases if any(c["id"] == w or c["id"].startswith(w + ".") for w in wanted)]
    unknown = [w for w in wanted if not any(c["id"] == w or c["id"].startswith(w + ".") for c in cases)]
    if unknown:
        sys.exit(f"unknown case(s): {', '.join(unknown)}; known: {', '.join(c['id'] for c in cases)}")
    return chosen


# -- the stand-in of the Messages API --------------------------------------------------

def text_of(content):
    """All text in a message's content or a tool_result's content."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    out = []
    for b in content:
        if isinstance(b, str):
            out.append(b)
        elif b.get("type") == "text":
            out.append(b.get("text", ""))
        elif b.get("type") == "tool_result":
            out.append(text_of(b.get("content")))
    return "\n".join(out)


class StandIn:
    """Answers POST /v1/messages with the current session's scripted turns. A request that
    offers the Bash tool is the agent's main loop: its turn is the number of assistant
    messages it already carries. Any other request (a title, a topic check) gets a short
    text; token counting gets a count; anything else an empty JSON object."""

    def __init__(self, log_path, wait_for_mcp=False):
        self.lock = threading.Lock()
        self.wait_for_mcp = wait_for_mcp
        self.waits = 0          # WaitForMcpServers turns put in before a scripted turn
        self.script = []
        self.tag = "idle"
        self.main = []          # (time, body) of this session's main-loop requests
        self.sent = {}          # tool_use id -> time its turn was sent
        self.other = []         # (path, model) of other requests
        self.on_turn = None     # called with each main-loop turn's blocks as it is sent
        self.log = open(log_path, "a")     # noqa: SIM115 (open while the server lives)
        stand = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def reply(self, ctype, body, code=200):
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("request-id", "req_e2e")
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                stand.record("GET", self.path, None)
                self.reply("application/json", b"{}")

            do_HEAD = do_GET

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                stand.record("POST", self.path, body)
                path = self.path.split("?")[0]
                if path.endswith("/count_tokens"):
                    return self.reply("application/json", json.dumps(
                        {"input_tokens": max(1, len(raw) // 4)}).encode())
                if not path.endswith("/v1/messages"):
                    return self.reply("application/json", b"{}")
                ctype, data = stand.answer(body)
                self.reply(ctype, data)

        class Quiet(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address):
                pass                         # the CLI drops keep-alive connections at exit

        self.http = Quiet(("127.0.0.1", 0), Handler)
        self.port = self.http.server_address[1]
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def record(self, method, path, body):
        with self.lock:
            self.log.write(json.dumps({"t": time.time(), "session": self.tag, "method": method,
                                       "path": path, "body": body}) + "\n")
            self.log.flush()

    def start(self, tag, turns):
        """turns: a list of content-block lists; a final text is added."""
        with self.lock:
            self.tag = tag
            self.script = []
            for step, blocks in enumerate(turns + [[{"type": "text", "text": "Done."}]]):
                out = []
                for j, b in enumerate(blocks):
                    if b["type"] == "tool_use":
                        b = dict(b, id=f"toolu_e2e_{tag}_{step}_{j}".replace(".", "_"))
                    out.append(b)
                self.script.append(out)
            self.main = []
            self.sent = {}
            self.other = []
            self.waits = 0

    def answer(self, body):
        tools = [t.get("name") for t in body.get("tools") or []]
        model = body.get("model") or "claude-e2e"
        main = "Bash" in tools
        with self.lock:
            if main:
                self.main.append((time.time(), body))
                step = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
                step -= self.waits
                blocks = self.script[min(step, len(self.script) - 1)] if self.script else \
                    [{"type": "text", "text": "Done."}]
                wants = [b["name"] for b in blocks if b["type"] == "tool_use"
                         and b["name"].startswith(MCP_PREFIX)]
                if self.wait_for_mcp and wants and not set(wants) <= set(tools) \
                        and "WaitForMcpServers" in tools and self.waits < 3:
                    # What a model does that reads its tool list: the server it needs is
                    # still connecting, so it waits for it, then makes the scripted call.
                    self.waits += 1
                    blocks = [{"type": "tool_use", "name": "WaitForMcpServers",
                               "id": f"toolu_e2e_wait_{self.tag}_{self.waits}".replace(".", "_"),
                               "input": {"servers": [server_id(WIRE)[0]]}}]
            else:
                self.other.append(model)
                blocks = [{"type": "text", "text": "ok"}]
            on_turn = self.on_turn
        if main and on_turn:
            on_turn(blocks)           # may hold the turn: its clock starts after
        with self.lock:
            for b in blocks if main else ():
                if b["type"] == "tool_use":
                    self.sent[b["id"]] = time.time()
        return message(blocks, model, bool(body.get("stream")))

    def results(self):
        """tool_use id -> (text the model got back, is_error, seconds from our turn to it)."""
        found = {}
        with self.lock:
            for t, body in self.main:
                for m in body.get("messages", []):
                    if m.get("role") != "user" or isinstance(m.get("content"), str):
                        continue
                    for b in m["content"]:
                        if b.get("type") == "tool_result" and b.get("tool_use_id") not in found:
                            tid = b.get("tool_use_id")
                            found[tid] = (text_of(b.get("content")), bool(b.get("is_error")),
                                          round(t - self.sent.get(tid, t), 2))
        return found

    def first_request(self):
        with self.lock:
            return self.main[0][1] if self.main else None

    def first_turn_at(self):
        with self.lock:
            return self.main[0][0] if self.main else None

    def mcp_by_turn(self):
        """For each main-loop request: did it offer codebase-rag's tools?"""
        with self.lock:
            return [any(str(t.get("name", "")).startswith(MCP_PREFIX)
                        for t in body.get("tools") or []) for _, body in self.main]


def message(blocks, model, stream):
    tool = any(b["type"] == "tool_use" for b in blocks)
    msg = {"id": f"msg_e2e_{time.time_ns()}", "type": "message", "role": "assistant",
           "model": model, "content": blocks, "stop_reason": "tool_use" if tool else "end_turn",
           "stop_sequence": None, "usage": {"input_tokens": 100, "output_tokens": 20}}
    if not stream:
        return "application/json", json.dumps(msg).encode()
    events = [{"type": "message_start", "message": dict(msg, content=[], stop_reason=None)}]
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            events += [{"type": "content_block_start", "index": i,
                        "content_block": {"type": "text", "text": ""}},
                       {"type": "content_block_delta", "index": i,
                        "delta": {"type": "text_delta", "text": b["text"]}}]
        else:
            events += [{"type": "content_block_start", "index": i,
                        "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"],
                                          "input": {}}},
                       {"type": "content_block_delta", "index": i,
                        "delta": {"type": "input_json_delta",
                                  "partial_json": json.dumps(b["input"])}}]
        events.append({"type": "content_block_stop", "index": i})
    events += [{"type": "message_delta",
                "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": 20}},
               {"type": "message_stop"}]
    data = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    return "text/event-stream", data.encode()


# -- the checks ------------------------------------------------------------------------

HIT = re.compile(r"^#(\d+) \| (.+?):(\d+)-(\d+) \| (\S+) \| (?:cosine )?dist: (\S+)", re.MULTILINE)


def hits_of(text):
    return [{"rank": int(m[1]), "file": m[2], "start": int(m[3]), "end": int(m[4]),
             "member": m[5], "dist": m[6]} for m in HIT.finditer(text)]


def member_lines(path, signature):
    """(start, end) of the member whose signature line contains `signature`: that line, and
    the line of the brace that closes the body it opens. None if it is not in the file."""
    try:
        lines = Path(path).read_text().split("\n")
    except OSError:
        return None
    for i, line in enumerate(lines):
        if signature in line:
            depth, opened = 0, False
            for j in range(i, len(lines)):
                for ch in lines[j]:
                    if ch == "{":
                        depth, opened = depth + 1, True
                    elif ch == "}":
                        depth -= 1
                if opened and depth == 0:
                    return i + 1, j + 1
            return None
    return None


# A line above the results that says files are not (all) in the index yet, or changed since
# it read them. The semantic-index line ("semantic index N% built ...; ranking leans on
# keywords") and "no confident match" say how the ranking was made, not what is missing.
MARK = re.compile(r"\bfiles?\b|\bindex(ed|ing)\b|changed since|not in the index", re.IGNORECASE)
NOT_A_MARK = re.compile(r"^semantic index \d+% built|^no confident match")


def notes_of(text):
    """The lines above the first hit (all of them if there is none)."""
    notes = []
    for ln in text.splitlines():
        if HIT.match(ln):
            break
        if ln.strip():
            notes.append(ln.strip())
    return notes


def marked(text):
    return any(MARK.search(n) and not NOT_A_MARK.search(n) for n in notes_of(text))


def judge(answer, expect, want, before):
    """(saw, right, hit). saw: the answer names the member (for a shift: with lines other
    than before the change); right: that hit's file and lines are the ones on disk, and no
    hit has the member's old name. For a deleted file (expect["gone"]): saw and right both
    mean an answer with hits, none from that file."""
    hits = hits_of(answer)
    if expect.get("gone"):
        clean = bool(hits) and not any(h["file"] == expect["gone"] for h in hits)
        return clean, clean, next((h for h in hits if h["file"] == expect["gone"]), None)
    mine = [h for h in hits if h["member"] == expect["member"]]
    if not mine or want is None:
        return False, False, mine[0] if mine else None
    h = mine[0]
    at = (h["start"], h["end"])
    saw = at != before if expect.get("shift") else True
    old = any(x["member"] in expect.get("forbid", ()) for x in hits)
    right = h["file"] == expect["file"] and at == want and not old
    return saw, right, h


# -- the sandbox -------------------------------------------------------------------------

def my_netns():
    return os.readlink("/proc/self/ns/net")


def netns_mates():
    """Processes in this network namespace other than this one: hooks, background builds
    and MCP servers that outlive a session."""
    me, ns = os.getpid(), my_netns()
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == me:
            continue
        try:
            if os.readlink(f"/proc/{p}/ns/net") == ns:
                out.append((int(p), Path(f"/proc/{p}/cmdline").read_bytes()
                            .replace(b"\0", b" ").decode(errors="replace").strip()))
        except OSError:
            pass
    return out


def wait_quiet(timeout=120):
    """Wait until nothing but this process runs in the namespace; returns what was left."""
    end = time.time() + timeout
    while time.time() < end:
        left = [p for p in netns_mates() if p[1]]
        if not left:
            return []
        time.sleep(0.2)
    return netns_mates()


def stop_leftovers(grace=10):
    """End what a case left running in the namespace (a first build, for minutes more):
    SIGTERM, then SIGKILL. Everything there was started by this bench. Returns what ran."""
    left = [p for p in netns_mates() if p[1]]
    for pid, _ in left:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
    if wait_quiet(grace):
        for pid, _ in netns_mates():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        wait_quiet(30)
    return [cmd for _, cmd in left]


def building_at_query(sessions):
    """Whether index.py --status said "building" both as the query was sent and as its
    answer came back (so the first build ran all through the query); None if not taken."""
    for s in sessions:
        probes = s.get("status_by_turn") or []
        for i, p in enumerate(probes):
            if p["query"] and i + 1 < len(probes):
                return all((q.get("status") or [""])[0].startswith("building")
                           for q in probes[i:i + 2])
    return None


def check_isolated():
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=False).stdout
    names = [ln.split(":")[1].strip() for ln in links.splitlines() if ":" in ln]
    if names != ["lo"]:
        sys.exit(f"the namespace has links other than lo: {names}")
    for host in ("1.1.1.1", "160.79.104.10"):     # any public address; api.anthropic.com's range
        s = socket.socket()
        s.settimeout(2)
        try:
            s.connect((host, 443))
            sys.exit(f"reached {host}: the namespace is not isolated")
        except OSError as e:
            if e.errno not in (errno.ENETUNREACH, errno.EHOSTUNREACH):
                sys.exit(f"connecting to {host}: {e} (expected 'network unreachable')")
        finally:
            s.close()
    return names


def sanitized_env(home, port, cache):
    drop = ("CLAUDE", "ANTHROPIC", "CODEBASE_RAG", "MCP_", "OTEL_", "VIRTUAL_ENV")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "/usr/bin:/bin").split(os.pathsep)
                                  if ".venv" not in p)
    env.update({
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
        "ANTHROPIC_API_KEY": "sk-ant-e2e-dummy-key",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "IS_SANDBOX": "1",                 # bypassPermissions as root: the namespace is the sandbox
        # codebase-rag's model export is made once per machine, in the user's cache folder:
        # reuse it (Claude Code keeps its own cache, MCP logs included, in the temporary HOME)
        "CODEBASE_RAG_CACHE": str(Path(cache) / "codebase-rag"),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "GIT_AUTHOR_NAME": "e2e", "GIT_AUTHOR_EMAIL": "e2e@localhost",
        "GIT_COMMITTER_NAME": "e2e", "GIT_COMMITTER_EMAIL": "e2e@localhost",
    })
    return env


# -- one checkout ------------------------------------------------------------------------

class Bench:
    def __init__(self, tool, claude, work, log, always_load=False, wait_for_mcp=False,
                 wire="manual"):
        self.tool = Path(tool).resolve()
        self.py = self.tool / ".venv" / "bin" / "python"
        self.wire = wire
        # every claude command of a plugin run loads the checkout as a plugin
        self.claude = [claude, *(["--plugin-dir", str(self.tool)] if wire == "plugin" else [])]
        self.query_prefix = None      # the shell's query command, as the wiring says it
        self.work = Path(work)
        self.proj = self.work / "proj"
        self.template = self.work / "proj.template"
        self.fresh_template = self.work / "proj.fresh"      # no index: a first build's cases
        self.stand = StandIn(self.work / "requests.jsonl", wait_for_mcp)
        self.env = sanitized_env(self.work / "home", self.stand.port, log["cache"])
        (self.work / "home").mkdir(parents=True, exist_ok=True)
        self.log = log
        self.always_load = always_load
        self.hold = True              # see hold_until_read

    def run(self, cmd, cwd=None, timeout=600, check=True):
        r = subprocess.run(cmd, cwd=cwd or self.proj, env=self.env, capture_output=True,
                           text=True, timeout=timeout, check=False)
        if check and r.returncode:
            sys.exit(f"failed ({r.returncode}): {shlex.join(map(str, cmd))}\n{r.stdout}\n{r.stderr}")
        return r

    def query_command(self, question):
        return f"{self.query_prefix} -k {K} {shlex.quote(question)}"

    def make_repo(self, dest, filler=0):
        """The project as a git repository on branch main, and a branch FEATURE that adds
        feature_files(); filler: that many generated files besides, on both."""
        shutil.copytree(PROJECT, dest)

        def add(files, why):
            for rel, text in files.items():
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                (dest / rel).write_text(text)
            self.run(["git", "add", "-A"], cwd=dest)
            self.run(["git", "commit", "-qm", why], cwd=dest)

        self.run(["git", "init", "-q", "-b", "main"], cwd=dest)
        add(filler_files(filler), "a small shop")
        self.run(["git", "checkout", "-qb", FEATURE], cwd=dest)
        add(feature_files(), "reports")
        self.run(["git", "checkout", "-q", "main"], cwd=dest)

    def wire_by_hand(self, proj):
        """The manual wiring: hooks.json.example with the checkout's paths, claude mcp add,
        and the approval an interactive user gives at the first start ("Use this and all
        future MCP servers in this project?"; -p never asks)."""
        hooks = (self.tool / "hooks.json.example").read_text().replace(PLACEHOLDER, str(self.tool))
        (proj / ".claude").mkdir()
        (proj / ".claude" / "settings.json").write_text(json.dumps(json.loads(hooks), indent=2)
                                                        + "\n")
        r = self.run([*self.claude, "mcp", "add", SERVER, "-s", "project", "--",
                      str(self.py), str(self.tool / "query.py"), "--mcp"], cwd=proj, timeout=60)
        self.log["mcp_add"] = (r.stdout + r.stderr).strip()
        if self.always_load:
            # Server-level alwaysLoad in .mcp.json: headless Claude Code then waits for the
            # server before the first turn, instead of connecting it in the background.
            mcp = json.loads((proj / ".mcp.json").read_text())
            mcp["mcpServers"][SERVER]["alwaysLoad"] = True
            (proj / ".mcp.json").write_text(json.dumps(mcp, indent=2) + "\n")
        local = {"enabledMcpjsonServers": [SERVER]}
        (proj / ".claude" / "settings.local.json").write_text(json.dumps(local, indent=2) + "\n")

    def wire_project(self, proj):
        """Wire Claude Code into proj as --wire says; the shell's query command."""
        if self.wire == "manual":
            self.wire_by_hand(proj)
            return f"{shlex.quote(str(self.py))} {shlex.quote(str(self.tool / 'query.py'))}"
        if self.wire == "plugin":
            return shlex.quote(str(self.tool / "plugin" / "codebase-rag")) + " query"
        # the checkout's own interpreter runs its package (a user: .venv/bin/codebase-rag)
        r = self.run([str(self.py), "-m", "codebase_rag", "setup", "--project", str(proj)],
                     cwd=self.tool, timeout=60)
        self.log.setdefault("setup", []).append((r.stdout + r.stderr).strip())
        [command] = re.findall(r'^ {6}(.*) "how are user passwords hashed and verified\?"$',
                               (proj / "CLAUDE.md").read_text(), re.M)
        return command

    def setup(self, fresh=False):
        self.make_repo(self.proj)
        self.query_prefix = self.wire_project(self.proj)
        if (self.proj / ".mcp.json").is_file():
            self.log["mcp_json"] = json.loads((self.proj / ".mcp.json").read_text())
        t = time.time()
        r = self.run([str(self.py), str(self.tool / "index.py"), "--source", str(self.proj)],
                     timeout=900)
        self.log["index"] = {"seconds": round(time.time() - t, 1),
                             "output": (r.stdout + r.stderr).strip().splitlines()[-1:]}
        r = self.run([*self.claude, "mcp", "get", server_id(self.wire)[0]], timeout=120,
                     check=False)
        self.log["mcp_get"] = (r.stdout + r.stderr).strip()
        self.log["mcp_get_rc"] = r.returncode
        self.log["mcp_connected"] = bool(re.search(r"\bConnected\b", self.log["mcp_get"]))
        wait_quiet()
        shutil.copytree(self.proj, self.template, symlinks=True)   # copy2: keeps mtimes
        if fresh:
            # the same project wired the same way, with generated files besides, and no index
            self.make_repo(self.fresh_template, FILLER)
            if self.wire == "manual":
                shutil.copytree(self.proj / ".claude", self.fresh_template / ".claude")
                shutil.copy2(self.proj / ".mcp.json", self.fresh_template / ".mcp.json")
            elif self.wire == "setup":
                self.wire_project(self.fresh_template)
            self.log["first_build_project"] = {
                "files": sum(1 for _ in self.fresh_template.rglob("*.cs")),
                "generated": FILLER}

    def reset(self, fresh=False):
        wait_quiet()
        shutil.rmtree(self.proj)
        shutil.copytree(self.fresh_template if fresh else self.template, self.proj, symlinks=True)

    def hold_until_read(self, timeout=180):
        """Hold a first build's first turn until the build has read every file (step 1; it
        then embeds for minutes): as a user whose first prompt comes a few seconds after
        the start, so that each change lands on a file the index already holds, or beside
        them. Returns (seconds held, the status line it ended on)."""
        started, want = time.time(), self.log["first_build_project"]["files"]
        while True:
            lines = self.status() or [""]
            read = re.search(r"([\d,]+) files", lines[0])
            if read and int(read[1].replace(",", "")) >= want or time.time() - started > timeout \
                    or lines[0].startswith(("built", "failed", "interrupted")):
                return round(time.time() - started, 1), lines[0]
            time.sleep(0.5)

    def status(self):
        """index.py --status of the project now, as lines (the build's own account)."""
        r = self.run([str(self.py), str(self.tool / "index.py"), "--status", "--source",
                      str(self.proj)], timeout=120, check=False)
        return (r.stdout + r.stderr).strip().splitlines()

    def turns(self, steps, via):
        out = []
        for tool, arg in steps:
            if tool == "query":
                if via == "mcp":
                    block = {"type": "tool_use", "name": MCP_PREFIX + "search_code",
                             "input": {"question": arg, "k": K}}
                else:
                    block = {"type": "tool_use", "name": "Bash",
                             "input": {"command": self.query_command(arg),
                                       "description": "Search the codebase-rag index"}}
                block["query"] = True
            else:
                arg = {k: str(self.proj / v) if k == "file_path" else v for k, v in arg.items()}
                block = {"type": "tool_use", "name": tool, "input": arg}
            out.append([block])
        return out

    def session(self, tag, steps, via, watch=False):
        """One claude -p session of the scripted steps. watch: take index.py --status as each
        turn is sent (beside it, so nothing waits for it), to know whether the first build
        was running while the query ran."""
        turns = self.turns(steps, via)
        wire = [[{k: v for k, v in b.items() if k != "query"} for b in t] for t in turns]
        self.stand.start(tag, wire)
        query_ids = {w[0]["id"] for t_, w in zip(turns, self.stand.script) if t_[0].get("query")}
        probes, threads = [], []

        def on_turn(blocks):
            probe = {"sending": blocks[0].get("name") or blocks[0]["type"],
                     "query": any(b.get("id") in query_ids for b in blocks),
                     "at": round(time.time() - t, 2)}
            if not probes and self.hold:
                probe["held"] = self.hold_until_read()
                probe["at"] = round(time.time() - t, 2)
            probes.append(probe)
            th = threading.Thread(target=lambda: probe.update(status=self.status()))
            th.start()
            threads.append(th)

        self.stand.on_turn = on_turn if watch else None
        t = time.time()
        try:
            r = subprocess.run([*self.claude, "-p", f"e2e session {tag}", "--permission-mode",
                                "bypassPermissions", "--output-format", "json"],
                               cwd=self.proj, env=self.env, capture_output=True, text=True,
                               timeout=SESSION_TIMEOUT, check=False)
            rc, out, err = r.returncode, r.stdout, r.stderr
        except subprocess.TimeoutExpired as e:
            rc, out, err = "timeout", e.stdout or "", e.stderr or ""
        seconds = round(time.time() - t, 1)
        self.stand.on_turn = None
        for th in threads:
            th.join()
        results = self.stand.results()
        steps_out = []
        for t_, wt in zip(turns, self.stand.script):
            b, w = t_[0], wt[0]
            text, is_error, gap = results.get(w["id"], (None, None, None))
            steps_out.append({"tool": b["name"], "query": bool(b.get("query")),
                              "input": b["input"], "result": text, "is_error": is_error,
                              "seconds": gap})
        first = self.stand.first_request()
        at = self.stand.first_turn_at()
        mcp_log = self.mcp_log(t)
        try:
            cli = json.loads(out)
            cli = {k: cli.get(k) for k in ("subtype", "is_error", "num_turns", "duration_ms",
                                           "time_to_request_ms", "result", "terminal_reason")}
        except ValueError:
            cli = (out or "")[-600:]
        return {"first_turn_s": round(at - t, 2) if at else None,"tag": tag, "rc": rc, "seconds": seconds, "stderr": (err or "")[-2000:],
                "cli_result": cli, "steps": steps_out,
                "context": context_of(first), "side_requests": len(self.stand.other),
                "mcp_tools_by_turn": self.stand.mcp_by_turn(), "mcp_log": mcp_log,
                "waits_for_mcp": self.stand.waits, "status_by_turn": probes,
                "wait_seconds": [v[2] for k, v in results.items() if k.startswith("toolu_e2e_wait_")]}

    def mcp_log(self, since):
        """Claude Code's own log of the codebase-rag connection in the session that started
        at `since`: how long the connect took, or that it never finished."""
        logs = sorted((self.work / "home" / ".cache" / "claude-cli-nodejs").glob(
            f"*/mcp-logs-*{SERVER}*/*.jsonl"))
        logs = [p for p in logs if p.stat().st_mtime >= since - 1]
        if not logs:
            return None
        text = logs[-1].read_text(errors="replace")
        m = re.search(r"connected \(transport: stdio\) in (\d+)ms", text)
        errors = re.findall(r'"error":"([^"]{0,200})', text)
        return {"connect_ms": int(m[1]) if m else None, "errors": errors[:3],
                "sigint_ignored": "SIGINT failed" in text}

    def case(self, case, rep):
        fresh = case["fresh"]
        self.reset(fresh)
        exp = case["expect"]
        before = member_lines(self.proj / exp["file"], exp["signature"]) if exp.get("shift") else None
        sessions = []
        for i, steps in enumerate(case["sessions"]):
            sessions.append(self.session(f"{case['id']}r{rep}s{i + 1}", steps, case["via"], fresh))
        want = member_lines(self.proj / exp["file"], exp["signature"]) if "file" in exp else None
        queries = [s for sess in sessions for s in sess["steps"] if s["query"]]
        answer = queries[-1]["result"] if queries else None
        saw, right, hit = judge(answer or "", exp, want, before)
        # a first build runs for minutes after its case is judged: ended (everything in the
        # namespace was started by this bench); a built index's work is waited for
        left = stop_leftovers() if fresh else wait_quiet()
        return {"case": case["id"], "via": case["via"], "what": case["what"], "repeat": rep,
                "fresh": fresh, "saw": saw, "right": right, "marked": marked(answer or ""),
                "building": building_at_query(sessions) if fresh else None,
                "notes": notes_of(answer or ""),
                "expected": {"file": exp.get("file"), "member": exp.get("member"),
                             "gone": exp.get("gone"), "lines": want, "before": before},
                "hit": hit, "answer": answer, "query_seconds": queries[-1]["seconds"] if queries else None,
                "edit_seconds": [s["seconds"] for sess in sessions for s in sess["steps"]
                                 if s["tool"] in ("Edit", "Write", "Bash") and not s["query"]],
                "sessions": sessions, "left_running": left}


def status_at_query(r):
    """index.py --status's progress line as the query was sent, and how long the first turn
    was held."""
    for s in r["sessions"]:
        probes = s.get("status_by_turn") or []
        for p in probes:
            if p["query"]:
                held = probes[0].get("held")
                return " / ".join((p.get("status") or [])[:2]) + \
                    (f" (first turn held {held[0]} s)" if held else "")
    return ""


def duration(seconds):
    return f"{int(seconds) // 60}m {int(seconds) % 60:02d}s"


def context_of(body):
    """What the first main-loop request carried that the hooks and MCP put there: the
    SessionStart hook's text, and the codebase-rag tools offered."""
    if not body:
        return {"session_start": None, "tools": [], "mcp_tools": []}
    texts = []
    for m in body.get("messages", []):
        c = m.get("content")
        texts.extend([c] if isinstance(c, str) else [b.get("text", "") for b in c or []
                                                     if isinstance(b, dict)])
    system = body.get("system")
    sys_text = system if isinstance(system, str) else "\n".join(b.get("text", "") for b in system or [])
    # Claude Code puts a SessionStart hook's stdout at the head of a system message:
    # "SessionStart:startup hook success: <stdout>", then a blank line and its own text.
    starts = [t[t.index("SessionStart"):].split("\n\n")[0] for t in texts if "SessionStart" in t]
    tools = body.get("tools") or []
    mcp = [{"name": t.get("name"), "defer_loading": t.get("defer_loading"),
            "params": sorted((t.get("input_schema") or {}).get("properties", {}))}
           for t in tools if str(t.get("name", "")).startswith(MCP_PREFIX)]
    return {"session_start": starts, "tools": [t.get("name") for t in tools], "mcp_tools": mcp,
            "mcp_in_system": [ln for ln in sys_text.splitlines() if SERVER in ln][:5]}


# -- reporting ---------------------------------------------------------------------------

def passed(r):
    """Right (the change seen, at the lines on disk), or plainly marked as not caught up."""
    return bool(r["saw"] and r["right"]) or marked(r["answer"] or "")


def summarize(runs):
    """case -> {what, n, saw, right, marked, ok, building}: counts over its repeats
    (building: None for a built index's cases). Older run files have no "marked": it is
    read from their answers."""
    rows = {}
    for r in runs:
        row = rows.setdefault(r["case"], {"what": r["what"], "n": 0, "saw": 0, "right": 0,
                                          "marked": 0, "ok": 0, "building": None})
        row["n"] += 1
        row["saw"] += bool(r["saw"])
        row["right"] += bool(r["right"])
        row["marked"] += marked(r["answer"] or "")
        row["ok"] += passed(r)
        if r.get("building") is not None:
            row["building"] = (row["building"] or 0) + r["building"]
    return rows


COLUMNS = (("saw", "saw change"), ("right", "right lines"), ("marked", "marked"),
           ("ok", "right or marked"), ("building", "build running at the query"))


def cells(row):
    return [f"{row[k]}/{row['n']}" if row[k] is not None else "-" for k, _ in COLUMNS]


def print_table(runs):
    rows = summarize(runs)
    print(f"{'case':<5} {'what':<76} " + " ".join(f"{h:>{len(h)}}" for _, h in COLUMNS))
    for cid, row in rows.items():
        print(f"{cid:<5} {row['what'][:76]:<76} "
              + " ".join(f"{c:>{len(h)}}" for c, (_, h) in zip(cells(row), COLUMNS)))


def print_timings(runs):
    """Medians, from the stand-in's clock: our tool_use sent -> its result back (the hook
    included for Edit/Write; the whole CLI process for a Bash query)."""
    import statistics

    def med(xs):
        xs = [x for x in xs if x is not None]
        return f"{statistics.median(xs):.2f} s (n={len(xs)})" if xs else "-"

    for via in ("cli", "mcp"):
        mine = [r for r in runs if r["via"] == via]
        if mine:
            answered = [r["query_seconds"] for r in mine if hits_of(r["answer"] or "")]
            steps = [st for r in mine for sess in r["sessions"] for st in sess["steps"]]
            by = {tool: med(st["seconds"] for st in steps if st["tool"] == tool and not st["query"])
                  for tool in ("Read", "Edit", "Write", "Bash")}
            print(f"{via}: query step, when it answered, {med(answered)}; other steps: "
                  + "; ".join(f"{k} {v}" for k, v in by.items()))
    sessions = [s for r in runs for s in r["sessions"]]
    logs = [s["mcp_log"] for s in sessions if s.get("mcp_log")]
    connected = [g["connect_ms"] / 1000 for g in logs if g["connect_ms"] is not None]
    missing = sum(1 for s in sessions if s["mcp_tools_by_turn"] and not s["mcp_tools_by_turn"][0])
    print(f"MCP connect (Claude Code's log): {med(connected)}; never connected in "
          f"{len(logs) - len(connected)} of {len(logs)} sessions; codebase-rag tools missing "
          f"from the first turn in {missing} of {len(sessions)} sessions")


def print_compare(labelled):
    """A markdown table: per case, each column of COLUMNS for each labelled run file."""
    data = []
    for item in labelled:
        label, _, path = item.partition("=")
        log = json.loads(Path(path).read_text())
        data.append((label, log.get("commit") or "?", summarize(log["runs"])))
    cases = list(dict.fromkeys(c for _, _, rows in data for c in rows))
    head = " | ".join(f"{label} ({commit}) {h}" for label, commit, _ in data for _, h in COLUMNS)
    print(f"| case | what | {head} |")
    print("|---|---|" + "---:|" * len(COLUMNS) * len(data))
    for c in cases:
        what = next(rows[c]["what"] for _, _, rows in data if c in rows)
        out = []
        for _, _, rows in data:
            out += cells(rows[c]) if c in rows else ["-"] * len(COLUMNS)
        print(f"| {c} | {what} | " + " | ".join(out) + " |")


def show_failures(runs):
    """Every answer that was not right, as the model saw it (notes and hit lines)."""
    for r in runs:
        if r["saw"] and r["right"]:
            continue
        e = r["expected"]
        want = (f"no hit from {e['gone']}" if e.get("gone") else
                f"{e['member']} at {e['file']}:{'-'.join(map(str, e['lines'] or ['?']))}"
                + (f" (before: {e['before']})" if e["before"] else ""))
        building = "" if r.get("building") is None else f" building={r['building']}"
        print(f"\n-- case {r['case']} repeat {r['repeat']}: saw={r['saw']} right={r['right']} "
              f"marked={marked(r['answer'] or '')}{building}; expected {want}")
        print("   answer the model saw:")
        for ln in (r["answer"] or "(no tool result)").splitlines()[:12]:
            if HIT.match(ln) or not ln.startswith(" ") or "Error" in ln:
                print("   | " + ln[:260])
        for s in r["sessions"]:
            if s["rc"] not in (0,):
                print(f"   session {s['tag']}: rc={s['rc']} {s['stderr'][-300:]}")


def inside(args):
    global WIRE, MCP_PREFIX
    WIRE, MCP_PREFIX = args.wire, server_id(args.wire)[1]
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    links = check_isolated()
    claude = args.claude
    version = subprocess.run([claude, "--version"], capture_output=True, text=True, check=False,
                             env={**os.environ, "DISABLE_AUTOUPDATER": "1"}).stdout.strip()
    cases = select(args.cases)
    work = Path(tempfile.mkdtemp(prefix="cc-e2e-"))
    tool = Path(args.tool).resolve()
    commit = subprocess.run(["git", "-C", str(tool), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True, check=False).stdout.strip() \
        or args.commit
    log = {"tool": str(tool), "commit": commit, "claude": version, "links": links,
           "cache": args.cache, "work": str(work), "started": time.strftime("%Y-%m-%d %H:%M:%S UTC",
                                                                              time.gmtime())}
    bench = Bench(tool, claude, work, log, args.mcp_always_load, args.wait_for_mcp, args.wire)
    log["wire"] = args.wire
    bench.hold = log["hold_first_turn"] = not args.no_hold
    log["mcp_always_load"] = args.mcp_always_load
    log["wait_for_mcp"] = args.wait_for_mcp
    print(f"claude {version}; tool {tool} @ {commit}; stand-in on 127.0.0.1:{bench.stand.port}; "
          f"namespace links: {links}; work {work}", flush=True)
    began = time.time()
    bench.setup(fresh=any(c["fresh"] for c in cases))
    print(f"indexed: {log['index']}", flush=True)
    if "first_build_project" in log:
        print(f"first-build project: {log['first_build_project']}", flush=True)
    print(f"claude mcp get {server_id(args.wire)[0]} (rc {log['mcp_get_rc']}; wired: "
          f"{args.wire}):")
    for ln in log["mcp_get"].splitlines():
        print("   " + ln)
    print(f"  -> Connected: {log['mcp_connected']}", flush=True)
    runs = []
    for rep in range(1, args.repeat + 1):
        for case in cases:
            r = bench.case(case, rep)
            runs.append(r)
            print(f"case {r['case']:<4} rep {rep}: saw={r['saw']!s:<5} right={r['right']!s:<5} "
                  f"marked={r['marked']!s:<5} "
                  f"hit={r['hit'] and (r['hit']['file'] + ':' + str(r['hit']['start']) + '-' + str(r['hit']['end']))} "
                  f"want={r['expected']['lines'] or r['expected']['gone']} query {r['query_seconds']} s, "
                  f"edits {r['edit_seconds']} s, sessions {[s['seconds'] for s in r['sessions']]} s"
                  + (f"; at the query: building={r['building']} {status_at_query(r)}"
                     if r["fresh"] else ""), flush=True)
    for fresh in (False, True):
        first = next((r["sessions"][0]["context"] for r in runs if r["fresh"] == fresh), None)
        if first is None:
            continue
        print(f"\nSessionStart text in the model's context (first session "
              f"{'of a first build' if fresh else 'on a built index'}):")
        for t in first.get("session_start") or ["(none)"]:
            for ln in t.splitlines():
                print("   " + ln)
        print(f"codebase-rag tools offered to the model: {first.get('mcp_tools')}")
    print()
    print_table(runs)
    print_timings(runs)
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (1 min), {os.cpu_count()} CPUs; "
          f"the run took {duration(time.time() - began)}")
    log["seconds"] = round(time.time() - began)
    show_failures(runs)
    log["runs"] = runs
    if args.json:
        Path(args.json).write_text(json.dumps(log, indent=1) + "\n")
        print(f"\nwrote {args.json}")
    if not args.keep:
        wait_quiet(60)
        shutil.rmtree(work, ignore_errors=True)
    return 0 if all(passed(r) for r in runs) and log["mcp_connected"] else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", help="the codebase-rag checkout under test (with its .venv)")
    ap.add_argument("--cases", help="comma-separated: 1-5 and 7 (a built index), 6 (their MCP "
                    "twins) or 6.1-6.5, 6.7; 8 (a first build: 8.1-8.5), 9 (their MCP twins); "
                    "default all")
    ap.add_argument("--wire", choices=WIRES, default="manual",
                    help="how the project is wired to codebase-rag: by hand (hooks.json.example, "
                         "claude mcp add), by `codebase-rag setup`, or as a plugin "
                         "(claude --plugin-dir CHECKOUT); default manual")
    ap.add_argument("--commit", default="",
                    help="the commit to record for a checkout that is not a git work tree")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json", help="write every run, answers included, to this file")
    ap.add_argument("--claude", default=os.environ.get("CLAUDE_E2E_BIN", DEFAULT_CLAUDE),
                    help=f"the claude binary (default {DEFAULT_CLAUDE})")
    ap.add_argument("--cache", default=os.path.join(os.environ.get("XDG_CACHE_HOME") or
                                                    os.path.expanduser("~/.cache")),
                    help="the cache folder whose codebase-rag/ holds the model export "
                         "(default: yours)")
    ap.add_argument("--mcp-always-load", action="store_true",
                    help='a diagnostic: add "alwaysLoad": true to the server in .mcp.json '
                         "(claude mcp add does not write it)")
    ap.add_argument("--wait-for-mcp", action="store_true",
                    help="the stand-in calls WaitForMcpServers before an MCP query whose tool "
                         "is not offered yet (by default it calls the tool regardless)")
    ap.add_argument("--no-hold", action="store_true",
                    help="a first build's first turn goes at once, while the build may still "
                         "be reading the files (by default it waits until they are all read)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    ap.add_argument("--table", nargs="+", metavar="LABEL=JSON",
                    help="print a markdown table comparing runs written by --json, and exit")
    ap.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.table:
        print_compare(args.table)
        return 0
    if not args.tool:
        ap.error("--tool is required")
    tool = Path(args.tool).resolve()
    if not (tool / ".venv" / "bin" / "python").exists():
        ap.error(f"{tool} has no .venv (symlink one in)")
    if not Path(args.claude).exists():
        ap.error(f"no claude at {args.claude}: npm install @anthropic-ai/claude-code "
                 "into a folder outside the project, or pass --claude")
    if args.json:
        args.json = str(Path(args.json).resolve())
    if args.inside:
        return inside(args)
    if os.geteuid() != 0:
        ap.error("needs root, for unshare -n (a network namespace with only loopback)")
    argv = list(sys.argv[1:])
    cmd = ["unshare", "-n", "--", sys.executable, str(Path(__file__).resolve()), "--inside",
           "--cache", args.cache] + argv
    return subprocess.run(cmd, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
