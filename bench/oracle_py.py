#!/usr/bin/env python3
"""Oracle benchmark: the Python chunker against the standard library's own parser, `ast`.

Targets, from `ast` (files it cannot parse are left out and counted):
  * every def (FunctionDef, AsyncFunctionDef) not nested inside another def, wherever it
    sits otherwise (module, class body, an `if`/`try` at either level); kind "method" when
    the nearest enclosing scope is a class, else "function"; its class chain is the names
    of the enclosing classes, outermost first;
  * every leaf class: a class with no such def anywhere inside it, and not itself inside
    a leaf class (so a def-free class with a nested `class Meta` is one target).
  start = the first decorator's line (the def/class line when undecorated), sig = the
  def/class line, end = node.end_lineno.

Metrics (targets in brackets):
  exact  [>= 99.5%]  a chunk of the file ends on the target's end line and starts
                     between its first decorator and its def/class line;
  bogus  [0]         chunks starting after the def line and up to the end line of some
                     target def (inside a function), or named with a Python keyword;
  chain  [>= 99.5%]  of the matched chunks, those whose `cls` is the class chain;
  doc    (informational) of the matched chunks, those whose `doc` is the docstring as
                     ast.get_docstring reads it, whitespace collapsed.
Per-kind rows are reported; "decorated" and "async" are extra, overlapping rows.

  python bench/oracle_py.py --source REPO [--examples 10] [--json] [--check] [--speed 3]

--speed N also times the chunker alone over the parsed files, N rounds, and prints the
median files/s. Exit 1 with --check when a target is missed.
"""
import argparse
import ast
import json
import keyword
import os
import statistics
import sys
import time
import warnings
from collections import Counter

from codebase_rag.chunkers import python as chunker
from codebase_rag.walk import read_source

SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", "build", "dist", "node_modules",
             "site-packages", ".tox", ".nox", ".eggs", ".venv", "venv", "env", ".env",
             ".mypy_cache", ".pytest_cache"}
KINDS = ["function", "method", "class", "decorated", "async"]
TARGETS = {"exact": 99.5, "bogus": 0, "chain": 99.5}


def targets(tree):
    """The oracle's targets in a module's ast, as dicts (see the module docstring)."""
    out = []

    def scan(node, chain, in_class):
        """Collect targets below node; return how many defs were found."""
        defs = 0
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append(target(child, chain, "method" if in_class else "function"))
                defs += 1
            elif isinstance(child, ast.ClassDef):
                mark = len(out)
                inner = scan(child, chain + [child.name], True)
                if inner == 0:
                    del out[mark:]
                    out.append(target(child, chain, "class"))
                defs += inner
            elif isinstance(child, ast.stmt) or isinstance(child, (ast.excepthandler,
                                                                   ast.match_case)):
                defs += scan(child, chain, in_class)
        return defs

    scan(tree, [], False)
    return out


def target(node, chain, kind):
    top = min([d.lineno for d in node.decorator_list] + [node.lineno])
    doc = ast.get_docstring(node, clean=False)
    return {"name": node.name, "class": ".".join(chain), "kind": kind, "top": top,
            "sig": node.lineno, "end": node.end_lineno,
            "doc": " ".join(doc.split()) if doc else "",
            "decorated": bool(node.decorator_list),
            "async": isinstance(node, ast.AsyncFunctionDef)}


def parse(text):
    """The ast of text, or None when Python cannot parse it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None


def compare(wanted, chunks):
    """(matches: target index -> chunk, bogus chunks with why) for one file."""
    by_end = {}
    for c in chunks:
        by_end.setdefault(c.end_line, []).append(c)
    matches, used = {}, set()
    for i, t in enumerate(wanted):
        cands = [c for c in by_end.get(t["end"], []) if t["top"] <= c.start_line <= t["sig"]]
        cands.sort(key=lambda c: (id(c) in used, c.member != t["name"]))
        if cands:
            matches[i] = cands[0]
            used.add(id(cands[0]))
    bogus = []
    defs = [t for t in wanted if t["kind"] != "class"]
    for c in chunks:
        if c.member in keyword.kwlist:
            bogus.append((c, "named with a keyword"))
            continue
        host = next((t for t in defs if t["sig"] < c.start_line <= t["end"]), None)
        if host:
            bogus.append((c, f"starts inside {host['class']}.{host['name']} "
                             f"({host['sig']}-{host['end']})"))
    return matches, bogus


def python_files(source):
    for root, dirs, files in os.walk(source):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and
                         not os.path.exists(os.path.join(root, d, "pyvenv.cfg")))
        for f in sorted(files):
            if f.endswith(".py"):
                path = os.path.join(root, f)
                if os.path.isfile(path) and not os.path.islink(path):
                    yield path, os.path.relpath(path, source).replace(os.sep, "/")


def evaluate(source, n_examples=10):
    per_kind = {k: [0, 0] for k in KINDS}
    chain_ok = doc_ok = matched = n_bogus = ts_errors = 0
    files, skipped, chunk_kinds = [], [], Counter()
    examples = {"missed": [], "bogus": [], "chain": [], "doc": [], "skipped": [],
                "tree-sitter errors": []}
    t_chunk = 0.0
    for path, rel in python_files(source):
        text = read_source(path)
        if text is None:
            continue
        tree = parse(text)
        if tree is None:
            skipped.append(rel)
            examples["skipped"].append(rel)
            continue
        files.append(text)
        t = time.perf_counter()
        chunks = chunker.chunk(text, ".py")
        t_chunk += time.perf_counter() - t
        chunk_kinds.update(c.kind for c in chunks)
        if chunks.parse_errors:
            ts_errors += 1
            examples["tree-sitter errors"].append(f"{rel}: {chunks.parse_errors}")
        wanted = targets(tree)
        matches, bogus = compare(wanted, chunks)
        for i, tg in enumerate(wanted):
            rows = [tg["kind"]] + [k for k in ("decorated", "async") if tg[k]]
            for k in rows:
                per_kind[k][0] += 1
                per_kind[k][1] += i in matches
            if i not in matches:
                near = [c for c in chunks if c.start_line <= tg["sig"] <= c.end_line]
                got = ", ".join(f"{c.kind} {c.cls}.{c.member} {c.start_line}-{c.end_line}"
                                for c in near) or "none"
                examples["missed"].append(f"{rel}:{tg['sig']} {tg['kind']} {tg['class']}."
                                          f"{tg['name']} want {tg['top']}..{tg['sig']}-"
                                          f"{tg['end']}; covering: {got}")
            else:
                c = matches[i]
                matched += 1
                if c.cls == tg["class"]:
                    chain_ok += 1
                else:
                    examples["chain"].append(f"{rel}:{tg['sig']} {c.member} cls={c.cls!r} "
                                             f"want {tg['class']!r}")
                if c.doc == tg["doc"]:
                    doc_ok += 1
                else:
                    examples["doc"].append(f"{rel}:{tg['sig']} {c.member} doc={c.doc[:60]!r} "
                                           f"want {tg['doc'][:60]!r}")
        n_bogus += len(bogus)
        examples["bogus"] += [f"{rel}:{c.start_line} {c.kind} {c.cls}.{c.member}: {why}"
                              for c, why in bogus]
    total = sum(per_kind[k][0] for k in KINDS[:3])
    found = sum(per_kind[k][1] for k in KINDS[:3])
    pct = lambda a, b: round(100.0 * a / b, 3) if b else 100.0  # noqa: E731
    res = {
        "files": len(files), "skipped": len(skipped), "tree_sitter_error_files": ts_errors,
        "exact": {"pct": pct(found, total), "found": found, "total": total},
        "per_kind": {k: {"found": v[1], "total": v[0], "pct": pct(v[1], v[0])}
                     for k, v in per_kind.items()},
        "bogus": n_bogus,
        "chain": {"pct": pct(chain_ok, matched), "ok": chain_ok, "total": matched},
        "doc": {"pct": pct(doc_ok, matched), "ok": doc_ok, "total": matched},
        "chunks": dict(chunk_kinds.most_common()),
        "chunk_seconds": round(t_chunk, 3),
        "examples": {k: v[:n_examples] for k, v in examples.items()},
    }
    res["targets_met"] = res["exact"]["pct"] >= TARGETS["exact"] and n_bogus == 0 and \
        res["chain"]["pct"] >= TARGETS["chain"]
    return res, files


def speed(texts, rounds):
    """Median files/s (and MB/s) of the chunker alone over texts, by the wall clock and by
    this process's CPU time (steadier on a machine that other work shares)."""
    size = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)
    wall, cpu = [], []
    for _ in range(rounds):
        t, c = time.perf_counter(), time.process_time()
        for text in texts:
            chunker.chunk(text, ".py")
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    med, med_cpu = statistics.median(wall), statistics.median(cpu)
    return {"files": len(texts), "bytes": size, "rounds": rounds,
            "seconds": [round(x, 3) for x in wall], "cpu_seconds": [round(x, 3) for x in cpu],
            "files_per_s": round(len(texts) / med, 1), "mb_per_s": round(size / med / 1e6, 2),
            "files_per_cpu_s": round(len(texts) / med_cpu, 1),
            "mb_per_cpu_s": round(size / med_cpu / 1e6, 2)}


def report(res):
    mark = "ok " if res["targets_met"] else "MISS"
    e, c = res["exact"], res["chain"]
    print(f"files: {res['files']} parsed by ast, {res['skipped']} left out (ast cannot parse); "
          f"{res['tree_sitter_error_files']} of the parsed have tree-sitter errors")
    print("chunks: " + ", ".join(f"{k}={n}" for k, n in res["chunks"].items()))
    print(f"[{mark}] exact {e['pct']:.2f}% ({e['found']}/{e['total']})  bogus {res['bogus']}  "
          f"chain {c['pct']:.2f}% ({c['ok']}/{c['total']})")
    for k, v in res["per_kind"].items():
        print(f"       {k:<10} {v['pct']:7.2f}%  {v['found']:>6}/{v['total']}")
    d = res["doc"]
    print(f"       docstring text as ast reads it (informational): {d['pct']:.2f}% "
          f"({d['ok']}/{d['total']})")
    for k, lines in res["examples"].items():
        if lines:
            print(f"\nexamples: {k}")
            for line in lines:
                print("  " + line)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", required=True, help="a tree of Python code")
    ap.add_argument("--examples", type=int, default=10, metavar="N")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    ap.add_argument("--speed", type=int, default=0, metavar="ROUNDS",
                    help="also time the chunker alone, median of ROUNDS")
    args = ap.parse_args()
    if not os.path.isdir(args.source):
        ap.error(f"--source {args.source!r} is not a directory")
    res, texts = evaluate(args.source, args.examples)
    if args.speed:
        res["speed"] = speed(texts, args.speed)
    if args.json:
        print(json.dumps(res, indent=1))
    else:
        report(res)
        if args.speed:
            s = res["speed"]
            print(f"\nspeed: {s['files_per_s']} files/s, {s['mb_per_s']} MB/s wall; "
                  f"{s['files_per_cpu_s']} files/s, {s['mb_per_cpu_s']} MB/s per CPU second "
                  f"(medians of {s['rounds']}: {s['seconds']} s wall, {s['cpu_seconds']} s CPU, "
                  f"{s['files']} files, {s['bytes']:,} bytes)")
    return 1 if args.check and not res["targets_met"] else 0


if __name__ == "__main__":
    sys.exit(main())
