#!/usr/bin/env python3
"""Oracle benchmark for the languages the tree-sitter driver reads: each against its own
compiler's parser.

    python bench/oracle_lang.py --lang go|java|rust|c|cpp --source REPO [--examples 10]
                                [--json] [--check] [--speed 3] [--keep-oracle FILE]

The oracle of each language is a program in tests/oracle/LANG/ that reads file paths (one a
line) on stdin and writes a JSON object a line: {"file", "units": [...]} or {"file",
"error"} when its parser cannot read the file (left out, and counted). A unit is what its
compiler's parser says must be a chunk: kind, name, chain (the namespaces and containers
around it, joined by "."), top (its first line: attributes, annotations, `template<...>`,
the doc comment the compiler attaches), sig (its name's line), end (its last line), body
(the first line of a function's body; 0 for the others), doc (informational).

  go    go/ast (golang-go): `go run tests/oracle/go/oracle.go`
  java  javac's tree API, com.sun.source.tree (default-jdk-headless): tests/oracle/java/Oracle.java
  rust  syn (librust-syn-dev, built offline): tests/oracle/rust/
  c/cpp clang's AST through the libclang wheel: tests/oracle/c/clang_oracle.py

Metrics (targets in brackets), per extension and per kind:
  exact  [>= 99.5%]  a chunk of the file ends on the unit's end line and starts between its
                     top (moved up over the comment-only lines directly above it) and its sig;
  bogus  [0]         chunks that start inside a function body (after its body's first line,
                     up to its end), or are named after a keyword (the chunk contract);
  chain  [100%]      of the matched chunks, those whose namespace.cls is the unit's chain.
The files are those a build indexes (the tool's own walk). Exit 1 with --check when a
target is missed. --keep-oracle FILE keeps the oracle's answers (clang takes tens of
minutes on a large tree): read from FILE when it exists, else written there; a chunker
change is then scored again in seconds.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from codebase_rag.chunkers import contract
from codebase_rag.languages import LANGUAGES, by_name, chunk_source, extensions_read
from codebase_rag.walk import Ignore, read_source, walk

ROOT = Path(__file__).resolve().parents[1]
ORACLES = ROOT / "tests" / "oracle"
TARGETS = {"exact": 99.5, "bogus": 0, "chain": 100.0}
_LINE_COMMENT = re.compile(r"^\s*(//|#\[)")


# ----------------------------------------------------------------------------- the oracles
def build_dir():
    """Where the compiled oracles are kept: .cache/oracle under the project."""
    where = ROOT / ".cache" / "oracle"
    where.mkdir(parents=True, exist_ok=True)
    return where


def command(lang):
    """The oracle's command for a language, built first when it needs a build."""
    if lang == "go":
        binary = build_dir() / "go-oracle"
        source = ORACLES / "go" / "oracle.go"
        if not binary.exists() or binary.stat().st_mtime < source.stat().st_mtime:
            subprocess.run(["go", "build", "-o", str(binary), str(source)], check=True,
                           cwd=ORACLES / "go", env=_go_env())
        return [str(binary)]
    if lang == "java":
        return ["java", str(ORACLES / "java" / "Oracle.java")]
    if lang == "rust":
        return [str(rust_oracle())]
    if lang in ("c", "cpp"):
        return [sys.executable, str(ORACLES / "c" / "clang_oracle.py"), lang]
    raise ValueError(f"no oracle for {lang}")


def _go_env():
    env = dict(os.environ)
    env.setdefault("GOCACHE", str(build_dir() / "go-cache"))
    env.setdefault("GOFLAGS", "-mod=mod")
    env["GO111MODULE"] = "off"
    return env


def rust_oracle():
    """The syn oracle, built offline from the distribution's crates (librust-syn-dev)."""
    target = build_dir() / "rust-target"
    binary = target / "release" / "rust-oracle"
    sources = [ORACLES / "rust" / "Cargo.toml", ORACLES / "rust" / "src" / "main.rs"]
    if binary.exists() and all(binary.stat().st_mtime >= s.stat().st_mtime for s in sources):
        return binary
    home = build_dir() / "cargo-home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(
        '[source.crates-io]\nreplace-with = "debian"\n\n'
        '[source.debian]\ndirectory = "/usr/share/cargo/registry"\n')
    env = dict(os.environ, CARGO_HOME=str(home), CARGO_TARGET_DIR=str(target))
    cargo = "/usr/bin/cargo" if Path("/usr/bin/cargo").exists() else "cargo"
    subprocess.run([cargo, "build", "--offline", "--release", "-q"], check=True,
                   cwd=ORACLES / "rust", env=env)
    return binary


def run_oracle(lang, paths):
    """{path: {"units": [...]} or {"error": ...}} for the files at paths."""
    if not paths:
        return {}
    out = subprocess.run(command(lang), input="".join(p + "\n" for p in paths),
                         capture_output=True, text=True, check=True).stdout
    found = {}
    for line in out.splitlines():
        row = json.loads(line)
        found[row["file"]] = row
    return found


# ----------------------------------------------------------------------------- compare
def widen(units, lines):
    """Each unit's top moved up over the comments (and Rust attributes) directly above it,
    each on lines of its own: what the oracle's window allows a chunk to start with."""
    for u in units:
        top = u["top"]
        while top > 1:
            above = lines[top - 2]
            if _LINE_COMMENT.match(above):
                top -= 1
            elif above.rstrip().endswith("*/"):
                text = "\n".join(lines[:top - 1])
                opening = text.rfind("/*", 0, len(text) - 2)
                first = text.count("\n", 0, opening)
                if opening < 0 or lines[first][:opening - text.rfind("\n", 0, opening) - 1].strip():
                    break
                top = first + 1
            else:
                break
        u["window"] = top
    return units


def chain_of(c):
    return ".".join(p for p in (c.namespace, c.cls) if p)


def compare(units, chunks, misnamed):
    """(matches: unit index -> chunk, bogus chunks with why) for one file."""
    by_end = {}
    for c in chunks:
        by_end.setdefault(c.end_line, []).append(c)
    matches, used = {}, set()
    for i, u in enumerate(units):
        cands = [c for c in by_end.get(u["end"], []) if u["window"] <= c.start_line <= u["sig"]]
        cands.sort(key=lambda c: (id(c) in used, c.member != u["name"]))
        if cands:
            matches[i] = cands[0]
            used.add(id(cands[0]))
    bogus = []
    bodies = [u for u in units if u["body"]]
    for c in chunks:
        if misnamed(c):
            bogus.append((c, "named after a keyword"))
            continue
        host = next((u for u in bodies if u["body"] < c.start_line <= u["end"]), None)
        if host:
            bogus.append((c, f"starts inside {host['chain']}.{host['name']} "
                             f"({host['body']}-{host['end']})"))
    return matches, bogus


def files_of(source, lang):
    exts = extensions_read(by_name(lang))
    for rel, path, _ in walk(source, Ignore(source)):
        if rel.endswith(exts):
            yield rel, path


def evaluate(source, lang, n_examples=10, keep=None):
    files = list(files_of(source, lang))
    if keep and Path(keep).is_file():
        oracle = json.loads(Path(keep).read_text())
    else:
        oracle = run_oracle(lang, [p for _, p in files])
        if keep:
            Path(keep).write_text(json.dumps(oracle))
    per_ext, per_kind = {}, {}
    totals = Counter()
    examples = {k: [] for k in ("missed", "bogus", "chain", "name", "doc", "left out",
                                "tree-sitter errors")}
    texts, chunk_kinds = [], Counter()
    for rel, path in files:
        ext = max((e for e in extensions_read(by_name(lang)) if rel.endswith(e)), key=len)
        got = oracle.get(path, {"error": "no answer"})
        text = read_source(path)
        if "error" in got or text is None:
            totals["left out"] += 1
            examples["left out"].append(f"{rel}: {got.get('error', 'unreadable')}")
            continue
        texts.append((text, ext))
        chunks = chunk_source(rel, text)
        chunk_kinds.update(c.kind for c in chunks)
        if chunks.parse_errors:
            totals["error files"] += 1
            examples["tree-sitter errors"].append(f"{rel}: {chunks.parse_errors}")
        units = widen(got["units"], text.split("\n"))
        matches, bogus = compare(units, chunks, contract.rules(chunks.language or lang)[1])
        e = per_ext.setdefault(ext, Counter())
        e["files"] += 1
        for i, u in enumerate(units):
            k = per_kind.setdefault(u["kind"], Counter())
            for counter in (e, k, totals):
                counter["total"] += 1
                counter["found"] += i in matches
            if i not in matches:
                near = [c for c in chunks if c.start_line <= u["sig"] <= c.end_line]
                have = ", ".join(f"{c.kind} {chain_of(c)}.{c.member} {c.start_line}-{c.end_line}"
                                 for c in near) or "none"
                examples["missed"].append(f"{rel}:{u['sig']} {u['kind']} {u['chain']}.{u['name']} "
                                          f"want {u['window']}..{u['sig']}-{u['end']}; have: {have}")
                continue
            c = matches[i]
            for counter in (e, k, totals):
                counter["chain ok"] += chain_of(c) == u["chain"]
                counter["doc ok"] += c.doc == u["doc"]
                counter["name ok"] += c.member == u["name"]
            if c.member != u["name"]:
                examples["name"].append(f"{rel}:{u['sig']} {c.member!r} want {u['name']!r}")
            if chain_of(c) != u["chain"]:
                examples["chain"].append(f"{rel}:{u['sig']} {c.member} chain {chain_of(c)!r} "
                                         f"want {u['chain']!r}")
            if c.doc != u["doc"]:
                examples["doc"].append(f"{rel}:{u['sig']} {c.member} doc {c.doc[:50]!r} "
                                       f"want {u['doc'][:50]!r}")
        for counter in (e, totals):
            counter["bogus"] += len(bogus)
        examples["bogus"] += [f"{rel}:{c.start_line} {c.kind} {chain_of(c)}.{c.member}: {why}"
                              for c, why in bogus]
    pct = lambda a, b: round(100.0 * a / b, 3) if b else 100.0  # noqa: E731

    def summary(c):
        return {"files": c["files"], "total": c["total"], "found": c["found"],
                "exact": pct(c["found"], c["total"]), "bogus": c["bogus"],
                "chain": pct(c["chain ok"], c["found"]), "name": pct(c["name ok"], c["found"]),
                "doc": pct(c["doc ok"], c["found"])}
    res = {"lang": lang, "files": len(texts), "left_out": totals["left out"],
           "tree_sitter_error_files": totals["error files"],
           "all": summary(totals | Counter(files=len(texts))),
           "per_extension": {ext: summary(c) for ext, c in sorted(per_ext.items())},
           "per_kind": {k: summary(c) for k, c in sorted(per_kind.items())},
           "chunks": dict(chunk_kinds.most_common()),
           "examples": {k: v[:n_examples] for k, v in examples.items()}}
    res["targets_met"] = all(s["exact"] >= TARGETS["exact"] and s["bogus"] == 0 and
                             s["chain"] >= TARGETS["chain"]
                             for s in res["per_extension"].values())
    return res, texts


def speed(lang, texts, rounds):
    """Median files/s of the chunker alone over texts (wall, and per CPU second)."""
    wall, cpu = [], []
    for _ in range(rounds):
        t, c = time.perf_counter(), time.process_time()
        for text, ext in texts:
            chunk_source("x" + ext, text)
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    size = sum(len(t.encode("utf-8", "surrogatepass")) for t, _ in texts)
    return {"files": len(texts), "bytes": size, "rounds": rounds,
            "files_per_s": round(len(texts) / statistics.median(wall), 1),
            "files_per_cpu_s": round(len(texts) / statistics.median(cpu), 1)}


def report(res):
    a = res["all"]
    print(f"{res['lang']}: {res['files']} files read by the oracle, {res['left_out']} left out "
          f"(its parser cannot read them); {res['tree_sitter_error_files']} with tree-sitter errors")
    print("chunks: " + ", ".join(f"{k}={n}" for k, n in res["chunks"].items()))
    mark = "ok " if res["targets_met"] else "MISS"
    print(f"[{mark}] exact {a['exact']:.2f}% ({a['found']}/{a['total']})  bogus {a['bogus']}  "
          f"chain {a['chain']:.2f}%  name (informational) {a['name']:.2f}%  "
          f"doc (informational) {a['doc']:.2f}%")
    for name, rows in (("extension", res["per_extension"]), ("kind", res["per_kind"])):
        for k, s in rows.items():
            print(f"   {name} {k:<14} exact {s['exact']:7.2f}% {s['found']:>6}/{s['total']:<6} "
                  f"bogus {s['bogus']}  chain {s['chain']:.2f}%")
    for k, lines in res["examples"].items():
        if lines:
            print(f"\nexamples: {k}")
            for line in lines:
                print("  " + line)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lang", required=True,
                    choices=[row.name for row in LANGUAGES if row.syntax])
    ap.add_argument("--source", required=True, help="a tree of code")
    ap.add_argument("--examples", type=int, default=10, metavar="N")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    ap.add_argument("--keep-oracle", metavar="FILE", help="the oracle's answers: read from "
                    "FILE when it exists, else written there")
    ap.add_argument("--speed", type=int, default=0, metavar="ROUNDS",
                    help="also time the chunker alone, median of ROUNDS")
    args = ap.parse_args()
    if not os.path.isdir(args.source):
        ap.error(f"--source {args.source!r} is not a directory")
    res, texts = evaluate(args.source, args.lang, args.examples, args.keep_oracle)
    if args.speed:
        res["speed"] = speed(args.lang, texts, args.speed)
    if args.json:
        print(json.dumps(res, indent=1))
    else:
        report(res)
        if args.speed:
            print(f"\nspeed: {res['speed']}")
    return 1 if args.check and not res["targets_met"] else 0


if __name__ == "__main__":
    sys.exit(main())
