"""Hostile input never hangs (issue 42): every pattern the package holds, and every function
that applies them to a whole file or chunk, costs time linear in its input; a file whose
chunking runs past its CPU budget, or whose chunker fails, is still indexed, as plain
windows.

A repository is untrusted input. A run of 40,000 capitals in a test string, `int` and
300,000 spaces on a `.c` line, `PRIVATE_` repeated on a C++ line or a doc comment line of
spaces made a quadratic pattern run for minutes, and a regex holds the GIL: a search that
took such a file in stalled, and the MCP server stopped answering. Here each pattern (found
by walking the package's modules and the literals it passes to `re`, never listed by hand,
so a new one is covered as it is written) and each function that reads a text reads a
hostile file of each family of shapes below, and each chunker one file of them all, at
SMALL and at LARGE (10 times SMALL): linear grows 10x, quadratic 100x, so a case fails when
LARGE costs more than RATIO times SMALL. It measures the process's CPU time (a loaded
machine slows both sizes alike), takes the least of a few runs, and stops a run at the
limit it is held to (SIGPROF: the regex engine checks for signals), so a quadratic case
fails in about a second instead of running for hours.
"""
import ast
import dataclasses
import gc
import importlib
import pkgutil
import re
import signal
import sqlite3
import time

import pytest

import codebase_rag
from conftest import ROOT
from codebase_rag import text as text_module
from codebase_rag.chunkers import (PLAIN_KIND, PLAIN_LINES, PLAIN_MEMBER, Chunk, OverBudget,
                                   budget, contract, parsers, plain_windows, spend, treesitter,
                                   typescript)
from codebase_rag.chunkers.tables import TABLES
from codebase_rag.languages import LANGUAGES, chunk_source

PACKAGE = ROOT / "codebase_rag"
SMALL, LARGE = 100_000, 1_000_000
RATIO = 20            # linear grows 10x from SMALL to LARGE, quadratic 100x
FLOOR = 0.005         # CPU seconds: a shorter run is counted as this (the clock's and the
                      # caches' noise would otherwise make a ratio of nothing)
RUNS = 2              # the least of this many runs counts: a busy machine only slows a run
HANG = 10.0           # CPU seconds at SMALL / 10, where the ladder starts: a hang, not a pace

# Hostile files, each of a family of shapes: (prefix, unit[, suffix]) is a line (or lines)
# of the unit repeated between its prefix and suffix. A file holds a few dozen shapes, each
# a 25th of it or so: a shape quadratic for a pattern still outweighs what all the others
# cost it. The shapes that leave a bracket, a comment or a string open come last.
FAMILIES = {
    "words and blanks": (
        ("", "A"), ("", "AB1"), ("", "1"), ("", " "), ("", "\t"), ("", "\n"), ("", " \n"),
        ("", "\r\n"), ("", "\\\n"), ("", "a"), ("", "a "), ("", "aA"), ("", "a_b"),
        ("", "$"), ("", "@"), ("", "@$"), ("", "'"), ("", "#"), ("", "#if x\n"), ("", "\\"),
        ("", "export "), ("", "?"), ("", ". "), ("", "}\n"), ("", "x;\n")),
    "code": (
        ("int", " "), ("", "int "), ("", "int\t*"), ("", "PRIVATE_"), ("", "A_"), ("", "_"),
        ("", "A_ "), ("", "A_TRY_"), ("", "}A_"), ("", "static "), ("", "class A "),
        ("", "A("), ("", "a::"), ("", "if "), ("", "a for "), ("", "super("), ("", "this(\n"),
        ("", "("), ("", "(a"), ("", "f("), ("", "[["), ("", "template<"), ("", "{\n")),
    "comments and strings": (
        ("/** ", " ", " */"), ("/// ", " "), ("// ", " "), (" * ", " "), ("", "*"), ("", "/**/"),
        ("", "*/"), ("", "//"), ("", "* "), ("", "{@"), ("{@link a", " "), ("", "{@a "),
        ("", "{@a b"), ("", "<"), ("", "<a "),
        ("", "/**"), ("/**", "*"), ("/** ", " "), ('$"{', "a "), ('$"', "a "), ('@"', "a "),
        ('"', "a "), ("'", "a "), ("/*", "a ")),
}
# after each shape in a chunker's text: an item of each language for a comment to lead
ITEMS = "\nfunc f() {}\nfn f() {}\nvoid f() {}\ndef f(): pass\nfunction f() {}\n"
# not in a chunker's text: a run of line continuations, on which tree-sitter-python's own
# scanner is quadratic (the CPU budget stops it: test_a_parse_that_...)
PARSER_QUADRATIC = ("", "\\\n")


EVERY_SHAPE = "every shape"     # one hostile file of them all: for the chunkers, whose runs
                                # cost too much to read each family's file


def hostile(family, size, wrap=False):
    """A text of about `size` characters: each shape of the family in turn, a line (or
    lines) of its own. wrap: as a chunker should read it, each shape followed by ITEMS, and
    a line dense in `;{}` (which a chunker refuses as minified) cut into lines it reads."""
    shapes = [shape for name, family_shapes in FAMILIES.items() for shape in family_shapes
              if family in (name, EVERY_SHAPE) and not (wrap and shape == PARSER_QUADRATIC)]
    out, each = [], size // len(shapes)
    for prefix, unit, *suffix in shapes:
        run = prefix + unit * max(1, (each - len(prefix)) // len(unit)) + "".join(suffix)
        if wrap and parsers.looks_minified(run):
            run = "\n".join(run[i:i + parsers.MAX_LINE // 2]
                            for i in range(0, len(run), parsers.MAX_LINE // 2))
        out.append(run + (ITEMS if wrap else "\n"))
    return "".join(out)


# ----------------------------------------------------------------------------- measuring
class _Stopped(Exception):
    pass


def _stop(*_):
    raise _Stopped


def cpu_seconds(fn, arg, limit):
    """This thread's CPU seconds for fn(arg) (a thread an earlier test left running costs
    nothing here), or None when it ran past `limit` (stopped by SIGPROF where it stands:
    the regex engine checks for signals; the process's time, which is never less)."""
    gc.collect()
    gc.disable()
    previous = signal.signal(signal.SIGPROF, _stop)
    started = time.thread_time()
    try:
        signal.setitimer(signal.ITIMER_PROF, limit)
        fn(arg)
        took = time.thread_time() - started
    except _Stopped:
        took = None
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
        gc.enable()
    return took if took is not None and took <= limit else None


def least(fn, arg, limit, runs=RUNS, enough=0.0):
    """The least of up to `runs` runs (None if every one ran past the limit); stops at a
    run of `enough` seconds or less."""
    times = []
    for _ in range(runs):
        took = cpu_seconds(fn, arg, limit)
        if took is not None:
            times.append(took)
            if took <= enough:
                break
    return min(times, default=None)


def growth(fn, make):
    """(CPU seconds at SMALL, at LARGE), each None when it ran past RATIO times the size
    below it (the ladder starts at SMALL / 10, so even a quadratic case stops soon)."""
    start = cpu_seconds(fn, make(SMALL // 10), HANG)
    if start is None:
        return None, None
    small = least(fn, make(SMALL), RATIO * max(start, FLOOR))
    if small is None:
        return None, None
    limit = RATIO * max(small, FLOOR)
    return small, least(fn, make(LARGE), limit, enough=limit)


def assert_linear(what, fn, make, families=tuple(FAMILIES)):
    """fn(make(family, size)) for each family: linear, or the failure names it."""
    shown = lambda t: "over the limit" if t is None else f"{t * 1000:.1f} ms"  # noqa: E731
    slow = []
    for family in families:
        small, large = growth(fn, lambda size: make(family, size))
        if small is None or large is None:
            slow.append(f"{family}: {shown(small)} at {SMALL:,} characters, {shown(large)} "
                        f"at {LARGE:,}")
    assert slow == [], f"{what} grows faster than linear (the limit: {RATIO}x the size " \
                       f"below) on {'; '.join(slow)}"


# ----------------------------------------------------------------------------- the patterns
def package_modules():
    for info in pkgutil.walk_packages(codebase_rag.__path__, "codebase_rag."):
        if not info.name.endswith("__main__"):
            yield importlib.import_module(info.name)


def held_patterns():
    """[(where, pattern)] for every compiled pattern a module of the package holds: at
    module level, or in the tuples, dicts, records and classes there (a language row's
    patterns, a syntax table's compiled ones)."""
    found = {}

    def visit(where, value, depth=0):
        if isinstance(value, re.Pattern):
            found.setdefault((value.pattern, value.flags), (where, value))
        elif depth > 3:
            return
        elif isinstance(value, (tuple, list)):
            for i, v in enumerate(value):
                visit(f"{where}[{i}]", v, depth + 1)
        elif isinstance(value, dict):
            for k, v in value.items():
                visit(f"{where}[{k!r}]", v, depth + 1)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            for f in dataclasses.fields(value):
                visit(f"{where}.{f.name}", getattr(value, f.name), depth + 1)
        elif isinstance(value, type) and value.__module__.startswith("codebase_rag"):
            for k, v in vars(value).items():
                visit(f"{where}.{k}", v, depth + 1)

    for module in package_modules():
        for name, value in vars(module).items():
            visit(f"{module.__name__.removeprefix('codebase_rag.')}.{name}", value)
    return list(found.values())


def literal_patterns():
    """[(where, pattern)] for every pattern written as a literal in a call of `re`
    (re.sub(r"...", ...)), compiled with the flags that call names."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    isinstance(node.func.value, ast.Name) and node.func.value.id == "re" and \
                    node.args and isinstance(node.args[0], ast.Constant) and \
                    isinstance(node.args[0].value, (str, bytes)):
                flags = 0
                for arg in node.args[1:] + [k.value for k in node.keywords]:
                    for a in ast.walk(arg):
                        if isinstance(a, ast.Attribute) and isinstance(a.value, ast.Name) and \
                                a.value.id == "re" and a.attr.isupper():
                            flags |= getattr(re, a.attr)
                where = f"{path.relative_to(PACKAGE)}:{node.lineno} re.{node.func.attr}"
                found.append((where, re.compile(node.args[0].value, flags)))
    return found


def all_patterns():
    seen, out = set(), []
    for where, pattern in held_patterns() + literal_patterns():
        if (pattern.pattern, pattern.flags) not in seen:
            seen.add((pattern.pattern, pattern.flags))
            out.append((where, pattern))
    return out


PATTERNS = all_patterns()


def test_the_patterns_are_found_and_a_syntax_table_holds_none_uncompiled():
    """The walk finds the patterns it must, wherever they are held (so a pattern moved
    elsewhere is still read here), and each pattern a syntax table writes is one the
    driver holds compiled."""
    from codebase_rag.chunkers import csharp
    found = {(p.pattern, p.flags) for _, p in PATTERNS}
    for pattern in (text_module.ACRONYM_WORD, treesitter._LINE_MARKERS, csharp._DOC_TAG,
                    typescript._DOC_MARKERS, treesitter.PATTERNS["cpp"].keyword_macros[1][1],
                    LANGUAGES[0].test_dir, re.compile(r"(?<!\\):")):   # team_postgres's
        assert (pattern.pattern, pattern.flags) in found, pattern
    compiled = [p.pattern for _, p in PATTERNS if isinstance(p.pattern, bytes)]

    def leaves(value):                     # bytes written as a regex (a keyword is none)
        if isinstance(value, bytes) and re.search(rb"[\\^$.|?*+()[\]{}]", value):
            yield value
        elif isinstance(value, tuple):
            for v in value:
                yield from leaves(v)
    for name, table in TABLES.items():
        for f in dataclasses.fields(table):
            for leaf in leaves(getattr(table, f.name)):
                assert any(leaf in p for p in compiled), f"{name}.{f.name}: {leaf[:60]!r}"


def _matches(pattern):
    empty = pattern.pattern[:0]
    return lambda text: pattern.subn(empty, text)


@pytest.mark.parametrize("where,pattern", PATTERNS, ids=[w for w, _ in PATTERNS])
def test_every_pattern_is_linear_on_hostile_text(where, pattern):
    as_bytes = isinstance(pattern.pattern, bytes)
    assert_linear(where, _matches(pattern), lambda family, n: hostile(family, n).encode()
                  if as_bytes else hostile(family, n))


def test_no_pattern_needs_a_python_newer_than_the_package_runs_on():
    """Python 3.10 (pyproject's requires-python) has no possessive quantifier and no atomic
    group: a pattern with one made C and C++ fail to chunk at all there. Read with this
    Python's own parser (3.11 and later know both)."""
    assert re.search(r'requires-python = ">=3\.10"', (ROOT / "pyproject.toml").read_text())
    parser = getattr(re, "_parser", None)
    if parser is None:
        pytest.skip("Python 3.10's parser cannot read them: compiling every pattern is the test")
    newer = {"POSSESSIVE_REPEAT", "ATOMIC_GROUP"}

    def opcodes(parsed):
        for op, value in parsed:
            yield str(op)
            for v in value if isinstance(value, (tuple, list)) else ():
                if isinstance(v, parser.SubPattern):
                    yield from opcodes(v)
                elif isinstance(v, (tuple, list)):
                    for w in v:
                        if isinstance(w, parser.SubPattern):
                            yield from opcodes(w)
    assert [w for w, p in PATTERNS if newer & set(opcodes(parser.parse(p.pattern, p.flags)))] \
        == []


# ----------------------------------------------------------------------------- the functions
_A_CHUNK = Chunk("", "", "m", "method", 1, 1, 1, "", "")
TEXT_FUNCTIONS = {          # read each family's file
    "text.split_identifiers": text_module.split_identifiers,
    "text.lexical_text": lambda t: text_module.lexical_text("a.py", _A_CHUNK, t),
    "text.chunk_header": lambda t: text_module.chunk_header(
        "a.py", Chunk("", t, t, "method", 1, 1, 1, "", t, t)),
    "text.windows": lambda t: text_module.windows("a.py | m", t,
                                                  lambda ts: [len(x) // 4 for x in ts]),
    "text.fts_words": text_module.fts_words,
    "treesitter.doc_text": treesitter.doc_text,
    "treesitter.doc_text(/**)": lambda t: treesitter.doc_text("/**" + t),
    "typescript.jsdoc_text": lambda t: typescript.jsdoc_text("/**" + t + "*/"),
    "parsers.looks_minified": parsers.looks_minified,
    "plain_windows": plain_windows,
}
FILE_FUNCTIONS = {          # read the file of every shape, as a chunker reads it
    "treesitter._blanked(c)": lambda t: treesitter._blanked(t.encode(), "c"),
    "treesitter._blanked(cpp)": lambda t: treesitter._blanked(t.encode(), "cpp"),
    **{f"chunk {lang.extensions[0]}": (lambda ext: lambda t: chunk_source("hostile" + ext, t))(
        lang.extensions[0]) for lang in LANGUAGES if lang.name != "javascript"},
    **{f"uses {ext}": (lambda ext: lambda t: uses_of_file("hostile" + ext, t))(ext)
       for ext in (".c", ".cpp", ".java")},
}


def uses_of_file(path, text):
    """A file's chunks and then its uses (uses/), as the indexer reads them."""
    from codebase_rag.uses import extract
    chunks = chunk_source(path, text)
    return extract(text, chunks, chunks.language or path.rpartition(".")[2])


@pytest.mark.parametrize("name", TEXT_FUNCTIONS)
def test_every_function_that_reads_a_text_is_linear_on_hostile_text(name):
    assert_linear(name, TEXT_FUNCTIONS[name], hostile)


@pytest.mark.parametrize("name", FILE_FUNCTIONS)
def test_every_chunker_is_linear_on_a_hostile_file(name):
    def run(text):
        try:
            FILE_FUNCTIONS[name](text)
        except parsers.ChunkerLimit:       # a chunker may refuse it: quickly, then
            pass
    assert_linear(name, run, lambda family, n: hostile(family, n, wrap=True), [EVERY_SHAPE])


def test_the_hostile_file_reaches_the_chunkers_code():
    """A chunker reads the hostile file, not just its first line: none refuses it, and each
    finds the items between its first shapes."""
    text = hostile(EVERY_SHAPE, SMALL, wrap=True)
    for ext in (".go", ".rs", ".c", ".cpp", ".java", ".py", ".ts"):
        assert len(chunk_source("hostile" + ext, text)) >= 10, ext


# ----------------------------------------------------------------------------- the budget
def test_spend_raises_only_within_a_budget_once_its_cpu_time_is_used():
    for _ in range(10_000):
        spend()                                  # outside a budget: never
    with pytest.raises(OverBudget):
        with budget(0.05):
            while True:
                spend()
    with budget(60):
        for _ in range(10_000):
            spend()


def test_a_parse_that_tree_sitter_makes_quadratic_stops_at_the_budget():
    """tree-sitter-python's scanner is quadratic on a run of line continuations (20,000
    take 1 s, 60,000 take 8): C code the budget cannot interrupt, but its progress reports
    can, so the parse stops there, not minutes later."""
    prefix, unit = PARSER_QUADRATIC
    with pytest.raises(OverBudget):
        with budget(0.2):
            chunk_source("hostile.py", prefix + unit * 200_000)


def test_plain_windows_cover_the_file_and_keep_the_contract():
    lines = [f"x{i} = {i}" for i in range(150)] + ["", "   ", ""]
    text = "\n".join(lines)
    windows = plain_windows(text)
    assert [(c.start_line, c.end_line) for c in windows] == [(1, 60), (61, 120), (121, 150)]
    assert {(c.kind, c.member) for c in windows} == {(PLAIN_KIND, PLAIN_MEMBER)}
    assert plain_windows("\n \n") == []
    for lang in LANGUAGES:
        assert contract.problems(text, windows, lang) == []


HOSTILE_C = "int main(void) { return 0; }\n" + "int" + " " * 300_000 + "\n"


def test_a_file_over_its_budget_is_found_by_a_query_as_plain_windows(cli, tmp_path):
    """CODEBASE_RAG_CHUNK_SECONDS set tiny: the chunker of the file with a hostile line
    stops at its budget, the file is indexed as plain windows (one warning names it), and
    a query finds it."""
    tree = tmp_path / "src"
    tree.mkdir()
    (tree / "ok.py").write_text("def refill_energy(timers):\n    return len(timers)\n")
    (tree / "huge.c").write_text("/* wind turbine blade pitch controller */\n"
                                 "int pitch_blades(int angle) { return angle * 2; }\n" +
                                 "int" + " " * 200_000 + "\n")
    proc = cli.index(tree, tmp_path / "db", env={"CODEBASE_RAG_CHUNK_SECONDS": "0.001"})
    warned = [line for line in proc.stderr.splitlines() if "huge.c" in line]
    assert len(warned) == 1 and "plain windows" in warned[0], proc.stderr
    hits = cli.query(tmp_path / "db", "wind turbine blade pitch controller", "-k", "3")
    hit = next(h for h in hits if h["file"] == "huge.c")
    assert (hit["kind"], hit["member"], hit["start_line"], hit["end_line"]) == \
        (PLAIN_KIND, PLAIN_MEMBER, 1, 3)
    out = cli.run("query.py", "--db", tmp_path / "db", "pitch_blades", "-k", "1").stdout
    assert out.startswith("#1 | huge.c:1-3 | <file> |"), out


def test_a_chunker_that_raises_no_longer_loses_its_file(monkeypatch, tmp_path, word_embedder,
                                                         capsys):
    """A chunker that fails on a file (anything but its size or nesting limit) costs that
    file its members, never its place in the index: it is read as plain windows, with one
    warning that names it."""
    from codebase_rag import indexer
    from codebase_rag.build_runs import index_tree

    def broken(path, text):
        if path.endswith("broken.py"):
            raise IndexError("list index out of range\nsecond line")
        return chunk_source(path, text)
    monkeypatch.setattr(indexer, "chunk_source", broken)
    tree = tmp_path / "src"
    tree.mkdir()
    (tree / "broken.py").write_text("def solar_panel_tilt():\n    return 42\n" * 40)
    (tree / "fine.py").write_text("def fine():\n    return 1\n")
    index_tree(str(tree), str(tmp_path / "db"), progress=False, embedder=word_embedder)
    warned = [line for line in capsys.readouterr().err.splitlines() if "broken.py" in line]
    assert len(warned) == 1 and "IndexError" in warned[0] and "plain windows" in warned[0]
    rows = sqlite3.connect(tmp_path / "db" / "index.sqlite").execute(
        "SELECT member, kind, start_line, end_line FROM chunks WHERE file = 'broken.py' "
        "ORDER BY start_line").fetchall()
    assert rows == [(PLAIN_MEMBER, PLAIN_KIND, 1, PLAIN_LINES),
                    (PLAIN_MEMBER, PLAIN_KIND, PLAIN_LINES + 1, 80)]
