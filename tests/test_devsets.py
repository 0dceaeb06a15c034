"""The dev-set tooling of bench/: make_devset.py builds a doc-summary set with the compiler's
parser, and dev_evals.py finds every set by its name (a language of the table and a
repository)."""
import importlib.util
import json
import shutil
import textwrap
from argparse import Namespace
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load(name, rel):
    spec = importlib.util.spec_from_file_location(name, ROOT / rel)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_devset = load("make_devset", "bench/make_devset.py")
dev_evals = load("dev_evals", "bench/dev_evals.py")

GO = textwrap.dedent('''\
    package shop

    // Total adds up the prices of every item in the basket and returns the sum.
    func Total(prices []int) int {
    \tsum := 0
    \tfor _, p := range prices {
    \t\tsum += p
    \t}
    \treturn sum
    }

    // Basket holds the prices of the items a customer picked.
    type Basket struct{ prices []int }

    // Cheapest finds the lowest price among the items in the basket today.
    func (b *Basket) Cheapest() int {
    \tlow := b.prices[0]
    \tfor _, p := range b.prices {
    \t\tif p < low {
    \t\t\tlow = p
    \t\t}
    \t}
    \treturn low
    }
    ''')


@pytest.fixture
def go_tree(tmp_path):
    tree = tmp_path / "shop"
    tree.mkdir()
    (tree / "shop.go").write_text(GO)
    (tree / ".commit").write_text("0" * 40 + "\n")
    return tree


def test_a_go_summary_set_is_built_from_the_doc_comments(go_tree, tmp_path):
    if not shutil.which("go"):
        pytest.skip("go is missing, so the Go oracle cannot run: apt-get install golang-go")
    out = tmp_path / "go-shop"
    assert make_devset.main(["--lang", "go", str(go_tree), str(out), "--repo", "me/shop"]) == 0
    rows = [json.loads(line) for line in (out / "dev-me__shop.jsonl").read_text().splitlines()]
    corpus = (out / "corpus" / "shop.go").read_text().split("\n")
    assert sorted((r["method"], r["query"]) for r in rows) == [
        ("Cheapest", "Cheapest finds the lowest price among the items in the basket today."),
        ("Total", "Total adds up the prices of every item in the basket and returns the sum.")]
    for r in rows:                      # the corpus lost the comments; the lines point into it
        assert corpus[r["start_line"] - 1].startswith("func ")
        assert r["method"] in corpus[r["start_line"] - 1] and corpus[r["end_line"] - 1] == "}"
    assert not any(line.startswith("//") for line in corpus)


def sets_of(tmp_path, nl_files=(), summary_folders=()):
    nl_dir, devsets = tmp_path / "nl", tmp_path / "devsets"
    nl_dir.mkdir()
    devsets.mkdir()
    for name in nl_files:
        (nl_dir / name).write_text("")
    for name in summary_folders:
        (devsets / name).mkdir()
        (devsets / name / "dev-x__y.jsonl").write_text("")
    args = Namespace(py_dir=str(tmp_path / "py"), osu_corpus="o", osu_tree="o",
                     typeorm_stripped="t", typeorm_nl="t", devsets=str(devsets),
                     nl_dir=str(nl_dir), repos=str(tmp_path / "repos"))
    return dev_evals.sets(args)


def test_sets_are_found_by_their_names_in_every_language(tmp_path):
    found = sets_of(tmp_path, ["nl-go-caddy.jsonl", "nl-python-networkx.jsonl",
                               "nl-js-mocha.jsonl", "nl-cpp-rapidjson.jsonl"],
                    ["rust-ripgrep", "javascript-undici", "c-redis.part"])
    assert {"go-nl", "py-nl", "js-nl", "cpp-nl", "rust-sum", "js-sum"} <= set(found)
    assert "c-sum" not in found                       # a folder still being made
    data, corpus, ext = found["go-nl"]
    assert (data.name, corpus, ext) == ("nl-go-caddy.jsonl", tmp_path / "repos" / "caddy", ".go")
    assert found["cpp-nl"][2] == ".cpp,.cc,.cxx,.hpp,.hh,.hxx,.h"   # a .h may hold C++
    assert found["js-sum"][1] == tmp_path / "devsets" / "javascript-undici" / "corpus"
    assert {dev_evals.short(lang) for lang in dev_evals.LANGUAGES} == {
        "cs", "ts", "js", "py", "go", "java", "rust", "c", "cpp"}


@pytest.mark.parametrize("files", [["nl-go-caddy.jsonl", "nl-go-chi.jsonl"],
                                   ["nl-ts-typeorm.jsonl"], ["nl-cobol-payroll.jsonl"]])
def test_two_sets_of_one_name_or_an_unknown_language_stop_the_run(tmp_path, files):
    with pytest.raises(SystemExit):
        sets_of(tmp_path, files)
