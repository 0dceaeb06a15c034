#!/usr/bin/env python3
"""Baseline for bench/speed.py: a query process that embeds with sentence-transformers.

    python bench/naive_query.py --db INDEX_FOLDER "question"

Loads the packaged all-MiniLM-L6-v2 with sentence-transformers, embeds the question,
opens the index's Chroma collection with the public client (chromadb.PersistentClient,
collection 'chunks', no embedding function) and prints the 5 nearest windows. This is
the obvious way to write query.py; bench/speed.py compares the real one against it.

    python bench/naive_query.py --db NAIVE_DB --own-db --json -k K --batch FILE

is the eval kit's contract (one JSON array per question, each result with file,
start_line, end_line, class, method, distance and the whole chunk as text) on an index
that bench/naive_index.py built (--own-db: its collection sits in the folder itself).
bench/dev_evals.py scores the seed baseline with it.
"""
import argparse
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# (speed.py runs this with its snapshot of the checkout first on PYTHONPATH)
from codebase_rag.export import resolve_model  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--db", required=True, help="the index folder (DIR/.codebase-rag)")
    p.add_argument("-k", type=int, default=5)
    p.add_argument("question", nargs="?")
    p.add_argument("--batch", metavar="FILE", help="one question per line")
    p.add_argument("--json", action="store_true", help="one JSON array per question")
    p.add_argument("--own-db", action="store_true",
                   help="DB is a naive_index.py folder, not DIR/.codebase-rag")
    args = p.parse_args()
    if not args.question and not args.batch:
        p.error("a question or --batch FILE")

    from sentence_transformers import SentenceTransformer
    import chromadb
    from chromadb.config import Settings

    model_path, _ = resolve_model()
    model = SentenceTransformer(model_path, device="cpu")
    questions = (Path(args.batch).read_text(encoding="utf-8").splitlines()
                 if args.batch else [args.question])
    chroma = Path(args.db) if args.own_db else Path(args.db) / "chroma"
    client = chromadb.PersistentClient(path=str(chroma),
                                       settings=Settings(anonymized_telemetry=False))
    col = client.get_collection("chunks", embedding_function=None)
    if args.json:
        import json
        vecs = model.encode(questions, normalize_embeddings=True, batch_size=64)
        for qvec in vecs:
            found = col.query(query_embeddings=[qvec.tolist()], n_results=args.k,
                              include=["distances", "metadatas", "documents"])
            print(json.dumps([{"file": m["file"], "start_line": m["start_line"],
                               "end_line": m["end_line"], "class": m.get("class", ""),
                               "method": m.get("member", ""), "distance": d, "text": t}
                              for m, d, t in zip(found["metadatas"][0], found["distances"][0],
                                                 found["documents"][0])]), flush=True)
        return
    qvec = model.encode([args.question], normalize_embeddings=True)[0]
    found = col.query(query_embeddings=[qvec.tolist()], n_results=args.k,
                      include=["distances", "metadatas"])
    for rank, (meta, dist) in enumerate(zip(found["metadatas"][0], found["distances"][0]), 1):
        name = ".".join(p for p in (meta.get("class"), meta.get("member")) if p)
        print(f"#{rank} | {meta['file']}:{meta['start_line']}-{meta['end_line']} | {name} | "
              f"dist: {dist:.4f}")


if __name__ == "__main__":
    main()
