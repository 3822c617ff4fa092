"""How `steps.statements` reads the values of a note: their kinds, units and roles, and the
items a note names."""

from __future__ import annotations

import random

import pytest

from amem_cli.steps.statements import identifiers, overlap, read


def values(text: str) -> list[tuple[str, str]]:
    return [(v.kind, v.norm) for s in read(text)[1] for c in s.clauses for v in c.values]


@pytest.mark.parametrize("text, value", [
    ("anneal_hours 2", ("number", "7200")),  # a settings key's unit
    ("Client timeout_ms: 5000", ("number", "5")),  # also after "key: "
    ("the shift starts at 6.", ("clock", "~06:00")),  # a bare hour after "at"
    ("cleaning done by 2.", ("clock", "~02:00")),
])
def test_a_value_is_read_with_its_kind_and_unit(text, value):
    assert value in values(text)


def test_an_amount_is_no_clock_time():
    assert ("clock", "~02:00") not in values("Headcount down by 2.")
    assert ("number", "2") in values("Headcount down by 2.")


def test_a_temperature_and_a_duration_have_units_of_their_own():
    units = {v.text: v.unit for s in read("Brine at 3 °C for 48 hours.")[1] for c in s.clauses for v in c.values}
    assert units["3"] == {"°c"} and units["48"] == {"seconds"}


def test_an_initial_is_no_name():
    names = [v.norm for s in read("Handover now signed by R. Marsh and J.")[1] for c in s.clauses for v in c.values
             if v.kind == "name"]
    assert names == ["marsh"]


@pytest.mark.parametrize("text, named", [
    ("Thanks, Priya! It was Omar Haddad on stage, so talented.", ["omar haddad"]),
    ("Hey Priya! I've been to Lisbon twice now.", ["lisbon"]),
    ("I think you're right about Arsenal, Priya.", ["arsenal"]),
    ("Offsite venue: Hotel Adlon, Berlin.", ["hotel adlon", "berlin"]),  # no one spoken to
])
def test_a_name_spoken_to_is_no_value(text, named):
    assert [norm for kind, norm in values(text) if kind == "name"] == named


def test_a_note_names_several_items():
    ids = identifiers("Reverted PR #298; #301 untouched; flight BA117, unit 4B, dark_mode off.")
    assert ids["#"] == {"298", "301"} and ids["ba"] == {"117"} and ids["unit"] == {"4b"} and ids["_"] == {"dark_mode"}


def _one_word(a: str, b: str) -> bool:
    """The rule `overlap` looks up, compared pair by pair."""
    return a == b or min(len(a), len(b)) >= 5 and (a.startswith(b) or b.startswith(a))


def test_overlap_finds_what_comparing_every_pair_finds():
    rng = random.Random(38)
    words = ["".join(rng.choice("abc") for _ in range(rng.randint(1, 9))) for _ in range(400)]
    for _ in range(2000):
        a, b = set(rng.sample(words, rng.randint(0, 12))), set(rng.sample(words, rng.randint(0, 12)))
        assert overlap(a, b) == {x for x in a if any(_one_word(x, y) for y in b)}, (a, b)
    assert overlap({"adopt", "adoption", "dog"}, {"adoptive", "dogs"}) == {"adopt"}
    assert overlap({"adopt"}, {"adoptive"}) == {"adopt"} and overlap({"adoptive"}, {"adopt"}) == {"adoptive"}
