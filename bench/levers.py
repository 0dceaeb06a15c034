#!/usr/bin/env python3
"""Embedding levers, one at a time: throughput, peak RSS and cosine against
sentence-transformers (fp32, on torch: the reference).

    python bench/levers.py [--repo DIR] [--texts N] [--rounds R] [--out FILE]

Takes N real window texts (header + code, as the indexer embeds them) from the C# tree,
then embeds them once per variant, each in a fresh process timed from outside, the
variants alternating round by round so that the machine's noise hits them all. Prints a
Markdown table (and writes it to --out).

Variants: the arithmetic (fp32; dynamic int8 quantizations of the ONNX export), texts per
call (one; batches of 16, sorted by length; batches of at most 1,024 word pieces), and one
two-threaded session against a single-threaded session per core.
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

from codebase_rag import embed
from codebase_rag.embed import ExportedModel, OnnxEmbedder
from codebase_rag.export import TorchEmbedder, resolve_model
from codebase_rag.indexer import build_file
from codebase_rag.walk import read_source

ROOT = Path(__file__).resolve().parents[1]

# name: (model file in the work folder, texts per call: a number, or "tok" for batches of
# at most 1,024 word pieces)
VARIANTS = {
    "sentence-transformers fp32 on torch, batch 16 (reference)": ("torch", 16),
    "onnxruntime fp32, batch 16 (the previous default)": ("model.onnx", 16),
    "onnxruntime fp32, one text per call, one session": ("model.onnx", "1s"),
    "onnxruntime fp32, one text per call, a session per core (default without VNNI)":
        ("model.onnx", 1),
    "int8, MatMul per channel, batch 16": ("model.int8.onnx", 16),
    "int8, MatMul per channel, batches of ≤ 1,024 word pieces": ("model.int8.onnx", "tok"),
    "int8, MatMul per channel, one text per call, one session": ("model.int8.onnx", "1s"),
    "int8, MatMul per channel, one text per call, a session per core (default on VNNI)":
        ("model.int8.onnx", 1),
    "int8, MatMul per tensor, one text per call": ("pertensor.onnx", 1),
    "uint8, per channel, reduced range (optimum's avx2 style), one text per call":
        ("uint8.onnx", 1),
    "int8, MatMul per channel, reduced range, one text per call": ("int8-reduced.onnx", 1),
    "uint8 weights (u8u8), MatMul per channel, one text per call": ("u8u8.onnx", 1),
}


def kernels():
    """The instruction set the kernels see (under bench/avx2_only.sh, AVX2 on any CPU)."""
    import torch
    return f"kernels for {torch.backends.cpu.get_cpu_capability()}"


def collect(repo, n, model_dir):
    """n window texts from files of repo taken in a fixed random order."""
    count_tokens = ExportedModel(model_dir).count_tokens
    files = sorted(Path(repo).rglob("*.cs"))
    random.Random(1).shuffle(files)
    texts = []
    for f in files:
        text = read_source(f)
        built = build_file(f.relative_to(repo).as_posix(), text, count_tokens) if text else None
        texts += [w[-1] for w in built[1]] if built else []
        if len(texts) >= n:
            return texts[:n]
    return texts


def worker(model, batch, work):
    """Runs in the child: embed the texts, print the rate, save the vectors."""
    import numpy as np
    texts = pickle.loads((work / "texts.pkl").read_bytes())
    started = time.time()
    if model == "torch":
        embedder = TorchEmbedder(resolve_model()[0], int(batch))
    elif batch == "tok":               # sorted by length, cut at a word-piece budget
        one = OnnxEmbedder(work, 1024, file=model)
        sizes = one.count_tokens(texts)

        def embedder(ts):
            order = sorted(range(len(ts)), key=lambda i: sizes[i])
            out, part, used = np.empty((len(ts), one.dim), np.float32), [], 0
            for i in order + [None]:
                if i is None or part and used + sizes[i] > 1024:
                    out[part] = one([ts[j] for j in part])
                    part, used = [], 0
                if i is not None:
                    part.append(i)
                    used += sizes[i]
            return out
    elif batch == "1s":                # one two-threaded session, as before
        one = OnnxEmbedder(work, 1, file=model)

        def embedder(ts):
            return np.vstack([one([t]) for t in ts])
    else:
        embedder = OnnxEmbedder(work, int(batch), file=model)
    load = time.time() - started
    embedder(texts[:16])                                   # warm-up
    started = time.time()
    vectors = embedder(texts)
    took = time.time() - started
    np.save(work / f"{model}-{batch}.npy", np.asarray(vectors, dtype=np.float32))
    print(json.dumps({"rate": len(texts) / took, "load": load}))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repo", default="/work/trees/jellyfin")
    p.add_argument("--texts", type=int, default=400)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--only", nargs="+", choices=list(VARIANTS))
    p.add_argument("--out", type=Path, help="also write the table here")
    p.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        model, batch, work = args.worker
        return worker(model, batch, Path(work))

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    work = Path(tempfile.mkdtemp(prefix="rag-levers-"))
    embed.export_onnx(resolve_model()[0], work, "int8")      # model.onnx and the default int8
    import logging
    from onnxruntime.quantization import QuantType, quantize_dynamic
    logging.getLogger().setLevel(logging.ERROR)
    quantize_dynamic(str(work / "model.onnx"), str(work / "pertensor.onnx"),
                     op_types_to_quantize=["MatMul"], weight_type=QuantType.QInt8)
    quantize_dynamic(str(work / "model.onnx"), str(work / "uint8.onnx"), per_channel=True,
                     reduce_range=True, weight_type=QuantType.QUInt8)
    quantize_dynamic(str(work / "model.onnx"), str(work / "int8-reduced.onnx"),
                     op_types_to_quantize=["MatMul"], per_channel=True, reduce_range=True,
                     weight_type=QuantType.QInt8)
    quantize_dynamic(str(work / "model.onnx"), str(work / "u8u8.onnx"),
                     op_types_to_quantize=["MatMul"], per_channel=True,
                     weight_type=QuantType.QUInt8)
    texts = collect(Path(args.repo), args.texts, work)
    (work / "texts.pkl").write_bytes(pickle.dumps(texts))
    from tokenizers import Tokenizer
    counter = Tokenizer.from_file(str(work / "tokenizer.json"))
    tokens = sum(len(e.ids) for e in counter.encode_batch(texts))
    names = args.only or list(VARIANTS)
    results = {n: {"rate": [], "rss": []} for n in names}
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            model, batch = VARIANTS[name]
            cmd = ["/usr/bin/time", "-f", "RSS %M", sys.executable, __file__, "--worker",
                   model, str(batch), str(work)]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            rss = int(proc.stderr.strip().splitlines()[-1].split()[-1]) / 1024
            rate = json.loads(proc.stdout.strip().splitlines()[-1])["rate"]
            results[name]["rate"].append(rate)
            results[name]["rss"].append(rss)
            print(f"round {r + 1}: {name}: {rate:.1f} texts/s, {rss:.0f} MB", flush=True)

    import numpy as np
    ref = np.load(work / "torch-16.npy") if (work / "torch-16.npy").is_file() else None
    base = statistics.median(results[names[1 if len(names) > 1 else 0]]["rate"])
    lines = ["# Embedding levers", "",
             f"`python bench/levers.py --texts {args.texts} --rounds {args.rounds}`, "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: {len(texts)} window texts "
             f"({tokens / len(texts):.0f} word pieces each on average) from "
             f"`{Path(args.repo).name}`, on {os.cpu_count()} cores ({kernels()}). Median of {args.rounds} "
             "rounds, each variant a fresh process, the order rotating by round. "
             "Speed-up is against the previous default (onnxruntime fp32, batch 16); cosine "
             "is against sentence-transformers.", "",
             "| variant | texts/s | speed-up | peak RSS MB | cosine min / mean |",
             "| --- | --- | --- | --- | --- |"]
    for name in names:
        model, batch = VARIANTS[name]
        rate = statistics.median(results[name]["rate"])
        cos = ""
        if ref is not None:
            v = np.load(work / f"{model}-{batch}.npy")
            c = (v * ref).sum(1) / np.linalg.norm(v, axis=1)
            cos = f"{c.min():.5f} / {c.mean():.5f}"
        lines.append(f"| {name} | {rate:.1f} | {rate / base:.2f}x | "
                     f"{statistics.median(results[name]['rss']):.0f} | {cos} |")
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
