"""codebase-rag setup, as a user runs it in a project that already has Claude Code settings:
merged (the user's own entries kept as they were), idempotent, --dry-run writes nothing,
--remove takes out exactly what it put in; the commands it writes run, from the shell as
Claude Code runs them; and the Claude Code plugin folder wires the same hooks and server
through its launcher."""
import asyncio
import json
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT, settled
from codebase_rag import __version__, setup_claude
from codebase_rag.config import INDEX_COMMAND, QUERY_ARGV

MINE = {
    ".claude/settings.json": {
        "permissions": {"allow": ["Bash(npm test:*)"]},
        "hooks": {
            "PostToolUse": [{"matcher": "Edit|Write", "hooks": [
                {"type": "command", "command": "npx prettier --write \"$FILE\""}]}],
            "SessionStart": [
                {"hooks": [{"type": "command", "command": "echo hello"}]},
                {"hooks": [{"type": "command", "timeout": 10, "command":
                            "/old/venv/bin/python /old/codebase-rag/index.py --source "
                            "\"$CLAUDE_PROJECT_DIR\" --background"}]}]}},
    ".mcp.json": {"mcpServers": {"docs": {"type": "stdio", "command": "docs-server"}}},
    ".claude/settings.local.json": {"model": "opus", "enabledMcpjsonServers": ["docs"]},
}
CLAUDE_MD = "# Shop\n\nRun the tests with `dotnet test`.\n"
REFUND = ("    /// <summary>Gives a player's deposit back.</summary>\n"
          "    public void RefundDeposit(int amount) { Current += amount; }\n\n")


def project_with_settings(folder):
    """A project as a user has it: git, its own Claude Code settings (4-space JSON), a
    CLAUDE.md, and a SessionStart hook from an older codebase-rag installation."""
    (folder / ".git").mkdir(parents=True)
    for rel, data in MINE.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(json.dumps(data, indent=4) + "\n")
    (folder / "CLAUDE.md").write_text(CLAUDE_MD)
    (folder / "src").mkdir()
    return folder


def files(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def setup(capsys, cwd, *args):
    """codebase-rag setup run in cwd: (exit code, stdout, stderr)."""
    here = os.getcwd()
    os.chdir(cwd)
    try:
        code = setup_claude.main(list(args))
    finally:
        os.chdir(here)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_setup_merges_keeps_the_users_entries_is_idempotent_and_removable(tmp_path, capsys):
    project = project_with_settings(tmp_path / "shop")
    before = files(project)
    code, out, _ = setup(capsys, project / "src", "--dry-run")    # from a subfolder
    assert code == 0 and files(project) == before
    assert re.search(rf'^\+ +"command": "{re.escape(INDEX_COMMAND)} --hook",$', out, re.M), out
    assert "4 file(s) would change" in out

    code, out, _ = setup(capsys, project / "src")
    assert code == 0 and f"in {project}: changed" in out
    settings = json.loads((project / ".claude/settings.json").read_text())
    assert settings["permissions"] == MINE[".claude/settings.json"]["permissions"]
    post, start = settings["hooks"]["PostToolUse"], settings["hooks"]["SessionStart"]
    assert post[0] == MINE[".claude/settings.json"]["hooks"]["PostToolUse"][0]
    assert post[1] == {"matcher": "Edit|Write", "hooks": [
        {"type": "command", "command": f"{INDEX_COMMAND} --hook", "timeout": 10}]}
    assert [g["hooks"][0]["command"] for g in start] == [   # the old installation's: gone
        "echo hello", f'{INDEX_COMMAND} --source "$CLAUDE_PROJECT_DIR" --background']
    assert (project / ".claude/settings.json").read_text().startswith('{\n    "permissions"')
    servers = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert servers == {"docs": MINE[".mcp.json"]["mcpServers"]["docs"], "codebase-rag": {
        "type": "stdio", "command": QUERY_ARGV[0], "args": [*QUERY_ARGV[1:], "--mcp"],
        "env": {}, "alwaysLoad": True}}
    local = json.loads((project / ".claude/settings.local.json").read_text())
    assert local == {"model": "opus", "enabledMcpjsonServers": ["docs", "codebase-rag"]}
    claude_md = (project / "CLAUDE.md").read_text()
    assert claude_md.startswith(CLAUDE_MD + "\n<!-- codebase-rag: begin")
    assert f"      {shlex.join(QUERY_ARGV)} \"how are user passwords" in claude_md

    after = files(project)
    code, out, _ = setup(capsys, project)
    assert code == 0 and "nothing to change" in out and files(project) == after
    code, out, _ = setup(capsys, project, "--dry-run")
    assert "0 file(s) would change" in out and "+++" not in out

    code, out, _ = setup(capsys, project, "--remove")
    assert code == 0 and files(project)["CLAUDE.md"] == CLAUDE_MD.encode()
    for rel, data in MINE.items():
        want = json.loads(json.dumps(data))
        if rel == ".claude/settings.json":
            want["hooks"]["SessionStart"].pop()           # the old installation's went too
        assert json.loads((project / rel).read_text()) == want, rel
    again = files(project)
    assert "nothing to change" in setup(capsys, project, "--remove")[1]
    assert files(project) == again


def test_setup_in_a_bare_folder_creates_its_files_and_remove_deletes_them(tmp_path, capsys):
    bare = tmp_path / "bare"
    bare.mkdir()
    assert setup(capsys, bare)[0] == 0
    assert set(files(bare)) == {".claude/settings.json", ".claude/settings.local.json",
                                ".mcp.json", "CLAUDE.md"}
    assert setup(capsys, bare, "--remove")[0] == 0
    assert list(bare.iterdir()) == []


def test_a_file_it_cannot_read_stops_it_in_one_line_with_nothing_changed(tmp_path, capsys):
    project = project_with_settings(tmp_path / "shop")
    (project / ".mcp.json").write_text('{"mcpServers": {"docs": ')        # cut short
    before = files(project)
    code, out, err = setup(capsys, project)
    assert code == 2 and out == ""
    assert re.fullmatch(r"codebase-rag: \S+/\.mcp\.json is not valid JSON \(.*\); fix it, "
                        r"then run setup again \(nothing was changed\)\n", err), err
    assert files(project) == before
    (project / ".mcp.json").write_text('{"mcpServers": ["docs"]}')
    code, _, err = setup(capsys, project, "--remove")
    assert code == 2 and '"mcpServers" is not a JSON object' in err


def test_the_examples_are_what_setup_writes():
    """hooks.json.example and CLAUDE.md.example (for wiring by hand) never drift from it."""
    placeholder = ["/abs/path/to/codebase-rag/.venv/bin/python",
                   "/abs/path/to/codebase-rag/index.py"]
    example = json.loads((ROOT / "hooks.json.example").read_text())
    assert example == {"hooks": setup_claude.hooks(placeholder)}
    block = setup_claude.claude_block("/abs/path/to/codebase-rag/.venv/bin/python "
                                      "/abs/path/to/codebase-rag/query.py")
    assert (ROOT / "CLAUDE.md.example").read_text() == "\n".join(block.splitlines()[1:-1]) + "\n"


def built(db, timeout=300):
    """Wait until the background build that a SessionStart hook started has finished (it
    may not have taken the lock yet when the hook returns)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            con = sqlite3.connect(f"file:{db / 'index.sqlite'}?mode=ro", uri=True, timeout=1)
            state = con.execute("SELECT value FROM meta WHERE key='build_state'").fetchone()
            con.close()
        except sqlite3.Error:
            state = None
        if state == ("built",):
            return settled(db)
        time.sleep(0.1)
    raise AssertionError(f"the build of {db} never finished")


def run_hook(command, env, stdin=None, cwd=None):
    """A hook's command, run by a shell as Claude Code runs it."""
    proc = subprocess.run(["bash", "-c", command], input=stdin, capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def edit_and_hook(tree, post_command, env):
    wallet = tree / "Energy" / "EnergySystem.cs"
    text = wallet.read_text()
    at = text.index("    public bool")
    wallet.write_text(text[:at] + REFUND + text[at:])
    event = json.dumps({"hook_event_name": "PostToolUse", "tool_name": "Edit",
                        "tool_input": {"file_path": str(wallet)}, "cwd": str(tree)})
    run_hook(post_command, env, event, cwd=tree)


async def mcp_search(command, args, cwd, env, question):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    params = StdioServerParameters(command=command, args=args, cwd=str(cwd), env=env)
    with open(Path(cwd).parent / "mcp.log", "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("search_code", {"question": question, "k": 1})
                return result.content[0].text


def test_the_commands_setup_writes_build_search_and_take_in_an_edit(cli, sample_tree, capsys):
    assert setup(capsys, sample_tree)[0] == 0
    env = {**cli.env, "CLAUDE_PROJECT_DIR": str(sample_tree)}
    settings = json.loads((sample_tree / ".claude/settings.json").read_text())
    [start] = settings["hooks"]["SessionStart"]
    said = run_hook(start["hooks"][0]["command"], env, cwd=sample_tree)
    assert "codebase-rag: the index of" in said and shlex.join(QUERY_ARGV) in said
    built(sample_tree / ".codebase-rag")
    [shell] = re.findall(r"^ {6}(.*) \"how are user passwords hashed and verified\?\"$",
                         (sample_tree / "CLAUDE.md").read_text(), re.M)
    found = run_hook(f"{shell} -k 1 'how does the energy system refill timers?'", env,
                     cwd=sample_tree / "Auth")       # the agent's shell, anywhere inside
    assert "EnergySystem.RefillTimers" in found
    [post] = settings["hooks"]["PostToolUse"]
    edit_and_hook(sample_tree, post["hooks"][0]["command"], env)
    settled(sample_tree / ".codebase-rag")
    server = json.loads((sample_tree / ".mcp.json").read_text())["mcpServers"]["codebase-rag"]
    answer = asyncio.run(mcp_search(server["command"], server["args"], sample_tree, env,
                                    "give a player's deposit back"))
    assert re.search(r"^#1 \| Energy/EnergySystem.cs:\d+-\d+ \| EnergySystem.RefundDeposit ",
                     answer, re.M), answer


# ----------------------------------------------------------------------------- the plugin
PLUGIN = ROOT / "plugin"


def plugin_command(command):
    return command.replace("${CLAUDE_PLUGIN_ROOT}", str(ROOT))


def test_the_plugin_wires_what_setup_wires_through_its_launcher():
    manifest = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "codebase-rag" and manifest["version"] == __version__
    for key in ("hooks", "mcpServers", "skills"):
        assert (ROOT / manifest[key]).exists(), key
    hooks = json.loads((ROOT / manifest["hooks"]).read_text())["hooks"]
    launcher = '"${CLAUDE_PLUGIN_ROOT}/plugin/codebase-rag"'
    for event, groups in setup_claude.hooks(["@"]).items():    # the same events and matchers
        want = groups[0]["hooks"][0]["command"].replace("@ --hook", f"{launcher} hook")
        want = want.replace("@ --source", f"{launcher} index --source")
        assert hooks[event] == [{**groups[0], "hooks": [{**groups[0]["hooks"][0],
                                                         "command": want}]}]
    server = json.loads((ROOT / manifest["mcpServers"]).read_text())["mcpServers"]
    assert server == {"codebase-rag": {"type": "stdio", "command":
                                       "${CLAUDE_PLUGIN_ROOT}/plugin/codebase-rag",
                                       "args": ["mcp"], "alwaysLoad": True}}
    skill = (ROOT / manifest["skills"] / "search-code" / "SKILL.md").read_text()
    assert skill.startswith("---\nname: search-code\ndescription: ")
    help_text = run_hook(f'{plugin_command(launcher)} index --help', dict(os.environ))
    assert help_text.startswith("usage: codebase-rag index")


def test_claude_code_accepts_the_plugin():
    claude = os.environ.get("CLAUDE_E2E_BIN", str(ROOT / ".cache/node/node_modules/.bin/claude"))
    if not Path(claude).exists() and not shutil.which("claude"):
        pytest.skip("Claude Code is not installed (the README's test command installs it in .cache/node)")
    proc = subprocess.run([claude if Path(claude).exists() else "claude", "plugin",
                           "validate", str(ROOT)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "DISABLE_AUTOUPDATER": "1"})
    assert proc.returncode == 0 and "Validation passed" in proc.stdout, proc.stdout + proc.stderr


def test_the_plugins_hooks_and_server_run_this_checkout(cli, sample_tree):
    manifest = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
    hooks = json.loads((ROOT / manifest["hooks"]).read_text())["hooks"]
    env = {**cli.env, "CLAUDE_PROJECT_DIR": str(sample_tree), "CLAUDE_PLUGIN_ROOT": str(ROOT)}
    said = run_hook(plugin_command(hooks["SessionStart"][0]["hooks"][0]["command"]), env,
                    cwd=sample_tree)
    assert "codebase-rag: the index of" in said
    built(sample_tree / ".codebase-rag")
    edit_and_hook(sample_tree, plugin_command(hooks["PostToolUse"][0]["hooks"][0]["command"]),
                  env)
    settled(sample_tree / ".codebase-rag")
    server = json.loads((ROOT / manifest["mcpServers"]).read_text())["mcpServers"]
    server = server["codebase-rag"]
    answer = asyncio.run(mcp_search(plugin_command(server["command"]), server["args"],
                                    sample_tree, env, "give a player's deposit back"))
    assert re.search(r"^#1 \| Energy/EnergySystem.cs:\d+-\d+ \| EnergySystem.RefundDeposit ",
                     answer, re.M), answer
