"""The shape of the code: a module per stage, imports that run one way, settings defined
once (config.py, --help and the README agree), and no module that grows into a framework."""
import ast
import re
import subprocess
import sys

from conftest import ROOT

PACKAGE = ROOT / "codebase_rag"
# Each module may import only modules of a lower rank: configuration at the bottom, then
# the pipeline's stages in order (walk -> chunk -> embed -> store -> search -> print), then
# what drives them.
RANK = {
    "config": 0, "errors": 1, "languages": 1, "oslayer": 1, "folder": 2, "walk": 2, "chunkers": 2,
    "identity": 2, "migrations": 3, "chunkers.preprocess": 1,
    "project_files": 2,
    "chunkers.parsers": 2, "chunkers.tables": 2, "chunkers.contract": 2, "chunkers.csharp": 3,
    "chunkers.python": 3, "chunkers.typescript": 3, "chunkers.treesitter": 3, "text": 2,
    "uses": 4, "uses.csharp": 4, "uses.syntax": 4, "uses.scoping": 4, "uses.crates": 4,
    "uses.go": 5, "uses.java": 5, "uses.rust": 5, "uses.cfamily": 5, "definitions": 6,
    "namespaces": 7, "packages": 7, "linkage": 7, "modules": 7, "resolve": 8, "references": 9,
    "export": 3, "chroma": 3, "flat": 3, "vectors": 4, "embed": 5, "store": 5, "lock": 5,
    "team_policy": 5, "team_wire": 3, "team_chroma": 4, "team_postgres": 4, "nearest": 6,
    "keywords": 6, "check": 9, "search": 7, "render": 6, "hook": 6, "indexer": 8, "build_runs": 9,
    "fresh": 9, "reader": 10, "mcp_handshake": 11, "mcp_server": 12, "cli_index": 13,
    "cli_query": 13, "setup_claude": 13, "cli": 14, "__main__": 15,
}
HEAVY = ("numpy", "torch", "chromadb", "chromadb_rust_bindings", "onnxruntime", "tokenizers",
         "sentence_transformers", "onnx")


def module_name(path):
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_imports(path):
    """The codebase_rag modules a file imports, at any depth of its code."""
    found = set()
    here = module_name(path).split(".") if path.is_relative_to(PACKAGE) else []
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:                              # relative: from .x / from . import y
                base = here[:len(here) - node.level + (1 if is_package else 0)]
                parts = base + (node.module.split(".") if node.module else [])
                targets = [".".join(parts)] if node.module else \
                    [".".join(parts + [a.name]) if ".".join(parts + [a.name]) in RANK
                     else ".".join(parts) for a in node.names]   # a module, or a name in one
            elif node.module and node.module.startswith("codebase_rag"):
                targets = [node.module.removeprefix("codebase_rag").lstrip(".") or ""]
                if not targets[0]:
                    targets = [a.name for a in node.names]
            else:
                continue
            found.update(t for t in targets if t)
        elif isinstance(node, ast.Import):
            found.update(a.name.removeprefix("codebase_rag.") for a in node.names
                         if a.name.startswith("codebase_rag."))
    return found


def test_every_module_has_a_rank():
    modules = {module_name(p) for p in PACKAGE.rglob("*.py")} - {""}
    assert modules == set(RANK)
    assert all(isinstance(rank, int) for rank in RANK.values())   # floors, not half-floors


def test_imports_run_one_way():
    wrong = []
    for path in PACKAGE.rglob("*.py"):
        me = module_name(path)
        for target in package_imports(path):
            own_package = me.startswith(target + ".") or target.startswith(me + ".")
            if not own_package and RANK.get(target, 99) >= RANK.get(me, -1):
                wrong.append(f"{me} imports {target}")
    assert wrong == []


def test_the_commands_call_the_package_and_never_each_other():
    for command in ("index.py", "query.py"):
        tree = ast.parse((ROOT / command).read_text())
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not names & {"index", "query"}
        assert any(n and n.startswith("codebase_rag") for n in names)


def test_the_first_stages_import_nothing_heavy():
    probe = ("import sys; import codebase_rag.walk, codebase_rag.chunkers, codebase_rag.text, "
             "codebase_rag.config, codebase_rag.errors; "
             f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "[]"


def code_strings(path):
    """The string constants of a module's code, docstrings left out."""
    tree = ast.parse(path.read_text())
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
            and isinstance(n.value, str) and id(n) not in docs]


def test_language_knowledge_lives_in_its_row_and_its_chunker():
    from codebase_rag.languages import LANGUAGES
    names = {lang.name for lang in LANGUAGES if len(lang.name) > 2}   # not c, go: SQL aliases, words
    extensions = {e for lang in LANGUAGES for e in lang.extensions}
    for path in [*PACKAGE.rglob("*.py"), ROOT / "index.py", ROOT / "query.py"]:
        if path.name == "languages.py" or "chunkers" in path.parts or "uses" in path.parts:
            continue
        for text in code_strings(path):
            text = re.sub(r"python (index|query)\.py", "", text)     # the commands
            words = {w.lower() for w in re.findall(r"\w+", text)}    # Python as python
            assert not (names & words or "///" in text or
                        any(re.search(rf"(?<![\w/]){re.escape(e)}\b", text) for e in extensions)), \
                f"{path.name} knows a language: {text!r}"


def test_no_private_attribute_is_reached():
    """Other libraries (the mcp SDK first) are used through their public API, which their
    releases keep: no `x._name` and no getattr(x, "_name"), but on self (and os._exit,
    which is public)."""
    reached = []
    for path in [*PACKAGE.rglob("*.py"), ROOT / "index.py", ROOT / "query.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute):
                owner, name = node.value, node.attr
            elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "getattr" \
                    and len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
                owner, name = node.args[0], str(node.args[1].value)
            else:
                continue
            if name.startswith("_") and not name.startswith("__") and \
                    not (isinstance(owner, ast.Name) and (owner.id, name) in
                         {("self", name), ("os", "_exit")}):
                reached.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
    assert reached == []


def test_no_test_or_bench_script_edits_sys_path():
    """They import the package as it is installed (requirements.txt installs a checkout
    editable; pytest's pythonpath puts the checkout first); a bench run of another checkout
    puts it on its children's PYTHONPATH."""
    offenders = [p.relative_to(ROOT).as_posix() for folder in ("tests", "bench")
                 for p in (ROOT / folder).rglob("*.py")
                 if re.search(r"sys\.path\s*(\.(insert|append|extend)|\[|\+?=)", p.read_text())]
    assert offenders == []


def test_modules_stay_small():
    """A stage fits in 450 lines; a language's chunker or uses' reader, which knows its
    whole grammar, in 800; no other exception."""
    sizes = {module_name(p): len(p.read_text().splitlines()) for p in PACKAGE.rglob("*.py")}
    assert {m: n for m, n in sizes.items()
            if n > (800 if m.startswith(("chunkers.", "uses.")) else 450)} == {}


# ----------------------------------------------------------------------------- settings
def test_each_setting_is_defined_once_and_documented_everywhere():
    from codebase_rag import config
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("## Settings"):]
    table = table[:table.index("\n## ")]
    listed = set(re.findall(r"`(CODEBASE_RAG_\w+)`", table))
    assert listed == {s.env for s in config.SETTINGS.values() if not s.lever}
    helps = {cmd: subprocess.run([sys.executable, str(ROOT / cmd), "--help"], capture_output=True,
                                 text=True, check=True).stdout for cmd in ("index.py", "query.py")}
    levers = [s.env for s in config.SETTINGS.values() if s.lever]
    assert levers and not [env for env in levers if env in readme or
                           any(env in h for h in helps.values())]
    for name, s in config.SETTINGS.items():
        if s.flag:
            assert any(f"{s.flag} " in h and s.env in h for h in helps.values()), name
            assert re.search(rf"`{re.escape(s.flag)}\b", table), f"{name}: flag not in README"


def test_no_setting_is_read_outside_config():
    from codebase_rag import config
    known = {s.env for s in config.SETTINGS.values()}
    for path in [*PACKAGE.rglob("*.py"), ROOT / "index.py", ROOT / "query.py"]:
        used = set(re.findall(r"CODEBASE_RAG_[A-Z_]+", path.read_text()))
        assert used <= known, f"{path.name}: {used - known}"
        if path.name != "config.py":
            assert not re.search(r"(environ|ENV|getenv)\W*(get)?\W*['\"]CODEBASE_RAG",
                                 path.read_text()), path.name


def test_every_remedy_is_a_command_that_runs_where_the_user_is():
    """A message that says what to run names the absolute command (config.INDEX_COMMAND),
    never a bare `python index.py`, which fails outside the checkout or without its venv."""
    bare = [(p.name, text) for p in PACKAGE.rglob("*.py") for text in code_strings(p)
            if re.search(r"\bpython3? (index|query)\.py", text)]
    assert bare == []


def test_detached_runs_are_started_one_way():
    """A hook, a search and the MCP server hand work to a detached writer through lock.py
    (apply_soon, start_refresh): the writer's argument lists are written there alone."""
    callers = [p.name for p in PACKAGE.rglob("*.py") if p.name != "lock.py"
               and re.search(r"\bdetach\(", p.read_text())]
    written = [p.name for p in PACKAGE.rglob("*.py") for text in code_strings(p)
               if text in ("--apply-queue", "--detached") and p.name not in ("lock.py",
                                                                          "cli_index.py")]
    assert callers == [] and written == []


def test_the_readme_names_every_language_of_the_table():
    """The Languages table has a row per language with its extensions, and --lang lists
    every name, in the table's order."""
    from codebase_rag.languages import LANGUAGES
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Languages"):readme.index("## Team cache")]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "`." in line]
    assert len(rows) == len(LANGUAGES)
    for lang in LANGUAGES:
        assert any(all(f"`{ext}`" in row.split("|")[2] for ext in lang.extensions)
                   for row in rows), f"{lang.name}: no row with {lang.extensions}"
    lang_flag = next(line for line in readme.splitlines() if line.startswith("| `--lang L`"))
    assert re.findall(r"`(\w+)`", lang_flag.split("|")[2]) == [lang.name for lang in LANGUAGES]


def test_every_list_of_languages_is_the_table():
    """index.py --help and the block setup writes into every user's CLAUDE.md list the
    languages from the table, all of them; the block's text names none by hand."""
    from codebase_rag.languages import LANGUAGES
    from codebase_rag.setup_claude import claude_block
    names = ", ".join(lang.name for lang in LANGUAGES)
    helped = subprocess.run([sys.executable, str(ROOT / "index.py"), "--help"],
                            capture_output=True, text=True, check=True).stdout
    assert names in " ".join(helped.split())
    assert names in claude_block("query")


def test_the_architecture_layout_names_every_module():
    doc = (ROOT / "docs" / "architecture.md").read_text()
    layout = doc[doc.index("## Layout"):doc.index("## The index folder")]
    named = set(re.findall(r"`(codebase_rag/[\w/]+(?:\.py)?)`", layout)) | \
        {f"codebase_rag/chunkers/{m}" for m in re.findall(r"`(\w+\.py)`", layout)}
    modules = {p.relative_to(ROOT).as_posix() for p in PACKAGE.glob("*.py")} | \
        {p.relative_to(ROOT).as_posix() for p in (PACKAGE / "chunkers").glob("*.py")
         if p.name != "__init__.py"}
    assert sorted(modules - named) == []


def test_every_bench_script_is_named_in_its_readme():
    readme = (ROOT / "bench" / "README.md").read_text()
    scripts = [p.relative_to(ROOT / "bench").as_posix() for p in (ROOT / "bench").rglob("*.py")]
    assert [s for s in scripts if s not in readme] == []
