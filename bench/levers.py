#!/usr/bin/env python3
"""Embedding levers, one at a time: throughput, peak RSS and cosine against the default.

    python bench/levers.py [--repo DIR] [--texts N] [--rounds R] [--out FILE]

Takes N real window texts (header + code, as index.py embeds them) from the C# tree, then
embeds them once per variant, each in a fresh process timed from outside, the variants
alternating round by round so that the machine's noise hits them all. Prints a Markdown
table (and writes it to --out); bench/speed.py runs this and puts the table in
bench/RESULTS-speed.md.

Variants: the embedder (sentence-transformers on torch, onnxruntime fp32, onnxruntime with
dynamic int8 weights, torch under bf16 autocast), the batch size, and length-sorted
batches against texts in file order.
"""
import argparse
import json
import os
import pickle
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from codebase_rag import embed  # noqa: E402
from codebase_rag.embed import ExportedModel, OnnxEmbedder, TorchEmbedder, resolve_model  # noqa: E402
from codebase_rag.indexer import build_file  # noqa: E402
from codebase_rag.walk import read_source  # noqa: E402

# name: (embedder, batch size, sorted by length)
VARIANTS = {
    "torch fp32, batch 16, sorted (default)": ("torch", 16, True),
    "torch fp32, batch 64, sorted": ("torch", 64, True),
    "torch fp32, batch 16, file order": ("torch", 16, False),
    "onnxruntime fp32, batch 16, sorted": ("onnx", 16, True),
    "onnxruntime int8 weights, batch 16, sorted": ("int8", 16, True),
    "torch bf16 autocast, batch 16, sorted": ("bf16", 16, True),
}


def collect(repo, n, model_dir):
    """n window texts from files of repo taken in a fixed random order."""
    count_tokens = ExportedModel(model_dir).count_tokens
    files = sorted(Path(repo).rglob("*.cs"))
    random.Random(1).shuffle(files)
    texts = []
    for f in files:
        text = read_source(f)
        built = build_file(f.relative_to(repo).as_posix(), text, count_tokens) if text else None
        texts += [t for _, t, _ in built[1]] if built else []
        if len(texts) >= n:
            return texts[:n]
    return texts


def worker(kind, batch, ordered, work):
    """Runs in the child: embed the texts, print the rate, save the vectors."""
    import numpy as np
    texts = pickle.loads((work / "texts.pkl").read_bytes())
    started = time.time()
    if kind in ("torch", "bf16"):
        embedder = TorchEmbedder(resolve_model()[0], batch)
    else:
        embedder = OnnxEmbedder(work / ("int8" if kind == "int8" else "fp32"), batch)
    if not ordered:      # one batch per call: both embedders sort within a call
        whole = embedder
        embedder = lambda ts: np.concatenate([whole(ts[i:i + batch])
                                              for i in range(0, len(ts), batch)])
    load = time.time() - started
    embedder(texts[:batch])                                   # warm-up
    started = time.time()
    if kind == "bf16":
        import torch
        with torch.autocast("cpu", dtype=torch.bfloat16):
            vectors = embedder(texts)
    else:
        vectors = embedder(texts)
    took = time.time() - started
    np.save(work / f"{kind}-{batch}-{ordered}.npy", np.asarray(vectors, dtype=np.float32))
    print(json.dumps({"rate": len(texts) / took, "load": load}))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repo", default="/work/trees/jellyfin")
    p.add_argument("--texts", type=int, default=400)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--only", nargs="+", choices=list(VARIANTS))
    p.add_argument("--out", type=Path, help="also write the table here")
    p.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        kind, batch, ordered, work = args.worker
        return worker(kind, int(batch), ordered == "1", Path(work))

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    work = Path(tempfile.mkdtemp(prefix="rag-levers-"))
    embed.export_onnx(resolve_model()[0], work / "fp32")
    from onnxruntime.quantization import QuantType, quantize_dynamic
    (work / "int8").mkdir()
    quantize_dynamic(str(work / "fp32" / "model.onnx"), str(work / "int8" / "model.onnx"),
                     weight_type=QuantType.QInt8, use_external_data_format=False)
    (work / "int8" / "tokenizer.json").write_bytes((work / "fp32" / "tokenizer.json").read_bytes())
    texts = collect(Path(args.repo), args.texts, work / "fp32")
    (work / "texts.pkl").write_bytes(pickle.dumps(texts))
    from tokenizers import Tokenizer
    counter = Tokenizer.from_file(str(work / "fp32" / "tokenizer.json"))
    tokens = sum(len(e.ids) for e in counter.encode_batch(texts))
    names = args.only or list(VARIANTS)
    results = {n: {"rate": [], "rss": []} for n in names}
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            kind, batch, ordered = VARIANTS[name]
            cmd = ["/usr/bin/time", "-f", "RSS %M", sys.executable, __file__, "--worker",
                   kind, str(batch), "1" if ordered else "0", str(work)]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            rss = int(proc.stderr.strip().splitlines()[-1].split()[-1]) / 1024
            rate = json.loads(proc.stdout.strip().splitlines()[-1])["rate"]
            results[name]["rate"].append(rate)
            results[name]["rss"].append(rss)
            print(f"round {r + 1}: {name}: {rate:.1f} texts/s, {rss:.0f} MB", flush=True)

    import numpy as np
    ref = np.load(work / "torch-16-True.npy") if (work / "torch-16-True.npy").is_file() else None
    base = statistics.median(results[names[0]]["rate"])
    lines = ["# Embedding levers", "",
             f"`python bench/levers.py --texts {args.texts} --rounds {args.rounds}`, "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: {len(texts)} window texts "
             f"({tokens / len(texts):.0f} word pieces each on average) from "
             f"`{Path(args.repo).name}`, on {os.cpu_count()} cores. Median of {args.rounds} "
             "rounds, each variant a fresh process, the order rotating by round. "
             f"Speed-up is against the first row; cosine is against it too.", "",
             "| variant | texts/s | speed-up | peak RSS MB | cosine min / mean |",
             "| --- | --- | --- | --- | --- |"]
    for name in names:
        kind, batch, ordered = VARIANTS[name]
        rate = statistics.median(results[name]["rate"])
        cos = ""
        if ref is not None:
            v = np.load(work / f"{kind}-{batch}-{ordered}.npy")
            c = (v * ref).sum(1) / np.linalg.norm(v, axis=1)
            cos = f"{c.min():.5f} / {c.mean():.5f}"
        lines.append(f"| {name} | {rate:.1f} | {rate / base:.2f}x | "
                     f"{statistics.median(results[name]['rss']):.0f} | {cos} |")
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
