"""python -m codebase_rag: the codebase-rag command (cli.py), where it is not on PATH."""
import sys

from .cli import main

sys.exit(main())
