"""A first build as a new user meets it: keyword answers while the model works, a build in
the background that outlives whoever started it, --status, the model's precision, and
kills at any moment. The real CLIs, the real MiniLM and a real ChromaDB."""
import json
import os
import random
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT, SAMPLE, assert_same_index

QUESTION = "how does the energy system refill timers?"


def bulk(tree, files=120, members=5):
    """Enough code that a build takes a while."""
    for i in range(files):
        (tree / f"Bulk{i}.cs").write_text(
            f"namespace Bulk;\npublic class Ledger{i}\n{{\n" + "".join(
                f"    /// <summary>Posts entry {j} of ledger {i}.</summary>\n"
                f"    public int Post{j}_{i}(int amount) {{ var total = amount * {j}; "
                f"return total + {i}; }}\n" for j in range(members)) + "}\n")


def wait_for(predicate, seconds=300):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.3)
    return False


def status(cli, db):
    return cli.run("index.py", "--db", db, "--status").stdout


# ----------------------------------------------------------------------------- while it builds
def test_queries_answer_by_keyword_while_a_first_build_embeds(cli, sample_tree, tmp_path):
    bulk(sample_tree)
    db = tmp_path / "db"
    build = subprocess.Popen([sys.executable, str(ROOT / "index.py"), "--source", str(sample_tree),
                              "--db", str(db)], env={**cli.env, "CODEBASE_RAG_FLUSH": "16"},
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    partial = []
    while build.poll() is None:
        proc = cli.run("query.py", "--db", db, "--json", "-k", "3", "Ledger7 Post3_7",
                       check=False)
        assert proc.returncode in (0, 2) and "Traceback" not in proc.stderr, proc.stderr
        if proc.returncode == 0 and proc.stdout.strip():
            results = json.loads(proc.stdout)
            if results and results[0].get("semantic_index_built", 1) < 1:
                partial.append(results[0])
        time.sleep(0.1)
    assert build.wait() == 0, build.stderr.read()
    assert partial, "no query ran while the semantic index was incomplete"
    assert partial[0]["member"] == "Post3_7"                # keywords found it already
    printed = cli.run("query.py", "--db", db, QUESTION).stdout
    assert "semantic index" not in printed                  # done: no note any more
    done = cli.query(db, "Ledger7 Post3_7", "-k", "1")[0]
    assert done["member"] == "Post3_7" and "semantic_index_built" not in done


def test_every_member_gets_its_first_window_before_any_later_one(cli, sample_tree, tmp_path):
    import sqlite3
    long_body = "\n".join(f"        total += Compute{i}(value, {i});" for i in range(120))
    (sample_tree / "Long.cs").write_text(
        "class Long\n{\n    int Huge(int value)\n    {\n        var total = 0;\n"
        f"{long_body}\n        return total;\n    }}\n}}\n")
    db = tmp_path / "db"
    build = subprocess.Popen([sys.executable, str(ROOT / "index.py"), "--source", str(sample_tree),
                              "--db", str(db)], env={**cli.env, "CODEBASE_RAG_FLUSH": "8"})
    orders = []
    while build.poll() is None:
        try:
            con = sqlite3.connect(f"file:{db / 'index.sqlite'}?mode=ro", uri=True)
            orders.append(con.execute("SELECT COUNT(*) FILTER (WHERE ordinal=0 AND embedded=0), "
                                      "COUNT(*) FILTER (WHERE ordinal>0 AND embedded=1) "
                                      "FROM windows").fetchone())
            con.close()
        except sqlite3.Error:
            pass
        time.sleep(0.05)
    assert build.wait() == 0
    assert any(later == 0 and first > 0 for first, later in orders)   # seen mid-build
    assert not [o for o in orders if o[0] > 0 and o[1] > 0], "a later window came first"
    assert "every member had a vector" in status(cli, db)


# ----------------------------------------------------------------------------- background
def test_a_background_build_outlives_the_process_group_that_started_it(cli, sample_tree,
                                                                       tmp_path):
    bulk(sample_tree, files=60)
    db = tmp_path / "db"
    # as a hook runs it: a shell in a process group of its own, killed as soon as it returns
    hook = subprocess.Popen([sys.executable, str(ROOT / "index.py"), "--source", str(sample_tree),
                             "--db", str(db), "--background"], env=cli.env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    out, err = hook.communicate(timeout=60)
    assert hook.returncode == 0 and "in the background" in out, err
    if _group_alive(hook.pid):
        os.killpg(hook.pid, signal.SIGKILL)
    assert status(cli, db).startswith(("starting", "building", "built"))
    assert wait_for(lambda: status(cli, db).startswith("built")), status(cli, db)
    assert "100%" in status(cli, db)
    assert (db / "build.log").is_file()
    fresh = tmp_path / "fresh"
    cli.index(sample_tree, fresh)
    assert_same_index(db, fresh)


def _group_alive(pgid):
    try:
        os.killpg(pgid, 0)
        return True
    except OSError:
        return False


def test_status_during_and_after_a_build_and_one_build_at_a_time(cli, sample_tree, tmp_path):
    bulk(sample_tree)
    db = tmp_path / "db"
    first = cli.run("index.py", "--source", sample_tree, "--db", db, "--background",
                    env={"CODEBASE_RAG_FLUSH": "16"}).stdout
    assert "in the background" in first
    seen = []
    assert wait_for(lambda: seen.append(status(cli, db)) or seen[-1].startswith("built")), \
        seen[-1] + (db / "build.log").read_text()
    during = [s for s in seen if s.startswith("building")]
    # some status while building says what is left (the last one may come after the last
    # window, while the build writes its record: 100% embedded, nothing left)
    assert any("windows:" in s and "left" in s for s in during), during
    second = cli.run("index.py", "--source", sample_tree, "--db", db, "--background").stdout
    assert "is ready" in second                             # built: it says so, and refreshes
    assert wait_for(lambda: status(cli, db).startswith("built"))
    final = status(cli, db)
    assert "100%" in final and "last build finished" in final


@pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="a build is held still by SIGSTOP")
def test_a_search_status_and_index_status_say_the_same_progress_at_any_moment(cli, sample_tree,
                                                                              tmp_path):
    """Held still in the middle of its first build, the builder's index reads the same from
    a search's line, --status and the MCP index_status: one measure (Store.progress)."""
    from codebase_rag.mcp_server import index_status
    bulk(sample_tree)
    db = tmp_path / "db"
    # one batch for Chroma (FLUSH, 2000, is more than its windows): its vectors are made, in
    # slices, long before any window is marked embedded
    build = subprocess.Popen([sys.executable, str(ROOT / "index.py"), "--source",
                              str(sample_tree), "--db", str(db)], env=cli.env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    said = []
    try:
        def midway():
            said[:] = [cli.run("index.py", "--db", db, "--status", check=False).stdout]
            got = re.search(r"windows: ([\d,]+) of ([\d,]+) embedded", said[0])
            if not got or not 0 < int(got[1].replace(",", "")) < int(got[2].replace(",", "")):
                return False
            build.send_signal(signal.SIGSTOP)
            return True
        assert wait_for(midway, 240), said
        by_status = re.search(r"windows: ([\d,]+) of ([\d,]+) embedded \((\d+)%\)",
                              status(cli, db)).groups()
        search = cli.run("query.py", "--db", db, "ledger entry").stdout
        by_search = re.search(r"semantic index (\d+)% built \(([\d,]+) of ([\d,]+) windows\)",
                              search)
        assert by_search, search
        by_search = by_search.groups()
        by_mcp = re.search(r"windows: ([\d,]+) of ([\d,]+) embedded \((\d+)%\)",
                           index_status(db, str(sample_tree))).groups()
        assert by_status == by_mcp == (by_search[1], by_search[2], by_search[0]), \
            (by_status, by_search, by_mcp)
    finally:
        build.send_signal(signal.SIGCONT)
        build.communicate(timeout=300)
    assert build.returncode == 0 and status(cli, db).startswith("built")


# ----------------------------------------------------------------------------- precision
def test_int8_and_fp32_never_mix_in_one_index(cli, sample_tree, tmp_path):
    db = tmp_path / "db"
    cli.index(sample_tree, db, env={"CODEBASE_RAG_PRECISION": "fp32"})
    refused = cli.run("index.py", "--source", sample_tree, "--db", db, check=False,
                      env={"CODEBASE_RAG_PRECISION": "int8"})
    assert refused.returncode == 2 and "never mixes" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    cli.index(sample_tree, db, env={"CODEBASE_RAG_PRECISION": "auto"})  # keeps the index's
    assert "(fp32)" in status(cli, db)
    switched = cli.index(sample_tree, db, "--rebuild", env={"CODEBASE_RAG_PRECISION": "int8"})
    assert "0 from cache" in switched.stdout      # int8 vectors are not fp32 ones
    assert "(int8)" in status(cli, db)
    fresh = tmp_path / "fresh"
    cli.index(sample_tree, fresh, env={"CODEBASE_RAG_PRECISION": "int8"})
    assert_same_index(db, fresh)
    assert cli.query(db, QUESTION)[0]["member"] == "RefillTimers"


@pytest.mark.parametrize("precision, floor", [("fp32", 0.9999), ("int8", 0.97),
                                              ("int8-reduced", 0.97)])
def test_query_vectors_match_sentence_transformers(onnx_export, precision, floor):
    """The floors come from measurement: over 300 real windows int8 gave a minimum cosine
    of 0.991 with VNNI, int8-reduced 0.987 with AVX2 alone (bench/RESULTS-speed.md)."""
    from codebase_rag.embed import OnnxEmbedder
    from codebase_rag.export import TorchEmbedder, onnx_file, resolve_model
    questions = [q["question"] for q in json.loads((SAMPLE / "questions.json").read_text())]
    texts = questions + [p.read_text()[:1500] for p in sorted(SAMPLE.rglob("*.cs"))]
    reference = TorchEmbedder(resolve_model()[0])(texts)
    fast = OnnxEmbedder(onnx_export, file=onnx_file(precision))(texts)
    assert len(texts) > 15 and (reference * fast).sum(1).min() >= floor


def test_auto_picks_the_precision_measured_fastest_for_the_cpus_kind():
    from codebase_rag.config import SETTINGS
    from codebase_rag.embed import auto_precision
    from codebase_rag.export import PRECISIONS
    assert set(SETTINGS["PRECISION"].choices) == {"auto", *PRECISIONS}   # the setting offers each
    assert auto_precision({"avx2", "avx512f", "avx512_vnni"}) == "int8"
    assert auto_precision({"avx2", "avx_vnni"}) == "int8"
    assert auto_precision({"fma", "avx", "avx2"}) == "int8-reduced"   # saturating u8 x s8
    assert auto_precision({"asimd"}) == "fp32"                      # not measured: exact


# ----------------------------------------------------------------------------- kills
def test_a_build_killed_before_chroma_made_its_collection_is_finished_by_the_next(
        cli, sample_tree, tmp_path):
    """A kill -9 after chromadb made chroma.sqlite3 and before it made the collection (seen
    once in the test below) left an index every run called damaged. The next plain run
    makes the collection and finishes, as it restores a lost collection's stored vectors."""
    import sqlite3

    import chromadb
    db, fresh = tmp_path / "db", tmp_path / "fresh"
    cli.index(sample_tree, db)
    cli.index(sample_tree, fresh)
    chromadb.PersistentClient(path=str(db / "chroma")).delete_collection("chunks")
    with sqlite3.connect(db / "index.sqlite") as con:             # as the killed build left it
        con.execute("UPDATE windows SET embedded=0")
    cli.run("index.py", "--source", sample_tree, "--db", db)
    assert_same_index(db, fresh)
    chromadb.PersistentClient(path=str(db / "chroma")).delete_collection("chunks")
    restored = cli.run("index.py", "--source", sample_tree, "--db", db)   # vectors were stored
    windows = sqlite3.connect(db / "index.sqlite").execute("SELECT COUNT(*) FROM windows")
    assert f"{windows.fetchone()[0]} windows to restore" in restored.stderr
    assert_same_index(db, fresh)


@pytest.mark.parametrize("mode", ["foreground", "background", "hook"])
def test_a_kill_at_any_moment_converges_to_a_fresh_build(cli, sample_tree, tmp_path, mode):
    bulk(sample_tree, files=80)
    db = tmp_path / "db"
    rng = random.Random(mode)
    if mode == "hook":
        cli.index(sample_tree, db)       # a hook updates an index that exists
    env = {**cli.env, "CODEBASE_RAG_FLUSH": "8"}
    for trial in range(3):
        target = sample_tree / f"Bulk{trial}.cs"
        target.write_text(target.read_text().replace("Post0_", f"Record{trial}_"))
        if mode == "hook":
            proc = subprocess.Popen([sys.executable, str(ROOT / "index.py"), "--hook", "--db",
                                     str(db)], stdin=subprocess.PIPE, env=env,
                                    start_new_session=True)
            proc.stdin.write(json.dumps({"tool_name": "Edit",
                                         "tool_input": {"file_path": str(target)}}).encode())
            proc.stdin.close()
            victim = proc.pid
        else:
            args = ["--background"] if mode == "background" else []
            proc = subprocess.Popen([sys.executable, str(ROOT / "index.py"), "--source",
                                     str(sample_tree), "--db", str(db), *args], env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    start_new_session=True)
            victim = proc.pid
            if mode == "background":     # kill the detached build, not its launcher
                out = proc.communicate(timeout=60)[0]
                victim = int(out.split("(pid ")[1].split(")")[0]) if "(pid " in out else None
        time.sleep(rng.uniform(0.5, 6.0))
        if victim:
            try:
                os.killpg(os.getpgid(victim), signal.SIGKILL)
            except ProcessLookupError:
                pass                     # it finished first: fine
        proc.wait(timeout=60)
    cli.run("index.py", "--source", sample_tree, "--db", db)
    fresh = tmp_path / "fresh"
    cli.index(sample_tree, fresh)
    assert_same_index(db, fresh)
