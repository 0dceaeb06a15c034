"""The tree-sitter languages' uses: one driver, and per language a query file
(uses/queries/LANG.scm) that says which nodes are calls, constructions, references,
locals, fields, classes and imports, plus a row of FORMS: the node types of the simple
expressions a qualifier is read from (a name, a.b, this, super, a call). The driver reads
the tree its chunker made (Chunks.parsed), runs the query once, and turns the captures into
uses and decls (uses/__init__.py says what those are). Linear: the query runs once over
the tree, every receiver is read at most MAX_CHAIN nodes deep, and classes nest by a sweep.

Capture names (docs/references.md lists them with examples):
  call.name, call.receiver      a call of name (on receiver)
  new.name, new.receiver        a construction
  ref.name, ref.receiver        a member referenced, not called
  type.name, type.receiver      a type named; type.tree: every name inside a type
  local.name + local.type|local.value   a local (with its declared type, or its value);
                                local.global: a name a function says is not its own
  field.self + field.name + field.type|field.value    self.x = ... (this.x in a class)
  field.name + field.type|field.value (no field.self)  a field declared in a class body
  class.name (and @class)       a class; base.name: one of its bases (the class is found
                                from the base's node upwards)
  import.module|import.from, import.name, import.alias, import.star    an import
  scope                         a node whose locals are its own (Go's func literals)
  return, return.this           a return statement (one that returns `this`): a member whose
                                every return gives `this` returns its receiver (decl "returns")
  each.param, each.receiver (+ each.method)   a name bound to each element of receiver:
                                `for (x of xs)`, `xs.map(x => ...)` when each.method is one
                                of the language's element_methods
"""
import bisect
import threading
from dataclasses import dataclass
from pathlib import Path

from . import LOCAL, Collector, owners

MAX_CHAIN = 8                 # a receiver deeper than this is "?"
MAX_UP = 48                   # scopes around a name looked at, at most
MATCH_LIMIT = 256             # matches in progress at once in a query (see matches)
MAX_DEPTH = 256               # the deepest node a match starts at (see matches)
BIG_ERROR = 2000              # an ERROR node's children the query cursor may read at once
QUERIES = Path(__file__).parent / "queries"


@dataclass(frozen=True)
class Forms:
    """The node types a language's simple expressions are made of."""
    query: str                    # its file in uses/queries/
    identifiers: frozenset        # a plain name
    member: tuple                 # (node type, object field, name field) of `a.b`
    call: tuple                   # (node type, function field) of `f(x)`
    new: tuple = ()               # (node type, constructor field) of `new F(x)`
    this: frozenset = frozenset()     # node types of the object itself (this)
    base: frozenset = frozenset()     # node types of its base (super)
    self_words: frozenset = frozenset()   # names of the object itself (Python's self, cls)
    base_call: str = ""           # a call of this name is the base (Python's super())
    wrappers: frozenset = frozenset()     # (x), x!, x as T: read through
    head_import: bool = False     # `import a.b` binds the name a
    function_kinds: frozenset = frozenset(("function", "method", "constructor", "getter",
                                           "setter"))
    type_names: frozenset = frozenset()   # node types of a name inside a type
    type_member: tuple = ()       # (node type, object field, name field) of `a.B` in a type
    base_constructor: str = ""    # what a call of the base itself (`super(x)`) calls
    method_call: tuple = ()       # (node type, object field, name field) of `a.f(x)` as one
                                  # node (Java's method_invocation)
    generic: frozenset = frozenset()  # `Foo<T>`: read as its first named child, Foo
    cast: tuple = ()              # (node type, type field) of `(Foo) x`: a value of type Foo
    class_nodes: frozenset = frozenset()  # node types of a class (none: those named class*)
    new_call: str = ""            # a call of this name makes a value of its argument's type
                                  # (Go's new(T))
    paths: tuple = ()             # more forms of `a.b` as member's: Rust's a::b, a::B
    arrays: frozenset = frozenset()   # node types of an array type (`T[]`: its element is
                                  # its first named child); a declared one is "=T[]"
    array_generics: frozenset = frozenset()   # generic types that are arrays: Array<T>
    element_methods: frozenset = frozenset()  # xs.m(x => ...) gives x each element of xs
    inferred: frozenset = frozenset()     # type words that mean "the value's" (Java's var)

    def member_form(self, node_type):
        """The (node type, object field, name field) of a form of `a.b`, or None."""
        for form in (self.member, self.type_member, *self.paths):
            if form and form[0] == node_type:
                return form
        return None


ES = dict(identifiers=frozenset(("identifier",)),
          member=("member_expression", "object", "property"), call=("call_expression", "function"),
          new=("new_expression", "constructor"), this=frozenset(("this",)),
          base=frozenset(("super",)), base_constructor="constructor",
          wrappers=frozenset(("parenthesized_expression", "non_null_expression", "as_expression",
                              "satisfies_expression", "await_expression")),
          type_names=frozenset(("type_identifier",)),
          type_member=("nested_type_identifier", "module", "name"),
          generic=frozenset(("generic_type",)),
          arrays=frozenset(("array_type",)),
          array_generics=frozenset(("Array", "ReadonlyArray")),
          element_methods=frozenset(("of", "map", "forEach", "filter", "find", "findIndex",
                                     "findLast", "findLastIndex", "some", "every",
                                     "flatMap")))
FORMS = {
    "python": Forms("python.scm", frozenset(("identifier",)), ("attribute", "object", "attribute"),
                    ("call", "function"), self_words=frozenset(("self", "cls")),
                    base_call="super", wrappers=frozenset(("parenthesized_expression",)),
                    head_import=True, type_names=frozenset(("identifier",))),
    "typescript": Forms("typescript.scm", **ES),
    "javascript": Forms("javascript.scm", **ES),
    "java": Forms("java.scm", frozenset(("identifier", "type_identifier")),
                  ("field_access", "object", "field"), ("method_invocation", "object"),
                  new=("object_creation_expression", "type"), this=frozenset(("this",)),
                  base=frozenset(("super",)), wrappers=frozenset(("parenthesized_expression",)),
                  function_kinds=frozenset(("method", "constructor")),
                  type_names=frozenset(("type_identifier",)),
                  type_member=("scoped_type_identifier", None, None),
                  method_call=("method_invocation", "object", "name"),
                  generic=frozenset(("generic_type",)), cast=("cast_expression", "type"),
                  class_nodes=frozenset(("class_declaration", "interface_declaration",
                                         "enum_declaration", "record_declaration",
                                         "annotation_type_declaration")),
                  inferred=frozenset(("var",))),
    "go": Forms("go.scm", frozenset(("identifier", "type_identifier", "package_identifier")),
                ("selector_expression", "operand", "field"), ("call_expression", "function"),
                new=("composite_literal", "type"),
                wrappers=frozenset(("parenthesized_expression", "unary_expression")),
                function_kinds=frozenset(("function", "method")),
                type_names=frozenset(("type_identifier",)),
                type_member=("qualified_type", "package", "name"),
                generic=frozenset(("generic_type", "pointer_type")),
                cast=("type_assertion_expression", "type"),
                class_nodes=frozenset(("type_spec", "type_alias")),
                new_call="new"),
    "rust": Forms("rust.scm", frozenset(("identifier", "type_identifier")),
                  ("field_expression", "value", "field"), ("call_expression", "function"),
                  new=("struct_expression", "name"), this=frozenset(("self",)),
                  self_words=frozenset(("Self",)),
                  wrappers=frozenset(("parenthesized_expression", "reference_expression")),
                  function_kinds=frozenset(("function", "method")),
                  type_names=frozenset(("type_identifier",)),
                  type_member=("scoped_type_identifier", "path", "name"),
                  paths=(("scoped_identifier", "path", "name"),),
                  generic=frozenset(("generic_type",)),
                  class_nodes=frozenset(("struct_item", "enum_item", "trait_item",
                                         "union_item"))),
}
_queries = {}
_lock = threading.Lock()


def query(forms, language):
    """The compiled query of a language's file, for the grammar its tree was read with."""
    key = (forms.query, id(language))
    found = _queries.get(key)
    if found is None:
        import tree_sitter
        with _lock:
            found = _queries.get(key)
            if found is None:
                found = _queries[key] = (language, tree_sitter.Query(
                    language, (QUERIES / forms.query).read_text()))
    return found[1]


def extract(text, chunks, language):
    tree, data = chunks.parsed
    forms = FORMS[language]
    return _Reader(data, chunks, forms, text.count("\n") + 1).run(
        matches(query(forms, tree.language), tree.root_node))


def matches(query, root, match_limit=MATCH_LIMIT, max_depth=MAX_DEPTH):
    """The query's matches in root's tree, linear in it whatever the text. tree-sitter keeps
    a match in progress for every open node a pattern may still complete: a chain
    a.b().b()... thousands deep makes that quadratic (minutes for a Go chain 50,000 calls
    deep), so matches in progress at once and the depth a match may start at are bounded:
    code as written reaches neither (no file of gson, javapoet, commons-lang, cobra, mux,
    caddy, ripgrep, nor this project's own loses a match), a hostile chain loses its
    deepest uses. And an ERROR node of many children (`((((...` unclosed) costs the cursor
    the square of them: see query_roots."""
    import tree_sitter
    for node in query_roots(root):
        cursor = tree_sitter.QueryCursor(query, match_limit=match_limit)
        cursor.set_max_start_depth(max_depth)
        yield from cursor.matches(node)


def query_roots(root):
    """The nodes to run the query on: the root, unless an ERROR node holds more than
    BIG_ERROR children (the query cursor costs the square of those: `((((...` unclosed);
    then the query runs on each child of that node and of the nodes above it, apart (a
    pattern anchored on one of those is lost: the file is broken there). Only the nodes
    that hold an error are walked, each once."""
    if not root.has_error:
        return [root]
    order, parent, stack = [], {}, [root]
    while stack:
        node = stack.pop()
        order.append(node)
        for child in node.children:
            if child.has_error:
                parent[child.id] = node.id
                stack.append(child)
    bad = set()
    for node in reversed(order):        # children before their parents
        if node.id in bad or node.type == "ERROR" and node.child_count > BIG_ERROR:
            bad.add(node.id)
            if node.id in parent:
                bad.add(parent[node.id])
    if not bad:
        return [root]
    roots, stack = [], [root]
    while stack:
        node = stack.pop()
        if node.id in bad:
            stack.extend(reversed(node.children))
        else:
            roots.append(node)
    return roots


class _Reader:
    def __init__(self, data, chunks, forms, n_lines):
        self.data, self.chunks, self.forms = data, chunks, forms
        self.owner = owners(chunks, n_lines)
        self.uses, self.decls = Collector(), []

    def text(self, node):
        return self.data[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def chunk_of(self, node):
        line = node.start_point[0] + 1
        return self.owner[line] if line < len(self.owner) else None

    def in_function(self, chunk):
        return chunk is not None and self.chunks[chunk].kind in self.forms.function_kinds

    def run(self, matches):
        calls, refs, types, locals_, fields, classes, bases, imports, scopes = (
            [] for _ in range(9))
        self.each, returns = {}, {}
        for _, caps in matches:
            if "return" in caps or "return.this" in caps:
                node = caps.get("return", caps.get("return.this"))[0]
                counts = returns.setdefault(self.chunk_of(node), [0, 0])
                counts["return.this" in caps] += 1
            elif "each.param" in caps:
                method = self.text(caps["each.method"][0]) if "each.method" in caps else "of"
                if method in self.forms.element_methods:
                    self.each[caps["each.param"][0].start_byte] = caps["each.receiver"][0]
            elif "call.name" in caps or "call.base" in caps:
                calls.append(caps)
            elif "ref.name" in caps:
                refs.append(caps)
            elif "new.name" in caps:
                calls.append(caps)
            elif "type.name" in caps or "type.tree" in caps:
                types.append(caps)
            elif "local.name" in caps or "local.param" in caps or "local.global" in caps:
                locals_.append(caps)
            elif "field.name" in caps:
                fields.append(caps)
            elif "class.name" in caps:
                classes.append(caps)
            elif "base.name" in caps:
                bases.append(caps)
            elif "scope" in caps:
                scopes.append(caps["scope"][0])
            elif any(k.startswith(("import.", "export.")) for k in caps):
                imports.append(caps)
        self.read_scopes(scopes)
        self.read_returns(returns)
        self.chains = self.class_chains(classes)
        self.scopes, self.imported = {}, set()
        self.read_imports(imports)
        self.scopes = self.locals_of(locals_)
        self.read_fields(fields)
        self.read_bases(bases)
        called = set()
        for caps in calls:
            if "call.base" in caps:   # super(...): the base's constructor
                self.uses.add(self.chunk_of(caps["call.base"][0]),
                              caps["call.base"][0].start_point[0] + 1,
                              self.forms.base_constructor, "call", "base")
                continue
            kind = "new" if "new.name" in caps else "call"
            name = caps[f"{kind}.name"][0]
            called.add(name.start_byte)
            if kind == "call" and "call.receiver" not in caps and \
                    self.text(name) == self.forms.base_call:
                continue              # super() itself: its method is the use
            self.add(name, kind, caps.get(f"{kind}.receiver"))
        for caps in refs:
            name = caps["ref.name"][0]
            if name.start_byte not in called:
                self.add(name, "ref", caps.get("ref.receiver"), drop_unknown=True)
        for caps in types:
            if "type.tree" in caps:
                for name, receiver in self.type_names(caps["type.tree"][0]):
                    self.add(name, "type", receiver and [receiver], drop_unknown=True)
            else:
                self.add(caps["type.name"][0], "type", caps.get("type.receiver"),
                         drop_unknown=True)
        return self.uses.rows(), self.decls

    def add(self, name_node, kind, receiver, drop_unknown=False):
        chunk = self.chunk_of(name_node)
        qualifier = self.qualifier(receiver[0], chunk) if receiver else ""
        if qualifier == "?" and drop_unknown:
            return
        self.uses.add(chunk, name_node.start_point[0] + 1, self.text(name_node), kind,
                      qualifier)

    # -- what a receiver is
    def qualifier(self, node, chunk):
        """The simple form of a receiver expression (uses/__init__.py): names, `f()` for
        what a call returns, this, base, "=T" for a construction; its first name read
        against the member's locals."""
        f, parts, start = self.forms, [], node
        while len(parts) <= MAX_CHAIN:
            t = node.type
            if t in f.wrappers:
                inner = node.named_children
                if not inner:
                    return "?"
                node = inner[0]
                continue
            if t in f.identifiers:
                parts.append(self.text(node))
                break
            member = f.member_form(t)
            if member:
                name, node = self.member_parts(node, member)
                if name is None or node is None:
                    return "?"
                parts.append(self.text(name))
                continue
            if t in f.this:
                parts.append("this")
                break
            if t in f.base:
                parts.append("base")
                break
            if f.method_call and t == f.method_call[0]:
                name = node.child_by_field_name(f.method_call[2])
                if name is None:
                    return "?"
                parts.append(self.text(name) + "()")
                node = node.child_by_field_name(f.method_call[1])
                if node is None:
                    break
                continue
            if f.cast and t == f.cast[0]:
                made = self.dotted(node.child_by_field_name(f.cast[1]))
                if not made:
                    return "?"
                parts.append("=" + made.replace(".", ":"))
                break
            if f.new and t == f.new[0]:
                made = self.dotted(node.child_by_field_name(f.new[1]))
                if not made:
                    return "?"
                parts.append("=" + made.replace(".", ":"))
                break
            if t == f.call[0]:
                callee = node.child_by_field_name(f.call[1])
                if callee is None:
                    return "?"
                if callee.type in f.identifiers:
                    name = self.text(callee)
                    if name == f.new_call and f.new_call:
                        args = node.child_by_field_name("arguments")
                        made = self.dotted(args.named_children[0]) \
                            if args is not None and args.named_children else None
                        if not made:
                            return "?"
                        parts.append("=" + made.replace(".", ":"))
                        break
                    parts.append("base" if name == f.base_call else name + "()")
                    break
                member = f.member_form(callee.type)
                if not member:
                    return "?"
                name, node = self.member_parts(callee, member)
                if name is None or node is None:
                    return "?"
                parts.append(self.text(name) + "()")
                continue
            return "?"
        else:
            return "?"
        parts.reverse()
        head = parts[0]
        if head in f.self_words:
            parts[0] = "this"
        elif head not in ("this", "base") and head[0] != "=" and not head.endswith("()"):
            declared = None
            for key in self.scope_of(start, chunk):
                declared = self.scopes.get(key, {}).get(head)
                if declared is not None:
                    break
            if declared is not None:
                if declared == "?":
                    return "?"
                parts[0] = declared
        joined = ".".join(parts)
        return joined if joined.count(".") <= MAX_CHAIN else "?"

    def dotted(self, node):
        """`a.b.C` for a name or a chain of names (at most MAX_CHAIN), else None."""
        f, parts = self.forms, []
        while node is not None and len(parts) <= MAX_CHAIN:
            if node.type in f.identifiers or node.type in f.type_names:
                parts.append(self.text(node))
                return ".".join(reversed(parts))
            if node.type in f.generic:
                node = node.named_children[0] if node.named_children else None
                continue
            member = f.member_form(node.type)
            name, node = self.member_parts(node, member)
            if name is None:
                return None
            parts.append(self.text(name))
        return None

    @staticmethod
    def member_parts(node, member):
        """(name, object) of `a.b` by member's fields; a form with no fields (Java's
        scoped_type_identifier) is its first and last named children."""
        if not member:
            return None, None
        if member[1] is None:
            kids = node.named_children
            return (kids[-1], kids[0]) if len(kids) >= 2 else (None, None)
        return node.child_by_field_name(member[2]), node.child_by_field_name(member[1])

    def form_of(self, caps, role, chunk):
        """What a local or field holds, as a qualifier: "=T" for a declared type, the form
        of the value it was given when that is a call's result or a construction, else "?"
        (a local of unknown type hides any other meaning of its name)."""
        node = caps[f"{role}.type"][0] if f"{role}.type" in caps else None
        if node is not None and not (self.forms.inferred and self.text(node) in
                                     self.forms.inferred):   # `var x = f()`: f's result
            declared = self.type_of(node)
            return "=" + declared.replace(".", ":") if declared else "?"
        if f"{role}.value" in caps:
            form = self.qualifier(caps[f"{role}.value"][0], chunk)
            return form if form != "base" else "?"
        return "?"

    def type_of(self, node):
        """The type a `type` node names, dotted (`a.Foo`, `List[Foo]`: List), or None; an
        array of the language's (`Foo[]`, `Array<Foo>`) is `Foo[]`."""
        element = self.array_element(node)
        if element is not None:
            named = self.type_of(element)
            return named and named + "[]"
        stack = [node]
        while stack:                  # the first name, depth first
            n = stack.pop()
            dotted = self.dotted(n)
            if dotted:
                return dotted
            if len(stack) < 64:
                stack.extend(reversed(n.named_children[:8]))
        return None

    def array_element(self, node):
        """The element type node of an array type (through the one child of a wrapper, `:
        T[]`, `readonly T[]`), or None; a few nodes deep at most."""
        f = self.forms
        for _ in range(4):
            if node is None or not f.arrays:
                return None
            kids = node.named_children
            if node.type in f.arrays:
                return kids[0] if kids else None
            if node.type in f.generic:
                args = node.child_by_field_name("type_arguments")
                name = node.child_by_field_name("name")
                if name is not None and self.text(name) in f.array_generics and \
                        args is not None and len(args.named_children) == 1:
                    return args.named_children[0]
                return None
            if len(kids) != 1:
                return None
            node = kids[0]
        return None

    def element_form(self, node, chunk):
        """The form of a name bound to each element of a value (`for (x of xs)`, `xs.map(x
        => ...)`): "=T" when the member declares the value an array of T, else the value's
        form and `.[]` (resolved at query time: `this.items.[]`), or None."""
        receiver = self.each.get(node.start_byte)
        if receiver is None:
            return None
        form = self.qualifier(receiver, chunk)
        if form in ("?", "base") or form.count(".") >= MAX_CHAIN:
            return None
        if form.startswith("=") and "." not in form:      # declared here: an array, or not
            return form[:-2] if form.endswith("[]") else None
        return form + ".[]"

    def type_names(self, node):
        """(name node, receiver node or None) of every name inside a type, iteratively."""
        found, stack, f = [], [node], self.forms
        while stack:
            n = stack.pop()
            member = f.member_form(n.type)
            if member:
                name, receiver = self.member_parts(n, member)
                if name is not None:
                    found.append((name, receiver))
                continue
            if n.type in f.identifiers or n.type in f.type_names:
                found.append((n, None))
                continue
            stack.extend(n.named_children)
        return found

    # -- what the file declares
    def class_chains(self, classes):
        """{start byte of a class: (its chain, its outer chain)}, and the type decls, by a
        sweep in file order with a stack of the classes open there."""
        chains, stack = {}, []
        for caps in sorted(classes, key=lambda c: c["class"][0].start_byte):
            node, name = caps["class"][0], self.text(caps["class.name"][0])
            while stack and stack[-1][0] <= node.start_byte:
                stack.pop()
            outer = stack[-1][1] if stack else ""
            if self.in_function(self.chunk_of(node)) and not (
                    stack and stack[-1][1].startswith(LOCAL)):
                outer = LOCAL         # a class of a function's own: seen only there
            chain = f"{outer}.{name}" if outer else name
            chains[node.start_byte] = (chain, outer)
            stack.append((node.end_byte, chain))
            self.decls.append(("type", outer, name, "", caps["class.name"][0].start_point[0] + 1,
                               node.end_point[0] + 1))
        self.open_classes = sorted((node_start, chains[node_start][0])
                                   for node_start in chains)
        return chains

    def class_at(self, node):
        """The chain of the innermost class around node ("" if none): its chunk's class
        chain when it is in one, else the nearest class above it in the tree."""
        chunk = self.chunk_of(node)
        if chunk is not None and self.chunks[chunk].cls:
            return self.chunks[chunk].cls
        n, steps = node.parent, 0
        while n is not None and steps < 64:
            if n.start_byte in self.chains and (n.type in self.forms.class_nodes if
                                                self.forms.class_nodes else
                                                n.type.startswith("class")):
                return self.chains[n.start_byte][0]
            n, steps = n.parent, steps + 1
        return ""

    def locals_of(self, locals_):
        """{chunk: {name: declared type (dotted with ':'), or "?"}}: the names a member
        holds of its own (a parameter, an assignment); a class body's annotated names are
        its fields, a module's assignments of a construction its variables (decls)."""
        scopes, outer, weak = {}, {}, set()
        for caps in locals_:
            if "local.global" in caps:      # global x, nonlocal x: not the member's
                node = caps["local.global"][0]
                outer.setdefault(self.chunk_of(node), set()).add(self.text(node))
                continue
            node = caps.get("local.name", caps.get("local.param"))[0]
            if node.start_byte in self.imported:
                continue                            # `const x = require(...)`: an import
            name, chunk = self.text(node), self.chunk_of(node)
            self.scopes = scopes                    # a value may name an earlier local
            form = self.form_of(caps, "local", chunk)
            element = self.element_form(node, chunk) if form == "?" else None
            form = element or form
            key = self.scope_of(node, chunk)[0]     # the member's, or a scope's inside it
            if "local.param" in caps and not element:   # a parameter of no declared type: what
                weak.add((key, name))               # the member assigns it is its value
                scopes.setdefault(key, {}).setdefault(name, "?")
                continue
            if not self.in_function(chunk):
                if form != "?":         # a class's field, or a module's variable
                    self.decls.append(("field", self.class_at(node), name, form,
                                       node.start_point[0] + 1, None))
                continue
            scope = scopes.setdefault(key, {})
            if (key, name) in weak:
                weak.discard((key, name))
                scope[name] = form
            else:
                scope[name] = form if scope.get(name, form) == form else "?"
        for chunk, names in outer.items():
            for name in names:
                scopes.get(chunk, {}).pop(name, None)
        return scopes

    def read_scopes(self, nodes):
        """The scopes of the file (@scope: Go's func literals, Rust's closures: their
        locals are their own), as (start, end) byte spans sorted by start, each with the
        index of the scope around it: a sweep with a stack of the scopes open there. No
        node's parent is asked for (tree-sitter finds it from the root: a walk up a chain
        thousands deep would be quadratic)."""
        spans = sorted({(n.start_byte, n.end_byte) for n in nodes})
        self.scope_starts = [a for a, _ in spans]
        self.scope_spans, self.scope_parent, stack = spans, [], []
        for i, (start, end) in enumerate(spans):
            while stack and spans[stack[-1]][1] <= start:
                stack.pop()
            self.scope_parent.append(stack[-1] if stack else None)
            stack.append(i)

    def scope_of(self, node, chunk):
        """The keys of the scopes node is in, innermost first: (chunk, start byte) of each
        scope around it (at most MAX_UP), then chunk."""
        if not self.scope_spans:
            return [chunk]
        at = node.start_byte
        i = bisect.bisect_right(self.scope_starts, at) - 1
        keys, steps = [], 0
        while i is not None and i >= 0 and steps < MAX_UP:
            start, end = self.scope_spans[i]
            if start < at < end or start == at and node.end_byte < end:
                keys.append((chunk, start))
            i, steps = self.scope_parent[i], steps + 1
        return keys + [chunk]

    def read_returns(self, returns):
        """A decl "returns" for each function member whose every return statement gives
        `this` (a fluent method of JavaScript's, which declares no return type). returns:
        {chunk: [returns of anything, returns of `this`]}, each return counted once in each
        pattern that matched it."""
        for chunk, (any_, this) in returns.items():
            if this and any_ == this and self.in_function(chunk):
                c = self.chunks[chunk]
                self.decls.append(("returns", c.cls, c.member, "this", c.start_line, None))

    def read_fields(self, fields):
        f = self.forms
        for caps in fields:
            if "field.self" in caps and self.text(caps["field.self"][0]) not in f.self_words \
                    and caps["field.self"][0].type not in f.this:
                continue
            node = caps["field.name"][0]
            form = self.form_of(caps, "field", self.chunk_of(node))
            if form != "?":
                self.decls.append(("field", self.class_at(node), self.text(node), form,
                                   node.start_point[0] + 1, None))

    def read_bases(self, bases):
        for caps in bases:
            node = caps["base.name"][0]
            klass, steps = node.parent, 0       # the class: a few nodes up (its bases' list)
            while klass is not None and klass.start_byte not in self.chains and steps < 6:
                klass, steps = klass.parent, steps + 1
            if klass is None or klass.start_byte not in self.chains:
                continue
            dotted = self.dotted(node)
            if dotted:
                self.decls.append(("base", self.chains[klass.start_byte][0], dotted, "",
                                   node.start_point[0] + 1, None))

    def read_imports(self, imports):
        for caps in imports:
            line = next(iter(caps.values()))[0].start_point[0] + 1
            if "import.require" in caps and self.text(caps["import.require"][0]) != "require":
                continue
            if "export.module" in caps and self.text(caps["export.module"][0]) != "module":
                continue
            if "export.default" in caps:            # export default Foo, module.exports = Foo
                self.decls.append(("import", "", "default",
                                   ":" + self.text(caps["export.default"][0]), line, None))
                continue
            if "import.default" in caps:
                self.decls.append(("import", "", self.text(caps["import.default"][0]),
                                   self.text(caps["import.from"][0]) + ":default", line, None))
                continue
            for node in [*caps.get("import.alias", ()), *caps.get("import.name", ())]:
                self.imported.add(node.start_byte)
            alias = self.text(caps["import.alias"][0]) if "import.alias" in caps else None
            if "import.module" in caps:
                module = self.text(caps["import.module"][0])
                if alias:
                    self.decls.append(("import", "", alias, module, line, None))
                elif self.forms.head_import:
                    head = module.split(".")[0]
                    self.decls.append(("import", "", head, head, line, None))
                continue
            source = self.text(caps["import.from"][0]).strip("'\"") \
                if "import.from" in caps else ""
            if "import.star" in caps:
                self.decls.append(("import", "", "*", source, line, None))
            elif "import.name" in caps:
                name = self.text(caps["import.name"][0])
                self.decls.append(("import", "", alias or name.rpartition(".")[2],
                                   f"{source}:{name}", line, None))
            elif alias:                     # the whole module under a name
                self.decls.append(("import", "", alias, source, line, None))
