#!/usr/bin/env python3
"""Call edges against each language's own resolver (issue 47): every call site of a tree,
found by the language's own parser, resolved by the oracle (Python: jedi's goto; TypeScript
and JavaScript: the TypeScript checker, tests/oracle/ts/refs_oracle.js), and by the index
(resolve.py). Precision and recall of what the index resolves, by call site and by edge
(caller member -> callee member); the sites it leaves ambiguous or unresolved while the
oracle found a member of the tree are counted apart.

    PYTHONPATH=. python bench/refs_oracle.py --lang python TREE [TREE ...] [--out FILE]
                                             [--show 20]

A callee is a member of the index (a chunk), or for a construction the type constructed.
The oracle's answer (a file and line) is mapped to the index's chunk that holds that line
as its own declaration, or to the type declared there; an answer outside the tree (a
library), or inside a member but not one (a nested function), is external for both.
"""
import argparse
import ast
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def build(tree, db, embedder=None):
    """Step 1 of a build (chunks, uses, decls; no vectors) of tree into db (embedder: what
    counts a window's tokens, the index's own model by default)."""
    import shutil
    from codebase_rag.indexer import Indexer
    from codebase_rag.build_runs import open_for_write
    from codebase_rag.walk import Ignore
    shutil.rmtree(db, ignore_errors=True)
    store = open_for_write(db, tree, None)
    ix = Indexer(store, tree, Ignore(tree), progress=False, embedder=embedder)
    ix.run(ix.walk_tree())
    return store


class Keys:
    """Where a definition is, as a key both sides share: ("member", rowid) for a chunk
    whose declaration is on that line, ("type", file, line) for a type declared there."""

    def __init__(self, store):
        self.by_file = defaultdict(list)
        self.members = {}
        for rowid, file, start, end, member in store.db.execute(
                "SELECT rowid, file, start_line, end_line, member FROM chunks"):
            self.by_file[file].append((start, end, rowid))
            self.members[rowid] = member
        self.types = {(f, line) for f, line in store.db.execute(
            "SELECT file, line FROM decls WHERE kind='type'")}
        self.sig_lines = {}

    def of_place(self, file, line, name=None):
        """The key of a definition the oracle names at file:line (named name: the member
        whose chunk holds that line must bear it, else it is a local of that member), or
        None."""
        if (file, line) in self.types:
            return ("type", file, line)
        inside = [(end - start, rowid) for start, end, rowid in self.by_file.get(file, ())
                  if start <= line <= end]
        if not inside:
            return None
        rowid = min(inside)[1]
        if name is not None and self.members[rowid] != name:
            return None
        return ("member", rowid)

    def of_def(self, d):
        if d.rowid is None:
            return ("type", d.file, d.start_line)
        return ("member", d.rowid)


def ours(store, keys):
    """{(file, line, name): [(status, keys)]} for every call and construction use."""
    from codebase_rag.definitions import Index
    from codebase_rag.resolve import Resolver
    ix = Index(store.db)
    resolver = Resolver(ix)
    rows = store.db.execute("SELECT chunk, file, lines, name, kind, qualifier FROM uses "
                            "WHERE kind IN ('call', 'new')").fetchall()
    ix.load(r[0] for r in rows)
    found = defaultdict(list)
    for chunk, file, lines, name, kind, qualifier in rows:
        lines = [int(x) for x in lines.split(",")]
        ctx = ix.context(chunk, file) if chunk is not None else \
            ix.context_at(file, lines[0])
        res = resolver.resolve(name, kind, qualifier, ctx)
        if res.types and res.status != "ambiguous":
            targets = {("type", t.files[0], t.line) for t in res.types}
        else:
            targets = {keys.of_def(d) for d in res.targets}
        for line in lines:
            found[ctx.file, line, name].append((res.status, targets, ix.def_of(chunk)
                                                if chunk is not None else None))
    return found


# ----------------------------------------------------------------------------- oracles
def python_sites(tree, files):
    """[(file, line, col, name)] of every call in these files, by Python's own parser."""
    sites = []
    for rel in files:
        try:
            module = ast.parse((tree / rel).read_text(encoding="utf-8", errors="replace"))
        except (SyntaxError, ValueError):
            continue
        for node in sorted(ast.walk(module), key=lambda n: (getattr(n, "lineno", 0),
                                                           getattr(n, "col_offset", 0))):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            if isinstance(f, ast.Name):
                sites.append((rel, f.lineno, f.col_offset, f.id))
            elif isinstance(f, ast.Attribute) and f.end_lineno == f.lineno or \
                    isinstance(f, ast.Attribute) and f.end_col_offset >= len(f.attr):
                sites.append((rel, f.end_lineno, f.end_col_offset - len(f.attr), f.attr))
    return sites


def python_oracle(tree, sites, keys):
    """{site: key or "external"} by jedi's goto (imports followed)."""
    import jedi
    import sysconfig
    # the tree's own roots and the standard library, not the installed packages: a call of
    # an installed copy of the tree's own package would be external to jedi
    projects = [tree] + sorted({p.parent for name in ("pyproject.toml", "setup.py")
                                for p in tree.glob(f"*/**/{name}")})
    roots = [str(d) for p in projects for d in (p, p / "src", p / "lib") if d.is_dir()]
    stdlib = [sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib")]
    project = jedi.Project(path=str(tree), sys_path=roots + stdlib, smart_sys_path=False)
    out, scripts = {}, {}
    for site in sites:
        rel, line, col, name = site
        script = scripts.get(rel)
        if script is None:
            scripts.clear()
            script = scripts[rel] = jedi.Script(path=str(tree / rel), project=project)
        try:
            found = script.goto(line, col, follow_imports=True)
        except Exception:
            found = []
        key = "external" if found else "unbound"
        for d in found:
            path = d.module_path
            if path is None or d.line is None:
                continue
            try:
                file = Path(path).resolve().relative_to(tree).as_posix()
            except ValueError:
                continue
            if d.type not in ("function", "class"):
                break                 # a parameter, a variable: no member
            key = keys.of_place(file, d.line, d.name if d.type == "function" else None) \
                or "external"
            if d.type == "class" and key != "external" and key[0] != "type":
                key = "external"
            break
        out[site] = key
    return out


def python(tree, files, keys):
    sites = python_sites(tree, files)
    return sites, python_oracle(tree, sites, keys)


def typescript(tree, files, keys):
    """(sites, {site: key or "external"}) by the TypeScript checker (refs_oracle.js)."""
    done = subprocess.run(["node", "--max-old-space-size=4096",
                           str(ROOT / "tests" / "oracle" / "ts" / "refs_oracle.js"),
                           "--root", str(tree)], input="\n".join(files), text=True,
                          capture_output=True, check=True)
    sites, truth = [], {}
    for line in done.stdout.splitlines():
        r = json.loads(line)
        site = (r["file"], r["line"], r["col"], r["name"])
        sites.append(site)
        d, key = r["decl"], "external" if r["decl"] else "unbound"
        if d and d["kind"] in ("ClassDeclaration", "ClassExpression"):
            key = keys.of_place(d["file"], d["line"]) or "external"
            key = key if key != "external" and key[0] == "type" else "external"
        elif d and d["kind"] in CALLABLE_DECLS:
            key = keys.of_place(d["file"], d["line"], d["name"]) or "external"
        truth[site] = key
    return sites, truth


def clang(lang):
    """The oracle of C or C++: (sites, {site: key or "external"}) by clang's binding of each
    call (tests/oracle/c/refs_oracle.py). A .h is the language its chunker read it as."""
    def oracle(tree, files, keys):
        from codebase_rag.languages import chunk_source
        files = [f for f in files if not f.endswith(".h") or (chunk_source(
            f, (tree / f).read_text(encoding="utf-8", errors="replace")).language or "c")
            == lang]
        # CLANG_ORACLE_KEEP=DIR: the oracle's answer for a tree is kept there and read again
        # (clang parses every file with its headers: minutes on a C++ tree)
        kept = os.environ.get("CLANG_ORACLE_KEEP")
        kept = Path(kept) / f"{tree.name}.{lang}.jsonl" if kept else None
        if kept is not None and kept.is_file():
            out = kept.read_text()
        else:
            out = subprocess.run([sys.executable, str(ROOT / "tests" / "oracle" / "c" /
                                                      "refs_oracle.py"), lang, "--root", str(tree)],
                                 input="\n".join(files), text=True, capture_output=True,
                                 check=True).stdout
            if kept is not None:
                kept.write_text(out)
        sites, truth = [], {}
        for line in out.splitlines():
            r = json.loads(line)
            site = (r["file"], r["line"], r["col"], r["name"])
            sites.append(site)
            d, key = r["decl"], "external" if r["decl"] else "unbound"
            if d and d["kind"] == "class":
                key = keys.of_place(d["file"], d["line"]) or "external"
                key = key if key != "external" and key[0] == "type" else "external"
            elif d and d["kind"] == "function":
                key = keys.of_place(d["file"], d["line"], d["name"]) or "external"
            truth[site] = key
        return sites, truth
    return oracle


CALLABLE_DECLS = ("FunctionDeclaration", "MethodDeclaration", "Constructor", "GetAccessor",
                  "SetAccessor", "VariableDeclaration", "PropertyAssignment",
                  "PropertyDeclaration", "FunctionExpression", "ArrowFunction",
                  "ShorthandPropertyAssignment", "BinaryExpression",
                  "PropertyAccessExpression")
ES_EXTS = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
ORACLES = {"python": (python, (".py",)), "typescript": (typescript, ES_EXTS[:4]),
           "javascript": (typescript, ES_EXTS[4:]), "c": (clang("c"), (".c", ".h")),
           "cpp": (clang("cpp"), (".cpp", ".cc", ".cxx", ".hpp", ".hh", ".hxx", ".h"))}
# Java and Go: their own file, loaded by path (a test loads this file by path too)
_jvm = importlib.util.spec_from_file_location("refs_oracle_jvm", HERE / "refs_oracle_jvm.py")
refs_oracle_jvm = importlib.util.module_from_spec(_jvm)
_jvm.loader.exec_module(refs_oracle_jvm)
ORACLES.update({"java": (refs_oracle_jvm.java, (".java",)), "go": (refs_oracle_jvm.go, (".go",))})


def score(tree, lang, show=0, embedder=None, work=None):
    """The oracle's figures for one tree (a dict); show: print so many wrong and missed."""
    tree = tree.resolve()
    work = Path(work or tempfile.mkdtemp(prefix="refs-oracle-"))
    started = time.perf_counter()
    store = build(tree, work / "db", embedder)
    keys = Keys(store)
    oracle_of, exts = ORACLES[lang]
    files = sorted(p for (p,) in store.db.execute("SELECT path FROM files")
                   if p.endswith(exts))
    ours_ = ours(store, keys)
    built = time.perf_counter() - started
    sites, truth = oracle_of(tree, files, keys)
    counts = Counter()
    edges_ours, edges_oracle, wrong, missed = set(), set(), [], []
    taken = {}
    for site in sites:
        rel, line, col, name = site
        mine = ours_.get((rel, line, name))
        want = truth[site]
        # the uses of one name on one line (a.f(b.f()): two rows) in no order the oracle's
        # is: each site takes the first row not taken that names its member, else the first
        # not taken; when every row is taken, a row called twice there (one row, its lines
        # deduplicated) is both sites: the one that names the member, else the first
        used = taken.setdefault((rel, line, name), set())
        free = [i for i in range(len(mine or ())) if i not in used]
        index = next((i for i in free if want in mine[i][1]), free[0] if free else None)
        if index is None and mine:
            index = next((i for i in range(len(mine)) if want in mine[i][1]), 0)
        used.add(index)
        status, targets, caller = mine[index] if index is not None else \
            ("not read", set(), None)
        caller_key = caller.rowid if caller is not None else (rel, "file")
        if want == "unbound":           # the oracle bound the name to nothing
            counts["unbound"] += 1
            counts["resolved_unbound"] += status == "resolved"
            want = "external"
        if want != "external":
            edges_oracle.add((caller_key, want))
            counts["oracle"] += 1
        if status == "resolved":
            counts["resolved"] += 1     # an overload set (a Python property and its
            edges_ours.add((caller_key, want if want in targets else min(targets, key=str)))
            if want in targets:         # setter) is one callee: the oracle's when it is in
                counts["tp"] += 1
            else:
                counts["fp"] += 1
                wrong.append((site, sorted(map(str, targets)), want))
        elif want != "external":
            counts[status] += 1
            missed.append((status, site, want))
    tp_edges = len(edges_ours & edges_oracle)
    result = dict(
        tree=tree.name, files=len(files), sites=len(sites), oracle_members=counts["oracle"],
        resolved=counts["resolved"], tp=counts["tp"], fp=counts["fp"],
        precision=counts["tp"] / max(counts["resolved"], 1),
        bound_precision=counts["tp"] / max(counts["resolved"] - counts["resolved_unbound"], 1),
        unbound=counts["unbound"], resolved_unbound=counts["resolved_unbound"],
        recall=counts["tp"] / max(counts["oracle"], 1),
        ambiguous=counts["ambiguous"], unknown=counts["unknown"],
        external=counts["external"], not_read=counts["not read"],
        edge_precision=tp_edges / max(len(edges_ours), 1),
        edge_recall=tp_edges / max(len(edges_oracle), 1),
        edges_ours=len(edges_ours), edges_oracle=len(edges_oracle),
        seconds=round(time.perf_counter() - started, 1), build_seconds=round(built, 1))
    for site, targets, want in wrong[:show]:
        print(f"  wrong: {site} ours {targets} oracle {want}", file=sys.stderr)
    import random
    for status, site, want in random.Random(0).sample(missed, min(show, len(missed))):
        print(f"  missed ({status}): {site} oracle {want}", file=sys.stderr)
    for edge in sorted(edges_ours - edges_oracle, key=str)[:show]:
        print(f"  edge not the oracle's: {edge}", file=sys.stderr)
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--lang", required=True, choices=sorted(ORACLES))
    p.add_argument("trees", nargs="+", type=Path)
    p.add_argument("--show", type=int, default=0, help="print this many wrong edges")
    p.add_argument("--out", type=Path, help="append the rows as JSON lines")
    args = p.parse_args()
    print("| language | tree | files | call sites | oracle: a member | resolved | precision | "
          "recall | ambiguous | unknown receiver | external to us | edges P / R | oracle "
          "bound nothing: sites (we resolved) | precision where it bound |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    for tree in args.trees:
        r = score(tree, args.lang, args.show)
        print(f"| {args.lang} | {r['tree']} | {r['files']:,} | {r['sites']:,} | "
              f"{r['oracle_members']:,} | {r['resolved']:,} | {r['precision']:.3f} | "
              f"{r['recall']:.3f} | {r['ambiguous']:,} | {r['unknown']:,} | "
              f"{r['external'] + r['not_read']:,} | {r['edge_precision']:.3f} / "
              f"{r['edge_recall']:.3f} | {r['unbound']:,} ({r['resolved_unbound']:,}) | "
              f"{r['bound_precision']:.3f} |", flush=True)
        if args.out:
            with args.out.open("a") as f:
                f.write(json.dumps({"lang": args.lang, **r}) + "\n")


if __name__ == "__main__":
    main()
