#!/usr/bin/env python3
"""Mine (description, member) pairs from public repositories, to fine-tune the model.

    python bench/train/mine_pairs.py [--mirror /work/.mirror] [--data /work/train-data]
                                     [--pin] [--target 25000] [--seed 1]

A pair is a member's doc comment (the description) and the text the index embeds for that
member when it has no doc comment (the member): chunked by codebase_rag's own chunkers,
header, body and first window made by codebase_rag.text exactly as indexer.build_file makes
them, with the member's own doc left out of both (the header would otherwise carry the
answer). A member gives its summary's first sentence, and may give a second phrasing: a
later sentence of the summary, else its <returns> / @returns / Returns text.

Repositories are REPOS below, each read at the commit the manifest pins (--pin takes each
mirror's HEAD instead and rewrites the manifest). Each is fetched as a bare git directory
(the search tool's `fetch`, under --mirror) and extracted with `git archive` into
DATA/repos/OWNER__NAME, outside the project: never commit fetched code.

Filters, as the eval kits apply them (/work/shared/eval, /work/shared/eval/ts,
bench/make_py_devset.py): each kit's own file rules (tests, generated, vendored, examples,
docs), the project's test-code rule on top, summaries of 6 words or more that are not
boilerplate, bodies of 3 code lines or more, summaries unique within their repository,
members unique within their repository. Every pair whose description or member equals,
whitespace normalised, a question or a target's code of any set in the eval kits is
removed, and counted.

Writes DATA/pairs/train.jsonl and DATA/pairs/valid.jsonl (the HELD_OUT repositories, for a
validation loss), one pair a line: anchor, positive, negative (another member of the same
class, else of the same file, else of the same folder), repo, lang, file, line, source.
Sorted and seeded: the same commits, chunkers and seed give the same bytes; the manifest
(bench/train/manifest.json) records each file's sha256 to prove it.
"""
import argparse
import ast
import dataclasses
import hashlib
import html
import importlib.util
import json
import multiprocessing
import os
import random
import re
import subprocess
import sys
from pathlib import Path

from codebase_rag.embed import count_tokens
from codebase_rag.export import resolve_model
from codebase_rag.languages import by_name, chunk_source, extensions_read, language_for
from codebase_rag.text import chunk_body, chunk_header, member_windows

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

EVAL = Path("/work/shared/eval")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")    # forked workers
os.environ.setdefault("TS_ORACLE_TYPESCRIPT", str(ROOT / ".cache/node/node_modules/typescript"))
MANIFEST = HERE / "manifest.json"
# ----------------------------------------------------------------------------- the repositories
# Data, not code: a repository's pairs depend on its name, commit and EXCLUDES row alone
# (the cache's key holds those), so these tables are left out of the miner's key.
# (owner/name, language group): the issue's list, then ADDED (the same kind of well-known
# library, to make up for the listed ones that could not be mined: NOT_MINED)
ISSUE_REPOS = [(r, "csharp") for r in (
    "JamesNK/Newtonsoft.Json", "App-vNext/Polly", "Humanizr/Humanizer", "nodatime/nodatime",
    "AutoMapper/AutoMapper", "FluentValidation/FluentValidation", "serilog/serilog",
    "NLog/NLog", "restsharp/RestSharp", "jbogard/MediatR", "AvaloniaUI/Avalonia")] + \
    [(r, "ts/js") for r in (
        "vuejs/core", "sveltejs/svelte", "immerjs/immer", "date-fns/date-fns", "lodash/lodash",
        "axios/axios", "mobxjs/mobx", "reduxjs/redux-toolkit", "colinhacks/zod",
        "chartjs/Chart.js", "Leaflet/Leaflet")] + \
    [(r, "python") for r in (
        "encode/starlette", "tiangolo/fastapi", "pytest-dev/pytest", "python-attrs/attrs",
        "aio-libs/aiohttp", "celery/celery", "sphinx-doc/sphinx")]
ADDED = [(r, "csharp") for r in (
    "akkadotnet/akka.net", "dotnet/reactive", "mathnet/mathnet-numerics",
    "mongodb/mongo-csharp-driver", "npgsql/npgsql", "dotnet/efcore",
    "StackExchange/StackExchange.Redis", "dotnet/orleans")] + \
    [(r, "ts/js") for r in (
        "ReactiveX/rxjs", "eslint/eslint", "mozilla/pdf.js", "Automattic/mongoose",
        "playcanvas/engine", "openlayers/openlayers", "sequelize/sequelize", "ramda/ramda",
        "expressjs/express")] + \
    [(r, "python") for r in (
        "sqlalchemy/sqlalchemy", "twisted/twisted", "tornadoweb/tornado", "dask/dask",
        "pydantic/pydantic", "scrapy/scrapy", "numpy/numpy", "astropy/astropy", "python/mypy")]
# issue 44: the tree-sitter driver's languages, each a group of its own (a .h file counts as
# the language its content is read as: chunkers/treesitter.py's header rule)
DRIVER_REPOS = [(r, "go") for r in (
    "golang/tools", "golang/net", "grpc/grpc-go", "prometheus/prometheus", "etcd-io/etcd",
    "gin-gonic/gin", "spf13/cobra", "uber-go/zap")] + \
    [(r, "java") for r in (
        "FasterXML/jackson-databind", "netty/netty", "apache/commons-collections",
        "apache/commons-io", "mockito/mockito", "ReactiveX/RxJava", "google/gson")] + \
    [(r, "rust") for r in (
        "serde-rs/serde", "tokio-rs/tokio", "clap-rs/clap", "rayon-rs/rayon",
        "crossbeam-rs/crossbeam", "tokio-rs/bytes", "rust-lang/cargo", "tokio-rs/tracing",
        "BurntSushi/bstr", "rust-random/rand", "rust-lang/rust-analyzer", "chronotope/chrono",
        "rust-itertools/itertools", "image-rs/image", "diesel-rs/diesel", "rustls/rustls",
        "time-rs/time", "tokio-rs/mio", "gfx-rs/wgpu", "rust-lang/hashbrown", "dtolnay/syn",
        "serde-rs/json")] + \
    [(r, "c") for r in (
        "curl/curl", "libuv/libuv", "jqlang/jq", "facebook/zstd", "Mbed-TLS/mbedtls",
        "libevent/libevent", "nginx/nginx", "GNOME/libxml2", "libarchive/libarchive",
        "nghttp2/nghttp2", "c-ares/c-ares", "libssh2/libssh2", "json-c/json-c",
        "memcached/memcached", "jemalloc/jemalloc", "libexpat/libexpat",
        "raysan5/raylib", "FreeRTOS/FreeRTOS-Kernel", "libsdl-org/SDL")] + \
    [(r, "cpp") for r in (
        "fmtlib/fmt", "google/leveldb", "google/re2", "nlohmann/json", "catchorg/Catch2",
        "protocolbuffers/protobuf", "facebook/folly", "google/googletest", "google/benchmark",
        "duckdb/duckdb", "google/flatbuffers", "simdjson/simdjson")]
REPOS = ISSUE_REPOS + ADDED + DRIVER_REPOS
# vendored code the kits' folder rules do not catch (found by inspection)
EXCLUDES = {"numpy/numpy": r"^vendored-meson/|/_vendored/|^numpy/_core/src/",
            "astropy/astropy": r"(^|/)extern/",
            "mozilla/pdf.js": r"^external/",
            # single-header amalgamations: every member twice, so none is unique
            "nlohmann/json": r"^single_include/", "catchorg/Catch2": r"^extras/",
            "simdjson/simdjson": r"^singleheader/"}
# Listed by the issue but not mined, and why (the manifest says so too).
NOT_MINED = {
    "lz4/lz4": "its programs and tests are GPL-2.0 (only lib/ is BSD-2-Clause)",
    "lua/lua": "no licence file in the repository (its MIT terms are in lua.h alone)",
    "google/guava": "snapshot over the fetch limit (709 MB)",
    "sqlite/sqlite": "snapshot over the fetch limit (576 MB)",
    "openssl/openssl": "snapshot over the fetch limit (538 MB)",
    "Unity-Technologies/UnityCsReference": "its Reference-Only License allows viewing for "
        "reference, not derived works such as trained weights",
    "nestjs/nest": "snapshot over the fetch limit (579 MB)",
    "mrdoob/three.js": "snapshot over the fetch limit (1.8 GB)",
    "django/django": "snapshot over the fetch limit (637 MB)",
    "scikit-learn/scikit-learn": "snapshot over the fetch limit (788 MB)",
    "matplotlib/matplotlib": "snapshot over the fetch limit (873 MB)",
}
# Never mined: the eval sets' repositories (issue 44's test repositories, the dev sets', the
# held-out ones of issue 29), checked by owner/name and by name alone (a fork or a copy).
NEVER = {"ppy/osu", "jellyfin/jellyfin", "MonoGame/MonoGame", "typeorm/typeorm",
         "Unity-Technologies/com.unity.multiplayer.samples.coop", "excalidraw/excalidraw",
         "pixijs/pixijs", "networkx/networkx", "pallets/click", "psf/requests",
         "Textualize/rich", "psf/black",
         "hashicorp/raft", "jhy/jsoup", "rust-lang/regex", "glfw/glfw", "abseil/abseil-cpp",
         "go-chi/chi", "hyperium/hyper", "libcpr/cpr",
         "caddyserver/caddy", "apache/commons-lang", "BurntSushi/ripgrep", "redis/redis",
         "Tencent/rapidjson",
         "webpack/webpack", "prettier/prettier", "mochajs/mocha", "nodejs/undici"}
# The driver languages' eval repositories, read (never mined) so that a vendored copy of
# their code, or a doc sentence of theirs, is removed from the pairs (removed_for_overlap).
EVAL_REPOS = {"go": ("caddyserver/caddy", "hashicorp/raft", "go-chi/chi"),
              "java": ("apache/commons-lang", "jhy/jsoup"),
              "rust": ("BurntSushi/ripgrep", "rust-lang/regex", "hyperium/hyper"),
              "c": ("redis/redis", "glfw/glfw"),
              "cpp": ("Tencent/rapidjson", "abseil/abseil-cpp", "libcpr/cpr")}
HELD_OUT = {"StackExchange/StackExchange.Redis", "sequelize/sequelize", "tornadoweb/tornado",
            "spf13/cobra", "google/gson", "rust-random/rand", "chronotope/chrono",
            "libevent/libevent", "google/leveldb", "google/re2"}
# ----------------------------------------------------------------------------- the miner
# the languages whose files each group's repositories have mined: issue 29's groups take the
# four languages of its kits (so efcore gives a few Python pairs, as it always did), a driver
# group its own alone (numpy's C is not mined; C++ reads a .h of C++ too)
KITS = ("csharp", "typescript", "javascript", "python")
GROUP_LANGUAGES = {"csharp": KITS, "ts/js": KITS, "python": KITS, "go": ("go",),
                   "java": ("java",), "rust": ("rust",), "c": ("c",), "cpp": ("cpp",)}
# the eval sets' own repositories at their commits: their targets' code is read from them
EVAL_TREES = {"ppy/osu": "e9451fe70b91292c482bab203ea87bd727eaa237",
              "typeorm/typeorm": "281bfba42a5813b106bcf5ba79bc7f7251bd1e73"}
DRIVER = ("go", "java", "rust", "c", "cpp")
MAX_BYTES = 1 << 20           # the walk's cap (codebase_rag.walk)
MIN_WORDS, MAX_CHARS, MIN_BODY_LINES, MIN_SENTENCE_WORDS = 6, 400, 3, 4
MAX_RETURNS_WORDS = 30


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CS_KIT = load("make_corpus", EVAL / "make_corpus.py")
TS_KIT = load("make_corpus_ts", EVAL / "ts" / "make_corpus_ts.py")
PY_KIT = load("make_py_devset", ROOT / "bench" / "make_py_devset.py")
DEV_KIT = load("make_devset", ROOT / "bench" / "make_devset.py")     # the driver's dev sets
BOILERPLATE = re.compile(PY_KIT._BOILERPLATE.pattern + r"|^(?:"
    r"releases? (?:all )?(?:the )?(?:unmanaged |managed )?resources|disposes?\b|"
    r"performs? application-defined tasks|returns? a string that represents|"
    r"(?:determines|indicates) whether the specified object|"
    r"(?:serves as|returns) (?:the|a) (?:default )?hash|gets or sets\b|"
    r"{@inheritdoc}|inheritdoc|@inheritdoc|@internal|@private|@hidden|@ignore)",
    re.IGNORECASE)
DEMO_DIR = re.compile(r"^(?:examples?|samples?|demos?|playgrounds?)$", re.IGNORECASE)
OTHER_DOCS = re.compile(r"^\s*(?:///|/\*\*)", re.M)    # a container's members' docs
NOT_CODE = re.compile(r"^\s*(?:(?:#|//|/\*|\*).*)?$|^[\s()\[\]{},;:]*$")


def norm(text):
    return " ".join(text.split())


# ----------------------------------------------------------------------------- descriptions
def sentences(text):
    return [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z`'\"(\[])", text) if s]


def cut(text):
    """A summary at most MAX_CHARS long, cut at a sentence end ('' if it cannot be)."""
    if len(text) <= MAX_CHARS:
        return text
    end = max(text.rfind(". ", 0, MAX_CHARS), text.rfind("? ", 0, MAX_CHARS))
    return text[:end + 1] if end > 0 else ""


def xml_inline(text):
    """C# doc XML as a sentence reads: <see cref="A.B(int)"/> -> B, <c>x</c> -> x."""
    def name(m):
        ref = re.sub(r"^[TMPFE]:", "", m.group(2))
        ref = re.sub(r"\(.*\)$", "", ref).replace("{", "<").replace("}", ">")
        return re.split(r"\.(?![^<]*>)", ref)[-1]
    text = re.sub(r"<(see|seealso)\s+cref\s*=\s*\"([^\"]*)\"\s*/>", name, text)
    text = re.sub(r"<see\s+langword\s*=\s*\"([^\"]*)\"\s*/>", r"\1", text)
    text = re.sub(r"<(?:type)?paramref\s+name\s*=\s*\"([^\"]*)\"\s*/>", r"\1", text)
    text = re.sub(r"<[^<>]+>", " ", text)
    return norm(html.unescape(text))


def csharp_docs(raw):
    """(summary's first paragraph, returns text) of a /// block."""
    text = "\n".join(line.strip()[3:] for line in raw if line.strip().startswith("///"))
    summary = re.search(r"<summary>(.*?)</summary>", text, re.S)
    returns = re.search(r"<returns>(.*?)</returns>", text, re.S)
    first = ""
    if summary:
        paragraphs = re.split(r"<para\s*/?>|</para>|\n\s*\n", summary.group(1))
        first = next((p for p in (xml_inline(p) for p in paragraphs) if p), "")
    return first, xml_inline(returns.group(1)) if returns else ""


def jsdoc_inline(text):
    text = re.sub(r"\{@link(?:code|plain)?\s+([^}|\s]+)(?:\s*\|\s*|\s+)([^}]+)\}", r"\2", text)
    text = re.sub(r"\{@link(?:code|plain)?\s+([^}]+)\}", r"\1", text)
    return norm(text.replace("`", ""))


def jsdoc_docs(raw):
    """(description's first paragraph, @returns text) of a /** */ block; a block of tags
    only (date-fns) gives its @summary or @description."""
    body = re.sub(r"^/\*\*|\*/$", "", "\n".join(raw).strip())
    tags, tag = {None: []}, None
    for line in (re.sub(r"^\s*\*\s?", "", line) for line in body.split("\n")):
        m = re.match(r"\s*@(\w+)\s*(.*)", line)
        if m:
            tag = m.group(1).lower()
            tag = "returns" if tag == "return" else tag
            if tag in tags:                  # a repeated tag (@param): keep the first
                tag = "repeated"
            tags[tag] = [m.group(2)]
        else:
            tags[tag].append(line)
    def paragraph(name):
        return jsdoc_inline(re.split(r"\n\s*\n", "\n".join(tags.get(name, [])).strip())[0])
    returns = re.sub(r"^\{[^}]*\}\s*", "", paragraph("returns"))
    first = paragraph(None) or paragraph("summary") or paragraph("description")
    return first, returns


def rst_inline(text):
    """reST as a sentence reads: :class:`~a.B` -> B, ``x`` -> x, *x* -> x."""
    text = re.sub(r":[\w:]+:`~?(?:[^`<]*<)?([^`>]*?)>?`", lambda m: m.group(1).split(".")[-1], text)
    return re.sub(r"``([^`]*)``|\*\*?([^*\s][^*]*)\*\*?|`([^`]*)`",
                  lambda m: next(g for g in m.groups() if g is not None), text)


def python_docs(doc):
    """(docstring's summary paragraph, Returns text) of a cleaned docstring."""
    doc = rst_inline(doc)
    first = PY_KIT.summary(doc)
    m = re.search(r"^(?:Returns?|Yields?)\s*:?\s*\n(?:\s*-+\s*\n)?((?:[ \t]+\S.*\n?)+)", doc, re.M)
    returns = ""
    if m:
        lines = [line.strip() for line in m.group(1).split("\n") if line.strip()]
        if lines and re.match(r"^[\w.\[\], |]+\s*:\s*\S*$|^[\w.\[\]]+$", lines[0]) and len(lines) > 1:
            lines = lines[1:]                   # numpydoc's "name : type" line
        returns = norm(" ".join(lines))
    return first, returns


DOC_TAG = re.compile(r"^[@\\](\w+)\s*(.*)")            # @return x, \\brief x (Javadoc, Doxygen)
RULE = re.compile(r"[-=*#~_/]{4,}")                   # a ruled line: //===----===//, /*------
NAME_ONLY = re.compile(r"^[\w:~.<>]+(?:\(\s*\))?:?$")   # curl's "Curl_hmacit()" paragraph
MARKERS = {"go": re.compile(r"^//"), "java": None, "rust": re.compile(r"^///(?!/)"),
           "c": re.compile(r"^(?://[/!]?|/\*[*!]?|\*/?|\*\*)"),
           "cpp": re.compile(r"^(?://[/!]?|/\*[*!]?|\*/?|\*\*)")}


def code_inline(text):
    """Javadoc, Doxygen and rustdoc markup as a sentence reads: {@link A#b} -> A#b,
    {@code x} -> x, <p> and other tags dropped, [`X`](path) and [`X`] -> X, `x` -> x."""
    text = re.sub(r"\{@(?:link|linkplain|code|literal|value)\s+([^}\s]+)(?:\s+([^}]+))?\}",
                  lambda m: m.group(2) or m.group(1), text)
    text = re.sub(r"(?<![\w\]#])\[([^\]\[]+)\](?:\([^)\s]*\)|\[[^\]]*\])?", r"\1", text)
    text = re.sub(r"</?[a-zA-Z][^<>]*>", " ", text)
    text = re.sub(r"(?<![\w\\])[\\@][cpae]\s+(\S)", r"\1", text)   # Doxygen's \c x, @p x
    return norm(html.unescape(text.replace("`", "")))


def driver_docs(lang, raw):
    """(the doc's first paragraph, its @return / \\return text) of a Go, Java, Rust, C or C++
    doc comment, from its lines as written. The doc a language writes for readers: Go's //
    block, Javadoc's /** (a // note above a Java method is not one), Rust's ///, and any
    comment block in C and C++ (their libraries document in /* */ and // as often as /**);
    ("", "") for anything else."""
    text = "\n".join(raw).strip()
    if lang == "java":
        if not text.startswith("/**"):
            return "", ""
        lines = [re.sub(r"^\s*(?:/\*\*|\*/|\*)?", "", line).removesuffix("*/")
                 for line in text.split("\n")]
    else:
        marker = MARKERS[lang]
        lines = []
        for line in (line.strip() for line in text.split("\n")):
            if lang == "rust" and not marker.match(line):
                lines = []                   # a // note above the /// doc is not part of it
                continue
            line = marker.sub("", line) if marker.match(line) else line
            lines.append(line.removesuffix("*/").strip("*").strip())
    paragraphs, tags, tag = [[]], {}, None
    for line in (RULE.sub(" ", line) for line in lines):     # //===---=== banners: a rule
        line = line if line.strip() else ""
        m = DOC_TAG.match(line.strip())
        if m and m.group(1).lower() in ("brief", "short", "summary", "details"):
            tag = None
            line = m.group(2)
        elif m and not re.match(r"(?i)[cpae]$", m.group(1)):
            tag = m.group(1).lower()
            tag = "returns" if tag in ("return", "result") else tag
            tags.setdefault(tag, [])
            tags[tag].append(m.group(2))
            continue
        if tag is not None:
            tags[tag].append(line) if line.strip() else None
            continue
        if line.strip():
            paragraphs[-1].append(line)
        elif paragraphs[-1]:
            paragraphs.append([])
    first = ""
    for paragraph in paragraphs:
        words = code_inline(" ".join(paragraph))
        if words and not NAME_ONLY.match(words) and not re.match(r"(?i)deprecated\b", words):
            first = words
            break
    returns = code_inline(" ".join(tags.get("returns", [])[:3]))
    return first, returns


def descriptions(summary, returns):
    """The summary's first sentence, and a second phrasing or ''."""
    summary = cut(summary)
    if len(summary.split()) < MIN_WORDS or BOILERPLATE.match(summary):
        return None
    parts = sentences(summary)
    first = parts[0]
    if len(first.split()) < MIN_SENTENCE_WORDS:
        return None
    second = " ".join(parts[1:])
    if len(second.split()) < MIN_SENTENCE_WORDS or BOILERPLATE.match(second):
        second = ""
    if not second and MIN_SENTENCE_WORDS <= len(returns.split()) <= MAX_RETURNS_WORDS:
        second = returns if re.match(r"(?i)returns?\b", returns) else \
            f"Returns {returns[0].lower()}{returns[1:]}"
        second = second[0].upper() + second[1:]
    return first, second


# ----------------------------------------------------------------------------- files
def reads(group, path):
    """Whether a group's repositories have this file mined: its languages' files (C++ reads
    a .h too, and its content decides which language it is)."""
    return str(path).endswith(tuple(ext for name in GROUP_LANGUAGES[group]
                                    for ext in extensions_read(by_name(name))))


def extract(git_dir, commit, tree, group):
    """The repository's source files at commit, as plain files in tree (made once). Only
    those: a snapshot lacks its largest blobs, so `git archive` cannot run."""
    mark = tree / ".commit"
    if mark.is_file() and mark.read_text() == f"{commit} {group}":
        return
    import shutil
    shutil.rmtree(tree, ignore_errors=True)
    listing = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-l", "-z",
                              commit], capture_output=True, check=True).stdout.decode()
    wanted = []
    for entry in filter(None, listing.split("\0")):
        meta, path = entry.split("\t", 1)
        mode, kind, sha, size = meta.split()
        if kind == "blob" and mode in ("100644", "100755") and size.isdigit() \
                and int(size) <= MAX_BYTES and reads(group, path):
            wanted.append((sha, path))
    batch = subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
                           input="".join(f"{sha}\n" for sha, _ in wanted).encode(),
                           capture_output=True, check=True).stdout
    at = 0
    for sha, path in wanted:
        header_end = batch.index(b"\n", at)
        size = int(batch[at:header_end].split()[2])
        target = tree / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(batch[header_end + 1:header_end + 1 + size])
        at = header_end + 2 + size
    mark.write_text(f"{commit} {group}")


def included(tree, repo, group):
    """(rel, language by extension, text) of every file a kit would include, in sorted
    order."""
    for root, dirs, files in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if d not in (".git", "node_modules"))
        for name in sorted(files):
            path = Path(root) / name
            rel = path.relative_to(tree).as_posix()
            lang = language_for(rel)
            if not reads(group, rel) or path.is_symlink() \
                    or not path.is_file() or path.stat().st_size > MAX_BYTES or lang.is_test(rel) \
                    or any(DEMO_DIR.match(part) for part in rel.split("/")[:-1]) \
                    or re.search(EXCLUDES.get(repo, "^$^"), rel):
                continue
            if group in DRIVER:
                reason = driver_exclusion(rel, lang)
            elif lang.name == "csharp":
                reason = CS_KIT.exclusion_reason(rel, str(path), repo)
            elif lang.name == "python":
                reason = "stub" if rel.endswith(".pyi") else \
                    PY_KIT.exclusion_reason(rel, PY_KIT.read_text(path), repo)
            else:
                reason = None if TS_KIT.tsoracle.is_source(name) else "declaration"
                reason = reason or TS_KIT.exclusion_reason(rel, str(path), repo)
            if reason is None:
                text = PY_KIT.read_text(path)
                if group in DRIVER and any(DEV_KIT._GENERATED.search(line)
                                           for line in text.split("\n")[:15]):
                    continue
                yield rel, lang.name, text


def driver_exclusion(rel, lang):
    """Why bench/make_devset.py leaves a file of the driver's languages out of a dev set
    (test code, examples, docs, benchmarks, vendored and third-party code), or None. Its
    generated-code rule is read from the text."""
    folders = rel.split("/")[:-1]
    if lang.is_test(rel) or any(DEV_KIT._EXCLUDED_DIR.match(f) for f in folders):
        return "excluded folder or test code"
    if lang.is_demo(rel) or any(re.search(r"(?i)vendor|third[_-]?party|^external", f)
                                for f in folders):
        return "demo or vendored"
    return None


def python_docstrings(text):
    """{def or class line: cleaned docstring} of a Python file."""
    tree = PY_KIT.parse(text)
    if tree is None:
        return {}
    return {n.lineno: ast.get_docstring(n) for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and ast.get_docstring(n)}


def body_lines(lines, c):
    first, last = c.doc_lines or (0, -1)
    return sum(1 for n in range(c.sig_line + 1, c.end_line + 1)
               if not first <= n <= last and not NOT_CODE.match(lines[n - 1]))


def file_members(rel, lang, text, tokens):
    """(language, chunk, member text, descriptions or None, its code normalised) of each
    member; the language is the one the file was read as (a .h of C++ is cpp). tokens None:
    no member text (an eval repository's, read only for the overlap)."""
    try:
        chunks = chunk_source(rel, text)
    except Exception:                     # the indexer skips such a file too
        return []
    lang = getattr(chunks, "language", "") or lang       # as indexer.language_of
    lines = text.split("\n")
    docstrings = python_docstrings(text) if lang == "python" else {}
    out = []
    for c in chunks:
        if c.kind in ("file", "module", "namespace", "top-level") or not c.member:
            continue
        body = chunk_body(lines, c)
        member = tokens and member_windows(chunk_header(rel, dataclasses.replace(c, doc="")),
                                           body, c.signature, tokens)[0].lstrip("\n")
        found = None
        if c.doc_lines and body_lines(lines, c) >= MIN_BODY_LINES \
                and not OTHER_DOCS.search(body) and not (
                lang == "python" and c.member.startswith("__") and c.member.endswith("__")
                and c.member not in ("__init__", "__call__")):
            raw = lines[c.doc_lines[0] - 1:c.doc_lines[1]]
            if lang == "csharp":
                docs = csharp_docs(raw)
            elif lang == "python":
                doc = docstrings.get(c.sig_line)
                docs = python_docs(doc) if doc else ("", "")
            elif lang in DRIVER:
                docs = driver_docs(lang, raw)
                if DEV_KIT._BOILERPLATE.match(docs[0]):     # the driver's dev sets' rule too
                    docs = ("", "")
            else:
                docs = jsdoc_docs(raw)
            found = descriptions(*docs)
        out.append((lang, c, member, found, norm(body)))
    return out


# ----------------------------------------------------------------------------- eval overlap
def eval_sets():
    """(questions, targets' code), whitespace normalised, of every set in the eval kits."""
    questions, targets, files = set(), set(), {}
    for path in sorted(EVAL.rglob("*.jsonl")):
        repo = next(r for r in EVAL_TREES if r.replace("/", "__") in path.name
                    or r.split("/")[1] in path.name)
        stripped = "-nl-" not in path.name
        for line in path.open(encoding="utf-8"):
            q = json.loads(line)
            questions.add(norm(q["query"]))
            for t in q.get("targets", [q]):
                key = (repo, t["file"], stripped)
                if key not in files:
                    files[key] = eval_file(repo, t["file"], stripped).split("\n")
                targets.add(norm("\n".join(files[key][t["start_line"] - 1:t["end_line"]])))
    for path in sorted((ROOT / "bench" / "devsets").glob("*.jsonl")):    # issue 44's NL sets
        questions.update(norm(json.loads(line)["query"]) for line in path.open(encoding="utf-8"))
    return questions, targets


def eval_repos_overlap(pinned, langs, imap):
    """(doc sentences, members' code), whitespace normalised, of every member of the driver
    languages' eval repositories (EVAL_REPOS, each at the manifest's commit or its mirror's
    HEAD), test code and vendored code included: a pair that has either is removed. Returns
    too {repo: commit}."""
    jobs = [(repo, lang, pinned.get(repo) or head(MIRROR / repo.replace("/", "+") / "repo"))
            for lang, repos in EVAL_REPOS.items() if lang in langs for repo in repos]
    sentences_, bodies = set(), set()
    for found_sentences, found_bodies in imap(eval_repo_texts, jobs):
        sentences_ |= found_sentences
        bodies |= found_bodies
    return sentences_, bodies, {repo: commit for repo, _, commit in jobs}


def eval_repo_texts(job):
    repo, lang, commit = job
    found = cached(repo, f"{SHARED['key']}-{commit[:12]}-eval",
                   lambda: [sorted(s) for s in eval_repo_members(repo, lang, commit)])
    return set(found[0]), set(found[1])


def eval_repo_members(repo, lang, commit):
    tree = DATA / "eval-repos" / repo.replace("/", "__")
    extract(MIRROR / repo.replace("/", "+") / "repo", commit, tree, lang)
    sentences_, bodies = set(), set()
    for path in sorted(p for p in tree.rglob("*") if p.is_file() and p.name != ".commit"):
        rel = path.relative_to(tree).as_posix()
        for _, c, _, found, body in file_members(rel, language_for(rel).name,
                                                 PY_KIT.read_text(path), None):
            bodies.add(body)
            sentences_.update(norm(d) for d in found or () if d)
    return sentences_, bodies


def head(git_dir):
    return subprocess.run(["git", "--git-dir", str(git_dir), "rev-parse", "HEAD"],
                          capture_output=True, text=True, check=True).stdout.strip()


def eval_file(repo, rel, stripped):
    git_dir = MIRROR / repo.replace("/", "+") / "repo"
    raw = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{EVAL_TREES[repo]}:{rel}"],
                         capture_output=True, check=True).stdout
    text = raw.decode("utf-8-sig", errors="replace").lstrip("\ufeff")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not stripped:
        return text
    if rel.endswith(".cs"):
        return CS_KIT.strip_doc_comments(text)
    return TS_KIT.strip_jsdoc(rel, text)[0]


# ----------------------------------------------------------------------------- the pairs
def mine_job(job):
    """mine_repo in a worker: the tokenizer and the overlap sets are the parent's (forked)."""
    repo, group, commit = job
    questions, targets = SHARED["overlap"][group in DRIVER]
    key = f"{SHARED['key']}-{commit[:12]}-{group.replace('/', '')}-{SHARED['seed']}-" \
          f"{digest(questions, targets)[:12]}" + \
          (f"-{digest([EXCLUDES[repo]])[:8]}" if repo in EXCLUDES else "")
    return cached(repo, key, lambda: mine_repo(repo, group, commit, SHARED["tokens"], questions,
                                               targets, SHARED["seed"]))


def mine_repo(repo, lang_group, commit, tokens, questions, targets, rng_seed):
    tree = DATA / "repos" / repo.replace("/", "__")
    extract(MIRROR / repo.replace("/", "+") / "repo", commit, tree, lang_group)
    members, pairs, removed = [], [], 0
    for rel, lang, text in included(tree, repo, lang_group):
        members += [(rel, *m) for m in file_members(rel, lang, text, tokens)]
    summaries, texts = {}, {}
    for rel, lang, c, member, found, body in members:
        if found:
            key = norm(found[0]).lower()
            summaries[key] = summaries.get(key, 0) + 1
            texts[member] = texts.get(member, 0) + 1
    by_class, by_file, by_dir = {}, {}, {}
    for i, (rel, lang, c, member, found, body) in enumerate(members):
        by_class.setdefault((rel, c.cls), []).append(i)
        by_file.setdefault(rel, []).append(i)
        by_dir.setdefault(rel.rpartition("/")[0], []).append(i)
    for i, (rel, lang, c, member, found, body) in enumerate(members):
        if not found or summaries[norm(found[0]).lower()] > 1 or texts[member] > 1:
            continue
        rng = random.Random(f"{rng_seed}|{repo}|{rel}|{c.start_line}")
        negative = None
        for group in (by_class[(rel, c.cls)], by_file[rel], by_dir[rel.rpartition("/")[0]]):
            others = [j for j in group if members[j][2].member != c.member
                      and members[j][3] != member]
            if others:
                negative = members[rng.choice(others)][3]
                break
        if negative is None:
            continue
        for source, description in zip(("summary", "second"), found):
            if not description:
                continue
            if norm(description) in questions or norm(description) in targets \
                    or body in targets or norm(member) in questions:
                removed += 1
                continue
            pairs.append({"anchor": description, "positive": member, "negative": negative,
                          "repo": repo, "lang": lang, "file": rel, "line": c.start_line,
                          "source": source})
    return pairs, removed


# ----------------------------------------------------------------------------- the split
# Nothing below this line changes a repository's pairs: the text above it keys the cache of
# each repository's pairs (with codebase_rag's code, the kits' and the tokenizer).
SPLIT_MARK = "# " + "-" * 77 + " the split\n"
TABLES_MARK, MINER_MARK = ("# " + "-" * 77 + f" the {name}\n" for name in ("repositories", "miner"))


def miner_key(tokenizer_file):
    """The hash of everything that makes a repository's pairs from its files: this script
    above the split but for its tables of repositories, codebase_rag, the kits, the
    tokenizer."""
    text = Path(__file__).read_text().split(SPLIT_MARK)[0]
    head_, rest = text.split(TABLES_MARK)
    h = hashlib.sha256((head_ + rest.split(MINER_MARK)[1]).encode())
    kits = [EVAL / "make_corpus.py", EVAL / "ts" / "make_corpus_ts.py", EVAL / "ts" / "tsoracle.py",
            ROOT / "bench" / "make_py_devset.py", ROOT / "bench" / "make_devset.py",
            Path(tokenizer_file)]
    for path in sorted((ROOT / "codebase_rag").rglob("*.py")) + kits:
        h.update(path.as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def cached(name, key, make):
    """make()'s JSON-able result, kept in DATA/cache/NAME-KEY.json for the next run."""
    path = DATA / "cache" / f"{name.replace('/', '__')}-{key}.json"
    if path.is_file():
        return json.loads(path.read_text())
    found = make()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.with_suffix(".tmp").write_text(json.dumps(found))
    os.replace(path.with_suffix(".tmp"), path)
    return found


def digest(*sets):
    return hashlib.sha256("\0".join(x for s in sets for x in sorted(s)).encode()).hexdigest()


def balance(pairs_by_repo, groups, target, seed):
    """At most target/3 pairs per language group: each repo of a group keeps all its
    members up to a common cap (the largest that fits), the rest drawn with the seed."""
    kept = {}
    for group in sorted(set(groups.values())):
        repos = [r for r in pairs_by_repo if groups[r] == group]
        members = {r: sorted({(p["file"], p["line"]) for p in pairs_by_repo[r]}) for r in repos}
        per_member = {r: sum(len(pairs_by_repo[r]) for r in repos) /
                      max(1, sum(len(members[r]) for r in repos)) for r in repos}
        budget = target / 3 / (sum(per_member.values()) / max(1, len(repos)))
        cap = max(len(m) for m in members.values()) if members else 0
        while cap and sum(min(len(m), cap) for m in members.values()) > budget:
            cap -= 1
        for r in repos:
            chosen = set(members[r]) if len(members[r]) <= cap else \
                set(random.Random(f"{seed}|{r}").sample(members[r], cap))
            kept[r] = [p for p in pairs_by_repo[r] if (p["file"], p["line"]) in chosen]
    return kept


LICENCES = ((r"Apache License", "Apache-2.0"),
            (r"Permission is hereby granted, free of charge", "MIT"),
            (r"Redistribution and use in source and binary forms", "BSD"),
            (r"Permission to use, copy, modify, and distribute this software and "
             r"its\s+documentation for any purpose, without fee", "PostgreSQL"),
            (r"Mozilla Public License", "MPL-2.0"),
            (r"Boost Software License", "BSL-1.0"),
            (r"COPYRIGHT AND PERMISSION NOTICE[\s\S]*Permission to use, copy, modify, and "
             r"distribute this software for any purpose", "curl"),
            (r"Permission to use, copy, modify, and/or distribute this software for any "
             r"purpose with or without fee", "ISC"),
            (r"dual-licensed under the Unlicense and MIT", "Unlicense OR MIT"),
            (r"This software is provided ['\"]as-is['\"], without any express or implied\s+warranty",
             "Zlib"),
            (r"GNU LESSER GENERAL PUBLIC LICENSE", "LGPL"),
            (r"GNU GENERAL PUBLIC LICENSE\s+Version 2", "GPL-2.0"),
            (r"GNU GENERAL PUBLIC LICENSE", "GPL"))
PERMISSIVE = {"Apache-2.0", "MIT", "BSD-2-Clause", "BSD-3-Clause", "PostgreSQL", "BSL-1.0",
              "curl", "ISC", "Unlicense", "Zlib"}


def licence(git_dir, commit):
    """The licence's name, read from the repository's licence files at its root (LICENSE,
    COPYING, LICENSE-MIT and LICENSE-APACHE...: a repository under two gives "A OR B")."""
    listing = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", commit],
                             capture_output=True, text=True, check=True).stdout.split("\n")
    names = [line.split("\t", 1)[1] for line in listing if " blob " in line]
    licence_files = [n for n in sorted(names) if re.match(r"(?i)^(licen[cs]e|copying)(\.\w+)?$", n)
                     and not re.match(r"(?i).*\.(bipbuffer|itoa_ljust)$", n)
                     or re.match(r"(?i)^licen[cs]e[-.](mit|apache|bsd|isc)$", n)]
    names = licence_files or [n for n in names if n.lower() == "copyright"]     # libxml2's
    if not names:
        return "no licence file found"
    found = []
    for name in names:
        text = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{name}"],
                              capture_output=True, text=True, errors="replace").stdout
        # the licence named first (a file that names others further down, for parts of
        # the code, is under the first: libevent's BSD, then its Apache-2.0 files)
        hits = [(m.start(), spdx) for pattern, spdx in LICENCES
                for m in [re.search(pattern, text)] if m]
        spdx = min(hits)[1] if hits else None
        if spdx == "BSD":
            spdx = "BSD-3-Clause" if re.search(r"endorse or promote", text) else "BSD-2-Clause"
        if spdx is None and len(names) == 1:
            return f"unrecognised ({name}: {norm(text)[:60]})"
        if spdx and spdx not in found:
            found.append(spdx)
    return f"{' OR '.join(found)} ({', '.join(names)})"


def permissive(name):
    """Whether a licence (licence()'s answer) lets the pairs be mined: one of PERMISSIVE,
    alone or as a choice beside another."""
    return any(part in PERMISSIVE for part in name.split(" (")[0].split(" OR "))


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def subset_files(out, subset_groups, groups):
    """{file: pairs, sha256} of the lines of out's files that these groups' repositories
    gave, in order: the files a run of those groups alone writes (a group's pairs depend on
    its own repositories only)."""
    found = {}
    for split in ("train", "valid"):
        lines = [line for line in open(out / f"{split}.jsonl", "rb")
                 if groups[json.loads(line)["repo"]] in subset_groups]
        found[f"{split}.jsonl"] = {"pairs": len(lines),
                                   "sha256": hashlib.sha256(b"".join(lines)).hexdigest()}
    return found


def never_mined(repo):
    """Why a repository must not be mined (an eval set's, or a copy of one: the same name
    under another owner), or None."""
    name = repo.split("/")[1].lower()
    hit = next((r for r in sorted(NEVER) if r.lower() == repo.lower()
                or r.split("/")[1].lower() == name), None)
    return hit and f"{repo}: an eval set's repository ({hit}), never mined"


def main(argv=None):
    global MIRROR, DATA
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror", default="/work/.mirror", help="the fetched bare git directories")
    ap.add_argument("--data", default="/work/train-data", help="outside the project")
    ap.add_argument("--pin", action="store_true", help="pin the repositories the manifest "
                    "does not pin yet at their mirror's HEAD, and rewrite the manifest")
    ap.add_argument("--repin", action="store_true", help="take every mirror's HEAD, not the "
                    "manifest's commits, and rewrite the manifest")
    ap.add_argument("--target", type=int, default=25000,
                    help="a third of it is the most pairs a language group keeps")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--groups", nargs="+", choices=sorted(GROUP_LANGUAGES),
                    help="mine these groups alone, into DATA/pairs-GROUPS (issue 29's three "
                    "give its files: the manifest's `subsets` hold their sha256)")
    ap.add_argument("--only", help="one repository (a smoke run; writes nothing)")
    ap.add_argument("--jobs", type=int, default=1, help="repositories mined at once (the "
                    "output does not depend on it)")
    a = ap.parse_args(argv)
    MIRROR, DATA = Path(a.mirror), Path(a.data)
    if DATA.resolve() == ROOT or ROOT in DATA.resolve().parents:
        ap.error(f"{DATA} is inside the project; the pairs derive from fetched code")
    for repo, _ in REPOS:
        if never_mined(repo):
            raise SystemExit(never_mined(repo))
    chosen_groups = set(a.groups or GROUP_LANGUAGES)
    repos = [(r, g) for r, g in REPOS if g in chosen_groups and (not a.only or r == a.only)]
    held_out = {r for r, _ in repos if r in HELD_OUT}
    old = json.loads(MANIFEST.read_text())
    pinned = {} if a.repin else {r["repo"]: r["commit"] for r in old["repositories"]}
    pinned.update({} if a.repin else old.get("eval_repos", {}))
    unpinned = [r for r, _ in repos if r not in pinned]
    if unpinned and not (a.pin or a.repin or a.only):
        raise SystemExit(f"not pinned in the manifest: {', '.join(unpinned)} (--pin pins them)")
    from tokenizers import Tokenizer
    tokenizer = Tokenizer.from_file(str(Path(resolve_model()[0]) / "tokenizer.json"))
    SHARED["tokens"] = lambda texts: count_tokens(tokenizer, texts)
    SHARED["key"] = miner_key(Path(resolve_model()[0]) / "tokenizer.json")
    SHARED["seed"] = a.seed
    questions, targets = eval_sets()
    print(f"eval sets: {len(questions)} questions, {len(targets)} targets", file=sys.stderr)
    SHARED["overlap"] = {False: (questions, targets)}
    for repo, group in repos:       # the driver groups' repositories: a permissive licence
        found = licence(MIRROR / repo.replace("/", "+") / "repo", pinned.get(repo) or "HEAD")
        if group in DRIVER and not permissive(found):
            raise SystemExit(f"{repo}: not mined, its licence is {found}")
    pool = multiprocessing.get_context("fork").Pool(a.jobs) if a.jobs > 1 else None
    imap = pool.imap if pool else map
    eval_commits = old.get("eval_repos", {})
    if chosen_groups & set(DRIVER):
        held_sentences, held_bodies, eval_commits = eval_repos_overlap(
            pinned, chosen_groups & {g for _, g in repos}, imap)
        print(f"eval repositories: {len(held_sentences)} doc sentences, {len(held_bodies)} "
              "members", file=sys.stderr)
        SHARED["overlap"][True] = (questions | held_sentences, targets | held_bodies)
        if pool:                        # the workers must see the sets: fork them anew
            pool.close()
            pool.join()
            pool = multiprocessing.get_context("fork").Pool(a.jobs)
            imap = pool.imap
    jobs = [(repo, group, pinned.get(repo) or head(MIRROR / repo.replace("/", "+") / "repo"))
            for repo, group in repos]
    pairs_by_repo, groups, rows, removed_total = {}, {}, [], 0
    for (repo, group, commit), (pairs, removed) in zip(jobs, imap(mine_job, jobs)):
        git_dir = MIRROR / repo.replace("/", "+") / "repo"
        removed_total += removed
        pairs_by_repo[repo], groups[repo] = pairs, group
        rows.append({"repo": repo, "commit": commit, "licence": licence(git_dir, commit),
                     "group": group,
                     "listed_by": "issue 29" if (repo, group) in ISSUE_REPOS else
                     "issue 44" if group in DRIVER else "added",
                     "split": "valid" if repo in HELD_OUT else "train",
                     "mined": len(pairs), "removed_for_overlap": removed})
        print(f"{repo}@{commit[:10]}: {len(pairs)} pairs ({removed} removed for overlap)",
              file=sys.stderr, flush=True)
    if pool:
        pool.close()
        pool.join()
    if a.only:
        print(json.dumps(pairs_by_repo[a.only][0], ensure_ascii=False, indent=1))
        for p in random.Random(a.seed).sample(pairs_by_repo[a.only],
                                              min(40, len(pairs_by_repo[a.only]))):
            print(f"{p['lang']} {p['source']}: {p['anchor']}")
        return 0
    train = {r: p for r, p in pairs_by_repo.items() if r not in held_out}
    kept = balance(train, groups, a.target, a.seed)
    kept.update({r: pairs_by_repo[r] for r in held_out})
    subset = "+".join(sorted(chosen_groups)) if a.groups else ""
    out = DATA / (f"pairs-{subset.replace('/', '')}" if subset else "pairs")
    out.mkdir(parents=True, exist_ok=True)
    for split, names in (("train", sorted(train)), ("valid", sorted(held_out))):
        chosen = sorted((p for r in names for p in kept[r]),
                        key=lambda p: (p["repo"], p["file"], p["line"], p["source"]))
        with open(out / f"{split}.jsonl", "w", encoding="utf-8", newline="\n") as f:
            for p in chosen:
                f.write(json.dumps(p, ensure_ascii=False, sort_keys=True) + "\n")
    languages = {}
    for row in rows:
        counts = {}
        for p in kept[row["repo"]]:
            counts[p["lang"]] = counts.get(p["lang"], 0) + 1
            languages.setdefault(p["lang"], {"train": 0, "valid": 0})[row["split"]] += 1
        row["pairs"] = dict(sorted(counts.items()))
        row["members"] = len({(p["file"], p["line"]) for p in kept[row["repo"]]})
    files = {f"{s}.jsonl": {"pairs": sum(1 for _ in open(out / f"{s}.jsonl")),
                            "sha256": sha256(out / f"{s}.jsonl")} for s in ("train", "valid")}
    subsets = {key: subset_files(out, key.split("+"), groups) for key in old.get("subsets", {})
               if set(key.split("+")) <= chosen_groups}
    for key, got_files in subsets.items():          # issue 29's pairs, remade within these
        for name, got in got_files.items():
            same = "the same bytes" if got == old["subsets"][key].get(name) else \
                "DIFFERENT bytes"
            print(f"{name}, groups {key}: {got['pairs']} pairs, {same} as the manifest",
                  file=sys.stderr)
    if subset:
        pass                                        # the manifest describes the whole set
    elif a.pin or a.repin:
        manifest = {"seed": a.seed, "target": a.target, "removed_for_overlap": removed_total,
                    "held_out": sorted(HELD_OUT), "never": sorted(NEVER),
                    "eval_repos": eval_commits, "not_mined": NOT_MINED,
                    "languages": dict(sorted(languages.items())),
                    "subsets": old.get("subsets", {}), "repositories": rows, "files": files}
        MANIFEST.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    else:
        for name, got in files.items():
            same = "the same bytes" if got == old["files"].get(name) else "DIFFERENT bytes"
            print(f"{name}: {got['pairs']} pairs, {same} as the manifest", file=sys.stderr)
    print(f"removed for overlap with the eval sets: {removed_total}")
    for name, f in files.items():
        print(f"{out / name}: {f['pairs']} pairs")
    return 0


MIRROR = DATA = None
SHARED = {}                   # the tokenizer, seed and overlap sets, for mine_job's workers

if __name__ == "__main__":
    sys.exit(main())
