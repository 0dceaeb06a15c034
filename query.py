#!/usr/bin/env python3
"""codebase-rag search: ask a question about the code, get the members that answer it.

    python query.py "how are user passwords hashed?" [-k 5]

Prints each hit as `#1 | file:start-end | Class.Member | dist: 0.1234` followed by its
first lines, numbered. The index is found by walking up from the current directory
(see index.py). The pipeline: embed the question -> search (vector + lexical) -> print.
"""
import fnmatch
import json
import os
import re
import sqlite3
import sys
from pathlib import Path

import index as rag

# ----------------------------------------------------------------------------- config
ENV = os.environ
TOP_K = int(ENV.get("CODEBASE_RAG_K", 5))
SHOW_LINES = int(ENV.get("CODEBASE_RAG_LINES", 20))
MODE = ENV.get("CODEBASE_RAG_MODE", "hybrid")
CANDIDATES = 60              # per ranking, before fusion
RRF_K = float(ENV.get("CODEBASE_RAG_RRF_K", 20))          # reciprocal rank fusion constant
NAME_WEIGHT = float(ENV.get("CODEBASE_RAG_NAME_WEIGHT", 8))  # BM25 weight of member names
# Cosine distance above which the best hit is not a confident match (see README).
CONFIDENT_DISTANCE = float(ENV.get("CODEBASE_RAG_CONFIDENT", 0.62))
STOPWORDS = frozenset("""a an the and or of to in on for from by with at as is are was were be
been it its this that these those what which who whom how why when where does do did can could
should would will shall may might there their them they we you your i me my our us not no get
set""".split())


# ----------------------------------------------------------------------------- embed
def start_embedder(store):
    """A function that embeds questions with the index's ONNX export, which loads in a
    thread while the caller opens the index. A query never loads torch: without a sound
    export it says how to make one."""
    problem = rag.model_problem(store.model_dir)
    if problem:
        raise rag.UsageError(f"the index's exported model in {store.model_dir} is unusable "
                             f"({problem}); run: python index.py (it exports it again)")
    get = rag.load_embedder(store.model_dir)

    def embed(questions):
        try:
            return get()(questions)
        except Exception as e:
            raise rag.UsageError(f"the index's exported model in {store.model_dir} does not "
                                 f"load ({str(e).splitlines()[0][:160]}); run: python "
                                 f"index.py (it exports it again)") from None
    return embed


# ----------------------------------------------------------------------------- search
def vector_ranking(store, qvec, n):
    """[(chunk id, distance)] best first; a long member's windows count once."""
    if not store.window_count():      # nothing embedded yet (a first build just started)
        return []
    if not os.access(store.folder, os.W_OK):
        # Chroma cannot open a read-only folder; the embedding cache holds the same vectors
        return sorted(distances_for(store, qvec).items(), key=lambda kv: kv[1])[:n]
    _, distances, metadatas = store.collection.query(qvec.tolist(), n)
    best = {}
    for meta, dist in zip(metadatas, distances):
        cid = meta["chunk"]
        if cid not in best or dist < best[cid]:
            best[cid] = dist
    return sorted(best.items(), key=lambda kv: kv[1])


def fts_query(question):
    words = re.findall(r"\w+", rag.split_identifiers(question).lower())
    terms = [w for w in dict.fromkeys(words) if w not in STOPWORDS and len(w) > 1]
    return " OR ".join(f'"{t}"' for t in terms)


def lexical_ranking(store, question, n):
    """[chunk id] best first, by BM25 over identifier-split text."""
    match = fts_query(question)
    if not match:
        return []
    rows = store.db.execute(
        "SELECT c.id FROM lexical JOIN chunks c ON c.rowid = lexical.rowid "
        "WHERE lexical MATCH ? ORDER BY bm25(lexical, ?, 1.0) LIMIT ?", (match, NAME_WEIGHT, n))
    return [cid for (cid,) in rows]


def distances_for(store, qvec, chunk_ids=None):
    """Cosine distance of the question to each chunk's closest window, from the embedding
    cache: for chunks that only the lexical ranking found, or for every chunk."""
    import numpy as np
    query = ("SELECT c.id, v.vec FROM chunks c, json_each(c.vectors) w "
             "JOIN vectors v ON v.key = w.value")
    args = list(chunk_ids or ())
    if chunk_ids is not None:
        query += f" WHERE c.id IN ({','.join('?' * len(args))})"
    rows = store.db.execute(query, args).fetchall()
    if not rows:
        return {cid: 2.0 for cid in args}
    matrix = np.frombuffer(b"".join(vec for _, vec in rows), dtype=np.float32).reshape(len(rows), -1)
    best = {cid: 2.0 for cid in args}
    for (cid, _), dist in zip(rows, (1.0 - matrix @ qvec).tolist()):
        if dist < best.get(cid, 3.0):
            best[cid] = dist
    return best


def search(store, question, qvec, k=TOP_K, mode=MODE, path_glob=None):
    """The k best chunks as dicts, best first, without overlapping duplicates."""
    n = CANDIDATES * (4 if path_glob else 1)
    vector = vector_ranking(store, qvec, n) if mode != "lexical" else []
    lexical = lexical_ranking(store, question, n) if mode != "vector" else []
    scores, distance = {}, dict(vector)
    for rank, (cid, _) in enumerate(vector):
        scores[cid] = scores.get(cid, 0.0) + 1.0 / (RRF_K + rank + 1)
    for rank, cid in enumerate(lexical):
        scores[cid] = scores.get(cid, 0.0) + 1.0 / (RRF_K + rank + 1)
    ranked = sorted(scores, key=lambda c: -scores[c])
    fields = rag.CHUNK_FIELDS
    results = []
    for start in range(0, len(ranked), 50):
        part = ranked[start:start + 50]
        rows = {r[0]: dict(zip(fields, r)) for r in store.db.execute(
            f"SELECT {','.join(fields)} FROM chunks WHERE id IN ({','.join('?' * len(part))})",
            part)}
        for cid in part:
            row = rows.get(cid)
            if row is None or path_glob and not fnmatch.fnmatch(row["file"], path_glob):
                continue
            if any(r["file"] == row["file"] and r["start_line"] <= row["end_line"]
                   and row["start_line"] <= r["end_line"] for r in results):
                continue                                   # overlaps a better hit
            results.append(row)
            if len(results) == k:
                break
        if len(results) == k:
            break
    missing = [r["id"] for r in results if r["id"] not in distance]
    if missing:
        distance.update(distances_for(store, qvec, missing))
    for r in results:
        r["distance"] = round(distance.get(r["id"], 2.0), 4)
        r["method"] = r["member"]
        r["confident"] = r["distance"] <= CONFIDENT_DISTANCE
        del r["id"]
    return results


# ----------------------------------------------------------------------------- print
def qualified_name(r):
    return ".".join(p for p in (r["class"], r["member"]) if p) or r["file"]


def print_results(results, show_lines, out=sys.stdout):
    if not results:
        print("no results", file=out)
        return
    if not results[0]["confident"]:
        print(f"no confident match (best distance {results[0]['distance']:.2f} > "
              f"{CONFIDENT_DISTANCE}); best guesses:", file=out)
    for i, r in enumerate(results, 1):
        print(f"#{i} | {r['file']}:{r['start_line']}-{r['end_line']} | {qualified_name(r)} | "
              f"dist: {r['distance']:.4f}", file=out)
        lines = r["text"].split("\n")
        shown = len(lines) if show_lines < 0 else show_lines
        width = len(str(r["start_line"] + min(len(lines), shown)))
        for n, line in enumerate(lines[:shown], r["start_line"]):
            print(f"{n:>{width}}  {line}", file=out)
        if len(lines) > shown:
            print(f"{'':>{width}}  ... ({len(lines) - shown} more lines)", file=out)
        print(file=out)


# ----------------------------------------------------------------------------- CLI
def parse_args(argv):
    p = rag.ArgParser(
        prog="query.py",
        description="Semantic search over a codebase-rag index: prints the members "
                    "(methods, constructors, properties, ...) that best answer a question, "
                    "with file:start-end, Class.Member and cosine distance (0 = same "
                    "meaning, 2 = opposite).",
        epilog="The index is found by walking up from the current directory to a "
               ".codebase-rag folder, unless --db or CODEBASE_RAG_DB says where it is.")
    p.add_argument("question", nargs="?", help="what you are looking for, in plain words")
    p.add_argument("-k", type=int, default=TOP_K, help=f"number of results (default {TOP_K})")
    p.add_argument("--db", default=rag.DB_PATH, metavar="PATH", help="index folder")
    p.add_argument("--json", action="store_true", help="print a JSON array of results")
    p.add_argument("--batch", metavar="FILE",
                   help="one question per line ('-' for stdin); prints one JSON array per line")
    p.add_argument("--max-distance", type=float, metavar="D",
                   help="drop results farther than this cosine distance")
    p.add_argument("--path", metavar="GLOB", help="only results whose file matches, e.g. 'src/*'")
    p.add_argument("--lines", type=int, default=SHOW_LINES, metavar="N",
                   help=f"lines of each result to show, in print and in JSON 'text' "
                        f"(default {SHOW_LINES}; -1: the whole chunk)")
    p.add_argument("--mode", choices=("vector", "lexical", "hybrid"), default=MODE,
                   help=f"ranking: embeddings, BM25 keywords, or both fused (default {MODE})")
    p.add_argument("--model", default=rag.MODEL, metavar="NAME_OR_PATH",
                   help="refuse to answer unless the index was built with this model")
    return p.parse_args(argv)


def run(args):
    if args.k < 1:
        raise rag.UsageError(f"-k must be at least 1, not {args.k}")
    if args.batch:
        source = sys.stdin if args.batch == "-" else open(args.batch, encoding="utf-8")
        with source:
            questions = [line.strip() for line in source]
    else:
        if not args.question or not args.question.strip():
            raise rag.UsageError('empty question; usage: query.py "what you are looking for"')
        questions = [args.question.strip()]
    folder = Path(args.db) if args.db else rag.find_index(os.getcwd())
    if folder is None or not (folder / "index.sqlite").is_file():
        where = folder or Path.cwd()
        raise rag.UsageError(f"no codebase-rag index found at or above {where}; create one "
                            f"with: python {Path(__file__).with_name('index.py')} --source DIR")
    store = rag.Store(folder)
    built_with = store.meta("model")
    if args.model and rag.resolve_model(args.model)[1] != built_with:
        raise rag.UsageError(f"the index was built with {built_with}, not "
                            f"{rag.resolve_model(args.model)[1]}; re-index with --rebuild")
    embed = start_embedder(store)
    if store.window_count() and os.access(store.folder, os.W_OK):
        store.collection                # open Chroma while the model loads
    asked = [q for q in questions if q]
    vectors = dict(zip(asked, embed(asked))) if asked else {}
    for q in questions:
        results = search(store, q, vectors[q], args.k, args.mode, args.path) if q else []
        if args.max_distance is not None:
            results = [r for r in results if r["distance"] <= args.max_distance]
        if args.json or args.batch:
            if args.lines >= 0:          # what an agent reads: the first lines, like print
                for r in results:
                    r["text"] = "\n".join(r["text"].split("\n")[:args.lines])
            print(json.dumps(results), flush=True)
        else:
            print_results(results, args.lines)
    return 0


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        code = run(args)
    except rag.UsageError as e:
        rag.warn(str(e))
        code = 2
    except BrokenPipeError:              # the reader stopped early (| head): not an error
        os._exit(0)
    except OSError as e:
        rag.warn(rag.one_line(e))
        code = 2
    except Exception as e:               # unexpected: still one line (CODEBASE_RAG_DEBUG=1: trace)
        if rag.ENV.get("CODEBASE_RAG_DEBUG"):
            raise
        if isinstance(e, sqlite3.DatabaseError) and "locked" not in str(e):
            rag.warn(f"the index is damaged (index.sqlite: {e}); run: python index.py --rebuild")
        else:
            rag.warn(f"failed: {rag.one_line(e)}; run python index.py --check to see whether "
                     f"the index is sound")
        code = 1
    if argv is None:       # a CLI run: skip the slow teardown (and a model still loading)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


if __name__ == "__main__":
    sys.exit(main())
