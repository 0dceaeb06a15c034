#!/usr/bin/env python3
"""Every dev set in one command: the eval kits' run_eval.py on the summary and natural-language
sets of every language (bench/devsets/README.md), the tool against the seed baseline, printed
as one markdown table.

    python bench/dev_evals.py [--project CHECKOUT] [--work DIR] [--sets NAME ...]
                              [--systems tool seed naive] [--env KEY=VALUE ...] [--tag NAME]
                              [--subset CHUNKS] [--fresh] [--out TABLE.md]

Sets (paths are options; the defaults are the shared layout under /work/repos, made by
bench/devsets/prepare.sh; bench/devsets/README.md lists them). A set is named LANG-sum or
LANG-nl, LANG the language's short name: its name in codebase_rag/languages.py, or its
first extension where the name is longer than four letters (cs, ts, js, py, go, java,
rust, c, cpp).
  cs-sum   C# summaries, data/dev-ppy__osu.jsonl on the stripped corpus (kit make_corpus.py)
  cs-nl    C# natural language, data/dev-nl-osu.jsonl on the original osu tree, per kind
  ts-sum   TS summaries, ts/data/dev-typeorm__typeorm.jsonl on typeorm-stripped
  ts-nl    TS natural language, ts/data/dev-nl-typeorm.jsonl on typeorm-nl, per kind
  py-sum   Python summaries, bench/make_py_devset.py's set (networkx) on its corpus
  LANG-sum any other language: the set bench/make_devset.py wrote to DEVSETS/NAME-REPO/
           (dev-*.jsonl and corpus/; NAME the language's name or short name)
  LANG-nl  natural language, per kind: the committed bench/devsets/nl-NAME-REPO.jsonl,
           asked on the original tree REPOS/REPO (doc comments kept)
One set per name: two files or folders of one language stop the run.

Systems:
  tool     --project's index.py / query.py (default: a snapshot of this checkout, so edits
           made meanwhile do not leak in)
  seed     the original 50-line design (bench/naive_index.py --chunker seed: a regex
           brace-counter, raw chunk text, MiniLM through Chroma's embedding function;
           bench/naive_query.py: vector top k, the whole chunk as text), FILE_EXT set per
           language (its row's extensions); not run on the C# sets unless named in
           --seed-sets (osu takes ~10 min; the kit README has its published C# numbers)
  naive    bench/naive_index.py --chunker language: this project's chunker for each
           language, raw chunk text, no header, no windows, vector only

--subset CHUNKS asks the C# sets on run_eval.py's seeded subset of osu (the targets' files
and a sample of the rest, about CHUNKS chunks, the same files for every model; each
index keeps its copy beside it): a model selection in minutes instead of an hour.

Each (system, set, index-time environment) keeps its index in WORK/db-...; a later run
reuses it (run_eval.py --skip-index) unless --fresh. --env KEY=VALUE sets a setting of
codebase_rag/config.py for the tool's runs (CODEBASE_RAG_HEADER and CODEBASE_RAG_PRECISION
change the index, so they get their own; the rest are query-time and share the default
index); --tag names the variant's reports. The corpora are fetched public code: keep them
and WORK outside this repository.
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from codebase_rag.languages import LANGUAGES, extensions_read

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
KIT = Path("/work/shared/eval")
REPOS = Path("/work/repos")
KINDS = ("agent", "behaviour", "grep-hard", "locate")
INDEX_TIME = ("CODEBASE_RAG_HEADER", "CODEBASE_RAG_PRECISION", "CODEBASE_RAG_MODEL")


def short(lang):
    """A language's word in set names: its name, or its first extension when the name is
    longer than four letters (csharp -> cs, python -> py, rust stays rust)."""
    return lang.name if len(lang.name) <= 4 else lang.extensions[0].lstrip(".")


def language_named(word):
    """The Language whose name or short name is this word, or None."""
    return next((lang for lang in LANGUAGES if word in (lang.name, short(lang))), None)


def extensions_of(lang):
    return ",".join(extensions_read(lang))                # C++: a .h too


def fail(message):
    print(f"dev_evals.py: {message}", file=sys.stderr)
    sys.exit(2)


def found_sets(paths, kind, where):
    """{LANG-kind: (path, repo, Language)} of the (path, "WORD-REPO") given, WORD a language's
    name or short name; one per language."""
    found = {}
    for path, word_repo in paths:
        word, _, repo = word_repo.partition("-")
        lang = language_named(word)
        if lang is None or not repo:
            fail(f"{path}: not named after a language and a repository (WORD-REPO, WORD one "
                 f"of {', '.join(short(lang) for lang in LANGUAGES)})")
        name = f"{short(lang)}-{kind}"
        if name in found:
            fail(f"{where}: two {lang.name} {kind} sets ({found[name][0].name}, {path.name}); "
                 f"keep one")
        found[name] = (path, repo, lang)
    return found


def sets(args):
    py = Path(args.py_dir)
    kit = {
        "cs-sum": (KIT / "data/dev-ppy__osu.jsonl", Path(args.osu_corpus), ".cs"),
        "cs-nl": (KIT / "data/dev-nl-osu.jsonl", Path(args.osu_tree), ".cs"),
        "ts-sum": (KIT / "ts/data/dev-typeorm__typeorm.jsonl", Path(args.typeorm_stripped),
                   ".ts,.tsx,.mts,.cts,.js,.jsx,.mjs,.cjs"),
        "ts-nl": (KIT / "ts/data/dev-nl-typeorm.jsonl", Path(args.typeorm_nl),
                  ".ts,.tsx,.mts,.cts,.js,.jsx,.mjs,.cjs"),
        "py-sum": (py / "dev-networkx__networkx.jsonl", py / "corpus", ".py")}
    summaries = found_sets([(folder, folder.name) for folder in
                            sorted(Path(args.devsets).glob("*-*")) if folder.is_dir()
                            and not folder.name.endswith(".part")], "sum", args.devsets)
    nl = found_sets([(data, data.stem[len("nl-"):]) for data in
                     sorted(Path(args.nl_dir).glob("nl-*-*.jsonl"))], "nl", args.nl_dir)
    found = {}
    for name, (folder, _, lang) in summaries.items():
        data = sorted(folder.glob("dev-*.jsonl"))
        if len(data) != 1:
            fail(f"{folder}: {len(data)} dev-*.jsonl files; keep one")
        found[name] = (data[0], folder / "corpus", extensions_of(lang))
    for name, (data, repo, lang) in nl.items():
        found[name] = (data, Path(args.repos) / repo, extensions_of(lang))
    twice = sorted(set(kit) & set(found))
    if twice:
        fail(f"{', '.join(twice)}: the eval kits have these sets already; keep one")
    return {**kit, **found}


SHIM = """import os, sys
here = os.path.dirname(os.path.abspath(__file__))
os.execv(sys.executable, [sys.executable, os.path.join(here, "bench", {script!r})]
         + {extra!r} + sys.argv[1:])
"""


def seed_project(work, chunker):
    """A folder with index.py and query.py that run copies of bench/naive_*.py."""
    proj = work / f"{chunker}-project"
    (proj / "bench").mkdir(parents=True, exist_ok=True)
    for name in ("naive_index.py", "naive_query.py"):
        shutil.copy2(HERE / name, proj / "bench" / name)
    (proj / "index.py").write_text(SHIM.format(script="naive_index.py",
                                               extra=["--chunker", chunker]))
    (proj / "query.py").write_text(SHIM.format(script="naive_query.py", extra=["--own-db"]))
    return proj


def snapshot(work):
    """A copy of this checkout's code (git-tracked files plus uncommitted edits)."""
    dest = work / "tool-project"
    shutil.rmtree(dest, ignore_errors=True)
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard"],
                           capture_output=True, text=True, check=True).stdout.split("\n")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file() and not src.is_symlink():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    for link in (".venv", ".cache/node"):
        if (ROOT / link).exists():
            (dest / link).parent.mkdir(parents=True, exist_ok=True)
            (dest / link).symlink_to((ROOT / link).resolve())
    return dest


def env_key(env):
    index_env = {k: v for k, v in env.items() if k in INDEX_TIME}
    return hashlib.sha1(json.dumps(index_env, sort_keys=True).encode()).hexdigest()[:8] \
        if index_env else "default"


def run_one(args, system, project, name, data, corpus, ext, env):
    key = env_key(env) if system == "tool" else "default"
    cut = args.subset if name.startswith("cs-") else None
    db = args.work / (f"db-{system}-{name}-{key}" + (f"-subset{cut}" if cut else ""))
    corpus_copy = db.with_suffix(".subset")        # run_eval.py's subset, kept with its index
    subset = ["--subset", str(cut), "--subset-dir", str(corpus_copy)] if cut else []
    done = db.with_suffix(".built")
    out = args.work / f"{system}-{name}-{args.tag if system == 'tool' else 'default'}.json"
    if args.fresh or not done.is_file():
        shutil.rmtree(db, ignore_errors=True)
        shutil.rmtree(corpus_copy, ignore_errors=True)
        done.unlink(missing_ok=True)
        reuse = []
    else:
        reuse = ["--skip-index"]
    run_env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    if system == "tool":
        run_env.update(env)
    else:
        run_env.update({"FILE_EXT": ext, "PYTHONPATH": str(args.code)})  # naive_*.py import it
    cmd = ["nice", "-n", "5", args.python, str(KIT / "run_eval.py"), "--project", str(project),
           "--python", args.python, "--data", str(data), "--corpus", str(corpus),
           "--db", str(db), "--keep-db", "--out", str(out)] + subset + reuse
    started = time.time()
    proc = subprocess.run(cmd, env=run_env, capture_output=True, text=True)
    line = (proc.stdout.strip().splitlines() or [""])[-1]
    print(f"[{system} {name} {args.tag}] {time.time() - started:.0f} s: "
          f"{line or proc.stderr.strip()[-2000:]}", flush=True)
    if proc.returncode == 0:
        if not reuse:
            done.write_text(json.dumps({"index_seconds": json.loads(out.read_text())
                                        .get("index_seconds"), "env": env}))
        return out
    return None


def metrics(per_query):
    n = max(1, len(per_query))
    ranks = [q["rank"] for q in per_query]
    return {"n": len(per_query),
            "R@1": sum(1 for r in ranks if r and r <= 1) / n,
            "R@5": sum(1 for r in ranks if r and r <= 5) / n,
            "R@10": sum(1 for r in ranks if r and r <= 10) / n,
            "MRR@10": sum(1 / r for r in ranks if r and r <= 10) / n,
            "tokens@5": sum(sum(t["tokens"] for t in q["top"][:5]) for q in per_query) / n}


def cells(report, kind=None):
    if report is None:
        return ["-"] * 5
    pq = [q for q in report["per_query"] if kind is None or q.get("kind") == kind]
    m = metrics(pq)
    return [f"{m['R@1']:.3f}", f"{m['R@5']:.3f}", f"{m['R@10']:.3f}", f"{m['MRR@10']:.3f}",
            f"{m['tokens@5']:.0f}"]


def table(args, names, reports):
    systems = [s for s in ("tool", "seed", "naive") if s in args.systems]
    head = ["set", "n"] + [f"{s} {m}" for s in systems
                           for m in ("R@1", "R@5", "R@10", "MRR@10", "tokens@5")]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for name in names:
        got = {s: reports.get((s, name)) for s in systems}
        any_report = next((r for r in got.values() if r), None)
        if any_report is None:
            continue
        n = len(any_report["per_query"])
        lines.append("| " + " | ".join([name, str(n)] + [c for s in systems
                                                          for c in cells(got[s])]) + " |")
        kinds = sorted({q.get("kind") for q in any_report["per_query"] if q.get("kind")})
        for kind in kinds:
            k_n = sum(1 for q in any_report["per_query"] if q.get("kind") == kind)
            lines.append("| " + " | ".join([f"{name}: {kind}", str(k_n)]
                                           + [c for s in systems
                                              for c in cells(got[s], kind)]) + " |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--project", type=Path, help="the tool's checkout (default: a snapshot of "
                   "this one)")
    p.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    p.add_argument("--work", type=Path, default=Path("/work/evals-run"))
    p.add_argument("--sets", nargs="+", help="default: every set there is")
    p.add_argument("--systems", nargs="+", default=["tool", "seed"],
                   choices=["tool", "seed", "naive"])
    p.add_argument("--seed-sets", nargs="+", help="the sets the seed and naive baselines run "
                   "on (default: all but the C# ones)")
    p.add_argument("--env", nargs="*", default=[], metavar="KEY=VALUE")
    p.add_argument("--tag", default="default", help="names the tool's reports for this --env")
    p.add_argument("--fresh", action="store_true", help="rebuild every index")
    p.add_argument("--subset", type=int, metavar="CHUNKS", help="the C# sets on a seeded "
                   "subset of osu of about CHUNKS chunks (the targets' files always in)")
    p.add_argument("--table-only", action="store_true", help="print the table of the reports "
                   "already in WORK")
    p.add_argument("--osu-tree", default=str(REPOS / "osu"))
    p.add_argument("--osu-corpus", default=str(REPOS / "CORPORA/ppy__osu"))
    p.add_argument("--typeorm-stripped", default=str(REPOS / "CORPORA/typeorm-stripped"))
    p.add_argument("--typeorm-nl", default=str(REPOS / "CORPORA/typeorm-nl"))
    p.add_argument("--py-dir", default=str(REPOS / "CORPORA/networkx-py-dev"))
    p.add_argument("--devsets", default="/work/devsets", help="bench/make_devset.py's sets, "
                   "one folder LANG-REPO each")
    p.add_argument("--nl-dir", default=str(HERE / "devsets"), help="the NL sets, "
                   "nl-LANG-REPO.jsonl each")
    p.add_argument("--repos", default=str(REPOS), help="the original trees the NL sets are "
                   "asked on, REPOS/REPO")
    p.add_argument("--out", type=Path, help="also write the table here")
    args = p.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    env = dict(kv.split("=", 1) for kv in args.env)
    all_sets = sets(args)
    unknown = [n for n in args.sets or () if n not in all_sets]
    if unknown:
        fail(f"no set {', '.join(unknown)}; there are {', '.join(all_sets)} "
             f"(bench/devsets/README.md)")
    names = [n for n in all_sets if args.sets is None or n in args.sets]
    absent = {n: next(p for p in all_sets[n][:2] if not p.exists()) for n in names
              if not all(p.exists() for p in all_sets[n][:2])}
    if absent and not args.table_only:
        where = "; ".join(f"{n}: {path}" for n, path in absent.items())
        if args.sets:
            fail(f"not there: {where}. Make them with bash bench/devsets/prepare.sh")
        print(f"dev_evals.py: left out, not there: {where}", file=sys.stderr)
        names = [n for n in names if n not in absent]
    args.seed_sets = args.seed_sets or [n for n in names if not n.startswith("cs-")]
    tool = args.project.resolve() if args.project else None
    reports = {}
    if not args.table_only:
        tool = tool or snapshot(args.work)
        args.code = tool                 # the seed scripts import codebase_rag from there
        for name in names:
            data, corpus, ext = all_sets[name]
            for system in args.systems:
                if system != "tool" and name not in args.seed_sets:
                    continue
                project = tool if system == "tool" else seed_project(args.work, {
                    "seed": "seed", "naive": "language"}[system])
                run_one(args, system, project, name, data, corpus, ext,
                        env if system == "tool" else {})
    for name in names:
        for system in ("tool", "seed", "naive"):
            tag = args.tag if system == "tool" else "default"
            path = args.work / f"{system}-{name}-{tag}.json"
            if path.is_file():
                reports[(system, name)] = json.loads(path.read_text())
    text = table(args, names, reports)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
