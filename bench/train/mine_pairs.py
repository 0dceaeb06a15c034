#!/usr/bin/env python3
"""Mine (description, member) pairs from public repositories, to fine-tune the model.

    python bench/train/mine_pairs.py [--mirror /work/.mirror] [--data /work/train-data]
                                     [--pin] [--target 25000] [--seed 1]

A pair is a member's doc comment (the description) and the text the index embeds for that
member when it has no doc comment (the member): chunked by codebase_rag's own chunkers,
header, body and first window made by codebase_rag.text exactly as indexer.build_file makes
them, with the member's own doc left out of both (the header would otherwise carry the
answer). A member gives its summary's first sentence, and may give a second phrasing: a
later sentence of the summary, else its <returns> / @returns / Returns text.

Repositories are REPOS below, each read at the commit the manifest pins (--pin takes each
mirror's HEAD instead and rewrites the manifest). Each is fetched as a bare git directory
(the search tool's `fetch`, under --mirror) and extracted with `git archive` into
DATA/repos/OWNER__NAME, outside the project: never commit fetched code.

Filters, as the eval kits apply them (/work/shared/eval, /work/shared/eval/ts,
bench/make_py_devset.py): each kit's own file rules (tests, generated, vendored, examples,
docs), the project's test-code rule on top, summaries of 6 words or more that are not
boilerplate, bodies of 3 code lines or more, summaries unique within their repository,
members unique within their repository. Every pair whose description or member equals,
whitespace normalised, a question or a target's code of any set in the eval kits is
removed, and counted.

Writes DATA/pairs/train.jsonl and DATA/pairs/valid.jsonl (the HELD_OUT repositories, for a
validation loss), one pair a line: anchor, positive, negative (another member of the same
class, else of the same file, else of the same folder), repo, lang, file, line, source.
Sorted and seeded: the same commits, chunkers and seed give the same bytes; the manifest
(bench/train/manifest.json) records each file's sha256 to prove it.
"""
import argparse
import ast
import dataclasses
import hashlib
import html
import importlib.util
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

from codebase_rag.embed import count_tokens
from codebase_rag.export import resolve_model
from codebase_rag.languages import chunk_source, language_for
from codebase_rag.text import chunk_body, chunk_header, member_windows

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

EVAL = Path("/work/shared/eval")
os.environ.setdefault("TS_ORACLE_TYPESCRIPT", str(ROOT / ".cache/node/node_modules/typescript"))
MANIFEST = HERE / "manifest.json"
# (owner/name, language group): the issue's list, then ADDED (the same kind of well-known
# library, to make up for the listed ones that could not be mined: NOT_MINED)
ISSUE_REPOS = [(r, "csharp") for r in (
    "JamesNK/Newtonsoft.Json", "App-vNext/Polly", "Humanizr/Humanizer", "nodatime/nodatime",
    "AutoMapper/AutoMapper", "FluentValidation/FluentValidation", "serilog/serilog",
    "NLog/NLog", "restsharp/RestSharp", "jbogard/MediatR", "AvaloniaUI/Avalonia")] + \
    [(r, "ts/js") for r in (
        "vuejs/core", "sveltejs/svelte", "immerjs/immer", "date-fns/date-fns", "lodash/lodash",
        "axios/axios", "mobxjs/mobx", "reduxjs/redux-toolkit", "colinhacks/zod",
        "chartjs/Chart.js", "Leaflet/Leaflet")] + \
    [(r, "python") for r in (
        "encode/starlette", "tiangolo/fastapi", "pytest-dev/pytest", "python-attrs/attrs",
        "aio-libs/aiohttp", "celery/celery", "sphinx-doc/sphinx")]
ADDED = [(r, "csharp") for r in (
    "akkadotnet/akka.net", "dotnet/reactive", "mathnet/mathnet-numerics",
    "mongodb/mongo-csharp-driver", "npgsql/npgsql", "dotnet/efcore",
    "StackExchange/StackExchange.Redis", "dotnet/orleans")] + \
    [(r, "ts/js") for r in (
        "ReactiveX/rxjs", "eslint/eslint", "mozilla/pdf.js", "Automattic/mongoose",
        "playcanvas/engine", "openlayers/openlayers", "sequelize/sequelize", "ramda/ramda",
        "expressjs/express")] + \
    [(r, "python") for r in (
        "sqlalchemy/sqlalchemy", "twisted/twisted", "tornadoweb/tornado", "dask/dask",
        "pydantic/pydantic", "scrapy/scrapy", "numpy/numpy", "astropy/astropy", "python/mypy")]
REPOS = ISSUE_REPOS + ADDED
# vendored code the kits' folder rules do not catch (found by inspection)
EXCLUDES = {"numpy/numpy": r"^vendored-meson/|/_vendored/|^numpy/_core/src/",
            "astropy/astropy": r"(^|/)extern/",
            "mozilla/pdf.js": r"^external/"}
# Listed by the issue but not mined, and why (the manifest says so too).
NOT_MINED = {
    "Unity-Technologies/UnityCsReference": "its Reference-Only License allows viewing for "
        "reference, not derived works such as trained weights",
    "nestjs/nest": "snapshot over the fetch limit (579 MB)",
    "mrdoob/three.js": "snapshot over the fetch limit (1.8 GB)",
    "django/django": "snapshot over the fetch limit (637 MB)",
    "scikit-learn/scikit-learn": "snapshot over the fetch limit (788 MB)",
    "matplotlib/matplotlib": "snapshot over the fetch limit (873 MB)",
}
NEVER = {"ppy/osu", "jellyfin/jellyfin", "MonoGame/MonoGame", "typeorm/typeorm",
         "Unity-Technologies/com.unity.multiplayer.samples.coop", "excalidraw/excalidraw",
         "pixijs/pixijs", "networkx/networkx", "pallets/click", "psf/requests"}
HELD_OUT = {"StackExchange/StackExchange.Redis", "sequelize/sequelize", "tornadoweb/tornado"}
# the eval sets' own repositories at their commits: their targets' code is read from them
EVAL_TREES = {"ppy/osu": "e9451fe70b91292c482bab203ea87bd727eaa237",
              "typeorm/typeorm": "281bfba42a5813b106bcf5ba79bc7f7251bd1e73"}
MINED = ("csharp", "typescript", "javascript", "python")     # the languages the kits cover
MAX_BYTES = 1 << 20           # the walk's cap (codebase_rag.walk)
MIN_WORDS, MAX_CHARS, MIN_BODY_LINES, MIN_SENTENCE_WORDS = 6, 400, 3, 4
MAX_RETURNS_WORDS = 30


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CS_KIT = load("make_corpus", EVAL / "make_corpus.py")
TS_KIT = load("make_corpus_ts", EVAL / "ts" / "make_corpus_ts.py")
PY_KIT = load("make_py_devset", ROOT / "bench" / "make_py_devset.py")
BOILERPLATE = re.compile(PY_KIT._BOILERPLATE.pattern + r"|^(?:"
    r"releases? (?:all )?(?:the )?(?:unmanaged |managed )?resources|disposes?\b|"
    r"performs? application-defined tasks|returns? a string that represents|"
    r"(?:determines|indicates) whether the specified object|"
    r"(?:serves as|returns) (?:the|a) (?:default )?hash|gets or sets\b|"
    r"{@inheritdoc}|inheritdoc|@inheritdoc|@internal|@private|@hidden|@ignore)",
    re.IGNORECASE)
DEMO_DIR = re.compile(r"^(?:examples?|samples?|demos?|playgrounds?)$", re.IGNORECASE)
OTHER_DOCS = re.compile(r"^\s*(?:///|/\*\*)", re.M)    # a container's members' docs
NOT_CODE = re.compile(r"^\s*(?:(?:#|//|/\*|\*).*)?$|^[\s()\[\]{},;:]*$")


def norm(text):
    return " ".join(text.split())


# ----------------------------------------------------------------------------- descriptions
def sentences(text):
    return [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z`'\"(\[])", text) if s]


def cut(text):
    """A summary at most MAX_CHARS long, cut at a sentence end ('' if it cannot be)."""
    if len(text) <= MAX_CHARS:
        return text
    end = max(text.rfind(". ", 0, MAX_CHARS), text.rfind("? ", 0, MAX_CHARS))
    return text[:end + 1] if end > 0 else ""


def xml_inline(text):
    """C# doc XML as a sentence reads: <see cref="A.B(int)"/> -> B, <c>x</c> -> x."""
    def name(m):
        ref = re.sub(r"^[TMPFE]:", "", m.group(2))
        ref = re.sub(r"\(.*\)$", "", ref).replace("{", "<").replace("}", ">")
        return re.split(r"\.(?![^<]*>)", ref)[-1]
    text = re.sub(r"<(see|seealso)\s+cref\s*=\s*\"([^\"]*)\"\s*/>", name, text)
    text = re.sub(r"<see\s+langword\s*=\s*\"([^\"]*)\"\s*/>", r"\1", text)
    text = re.sub(r"<(?:type)?paramref\s+name\s*=\s*\"([^\"]*)\"\s*/>", r"\1", text)
    text = re.sub(r"<[^<>]+>", " ", text)
    return norm(html.unescape(text))


def csharp_docs(raw):
    """(summary's first paragraph, returns text) of a /// block."""
    text = "\n".join(line.strip()[3:] for line in raw if line.strip().startswith("///"))
    summary = re.search(r"<summary>(.*?)</summary>", text, re.S)
    returns = re.search(r"<returns>(.*?)</returns>", text, re.S)
    first = ""
    if summary:
        paragraphs = re.split(r"<para\s*/?>|</para>|\n\s*\n", summary.group(1))
        first = next((p for p in (xml_inline(p) for p in paragraphs) if p), "")
    return first, xml_inline(returns.group(1)) if returns else ""


def jsdoc_inline(text):
    text = re.sub(r"\{@link(?:code|plain)?\s+([^}|\s]+)(?:\s*\|\s*|\s+)([^}]+)\}", r"\2", text)
    text = re.sub(r"\{@link(?:code|plain)?\s+([^}]+)\}", r"\1", text)
    return norm(text.replace("`", ""))


def jsdoc_docs(raw):
    """(description's first paragraph, @returns text) of a /** */ block; a block of tags
    only (date-fns) gives its @summary or @description."""
    body = re.sub(r"^/\*\*|\*/$", "", "\n".join(raw).strip())
    tags, tag = {None: []}, None
    for line in (re.sub(r"^\s*\*\s?", "", line) for line in body.split("\n")):
        m = re.match(r"\s*@(\w+)\s*(.*)", line)
        if m:
            tag = m.group(1).lower()
            tag = "returns" if tag == "return" else tag
            if tag in tags:                  # a repeated tag (@param): keep the first
                tag = "repeated"
            tags[tag] = [m.group(2)]
        else:
            tags[tag].append(line)
    def paragraph(name):
        return jsdoc_inline(re.split(r"\n\s*\n", "\n".join(tags.get(name, [])).strip())[0])
    returns = re.sub(r"^\{[^}]*\}\s*", "", paragraph("returns"))
    first = paragraph(None) or paragraph("summary") or paragraph("description")
    return first, returns


def rst_inline(text):
    """reST as a sentence reads: :class:`~a.B` -> B, ``x`` -> x, *x* -> x."""
    text = re.sub(r":[\w:]+:`~?(?:[^`<]*<)?([^`>]*?)>?`", lambda m: m.group(1).split(".")[-1], text)
    return re.sub(r"``([^`]*)``|\*\*?([^*\s][^*]*)\*\*?|`([^`]*)`",
                  lambda m: next(g for g in m.groups() if g is not None), text)


def python_docs(doc):
    """(docstring's summary paragraph, Returns text) of a cleaned docstring."""
    doc = rst_inline(doc)
    first = PY_KIT.summary(doc)
    m = re.search(r"^(?:Returns?|Yields?)\s*:?\s*\n(?:\s*-+\s*\n)?((?:[ \t]+\S.*\n?)+)", doc, re.M)
    returns = ""
    if m:
        lines = [line.strip() for line in m.group(1).split("\n") if line.strip()]
        if lines and re.match(r"^[\w.\[\], |]+\s*:\s*\S*$|^[\w.\[\]]+$", lines[0]) and len(lines) > 1:
            lines = lines[1:]                   # numpydoc's "name : type" line
        returns = norm(" ".join(lines))
    return first, returns


def descriptions(summary, returns):
    """The summary's first sentence, and a second phrasing or ''."""
    summary = cut(summary)
    if len(summary.split()) < MIN_WORDS or BOILERPLATE.match(summary):
        return None
    parts = sentences(summary)
    first = parts[0]
    if len(first.split()) < MIN_SENTENCE_WORDS:
        return None
    second = " ".join(parts[1:])
    if len(second.split()) < MIN_SENTENCE_WORDS or BOILERPLATE.match(second):
        second = ""
    if not second and MIN_SENTENCE_WORDS <= len(returns.split()) <= MAX_RETURNS_WORDS:
        second = returns if re.match(r"(?i)returns?\b", returns) else \
            f"Returns {returns[0].lower()}{returns[1:]}"
        second = second[0].upper() + second[1:]
    return first, second


# ----------------------------------------------------------------------------- files
def extract(git_dir, commit, tree):
    """The repository's source files and licence at commit, as plain files in tree (made
    once). Only those: a snapshot lacks its largest blobs, so `git archive` cannot run."""
    mark = tree / ".commit"
    if mark.is_file() and mark.read_text() == commit:
        return
    import shutil
    shutil.rmtree(tree, ignore_errors=True)
    listing = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-l", "-z",
                              commit], capture_output=True, check=True).stdout.decode()
    wanted = []
    for entry in filter(None, listing.split("\0")):
        meta, path = entry.split("\t", 1)
        mode, kind, sha, size = meta.split()
        if kind == "blob" and mode in ("100644", "100755") and size.isdigit() \
                and int(size) <= MAX_BYTES and \
                getattr(language_for(path), "name", None) in MINED:
            wanted.append((sha, path))
    batch = subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
                           input="".join(f"{sha}\n" for sha, _ in wanted).encode(),
                           capture_output=True, check=True).stdout
    at = 0
    for sha, path in wanted:
        header_end = batch.index(b"\n", at)
        size = int(batch[at:header_end].split()[2])
        target = tree / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(batch[header_end + 1:header_end + 1 + size])
        at = header_end + 2 + size
    mark.write_text(commit)


def included(tree, repo):
    """(rel, text) of every file a kit would include, in sorted order."""
    for root, dirs, files in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if d not in (".git", "node_modules"))
        for name in sorted(files):
            path = Path(root) / name
            rel = path.relative_to(tree).as_posix()
            lang = language_for(rel)
            if getattr(lang, "name", None) not in MINED or path.is_symlink() \
                    or not path.is_file() or path.stat().st_size > MAX_BYTES or lang.is_test(rel) \
                    or any(DEMO_DIR.match(part) for part in rel.split("/")[:-1]) \
                    or re.search(EXCLUDES.get(repo, "^$^"), rel):
                continue
            if lang.name == "csharp":
                reason = CS_KIT.exclusion_reason(rel, str(path), repo)
            elif lang.name == "python":
                reason = "stub" if rel.endswith(".pyi") else \
                    PY_KIT.exclusion_reason(rel, PY_KIT.read_text(path), repo)
            else:
                reason = None if TS_KIT.tsoracle.is_source(name) else "declaration"
                reason = reason or TS_KIT.exclusion_reason(rel, str(path), repo)
            if reason is None:
                yield rel, lang.name, PY_KIT.read_text(path)


def python_docstrings(text):
    """{def or class line: cleaned docstring} of a Python file."""
    tree = PY_KIT.parse(text)
    if tree is None:
        return {}
    return {n.lineno: ast.get_docstring(n) for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and ast.get_docstring(n)}


def body_lines(lines, c):
    first, last = c.doc_lines or (0, -1)
    return sum(1 for n in range(c.sig_line + 1, c.end_line + 1)
               if not first <= n <= last and not NOT_CODE.match(lines[n - 1]))


def file_members(rel, lang, text, tokens):
    """(chunk, member text, descriptions or None, its code normalised) of each member."""
    try:
        chunks = chunk_source(rel, text)
    except Exception:                     # the indexer skips such a file too
        return []
    lines = text.split("\n")
    docstrings = python_docstrings(text) if lang == "python" else {}
    out = []
    for c in chunks:
        if c.kind in ("file", "module", "namespace", "top-level") or not c.member:
            continue
        body = chunk_body(lines, c)
        member = member_windows(chunk_header(rel, dataclasses.replace(c, doc="")), body,
                                c.signature, tokens)[0].lstrip("\n")
        found = None
        if c.doc_lines and body_lines(lines, c) >= MIN_BODY_LINES \
                and not OTHER_DOCS.search(body) and not (
                lang == "python" and c.member.startswith("__") and c.member.endswith("__")
                and c.member not in ("__init__", "__call__")):
            raw = lines[c.doc_lines[0] - 1:c.doc_lines[1]]
            if lang == "csharp":
                docs = csharp_docs(raw)
            elif lang == "python":
                doc = docstrings.get(c.sig_line)
                docs = python_docs(doc) if doc else ("", "")
            else:
                docs = jsdoc_docs(raw)
            found = descriptions(*docs)
        out.append((c, member, found, norm(body)))
    return out


# ----------------------------------------------------------------------------- eval overlap
def eval_sets():
    """(questions, targets' code), whitespace normalised, of every set in the eval kits."""
    questions, targets, files = set(), set(), {}
    for path in sorted(EVAL.rglob("*.jsonl")):
        repo = next(r for r in EVAL_TREES if r.replace("/", "__") in path.name
                    or r.split("/")[1] in path.name)
        stripped = "-nl-" not in path.name
        for line in path.open(encoding="utf-8"):
            q = json.loads(line)
            questions.add(norm(q["query"]))
            for t in q.get("targets", [q]):
                key = (repo, t["file"], stripped)
                if key not in files:
                    files[key] = eval_file(repo, t["file"], stripped).split("\n")
                targets.add(norm("\n".join(files[key][t["start_line"] - 1:t["end_line"]])))
    return questions, targets


def eval_file(repo, rel, stripped):
    git_dir = MIRROR / repo.replace("/", "+") / "repo"
    raw = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{EVAL_TREES[repo]}:{rel}"],
                         capture_output=True, check=True).stdout
    text = raw.decode("utf-8-sig", errors="replace").lstrip("\ufeff")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not stripped:
        return text
    if rel.endswith(".cs"):
        return CS_KIT.strip_doc_comments(text)
    return TS_KIT.strip_jsdoc(rel, text)[0]


# ----------------------------------------------------------------------------- the pairs
def mine_repo(repo, lang_group, commit, tokens, questions, targets, rng_seed):
    tree = DATA / "repos" / repo.replace("/", "__")
    extract(MIRROR / repo.replace("/", "+") / "repo", commit, tree)
    members, pairs, removed = [], [], 0
    for rel, lang, text in included(tree, repo):
        members += [(rel, lang, *m) for m in file_members(rel, lang, text, tokens)]
    summaries, texts = {}, {}
    for rel, lang, c, member, found, body in members:
        if found:
            key = norm(found[0]).lower()
            summaries[key] = summaries.get(key, 0) + 1
            texts[member] = texts.get(member, 0) + 1
    by_class, by_file, by_dir = {}, {}, {}
    for i, (rel, lang, c, member, found, body) in enumerate(members):
        by_class.setdefault((rel, c.cls), []).append(i)
        by_file.setdefault(rel, []).append(i)
        by_dir.setdefault(rel.rpartition("/")[0], []).append(i)
    for i, (rel, lang, c, member, found, body) in enumerate(members):
        if not found or summaries[norm(found[0]).lower()] > 1 or texts[member] > 1:
            continue
        rng = random.Random(f"{rng_seed}|{repo}|{rel}|{c.start_line}")
        negative = None
        for group in (by_class[(rel, c.cls)], by_file[rel], by_dir[rel.rpartition("/")[0]]):
            others = [j for j in group if members[j][2].member != c.member
                      and members[j][3] != member]
            if others:
                negative = members[rng.choice(others)][3]
                break
        if negative is None:
            continue
        for source, description in zip(("summary", "second"), found):
            if not description:
                continue
            if norm(description) in questions or norm(description) in targets \
                    or body in targets or norm(member) in questions:
                removed += 1
                continue
            pairs.append({"anchor": description, "positive": member, "negative": negative,
                          "repo": repo, "lang": lang, "file": rel, "line": c.start_line,
                          "source": source})
    return pairs, removed


def balance(pairs_by_repo, groups, target, seed):
    """At most target/3 pairs per language group: each repo of a group keeps all its
    members up to a common cap (the largest that fits), the rest drawn with the seed."""
    kept = {}
    for group in sorted(set(groups.values())):
        repos = [r for r in pairs_by_repo if groups[r] == group]
        members = {r: sorted({(p["file"], p["line"]) for p in pairs_by_repo[r]}) for r in repos}
        per_member = {r: sum(len(pairs_by_repo[r]) for r in repos) /
                      max(1, sum(len(members[r]) for r in repos)) for r in repos}
        budget = target / 3 / (sum(per_member.values()) / max(1, len(repos)))
        cap = max(len(m) for m in members.values()) if members else 0
        while cap and sum(min(len(m), cap) for m in members.values()) > budget:
            cap -= 1
        for r in repos:
            chosen = set(members[r]) if len(members[r]) <= cap else \
                set(random.Random(f"{seed}|{r}").sample(members[r], cap))
            kept[r] = [p for p in pairs_by_repo[r] if (p["file"], p["line"]) in chosen]
    return kept


def licence(git_dir, commit):
    """The licence's name, read from the repository's licence file."""
    names = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "--name-only", commit],
                           capture_output=True, text=True, check=True).stdout.split("\n")
    name = next((n for n in sorted(names) if re.match(r"(?i)^(licen[cs]e|copying)(\.\w+)?$", n)),
                None)
    if name is None:
        return "no licence file found"
    text = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{name}"],
                          capture_output=True, text=True, errors="replace").stdout
    for pattern, spdx in ((r"Apache License", "Apache-2.0"),
                          (r"Permission is hereby granted, free of charge", "MIT"),
                          (r"Redistribution and use in source and binary forms", "BSD"),
                          (r"Permission to use, copy, modify, and distribute this software and "
                           r"its\s+documentation for any purpose, without fee", "PostgreSQL"),
                          (r"Mozilla Public License", "MPL-2.0")):
        if re.search(pattern, text):
            if spdx == "BSD":
                spdx = "BSD-3-Clause" if re.search(r"endorse or promote", text) else "BSD-2-Clause"
            return f"{spdx} ({name})"
    return f"unrecognised ({name}: {norm(text)[:60]})"


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv=None):
    global MIRROR, DATA
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror", default="/work/.mirror", help="the fetched bare git directories")
    ap.add_argument("--data", default="/work/train-data", help="outside the project")
    ap.add_argument("--pin", action="store_true", help="take each mirror's HEAD, not the "
                    "manifest's commits, and rewrite the manifest")
    ap.add_argument("--target", type=int, default=25000, help="pairs, a third per language")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", help="one repository (a smoke run; writes nothing)")
    a = ap.parse_args(argv)
    MIRROR, DATA = Path(a.mirror), Path(a.data)
    if DATA.resolve() == ROOT or ROOT in DATA.resolve().parents:
        ap.error(f"{DATA} is inside the project; the pairs derive from fetched code")
    assert not NEVER & {r for r, _ in REPOS}
    pinned = {} if a.pin else {r["repo"]: r["commit"]
                               for r in json.loads(MANIFEST.read_text())["repositories"]}
    from tokenizers import Tokenizer
    tokenizer = Tokenizer.from_file(str(Path(resolve_model()[0]) / "tokenizer.json"))
    tokens = lambda texts: count_tokens(tokenizer, texts)  # noqa: E731
    questions, targets = eval_sets()
    print(f"eval sets: {len(questions)} questions, {len(targets)} targets", file=sys.stderr)
    pairs_by_repo, groups, rows, removed_total = {}, {}, [], 0
    for repo, group in REPOS:
        if a.only and repo != a.only:
            continue
        git_dir = MIRROR / repo.replace("/", "+") / "repo"
        commit = pinned.get(repo) or subprocess.run(
            ["git", "--git-dir", str(git_dir), "rev-parse", "HEAD"],
            capture_output=True, text=True, check=True).stdout.strip()
        pairs, removed = mine_repo(repo, group, commit, tokens, questions, targets, a.seed)
        removed_total += removed
        pairs_by_repo[repo], groups[repo] = pairs, group
        rows.append({"repo": repo, "commit": commit, "licence": licence(git_dir, commit),
                     "group": group,
                     "listed_by": "issue 29" if (repo, group) in ISSUE_REPOS else "added",
                     "split": "valid" if repo in HELD_OUT else "train",
                     "mined": len(pairs), "removed_for_overlap": removed})
        print(f"{repo}@{commit[:10]}: {len(pairs)} pairs ({removed} removed for overlap)",
              file=sys.stderr)
    if a.only:
        for p in pairs_by_repo[a.only][:5]:
            print(json.dumps(p, ensure_ascii=False, indent=1))
        return 0
    train = {r: p for r, p in pairs_by_repo.items() if r not in HELD_OUT}
    kept = balance(train, groups, a.target, a.seed)
    kept.update({r: pairs_by_repo[r] for r in HELD_OUT})
    out = DATA / "pairs"
    out.mkdir(parents=True, exist_ok=True)
    for split, names in (("train", sorted(train)), ("valid", sorted(HELD_OUT))):
        chosen = sorted((p for r in names for p in kept[r]),
                        key=lambda p: (p["repo"], p["file"], p["line"], p["source"]))
        with open(out / f"{split}.jsonl", "w", encoding="utf-8", newline="\n") as f:
            for p in chosen:
                f.write(json.dumps(p, ensure_ascii=False, sort_keys=True) + "\n")
    for row in rows:
        counts = {}
        for p in kept[row["repo"]]:
            counts[p["lang"]] = counts.get(p["lang"], 0) + 1
        row["pairs"] = dict(sorted(counts.items()))
        row["members"] = len({(p["file"], p["line"]) for p in kept[row["repo"]]})
    manifest = {"seed": a.seed, "target": a.target, "removed_for_overlap": removed_total,
                "held_out": sorted(HELD_OUT), "not_mined": NOT_MINED, "repositories": rows,
                "files": {f"{s}.jsonl": {"pairs": sum(1 for _ in open(out / f"{s}.jsonl")),
                                         "sha256": sha256(out / f"{s}.jsonl")}
                          for s in ("train", "valid")}}
    if a.pin:
        MANIFEST.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    else:
        want = json.loads(MANIFEST.read_text())["files"]
        for name, got in manifest["files"].items():
            same = "the same bytes" if got == want.get(name) else "DIFFERENT bytes"
            print(f"{name}: {got['pairs']} pairs, {same} as the manifest", file=sys.stderr)
    print(f"removed for overlap with the eval sets: {removed_total}")
    for name, f in manifest["files"].items():
        print(f"{out / name}: {f['pairs']} pairs")
    return 0


MIRROR = DATA = None

if __name__ == "__main__":
    sys.exit(main())
