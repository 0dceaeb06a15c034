"""The one tree-sitter driver: a language's table (tables.py) in, typed chunks out. Pure:
text in, chunks out. Go, Java, Rust, C and C++ are read by it; what it knows of each is
data, and the rules below are the same for all of them.

What a chunk is:
  * a function with a body (a method, a constructor, an initializer block), from the
    comment block and attributes directly above it (or its `template<...>`) to its last
    line. Bodies are never entered: nothing inside one is ever a chunk;
  * a type that is a chunk whole (a struct, an enum, a typedef, a macro), nested types
    included;
  * a container (a class, an interface, a trait, an impl) with no function anywhere inside
    it, whole; a container with one is no chunk, and its functions and its nested
    function-free containers and types are;
  * a namespace (a C++ namespace, a Rust `mod`) that holds no chunk at all, whole;
  * a file that holds code and no chunk, whole ("file").
The chain (Chunk.cls) is the names of the containers around a chunk, plus what its own
name says (C++'s `void Foo::bar()`, Go's receiver `func (t *T) M()`); Chunk.namespace is
the namespaces around it. The comment block directly above (each comment on a line of its
own, no blank line between) is the chunk's doc, its markers stripped.

Broken input: tree-sitter recovers what it can, and an ERROR node is read as if its
children stood in its place. A minified or generated file (parsers.looks_minified) raises
ChunkerLimit. Chunks.parse_errors counts the ERROR and MISSING nodes. The
walk keeps its own stack; containers nested over MAX_NESTING deep raise ChunkerLimit.

A .h file is C or C++ (the C row's shared_with in languages.py): C, unless tree-sitter-cpp's
tree of it holds a node type that C has no form of (a class body, a namespace, a template,
`::`, an access specifier, a reference, a constructor's initializer list, a destructor or
operator, `using`: the C++ table's `marks`); then it is chunked as C++ and Chunks.language
says "cpp" (a table is named as its language). (tree-sitter-c reads `namespace n { ... }`
without an error, as an old-style function, so its errors cannot decide it.)
"""
import dataclasses
import re

from . import Chunk, ChunkerLimit, Chunks, parsers, spend
from .tables import TABLES

MAX_NESTING = 1000
MAX_SIGNATURE = 300
MIN_FILE_LINES = 3          # a file of fewer lines of code and no chunk (a package clause
                            # and an import) is no chunk either

# Every pattern here reads file text: each costs time linear in its input, whatever the
# input (tests/test_linear.py). A `*/` is matched from the first `*` of its run (each
# later `*` would scan the same run again), its blanks before it left to the whitespace
# that doc_text collapses; an inline tag left open runs to the end of the text (\Z) and is
# left as written, so a later `{@` never scans that text again
_LINE_MARKERS = re.compile(r"^[ \t]*(?:/\*+!?|\*+/|\*(?!/)|//[/!]?)?[ \t]?|(?<!\*)\*+/[ \t]*$",
                           re.M)
_JAVADOC_TAG = re.compile(r"^[ \t]*(?:\*[ \t]*)?@\w", re.M)
_INLINE_TAG = re.compile(r"\{@\w+\s+([^}|\s]+)(?:[|\s]+([^}]*))?(\}|\Z)")
_AS_BLANKS = bytes(c if c == 10 else 32 for c in range(256))   # bytes.translate: \n stays
_SCOPED = {"qualified_identifier": ("name", "scope"), "scoped_identifier": ("name", "path"),
           "scoped_type_identifier": ("name", "path")}
_WRAPPING_DECLARATORS = frozenset(("parenthesized_declarator", "reference_declarator"))
_NAME_SEGMENT = frozenset(("identifier", "type_identifier", "field_identifier",
                           "namespace_identifier", "destructor_name", "operator_name",
                           "primitive_type"))


@dataclasses.dataclass(frozen=True)
class _Patterns:
    """A table's patterns, compiled once, with the flags the driver reads them with."""
    name_ok: re.Pattern
    cut: re.Pattern
    blank: re.Pattern
    keyword_macros: tuple              # (keyword, pattern)


PATTERNS = {name: _Patterns(re.compile(rf"\A(?:{s.names_ok})\Z"),
                            re.compile(s.cut, re.M) if s.cut else None,
                            re.compile(s.blank, re.M) if s.blank else None,
                            tuple((word, re.compile(p, re.M)) for word, p in s.keyword_macros))
            for name, s in TABLES.items()}


def rules(table):
    """(kinds, misnamed) of a table, for the chunk contract (contract.py)."""
    s = TABLES[table]
    kinds = {k for pair in s.functions.values() for k in pair} | set(s.types.values()) | \
        set(s.containers.values()) | set(s.namespaces.values()) | {"file"} | \
        {k for _, kinds_of in s.kind_by.values() for k in kinds_of.values()}
    name_ok = PATTERNS[table].name_ok
    return frozenset(kinds), lambda c: c.kind != "file" and \
        (c.member in s.keywords or not name_ok.match(c.member))


def chunk(text, ext, table, other=None):
    """The chunks of a file's text, read with a table of tables.py, or with the table other
    when its tree holds one of other's marks (see the module doc). Raises ChunkerLimit for a
    minified or generated file."""
    long_line = parsers.looks_minified(text)
    if long_line:
        raise ChunkerLimit(f"looks minified or generated: line {long_line[0]:,} has "
                           f"{long_line[1]:,} characters of code")
    spend(len(text))
    source = data = text.encode("utf-8", "surrogatepass")
    language, tree = "", None
    if other:
        as_other = _blanked(data, other)
        tree = parsers.parse(TABLES[other].grammar, as_other)
        if _holds(tree.root_node, TABLES[other].marks):
            table, language, data = other, other, as_other
        else:
            tree = None
    if tree is None:
        data = _blanked(data, table)
        tree = parsers.parse(TABLES[table].grammar, data)
    root = tree.root_node
    found = _Walk(data, table, source).run(root)
    if TABLES[table].cut and root.has_error:
        found = _recover(data, table, root, found, source)
    result = Chunks(found)
    result.parse_errors = parsers.count_errors(root)
    result.language = language
    result.parsed = (tree, data)
    return result


def _recover(data, table, root, found, source):
    """Where tree-sitter could not recover (a macro it cannot read derails the rest of the
    file into one ERROR, or into one function's body), the broken node is cut at the
    table's `cut` lines (C: a `}` at the start of a line ends a function or a type; not one
    inside a string or a comment: the table's `uncut`) and each
    piece is read on its own, so one unreadable line costs its own function only. For a
    language with no containers or namespaces (C), whose pieces lose nothing by being read
    alone, the node is the whole file; otherwise each ERROR or function with an error at
    file or namespace level, its pieces' chunks in that namespace. source: the file as
    written (data is as read: _blanked)."""
    syntax, cut = TABLES[table], PATTERNS[table].cut
    whole = not syntax.containers and not syntax.namespaces
    for node, namespace in [(root, ())] if whole else _broken(root, syntax):
        first, last = first_line(node), last_line(node)
        ends = [m.end() for m in cut.finditer(data, node.start_byte, node.end_byte)
                if m.end() < node.end_byte - 1 and root.descendant_for_byte_range(
                    m.start(), m.start() + 1).type not in syntax.uncut]
        spend(node.end_byte - node.start_byte)
        if not ends:
            continue
        found = [c for c in found if not first <= c.start_line <= last]
        opened, start = _opened(node) if node.type == "ERROR" else ((), node.start_byte)
        around, row, braces = namespace + opened, data.count(b"\n", 0, start), []
        for a, b in zip([start] + ends, ends + [node.end_byte]):
            spend()
            piece = data[a:b]
            tree = parsers.parse(syntax.grammar, piece).root_node
            inside = around + tuple(name for name in braces if name)
            for c in _Walk(piece, table, source[a:b]).run(tree):
                if c.kind != "file":
                    found.append(dataclasses.replace(
                        c, start_line=c.start_line + row, end_line=c.end_line + row,
                        sig_line=c.sig_line + row, doc_lines=tuple(x + row for x in c.doc_lines),
                        namespace=".".join(inside + ((c.namespace,) if c.namespace else ()))))
            left_open, closed = _unbalanced(tree, syntax)
            braces += left_open
            del braces[max(0, len(braces) - closed):]
            row += piece.count(b"\n")
    found.sort(key=lambda c: (c.start_line, c.end_line))
    return found


def _unbalanced(root, syntax):
    """What a piece of a broken node leaves open for the pieces after it, and how many
    braces it closes that it did not open: (the name of each block left open, outermost
    first: a namespace's, or "" for any other block), count. A piece ends at a `}` line,
    so a namespace opened in one piece (`namespace a {` / `class B {...};`) holds the
    functions of the next ones until a piece ends with its `}`."""
    left_open, closed, stack = [], 0, [(root, 0)]
    while stack:
        node, depth = stack.pop()
        for child in node.children:
            if child.is_missing and child.type == "}":
                owner = node.parent if node.type == "declaration_list" else node
                name = owner.child_by_field_name("name") if owner is not None and \
                    owner.type in syntax.namespaces else None
                left_open.append((depth, ".".join(segments(name)) if name is not None else ""))
            elif child.type == "}" and (node == root or node.type == "ERROR" and
                                        node.parent == root):
                closed += 1
            elif child.child_count:
                stack.append((child, depth + 1))
    return [name for _, name in sorted(left_open)], closed


def _opened(error):
    """(the names of the `namespace NAME {` an ERROR node opens with, where they end): the
    namespaces tree-sitter could not close, so it read them into the error."""
    names, kids, end = [], [c for c in error.children if c.type != "comment"], error.start_byte
    for i in range(0, len(kids) - 2, 3):
        head, name, brace = kids[i:i + 3]
        if head.type != "namespace" or brace.type != "{":
            break
        names += segments(name)
        end = brace.end_byte
    return tuple(names), end


def _broken(root, syntax):
    """(node, namespace) of each ERROR or function with an error at file or namespace
    level (read through the table's `through` nodes)."""
    stack = [(root, ())]
    while stack:
        node, namespace = stack.pop()
        for child in node.children:
            if not child.has_error:
                continue
            if child.type == "ERROR" or child.type in syntax.functions:
                yield child, namespace
            elif child.type in syntax.through:
                stack.append((child, namespace))
            elif child.type in syntax.namespaces and child.child_by_field_name("body"):
                name = child.child_by_field_name("name")
                parts = tuple(segments(name)) if name is not None else ()
                stack.append((child.child_by_field_name("body"), namespace + parts))


def _blanked(data, table):
    """data with the groups of the table's `blank` read as spaces and those of its
    `keyword_macros` as their keywords (same length, same lines)."""
    patterns = PATTERNS[table]
    if not patterns.blank and not patterns.keyword_macros:
        return data                     # Go, Java, Rust: no copy of every file
    out = bytearray(data)
    for word, pattern in ((b"", patterns.blank), *patterns.keyword_macros):
        for m in pattern.finditer(data) if pattern else ():
            spend()
            a, b = next(m.span(g) for g in range(1, m.re.groups + 1) if m.start(g) >= 0)
            out[a:b] = word + data[a + len(word):b].translate(_AS_BLANKS)
        spend(len(data))
    return bytes(out)


def _holds(root, types):
    """Does the tree hold a node of one of these types (a class, struct or union only
    with its body)? Stops at the first."""
    wanted, stack = frozenset(types), [root]
    while stack:
        spend()
        node = stack.pop()
        if node.type in wanted and (not node.type.endswith("_specifier") or
                                    node.child_by_field_name("body") is not None):
            return True
        stack.extend(node.children)
    return False


def first_line(node):
    return node.start_point[0] + 1


def last_line(node):
    """The line of a node's last character (a node that ends with its newline, as a `//`
    comment does, ends on the line before)."""
    row, col = node.end_point
    return row + 1 if col or row == node.start_point[0] else row


def _text(node):
    return node.text.decode("utf-8", "replace")


def segments(node):
    """The names a (possibly qualified or generic) name is made of: `a::B<T>::f` ->
    ["a", "B", "f"]; parts that are no name (`crate::`, `::`) are left out; [] when it
    ends in no name."""
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        t = n.type
        if t in _NAME_SEGMENT:
            out.append(_text(n))
        elif t in _SCOPED:
            last, scope = (n.child_by_field_name(f) for f in _SCOPED[t])
            stack.extend(x for x in (last, scope) if x is not None)
        elif t in ("template_type", "template_function", "generic_type", "template_method",
                   "pointer_type", "reference_type"):
            inner = n.child_by_field_name("name") or n.child_by_field_name("type")
            if inner is not None:
                stack.append(inner)
        elif t == "nested_namespace_specifier":
            stack.extend(reversed(n.named_children))
        elif t == "operator_cast":                  # `operator bool`, as clang names it
            out.append("operator " + " ".join(_text(n.child_by_field_name("type")).split()))
    last = node
    while last is not None and last.type not in _NAME_SEGMENT | {"operator_cast"}:
        last = (last.child_by_field_name("name") or last.child_by_field_name("type")
                or (last.named_children[-1] if last.type == "nested_namespace_specifier"
                    and last.named_child_count else None))
    return out if last is not None else []


class _Frame:
    """Children being read: of the file, a body, or a node read through. owner: the
    container or namespace whose body this is (None when read through)."""
    __slots__ = ("children", "namespace", "chain", "in_container", "doc", "pending", "owner",
                 "chunks_before", "functions_before", "depth", "opened", "macro_call")

    def __init__(self, node, namespace, chain, in_container, doc, depth, owner=None,
                 chunks_before=0, functions_before=0):
        self.children = iter(node.children)
        self.namespace, self.chain, self.in_container = namespace, chain, in_container
        self.doc, self.depth, self.owner = doc, depth, owner
        self.pending, self.opened, self.macro_call = [], {}, None
        self.chunks_before, self.functions_before = chunks_before, functions_before


class _Walk:
    """data: the bytes the tree was parsed from; source: the same as written (the table's
    blanks undone), which signatures and doc comments are read from."""
    def __init__(self, data, table, source):
        syntax = TABLES[table]
        self.data, self.s, self.source = data, syntax, source
        self.name_ok = PATTERNS[table].name_ok
        self.items = set(syntax.functions) | set(syntax.types) | set(syntax.containers) | \
            set(syntax.namespaces) | syntax.wrappers | syntax.holders
        self.chunks, self.n_functions = [], 0

    def run(self, root):
        frames = [_Frame(root, (), (), False, "", 0)]
        while frames:
            spend()
            frame = frames[-1]
            node = next(frame.children, None)
            if node is None:
                frames.pop()
                if frame.owner is not None:
                    self.close(frame)
                continue
            t = node.type
            if self.s.macro_functions and node.is_named and t not in self.s.leading:
                self.macro_function(node, frame)
            if t in self.s.leading:
                frame.pending.append(node)
            elif t in self.s.through or t == "ERROR":
                frame.pending = []
                frames.append(_Frame(node, frame.namespace, frame.chain, frame.in_container,
                                     frame.doc, frame.depth))
            elif t in self.items:
                inner = self.item(node, frame)
                frame.pending = []
                if inner is not None:
                    if inner.depth > MAX_NESTING:
                        raise ChunkerLimit(f"types and namespaces nested over "
                                           f"{MAX_NESTING:,} deep")
                    frames.append(inner)
            elif node.is_named:
                frame.pending = []
                if t == "function_declarator":     # a header tree-sitter left open, in
                    # an ERROR: `#if A` `f(int a, int b) {` `#else` `f(int a) {` `#endif`;
                    # the function starts at its first header, as the compiler reads it
                    frame.opened[_text(node.child_by_field_name("declarator"))] = \
                        first_line(node)
        if not self.chunks:
            self.whole_file(root)
        self.chunks.sort(key=lambda c: (c.start_line, c.end_line))
        return self.chunks

    # ------------------------------------------------------------------ items
    def item(self, outer, frame):
        """Chunk an item, or return the frame to read its body in (or through it)."""
        node = outer
        while True:
            if node.type in self.s.wrappers:
                inner = [c for c in node.named_children if c.type in self.items]
                if len(inner) != 1:
                    return _Frame(node, frame.namespace, frame.chain, frame.in_container,
                                  frame.doc, frame.depth)
                node = inner[0]
            elif node.type in self.s.holders:
                inner = node.child_by_field_name("type")
                if inner is None or inner.child_by_field_name("body") is None or \
                        inner.type not in self.s.types and inner.type not in self.s.containers:
                    return None
                node = inner
            else:
                break
        t = node.type
        lead = self.leading(outer, frame)
        if t in self.s.functions:
            self.function(outer, node, frame, lead)
        elif t in self.s.types:
            if t in self.s.bodied and node.child_by_field_name("body") is None:
                return None
            named = self.name(node)
            if named:
                kind = self.s.types[t]
                if t in self.s.kind_by:
                    field, kinds = self.s.kind_by[t]
                    of = node.child_by_field_name(field)
                    kind = kinds.get(of.type, kind) if of is not None else kind
                self.emit(outer, node, frame, named, kind, frame.doc, lead)
        elif t in self.s.containers or t in self.s.namespaces:
            body = node.child_by_field_name("body")
            if body is None:
                return None
            named = self.name(node)
            is_container = t in self.s.containers
            chain, namespace = frame.chain, frame.namespace
            if named:
                extra, name, _ = named
                if is_container:
                    chain = chain + tuple(extra) + (name,)
                else:
                    namespace = namespace + tuple(extra) + (name,)
            return _Frame(body, namespace, chain, frame.in_container or is_container,
                          lead[1] if is_container else frame.doc, frame.depth + 1,
                          owner=(outer, node, frame, named, lead) if named else
                          (None,) * 5,
                          chunks_before=len(self.chunks), functions_before=self.n_functions)
        return None

    def function(self, outer, node, frame, lead):
        named = self.name(node)
        fixed = self.s.names.get(node.type, "").startswith("<")
        body = node if fixed else node.child_by_field_name("body")
        if not named or body is None or fixed and not frame.in_container:
            return                  # (a block is an initializer only right in a type's body)
        self.n_functions += 1
        outside, inside = self.s.functions[node.type]
        kind = inside if frame.in_container or named[0] else outside
        self.emit(outer, node, frame, named, kind, frame.doc, lead)

    def macro_function(self, node, frame):
        """`TEST_CASE("adds", "[math]") {...}`: tree-sitter reads the macro as a call
        missing its `;` and the body as a block right after it (comments between); together
        they are a function, named by the macro (as clang names it when it cannot expand
        the macro)."""
        statement, block = self.s.macro_functions
        call, frame.macro_call = frame.macro_call, None
        if node.type == statement and node.children and node.children[-1].is_missing and \
                node.named_children[0].type == "call_expression":
            frame.macro_call = node, self.leading(node, frame)
        elif node.type == block and call:
            outer, (leading, doc, doc_lines) = call
            name = outer.named_children[0].child_by_field_name("function")
            segs = segments(name) if name is not None else []
            if not segs:
                return
            self.n_functions += 1
            start = min([first_line(outer)] + [first_line(p) for p in leading])
            self.chunks.append(Chunk(
                ".".join(frame.namespace), ".".join(frame.chain), segs[-1], "function",
                start, last_line(node), max(start, first_line(name)),
                " ".join(self.text(outer).rstrip(";").split())[:MAX_SIGNATURE], doc, frame.doc,
                doc_lines))

    def close(self, frame):
        """A container with no function inside is one chunk, all it holds included; a
        namespace with no chunk inside is one."""
        outer, node, parent, named, lead = frame.owner
        if node is None:
            return
        is_container = node.type in self.s.containers
        if is_container and self.n_functions == frame.functions_before:
            del self.chunks[frame.chunks_before:]
        if len(self.chunks) == frame.chunks_before:
            kind = (self.s.containers if is_container else self.s.namespaces)[node.type]
            self.emit(outer, node, parent, named, kind, parent.doc, lead)

    # ------------------------------------------------------------------ chunks
    def emit(self, outer, node, frame, named, kind, owner_doc, lead):
        extra, name, name_node = named
        leading, doc, doc_lines = lead
        start = min([first_line(outer)] + [first_line(p) for p in leading] +
                    [frame.opened.get(name, first_line(outer))])
        sig_line = first_line(name_node) if name_node is not None else first_line(node)
        end = last_line(node if outer.type in self.s.holders else outer)  # a holder runs on
        # over its variable: `struct s {...} table[] = {...};` is the struct
        self.chunks.append(Chunk(
            ".".join(frame.namespace), ".".join(frame.chain + tuple(extra)), name, kind,
            start, end, max(start, sig_line), self.signature(outer, node), doc,
            owner_doc, doc_lines))

    def name(self, node):
        """(extra chain, name, name node) of an item, or None when it has no name to show."""
        form = self.s.names.get(node.type)
        if form and form.startswith("<"):
            return (), form, None
        if form == "declarator":
            d = node
            while True:
                nxt = d.child_by_field_name("declarator")
                if nxt is None and d.type in _WRAPPING_DECLARATORS and d.named_child_count:
                    nxt = d.named_children[0]
                if nxt is None or d.type == "operator_cast":
                    break
                d = nxt
            parts, name_node = segments(d), d
        elif form == "impl":
            own = node.child_by_field_name("type")
            trait = node.child_by_field_name("trait")
            own_name = segments(own)[-1:] if own is not None else []
            trait_name = segments(trait)[-1:] if trait is not None else []
            if not own_name or trait is not None and not trait_name:
                return None
            name = f"{trait_name[0]} for {own_name[0]}" if trait_name else own_name[0]
            return ((), name, own) if self.name_ok.match(name) else None
        else:
            name_node = node.child_by_field_name("name")
            parts = segments(name_node) if name_node is not None else []
        if not parts or not all(self.name_ok.match(p) for p in parts) or \
                parts[-1] in self.s.keywords:
            return None
        extra = parts[:-1]
        if form == "receiver":
            receiver = node.child_by_field_name("receiver")
            owner = _first_of(receiver, "type_identifier") if receiver is not None else None
            extra = [_text(owner)] if owner is not None else []
        return extra, parts[-1], name_node

    def leading(self, outer, frame):
        """(the nodes directly above an item that belong to it, its doc text, the doc's
        (first, last) lines): comments and attributes, each on a line of its own, with no
        blank line between them and the item."""
        block, top = [], first_line(outer)
        for p in reversed(frame.pending):
            if last_line(p) < top - 1 or not self.starts_line(p):
                break
            block.append(p)
            top = first_line(p)
        block.reverse()
        comments = [p for p in block if p.type not in self.s.leading or "comment" in p.type]
        if not comments:
            return block, "", ()
        doc = " ".join(d for d in (doc_text(self.text(c)) for c in comments) if d)
        first, last = first_line(comments[0]), last_line(comments[-1])
        interleaved = any(first < first_line(p) < last for p in block if p not in comments)
        return block, doc, () if interleaved else (first, last)

    def starts_line(self, node):
        line_start = self.data.rfind(b"\n", 0, node.start_byte) + 1
        return not self.data[line_start:node.start_byte].strip()

    def signature(self, outer, node):
        """The item's text up to its body (or its first line), whitespace collapsed."""
        body = node.child_by_field_name("body")
        end = body.start_byte if body is not None and body.start_byte > outer.start_byte else \
            self.data.find(b"\n", outer.start_byte)
        if end < 0 or end > outer.end_byte:
            end = outer.end_byte
        text = self.source[outer.start_byte:end].decode("utf-8", "replace")
        return " ".join(text.split())[:MAX_SIGNATURE]

    def text(self, node):
        """A node's text as written."""
        return self.source[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def whole_file(self, root):
        code = [c for c in root.named_children if c.type not in self.s.leading]
        if code and last_line(code[-1]) - first_line(code[0]) + 1 >= MIN_FILE_LINES:
            self.chunks.append(Chunk("", "", "<file>", "file", first_line(code[0]),
                                     last_line(code[-1]), first_line(code[0]), "", ""))


def _first_of(node, node_type):
    """The first node of a type in node's subtree, in source order."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == node_type:
            return n
        stack.extend(reversed(n.children))
    return None


def doc_text(comment):
    """A comment's words: its markers stripped (and, for a /** block, its @tags and what
    follows them), {@link X} as X, whitespace collapsed."""
    if comment.startswith("/**"):
        tag = _JAVADOC_TAG.search(comment, 3)
        comment = comment[:tag.start()] if tag else comment
        comment = _INLINE_TAG.sub(inline_tag, comment)
    return " ".join(_LINE_MARKERS.sub("", comment).split())


def inline_tag(m):
    """What an {@link X label} of _INLINE_TAG reads as: its label, else X; one left open
    (no `}` to its end) as written."""
    return (m.group(2) or m.group(1)) if m.group(3) else m.group()
