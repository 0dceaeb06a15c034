"""Linkage: how C and C++ find a function, the part of resolution they add to resolve.py's.

A C or C++ file sees functions declared anywhere (through its headers): there is no import
to follow, so a name called alone is, in this order,
  * (C++) a member of the classes around the caller, or of their bases;
  * a function of the caller's own file (a `static` one is seen there alone);
  * a function of another file, not `static` there (a `static inline` of a header is seen
    by whoever includes it), in a namespace the caller sees (its own and those around it,
    `using namespace`), the nearest namespace first;
  * a type constructed (`Foo(x)`);
and a scope `a::b::f()` is a class (its static member, or a base's `Base::f()`) or a
namespace (its functions). Two definitions of a name in two files (two programs' `usage()`,
one per platform's source) are ambiguous, listed and never picked: C has no overloads, and
C++'s overloads are written in one file. A receiver whose type the syntax does not give
(`auto x = f()`, a template's parameter) is unknown, as in every language.
"""
import re
from dataclasses import replace

from .definitions import EXTERNAL, TYPE_KINDS, UNKNOWN, Resolution, verdict
from .uses.scoping import scoping

_STATIC = re.compile(r"\bstatic\b")


class Linkage:
    """Resolver's C and C++ rules (a mixin: self.ix is the Index)."""

    def linked(self, name, kind, qualifier, ctx):
        """The Resolution of a use of C or C++."""
        ctx, blind = self.fixture_ctx(self.spaced_ctx(ctx))
        if qualifier == "?" or blind and qualifier.split(".")[0] == "this":
            return UNKNOWN
        if qualifier == "::":         # `::f()`: the global namespace's alone
            found = self.functions_in(name, ctx, scope="") if kind == "call" else []
            if found:
                return self.one_file(found)
            types = [t for t in self.ix.types_named(name) if t.chain == name and not t.namespace]
            return (self.constructed(types) if kind in ("call", "new") else
                    verdict([self.ix.type_def(t) for t in types])) if types else EXTERNAL
        if kind == "new":
            types = self.type_named(qualifier.split(".") + [name] if qualifier else [name], ctx)
            return self.construct(types, ctx)
        if qualifier == "":
            return self.linked_unqualified(name, kind, ctx, blind)
        head = qualifier.split(".")[0]
        if head in ("this", "base") or head.startswith("=") or head.endswith("()"):
            return self.resolve_receiver(name, kind, qualifier, ctx)
        # a scope or a field: a field of the classes around the caller, then a class
        # (`Type::f`, `ns::Type::f`), then a namespace's functions
        found = self.resolve_receiver(name, kind, qualifier, ctx)
        if found.status in ("resolved", "ambiguous") or kind != "call" or \
                any(p.endswith("()") for p in qualifier.split(".")):
            return found
        spaced = self.functions_in(name, ctx, scope=qualifier)
        return self.one_file(spaced) if spaced else found

    def resolve_receiver(self, name, kind, qualifier, ctx):
        """A member of the type a receiver denotes (resolve.py's rule for a receiver)."""
        receiver = self.scoped_receiver(qualifier, ctx)
        if receiver in ("unknown", "external"):
            return UNKNOWN if receiver == "unknown" else EXTERNAL
        kind_of, value = receiver
        if kind_of != "types":        # a type the index lacks (std::string), a module
            return EXTERNAL
        found = self.lookup(value, name) or self.outside(value, name)
        if found:
            return verdict(found)
        nested = self.ix.nested_types(value, name)
        if nested:
            return self.constructed(nested) if kind == "call" else verdict(
                [self.ix.type_def(t) for t in nested])
        return EXTERNAL

    def scoped_receiver(self, qualifier, ctx):
        """resolve.py's receiver(), but a call after a scope or a field (`ns::make()`,
        `Type::instance()`, `field_.get()`) is resolved as this language finds a call (a
        namespace's function too), and the rest read from what it returns."""
        parts = qualifier.split(".")
        at = next((i for i, p in enumerate(parts) if p.endswith("()")), 0)
        head = parts[0]
        if at == 0 or head in ("this", "base") or head.startswith("="):
            return self.receiver(qualifier, ctx)
        current = self.returned(self.linked(parts[at][:-2], "call", ".".join(parts[:at]), ctx),
                                0)
        for part in parts[at + 1:]:
            if isinstance(current, str):
                break
            current = self.member_value(current, part, ctx)
        return current

    def linked_unqualified(self, name, kind, ctx, blind=False):
        """A name called alone (blind: in the body of a class the index does not hold, a
        fixture a macro made: its own members may be any, so another source file's function
        is never taken for the name)."""
        if ctx.chain:                 # the classes around the caller, the innermost first
            parts = ctx.chain.split(".")
            for n in range(len(parts), 0, -1):
                here = self.type_of_chain(".".join(parts[:n]), ctx)
                if here and name == parts[n - 1] and kind in ("call", "new"):
                    return self.construct(here, ctx)        # `Node(x)` in Node's own code
                if here:
                    found = self.lookup(here, name) or self.outside(here, name)
                    if found:
                        return verdict(found)
        if kind in ("call", "new"):
            found = self.functions_in(name, ctx)
            seen = [d for d in found if d.file == ctx.file or
                    d.file.endswith(scoping(d.language).headers)]
            if blind and found and not seen:
                return UNKNOWN
            if found:
                return self.one_file(seen if blind else found)
        types = self.type_named([name], ctx)
        if isinstance(types, list) and types:
            return self.construct(types, ctx) if kind in ("call", "new") else verdict(
                [self.ix.type_def(t) for t in self.own_types(types, ctx)])
        return EXTERNAL

    def construct(self, types, ctx):
        """What constructing one of types calls (resolve.py's constructed()), a class of the
        caller's own file (own_types()) by its own file's constructors alone."""
        if not isinstance(types, list):
            return self.constructed(types)
        types = self.own_types(types, ctx)
        made = self.constructed(types)
        if any(t.files == (ctx.file,) for t in types) and made.targets:
            own = [d for d in made.targets if d.file == ctx.file]
            own = own or [d for d in map(self.ix.type_def, types) if d.file == ctx.file]
            made = verdict(own or [t.as_def() for t in types])
            made.types = tuple(types)
        return made

    def own_types(self, types, ctx):
        """types, each one that several files define (two tests' `class MockFoo`, one type
        to the index: one namespace, one name) narrowed to the caller's own file's when it
        is one of them: a class a source file defines is that file's."""
        out = []
        for t in types:
            if len(t.files) > 1 and ctx.file in t.files:
                outer = t.chain.rpartition(".")[0]
                line = next(((start, end) for kind, scope, name, _, start, end in
                             self.ix.decls(ctx.file)
                             if kind == "type" and name == t.name and scope == outer), None)
                if line:
                    t = replace(t, files=(ctx.file,), line=line[0], end_line=line[1] or 0)
            out.append(t)
        return out

    def functions_in(self, name, ctx, scope=None):
        """The functions (no class's) named name a caller at ctx sees: its own file's,
        else the others' not static to their file, in the nearest namespace that has
        one (scope: `a.b` as written before `::name`)."""
        defs = [(d, self.space_of(d)) for d in self.ix.defs_named(name)
                if d.kind not in TYPE_KINDS and scoping(d.language).linkage]
        if scope is None:
            seen = self.visible_namespaces(ctx)
            defs = [d for d, space in defs if space is not None and space in seen]
        else:
            seen = [ns for ns in self.visible_namespaces(ctx) if ns]
            defs = [d for d, space in defs if space is not None and (
                space == scope or space.endswith("." + scope) or
                any(f"{ns}.{scope}" == space for ns in seen))]
        own = [d for d in defs if d.file == ctx.file]
        if own:
            return own
        defs = [d for d in defs if (d.file.endswith(scoping(d.language).headers) or
                not _STATIC.search(d.signature.partition("(")[0])) and not self.internal(d)]
        if scope is None and len({d.namespace for d in defs}) > 1:
            near = [d for d in defs if d.namespace and (
                ctx.namespace == d.namespace or ctx.namespace.startswith(d.namespace + "."))]
            if near:
                longest = max(len(d.namespace) for d in near)
                defs = [d for d in near if len(d.namespace) == longest]
        return defs

    def fixture_ctx(self, ctx):
        """ctx of a function a fixture macro defines (`TEST_F(EmitterTest, Name) {...}`, a
        method of a class derived from EmitterTest: uses/cfamily.py's decl "fixture") read
        as the fixture's own method: its members, fields and `this` are the fixture's; and
        whether it is blind: a fixture the index does not hold (one a macro names)."""
        if ctx.chain:
            return ctx, False
        for kind, _, _, target, line, end in self.ix.decls(ctx.file):
            if kind == "fixture" and (line, end) == tuple(ctx.lines):
                types = self.type_named(target.split("."), ctx)
                if isinstance(types, list) and len(types) == 1:
                    return replace(ctx, namespace=types[0].namespace, chain=types[0].chain), \
                        False
                return ctx, True
        return ctx, False

    def spaced_ctx(self, ctx):
        """ctx with the namespaces a method's own name gives (`void ns::Foo::bar() {}`
        outside the namespace's braces: its chunk's class is ns.Foo) moved into its
        namespace, when no type of the whole chain is declared."""
        if "." not in ctx.chain or self.type_of_chain(ctx.chain, ctx):
            return ctx
        parts = ctx.chain.split(".")
        for n in range(1, len(parts)):
            moved = replace(ctx, namespace=".".join(p for p in [ctx.namespace] + parts[:n] if p),
                            chain=".".join(parts[n:]))
            if self.type_of_chain(moved.chain, moved):
                return moved
        return ctx

    def outside(self, types, name):
        """The methods named name of types defined outside their namespaces' braces
        (their chunk's class is ns.Type)."""
        return [d for t in types for d in self.ix.defs_named(name)
                if d.cls.endswith("." + t.chain) and ".".join(
                    p for p in (d.namespace, d.cls) if p) == ".".join(
                    p for p in (t.namespace, t.chain) if p)]

    def space_of(self, d):
        """The namespace of a function (no class's), or None for a method: `void ns::f()`
        written outside the namespace's braces has ns for its chunk's class; it is the
        namespace when no type of that chain is declared."""
        if not d.cls:
            return d.namespace
        chain = d.cls
        if any(t.chain == chain or t.chain.endswith("." + chain) or
               f"{t.namespace}.{t.chain}".endswith("." + chain)
               for t in self.ix.types_named(chain.rpartition(".")[2])):
            return None
        return f"{d.namespace}.{chain}" if d.namespace else chain

    def internal(self, d):
        """Whether d is in an anonymous namespace (`namespace {`): seen in its file alone."""
        return any(kind == "internal" and line <= d.start_line <= end
                   for kind, _, _, _, line, end in self.ix.decls(d.file))

    def one_file(self, defs):
        """Functions of one file (its overloads) are one callee; of several files, none is
        picked: ambiguous; but C++'s functions of one name in one namespace are one overload
        set wherever they are written (`testing::Ne(x)` in one header, `testing::Ne()` in
        another), save in the global namespace, where two sources' definitions of a name
        are two programs' (each test's helper): several sources there stay ambiguous."""
        files = {d.file for d in defs}
        if len(files) > 1:
            headers = scoping(defs[0].language).headers
            one_set = all(scoping(d.language).overloads for d in defs) and \
                len({(d.namespace, d.cls) for d in defs}) == 1 and (
                    defs[0].namespace or sum(not f.endswith(headers) for f in files) <= 1)
            if not one_set:
                return Resolution("ambiguous", list(dict.fromkeys(defs)))
        return verdict(defs)
