"""The query command (query.py, codebase-rag query): ask a question about the code, get the
members that answer it; and --mcp, the MCP server. It parses flags, calls the package
(embed the question -> search -> print) and turns every expected failure into one line.

    query "how are user passwords hashed?" [-k 5]

Prints each hit as `#1 | file:start-end | Class.Member | cosine dist: 0.1234` followed by
its first lines, numbered. The index is found by walking up from the current directory.
"""
import os
import sys

from . import config
from .errors import ArgParser, UsageError, encodable, not_text, printable, report
from .languages import LANGUAGES
from .text import SHAPES

MAX_DEPTH = 10                # --impact's levels at most
STRUCTURE = {                 # flag: (metavar, help)
    "definition": ("NAME", "the members and types NAME denotes, with their signatures"),
    "references": ("NAME", "every member that uses NAME (calls, constructions, type and "
                           "member references), with the line of each use"),
    "callers": ("NAME", "the members that call NAME, with the line of each call"),
    "callees": ("NAME", "the members NAME calls"),
    "impact": ("NAME", "callers of NAME, their callers, ... up to --depth levels"),
    "outline": ("FILE", "a file's types and members with their signatures"),
}


def parse_args(argv, prog="query.py"):
    p = ArgParser(
        prog=prog,
        description="Semantic search over a codebase-rag index: prints the members "
                    "(methods, constructors, properties, ...) that best answer a question, "
                    "with file:start-end, Class.Member and cosine distance (0 = same "
                    "meaning, 2 = opposite).",
        epilog="The index is found by walking up from the current directory to a "
               ".codebase-rag folder, unless --db or CODEBASE_RAG_DB says where it is. "
               "Other settings: see the README or codebase_rag/config.py.")
    p.add_argument("question", nargs="?", help="what you are looking for, in plain words")
    p.add_setting("K")
    p.add_setting("DB", metavar="PATH")
    p.add_argument("--json", action="store_true", help="print a JSON array of results")
    p.add_argument("--batch", metavar="FILE",
                   help="one question per line ('-' for stdin), embedded in one pass; with "
                        "--json one JSON array per line, else each answer after a line "
                        "'## question'")
    p.add_argument("--max-distance", type=float, metavar="D",
                   help="drop results farther than this cosine distance")
    p.add_argument("--path", metavar="GLOB",
                   help="only results in these files: a folder or file name anywhere "
                        "('middleware', 'Relay.*') or a glob ('src/*', 'src/**/Net*'), as "
                        "--exclude reads it")
    p.add_argument("--lang", choices=[lang.name for lang in LANGUAGES],
                   help="only results in this language")
    p.add_argument("--as", dest="read_as", choices=list(SHAPES),
                   help="how to read the question: " + "; ".join(
                       f"{name}: {what}" for name, what in SHAPES.items()) +
                   " (default: a final '?' or an opening how/where/which/what/why is a "
                   "question, anything else keywords)")
    p.add_setting("LINES", metavar="N")
    p.add_setting("MODE")
    p.add_setting("MODEL", metavar="NAME_OR_PATH",
                  help="refuse to answer unless the index was built with this model")
    structure = p.add_argument_group(
        "structure", "exact answers from names, not meaning (no model is loaded): NAME is "
        "Member, Class.Member (any tail of namespace and classes) or file:line")
    ask = structure.add_mutually_exclusive_group()
    for flag, (metavar, doc) in STRUCTURE.items():
        ask.add_argument(f"--{flag}", metavar=metavar, help=doc)
    structure.add_argument("--depth", type=depth, default=2, metavar="N",
                           help=f"levels of callers --impact follows (1-{MAX_DEPTH}; default 2)")
    p.add_argument("--mcp", action="store_true",
                   help="serve the index to an agent over MCP (stdio): tools search_code, "
                        "find_related, definition, callers, callees, references, impact, "
                        "outline, index_status, reindex (codebase-rag setup registers it for "
                        "Claude Code in a project)")
    p.set_defaults(prog=prog)
    return p.parse_args(argv)


def depth(raw):
    import argparse
    value = int(raw)
    if not 1 <= value <= MAX_DEPTH:
        raise argparse.ArgumentTypeError(f"--depth must be between 1 and {MAX_DEPTH}")
    return value


def run(args):
    if config.PROBLEMS:
        raise UsageError(config.PROBLEMS[0])
    if args.mcp:
        from .mcp_server import serve
        serve(args.db)
        return 0
    asked = [flag for flag in STRUCTURE if getattr(args, flag) is not None]
    if asked:
        if args.question or args.batch:
            raise UsageError(f"--{asked[0]} answers alone: give it without a question")
        return structure(args, asked[0])
    from .embed import warm_up
    from .folder import find_index
    index = args.db or find_index(os.getcwd())
    if index:
        warm_up(index)              # the model loads while the imports below run
    from .reader import Reader      # here: the MCP handshake waits for nothing
    from .render import print_results, to_json
    if args.batch:
        where = f"--batch {printable(args.batch)}"
        try:
            source = sys.stdin if args.batch == "-" else open(args.batch, encoding="utf-8")
            with source:
                questions = [line.strip() for line in source]
        except UnicodeDecodeError:
            raise UsageError(f"{where}: not UTF-8 text (one question per line)") from None
        for number, question in enumerate(questions, 1):
            if not encodable(question):   # stdin in the C locale: bytes as surrogates
                raise UsageError(not_text(f"{where} line {number}", question))
    else:
        if not args.question or not args.question.strip():
            raise UsageError(f'empty question; usage: {args.prog} "what you are looking for"')
        questions = [args.question.strip()]
    answers = Reader(args.db, args.model).ask(questions, args.k, args.mode, args.path,
                                              args.max_distance, args.lang, args.read_as)
    for a in answers:
        if args.json:                   # the notes go to stderr, so stdout stays JSON
            for note in a.notes:
                print(note, file=sys.stderr)
            extra = {"semantic_index_built": a.semantic_index_built} \
                if a.semantic_index_built < 1 else {}
            extra |= {"unread_files": a.unread_files} if a.unread_files else {}
            extra["read_as"] = a.read_as
            print(to_json(a.hits, args.lines, **extra), flush=True)
        else:
            if args.batch:
                print(f"## {a.question}")
            for note in a.notes:
                print(note)
            print_results(a.hits, args.lines)
    return 0


def structure(args, mode):
    """--definition, --references, --callers, --callees, --impact, --outline."""
    from .reader import Reader
    from .references import ask, as_json, render_text
    name = getattr(args, mode)
    reader = Reader(args.db)
    answer = reader.structure(lambda store: ask(store, mode, name, args.depth))
    if args.json:
        for note in answer.notes:
            print(note, file=sys.stderr)
        print(as_json(reader.store, mode, answer))
    else:
        render_text(reader.store, mode, answer, sys.stdout)
    return 0


def main(argv=None, prog="query.py", whole_process=None):
    """whole_process (default: when argv is None, a command line's run): end the process
    at once after the answer, skipping the slow teardown (and a model still loading)."""
    args = parse_args(sys.argv[1:] if argv is None else argv, prog)
    try:
        code = run(args)
    except BrokenPipeError:              # the reader stopped early (| head): not an error
        os._exit(0)
    except Exception as e:               # one line each (CODEBASE_RAG_DEBUG=1: a traceback)
        code = report(e)
    if argv is None if whole_process is None else whole_process:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):    # closed by the reader (an MCP client that left)
                pass
        os._exit(code)
    return code

