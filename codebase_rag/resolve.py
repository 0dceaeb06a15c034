"""Resolve: what one use denotes, at query time, by its language's scoping (uses/scoping.py):
the receiver's type, the enclosing classes and their bases, imports and re-exports, the same
file, namespace or package. Never a silent guess: one member (or one overload set of one
type), ambiguous (several candidates), or unresolved: external (a library's name, a type the
index does not hold) or unknown (a receiver whose type the syntax does not give)."""

from .definitions import (EXTERNAL, MAX_DEPTH, TYPE_KINDS, UNKNOWN, Ctx, Resolution,
                          function_types)
from .linkage import Linkage
from .modules import Modules
from .namespaces import Namespaces, verdict
from .packages import Packages
from .uses import LOCAL
from .uses.scoping import scoping

CALLS = ("call", "new")


class Resolver(Namespaces, Packages, Linkage, Modules):
    def __init__(self, index):
        self.ix = index
        self._resolved = {}       # (name, kind, qualifier, Ctx): its Resolution
        self._bases, self._visible = {}, {}   # Type: bases; (file, ns): namespaces seen

    def resolve(self, name, kind, qualifier, ctx):
        """The Resolution of one use (the same use in the same place: the same answer)."""
        key = (name, kind, qualifier, ctx)
        if key not in self._resolved:
            self._resolved[key] = self.resolve_afresh(name, kind, qualifier, ctx)
        return self._resolved[key]

    def resolve_afresh(self, name, kind, qualifier, ctx):
        s = scoping(ctx.language)
        if s.linkage:                 # C, C++: linkage.py
            return self.linked(name, kind, qualifier, ctx)
        if kind == "new" and not s.modules:
            types = self.type_named(qualifier.split(".") + [name] if qualifier else [name], ctx)
            return self.constructed(types)
        if kind == "new":             # `new X()` where X is any value of a module (a class,
            kind = "call"             # a function, a const): resolved as a call of it
        if qualifier == "?":
            return UNKNOWN
        if qualifier == "":
            return self.unqualified(name, kind, ctx)
        receiver = self.receiver(qualifier, ctx)
        if receiver == "unknown" or receiver == "external":
            return UNKNOWN if receiver == "unknown" else EXTERNAL
        kind_of, value = receiver
        if kind_of in ("named", "array"):     # a type the index lacks (int, a library's),
            return self.extension(name, ctx, set(value), EXTERNAL) if kind == "call" and \
                s.extension_methods else EXTERNAL      # an array: only an extension method
        if kind_of == "module":
            return self.as_resolution(self.module_member(value, name), kind)
        if kind_of == "package":
            return self.as_resolution(self.package_member(value, name), kind)
        found = self.lookup(value, name)
        if found:
            return verdict(found)
        nested = self.ix.nested_types(value, name)
        if nested:
            return self.constructed(nested) if kind == "call" else verdict(
                [self.ix.type_def(t) for t in nested])
        if kind == "call" and s.extension_methods:
            return self.extension(name, ctx, {t.name for t in value}, EXTERNAL)
        return EXTERNAL

    def as_resolution(self, found, kind):
        if found is None:
            return EXTERNAL
        what, value = found
        if what == "module" and kind in CALLS:       # a module called: its default export
            found = self.module_member(value, "default")
            return self.as_resolution(found, kind) if found and found[0] != "module" \
                else EXTERNAL
        if what == "defs":
            return verdict(value)
        if what == "types":
            return self.constructed(value) if kind in CALLS else verdict(
                [self.ix.type_def(t) for t in value])
        if what == "held":            # a variable holding a member: no member itself (as
            back = self.returned(verdict(value), 0)      # the resolvers say), but what
            return Resolution("external", types=tuple(back[1])) if isinstance(back, tuple) \
                and back[0] == "types" else EXTERNAL     # calling it gives is known
        return UNKNOWN if what == "value" else EXTERNAL    # a variable, a module

    def constructed(self, types):
        """What constructing one of types calls: its constructors, else the type itself."""
        if types in ("external", "unknown") or not types:
            return EXTERNAL if types != "unknown" else UNKNOWN
        out = []
        for t in types:
            s = scoping(t.language)
            ctor = t.name if s.constructor == "<type>" else s.constructor
            found = self.lookup([t], ctor) if s.constructor != "<type>" else \
                self.ix.members_of(t, ctor)
            out += found or [self.ix.type_def(t)]
        made = verdict(out)
        made.types = tuple(types)
        return made

    def unqualified(self, name, kind, ctx):
        s = scoping(ctx.language)
        if s.package == "folder":     # Go: the member's own types, the package's names, else
            local = self.local_type(name, ctx)                      # a builtin's
            return self.constructed(local) if local and kind in CALLS else \
                self.as_resolution(self.package_member(ctx.namespace, name), kind)
        if s.modules == "crates" and ctx.namespace:        # inside an inline `mod`: its names
            return EXTERNAL                               # are not read
        if s.members_in_scope and ctx.chain:
            parts = ctx.chain.split(".")
            for n in range(len(parts), 0, -1):          # the innermost type first
                here = self.type_of_chain(".".join(parts[:n]), ctx)
                if here:
                    found = self.lookup(here, name)
                    if found:
                        return verdict(found)
        if s.file_scope or s.modules:
            found = self.module_member(ctx.file, name, lexical=True)
            if found is not None:
                return self.as_resolution(found, kind)
        if s.extension_methods or s.static_imports:       # `using static`
            for kind_, scope, _, target in self.ix.usings(ctx.file):
                if kind_ == "static":
                    types = self.type_named(target.split("."), ctx)
                    if isinstance(types, list):
                        found = self.lookup(types, name)
                        if found:
                            return verdict(found)
        types = self.type_named([name], ctx)
        if isinstance(types, list) and types:
            return self.constructed(types) if kind in CALLS else verdict(
                [self.ix.type_def(t) for t in types])
        return EXTERNAL

    def receiver(self, qualifier, ctx, depth=0):
        """("types", [Type]) or ("module", file) a qualifier denotes, or "external" or
        "unknown". A part `f()` is the value f returns (a construction: its type)."""
        parts = qualifier.split(".")
        if len(parts) > MAX_DEPTH or depth > MAX_DEPTH:
            return "unknown"
        head, rest = parts[0], parts[1:]
        if head in ("this", "base"):
            here = self.type_of_chain(ctx.chain, ctx) if ctx.chain else []
            if not here:
                return "unknown"
            current = ("types", here if head == "this" else
                       [b for t in here for b in self.bases(t)])
            if head == "base" and not current[1]:
                return "external"
        elif head.startswith("="):
            array = head.endswith("[]")           # "=T[]": an array of T (TypeScript's)
            types = self.type_named(head[1:len(head) - 2 * array].split(":"), ctx)
            if types == "external" or array and not types:   # a declared type the index
                current = ("named", [head.split(":")[-1].lstrip("=")])      # lacks: its name
            elif not isinstance(types, list):
                return types
            else:
                current = ("array" if array else "types", types)
        elif head.endswith("()"):
            current = self.returned(self.unqualified(head[:-2], "call", ctx), depth)
        else:
            current = self.first_name(head, ctx, depth)
            if isinstance(current, str) and rest:   # a namespace, then a type: A.B.Type
                for n in range(len(parts), 1, -1):
                    if any(p.endswith("()") for p in parts[:n]):
                        continue
                    types = self.type_named(parts[:n], ctx, quiet=True)
                    if isinstance(types, list) and types:
                        current, rest = ("types", types), parts[n:]
                        break
        for part in rest:
            if isinstance(current, str):
                return current
            current = self.member_value(current, part, ctx, depth)
        return current

    def returned(self, res, depth, receiver=None):
        """What a call (its Resolution) gives back: a construction its type, a function
        or method its declared return type, read from its signature; `this` (TypeScript's)
        is the receiver's own types (a subclass's, where a base declares the method)."""
        if res.types and res.status in ("resolved", "external"):
            return ("types", list(res.types))
        if res.status != "resolved":
            return "unknown" if res.status != "external" else "external"
        found = []
        for d in res.targets:
            declared = (scoping(d.language).returns(d.signature) if not d.is_type else None) \
                or ("this" if d.rowid and self.ix.returns_this(d) else None)  # its body's
            if not declared:
                return "unknown"
            if declared == "this" and receiver:
                found += [t for t in receiver if t not in found]
                continue
            if declared in ("Self", "this") and d.cls:    # the impl's own type (Rust), the
                declared = d.cls.rpartition(" for ")[2]    # object itself (TypeScript)
            types = self.type_named(declared.split("."), Ctx(d.file, d.language, d.namespace,
                                                              d.cls))
            if not isinstance(types, list) or not types:
                return ("named", [declared.rpartition(".")[2]]) if len(res.targets) == 1 \
                    else "external"
            found += [t for t in types if t not in found]
        return ("types", found)

    def first_name(self, head, ctx, depth=0):
        """What the first name of a qualifier denotes: a field of the enclosing types, an
        import, a module's variable, a type."""
        s = scoping(ctx.language)
        if s.package == "folder":
            return self.package_head(head, ctx, depth)
        if s.members_in_scope and ctx.chain:
            parts = ctx.chain.split(".")
            for n in range(len(parts), 0, -1):      # the innermost type first, then outer
                here = self.type_of_chain(".".join(parts[:n]), ctx)     # ones' fields
                typed = self.field_type(here, head, depth) if here else None
                if typed is not None:
                    return typed
        if s.modules:
            found = self.module_member(ctx.file, head, depth, lexical=True)
            if found is not None:
                what, value = found
                if what in ("module", "types"):
                    return (what, value)
                if what == "value":
                    return value
                return "external" if what == "external" else "unknown"  # a function
        types = self.type_named([head], ctx)
        if isinstance(types, list) and types:
            return ("types", types)
        return types if isinstance(types, str) else "external"

    def member_value(self, current, part, ctx, depth=0):
        """The value of `current.part` (`current.part()`: what it returns; `current.[]`:
        each element of an array)."""
        call = part.endswith("()")
        name = part[:-2] if call else part
        kind, value = current
        if part == "[]":
            return ("types", value) if kind == "array" else \
                "external" if kind == "named" else "unknown"
        if kind == "array" and call and name in scoping(ctx.language).array_keeps:
            return current
        if kind in ("named", "array"):
            return "external"
        if kind == "package":
            found = self.package_member(value, name, depth)
            if call:
                return self.returned(self.as_resolution(found, "call"), depth)
            if found is None:
                return "external"
            return found[1] if found[0] == "value" else found if found[0] == "types" \
                else "unknown"
        if kind == "module":
            found = self.module_member(value, name)
            if call:
                return self.returned(self.as_resolution(found, "call"), depth)
            if found is None:
                sub = self.ix.submodule(value, name)
                return ("module", sub) if sub else "external"
            what, v = found
            if what == "value":
                return v
            return (what, v) if what in ("module", "types") else "unknown"
        if call:
            nested = self.ix.nested_types(value, name)
            res = self.constructed(nested) if nested else verdict(self.lookup(value, name))
            return self.returned(res, depth, value)
        typed = self.field_type(value, name, depth)
        if typed is not None:
            return typed
        nested = self.ix.nested_types(value, name)
        if nested:
            return ("types", nested)
        prop = [d for d in self.lookup(value, name) if d.kind in ("property", "getter")]
        return self.returned(verdict(prop), depth, value) if prop else "unknown"

    def field_type(self, types, name, depth=0):
        """("types", [Type]) or "external"/"unknown" for the value of field name of one of
        types (or of their bases), as its declaration gives it; None if none declares it."""
        for t in types:
            for file in t.files:
                for kind, scope, fname, target, line, _ in self.ix.decls(file):
                    if kind == "field" and scope == t.chain and fname == name and target:
                        return self.receiver(target, Ctx(file, t.language, t.namespace,
                                                         t.chain), depth + 1)
        if depth < MAX_DEPTH:
            bases = [b for t in types for b in self.bases(t)]
            if bases:
                return self.field_type(bases, name, depth + 1)
        return None

    def lookup(self, types, name, depth=0):
        """The Defs named name of types, else of their nearest bases that have one."""
        found = [d for t in types for d in self.ix.members_of(t, name)
                 if d.kind not in TYPE_KINDS]       # a nested type: nested_types() has it
        if found or depth >= MAX_DEPTH:
            return found
        bases = [b for t in types for b in self.bases(t)]
        return self.lookup(bases, name, depth + 1) if bases else []

    def bases(self, t):
        if t in self._bases:
            return self._bases[t]
        out = self._bases[t] = []
        for file in t.files:
            for kind, scope, name, target, line, _ in self.ix.decls(file):
                if kind == "base" and scope == t.chain:
                    ctx = Ctx(file, t.language, t.namespace, t.chain)
                    found = self.type_named(name.split("."), ctx, outer_only=True)
                    if isinstance(found, list):
                        out += [b for b in found if b != t]
        return out

    def type_of_chain(self, chain, ctx):
        """The Types of the chain around ctx (its own class, an outer one)."""
        s = scoping(ctx.language)
        for form in s.member_chains:            # Runner.prototype: Runner's
            head, _, tail = form.partition("{}")
            if tail and chain.endswith(tail) and chain.startswith(head):
                chain = chain[len(head):len(chain) - len(tail)]
        if s.impl_for:                          # impl Display for Shop: Shop's
            chain = chain.rpartition(" for ")[2]
        name = chain.rpartition(".")[2]
        found = [t for t in self.ix.types_named(name) if t.chain == chain and (
            t.namespace == ctx.namespace if s.identity == "namespace" else ctx.file in t.files)]
        if not found and s.member_chains and "." not in chain:      # function F, F.prototype
            defs = self.module_member(ctx.file, name, lexical=True)
            found = function_types(defs[1]) if defs and defs[0] == "defs" else []
        return found

    def type_named(self, parts, ctx, quiet=False, outer_only=False):
        """[Type] a type name (as parts: ["A", "B"] for A.B) denotes from ctx, [] or
        "external" if none of the index, "ambiguous" never: several are returned."""
        s = scoping(ctx.language)
        if s.package == "folder":
            return self.package_type(parts, ctx)
        name = parts[-1]
        candidates = self.ix.types_named(name)
        if s.modules:
            local = [t for t in candidates if t.chain == f"{LOCAL}.{name}" and ctx.file in
                     t.files and ctx.lines[0] <= t.line <= ctx.lines[1]]
            if len(parts) == 1 and local:
                return local          # a class declared in the member's own body
            if len(parts) == 1:
                found = self.module_member(ctx.file, name, lexical=True)
                if found and found[0] == "module":       # require("./m"): its default
                    found = self.module_member(found[1], "default")
                if found and found[0] == "types":
                    return found[1]
                if found and found[0] == "defs" and s.member_chains:
                    return function_types(found[1])
                return [t for t in candidates if ctx.file in t.files and
                        t.chain.count(".") == 0] or ("external" if not quiet else [])
            head = self.first_name(parts[0], ctx)
            for part in parts[1:]:
                if isinstance(head, str):
                    return head
                head = self.member_value(head, part, ctx)
            if not isinstance(head, str) and head[0] == "defs" and s.member_chains:
                return function_types(head[1])
            return head[1] if not isinstance(head, str) and head[0] == "types" else "external"
        if not candidates:
            return "external"
        if len(parts) > 1:                          # Outer.Inner, or Namespace.Type
            prefix = ".".join(parts[:-1])
            nested = [t for t in candidates if t.chain.endswith("." + name) and (
                t.chain[:-len(name) - 1] == prefix or
                f"{t.namespace}.{t.chain[:-len(name) - 1]}".endswith("." + prefix))]
            spaced = [t for t in candidates if t.chain == name and (
                t.namespace == prefix or t.namespace.endswith("." + prefix) or
                self.aliased(ctx.file, parts[0], t.namespace, parts[1:-1]))]
            return nested + spaced or ("external" if not quiet else [])
        # nested in the chain around ctx, innermost first
        if ctx.chain and not outer_only:
            chain = ctx.chain.split(".")
            for n in range(len(chain), 0, -1):
                inner = ".".join(chain[:n] + [name])
                found = [t for t in candidates if t.chain == inner and
                         t.namespace == ctx.namespace]
                if found:
                    return found
        elif ctx.chain and outer_only and "." in ctx.chain:
            inner = ctx.chain.rpartition(".")[0] + "." + name
            found = [t for t in candidates if t.chain == inner and t.namespace == ctx.namespace]
            if found:
                return found
        visible = self.visible_namespaces(ctx)
        found = [t for t in candidates if t.chain == name and t.namespace in visible]
        for alias_name, target in self.aliases(ctx.file):
            if alias_name == name:
                *ns, last = target.split(".")
                found += [t for t in self.ix.types_named(last) if t.namespace == ".".join(ns)]
        enclosing = [t for t in found if ctx.namespace == t.namespace or
                     ctx.namespace.startswith(t.namespace + ".")]
        if len(found) > 1 and enclosing:     # the nearest namespace hides the farther ones
            nearest = max(len(t.namespace) for t in enclosing)
            found = [t for t in enclosing if len(t.namespace) == nearest]
        return found or ("external" if not quiet else [])
