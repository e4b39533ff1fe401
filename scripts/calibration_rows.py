"""Every published row simulated at the planner's current defaults: one line a row, then the median |error| by source.

    .venv/bin/python scripts/calibration_rows.py            # both bundled CSVs
    .venv/bin/python scripts/calibration_rows.py FILE...    # other calibration CSVs or benchmark results (user files)

A line: id, source group, setup (engine, model, GPU x count, TP/PP, precisions, lengths, load), the metric and its
basis, measured, predicted, predicted / measured. Rows carrying an excluded_reason are listed apart.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner.calibration import BUNDLED_CSVS, Measurement, predict, read_user_file, setup, source_group  # noqa: E402
from planner.errors import BriefError  # noqa: E402


def describe(m: Measurement) -> str:
    lengths = m.lengths
    shape = (
        f"{lengths.input_mean_tokens:.0f}/{lengths.output_mean_tokens:.0f}"
        if lengths.fixed
        else f"{lengths.dataset or 'spread'} {lengths.input_mean_tokens:.0f}/{lengths.output_mean_tokens:.0f}"
    )
    load = (
        m.load.kind.value
        + (f" {m.load.rate_per_s:g}/s" if m.load.rate_per_s else "")
        + (f" C{m.load.concurrency}" if m.load.concurrency else "")
    )
    layout = f"TP{m.tp}" + (f"PP{m.pp}" if m.pp > 1 else "") + (" DEP" if m.attention_dp else "")
    return (
        f"{m.engine.value} {m.engine_release[:8]:<8} {m.model:<16} {m.num_gpus}x{m.gpu:<12} {layout:<8}"
        f" {m.weights.value}/{m.kv_cache.value:<4} {shape:<26} {load:<20}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, help="calibration CSVs or benchmark results (default: the bundled CSVs)")
    args = parser.parse_args()
    try:
        rows = [m for path in (args.files or BUNDLED_CSVS) for m in read_user_file(path)]
    except BriefError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    errors: dict[str, list[float]] = defaultdict(list)
    print(f"{'id':>5}  {'source':<38} {'setup':<124} {'metric':<22} {'basis':<8} {'measured':>11} {'predicted':>11} {'ratio':>6}")
    for m in rows:
        if m.excluded_reason:
            print(f"{m.id:>5}  excluded: {m.excluded_reason}")
            continue
        predicted = predict(setup(m))
        ratio = predicted / m.value
        errors[source_group(m)].append(abs(ratio - 1))
        print(
            f"{m.id:>5}  {source_group(m):<38} {describe(m):<124} {m.metric.value:<22} {m.basis.value:<8}"
            f" {m.value:>11,.2f} {predicted:>11,.2f} {ratio:>6.2f}"
        )
    print("\nmedian |predicted / measured - 1| by source:")
    for group, errs in sorted(errors.items()):
        print(f"  {group:<40} {statistics.median(errs) * 100:6.1f}%  ({len(errs)} rows, worst {max(errs) * 100:.0f}%)")
    everything = [e for errs in errors.values() for e in errs]
    print(f"  {'all rows':<40} {statistics.median(everything) * 100:6.1f}%  ({len(everything)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
