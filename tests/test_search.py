"""Search rules, checked without the model: a stand-in embedder (tests/conftest.py) over a
real index (SQLite and Chroma) of a tiny tree."""
import io
import threading

import pytest

from codebase_rag import keywords
from codebase_rag.config import NAME_SAID
from codebase_rag.keywords import Fts5Keywords, MemoryKeywords
from codebase_rag.build_runs import index_tree
from codebase_rag.nearest import CacheScan, ChromaNearest, MemoryNearest
from codebase_rag.render import print_results
from codebase_rag.search import fuse, rescore, search, vector_share
from codebase_rag.text import query_shape
from codebase_rag.store import IndexedChunk, Store

FILES = {
    "Energy/EnergySystem.cs": """
namespace Game;
public class EnergySystem
{
    public void RefillTimers()
    {
        var energy = timers.Count;
        Save(energy);
    }

    public void SpendEnergy(int amount)
    {
        energy -= amount;
        Save(energy);
    }
}
""",
    "Energy/EnergyLimits.cs": """
namespace Game;
public class EnergyLimits
{
    public int MaxEnergy => 5;

    public int ComputeMaxEnergy(int level)
    {
        var bonus = level / 10;
        return 5 + bonus;
    }
}
""",
    "Energy.Tests/EnergySystemTests.cs": """
namespace Game.Tests;
public class EnergySystemTests
{
    public void RefillTheEnergyTimers()
    {
        var energy = new EnergySystem();
        energy.RefillTimers();
    }
}
""",
    "Inventory/Inventory.cs": """
namespace Game;
public class Inventory
{
    public void AddItem(Item item)
    {
        items.Add(item);
        Changed();
    }

    public void RemoveItem(Item item)
    {
        items.Remove(item);
        Changed();
    }
}
""",
    "Auth/PasswordHasher.cs": """
namespace Game;
public class PasswordHasher
{
    public string Hash(string password)
    {
        var salt = NewSalt();
        return Pbkdf2(password, salt);
    }
}
""",
}


@pytest.fixture
def store(tmp_path, word_embedder):
    src = tmp_path / "src"
    for rel, text in FILES.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    index_tree(str(src), str(tmp_path / "db"), progress=False, embedder=word_embedder)
    return Store(tmp_path / "db")


def ask(store, embedder, question, **kw):
    return search(store, question, embedder([question])[0], ChromaNearest(store), **kw)


def names(results):
    return [r.chunk.member for r in results]


def test_fusion_keeps_the_margins_of_both_scores():
    # b is better than c on both halves; a is much nearer in meaning than both, and a fusion
    # of ranks would put b first (ranks a b c and b c a)
    cosines, bm25 = {"a": 0.9, "b": 0.5, "c": 0.45}, {"b": 10.0, "c": 9.0, "a": 6.0}
    scores = fuse(cosines, bm25, share=0.55)
    assert sorted(scores, key=lambda c: -scores[c]) == ["a", "b", "c"]
    # each half alone ranks as its own score does
    by_meaning, by_keywords = fuse(cosines, bm25, share=1.0), fuse(cosines, bm25, share=0.0)
    assert sorted(by_meaning, key=lambda c: -by_meaning[c]) == ["a", "b", "c"]
    assert sorted(by_keywords, key=lambda c: -by_keywords[c]) == ["b", "c", "a"]


def test_a_member_with_no_vector_counts_as_near_as_its_keywords_are_good():
    scores = fuse({"a": 0.8, "b": 0.4}, {"new": 10.0, "b": 1.0}, share=0.55)
    assert scores["new"] == 1.0                        # the best keywords, and no vector yet
    assert sorted(scores, key=lambda c: -scores[c])[0] == "new"


def test_a_question_leans_more_on_meaning_than_a_statement_of_the_same_words():
    # a is nearer in meaning, b has the better keywords, by margins that the two shares of
    # meaning (a statement's, a question's) weigh differently
    cosines, bm25 = {"a": 0.5, "b": 0.4}, {"a": 7.3, "b": 10.0}

    def first(question):
        scores = fuse(cosines, bm25, vector_share(query_shape(question)))
        return max(scores, key=scores.get)
    assert first("Refills the energy timers.") == "b"          # a statement
    assert first("refill energy timers") == "b"                # a few keywords
    assert first("When are the energy timers refilled?") == "a"
    assert first("where are the energy timers refilled") == "a"
    assert first("How does the system decide when to refill") == "a"


def test_a_sentence_that_says_a_members_name_in_words_lifts_that_member():
    # a doc comment mostly says its member's name in words, and so does a sentence written
    # as one; a question or a few keywords name members less reliably
    def member(name, cid):
        return IndexedChunk(cid, "Energy/EnergySystem.cs", "csharp", "Game", "EnergySystem",
                            name, "method", 10, 20, "", "")
    rows = {"refill": member("RefillTimers", "refill"), "spend": member("SpendEnergy", "spend")}

    def first(question, shape):
        scores = rescore({"refill": 0.5, "spend": 0.55}, rows, question, shape)
        return max(scores, key=scores.get)
    assert first("Refills the timers", "doc") == "refill"       # says both of its words
    assert first("Refills the timers", "keywords") == "spend"
    assert first("Where are the timers refilled?", "question") == "spend"
    # in proportion: one word of two is half the lift, whichever the name
    scores = rescore({"refill": 0.5, "spend": 0.55}, rows, "Refills the energy.", "doc")
    assert scores == pytest.approx({"refill": 0.5 + NAME_SAID / 2, "spend": 0.55 + NAME_SAID / 2})


def test_the_caller_says_how_a_search_reads_and_a_period_alone_then_changes_nothing():
    """query_shape reads a question as one and anything else as keywords, never as a doc
    comment (the caller may say so); "Refills the timers" and "Refills the timers." score
    alike in every shape."""
    assert [query_shape(q) for q in ("Refills the timers.", "refill timers",
                                     "where are timers refilled", "Refills the timers?")] == \
        ["keywords", "keywords", "question", "question"]
    rows = {"refill": IndexedChunk("refill", "Energy/EnergySystem.cs", "csharp", "Game",
                                   "EnergySystem", "RefillTimers", "method", 10, 20, "", "")}
    for shape, lift in (("keywords", 0.0), ("question", 0.0), ("doc", NAME_SAID)):
        scores = [rescore({"refill": 0.5}, rows, q, shape)["refill"]
                  for q in ("Refills the timers", "Refills the timers.")]
        assert scores == pytest.approx([0.5 + lift] * 2)


def test_both_rankings_feed_the_answer(store, word_embedder):
    assert names(ask(store, word_embedder, "refill the energy timers", k=1)) == ["RefillTimers"]
    assert names(ask(store, word_embedder, "password hash", k=1)) == ["Hash"]


def test_modes_use_one_ranking_each(store, word_embedder):
    lexical = ask(store, word_embedder, "pbkdf2", mode="lexical", k=5)
    assert names(lexical) == ["Hash"]                     # the only chunk with that word
    vector = ask(store, word_embedder, "zebra", mode="vector", k=5)
    assert len(vector) == 5                               # every chunk has some distance


def test_test_code_yields_to_production_code_unless_tests_are_asked_for(store, word_embedder):
    def top(question):
        return ask(store, word_embedder, question, k=1)[0].chunk.member
    assert top("refill the energy timers") == "RefillTimers"       # the test matches better
    assert top("the test to refill the energy timers") == "RefillTheEnergyTimers"


def test_a_member_of_a_few_lines_yields_to_a_longer_one_that_fits_as_well(store,
                                                                           word_embedder):
    # short texts sit near many questions, in BM25 and in embedding space alike
    assert names(ask(store, word_embedder, "max energy", k=1)) == ["ComputeMaxEnergy"]


def test_k_path_filter_and_no_overlaps(store, word_embedder):
    results = ask(store, word_embedder, "item", k=3, path_glob="Inventory/*")
    # only two members live there; the class's header (a chunk of lines: cover_rest) has
    # no vector, and no word of the question
    assert sorted(names(results)) == ["AddItem", "RemoveItem"]
    assert {r.chunk.file for r in results} == {"Inventory/Inventory.cs"}
    spans = [(r.chunk.file, r.chunk.start_line, r.chunk.end_line) for r in
             ask(store, word_embedder, "energy item password", k=10)]
    assert len(spans) == len(set(spans)) == 10      # k of 13: 8 members and 5 classes' headers


def test_a_path_names_a_folder_or_a_file_anywhere_as_exclude_does(store, word_embedder):
    """`--path Inventory` and `--path Inventory.cs` select as `--exclude` would (a name at
    any depth); a glob as before; part of a name selects nothing."""
    def files(glob):
        return {r.chunk.file for r in ask(store, word_embedder, "item energy", k=20,
                                          path_glob=glob)}
    inventory = files("Inventory/*")
    assert inventory and all(f.startswith("Inventory/") for f in inventory)
    assert files("Inventory") == inventory
    assert files("Inventory.cs") == {"Inventory/Inventory.cs"}
    assert files("*.cs") == files(None) and len(files(None)) > len(inventory)
    assert files("Invent") == set()


def test_results_carry_a_distance_and_a_confidence_flag(store, word_embedder):
    [hit] = ask(store, word_embedder, "spend energy amount", k=1)
    assert hit.chunk.member == "SpendEnergy"
    assert 0 <= hit.distance < 0.62 and hit.confident
    [far] = ask(store, word_embedder, "pbkdf2", mode="lexical", k=1)
    assert far.distance > 0.62 and not far.confident  # found by keyword, far in meaning


def test_a_member_with_no_vector_yet_has_no_distance_rather_than_a_far_one(store,
                                                                         word_embedder):
    """Just written and not embedded yet, a member ranks by its keywords, and its distance
    is not known: it must not read as "no confident match" (an agent would rephrase)."""
    store.vectors.forget_vectors([k for (k,) in store.db.execute(
        "SELECT w.key FROM windows w JOIN chunks c ON c.id = w.chunk WHERE c.member='Hash'")])
    [hit] = ask(store, word_embedder, "pbkdf2 password hash", k=1)
    assert hit.chunk.member == "Hash" and hit.distance is None and not hit.confident


def test_the_embedding_cache_scan_gives_chromas_answers(store, word_embedder):
    """What a reader uses while a writer holds the lock, or when the index is read-only."""
    for question in ("refill the energy timers", "password hash", "add an item"):
        qvec = word_embedder([question])[0]
        via_chroma = search(store, question, qvec, ChromaNearest(store), k=5)
        via_cache = search(store, question, qvec, CacheScan(store), k=5)
        def near(hits):                   # members sharing no word tie at 1.0, in any order
            return [(h.chunk.id, h.distance) for h in hits if h.distance is not None
                    and h.distance < 0.99]
        assert [c for c, _ in near(via_cache)] == [c for c, _ in near(via_chroma)]
        assert [d for _, d in near(via_cache)] == pytest.approx(
            [d for _, d in near(via_chroma)], abs=1e-4)


@pytest.mark.parametrize("dead_kept", [1000, 0], ids=["rows-marked-dead", "rows-dropped"])
def test_vectors_kept_in_memory_follow_every_write(store, word_embedder, tmp_path, monkeypatch,
                                                   dead_kept):
    """What the MCP server searches: it loads every vector once, then keeps up with new,
    changed and deleted files written by other processes, and gives the cache scan's
    answers at every point."""
    from codebase_rag import nearest
    monkeypatch.setattr(nearest, "DEAD_KEPT", dead_kept)
    monkeypatch.setattr(nearest, "DEAD_SHARE", 0.25 if dead_kept else 0.0)
    memory = MemoryNearest(Store(tmp_path / "db"))        # a reader of its own, long-lived

    def agrees(question):
        qvec = word_embedder([question])[0]
        got, want = memory.nearest(qvec, 10), CacheScan(store).nearest(qvec, 10)
        assert [c for c, d in got if d < 0.99] == [c for c, d in want if d < 0.99]
    agrees("refill the energy timers")
    src = tmp_path / "src"
    (src / "Auth" / "PasswordHasher.cs").unlink()
    (src / "Energy" / "Timers.cs").write_text(
        "namespace Game;\npublic class Timers\n{\n    public void RefillEveryTimer()\n"
        "    {\n        foreach (var t in timers) t.Refill();\n    }\n}\n")
    index_tree(str(src), str(tmp_path / "db"), progress=False, embedder=word_embedder)
    agrees("refill the energy timers")
    agrees("password hash")
    assert "Auth/PasswordHasher.cs#0" not in dict(memory.nearest(
        word_embedder(["password hash"])[0], 10))
    assert memory.dead[:memory.used].any() == bool(dead_kept)     # dropped, or marked


@pytest.mark.parametrize("reread", [0.0, 100.0], ids=["read-again", "rows-added"])
def test_keyword_postings_kept_in_memory_score_as_fts5_does_after_every_write(
        store, word_embedder, tmp_path, monkeypatch, reread):
    """What the MCP server ranks keywords with: FTS5's own tokens and bm25() formula, so the
    same members with the same scores, bit for bit, while other processes write: a file
    changed, one added, deleted and written again (its rows' ids are not used twice).
    After a write it reads every posting again, or only the new rows."""
    monkeypatch.setattr(keywords, "REREAD", reread)
    memory = MemoryKeywords(Store(tmp_path / "db"))
    questions = ("refill the energy timers", "password hash salt", "add or remove an item",
                 "energy", "max energy level bonus", "EnergySystem tests", "nothing like it")

    def agrees():
        for question in questions:
            assert memory.best(question, 100) == Fts5Keywords(store).best(question, 100)
    agrees()
    assert list(memory.best("refill energy timers", 2)) == \
        list(Fts5Keywords(store).best("refill energy timers", 2))
    src = tmp_path / "src"
    timers = src / "Energy" / "Timers.cs"
    for change in (
            lambda: (src / "Inventory" / "Inventory.cs").write_text(FILES[
                "Inventory/Inventory.cs"].replace("Changed();", "Changed(energy, item);")),
            lambda: timers.write_text("class Timers { void Refill() { energy++; } }"),
            lambda: timers.unlink(),       # the highest rows go, and then come back
            lambda: timers.write_text("class Timers { void Salt() { hash(salt); } }")):
        change()
        index_tree(str(src), str(tmp_path / "db"), progress=False, embedder=word_embedder)
        agrees()
    assert "Energy/Timers.cs#0" in memory.best("salt", 10)


def test_lines_no_member_holds_never_outrank_a_member_as_good_by_their_keywords(
        tmp_path, word_embedder):
    """A <rest> chunk never gets a vector: its meaning counts nothing, where a member still
    waiting for its vector counts as near as its keywords are good. Fields and comments
    full of the question's words then rank below the member that does it, and first when
    the question is keywords alone."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "Shop.cs").write_text(
        "namespace Game;\npublic class Shop\n{\n"
        "    // the discount rate: a discount rate of the shop, its discount and rate\n"
        "    private float discountRate, rate, discount;\n\n"
        "    public float Reduce(float amount)\n    {\n"
        "        return amount - amount * rate;\n    }\n}\n")
    for i, word in enumerate(["player", "energy", "timer", "inventory", "weapon", "level"]):
        (src / f"F{i}.cs").write_text(f"class F{i}\n{{\n    void Run{word}() {{ {word}.Go(); }}\n}}\n")
    index_tree(str(src), str(tmp_path / "db"), progress=False, embedder=word_embedder)
    store = Store(tmp_path / "db")
    # the fields' lines have the best keywords; the member is the one near in meaning
    assert list(Fts5Keywords(store).best("the discount rate", 1)) == ["Shop.cs#0"]
    assert names(ask(store, word_embedder, "the discount rate", k=2)) == ["Reduce", "<rest>"]
    assert names(ask(store, word_embedder, "the discount rate", k=2,
                     mode="lexical")) == ["<rest>", "Reduce"]


def test_a_long_lived_reader_answers_by_fts5_while_it_reads_the_postings_apart(
        store, tmp_path, monkeypatch):
    """The MCP server's first search never waits for every posting to be read (a minute at
    131,000 windows): FTS5 answers, with the same scores, until a thread has read them;
    then the postings in memory do, and keep up with writes as before."""
    slow, go_on = keywords.read_all, threading.Event()

    def read_when_told(db):
        go_on.wait(60)                  # the read is held until the first answer is in
        return slow(db)
    monkeypatch.setattr(keywords, "read_all", read_when_told)
    memory = MemoryKeywords(Store(tmp_path / "db"), background=True)
    question = "refill the energy timers"
    assert memory.best(question, 100) == Fts5Keywords(store).best(question, 100)
    assert memory.loading and not memory.read           # answered while it reads
    go_on.set()
    memory.loading[0].join()
    assert memory.best(question, 100) == Fts5Keywords(store).best(question, 100)
    assert memory.loading is None and memory.read > 0     # the postings in memory answered


def test_the_no_confident_line_names_the_nearest_distance_and_reads_true():
    """Hits are ranked by meaning and keywords together, so the first is not always the
    nearest: the line speaks of the nearest, and only when none is confident."""
    import io
    from codebase_rag.render import print_results
    from codebase_rag.search import Hit

    def chunk(name):
        return IndexedChunk(f"A.cs#{name}", "A.cs", "csharp", "", "A", name, "method", 1, 1,
                            "", "x")

    def printed(*distances):
        out = io.StringIO()
        print_results([Hit(chunk(f"M{i}"), d, d is not None and d <= 0.62)
                       for i, d in enumerate(distances)], 0, out)
        return out.getvalue().splitlines()
    assert not any("no confident" in line for line in printed(0.6249, 0.5123))
    # the first has no vector yet (found by its keywords): it may be the answer
    assert not any("no confident" in line for line in printed(None, 0.7001))
    first, *hits = printed(0.7001, 0.6249)
    assert first == ("no confident match: the nearest in meaning is at cosine distance "
                     "0.6249, above 0.62; best guesses:")
    assert hits[0].endswith("| A.M0 | cosine dist: 0.7001")


DEMOS = {
    "graphs/paths.py": '''
def shortest_path(graph, source, target):
    """Breadth first from source; the list of nodes to target."""
    seen = {source: None}
    queue = [source]
    while queue:
        node = queue.pop(0)
        for nxt in graph[node]:
            if nxt not in seen:
                seen[nxt] = node
                queue.append(nxt)
    return walk_back(seen, target)


if __name__ == "__main__":
    graph = {"a": ["b"], "b": ["c"], "c": []}
    path = shortest_path(graph, "a", "c")
    print("shortest path from a to c in the graph:", path)
''',
    "examples/shortest_path_demo.py": '''
def shortest_path_demo():
    graph = {"a": ["b"], "b": ["c"], "c": []}
    path = shortest_path(graph, "a", "c")
    print("shortest path from a to c in the graph:", path)
    return path
''',
}


@pytest.mark.parametrize("demo_weight", [0.5, 1.0])
def test_examples_and_a_scripts_main_block_yield_to_the_library(tmp_path, word_embedder,
                                                                  monkeypatch, demo_weight):
    """The demo and the main block say "shortest path graph" more often than the function
    that computes it; weighed as test code is, they come after it, unless the question asks
    for an example."""
    from codebase_rag import search as search_module
    monkeypatch.setattr(search_module, "DEMO_WEIGHT", demo_weight)
    src = tmp_path / "src"
    for rel, text in DEMOS.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    index_tree(str(src), str(tmp_path / "db"), progress=False, embedder=word_embedder)
    store = Store(tmp_path / "db")
    ranked = [(r.chunk.file, r.chunk.member) for r in
              ask(store, word_embedder, "shortest path from a to c in the graph", k=3)]
    library = ("graphs/paths.py", "shortest_path")
    assert (ranked[0] == library) == (demo_weight < 1), ranked
    example = ask(store, word_embedder, "an example of the shortest path in a graph", k=1)
    assert example[0].chunk.file != library[0] or example[0].chunk.member == "<module>"


RUST_WITH_TESTS = '''
/// Parses the width of a column from its header text.
pub fn parse_column_width(header: &str) -> usize {
    header.trim().len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_column_width_of_header_text_parses_the_column_width() {
        let width = parse_column_width(" header text ");
        assert_eq!(width, 11, "parse column width of header text");
    }
}
'''


def test_rusts_test_module_in_a_file_yields_to_the_code_it_tests(tmp_path, word_embedder):
    """`#[cfg(test)] mod tests` inside a source file is test code (the Rust row's
    test_namespace): its test says the question's words more often than the function it
    tests, and still comes after it, unless the question asks about tests."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "columns.rs").write_text(RUST_WITH_TESTS)
    index_tree(str(src), str(tmp_path / "db"), progress=False, embedder=word_embedder)
    store = Store(tmp_path / "db")
    ranked = [r.chunk.member for r in
              ask(store, word_embedder, "parse column width of header text", k=2)]
    assert ranked[0] == "parse_column_width", ranked
    asked = ask(store, word_embedder, "the test of parse column width of header text", k=1)
    assert asked[0].chunk.member.endswith("parses_the_column_width")


def test_a_cpp_header_is_found_as_cpp_and_a_c_header_as_c(tmp_path, word_embedder):
    """A .h file is chunked as C++ when its tree is C++: its members are C++ to a search
    that asks for one language (--lang, the MCP tools' lang), not C."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "pool.h").write_text("class Pool {\n public:\n  void Clear() {\n    used = 0;\n"
                                "  }\n};\n")
    (src / "list.h").write_text("struct list { int used; };\n\nvoid list_clear(struct list *l) {\n"
                                "    l->used = 0;\n}\n")
    index_tree(str(src), str(tmp_path / "db"), progress=False, embedder=word_embedder)
    store = Store(tmp_path / "db")
    found = {lang: {(r.chunk.file, r.chunk.member) for r in
                    ask(store, word_embedder, "clear the used count", k=5, language=lang)}
             for lang in ("c", "cpp")}
    assert ("pool.h", "Clear") in found["cpp"] and ("list.h", "list_clear") in found["c"]
    assert not any(f == "pool.h" for f, _ in found["c"])
    assert not any(f == "list.h" for f, _ in found["cpp"])
    # and so is it counted in the summary of --status, a build's last line and SessionStart
    assert sorted(store.languages().split(", ")) == ["c 1", "cpp 1"]


def test_lines_no_member_holds_are_found_by_their_keywords_and_have_no_vector(store,
                                                                            word_embedder):
    """A class's header and fields (a <rest> chunk: cover_rest) are keywords only: no
    window to embed, no distance, and not a member waiting for its vector."""
    assert store.db.execute("SELECT COUNT(*) FROM windows w JOIN chunks c ON c.id = w.chunk "
                            "WHERE c.member = '<rest>'").fetchone()[0] == 0
    hits = ask(store, word_embedder, "public class Inventory", k=5, mode="lexical")
    [header] = [h for h in hits if h.chunk.member == "<rest>" and h.chunk.cls == "Inventory"]
    assert header.distance is None and not header.pending and not header.confident
    out = io.StringIO()
    print_results([header], 0, out)
    assert "keywords only" in out.getvalue() and "no vector yet" not in out.getvalue()
