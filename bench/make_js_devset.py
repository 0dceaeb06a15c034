#!/usr/bin/env python3
"""Build a JavaScript/TypeScript "JSDoc summary -> function" dev set from a real repository,
in the format of the eval kits (/work/shared/eval) and of bench/make_devset.py, with the
TypeScript compiler (the kit's ts_oracle.js) finding the functions and their JSDoc.

    python bench/make_js_devset.py REPO_DIR OUT_DIR --repo owner/name [--n 400] [--seed 1]
                                   [--under DIR ...] [--kit TS_KIT_DIR] [--verify EVAL_DIR]

Writes, outside this repository (the data derives from fetched code: never commit it):
  OUT_DIR/corpus/...                   every included file, normalised, JSDoc stripped
  OUT_DIR/dev-OWNER__NAME.jsonl        the queries: id, repo, commit, query, file, class,
                                       method, sig_line, start_line, end_line, body_lines
  OUT_DIR/dev-OWNER__NAME.files.json   functions per corpus file (run_eval.py --subset)

Corpus: the files the TypeScript kit includes (its make_corpus_ts.py: extensions, tests,
examples, docs, vendored, generated and minified code left out, its per-repository rules),
under --under when given, normalised (UTF-8, LF) and with every JSDoc block removed by the
kit's strip (the compiler's scanner; lines that held only JSDoc are deleted). The stripped
file is parsed again and each function paired with its original, so line numbers in the
queries refer to the stripped copy.

Queries: the oracle's function units (functions, methods, constructors, accessors) with an
attached JSDoc. The query is the description's first sentence (before the first tag and the
first blank line; a block of tags only gives its @summary or @description), `{@link X|text}`
read as text, `{@link X}` as X, backticks dropped, cut before 400 characters. Left out, as
make_devset.py and make_py_devset.py do: summaries under 6 words, boilerplate (the Python
kit's list, {@inheritDoc}), bodies under 3 lines (the oracle's body_lines), and any summary
shared by two functions. N of the rest are drawn with random.Random(SEED).

Needs node and TypeScript 5: TS_ORACLE_TYPESCRIPT, else .cache/node/node_modules/typescript
under this project's root (the README's install line puts it there).

--verify EVAL_DIR reads the queries back with EVAL_DIR/run_eval.py's loader and checks its
hit rule: a result spanning exactly the target is a hit, one 11 lines longer is not, and the
TypeScript/JavaScript chunker's chunk for each target is a hit.
"""
import argparse
import importlib.util
import json
import os
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_KIT = Path("/work/shared/eval/ts")
LOCAL_TYPESCRIPT = ROOT / ".cache" / "node" / "node_modules" / "typescript"
MIN_WORDS, MAX_CHARS, MIN_BODY_LINES = 6, 400, 3


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


py_devset = load("make_py_devset", ROOT / "bench" / "make_py_devset.py")
BOILERPLATE = re.compile(py_devset._BOILERPLATE.pattern + r"|^\{@inheritdoc\}",
                         re.IGNORECASE)


def inline(text):
    """JSDoc inline markup read as a sentence reads."""
    text = re.sub(r"\{@link(?:code|plain)?\s+([^}|\s]+)(?:\s*\|\s*|\s+)([^}]+)\}", r"\2", text)
    text = re.sub(r"\{@link(?:code|plain)?\s+([^}]+)\}", r"\1", text)
    return " ".join(text.replace("`", "").split())


def summary(jsdoc):
    """The first sentence of a /** */ block's description, "" when there is none."""
    body = re.sub(r"^/\*\*|\*/$", "", jsdoc.strip())
    parts, tag = {None: []}, None
    for line in (re.sub(r"^\s*\*\s?", "", x) for x in body.split("\n")):
        m = re.match(r"\s*@(\w+)\s*(.*)", line)
        if m:
            tag = m.group(1).lower()
            parts.setdefault(tag, []).append(m.group(2))
        else:
            parts.setdefault(tag, []).append(line)
    for key in (None, "summary", "description"):
        para = re.split(r"\n\s*\n", "\n".join(parts.get(key, [])).strip())[0]
        text = inline(para)
        if text:
            cut = re.search(r"(?<=[.!?])\s", text)
            text = text[:cut.start()] if cut else text
            return text if len(text) <= MAX_CHARS else ""
    return ""


def unit_key(u):
    return (u["kind"], u["form"], tuple(u["container"]), u["name"])


def build(kit, repo_dir, out_dir, repo, n, seed, under=()):
    corpus = Path(out_dir) / "corpus"
    candidates, per_file, reasons = [], {}, {}
    for rel, path in kit.iter_included(repo_dir, repo):
        if under and not any(rel.startswith(u.rstrip("/") + "/") for u in under):
            continue
        text = kit.read_text(path)
        stripped, _ = kit.strip_jsdoc(rel, text)
        old = [u for u in kit.tsoracle.analyse(rel, text, doc=True)["units"]
               if u["kind"] in kit.tsoracle.FUNCTION_KINDS]
        new = [u for u in kit.tsoracle.analyse(rel, stripped)["units"]
               if u["kind"] in kit.tsoracle.FUNCTION_KINDS]
        if [unit_key(u) for u in old] != [unit_key(u) for u in new]:
            reasons["strip-failed"] = reasons.get("strip-failed", 0) + 1
            continue
        dst = corpus / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(stripped, encoding="utf-8", newline="\n")
        per_file[rel] = len(new)
        for u, s in zip(old, new):
            if not u.get("jsdoc"):
                continue
            query = summary(u["jsdoc"]["text"])
            if len(query.split()) < MIN_WORDS or BOILERPLATE.match(query) \
                    or s["body_lines"] < MIN_BODY_LINES:
                continue
            candidates.append({"query": query, "file": rel,
                               "class": ".".join(p for p in s["container"] if p),
                               "method": s["name"], "sig_line": s["sig_line"],
                               "start_line": s["start_line"], "end_line": s["end_line"],
                               "body_lines": s["body_lines"]})
    seen = {}
    for c in candidates:
        key = c["query"].lower()
        seen[key] = seen.get(key, 0) + 1
    unique = [c for c in candidates if seen[c["query"].lower()] == 1]
    chosen = random.Random(seed).sample(unique, min(n, len(unique)))
    chosen.sort(key=lambda c: (c["file"], c["start_line"]))
    return chosen, per_file, reasons, len(candidates), len(unique)


def verify(eval_dir, data_path, corpus):
    """Read the set back with run_eval.py and check its hit rule on it. [] when all is well."""
    run_eval = load("run_eval", Path(eval_dir) / "run_eval.py")
    from codebase_rag.chunkers import typescript as chunker
    bad, texts = [], {}
    queries = run_eval.load_queries(str(data_path))
    for q in queries:
        where = f"{q['id']} {q['file']}:{q['start_line']}"
        if "\n" in q["query"] or not q["query"].strip():
            bad.append(f"{where}: query is empty or has a newline")
        path = Path(corpus) / q["file"]
        if q["file"] not in texts:
            texts[q["file"]] = path.read_text(encoding="utf-8") if path.is_file() else None
        text = texts[q["file"]]
        if text is None:
            bad.append(f"{where}: not in the corpus")
            continue
        lines = text.split("\n")
        if not any(re.search(r"\b" + re.escape(q["method"]) + r"\b", x)
                   for x in lines[q["start_line"] - 1:q["sig_line"]]) \
                and q["method"] not in ("constructor", ""):
            bad.append(f"{where}: {q['method']} is not named on its declaration lines")
        exact = {"file": q["file"], "start_line": q["start_line"], "end_line": q["end_line"]}
        wide = dict(exact, end_line=q["end_line"] + 11)
        if not run_eval.is_hit(exact, q, 10, [str(corpus)]) or \
                run_eval.is_hit(wide, q, 10, [str(corpus)]):
            bad.append(f"{where}: the hit rule does not hold on the exact span")
        found = [c for c in chunker.chunk(text, Path(q["file"]).suffix)
                 if run_eval.is_hit({"file": q["file"], "start_line": c.start_line,
                                     "end_line": c.end_line}, q, 10, [str(corpus)])]
        if not found:
            bad.append(f"{where}: no chunk of the TypeScript/JavaScript chunker is a hit")
    return bad, len(queries)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("repo_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--repo", required=True, help="owner/name, recorded in every query")
    ap.add_argument("--commit", help="recorded in every query (default: the tree's .commit "
                                     "file, else its git HEAD)")
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--under", action="append", default=[], metavar="DIR",
                    help="only files under this folder of the tree (repeatable)")
    ap.add_argument("--kit", type=Path, default=DEFAULT_KIT,
                    help=f"the TypeScript eval kit (default {DEFAULT_KIT})")
    ap.add_argument("--verify", metavar="EVAL_DIR", help="check the set with EVAL_DIR/run_eval.py")
    a = ap.parse_args(argv)
    out = Path(a.out_dir).resolve()
    if out == ROOT or ROOT in out.parents:
        ap.error(f"{out} is inside this repository; the data derives from fetched code")
    if (out / "corpus").exists() and any((out / "corpus").iterdir()):
        ap.error(f"{out / 'corpus'} is not empty (use a fresh OUT_DIR)")
    if not (a.kit / "make_corpus_ts.py").is_file():
        ap.error(f"no make_corpus_ts.py in {a.kit} (pass the TypeScript eval kit with --kit)")
    if "TS_ORACLE_TYPESCRIPT" not in os.environ and LOCAL_TYPESCRIPT.is_dir():
        os.environ["TS_ORACLE_TYPESCRIPT"] = str(LOCAL_TYPESCRIPT)
    kit = load("make_corpus_ts", a.kit / "make_corpus_ts.py")
    commit_file = Path(a.repo_dir) / ".commit"
    commit = a.commit or (commit_file.read_text().strip() if commit_file.is_file()
                          else py_devset.git_commit(a.repo_dir))
    chosen, per_file, reasons, n_candidates, n_unique = build(kit, a.repo_dir, out, a.repo,
                                                              a.n, a.seed, a.under)
    stem = "dev-" + a.repo.replace("/", "__")
    data_path = out / f"{stem}.jsonl"
    with open(data_path, "w", encoding="utf-8", newline="\n") as f:
        for i, c in enumerate(chosen, 1):
            row = {"id": f"{a.repo.replace('/', '__')}#{i:04d}", "repo": a.repo, "commit": commit}
            f.write(json.dumps({**row, **c}, ensure_ascii=False) + "\n")
    with open(out / f"{stem}.files.json", "w", encoding="utf-8") as f:
        json.dump({"commit": commit, "methods_per_file": per_file}, f, indent=1)
    left_out = ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())) or "none"
    print(f"{a.repo}@{commit[:12]}: {len(per_file)} files in the corpus ({left_out} left out), "
          f"{sum(per_file.values())} functions; {n_candidates} summaries pass the filters, "
          f"{n_unique} unique; {len(chosen)} queries (seed {a.seed}) -> {data_path}")
    if a.verify:
        bad, n = verify(a.verify, data_path, out / "corpus")
        print(f"verify: {n} queries read by run_eval.py; {len(bad)} problems")
        for line in bad[:10]:
            print("  " + line)
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
