"""The JavaScript dev-set builder (bench/make_js_devset.py): a JSDoc's first sentence is the
query, markup read as text; JSDoc comes out of the corpus and line numbers follow.

The end-to-end test needs node, TypeScript (TS_ORACLE_TYPESCRIPT or .cache/node under the
project root) and the TypeScript eval kit (CODEBASE_RAG_TS_KIT, default /work/shared/eval/ts);
it is skipped without them."""
import importlib.util
import json
import os
import shutil
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("make_js_devset", ROOT / "bench" / "make_js_devset.py")
devset = importlib.util.module_from_spec(spec)
spec.loader.exec_module(devset)
KIT = Path(os.environ.get("CODEBASE_RAG_TS_KIT", devset.DEFAULT_KIT))


@pytest.mark.parametrize("jsdoc, query", [
    ("/**\n * Returns the merged options. Later ones win.\n * @param {A} a first\n */",
     "Returns the merged options."),
    ("/** Resolves the {@link Module} of a {@link Dependency|dependency}. */",
     "Resolves the Module of a dependency."),
    ("/**\n * Checks the `request` string\n * against every rule.\n *\n * More text.\n */",
     "Checks the request string against every rule."),
    ("/**\n * @param {string} name name\n * @returns {string} the name\n */", ""),
    ("/**\n * @summary Reads the lockfile from the cache folder.\n */",
     "Reads the lockfile from the cache folder."),
    ("/** " + "word " * 90 + "*/", ""),
])
def test_the_query_is_the_description_s_first_sentence(jsdoc, query):
    assert devset.summary(jsdoc) == query


def test_a_small_repository_gives_queries_in_the_kits_format(tmp_path):
    if shutil.which(os.environ.get("NODE", "node")) is None:
        pytest.skip("node is not on PATH: the TypeScript oracle cannot run")
    if not (KIT / "make_corpus_ts.py").is_file():
        pytest.skip(f"no TypeScript eval kit at {KIT} (set CODEBASE_RAG_TS_KIT)")
    if "TS_ORACLE_TYPESCRIPT" not in os.environ and not devset.LOCAL_TYPESCRIPT.is_dir():
        pytest.skip("no TypeScript for the oracle (TS_ORACLE_TYPESCRIPT or .cache/node)")
    repo = tmp_path / "repo"
    (repo / "lib").mkdir(parents=True)
    (repo / "test").mkdir()
    (repo / "lib" / "graph.js").write_text(textwrap.dedent('''\
        "use strict";

        /**
         * Finds the shortest path between two nodes of the graph.
         * @param {Graph} graph the graph
         * @returns {Node[]} the path
         */
        const shortestPath = (graph, from, to) => {
        \tconst seen = new Set([from]);
        \tconst queue = [from];
        \twhile (queue.length > 0) seen.add(queue.shift());
        \treturn [...seen];
        };

        class Walker {
        \t/**
        \t * Returns one, a constant value of no interest.
        \t */
        \tone() {
        \t\treturn 1;
        \t}
        }

        module.exports = { shortestPath, Walker };
        '''))
    (repo / "test" / "graph.test.js").write_text(    # tests are left out
        '/**\n * Checks the shortest path code path here.\n */\n'
        'const check = () => {\n\tconst a = 1;\n\tconst b = 2;\n\treturn a < b;\n};\n')
    out = tmp_path / "out"
    assert devset.main([str(repo), str(out), "--repo", "o/n", "--commit", "c0ffee",
                        "--kit", str(KIT)]) == 0
    rows = [json.loads(line) for line in (out / "dev-o__n.jsonl").read_text().splitlines()]
    assert rows == [{
        "id": "o__n#0001", "repo": "o/n", "commit": "c0ffee",
        "query": "Finds the shortest path between two nodes of the graph.",
        "file": "lib/graph.js", "class": "", "method": "shortestPath",
        "sig_line": 3, "start_line": 3, "end_line": 8, "body_lines": 4,
    }]
    corpus = out / "corpus"
    assert sorted(p.relative_to(corpus).as_posix() for p in corpus.rglob("*.js")) == ["lib/graph.js"]
    lines = (corpus / "lib" / "graph.js").read_text().splitlines()
    assert lines[2] == "const shortestPath = (graph, from, to) => {"
    assert lines[9:11] == ["class Walker {", "\tone() {"]
    files = json.loads((out / "dev-o__n.files.json").read_text())
    assert files == {"commit": "c0ffee", "methods_per_file": {"lib/graph.js": 2}}
