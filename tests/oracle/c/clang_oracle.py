#!/usr/bin/env python3
"""The C and C++ oracle: clang's own AST (through the libclang wheel) names the chunks a C
or C++ file must give.

    python tests/oracle/c/clang_oracle.py c|cpp < paths

Reads file paths, one a line, on stdin; writes one JSON object a line: {"file", "units":
[...]} or {"file", "error"}. A unit: kind, name, chain (the namespaces and classes around
it, by clang's semantic parents: `void Foo::bar()` is in Foo), top (its first line:
`template<...>` included), sig (its name's line), end (its last line), body (its body's first
line; 0 for a type), doc (the comment clang attaches, informational).

Units, in the file itself (not its headers, not made by a macro):
  * every function, method, constructor, destructor or operator with a body written out
    (out of its class too; not `= default`);
  * C: every struct, union and enum with a body and a name, and every typedef, whole;
  * C++: every enum, typedef and alias; a class, struct or union with no function body
    anywhere inside it (and not inside such a class), whole; a namespace with no unit
    inside, whole.
A unit inside another's lines (the struct of a `typedef struct s {...} t;`) is left out.
Each file is parsed as C (gnu17) or C++ (gnu++20) with every folder of the given paths
that holds a header, and every folder above it up to their common root, on the include path,
so most of a project's own types are known; clang recovers from what it cannot resolve.
"""
import json
import os
import shutil
import subprocess
import sys

import clang.cindex as ci

K = ci.CursorKind
FUNCTIONS = {K.FUNCTION_DECL, K.CXX_METHOD, K.CONSTRUCTOR, K.DESTRUCTOR, K.CONVERSION_FUNCTION,
             K.FUNCTION_TEMPLATE}
RECORDS = {K.STRUCT_DECL: "struct", K.UNION_DECL: "union", K.CLASS_DECL: "class",
           K.CLASS_TEMPLATE: "class", K.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION: "class"}
TYPES = {K.ENUM_DECL: "enum", K.TYPEDEF_DECL: "typedef", K.TYPE_ALIAS_DECL: "type",
         K.TYPE_ALIAS_TEMPLATE_DECL: "type"}
THROUGH = {K.LINKAGE_SPEC, K.UNEXPOSED_DECL}
HEADERS = (".h", ".hh", ".hpp", ".hxx")


class File:
    def __init__(self, path, tu, lang):
        self.path, self.tu, self.lang = path, tu, lang
        self.data = open(path, "rb").read()
        self.units, self.functions = [], 0

    def in_file(self, cursor):
        loc = cursor.location
        return loc.file is not None and \
            os.path.realpath(loc.file.name) == os.path.realpath(self.path)

    def mine(self, cursor):
        """Is the cursor written in this file, by hand (its name where clang says it is)?"""
        loc = cursor.location
        if loc.file is None or os.path.realpath(loc.file.name) != os.path.realpath(self.path):
            return False
        ext = cursor.extent
        if ext.start.file is None or ext.end.file is None or \
                os.path.realpath(ext.start.file.name) != os.path.realpath(self.path):
            return False
        name = cursor.spelling.split("<")[0].encode()
        if cursor.kind in (K.CONSTRUCTOR, K.DESTRUCTOR, K.CONVERSION_FUNCTION) or \
                name.startswith(b"operator"):
            return True
        return self.data[loc.offset:loc.offset + len(name)] == name

    def chain(self, cursor):
        names, p = [], cursor.semantic_parent
        while p is not None and p.kind != K.TRANSLATION_UNIT:
            if p.spelling and p.kind in (K.NAMESPACE, *RECORDS):
                names.append(p.spelling)
            p = p.semantic_parent
        return ".".join(reversed(names))

    def unit(self, kind, cursor, body=None):
        ext = cursor.extent
        self.units.append({
            "kind": kind, "name": cursor.spelling.split("<")[0], "chain": self.chain(cursor),
            "top": ext.start.line, "sig": cursor.location.line, "end": ext.end.line,
            "body": body.extent.start.line if body is not None else 0,
            "doc": doc_text(cursor.raw_comment or ""),
            "span": (ext.start.offset, ext.end.offset)})

    def read(self, cursor, in_class=False):
        """Units among the children of a translation unit, namespace or class."""
        for c in cursor.get_children():
            if c.kind in THROUGH or c.kind == K.NAMESPACE and not self.mine(c) and \
                    self.in_file(c):          # a namespace a macro opens: read through
                self.read(c, in_class)
                continue
            if not self.mine(c):
                continue
            if c.kind in FUNCTIONS:
                body = next((k for k in c.get_children() if k.kind == K.COMPOUND_STMT), None)
                if body is not None and self.data[body.extent.start.offset:][:1] == b"{":
                    self.functions += 1
                    method = in_class or c.semantic_parent.kind in RECORDS
                    self.unit("method" if method else "function", c, body)
            elif c.kind in RECORDS and c.is_definition():
                if self.lang == "c":
                    if c.spelling and "(" not in c.spelling:
                        self.unit(RECORDS[c.kind], c)
                    continue
                mark, before = len(self.units), self.functions
                self.read(c, True)
                if self.functions == before:
                    del self.units[mark:]
                    if c.spelling and "(" not in c.spelling:
                        self.unit(RECORDS[c.kind], c)
            elif c.kind in TYPES and (c.kind != K.ENUM_DECL or c.is_definition()):
                if c.spelling and "(" not in c.spelling:
                    self.unit(TYPES[c.kind], c)
            elif c.kind == K.NAMESPACE:
                mark = len(self.units)
                self.read(c, False)
                if len(self.units) == mark and c.spelling:
                    self.unit("namespace", c)

    def result(self):
        spans = [u["span"] for u in self.units]
        kept = [u for u in self.units if not any(
            s != u["span"] and s[0] <= u["span"][0] and u["span"][1] <= s[1] for s in spans)]
        for u in kept:
            del u["span"]
        return kept


def doc_text(comment):
    import re
    text = re.sub(r"^[ \t]*(?:/\*+!?|\*+/|\*(?!/)|//[/!<]?)?[ \t]?|[ \t]*\*+/[ \t]*$", "",
                  comment, flags=re.M)
    return " ".join(text.split())


def resource_dir():
    """The compiler's own headers (stddef.h, ...), which the libclang wheel does not ship:
    the distribution's clang's, else gcc's."""
    for cmd, flag in (("clang", ["-print-resource-dir"]), ("gcc", ["-print-file-name=include"])):
        if shutil.which(cmd):
            where = subprocess.run([cmd, *flag], capture_output=True, text=True).stdout.strip()
            if cmd == "clang" and os.path.isdir(where):
                return ["-resource-dir", where]
            if cmd == "gcc" and os.path.isdir(where):
                return ["-isystem", where]
    return []


def main():
    lang = sys.argv[1]
    paths = [line.rstrip("\n") for line in sys.stdin if line.strip()]
    dirs = {os.path.dirname(os.path.abspath(p)) for p in paths if p.endswith(HEADERS)}
    root = os.path.commonpath([os.path.dirname(os.path.abspath(p)) for p in paths])
    for d in list(dirs):               # `#include "util/arena.h"` from the tree's root too
        while d.startswith(root) and d != root:
            d = os.path.dirname(d)
            dirs.add(d)
    includes = sorted(dirs)
    args = (["-x", "c", "-std=gnu17"] if lang == "c" else ["-x", "c++", "-std=gnu++20"]) + \
        ["-ferror-limit=0", "-fparse-all-comments", "-w"] + resource_dir() + \
        [f"-I{d}" for d in includes]
    index = ci.Index.create()
    for path in paths:
        try:
            tu = index.parse(path, args=args)
        except ci.TranslationUnitLoadError as e:
            print(json.dumps({"file": path, "error": str(e)}), flush=True)
            continue
        f = File(path, tu, lang)
        f.read(tu.cursor)
        print(json.dumps({"file": path, "units": f.result()}), flush=True)


if __name__ == "__main__":
    main()
