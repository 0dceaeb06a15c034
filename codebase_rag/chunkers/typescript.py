"""The TypeScript and JavaScript chunker: tree-sitter's syntax tree, read by the oracle's rules.

tree-sitter (the per-grammar wheels: TypeScript, TSX, JavaScript) parses the file and recovers
from errors; this module walks the module level of that tree the way the TypeScript compiler
oracle does (tests/oracle/ts/ts_oracle.js, rules in its README): it never enters a function
body, so nested functions, hooks' callbacks and local classes can never become chunks.

A chunk is a function (declaration, or an arrow / function expression bound to a name, an
`export default` or an assignment, also when a call wraps it: memo(forwardRef(...))), a class
or object-literal method, constructor, getter or setter, a function-valued class field or
property, a callback passed to a call that is a whole module-level statement, an interface,
type alias or enum, and a class or namespace with no chunk inside it. Classes, namespaces,
object literals and assignments around a chunk are its container chain (`cls`).

The walk keeps its own stack: deep nesting cannot reach Python's recursion limit.
"""
import re

from . import Chunk, ChunkerLimit, Chunks, parsers, spend
from .parsers import MAX_LINE, looks_minified  # noqa: F401 - MAX_LINE: said in its tests

GRAMMAR = {".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
           ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
           ".jsx": "javascript"}
KINDS = frozenset(("function", "method", "constructor", "getter", "setter", "interface", "type",
                   "enum", "class", "namespace"))
MAX_NESTING = 1000        # containers (classes, namespaces, objects) inside each other

RESERVED = frozenset("""break case catch class const continue debugger default delete do else
enum export extends false finally for function if import in instanceof new null return super
switch this throw true try typeof var void while with implements interface let package private
protected public static yield await""".split())   # never a declared name (strict mode, modules)

# A method may be named `if` or `catch`, but in a file with errors such a "method" is a
# statement of a body whose braces an error tore open: not a chunk there.
STATEMENT_WORDS = frozenset("""if else for while do switch case try catch finally with return
throw break continue function var let const""".split())

_FUNCTIONS = frozenset(("arrow_function", "function_expression", "generator_function",
                        "function"))
_CLASSES = frozenset(("class_declaration", "abstract_class_declaration", "class"))
_TRANSPARENT = frozenset(("parenthesized_expression", "as_expression", "satisfies_expression",
                          "type_assertion", "non_null_expression"))
_CALLS = frozenset(("call_expression", "new_expression"))
# Every pattern here costs time linear in its input (tests/test_linear.py): a comment or
# an inline tag left open runs to the end (\Z), so no later opening scans that text again;
# blanks before a marker are those of its own line ([^\S\n]: the blank lines between are
# whitespace the text collapses anyway), and a `*/` is matched from the first `*` of its run
_COMMENT = re.compile(rb"/\*.*?(?:\*/|\Z)|//[^\n]*", re.S)
_DOC_MARKERS = re.compile(r"^[^\S\n]*/\*\*+|(?<!\*)\*+/[^\S\n]*$|^[^\S\n]*\*+ ?", re.M)
_INLINE_TAG = re.compile(r"\{@\w+\s+([^}|\s]+)(?:[|\s]+([^}]*))?(\}|\Z)")


GRAMMAR_WHEEL = {"typescript": "tree_sitter_typescript:language_typescript",
                 "tsx": "tree_sitter_typescript:language_tsx",
                 "javascript": "tree_sitter_javascript"}
_DECLARED = re.compile(r"\A(?:export |default |declare |async )*"
                       r"(?:function\*?|const|let|var|class|interface|type|enum)\s+(\w+)")


def rules(table=None):
    """(kinds, misnamed) for the chunk contract (contract.py): a keyword is a fine property
    name (`promise.catch(...)`, `delete() {}`), never a declared one (`function if`)."""
    def misnamed(c):
        declared = _DECLARED.match(c.signature)
        return c.member in RESERVED and declared is not None and declared.group(1) == c.member
    return KINDS, misnamed


def jsdoc_text(comment):
    """A JSDoc block's description: markers, block @tags and their lines dropped, {@link X} as X,
    whitespace collapsed."""
    body = _DOC_MARKERS.sub("", comment[3:-2] if comment.endswith("*/") else comment[3:])
    kept = []
    for line in body.split("\n"):
        if line.lstrip().startswith("@"):
            break                  # the block tags run to the end of the comment
        kept.append(line)
    text = _INLINE_TAG.sub(_inline_tag, " ".join(kept))
    return " ".join(text.split())


def _inline_tag(m):
    """What an {@link X label} reads as: its label, else X; one left open as written."""
    return (m.group(2) or m.group(1)) if m.group(3) else m.group()


def _unwrap(e):
    """e without parentheses, `as`, `satisfies`, `<T>` casts and `!`."""
    while e is not None and e.type in _TRANSPARENT:
        e = _inner(e)
    return e


def _inner(e):
    """The expression inside a parenthesis, cast or `!`."""
    kids = [c for c in e.named_children if c.type != "comment"]
    if e.type == "type_assertion":
        kids = [c for c in kids if c.type != "type_arguments"]
    return kids[0] if kids else None


def _is_tagged_template(call):
    return call.type == "call_expression" and \
        (call.child_by_field_name("arguments") or call).type == "template_string"


def _callee(call):
    return call.child_by_field_name("function" if call.type == "call_expression" else "constructor")


def _arguments(call):
    args = call.child_by_field_name("arguments")
    return [a for a in args.named_children if a.type != "comment"] if args is not None else []


def function_form(e):
    """(form, function node) when e is a function, or a call that wraps one among its
    arguments, in its callee chain or as an IIFE callee; else None. Iterative, in the
    oracle's order: the call's callee, then its arguments, then the calls up its callee chain."""
    e = _unwrap(e)
    if e is None:
        return None
    if e.type == "arrow_function":
        return "arrow", e
    if e.type in _FUNCTIONS:
        return "function_expression", e
    if e.type not in _CALLS or _is_tagged_template(e):
        return None
    pending = [e]                    # expressions still to look at, the next one last
    while pending:
        c = _unwrap(pending.pop())
        if c is None:
            continue
        if c.type in _FUNCTIONS:     # an argument that is itself a function
            return "wrapped", c
        chain = []
        while c is not None:         # the call and the calls up its callee chain
            if c.type in _CALLS and not _is_tagged_template(c):
                callee = _unwrap(_callee(c))
                if callee is not None and callee.type in _FUNCTIONS:
                    if not chain:
                        return "wrapped", callee
                    chain.append(("iife", callee))
                    break
                chain.append(("args", c))
                c = callee
            elif c.type in ("member_expression", "subscript_expression"):
                c = _unwrap(c.child_by_field_name("object"))
            else:
                break
        # a depth-first order: the first call's arguments before the next call's
        todo = []
        for what, node in chain:
            if what == "iife":
                todo.append(node)
            else:
                todo.extend(a for a in _arguments(node) if _could_wrap(a))
        pending.extend(reversed(todo))
    return None


def _could_wrap(a):
    a = _unwrap(a)
    return a is not None and (a.type in _FUNCTIONS or a.type in _CALLS)


class _Container:
    """A class, namespace, object literal or assignment around the units inside it."""
    __slots__ = ("name", "kind", "doc", "parent", "cls", "owner_doc", "depth")

    def __init__(self, name, kind, doc, parent):
        self.name, self.kind, self.doc, self.parent = name, kind, doc, parent
        outer = parent.cls if parent else ""
        self.cls = outer + "." + name if outer and name else (name or outer)
        self.owner_doc = doc if kind in ("class", "interface", "namespace") else \
            (parent.owner_doc if parent else "")
        self.depth = parent.depth + 1 if parent else 1
        if self.depth > MAX_NESTING:
            raise ChunkerLimit(f"classes, namespaces and objects nested over {MAX_NESTING:,} deep")


class _Chunker:
    def __init__(self, text, grammar):
        self.src = text.encode("utf-8", "replace")
        self.tree = parsers.parse(GRAMMAR_WHEEL[grammar], self.src)
        self.chunks = Chunks()
        self.units = 0             # every oracle unit so far, chunk or container
        self.stack = []
        self.climbs = {}           # call node id -> does its call chain make a whole statement?
        self.links = {}            # node id -> (the sibling before it, its parent): siblings()

    # ------------------------------------------------------------------ names
    def callee_name(self, e):
        """The rightmost name of the outermost call's callee: memo(forwardRef(...)) -> memo."""
        e = _unwrap(e)
        while e is not None and e.type in _CALLS and not _is_tagged_template(e):
            c = _unwrap(_callee(e))
            if c is None:
                return ""
            if c.type == "member_expression":
                return self.text(c.child_by_field_name("property"))
            if c.type == "identifier":
                return self.text(c)
            if c.type in _FUNCTIONS:
                return "(iife)"
            e = c
        return ""

    def declared(self, name_node):
        """A declared name; '' for a reserved word, which only error recovery puts there
        (`interface extends Note {`)."""
        name = self.text(name_node)
        return "" if name in RESERVED else name

    def text(self, node):
        """The source of a node (not node.text: on a tree parsed from a callback it reads the
        whole source again)."""
        return self.src[node.start_byte:node.end_byte].decode("utf-8", "replace") \
            if node is not None else ""

    def string_value(self, node):
        """The contents of a string literal, without its quotes."""
        raw = self.text(node)
        return raw[1:-1] if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"`" else raw

    def prop_name(self, node):
        """A property's name as the oracle gives it: identifiers and strings as they read, a
        computed name as `[expression]`."""
        if node is None:
            return ""
        if node.type in ("string", "template_string"):
            return self.string_value(node)
        if node.type == "computed_property_name":
            kids = [c for c in node.named_children if c.type != "comment"]
            return "[" + (self.text(kids[0]) if kids else "") + "]"
        return self.text(node)

    def entity_name(self, e):
        """`a.b.c` for an assignment's owner made of names and `this`, else None."""
        parts = []
        e = _unwrap(e)
        while e is not None and e.type == "member_expression":
            parts.append(self.text(e.child_by_field_name("property")))
            e = _unwrap(e.child_by_field_name("object"))
        if e is None or e.type not in ("identifier", "this"):
            return None
        parts.append(self.text(e))
        return ".".join(reversed(parts))

    # ------------------------------------------------------------------ spans and docs
    def siblings(self, parent):
        """parent.children, each remembering the one before it and its parent: Node.prev_sibling
        scans the parent's children from the first, quadratic over thousands of them."""
        kids = parent.children
        prev, links = None, self.links
        for k in kids:
            links[k.id] = (prev, parent)
            prev = k
        return kids

    def parent(self, node):
        # Node.parent walks down from the root: quadratic when climbing thousands of calls
        link = self.links.get(node.id)
        return link[1] if link is not None else node.parent

    def prev_sibling(self, node):
        link = self.links.get(node.id)
        return link[0] if link is not None else node.prev_sibling

    def attached_doc(self, outer):
        """(JSDoc start byte, end byte) attached to the declaration starting at `outer`: the
        last JSDoc comment in the trivia before it, with no blank line in between."""
        prev = self.prev_sibling(outer)
        while prev is not None and prev.type == "comment":
            prev = self.prev_sibling(prev)
        parent = self.parent(outer) if prev is None else None
        lo = prev.end_byte if prev is not None else (parent.start_byte if parent else 0)
        hi = outer.start_byte
        if hi - lo < 5 or self.src.find(b"/**", lo, hi) < 0:
            return None
        doc = None
        for m in _COMMENT.finditer(self.src, lo, hi):
            if m.group().startswith(b"/**") and not m.group().startswith(b"/**/") and \
                    m.group().endswith(b"*/"):
                doc = m
        if doc is None:
            return None
        between = self.src[doc.end():hi].split(b"\n")[1:-1]
        if any(not line.strip() for line in between):
            return None
        return doc.start(), doc.end()

    def sig_start(self, node, outer):
        """The first token after the decorators (those children of node or of outer)."""
        for holder in (node, outer):
            kids = holder.children
            last = max((i for i, k in enumerate(kids) if k.type == "decorator"), default=-1)
            if last >= 0:
                after = [k for k in kids[last + 1:] if k.type != "comment"]
                return after[0] if after else kids[last]
        return None

    def emit(self, kind, name, node, outer, container, name_node=None, body=None, end=None,
             wrapper=""):
        """One chunk: `node` is the declaration, `outer` the node its span starts at (the
        export / declare statement or the first decorator), `end` the node it ends with."""
        self.units += 1
        first, prev = outer, self.prev_sibling(outer)    # TS class members: decorators
        while prev is not None and prev.type in ("decorator", "comment"):   # come before
            if prev.type == "decorator":
                first = prev
            prev = self.prev_sibling(prev)
        doc = self.attached_doc(first)
        decl_row = first.start_point[0]
        sig = self.sig_start(node, outer) or outer
        start_row = decl_row
        doc_text, doc_lines = "", ()
        if doc:
            start_row = decl_row - self.src.count(b"\n", doc[0], first.start_byte)
            doc_end_row = decl_row - self.src.count(b"\n", doc[1], first.start_byte)
            doc_lines = (start_row + 1, doc_end_row + 1)
            doc_text = jsdoc_text(self.src[doc[0]:doc[1]].decode("utf-8", "replace"))
        end = end or node
        sig_to = body.start_byte if body is not None else end.end_byte
        signature = " ".join(self.src[sig.start_byte:sig_to].decode("utf-8", "replace").split())
        self.chunks.append(Chunk(
            "", container.cls if container else "", name, kind, start_row + 1,
            end.end_point[0] + 1, (name_node or sig).start_point[0] + 1, signature[:300],
            doc_text, container.owner_doc if container else "", doc_lines, wrapper))

    def doc_of(self, outer):
        doc = self.attached_doc(outer)
        return jsdoc_text(self.src[doc[0]:doc[1]].decode("utf-8", "replace")) if doc else ""

    # ------------------------------------------------------------------ the walk
    def run(self):
        root = self.tree.root_node
        self.stack = [(self.visit, (c, None, "", c)) for c in reversed(self.siblings(root))]
        while self.stack:
            spend()
            step, args = self.stack.pop()
            step(*args)
        self.chunks.sort(key=lambda c: (c.start_line, c.end_line))
        self.chunks.parse_errors = parsers.count_errors(root)
        self.chunks.parsed = (self.tree, self.src)
        return self.chunks

    def later(self, step, *args):
        self.stack.append((step, args))

    def visit_children(self, node, container, binding):
        kids = self.siblings(node)
        for child in reversed(kids):
            self.later(self.visit, child, container, self.pass_binding(node, child, binding), child)

    @staticmethod
    def pass_binding(parent, child, binding):
        """A binding name flows into parentheses, casts, call/new arguments, arrays and the
        branches of ?:, so `export const a = register({ m() {} })` puts m in `a`."""
        t = parent.type
        if t in _TRANSPARENT or t == "array" or t == "arguments":
            return binding
        if t in _CALLS:
            return binding if parent.child_by_field_name("arguments") == child and \
                child.type == "arguments" else ""
        if t == "ternary_expression":
            return "" if parent.child_by_field_name("condition") == child else binding
        return ""

    def visit(self, node, container, binding, outer):
        """The oracle's visit(): `outer` is where the declaration's span starts (an export or
        declare statement around node, or node itself)."""
        t = node.type
        if t == "comment" or not node.is_named:
            return
        if t in ("function_declaration", "generator_function_declaration"):
            name_node = node.child_by_field_name("name")
            body = node.child_by_field_name("body")
            if body is not None:
                self.emit("function", self.declared(name_node) or "default", node, outer, container,
                          name_node, body)
        elif t in _CLASSES:
            self.visit_class(node, outer, container, binding)
        elif t in ("interface_declaration", "type_alias_declaration", "enum_declaration"):
            kind = {"interface_declaration": "interface", "type_alias_declaration": "type",
                    "enum_declaration": "enum"}[t]
            name_node = node.child_by_field_name("name")
            body = node.child_by_field_name("body") if kind != "type" else None
            self.emit(kind, self.declared(name_node), node, outer, container, name_node, body)
        elif t in ("internal_module", "module"):
            self.visit_module(node, outer, container)
        elif t == "ambient_declaration":
            self.visit_ambient(node, outer, container)
        elif t == "export_statement":
            self.visit_export(node, container)
        elif t in ("lexical_declaration", "variable_declaration") and \
                getattr(self.parent(node), "type", "") not in ("for_statement", "for_in_statement"):
            self.visit_variables(node, outer, container)
        elif t == "expression_statement":
            self.visit_expression_statement(node, outer, container)
        elif t == "object":
            self.visit_object(node, container, binding)
        elif t in _FUNCTIONS:
            self.visit_loose_function(node, container)
        elif t == "class_static_block":
            return
        elif t == "ERROR":
            self.visit_error(node, container)
        elif t == "method_definition":       # torn from its class or object by an error
            self.visit_member([node], 0, container)
        else:
            self.visit_children(node, container, binding)

    def visit_error(self, node, container):
        """What tree-sitter could not fit into the grammar: its well-formed children still
        count. A method among them belongs to the `class Name {` just before it, and a named
        function expression standing on its own is a function declaration."""
        inside = container
        kids = self.siblings(node)
        for i, k in enumerate(kids):
            if k.type == "class" and i + 2 < len(kids) and kids[i + 2].type == "{" and \
                    kids[i + 1].type in ("identifier", "type_identifier"):
                inside = _Container(self.declared(kids[i + 1]), "class", "", container)
            elif k.type == "method_definition":
                self.later(self.visit_member, kids, i, inside)
            elif k.type in ("function_expression", "generator_function") and \
                    k.child_by_field_name("name") is not None:
                name = k.child_by_field_name("name")
                self.later(self.emit, "function", self.declared(name), k, k, container, name,
                           k.child_by_field_name("body"))
            else:
                self.later(self.visit, k, container, "", k)

    def visit_export(self, node, container):
        decl = node.child_by_field_name("declaration")
        if decl is not None:
            return self.visit(decl, container, "", node)
        value = node.child_by_field_name("value")
        if value is None:                                  # export = x;  export { a };
            kids = [c for c in node.named_children if c.type not in ("comment", "decorator")]
            if not any(c.type == "=" for c in node.children) or not kids:
                return
            value = kids[-1]
        if value.type in ("function_expression", "generator_function") or value.type == "class":
            # `export default function () {}` and `export default class {}` are declarations
            return self.visit(value, container, "default", node) if value.type == "class" else \
                self.emit("function", self.declared(value.child_by_field_name("name")) or "default",
                          value, node, container, value.child_by_field_name("name"),
                          value.child_by_field_name("body"))
        form = function_form(value)
        if form:
            self.emit("function", "default", node, node, container, None,
                      form[1].child_by_field_name("body"),
                      wrapper=self.callee_name(value) if form[0] == "wrapped" else "")
        else:
            self.visit(value, container, "default", value)

    def visit_ambient(self, node, outer, container):
        kids = [c for c in node.named_children if c.type != "comment"]
        if any(c.type == "global" for c in node.children):       # declare global { ... }
            body = next((c for c in kids if c.type == "statement_block"), None)
            if body is not None:
                self.open_namespace("global", node, outer, container, body)
            return
        for c in kids:
            self.visit(c, container, "", outer)

    def visit_module(self, node, outer, container):
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if body is None:                                   # declare module 'x';
            return
        quoted = name_node is not None and name_node.type == "string"      # declare module "x"
        name = self.string_value(name_node) if quoted else "".join(self.declared(name_node).split())
        self.open_namespace(name, node, outer, container, body, name_node)

    def open_namespace(self, name, node, outer, container, body, name_node=None):
        inside = _Container(name, "namespace", self.doc_of(outer), container)
        self.later(self.close_container, "namespace", name, node, outer, container, name_node,
                   body, self.units)
        for s in reversed(self.siblings(body)):
            self.later(self.visit, s, inside, "", s)

    def close_container(self, kind, name, node, outer, container, name_node, body, before):
        """A class or namespace is a unit; it is a chunk only when no unit lies inside it."""
        if self.units == before:
            self.emit(kind, name, node, outer, container, name_node, body)
        else:
            self.units += 1

    def visit_class(self, node, outer, container, binding):
        name_node = node.child_by_field_name("name")
        name = self.declared(name_node) if name_node is not None else binding
        body = node.child_by_field_name("body")
        inside = _Container(name, "class", self.doc_of(outer), container)
        self.later(self.close_container, "class", name, node, outer, container, name_node, body,
                   self.units)
        if body is None:
            return
        members = self.siblings(body)
        for i in reversed(range(len(members))):
            self.later(self.visit_member, members, i, inside)

    def visit_member(self, members, i, inside):
        m = members[i]
        t = m.type
        if t == "method_definition":
            body = m.child_by_field_name("body")
            if body is None:
                return
            name_node = m.child_by_field_name("name")
            name = self.prop_name(name_node)
            if name in STATEMENT_WORDS and self.tree.root_node.has_error:
                return                   # `if (x) {` of a body torn open, read as a method
            kind = _accessor(m, name_node) or ("constructor" if name == "constructor" and
                                               name_node.type in ("property_identifier", "string")
                                               else "method")
            self.emit(kind, "constructor" if kind == "constructor" else name, m, m, inside,
                      name_node, body)
        elif t in ("public_field_definition", "field_definition"):
            value = m.child_by_field_name("value")
            if value is None:
                return
            name_node = m.child_by_field_name("name") or m.child_by_field_name("property")
            name = self.prop_name(name_node)
            form = function_form(value)
            if form:
                nxt = members[i + 1] if i + 1 < len(members) else None
                end = nxt if nxt is not None and nxt.type == ";" else m
                self.emit("method", name, m, m, inside, name_node,
                          form[1].child_by_field_name("body"), end,
                          self.callee_name(value) if form[0] == "wrapped" else "")
            else:
                self.visit(value, inside, name, value)

    def visit_variables(self, stmt, outer, container):
        decls = [d for d in self.siblings(stmt) if d.type == "variable_declarator"]
        for i, d in enumerate(decls):
            value = d.child_by_field_name("value")
            if value is None:
                continue
            name_node = d.child_by_field_name("name")
            name = self.declared(name_node) if name_node is not None and \
                name_node.type == "identifier" else None
            form = function_form(value) if name is not None else None
            if form:
                wrapper = self.callee_name(value) if form[0] == "wrapped" else ""
                body = form[1].child_by_field_name("body")
                if len(decls) == 1:
                    self.emit("function", name, stmt, outer, container, name_node, body,
                              wrapper=wrapper)
                else:                    # a declarator of many: the first starts at `const`
                    self.emit("function", name, d, outer if i == 0 else d, container,
                              name_node, body, d, wrapper)
            else:
                self.visit(value, container, name or "", value)

    def visit_expression_statement(self, stmt, outer, container):
        kids = [c for c in stmt.named_children if c.type != "comment"]
        e = kids[0] if kids else None
        if e is not None and e.type in ("internal_module", "module"):
            return self.visit_module(e, outer, container)
        if e is not None and e.type in ("function_expression", "generator_function") and \
                e.child_by_field_name("name") is not None:   # a declaration, torn by an error
            return self.emit("function", self.declared(e.child_by_field_name("name")), e, outer,
                             container, e.child_by_field_name("name"),
                             e.child_by_field_name("body"))
        if e is not None and e.type == "assignment_expression":
            lhs = e.child_by_field_name("left")
            rhs = e.child_by_field_name("right")
            name = owner = None
            if lhs.type == "member_expression":
                name = self.text(lhs.child_by_field_name("property"))
                owner = self.entity_name(lhs.child_by_field_name("object"))
            elif lhs.type == "subscript_expression":
                index = lhs.child_by_field_name("index")
                if index is not None and (index.type == "string" or index.type == "template_string"
                                          and not any(c.type == "template_substitution"
                                                      for c in index.children)):
                    name = self.string_value(index)
                    owner = self.entity_name(lhs.child_by_field_name("object"))
            elif lhs.type == "identifier":
                name = self.text(lhs)
            if name is not None and rhs is not None:
                form = function_form(rhs)
                if form:
                    inside = _Container(owner, "assignment", "", container) if owner else container
                    self.emit("function", name, stmt, outer, inside, None,
                              form[1].child_by_field_name("body"),
                              wrapper=self.callee_name(rhs) if form[0] == "wrapped" else "")
                else:
                    self.visit(rhs, container, owner + "." + name if owner else name, rhs)
                return
        self.visit_children(stmt, container, "")

    def visit_object(self, node, container, binding):
        inside = _Container(binding or "", "object", "", container)
        for p in reversed(self.siblings(node)):
            if p.is_named:
                self.later(self.visit_property, p, inside)

    def visit_property(self, p, inside):
        t = p.type
        if t == "method_definition":
            body = p.child_by_field_name("body")
            name_node = p.child_by_field_name("name")
            if body is not None and not (self.prop_name(name_node) in STATEMENT_WORDS and
                                         self.tree.root_node.has_error):
                self.emit(_accessor(p, name_node) or "method", self.prop_name(name_node), p, p,
                          inside, name_node, body)
        elif t == "pair":
            key, value = p.child_by_field_name("key"), p.child_by_field_name("value")
            if value is None:
                return
            form = function_form(value)
            if form:
                self.emit("method", self.prop_name(key), p, p, inside, key,
                          form[1].child_by_field_name("body"),
                          wrapper=self.callee_name(value) if form[0] == "wrapped" else "")
            else:
                self.visit(value, inside, self.prop_name(key), value)
        elif t == "spread_element":
            for c in p.named_children:
                self.visit(c, inside, "", c)

    def visit_loose_function(self, fn, container):
        """A function bound to no name is a unit (a callback) only when it is an argument of
        a call that is a whole statement, directly or through a call chain; it is named after
        the innermost call's callee ('' for an IIFE)."""
        x, call = fn, None
        while call is None:
            x = self.step_up(x)
            if x is None:
                return
            if x.type in _CALLS:
                call = x
        if not self.reaches_statement(call):
            return
        callee = _unwrap(_callee(call))
        name = ""
        if callee is not None and callee != fn:
            if callee.type == "member_expression":
                name = self.text(callee.child_by_field_name("property"))
            elif callee.type == "identifier":
                name = self.text(callee)
        self.emit("function", name, fn, fn, container, None, fn.child_by_field_name("body"))

    def reaches_statement(self, call):
        """Does the call, climbing through calls, `.` accesses, parentheses, casts, await and
        void, make a whole expression statement? Remembered per node: a long call chain with
        a callback at every link is climbed once."""
        path, x = [], call
        while True:
            known = self.climbs.get(x.id)
            if known is not None:
                break
            path.append(x.id)
            up = self.step_up(x)
            if up is None:
                parent = self.parent(x)
                known = parent is not None and parent.type == "expression_statement"
                break
            x = up
        for i in path:
            self.climbs[i] = known
        return known

    def step_up(self, x):
        """The expression around x that keeps a callback a callback: a parenthesis, cast, await or
        void around it, the call it is an argument or the callee of, the `.` access it is the
        object of; else None."""
        p = self.parent(x)
        if p is None:
            return None
        t = p.type
        if t in ("parenthesized_expression", "as_expression", "non_null_expression",
                 "await_expression"):
            return p
        if t == "unary_expression":
            operator = p.child_by_field_name("operator")
            return p if operator is not None and operator.type == "void" else None
        if t == "arguments":
            call = self.parent(p)
            return call if call is not None and call.type in _CALLS else None
        if t in _CALLS:
            return p if not _is_tagged_template(p) and _callee(p) == x else None
        if t == "member_expression":
            return p if p.child_by_field_name("object") == x else None
        return None


def _accessor(method, name_node):
    """'getter' or 'setter' for `get x()` / `set x(v)`, else None (`get()` is a method)."""
    for c in method.children:
        if c == name_node:
            return None
        if c.type == "get":
            return "getter"
        if c.type == "set":
            return "setter"
    return None


def chunk(text, ext):
    """Split TypeScript or JavaScript source into chunks (see the module doc). ext picks the
    grammar: .ts .mts .cts (TypeScript), .tsx (TSX), .js .mjs .cjs .jsx (JavaScript with JSX).
    Raises ChunkerLimit for a minified or generated file."""
    grammar = GRAMMAR.get(ext.lower())
    if grammar is None:
        raise ValueError(f"not a TypeScript or JavaScript extension: {ext}")
    long_line = looks_minified(text)
    if long_line:
        raise ChunkerLimit(f"looks minified or generated: line {long_line[0]:,} has "
                           f"{long_line[1]:,} characters of code")
    spend(len(text))
    return _Chunker(text, grammar).run()
