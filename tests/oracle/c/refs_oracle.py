#!/usr/bin/env python3
"""The call-edge oracle of C and C++ (issue 47), on clang's own AST through the libclang
wheel: every call and construction of the given files whose callee's name is written at the
call (not one a macro made), and the definition clang binds it to, as JSON Lines:

    {"file", "line", "col", "name", "kind": "call",
     "decl": {"file", "line", "name", "kind": "function"|"class"|"other"} or null}

line and col are those of the callee's name (1-based line, 0-based column). decl is the
callee's definition (its name's line): a function's or method's, wherever it is defined in
the tree (a definition in another file is found by its USR, read from every file's own
parse; a template's instance by its template), for a construction the class constructed;
"other" for what is no function (a function pointer held by a field or a variable); null
where clang binds nothing (a call a template's parameter makes). A decl outside the tree
(the C library, the STL) keeps its absolute path.

    python tests/oracle/c/refs_oracle.py c|cpp --root DIR < files.txt   (paths under DIR)

Each file is parsed as clang_oracle.py parses it (gnu17 or gnu++20, every folder that holds
a header and the folders above it up to the root on the include path).
"""
import importlib.util
import json
import os
import sys

import clang.cindex as ci

# clang_oracle.py beside this file, loaded by its path (no sys.path edit)
_spec = importlib.util.spec_from_file_location(
    "clang_oracle", os.path.join(os.path.dirname(os.path.abspath(__file__)), "clang_oracle.py"))
clang_oracle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(clang_oracle)
HEADERS, resource_dir = clang_oracle.HEADERS, clang_oracle.resource_dir

K = ci.CursorKind
FUNCTIONS = {K.FUNCTION_DECL, K.CXX_METHOD, K.CONSTRUCTOR, K.DESTRUCTOR,
             K.CONVERSION_FUNCTION, K.FUNCTION_TEMPLATE}
CLASSES = {K.STRUCT_DECL, K.CLASS_DECL, K.UNION_DECL, K.CLASS_TEMPLATE,
           K.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION}
REFS = {K.MEMBER_REF_EXPR, K.DECL_REF_EXPR, K.OVERLOADED_DECL_REF, K.TYPE_REF,
        K.TEMPLATE_REF}


def template_of(cursor):
    """The template a function or class is an instance of, or None."""
    try:
        found = ci.conf.lib.clang_getSpecializedCursorTemplate(cursor)
    except Exception:
        return None
    return found if found is not None and not found.kind.is_invalid() else None


class Reader:
    def __init__(self, root):
        self.root = os.path.realpath(root)
        self.defs = {}            # USR -> (file, line, name) of its definition
        self.sites = []           # [site dict, the callee cursor's USR or None]
        self.texts = {}

    def rel(self, name):
        path = os.path.realpath(name)
        return os.path.relpath(path, self.root) if path.startswith(self.root + os.sep) \
            else path

    def spelled(self, loc, name):
        if loc.file is None:
            return False
        path = os.path.realpath(loc.file.name)
        data = self.texts.get(path)
        if data is None:
            data = self.texts[path] = open(path, "rb").read()
        after = data[loc.offset + len(name):loc.offset + len(name) + 1]
        return data[loc.offset:loc.offset + len(name)] == name.encode() and \
            not (after.isalnum() or after == b"_")     # save_and_next(x) made save(x)

    def place(self, cursor, kind):
        loc = cursor.location
        if loc.file is None:
            return None
        return {"file": self.rel(loc.file.name), "line": loc.line,
                "name": cursor.spelling.split("<")[0], "kind": kind}

    def read(self, path, tu):
        real = os.path.realpath(path)
        stack = [c for c in tu.cursor.get_children()
                 if c.location.file is not None and os.path.realpath(c.location.file.name) == real]
        while stack:
            c = stack.pop()
            if c.is_definition() and (c.kind in FUNCTIONS or c.kind in CLASSES):
                usr = c.get_usr()
                if usr and c.location.file is not None:
                    self.defs.setdefault(usr, self.place(c, "function"))
            if c.kind == K.CALL_EXPR:
                self.site(c, real)
            stack.extend(c.get_children())

    def site(self, call, real):
        name = call.spelling
        if not name or name.startswith(("operator", "~")):
            return
        loc, queue = call.location, list(call.get_children())[:3]
        for _ in range(12):               # the callee's name: a reference a few levels down
            if not queue:
                break
            k = queue.pop(0)
            if k.kind in REFS and k.spelling.split("<")[0].split("::")[-1] == name:
                loc = k.location
                break
            queue.extend(list(k.get_children())[:3])
        if loc.file is None or os.path.realpath(loc.file.name) != real or \
                not self.spelled(loc, name):
            return                        # a call a macro made, or a `Foo x(1)` construction
        site = {"file": self.rel(loc.file.name), "line": loc.line, "col": loc.column - 1,
                "name": name, "kind": "call", "decl": None}
        r = call.referenced
        usr = None
        if r is None or r.kind.is_invalid():
            pass
        elif r.kind == K.CONSTRUCTOR:
            cls = r.semantic_parent
            made = cls.get_definition() if cls is not None else None
            made = template_of(made) or made if made is not None else None
            if made is not None:
                site["decl"] = self.place(made, "class")
        elif r.kind in FUNCTIONS:
            d = r.get_definition()
            if d is None:
                t = template_of(r)
                d = t.get_definition() if t is not None else None
            else:
                d = template_of(d) or d
            if d is not None:
                site["decl"] = self.place(d, "function")
            else:
                usr = r.get_usr()
                site["decl"] = self.place(r, "function")     # a declaration: defined elsewhere
        else:
            site["decl"] = self.place(r, "other")
        self.sites.append((site, usr))

    def emit(self):
        for site, usr in self.sites:
            if usr and usr in self.defs:
                site["decl"] = self.defs[usr]
            print(json.dumps(site))


def main():
    lang = sys.argv[1]
    root = sys.argv[sys.argv.index("--root") + 1]
    paths = [os.path.join(root, line.strip()) for line in sys.stdin if line.strip()]
    dirs = {os.path.dirname(os.path.abspath(p)) for p in paths if p.endswith(HEADERS)}
    top = os.path.abspath(root)
    for d in list(dirs):
        while d.startswith(top) and d != top:
            d = os.path.dirname(d)
            dirs.add(d)
    args = (["-x", "c", "-std=gnu17"] if lang == "c" else ["-x", "c++", "-std=gnu++20"]) + \
        ["-ferror-limit=0", "-w"] + resource_dir() + [f"-I{d}" for d in sorted(dirs)]
    index, reader = ci.Index.create(), Reader(root)
    for path in paths:
        try:
            tu = index.parse(path, args=args)
        except ci.TranslationUnitLoadError as e:
            print(f"{path}: {e}", file=sys.stderr)
            continue
        reader.read(path, tu)
    reader.emit()


if __name__ == "__main__":
    main()
