"""The package as a user installs it: `pip install .` into a new virtual environment puts the
codebase-rag command on PATH, and from other folders it indexes, answers, serves MCP and
sets up a project; every remedy it prints and every command it writes is that command, and
the hook that setup wrote runs the installed code, detached writer included.

Offline and quick: the new environment sees this one's packages (torch, chromadb, the model,
setuptools) through a .pth file, so pip builds and installs the project alone (--no-deps
--no-build-isolation --no-index) and downloads nothing."""
import asyncio
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig

import pytest

from conftest import ROOT, SAMPLE, settled

QUESTION = "how does the energy system refill timers?"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(bin folder of a new venv with the project installed, the environment to run it in)."""
    folder = tmp_path_factory.mktemp("install")
    source = folder / "source"                 # what a build reads: the checkout stays clean
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "codebase_rag", source / "codebase_rag",
                    ignore=shutil.ignore_patterns("__pycache__"))
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], capture_output=True, text=True, check=True)
    (venv / site.stdout.strip() / "parent-environment.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n")
    pip = subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                          "--no-build-isolation", "--ignore-installed", str(source)],
                         capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    return venv / "bin"


@pytest.fixture(scope="module")
def user(installed, machine_cache, tmp_path_factory):
    """Runs `codebase-rag ...` from PATH, as a user's shell does, in a folder of its own."""
    home = tmp_path_factory.mktemp("user")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CODEBASE_RAG_", "PYTHONPATH", "VIRTUAL_ENV"))}
    env.update(PATH=f"{installed}{os.pathsep}{env.get('PATH', '')}",
               CODEBASE_RAG_CACHE=str(machine_cache))
    tree = home / "shop"
    shutil.copytree(SAMPLE, tree, ignore=shutil.ignore_patterns(".codebase-rag"))

    def run(*args, cwd=home, stdin=None, check=True, shell=False):
        cmd = ["bash", "-c", args[0]] if shell else ["codebase-rag", *map(str, args)]
        proc = subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True, text=True,
                              env=env, timeout=600)
        if check:
            assert proc.returncode == 0, f"{args} exited {proc.returncode}:\n{proc.stderr}"
        return proc
    run.env, run.tree, run.script = env, tree, installed / "codebase-rag"
    return run


def test_the_command_is_on_path_and_runs_the_installed_package(user):
    assert shutil.which("codebase-rag", path=user.env["PATH"]) == str(user.script)
    assert user("--version").stdout.strip() == "codebase-rag 0.1.0"
    assert "setup" in user("--help").stdout
    unknown = user("frobnicate", check=False)
    assert unknown.returncode == 2 and unknown.stderr.count("\n") == 1
    # a remedy names the command a user can run anywhere: the installed one
    missing = user("query", "--db", user.tree / "nothing", QUESTION, check=False)
    assert missing.returncode == 2
    assert f"create one with: {user.script} index" in missing.stderr, missing.stderr
    assert str(ROOT) not in missing.stderr


def test_index_then_query_from_other_folders(user):
    built = user("index", "--source", user.tree)
    assert re.match(r"indexed .*shop: \d+ files", built.stdout), built.stdout
    found = user("query", "-k", "1", QUESTION, cwd=user.tree / "Auth")
    assert re.search(r"^#1 \| Energy/EnergySystem.cs:\d+-\d+ \| EnergySystem.RefillTimers ",
                     found.stdout, re.M), found.stdout
    assert user("status", cwd=user.tree / "Energy").stdout.startswith("built")


def test_mcp_from_path(user):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def search():
        params = StdioServerParameters(command="codebase-rag", args=["mcp"], env=user.env,
                                       cwd=str(user.tree))
        with open(user.tree.parent / "mcp.log", "a") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    greeting = await session.initialize()
                    result = await session.call_tool("search_code", {"question": QUESTION})
                    return greeting, result.content[0].text
    user("index", "--source", user.tree)
    greeting, text = asyncio.run(search())
    assert greeting.serverInfo.name == "codebase-rag" and greeting.serverInfo.version == "0.1.0"
    assert re.search(r"^#1 \| .* \| EnergySystem.RefillTimers ", text, re.M), text


def test_setup_writes_the_installed_command_and_its_hook_takes_in_an_edit(user):
    user("index", "--source", user.tree)
    said = user("setup", cwd=user.tree)
    assert f"to build it now: {user.script} index --source {user.tree}" in said.stdout
    settings = json.loads((user.tree / ".claude" / "settings.json").read_text())
    [post] = settings["hooks"]["PostToolUse"]
    hook = post["hooks"][0]                       # exec form: Claude Code runs no shell
    assert (hook["command"], hook["args"]) == (str(user.script), ["index", "--hook"])
    server = json.loads((user.tree / ".mcp.json").read_text())["mcpServers"]["codebase-rag"]
    assert (server["command"], server["args"]) == (str(user.script), ["query", "--mcp"])
    energy = user.tree / "Energy" / "EnergySystem.cs"
    text = energy.read_text()
    at = text.index("    public bool")
    energy.write_text(text[:at] + "    /// <summary>Gives a player's deposit back.</summary>\n"
                      "    public void RefundDeposit(int amount) { Current += amount; }\n\n"
                      + text[at:])
    event = json.dumps({"tool_name": "Edit", "tool_input": {"file_path": str(energy)}})
    user(shlex.join([hook["command"], *hook["args"]]), shell=True, stdin=event, cwd=user.tree)
    settled(user.tree / ".codebase-rag")          # the detached writer, the installed code
    log = (user.tree / ".codebase-rag" / "build.log").read_text()
    assert "applying edits" in log and "Traceback" not in log
    found = user("query", "-k", "1", "--lines", "0", "give a player's deposit back",
                 cwd=user.tree)
    assert re.search(r"^#1 \| .* \| EnergySystem.RefundDeposit ", found.stdout, re.M), found.stdout
    assert user("setup", "--remove", cwd=user.tree).returncode == 0
    assert not (user.tree / ".mcp.json").exists()
