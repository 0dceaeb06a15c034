#!/usr/bin/env python3
"""Baselines for bench/speed.py: the naive indexing pipeline, in one process.

    python bench/naive_index.py --source DIR --db FOLDER              full build
    python bench/naive_index.py --single FILE --source DIR --db FOLDER re-index one file
    python bench/naive_index.py --hook --source DIR --db FOLDER       same, file from a
                                                                      PostToolUse event
    python bench/naive_index.py --incremental --source DIR --db FOLDER re-index what changed

Walks the .cs files (same excludes as index.py: bin/, obj/, .git/, ... and .gitignore),
chunks them with our chunker (index.chunk_csharp; a chunk's text is just its source
lines: no header, no windows, so the model truncates long members), and adds them to a
Chroma collection in batches of 500 through chromadb's own
SentenceTransformerEmbeddingFunction pointed at the packaged all-MiniLM-L6-v2 folder.
This is what "just use Chroma + sentence-transformers" costs. Works offline:
HF_HUB_OFFLINE is set before anything loads, and the model is a local path.

--chunker picks how files are cut: `csharp` (the default, above), `language` (the
chunker of each file's language in codebase_rag, raw text likewise) or `seed` (the
original 50-line scripts' design, reconstructed: a regex finds a line that looks like a
method signature, `modifiers* type name(`, and a brace count from there to where the
depth returns to zero is the chunk; no chunk for anything else). FILE_EXT (environment,
comma-separated, e.g. ".ts" or ".py") limits the walk to those extensions, as the seed's
FILE_EXT constant did; unset, every language's files are walked. bench/dev_evals.py runs
these as the baseline through run_eval.py (with naive_query.py --batch --json).

--incremental keeps a manifest (path -> sha1 of the file) in FOLDER/manifest.json, reads
and hashes every file, and re-indexes those whose hash changed (deleting their chunks
first). --seed-manifest writes that manifest for the tree as it is, embedding nothing:
speed.py uses it to time a no-op run without first embedding a whole tree the slow way.
"""
import argparse
import hashlib
import json
import os
import shutil
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# (speed.py runs this with its snapshot of the checkout first on PYTHONPATH)
from codebase_rag.chunkers import csharp  # noqa: E402
from codebase_rag.export import resolve_model  # noqa: E402
from codebase_rag.walk import Ignore, read_source, walk  # noqa: E402

BATCH = 500
FILE_EXT = tuple(e.strip() for e in os.environ.get("FILE_EXT", "").split(",") if e.strip())
CHUNKER = "csharp"

import re  # noqa: E402
from types import SimpleNamespace  # noqa: E402

# the seed's signature line: modifiers, a return type (generics and arrays allowed), a name
# and an opening parenthesis; control-flow keywords are not names
_SEED_SIG = re.compile(
    r"^\s*(?:(?:public|private|protected|internal|static|virtual|override|abstract|"
    r"sealed|async|extern|unsafe|new|partial|readonly|export|default)\s+)*"
    r"[\w<>\[\],.?]+\s+(\w+)\s*(?:<[^>]*>)?\s*\(")
_SEED_NOT_NAMES = {"if", "for", "foreach", "while", "switch", "catch", "using", "lock",
                   "return", "new", "else", "throw", "await", "typeof", "nameof", "sizeof"}


def seed_chunks(text):
    """The seed's regex brace-counter: from a signature line, count { and } until the
    depth is back to zero; the next search starts after that chunk."""
    lines = text.split("\n")
    out, i = [], 0
    while i < len(lines):
        m = _SEED_SIG.match(lines[i])
        if not m or m.group(1) in _SEED_NOT_NAMES:
            i += 1
            continue
        depth, opened, j = 0, False, i
        while j < len(lines):
            depth += lines[j].count("{") - lines[j].count("}")
            opened = opened or "{" in lines[j]
            if (opened and depth <= 0) or (not opened and lines[j].rstrip().endswith(";")):
                break
            j += 1
        if not opened:                 # a declaration without a body, or no brace at all
            i += 1
            continue
        j = min(j, len(lines) - 1)
        out.append(SimpleNamespace(start_line=i + 1, end_line=j + 1, cls="", member=m.group(1)))
        i = j + 1
    return out


def chunks_of(rel, text):
    if CHUNKER == "seed":
        return seed_chunks(text)
    if CHUNKER == "language":
        from codebase_rag.languages import chunk_source
        return chunk_source(rel, text)
    return csharp.chunk(text)


def open_collection(db):
    import chromadb
    from chromadb.config import Settings
    from chromadb.utils.embedding_functions import SentenceTransformerEmbeddingFunction

    model_path, _ = resolve_model()
    ef = SentenceTransformerEmbeddingFunction(model_name=model_path, device="cpu",
                                              normalize_embeddings=True)
    client = chromadb.PersistentClient(path=str(db), settings=Settings(anonymized_telemetry=False))
    return client.get_or_create_collection("chunks", embedding_function=ef,
                                           metadata={"hnsw:space": "cosine"})


class Adder:
    """Adds chunks to the collection in batches of BATCH."""

    def __init__(self, col):
        self.col, self.ids, self.docs, self.metas = col, [], [], []
        self.files = self.chunks = 0

    def add_file(self, rel, text):
        self.files += 1
        lines = text.split("\n")
        for n, c in enumerate(chunks_of(rel, text)):
            self.ids.append(f"{rel}#{n}")
            self.docs.append("\n".join(lines[c.start_line - 1:c.end_line]))
            self.metas.append({"file": rel, "class": c.cls, "member": c.member,
                               "start_line": c.start_line, "end_line": c.end_line})
            self.chunks += 1
            if len(self.ids) >= BATCH:
                self.flush()

    def flush(self):
        if self.ids:
            self.col.add(ids=self.ids, documents=self.docs, metadatas=self.metas)
            self.ids, self.docs, self.metas = [], [], []


def sha(text):
    return hashlib.sha1(text.encode()).hexdigest()


def tree(source):
    """{relative path: text} of every indexable file."""
    out = {}
    for rel, path, st in walk(source, Ignore(source, ())):
        if FILE_EXT and not rel.endswith(FILE_EXT):
            continue
        text = read_source(path)
        if text is not None:
            out[rel] = text
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--source", required=True)
    p.add_argument("--db", required=True, help="Chroma folder (emptied first for a full build)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--single", metavar="FILE")
    mode.add_argument("--hook", action="store_true")
    mode.add_argument("--incremental", action="store_true")
    mode.add_argument("--seed-manifest", action="store_true")
    p.add_argument("--chunker", choices=("csharp", "language", "seed"), default="csharp")
    p.add_argument("-q", "--quiet", action="store_true", help="accepted, as index.py's")
    args = p.parse_args()
    global CHUNKER
    CHUNKER = args.chunker
    started = time.time()
    source, db = Path(args.source).resolve(), Path(args.db)
    manifest_path = db / "manifest.json"

    if args.seed_manifest:
        open_collection(db)
        manifest_path.write_text(json.dumps({rel: sha(t) for rel, t in tree(source).items()}))
        return

    if args.single or args.hook:
        if args.hook:
            event = json.loads(sys.stdin.read() or "{}")
            path = (event.get("tool_input") or {}).get("file_path")
            if not path or not path.endswith(".cs"):
                return
        else:
            path = args.single
        path = Path(path).resolve()
        rel = path.relative_to(source).as_posix()
        col = open_collection(db)
        col.delete(where={"file": rel})
        adder = Adder(col)
        if path.is_file():
            adder.add_file(rel, read_source(path))
        adder.flush()
        print(f"naive: re-indexed {rel}: {adder.chunks} chunks, {time.time() - started:.1f}s")
        return

    if args.incremental:
        col = open_collection(db)
        known = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
        files = tree(source)
        now = {rel: sha(t) for rel, t in files.items()}
        changed = [rel for rel in now if known.get(rel) != now[rel]]
        gone = [rel for rel in known if rel not in now]
        adder = Adder(col)
        for rel in changed + gone:
            col.delete(where={"file": rel})
        for rel in changed:
            adder.add_file(rel, files[rel])
        adder.flush()
        manifest_path.write_text(json.dumps(now))
        print(f"naive: {len(now)} files, {len(changed)} changed, {len(gone)} gone, "
              f"{adder.chunks} chunks added, {time.time() - started:.1f}s")
        return

    shutil.rmtree(db, ignore_errors=True)
    col = open_collection(db)
    adder = Adder(col)
    for rel, path, st in walk(source, Ignore(source, ())):
        if FILE_EXT and not rel.endswith(FILE_EXT):
            continue
        text = read_source(path)
        if text is not None:
            adder.add_file(rel, text)
    adder.flush()
    print(f"naive: {adder.files} files, {adder.chunks} chunks, {time.time() - started:.1f}s")


if __name__ == "__main__":
    main()
