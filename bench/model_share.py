#!/usr/bin/env python3
"""The model's share of a first build: the window texts the build would embed for a tree,
cut as the indexer cuts them, then embedded once by the model alone (the machine's export,
at this CPU's default precision, a session per core as a build runs it).

    python bench/model_share.py TREE

Compare its seconds with the build's own (`index.py --source COPY -q`): the rest is the
walk, chunking, cutting and writing.
"""
import sys
import time
from pathlib import Path

from codebase_rag.embed import OnnxEmbedder, index_model, resolve_precision
from codebase_rag.export import onnx_file, resolve_model
from codebase_rag.indexer import build_file
from codebase_rag.languages import language_for
from codebase_rag.walk import read_source


def main():
    root = Path(sys.argv[1])
    precision = resolve_precision()
    exported = index_model(root / ".codebase-rag", resolve_model()[1], precision)
    model = OnnxEmbedder(exported.folder, file=onnx_file(precision))
    started, texts = time.perf_counter(), []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and language_for(p.name)):
        if {"bin", "obj", ".git", ".codebase-rag"} & set(path.parts):
            continue
        text = read_source(path)
        built = build_file(path.relative_to(root).as_posix(), text, model.count_tokens,
                           model.max_tokens) if text is not None else None
        texts += [w[3] for w in built[1]] if built else []
    cut = time.perf_counter() - started
    model(texts[:50])                                 # the sessions made and warm
    started = time.perf_counter()
    model(texts)
    alone = time.perf_counter() - started
    print(f"{len(texts):,} windows ({precision}): reading, chunking and cutting {cut:.1f} s; "
          f"the model alone {alone:.1f} s ({len(texts) / alone:.0f} windows/s)")


if __name__ == "__main__":
    main()
