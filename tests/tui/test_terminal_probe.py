"""The terminal probe asks a real pty what it can draw; the image widgets load without asking again."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.support.pty_terminal import PtyTerminal, pty_or_skip
from tui.terminal_probe import TerminalGraphics, parse_replies

ROOT = Path(__file__).resolve().parents[2]
ASK = (
    "import json, tui.terminal_probe as p; p.start(); a = p.answer(); "
    "print('ANSWER=' + json.dumps(a and [a.protocol, a.cell]))"
)


def test_replies_are_read_only_once_the_device_attributes_are_in():
    kitty_ok = b"\x1b_Gi=31;OK\x1b\\"
    assert parse_replies(kitty_ok) is None
    assert parse_replies(kitty_ok + b"\x1b[?62;22c") == TerminalGraphics("tgp", None)
    assert parse_replies(kitty_ok + b"\x1b[?62;4;22c", (9, 18)) == TerminalGraphics("sixel", (9, 18))
    assert parse_replies(b"\x1b_Gi=31;ENOTSUPPORTED\x1b\\\x1b[?1;2c") == TerminalGraphics("halfcell", None)
    assert parse_replies(b"\x1b[6;17;8t\x1b[?64c") == TerminalGraphics("halfcell", (8, 17))
    assert parse_replies(b"x\x1b[?6;1c") == TerminalGraphics("halfcell", None)  # 64 or 14 is not 4


def _ask_on_pty(**terminal) -> tuple[object, str]:
    pty_or_skip()
    term = PtyTerminal(
        [sys.executable, "-c", ASK], size=(80, 24), env={**os.environ, "PYTHONPATH": str(ROOT)}, **terminal
    )
    try:
        term.wait_for(r"ANSWER=.*\n", timeout=20)
        answer = json.loads(term.text.split("ANSWER=")[1].splitlines()[0])
    finally:
        term.close()
    return answer, term.raw.decode("latin-1")


@pytest.mark.parametrize(
    ("terminal", "expected"),
    [
        ({}, ["halfcell", [10, 20]]),
        ({"device_attributes": b"\x1b[?62;4;22c"}, ["sixel", [10, 20]]),
        ({"kitty_graphics": True}, ["tgp", [10, 20]]),
        ({"pixels": False, "cell_size": (9, 19)}, ["halfcell", [9, 19]]),
        ({"device_attributes": None}, None),  # a terminal that never answers: give up, draw half-cells
    ],
)
def test_probe_asks_a_real_terminal(terminal, expected):
    answer, raw = _ask_on_pty(**terminal)
    assert answer == expected
    assert raw.count("\x1b[c") == 1  # every question asked once, in one go


LOAD = (
    "import json, sys, tui.image_widgets as w; from tui.terminal_probe import TerminalGraphics; "
    "cls = w.widget_class('auto', TerminalGraphics('sixel', (7, 15))); "
    "from textual_image._terminal import get_cell_size; "
    "import textual_image.widget as tw; "
    "print('LOADED=' + json.dumps([cls is tw.SixelImage, list(get_cell_size()), w.widget_class('auto', None) "
    "is tw.HalfcellImage]))"
)


def test_image_widgets_load_on_a_terminal_without_asking_it_again():
    pty_or_skip()
    term = PtyTerminal(
        [sys.executable, "-c", LOAD], size=(80, 24), env={**os.environ, "PYTHONPATH": str(ROOT)}, device_attributes=None
    )  # if textual-image asked anyway, it would wait and see no answer
    try:
        term.wait_for(r"LOADED=.*\n", timeout=20)
    finally:
        term.close()
    assert json.loads(term.text.split("LOADED=")[1].splitlines()[0]) == [True, [7, 15], True]
    assert "\x1b[c" not in term.raw.decode("latin-1") and "\x1b_G" not in term.raw.decode("latin-1")


def test_unknown_protocol_is_refused():
    from tui.image_widgets import widget_class

    with pytest.raises(ValueError, match="unknown image protocol 'kitty'"):
        widget_class("kitty", None)
