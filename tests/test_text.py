"""What the model reads for each chunk, written as snippet -> embedded texts.

Every text is a header (file | namespace.class | kind member (its words), then the doc
comment) followed by code. A member too long for MiniLM's 256 word pieces is cut into
several windows, each led by the same header, so that every line of it is read.
Token counts come from the packaged model's own tokenizer.
"""
import textwrap

import pytest

from codebase_rag.text import chunk_body, chunk_header, member_windows, windows
from codebase_rag.chunkers import csharp
from codebase_rag.config import HEADER_PARTS, MAX_TOKENS
from codebase_rag.export import packaged_model_dir


@pytest.fixture(scope="module")
def tokenizer():
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(str(packaged_model_dir() / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


@pytest.fixture(scope="module")
def count_tokens(tokenizer):
    return lambda texts: [len(e.ids) for e in tokenizer.encode_batch(texts, add_special_tokens=False)]


def embedded_texts(src, count_tokens, rel="Game/Energy.cs", parts=HEADER_PARTS):
    """The texts the indexer embeds for each chunk of src, as {member: [texts]}."""
    src = textwrap.dedent(src).lstrip("\n")
    lines = src.split("\n")
    return {c.member: member_windows(chunk_header(rel, c, parts), chunk_body(lines, c),
                                     c.signature, count_tokens)
            for c in csharp.chunk(src)}


def test_a_documented_method_reads_header_doc_attributes_and_code(count_tokens):
    texts = embedded_texts('''
        namespace Game
        {
            class EnergySystem
            {
                /// <summary>Gives back one point per elapsed timer.</summary>
                [Obsolete("use Tick")]
                public int RefillTimers(DateTime now)
                {
                    return 0;
                }
            }
        }
        ''', count_tokens)
    assert texts == {"RefillTimers": [
        "Game/Energy.cs | Game.EnergySystem | method RefillTimers (refill timers)\n"
        "Gives back one point per elapsed timer.\n"
        '        [Obsolete("use Tick")]\n'
        "        public int RefillTimers(DateTime now)\n"
        "        {\n"
        "            return 0;\n"
        "        }"]}


def test_a_member_of_six_lines_or_more_has_a_window_of_its_signature_too(count_tokens):
    texts = embedded_texts('''
        class EnergySystem
        {
            /// <summary>Gives back one point per elapsed timer.</summary>
            public int RefillTimers(DateTime now)
            {
                var due = timers.Due(now);
                Add(due.Count);
                return due.Count;
            }

            public int Max() { return 5; }
        }
        ''', count_tokens)
    assert texts["RefillTimers"][1] == (     # what it is, apart from how it is written
        "Game/Energy.cs | EnergySystem | method RefillTimers (refill timers)\n"
        "Gives back one point per elapsed timer.\n"
        "public int RefillTimers(DateTime now)")
    assert len(texts["Max"]) == 1            # its code window reads nearly as its signature


def test_header_parts_can_be_left_out(count_tokens):
    src = '''
        namespace Game { class Shop {
            /// <summary>Sells.</summary>
            void BuyItem() { }
        } }
        '''
    header = lambda parts: embedded_texts(src, count_tokens, parts=parts)["BuyItem"][0].split("\n    void")[0]
    assert header(["path", "owner", "name", "doc"]) == \
        "Game/Energy.cs | Game.Shop | method BuyItem (buy item)\nSells."
    assert header(["owner", "name"]) == "Game.Shop | method BuyItem (buy item)"
    assert header(["path", "doc"]) == "Game/Energy.cs\nSells."
    assert header([""]) == ""


def test_a_long_member_is_read_whole_in_windows_that_each_repeat_the_header(
        count_tokens, tokenizer):
    calls = "\n".join(f"        Step{i}(player, inventory, energy, clock);" for i in range(120))
    texts = embedded_texts(f'''
        class Loop
        {{
            void RunAllSteps()
            {{
        {calls}
            }}
        }}
        ''', count_tokens)["RunAllSteps"]
    header = "Game/Energy.cs | Loop | method RunAllSteps (run all steps)\n"
    assert len(texts) > 5
    assert all(t.startswith(header) for t in texts)
    assert all(len(tokenizer.encode(t).ids) <= MAX_TOKENS for t in texts)
    read = "\n".join(t[len(header):] for t in texts)
    assert all(f"Step{i}(" in read for i in range(120))
    assert read.count("(player,") == 120              # each line once, none repeated


def test_a_line_too_long_for_any_window_is_cut_not_dropped(count_tokens, tokenizer):
    words = " ".join(f"word{i}" for i in range(600))
    texts = embedded_texts(f'''
        class Text
        {{
            string Blurb() => "{words}";
        }}
        ''', count_tokens)["Blurb"]
    assert len(texts) > 2
    assert all(len(tokenizer.encode(t).ids) <= MAX_TOKENS for t in texts)
    pieces = "".join(t.split("\n", 1)[1] for t in texts).replace("\n", "")
    assert f'string Blurb() => "{words}";' in pieces


def test_a_long_doc_comment_is_shortened_so_code_still_fits(count_tokens, tokenizer):
    doc = " ".join(f"detail{i}" for i in range(300))
    texts = embedded_texts(f'''
        class Docs
        {{
            /// <summary>{doc}</summary>
            void Explain()
            {{
                Say();
            }}
        }}
        ''', count_tokens)["Explain"]
    assert len(texts) == 1
    assert texts[0].startswith("Game/Energy.cs | Docs | method Explain (explain)\ndetail0 detail1")
    assert texts[0].endswith("void Explain()\n    {\n        Say();\n    }")
    assert len(tokenizer.encode(texts[0]).ids) <= MAX_TOKENS


def test_a_nesting_too_deep_for_a_window_keeps_the_header_end_and_the_code(count_tokens,
                                                                          tokenizer):
    # 300 nested classes would make a header longer than the window: every window would be
    # the same header and no code; its end (the innermost class and the member) is kept
    texts = embedded_texts("".join(f"class C{i} {{\n" for i in range(300)) +
                           "void Inner() { Work(); }\n" + "}\n" * 300, count_tokens)["Inner"]
    assert len(texts) == 1
    header, code = texts[0].split("\n", 1)
    assert header.startswith("…") and header.endswith("C298.C299 | method Inner (inner)")
    assert code == "void Inner() { Work(); }"
    assert len(tokenizer.encode(texts[0]).ids) <= MAX_TOKENS


def test_an_oversized_file_without_members_is_split_the_same_way(count_tokens, tokenizer):
    values = ",\n".join(f"    Value{i} = {i}" for i in range(400))
    *texts, signature = embedded_texts(f"enum Big\n{{\n{values}\n}}\n", count_tokens)["Big"]
    assert signature == "Game/Energy.cs |  | enum Big (big)\nenum Big"
    assert len(texts) > 3
    assert all(t.startswith("Game/Energy.cs |  | enum Big (big)\n") for t in texts)   # no namespace
    assert all(len(tokenizer.encode(t).ids) <= MAX_TOKENS for t in texts)
    assert "Value399 = 399" in texts[-1]


def test_a_member_reads_the_first_sentence_of_its_types_doc_too(count_tokens):
    texts = embedded_texts('''
        /// <summary>Keeps each player's energy. Timers refill it.</summary>
        class EnergySystem
        {
            /// <summary>Spends some.</summary>
            void Spend(int n) { }
        }
        ''', count_tokens)
    assert texts["Spend"][0].split("\n")[:2] == [
        "Game/Energy.cs | EnergySystem | method Spend (spend)",
        "Spends some. (EnergySystem: Keeps each player's energy.)"]


# ----------------------------------------------------------------------------- keywords
def test_a_question_becomes_an_fts_query_of_its_content_words():
    from codebase_rag.text import fts_query
    assert fts_query("How does GetUserById work?") == '"user" OR "id" OR "work"'
    assert fts_query("how is it done?") == '"done"'
    assert fts_query("the of a") == ""                   # nothing to look up


def test_the_keyword_index_holds_names_split_and_whole():
    from codebase_rag.chunkers import csharp
    from codebase_rag.text import lexical_text
    src = "namespace Game { class EnergySystem { void RefillTimers() { var max_energy = 5; } } }"
    [c] = csharp.chunk(src)
    name, body = lexical_text("Energy/EnergySystem.cs", c, src)
    assert name.split() == ["Refill", "Timers", "Energy", "System", "Energy", "System",
                            "RefillTimers", "EnergySystem", "EnergySystem"]
    assert "Energy/EnergySystem.cs Game method" in body
    assert "max energy" in body and "max_energy" in body        # split, and whole


def test_code_without_a_signature_has_no_window_of_its_own(count_tokens):
    from codebase_rag.chunkers import python
    src = "import sys\nprint(sys.argv)\n\n\ndef main():\n" + "    step()\n" * 5
    lines = src.split("\n")
    texts = {c.member: member_windows(chunk_header("run.py", c), chunk_body(lines, c),
                                      c.signature, count_tokens) for c in python.chunk(src, ".py")}
    top_level = [t for member, t in texts.items() if member != "main"]
    assert [len(t) for t in top_level] == [1]           # module-level code: its code alone
    assert texts["main"][1] == "run.py |  | function main (main)\ndef main()"


def test_a_body_that_fits_by_its_characters_is_cut_as_counting_would_without_counting(
        count_tokens, tokenizer):
    """An ASCII word piece is at least one character, so a body of fewer characters than
    the room its header leaves is one window, whole, without asking the tokenizer: the
    window counting makes too (its lines' word pieces and newlines fit the room). Around
    the edge, ASCII or not, every window fits the model and the body is all there."""
    header = "Game/Energy.cs | Energy | method Refill (refill)"
    room = MAX_TOKENS - 2 - count_tokens([header])[0]
    asked = []

    def counting(texts):
        asked.extend(texts)
        return count_tokens(texts)
    for n in range(room - 3, room + 3):
        for filler in ("x", "é"):
            body = "\n".join(filler * 9 for _ in range(n // 10)).ljust(n, filler)[:n]
            asked.clear()
            got = windows(header, body, counting)
            assert all(len(tokenizer.encode(w).ids) <= MAX_TOKENS for w in got)
            assert "".join(w.split("\n", 1)[1] for w in got).replace("\n", "") == \
                body.replace("\n", "")
            if filler == "x" and n + 1 <= room:
                lines = body.split("\n")
                assert got == [header + "\n" + body] and body not in asked and \
                    not set(lines) & set(asked)
                assert sum(count_tokens(lines)) + len(lines) <= room
