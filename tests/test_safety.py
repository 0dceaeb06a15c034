"""Safety and recovery: the repository is untrusted input, the index folder is the tool's
alone, and no damaged file, odd path or killed run leaves the user stuck or without one
clear line. Each test drives the real CLIs, with the real model and a real ChromaDB."""
import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from conftest import ROOT, SAMPLE, assert_same_index, network_guard
from codebase_rag.config import INDEX_COMMAND

QUESTION = "how does the energy system refill timers?"
ANSWER = ("Energy/EnergySystem.cs", "RefillTimers")


def top(results):
    return (results[0]["file"], results[0]["member"]) if results else None


def one_clear_line(proc):
    lines = proc.stderr.strip().splitlines()
    return len(lines) == 1 and "Traceback" not in proc.stderr


# ----------------------------------------------------------------------------- the index folder
def test_db_at_a_folder_the_tool_did_not_make_is_refused(cli, sample_tree):
    (sample_tree / "pending").mkdir()
    (sample_tree / "pending" / "Queue.cs").write_text("class Q{}")
    (sample_tree / "chroma").mkdir()
    (sample_tree / "chroma" / "notes.txt").write_text("mine")
    for extra in ([], ["--rebuild"]):
        proc = cli.run("index.py", "--source", ".", "--db", ".", *extra, cwd=sample_tree,
                       check=False)
        assert proc.returncode == 2 and one_clear_line(proc), proc.stderr
        assert "not a codebase-rag index" in proc.stderr
    assert (sample_tree / "pending" / "Queue.cs").read_text() == "class Q{}"
    assert (sample_tree / "chroma" / "notes.txt").read_text() == "mine"
    assert not (sample_tree / ".gitignore").exists()
    assert not (sample_tree / "index.sqlite").exists()


def test_an_empty_folder_becomes_an_index_and_foreign_files_in_it_survive(cli, sample_tree,
                                                                         tmp_path):
    db = tmp_path / "empty"
    db.mkdir()
    cli.run("index.py", "--source", sample_tree, "--db", db)      # exports the model too
    (db / "pending" / "keep.txt").parent.mkdir(exist_ok=True)
    (db / "pending" / "keep.txt").write_text("not a queue entry")
    cli.index(sample_tree, db)
    cli.index(sample_tree, db, "--rebuild")
    assert (db / "pending" / "keep.txt").read_text() == "not a queue entry"
    assert top(cli.query(db, QUESTION)) == ANSWER


# ----------------------------------------------------------------------------- damaged files
def corrupt(db, how, model=None):
    """Damage one file of an index (or of the machine's export of the model, in model), as a
    crash, a bad disk or a stray command would."""
    chroma = db / "chroma"
    segment = next(p for p in chroma.iterdir() if p.is_dir())
    if how == "index.sqlite truncated":
        os.truncate(db / "index.sqlite", 100)
    elif how == "index.sqlite overwritten":
        size = (db / "index.sqlite").stat().st_size
        (db / "index.sqlite").write_bytes(os.urandom(size))
    elif how == "chroma.sqlite3 deleted":
        (chroma / "chroma.sqlite3").unlink()
    elif how == "chroma.sqlite3 overwritten":
        (chroma / "chroma.sqlite3").write_bytes(os.urandom((chroma / "chroma.sqlite3").stat().st_size))
    elif how == "HNSW files overwritten":
        for f in segment.glob("*.bin"):
            f.write_bytes(os.urandom(f.stat().st_size))
    elif how == "index_metadata.pickle overwritten":
        (segment / "index_metadata.pickle").write_bytes(os.urandom(500))
    elif how == "ONNX weights truncated":
        os.truncate(next(model.glob("*.data")), 1_000_000)
    elif how == "tokenizer.json emptied":
        (model / "tokenizer.json").write_text("")
    elif how == "model folder deleted":
        shutil.rmtree(model)


DAMAGE = ["index.sqlite truncated", "index.sqlite overwritten", "chroma.sqlite3 deleted",
          "chroma.sqlite3 overwritten", "HNSW files overwritten",
          "index_metadata.pickle overwritten", "ONNX weights truncated",
          "tokenizer.json emptied", "model folder deleted"]


@pytest.fixture(scope="module")
def built(machine_cache, tmp_path_factory):
    """One sample index, built once and copied for each kind of damage."""
    from conftest import Cli
    cli = Cli(machine_cache)
    base = tmp_path_factory.mktemp("built")
    tree = base / "src"
    shutil.copytree(SAMPLE, tree, ignore=shutil.ignore_patterns(".codebase-rag"))
    cli.index(tree, base / "db")
    return tree, base / "db"


@pytest.mark.parametrize("how", DAMAGE)
def test_each_damaged_file_gives_one_line_and_rebuild_restores_it(cli, built, tmp_path, how,
                                                                  onnx_export):
    tree, clean = built
    db = tmp_path / "db"
    shutil.copytree(clean, db)
    want = cli.query(clean, QUESTION)
    corrupt(db, how, cli.private_cache(onnx_export, tmp_path / "cache"))

    asked = cli.run("query.py", "--db", db, "--json", QUESTION, check=False)
    assert asked.returncode != 0 and one_clear_line(asked), asked.stderr
    assert INDEX_COMMAND in asked.stderr       # the remedy, as a command that runs anywhere
    checked = cli.run("index.py", "--db", db, "--source", tree, "--check", check=False)
    assert checked.returncode == 1 and "Traceback" not in checked.stderr, checked.stderr

    rebuilt = cli.run("index.py", "--source", tree, "--db", db, "--rebuild", check=False)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert cli.query(db, QUESTION) == want
    assert_same_index(db, clean)
    assert cli.run("index.py", "--db", db, "--source", tree, "--check").returncode == 0


@pytest.mark.parametrize("how", ["chroma.sqlite3 deleted", "HNSW files overwritten",
                                 "ONNX weights truncated", "model folder deleted"])
def test_a_plain_run_repairs_what_it_can(cli, built, tmp_path, how, onnx_export):
    tree, clean = built
    db = tmp_path / "db"
    shutil.copytree(clean, db)
    corrupt(db, how, cli.private_cache(onnx_export, tmp_path / "cache"))
    proc = cli.run("index.py", "--source", tree, "--db", db)
    assert "Traceback" not in proc.stderr
    assert_same_index(db, clean)
    assert top(cli.query(db, QUESTION)) == ANSWER


def test_a_run_with_windows_to_add_repairs_an_id_map_cut_short(cli, sample_tree, tmp_path):
    """Chroma rewrites its id map (index_metadata.pickle) in place when it compacts: a run
    killed meanwhile leaves it cut short, and Chroma then refuses every write. The next run,
    which has windows to add, makes Chroma afresh from the embedding cache."""
    tree, db, clean = sample_tree, tmp_path / "db", tmp_path / "clean"
    cli.index(tree, db)
    shutil.copytree(db, clean)
    [pickle] = (db / "chroma").glob("*/index_metadata.pickle")
    os.truncate(pickle, pickle.stat().st_size // 2)
    (tree / "Weather.cs").write_text("namespace Farm;\npublic class Weather\n{\n"
                                     "    public bool WillItRainOnTheCrops() { return true; }\n}\n")
    proc = cli.index(tree, db)
    assert "repaired the vector store" in proc.stderr and "Traceback" not in proc.stderr
    assert top(cli.query(db, "Weather WillItRainOnTheCrops")) == ("Weather.cs",
                                                                    "WillItRainOnTheCrops")
    (tree / "Weather.cs").unlink()
    cli.index(tree, db)
    assert_same_index(db, clean)
    assert top(cli.query(db, QUESTION)) == ANSWER


def test_a_missing_model_never_sends_a_query_to_the_hub(cli, built, tmp_path):
    tree, clean = built
    db = tmp_path / "db"
    shutil.copytree(clean, db)
    cache = cli.fresh_cache(tmp_path / "cache")               # nothing exported yet
    online = {"HF_HUB_OFFLINE": "0", "TRANSFORMERS_OFFLINE": "0",
              "PYTHONPATH": network_guard(tmp_path)}     # as a user with the hub in reach
    proc = cli.run("query.py", "--db", db, QUESTION, check=False, env=online)
    assert proc.returncode == 2 and one_clear_line(proc), proc.stderr
    assert f"run: {INDEX_COMMAND}" in proc.stderr
    edited = tree / "Energy" / "EnergySystem.cs"
    cli.run("index.py", "--db", db, "--single", edited, env=online)
    assert list(cache.glob("models/*/model.onnx"))
    assert not (tmp_path / "attempts.log").exists(), (tmp_path / "attempts.log").read_text()


def test_queries_during_a_first_build_never_print_a_traceback(cli, sample_tree, tmp_path):
    for i in range(120):
        (sample_tree / f"Bulk{i}.cs").write_text(
            f"namespace Bulk;\npublic class Bulk{i}\n{{\n"
            + "".join(f"    public int M{j}_{i}() {{ return {j}; }}\n" for j in range(5)) + "}\n")
    db = tmp_path / "db"
    build = subprocess.Popen([sys.executable, str(ROOT / "index.py"), "--source", str(sample_tree),
                              "--db", str(db)], env={**cli.env, "CODEBASE_RAG_FLUSH": "100"},
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    outcomes = []
    while build.poll() is None:
        if (db / "index.sqlite").exists():
            proc = cli.run("query.py", "--db", db, "--json", QUESTION, check=False)
            assert "Traceback" not in proc.stderr and proc.returncode == 0, proc.stderr
            outcomes.append(len(json.loads(proc.stdout)))
        time.sleep(0.2)
    assert build.wait() == 0, build.stderr.read()
    assert outcomes, "the build ended before any query ran"
    assert top(cli.query(db, QUESTION)) == ANSWER


# ----------------------------------------------------------------------------- reads stay inside
def test_links_and_special_files_never_leak_outside_the_tree(cli, sample_tree, tmp_path):
    secret = tmp_path / "outside" / "Secret.cs"
    secret.parent.mkdir()
    secret.write_text("class Secret { void Zanzibar() { var key = \"hunter2\"; } }")
    (sample_tree / "Linked.cs").symlink_to(secret)
    (sample_tree / "LinkedDir").symlink_to(secret.parent, target_is_directory=True)
    (sample_tree / "Zero.cs").symlink_to("/dev/zero")
    os.mkfifo(sample_tree / "Pipe.cs")
    (sample_tree / "Alias.cs").symlink_to(sample_tree / "Energy" / "EnergySystem.cs")
    db = tmp_path / "db"
    proc = cli.index(sample_tree, db, check=False)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    for name in ("Linked.cs", "LinkedDir", "Zero.cs", "Pipe.cs"):
        assert sum(name in line for line in proc.stderr.splitlines()) == 1, proc.stderr
    results = cli.query(db, "Zanzibar hunter2 secret key", "-k", "10")
    assert all("hunter2" not in r["text"] and "Linked" not in r["file"] for r in results)
    assert any(r["file"] == "Alias.cs" for r in cli.query(db, QUESTION, "-k", "10"))
    # a hook about the FIFO returns at once, and indexes nothing
    hooked = cli.hook(db, sample_tree / "Pipe.cs")
    assert hooked.returncode == 0


def test_hook_and_single_refuse_paths_outside_the_tree(cli, sample_tree, tmp_path):
    secret = tmp_path / "outside" / "Secret.cs"
    secret.parent.mkdir()
    secret.write_text("class Secret { void Zanzibar() { var key = \"hunter2\"; } }")
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    env = {"CODEBASE_RAG_DB": str(db)}
    escape = "../outside/Secret.cs"
    for event in ({"tool_name": "Write", "tool_input": {"file_path": escape}},
                  {"tool_name": "Write", "tool_input": {"file_path": "../" + escape},
                   "cwd": str(sample_tree / "Energy")},
                  {"tool_name": "Write", "tool_input": {"file_path": str(sample_tree / ".." /
                                                                         "outside" / "Secret.cs")}}):
        proc = cli.run("index.py", "--hook", stdin=json.dumps(event), cwd=sample_tree, env=env)
        assert proc.returncode == 0 and proc.stderr == ""
    single = cli.run("index.py", "--single", escape, cwd=sample_tree, env=env, check=False)
    assert single.returncode == 2 and one_clear_line(single), single.stderr
    results = cli.query(db, "Zanzibar hunter2 secret key", "-k", "10")
    assert all("hunter2" not in r["text"] for r in results)


# ----------------------------------------------------------------------------- one bad file
def test_a_file_the_chunker_cannot_handle_is_skipped_by_name(cli, sample_tree, tmp_path):
    (sample_tree / "Deep.cs").write_text(
        "".join(f"class C{i} {{" for i in range(2000)) + "void Inner() { }" + "}" * 2000)
    (sample_tree / "TooDeep.cs").write_text("class A {" * 20_000)
    db = tmp_path / "db"
    proc = cli.index(sample_tree, db)
    assert [line for line in proc.stderr.splitlines() if "TooDeep.cs" in line] and \
        "Traceback" not in proc.stderr
    files = {r["file"] for r in cli.query(db, "inner", "-k", "10")}
    assert "Deep.cs" in files and "TooDeep.cs" not in files
    assert ANSWER in {(r["file"], r["member"]) for r in cli.query(db, QUESTION)}
    hooked = cli.hook(db, sample_tree / "TooDeep.cs")
    assert hooked.returncode == 0 and "Traceback" not in hooked.stderr


# ----------------------------------------------------------------------------- one index per tree
def test_index_run_inside_an_indexed_tree_updates_that_index(cli, sample_tree):
    cli.run("index.py", cwd=sample_tree)
    target = sample_tree / "Energy" / "EnergySystem.cs"
    target.write_text(target.read_text().replace("RefillTimers", "TopUpTimers"))
    cli.run("index.py", cwd=sample_tree / "Energy")
    assert not (sample_tree / "Energy" / ".codebase-rag").exists()
    members = {r["member"] for r in cli.query(sample_tree / ".codebase-rag", QUESTION, "-k", "10")}
    assert "TopUpTimers" in members and "RefillTimers" not in members


def test_hook_and_single_follow_a_tree_that_moved(cli, sample_tree, tmp_path):
    cli.run("index.py", cwd=sample_tree)
    moved = tmp_path / "moved"
    sample_tree.rename(moved)
    target = moved / "Energy" / "EnergySystem.cs"
    target.write_text(target.read_text().replace("RefillTimers", "TopUpTimers"))
    assert cli.hook(None, target).returncode == 0
    members = {r["member"] for r in cli.query(moved / ".codebase-rag", QUESTION, "-k", "10")}
    assert "TopUpTimers" in members and "RefillTimers" not in members
    target.write_text(target.read_text().replace("TopUpTimers", "RefreshTimers"))
    cli.run("index.py", "--single", target)
    members = {r["member"] for r in cli.query(moved / ".codebase-rag", QUESTION, "-k", "10")}
    assert "RefreshTimers" in members


# ----------------------------------------------------------------------------- smaller cases
def test_a_failed_export_leaves_no_temporary_files(cli, sample_tree, tmp_path):
    """A disk that fills up during the one-time model export (here: a 20 MB file-size
    limit on the process) leaves nothing behind, and the next run exports afresh."""
    db = tmp_path / "db"
    cache = cli.fresh_cache(tmp_path / "cache")
    limited = [sys.executable, "-c",
               "import resource, runpy, sys; "
               "resource.setrlimit(resource.RLIMIT_FSIZE, (20_000_000, 20_000_000)); "
               f"sys.argv = ['index.py', '--source', {str(sample_tree)!r}, '--db', {str(db)!r}]; "
               f"runpy.run_path({str(ROOT / 'index.py')!r}, run_name='__main__')"]
    proc = subprocess.run(limited, capture_output=True, text=True, env=cli.env, timeout=600)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    leftovers = [p.name for p in cache.rglob("*")]
    assert not [n for n in leftovers if ".tmp" in n or n.endswith(".data")], leftovers
    cli.run("index.py", "--source", sample_tree, "--db", db)
    assert top(cli.query(db, QUESTION)) == ANSWER


def test_a_root_file_whose_name_starts_with_a_space_survives_the_hook_queue(cli, sample_tree,
                                                                          tmp_path):
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    odd = sample_tree / " Root.cs"
    odd.write_text("class Rooted { void Sprout() { } }")
    assert cli.hook(db, odd).returncode == 0
    assert " Root.cs" in {r["file"] for r in cli.query(db, "Rooted Sprout", "-k", "10")}


def test_a_deleted_current_directory_is_one_line(cli, tmp_path):
    gone = tmp_path / "gone"
    for script, args in (("query.py", ["x"]), ("index.py", [])):
        gone.mkdir()
        proc = subprocess.run(
            ["bash", "-c", f'cd "{gone}" && rmdir "{gone}" && exec "$0" "$@"', sys.executable,
             str(ROOT / script), *args], capture_output=True, text=True, env=cli.env, timeout=120)
        assert proc.returncode == 2 and one_clear_line(proc), proc.stderr
        assert "current directory" in proc.stderr
