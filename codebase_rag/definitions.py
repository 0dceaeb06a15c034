"""Definitions: the index as name resolution reads it. A definition is a chunk (a member,
or a type with no member of its own), or a type declared in a file (decls kind "type",
uses/__init__.py), whose members are chunks. Each lookup is cached for the life of one
question (or one MCP call): the database may change between two of those, not within.
"""
import bisect
import posixpath
import re
from dataclasses import dataclass, field

from .uses import crates
from .languages import language_for
from .uses.scoping import MODULE_SUFFIXES, scoping

TYPE_KINDS = frozenset(("class", "struct", "interface", "record", "record struct", "enum",
                        "type", "delegate", "trait", "union", "namespace"))


@dataclass(frozen=True)
class Def:
    """A definition: a chunk of the index, or a type declared in a file (a class whose
    members are its chunks; rowid None)."""
    rowid: object
    file: str
    language: str
    namespace: str
    cls: str
    member: str
    kind: str
    start_line: int
    end_line: int
    signature: str

    @property
    def name(self):
        return ".".join(p for p in (self.cls, self.member) if p) or self.file

    @property
    def is_type(self):
        return self.rowid is None


@dataclass(frozen=True)
class Type:
    """A type as resolution knows it: its name, chain (Outer.Inner), namespace (or "") and
    the files that declare it (a partial class: several)."""
    name: str
    chain: str
    namespace: str
    files: tuple
    language: str
    line: int = 0
    end_line: int = 0

    def as_def(self):
        return Def(None, self.files[0], self.language, self.namespace,
                   self.chain.rpartition(".")[0], self.name, "type", self.line,
                   self.end_line or self.line, "")


DEF_COLUMNS = "rowid, file, language, namespace, class, member, kind, start_line, end_line, " \
              "signature"


@dataclass
class Resolution:
    """What one use denotes (resolve.py): resolved to one member (or the overloads of one
    type), ambiguous, or unresolved: external (a library's) or unknown (a receiver of a
    type the syntax does not give)."""
    status: str               # resolved, ambiguous, external, unknown
    targets: list = field(default_factory=list)   # Defs (resolved, ambiguous)
    types: tuple = ()         # for a construction: the Types constructed


EXTERNAL, UNKNOWN = Resolution("external"), Resolution("unknown")
MAX_DEPTH = 8                 # resolution's bases, imports followed, qualifier chains


def verdict(found):
    """A Resolution from the Defs a use may denote: one, or overloads of one type, is
    resolved; more is ambiguous."""
    found = list(dict.fromkeys(found))
    if not found:
        return EXTERNAL
    owners = {(d.file if d.is_type else d.namespace, d.cls, d.member) for d in found}
    if len(owners) == 1:
        return Resolution("resolved", found)
    return Resolution("ambiguous", found)


@dataclass(frozen=True)
class Ctx:
    """Where a name is read: its file and language, the namespace and type chain around it."""
    file: str
    language: str
    namespace: str
    chain: str
    lines: tuple = (0, 0)     # the member's first and last lines: its local types' scope




class Index:
    """The index as resolution reads it, each lookup cached for the life of one question
    (or of one MCP call): the database may change between two of those, not within."""

    def __init__(self, db):
        self.db = db
        self._named, self._types, self._decls, self._rows = {}, {}, {}, {}
        self._files = None
        self._modules = {}
        self._global_usings, self._usings = None, {}
        self._macro_spans, self._namespace_macros = {}, None
        self._packages = {}

    def defs_named(self, name):
        """The chunks that declare name (not a callback named after the call it is passed
        to, `test("...", () => {...})`: its signature does not say the name)."""
        found = self._named.get(name)
        if found is None:
            found = self._named[name] = [d for d in (self.as_def(r) for r in self.db.execute(
                f"SELECT {DEF_COLUMNS} FROM chunks WHERE member=?", (name,)))
                if name in d.signature or not d.signature]
        return found

    def load(self, rowids):
        """Read these chunks' Defs in one go (def_of then finds them)."""
        rowids = [r for r in set(rowids) if r is not None and r not in self._rows]
        for at in range(0, len(rowids), 500):
            part = rowids[at:at + 500]
            for r in self.db.execute(f"SELECT {DEF_COLUMNS} FROM chunks WHERE rowid IN "
                                     f"({','.join('?' * len(part))})", part):
                self._rows[r[0]] = self.as_def(r)

    def def_of(self, rowid):
        found = self._rows.get(rowid)
        if found is None:
            r = self.db.execute(f"SELECT {DEF_COLUMNS} FROM chunks WHERE rowid=?",
                                (rowid,)).fetchone()
            found = self._rows[rowid] = self.as_def(r) if r else None
        return found

    def as_def(self, row):
        """The Def of a chunk's row; a language whose files say their package (Java's
        `package a.b;`, Go's folder: a `package` decl) has it as the namespace, which its
        chunks do not carry."""
        s = scoping(row[2])             # the columns: rowid, file, language, namespace, ...
        if s.namespace_macros:
            return Def(*row[:3], self.macro_space(row[1], row[7], row[3]), *row[4:])
        if not row[3] and s.package:
            return Def(*row[:3], self.package_of(row[1]), *row[4:])
        return Def(*row)

    def macro_space(self, file, line, namespace):
        """C++: namespace as the code at file:line is in it, inside the namespaces a macro
        written alone on a line opened (fmt's `FMT_BEGIN_NAMESPACE`, `#define`d in another
        header as `namespace fmt { inline namespace v9 {`: the chunker, which reads one file
        at a time, read that line as blanks, and what it holds as outside any namespace)."""
        spans = self._macro_spans.get(file)
        if spans is None:
            spans = self._macro_spans[file] = self.macro_spans(file)
        at = bisect.bisect_right(spans, line, key=lambda s: s[0]) - 1
        prefix = spans[at][1] if at >= 0 else ""
        return ".".join(p for p in (prefix, namespace) if p)

    def macro_spans(self, file):
        """[(line, the namespaces macros opened from there on)] of a file, in line order."""
        lines = sorted((line, name) for kind, _, name, _, line, _ in self.decls(file)
                       if kind == "macro")
        table = self.namespace_macros() if lines else {}
        out, stack = [], []           # [names, braces left open]
        for line, name in lines:
            what = table.get(name)
            if what is None:
                continue
            if what[0] == "open":
                stack.append([what[1], what[2]])
            else:
                left = what[1]
                while left and stack:
                    taken = min(left, stack[-1][1])
                    stack[-1][1] -= taken
                    left -= taken
                    if not stack[-1][1]:
                        stack.pop()
            out.append((line, ".".join(n for names, _ in stack for n in names)))
        return out

    def namespace_macros(self):
        """{macro: ("open", [names], braces) or ("close", braces)} of the tree's macros that
        open or close namespaces; a macro defined two ways (the preprocessor's choice) is
        none."""
        if self._namespace_macros is None:
            found = {}
            for name, target in self.db.execute(
                    "SELECT name, target FROM decls WHERE kind = 'nsmacro'"):
                found.setdefault(name, set()).add(target)
            self._namespace_macros = {}
            for name, targets in found.items():
                if len(targets) == 1:
                    what, *rest = next(iter(targets)).split(":")
                    self._namespace_macros[name] = ("open", [n for n in rest[0].split(".") if n],
                                                    int(rest[1])) if what == "open" else \
                        ("close", int(rest[0]))
        return self._namespace_macros

    def package_of(self, file):
        """The package of a file: Go's folder ("." the tree's root), Java's declared one;
        "" for a language of neither."""
        found = self._packages.get(file)
        if found is None:
            style = scoping(self.language_of(file)).package
            found = self._packages[file] = (posixpath.dirname(file) or ".") \
                if style == "folder" else next((target for kind, _, _, target, _, _ in
                                                self.decls(file) if kind == "package"), "") \
                if style else ""
        return found

    def context(self, use_chunk, file):
        """The Ctx of a use: its member's, or for code outside every member (a field's
        initializer) the innermost type declared around its line."""
        if use_chunk is not None:
            d = self.def_of(use_chunk)
            if d is not None:
                return self.member_context(d)
        return Ctx(file, self.language_of(file), self.package_of(file), "")

    @staticmethod
    def member_context(d):
        """The Ctx of member d's body; a JavaScript function's own `this` is the object
        `new F()` makes (its chain is F, whose members F.prototype.m are)."""
        chain = d.cls or (d.member if d.kind == "function" and
                          scoping(d.language).member_chains else "")
        return Ctx(d.file, d.language, d.namespace, chain, (d.start_line, d.end_line))

    def context_at(self, file, line):
        """Ctx of code outside every member at file:line, from the types declared there."""
        best = None
        for kind, scope, name, target, start, end in self.decls(file):
            if kind == "type" and start <= line <= (end or start) and (
                    best is None or start >= best[3]):
                best = (scope, name, target, start)
        if best is None:
            return Ctx(file, self.language_of(file), self.package_of(file), "")
        language = self.language_of(file)
        if scoping(language).namespace_macros:
            best = best[:2] + (self.macro_space(file, best[3], best[2]), best[3])
        return Ctx(file, self.language_of(file), best[2],
                   ".".join(p for p in (best[0], best[1]) if p))

    def types_named(self, name):
        """[Type] named name, one per identity (a partial class declared in three files is
        one Type with three files)."""
        found = self._types.get(name)
        if found is None:
            groups = {}
            for file, scope, namespace, line, end in self.db.execute(
                    "SELECT file, scope, target, line, end_line FROM decls WHERE kind='type' "
                    "AND name=?", (name,)):
                language = self.language_of(file)
                if not namespace and scoping(language).package == "folder":
                    namespace = self.package_of(file)
                if scoping(language).namespace_macros:
                    namespace = self.macro_space(file, line, namespace)
                chain = ".".join(p for p in (scope, name) if p)
                key = (namespace, chain) if scoping(language).identity == "namespace" else \
                    (file, chain)
                groups.setdefault(key, []).append((file, namespace, language, line, end))
            found = self._types[name] = [
                Type(name, key[1], rows[0][1], tuple(sorted({r[0] for r in rows})), rows[0][2],
                     rows[0][3], rows[0][4]) for key, rows in groups.items()]
        return found

    def decls(self, file):
        found = self._decls.get(file)
        if found is None:
            found = self._decls[file] = self.db.execute(
                "SELECT kind, scope, name, target, line, end_line FROM decls WHERE file=?",
                (file,)).fetchall()
        return found

    def returns_this(self, d):
        """Whether member d returns its receiver, as its body says (decl "returns")."""
        return any(kind == "returns" and scope == d.cls and name == d.member
                   for kind, scope, name, _, _, _ in self.decls(d.file))

    def usings(self, file):
        """[(kind, scope, name, target)] of a file's usings and static usings (C#)."""
        found = self._usings.get(file)
        if found is None:
            found = self._usings[file] = self.db.execute(
                "SELECT kind, scope, name, target FROM decls WHERE file=? AND kind IN "
                "('using', 'static')", (file,)).fetchall()
        return found

    def global_usings(self):
        if self._global_usings is None:
            self._global_usings = frozenset(t for (t,) in self.db.execute(
                "SELECT target FROM decls WHERE name='' AND kind='using' AND scope='global'"))
        return self._global_usings

    def files(self):
        if self._files is None:
            self._files = {p for (p,) in self.db.execute("SELECT path FROM files")}
        return self._files

    def language_of(self, file):
        lang = language_for(file)
        return lang.name if lang else ""

    def type_def(self, t):
        """The Def of type t: its own chunk (a type with no member of its own, a record),
        else its declaration."""
        outer = t.chain.rpartition(".")[0]
        own = [d for d in self.members_of(t, t.name, outer) if d.kind in TYPE_KINDS]
        return own[0] if own else t.as_def()

    def nested_types(self, types, name):
        """The types named name declared inside one of types."""
        return [n for t in types for n in self.types_named(name)
                if n.chain == f"{t.chain}.{name}" and (n.namespace == t.namespace if
                scoping(t.language).identity == "namespace" else set(n.files) & set(t.files))]

    def members_of(self, t, name, chain=None):
        """The chunks named name declared in type t."""
        chain = t.chain if chain is None else chain
        held = scoping(t.language).member_chains
        impl_for = scoping(t.language).impl_for        # Rust: `impl Display for T`
        return [d for d in self.defs_named(name) if (d.cls == chain or held and any(
            d.cls == form.format(chain) for form in held) or impl_for and d.cls.endswith(
            " for " + chain)) and (
            d.namespace == t.namespace if scoping(t.language).identity == "namespace"
            else d.file in t.files)]

    def module_file(self, style, dotted, importer):
        """The file a module name denotes ("pkg.mod", ".mod", "../x" as the language
        writes it), from the file that imports it; None if the index holds none."""
        key = (style, dotted, importer)
        if key in self._modules:
            return self._modules[key]
        found = None
        files = self.files()
        stems, packages = MODULE_SUFFIXES[style]
        if style == "crates":
            found = crates.module_file(files, dotted, importer)
        elif style == "dotted":
            dots = len(dotted) - len(dotted.lstrip("."))
            rest = dotted[dots:].replace(".", "/")
            if dots:
                base = posixpath.dirname(importer)
                for _ in range(dots - 1):
                    base = posixpath.dirname(base)
                paths = [posixpath.join(base, rest) if rest else base]
            else:                             # beside the importer (a script's), at the top
                here = posixpath.dirname(importer)
                paths = [posixpath.join(here, rest) if here else rest, rest]
            for path in paths:
                found = next((path + s for s in stems + packages if path + s in files), None)
                if found:
                    break
            if found is None and not dots:        # a source root below the repository's:
                found = self.by_suffix(rest, stems + packages)          # src/pkg/mod.py
        elif dotted.startswith("."):
            path = posixpath.normpath(posixpath.join(posixpath.dirname(importer), dotted))
            bare = re.sub(r"\.(m|c)?jsx?$", "", path)      # './x.js' names x.ts
            found = next((p for p in [path] + [bare + s for s in stems + packages]
                          if p in files), None)
        else:                     # a package: a folder of the tree named after it (a
            found = self.package_file(dotted, stems, packages)     # monorepo's packages/x)
        self._modules[key] = found
        return found

    def package_file(self, spec, stems, packages):
        """The file of the tree a package name denotes (`zod`, `zod/v4`, `@scope/pkg/sub`):
        its folder's src/ or itself, index or the subpath; None if none or two as near."""
        parts = spec.split("/")
        head = 2 if spec.startswith("@") else 1
        folder, sub = parts[head - 1], "/".join(parts[head:])
        for base in (f"{folder}/src", folder):
            path = f"{base}/{sub}" if sub else base
            found = self.by_suffix(path, stems + packages) if sub else \
                self.by_suffix(path, packages)
            if found:
                return found
        return None

    def submodule(self, file, name):
        """The module name of the package whose __init__ is file (pkg/__init__.py, name:
        pkg/name.py or pkg/name/__init__.py), or None."""
        stems, packages = MODULE_SUFFIXES["dotted"]
        if not any(file.endswith(p) for p in packages):
            return None
        folder = posixpath.dirname(file)
        files = self.files()
        return next((f for f in (f"{folder}/{name}{s}" for s in stems + packages)
                     if f in files), None)

    def by_suffix(self, path, suffixes):
        """The file whose path ends with /path + a suffix nearest the top of the tree
        (src/pkg/mod.py before tests/data/pkg/mod.py); None if none, or two as near."""
        if not hasattr(self, "_suffix_index"):
            self._suffix_index = {}
            for f in self.files():
                parts = f.split("/")
                for i in range(1, len(parts)):
                    self._suffix_index.setdefault("/".join(parts[i:]), []).append(f)
        files = self.files()
        hits = sorted((f.count("/"), f) for s in suffixes
                      for f in self._suffix_index.get(path + s, ())
                      if not any(f[:-len(path + s)] + p.lstrip("/") in files   # a root is
                                 for p in suffixes if p.startswith("/")))     # no package
        return hits[0][1] if hits and (len(hits) == 1 or hits[0][0] < hits[1][0]) else None


def function_types(defs):
    """A function made with `new` is a type (JavaScript's function F, F.prototype.m): the
    Types of these top-level function Defs."""
    return [Type(d.member, d.member, "", (d.file,), d.language, d.start_line, d.end_line)
            for d in defs if d.kind == "function" and not d.cls]
