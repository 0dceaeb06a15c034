"""The languages of the tree-sitter driver against their own compilers' parsers: on a fixture
file per language (tests/oracle/LANG/tricky.*, constructs that fool a regex or a brace
counter), every unit the compiler's parser names (go/ast, javac's tree API, syn, clang's AST)
is exactly one chunk, with the same last line, a first line between the unit's first
comment line and its name's line, and the same chain; no chunk starts inside a function
body; and no other chunk of the unit kinds exists. bench/oracle_lang.py runs the same
comparison on whole repositories.

Each oracle needs its compiler's tools (.ci/run installs them: golang-go,
default-jdk-headless, cargo with librust-syn-dev, the libclang wheel); without them the test
is skipped, except in CI, where it fails.
"""
import importlib.util
import os
import shutil
from pathlib import Path

import pytest

from codebase_rag.chunkers import contract
from codebase_rag.languages import chunk_source

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("oracle_lang", ROOT / "bench" / "oracle_lang.py")
oracle = importlib.util.module_from_spec(spec)
spec.loader.exec_module(oracle)

NEEDS = {"go": ("go", "apt-get install golang-go"),
         "java": ("java", "apt-get install default-jdk-headless"),
         "rust": ("cargo", "apt-get install cargo librust-syn-dev"),
         "c": ("clang.cindex", "pip install libclang"),
         "cpp": ("clang.cindex", "pip install libclang")}
FIXTURES = sorted(p for lang in NEEDS for p in (ROOT / "tests" / "oracle" / lang).glob("tricky.*"))


def tool_or_skip(lang):
    tool, install = NEEDS[lang]
    there = importlib.util.find_spec(tool) is not None if "." in tool else shutil.which(tool)
    if not there:
        message = f"{tool} is missing, so the {lang} oracle cannot run: {install}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_unit_the_compiler_names_is_one_chunk_and_no_more(path):
    lang = path.parent.name
    tool_or_skip(lang)
    rel = str(path.relative_to(ROOT))
    [found] = oracle.run_oracle(lang, [str(path)]).values()
    assert "error" not in found, found
    text = path.read_text()
    units = oracle.widen(found["units"], text.split("\n"))
    chunks = chunk_source(rel, text)
    assert contract.problems(text, chunks, lang) == []
    assert chunks.parse_errors == 0
    matches, bogus = oracle.compare(units, chunks, contract.rules(lang)[1])
    assert bogus == []
    for i, u in enumerate(units):
        assert i in matches, f"{u['chain']}.{u['name']} (lines {u['window']}-{u['end']}) has no chunk"
        c = matches[i]
        assert (oracle.chain_of(c), c.member) == (u["chain"], u["name"]), u
    assert len(chunks) == len(units), sorted(f"{c.kind} {c.cls}.{c.member}" for c in chunks)


def test_every_language_of_the_driver_has_an_oracle_fixture():
    from codebase_rag.languages import LANGUAGES
    driven = {lang.name for lang in LANGUAGES if lang.syntax}
    assert driven <= {p.parent.name for p in FIXTURES}
