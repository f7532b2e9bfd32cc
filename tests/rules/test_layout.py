"""Layouts (RULES.md C "Layout", TF "The open-end count")."""
from __future__ import annotations

import pytest

from engine_service.rules import IllegalActionError, MalformedError
from engine_service.rules.layout import CROSS, LINE, SPINNER, Layout
from engine_service.rules.notation import CENTER, E, N, S, W
from engine_service.rules.tiles import NUMBER_MASK, names, parse_tile


def t(name: str) -> int:
    return parse_tile(name)


def test_a_lead_lies_a_facing_w_and_b_facing_e() -> None:
    # C "Layout": the first tile a-b lies with a facing W and b facing E.
    layout = Layout(LINE)
    layout.lead(t("3-5"))
    assert layout.ends() == {"E": 5, "W": 3}
    flipped = Layout(LINE)
    flipped.lead(t("3-5"), flipped=True)     # spelled "5-3"
    assert flipped.ends() == {"E": 3, "W": 5}


def test_an_empty_layout() -> None:
    layout = Layout(LINE)
    assert layout.ends() == {}
    assert layout.count() == 0
    assert layout.playable_mask() == 0


def test_attaching_moves_the_end_to_the_far_half() -> None:
    # C "Layout": attached by the half equal to the end; the other half becomes the end.
    layout = Layout(LINE)
    layout.lead(t("3-5"))
    layout.attach(t("5-6"), E)
    assert layout.ends() == {"E": 6, "W": 3}
    layout.attach(t("1-3"), W)
    assert layout.ends() == {"E": 6, "W": 1}
    layout.attach(t("6-6"), E)    # a double lies crosswise: the end is its number
    assert layout.ends() == {"E": 6, "W": 1}
    assert names(layout.on_table) == ["1-3", "3-5", "5-6", "6-6"]
    assert [p[0] for p in layout.placements] == [t("3-5"), t("5-6"), t("1-3"), t("6-6")]
    assert layout.placements[0][1] == CENTER


def test_a_double_lead_on_a_line_opens_only_w_and_e() -> None:
    layout = Layout(LINE)
    layout.lead(t("4-4"))
    assert layout.ends() == {"E": 4, "W": 4}
    with pytest.raises(IllegalActionError):
        layout.attach(t("2-4"), N)
    layout.attach(t("2-4"), W)
    assert layout.ends() == {"E": 4, "W": 2}


def test_a_double_lead_on_a_cross_opens_four_arms() -> None:
    # O "Cross": a double lead is the centre of a cross, N E S W all showing its number.
    layout = Layout(CROSS)
    layout.lead(t("4-4"))
    assert layout.ends() == {"N": 4, "E": 4, "S": 4, "W": 4}
    layout.attach(t("4-1"), S)
    assert layout.ends() == {"N": 4, "E": 4, "S": 1, "W": 4}
    line = Layout(CROSS)
    line.lead(t("1-4"))           # a non-double lead gives a plain line
    assert line.ends() == {"E": 4, "W": 1}


@pytest.mark.parametrize("tile,arm", [("2-3", E), ("2-3", W), ("5-5", E), ("1-1", W)])
def test_a_tile_that_does_not_fit_is_refused_and_changes_nothing(tile: str, arm: int) -> None:
    layout = Layout(LINE)
    layout.lead(t("4-6"))
    before = (layout.ends(), list(layout.placements), layout.on_table, layout.count())
    with pytest.raises(IllegalActionError):
        layout.attach(t(tile), arm)
    assert (layout.ends(), list(layout.placements), layout.on_table, layout.count()) == before


def test_refusals() -> None:
    layout = Layout(LINE)
    with pytest.raises(IllegalActionError):
        layout.attach(t("1-2"), E)                # not led yet
    layout.lead(t("1-2"))
    with pytest.raises(IllegalActionError):
        layout.lead(t("3-4"))                     # led already
    with pytest.raises(IllegalActionError):
        layout.attach(t("2-5"), N)                # N is not an arm of a line
    with pytest.raises(IllegalActionError):
        layout.attach(t("2-5"), E, closes=True)   # only a double closes
    assert layout.ends() == {"E": 2, "W": 1}


def test_closing_an_arm_removes_it() -> None:
    layout = Layout(CROSS)
    layout.lead(t("3-3"))
    layout.attach(t("3-6"), N)
    layout.attach(t("6-6"), N, closes=True)
    assert layout.ends() == {"E": 3, "S": 3, "W": 3}
    with pytest.raises(IllegalActionError):
        layout.attach(t("6-1"), N)


def test_playable_mask_is_every_tile_showing_an_open_end() -> None:
    layout = Layout(LINE)
    layout.lead(t("2-5"))
    assert layout.playable_mask() == NUMBER_MASK[2] | NUMBER_MASK[5]
    assert layout.fits(t("0-2"), W) and not layout.fits(t("0-2"), E)
    assert not layout.fits(t("0-2"), N)
    layout.attach(t("5-5"), E)
    assert layout.playable_mask() == NUMBER_MASK[2] | NUMBER_MASK[5]
    layout.attach(t("2-0"), W)
    assert layout.playable_mask() == NUMBER_MASK[0] | NUMBER_MASK[5]


def test_copy_is_independent() -> None:
    layout = Layout(LINE)
    layout.lead(t("1-2"))
    other = layout.copy()
    other.attach(t("2-3"), E)
    assert layout.ends() == {"E": 2, "W": 1}
    assert other.ends() == {"E": 3, "W": 1}
    assert len(layout.placements) == 1


def test_line_count_of_a_double_lead() -> None:
    # TF: without a spinner a double first tile counts its pips once while neither side
    # carries a tile; once one side does, the other side is a crosswise double (both halves).
    layout = Layout(LINE)
    layout.lead(t("4-4"))
    assert layout.count() == 8
    layout.attach(t("4-2"), E)
    assert layout.count() == 8 + 2
    layout.attach(t("4-1"), W)
    assert layout.count() == 1 + 2


def test_line_count_of_crosswise_double_ends() -> None:
    layout = Layout(LINE)
    layout.lead(t("3-5"))
    assert layout.count() == 8
    layout.attach(t("5-5"), E)
    assert layout.count() == 3 + 10
    layout.attach(t("3-3"), W)
    assert layout.count() == 6 + 10


def test_all_threes_worked_sequence_with_a_spinner() -> None:
    # TF "The open-end count", the source's binding sequence (All Threes):
    # 6-6 -> 12; 6-3 on it -> 15; 6-0 on the other side -> 15; 0-2 on 6-0 -> 17;
    # 6-5 on N -> 16; 5-1 on 6-5 -> 12.
    layout = Layout(SPINNER)
    layout.lead(t("6-6"))
    assert layout.count() == 12
    assert layout.ends() == {"N": 6, "E": 6, "S": 6, "W": 6}   # all four sides open at once
    layout.attach(t("6-3"), E)
    assert layout.count() == 15
    layout.attach(t("6-0"), W)
    assert layout.count() == 15          # 3 + 0 + 6 + 6
    layout.attach(t("0-2"), W)
    assert layout.count() == 17          # 6 + 6 + 3 + 2 (the source prints "11")
    layout.attach(t("6-5"), N)
    assert layout.count() == 16          # 6 + 5 + 3 + 2
    layout.attach(t("5-1"), N)
    assert layout.count() == 12          # 6 + 3 + 2 + 1
    assert layout.ends() == {"N": 1, "E": 3, "S": 6, "W": 2}


def test_only_the_first_double_spins() -> None:
    # A3: the first double played is the spinner; later doubles take two sides only.
    layout = Layout(SPINNER)
    layout.lead(t("2-5"))
    assert layout.ends() == {"E": 5, "W": 2}
    layout.attach(t("5-5"), E)          # the spinner, not the first tile: N and S open
    assert layout.ends() == {"N": 5, "E": 5, "S": 5, "W": 2}
    layout.attach(t("2-2"), W)          # a later double: no new arms
    assert layout.ends() == {"N": 5, "E": 5, "S": 5, "W": 2}


def test_rebuild_replays_a_possible_layout() -> None:
    placements = [(t("1-1"), CENTER, False), (t("1-2"), E, False), (t("1-4"), W, False)]
    layout = Layout.rebuild(placements, LINE)
    assert layout.ends() == {"E": 2, "W": 4}


@pytest.mark.parametrize("placements", [
    [(t("1-2"), E, False)],                                   # no lead first
    [(t("1-1"), CENTER, False), (t("2-3"), E, False)],        # does not fit
    [(t("1-1"), CENTER, False), (t("1-2"), N, False)],        # no N on a line
    [(t("1-1"), CENTER, False), (t("1-1"), E, False)],        # twice
    [(t("1-1"), CENTER, False), (t("1-2"), CENTER, False)],   # a second lead
])
def test_rebuild_refuses_an_impossible_layout_as_malformed(placements: list) -> None:
    with pytest.raises(MalformedError):
        Layout.rebuild(placements, LINE)
