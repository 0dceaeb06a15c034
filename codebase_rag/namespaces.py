"""Namespaces: the part of resolution a language of namespaces (C#) adds to resolve.py's:
the namespaces a file sees (its own and its parents, its usings, the global usings),
`using X = A.B` aliases, and extension methods (`static M(this T x)` called as `x.M()`).
"""
from .definitions import verdict  # noqa: F401 (resolve.py and extension() read it here)
from .uses.scoping import extended_type


class Namespaces:
    """Resolver's namespace rules (a mixin: self.ix is the Index, self._visible a cache)."""

    def visible_namespaces(self, ctx):
        key = (ctx.file, ctx.namespace)
        if key not in self._visible:
            self._visible[key] = self.namespaces_seen_from(ctx)
        return self._visible[key]

    def namespaces_seen_from(self, ctx):
        visible = {""}
        parts = ctx.namespace.split(".") if ctx.namespace else []
        visible.update(".".join(parts[:n]) for n in range(1, len(parts) + 1))
        for kind, scope, name, target in self.ix.usings(ctx.file):
            if kind == "using" and not name:
                visible.add(target)
        return visible | self.ix.global_usings()

    def aliases(self, file):
        return [(name, target) for kind, _, name, target in self.ix.usings(file)
                if kind == "using" and name]

    def aliased(self, file, alias, namespace, middle):
        return any(name == alias and ".".join([target] + list(middle)) == namespace
                   for name, target in self.aliases(file))

    def extension(self, name, ctx, receiver_names, missing):
        """C#: `x.M()` as a call of a static `M(this T x)` whose class's namespace is in
        scope, where x's type is named T (never on a receiver of unknown type: LINQ's
        `Contains` would become the repository's own)."""
        visible = self.visible_namespaces(ctx)
        found = [d for d in self.ix.defs_named(name)
                 if "(this " in d.signature and (d.namespace in visible or
                                                  d.namespace == ctx.namespace)
                 and extended_type(d.signature) in receiver_names]
        return verdict(found) if found else missing

