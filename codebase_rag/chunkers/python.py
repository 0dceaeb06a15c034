"""The Python chunker: tree-sitter-python's syntax tree, read from the top without ever
entering a function body. Pure: text in, chunks out.

What a chunk is:
  * every def is one chunk ("method" when it sits in a class body, else "function"), from
    its first decorator to the last line of its body, docstring included. Defs, classes
    and lambdas inside a function body stay inside it. Defs under a module- or class-level
    `if`/`try`/`with`/`for`/`while`/`match` are chunks too (version switches, import
    fallbacks): Python does not see them as nested in a function either;
  * a class with no def anywhere inside it (dataclasses, enums, exceptions, NamedTuples,
    a Django model of fields and a `class Meta`) is one "class" chunk, nested classes
    included. A class with defs is a container: its methods are chunks, and so are its
    nested def-free classes. No two chunks ever share a line of a clean file;
  * code that no def or class covers, in the module or in a container class, is grouped
    in runs of consecutive statements. A def, a class or boilerplate (below) ends a run;
    a run is also cut at a gap line once it is RUN_SPLIT lines long, and at any statement
    once it is RUN_MAX long. A run is a chunk ("module"; "attributes" in a class) when its
    statements fill MIN_RUN_LINES lines, or when it holds a compound statement
    (`if __name__ == "__main__":`, a loop) or a bare call (`app.register(...)`). So a
    script body, a constant table, a model's fields or a registration is found by a
    search, while the `logger = getLogger(__name__)` or `T = TypeVar("T")` of every module
    is no chunk of its own;
  * boilerplate never starts or joins a run: imports, `__dunder__ = ...` (`__all__`,
    `__version__`, `__slots__`), and if/try blocks of nothing but imports (`if
    TYPE_CHECKING:`, `try: import x` / `except ImportError:`). The index is not flooded with
    import blocks. A docstring belongs to its def, class or module, never to a run;
  * a file with code but no chunk at all (a package `__init__` of re-exports) is one
    "module" chunk, from its first statement to its last;
  * a `.pyi` stub: every def's body there is `...`, and the stub IS the API doc. So a
    stub's class is one "class" chunk holding all its method signatures (the API in one
    piece), and its module-level defs are "function" chunks. The C#/TS rule "a declaration
    without a body is no chunk" has no Python form: `...` is a body, so in a .py file a
    Protocol's or an @overload's `...` def is a chunk like any other.

Broken input: tree-sitter recovers what it can, and ERROR nodes are read through. Where it
cannot (an unclosed bracket swallows the rest of the file into one ERROR), the ERROR is cut
at each top-level def, class or decorator line and the pieces are parsed on their own, so
one broken def costs only itself. Chunks.parse_errors counts the ERROR and MISSING nodes.
Every walk is iterative; classes nested over MAX_NESTING deep raise ChunkerLimit.
"""
import dataclasses
import keyword
import re

from . import Chunk, ChunkerLimit, Chunks, parsers, spend

MAX_NESTING = 10_000        # classes inside classes; real code uses < 10
MIN_RUN_LINES = 3
RUN_SPLIT = 30
RUN_MAX = 60
MAX_SIGNATURE = 300

KEYWORDS = frozenset(keyword.kwlist)
DEFINITIONS = frozenset(("function_definition", "class_definition", "decorated_definition"))
COMPOUND = frozenset(("if_statement", "for_statement", "while_statement", "try_statement",
                      "with_statement", "match_statement"))
IMPORTS = frozenset(("import_statement", "import_from_statement", "future_import_statement"))
TRIVIA = frozenset(("comment", "line_continuation"))
# where a top-level statement that starts a chunk may begin, to cut a broken region at
TOP_LEVEL_START = re.compile(rb"^(?:(?:async[ \t]+)?def|class)[ \t]|^@", re.M)
KINDS = frozenset(("function", "method", "class", "module", "attributes"))


def rules(table=None):
    """(kinds, misnamed) for the chunk contract (contract.py)."""
    return KINDS, lambda c: c.kind in ("function", "method", "class") and \
        (not c.member.isidentifier() or c.member in KEYWORDS)


def _parse(data):
    return parsers.parse("tree_sitter_python", data, budget=False)


def chunk(text, ext=".py"):
    """Split Python source (ext ".py" or ".pyi") into chunks in file order."""
    data = text.encode("utf-8", "surrogatepass")
    tree = _parse(data)
    root = tree.root_node
    result = Chunks(_Walk(data, ext == ".pyi").run(root, recover=True))
    result.parse_errors = parsers.count_errors(root)
    result.parsed = (tree, data)
    return result


# ----------------------------------------------------------------------------- tree helpers
def first_line(node):
    return node.start_point[0] + 1


def last_line(node):
    """The line of the last token that is not a comment: tree-sitter lets a block run on
    over the comments after its last statement, Python's own parser does not."""
    while True:
        kids = [c for c in node.children if c.type not in TRIVIA]
        if not kids:
            break
        node = kids[-1]
    row, col = node.end_point
    return row + 1 if col or node.start_point[0] == row else row


def statements(node, keep_errors=False):
    """The statements of a module, block or ERROR node, flattened: ERROR nodes are read
    through (those right in node are kept whole with keep_errors), and so is a compound
    statement with a def or class somewhere in its blocks (its other statements become
    items of their own); any other compound statement is one item. Comments are dropped.
    Iterative, linear."""
    out, n_defs = [], 0
    stack = [(iter(node.children), True, None, 0, 0)]  # children, are statements, owner, marks
    while stack:
        kids, in_block, owner, mark, defs_mark = stack[-1]
        child = next(kids, None)
        if child is None:
            stack.pop()
            if owner is not None and n_defs == defs_mark:      # no def inside: one item
                del out[mark:]
                out.append(owner)
            continue
        t = child.type
        if t in TRIVIA or child.is_missing:
            continue
        if not in_block:               # a compound statement's own parts: only blocks count
            if t == "block":
                stack.append((iter(child.children), True, None, 0, 0))
            elif t.endswith("_clause"):
                stack.append((iter(child.children), False, None, 0, 0))
            continue
        if t == "ERROR" and keep_errors and len(stack) == 1:
            out.append(child)
        elif t == "ERROR":
            stack.append((iter(child.children), True, None, 0, 0))
        elif t == "case_clause":                           # a match statement's cases
            stack.append((iter(child.children), False, None, 0, 0))
        elif t in COMPOUND:
            stack.append((iter(child.children), False, child, len(out), n_defs))
        else:
            if t in DEFINITIONS:
                n_defs += 1
            out.append(child)
    return out


def docstring(block):
    """The docstring statement of a module or block, or None."""
    first = next((c for c in block.children if c.type not in TRIVIA), None)
    if first is None or first.type != "expression_statement":
        return None
    parts = _strings(first)
    if not parts or any(p.type != "string" or _prefix(p) & set("fFbBtT") for p in parts):
        return None
    return first


def _code(node):
    """The named children of node that are not comments."""
    return [c for c in node.named_children if c.type not in TRIVIA]


def _strings(stmt):
    """The string literals an expression statement is made of: one, or the parts of an
    implicit concatenation, in parentheses or not; [] when it is something else."""
    kids = _code(stmt)
    while len(kids) == 1 and kids[0].type == "parenthesized_expression":
        kids = _code(kids[0])
    if len(kids) != 1:
        return []
    return _code(kids[0]) if kids[0].type == "concatenated_string" else kids


def _prefix(string):
    start = string.children[0] if string.children else None
    return set(start.text.decode("latin-1").rstrip("'\"")) if start is not None else set()


def doc_text(stmt):
    """A docstring statement's text, whitespace collapsed."""
    import ast
    import warnings
    raw = stmt.text.decode("utf-8", "replace")
    if "\\" in raw:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                value = ast.literal_eval(raw.strip())
                if isinstance(value, str):
                    return " ".join(value.split())
            except Exception:       # noqa: BLE001 - recovered source may not be a literal
                pass
    parts = []
    for node in _strings(stmt):
        body = node.text.decode("utf-8", "replace").lstrip("rRuU")
        q = 3 if body[:3] in ('"""', "'''") else 1
        parts.append(body[q:len(body) - q if body.endswith(body[:q]) and len(body) >= 2 * q
                          else len(body)])
    return " ".join("".join(parts).split())


def is_boilerplate(node):
    """Imports, __dunder__ assignments, and if/try blocks of nothing but imports (with
    one-line assignments and pass): statements that never start or join a run."""
    if node.type in IMPORTS:
        return True
    if node.type == "expression_statement":
        target = node.named_children[0] if node.named_child_count else None
        if target is not None and target.type in ("assignment", "augmented_assignment"):
            left = target.child_by_field_name("left")
            name = left.text.decode("utf-8", "replace") if left is not None else ""
            return len(name) > 4 and name.startswith("__") and name.endswith("__")
        return False
    if node.type not in ("if_statement", "try_statement"):
        return False
    imports, stack = 0, [node]
    while stack:
        n = stack.pop()
        for c in n.children:
            if c.type == "block" or c.type.endswith("_clause") or \
                    n.type == "block" and c.type in ("if_statement", "try_statement"):
                stack.append(c)
            elif n.type == "block" and c.type not in TRIVIA:
                if c.type in IMPORTS:
                    imports += 1
                elif not (c.type == "pass_statement" or c.type == "expression_statement"
                          and c.start_point[0] == c.end_point[0]):
                    return False
    return imports > 0


def is_worth_a_chunk(run):
    if sum(last_line(s) - first_line(s) + 1 for s in run) >= MIN_RUN_LINES:
        return True
    for s in run:
        if s.type in COMPOUND:
            return True
        if s.type == "expression_statement" and s.named_child_count == 1 and \
                s.named_children[0].type in ("call", "await"):
            return True
    return False


def _name(node):
    name = node.child_by_field_name("name")
    text = name.text.decode("utf-8", "replace") if name is not None else ""
    return text if text.isidentifier() and text not in KEYWORDS else ""


# ----------------------------------------------------------------------------- the walk
class _Scope:
    """The module or a class body while the walk reads its statements. own: what the
    class's own chunk needs, should it turn out to hold no def (None for the module and
    for a class whose name is broken); doc: the class's docstring, outer_doc: the one of
    the class around it."""
    __slots__ = ("items", "chain", "in_class", "own", "doc", "doc_node", "outer_doc", "run",
                 "chunks_before", "defs_before")

    def __init__(self, body, chain, in_class=False, own=None, doc="", outer_doc="",
                 chunks_before=0, defs_before=0, keep_errors=False):
        self.items = iter(statements(body, keep_errors))
        self.doc_node = docstring(body)
        self.chain, self.in_class, self.own, self.run = chain, in_class, own, []
        self.doc, self.outer_doc = doc, outer_doc
        self.chunks_before, self.defs_before = chunks_before, defs_before


class _Walk:
    def __init__(self, data, stub):
        self.data, self.stub = data, stub
        self.chunks, self.n_defs = [], 0

    def run(self, root, recover=False):
        """The chunks of the tree at root. recover: cut each ERROR right in the module at
        the top-level defs and classes inside it, and parse the pieces on their own."""
        module = _Scope(root, [], keep_errors=recover)
        scopes = [module]
        while scopes:
            spend()
            scope = scopes[-1]
            node = next(scope.items, None)
            if node is None:
                self.flush(scope)
                self.close(scopes.pop())
                continue
            if node.type == "ERROR":
                self.flush(scope)
                self.recover(node)
                continue
            definition = node.child_by_field_name("definition") \
                if node.type == "decorated_definition" else node
            if definition is None or definition.type not in DEFINITIONS:
                self.add_to_run(scope, node)
                continue
            self.flush(scope)
            if definition.type == "function_definition":
                self.function(scope, node, definition)
            elif definition.type == "class_definition":
                scope_of_class = self.klass(scope, node, definition)
                if scope_of_class is not None:
                    if len(scopes) > MAX_NESTING:
                        raise ChunkerLimit(f"classes nested over {MAX_NESTING:,} deep")
                    scopes.append(scope_of_class)
        if recover and not self.chunks and (module.doc_node is not None or statements(root)):
            self.whole_module(root, module)
        self.chunks.sort(key=lambda c: (c.start_line, c.end_line))
        return self.chunks

    def recover(self, error):
        """An ERROR in the module: tree-sitter could not recover (an unclosed bracket
        swallows the rest of the file), so each piece from one top-level def, class or
        decorator to the next is parsed on its own, and its chunks kept."""
        start, end = error.start_byte, error.end_byte
        cuts = [m.start() for m in TOP_LEVEL_START.finditer(self.data, start + 1, end)]
        spend(end - start)
        row = error.start_point[0]
        for a, b in zip([start] + cuts, cuts + [end]):
            spend()
            piece = self.data[a:b]
            walk = _Walk(piece, self.stub)
            for c in walk.run(_parse(piece).root_node):
                self.chunks.append(dataclasses.replace(
                    c, start_line=c.start_line + row, end_line=c.end_line + row,
                    sig_line=c.sig_line + row,
                    doc_lines=tuple(x + row for x in c.doc_lines)))
            self.n_defs += walk.n_defs
            row += piece.count(b"\n")

    def function(self, scope, top, node):
        name = _name(node)
        body = node.child_by_field_name("body")
        if not name or body is None:
            return
        self.n_defs += 1
        kind = "method" if scope.in_class else "function"
        self.emit(scope.chain, name, kind, top, node, body, scope.doc)

    def klass(self, scope, top, node):
        """A class: one chunk now (in a stub), or a scope to read (its chunk, should it
        turn out to hold no def, is made when the scope closes)."""
        name = _name(node)
        body = node.child_by_field_name("body")
        if body is None:
            return None
        if self.stub and name:
            self.emit(scope.chain, name, "class", top, node, body, scope.doc)
            return None
        doc = docstring(body)
        return _Scope(body, scope.chain + [name] if name else scope.chain, in_class=True,
                      own=(scope.chain, name, top, node, body) if name else None,
                      doc=doc_text(doc) if doc is not None else "", outer_doc=scope.doc,
                      chunks_before=len(self.chunks), defs_before=self.n_defs)

    def close(self, scope):
        """A class with no def inside is one chunk, its nested classes and runs included."""
        if scope.own is not None and self.n_defs == scope.defs_before:
            del self.chunks[scope.chunks_before:]
            chain, name, top, node, body = scope.own
            self.emit(chain, name, "class", top, node, body, scope.outer_doc)

    def emit(self, chain, name, kind, top, node, body, owner_doc):
        doc = docstring(body)
        self.chunks.append(Chunk(
            "", ".".join(chain), name, kind, first_line(top), last_line(body),
            first_line(node), self.signature(node, body),
            doc_text(doc) if doc is not None else "", owner_doc,
            (first_line(doc), last_line(doc)) if doc is not None else ()))

    def signature(self, node, body):
        """The header from `def`/`class` to its colon, whitespace collapsed, without its
        comments and backslash continuations."""
        colon = [c for c in node.children if c.type == ":" and c.end_byte <= body.start_byte]
        end = colon[-1].start_byte if colon else body.start_byte
        header = self.data[node.start_byte:end]
        if b"#" in header or b"\\" in header:
            cuts, stack = [], [c for c in node.children if c.end_byte <= end]
            while stack:
                n = stack.pop()
                if n.type in TRIVIA:
                    cuts.append((n.start_byte, n.end_byte))
                else:
                    stack.extend(n.children)
            for a, b in sorted(cuts, reverse=True):
                header = header[:a - node.start_byte] + header[b - node.start_byte:]
        return " ".join(header.decode("utf-8", "replace").split())[:MAX_SIGNATURE]

    # -- code outside defs and classes
    def add_to_run(self, scope, node):
        if scope.doc_node is not None and node.id == scope.doc_node.id:
            return
        if is_boilerplate(node):
            self.flush(scope)
            return
        run = scope.run
        if run:
            span = last_line(run[-1]) - first_line(run[0]) + 1
            gap = first_line(node) > last_line(run[-1]) + 1
            if span >= RUN_MAX or span >= RUN_SPLIT and gap:
                self.flush(scope)
        scope.run.append(node)

    def flush(self, scope):
        run, scope.run = scope.run, []
        if not run or not is_worth_a_chunk(run) or scope.in_class and scope.own is None:
            return                                   # (a class with a broken name: no owner)
        start, end = first_line(run[0]), last_line(run[-1])
        kind, member = ("attributes", "<attributes>") if scope.in_class else ("module", "<module>")
        self.chunks.append(Chunk("", ".".join(scope.chain), member, kind, start, end, start,
                                 "", "", scope.doc))

    def whole_module(self, root, module):
        items = statements(root)
        nodes = ([module.doc_node] if module.doc_node is not None else []) + items
        start = min(first_line(n) for n in nodes)
        end = max(last_line(n) for n in nodes)
        doc = module.doc_node
        self.chunks.append(Chunk("", "", "<module>", "module", start, end, start, "",
                                 doc_text(doc) if doc is not None else "", "",
                                 (first_line(doc), last_line(doc)) if doc is not None else ()))
