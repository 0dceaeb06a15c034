#!/usr/bin/env python3
"""codebase-rag search: ask a question about the code, get the members that answer it. The
same command as `codebase-rag query`, for a checkout: see codebase_rag/cli_query.py or --help.

    python query.py "how are user passwords hashed?" [-k 5]
    python query.py --mcp                 the MCP server (stdio)
"""
import sys

from codebase_rag.cli_query import main

if __name__ == "__main__":
    sys.exit(main())
