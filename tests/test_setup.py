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
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, settled
from codebase_rag import __version__, setup_claude
from codebase_rag.config import INDEX_ARGV, QUERY_ARGV

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
    assert re.search(r'^\+ +"--hook"$', out, re.M), out
    assert "4 file(s) would change" in out

    code, out, _ = setup(capsys, project / "src")
    assert code == 0 and f"in {project}: changed" in out
    settings = json.loads((project / ".claude/settings.json").read_text())
    assert settings["permissions"] == MINE[".claude/settings.json"]["permissions"]
    post, start = settings["hooks"]["PostToolUse"], settings["hooks"]["SessionStart"]
    assert post[0] == MINE[".claude/settings.json"]["hooks"]["PostToolUse"][0]
    assert post[1] == {"matcher": "Edit|Write", "hooks": [      # exec form: no shell
        {"type": "command", "command": INDEX_ARGV[0], "args": [*INDEX_ARGV[1:], "--hook"],
         "timeout": 10}]}
    assert [g["hooks"][0]["command"] for g in start] == ["echo hello", INDEX_ARGV[0]]
    assert start[1]["hooks"][0]["args"] == [        # the old installation's, in its place
        *INDEX_ARGV[1:], "--source", "${CLAUDE_PROJECT_DIR}", "--background"]
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


def run_hook(hook, env, stdin=None, cwd=None):
    """A hook run as Claude Code runs it: an entry in exec form (command and args) with no
    shell, ${CLAUDE_PROJECT_DIR} put in its place; a command line, by a shell."""
    if isinstance(hook, dict):
        argv = [a.replace("${CLAUDE_PROJECT_DIR}", env["CLAUDE_PROJECT_DIR"])
                for a in [hook["command"], *hook["args"]]]
    else:
        argv = ["bash", "-c", hook]
    proc = subprocess.run(argv, input=stdin, capture_output=True,
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
    said = run_hook(start["hooks"][0], env, cwd=sample_tree)
    assert "codebase-rag: the index of" in said and shlex.join(QUERY_ARGV) in said
    built(sample_tree / ".codebase-rag")
    [shell] = re.findall(r"^ {6}(.*) \"how are user passwords hashed and verified\?\"$",
                         (sample_tree / "CLAUDE.md").read_text(), re.M)
    found = run_hook(f"{shell} -k 1 'how does the energy system refill timers?'", env,
                     cwd=sample_tree / "Auth")       # the agent's shell, anywhere inside
    assert "EnergySystem.RefillTimers" in found
    [post] = settings["hooks"]["PostToolUse"]
    edit_and_hook(sample_tree, post["hooks"][0], env)
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
        ours = groups[0]["hooks"][0]           # setup's exec form; the plugin's, a command
        words = " ".join(a.replace("${CLAUDE_PROJECT_DIR}", '"$CLAUDE_PROJECT_DIR"')
                         for a in ours["args"])   # line for the launcher (a shell script)
        want = f"{launcher} {words}".replace(f"{launcher} --hook", f"{launcher} hook")
        want = want.replace(f"{launcher} --source", f"{launcher} index --source")
        assert hooks[event] == [{**groups[0], "hooks": [{"type": "command", "command": want,
                                                         "timeout": ours["timeout"]}]}]
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


# ----------------------------------------------------------------------------- hostile input
# A repository is untrusted input (issue 42). Each case below is one a probe reproduced
# against an earlier version; what it did then is in the docstring.
def snapshot(folder):
    """Every file's bytes, link's target and folder under folder, links not followed."""
    found = {}
    for where, folders, names in os.walk(folder):
        for name in folders + names:
            path = Path(where) / name
            rel = path.relative_to(folder).as_posix()
            found[rel] = (("link", os.readlink(path)) if path.is_symlink() else
                          path.read_bytes() if path.is_file() else "folder")
    return found


def one_line(err, *words):
    """An expected error: one line, exit 2 (checked by the caller), naming what to fix."""
    assert err.startswith("codebase-rag: ") and err.count("\n") == 1, err
    assert "--check" not in err and "Traceback" not in err, err
    for word in words:
        assert word in err, err


def refused(capsys, project, *words, also=()):
    """setup, --dry-run and --remove each stop in one line with nothing changed in project
    (nor in the folders of also)."""
    before = [snapshot(f) for f in (project, *also)]
    for args in ((), ("--dry-run",), ("--remove",)):
        code, out, err = setup(capsys, project, *args)
        assert code == 2 and out == "", (args, out)
        one_line(err, *words)
        assert [snapshot(f) for f in (project, *also)] == before, args
    return err


@pytest.mark.parametrize("link", [".claude", "CLAUDE.md", ".mcp.json"])
def test_a_link_out_of_the_project_stops_setup_with_nothing_written(tmp_path, capsys, link):
    """Before: with .claude a link to the user's ~/.claude, the hooks and the server's
    approval were written there (every project of the user's then ran them); with CLAUDE.md
    or .mcp.json a link out, the outside text was copied into the tree."""
    project = project_with_settings(tmp_path / "shop")
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude/settings.json").write_text('{"model": "opus"}\n')
    (home / "notes.md").write_text("# my private notes\n")
    (home / "servers.json").write_text('{"mcpServers": {}}\n')
    target = {".claude": home / ".claude", "CLAUDE.md": "../home/notes.md",
              ".mcp.json": home / "servers.json"}[link]
    shutil.rmtree(project / link) if (project / link).is_dir() else (project / link).unlink()
    (project / link).symlink_to(target)
    refused(capsys, project, f"{project / link} leads out of the project", also=[home])


def test_an_in_tree_link_is_written_through_and_stays_a_link(tmp_path, capsys):
    """Before: the common CLAUDE.md -> AGENTS.md link was replaced by a plain file (AGENTS.md
    kept the old text, other agents never saw the block). Now AGENTS.md gets the block, and
    --remove gives it back byte for byte."""
    project = project_with_settings(tmp_path / "shop")
    agents = "# Agents\n\nRun `dotnet test` before you commit.\n\n\n"   # blank lines at the end
    (project / "CLAUDE.md").unlink()
    (project / "AGENTS.md").write_text(agents)
    (project / "CLAUDE.md").symlink_to("AGENTS.md")
    code, out, _ = setup(capsys, project)
    assert code == 0 and "AGENTS.md (through CLAUDE.md)" in out, out
    assert os.readlink(project / "CLAUDE.md") == "AGENTS.md"
    text = (project / "AGENTS.md").read_text()
    assert text.startswith(agents + "\n<!-- codebase-rag: begin")
    assert text.count("codebase-rag: end") == 1
    assert setup(capsys, project)[0] == 0 and (project / "AGENTS.md").read_text() == text
    assert setup(capsys, project, "--remove")[0] == 0
    assert os.readlink(project / "CLAUDE.md") == "AGENTS.md"
    assert (project / "AGENTS.md").read_bytes() == agents.encode()


def test_two_names_for_one_file_stop_setup(tmp_path, capsys):
    project = project_with_settings(tmp_path / "shop")
    (project / ".claude/settings.local.json").unlink()
    (project / ".claude/settings.local.json").symlink_to("settings.json")
    refused(capsys, project, "are the same file")


DAMAGED = {   # CLAUDE.md after setup wrote its block, and a user's edit
    "the end marker deleted, notes added below": lambda block: CLAUDE_MD + "\n" +
    block.replace(setup_claude.END + "\n", "") + "\n## My notes\n\nKeep these.\n",
    "an end marker alone": lambda block: CLAUDE_MD + setup_claude.END + "\nKeep these.\n",
    "two blocks with notes between": lambda block: block + "Keep these.\n" + block,
    "the end before the begin": lambda block: setup_claude.END + "\nKeep these.\n" +
    setup_claude.BEGIN + "\n",
}


@pytest.mark.parametrize("case", DAMAGED)
def test_a_damaged_block_stops_setup_and_no_text_is_lost(tmp_path, capsys, case):
    """Before: with the block's end marker deleted and notes added after it, the next setup
    appended a second block, the run after that deleted everything between the two (the
    notes), and --remove then deleted CLAUDE.md."""
    project = project_with_settings(tmp_path / "shop")
    assert setup(capsys, project)[0] == 0
    block = (project / "CLAUDE.md").read_text()[len(CLAUDE_MD) + 1:]
    (project / "CLAUDE.md").write_text(DAMAGED[case](block))
    refused(capsys, project, f"{project / 'CLAUDE.md'}: ", "codebase-rag block",
            "then run setup again (nothing was changed)")


def test_forty_thousand_begin_markers_are_answered_at_once(tmp_path, capsys):
    """Before: the block was found by a regex that backtracked: 8,000 begin markers took 14 s,
    1 MB never finished. Now a plain search: the second begin marker is the answer (the
    input stays large, so a quadratic search would show as a hang, not as a timing)."""
    project = project_with_settings(tmp_path / "shop")
    (project / "CLAUDE.md").write_text("<!-- codebase-rag: begin\n" * 40_000)
    assert (project / "CLAUDE.md").stat().st_size >= 1_000_000
    refused(capsys, project, "lines 1 and 2 both begin a codebase-rag block")


@pytest.mark.parametrize("rel, content, words", [
    (".claude/settings.json", b"[" * 100_000, ["nested too deeply"]),
    (".mcp.json", b'{"mcpServers": ' * 100_000, ["nested too deeply"]),
    (".claude/settings.local.json", b'{"model": "\xff\xfe"}', ["not UTF-8 text (byte 11)"]),
    ("CLAUDE.md", b"# Shop\n\xc3\x28\n", ["not UTF-8 text (byte 7)"]),
])
def test_unreadable_settings_are_an_input_error_that_names_the_file(tmp_path, capsys, rel,
                                                                      content, words):
    """Before: 100,000 [ in a settings file printed 'failed: RecursionError ...; run
    codebase-rag index --check', advice about an index that has nothing to do with it."""
    project = project_with_settings(tmp_path / "shop")
    (project / rel).write_bytes(content)
    refused(capsys, project, f"codebase-rag: {project / rel} ", *words)


def test_a_hook_event_that_is_not_a_list_is_refused_not_rewritten(tmp_path, capsys):
    """Before: "PostToolUse": {...} became a list of its keys, and the user's hook was lost."""
    project = project_with_settings(tmp_path / "shop")
    settings = {"hooks": {"PostToolUse": {"matcher": "Bash", "hooks": [
        {"type": "command", "command": "./audit.sh"}]}}}
    (project / ".claude/settings.json").write_text(json.dumps(settings, indent=2))
    refused(capsys, project, f"{project / '.claude/settings.json'}: ",
            '"hooks.PostToolUse" is not a list')


def test_keys_a_user_added_to_our_entries_are_kept(tmp_path, capsys):
    """Before: setup replaced the user's own codebase-rag server (its env: the team's server
    and token gone), and an older installation's hook with a key of the user's."""
    project = project_with_settings(tmp_path / "shop")
    team = {"type": "stdio", "command": "/opt/codebase-rag/bin/codebase-rag", "args": ["mcp"],
            "env": {"TEAM_SERVER": "https://rag.example", "TEAM_TOKEN": "s3cret"}, "cwd": "src"}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"codebase-rag": team}}))
    settings = json.loads(json.dumps(MINE[".claude/settings.json"]))
    settings["hooks"]["SessionStart"][1]["hooks"][0]["statusMessage"] = "indexing"
    (project / ".claude/settings.json").write_text(json.dumps(settings, indent=4))
    before = snapshot(project)
    assert setup(capsys, project)[0] == 0
    server = json.loads((project / ".mcp.json").read_text())["mcpServers"]["codebase-rag"]
    assert server == {**team, "type": "stdio", "command": QUERY_ARGV[0],
                      "args": [*QUERY_ARGV[1:], "--mcp"], "alwaysLoad": True}
    start = json.loads((project / ".claude/settings.json").read_text())["hooks"]["SessionStart"]
    assert start[1]["hooks"] == [{"type": "command", "timeout": 10, "statusMessage": "indexing",
                                  "command": INDEX_ARGV[0], "args": [
                                      *INDEX_ARGV[1:], "--source", "${CLAUDE_PROJECT_DIR}",
                                      "--background"]}]
    assert setup(capsys, project, "--remove")[0] == 0
    assert snapshot(project)[".mcp.json"] == before[".mcp.json"]      # byte for byte
    # edited since setup: --remove cannot give the text back, and keeps the user's server
    assert setup(capsys, project)[0] == 0
    edited = json.loads((project / ".mcp.json").read_text())
    edited["mcpServers"]["docs"] = {"command": "docs-server"}
    (project / ".mcp.json").write_text(json.dumps(edited))
    code, out, _ = setup(capsys, project, "--remove")
    assert code == 0 and "kept your own codebase-rag server" in out
    servers = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert servers["codebase-rag"]["env"] == team["env"] and set(servers) == {"codebase-rag",
                                                                              "docs"}


def test_a_bom_and_crlf_line_ends_are_kept(tmp_path, capsys):
    """Before: a settings.json that began with a BOM (as Windows editors save it) was refused
    as invalid JSON, and a CRLF file came back with LF line ends."""
    project = project_with_settings(tmp_path / "shop")
    for rel in MINE:
        path = project / rel
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes().replace(b"\n", b"\r\n"))
    (project / "CLAUDE.md").write_bytes(CLAUDE_MD.replace("\n", "\r\n").encode())
    before = snapshot(project)
    assert setup(capsys, project)[0] == 0
    for rel in [*MINE, "CLAUDE.md"]:
        data = (project / rel).read_bytes()
        assert data.startswith(b"\xef\xbb\xbf" if rel != "CLAUDE.md" else b"# Shop\r\n"), rel
        assert b"\n" not in data.replace(b"\r\n", b""), rel                  # CRLF throughout
        assert data != before[rel], rel
    assert json.loads((project / ".mcp.json").read_text(encoding="utf-8-sig"))["mcpServers"]
    after = snapshot(project)
    assert "nothing to change" in setup(capsys, project)[1] and snapshot(project) == after
    assert setup(capsys, project, "--remove")[0] == 0
    now = snapshot(project)
    assert {rel: now[rel] for rel in (".mcp.json", ".claude/settings.local.json", "CLAUDE.md")} \
        == {rel: before[rel] for rel in (".mcp.json", ".claude/settings.local.json", "CLAUDE.md")}
    data = now[".claude/settings.json"]    # held an older installation's hook: taken out
    assert data.startswith(b"\xef\xbb\xbf") and b"\n" not in data.replace(b"\r\n", b"")


ODD = {   # files of a project before setup: tabs, no final newline, keys in the user's order
    ".claude/settings.json": '{"permissions": {"deny": [], "allow": ["Bash(make:*)"]},\n'
                             '\t"model":\t"opus",  "hooks": {}}',
    ".mcp.json": '{"mcpServers":{"docs":{"command":"docs-server","type":"stdio"}}}',
    ".claude/settings.local.json": '{\n   "zeta": 1,\n   "alpha": "caf\\u00e9 café"\n}\n\n',
    "CLAUDE.md": "# Shop\n\nNo final newline.",
}


def test_remove_gives_back_the_files_setup_found_byte_for_byte(tmp_path, capsys):
    """Before: --remove took our entries out and wrote every JSON file anew (its indent,
    key order, escapes and final newline changed) and CLAUDE.md with a newline it never
    had."""
    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    for rel, text in ODD.items():
        (project / rel).parent.mkdir(exist_ok=True)
        (project / rel).write_text(text)
    before = snapshot(project)
    assert setup(capsys, project)[0] == 0
    local = (project / ".claude/settings.local.json").read_text()
    assert local.startswith('{\n   "zeta": 1,\n   "alpha": "café café",')   # indent, order
    assert local.endswith("}\n")
    assert not (project / ".claude/settings.json").read_text().endswith("\n")
    assert setup(capsys, project, "--remove")[0] == 0
    assert snapshot(project) == before
    # edited after setup: the edit stays, our entries go, the rest still byte for byte
    assert setup(capsys, project)[0] == 0
    assert (project / ".codebase-rag/.gitignore").read_text().endswith("\n*\n")   # never committed
    settings = json.loads((project / ".claude/settings.json").read_text())
    settings["permissions"]["allow"].append("Bash(npm test:*)")
    (project / ".claude/settings.json").write_text(json.dumps(settings, indent=4))
    assert setup(capsys, project, "--remove")[0] == 0
    now = snapshot(project)
    assert json.loads(now.pop(".claude/settings.json")) == {
        "permissions": {"deny": [], "allow": ["Bash(make:*)", "Bash(npm test:*)"]},
        "model": "opus"}                   # (its empty "hooks" went with ours: no record of it)
    assert now == {k: v for k, v in before.items() if k != ".claude/settings.json"}


def test_a_file_setup_made_goes_only_if_nothing_of_the_users_is_in_it(tmp_path, capsys):
    bare = tmp_path / "bare"
    bare.mkdir()
    assert setup(capsys, bare)[0] == 0
    local = json.loads((bare / ".claude/settings.local.json").read_text())
    (bare / ".claude/settings.local.json").write_text(json.dumps({**local, "model": "opus"}))
    assert setup(capsys, bare, "--remove")[0] == 0
    assert snapshot(bare) == {".claude": "folder", ".claude/settings.local.json":
                              json.dumps({"model": "opus"}, indent=2).encode()}   # no newline


def test_setups_record_is_kept_only_inside_the_project(tmp_path, capsys):
    """The texts setup replaced are kept in the index folder; where that folder is a link
    out of the project, setup keeps none (and --remove takes our entries out instead)."""
    project = project_with_settings(tmp_path / "shop")
    elsewhere = tmp_path / "disk"
    elsewhere.mkdir()
    (project / ".codebase-rag").symlink_to(elsewhere)
    assert setup(capsys, project)[0] == 0
    assert list(elsewhere.iterdir()) == []
    assert setup(capsys, project, "--remove")[0] == 0
    assert (project / "CLAUDE.md").read_text() == CLAUDE_MD


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv (util-linux)")
def test_a_read_only_project_root_changes_nothing_and_names_the_file(tmp_path):
    """Before: in a root setup could not write, .claude/settings.json was written and
    .mcp.json was not (the project half wired), and the error named '..mcp.json.PID.tmp'.
    The suite runs as root, which may write anything: setup runs here without that
    override (as test_hostile's read-only index does)."""
    project = project_with_settings(tmp_path / "shop")
    before = snapshot(project)
    project.chmod(0o555)
    try:
        proc = subprocess.run(
            ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-all",
             sys.executable, "-m", "codebase_rag", "setup", "--project", str(project)],
            capture_output=True, text=True, timeout=120,
            env={**os.environ, "PYTHONPATH": str(ROOT)})
    finally:
        project.chmod(0o755)
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout + proc.stderr
    one_line(proc.stderr, f"cannot write {project / '.mcp.json'}: Permission denied")
    assert ".tmp" not in proc.stderr
    assert snapshot(project) == before
