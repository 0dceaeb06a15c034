"""Text: what the model reads for each chunk, and what the keyword index holds. The
indexer and the search must agree on all of it, so it lives in one place.

A chunk is embedded as a header (where it lives, what it is, its doc comment) followed by
its code. A long member is cut into several windows, each led by the same header, so
that no part of its body is silently truncated. One more window holds the header and the
signature alone: a question that says what a member is, as its doc comment would, lies
nearer that than any of its code (bench/RESULTS-quality.md).
"""
import hashlib
import re
from pathlib import Path

from .config import HEADER_PARTS, HEADER_TOKENS, MAX_TOKENS


SIGNATURE_LINES = 6           # a signature window for every member gains no more on any dev
                              # set, at 57-73% more windows (bench/RESULTS-quality.md)
TEXT_FORMAT = "3"             # bump when what the model reads for a chunk changes shape:
                              # every file is chunked again on the next run


def text_key(text):
    """The hash of a text: a file's identity, and (for fp32) an embedding's cache key."""
    return hashlib.sha1(text.encode()).hexdigest()


def cache_key(text, precision="fp32"):
    """Embedding-cache key: the same text at the same precision has the same vector."""
    return text_key(text if precision == "fp32" else f"{precision}\n{text}")


# Every pattern here reads file text, or a question: each costs time linear in its input
# (tests/test_linear.py), so a hostile file cannot stall a build or a search.
LOWER_UPPER = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")         # getUser: get|User
ACRONYM_WORD = re.compile(r"(?<=[A-Z])(?=[A-Z][a-z])")      # HTMLParser: HTML|Parser
SENTENCE_END = re.compile(r"(?<=[.!?])\s")
COMPOUND = re.compile(r"\b\w*(?:[a-z0-9][A-Z]|_)\w*\b")    # getUser, user_name
WORD = re.compile(r"\w+")


def split_identifiers(text):
    """'GetUserById user_name' -> 'Get User By Id user name'. A space goes at each place
    where a word starts inside an identifier (each place is decided by the characters
    around it alone: a run of 40,000 capitals costs as little as any text)."""
    text = LOWER_UPPER.sub(" ", text)
    text = ACRONYM_WORD.sub(" ", text)
    return text.replace("_", " ")


def chunk_header(rel, c, parts=HEADER_PARTS):
    """What the model reads before each window of a chunk's code: where it lives, what it
    is, and its doc comment, e.g. "src/Energy.cs | Game.EnergySystem | method RefillTimers
    (refill timers)"."""
    owner = ".".join(p for p in (c.namespace, c.cls) if p)
    fields = {"path": rel, "owner": owner,
              "name": f"{c.kind} {c.member}{f' ({c.wrapper})' if c.wrapper else ''} "
                      f"({split_identifiers(c.member).lower()})"}
    line = " | ".join(v for k, v in fields.items() if k in parts)
    docs = [c.doc if "doc" in parts else "",
            f"({c.cls}: {first_sentence(c.owner_doc)})" if "typedoc" in parts and c.owner_doc else ""]
    return "\n".join(x for x in (line, " ".join(d for d in docs if d)) if x)


def first_sentence(text):
    return SENTENCE_END.split(text, maxsplit=1)[0][:200]


def chunk_body(lines, c):
    """The chunk's code without its doc comment (the header has that), attributes kept."""
    first, last = c.doc_lines or (0, -1)
    return "\n".join(line for n, line in enumerate(lines[c.start_line - 1:c.end_line], c.start_line)
                     if not first <= n <= last)


def chunk_text(lines, c):
    return "\n".join(lines[c.start_line - 1:c.end_line])


def windows(header, body, count_tokens, max_tokens=MAX_TOKENS, head_tokens=None):
    """Cut header+body into texts that each fit the model (max_tokens word pieces, with
    [CLS] and [SEP]): the header, then as many whole lines of the body as fit (a line too
    long for any window is cut in pieces). head_tokens: the header's count, if known."""
    budget = max_tokens - 2
    if head_tokens is None:
        head_tokens = count_tokens([header])[0]
    first, _, doc = header.partition("\n")
    while head_tokens > HEADER_TOKENS and doc:      # a long doc comment: keep its start
        doc = doc[:int(len(doc) * HEADER_TOKENS / head_tokens) - 1].rstrip()
        header = "\n".join(x for x in (first, doc) if x)
        head_tokens = count_tokens([header])[0]
    while head_tokens > max_tokens // 2:
        # a path or a nesting too long for any window would leave no room for code, and
        # make every window the same text: keep its end, which names the member
        first = "…" + first[-int(len(first) * max_tokens / 2 / head_tokens) + 2:]
        header = first
        head_tokens = count_tokens([header])[0]
    room = max(budget - head_tokens, budget // 4)  # a line longer than this is cut in pieces
    if body.isascii() and len(body) + 1 <= room:
        # the window the counting below would make, without counting: an ASCII word piece
        # is at least one character, so a body of fewer characters than room fits whole
        return [header + "\n" + body]
    body_lines = body.split("\n")
    sizes = count_tokens(body_lines)
    for i in reversed([i for i, size in enumerate(sizes) if size >= room]):
        step = -(-len(body_lines[i]) * room // (sizes[i] * 5 // 4 + 1))    # ~80% of room
        pieces = [body_lines[i][j:j + step] for j in range(0, len(body_lines[i]), step)]
        body_lines[i:i + 1], sizes[i:i + 1] = pieces, count_tokens(pieces)
    out, current, used = [], [], 0
    for line, size in zip(body_lines, sizes):
        size += 1                         # the newline
        if current and used + size > room:
            out.append(current)
            current, used = [], 0
        current.append(line)
        used += size
    if current or not out:
        out.append(current)
    return [header + "\n" + "\n".join(w) for w in out]


def member_windows(header, body, signature, count_tokens, max_tokens=MAX_TOKENS):
    """Every window of a member: its code's, then, for a member of SIGNATURE_LINES lines of
    code or more, the one of its header and signature (a shorter member's code window
    already reads nearly as that; code without a signature, such as top-level statements,
    has none)."""
    head_tokens = count_tokens([header])[0]
    texts = windows(header, body, count_tokens, max_tokens, head_tokens)
    if signature and body.count("\n") + 1 >= SIGNATURE_LINES:
        texts.append(windows(header, signature, count_tokens, max_tokens, head_tokens)[0])
    return texts


# -- the keyword index
STOPWORDS = frozenset("""a an the and or of to in on for from by with at as is are was were be
been it its this that these those what which who whom how why when where does do did can could
should would will shall may might there their them they we you your i me my our us not no get
set""".split())


def lexical_text(rel, c, text):
    """What FTS5 indexes, as (name, body): the member's own words (its name, its class
    chain, its file's name), weighted higher at query time, and everything else. Compound
    identifiers appear split and whole."""
    name = f"{c.member} {c.cls} {Path(rel).stem}"
    compounds = " ".join(dict.fromkeys(COMPOUND.findall(text)))
    return (f"{split_identifiers(name)} {name}",
            f"{rel} {c.namespace} {c.kind}\n{split_identifiers(text)}\n{compounds}")


def fts_words(question):
    """The question's words that count as keywords, each once, in order."""
    words = WORD.findall(split_identifiers(question).lower())
    return [w for w in dict.fromkeys(words) if w not in STOPWORDS and len(w) > 1]


# A question ("how does X decide Y?", "where is X done?") says what code does in its own
# words, which the code's keywords match less, so it leans more on meaning: it gains on
# both natural-language dev sets with the tuned model (with the stock model: even on one,
# one question less on the other), the summary sets untouched (bench/RESULTS-quality.md).
ASKS_A_QUESTION = re.compile(r"\?\s*$|^\s*(how|where|which|what|why)\b", re.I)
# How a search reads, which sets how it is ranked; the caller may say (query.py --as,
# search_code's read_as), and the answer says which it was (JSON read_as, the MCP notes).
SHAPES = {"keywords": "keywords or a name", "question": "a question",
          "doc": "a doc-comment sentence"}


def query_shape(question):
    """'question' (a final '?', or an opening how, where, which, what or why), else
    'keywords'. Never 'doc' by itself: a trailing '.' changes nothing unless the caller
    asks for that reading (lifting the named members for every statement cost both
    natural-language dev sets 1-2 questions at R@1; bench/RESULTS-quality.md)."""
    return "question" if ASKS_A_QUESTION.search(question) else "keywords"


def fts_query(question):
    return " OR ".join(f'"{w}"' for w in fts_words(question))
