import sys

from planner.cli import main

if __name__ == "__main__":  # a search's worker processes import this module too (spawn): they must not run the CLI
    sys.exit(main())
