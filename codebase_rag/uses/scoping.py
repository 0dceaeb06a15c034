"""Scoping: how each language finds what a name denotes, the part of resolution that is
data (references.py is the one resolver that reads it). A language with uses (EXTRACTORS
in uses/__init__.py) has a row here; see docs/references.md for what each field changes.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Scoping:
    """How a language finds what a name denotes: the part of resolution that is data."""
    constructor: str          # a constructor's member name: "<type>" (its type's own), or a name
    identity: str             # "namespace": a type is its namespace and chain wherever it is
                              # declared (C#'s partial classes); "file": its file and chain
    modules: str = ""         # how imports name files: "dotted" (pkg.mod, .mod), "paths" ("./x"); "" none (namespaces)
    members_in_scope: bool = False  # an unqualified name finds the enclosing types' members
    file_scope: bool = True   # an unqualified name finds the file's top-level definitions
    extension_methods: bool = False  # `static M(this T x)` is called as `x.M()`


SCOPING = {
    "csharp": Scoping(constructor="<type>", identity="namespace", members_in_scope=True,
                      file_scope=False, extension_methods=True),
    "python": Scoping(constructor="__init__", identity="file", modules="dotted"),
    "typescript": Scoping(constructor="constructor", identity="file", modules="paths"),
    "javascript": Scoping(constructor="constructor", identity="file", modules="paths"),
}
MODULE_SUFFIXES = {
    "dotted": ((".py", ".pyi"), ("/__init__.py", "/__init__.pyi")),
    "paths": ((".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mts", ".mjs", ".cts", ".cjs"),
           ("/index.ts", "/index.tsx", "/index.js", "/index.jsx", "/index.mjs")),
}


def scoping(language):
    """The Scoping of a language (a language with no row resolves as C# does: by types
    and namespaces, which needs no imports)."""
    return SCOPING.get(language) or SCOPING["csharp"]
