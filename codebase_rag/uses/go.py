"""Go's uses: the query file's (uses/queries/go.scm, read by uses/syntax.py), and the tree's
top: the package clause (a `package` decl: name the package's, as its importers call it)
and the imports (an `import` decl: name the alias, "" for the package's own name, "." or
"_"; target the import path). A Go package is its folder: resolution (packages.py) finds
an import path's folder and a folder's members. Linear: the top's children once.
"""
from . import syntax


def extract(text, chunks, language):
    uses, decls = syntax.extract(text, chunks, language)
    tree, data = chunks.parsed

    def text_of(node):
        return data[node.start_byte:node.end_byte].decode("utf-8", "replace")

    out = list(decls)
    for node in tree.root_node.named_children:
        if node.type == "package_clause":
            names = node.named_children
            if names:
                out.append(("package", "", text_of(names[0]), "", node.start_point[0] + 1, None))
        elif node.type == "import_declaration":
            specs = [c for c in node.named_children if c.type == "import_spec"]
            for group in node.named_children:
                if group.type == "import_spec_list":
                    specs += [c for c in group.named_children if c.type == "import_spec"]
            for spec in specs:
                path, name = spec.child_by_field_name("path"), spec.child_by_field_name("name")
                if path is None:
                    continue
                out.append(("import", "", text_of(name) if name is not None else "",
                            text_of(path).strip('"`'), spec.start_point[0] + 1, None))
    return uses, out
