"""C#'s uses, read from the chunker's own tokens (chunkers/csharp.py): one pass over them,
linear, no parse tree. What a token sequence means here:

    Name (   Name<...> (      a call (unless a type stands before it: a declaration)
    new A.Name (  new Name {  a construction; `new Name[` a type use
    a.b.Name (                a call whose qualifier is the chain before it
    .Name                     a member reference, when no call follows
    Type name = / ; / , / ) / in    a local or parameter of that type, for the qualifiers
    var name = new Type(      a local of that type
    Name (capitalised, not a local, not after a dot)    a reference (a type, a property)

Interpolated strings are one token to the chunker; their holes are read as code here.
Declarations come from a second, shallow walk (the chunker's own helpers): usings, each
type's bases, each field's and property's type.
"""

from itertools import compress, repeat
from operator import is_, methodcaller

from ..chunkers import csharp as lexer
from . import Collector, owners

BUILTIN_TYPES = frozenset("""bool byte char decimal double float int long object sbyte short
string uint ulong ushort void dynamic nint nuint""".split())
# words that stand before an expression: `await Foo()` calls Foo, it declares nothing
EXPRESSION_WORDS = frozenset("""await yield return throw in is as case when else new var
nameof typeof sizeof default checked unchecked and or not with select where from let on
equals by into orderby group join""".split())
NOT_CALLED = frozenset(("nameof", "typeof", "sizeof", "default", "checked", "unchecked",
                        "stackalloc", "when", "var"))
TYPE_KEYWORDS = frozenset(("class", "struct", "interface", "record", "enum"))
TYPE_ARGUMENT_PUNCTUATION = frozenset((".", ",", "?", "[", "]", "::"))
DECLARED_BEFORE = frozenset(("=", ";", ",", ")", "in", ":"))   # what follows `Type name`
MAX_CHAIN = 8                 # a qualifier longer than this is "?"
MAX_HOLE_DEPTH = 3            # interpolated strings inside holes inside holes: read so deep


def starts_upper(token):
    """Whether a name starts with a capital (C#'s types and properties, by convention)."""
    return "A" <= token[token[0] == "@"] <= "Z"


def is_name(token):
    return lexer.is_name(token) and token not in BUILTIN_TYPES


_NAMES = {}                   # token -> is_name(token): files repeat their tokens


def name_flags(T):
    """[is_name(t) for t in T], each distinct token judged once."""
    known = _NAMES
    if len(known) > 200_000:
        known.clear()
    out = list(map(known.get, T))
    if None in out:
        for i in compress(range(len(T)), map(is_, out, repeat(None))):
            out[i] = known.get(T[i])
            if out[i] is None:
                out[i] = known[T[i]] = is_name(T[i])
    return out


def positions(T, token):
    """The indices of token in the list T, found by the list's own search."""
    found, i = [], -1
    try:
        while True:
            i = T.index(token, i + 1)
            found.append(i)
    except ValueError:
        return found


def expand_holes(T, L, depth=0, text=None):
    """(tokens, lines) with each interpolated string replaced by the tokens of its holes
    (text: the tokens' source, where a `$` says whether there may be one)."""
    if text is not None and "$" not in text or depth >= MAX_HOLE_DEPTH:
        return T, L
    strings = list(compress(range(len(T)), map(methodcaller("startswith", ("$", "@$")), T)))
    if not strings:
        return T, L
    out_t, out_l, at = [], [], 0
    for k in strings:
        out_t += T[at:k]
        out_l += L[at:k]
        t, line, at = T[k], L[k], k + 1
        for start, end in holes(t):
            ht, hl, _, _, _ = lexer.tokenize(t[start:end])
            first = line + t.count("\n", 0, start)
            ht, hl = expand_holes(ht, [first + x - 1 for x in hl], depth + 1)
            out_t += ["("] + ht + [")"]          # a hole is an expression of its own
            out_l += [first] + hl + [first]
    return out_t + T[at:], out_l + L[at:]


def holes(s):
    """[(start, end)] of the interpolation holes of the string token s (`$"a {x} b"`,
    `$@"..."`, `$$\"\"\"...{{x}}...\"\"\"`): linear, each hole's own strings skipped whole."""
    dollars = len(s) - len(s.lstrip("$@")) - s[:len(s) - len(s.lstrip("$@"))].count("@")
    quote = s.find('"')
    raw = s.startswith('"""', quote)
    need = max(dollars, 1) if raw else 1        # braces that open a hole
    verbatim = "@" in s[:quote]
    i, n, found = quote + (3 if raw else 1), len(s), []
    while i < n:
        c = s[i]
        if c == "\\" and not verbatim and not raw:
            i += 2
            continue
        if c != "{":
            i += 1
            continue
        run = i
        while run < n and s[run] == "{":
            run += 1
        if not raw and run - i >= 2:            # {{ is a brace in the text
            i += 2
            continue
        if raw and run - i < need:
            i = run
            continue
        start = i + (need if raw else 1)
        end = hole_end(s, start)
        found.append((start, end))
        i = end + 1
    return found


def hole_end(s, i):
    """Where the hole that starts at i ends: its `}`, or the `:` or `,` of a format or an
    alignment, at bracket depth 0."""
    depth, n = 0, len(s)
    while i < n:
        m = lexer.TOKEN.match(s, i)
        if m.lastgroup == "special":
            i = lexer.skip_string(s, i)
            continue
        tok = m.group()
        if tok in ("(", "[", "{"):
            depth += 1
        elif tok in (")", "]"):
            depth -= 1
        elif tok == "}":
            if depth == 0:
                return m.start()
            depth -= 1
        elif tok in (":", ",") and depth == 0:
            return m.start()
        i = m.end()
    return n


def extract(text, chunks, language=None):
    chunker = chunks.parsed
    T, L = expand_holes(chunker.T, chunker.L, text=text)
    owner = owners(chunks, max(L[-1] if L else 1, text.count("\n") + 1))
    as_lexed = _Uses(chunker.T, chunker.L, chunker.match, owner, chunks)
    decls, as_lexed.header_lines = declarations(chunker, as_lexed)
    reader = as_lexed if T is chunker.T else \
        _Uses(T, L, lexer.match_brackets(T), owner, chunks, as_lexed.header_lines)
    return reader.run(), decls


class _Uses:
    def __init__(self, T, L, match, owner, chunks=(), header_lines=()):
        self.T, self.L, self.match, self.owner, self.chunks = T, L, match, owner, chunks
        self.header_lines = header_lines  # lines of usings and namespace names: no uses
        self.name = name_flags(T)         # is_name of each token
        self.angles = angle_brackets(T, self.name)
        self._opener = None
        self.n = len(T)
        self.uses = Collector()
        self.locals = {}          # chunk -> {name: type or None}

    @property
    def opener(self):
        """{index of a closing bracket: index of its opening one}, made when first asked."""
        if self._opener is None:
            # a closing bracket is the match of one opening bracket alone; the other keys
            # (-1, an unclosed bracket's own index) are never a closing bracket's
            self._opener = dict(zip(self.match, range(self.n)))
        return self._opener

    def run(self):
        T, L, n, name, header_lines = self.T, self.L, self.n, self.name, self.header_lines
        names = list(compress(range(n), name))
        local = set()             # (chunk, name) of the local functions declared in members
        named = set()             # members whose own name (their first on their line) is read
        own = [(c.sig_line, c.member.rpartition(".")[2]) for c in self.chunks]
        news = [i for i in positions(T, "new") if i + 1 < n and name[i + 1]]
        skip_to, owner, angles, last_chunk, scope = 0, self.owner, self.angles, -1, None
        collect = self.uses.add
        for i in sorted(names + news) if news else names:
            if i < skip_to:
                continue
            t = T[i]
            if t == "new":
                skip_to = self.construction(i)
                continue
            line = L[i]
            if t in NOT_CALLED or line in header_lines or i and T[i - 1] in TYPE_KEYWORDS:
                continue
            chunk = owner[line]
            if chunk != last_chunk:
                scope, last_chunk = self.locals.setdefault(chunk, {}), chunk
            prev = T[i - 1] if i else ""
            close = angles.get(i + 1)
            after = i + 1 if close is None else close + 1
            nxt = T[after] if after < n else ""
            dotted = prev in (".", "::")
            if chunk is not None and chunk not in named and line == own[chunk][0] and \
                    t.lstrip("@") == own[chunk][1]:
                named.add(chunk)                             # the member's own name
            elif nxt in DECLARED_BEFORE and not dotted and self.declares(i, prev, nxt, scope):
                pass
            elif nxt == "(":
                if self.is_declaration(i):
                    local.add((chunk, t.lstrip("@")))   # a local function (its calls,
                                                        # before or after: its member's own)
                elif prev == "[":
                    collect(chunk, line, t.lstrip("@"), "type", "")      # an attribute
                elif dotted or t not in scope:       # not a delegate held by a local
                    collect(chunk, line, t.lstrip("@"), "call", self.qualifier(i, scope))
            elif nxt in ("{", "=>") and not dotted and self.type_before(i) is not None:
                pass                                         # a property's declaration
            elif nxt == "." and not dotted:
                if t not in scope and starts_upper(t):
                    collect(chunk, line, t.lstrip("@"), "ref", "")  # a type's static, a property
            elif dotted:
                qualifier = self.qualifier(i, scope)
                if qualifier != "?":          # a member of who knows what: no reference
                    collect(chunk, line, t.lstrip("@"), "ref", qualifier)
            elif t not in scope and starts_upper(t):
                collect(chunk, line, t.lstrip("@"), "type" if after > i + 1 or after < n and
                        name[after] else "ref", "")
        self.uses.forget(local, "call")
        return self.uses.rows()

    def construction(self, i):
        """`new A.B<T>(`, `new B {`, `new B[`: one use of B (its qualifier A); returns the
        index after the type's name."""
        T, n = self.T, self.n
        j = i + 1
        while j + 2 < n and T[j + 1] == "." and self.name[j + 2]:
            j += 2
        after = self.after_generic(j)
        nxt = T[after] if after < n else ""
        chunk = self.owner[self.L[j]]
        qualifier = "".join(t.lstrip("@") for t in T[i + 1:j - 1])
        self.uses.add(chunk, self.L[j], T[j].lstrip("@"), "new" if nxt in ("(", "{") else "type",
                      qualifier)
        return j + 1

    def after_generic(self, i):
        """The index after Name<...> at i (type arguments only), or i + 1."""
        close = self.angles.get(i + 1)
        return close + 1 if close is not None else i + 1

    def type_before(self, i):
        """The type written right before token i (`Foo x`, `List<Foo> x`, `Foo[] x`,
        `Foo? x`, `A.B x`): its last name (generic arguments dropped; "[]" for an array,
        the keyword for a built-in type), or None when no type stands there."""
        T, j = self.T, i - 1
        if j < 0:
            return None
        array = False
        while j >= 1 and (T[j] == "?" or T[j] == "]" and T[j - 1] == "["):
            if T[j] == "]":
                array = True
                j -= 2
            else:
                j -= 1
        if j < 0:
            return None
        t = T[j]
        if t == ">":
            k = self.angles.get(j)
            if k is None or k < 1 or not self.name[k - 1]:
                return None
            j = k - 1
        elif t in BUILTIN_TYPES:
            return "[]" if array else t
        elif not (self.name[j] and t not in EXPRESSION_WORDS and t not in lexer.MODIFIERS):
            return None
        return "[]" if array else self.dotted_before(j)

    def dotted_before(self, j):
        """The name at j with the names dotted before it: `A.B.C` (at most MAX_CHAIN)."""
        T = self.T
        parts = [T[j].lstrip("@")]
        while j >= 2 and T[j - 1] == "." and self.name[j - 2] and len(parts) < MAX_CHAIN:
            j -= 2
            parts.append(T[j].lstrip("@"))
        return ".".join(reversed(parts))

    def declares(self, i, prev, nxt, scope):
        """Whether T[i] is a local or parameter being declared; records its type."""
        if prev == "var":
            scope[self.T[i]] = self.value_form(i + 2, scope) if nxt == "=" else None
            return True
        declared = self.type_before(i)
        if declared is None or prev == "?" and nxt == ":":
            return False              # `a ? b : c` declares nothing
        scope[self.T[i]] = None if declared == "[]" else "=" + declared.replace(".", ":")
        return True

    def value_form(self, j, scope):
        """The form of the value `var x = ...;` gives x (its expression from j), when it is
        a construction or a call's result: "=T", "a.F()"; else None."""
        T, n, k = self.T, self.n, j
        while k < n and k - j < 4 * MAX_CHAIN:        # to the end of a chain of names
            t = T[k]
            if t == "(":
                k = max(self.match[k], k) + 1
            elif t == "<" and self.angles.get(k) is not None:
                k = self.angles[k] + 1
            elif self.name[k] or t in (".", "?", "!", "new", "this", "base"):
                k += 1
            else:
                break
        if k >= n or T[k] not in (";", ",", ")") or k == j:
            return None
        form = self.chain_form(k - 1, scope)
        return form if form.startswith("=") or form.endswith("()") else None

    def is_declaration(self, i):
        """Whether `Name(` at i declares a method or local function (a type or a modifier
        stands before it) rather than calling one."""
        T = self.T
        j = i - 1
        if j >= 0 and T[j] in (".", "::"):
            return False
        if j >= 0 and (T[j] in lexer.MODIFIERS or T[j] == "void"):
            return True
        return self.type_before(i) is not None and T[j] not in ("?",)

    def qualifier(self, i, scope):
        """The qualifier of the name at i (see uses/__init__.py): the form of what stands
        before its dot."""
        T, j = self.T, i - 1
        if j < 1 or T[j] != ".":
            return ""
        j -= 1
        if T[j] in ("?", "!") and j >= 1:            # a?.b, a!.b
            j -= 1
        return self.chain_form(j, scope)

    def chain_form(self, j, scope):
        """The simple form of the expression whose last token is T[j]: names, `F()` for
        what a call returns, "=T" for `new T(...)`, this, base; "?" for anything else. Its
        first name is read against the member's locals (their forms)."""
        T, parts = self.T, []
        while j >= 0 and len(parts) <= MAX_CHAIN:
            t = T[j]
            if t in ("this", "base"):
                parts.append(t)
                break
            if t == ")":
                m = self.opener.get(j, -1) - 1
                if m >= 1 and T[m] == ">" and self.angles.get(m) is not None:
                    m = self.angles[m] - 1               # F<T>()
                if m < 0 or not self.name[m]:
                    return "?"
                s = m
                while s >= 2 and T[s - 1] == "." and self.name[s - 2] and m - s < 2 * MAX_CHAIN:
                    s -= 2
                if s >= 1 and T[s - 1] == "new":         # new A.T(...): a T
                    parts.append("=" + ":".join(x.lstrip("@") for x in T[s:m + 1:2]))
                    break
                parts.append(T[m].lstrip("@") + "()")
                j = m - 1
            elif self.name[j] or t in BUILTIN_TYPES:
                parts.append(t.lstrip("@"))
                j -= 1
            else:
                return "?"
            if j >= 1 and T[j] == ".":
                j -= 1
                if T[j] in ("?", "!") and j >= 1:
                    j -= 1
                continue
            if j >= 1 and T[j] == "::":
                j -= 2                                    # global::A.B
            break
        else:
            return "?"
        parts.reverse()
        head = parts[0]
        if head not in ("this", "base") and head[0] != "=" and not head.endswith("()") \
                and head in scope:
            if scope[head] is None:
                return "?"
            parts[0] = scope[head]
        joined = ".".join(parts)
        return joined if joined.count(".") <= MAX_CHAIN else "?"


def angle_brackets(T, name):
    """{index of '<': index of its '>', and the other way round} for the brackets of type
    arguments: only names, dots, commas, ?, [] and brackets of their own between them. One
    pass with a stack that any other token empties, from each `<` the stack is empty at (the
    list's own search finds it): linear. name: is_name of each token."""
    pairs, n, k = {}, len(T), -1
    while k + 1 < n:
        try:
            k = T.index("<", k + 1)
        except ValueError:
            break
        stack = [k]
        while stack and k + 1 < n:
            k += 1
            t = T[k]
            if t == "<":
                stack.append(k)
            elif t == ">":
                o = stack.pop()
                pairs[o], pairs[k] = k, o
            elif not (name[k] or t in TYPE_ARGUMENT_PUNCTUATION or t in BUILTIN_TYPES):
                break
    return pairs


def declarations(chunker, types):
    """([(kind, scope, name, target, line, end_line)], the lines of usings and namespace
    names): the usings, types, each type's bases and each field's and property's type (see
    uses/__init__.py), by a walk over declarations like the chunker's own, that never
    enters a member's body. types: a _Uses over the chunker's tokens (its type_before)."""
    T, L, match, n = chunker.T, chunker.L, chunker.match, chunker.n
    out, header_lines = [], set()
    frames = [("top", [], n, "")]         # (context, type chain, index of its '}', namespace)
    file_namespace = ""
    i = 0
    while i < n:
        while len(frames) > 1 and i >= frames[-1][2]:
            frames.pop()
        context, chain, _, namespace = frames[-1]
        t = T[i]
        if t in ("}", ";"):
            i += 1
            continue
        j = chunker.header_end(i)
        k, _ = chunker.skip_attributes(i, j)
        while k < j and T[k] in lexer.MODIFIERS:
            k += 1
        stop = T[j] if j < n else ""
        if k >= j:
            i = j + 1 if stop != "{" else max(match[j], j) + 1
            continue
        head = T[k]
        if head == "namespace":
            name = "".join(T[k + 1:j])
            header_lines.update(L[k:j + 1])
            if stop == "{":
                frames.append(("namespace", chain, match[j], ".".join(
                    p for p in (namespace or file_namespace, name) if p)))
            elif not file_namespace:
                file_namespace = name
            i = j + 1
            continue
        u = k + (head == "global")
        if context != "type" and u < j and T[u] == "using" and stop in (";", "="):
            end = chunker.statement_end(j)
            words = T[u + 1:end]
            scope = "global" if head == "global" else ""
            header_lines.update(L[u:end + 1])
            if words[:1] == ["static"]:
                out.append(("static", scope, "", "".join(words[1:]), L[u], None))
            elif "=" in words:
                at = words.index("=")
                out.append(("using", scope, "".join(words[:at]), "".join(words[at + 1:]),
                            L[u], None))
            else:
                out.append(("using", scope, "", "".join(words), L[u], None))
            i = end + 1
            continue
        if head in TYPE_KEYWORDS and k + 1 < j:
            q = k + 2 if head == "record" and T[k + 1] in ("struct", "class") else k + 1
            if q < j and is_name(T[q]):
                inner = chain + [T[q].lstrip("@")]
                scope = ".".join(inner)
                end = match[j] if stop == "{" else chunker.statement_end(j)
                out.append(("type", ".".join(chain), inner[-1], namespace or file_namespace,
                            L[q], L[min(end, n - 1)]))
                for base in bases(T, q + 1, j, match):
                    out.append(("base", scope, base, "", L[q], None))
                if stop == "{" and head != "enum":
                    frames.append(("type", inner, match[j], namespace))
                    i = j + 1
                else:
                    i = end + 1
                continue
        if context != "type":                    # top-level statements, delegates...
            i = (match[j] if stop == "{" else chunker.statement_end(j)) + 1
            continue
        name, kind, q = chunker.member_name(k, j)
        if kind in ("property", "event") and name and q > k and "." not in name:
            declared = types.type_before(q)
            if declared and declared != "[]":
                out.append(("field", ".".join(chain), name.lstrip("@"),
                            "=" + declared.replace(".", ":"), L[q], None))
        if stop == "{":
            end = match[j]
            if end + 1 < n and T[end + 1] == "=":
                end = chunker.statement_end(end + 1)
        elif stop == "}":
            i = j
            continue
        else:
            end = chunker.statement_end(j)
        i = max(end, i) + 1
    return out, header_lines


def bases(T, i, j, match):
    """The base types in a declaration's header T[i:j] (after its name): the names after
    ':' up to `where`, generic arguments and a primary constructor's parameters left out."""
    while i < j and T[i] in ("<", "("):
        close = i
        if T[i] == "(":
            close = max(match[i], i)
        else:
            depth = 0
            while close < j:
                depth += (T[close] == "<") - (T[close] == ">")
                if depth <= 0:
                    break
                close += 1
        i = close + 1
    if i >= j or T[i] != ":":
        return []
    found, depth, last = [], 0, None
    for t in T[i + 1:j]:
        if t == "where" and depth == 0:
            break
        if t == "<":
            depth += 1
        elif t == ">":
            depth -= 1
        elif t == "(":
            depth += 1
        elif t == ")":
            depth -= 1
        elif t == "," and depth == 0:
            if last:
                found.append(last)
            last = None
        elif depth == 0 and is_name(t):
            last = t.lstrip("@")
    if last:
        found.append(last)
    return found
