"""Two designs side by side (planner.compare): the table the Compare and Variations pages show, and the pin.

The table is static (st.table): every row shows, with no inner scroll, and it wraps on a narrow screen. Each row's
change is written in words and coloured by its direction: green better, red worse, grey for a change with no
better direction.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from planner.compare import Difference, Direction
from ui import state

__all__ = ["DIRECTION_COLOURS", "comparison_frame", "comparison_table", "pin_button"]

DIRECTION_COLOURS = {Direction.better: "#1e7d32", Direction.worse: "#c0392b", Direction.changed: "#5f6368", Direction.same: "#5f6368"}
_CHANGE_COLUMNS = ("difference", "change", "")


def comparison_frame(rows: Sequence[Difference], left: str, right: str) -> pd.DataFrame:
    """One row per figure: its name, both values (a predicted one with its range in brackets), the absolute and
    relative change, and whether it is better."""
    return pd.DataFrame(
        [
            {
                "figure": f"{r.label} (target {r.target})" if r.target else r.label,
                left: f"{r.left} ({r.left_range})" if r.left_range else r.left,
                right: f"{r.right} ({r.right_range})" if r.right_range else r.right,
                "difference": r.absolute or ("same" if r.direction is Direction.same else ""),
                "change": r.relative,
                "": "" if r.direction is Direction.same else r.direction.value,
            }
            for r in rows
        ]
    )


def comparison_table(rows: Sequence[Difference], left: str, right: str) -> None:
    frame = comparison_frame(rows, left, right)
    colours = [DIRECTION_COLOURS[r.direction] for r in rows]

    def colour(column: pd.Series) -> list[str]:
        if column.name not in _CHANGE_COLUMNS:
            return [""] * len(column)
        weight = "font-weight: 600; " if column.name == "" else ""
        return [f"{weight}color: {c}" for c in colours]

    st.table(frame.set_index("figure").style.apply(colour))


def pin_button(*, key: str) -> None:
    """'Pin this design': the current design becomes the one others are compared with (session and URL)."""
    st.button(
        "Pin this design to compare",
        key=key,
        on_click=state.pin_current,
        help="Keep this design (session and URL); change the sidebar or pick a preset, then open Compare to see both side by side.",
    )
