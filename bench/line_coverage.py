#!/usr/bin/env python3
"""Which non-blank lines of a tree no chunk holds: every file the build reads (walk.py's
rules), chunked as a build chunks it (indexer.chunk_file), each non-blank line checked
against the chunks' line ranges.

    python bench/line_coverage.py TREE [--chunkers] [--show 20] [--json]

Prints a line per language: files, non-blank lines, lines outside every chunk (those with a
word, and those with none: a closing brace, a lone `)`), the lines with no word by their
text (`}` 310, `};` 12, ...), then the first --show such lines with a word, as
`file:line: text`. --chunkers: the languages' chunkers alone, before the
indexer gives each run of lines no chunk holds a chunk of its own (chunkers.cover_rest):
what that adds. Run it with the checkout on PYTHONPATH (PYTHONPATH=. python bench/...).
"""
import argparse
import json
from collections import Counter
from pathlib import Path

from codebase_rag.chunkers import cover_rest, uncovered
from codebase_rag.indexer import chunk_file, language_of
from codebase_rag.walk import Ignore, read_source, walk


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tree")
    ap.add_argument("--chunkers", action="store_true",
                    help="the chunkers alone, without the chunks of the lines they leave")
    ap.add_argument("--show", type=int, default=20, help="lines with a word to print")
    ap.add_argument("--json", action="store_true", help="one JSON object instead")
    args = ap.parse_args()
    root = Path(args.tree).resolve()
    totals = {}
    shown = []
    no_word = Counter()                    # the text of each line outside with no word
    for rel, path, _ in walk(root, Ignore(root)):
        text = read_source(path, rel)
        if text is None:
            continue
        chunks = chunk_file(rel, text)     # a failing chunker: plain windows, as a build
        if chunks is None:                 # beyond any chunker: skipped, as a build skips it
            continue
        if not args.chunkers:
            chunks = cover_rest(text, chunks)[0]
        lang = language_of(rel, chunks)
        count = totals.setdefault(lang, Counter())
        lines = text.split("\n")
        count["files"] += 1
        count["non-blank"] += sum(1 for line in lines if line.strip())
        for n, worded in uncovered(text, chunks):
            count["outside, with a word" if worded else "outside, no word"] += 1
            if worded and len(shown) < args.show:
                shown.append(f"{rel}:{n}: {lines[n - 1].strip()[:100]}")
            elif not worded:
                no_word[lines[n - 1].strip()[:20]] += 1
    if args.json:
        print(json.dumps({**{lang: dict(c) for lang, c in sorted(totals.items())},
                          "no word, by text": dict(no_word.most_common())}))
        return
    print(f"{'language':<12} {'files':>7} {'non-blank':>10} {'outside, with a word':>21} "
          f"{'outside, no word':>17}")
    for lang, c in sorted(totals.items()):
        print(f"{lang:<12} {c['files']:>7,} {c['non-blank']:>10,} "
              f"{c['outside, with a word']:>21,} {c['outside, no word']:>17,}")
    if no_word:
        print("no word, by text: " + ", ".join(f"`{t}` {n:,}" for t, n in no_word.most_common(8))
              + (f", {len(no_word) - 8} other texts" if len(no_word) > 8 else ""))
    for line in shown:
        print(line)


if __name__ == "__main__":
    main()
