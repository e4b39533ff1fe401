import gc
import os
import sys

# numpy's OpenBLAS starts a thread per core as it loads, and each spins ~0.05-0.1 s of CPU: the planner's arrays have
# tens of elements and no BLAS call is worth a thread, so a command runs with one unless the caller chose a count.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# The imports build ~42,000 tracked objects (pydantic's models and schemas, numpy) that live as long as the process: the
# collector would run ~100 times while they load (to free ~600 objects), so it pauses for the imports and then leaves
# them out of every later collection (freeze).
gc.disable()
from planner.cli import main  # noqa: E402  (after the variable and the pause: this loads numpy and pydantic)

gc.freeze()
gc.enable()

if __name__ == "__main__":  # a search's worker processes import this module too (spawn): they must not run the CLI
    status = main()
    gc.freeze()  # the process ends: the interpreter's last collection would walk every object for nothing (~20 ms)
    sys.exit(status)
