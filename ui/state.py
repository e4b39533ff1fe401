"""The app's state: a preset plus dotted-path overrides, kept in session state and mirrored in the URL.

The current brief is always `apply_overrides(load_brief(preset), overrides)`. Widgets are views on brief
paths: their keys are seeded from the current brief when absent, and their callbacks write the
overrides, so a page that does not render a widget loses nothing. The URL carries `preset` and one
query parameter per override (`?preset=capstone&workload.duty_cycle=0.16`), so a copied link reopens
the same design.

The browser's history is the undo list: every change writes the URL, which Streamlit's page pushes as a new
history entry, and a run that arrives with a URL other than the one this session last wrote (the browser's
Back or Forward: no control changed anything in it) takes the design from that URL.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import streamlit as st

from planner import Brief, BriefError, InfeasibleDesign, apply_overrides, load_brief, plan, preset_names
from planner.guard import checked
from planner.loader import parse_value
from planner.naming import DesignName, design_name

__all__ = [
    "WIDGET_PREFIXES",
    "brief_value",
    "current_brief",
    "current_name",
    "diff_overrides",
    "enter_page",
    "field_errors",
    "flatten",
    "follow_url",
    "from_query_params",
    "init_state",
    "link_errors",
    "load_brief_as_current",
    "load_pinned",
    "pin_current",
    "pin_from_query_params",
    "pin_params",
    "pinned",
    "practice_on",
    "practice_params",
    "preset_brief",
    "reset_widgets",
    "select_preset",
    "set_field",
    "set_fields",
    "set_practice",
    "to_query_params",
    "unpin",
]

DEFAULT_PRESET = "capstone"
PRESET_KEY = "state.preset"
OVERRIDES_KEY = "state.overrides"
ERRORS_KEY = "state.errors"
LINK_ERRORS_KEY = "state.link_errors"
NOTICE_KEY = "state.notice"
INIT_KEY = "state.initialised"
PAGE_KEY = "state.page"
PIN_KEY = "state.pin"  # (preset, overrides) of the design pinned for comparison (pages/compare.py)
PIN_PARAM = "pin"  # the pin in the URL: pin=<preset>, and pin.<path>=<value> for each of its overrides
URL_KEY = "state.url"  # the query parameters the browser's URL holds after this session's last write
CHANGED_KEY = "state.changed"  # a control, a button or an upload changed the design since the last page_setup
PRACTICE_PARAM = "practice"  # practice mode in the URL: practice=on (ui/practice_form.py)
PRACTICE_KEY = "state.practice"  # practice mode on or off, kept out of the toggle widget so a page switch keeps it
WIDGET_PREFIXES = ("sb.", "f.")  # sidebar controls and brief-form fields: views re-seeded from the brief


@lru_cache(maxsize=64)
def preset_brief(name: str) -> Brief:
    return load_brief(name)


def _overrides_key(overrides: Mapping[str, Any]) -> str:
    return json.dumps(overrides, sort_keys=True)


@lru_cache(maxsize=512)
def _brief_for(preset: str, overrides_json: str) -> Brief:
    return apply_overrides(preset_brief(preset), json.loads(overrides_json))


def brief_for(preset: str, overrides: Mapping[str, Any]) -> Brief:
    """The preset with the overrides applied (validated; cached by their JSON). No file is ever read: the
    app refuses model.hf_config paths (a config.json is uploaded instead)."""
    return _brief_for(preset, _overrides_key(overrides))


def valid_brief(preset: str, overrides: Mapping[str, Any]) -> Brief:
    """brief_for, and the design computes: unknown catalog keys and arithmetic failures are BriefErrors naming
    the field; a design that does not fit the hardware is valid (its page shows the verdict)."""
    brief = brief_for(preset, overrides)
    check_plans(brief)
    return brief


def check_plans(brief: Brief) -> None:
    """Raise BriefError unless plan() gives a design or a verdict (InfeasibleDesign is a verdict the page shows)."""
    with contextlib.suppress(InfeasibleDesign):
        checked(plan, brief)


def brief_value(brief: Brief, path: str) -> Any:
    """The JSON value at a dotted path of a brief (None where an optional section is empty)."""
    node: Any = brief.model_dump(mode="json")
    for part in path.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node


def flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """{'workload': {'users': 1}} -> {'workload.users': 1}; lists and None stay leaves."""
    flat: dict[str, Any] = {}
    for key, value in data.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, f"{path}."))
        else:
            flat[path] = value
    return flat


def diff_overrides(base: Brief, other: Brief) -> dict[str, Any]:
    """Overrides that turn `base` into `other` (a section that empties becomes one None override)."""
    before, after = flatten(base.model_dump(mode="json")), flatten(other.model_dump(mode="json"))
    changes: dict[str, Any] = {}
    for path, value in after.items():
        if before.get(path, ...) != value:
            changes[path] = value
    for path in before:
        section = next((p for p in _parents(path) if p in after), None)
        if path not in after and section is not None:
            changes[section] = None
    return changes


def _parents(path: str) -> list[str]:
    parts = path.split(".")
    return [".".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)]


# --- the URL ---------------------------------------------------------------------------------------


def _raw(value: Any) -> str:
    """A value as the URL carries it: strings bare where they read back as themselves, else JSON."""
    if isinstance(value, str):
        try:
            reads_back = json.loads(value) == value
        except json.JSONDecodeError:
            reads_back = True
        if reads_back and value.strip() == value and value.lower() not in ("none", "null", ""):
            return value
    return json.dumps(value)


def to_query_params(preset: str, overrides: Mapping[str, Any]) -> dict[str, str]:
    return {"preset": preset, **{path: _raw(value) for path, value in sorted(overrides.items())}}


MAX_LINK_PARAMS = 60  # a design differs from its preset in a few dozen fields at most
MAX_ECHO_CHARS = 80  # a name from the link quoted in a message is clipped to this


def clip(text: str, limit: int = MAX_ECHO_CHARS) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def _names(field: str, path: str) -> bool:
    """Whether an error about `field` is about the override at `path` (the same field, a parent or a child)."""
    return field == path or field.startswith(f"{path}.") or path.startswith(f"{field}.")


def _accepted(preset: str, candidates: dict[str, Any], errors: dict[str, str]) -> dict[str, Any]:
    """The overrides of a link that the planner accepts together, whatever their order in the URL.

    All at once first (fields that only make sense together, such as a custom model's, arrive together); an
    error that names a parameter drops it and the rest is tried again. An error naming none of them (a rule
    between fields) falls back to adding the parameters one at a time, in path order, until none more fits.
    """
    pending = dict(candidates)
    while pending:
        try:
            valid_brief(preset, pending)
            return pending
        except BriefError as exc:
            named = [path for path in pending if _names(exc.field, path)]
            if not named:
                break
            for path in named:
                errors[path] = f"{exc} (from the link; left out)"
                del pending[path]
    accepted: dict[str, Any] = {}
    grew = True
    while grew:
        grew = False
        for path in sorted(set(pending) - set(accepted)):
            try:
                valid_brief(preset, {**accepted, path: pending[path]})
            except BriefError:
                continue
            accepted[path], grew = pending[path], True
    for path in sorted(set(pending) - set(accepted)):
        try:
            valid_brief(preset, {**accepted, path: pending[path]})
        except BriefError as exc:
            errors[path] = f"{exc} (from the link; left out)"
    return accepted


def from_query_params(params: Mapping[str, str]) -> tuple[str, dict[str, Any], dict[str, str]]:
    """(preset, overrides, errors) from a URL; a bad parameter is reported and left out, the rest kept.

    The parameters' order in the URL does not matter, and nothing a link holds is read as a file path.
    """
    errors: dict[str, str] = {}
    preset = params.get("preset", DEFAULT_PRESET)
    if preset not in preset_names():
        errors["preset"] = f"preset: unknown preset '{clip(preset)}' in the link; showing {DEFAULT_PRESET}"
        preset = DEFAULT_PRESET
    keys = sorted(key for key in params if key not in ("preset", PRACTICE_PARAM) and not _is_pin_param(key))
    if len(keys) > MAX_LINK_PARAMS:
        errors["link"] = f"link: {len(keys)} parameters; the first {MAX_LINK_PARAMS} in path order are used"
        keys = keys[:MAX_LINK_PARAMS]
    candidates: dict[str, Any] = {}
    for key in keys:
        path = key.strip()
        try:
            if not path:
                raise BriefError("(empty name)", "a link parameter needs a field path, e.g. hardware.nodes=4")
            candidates[path] = parse_value(path, params[key])
        except BriefError as exc:
            errors[clip(key)] = f"{exc.field[:MAX_ECHO_CHARS]}: {exc.reason} (from the link; left out)"
    return preset, _accepted(preset, candidates, errors), errors


def _is_pin_param(key: str) -> bool:
    return key == PIN_PARAM or key.startswith(f"{PIN_PARAM}.")


def pin_params(pin: tuple[str, Mapping[str, Any]]) -> dict[str, str]:
    """The pinned design as URL parameters: pin=<preset>, pin.<path>=<value>."""
    preset, overrides = pin
    return {PIN_PARAM: preset, **{f"{PIN_PARAM}.{path}": _raw(value) for path, value in sorted(overrides.items())}}


def pin_from_query_params(params: Mapping[str, str]) -> tuple[tuple[str, dict[str, Any]] | None, str | None]:
    """(pinned design, error) from a URL: nothing pinned without a `pin` parameter; a pin the planner refuses is
    left out as a whole, with one line saying why."""
    preset = params.get(PIN_PARAM)
    if preset is None:
        return None, None
    keys = sorted(key for key in params if key.startswith(f"{PIN_PARAM}."))[:MAX_LINK_PARAMS]
    try:
        if preset not in preset_names():
            raise BriefError(PIN_PARAM, f"unknown preset '{clip(preset)}'")
        overrides = {key.removeprefix(f"{PIN_PARAM}."): parse_value(key.removeprefix(f"{PIN_PARAM}."), params[key]) for key in keys}
        valid_brief(preset, overrides)
    except BriefError as exc:
        return None, f"pinned design: {clip(str(exc), 200)} (from the link; nothing pinned)"
    return (preset, overrides), None


# --- session state ---------------------------------------------------------------------------------


def init_state() -> None:
    """On a session's first run, read the design from the URL."""
    ss = st.session_state
    if INIT_KEY in ss:
        return
    url = st.query_params.to_dict()
    preset, overrides, link_errors = from_query_params(url)
    pin, pin_error = pin_from_query_params(url)
    if pin is not None:
        ss[PIN_KEY] = pin
    if pin_error is not None:
        link_errors[PIN_PARAM] = pin_error
    ss[PRESET_KEY], ss[OVERRIDES_KEY], ss[ERRORS_KEY], ss[LINK_ERRORS_KEY] = preset, overrides, {}, link_errors
    ss[PRACTICE_KEY] = url.get(PRACTICE_PARAM) == "on"
    ss[URL_KEY] = url
    ss[INIT_KEY] = True


def follow_url() -> None:
    """After the browser's Back or Forward, take the design from the URL it went to.

    Such a run brings a URL other than the one this session last wrote, and no control changed the design in it.
    A change in the same run wins: a key press sent before the browser applied the previous run's URL carries
    that older URL, and must not undo itself. An empty query (a link without parameters) keeps the design.
    """
    ss = st.session_state
    changed = ss.pop(CHANGED_KEY, False)
    url = st.query_params.to_dict()
    if changed or not url or url == ss.get(URL_KEY):
        return
    preset, overrides, link_errors = from_query_params(url)
    ss[PRESET_KEY], ss[OVERRIDES_KEY], ss[ERRORS_KEY], ss[LINK_ERRORS_KEY] = preset, overrides, {}, link_errors
    ss[PRACTICE_KEY] = url.get(PRACTICE_PARAM) == "on"
    ss[URL_KEY] = url
    reset_widgets()


def current_preset() -> str:
    return str(st.session_state[PRESET_KEY])


def current_overrides() -> dict[str, Any]:
    return dict(st.session_state[OVERRIDES_KEY])


def current_brief() -> Brief:
    return brief_for(current_preset(), current_overrides())


def current_name() -> DesignName:
    """The current design's name: the preset's title while the edits leave its facts alone, else the design's own."""
    return name_for(current_preset(), current_overrides())


def name_for(preset: str, overrides: Mapping[str, Any]) -> DesignName:
    """The name of the preset with the overrides applied (a pinned design's too): its title follows the edits."""
    return design_name(brief_for(preset, overrides), preset_brief(preset))


def field_errors() -> dict[str, str]:
    """Values a user entered that the planner rejected, by brief path (shown beside the field)."""
    return dict(st.session_state[ERRORS_KEY])


def link_errors() -> dict[str, str]:
    """URL parameters that could not be applied (shown at the top of the page until the preset changes)."""
    return dict(st.session_state[LINK_ERRORS_KEY])


def sync_url() -> None:
    """Write the design into the URL when it changed (the browser adds one history entry for the change)."""
    wanted = to_query_params(current_preset(), current_overrides()) | practice_params()
    pin = pinned()
    if pin is not None:
        wanted |= pin_params(pin)
    if st.query_params.to_dict() != wanted:
        st.query_params.from_dict(wanted)
    st.session_state[URL_KEY] = wanted


def practice_on() -> bool:
    """Whether practice mode is on: the pages hide the planner's answers until the candidate gives theirs."""
    return bool(st.session_state.get(PRACTICE_KEY, False))


def set_practice(on: bool) -> None:
    st.session_state[PRACTICE_KEY] = on
    st.session_state[CHANGED_KEY] = True


def practice_params() -> dict[str, str]:
    """Practice mode as URL parameters: practice=on, nothing when off."""
    return {PRACTICE_PARAM: "on"} if practice_on() else {}


def reset_widgets() -> None:
    """Forget every view widget's value so each is re-seeded from the current brief."""
    for key in [k for k in st.session_state if isinstance(k, str) and k.startswith(WIDGET_PREFIXES)]:
        del st.session_state[key]


def set_field(path: str, value: Any, *, from_key: str | None = None) -> None:
    """Change one brief field from the widget `from_key`; a value the planner rejects is reported beside the field.

    Only the other views of this path are re-seeded when the value is kept: re-seeding the widget that sent it
    would send its value back to the browser and could undo a keypress still on its way (a slider's arrow keys).
    """
    kept = _apply({path: value}, report_at=path)
    views = [f"{prefix}{path}" for prefix in WIDGET_PREFIXES]
    for key in views:
        if key in st.session_state and not (kept and key == from_key):
            del st.session_state[key]


def set_fields(changes: Mapping[str, Any], *, report_at: str) -> None:
    """Change brief fields together; if the planner rejects the result, report it at `report_at` and keep the brief."""
    _apply(changes, report_at=report_at)
    reset_widgets()


def _apply(changes: Mapping[str, Any], *, report_at: str) -> bool:
    """Write the changes as overrides if the planner accepts the brief; else record the error. True if kept."""
    ss = st.session_state
    preset = current_preset()
    overrides = current_overrides()
    base = preset_brief(preset)
    for path, value in changes.items():
        if value == brief_value(base, path):
            overrides.pop(path, None)
        else:
            overrides[path] = value
    ss[CHANGED_KEY] = True
    ss[ERRORS_KEY] = {}  # an earlier rejection is stale once the user changes anything: its field shows a valid value
    try:
        valid_brief(preset, overrides)
    except BriefError as exc:
        shown = changes.get(report_at, changes)
        because = _rejected_because(exc, report_at) if set(changes) == {report_at} else str(exc)  # one field typed
        ss[ERRORS_KEY] = {report_at: f"{clip(_echo(shown))} not accepted: {because}"}
        return False
    ss[OVERRIDES_KEY] = overrides
    return True


def _echo(value: Any) -> str:
    """A refused value as the user typed it: 200000, not 200000.0 (a number field sends floats); anything else as repr."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _rejected_because(exc: BriefError, report_at: str) -> str:
    """Why a change was refused, in the terms of the field changed: a rule that names another field (a mean above its
    p95) says which and that the field keeps its value."""
    if exc.field == report_at or exc.field.startswith(f"{report_at}."):
        return str(exc)
    return f"with it, {exc.field} would break its rule ({exc.reason}); the field keeps its value"


def select_preset(name: str) -> None:
    ss = st.session_state
    ss[PRESET_KEY], ss[OVERRIDES_KEY], ss[ERRORS_KEY], ss[LINK_ERRORS_KEY] = name, {}, {}, {}
    ss[CHANGED_KEY] = True
    reset_widgets()


def load_brief_as_current(brief: Brief) -> None:
    """Make a brief (an uploaded file, a variation) current: the preset stays, the differences become overrides."""
    ss = st.session_state
    ss[OVERRIDES_KEY] = diff_overrides(preset_brief(current_preset()), brief)
    ss[ERRORS_KEY] = {}
    ss[CHANGED_KEY] = True
    reset_widgets()


def enter_page(name: str) -> None:
    """On a page switch, re-seed the view widgets: a widget of another page keeps no value here."""
    if st.session_state.get(PAGE_KEY) != name:
        reset_widgets()
        st.session_state[PAGE_KEY] = name


def pin_current() -> None:
    """Pin the current design for comparison: kept in the session and in the URL until unpinned."""
    st.session_state[PIN_KEY] = (current_preset(), current_overrides())


def unpin() -> None:
    st.session_state.pop(PIN_KEY, None)


def load_pinned() -> None:
    """Make the pinned design current again (the pin stays)."""
    pin = pinned()
    if pin is not None:
        ss = st.session_state
        ss[PRESET_KEY], ss[OVERRIDES_KEY], ss[ERRORS_KEY] = pin[0], pin[1], {}
        reset_widgets()


def pinned() -> tuple[str, dict[str, Any]] | None:
    """(preset, overrides) of the pinned design, or None."""
    pin = st.session_state.get(PIN_KEY)
    return None if pin is None else (str(pin[0]), dict(pin[1]))


def set_notice(text: str) -> None:
    st.session_state[NOTICE_KEY] = text


def pop_notice() -> str | None:
    value = st.session_state.pop(NOTICE_KEY, None)
    return None if value is None else str(value)
