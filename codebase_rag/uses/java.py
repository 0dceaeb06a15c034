"""Java's uses: the query file's (uses/queries/java.scm, read by uses/syntax.py), and what
the tree's top says that a query reads badly: the package (every type's namespace, and a
`package` decl that gives the file's members theirs), the imports (a type `import a.b.C`,
a package `import a.b.*`, a class's statics `import static a.b.C.m` and `.*`), and the
explicit constructor calls `super(...)` and `this(...)` (named after the type they build).
Linear: the top's children once, and each place the text writes `super(` or `this(` a
bounded walk down to it and up to its class.
"""
import re

from . import Use, owners
from . import syntax

CLASSES = ("class_declaration", "enum_declaration", "record_declaration")
MAX_UP = 64                   # a constructor call's class is at most so many nodes up
CALL_TEXT = (re.compile(rb"super\s*\("), re.compile(rb"this\s*\("))  # where one may stand
MAX_CANDIDATES = 1000         # more of those in a file: one query finds the calls instead


def extract(text, chunks, language):
    uses, decls = syntax.extract(text, chunks, language)
    tree, data = chunks.parsed
    root = tree.root_node

    def text_of(node):
        return data[node.start_byte:node.end_byte].decode("utf-8", "replace")

    package, heads = "", []
    for node in root.named_children:
        if node.type == "package_declaration":
            named = [c for c in node.named_children if c.type != "annotation"]
            package = text_of(named[-1]) if named else ""
        elif node.type == "import_declaration":
            heads.append(node)
    out = [("type", d[1], d[2], package, d[4], d[5]) if d[0] == "type" else d for d in decls]
    if package:
        out.append(("package", "", "", package, 1, None))
    for node in heads:
        names = [c for c in node.named_children if c.type in ("identifier", "scoped_identifier")]
        if not names:
            continue
        dotted = "".join(text_of(names[0]).split())
        star = any(c.type == "asterisk" for c in node.named_children)
        static = any(c.type == "static" for c in node.children)
        line = node.start_point[0] + 1
        if static:                # the class whose statics are seen: a.b.C of a.b.C.m
            out.append(("static", "", "", dotted if star else dotted.rpartition(".")[0],
                        line, None))
        elif star:
            out.append(("using", "", "", dotted, line, None))
        else:
            out.append(("using", "", dotted.rpartition(".")[2], dotted, line, None))
    return uses + constructor_calls(tree, data, chunks, text, text_of), out


def constructor_calls(tree, data, chunks, text, text_of):
    """`super(...)`: a call of the base's constructor (named after the base, on "base");
    `this(...)`: of the type's own (named after it, on "this")."""
    found, owner = [], None
    for node, klass in explicit_calls(tree, data):
        if klass is None or klass.type not in CLASSES:
            continue
        if node.type == "this":
            name = klass.child_by_field_name("name")
            qualifier = "this"
        else:
            base = klass.child_by_field_name("superclass")
            name = base.named_children[0] if base is not None and base.named_children else None
            for _ in range(MAX_UP):
                if name is None or name.type == "type_identifier" or not name.named_children:
                    break
                name = name.named_children[0] if name.type == "generic_type" else \
                    name.named_children[-1]
            qualifier = "base"
        if name is None:
            continue
        if owner is None:
            owner = owners(chunks, text.count("\n") + 1)
        line = node.start_point[0] + 1
        found.append(Use(owner[line] if line < len(owner) else None, str(line),
                         text_of(name), "call", qualifier))
    return found


def explicit_calls(tree, data):
    """(the `super` or `this` of each explicit constructor call, the class around it or
    None), in the text's order: from where the text writes `super(` or `this(` (a query
    over the whole tree for these alone cost 15% of Java's extraction; where the text
    writes more than MAX_CANDIDATES of them, the query says where), each a walk down of at
    most MAX_DEPTH nodes and up of at most MAX_UP."""
    starts = sorted(m.start() for pattern in CALL_TEXT for m in pattern.finditer(data))
    if len(starts) > MAX_CANDIDATES:
        starts = [caps["ctor"][0].start_byte
                  for _, caps in syntax.matches(_ctor_query(tree.language), tree.root_node)]
    for start in starts:
        cursor = tree.walk()
        while cursor.depth < syntax.MAX_DEPTH and \
                cursor.goto_first_child_for_byte(start) is not None:
            pass
        node = cursor.node
        if node.start_byte != start or node.type not in ("super", "this") or \
                cursor.field_name != "constructor" or not cursor.goto_parent() or \
                cursor.node.type != "explicit_constructor_invocation":
            continue                              # a string's, a comment's, a name's
        steps = 0
        while cursor.node.type not in CLASSES and steps < MAX_UP and cursor.goto_parent():
            steps += 1
        yield node, cursor.node


_queries = {}


def _ctor_query(language):
    import tree_sitter
    found = _queries.get(id(language))
    if found is None:
        found = _queries[id(language)] = (language, tree_sitter.Query(
            language, "(explicit_constructor_invocation constructor: [(super) (this)] @ctor)"))
    return found[1]
