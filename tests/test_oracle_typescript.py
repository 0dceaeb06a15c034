"""The TypeScript/JavaScript chunker against the TypeScript compiler: on a fixture file per
extension (tests/oracle/ts/tricky.*, constructs that fool a regex or a brace counter), every
unit the oracle (tests/oracle/ts/ts_oracle.js, the eval kit's own) scores is exactly one chunk,
with the same last line, a first line within the unit's comment/decorator block and its
signature line, and the same container chain; and there is no other chunk.
bench/chunk_dump.py with the kit's check_ts_chunks.py runs the same comparison on whole
repositories.

Needs node (skipped without it) and TypeScript 5, found through TS_ORACLE_TYPESCRIPT or in
.cache/node/node_modules/typescript under the project root; with node but no TypeScript
the test fails and says how to install it.
"""
import os
import shutil
import sys
from pathlib import Path

import pytest

from codebase_rag.chunkers import typescript

ROOT = Path(__file__).resolve().parents[1]
KIT = ROOT / "tests" / "oracle" / "ts"
FIXTURES = sorted(KIT.glob("tricky.*"))
LOCAL_TYPESCRIPT = ROOT / ".cache" / "node" / "node_modules" / "typescript"
INSTALL = ("mkdir -p .cache/node && cd .cache/node && echo '{\"private\":true}' > "
           "package.json && npm install typescript@5   (or set TS_ORACLE_TYPESCRIPT)")


@pytest.fixture(scope="module")
def oracle():
    if shutil.which(os.environ.get("NODE", "node")) is None:
        pytest.skip("node is not on PATH: the TypeScript oracle cannot run")
    where = os.environ.get("TS_ORACLE_TYPESCRIPT")
    if not where:
        if not (LOCAL_TYPESCRIPT / "package.json").is_file():
            pytest.fail("TypeScript for the oracle is missing; from the project root run: "
                        + INSTALL)
        os.environ["TS_ORACLE_TYPESCRIPT"] = where = str(LOCAL_TYPESCRIPT)
    if not (Path(where) / "package.json").is_file():
        pytest.fail(f"TS_ORACLE_TYPESCRIPT={where} holds no TypeScript; run: {INSTALL}")
    return kit_module("tsoracle"), kit_module("check_ts_chunks")   # the second imports the first


def kit_module(name):
    """A module of the kit in tests/oracle/ts, loaded by its path."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, KIT / f"{name}.py")
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_there_is_a_fixture_for_every_extension():
    assert {p.suffix for p in FIXTURES} == set(typescript.GRAMMAR)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_every_unit_the_compiler_finds_is_one_chunk_and_no_more(oracle, path):
    tsoracle, check = oracle
    text = tsoracle.read_text(path)
    result = tsoracle.analyse(path.name, text)
    assert result["parse_errors"] == 0, "the fixture must parse cleanly"
    targets = [u for u in result["units"] if tsoracle.is_target(u)]
    chunks = typescript.chunk(text, path.suffix)
    assert chunks.parse_errors == 0
    lines = text.split("\n")
    unmatched = list(chunks)
    for u in targets:
        name = ".".join(check.chain_of(u) + [u["name"]])
        where = f"{name} (lines {u['start_line']}-{u['end_line']})"
        lo = check.lead_start(lines, min(u["start_line"], u["overloads_start"] or u["start_line"]))
        hits = [c for c in unmatched
                if c.end_line == u["end_line"] and lo <= c.start_line <= u["sig_line"]]
        if len(hits) > 1:                       # units sharing their lines: `a = f, c = g`
            hits = [c for c in hits if c.member == u["name"]]
        assert len(hits) == 1, f"{where}: {len(hits)} chunks"
        chain = ".".join(check.chain_of(u))
        own = chain + "." + u["name"] if chain else u["name"]
        assert hits[0].cls == chain or u["kind"] not in tsoracle.FUNCTION_KINDS and \
            hits[0].cls == own, f"{where}: class {hits[0].cls!r}"
        unmatched.remove(hits[0])
    assert unmatched == [], "chunks the compiler does not know"


def test_two_callbacks_of_one_call_are_two_chunks_and_neither_is_bogus(oracle, tmp_path):
    """`extensions.handle(type, (x) => {...}, (x) => {...})`: the second callback starts on
    the line where the first ends (pixijs's Assets.ts and BlendModePipe.ts). Both are chunks,
    and the check counts neither as starting inside the other's body."""
    import json
    import subprocess
    text = ("extensions.handle(Type.A, (value) =>\n{\n    add(value);\n}, (value) =>\n{\n"
            "    remove(value);\n});\n")
    (tmp_path / "pipe.ts").write_text(text)
    chunks = typescript.chunk(text, ".ts")
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 4), (4, 7)]
    listed = tmp_path / "chunks.jsonl"
    listed.write_text("".join(json.dumps({"file": "pipe.ts", "start_line": c.start_line,
                                          "end_line": c.end_line, "class": c.cls,
                                          "member": c.member, "kind": c.kind}) + "\n"
                              for c in chunks))
    out = subprocess.run([sys.executable, str(KIT / "check_ts_chunks.py"), str(tmp_path),
                          str(listed)], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1].startswith("exact 100.00% bogus 0 ")
