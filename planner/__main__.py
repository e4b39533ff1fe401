import os
import sys

# numpy's OpenBLAS starts a thread per core as it loads, and each spins ~0.05-0.1 s of CPU: the planner's arrays have
# tens of elements and no BLAS call is worth a thread, so a command runs with one unless the caller chose a count.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from planner.cli import main  # after the variable: importing the CLI loads numpy

if __name__ == "__main__":  # a search's worker processes import this module too (spawn): they must not run the CLI
    sys.exit(main())
