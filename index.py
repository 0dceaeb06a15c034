#!/usr/bin/env python3
"""codebase-rag indexer: chunk source files into members, embed them, store them beside the
code. The same command as `codebase-rag index`, for a checkout: see codebase_rag/cli_index.py
or --help.

    python index.py [--source DIR]        index (or refresh) every source file under DIR
    python index.py --hook                Claude Code PostToolUse hook (JSON on stdin)
    python index.py --status | --check    the index's state; verify it
"""
import sys

from codebase_rag.cli_index import main

if __name__ == "__main__":
    sys.exit(main())
