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
from .scoping import scoping
from .syntax import MAX_CHAIN, Forms, _Reader

# the bounds of syntax.matches for C and C++ (their 545 files of cJSON, lua, yaml-cpp and
# spdlog give the same matches with and without them)
MATCH_LIMIT = 512
MAX_DEPTH = 1000

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
    tree, data = chunks.parsed
    query = syntax.query(FORMS[language], tree.language)
    reader = _CReader(data, chunks, FORMS[language], text.count("\n") + 1)
    uses, decls = reader.read(
        syntax.matches(query, tree.root_node, MATCH_LIMIT, MAX_DEPTH),
        scoping(language))
    return uses, decls + (macro_lines(text) if scoping(language).namespace_macros else [])


def compiled_by_default(directive, branch):
    """Whether branch (a child of an #if's or #ifdef's block, or of its #else) is compiled
    when no macro is defined: `#ifdef X` no, its #else yes; `#ifndef X`, `#if !defined(X)`
    yes; None when the condition says more (`#if X > 2`)."""
    alternative = directive.child_by_field_name("alternative")
    in_else = alternative is not None and branch.start_byte >= alternative.start_byte
    kind = directive.child(0).type if directive.child_count else ""
    if kind in ("#ifdef", "#ifndef"):
        return in_else == (kind == "#ifdef")
    condition = directive.child_by_field_name("condition")
    if condition is not None and condition.type == "preproc_defined":
        return in_else
    if condition is not None and condition.type == "unary_expression" and \
            condition.child_count == 2 and condition.child(0).type == "!" and \
            condition.child(1).type == "preproc_defined":
        return not in_else
    return None


def macro_lines(text):
    """("macro", "", NAME, "", line, None) of each line that is a macro's name alone (capitals,
    digits and _; a `//` comment after it): what may open a namespace (fmt's
    `FMT_BEGIN_NAMESPACE`), which the chunker read as blanks."""
    out = []
    for number, line in enumerate(text.split("\n"), 1):
        word = line.partition("//")[0].strip()
        if word and not word[0].isdigit() and word.replace("_", "").isalnum() and \
                word.upper() == word and any(c.isalpha() for c in word):
            out.append(("macro", "", word, "", number, None))
    return out


def namespace_macro(value):
    """"open:a.b:N" for a macro's text that opens N namespaces (`namespace a {`, `namespace a
    { inline namespace v9 {`: the inline one's name is left out, its names are seen
    without it), "close:N" for one of N `}` alone, else None."""
    words = value.replace("\\\n", " ").replace("{", " { ").replace("}", " } ").split()[:64]
    if words and all(w == "}" for w in words):
        return f"close:{len(words)}"
    names, braces, at = [], 0, 0
    while at < len(words):
        inline = words[at] == "inline"
        at += inline
        if words[at:at + 1] != ["namespace"] or at + 2 >= len(words) or words[at + 2] != "{":
            return None
        if not inline:
            names += [n for n in words[at + 1].split("::") if n]
        braces, at = braces + 1, at + 3
    return f"open:{'.'.join(names)}:{braces}" if braces else None


class _CReader(_Reader):
    """The driver's reader, never asking a node for its parent (tree-sitter finds a parent
    by walking down from the root: a cost in the tree's depth, per question)."""

    def read(self, matches, scope):
        """The driver's run, on the matches this language's own captures are taken from
        (scope: the language's Scoping row, for its pointers, makers and fixtures)."""
        kept, namespaces, usings, spaced, base_classes = [], [], [], set(), []
        self.extra_decls, self.scopes_read, self.aliases = [], {}, []
        self.pointers, self.makers = frozenset(scope.pointers), frozenset(scope.makers)
        self.smart, self.dot_calls, self.branches = {}, set(), {}
        for pattern, caps in matches:
            if "namespace" in caps:
                namespaces.append(caps)
            elif "namespace.internal" in caps:    # `namespace {`: its file's alone
                node = caps["namespace.internal"][0]
                self.extra_decls.append(("internal", "", "", "", node.start_point[0] + 1,
                                         node.end_point[0] + 1))
            elif "preproc.branch" in caps:
                self.branches[caps["preproc.branch"][0].start_byte] = \
                    compiled_by_default(caps["preproc"][0], caps["preproc.branch"][0])
            elif "macro.name" in caps:
                found = namespace_macro(self.text(caps["macro.value"][0]))
                if found:
                    node = caps["macro.name"][0]
                    self.extra_decls.append(("nsmacro", "", self.text(node), found,
                                             node.start_point[0] + 1, None))
            elif "alias" in caps:       # a type (its decl as a class's), its base after
                self.aliases.append(caps)
                kept.append((pattern, {"class": caps["alias"], "class.name": caps["alias.name"]}))
            elif "include.path" in caps:
                node = caps["include.path"][0]
                self.extra_decls.append(("include", "", "", self.text(node).strip('"<>'),
                                         node.start_point[0] + 1, None))
            elif "using.namespace" in caps:
                node = caps["using.namespace"][0]
                spaced.add(node.start_byte)
                self.extra_decls.append(("using", "", "", ".".join(self.scope_names(node)),
                                         node.start_point[0] + 1, None))
            elif "using.name" in caps:
                usings.append(caps["using.name"][0])
            elif "base.class" in caps:
                base_classes.append(caps)
            elif "call.scoped" in caps or "type.scoped" in caps or "new.scoped" in caps:
                kind = next(k for k in caps if k.endswith(".scoped")).partition(".")[0]
                node = caps[f"{kind}.scoped"][0]
                found = self.scoped(node)
                if found is not None and found[1] is None:  # `::f()`: the global namespace's
                    self.scopes_read[node.start_byte, node.end_byte] = "::"
                    found = (found[0], node)
                if found is not None:
                    kept.append((pattern, {f"{kind}.name": [found[0]],
                                           f"{kind}.receiver": [found[1]]}))
            else:
                if "call.op" in caps and self.text(caps["call.op"][0]) == ".":
                    self.dot_calls.add(caps["call.name"][0].start_byte)
                kept.append((pattern, caps))
        for node in usings:             # `using a::B;` (not `using namespace a::b;`)
            names = self.scope_names(node)
            if node.start_byte not in spaced and len(names) > 1:
                self.extra_decls.append(("using", "", names[-1], ".".join(names),
                                         node.start_point[0] + 1, None))
        self.namespace_spans = self.spans(namespaces)
        self.base_classes = base_classes
        uses, decls = self.run(kept)
        return uses, decls + self.extra_decls + self.fixtures(scope.fixtures)

    def fixtures(self, macros):
        """("fixture", "", "", its class, first line, last line) of each function a fixture
        macro defines (`TEST_F(EmitterTest, Name) {...}`: a method of a class derived from
        EmitterTest, named by the macro's first argument)."""
        out = []
        for c in self.chunks:
            if c.kind == "function" and c.member in macros:
                name = c.signature.partition("(")[2].partition(",")[0].strip().replace("::", ".")
                if name and not name[0].isdigit() and \
                        name.replace(".", "").replace("_", "").isalnum():
                    out.append(("fixture", "", "", name, c.start_line, c.end_line))
        return out

    def add(self, name_node, kind, receiver, drop_unknown=False):
        """The driver's, but a call of a name the member holds (a lambda in a local, a
        function pointer parameter) is a call of that value: of unknown type; and `p.f()`
        on a local smart pointer (`std::shared_ptr<T> p`) is the pointer's own method."""
        if kind == "call" and not receiver and self.text(name_node) in \
                self.scopes.get(self.chunk_of(name_node), {}):
            self.uses.add(self.chunk_of(name_node), name_node.start_point[0] + 1,
                          self.text(name_node), kind, "?")
            return
        if receiver and name_node.start_byte in self.dot_calls and \
                receiver[0].type in self.forms.identifiers:
            chunk = self.chunk_of(name_node)
            own = self.smart.get((chunk, self.text(receiver[0])))
            if own is not None:
                self.uses.add(chunk, name_node.start_point[0] + 1, self.text(name_node), kind,
                              own)
                return
        super().add(name_node, kind, receiver, drop_unknown)

    def scoped(self, node):
        """(name node, scope node) of a scoped name `a::b::f`, `a::f<T>`, `a::B<T>`: the
        name and its innermost scope, at most MAX_CHAIN deep (scope None for `::f`); None
        for no name (an operator). The whole scope's names are kept for qualifier()."""
        outer = []
        for _ in range(MAX_CHAIN + 1):
            name = node.child_by_field_name("name")
            if name is None:
                return None
            if name.type != "qualified_identifier":
                break
            scope = node.child_by_field_name("scope")
            outer += self.scope_names(scope) if scope is not None else []
            node = name
        else:
            return None
        if name.type in ("template_function", "template_type"):
            name = name.child_by_field_name("name")
        scope = node.child_by_field_name("scope")
        if name is None or name.type not in ("identifier", "type_identifier", "field_identifier"):
            return None
        if scope is not None:
            names = outer + self.scope_names(scope)
            self.scopes_read[scope.start_byte, scope.end_byte] = \
                ".".join(names) if names and len(names) <= MAX_CHAIN else "?"
        return name, scope            # scope None: `::f()`, the global one

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
        """A scope (`a::b::` before a name) as its names, read where it was captured, "::"
        for the global one; what a maker makes (`std::make_shared<T>(x)`: "=T"); anything
        else as the driver reads it."""
        if node is None:
            return "?"
        scope = self.scopes_read.get((node.start_byte, node.end_byte))
        if scope is not None:
            return scope
        if node.type == "call_expression":
            made = self.made(node) if self.makers else None
            if made:
                return made
            function = node.child_by_field_name("function")
            if function is not None and function.type == "qualified_identifier":
                names = self.scope_names(function)      # `a::b::f()`: what f returns
                return ".".join(names) + "()" if 1 < len(names) <= MAX_CHAIN else "?"
        return super().qualifier(node, chunk)

    def made(self, call):
        """"=T" of a maker's call (`std::make_unique<a::T>(x)`: "=a:T"), else None."""
        node = self.innermost(call.child_by_field_name("function"))
        if node is None or node.type != "template_function":
            return None
        name = node.child_by_field_name("name")
        if name is None or self.text(name) not in self.makers:
            return None
        made = self.type_of(self.first_argument(node))
        return "=" + made.replace(".", ":") if made else None

    @staticmethod
    def innermost(node):
        """The name a scoped name ends with (`a::b::T<X>`: `T<X>`), at most MAX_CHAIN deep."""
        for _ in range(MAX_CHAIN):
            if node is None or node.type != "qualified_identifier":
                break
            node = node.child_by_field_name("name")
        return node

    def first_argument(self, node):
        """The type node of a template's first argument (`X<T, U>`: T), else None."""
        args = node.child_by_field_name("arguments")
        first = args.named_children[0] if args is not None and args.named_child_count else None
        return first.child_by_field_name("type") if first is not None and \
            first.type == "type_descriptor" else None

    def pointee(self, node):
        """T of a pointer template's type (`std::shared_ptr<T>`, `unique_ptr<T, D>`), else
        None."""
        node = self.innermost(node)
        if node is None or node.type != "template_type":
            return None
        name = node.child_by_field_name("name")
        return self.first_argument(node) if name is not None and \
            self.text(name) in self.pointers else None

    def type_of(self, node):
        """The driver's, a pointer template read through (`std::unique_ptr<Foo>`: Foo)."""
        if node is None:
            return None
        for _ in range(MAX_CHAIN):
            inner = self.pointee(node)
            if inner is None:
                break
            node = inner
        return super().type_of(node)

    def form_of(self, caps, role, chunk):
        """The driver's; a local smart pointer's own type is kept apart (add())."""
        if role == "local" and "local.type" in caps and "local.name" in caps and \
                self.pointee(caps["local.type"][0]) is not None:
            own = self.dotted(caps["local.type"][0])
            self.smart[chunk, self.text(caps["local.name"][0])] = \
                "=" + own.replace(".", ":") if own else "?"
        return super().form_of(caps, role, chunk)

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
        self.class_spans = []
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
            self.class_spans.append((node.start_byte, node.end_byte, chain))
            stack.append((node.end_byte, chain))
            self.decls.append(("type", outer, name, namespace,
                               caps["class.name"][0].start_point[0] + 1, node.end_point[0] + 1))
        return chains

    def class_at(self, node):
        """The chain of the innermost class around node ("" if none), by a sweep over the
        classes in file order (a class with no function is a chunk whole, whose chain is its
        outer one; the tree is not asked for parents). The questions come in file order; one
        that goes back starts the sweep again."""
        at = node.start_byte
        if not hasattr(self, "sweep") or at < self.sweep[2]:
            self.sweep = [0, [], at]
        spans = self.class_spans
        i, stack, _ = self.sweep
        while i < len(spans) and spans[i][0] <= at:
            while stack and stack[-1][1] <= spans[i][0]:
                stack.pop()
            stack.append(spans[i])
            i += 1
        while stack and stack[-1][1] <= at:
            stack.pop()
        self.sweep = [i, stack, at]
        return stack[-1][2] if stack else ""

    def read_bases(self, bases):
        """The driver's, with the class captured beside its base (no walk up the tree); an
        alias's one base is the type it names (a pointer template read through)."""
        named = {}
        for caps in self.aliases:
            node, target = caps["alias"][0], caps["alias.type"][0]
            if node.start_byte not in self.chains:
                continue
            if target.type in DEFINED:          # `typedef struct foo foo_t;`
                target = target.child_by_field_name("name")
            elif target.type not in ("type_identifier", "qualified_identifier",
                                     "template_type"):
                continue                        # `typedef int n;`, a function pointer's
            dotted = self.type_of(target)
            if dotted:
                named.setdefault(self.chains[node.start_byte][0], []).append(
                    (dotted, node.start_point[0] + 1, self.branches.get(node.start_byte)))
        for chain, targets in named.items():    # two: `#ifdef X using T = A; #else using
            if len({dotted for dotted, _, _ in targets}) > 1:       # T = B;`: the one a
                targets = [t for t in targets if t[2]]      # build that defines nothing takes
            if len({dotted for dotted, _, _ in targets}) == 1:
                self.decls += [("base", chain, dotted, "", line, None)
                               for dotted, line, _ in targets]
        for caps in self.base_classes:
            klass = caps["base.class"][0]
            if klass.start_byte not in self.chains:
                continue
            for node in caps["base.name"]:
                dotted = self.dotted(node)
                if dotted:
                    self.decls.append(("base", self.chains[klass.start_byte][0], dotted, "",
                                       node.start_point[0] + 1, None))
