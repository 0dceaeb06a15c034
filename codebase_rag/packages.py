"""Packages: the part of resolution Go adds to resolve.py's. A Go package is its folder
(every file there sees the others' top-level names); an import path names a folder of the
tree (the folder its path ends with, or the tree's root when the path's last part is the
root package's name), else it is a library's. No go.mod is read: what the index holds is
all resolution sees, so it is as fresh as the index.
"""
import posixpath

from .definitions import Ctx, TYPE_KINDS
from .uses import LOCAL
from .uses.scoping import scoping


class Packages:
    """Resolver's package rules (a mixin: self.ix is the Index, self._packages a cache)."""

    def package_folders(self):
        found = getattr(self, "_folders", None)
        if found is None:
            found = self._folders = {}
            for f in self.ix.files():
                if scoping(self.ix.language_of(f)).package == "folder":
                    found.setdefault(posixpath.dirname(f) or ".", []).append(f)
        return found

    def package_name(self, folder):
        """The name a folder's package declares (not its external tests' `x_test`)."""
        names = [name for f in self.package_folders().get(folder, ())
                 for kind, _, name, _, _, _ in self.ix.decls(f) if kind == "package"]
        own = [n for n in names if not n.endswith("_test")]
        return (own or names or [""])[0]

    def package_folder(self, path):
        """The folder of the tree an import path names, or None (a library's)."""
        folders = self.package_folders()
        hits = [f for f in folders if f != "." and (path == f or path.endswith("/" + f))]
        if hits:
            return max(hits, key=len)
        parts = path.split("/")
        last = parts[-2] if len(parts) > 1 and parts[-1][:1] == "v" and \
            parts[-1][1:].isdigit() else parts[-1]
        if "." in folders and self.package_name(".") == last.replace("-", "_"):
            return "."
        return None

    def imported_package(self, file, head):
        """The folder the name head imports in file, "external" for a library's package,
        None if head is no import's name there."""
        for kind, _, alias, path, _, _ in self.ix.decls(file):
            if kind != "import" or alias in ("_", "."):
                continue
            if alias and alias != head:
                continue
            folder = self.package_folder(path)
            if alias:
                return folder or "external"
            name = self.package_name(folder) if folder else \
                path.rstrip("/").rpartition("/")[2]
            if name == head:
                return folder or "external"
        return None

    def package_member(self, folder, name, depth=0):
        """What name denotes at the top of a package: ("defs", [Def]), ("types", [Type]),
        ("value", its receiver form's value) for a package variable, or None."""
        defs = [d for d in self.ix.defs_named(name) if not d.cls and d.namespace == folder
                and d.kind not in TYPE_KINDS]
        if defs:
            return ("defs", defs)
        types = [t for t in self.ix.types_named(name) if t.namespace == folder and
                 "." not in t.chain]
        if types:
            return ("types", types)
        for f in self.package_folders().get(folder, ()):
            for kind, scope, fname, target, _, _ in self.ix.decls(f):
                if kind == "field" and not scope and fname == name and target:
                    return ("value", self.receiver(target, Ctx(f, "go", folder, ""), depth + 1))
        return None

    def local_type(self, name, ctx):
        """[Type] of a type declared in the member's own body (`type key string` in a
        test function), which hides the package's of that name."""
        return [t for t in self.ix.types_named(name) if t.chain == f"{LOCAL}.{name}" and
                ctx.file in t.files and ctx.lines[0] <= t.line <= ctx.lines[1]]

    def package_type(self, parts, ctx):
        """[Type] of `T` (the member's own, the package's) or `pkg.T` (an import's), else
        "external"."""
        if len(parts) == 1 and self.local_type(parts[0], ctx):
            return self.local_type(parts[0], ctx)
        if len(parts) == 1:
            found = self.package_member(ctx.namespace, parts[0])
            return found[1] if found and found[0] == "types" else "external"
        if len(parts) == 2:
            folder = self.imported_package(ctx.file, parts[0])
            if folder and folder != "external":
                found = self.package_member(folder, parts[1])
                return found[1] if found and found[0] == "types" else "external"
        return "external"

    def package_head(self, head, ctx, depth=0):
        """What the first name of a qualifier denotes in Go: a package variable, a type,
        an imported package ("package", folder); "external" or "unknown"."""
        found = self.package_member(ctx.namespace, head, depth)
        if found is not None:
            what, value = found
            if what == "types":
                return found
            return value if what == "value" else "unknown"        # a function value
        folder = self.imported_package(ctx.file, head)
        if folder is None or folder == "external":
            return "external"
        return ("package", folder)
