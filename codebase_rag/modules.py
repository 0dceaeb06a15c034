"""Modules: the part of resolution that languages of modules add to resolve.py's (Python,
JavaScript, TypeScript, Rust): what a name denotes at the top of a file, its imports and
re-exports followed, and a module's variable that holds a function of a class (`const
stringType = ZodString.create`: calling it gives what that member returns).
"""
from .definitions import MAX_DEPTH, TYPE_KINDS, Ctx
from .uses.scoping import scoping

CALLABLE = ("function", "method")     # a Def's kinds that a variable holding it calls


class Modules:
    """Resolver's module rules (a mixin: self.ix is the Index; receiver() and lookup() are
    resolve.py's)."""

    def module_member(self, file, name, depth=0, seen=None, lexical=False):
        """What name denotes at the top of file: ("defs", [Def]), ("types", [Type]),
        ("module", file) or None; imports and re-exports followed. lexical: as a bare name
        in that file (`exports.f = ...` is no name there), else as what it exports."""
        seen = seen or set()
        if (file, name) in seen or depth > MAX_DEPTH:
            return None
        seen.add((file, name))
        exported = () if lexical else scoping(self.ix.language_of(file)).module_objects
        defs = [d for d in self.ix.defs_named(name) if d.file == file and d.kind not in
                TYPE_KINDS and (not d.cls or d.cls in exported) and not (    # an inline
                    d.namespace and scoping(d.language).modules == "crates")]  # mod's own
        types = [t for t in self.ix.types_named(name) if file in t.files and "." not in t.chain]
        if defs:                  # a value before a type of the same name (TypeScript's
            return ("defs", defs)     # `interface X` beside `const X = ...`)
        if types:
            return ("types", types)
        language = self.ix.language_of(file)
        style = scoping(language).modules
        if not style:
            return None
        for kind, scope, local, target, line, _ in self.ix.decls(file):
            if kind == "field" and not scope and local == name:     # a module's variable
                here = Ctx(file, language, "", "")
                held = self.held_member(target, here, depth)
                return ("held", held) if held else \
                    ("value", self.receiver(target, here, depth + 1))
        stars = []
        for kind, _, local, target, _, _ in self.ix.decls(file):
            if kind != "import":
                continue
            if local == "*":
                stars.append(target)
                continue
            if local != name:
                continue
            module, _, member = target.partition(":")
            where = self.ix.module_file(style, module, file) if module else file
            if where is None:
                return ("external", None)
            if not member:
                return ("module", where)
            found = self.module_member(where, member, depth + 1, seen)
            if found is None and style == "crates":       # use crate::a::b: the module b
                sub = self.ix.module_file(style, f"{module}.{member}", file)
                if sub:
                    return ("module", sub)
            if found is None and style == "dotted":
                sub = self.ix.module_file(style, f"{module}.{member}" if not module.endswith(
                    ".") else module + member, file)
                if sub:
                    return ("module", sub)
            return found or ("external", None)
        for target in stars:
            where = self.ix.module_file(style, target, file)
            if where:
                found = self.module_member(where, name, depth + 1, seen)
                if found and found[0] != "external":
                    return found
        return None

    def held_member(self, target, ctx, depth):
        """The callable members a module variable's value names, `Cls.member` (no call, no
        construction), or []."""
        head, dot, last = target.rpartition(".")
        if not dot or target.startswith("=") or last.endswith("()"):
            return []
        held = self.receiver(head, ctx, depth + 1)
        return [d for d in self.lookup(held[1], last) if d.kind in CALLABLE] \
            if isinstance(held, tuple) and held[0] == "types" else []
