"""Crates: which file a Rust module path names (`crate::a::b`, `super::c`, `self::d`, their
parts joined by dots as uses/rust.py writes them), from
the file that uses it. A crate's root is the nearest folder above the file with a lib.rs or
main.rs; module `a` of a module whose folder is D is D/a.rs or D/a/mod.rs. A path that
starts with another crate's name (std, a dependency) is no file of the tree: None.
"""
import posixpath

ROOTS = ("lib.rs", "main.rs")
MAX_PARTS = 16


def module_folder(file):
    """The folder a module file's own submodules live in."""
    folder, base = posixpath.split(file)
    if base in ROOTS or base == "mod.rs":
        return folder
    return posixpath.join(folder, base[:-3]) if base.endswith(".rs") else folder


def crate_root(file, files):
    folder = posixpath.dirname(file)
    for _ in range(MAX_PARTS):
        for name in ROOTS:
            root = posixpath.join(folder, name) if folder else name
            if root in files:
                return root
        if not folder:
            return None
        folder = posixpath.dirname(folder)
    return None


def parent_module(file, files):
    """The file of the module that declares file's module, or None."""
    folder = posixpath.dirname(file)
    if posixpath.basename(file) in ROOTS:
        return None
    if posixpath.basename(file) == "mod.rs":
        folder = posixpath.dirname(folder)
    for name in ROOTS + ("mod.rs",):
        candidate = posixpath.join(folder, name) if folder else name
        if candidate in files:
            return candidate
    candidate = folder + ".rs"
    return candidate if candidate in files else None


def child_module(file, name, files):
    folder = module_folder(file)
    for candidate in (f"{folder}/{name}.rs" if folder else f"{name}.rs",
                      f"{folder}/{name}/mod.rs" if folder else f"{name}/mod.rs"):
        if candidate in files:
            return candidate
    return None


def module_file(files, path, importer):
    """The file of module path (parts joined by dots) as importer reads it, or None."""
    parts = [p for p in path.split(".") if p][:MAX_PARTS]
    if not parts:
        return None
    head, rest = parts[0], parts[1:]
    if head == "crate":
        here = crate_root(importer, files)
    elif head == "self":
        here = importer
    elif head == "super":
        here = parent_module(importer, files)
    else:                             # a child of this module (2018's uniform paths), else
        here = child_module(importer, head, files)          # another crate's
    while rest and rest[0] == "super" and here is not None:
        here, rest = parent_module(here, files), rest[1:]
    for part in rest:
        if here is None:
            return None
        here = child_module(here, part, files)
    return here
