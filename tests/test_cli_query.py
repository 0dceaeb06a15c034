"""query.py as a person or an agent runs it: the real MiniLM from the packaged weights and
a real ChromaDB in a temporary folder."""
import json
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT, SAMPLE, network_guard

QUESTIONS = json.loads((SAMPLE / "questions.json").read_text())


# ----------------------------------------------------------------------------- answers
def test_sample_questions_find_the_expected_member(cli, sample_tree, tmp_path):
    """The two questions from the README at rank 1; every other one in the top 3."""
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    for i, q in enumerate(QUESTIONS):
        results = cli.query(db, q["question"], "-k", "3")
        # "also": other acceptable members, as "Member" (same file) or "File.cs:Member"
        accepted = {tuple(m.split(":")) if ":" in m else (q["file"], m)
                    for m in [q["member"], *q.get("also", [])]}
        ranks = [n for n, r in enumerate(results, 1) if (r["file"], r["member"]) in accepted]
        assert ranks and ranks[0] <= (1 if i < 2 else 3), \
            f"{q['question']!r} -> {[(r['file'], r['member']) for r in results]}"


def test_result_fields_and_human_output(cli, sample_tree, tmp_path):
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    results = cli.query(db, "how does the energy system refill timers?")
    r = results[0]
    for field in ("file", "start_line", "end_line", "namespace", "class", "member", "method",
                  "kind", "distance", "text"):
        assert field in r
    assert r["method"] == r["member"] and 0 <= r["distance"] <= 2
    lines = (sample_tree / r["file"]).read_text().split("\n")
    chunk = lines[r["start_line"] - 1:r["end_line"]]
    from codebase_rag.config import LINES
    assert len(chunk) > LINES and r["text"] == "\n".join(chunk[:LINES])   # as print shows
    whole = cli.query(db, "how does the energy system refill timers?", "--lines", "-1")[0]
    assert whole["text"] == "\n".join(chunk)
    out = cli.run("query.py", "--db", db, "how does the energy system refill timers?",
                  "--lines", "3").stdout
    first = out.splitlines()[0]
    assert first.startswith(f"#1 | {r['file']}:{r['start_line']}-{r['end_line']} | "
                            f"{r['class']}.{r['member']} | cosine dist: ")
    assert out.splitlines()[1].lstrip().startswith(str(r["start_line"]))


def test_the_answer_says_how_the_question_was_read_and_the_caller_may_say(cli, sample_tree,
                                                                          tmp_path):
    """A trailing period changes nothing unless the caller asks for a doc-comment reading;
    asked as one shape, the two forms of a sentence get the same answer."""
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    sentence = "Refills the player's energy timers"
    plain, period = cli.query(db, sentence), cli.query(db, sentence + ".")
    assert {r["read_as"] for r in plain + period} == {"keywords"}
    assert [(r["file"], r["member"]) for r in plain] == \
        [(r["file"], r["member"]) for r in period]
    assert {r["read_as"] for r in cli.query(db, "where are timers refilled")} == {"question"}
    as_doc = [cli.query(db, q, "--as", "doc") for q in (sentence, sentence + ".")]
    assert {r["read_as"] for r in as_doc[0]} == {"doc"}
    assert [(r["file"], r["member"]) for r in as_doc[0]] == \
        [(r["file"], r["member"]) for r in as_doc[1]]


def test_no_overlapping_results_and_k(cli, sample_tree, tmp_path):
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    results = cli.query(db, "inventory item", "-k", "8")
    assert len(results) == 8
    spans = [(r["file"], r["start_line"], r["end_line"]) for r in results]
    for i, (f, s, e) in enumerate(spans):
        for f2, s2, e2 in spans[i + 1:]:
            assert f != f2 or e < s2 or e2 < s


def test_batch_prints_one_array_per_question(cli, sample_tree, tmp_path):
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    batch = tmp_path / "questions.txt"
    batch.write_text("\n".join(q["question"] for q in QUESTIONS[:3]) + "\n")
    out = cli.run("query.py", "--db", db, "--json", "-k", "2", "--batch", batch).stdout
    arrays = [json.loads(line) for line in out.splitlines()]
    assert len(arrays) == 3 and all(len(a) == 2 for a in arrays)
    assert arrays[0][0] == cli.query(db, QUESTIONS[0]["question"], "-k", "2")[0]


def test_batch_without_json_prints_each_answer_as_text(cli, sample_tree, tmp_path):
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    batch = tmp_path / "questions.txt"
    batch.write_text("\n".join(q["question"] for q in QUESTIONS[:2]) + "\n")
    out = cli.run("query.py", "--db", db, "-k", "1", "--lines", "0", "--batch", batch).stdout
    lines = out.splitlines()
    assert [line for line in lines if line.startswith("## ")] == \
        [f"## {q['question']}" for q in QUESTIONS[:2]]
    assert [line.split(" | ")[2] for line in lines if line.startswith("#1 | ")] == \
        [f"{r['class']}.{r['member']}" for q in QUESTIONS[:2]
         for r in cli.query(db, q["question"], "-k", "1")]


def test_lines_zero_prints_the_locations_alone(cli, sample_tree, tmp_path):
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    out = cli.run("query.py", "--db", db, "-k", "3", "--lines", "0",
                  "how does the energy system refill timers?").stdout
    assert len(out.splitlines()) == 3 and all(line.startswith("#") for line in out.splitlines())


def test_path_filter_and_max_distance(cli, sample_tree, tmp_path):
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    results = cli.query(db, "energy", "--path", "Inventory/*", "-k", "3")
    assert results and all(r["file"].startswith("Inventory/") for r in results)
    assert cli.query(db, "energy", "--max-distance", "0.0001") == []


def test_index_is_found_by_walking_up(cli, sample_tree, tmp_path):
    cli.run("index.py", cwd=sample_tree)
    assert (sample_tree / ".codebase-rag" / ".gitignore").read_text().strip().endswith("*")
    out = cli.run("query.py", "--json", "refill energy timers", cwd=sample_tree / "Energy")
    assert json.loads(out.stdout)[0]["file"] == "Energy/EnergySystem.cs"


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize("args, message", [
    (["x"], "no codebase-rag index"),
    (["--db", "DB", ""], "empty question"),
    (["--db", "DB", "x", "-k", "0"], "-k must be"),
    (["--db", "DB", "x", "-k", "many"], "invalid int"),
    (["--db", "DB", "--bogus", "x"], "unrecognized"),
    (["--db", "DB", "x", "--mode", "fuzzy"], "invalid choice"),
    (["--db", "DB", "x" * 100_000], "the limit is 2,000"),         # a pasted file: at once
    (["--db", "DB", "x", "--path", "*a" * 300], "the limit is 500"),
])
def test_expected_errors_are_one_line_and_exit_2(cli, sample_tree, tmp_path, args, message):
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    proc = cli.run("query.py", *[str(db) if a == "DB" else a for a in args], cwd=tmp_path,
                   check=False)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and message in proc.stderr, proc.stderr


def test_bytes_that_are_not_utf8_in_any_argument_are_one_line_and_exit_2(cli, sample_tree,
                                                                        tmp_path):
    """A shell in a Latin-1 locale passes caf\\xe9 as a byte Python cannot decode. Before: a
    question holding it failed with 'TypeError ... run --check' and exit 1 (and so did a
    --batch read from stdin); the error for a --db holding it showed \\udce9."""
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    latin = "caf\udce9"                          # argv's bytes caf\xe9, as Python holds them
    batch = tmp_path / "questions.txt"
    batch.write_text("refill timers\n")
    cases = {
        (latin,): "question is not valid text: a byte that is not UTF-8 at character 4 "
                  "(caf\\xe9)",
        ("energy", "--path", f"src/{latin}*"): "--path is not valid text",
        ("energy", "--batch", str(tmp_path / latin)): "--batch is not valid text",
        ("energy", "--model", latin): "--model is not valid text",
    }
    for args, message in cases.items():
        proc = cli.run("query.py", "--db", db, *args, check=False)
        assert proc.returncode == 2 and message in proc.stderr, (args, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1 and "--check" not in proc.stderr
    proc = cli.run("query.py", "--db", str(tmp_path / latin), "energy", check=False)
    assert proc.returncode == 2 and "caf\\xe9" in proc.stderr and "udce9" not in proc.stderr
    for env in ({"LC_ALL": "C"}, {"PYTHONIOENCODING": "utf-8:surrogateescape"}):   # stdin
        # read with surrogateescape (else a strict decoder says the input is not UTF-8)
        stdin = subprocess.run([sys.executable, str(ROOT / "query.py"), "--db", str(db),
                                "--batch", "-"], input=b"refill timers\ncaf\xe9\n",
                               capture_output=True, env={**cli.env, **env}, timeout=600)
        err = stdin.stderr.decode()
        assert stdin.returncode == 2 and "--check" not in err, err
        assert err.strip() == ("codebase-rag: --batch - line 2 is not valid text: a byte that "
                               "is not UTF-8 at character 4 (caf\\xe9)"), err
    assert cli.query(db, "refill timers")           # and the index is as it was


# ----------------------------------------------------------------------------- chroma
def test_chromas_public_client_gives_the_same_answers_as_its_engine_bindings(cli, sample_tree,
                                                                            tmp_path):
    """The public client is the fallback for a chromadb whose engine bindings changed; it
    must agree, and must not race the model-loading thread over `import numpy`."""
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    for q in QUESTIONS[:4]:
        fast = cli.query(db, q["question"], "-k", "5")
        proc = cli.run("query.py", "--db", db, "--json", "-k", "5", q["question"],
                       env={"CODEBASE_RAG_CHROMA": "public"})
        assert json.loads(proc.stdout) == fast and proc.stderr == ""


def test_while_a_writer_holds_the_index_queries_read_the_cache_not_chroma(cli, sample_tree,
                                                                           tmp_path):
    """A writer rewrites Chroma's HNSW files in place, and a reader that loads them
    half-written can crash; while the writer lock is held, the vectors come from the
    embedding cache instead, with the same answers."""
    from codebase_rag.lock import writer_lock
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    answers = [cli.query(db, q["question"], "-k", "5") for q in QUESTIONS[:4]]
    for f in (db / "chroma").rglob("*.bin"):
        f.write_bytes(b"\0" * 64)                        # as if caught mid-write
    with writer_lock(db):
        for q, expected in zip(QUESTIONS[:4], answers):
            got = cli.query(db, q["question"], "-k", "5")
            assert [(r["file"], r["member"]) for r in got] == \
                [(r["file"], r["member"]) for r in expected]
            assert [r["distance"] for r in got] == \
                pytest.approx([r["distance"] for r in expected], abs=2e-4)


def test_a_chromadb_whose_bindings_changed_falls_back_with_one_warning(cli, sample_tree,
                                                                       tmp_path):
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    want = cli.query(db, QUESTIONS[0]["question"])
    shim = tmp_path / "shim"
    shim.mkdir()
    # as if a chromadb release had moved its engine: our direct import fails, its own works
    (shim / "sitecustomize.py").write_text(textwrap.dedent("""
        import builtins
        real_import = builtins.__import__
        def fake_import(name, globals=None, *args, **kwargs):
            if name == "chromadb_rust_bindings" and (globals or {}).get("__name__") == \\
                    "codebase_rag.chroma":
                raise ImportError("No module named 'chromadb_rust_bindings'")
            return real_import(name, globals, *args, **kwargs)
        builtins.__import__ = fake_import
        """))
    proc = cli.run("query.py", "--db", db, "--json", QUESTIONS[0]["question"],
                   env={"PYTHONPATH": str(shim)})
    assert json.loads(proc.stdout) == want
    assert len(proc.stderr.strip().splitlines()) == 1 and "public client" in proc.stderr


# ----------------------------------------------------------------------------- lightness
def test_query_does_not_load_torch(cli, sample_tree, tmp_path):
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    probe = (f"import sys, query; query.main(['--db', {str(db)!r}, 'energy']); "
             f"print('TORCH' if 'torch' in sys.modules else 'NO-TORCH')")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         env=cli.env, cwd=ROOT, timeout=120).stdout
    assert out.strip().endswith("NO-TORCH")


def test_onnx_vectors_match_sentence_transformers(onnx_export):
    from codebase_rag.chunkers import csharp
    from codebase_rag.embed import OnnxEmbedder
    from codebase_rag.export import TorchEmbedder, resolve_model
    texts = [q["question"] for q in QUESTIONS]
    for path in sorted(SAMPLE.rglob("*.cs")):
        lines = path.read_text().split("\n")
        texts += ["\n".join(lines[c.start_line - 1:c.end_line])
                  for c in csharp.chunk(path.read_text())]
    model_path, _ = resolve_model()
    reference = TorchEmbedder(model_path)(texts)
    fast = OnnxEmbedder(onnx_export)(texts)
    cosines = (reference * fast).sum(1)
    assert len(texts) > 30 and cosines.min() >= 0.9999


def test_no_network_connection_is_ever_attempted(cli, sample_tree, tmp_path):
    """Index (with the torch path and the ONNX export) and query with every internet
    socket connection made to fail loudly."""
    home = tmp_path / "home"          # where onnxruntime's telemetry would keep its state
    home.mkdir()
    env = {"PYTHONPATH": network_guard(tmp_path), "HOME": str(home)}
    db = tmp_path / "db"
    cache = cli.fresh_cache(tmp_path / "cache")
    cli.run("index.py", "--source", sample_tree, "--db", db, env=env)      # exports ONNX too
    cli.run("query.py", "--db", db, "refill energy timers", env=env)
    assert list(cache.glob("models/*/model.onnx"))
    assert not (tmp_path / "attempts.log").exists(), (tmp_path / "attempts.log").read_text()
    assert not [p for p in home.rglob("*") if "onnxruntime" in str(p)], "telemetry state written"
