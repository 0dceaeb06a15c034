"""Every setting of codebase-rag, defined once: its environment variable, its default, the
flag that overrides it and what it means. The commands build their --help from here, and
the README's settings table lists the same (a test holds the three together).

Nothing needs editing here: set CODEBASE_RAG_<NAME> in the environment, or pass the flag.
"""
import math
import os
import shlex
import sys
from pathlib import Path
from typing import NamedTuple

ENV = os.environ
# Neither Chroma nor onnxruntime (whose Linux builds upload telemetry since 1.25) may phone
# home: set before either is imported anywhere.
ENV.setdefault("ANONYMIZED_TELEMETRY", "False")
ENV.setdefault("ORT_DISABLE_TELEMETRY", "1")
ENV.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
ENV.setdefault("TOKENIZERS_PARALLELISM", "false")


class Setting(NamedTuple):
    env: str
    default: object
    doc: str
    flag: str = None          # the flag that overrides it, where a command has one
    choices: tuple = None
    lever: bool = False       # a benchmark or test lever (bench/ablation.py), not a product
                              # setting: neither a flag nor the README shows it
    bounds: tuple = None      # (lowest, highest) a number may be; None: no limit that side

    def problem(self, value, shown):
        """Why value is not allowed, or None."""
        if isinstance(value, float) and not math.isfinite(value):
            return f"{shown} must be a finite number"
        low, high = self.bounds or (None, None)
        if low is not None and value < low or high is not None and value > high:
            what = f"at least {low}" if high is None else f"between {low} and {high}"
            return f"{shown} must be {what}"
        return None


SETTINGS = {}
PROBLEMS = []                 # bad values in the environment; the commands report them


def _setting(name, default, doc, flag=None, choices=None, kind=None, lever=False, bounds=None):
    env = "CODEBASE_RAG_" + name
    SETTINGS[name] = setting = Setting(env, default, doc, flag, choices, lever, bounds)
    raw = ENV.get(env, "")
    if raw == "":
        return default
    kind = kind or type(default)
    try:
        value = raw.lower() not in ("0", "false", "no") if kind is bool else kind(raw)
    except ValueError:
        PROBLEMS.append(f"{env}={raw!r} is not a valid {kind.__name__}")
        return default
    if choices and value not in choices:
        PROBLEMS.append(f"{env}={raw!r} is not one of {', '.join(choices)}")
        return default
    if setting.problem(value, f"{env}={raw!r}"):
        PROBLEMS.append(setting.problem(value, f"{env}={raw!r}"))
        return default
    return value


# -- where things are
DB = _setting("DB", None, "the index folder (default: SOURCE/.codebase-rag, found by walking "
              "up from the current directory)", flag="--db", kind=str)
MODEL = _setting("MODEL", None, "sentence-transformers model, a name or a folder (default: the "
                 "packaged all-MiniLM-L6-v2, else the hub's)", flag="--model", kind=str)
CACHE = _setting("CACHE", os.path.join(ENV.get("XDG_CACHE_HOME") or "~/.cache",
                                       "codebase-rag"),
                 "where this machine keeps the model's export, shared by every index")
# -- indexing
MAX_FILE_BYTES = _setting("MAX_FILE_BYTES", 1_000_000, "files bigger than this are skipped", bounds=(1, None))
BATCH = _setting("BATCH", 1, "texts per model call: one at a time (a session per core side "
                 "by side) is fastest on a CPU, costs least memory, and keeps int8 vectors "
                 "from depending on the texts beside them", bounds=(1, None))
FLUSH = _setting("FLUSH", 2000, "windows embedded between two writes to the index", bounds=(1, None))
PROGRESS_EVERY = _setting("PROGRESS_EVERY", 30.0, "seconds between two progress lines where "
                          "the output is no terminal (a CI log, an agent's shell); a line also "
                          "comes at each tenth of the work, but not sooner than a sixth of this",
                          bounds=(0.1, None))
ABSORB_SECONDS = _setting("ABSORB_SECONDS", 1.0, "seconds a search may spend reading and "
                          "chunking files changed since the index read them (a few hundred "
                          "files); it names what it could not take in, and a writer takes it",
                          bounds=(0, None))
CHUNK_SECONDS = _setting("CHUNK_SECONDS", 3.0, "seconds of CPU a file's chunking may take: "
                         "a file over it, or one its chunker fails on, is indexed as plain "
                         "windows of 60 lines, with a warning that names it", bounds=(0.001, None))
HOOK_WAIT = _setting("HOOK_WAIT", 20.0, "seconds a hook waits for another writer before it "
                     "queues its file for that writer", bounds=(0, None))
PRECISION = _setting("PRECISION", "auto", "the model's arithmetic for a new index; auto picks "
                     "by the CPU: int8 where it has VNNI (about 2x faster than fp32), "
                     "int8-reduced (7-bit weights, which AVX2's int8 products cannot "
                     "overflow; about 1.4x faster) where it has AVX2 alone, else fp32, each "
                     "with the same answers; an index keeps the precision it was built with",
                     choices=("auto", "fp32", "int8", "int8-reduced"))
# -- the team cache
SERVER = _setting("SERVER", None, "a team store that shares embeddings between clones: a "
                  "Chroma server (http://host:port or https://...) or PostgreSQL with pgvector "
                  "(postgresql://[user[:password]@][host][:port][/dbname], the rest from "
                  "PGHOST, PGUSER, PGPASSWORD, ... as libpq takes them): a build takes from it "
                  "what it has and sends it what it embedded", flag="--server", kind=str)
SERVER_TOKEN = _setting("SERVER_TOKEN", None, "the token sent to a Chroma server (as "
                        "'Authorization: Bearer' and 'X-Chroma-Token')", kind=str)
SERVER_TIMEOUT = _setting("SERVER_TIMEOUT", 10.0, "seconds any one request to that server "
                          "may take, start to end, before the build goes on without it",
                          bounds=(0.001, None))
SERVER_KEY = _setting("SERVER_KEY", None, "a secret the team shares: each record uploaded "
                      "carries an HMAC-SHA256 made with it, and a record whose HMAC does not "
                      "verify is dropped (without it the server is trusted as is)", kind=str)
SERVER_SAMPLE = _setting("SERVER_SAMPLE", 0.01, "fraction of the vectors of every lookup (at "
                         "least one) that are embedded here too and compared with the server's",
                         bounds=(0, 1))
# -- searching
K = _setting("K", 5, "number of results", flag="-k", bounds=(1, None))
LINES = _setting("LINES", 16, "lines of each result to show, in print and in JSON 'text' "
                 "(-1: the whole chunk)", flag="--lines", bounds=(-1, None))
MODE = _setting("MODE", "hybrid", "ranking: embeddings, BM25 keywords, or both fused",
                flag="--mode", choices=("vector", "lexical", "hybrid"))
VECTOR_SHARE = _setting("VECTOR_SHARE", 0.55, "how much nearness in meaning counts against "
                        "keywords when the two are fused (1: embeddings alone)", bounds=(0, 1))
QUESTION_SHARE = _setting("QUESTION_SHARE", 0.6, "the same, for a question (one that ends "
                          "with '?' or opens with how, where, which, what or why)",
                          bounds=(0, 1))
NAME_SAID = _setting("NAME_SAID", 0.1, "how much a member's score gains when a question read "
                     "as a doc-comment sentence (--as doc) says every word of its name; in "
                     "proportion when it says some", bounds=(0, None))
NAME_WEIGHT = _setting("NAME_WEIGHT", 8.0, "BM25 weight of a member's own names against "
                       "the rest of its text", bounds=(0, None))
TEST_WEIGHT = _setting("TEST_WEIGHT", 0.5, "how much a member of test code counts against "
                      "production code, unless the question is about tests (1: the same)", bounds=(0, 1))
DEMO_WEIGHT = _setting("DEMO_WEIGHT", 0.5, "how much a member of examples, demos or benchmarks, "
                       "or a script's main block, counts against the library's code, unless the "
                       "question asks for examples (1: the same)", bounds=(0, 1))
SHORT_WEIGHT = _setting("SHORT_WEIGHT", 0.7, "how much a member of SHORT_LINES lines or fewer "
                        "counts (1: the same as any other)", bounds=(0, 1))
SHORT_LINES = 3
CONFIDENT = _setting("CONFIDENT", 0.62, "cosine distance above which the best hit is not a "
                     "confident match", bounds=(0, 2))
# -- diagnosis
DEBUG = _setting("DEBUG", False, "print a traceback on an unexpected error")
# -- benchmark levers
HEADER = _setting("HEADER", "path,owner,name,doc,typedoc", "parts of the header that leads "
                  "each embedded text: path, owner (namespace.class), name (kind, member and "
                  "its words), doc (its doc comment), typedoc (its type's); 0 for none",
                  lever=True)
CHROMA = _setting("CHROMA", "bindings", "reach Chroma through its engine's bindings, or "
                  "through its public client (the fallback path)",
                  choices=("bindings", "public"), lever=True)

HEADER_PARTS = [part for part in HEADER.split(",") if part != "0"]

# -- how a person or an agent runs the tool, from any folder: with absolute paths. A checkout
# (installed editable or not) runs its own index.py and query.py with this interpreter; an
# installed package, its console script (pip puts it beside the interpreter, or in the user
# scheme's bin for --user). Detached writers are started the same way, so they run this code.
CHECKOUT = Path(__file__).resolve().parents[1]


def installed_script(name="codebase-rag"):
    """The console script pip made (codebase-rag.exe on Windows), or this interpreter."""
    import sysconfig
    for folder in (Path(sys.executable).parent, sysconfig.get_path("scripts"),
                   sysconfig.get_path("scripts", f"{os.name}_user")):
        for script in (name, name + ".exe"):
            if (Path(folder) / script).is_file():
                return [str(Path(folder).absolute() / script)]
    return [sys.executable, "-m", "codebase_rag"]


def command_line(argv):
    """argv as one line a user can paste: POSIX shell quoting; on Windows the C runtime's
    ("..." where needed, which cmd, PowerShell and Git Bash all read; shlex's '...' would
    reach the program as part of the word)."""
    if sys.platform == "win32":
        import subprocess
        return subprocess.list2cmdline([str(a) for a in argv])
    return shlex.join(str(a) for a in argv)


if (CHECKOUT / "index.py").is_file() and (CHECKOUT / "pyproject.toml").is_file():
    INDEX_ARGV = [sys.executable, str(CHECKOUT / "index.py")]
    QUERY_ARGV = [sys.executable, str(CHECKOUT / "query.py")]
else:
    INDEX_ARGV, QUERY_ARGV = installed_script() + ["index"], installed_script() + ["query"]
INDEX_COMMAND = command_line(INDEX_ARGV)     # as a user types it: POSIX or Windows quoting
QUERY_COMMAND = command_line(QUERY_ARGV)
# -- fixed by the model and the on-disk format, not settings
INDEX_DIRNAME = ".codebase-rag"
HUB_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
PACKAGED_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
DIM = 384                     # MiniLM's vector size
MAX_TOKENS = 256              # MiniLM's window (word pieces, with [CLS] and [SEP])
HEADER_TOKENS = 64            # a longer header (doc comment) is shortened to this
ON_THE_SPOT = 16              # windows of changed files a query embeds before it answers
MAX_QUESTION = 2000           # characters: the model reads 256 word pieces of it anyway
MAX_GLOB = 500                # characters of a --path glob
CANDIDATES = 60               # members nearest in meaning, before fusion
KEYWORD_SCORES = 200          # members scored by keywords: the candidates among them, and
                              # the keyword half of the nearest ones
# never walked, whatever the language (each language adds its own: chunkers.LANGUAGES)
DEFAULT_EXCLUDES = [".git/", "node_modules/", INDEX_DIRNAME + "/"]
COLLECTION = "chunks"
# Each new process replays every Chroma write made since the HNSW index was last saved
# (about 1 ms per vector; its default saves every 1,000): saving every 10 keeps a cold
# query or a hook from replaying hundreds. Searching with ef 400 (default 100) finds 99.6%
# of the exact 60 nearest windows on osu's 44k instead of 95.7%, in about 7 ms.
HNSW_CONFIG = {"space": "cosine", "sync_threshold": 10, "ef_search": 400}
