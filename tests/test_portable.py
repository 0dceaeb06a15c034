"""Linux, macOS and Windows: every path of the tool under an emulation of the other two, on
Linux (tests/emulation/emulate_os.py takes away what each lacks: fdatasync, /proc,
inotify and prctl; fcntl, O_NONBLOCK, pwrite and pread, CDLL(None), the right to rename or
delete a file that a process has open). In-process for the OS layer's own functions; for
the end-to-end paths, every Python process of the run is emulated (sitecustomize.py on
PYTHONPATH), the detached writers and the model's export included."""
import ast
import asyncio
import json
import os
import re
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import ROOT, Cli, chroma_dir, settled
from emulation import emulate_os

EMULATION = ROOT / "tests" / "emulation"
PACKAGE = ROOT / "codebase_rag"
# the emulation reads Linux's /proc (who has which file open); on macOS and Windows
# themselves, the end-to-end tests run natively and the emulation's own are skipped
EMULATES = os.path.isdir("/proc/self/fd")
KINDS = emulate_os.KINDS if EMULATES else ()
linux_only = pytest.mark.skipif(not EMULATES, reason="the emulation of other systems runs "
                                "on Linux; here the tests run natively")


# ----------------------------------------------------------------------------- the layout
# names that are one system's: only oslayer.py may say them
OS_NAMES = ("fcntl", "inotify", "/proc", "fdatasync", "O_NONBLOCK", "getuid", "pwrite",
            "pread", "prctl", "msvcrt", "O_BINARY", "start_new_session", "creationflags",
            "CDLL")
NOT_YET = {"fresh.py", "walk.py"}        # another branch's files, until it merges


def os_words(path):
    """The names, attributes and string constants of a module's code (its docstrings and
    comments left out), and os.kill calls."""
    tree = ast.parse(path.read_text())
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    words = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            words.add(n.id)
        elif isinstance(n, ast.Attribute):
            words.add(n.attr)
            if isinstance(n.value, ast.Name) and n.value.id == "os" and n.attr == "kill":
                words.add("os.kill")
        elif isinstance(n, ast.alias):
            words.update(n.name.split("."))
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs:
            words.update(w for w in OS_NAMES
                         if re.search(rf"(?<!\w){re.escape(w)}(?!\w)", n.value))
    return words


def test_os_differences_live_in_one_module():
    found = {p.name: sorted(os_words(p) & {*OS_NAMES, "os.kill"})
             for p in [*PACKAGE.rglob("*.py"), ROOT / "index.py", ROOT / "query.py"]
             if p.name != "oslayer.py"}
    assert {name: words for name, words in found.items() if words} == \
        {name: words for name, words in found.items() if words and name in NOT_YET}


# ----------------------------------------------------------------------------- in-process
@pytest.fixture(params=KINDS or [pytest.param("none", marks=linux_only)])
def system(request):
    """This process as the other system, until the test ends (the OS layer and the modules
    that take its constants imported again, as they would be there)."""
    import importlib
    from codebase_rag import flat, oslayer
    patch = pytest.MonkeyPatch()
    emulate_os.apply(request.param, patch)
    for module in (oslayer, flat):
        importlib.reload(module)
    yield request.param
    patch.undo()
    for module in (oslayer, flat):
        importlib.reload(module)


def test_the_flat_file_round_trips_without_pwrite_and_in_binary_mode(system, tmp_path):
    import numpy as np
    from codebase_rag import flat
    rows = [(seq, np.full(384, seq / 10 + 0.01, dtype="<f4").tobytes()) for seq in (1, 2, 5)]
    stamp = flat.write(tmp_path / "vectors.f32", rows, "")
    assert stamp and flat.stamp(tmp_path / "vectors.f32") == stamp
    assert flat.rows_at(tmp_path / "vectors.f32", [1, 2, 5]) == dict(rows)
    assert os.path.getsize(tmp_path / "vectors.f32") == 6 * flat.ROW


def test_the_lock_probe_needs_no_fcntl(system, tmp_path):
    from filelock import FileLock
    from codebase_rag.oslayer import lock_held
    assert not lock_held(tmp_path / "write.lock")                   # no file: nobody
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom filelock import "
                               f"FileLock\nwith FileLock({str(tmp_path / 'write.lock')!r}):\n"
                               "    print('held', flush=True); sys.stdin.read()"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    assert lock_held(tmp_path / "write.lock")
    holder.communicate("")
    assert not lock_held(tmp_path / "write.lock")
    with FileLock(str(tmp_path / "write.lock")):                     # this process, too
        assert lock_held(tmp_path / "write.lock")


def test_a_process_is_known_alive_without_a_signal(system):
    from codebase_rag.oslayer import alive
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout
    assert alive(os.getpid()) and not alive(int(dead))


@linux_only
@pytest.mark.parametrize("system", ["macos"], indirect=True)
def test_int8_is_chosen_on_a_vnni_cpu_without_proc_cpuinfo(system):
    from codebase_rag.embed import resolve_precision
    from codebase_rag.oslayer import cpu_flags
    if "avx512_vnni" not in open("/proc/cpuinfo").read():
        pytest.skip("this CPU has no AVX-512 VNNI")
    assert cpu_flags() == {"avx512_vnni", "avx2"}          # numpy's, as Linux names them
    assert resolve_precision(None, "auto") == "int8"


@linux_only
@pytest.mark.parametrize("system", ["windows"], indirect=True)
def test_a_file_in_use_is_never_deleted_and_a_folder_goes_whole_or_not_at_all(system,
                                                                            tmp_path):
    from codebase_rag.oslayer import remove_unused
    (tmp_path / "gen" / "sub").mkdir(parents=True)
    for name in ("a.bin", "sub/b.bin", "sub/c.bin"):
        (tmp_path / "gen" / name).write_bytes(b"x")
    with open(tmp_path / "gen" / "sub" / "b.bin", "rb"):
        assert not remove_unused(tmp_path / "gen")
        assert sorted(p.name for p in (tmp_path / "gen").rglob("*")) == \
            ["a.bin", "b.bin", "c.bin", "sub"]              # untouched, not half-deleted
        assert not remove_unused(tmp_path / "gen" / "sub" / "b.bin")
    assert remove_unused(tmp_path / "gen") and not (tmp_path / "gen").exists()
    assert os.listdir(tmp_path) == []


@linux_only
@pytest.mark.parametrize("kind", emulate_os.KINDS)
def test_the_export_worker_watch_needs_no_prctl(kind):
    """die_with_parent in a child: no prctl (macOS), no CDLL(None) or SIGKILL (Windows)."""
    code = ("import os, sys, time\nfrom codebase_rag.oslayer import die_with_parent\n"
            "die_with_parent()\nprint('watching', flush=True)\ntime.sleep(60)")
    parent = subprocess.Popen([sys.executable, "-c",
                               f"import subprocess, sys\np = subprocess.Popen([sys.executable,"
                               f" '-c', {code!r}], stdout=sys.stdout)\nprint(p.pid, flush=True)"
                               f"\nsys.stdin.read()"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, **emulated_env(kind)}, cwd=ROOT)
    import select
    lines = []
    for _ in range(2):                    # the child's id, then its word (or nothing: dead)
        assert select.select([parent.stdout], [], [], 120)[0], f"no word from it: {lines}"
        lines.append(parent.stdout.readline().strip())
    child = int(lines[0])
    assert lines[1] == "watching", lines
    parent.kill()
    parent.wait()
    deadline = time.time() + 10
    while time.time() < deadline and os.path.exists(f"/proc/{child}") and \
            open(f"/proc/{child}/stat").read().split()[2] != "Z":
        time.sleep(0.2)
    assert not os.path.exists(f"/proc/{child}") or \
        open(f"/proc/{child}/stat").read().split()[2] == "Z"


def test_the_system_events_name_what_changed_as_inotify_does(cli, sample_tree, tmp_path,
                                                            monkeypatch):
    """Where libc has no inotify (macOS, Windows), the watcher reads watchfiles' recursive
    watch: a file written, saved by rename, a folder renamed; each question sees exactly
    that, with no sweep, the mark's event its barrier."""
    from codebase_rag import oslayer
    from codebase_rag.fresh import Watcher
    from codebase_rag.store import Store

    class NoInotify:
        def __init__(self, *args):
            raise OSError("no inotify here")
    monkeypatch.setattr(oslayer, "Inotify", NoInotify)
    db = sample_tree / ".codebase-rag"                    # the mark's folder: in the tree
    cli.index(sample_tree, db)
    store = Store(db)
    watcher = Watcher(store.root)
    assert watcher.changes(store) == ({}, {})      # the first question sweeps: nothing new
    watcher.settled()
    assert isinstance(watcher.events, oslayer.Notify)
    swept = []
    monkeypatch.setattr(store, "manifest", lambda paths=None, real=store.manifest:
                        swept.append(paths) or real(paths))
    assert watcher.changes(store) == ({}, {}) and swept == []          # nothing looked at
    energy = "Energy/EnergySystem.cs"
    (sample_tree / energy).write_text((sample_tree / energy).read_text() + "\n")
    changed, _ = watcher.changes(store)
    assert set(changed) == {energy} and None not in swept          # only what was named
    watcher.settled()
    other = next(p for p in store.manifest() if p != energy)
    (sample_tree / f"{other}.swp").write_text((sample_tree / other).read_text() + "// x\n")
    os.replace(sample_tree / f"{other}.swp", sample_tree / other)    # as editors save
    changed, moved = watcher.changes(store)
    assert set(changed) == {other} and moved
    watcher.settled()
    os.rename(sample_tree / "Energy", sample_tree / "Power")
    changed, _ = watcher.changes(store)
    assert changed[energy] is None and changed["Power/EnergySystem.cs"] is not None
    watcher.close()


# ----------------------------------------------------------------------------- end to end
def emulated_env(kind):
    if kind == "native":
        return {"PYTHONPATH": str(ROOT)}
    return {"EMULATE_OS": kind, "PYTHONPATH": os.pathsep.join([str(EMULATION), str(ROOT)])}


@pytest.fixture(params=KINDS or ["native"])
def emulated(request, machine_cache):
    """A Cli whose every Python process (the commands, their detached writers, the model's
    export) runs as on the other system (on Linux), or as it is (on macOS and Windows)."""
    cli = Cli(machine_cache)
    cli.env.update(emulated_env(request.param))
    cli.kind = request.param
    return cli


NEW = ("namespace Game.Gifts;\n\npublic class Gifting\n{\n"
       "    /// <summary>Sends some of a player's energy to a friend as a gift.</summary>\n"
       "    public void GiftEnergyToFriend(Player from, Player friend, int amount)\n"
       "    {\n        from.Energy -= amount;\n        friend.Energy += amount;\n    }\n}\n")
GIFT = "give energy to a friend as a gift"


@linux_only
def test_the_emulation_reaches_every_process(emulated, tmp_path):
    probe = ("from codebase_rag import oslayer\n"      # the os module as the tool sees it
             "print(hasattr(oslayer.os, 'fdatasync'), hasattr(oslayer.os, 'pwrite'))")
    out = subprocess.run([sys.executable, "-c", probe], env=emulated.env, cwd=tmp_path,
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == (["False", "True"] if emulated.kind == "macos" else ["False", "False"])


def test_a_first_build_a_query_a_hook_and_a_check(emulated, sample_tree, tmp_path):
    db = tmp_path / "db"
    started = emulated.index(sample_tree, db, "--background")      # detached: returns at once
    assert started.returncode == 0
    settled_built(db)
    assert "built" in emulated.run("index.py", "--db", db, "--status").stdout
    assert emulated.query(db, "how does the energy system refill timers?")[0]["member"] == \
        "RefillTimers"
    batch = emulated.run("query.py", "--db", db, "--json", "--batch", "-",
                         stdin="how does the energy system refill timers?\nhash a password\n")
    assert [json.loads(line)[0]["member"] for line in batch.stdout.splitlines()][0] == \
        "RefillTimers"
    (sample_tree / "Gifting.cs").write_text(NEW)
    proc = emulated.hook(db, sample_tree / "Gifting.cs", tool="Write")
    assert proc.returncode == 0 and proc.stderr == ""
    assert emulated.query(db, GIFT)[0]["member"] == "GiftEnergyToFriend"
    assert emulated.run("index.py", "--db", db, "--check").returncode == 0
    assert "Traceback" not in (db / "build.log").read_text()


def test_the_mcp_server_sees_a_file_added_after_it_started(emulated, sample_tree, tmp_path):
    from test_mcp import first_hit, server
    db = tmp_path / "db"
    emulated.index(sample_tree, db)

    async def go():
        async with server(emulated, db, env=emulated_env(emulated.kind)) as s:
            first = first_hit(await s.call_tool("search_code", {"question": GIFT}))
            assert first[3] != "Gifting.GiftEnergyToFriend"
            (sample_tree / "Gifts").mkdir()
            (sample_tree / "Gifts" / "Gifting.cs").write_text(NEW)
            return first_hit(await s.call_tool("search_code", {"question": GIFT}))
    assert asyncio.run(go())[3] == "Gifting.GiftEnergyToFriend"


def test_a_rebuild_while_files_are_held_open_leaves_no_half_deleted_index(
        emulated, sample_tree, tmp_path):
    """A server and a reader hold the index's files open (on Windows: neither renamed nor
    deleted while they do): --rebuild and a damaged vectors.f32 made afresh write new
    generations beside the old ones, and the old ones go once released."""
    from test_mcp import first_hit, server
    db = tmp_path / "db"
    emulated.index(sample_tree, db)
    old_chroma = chroma_dir(db)
    question = "how does the energy system refill timers?"

    async def go():
        async with server(emulated, db, env=emulated_env(emulated.kind)) as s:
            before = first_hit(await s.call_tool("search_code", {"question": question}))
            with open(old_chroma / "chroma.sqlite3", "rb"), open(db / "vectors.f32", "rb"):
                emulated.index(sample_tree, db, "--rebuild")
                assert emulated.run("index.py", "--db", db, "--check").returncode == 0
                if emulated.kind == "windows" or sys.platform == "win32":   # held: whole
                    assert (old_chroma / "chroma.sqlite3").is_file()
            after = first_hit(await s.call_tool("search_code", {"question": question}))
            return before, after
    before, after = asyncio.run(go())
    assert before == after
    assert chroma_dir(db) != old_chroma
    emulated.index(sample_tree, db)                        # released: the next writer sweeps
    assert not old_chroma.exists() and not (db / "vectors.f32").exists()
    assert sorted(p.name for p in db.iterdir() if p.name.startswith(("chroma", "vectors"))) \
        == sorted([chroma_dir(db).name, flat_name(db)])
    assert emulated.query(db, question)[0]["member"] == "RefillTimers"


def settled_built(db, timeout=600):
    """Until a background build has finished (it may not have started when it returns)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            con = sqlite3.connect(f"{(db / 'index.sqlite').as_uri()}?mode=ro", uri=True,
                                  timeout=1)
            state = con.execute("SELECT value FROM meta WHERE key='build_state'").fetchone()
            con.close()
        except sqlite3.Error:
            state = None
        if state == ("built",):
            return settled(db)
        time.sleep(0.2)
    raise AssertionError(f"the background build of {db} never finished")


def flat_name(db):
    con = sqlite3.connect(db / "index.sqlite")
    (name,), = con.execute("SELECT value FROM meta WHERE key='flat_file'")
    con.close()
    return name


def test_setup_and_remove(emulated, sample_tree):
    (sample_tree / ".git").mkdir()
    (sample_tree / "CLAUDE.md").write_bytes(b"# Notes\r\n\r\nKeep it short.\r\n")
    before = {p: p.read_bytes() for p in sample_tree.rglob("*") if p.is_file()}
    cmd = [sys.executable, "-m", "codebase_rag", "setup", "--project", str(sample_tree)]
    subprocess.run(cmd, env=emulated.env, cwd=ROOT, check=True, capture_output=True)
    settings = json.loads((sample_tree / ".claude" / "settings.json").read_text())
    hook = settings["hooks"]["PostToolUse"][0]["hooks"][0]
    assert hook["command"] == sys.executable and hook["args"][-1] == "--hook"
    assert (sample_tree / "CLAUDE.md").read_bytes().count(b"\r\n") == \
        (sample_tree / "CLAUDE.md").read_bytes().count(b"\n")      # its line ends, kept
    subprocess.run(cmd + ["--remove"], env=emulated.env, cwd=ROOT, check=True,
                   capture_output=True)
    after = {p: p.read_bytes() for p in sample_tree.rglob("*") if p.is_file()}
    assert after == before


def test_an_export_names_only_the_weights_its_graph_reads(tmp_path):
    from codebase_rag.export import model_files
    (tmp_path / "model.onnx").write_bytes(b"\x08graph\x12model.onnx.aaaa1111.data\x00")
    for name in ("model.onnx.aaaa1111.data", "model.onnx.bbbb2222.data", "tokenizer.json"):
        (tmp_path / name).write_bytes(b"x")           # bbbb2222: an older one, still mapped
    assert model_files(tmp_path) == ["model.onnx", "tokenizer.json", "model.onnx.aaaa1111.data"]


@linux_only
def test_a_damaged_export_is_made_again_while_a_model_maps_its_weights(tmp_path):
    """Windows will not delete a file a process maps: the export made again beside the
    mapped weights is sound, and names only its own."""
    folder = tmp_path / "m"
    code = f"""
import mmap, os
from pathlib import Path
from codebase_rag.export import export_onnx, model_problem, resolve_model
folder = Path({str(folder)!r})
export_onnx(resolve_model()[0], folder, "fp32")
[old] = folder.glob("model.onnx.*.data")
with open(old, "rb") as f:
    mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)    # a running model's
(folder / "manifest.json").write_text("damaged")
export_onnx(resolve_model()[0], folder, "fp32")
print(model_problem(folder, full=True), old.exists(),
      sorted(p.name for p in folder.glob("model.onnx.*.data")) != [old.name],
      old.name in (folder / "manifest.json").read_text())
"""
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ,
                         **emulated_env("windows")}, cwd=tmp_path, capture_output=True,
                         text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["None", "True", "True", "False"]


def test_the_model_exports_under_the_other_systems(emulated, tmp_path):
    """The one-time export in a spawned worker: CDLL(None), SIGKILL, prctl all missing."""
    code = ("from codebase_rag.export import export_onnx, model_problem, resolve_model\n"
            f"export_onnx(resolve_model()[0], {str(tmp_path / 'm')!r}, 'fp32')\n"
            f"print(model_problem({str(tmp_path / 'm')!r}, full=True))")
    out = subprocess.run([sys.executable, "-c", code], env=emulated.env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "None"


# ----------------------------------------------------------------------------- CI
def test_the_ci_workflow_is_valid_and_runs_on_the_three_systems():
    """GitHub's workflow schema (check-jsonschema's copy of it, offline) holds the workflow,
    and its matrix is the three systems with the oldest and newest Python."""
    from ruamel.yaml import YAML
    workflow = ROOT / ".github" / "workflows" / "ci.yml"
    proc = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema",
                           "vendor.github-workflows", str(workflow)], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    job = YAML(typ="safe").load(workflow.read_text(encoding="utf-8"))["jobs"]["test"]
    assert job["strategy"]["matrix"] == {"os": ["ubuntu-latest", "macos-14", "windows-latest"],
                                         "python": ["3.10", "3.13"]}
    steps = " ".join(step.get("run", "") for step in job["steps"])
    assert "--ignore=tests/test_oracle_languages.py" in steps and "test_portable.py" in steps


def test_an_index_read_as_a_uri_wherever_its_folder_is(tmp_path, monkeypatch):
    """SQLite opens a read-only index, and an upgrade salvages an old one, by URI: a folder
    of a Windows path, or with ? or # in its name, is still that folder."""
    from codebase_rag import store as store_module
    from codebase_rag.identity import Identity
    folder = tmp_path / ("a?b#c d" if os.name == "posix" else "a#b c d")   # no ? on Windows
    folder.mkdir()
    made = store_module.Store(folder, create=True)
    with made.db as db:
        db.execute("INSERT INTO vectors(key, vec) VALUES ('k', x'00')")
        db.execute("INSERT OR REPLACE INTO meta VALUES ('model', 'm')")
    made.close()                      # its write-ahead log into the database
    assert store_module.salvage(folder) == ([("k", b"\0", None)], Identity(model="m"))
    monkeypatch.setattr(store_module.os, "access", lambda *args: False)    # read-only
    assert store_module.Store(folder).identity.model == "m"


@linux_only
@pytest.mark.parametrize("system", ["windows"], indirect=True)
def test_an_upgrade_after_a_build_in_the_same_process(system, tmp_path, word_embedder):
    """A library user (a test, a bench script) builds, then upgrades an index of an older
    format in the same process: its own connection from the build, no longer used, does
    not keep index.sqlite from being replaced (Windows)."""
    from codebase_rag.build_runs import index_tree
    src, db = tmp_path / "src", tmp_path / "db"
    src.mkdir()
    (src / "Energy.cs").write_text("class Energy {\n  void Refill() { }\n}\n")
    index_tree(str(src), str(db), progress=False, embedder=word_embedder)
    con = sqlite3.connect(db / "index.sqlite")
    with con:
        con.execute("UPDATE meta SET value='3' WHERE key='schema'")
    con.close()
    line = index_tree(str(src), str(db), progress=False, embedder=word_embedder)
    assert "indexed" in line
