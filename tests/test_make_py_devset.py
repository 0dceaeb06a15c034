"""The Python dev-set builder (bench/make_py_devset.py): docstrings come out of the corpus
and nothing else does, the code still parses, and summaries make queries only when they
say something."""
import importlib.util
import json
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("make_py_devset", ROOT / "bench" / "make_py_devset.py")
devset = importlib.util.module_from_spec(spec)
spec.loader.exec_module(devset)


def stripped(src):
    text = textwrap.dedent(src).lstrip("\n")
    return devset.strip_docstrings(text, devset.parse(text))


def test_docstrings_go_with_their_lines_and_other_strings_stay():
    assert stripped('''
        """Module doc."""
        import os

        class C:
            """Class doc
            over two lines."""
            label = "not a docstring"

            def m(self):
                """Method doc."""
                # a comment stays
                return "kept"
        ''') == textwrap.dedent('''\
        import os

        class C:
            label = "not a docstring"

            def m(self):
                # a comment stays
                return "kept"
        ''')


def test_a_body_of_only_a_docstring_gets_pass_and_one_liners_keep_their_code():
    assert stripped('''
        class Error(Exception):
            """Raised when it fails."""

        def one(): """Doc."""; return 1
        def only(): """Doc."""
        ''') == textwrap.dedent('''\
        class Error(Exception):
            pass

        def one(): return 1
        def only(): pass
        ''')


def test_what_is_not_a_docstring_stays():
    src = 'def f():\n    x = 1\n    "after a statement"\n    return f"{x}"\n'
    assert devset.strip_docstrings(src, devset.parse(src)) == src


@pytest.mark.parametrize("doc, query", [
    ("Return the shortest path between two nodes.\n\nParameters\n----------\n",
     "Return the shortest path between two nodes."),
    ("Compute the flow\nthrough every edge.", "Compute the flow through every edge."),
    ("Parameters\n----------\nG : graph", ""),
    (".. deprecated:: 3.0\n   Use other.", ""),
])
def test_the_summary_is_the_first_paragraph(doc, query):
    assert devset.summary(doc) == query


def test_a_small_repository_gives_queries_in_the_kits_format(tmp_path):
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "pkg" / "graph.py").write_text(textwrap.dedent('''\
        """The graph module."""


        @cached
        def shortest_path(graph, source, target):
            """Find the shortest path from source to target in the graph.

            Uses breadth-first search.
            """
            seen = {source}
            queue = [source]
            while queue:
                node = queue.pop(0)
            return seen


        def boring(x):
            """TODO: write a proper description of this one."""
            a = x
            b = a
            return b


        def tiny():
            """Return one, a constant value of no interest."""
            return 1
        '''))
    (repo / "tests" / "test_graph.py").write_text(    # tests are left out
        'def test_x():\n    """Check the shortest path code path here."""\n'
        '    a = 1\n    b = 2\n    assert a < b\n')
    out = tmp_path / "out"
    assert devset.main([str(repo), str(out), "--repo", "o/n", "--commit", "c0ffee"]) == 0
    rows = [json.loads(line) for line in (out / "dev-o__n.jsonl").read_text().splitlines()]
    assert rows == [{
        "id": "o__n#0001", "repo": "o/n", "commit": "c0ffee",
        "query": "Find the shortest path from source to target in the graph.",
        "file": "pkg/graph.py", "class": "", "method": "shortest_path",
        "sig_line": 4, "start_line": 3, "end_line": 9, "body_lines": 5,
    }]
    corpus = out / "corpus"
    assert sorted(p.relative_to(corpus).as_posix() for p in corpus.rglob("*.py")) == ["pkg/graph.py"]
    assert (corpus / "pkg" / "graph.py").read_text().splitlines()[:5] == \
        ["", "", "@cached", "def shortest_path(graph, source, target):", "    seen = {source}"]
    files = json.loads((out / "dev-o__n.files.json").read_text())
    assert files == {"commit": "c0ffee", "methods_per_file": {"pkg/graph.py": 3}}
