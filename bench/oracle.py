#!/usr/bin/env python3
"""Oracle benchmark: compare the codebase-rag C# chunker against tree-sitter-c-sharp.

The "real parser" (tree-sitter-c-sharp) finds every member that has a body:
methods, constructors, destructors, operators, conversion operators, and
properties / indexers / events whose accessor list has at least one accessor
body (one member covering all accessors), plus member-level expression bodies
(`=> ...;`) and default interface methods.  Local functions and lambdas are
not members.  Files where tree-sitter reports errors are left out (and counted).

Metrics (targets in brackets):
  1. member recall [>= 99.5%]: a parser member counts as found if some chunk
     in the same file has end_line == the member's last line (closing brace or
     `;`) and top <= start_line <= signature line, where "signature line" is
     the line of the name token (`this` for indexers, `operator` for
     operators/conversions, `~` for destructors) and "top" is the first line of
     the attribute lists / contiguous `///` (or `/**`) doc comments directly
     above the member.  Reported per kind; "expression-bodied" is an extra,
     overlapping row.
  2. keyword-named chunks [0]: chunks whose member name is a C# keyword
     (`if`, `foreach`, `using`, `nameof`, ...).
  3. chunks starting inside a member body [0]: member-kind chunks whose
     start_line lies strictly inside (open line+1 .. close line-1) the body of
     a parser member other than the one the chunk was matched to.
  4. class-chain accuracy [>= 99.5%]: of matched chunks, how many have
     `class` == the enclosing type names joined with '.' (no generics).
     Namespace accuracy is reported too (informational).

Rerun on any repo:
  python bench/oracle.py --source /path/to/repo            # runs ../index.py
  python bench/oracle.py --source REPO --chunks out.jsonl  # precomputed chunks
  python bench/oracle.py --source REPO --json --examples 20 --check
The chunker is run as `python index.py --source DIR --dry-run --json` (JSON
Lines on stdout).  Exit code is 0 (1 with --check if a target is missed,
2 on usage errors or if the chunker cannot be run).
"""
import argparse, json, os, re, subprocess, sys, time
from collections import Counter, defaultdict

import tree_sitter_c_sharp
from tree_sitter import Language, Parser

MEMBER_NODES = {
    "method_declaration": "method", "constructor_declaration": "constructor",
    "destructor_declaration": "destructor", "operator_declaration": "operator",
    "conversion_operator_declaration": "conversion", "property_declaration": "property",
    "indexer_declaration": "indexer", "event_declaration": "event",
}
KINDS = ["method", "constructor", "property", "indexer", "event", "operator",
         "conversion", "destructor", "expression-bodied"]
# record struct is also `record_declaration` in tree-sitter-c-sharp 0.23.
TYPE_NODES = {"class_declaration", "struct_declaration", "record_declaration", "interface_declaration"}
# Nodes whose children may be members/types: #if blocks wrap members in the tree.
PASS_THROUGH = {"preproc_if", "preproc_elif", "preproc_else", "declaration_list"}
SIG_TOKEN = {"destructor": "~", "operator": "operator", "conversion": "operator", "indexer": "this"}
CHUNK_MEMBER_KINDS = {"method", "constructor", "ctor", "destructor", "operator", "conversion",
                      "property", "indexer", "event", "field", "member", "expression-bodied"}
KEYWORDS = set("""abstract as base bool break byte case catch char checked class const continue
decimal default delegate do double else enum event explicit extern false finally fixed float for
foreach goto if implicit in int interface internal is lock long namespace new null object operator
out override params private protected public readonly ref return sbyte sealed short sizeof
stackalloc static string struct switch this throw true try typeof uint ulong unchecked unsafe
ushort using virtual void volatile while await nameof var yield when get set init add remove""".split())
TARGETS = {"recall": 99.5, "keyword": 0, "inside": 0, "class": 99.5}


def line(point):
    return point[0] + 1


def member_info(node, kind, siblings, idx, ns, types, rel):
    """Return a dict describing a member with a body, or None if it has no body."""
    body = node.child_by_field_name("body")
    value = node.child_by_field_name("value")
    accessors = node.child_by_field_name("accessors")
    if body is None and value is not None and value.type == "arrow_expression_clause":
        body = value  # expression-bodied property / indexer
    expr = body is not None and body.type == "arrow_expression_clause"
    if body is None and accessors is not None and any(
            a.child_by_field_name("body") is not None for a in accessors.named_children):
        body = accessors
    if body is None:
        return None
    tok = node.child_by_field_name("name")
    if kind in SIG_TOKEN:
        tok = next((c for c in node.children if c.type == SIG_TOKEN[kind]), tok)
    sig = line(tok.start_point) if tok is not None else line(node.start_point)
    top = line(node.start_point)  # attribute_list children are inside the node
    for sib in reversed(siblings[:idx]):  # contiguous doc comments directly above
        text = sib.text.lstrip()
        if sib.type != "comment" or not (text.startswith(b"///") or text.startswith(b"/**")) \
                or line(sib.end_point) < top - 1:
            break
        top = line(sib.start_point)
    name = node.child_by_field_name("name")
    name = name.text.decode("utf-8", "replace") if name is not None else SIG_TOKEN.get(kind, "?")
    name = {"destructor": "~" + name, "indexer": "this[]"}.get(kind, name)
    if kind in ("operator", "conversion"):  # display only: `operator +`, `implicit operator int`
        field = "operator" if kind == "operator" else "type"
        pre = [c.type for c in node.children if c.type in ("implicit", "explicit")]
        name = " ".join(pre + ["operator", (node.child_by_field_name(field) or node).text.decode()])
    return {"file": rel, "kind": kind, "expr": expr, "top": top, "sig": sig,
            "end": line(node.end_point), "body": (line(body.start_point), line(body.end_point)),
            "name": name,
            "class": ".".join(types), "namespace": ".".join(ns)}


def walk(node, ns, types, rel, out):
    """Collect members below a compilation unit / namespace / type / #if node."""
    kids = node.children
    for i, c in enumerate(kids):
        t = c.type
        if t == "file_scoped_namespace_declaration":  # applies to following siblings
            ns = ns + [re.sub(r"\s+", "", c.child_by_field_name("name").text.decode())]
        elif t == "namespace_declaration":
            name = re.sub(r"\s+", "", c.child_by_field_name("name").text.decode())
            if c.child_by_field_name("body") is not None:
                walk(c.child_by_field_name("body"), ns + [name], types, rel, out)
        elif t in TYPE_NODES:
            if c.child_by_field_name("body") is not None:
                name = c.child_by_field_name("name").text.decode("utf-8", "replace")
                walk(c.child_by_field_name("body"), ns, types + [name], rel, out)
        elif t in MEMBER_NODES:
            m = member_info(c, MEMBER_NODES[t], kids, i, ns, types, rel)
            if m:
                out.append(m)
        elif t in PASS_THROUGH:
            walk(c, ns, types, rel, out)


def parse_repo(source):
    """Parse every .cs file under source; return (members by file, ok files, error files)."""
    parser = Parser(Language(tree_sitter_c_sharp.language()))
    members, ok, bad = defaultdict(list), set(), []
    for root, dirs, files in os.walk(source):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("bin", "obj"))
        for f in sorted(files):
            if not f.endswith(".cs"):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, source).replace(os.sep, "/")
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read().lstrip("\ufeff")
            tree = parser.parse(text.encode("utf-8"))
            if tree.root_node.has_error:
                bad.append(rel)
                continue
            ok.add(rel)
            walk(tree.root_node, [], [], rel, members[rel])
    return members, ok, bad


def load_chunks(args):
    if args.chunks:
        with open(args.chunks, encoding="utf-8") as fh:
            text = fh.read()
    else:
        cmd = [sys.executable, args.index_py, "--source", args.source, "--dry-run", "--json"]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
        if proc.returncode != 0:
            print(f"oracle: chunker failed (exit {proc.returncode}): {' '.join(cmd)}", file=sys.stderr)
            sys.exit(2)
        text = proc.stdout
        if args.save_chunks:
            with open(args.save_chunks, "w", encoding="utf-8") as fh:
                fh.write(text)
    chunks, bad = [], 0
    for ln in text.splitlines():
        try:
            c = json.loads(ln)
            c["file"] = str(c.get("file", "")).replace("\\", "/").removeprefix("./")
            chunks.append(c)
        except (ValueError, AttributeError):
            bad += bool(ln.strip())
    if bad:
        print(f"oracle: ignored {bad} non-JSON-object lines in chunker output", file=sys.stderr)
    return chunks


def keyword_name(chunk, matched):
    """The keyword a chunk's member name resolves to, or None."""
    name = re.sub(r"[(\[].*", "", str(chunk.get("member") or "")).strip()
    while re.search(r"<[^<>]*>", name):
        name = re.sub(r"<[^<>]*>", "", name)
    name = name.split(".")[-1].strip().lstrip("~")
    word = (re.findall(r"@?\w+", name) or [""])[0]
    kinds = {chunk.get("kind"), matched and matched["kind"]}
    if word not in KEYWORDS or (matched and matched["name"] == word):
        return None
    if (word in ("operator", "implicit", "explicit") and kinds & {"operator", "conversion"}) or \
            (word == "this" and "indexer" in kinds):
        return None
    return word


def evaluate(members, ok, chunks, n_examples):
    by_end = defaultdict(list)
    for c in chunks:
        by_end[(c["file"], c.get("end_line"))].append(c)
    used, match_of, per_kind = set(), {}, {k: [0, 0] for k in KINDS}
    by_file = defaultdict(list)
    for c in chunks:
        by_file[c["file"]].append(c)
    ex = defaultdict(list)
    for rel in sorted(members):
        for m in members[rel]:
            cands = [c for c in by_end[(rel, m["end"])] if m["top"] <= (c.get("start_line") or 0) <= m["sig"]]
            cands.sort(key=lambda c: (id(c) in used, c.get("kind") not in CHUNK_MEMBER_KINDS,
                                      c.get("kind") != m["kind"]))
            for k in [m["kind"]] + (["expression-bodied"] if m["expr"] else []):
                per_kind[k][0] += 1
                per_kind[k][1] += bool(cands)
            if cands:
                used.add(id(cands[0]))
                match_of[id(cands[0])] = m
            else:
                near = [c for c in by_file[rel] if (c.get("start_line") or 0) <= m["sig"] <= (c.get("end_line") or 0)]
                near = min(near, key=lambda c: c["end_line"] - c["start_line"], default=None)
                got = f"{near['start_line']}-{near['end_line']} {near.get('kind')} {near.get('member')}" if near else "none"
                ex["recall"].append(f"{rel}:{m['sig']} {m['kind']} {m['name']} want start {m['top']}..{m['sig']} "
                                    f"end {m['end']}; covering chunk: {got}")
    ex["unchunked files"] = [f"{rel}: {len(members[rel])} members, no chunks at all (excluded by the chunker?)"
                             for rel in sorted(members) if members[rel] and not by_file[rel]]
    total = sum(per_kind[k][0] for k in KINDS[:-1])
    found = sum(per_kind[k][1] for k in KINDS[:-1])

    keyword, inside, cls_ok, ns_ok = 0, 0, 0, 0
    for c in chunks:
        m = match_of.get(id(c))
        kw = keyword_name(c, m)
        if kw:
            keyword += 1
            ex["keyword"].append(f"{c['file']}:{c.get('start_line')} {c.get('kind')} member={c.get('member')!r}")
        if c["file"] in ok and c.get("kind") in CHUNK_MEMBER_KINDS:
            s = c.get("start_line") or 0
            host = next((p for p in members[c["file"]] if p is not m and p["body"][0] < s < p["body"][1]), None)
            if host:
                inside += 1
                ex["inside"].append(f"{c['file']}:{s} {c.get('kind')} {c.get('member')} starts inside "
                                    f"{host['kind']} {host['name']} body {host['body'][0]}-{host['body'][1]}")
        if m:
            cls_ok += (c.get("class") or "") == m["class"]
            ns_ok += (c.get("namespace") or "") == m["namespace"]
            if (c.get("class") or "") != m["class"]:
                ex["class"].append(f"{c['file']}:{c.get('start_line')} {c.get('member')} class={c.get('class')!r} want {m['class']!r}")
            if (c.get("namespace") or "") != m["namespace"]:
                ex["namespace"].append(f"{c['file']}:{c.get('start_line')} {c.get('member')} "
                                       f"namespace={c.get('namespace')!r} want {m['namespace']!r}")
    pct = lambda a, b: round(100.0 * a / b, 3) if b else 100.0
    res = {
        "recall": {"pct": pct(found, total), "found": found, "total": total,
                   "per_kind": {k: {"found": v[1], "total": v[0], "pct": pct(v[1], v[0])} for k, v in per_kind.items()}},
        "keyword": {"count": keyword},
        "inside": {"count": inside},
        "class": {"pct": pct(cls_ok, len(match_of)), "ok": cls_ok, "total": len(match_of)},
        "namespace": {"pct": pct(ns_ok, len(match_of)), "ok": ns_ok, "total": len(match_of)},
        "unchunked_files": len(ex["unchunked files"]),
        "examples": {k: v[:n_examples] for k, v in ex.items()},
    }
    res["targets_met"] = {"recall": res["recall"]["pct"] >= TARGETS["recall"], "keyword": keyword <= TARGETS["keyword"],
                          "inside": inside <= TARGETS["inside"], "class": res["class"]["pct"] >= TARGETS["class"]}
    return res


def report(res, info):
    mark = lambda ok: "ok " if ok else "MISS"
    tm = res["targets_met"]
    print(f"files: {info['files']} parsed, {info['error_files']} skipped (tree-sitter errors); "
          f"chunks: {info['chunks']} ({info['chunks_unparsed']} in skipped/unknown files); "
          f"parse {info['parse_seconds']}s, chunker {info['chunk_seconds']}s")
    print("chunk kinds: " + ", ".join(f"{k}={n}" for k, n in info["chunk_kinds"].items())
          + f"  (member kinds for metric 3: {', '.join(sorted(CHUNK_MEMBER_KINDS))})")
    r = res["recall"]
    print(f"[{mark(tm['recall'])}] 1. member recall   {r['pct']:.2f}%  ({r['found']}/{r['total']}, target >= 99.5%)"
          f"; {res['unchunked_files']} files with members have no chunks")
    for k, v in r["per_kind"].items():
        print(f"         {k:<18} {v['pct']:7.2f}%  {v['found']:>6}/{v['total']}")
    print(f"[{mark(tm['keyword'])}] 2. keyword-named chunks: {res['keyword']['count']} (target 0)")
    print(f"[{mark(tm['inside'])}] 3. chunks starting inside another member's body: {res['inside']['count']} (target 0)")
    c, n = res["class"], res["namespace"]
    print(f"[{mark(tm['class'])}] 4. class chain      {c['pct']:.2f}%  ({c['ok']}/{c['total']} matched, target >= 99.5%)")
    print(f"       namespace        {n['pct']:.2f}%  ({n['ok']}/{n['total']}, informational)")
    for k, lines in res["examples"].items():
        if lines:
            print(f"\nexamples: {k}")
            for l in lines:
                print("  " + l)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="See the module docstring for metric definitions.")
    ap.add_argument("--source", required=True, help="repo root containing .cs files")
    ap.add_argument("--chunks", help="precomputed chunker output (JSON Lines); default: run --index-py")
    ap.add_argument("--index-py", default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "index.py"),
                    help="chunker script to run (default: index.py next to bench/)")
    ap.add_argument("--save-chunks", help="also write the chunker output to this file")
    ap.add_argument("--examples", type=int, default=10, metavar="N", help="mismatch examples per metric (default 10)")
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    ap.add_argument("--check", action="store_true", help="exit 1 if any target is missed")
    args = ap.parse_args()
    if not os.path.isdir(args.source):
        ap.error(f"--source {args.source!r} is not a directory")
    if not os.path.isfile(args.chunks or args.index_py):
        ap.error(f"{args.chunks or args.index_py!r} not found (use --chunks or --index-py)")
    t0 = time.time()
    chunks = load_chunks(args)
    t1 = time.time()
    members, ok, bad = parse_repo(args.source)
    t2 = time.time()
    res = evaluate(members, ok, chunks, args.examples)
    res["info"] = {"files": len(ok), "error_files": len(bad), "error_file_list": bad[:args.examples],
                   "chunks": len(chunks), "chunk_kinds": dict(Counter(str(c.get("kind")) for c in chunks).most_common()),
                   "chunks_unparsed": sum(c["file"] not in ok for c in chunks),
                   "parse_seconds": round(t2 - t1, 2), "chunk_seconds": round(t1 - t0, 2)}
    if args.json:
        print(json.dumps(res, indent=1))
    else:
        report(res, res["info"])
    return 1 if args.check and not all(res["targets_met"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
