"""The C# chunker: a small lexer and a brace counter. Pure: text in, chunks out.

A small lexer turns C# into tokens. Comments, the insides of strings and char literals,
and the branches of #if that are not taken never reach the brace counter. The chunker
then reads declarations one by one and jumps over member bodies, so local functions,
lambdas and statements can never become chunks of their own.

The chunker cannot know which #if branches the compiler takes, so it reads them all when
each is whole (members, statements) and otherwise the first (_drop_unbalanced_branches).
The members of a C# 14 extension block (`extension(string s) { ... }` in static class E)
are chunks of the class chain E.extension(string), as Roslyn displays them.
"""
import re

from . import Chunk, ChunkerLimit, Chunks, spend

# Every pattern here costs time linear in its input (tests/test_linear.py): a run of `$`
# is read as a special string's start from its first `$` only (from each later one it
# would be scanned again), and a string's characters in runs of plain ones
_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<doc>///[^\n]*)
  | (?P<comment>//[^\n]*|/\*.*?(?:\*/|\Z))
  | (?P<special>(?<!\$)\$+@?"|@\$+"|"{3,})
  | (?P<str>"[^"\\\n]*(?:\\.[^"\\\n]*)*(?:"|$))
  | (?P<verbatim>@"[^"]*(?:""[^"]*)*(?:"|\Z))
  | (?P<char>'(?:[^'\\\n]|\\[^\n]{1,9}?)')
  | (?P<ident>@?[^\W\d]\w*)
  | (?P<num>\d[\w.]*)
  | (?P<pp>\#[^\n]*)
  | (?P<op>=>|==|!=|<=|>=|[-+*/%&|^]=|&&|\|\||\?\?=?|::|->|\+\+|--|.)
""", re.S | re.M | re.X)
# read where a special string starts, so quotes follow; `"*`: past its first character it
# never fails, so it never backtracks, wherever it is read
_STRING_START = re.compile(r'(?=[$@"])(\$*)(@?)(\$*)("*)')
# a tag, or the /// that opens a line: a space each; a `<` left open (no `>` to the end,
# \Z) stays as written, and no later `<` scans that text again
_DOC_TAG = re.compile(r"<[^>]*(>|\Z)|^[^\S\n]*///\s?", re.M)
_BRANCH_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(if|elif|else|endif)\b", re.M)

KEYWORDS = frozenset("""abstract as base bool break byte case catch char checked class const
continue decimal default delegate do double else enum event explicit extern false finally fixed
float for foreach goto if implicit in int interface internal is lock long namespace new null object
operator out override params private protected public readonly ref return sbyte sealed short sizeof
stackalloc static string struct switch this throw true try typeof uint ulong unchecked unsafe ushort
using virtual void volatile while""".split())
MODIFIERS = frozenset("""public private protected internal static sealed abstract virtual override
readonly extern unsafe volatile new partial async const fixed required file ref""".split())
TYPE_KEYWORDS = frozenset(("class", "struct", "interface", "enum", "record"))
KINDS = frozenset(("method", "constructor", "destructor", "operator", "conversion", "property",
                   "indexer", "event", "class", "struct", "record", "record struct", "interface",
                   "enum", "delegate", "top-level", "file"))
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
    i, steps = _open_string(text, pos, frames), 0
    while frames and i < n:
        steps += 1
        if steps == 64:                  # a character costs less than a call to spend()
            spend(steps)
            steps = 0
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


def _branch_end(text, pos, end):
    """Where a comment or string that opens inside an #if branch at pos and runs to end
    stops at the latest: at the directive ending its branch (a whole #if group inside the
    literal is its text, say commented-out code). Reaching that directive means the branch
    is one the compiler skips without lexing, where a `/*` or `@"` may be left open."""
    depth = 0
    for d in _BRANCH_DIRECTIVE.finditer(text, pos, end):
        if d.group(1) == "if":
            depth += 1
        elif depth == 0:
            return d.start()
        elif d.group(1) == "endif":
            depth -= 1
    return end


def tokenize(text):
    """(tokens, their 1-based lines, their offsets, the set of lines holding /// docs,
    {line: word} of the preprocessor directives, e.g. {3: "if", 5: "endif"})."""
    texts, lines, offsets, doc_lines, directives = [], [], [], set(), {}
    pos, line, n = 0, 1, len(text)
    groups = []                          # per open #if: [start of each branch's tokens]
    match, steps = _TOKEN.match, 0
    while pos < n:
        steps += 1
        if steps == 64:                  # a token costs less than a call to spend()
            spend(steps)
            steps = 0
        m = match(text, pos)
        kind = m.lastgroup
        end = _skip_string(text, pos) if kind == "special" else m.end()
        if groups and kind in ("comment", "verbatim", "special") and \
                text.find("\n", pos, end) >= 0:
            cut = _branch_end(text, pos, end)
            if cut < end:                # a skipped branch: none of it is code
                kind, end, branch = "comment", cut, groups[-1][-1]
                del texts[branch:], lines[branch:], offsets[branch:]
        if kind == "ws" or kind == "comment":
            pass
        elif kind == "doc":
            doc_lines.add(line)
        elif kind == "pp":
            word = directives[line] = (text[pos + 1:end].split() or [""])[0]
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
    return texts, lines, offsets, doc_lines, directives


def _bracket_balance(tokens):
    return (tokens.count("{") - tokens.count("}"),
            tokens.count("(") + tokens.count("[") - tokens.count(")") - tokens.count("]"))


def _drop_unbalanced_branches(texts, lines, offsets, starts):
    """Keep the #elif/#else branches only when they and the #if branch each balance
    their brackets (whole members or statements per branch). Otherwise keep just the
    #if branch (say, two signatures sharing one opening brace), so the brace count stays
    right. A group in the middle of a declaration (`int P =>`, #if, `A;`, #else, `B;`)
    holds alternatives for one stretch of it: keep just the first, ending where the
    last one ends, so the declaration is read once and spans them all."""
    branches = list(zip(starts, starts[1:] + [len(texts)]))
    keep = _bracket_balance(texts[starts[0]:branches[0][1]]) == (0, 0)
    filled = [(start, end) for start, end in branches if start < end]
    if keep and starts[0] and texts[starts[0] - 1] not in (";", "{", "}", "]") and \
            len(filled) > 1 and all(_bracket_balance(texts[s:e]) == (0, 0) for s, e in filled):
        lines[filled[0][1] - 1] = lines[filled[-1][1] - 1]
        branches = filled[1:]
    else:
        branches = [(start, end) for start, end in branches[1:]
                    if not keep or _bracket_balance(texts[start:end]) != (0, 0)]
    for start, end in reversed(branches):
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


def _doc_tag(m):
    """A space for a tag or a line's ///; a `<` left open as written."""
    return m.group() if m.group(1) == "" else " "


def _is_name(token):
    word = token[1:] if token[0] == "@" else token
    return (word[:1].isalpha() or word[:1] == "_") and token not in KEYWORDS


class _Chunker:
    def __init__(self, text):
        self.text = text
        self.T, self.L, self.P, self.doc_lines, self.directives = tokenize(text)
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

    def doc_before(self, first, decl=None):
        """(first line of the /// comment right above token first, its text without tags).
        When the attributes from first to the declaration at decl are conditional
        (`/// doc`, `#if X`, `[Attr]`, `#endif`, member), the doc above the #if is the member's."""
        line = top = self.L[first]
        if decl is not None and self.T[first] == "[" and \
                any(n in self.directives for n in range(line + 1, self.L[min(decl, self.n - 1)])):
            while self.directives.get(top - 1) == "if":
                top -= 1
        start = top
        while start - 1 in self.doc_lines:
            start -= 1
        if start == top:
            return line, ""
        if self.lines is None:                     # split once: per member it is quadratic
            self.lines = self.text.split("\n")
        return start, " ".join(" ".join(_DOC_TAG.sub(_doc_tag, d).split())
                               for d in self.lines[start - 1:top - 1]).strip()

    def emit(self, ns, types, member, kind, first, name_tok, last, sig_from, sig_to, owner_doc=""):
        start, doc = self.doc_before(first, sig_from)
        sig = self.source(sig_from, sig_to)
        sig_line = self.L[name_tok]
        doc_lines = self.doc_span(start, sig_line) if start < self.L[first] else ()
        self.chunks.append(Chunk(".".join(ns), ".".join(types), member, kind, start,
                                 self.L[min(last, self.n - 1)], sig_line, sig[:300], doc,
                                 owner_doc, doc_lines))

    def doc_span(self, start, sig_line):
        """(first, last) line of the /// lines that open a chunk, above its signature."""
        last = start - 1
        while last < sig_line - 1 and self.lines[last].lstrip().startswith("///"):
            last += 1
        return (start, last) if last >= start else ()

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

    def extension_name(self, k, j):
        """`extension<T>(List<T>)` for the block `extension<T>(List<T> list) where ... {`
        at T[k:j]: the receiver's type, without its attributes and parameter name."""
        T, p = self.T, k + 1
        while p < j and T[p] != "(":
            p += 1
        close = min(max(self.match[p], p), j) if p < j else j
        r = p + 1
        while r < close and T[r] == "[":                  # [NotNull] string s
            r = max(self.match[r], r) + 1
        last = close - 1
        if last > r and _is_name(T[last]) and T[last - 1] not in (".", "::", "ref", "in",
                                                                   "scoped", "readonly"):
            last -= 1                                     # the parameter name
        return f"extension{self.source(k + 1, p)}({self.source(r, last + 1)})"

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
            self.emit(ns, types, name, kind, first, q, end, sig_from, sig_to, frame.outer_doc)

    def members(self):
        """Read declarations from the start of the file to its end. A namespace or type body
        pushes a frame and its closing '}' pops it: an explicit stack, not recursion."""
        T, n = self.T, self.n
        frames = [_Frame("top", [], [])]
        i, file_scoped = 0, False
        while True:
            spend()
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
                    self.push(frames, _Frame("namespace", ns + [name], types, doc=frame.doc))
                elif not file_scoped:              # file-scoped: applies to the rest. C# allows
                    frame.ns = ns + [name]         # one, so a second is another #if branch's
                    file_scoped = True
                i = j + 1
                continue
            # using directives: `using A.B;`, `using static A;`, `using X = A.B;`,
            # `global using unsafe X = int*;`; but not the statements `using (...)` and
            # `using var x = ...;`
            u = k + (head == "global")
            if context != "type" and u < j and T[u] == "using" and (
                    stop == ";" or stop == "=" and j - u == 2 + (T[u + 1] == "unsafe")):
                i = self.statement_end(j) + 1
                continue
            if head in TYPE_KEYWORDS and k + 1 < j and _is_name(T[k + 1]) or \
                    head == "record" and k + 2 < j and T[k + 1] in ("struct", "class"):
                q = k + 2 if T[k + 1] in ("struct", "class") else k + 1
                kind = "record struct" if head == "record" and T[k + 1] == "struct" else head
                # what the type's own chunk needs, should its body give no member chunk
                own = (ns, types, T[q], kind, first, q), (attrs_end, j)
                if stop == "{" and head != "enum":
                    self.push(frames, _Frame("type", ns, types + [T[q]], own, len(self.chunks),
                                             self.doc_before(first, attrs_end)[1], frame.doc))
                    i = j + 1
                    continue
                end = self.match[j] if stop == "{" else self.statement_end(j)
                self.close(_Frame("type", ns, types, own, len(self.chunks), "", frame.doc), end)
                i = end + 1
                continue
            if head == "extension" and stop == "{" and k + 1 < j and T[k + 1] in ("(", "<"):
                # C# 14 extension block: no type, and no chunk of its own, but its members
                # are named as Roslyn displays them, E.extension(string).M; its doc comment
                # is theirs (the compiler copies it onto each)
                self.push(frames, _Frame("type", ns, types + [self.extension_name(k, j)],
                                         doc=self.doc_before(first)[1] or frame.doc))
                i = j + 1
                continue
            if head == "delegate" and stop == ";" and k + 1 < j and T[k + 1] != "*":
                name, _, q = self.member_name(k + 1, j)
                self.emit(ns, types, name or "", "delegate", first, q, j, attrs_end, j, frame.doc)
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
                self.emit(ns, types, name, kind, first, q, end, attrs_end, j, frame.doc)
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


MAX_NESTING = 10_000          # namespaces and types inside each other; real code uses < 10


class _Frame:
    """An open container while the chunker reads: the file, a namespace or a type body.
    doc: the doc comment of the innermost type around (or of this type)."""
    __slots__ = ("context", "ns", "types", "type", "chunks_before", "top_first", "top_last",
                 "doc", "outer_doc")

    def __init__(self, context, ns, types, type_=None, chunks_before=0, doc="", outer_doc=""):
        self.context, self.ns, self.types = context, ns, types
        self.type, self.chunks_before = type_, chunks_before
        self.top_first = self.top_last = None
        self.doc, self.outer_doc = doc, outer_doc


def rules(table=None):
    """(kinds, misnamed) for the chunk contract (contract.py): contextual words (get, set,
    value, var, await, ...) are fine names (`struct set` is C#)."""
    return KINDS, lambda c: c.member in KEYWORDS


def chunk(text, ext=".cs"):
    """Split C# source into chunks: one per member with a body, plus memberless types
    and top-level statements. Pure: text in, chunks out."""
    chunker = _Chunker(text)
    result = Chunks(chunker.parse())
    result.parsed = chunker               # its tokens and brackets, read again by uses/
    return result


# what the uses' extraction (uses/csharp.py) reads of this lexer, by these names
TOKEN, skip_string, match_brackets, is_name = _TOKEN, _skip_string, _match_brackets, _is_name
