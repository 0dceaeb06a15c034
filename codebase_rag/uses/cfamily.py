"""C's and C++'s uses: uses/syntax.py's driver on the tree their chunker made (the macro
blanks of chunkers/tables.py already applied: the tree is the one the chunks come from),
with what these two languages add:

  * a scope is a receiver: `a::b::f()` is f on "a.b" (tree-sitter nests a scope to the
    right, so the query sees `b::f` and the whole scope is read here, at most MAX_CHAIN
    names), `Base<T>::f()` f on "Base";
  * a type's namespace: the namespaces around a class (`namespace a { namespace b {`,
    `namespace a::b {`) are its decl's target, as the chunker writes a member's namespace;
  * `using namespace a::b;` is a using (as C#'s, decls kind "using"), `using a::B;` an alias;
    `#include "x.h"` a decl of kind "include" (target: the path as written);
  * a type named where it is defined is no use of it.

C calls a function by its name alone (c.scm): a call through a field or a pointer is a
function pointer's, never a function of the tree.
"""
from . import syntax
from .syntax import MAX_CHAIN, Forms, _Reader

SCOPES = frozenset(("namespace_identifier", "type_identifier", "template_type", "identifier"))
DEFINED = frozenset(("class_specifier", "struct_specifier", "union_specifier", "enum_specifier"))
TYPE_NAMES = frozenset(("type_identifier", "namespace_identifier"))

C_FAMILY = dict(identifiers=frozenset(("identifier",)),
                member=("field_expression", "argument", "field"),
                call=("call_expression", "function"),
                function_kinds=frozenset(("function", "method")),
                type_names=TYPE_NAMES,
                type_member=("qualified_identifier", "scope", "name"),
                wrappers=frozenset(("parenthesized_expression", "pointer_expression")))
FORMS = {
    "c": Forms("c.scm", **C_FAMILY),
    "cpp": Forms("cpp.scm", new=("new_expression", "type"), this=frozenset(("this",)),
                 **C_FAMILY),
}


def extract(text, chunks, language):
    import tree_sitter
    tree, data = chunks.parsed
    forms = FORMS[language]
    matches = tree_sitter.QueryCursor(syntax.query(forms, tree.language)).matches(
        tree.root_node)
    return _CReader(data, chunks, forms, text.count("\n") + 1).read(matches)


class _CReader(_Reader):
    def read(self, matches):
        """The driver's run, on the matches this language's own captures are taken from."""
        kept, namespaces = [], []
        self.extra_decls = []
        for pattern, caps in matches:
            if "namespace" in caps:
                namespaces.append(caps)
            elif "include.path" in caps:
                node = caps["include.path"][0]
                self.extra_decls.append(("include", "", "", self.text(node).strip('"<>'),
                                         node.start_point[0] + 1, None))
            elif "using.namespace" in caps or "using.name" in caps:
                self.using(caps)
            elif "call.scoped" in caps:
                found = self.scoped(caps["call.scoped"][0])
                if found is not None:
                    kept.append((pattern, {"call.name": [found[0]]} if found[1] is None else
                                 {"call.name": [found[0]], "call.receiver": [found[1]]}))
            elif "type.tree" in caps:
                node = caps["type.tree"][0]
                parent = node.parent
                if parent is not None and parent.type in DEFINED and \
                        parent.child_by_field_name("body") is not None:
                    continue            # the name of the type defined there
                if parent is not None and parent.type == "template_type" and \
                        parent.child_by_field_name("name") == node:
                    node, parent = parent, parent.parent    # `a::B<T>`: B, scoped by a
                if parent is not None and parent.type == "qualified_identifier":
                    if parent.child_by_field_name("name") != node:
                        continue        # a scope: its name is read with the name after it
                    scope = parent.child_by_field_name("scope")    # none: `::Foo`
                    kept.append((pattern, {"type.name": [caps["type.tree"][0]]} if scope is None
                                 else {"type.name": [caps["type.tree"][0]],
                                       "type.receiver": [scope]}))
                    continue
                kept.append((pattern, {"type.name": [caps["type.tree"][0]]}))
            else:
                kept.append((pattern, caps))
        self.namespace_spans = self.spans(namespaces)
        uses, decls = self.run(kept)
        return uses, decls + self.extra_decls

    def scoped(self, node):
        """(name node, scope node) of a scoped callee `a::b::f` or `a::f<T>`: the innermost
        scope, at most MAX_CHAIN deep (None for `::f`); None for no name (an operator)."""
        for _ in range(MAX_CHAIN + 1):
            name = node.child_by_field_name("name")
            if name is None:
                return None
            if name.type != "qualified_identifier":
                break
            node = name
        else:
            return None
        if name.type == "template_function":
            name = name.child_by_field_name("name")
        scope = node.child_by_field_name("scope")
        if name is None or name.type != "identifier":
            return None
        return name, scope            # scope None: `::f()`, the global one

    def using(self, caps):
        if "using.namespace" in caps:
            node = caps["using.namespace"][0]
            self.extra_decls.append(("using", "", "", ".".join(self.scope_names(node)),
                                     node.start_point[0] + 1, None))
            return
        node = caps["using.name"][0]
        if any(c.type == "namespace" for c in node.parent.children):
            return                      # `using namespace a::b;`: its own pattern's
        names = self.scope_names(node)
        if len(names) > 1:
            self.extra_decls.append(("using", "", names[-1], ".".join(names),
                                     node.start_point[0] + 1, None))

    def scope_names(self, node):
        """["a", "b", "C"] of `a::b::C`, `a::b` (nested_namespace_specifier) or a name; at
        most MAX_CHAIN names (template arguments left out)."""
        names, stack = [], [node]
        while stack and len(names) <= MAX_CHAIN:
            n = stack.pop()
            if n.type == "qualified_identifier":
                stack.extend(x for x in (n.child_by_field_name("name"),
                                         n.child_by_field_name("scope")) if x is not None)
            elif n.type == "nested_namespace_specifier":
                stack.extend(reversed(n.named_children[:MAX_CHAIN + 1]))
            elif n.type in ("template_type", "template_function"):
                inner = n.child_by_field_name("name")
                if inner is not None:
                    stack.append(inner)
            elif n.type in SCOPES or n.type in ("field_identifier",):
                names.append(self.text(n))
        return names

    def spans(self, namespaces):
        """[(start byte, end byte, dotted name)] of the named namespaces, in file order."""
        out = []
        for caps in namespaces:
            node = caps["namespace"][0]
            names = self.scope_names(caps["namespace.name"][0])
            if names:
                out.append((node.start_byte, node.end_byte, ".".join(names)))
        return sorted(out)

    # -- a receiver
    def qualifier(self, node, chunk):
        """A scope (`a::b::` before a name) as its names; anything else as the driver
        reads it."""
        parent = node.parent if node is not None else None
        if node is None:
            return "?"
        if parent is not None and parent.type == "qualified_identifier" and \
                parent.child_by_field_name("scope") == node:
            names, outer = self.scope_names(node), parent
            while outer.parent is not None and outer.parent.type == "qualified_identifier" and \
                    outer.parent.child_by_field_name("name") == outer and \
                    len(names) <= MAX_CHAIN:
                outer = outer.parent
                scope = outer.child_by_field_name("scope")
                names = (self.scope_names(scope) if scope is not None else []) + names
            if not names or len(names) > MAX_CHAIN:
                return "?"
            return ".".join(names)
        return super().qualifier(node, chunk)

    def dotted(self, node):
        """`a.b.C` of a name, a scoped name or a template's (`a::B<T>`: a.B), else None."""
        if node is None:
            return None
        if node.type in self.forms.identifiers or node.type in TYPE_NAMES or \
                node.type in ("qualified_identifier", "template_type"):
            names = self.scope_names(node)
            return ".".join(names) if names and len(names) <= MAX_CHAIN else None
        return super().dotted(node)

    # -- what the file declares
    def class_chains(self, classes):
        """The driver's sweep of classes, with each type's namespace (the namespaces around
        it, by a second stack in the same sweep)."""
        chains, stack, spaces, at = {}, [], [], 0
        for caps in sorted(classes, key=lambda c: c["class"][0].start_byte):
            node, name = caps["class"][0], self.text(caps["class.name"][0])
            while at < len(self.namespace_spans) and \
                    self.namespace_spans[at][0] <= node.start_byte:
                start, end, names = self.namespace_spans[at]
                while spaces and spaces[-1][0] <= start:
                    spaces.pop()
                spaces.append((end, f"{spaces[-1][1]}.{names}" if spaces else names))
                at += 1
            while spaces and spaces[-1][0] <= node.start_byte:
                spaces.pop()
            namespace = spaces[-1][1] if spaces else ""
            while stack and stack[-1][0] <= node.start_byte:
                stack.pop()
            outer = stack[-1][1] if stack else ""
            if self.in_function(self.chunk_of(node)) and not (
                    stack and stack[-1][1].startswith(syntax.LOCAL)):
                outer = syntax.LOCAL
            chain = f"{outer}.{name}" if outer else name
            chains[node.start_byte] = (chain, outer)
            stack.append((node.end_byte, chain))
            self.decls.append(("type", outer, name, namespace,
                               caps["class.name"][0].start_point[0] + 1, node.end_point[0] + 1))
        return chains

    def class_at(self, node):
        """The chain of the innermost class around node, from the tree (a class with no
        function is a chunk whole, whose chain is its outer one)."""
        n, steps = node.parent, 0
        while n is not None and steps < 64:
            if n.start_byte in self.chains and n.type in DEFINED:
                return self.chains[n.start_byte][0]
            n, steps = n.parent, steps + 1
        return ""
