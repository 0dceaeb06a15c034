"""The language table (codebase_rag/languages.py): every language is one row, and the rest of
the tool asks the row, never the file name. What a row decides: which files are the
language's, how they are chunked, which are test code, what is skipped; and when its chunker
changes, its files are chunked again on the next plain run, with their vectors reused."""
import os
import re
import sqlite3

import pytest
from conftest import ROOT

from codebase_rag.chunkers import (PLAIN_KIND, PLAIN_MEMBER, REST_MEMBER, Chunk, contract,
                                   cover_rest, uncovered)
from codebase_rag.languages import LANGUAGES, Language, chunk_source, language_for
from codebase_rag.build_runs import index_tree
from codebase_rag.text import TEXT_FORMAT
from codebase_rag.walk import Ignore, walk


def test_every_row_names_its_files_and_a_chunker_that_works():
    for lang in LANGUAGES:
        assert lang.extensions and all(e.startswith(".") for e in lang.extensions)
        assert isinstance(lang.chunk("", lang.extensions[0]), list)
    extensions = [e for lang in LANGUAGES for e in lang.extensions]
    assert len(extensions) == len(set(extensions)), "an extension belongs to one language"


def test_a_file_is_the_language_of_its_extension():
    assert language_for("src/Game/Energy.cs").name == "csharp"
    assert language_for("README.md") is None
    [chunk] = chunk_source("A.cs", "class A { void M() { } }")
    assert (chunk.cls, chunk.member, chunk.kind) == ("A", "M", "method")


@pytest.mark.parametrize("path, test", [
    ("osu.Game.Tests/Visual/TestSceneBeatmap.cs", True), ("src/UnitTests/Parser.cs", True),
    ("tests/Parser.cs", True), ("src/ParserTests.cs", True), ("src/parser_test.cs", True),
    ("src/TestCaseSource.cs", True), ("osu.Game/Beatmaps/Beatmap.cs", False),
    ("src/Contest.cs", False), ("src/Testament.cs", False), ("src/Testing/Clock.cs", False),
])
def test_test_code_by_the_conventions_of_csharp(path, test):
    assert language_for(path).is_test(path) == test


FAKE = Language("fake", (".fk",), "csharp", 1, test_dir=re.compile("^$"),
                test_file=re.compile("^$"), excludes=("out/",))


def test_a_languages_excludes_skip_only_its_own_files(tmp_path):
    for rel in ("bin/App.cs", "bin/tool.fk", "out/App.cs", "out/gen.fk", "src/Main.cs"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("class A { }")
    languages = (language_for("x.cs"), FAKE)
    found = sorted(rel for rel, _, _ in walk(tmp_path, Ignore(tmp_path, (), languages)))
    # C# skips bin/ (build output), the fake language skips out/: each only its own
    assert found == ["bin/tool.fk", "out/App.cs", "src/Main.cs"]


def test_a_folder_no_language_reads_is_never_walked(tmp_path, monkeypatch):
    (tmp_path / "obj" / "deep").mkdir(parents=True)
    (tmp_path / "obj" / "deep" / "Gen.cs").write_text("class G { }")
    scanned = []
    real_scandir = os.scandir
    monkeypatch.setattr(os, "scandir", lambda p: scanned.append(str(p)) or real_scandir(p))
    # obj/ holds no C#; with C# the only language, no one reads it
    csharp_only = (language_for("x.cs"),)
    assert list(walk(tmp_path, Ignore(tmp_path, (), csharp_only))) == []
    assert not any("obj" in p for p in scanned)


def test_unitys_caches_are_skipped_only_beside_project_settings(tmp_path):
    for rel in ("Game/Library/Cached.cs", "Game/ProjectSettings/x.asset", "Tools/Library/Real.cs"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("class A { void M() { } }")
    found = [rel for rel, _, _ in walk(tmp_path, Ignore(tmp_path))]
    assert found == ["Tools/Library/Real.cs"]


def summary_counts(line):
    """(files changed, windows embedded, windows from the cache) of an index_tree summary."""
    changed = int(re.search(r"(\d+) changed\b", line)[1])
    embedded, cached = re.search(r"(\d+) windows embedded, (\d+) from cache", line).groups()
    return changed, int(embedded), int(cached)


@pytest.fixture
def tree(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "Energy.cs").write_text("class Energy {\n  void Refill() { }\n"
                                   "  int Max() { return 5; }\n}\n")
    (src / "Shop.cs").write_text("class Shop {\n  void Buy() { }\n}\n")
    return src


@pytest.mark.parametrize("made_by", [
    '{"csharp": 0, "text": "%s"}' % TEXT_FORMAT,     # an older C# chunker
    '{"csharp": %d}' % LANGUAGES[0].version])        # texts of another shape (no name window)
def test_a_changed_chunker_chunks_its_files_again_and_reuses_their_vectors(tree, tmp_path,
                                                                           word_embedder,
                                                                           made_by):
    db = tmp_path / "db"
    index_tree(str(tree), str(db), progress=False, embedder=word_embedder)
    assert summary_counts(index_tree(str(tree), str(db), progress=False,
                                     embedder=word_embedder)) == (0, 0, 0)
    con = sqlite3.connect(db / "index.sqlite")
    with con:                              # as if the index was made by an older version
        con.execute("UPDATE meta SET value=? WHERE key='chunkers'", (made_by,))
    con.close()
    line = index_tree(str(tree), str(db), progress=False, embedder=word_embedder)
    assert summary_counts(line) == (2, 0, 0)          # both files chunked again, the same
                                                      # windows: their vectors stay


def test_an_index_of_an_older_format_is_upgraded_by_a_plain_run(tree, tmp_path,
                                                                word_embedder, capsys):
    db = tmp_path / "db"
    index_tree(str(tree), str(db), progress=False, embedder=word_embedder)
    con = sqlite3.connect(db / "index.sqlite")
    with con:
        con.execute("UPDATE meta SET value='3' WHERE key='schema'")
    con.close()
    line = index_tree(str(tree), str(db), progress=False, embedder=word_embedder)
    assert summary_counts(line) == (2, 0, 3)     # 3 members (a class line is keywords only)
    assert "upgrading the index" in capsys.readouterr().err


def test_chunks_carry_where_their_doc_comment_is():
    [c] = chunk_source("A.cs", "class A {\n  /// <summary>Max.</summary>\n  int Max() => 5;\n}")
    assert (c.start_line, c.doc_lines, c.doc) == (2, (2, 2), "Max.")
    assert Chunk.__dataclass_fields__["doc_lines"].default == ()


def test_one_index_holds_every_language_of_a_tree(tmp_path, word_embedder):
    src = tmp_path / "src"
    (src / "tools").mkdir(parents=True)
    (src / "Energy.cs").write_text("class Energy {\n  void Refill() { }\n}\n")
    (src / "tools" / "refill.py").write_text(
        'def refill_all(players):\n    """Refill every player."""\n    for p in players:\n'
        '        p.refill()\n')
    (src / "tools" / "__pycache__").mkdir()
    (src / "tools" / "__pycache__" / "refill.py").write_text("def stale():\n    pass\n")
    index_tree(str(src), str(tmp_path / "db"), progress=False, embedder=word_embedder)
    con = sqlite3.connect(tmp_path / "db" / "index.sqlite")
    rows = sorted(con.execute("SELECT file, language, member FROM chunks"))
    assert rows == [("Energy.cs", "csharp", "<rest>"), ("Energy.cs", "csharp", "Refill"),
                    ("tools/refill.py", "python", "refill_all")]     # <rest>: class Energy {


@pytest.mark.parametrize("path, test", [
    ("src/user.test.ts", True), ("src/Button.spec.tsx", True), ("lib/__tests__/x.js", True),
    ("e2e/login.ts", True), ("test/util.mjs", True), ("src/testing.ts", False),
    ("src/contest.js", False), ("src/attest.spec-helper.ts", False),
    ("tests/test_walk.py", True), ("pkg/store_test.py", True), ("conftest.py", True),
    ("pkg/testament.py", False), ("pkg/latest.py", False),
])
def test_test_code_by_the_conventions_of_typescript_javascript_and_python(path, test):
    assert language_for(path).is_test(path) == test


@pytest.mark.parametrize("path, namespace, test", [
    ("caddy/server_test.go", "", True), ("caddy/server.go", "", False),
    ("caddy/testdata/x.go", "", False),
    ("src/test/java/a/FooTest.java", "", True), ("src/main/java/a/Tests.java", "", True),
    ("src/main/java/a/Contest.java", "", False),
    ("tests/cli.rs", "", True), ("src/lib.rs", "tests", True), ("src/lib.rs", "a.test", True),
    ("src/lib.rs", "a.tests.b", True), ("src/lib.rs", "attests", False), ("src/lib.rs", "", False),
])
def test_test_code_by_the_conventions_of_go_java_and_rust(path, namespace, test):
    """Rust's test code is also `#[cfg(test)] mod tests` inside a source file: the chunk's
    namespace says it."""
    assert language_for(path).is_test(path, namespace) == test


def test_typescript_files_are_read_with_their_own_grammar():
    tsx = "export const Badge = memo(({ n }: { n: number }) => <span>{n}</span>);\n"
    [badge] = chunk_source("src/Badge.tsx", tsx)
    assert (badge.member, badge.kind, badge.wrapper) == ("Badge", "function", "memo")
    [decl] = chunk_source("types/api.d.ts", "export interface Api {\n  get(): void;\n}\n")
    assert (decl.member, decl.kind) == ("Api", "interface")
    assert language_for("lib/x.mjs").name == "javascript"
    assert language_for("lib/x.mts").name == "typescript"


def test_bundles_and_build_output_are_not_source(tmp_path):
    for rel in ("dist/app.js", "build/x.ts", "src/app.min.js", "src/app.ts", "src/bin/cli.js",
                "bin/Debug/App.cs"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("export function f() { return 1; }\n")
    found = sorted(rel for rel, _, _ in walk(tmp_path, Ignore(tmp_path)))
    assert found == ["src/app.ts", "src/bin/cli.js"]    # bin/ is C#'s build output, not JS's


# ----------------------------------------------------------------------------- conformance
FIXTURES = ROOT / "tests" / "fixtures" / "languages"


def expected_chunks(lang):
    """tests/fixtures/languages/LANG/expected.txt: `file kind chain member first-last`, a line
    per chunk (chain "-" when there is none)."""
    return (FIXTURES / lang / "expected.txt").read_text().splitlines()


@pytest.mark.parametrize("lang", LANGUAGES, ids=lambda lang: lang.name)
def test_every_language_keeps_the_chunk_contract_on_its_fixture(lang):
    """One fixture per language, read through the language table as a build reads it,
    held to the one chunk contract (codebase_rag/chunkers/contract.py), each chunk where
    the fixture's expected.txt says."""
    files = sorted(p for p in (FIXTURES / lang.name).iterdir() if p.name != "expected.txt")
    assert files, f"no fixture in tests/fixtures/languages/{lang.name}/"
    got = []
    for path in files:
        text = path.read_text()
        chunks = chunk_source(path.name, text)
        assert contract.problems(text, chunks, lang) == []
        assert getattr(chunks, "parse_errors", 0) == 0, path.name
        got += [f"{path.name} {c.kind} {'.'.join(p for p in (c.namespace, c.cls) if p) or '-'} "
                f"{c.member} {c.start_line}-{c.end_line}" for c in chunks]
    assert got == expected_chunks(lang.name)


def test_every_language_has_a_fixture_and_every_fixture_a_language():
    assert {p.name for p in FIXTURES.iterdir()} == {lang.name for lang in LANGUAGES}


def test_a_dry_run_names_each_chunk_with_the_language_it_was_read_as(tmp_path):
    """`index.py --dry-run --json` on the fixtures: each chunk's language is its folder's,
    the two .h files too (one C, one C++), and the chunks are those of expected.txt, with
    one of the lines no chunk holds between them (chunkers.cover_rest)."""
    import json
    import shutil
    import subprocess
    import sys
    shutil.copytree(FIXTURES, tmp_path / "languages")
    out = subprocess.run([sys.executable, str(ROOT / "index.py"), "--source",
                          str(tmp_path / "languages"), "--dry-run", "--json"],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    records = [json.loads(line) for line in out.splitlines()]
    assert {r["file"].split("/")[0] for r in records} == {lang.name for lang in LANGUAGES}
    assert all(r["language"] == r["file"].split("/")[0] for r in records), \
        [(r["file"], r["language"]) for r in records if r["language"] != r["file"].split("/")[0]]
    for lang in LANGUAGES:
        got = [f"{r['file'].split('/')[1]} {r['kind']} "
               f"{'.'.join(p for p in (r['namespace'], r['class']) if p) or '-'} {r['member']} "
               f"{r['start_line']}-{r['end_line']}" for r in records
               if r["file"].startswith(f"{lang.name}/") and r["member"] != REST_MEMBER]
        assert got == expected_chunks(lang.name), lang.name
    rest = [r for r in records if r["member"] == REST_MEMBER]
    assert {r["file"].split("/")[0] for r in rest} == {lang.name for lang in LANGUAGES}


@pytest.mark.parametrize("lang", LANGUAGES, ids=lambda lang: lang.name)
def test_no_line_that_says_something_is_left_out_of_every_chunk(lang):
    """Every non-blank line of every fixture is in some chunk once the lines the chunker
    leaves (a module's imports, a class's docstring and fields) have chunks of their own,
    but a line with no word (a closing brace); those chunks keep the contract, name the
    container of the chunk after them, and leave the chunker's own as they were."""
    for path in sorted(p for p in (FIXTURES / lang.name).iterdir() if p.suffix != ".txt"):
        text = path.read_text()
        own = chunk_source(path.name, text)
        covered, place = cover_rest(text, own)
        assert [covered[i] for i in place] == list(own)
        assert [n for n, word in uncovered(text, covered) if word] == [], path.name
        assert [n for n, word in uncovered(text, own) if word], path.name   # it had some
        assert contract.problems(text, covered, lang) == []
        assert covered.language == own.language and covered.parsed is own.parsed
        for i, c in enumerate(covered):
            if c.member == REST_MEMBER:
                after = next((d for d in covered[i + 1:] if d.member != REST_MEMBER), None)
                assert (c.namespace, c.cls) == ((after.namespace, after.cls) if after else
                                                ("", ""))


def test_the_chunks_of_the_rest_leave_each_use_with_its_member():
    """A file's uses are read from its chunker's chunks: each one's member is the chunk it
    was, and a use outside every member stays the file's, whatever chunks cover_rest adds."""
    from codebase_rag.indexer import build_file, language_of
    from codebase_rag.uses import extract
    refs = ROOT / "tests" / "fixtures" / "refs"
    files = [p for p in sorted(refs.rglob("*")) if language_for(p.name) and p.is_file() and
             "__pycache__" not in p.parts]
    seen = 0
    for path in files:
        text, rel = path.read_text(), path.relative_to(refs).as_posix()
        own = chunk_source(rel, text)
        rows, _, _, uses, _ = build_file(rel, text, lambda ts: [len(t.split()) for t in ts], 512)
        assert [u.chunk is None for u in uses] == \
            [u.chunk is None for u in extract(text, own, language_of(rel, own))[0]]  # .h: C++
        for u in uses:
            if u.chunk is not None:
                row = rows[u.chunk][0]
                first = int(str(u.line).split(",")[0])
                assert row.member != REST_MEMBER and row.start_line <= first <= row.end_line
                seen += 1
    assert seen > 20 and any(row.member == REST_MEMBER for row, _ in rows)


def test_a_file_its_chunker_fails_on_is_indexed_as_plain_windows(monkeypatch, capsys):
    """A chunker that raises (but its size limit) costs the file its members, never the
    file: its plain windows hold every line, with one warning that names it."""
    from codebase_rag import indexer
    text = "".join(f"def f{i}():\n    return {i}\n\n" for i in range(100))

    def broken(rel, text):
        raise RecursionError("deep")
    monkeypatch.setattr(indexer, "chunk_source", broken)
    chunks = indexer.chunk_file("a.py", text)
    warned = capsys.readouterr().err.strip().splitlines()
    assert len(warned) == 1 and "a.py" in warned[0] and "plain windows" in warned[0]
    assert {(c.kind, c.member) for c in chunks} == {(PLAIN_KIND, PLAIN_MEMBER)}
    assert uncovered(text, chunks) == [] and cover_rest(text, chunks)[0] == chunks
