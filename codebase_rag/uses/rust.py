"""Rust's uses: the query file's (uses/queries/rust.scm, read by uses/syntax.py), and the
`use` declarations of the file's top (an `import` decl each: name the local name, target
`path:member` with the path's parts joined by dots, `crate.a`, `super`, `self.b`; a module
used whole is its path alone; `path::*` is name "*"), and its `mod x;` (the module x, an
import of `self.x`). A module is a file (uses/crates.py finds it). Linear: the top's children
once, a use tree at most MAX_USE deep.
"""
from . import syntax

MAX_USE = 8


def extract(text, chunks, language):
    uses, decls = syntax.extract(text, chunks, language)
    tree, data = chunks.parsed

    def text_of(node):
        return "".join(data[node.start_byte:node.end_byte].decode("utf-8", "replace")
                       .split()).replace("::", ".")

    out = list(decls)
    for node in tree.root_node.named_children:
        if node.type == "mod_item" and node.child_by_field_name("body") is None:
            name = node.child_by_field_name("name")
            if name is not None:
                out.append(("import", "", text_of(name), "self." + text_of(name),
                            node.start_point[0] + 1, None))
            continue
        if node.type != "use_declaration":
            continue
        arg = node.child_by_field_name("argument")
        if arg is not None:
            line = node.start_point[0] + 1
            out += [("import", "", name, target, line, None)
                    for name, target in use_tree(arg, "", text_of, 0)]
    return uses, out


def use_tree(node, prefix, text_of, depth):
    """[(local name, target)] of one use tree under a path prefix ("" or `a::b`)."""
    if depth > MAX_USE:
        return []
    join = (lambda p: f"{prefix}.{p}" if prefix else p)
    t = node.type
    if t in ("identifier", "crate", "super", "self"):
        name = text_of(node)
        if t == "self":               # a::{self}: the module a itself
            return [(prefix.rpartition(".")[2], prefix)] if prefix else []
        return [(name, f"{prefix}:{name}" if prefix else name)]
    if t == "scoped_identifier":
        path, name = node.child_by_field_name("path"), node.child_by_field_name("name")
        if name is None:
            return []
        module = join(text_of(path)) if path is not None else prefix
        return [(text_of(name), f"{module}:{text_of(name)}")]
    if t == "use_as_clause":
        path, alias = node.child_by_field_name("path"), node.child_by_field_name("alias")
        found = use_tree(path, prefix, text_of, depth + 1) if path is not None else []
        return [(text_of(alias), target) for _, target in found[:1]] if alias is not None \
            else found
    if t == "use_wildcard":
        path = node.named_children[0] if node.named_children else None
        return [("*", join(text_of(path)) if path is not None else prefix)]
    if t == "scoped_use_list":
        path, items = node.child_by_field_name("path"), node.child_by_field_name("list")
        inner = join(text_of(path)) if path is not None else prefix
        return use_tree(items, inner, text_of, depth + 1) if items is not None else []
    if t == "use_list":
        return [pair for child in node.named_children[:256]
                for pair in use_tree(child, prefix, text_of, depth + 1)]
    return []
