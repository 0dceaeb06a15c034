"""The chunker against a real parser: on the sample project and on a file of constructs that
fool a regex (tests/oracle/Tricky.cs), every member with a body that tree-sitter-c-sharp
finds is one chunk with the same last line, class chain and namespace, starting at its
doc comment or attributes, and no chunk is a member the parser does not know.
bench/oracle.py runs the same comparison on whole repositories."""
import importlib.util
from pathlib import Path

import pytest

from codebase_rag.chunkers import csharp

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("tree_sitter_c_sharp")
spec = importlib.util.spec_from_file_location("oracle", ROOT / "bench" / "oracle.py")
oracle = importlib.util.module_from_spec(spec)
spec.loader.exec_module(oracle)

FILES = sorted((ROOT / "tests" / "sample").rglob("*.cs")) + [ROOT / "tests" / "oracle" / "Tricky.cs"]


def parser_members(text):
    from tree_sitter import Language, Parser
    import tree_sitter_c_sharp
    tree = Parser(Language(tree_sitter_c_sharp.language())).parse(text.encode())
    assert not tree.root_node.has_error
    found = []
    oracle.walk(tree.root_node, [], [], "file", found)
    return found


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_member_the_parser_finds_is_one_chunk_and_no_more(path):
    text = path.read_text()
    members = parser_members(text)
    chunks = [c for c in csharp.chunk(text) if c.kind in oracle.CHUNK_MEMBER_KINDS]
    for m in members:
        matches = [c for c in chunks if c.end_line == m["end"] and
                   m["top"] <= c.start_line <= m["sig"]]
        assert len(matches) == 1, f"{m['class']}.{m['name']} (lines {m['top']}-{m['end']})"
        assert (matches[0].cls, matches[0].namespace) == (m["class"], m["namespace"])
    assert len(chunks) == len(members), \
        sorted(f"{c.cls}.{c.member}" for c in chunks)
