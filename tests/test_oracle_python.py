"""The Python chunker against Python's own parser: on files of constructs that fool a naive
parser (tests/oracle/py/: `def` and `class` in strings, comments and f-strings, decorators
and signatures over several lines, line continuations, match statements, async with/for,
lambdas as defaults, defs under if/try/for/with), every def that `ast` finds outside a
function, and every class with no def in it, is one chunk with the same last line, class
chain and docstring, starting at its first decorator; no other def or class chunk exists,
and no chunk starts inside a function. bench/oracle_py.py runs the same comparison on whole
repositories."""
import importlib.util
from pathlib import Path

import pytest

from codebase_rag.chunkers import python

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("oracle_py", ROOT / "bench" / "oracle_py.py")
oracle = importlib.util.module_from_spec(spec)
spec.loader.exec_module(oracle)

FILES = sorted((ROOT / "tests" / "oracle" / "py").glob("*.py"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_def_and_leaf_class_ast_finds_is_one_chunk_and_no_more(path):
    text = path.read_text()
    wanted = oracle.targets(oracle.parse(text))
    chunks = python.chunk(text, ".py")
    assert chunks.parse_errors == 0
    matches, bogus = oracle.compare(wanted, chunks)
    assert bogus == []
    for i, t in enumerate(wanted):
        assert i in matches, f"{t['class']}.{t['name']} (lines {t['top']}-{t['end']}) has no chunk"
        c = matches[i]
        assert (c.cls, c.member, c.kind, c.doc) == (t["class"], t["name"], t["kind"], t["doc"])
    own = [c for c in chunks if c.kind in ("function", "method", "class")]
    assert len(own) == len(wanted), sorted(f"{c.cls}.{c.member}" for c in own)


def test_the_fixtures_cover_what_they_claim():
    """Each fixture holds the constructs the oracle test is meant to exercise."""
    text = "\n".join(p.read_text() for p in FILES)
    for construct in ('"""\ndef ', "# class ", 'f"', "match command", "async with",
                      "async for", "key=lambda", "\\\n", "@functools.lru_cache(\n",
                      "except ImportError:\n    def", "@overload", "case _:"):
        assert construct in text, construct


def test_the_oracle_finds_what_it_says():
    """The oracle's own rules, on a small file: defs outside functions, leaf classes."""
    wanted = oracle.targets(oracle.parse(
        "class A:\n"
        "    @d\n"
        "    def m(self):\n"
        "        def inner(): pass\n"
        "    class Data:\n"
        "        class Meta: pass\n"
        "if x:\n"
        "    def f(): pass\n"))
    assert [(t["kind"], t["class"], t["name"], t["top"], t["sig"], t["end"]) for t in wanted] == [
        ("method", "A", "m", 2, 3, 4),
        ("class", "A", "Data", 5, 5, 6),
        ("function", "", "f", 8, 8, 8),
    ]
