#!/usr/bin/env python3
"""Build a "doc summary -> function" dev set for a language of the tree-sitter driver (Go,
Java, Rust, C, C++) from a real repository, in the format of the eval kits
(/work/shared/eval) and of bench/make_py_devset.py, with the language's compiler's parser
(bench/oracle_lang.py's oracle) finding the functions and their doc comments.

    python bench/make_devset.py --lang go REPO_DIR OUT_DIR --repo owner/name [--n 400]
                                [--seed 1] [--under DIR ...]

Writes, outside this repository (the data derives from fetched code: never commit it):
  OUT_DIR/corpus/...                   every included file, the comments directly above each
                                       function and type removed with their lines
  OUT_DIR/dev-OWNER__NAME.jsonl        the queries: id, repo, commit, query, file, class,
                                       method, sig_line, start_line, end_line, body_lines
  OUT_DIR/dev-OWNER__NAME.files.json   functions per corpus file (run_eval.py --subset)

Inclusion: the files a build indexes (the tool's own walk) of the language, under --under
when given, leaving out test code (the language's row says which), examples, docs,
benchmarks, vendored and generated code (a "generated"/"do not edit" comment in the first 15
lines), and files the oracle cannot parse. Line numbers in the queries refer to the
stripped copy.

Queries: the functions and methods with a body (the oracle's units) that have a doc
comment. The query is the doc's first sentence, cut before 400 characters. Left out:
summaries under 6 words, boilerplate (TODO, deprecated, "see ...", a copyright or license
line), bodies under 3 lines, and any summary shared by two functions. N of the rest are
drawn with random.Random(SEED).
"""
import argparse
import importlib.util
import json
import random
import re
import subprocess
import sys
from pathlib import Path

from codebase_rag.languages import LANGUAGES, by_name
from codebase_rag.walk import read_source

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("oracle_lang", ROOT / "bench" / "oracle_lang.py")
oracle = importlib.util.module_from_spec(spec)
spec.loader.exec_module(oracle)

_EXCLUDED_DIR = re.compile(
    r"^(?:tests?|testing|testdata|test_?utils|fixtures?|mocks?|docs?|examples?|samples?|"
    r"demos?|benches|benchmarks?|bench|vendor|third[_-]?party|externals?|deps|generated|"
    r"_generated)$", re.IGNORECASE)
_GENERATED = re.compile(r"@generated\b|\bdo not (?:edit|modify)\b|\bauto-?generated\b|"
                        r"\bcode generated\b", re.IGNORECASE)
_BOILERPLATE = re.compile(
    r"^(?:todo|fixme|xxx|hack|deprecated|see\b|same as|alias (?:for|of)|overrides?\b|"
    r"inherit|implements?\b|copyright|licen[cs]ed?\b|spdx|nolint|lint:|go:)", re.IGNORECASE)
_NOT_CODE = re.compile(r"^\s*(?://.*|/\*.*|\*.*)?$|^[\s()\[\]{},;:]*$")
MIN_WORDS, MAX_CHARS, MIN_BODY_LINES = 6, 400, 3
FUNCTION_KINDS = {"function", "method", "constructor", "initializer"}


def summary(doc):
    """The doc's first sentence, cut before MAX_CHARS ("" when there is none)."""
    text = " ".join(doc.split())
    cut = re.search(r"(?<=[.!?])\s", text)
    text = text[:cut.start()] if cut else text
    return text if len(text) <= MAX_CHARS else ""


def comment_lines(lines, unit):
    """The comment lines between the unit's window and its name's line (its doc comment,
    Rust's `///` among its attributes), 1-based: a `/* ... */` block whole, whatever its
    inner lines start with (rapidjson's `/*!` blocks have lines of bare text)."""
    found, inside = set(), False
    for n in range(unit["window"], unit["sig"]):
        text = lines[n - 1].strip()
        if inside or text.startswith("/*"):
            found.add(n)
            inside = "*/" not in (text if inside else text[2:])
        elif text.startswith("//"):
            found.add(n)
    return found


def build(lang, repo_dir, out_dir, n, seed, under=()):
    row = by_name(lang)
    files = []
    for rel, path in oracle.files_of(repo_dir, lang):
        parts = rel.split("/")
        if under and not any(rel.startswith(u.rstrip("/") + "/") for u in under):
            continue
        if row.is_test(rel) or any(_EXCLUDED_DIR.match(p) for p in parts[:-1]):
            continue
        text = read_source(path)
        if text is None or any(_GENERATED.search(x) for x in text.split("\n")[:15]):
            continue
        files.append((rel, path, text))
    found = oracle.run_oracle(lang, [p for _, p, _ in files])
    candidates, per_file, left_out = [], {}, 0
    corpus = Path(out_dir) / "corpus"
    for rel, path, text in files:
        got = found.get(path, {"error": "no answer"})
        if "error" in got:
            left_out += 1
            continue
        lines = text.split("\n")
        units = oracle.widen(got["units"], lines)
        drop = set()
        for u in units:
            drop |= comment_lines(lines, u)
        shift = [0] * (len(lines) + 2)          # lines dropped before each line
        for k in range(1, len(lines) + 1):
            shift[k] = shift[k - 1] + ((k - 1) in drop)
        kept = [x for k, x in enumerate(lines, 1) if k not in drop]
        dst = corpus / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text("\n".join(kept), encoding="utf-8", newline="\n")
        functions = [u for u in units if u["kind"] in FUNCTION_KINDS]
        per_file[rel] = len(functions)
        for u in functions:
            query = summary(u["doc"])
            if len(query.split()) < MIN_WORDS or _BOILERPLATE.match(query):
                continue
            body = sum(1 for x in lines[u["body"]:u["end"]] if not _NOT_CODE.match(x))
            if body < MIN_BODY_LINES:
                continue
            first = min([k for k in range(u["window"], u["sig"] + 1) if k not in drop],
                        default=u["sig"])
            candidates.append({"query": query, "file": rel, "class": u["chain"],
                               "method": u["name"], "sig_line": u["sig"] - shift[u["sig"]],
                               "start_line": first - shift[first],
                               "end_line": u["end"] - shift[u["end"]], "body_lines": body})
    seen = {}
    for c in candidates:
        key = c["query"].lower()
        seen[key] = seen.get(key, 0) + 1
    unique = [c for c in candidates if seen[c["query"].lower()] == 1]
    chosen = random.Random(seed).sample(unique, min(n, len(unique)))
    chosen.sort(key=lambda c: (c["file"], c["start_line"]))
    return chosen, per_file, left_out, len(candidates), len(unique)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lang", required=True,
                    choices=[row.name for row in LANGUAGES if row.syntax])
    ap.add_argument("repo_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--repo", required=True, help="owner/name, recorded in every query")
    ap.add_argument("--commit", help="recorded in every query (default: the tree's .commit "
                                     "file, else its git HEAD)")
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--under", action="append", default=[], metavar="DIR",
                    help="only files under this folder of the tree (repeatable)")
    a = ap.parse_args(argv)
    out = Path(a.out_dir).resolve()
    if out == ROOT or ROOT in out.parents:
        ap.error(f"{out} is inside this repository; the data derives from fetched code")
    if (out / "corpus").exists() and any((out / "corpus").iterdir()):
        ap.error(f"{out / 'corpus'} is not empty (use a fresh OUT_DIR)")
    commit = a.commit or ((Path(a.repo_dir) / ".commit").read_text().strip()
                          if (Path(a.repo_dir) / ".commit").is_file() else
                          subprocess.run(["git", "-C", a.repo_dir, "rev-parse", "HEAD"],
                                         capture_output=True, text=True).stdout.strip())
    chosen, per_file, left_out, n_cand, n_unique = build(a.lang, a.repo_dir, out, a.n, a.seed,
                                                         a.under)
    stem = "dev-" + a.repo.replace("/", "__")
    with open(out / f"{stem}.jsonl", "w", encoding="utf-8", newline="\n") as f:
        for i, c in enumerate(chosen, 1):
            row = {"id": f"{a.repo.replace('/', '__')}#{i:04d}", "repo": a.repo, "commit": commit}
            f.write(json.dumps({**row, **c}, ensure_ascii=False) + "\n")
    with open(out / f"{stem}.files.json", "w", encoding="utf-8") as f:
        json.dump({"commit": commit, "methods_per_file": per_file}, f, indent=1)
    print(f"{a.repo}@{commit[:12]} ({a.lang}): {len(per_file)} files in the corpus "
          f"({left_out} the oracle cannot parse left out), {sum(per_file.values())} functions; "
          f"{n_cand} summaries pass the filters, {n_unique} unique; {len(chosen)} queries "
          f"(seed {a.seed}) -> {out / (stem + '.jsonl')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
