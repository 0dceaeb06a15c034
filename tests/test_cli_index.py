"""index.py as people, agents and hooks run it: full runs, --single, --hook and --rebuild
keep the index equal to a from-scratch build, whatever the order, the concurrency or a
kill midway. The real MiniLM and a real ChromaDB in a temporary folder."""
import json
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, SAMPLE, assert_same_index, snapshot

QUESTIONS = json.loads((SAMPLE / "questions.json").read_text())


# ----------------------------------------------------------------------------- freshness
def edit_file(path, rng):
    """A random realistic edit: shift lines, change a body, or add a member."""
    lines = path.read_text().split("\n")
    choice = rng.choice(["shift", "body", "member"])
    if choice == "shift":
        at = rng.randrange(len(lines))
        lines[at:at] = ["", "// shifted"] * rng.randint(1, 3)
    elif choice == "body":
        at = next((i for i, l in enumerate(lines) if l.strip() == "{" and i > 5), 0)
        lines.insert(at + 1, f"    var changed{rng.randrange(10**6)} = 1;")
    else:
        at = max(i for i, l in enumerate(lines) if l.strip() == "}")
        lines[at:at] = [f"    public int Added{rng.randrange(10**6)}() {{ return 42; }}"]
    path.write_text("\n".join(lines))


def apply_update(cli, tree, db, changed, rng):
    """Tell the index about changed paths by a random route: full run, --single, --hook."""
    route = rng.choice(["full", "single", "hook"])
    if route == "full":
        cli.index(tree, db)
    elif route == "single":
        cli.run("index.py", "--db", db, "--single", *changed)
    else:
        for path in changed:
            assert cli.hook(db, path).returncode == 0
    return route


@pytest.mark.parametrize("seed", [1, 2])
def test_random_edits_keep_index_equal_to_fresh_build(cli, sample_tree, tmp_path, seed):
    rng = random.Random(seed)
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    routes = []
    for step in range(8):
        files = sorted(sample_tree.rglob("*.cs"))
        op = rng.choice(["edit", "edit", "delete", "rename", "add", "ignored"])
        target = rng.choice(files)
        if op == "edit":
            edit_file(target, rng)
            changed = [target]
        elif op == "delete":
            target.unlink()
            changed = [target]
        elif op == "rename":
            new = target.with_name(f"Renamed{step}{target.name}")
            target.rename(new)
            changed = [target, new]
        elif op == "add":
            new = target.with_name(f"Copy{step}{target.name}")
            new.write_text(target.read_text().replace("class ", f"class Copy{step}", 1))
            changed = [new]
        else:                                   # a file a build must skip
            new = sample_tree / "bin" / f"Gen{step}.cs"
            new.parent.mkdir(exist_ok=True)
            shutil.copy(target, new)
            changed = [new]
        routes.append(apply_update(cli, sample_tree, db, changed, rng))
    fresh = tmp_path / "fresh"
    cli.index(sample_tree, fresh)
    assert_same_index(db, fresh)


def test_a_first_build_exports_the_model_once_for_the_machine(cli, sample_tree, tmp_path,
                                                                machine_cache):
    """A machine that exported nothing yet: the first build exports the model (in a child
    process, with torch) into the machine's cache; a second index on the machine reuses it;
    both equal a build given the session's export."""
    db, second, seeded = tmp_path / "db", tmp_path / "second", tmp_path / "seeded"
    cache = cli.fresh_cache(tmp_path / "cache")
    proc = cli.run("index.py", "--source", sample_tree, "--db", db)
    [export] = cache.glob("models/*/model.onnx")
    assert "Traceback" not in proc.stderr and "Loading weights" not in proc.stderr
    assert not (db / "model").exists()                   # no index keeps its own
    made = export.stat().st_mtime_ns
    cli.run("index.py", "--source", sample_tree, "--db", second)
    assert list(cache.glob("models/*/model.onnx")) == [export]
    assert export.stat().st_mtime_ns == made              # not exported again
    cli.fresh_cache(machine_cache)
    cli.index(sample_tree, seeded)
    assert_same_index(db, seeded)
    assert_same_index(second, seeded)
    assert cli.query(db, QUESTIONS[0]["question"])[0]["member"] == QUESTIONS[0]["member"]


def chroma_backlog(db):
    """Chroma writes not yet saved into its HNSW files: each new process replays them."""
    import sqlite3
    con = sqlite3.connect(Path(db) / "chroma" / "chroma.sqlite3")
    (logged,), = con.execute("SELECT COALESCE(MAX(seq_id), 0) FROM embeddings_queue")
    (saved,), = con.execute("SELECT MIN(seq_id) FROM max_seq_id")
    con.close()
    return logged - saved


def test_the_vector_index_on_disk_stays_current(cli, sample_tree, tmp_path):
    """A cold query or hook must not replay a long write log (Chroma's default saves its
    HNSW index every 1,000 writes, which cost a cold query ~0.5 s on jellyfin)."""
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    assert chroma_backlog(db) < 10
    for path in sorted(sample_tree.rglob("*.cs"))[:4]:
        path.write_text(path.read_text().replace("{", "{ // edited", 1))
        cli.hook(db, path)
        assert chroma_backlog(db) < 10


def test_rebuild_and_noop_runs(cli, sample_tree, tmp_path):
    db = tmp_path / "db"
    first = cli.index(sample_tree, db).stdout
    before, _ = snapshot(db)
    again = cli.index(sample_tree, db).stdout
    assert "; 0 changed)" in again and "+0 ~0 -0" in again
    rebuilt = cli.index(sample_tree, db, "--rebuild").stdout
    assert "0 windows embedded" in rebuilt, "a rebuild must take every vector from the cache"
    assert snapshot(db)[0] == before
    assert "embedded" in first


def test_concurrent_hooks_and_a_full_run_all_succeed(cli, sample_tree, tmp_path):
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    rng = random.Random(7)
    files = sorted(sample_tree.rglob("*.cs"))
    for f in files:
        edit_file(f, rng)
    env = {**cli.env}
    procs = [subprocess.Popen([sys.executable, str(ROOT / "index.py"), "--hook", "--db", str(db)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env)
             for _ in files]
    full = subprocess.Popen([sys.executable, str(ROOT / "index.py"), "--source", str(sample_tree),
                             "--db", str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    for p, f in zip(procs, files):
        p.stdin.write(json.dumps({"tool_name": "Write", "tool_input": {"file_path": str(f)}}))
        p.stdin.close()
    for p in procs + [full]:
        assert p.wait(timeout=300) == 0, p.stderr.read()
    fresh = tmp_path / "fresh"
    cli.index(sample_tree, fresh)
    assert_same_index(db, fresh)


def test_queries_work_while_the_index_is_written(cli, sample_tree, tmp_path):
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    for i in range(40):
        (sample_tree / f"Extra{i}.cs").write_text(
            f"namespace X;\npublic class Extra{i}\n{{\n    public void Work{i}() {{ }}\n}}\n")
    writer = subprocess.Popen([sys.executable, str(ROOT / "index.py"), "--source",
                               str(sample_tree), "--db", str(db)], env=cli.env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    answers = [cli.query(db, "refill energy timers", "-k", "1") for _ in range(3)]
    assert writer.wait(timeout=300) == 0
    assert all(a and a[0]["member"] == QUESTIONS[0]["member"] for a in answers)


def test_a_run_killed_midway_is_repaired_by_the_next(cli, sample_tree, tmp_path):
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    for i in range(150):
        (sample_tree / f"Bulk{i}.cs").write_text(
            f"namespace Bulk;\npublic class Bulk{i}\n{{\n"
            + "".join(f"    public int M{j}_{i}() {{ return {j}; }}\n" for j in range(6))
            + "}\n")
    proc = subprocess.Popen([sys.executable, str(ROOT / "index.py"), "--source", str(sample_tree),
                             "--db", str(db)], env={**cli.env, "CODEBASE_RAG_FLUSH": "20"},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(4)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    cli.index(sample_tree, db)
    fresh = tmp_path / "fresh"
    cli.index(sample_tree, fresh)
    assert_same_index(db, fresh)


# ----------------------------------------------------------------------------- hooks
def test_hook_reindexes_the_edited_file(cli, sample_tree, tmp_path):
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    target = sample_tree / "Energy" / "EnergySystem.cs"
    target.write_text(target.read_text().replace("RefillTimers", "TopUpTimers"))
    windows_path = str(target).replace("/", "\\")       # as a Windows agent would send it
    assert cli.hook(db, windows_path).returncode == 0
    members = {r["member"] for r in cli.query(db, "refill energy timers", "-k", "10")}
    assert "TopUpTimers" in members and "RefillTimers" not in members


@pytest.mark.parametrize("stdin", ["not json", "", "[]", '{"tool_input": {"file_path": 3}}',
                                   '{"tool_name": "Edit", "tool_input": {"file_path": "/nowhere/x.cs"}}',
                                   '{"tool_name": "Edit", "tool_input": {"file_path": "README.md"}}'])
def test_hook_never_fails_the_agent(cli, tmp_path, stdin):
    proc = cli.run("index.py", "--hook", stdin=stdin, cwd=tmp_path, check=False)
    assert proc.returncode == 0
    assert "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) <= 1


def test_single_removes_a_deleted_file(cli, sample_tree, tmp_path):
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    target = sample_tree / "Auth" / "PasswordHasher.cs"
    target.unlink()
    cli.run("index.py", "--db", db, "--single", target)
    assert all(r["file"] != "Auth/PasswordHasher.cs"
               for r in cli.query(db, "hash passwords", "-k", "10"))


def test_single_says_what_it_did_with_each_path(cli, sample_tree, tmp_path):
    """Before: 're-indexed 1 file(s)' for a folder (nothing read), a file gone from disk
    (removed) and a file the index never held (nothing done) alike. A folder stands for its
    files; a file gone is removed; a path with nothing to index is said to be so."""
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    energy = sample_tree / "Energy"
    files = sorted(p.name for p in energy.glob("*.cs"))
    (energy / "EnergySystem.cs").write_text((energy / "EnergySystem.cs").read_text().replace(
        "RefillTimers", "TopUpTimers"))
    folder = cli.run("index.py", "--db", db, "--single", energy).stdout
    assert folder.startswith(f"re-indexed {len(files)} file(s): 1 read again"
                             + (f", {len(files) - 1} unchanged; " if len(files) > 1 else "; "))
    assert "TopUpTimers" in {r["member"] for r in cli.query(db, "refill energy timers")}
    (sample_tree / "Auth" / "PasswordHasher.cs").unlink()
    gone = cli.run("index.py", "--db", db, "--single", sample_tree / "Auth" / "PasswordHasher.cs")
    assert gone.stdout.startswith("re-indexed 1 file(s): 1 removed (gone from disk); chunks "
                                  "+0 ~0 -")
    never = cli.run("index.py", "--db", db, "--single", sample_tree / "Nowhere.cs", check=False)
    assert never.returncode == 2 and never.stdout == ""
    assert never.stderr == (f"codebase-rag: {sample_tree / 'Nowhere.cs'}: no such file, and "
                            f"the index holds none by that name; nothing to do\n")
    (sample_tree / "NOTES.md").write_text("# notes\n")
    mixed = cli.run("index.py", "--db", db, "--single", sample_tree / "NOTES.md",
                    energy / "EnergySystem.cs")
    assert mixed.stdout.startswith("re-indexed 1 file(s): 1 unchanged; ")
    assert mixed.stderr == (f"codebase-rag: {sample_tree / 'NOTES.md'}: not a file the index "
                            f"reads (not in one of its languages, or excluded by .gitignore "
                            f"or --exclude); skipped\n")
    assert "(a folder: the files in it)" in " ".join(cli.run("index.py", "--help").stdout.split())


def test_a_hook_event_nested_too_deeply_is_one_line_and_never_fails_the_agent(cli, tmp_path):
    """Before: 'hook: RecursionError: maximum recursion depth exceeded while decoding a
    JSON array from a unicode string'."""
    for event in ("[" * 100_000, '{"tool_input": ' * 50_000):
        proc = cli.run("index.py", "--hook", stdin=event, cwd=tmp_path, check=False)
        assert proc.returncode == 0
        assert proc.stderr == "codebase-rag: hook: the hook's event is nested too deeply to " \
                              "read\n"


# ----------------------------------------------------------------------------- bad input
def test_bad_files_are_skipped_with_one_line_each(cli, sample_tree, tmp_path):
    (sample_tree / "Binary.cs").write_bytes(b"\x00\x01\x02binary\x00" * 100)
    (sample_tree / "Huge.cs").write_text("// big\n" * 300_000)
    (sample_tree / "Latin1.cs").write_bytes("class Caf\xe9 { void M() { } }".encode("latin-1"))
    (sample_tree / "Unbalanced.cs").write_text("class U {\n void M() {\n  if (x) {\n")
    (sample_tree / "loop").symlink_to(sample_tree, target_is_directory=True)
    (sample_tree / "Dangling.cs").symlink_to(tmp_path / "missing.cs")
    db = tmp_path / "db"
    proc = cli.index(sample_tree, db)
    assert "Traceback" not in proc.stderr
    for name in ("Binary.cs", "Huge.cs", "Dangling.cs", "loop"):
        assert sum(name in line for line in proc.stderr.splitlines()) == 1, proc.stderr
    files = {f for f, *_ in snapshot(db)[0]["files"]}
    assert {"Latin1.cs", "Unbalanced.cs", "Energy/EnergySystem.cs"} <= files
    assert not {"Binary.cs", "Huge.cs"} & files


@pytest.mark.parametrize("args, message", [
    (["--source", "MISSING"], "source directory not found"),
    (["--db", "DB", "--single"], "expected at least one"),
    (["--db", "DB", "--single", "Elsewhere.cs"], "no index covers"),
    (["--bogus"], "unrecognized"),
])
def test_expected_errors_are_one_line_and_exit_2(cli, sample_tree, tmp_path, args, message):
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    args = [str(db) if a == "DB" else str(tmp_path / "missing") if a == "MISSING" else a
            for a in args]
    proc = cli.run("index.py", *args, cwd=tmp_path, check=False)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and message in proc.stderr, proc.stderr


def test_a_bad_setting_in_the_environment_is_one_line(cli, sample_tree, tmp_path):
    for script, args in (("index.py", ["--source", sample_tree]), ("query.py", ["x"])):
        proc = cli.run(script, *args, cwd=tmp_path, check=False, env={"CODEBASE_RAG_BATCH": "many"})
        assert proc.returncode == 2 and "CODEBASE_RAG_BATCH='many'" in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_an_index_refuses_another_model(cli, sample_tree, tmp_path):
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    other = {"CODEBASE_RAG_MODEL": "sentence-transformers/all-mpnet-base-v2"}   # never loaded
    proc = cli.run("query.py", "--db", db, "x", env=other, check=False)
    assert proc.returncode == 2 and "built with" in proc.stderr
    proc = cli.run("index.py", "--source", sample_tree, "--db", db, env=other, check=False)
    assert proc.returncode == 2 and "built with" in proc.stderr



def test_status_names_the_last_real_build_not_the_last_look(cli, sample_tree, tmp_path):
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    built = cli.run("index.py", "--db", db, "--status").stdout
    finished = re.search(r"last build finished (\S+ \S+), in (\w+)", built)
    time.sleep(1.1)                                # a later second, if it were written again
    cli.index(sample_tree, db)                     # nothing changed: a look, not a build
    again = cli.run("index.py", "--db", db, "--status").stdout
    assert re.search(r"last build finished (\S+ \S+), in (\w+)", again).groups() == \
        finished.groups()
    assert "last looked for changes" in again and finished[1] not in again.split("looked")[1]


def test_status_names_the_model_and_the_files_that_did_not_parse(cli, sample_tree, tmp_path):
    """--status says which model built the index, and names the files read with parse
    errors (the first few; --verbose all of them); a file fixed since leaves the list."""
    from codebase_rag.export import HUB_MODEL
    broken = [sample_tree / f"Broken{i}.go" for i in range(7)]
    for path in broken:
        path.write_text("package broken\nfunc Half( {\n}\nfunc Whole() {}\n")
    db = tmp_path / "db"
    built = cli.index(sample_tree, db).stdout
    assert "7 with parse errors: --status names them" in built
    status = cli.run("index.py", "--db", db, "--status").stdout
    assert f"model: {HUB_MODEL}" in status
    [line] = [x for x in status.splitlines() if "parse errors" in x]
    assert line.startswith("7 files with parse errors") and "and 2 more" in line
    assert sum(f"Broken{i}.go" in line for i in range(7)) == 5
    every = cli.run("index.py", "--db", db, "--status", "--verbose").stdout
    assert all(f"Broken{i}.go" in every for i in range(7)) and "more" not in every
    broken[0].write_text("package broken\nfunc Whole() {}\n")
    cli.index(sample_tree, db)
    status = cli.run("index.py", "--db", db, "--status", "--verbose").stdout
    assert "6 files with parse errors" in status and "Broken0.go" not in status
    alone = cli.run("index.py", "--db", db, "--verbose", check=False)
    assert alone.returncode == 2 and alone.stderr.count("\n") == 1 and "--status" in alone.stderr


def test_a_build_shows_its_progress_as_it_goes(cli, sample_tree, tmp_path):
    """--status moves between two writes to Chroma, with an estimate of the time left; a
    build whose output is no terminal (a CI log, an agent's shell) prints progress lines."""
    from conftest import bulk_files
    bulk_files(sample_tree, 500)
    db = tmp_path / "db"
    build = subprocess.Popen([sys.executable, str(ROOT / "index.py"), "--source",
                              str(sample_tree), "--db", str(db)], env={
        **cli.env, "CODEBASE_RAG_FLUSH": "1000000",             # one write, at the end
        "CODEBASE_RAG_PROGRESS_EVERY": "0.6"},    # a line at least every 0.6 s, on any CPU
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen, estimates = [], []
    while build.poll() is None:
        if (db / "index.sqlite").exists():
            status = cli.run("index.py", "--db", db, "--status", check=False).stdout
            done = re.search(r"windows: ([\d,]+) of ([\d,]+) embedded", status)
            if done and 0 < int(done[1].replace(",", "")) < int(done[2].replace(",", "")):
                seen.append(int(done[1].replace(",", "")))
                estimates += re.findall(r"about ([\dmhs ]+) at", status)
        time.sleep(0.3)
    err = build.stderr.read().splitlines()
    assert build.returncode == 0, err
    assert len(set(seen)) >= 2 and seen == sorted(seen), seen
    assert estimates, "no estimate of the time left"
    assert re.fullmatch(r"codebase-rag: embedding [\d,]+ windows\.\.\.", err[0]), err
    assert any(re.match(r"codebase-rag: embedding: [\d,]+ of [\d,]+ windows \(\d+%\), .* "
                        r"about .* left", line) for line in err), err


def test_the_summary_counts_agree_when_files_change_during_the_build(cli, sample_tree,
                                                                     tmp_path):
    from conftest import FrozenBuild, bulk_files
    bulk_files(sample_tree, 100)
    db = tmp_path / "db"
    build = FrozenBuild(cli, sample_tree, db, "embedding")
    (sample_tree / "Late.cs").write_text("class Late {\n  void Arrived() { }\n"
                                         "  int Twice() { return 2; }\n}\n")
    (sample_tree / "Bulk" / "Bulk7.cs").unlink()
    cli.query(db, "arrived late")                   # a search takes both in
    build.finish()
    line = build.proc.stdout.read().decode()
    files, per_language = re.search(r": (\d+) files \(csharp (\d+);", line).groups()
    assert files == per_language == "109"
    added, removed, others, total = map(int, re.search(
        r"chunks \+(\d+) ~\d+ -(\d+), ([+-]\d+) by searches meanwhile \(total (\d+)\)",
        line).groups())
    # the sample's 58 chunks and 4 a bulk file (its three members, and the lines that name
    # its namespace and class); Bulk7 gone, Late.cs come (two members, its class line)
    assert added - removed + others == total == 458 - 4 + 3


def test_ci_runs_the_readme_test_command():
    """CI must run exactly what README tells a person to run."""
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    command = next(line for line in ci.splitlines() if "pytest" in line)
    assert command.strip() in readme
    packages = [re.search(r"apt-get install -y (?:-q )?([\w\s.-]+?)\s*(?:>|\n|$)", text.replace(
        "\\\n", " ")).group(1).split() for text in (ci, readme)]
    assert packages[0] == packages[1] and "golang-go" in packages[0]
