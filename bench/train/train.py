#!/usr/bin/env python3
"""Fine-tune the packaged all-MiniLM-L6-v2 on mined (description, member) pairs.

    python bench/train/train.py [--data /work/train-data/pairs] [--out /work/train-data/run]
                                [--max-length 128] [--batch 32] [--lr 2e-5] [--seed 1]
                                [--negatives file|lexical|both|none] [--precision fp32|bf16]
                                [--limit N] [--max-steps N] [--checkpoint-every 200]

Loss: MultipleNegativesRankingLoss over (description, member, hard negative) triplets: each
description must pick its member among every member and negative of its batch; the hard
negative is another member of the same class or file (mine_pairs.py chose it), or with
--negatives lexical the BM25 near miss among the other pairs' members; --negatives both gives
each description the two (the BM25 negatives are kept in --data for the next run). One epoch.

Batches are grouped by length (a shuffled run of 50 batches is sorted by the member's
length, then cut), so most batches pad to far less than --max-length; no text appears twice
in a batch (a member with two descriptions, or a negative that is another row's member,
would otherwise be its own false negative). The plan of batches is made from the seed, so
a restarted run skips what it did and goes on with the same batches.

Precision: fp32 by default. --precision bf16 (autocast) only where the CPU has native bf16:
with AMX it ran 1.4x faster than fp32 (9.5 against 6.6 pairs/s, the same loss); without it,
4x slower, so it is refused there.
Every --checkpoint-every steps OUT/checkpoint.pt holds the weights, the optimiser, the
schedule and the loss so far (written whole, then renamed); a run started again with the
same arguments resumes from it. At each checkpoint the loss on the held-out repositories
(valid.jsonl: up to --valid-pairs of each language, in batches of one language) is measured,
overall and per language (loss.json's valid_by_language). OUT/loss.csv has every step's loss, OUT/loss.png draws it, and
OUT/model is the tuned model: a sentence-transformers folder (what --model takes).
"""
import argparse
import contextlib
import csv
import hashlib
import json
import os
import random
import struct
import sys
import time
import zlib
from pathlib import Path

from codebase_rag.export import resolve_model

MEGA = 50                     # batches sorted by length together
TEXTS = ("anchor", "positive", "negative", "lexical")


def read_pairs(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def plan_batches(pairs, batch, seed, lengths):
    """Lists of row numbers: length-grouped batches in a seeded order, no text twice in one."""
    rng = random.Random(seed)
    order = list(range(len(pairs)))
    rng.shuffle(order)
    batches = []
    for start in range(0, len(order), batch * MEGA):
        queue = sorted(order[start:start + batch * MEGA], key=lambda i: lengths[i])
        while queue:                  # a row that clashes waits for the next batch
            current, seen, rest = [], set(), []
            for i in queue:
                texts = {pairs[i][c] for c in TEXTS if c in pairs[i]}
                if len(current) < batch and not texts & seen:
                    current.append(i)
                    seen |= texts
                else:
                    rest.append(i)
            batches.append(current)
            queue = rest
    rng.shuffle(batches)
    return [b for b in batches if len(b) > 1]


def valid_sample(valid, per_language, seed):
    """Up to per_language held-out pairs of each language, drawn with the seed, grouped by
    language: each language's loss is measured on batches of its own (its in-batch
    negatives are of its language, as at query time)."""
    by_lang = {}
    for p in valid:
        by_lang.setdefault(p["lang"], []).append(p)
    return [p for lang in sorted(by_lang) for p in random.Random(f"{seed}|{lang}").sample(
        by_lang[lang], min(per_language, len(by_lang[lang])))]


def member_name(member):
    """'kind Name' from the member's header line (path | container | kind Name (words))."""
    head = member.split("\n", 1)[0].split(" | ")
    return head[2].split(" (")[0] if len(head) > 2 else head[-1]


def lexical_negatives(pairs):
    """For each pair, the member of another pair of its language that BM25 ranks highest for
    its description: a near miss by words, which the model must learn to tell from the
    answer. Never a member of the same name (an overload, or an interface and its
    implementation, often share the description) nor one with the same description. Where
    BM25 finds none, the mined negative."""
    import re
    import sqlite3
    from collections import Counter
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE m USING fts5(lang UNINDEXED, body, tokenize='porter')")
    db.executemany("INSERT INTO m(rowid, lang, body) VALUES (?, ?, ?)",
                   ((i, p["lang"], p["positive"]) for i, p in enumerate(pairs)))
    names = [member_name(p["positive"]) for p in pairs]
    split = [set(re.findall(r"[a-z]{3,}", p["positive"].lower())) for p in pairs]
    seen = Counter(w for words in split for w in words)
    out, changed = [], 0
    for i, p in enumerate(pairs):
        # the eight rarest words: common ones add little to BM25 and cost most of its time
        words = sorted((w for w in set(re.findall(r"[a-z]{3,}", p["anchor"].lower()))
                        if seen[w]), key=lambda w: (seen[w], w))[:8]
        negative = p["negative"]
        if words:
            match = " OR ".join(f'"{w}"' for w in words)
            for (j,) in db.execute("SELECT rowid FROM m WHERE m MATCH ? AND lang = ? "
                                   "ORDER BY bm25(m) LIMIT 20", (match, p["lang"])):
                q = pairs[j]
                if j != i and names[j] != names[i] and q["anchor"] != p["anchor"] \
                        and q["positive"] != p["positive"]:
                    negative, changed = q["positive"], changed + 1
                    break
        out.append(negative)
    print(f"lexical negatives: {changed:,} of {len(pairs):,} pairs (the rest keep the mined one)",
          flush=True)
    return out


def cached_lexical_negatives(pairs, folder):
    """lexical_negatives, kept in folder for the next run on the same pairs (they take
    minutes to mine)."""
    key = hashlib.sha256("\0".join(p["anchor"] + "\1" + p["positive"] for p in pairs)
                         .encode()).hexdigest()[:16]
    path = Path(folder) / f"lexical-{key}.json"
    if path.is_file():
        return json.loads(path.read_text())
    out = lexical_negatives(pairs)
    path.write_text(json.dumps(out))
    return out


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            return set(next(line for line in f if line.startswith("flags")).split(":")[1].split())
    except (OSError, StopIteration):
        return set()


def save_atomic(obj, path, torch):
    tmp = path.with_suffix(".tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def write_png(path, series, width=720, height=360):
    """A plain line plot (no text): each series (points, rgb) scaled to the same axes;
    the numbers are in loss.csv."""
    points = [p for s, _ in series for p in s]
    if not points:
        return
    x0, x1 = min(x for x, _ in points), max(x for x, _ in points) or 1
    y0, y1 = 0.0, max(y for _, y in points) or 1
    pixels = [[(255, 255, 255)] * width for _ in range(height)]
    for y in range(height):
        pixels[y][20] = (0, 0, 0)
    pixels[height - 21] = [(0, 0, 0)] * width

    def at(x, y):
        return (20 + int((x - x0) / max(x1 - x0, 1e-9) * (width - 41)),
                height - 21 - int((y - y0) / (y1 - y0) * (height - 41)))
    for data, color in series:
        for (xa, ya), (xb, yb) in zip(data, data[1:] or data):
            (ca, ra), (cb, rb) = at(xa, ya), at(xb, yb)
            steps = max(abs(cb - ca), abs(rb - ra), 1)
            for k in range(steps + 1):
                c, r = ca + (cb - ca) * k // steps, ra + (rb - ra) * k // steps
                for dr in (0, 1):
                    if 0 <= r + dr < height:
                        pixels[r + dr][c] = color
    raw = b"".join(b"\0" + bytes(v for px in row for v in px) for row in pixels)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + \
            struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    Path(path).write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(
        ">IIBBBBB", width, height, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b""))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="/work/train-data/pairs", help="train.jsonl, valid.jsonl")
    ap.add_argument("--out", default="/work/train-data/run")
    ap.add_argument("--base", help="the model to start from (default: the packaged MiniLM)")
    ap.add_argument("--max-length", type=int, default=128, help="word pieces per text")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=2e-5)
    ap.add_argument("--warmup", type=float, default=0.1, help="share of the steps")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--negatives", choices=("file", "lexical", "both", "none"), default="file",
                    help="the hard negative: another member of the same class or file (as "
                         "mined), the member of another pair that best matches the description "
                         "by BM25 (a lexical near miss), the two, or none")
    ap.add_argument("--limit", type=int, help="train on this many pairs (a smoke run)")
    ap.add_argument("--max-steps", type=int, help="stop after this many steps (the plan and "
                    "the schedule are still the whole epoch's)")
    ap.add_argument("--checkpoint-every", type=int, default=200)
    ap.add_argument("--valid-pairs", type=int, default=128,
                    help="held-out pairs per language (each language's loss is reported)")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
    a = ap.parse_args(argv)
    flags = cpu_flags()
    native_bf16 = {"avx512_bf16", "amx_bf16"} & flags
    if a.precision == "bf16" and not native_bf16:
        sys.exit("train.py: this CPU has no avx512_bf16 or amx_bf16, where bf16 autocast ran "
                 "4x slower than fp32; use --precision fp32")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
    torch.set_num_threads(a.threads)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    pairs = read_pairs(Path(a.data) / "train.jsonl")
    valid = read_pairs(Path(a.data) / "valid.jsonl")
    if a.limit:
        pairs = random.Random(a.seed).sample(pairs, min(a.limit, len(pairs)))
    valid = valid_sample(valid, a.valid_pairs, a.seed)
    if a.negatives in ("lexical", "both"):
        column = "negative" if a.negatives == "lexical" else "lexical"
        pairs = [{**p, column: negative}
                 for p, negative in zip(pairs, cached_lexical_negatives(pairs, a.data))]
    base = a.base or resolve_model()[0]
    config = {k: v for k, v in vars(a).items() if k not in ("threads", "max_steps",
                                                          "checkpoint_every")}
    config.update(base=str(base), pairs=len(pairs), data_sha256=hashlib.sha256(
        (Path(a.data) / "train.jsonl").read_bytes()).hexdigest())
    torch.manual_seed(a.seed)
    model = SentenceTransformer(str(base), device="cpu")
    base_length, model.max_seq_length = model.max_seq_length, a.max_length
    tokenizer = model.tokenizer
    lengths = [len(ids) for ids in tokenizer([p["positive"] for p in pairs], verbose=False,
                                               add_special_tokens=False)["input_ids"]]
    batches = plan_batches(pairs, a.batch, a.seed, lengths)
    loss_fn = MultipleNegativesRankingLoss(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=0.01)
    total = len(batches)
    warm = max(1, int(total * a.warmup))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warm, max(0.0, (total - s) / max(1, total - warm))))
    columns = {"none": TEXTS[:2], "both": TEXTS}.get(a.negatives, TEXTS[:3])
    state = {"step": 0, "losses": [], "valid": [], "seconds": 0.0, "cpu_seconds": 0.0, "pairs": 0}
    checkpoint = out / "checkpoint.pt"
    if checkpoint.is_file():
        saved = torch.load(checkpoint, weights_only=False)
        if saved["config"] != config:
            sys.exit(f"train.py: {checkpoint} is of another run "
                     f"({sorted(k for k in config if saved['config'].get(k) != config[k])} "
                     f"differ); use another --out or delete it")
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        schedule.load_state_dict(saved["schedule"])
        torch.set_rng_state(saved["rng"])
        state = saved["state"]
        print(f"resumed from {checkpoint} at step {state['step']} of {total}", flush=True)
    print(f"{len(pairs):,} pairs in {total:,} batches of {a.batch} (max {a.max_length} word "
          f"pieces, {'+'.join(columns)}), {len(valid)} held-out pairs "
          f"({len({p['lang'] for p in valid})} languages); {a.precision} on "
          f"{a.threads} threads; CPU bf16: {', '.join(sorted(native_bf16)) or 'none'}",
          flush=True)

    tokenize = getattr(model, "preprocess", None) or model.tokenize

    def features(rows, columns=columns):
        return [dict(tokenize([r[c] for r in rows])) for c in columns]

    def valid_loss():
        """The held-out loss over every language's pairs, and {language: its loss}."""
        model.eval()
        by_lang = {}
        with torch.no_grad():
            for lang in sorted({p["lang"] for p in valid}):
                rows = [p for p in valid if p["lang"] == lang]
                parts = [rows[i:i + a.batch] for i in range(0, len(rows), a.batch)]
                # the mined negatives, whatever the run trains on: one held-out loss for
                # every run
                by_lang[lang] = [(loss_fn(features(part, TEXTS[:3]), None).item(), len(part))
                                 for part in parts if len(part) > 1]
        model.train()
        every = [x for losses in by_lang.values() for x in losses]
        overall = sum(loss * n for loss, n in every) / max(1, sum(n for _, n in every))
        return overall, {lang: round(sum(loss * n for loss, n in losses) /
                                     max(1, sum(n for _, n in losses)), 5)
                         for lang, losses in by_lang.items() if losses}

    def measure():
        overall, by_lang = valid_loss()
        state["valid"].append((state["step"], overall))
        state.setdefault("valid_by_language", []).append((state["step"], by_lang))
        return f"held-out loss {overall:.4f} (" + \
            ", ".join(f"{lang} {loss:.3f}" for lang, loss in by_lang.items()) + ")"

    def save():
        save_atomic({"config": config, "model": model.state_dict(),
                     "optimizer": optimizer.state_dict(), "schedule": schedule.state_dict(),
                     "rng": torch.get_rng_state(), "state": state}, checkpoint, torch)
        with open(out / "loss.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["step", "train_loss", "valid_loss", "pairs", "seconds"])
            valid_at = dict(state["valid"])
            for s, loss, n, t in state["losses"]:
                w.writerow([s, f"{loss:.5f}", f"{valid_at[s]:.5f}" if s in valid_at else "", n,
                            f"{t:.1f}"])
        (out / "loss.json").write_text(json.dumps({"config": config, **state}, indent=0))
        smooth = [(s, sum(x[1] for x in state["losses"][max(0, k - 19):k + 1]) /
                   len(state["losses"][max(0, k - 19):k + 1]))
                  for k, (s, *_) in enumerate(state["losses"])]
        write_png(out / "loss.png", [(smooth, (40, 90, 200)), (state["valid"], (220, 60, 30))])

    if state["step"] == 0 and not state["valid"]:
        print(f"step 0: {measure()}, the starting model", flush=True)
    model.train()
    stop = min(total, a.max_steps) if a.max_steps else total
    window = []
    while state["step"] < stop:
        rows = [pairs[i] for i in batches[state["step"]]]
        started, cpu = time.perf_counter(), time.process_time()
        with torch.autocast("cpu", dtype=torch.bfloat16) if a.precision == "bf16" \
                else contextlib.nullcontext():
            loss = loss_fn(features(rows), None)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        spent = time.perf_counter() - started
        state["step"] += 1
        state["seconds"] += spent
        state["cpu_seconds"] = state.get("cpu_seconds", 0.0) + time.process_time() - cpu
        state["pairs"] += len(rows)
        state["losses"].append((state["step"], loss.item(), state["pairs"], state["seconds"]))
        window = (window + [(len(rows), spent)])[-20:]
        if state["step"] % 10 == 0 or state["step"] == stop:
            rate = sum(n for n, _ in window) / sum(t for _, t in window)
            recent = [x[1] for x in state["losses"][-20:]]
            print(f"step {state['step']}/{total} loss {sum(recent) / len(recent):.4f} "
                  f"{rate:.2f} pairs/s ({state['pairs'] / state['cpu_seconds']:.2f} per CPU-s), "
                  f"{state['seconds'] / 60:.1f} min so far, about "
                  f"{(total - state['step']) * a.batch / rate / 60:.0f} min to go", flush=True)
        if state["step"] % a.checkpoint_every == 0 or state["step"] == stop:
            held_out = measure()
            save()
            print(f"checkpoint at step {state['step']}: {held_out}", flush=True)
    if state["step"] == total:
        model.max_seq_length = base_length       # trained on shorter texts, read as the stock
        model.save(str(out / "model"), create_model_card=False)
        print(f"the tuned model: {out / 'model'} ({state['pairs']:,} pairs in "
              f"{state['seconds'] / 60:.1f} min, {state['pairs'] / state['seconds']:.2f} pairs/s, "
              f"{state['pairs'] / state['cpu_seconds']:.2f} per CPU-s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
