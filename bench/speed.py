#!/usr/bin/env python3
"""Speed benchmark: codebase-rag against naive baselines, measured in the same run.

    python bench/speed.py [--repo DIR] [--osu DIR] [--runs N] [--skip-full] [--work DIR]

Writes bench/RESULTS-speed.md (or --out) (rewritten after every measurement, so a run cut short
still leaves what it measured) and prints the table at the end.

Every figure is a child process timed from outside: wall time by the clock around it,
peak RSS by `/usr/bin/time -f %M`. Each row is the median of --runs runs (the full-index
rows: --full-runs, default 1, as each takes many minutes), and our runs alternate with
the baseline's so that the machine's noise hits both.

The trees are copied into the scratch folder (--work; a temp dir by default), so no index
ever lands in the original tree. With --work, what the scratch folder already holds (the
copies, the ONNX export, the indexes the quick rows use) is reused by the next run.

Rows and their baselines:
  1  cold query: `query.py "..."` vs bench/naive_query.py (sentence-transformers + the
     public chromadb client on the same index), questions taken in turn
  2  `index.py --single FILE` after an edit inside one member (one window to embed), and
     after appending a comment (chunks unchanged, vectors from the cache);
     `index.py --hook` with a PostToolUse event on stdin; baseline: bench/naive_index.py
     --single / --hook (load sentence-transformers and chromadb, delete the file's chunks,
     chunk it, add them back)
  3  no-op `index.py --source DIR` on the repo and on osu; baseline: bench/naive_index.py
     --incremental (chromadb + sentence-transformers, hash every file, compare with a
     manifest)
  4  full index: first-time build (ONNX export included; the export alone is timed in the
     notes) and a --rebuild from the embedding cache, vs bench/naive_index.py (chromadb's
     SentenceTransformerEmbeddingFunction, batches of 500)
  5  embedding levers one at a time (bench/levers.py): embedder, precision, batch size,
     length-sorted batches

Rows 1-3 need an index but not its vectors' values: unless a real one exists, speed.py
builds one whose vectors are placeholders (every file, chunk and window is there, in
Chroma and SQLite, same sizes; only the numbers are pseudo-random), because embedding
osu for real takes hours here. Row 1 is measured again on the real index when the
full-index rows run. Internal: `speed.py --placeholder-build SRC` does that build.
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PY = sys.executable
CODE = ROOT          # where index.py and query.py run from: a snapshot taken at the start
OUT = HERE / "RESULTS-speed.md"
QUESTIONS = [
    "how are user passwords hashed and verified",
    "where is the ffmpeg command line for transcoding built",
    "parse season and episode numbers from a file name",
    "authenticate a request with an API key",
    "refresh library item metadata from remote providers",
]


def child_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEBASE_RAG_")}
    # as on a user's machine, Python caches the compiled index.py (this sandbox sets
    # PYTHONDONTWRITEBYTECODE=1, which costs every process ~0.1 s of compiling)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = str(CODE)     # every child imports the snapshot's package
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", ANONYMIZED_TELEMETRY="False",
               TOKENIZERS_PARALLELISM="false", PYTHONUNBUFFERED="1")
    return env


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- running
class Failed(Exception):
    pass


def run(cmd, stdin=None, cwd=None, check=True):
    """(wall seconds, peak RSS in MB, stdout) of one child process."""
    with tempfile.NamedTemporaryFile(suffix=".time") as tf:
        full = ["/usr/bin/time", "-o", tf.name, "-f", "%e %M"] + [str(c) for c in cmd]
        t0 = time.perf_counter()
        p = subprocess.run(full, input=stdin, capture_output=True, text=True,
                           cwd=cwd, env=child_env())
        wall = time.perf_counter() - t0
        fields = Path(tf.name).read_text().split()
    if check and p.returncode != 0:
        raise Failed(f"{' '.join(map(str, cmd[1:]))} exited {p.returncode}: "
                     f"{p.stderr.strip()[-800:]}")
    rss_mb = int(fields[-1]) / 1024 if fields else float("nan")
    return wall, rss_mb, p.stdout + p.stderr


class Series:
    """Timings of one command kind: wall times and peak RSS values."""

    def __init__(self):
        self.walls, self.rss, self.notes = [], [], []

    def add(self, wall, rss):
        self.walls.append(wall)
        self.rss.append(rss)

    @property
    def wall(self):
        return statistics.median(self.walls) if self.walls else None

    @property
    def peak(self):
        return statistics.median(self.rss) if self.rss else None

    def spread(self):
        if len(self.walls) < 2:
            return ""
        return f" ({min(self.walls):.2f}-{max(self.walls):.2f})"


# ----------------------------------------------------------------------------- the table
class Report:
    def __init__(self, args, work):
        self.args, self.work, self.rows, self.notes = args, work, [], []
        self.sections = []            # extra Markdown, e.g. the embedding levers
        self.started = time.time()
        self.info = {}

    def row(self, key, what, ours, base, runs, targets, base_what=""):
        """targets: list of (description, passed or None)."""
        self.rows = [r for r in self.rows if r["key"] != key]
        self.rows.append(dict(key=key, what=what, ours=ours, base=base, runs=runs,
                              targets=targets, base_what=base_what))
        self.rows.sort(key=lambda r: r["key"])
        self.write()

    def table(self):
        out = ["| # | measurement | ours: wall (range) | ours: peak RSS | baseline: wall | "
               "baseline: peak RSS | ratio (baseline/ours) | target | result | runs |",
               "|---|---|---|---|---|---|---|---|---|---|"]
        for r in self.rows:
            o, b = r["ours"], r["base"]
            ratio = (f"{b.wall / o.wall:.1f}x" if b is not None and o.wall and b.wall
                     else "-")
            targets = "; ".join(t for t, _ in r["targets"]) or "-"
            verdicts = [ok for _, ok in r["targets"] if ok is not None]
            result = ("-" if not verdicts else "**pass**" if all(verdicts) else
                      "**FAIL** (" + ", ".join(t for t, ok in r["targets"] if ok is False)
                      + ")")
            out.append(
                f"| {r['key']} | {r['what']} | {fmt_s(o.wall)}{o.spread()} | {fmt_mb(o.peak)} | "
                f"{fmt_s(b.wall) + b.spread() if b else '-'} | {fmt_mb(b.peak) if b else '-'} | "
                f"{ratio} | {targets} | {result} | {r['runs']} |")
        return "\n".join(out)

    def write(self):
        a = self.args
        head = [
            "# Speed benchmark",
            "",
            f"Generated by `python bench/speed.py {' '.join(sys.argv[1:])}` "
            f"on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(self.started))}, "
            f"{(time.time() - self.started) / 60:.0f} min so far"
            + ("" if self.info.get("done") else " (**still running or cut short**)") + ".",
            "",
            f"- code: {self.info.get('git', '?')}",
            f"- machine: {self.info.get('machine', '?')}",
            f"- repo: `{a.repo}` ({self.info.get('repo_files', '?')} .cs files); "
            f"osu: `{a.osu}` ({self.info.get('osu_files', '?')} .cs files); copied to "
            f"`{self.work}`",
            "- wall = median over the runs, in seconds (min-max in brackets); "
            "peak RSS = median of each process's maximum resident set (`/usr/bin/time %M`), "
            "in MB of 2^20 bytes",
            "- children run with Python's bytecode cache on (PYTHONDONTWRITEBYTECODE unset, "
            "as on a user's machine), HF_HUB_OFFLINE=1, no CODEBASE_RAG_* variables",
            "- ours and the baseline alternate run by run (and which goes first alternates "
            "too); ratio = baseline wall / our wall",
            "",
        ]
        body = [self.table(), "",
                f"Load average (1, 5, 15 min) when this was written: "
                f"{', '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores "
                f"(other jobs shared the machine).", ""]
        if self.notes:
            body += ["## Notes", ""] + [f"- {n}" for n in self.notes] + [""]
        body += self.sections
        OUT.write_text("\n".join(head + body))


def fmt_s(x):
    return "-" if x is None else f"{x:.2f} s" if x < 100 else f"{x:.0f} s ({x / 60:.1f} min)"


def fmt_mb(x):
    return "-" if x is None else f"{x:.0f} MB"


# ----------------------------------------------------------------------------- setup
def count_cs(root):
    return sum(1 for p in Path(root).rglob("*.cs") if ".git" not in p.parts)


def fresh_copy(src, dst):
    """A copy of a tree as a new clone has it: no .git, no index."""
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, symlinks=True,
                    ignore=shutil.ignore_patterns(".git", ".codebase-rag"))
    return dst


def copy_tree(src, dst):
    """fresh_copy, made once per work folder."""
    if (dst / ".speed-copied").is_file():
        return
    fresh_copy(src, dst)
    (dst / ".speed-copied").write_text(str(src))


def snapshot(dest):
    """This checkout's commands and package, copied into dest, so that edits made while a
    benchmark runs do not count; returns dest, which the children then run from."""
    global CODE
    CODE = Path(dest)
    shutil.rmtree(CODE, ignore_errors=True)
    CODE.mkdir(parents=True)
    for name in ("index.py", "query.py"):
        shutil.copy2(ROOT / name, CODE / name)
    shutil.copytree(ROOT / "codebase_rag", CODE / "codebase_rag",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return CODE


def export_onnx(folder):
    """ONNX export of the packaged model into folder; returns the wall time."""
    if (folder / "model.onnx").is_file():
        return None
    code = (f"from codebase_rag.export import TorchEmbedder, resolve_model; "
            f"TorchEmbedder(resolve_model()[0]).export_onnx({str(folder)!r})")
    wall, rss, _ = run([PY, "-c", code])
    return wall, rss


def seed_model(export, db):
    (db).mkdir(parents=True, exist_ok=True)
    shutil.copytree(export, db / "model", dirs_exist_ok=True)


def placeholder_index(src, export):
    """src/.codebase-rag with real files, chunks and windows, placeholder vectors."""
    db = src / ".codebase-rag"
    stamp = f"placeholder {code_hash()}"
    if (db / "index.sqlite").is_file() and (db / ".speed-kind").is_file() and \
            (db / ".speed-kind").read_text().strip() == stamp:
        return "placeholder"
    shutil.rmtree(db, ignore_errors=True)
    seed_model(export, db)
    log(f"building a placeholder-vector index of {src} (untimed)")
    wall, _, out = run([PY, __file__, "--placeholder-build", src])
    (db / ".speed-kind").write_text(stamp)
    log(f"  done in {wall:.0f} s: {out.strip().splitlines()[-1] if out.strip() else ''}")
    return "placeholder"


def placeholder_build(src):
    """Run the package's own build with an embedder of pseudo-random unit vectors (cached
    like real ones), so every table and the Chroma collection get their real size."""
    import numpy as np
    from codebase_rag.config import DIM
    from codebase_rag.config import HUB_MODEL
    from codebase_rag.embed import index_model
    from codebase_rag.build_runs import index_tree
    from codebase_rag.text import text_key

    class Placeholder:
        dim = DIM
        count_tokens = index_model(src / ".codebase-rag", HUB_MODEL, "fp32").count_tokens

        def __call__(self, texts):
            vecs = np.stack([np.random.default_rng(int(text_key(t)[:12], 16)).standard_normal(DIM)
                             for t in texts]).astype(np.float32)
            return vecs / np.linalg.norm(vecs, axis=1, keepdims=True)

    print(index_tree(str(src), None, progress=False, embedder=Placeholder()))
    return 0


def typical_file(root):
    """A ~100-300-line file with at least one member body: the median-sized one."""
    from codebase_rag.chunkers import csharp
    from codebase_rag.walk import Ignore, read_source, walk
    candidates = []
    for rel, path, _ in walk(root, Ignore(root, ())):
        text = read_source(path)
        n = text.count("\n") if text else 0
        if 100 <= n <= 300:
            candidates.append((n, rel))
    candidates.sort()
    for n, rel in candidates[len(candidates) // 2:] + candidates[:len(candidates) // 2]:
        text = (root / rel).read_text(encoding="utf-8-sig")
        members = [c for c in csharp.chunk(text)
                   if c.kind in csharp.MEMBER_KINDS and c.end_line - c.sig_line >= 3]
        if members:
            return rel, n, members[0]
    raise SystemExit(f"no 100-300 line .cs file with a member body in {root}")


class Editor:
    """Edits the benchmark file: each edit is new text, so something really re-indexes."""

    def __init__(self, path, member):
        self.path, self.member = path, member
        self.original = path.read_bytes()
        self.count = 0

    def inside_member(self):
        self.count += 1
        lines = self.original.decode("utf-8-sig").split("\n")
        at = self.member.end_line - 1        # just above the closing brace: inside the body
        lines.insert(at, f"            // speed bench edit {self.count} {time.time_ns()}")
        self.path.write_text("\n".join(lines), encoding="utf-8")

    def append_comment(self):
        self.count += 1
        self.path.write_bytes(self.original + f"\n// speed bench {time.time_ns()}\n".encode())

    def restore(self):
        self.path.write_bytes(self.original)


# ----------------------------------------------------------------------------- benchmark
def alternate(i, ours, base):
    """Run ours and the baseline, in an order that alternates with i."""
    if i % 2 == 0:
        ours(), base()
    else:
        base(), ours()


def bench_query(rep, key, db, runs, label):
    ours, base = Series(), Series()
    for i in range(runs):
        q = QUESTIONS[i % len(QUESTIONS)]

        def o():
            wall, rss, out = run([PY, CODE / "query.py", "--db", db, q])
            ours.add(wall, rss)

        def b():
            wall, rss, out = run([PY, HERE / "naive_query.py", "--db", db, q])
            base.add(wall, rss)
        alternate(i, o, b)
        log(f"  {key} run {i + 1}: ours {ours.walls[-1]:.2f}s {ours.rss[-1]:.0f}MB, "
            f"naive {base.walls[-1]:.2f}s")
    ratio = base.wall / ours.wall
    rep.row(key, f"cold query `query.py \"...\"` ({label}; {len(QUESTIONS)} questions in turn)",
            ours, base, runs,
            [("≤ 1.0 s", ours.wall <= 1.0), ("≤ 250 MB", ours.peak <= 250),
             ("≥ 6x faster", ratio >= 6)], "naive_query.py")


def bench_edits(rep, repo, naive_db, runs):
    rel, nlines, member = typical_file(repo)
    path = repo / rel
    ed = Editor(path, member)
    rep.notes.append(f"rows 2a-2c edit `{rel}` ({nlines} lines): 2a and 2c insert a new "
                     f"comment line inside `{member.cls}.{member.member}` "
                     f"(lines {member.start_line}-{member.end_line}), so one member's "
                     "windows are embedded again; 2b appends a comment at the end (the "
                     "file's chunks are unchanged, every vector comes from the cache). "
                     "The baselines re-chunk and re-embed every chunk of the file.")
    single, single_b, append, hook, hook_b = (Series() for _ in range(5))
    embedded = {"2a": [], "2b": [], "2c": []}
    event = json.dumps({"tool_name": "Edit", "tool_input": {"file_path": str(path.resolve())},
                        "cwd": str(repo)})
    try:
        for i in range(runs):
            def o_single():
                ed.inside_member()
                wall, rss, out = run([PY, CODE / "index.py", "--single", path], cwd=repo)
                single.add(wall, rss)
                embedded["2a"].append(parse_embedded(out))

            def b_single():
                ed.inside_member()
                wall, rss, _ = run([PY, HERE / "naive_index.py", "--single", path,
                                    "--source", repo, "--db", naive_db])
                single_b.add(wall, rss)

            def o_append():
                ed.append_comment()
                wall, rss, out = run([PY, CODE / "index.py", "--single", path], cwd=repo)
                append.add(wall, rss)
                embedded["2b"].append(parse_embedded(out))

            def o_hook():
                ed.inside_member()
                wall, rss, out = run([PY, CODE / "index.py", "--hook"], stdin=event, cwd=repo)
                if out.strip():
                    rep.notes.append(f"--hook said: {out.strip()[:300]}")
                hook.add(wall, rss)

            def b_hook():
                ed.inside_member()
                wall, rss, _ = run([PY, HERE / "naive_index.py", "--hook", "--source", repo,
                                    "--db", naive_db], stdin=event)
                hook_b.add(wall, rss)
            alternate(i, o_single, b_single)
            o_append()
            alternate(i + 1, o_hook, b_hook)
            log(f"  2 run {i + 1}: single {single.walls[-1]:.2f}s (naive "
                f"{single_b.walls[-1]:.2f}s), append {append.walls[-1]:.2f}s, hook "
                f"{hook.walls[-1]:.2f}s (naive {hook_b.walls[-1]:.2f}s)")
    finally:
        ed.restore()
    rep.row("2a", f"`index.py --single FILE`, edit inside a member "
            f"({summary(embedded['2a'])} embedded)", single, single_b, runs,
            [("≤ 1.5 s", single.wall <= 1.5)], "naive_index.py --single")
    rep.row("2b", f"`index.py --single FILE`, comment appended "
            f"({summary(embedded['2b'])} embedded); baseline: row 2a's", append, single_b, runs,
            [("≤ 1.5 s", append.wall <= 1.5)], "naive_index.py --single")
    rep.row("2c", "`index.py --hook`, Edit event on stdin, edit inside a member", hook, hook_b,
            runs, [("≤ 1.5 s", hook.wall <= 1.5)], "naive_index.py --hook")


def parse_embedded(out):
    import re
    m = re.search(r"(\d+) embedded", out)
    return int(m.group(1)) if m else None


def summary(values):
    values = [v for v in values if v is not None]
    if not values:
        return "? windows"
    lo, hi = min(values), max(values)
    return f"{lo} window{'s' if hi != 1 else ''}" if lo == hi else f"{lo}-{hi} windows"


def bench_noop(rep, key, tree, naive_db, runs, limit, label):
    # sync both sides first (untimed): a file restored after row 2 is a change
    _, _, out = run([PY, CODE / "index.py", "--source", tree, "-q"])
    run([PY, HERE / "naive_index.py", "--seed-manifest", "--source", tree, "--db", naive_db])
    ours, base = Series(), Series()
    changed = []
    for i in range(runs):
        def o():
            wall, rss, out = run([PY, CODE / "index.py", "--source", tree, "-q"])
            ours.add(wall, rss)
            changed.append(out.strip())

        def b():
            wall, rss, out = run([PY, HERE / "naive_index.py", "--incremental", "--source", tree,
                                  "--db", naive_db])
            base.add(wall, rss)
        alternate(i, o, b)
        log(f"  {key} run {i + 1}: ours {ours.walls[-1]:.2f}s, naive {base.walls[-1]:.2f}s")
    if not all("(0 changed)" in c for c in changed):
        rep.notes.append(f"row {key}: a no-op run re-indexed something: {changed[-1][:300]}")
    rep.row(key, f"no-op `index.py --source DIR` on {label}", ours, base, runs,
            [(f"≤ {limit:g} s", ours.wall <= limit)], "naive_index.py --incremental")


def bench_full(rep, args, work, repo):
    """Row 4: first-time builds vs the naive pipeline, then --rebuild."""
    naive, first, rebuild = Series(), Series(), Series()
    fresh_db, naive_db = work / "full-fresh", work / "naive-full"
    outs = {}

    def target_rows():
        rows = [("4a", "full index, first-time build (empty --db, ONNX export included)", first),
                ("4b", "full index, `--rebuild` of an existing index (vectors from the cache)",
                 rebuild)]
        for key, what, s in rows:
            if s.walls:
                ratio = naive.wall / s.wall if naive.walls else None
                rep.row(key, what + (f" — {outs[key]}" if key in outs else ""),
                        s, naive if naive.walls else None, len(s.walls),
                        [("≥ 3x faster", None if ratio is None else ratio >= 3),
                         ("≤ 1.0 GB", s.peak <= 1024)], "naive_index.py")

    for r in range(args.full_runs):
        def b():
            log("  4 naive full index ...")
            wall, rss, out = run([PY, HERE / "naive_index.py", "--source", repo, "--db", naive_db])
            naive.add(wall, rss)
            outs["naive"] = next((l for l in out.splitlines() if l.startswith("naive:")), "?")
            log(f"  4 naive: {wall:.0f}s {rss:.0f}MB ({outs['naive']})")

        def o():
            shutil.rmtree(fresh_db, ignore_errors=True)
            log("  4a ours first-time build ...")
            wall, rss, out = run([PY, CODE / "index.py", "--source", repo, "--db", fresh_db, "-q"])
            first.add(wall, rss)
            outs["4a"] = last_line(out)
            log(f"  4a ours: {wall:.0f}s {rss:.0f}MB ({outs['4a']})")
        alternate(r + 1, o, b)           # the baseline first: it is the cheaper one
        target_rows()
    for r in range(args.rebuild_runs):
        log("  4b ours --rebuild ...")
        wall, rss, out = run([PY, CODE / "index.py", "--source", repo, "--db", fresh_db,
                              "--rebuild", "-q"])
        rebuild.add(wall, rss)
        outs["4b"] = last_line(out)
        log(f"  4b: {wall:.0f}s {rss:.0f}MB")
        target_rows()
    rep.notes.append(f"row 4 baseline (naive_index.py, one process, chromadb's "
                     f"SentenceTransformerEmbeddingFunction, batches of 500): {outs.get('naive')}")
    # the real index, for cold queries too
    bench_query(rep, "1b", fresh_db, args.runs, f"real index of {repo.name}")


def bench_levers(rep, args, work):
    """Row-less section: bench/levers.py, each embedding lever on and off."""
    out = work / "levers.md"
    log("  5 embedding levers (bench/levers.py) ...")
    run([PY, HERE / "levers.py", "--repo", args.repo, "--texts", str(args.lever_texts),
         "--rounds", str(args.runs if args.runs < 3 else 3), "--out", out])
    rep.sections = [out.read_text().replace("# Embedding levers", "## Embedding levers", 1)]
    rep.write()


def last_line(out):
    lines = [l for l in out.strip().splitlines() if l.startswith("indexed")]
    return lines[-1].split(": ", 1)[-1] if lines else out.strip()[-200:]


def code_hash():
    import hashlib
    h = hashlib.sha1()
    for name in ("index.py", "query.py"):
        h.update((CODE / name).read_bytes())
    return h.hexdigest()[:10]


def git_state():
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "index.py",
                                "query.py"], capture_output=True, text=True).stdout.split()
        return (f"{head}" + (f" with uncommitted changes to {', '.join(dirty[1::2])}" if dirty
                             else "") + f"; index.py + query.py copied at the start and run "
                f"from the copy (sha1 {code_hash()})")
    except OSError:
        return "?"


def machine():
    cpu, flags = "?", []
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
            elif line.startswith("flags"):
                flags = [f for f in line.split(":", 1)[1].split()
                         if f.startswith(("avx", "amx")) or "vnni" in f]
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{os.cpu_count()} cores ({cpu}; flags {' '.join(flags) or 'none'}), {mem:.0f} GB, "
            f"Python {platform.python_version()}; 1-min load average at the start "
            f"{os.getloadavg()[0]:.2f}")


def main():
    global CODE, OUT
    p = argparse.ArgumentParser(description="Speed benchmark: codebase-rag vs naive baselines; "
                                            "writes bench/RESULTS-speed.md")
    p.add_argument("--repo", default="/work/trees/jellyfin", help="C# tree (default jellyfin)")
    p.add_argument("--osu", default="/work/trees/osu", help="second tree, for the no-op row")
    p.add_argument("--runs", type=int, default=5, help="runs per quick row (default 5)")
    p.add_argument("--full-runs", type=int, default=1,
                   help="runs per full-index build (default 1: each takes many minutes)")
    p.add_argument("--rebuild-runs", type=int, default=3, help="runs of --rebuild (default 3)")
    p.add_argument("--skip-full", action="store_true", help="skip the full-index rows")
    p.add_argument("--lever-texts", type=int, default=200,
                   help="texts per run of bench/levers.py (0: skip the levers)")
    p.add_argument("--work", help="scratch folder, reused across runs (default: a temp dir)")
    p.add_argument("--out", default=str(OUT), help=f"Markdown file to write (default {OUT})")
    p.add_argument("--placeholder-build", metavar="SRC", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.placeholder_build:
        return placeholder_build(Path(args.placeholder_build))

    OUT = Path(args.out).resolve()
    args.repo, args.osu = Path(args.repo).resolve(), Path(args.osu).resolve()
    work = Path(args.work).resolve() if args.work else Path(tempfile.mkdtemp(prefix="rag-speed-"))
    work.mkdir(parents=True, exist_ok=True)
    for tree in (args.repo, args.osu):
        if work == tree or tree in work.parents:
            raise SystemExit("--work must not be inside a benchmarked tree")
    snapshot(work / "code")
    rep = Report(args, work)
    rep.info.update(git=git_state(), machine=machine(), repo_files=count_cs(args.repo),
                    osu_files=count_cs(args.osu))
    rep.write()

    repo, osu = work / args.repo.name, work / ("osu-" + args.osu.name)
    log(f"copying trees into {work}")
    copy_tree(args.repo, repo)
    copy_tree(args.osu, osu)
    export = work / "onnx-export"
    took = export_onnx(export)
    if took:
        rep.notes.append(f"ONNX export alone (a separate process, as in a first-time build): "
                         f"{took[0]:.1f} s, {took[1]:.0f} MB peak")
    kinds = {t: placeholder_index(t, export) for t in (repo, osu)}
    rep.notes.append("rows 1a, 2 and 3 use indexes whose vectors are placeholders (every file, "
                     "chunk and window indexed for real, pseudo-random unit vectors in Chroma "
                     "and the cache): timing-equivalent, as their paths never look at the "
                     "values and one query costs the same HNSW walk. Row 1b repeats the "
                     "cold query on the real index from row 4a."
                     if "placeholder" in kinds.values() else "")
    rep.notes = [n for n in rep.notes if n]
    naive_single_db = work / "naive-single"

    steps = [
        ("1a cold query", lambda: bench_query(
            rep, "1a", repo / ".codebase-rag", args.runs, f"index of {args.repo.name}"
            + (" with placeholder vectors" if kinds[repo] == "placeholder" else ""))),
        ("2 --single / --hook", lambda: bench_edits(rep, repo, naive_single_db, args.runs)),
        ("3a no-op", lambda: bench_noop(
            rep, "3a", repo, work / "naive-noop-repo", args.runs, 1.5,
            f"{args.repo.name} ({rep.info['repo_files']} files)")),
        ("3b no-op", lambda: bench_noop(
            rep, "3b", osu, work / "naive-noop-osu", args.runs, 3.0,
            f"{args.osu.name} ({rep.info['osu_files']} files)")),
    ]
    if args.lever_texts:
        steps.append(("5 embedding levers", lambda: bench_levers(rep, args, work)))
    if not args.skip_full:
        steps.append(("4 full index (slow)", lambda: bench_full(rep, args, work, repo)))
    for name, step in steps:
        log(name)
        try:
            step()
        except Failed as e:
            log(f"  failed: {e}")
            rep.notes.append(f"step {name} failed: {e}")
            rep.write()
    rep.info["done"] = True
    rep.write()
    print(rep.table())
    print(f"\nwritten to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
