"""codebase-rag: the one command an install puts on PATH, a subcommand per job. Each hands
its arguments to the command it names, importing nothing else (a hook and the MCP
handshake must start fast).

    codebase-rag index [--source DIR] ...     build or refresh the index (index.py)
    codebase-rag query "question" ...         search it (query.py)
    codebase-rag mcp                          the MCP server, stdio (query.py --mcp)
    codebase-rag hook                         Claude Code's PostToolUse hook (index.py --hook)
    codebase-rag status                       built or building, how far (index.py --status)
    codebase-rag setup [--dry-run | --remove] wire Claude Code into a project
"""
import sys

USAGE = __doc__.split("\n\n", 1)[1].rstrip() + """

Each takes --help. Settings: CODEBASE_RAG_* in the environment (see codebase_rag/config.py)."""

# subcommand: the flags put before the user's
FLAGS = {"index": [], "query": [], "mcp": ["--mcp"], "hook": ["--hook"], "status": ["--status"],
         "setup": []}


def command(name):
    """The main() that runs a subcommand, imported on use: each loads only its own."""
    if name in ("index", "hook", "status"):
        from .cli_index import main
    elif name in ("query", "mcp"):
        from .cli_query import main
        return lambda argv, prog: main(argv, prog, whole_process=True)   # ends it fast
    else:
        from .setup_claude import main
    return main


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(f"usage: codebase-rag COMMAND [ARGS]\n\n{USAGE}")
        return 0 if argv else 2
    if argv[0] == "--version":
        from . import __version__
        print(f"codebase-rag {__version__}")
        return 0
    if argv[0] not in FLAGS:
        print(f"codebase-rag: no command {argv[0]!r}; the commands: {', '.join(FLAGS)} "
              f"(see --help)", file=sys.stderr)
        return 2
    return command(argv[0])([*FLAGS[argv[0]], *argv[1:]], f"codebase-rag {argv[0]}")
