"""The index command (index.py, codebase-rag index): parse its flags, call the package
(walk -> chunk -> embed -> store) and turn every expected failure into one line.

    index [--source DIR]        index (or refresh) every source file under DIR
    index --single FILE...      re-index just these files
    index --hook                Claude Code PostToolUse hook (JSON on stdin)
    index --background          the same as a plain run, detached: returns at once
    index --status              built or building, progress, time left
    index --check               verify the index; one line per problem
    index --dry-run --json      print the chunks, do not embed
"""
import argparse
import json
import os
import sys
import time

from . import config
from .errors import ArgParser, UsageError, one_line, read_json, report, warn


def parse_args(argv, prog="index.py"):
    from .languages import LANGUAGES
    p = ArgParser(
        prog=prog,
        description=f"Index code ({', '.join(lang.name for lang in LANGUAGES)}) for semantic "
                    "search: one chunk per member (method, function, constructor, property, "
                    "type, ...), embedded with all-MiniLM-L6-v2 into a ChromaDB beside the "
                    "code. Re-running it refreshes only what changed.",
        epilog="The index lives in SOURCE/.codebase-rag/ unless --db or CODEBASE_RAG_DB "
               "says otherwise; query.py, --single, --hook and a plain index.py run inside "
               "the tree find it by walking up from the current directory or the file, as "
               "git finds .git. Other settings: see the README or codebase_rag/config.py.")
    p.add_argument("--source", metavar="DIR",
                   help="directory to index (default: the indexed tree around the current "
                        "directory, else the current directory)")
    p.add_setting("DB", metavar="PATH")
    p.add_setting("MODEL", metavar="NAME_OR_PATH")
    p.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                   help="also skip paths matching this .gitignore-style glob (repeatable; "
                        "remembered for later runs)")
    p.add_argument("--single", nargs="+", metavar="FILE",
                   help="re-index only these files (a folder: the files in it); a file that "
                        "no longer exists is removed, one the index never held is an error")
    p.add_argument("--hook", action="store_true",
                   help="read a Claude Code PostToolUse event on stdin and re-index its file")
    p.add_argument("--rebuild", action="store_true",
                   help="drop the index and build it again (cached embeddings are reused); "
                        "recovers a damaged index")
    p.add_argument("--background", action="store_true",
                   help="build or refresh in a detached process and return at once (for "
                        "hooks); queries work while it runs, leaning on keywords at first")
    p.add_argument("--status", action="store_true",
                   help="say whether the index is built or building, how far, how long is "
                        "left, and the last error")
    p.add_argument("--verbose", action="store_true",
                   help="with --status: name every file that did not parse, not the first few")
    p.add_argument("--detached", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--apply-queue", action="store_true", help=argparse.SUPPRESS)
    p.add_setting("SERVER", metavar="URL")
    p.add_argument("--push-only", action="store_true",
                   help="with --server: embed the tree into the team cache and keep no local "
                        "index (a CI job that warms the cache for every clone)")
    p.add_argument("--no-team-cache", action="store_true",
                   help="use no team cache in this run, and embed here every vector the team "
                        "cache supplied before (with --rebuild: repairs an index a poisoned "
                        "team cache got into)")
    p.add_argument("--check", action="store_true",
                   help="verify the index (SQLite integrity, model files and hashes, vectors "
                        "against chunks); one line per problem, exit 1 if any")
    p.add_argument("--dry-run", action="store_true",
                   help="print the chunks that would be indexed; embed nothing")
    p.add_argument("--json", action="store_true", help="with --dry-run: JSON Lines output")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar or notes")
    return p.parse_args(argv)


def run(args):
    # imported here, so that the hook (main) loads only what it needs
    from .check import check_index, describe, read_only_note
    from .reader import status
    from .build_runs import (apply_queue, chunk_record, dry_run, index_tree, locate,
                                   push_only, record_failure, reindex_files, start_background)
    if config.PROBLEMS:
        raise UsageError(config.PROBLEMS[0])
    if args.verbose and not args.status:
        raise UsageError(f"--verbose goes with --status: {config.INDEX_COMMAND} --status --verbose")
    if args.apply_queue:                 # a hook's detached process
        apply_queue(args.db)
        return 0
    if args.single:
        started = time.time()
        done, skipped = reindex_files(args.single, args.db, args.model,
                                      progress=not args.quiet)
        for path, why in skipped:
            warn(f"{path}: {why}; skipped")
        if not done:
            print("nothing to re-index")
        for s in done:
            unchanged = s["asked"] - s["files"] - s["gone"]
            said = ", ".join(f"{n} {what}" for n, what in (
                (s["files"], "read again"), (s["gone"], "removed (gone from disk)"),
                (unchanged, "unchanged")) if n)
            print(f"re-indexed {s['asked']} file(s): {said}; chunks +{s['added']} "
                  f"~{s['updated']} -{s['removed']}, {s['embedded']} embedded, "
                  f"{time.time() - started:.1f}s")
        return 0
    if args.dry_run:
        for rel, language, c in dry_run(args.source, args.exclude):
            print(json.dumps(chunk_record(rel, language, c)) if args.json else
                  f"{rel}:{c.start_line}-{c.end_line}  {c.kind:<12} "
                  f"{'.'.join(p for p in (c.cls, c.member) if p)}")
        return 0
    if args.push_only:
        print(push_only(args.source, args.server, args.exclude, args.model, not args.quiet))
        return 0
    if args.background:
        print(start_background(args.source, args.db, args.exclude, args.model, args.server,
                               args.rebuild))
        return 0
    if args.status:
        print(status(locate(args.source, args.db)[1], every=args.verbose))
        return 0
    if args.check:
        _, db = locate(args.source, args.db)
        if read_only_note(db):
            print(read_only_note(db))
        problems = check_index(db)
        for problem in problems:
            warn(problem)
        if not problems:
            print(f"index OK: {db}: {describe(db)}")
        return 1 if problems else 0
    if args.no_team_cache:
        from .check import forget_team_vectors
        args.server = None
        forgotten = forget_team_vectors(locate(args.source, args.db)[1])
        if forgotten and not args.quiet:
            warn(f"embedding here the {forgotten:,} vectors the team cache supplied")
    try:
        print(index_tree(args.source, args.db, args.model, args.exclude, args.rebuild,
                         progress=not args.quiet, detached=args.detached, server=args.server))
    except Exception as e:
        if args.detached:                # nobody sees its exit: --status shows the error
            record_failure(args.db, e)
        raise
    return 0


def main(argv=None, prog="index.py"):
    argv = sys.argv[1:] if argv is None else argv
    if "--hook" in argv:                 # a hook never fails or blocks the agent
        try:
            args = parse_args(argv, prog)
            if config.PROBLEMS:
                raise UsageError(config.PROBLEMS[0])
            from .hook import handle_hook
            handle_hook(read_json(sys.stdin.read() or "{}", "the hook's event"), args.db)
        except (Exception, SystemExit) as e:
            if not isinstance(e, SystemExit):
                warn(f"hook: {one_line(e)}")
        return 0
    args = parse_args(argv, prog)
    try:
        return run(args)
    except BrokenPipeError:              # the reader stopped early (| head): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        warn("interrupted; the index stays usable and the next run finishes the work")
        return 130
    except Exception as e:               # one line each (CODEBASE_RAG_DEBUG=1: a traceback)
        return report(e)

