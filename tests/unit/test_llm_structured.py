"""Parsing, checking and cleaning of model output (amem_cli.llm.structured), the fakes
and the prompt schemas."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amem_cli.llm import prompts
from amem_cli.llm.fake import NoLLM, ScriptedLLM, schema_example
from amem_cli.llm.structured import (
    clean_item,
    clean_list,
    clean_sentence,
    collapse_repeats,
    extract_json,
    is_degenerate,
    parse_reply,
    repair_truncated,
    validate,
)

LIST_SCHEMA = {
    "type": "object",
    "properties": {
        "keywords": {"type": "array", "items": {"type": "string", "maxLength": 20}, "maxItems": 3},
        "context": {"type": "string", "maxLength": 80},
    },
    "required": ["keywords", "context"],
}

# -- extraction -----------------------------------------------------------------------


def test_extract_plain_object():
    assert extract_json('{"a": 1}') == ({"a": 1}, False)


def test_extract_from_code_fence_and_prose():
    text = 'Sure! Here it is:\n```json\n{"a": [1, 2]}\n```\nHope that helps.'
    assert extract_json(text) == ({"a": [1, 2]}, False)


def test_extract_first_object_in_prose():
    text = 'The answer is {"a": "x"} and then {"b": 2}'
    assert extract_json(text) == ({"a": "x"}, False)


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"keywords": ["alpha", "beta", "gam', {"keywords": ["alpha", "beta"]}),
        ('{"keywords": ["alpha"], "context": "The deploy fai', {"keywords": ["alpha"]}),
        ('{"keywords": ["alpha"], "cont', {"keywords": ["alpha"]}),
        ('{"keywords": ["alpha"],', {"keywords": ["alpha"]}),
        # A cut-off number may be a prefix of a longer one (2 of 23): it is dropped with the rest.
        ('{"links": [1, 2', {"links": [1]}),
        ('{"links": [12', {"links": []}),
    ],
)
def test_truncated_json_is_repaired_dropping_the_unfinished_part(text, expected):
    value, repaired = extract_json(text)
    assert repaired is True
    assert value == expected


def test_repair_gives_up_on_nonsense():
    assert repair_truncated("{{{{:::") is None


@pytest.mark.parametrize("text", ["", "   ", "no json here", "[[[", "}{", "null"])
def test_garbage_gives_nothing(text):
    parsed = parse_reply(text, LIST_SCHEMA)
    assert parsed.data is None
    assert parsed.valid is False
    assert parsed.problems


def test_none_means_no_output():
    parsed = parse_reply(None, LIST_SCHEMA)
    assert parsed.data is None and parsed.valid is False


# -- checking -------------------------------------------------------------------------


def test_valid_reply():
    parsed = parse_reply('{"keywords": ["a", "b"], "context": "One line."}', LIST_SCHEMA)
    assert parsed.valid is True
    assert parsed.data == {"keywords": ["a", "b"], "context": "One line."}
    assert parsed.problems == []


def test_prose_around_valid_json_is_still_valid():
    parsed = parse_reply('Here: {"keywords": ["a"], "context": "x"} done', LIST_SCHEMA)
    assert parsed.valid is True


def test_truncated_reply_is_invalid_but_usable():
    parsed = parse_reply('{"keywords": ["a", "b"], "context": "The dep', LIST_SCHEMA)
    assert parsed.valid is False
    assert parsed.repaired is True
    assert parsed.data == {"keywords": ["a", "b"]}


def test_oversized_fields_make_the_reply_invalid_but_keep_the_data():
    reply = {"keywords": ["a", "b", "c", "d"], "context": "x" * 200}
    parsed = parse_reply(json.dumps(reply), LIST_SCHEMA)
    assert parsed.valid is False
    assert any("more than 3" in p for p in parsed.problems)
    assert any("longer than 80" in p for p in parsed.problems)
    assert parsed.data["keywords"] == ["a", "b", "c", "d"]


def test_missing_required_field_is_invalid():
    parsed = parse_reply('{"keywords": ["a"]}', LIST_SCHEMA)
    assert parsed.valid is False
    assert any("missing 'context'" in p for p in parsed.problems)
    assert parsed.data == {"keywords": ["a"]}


def test_wrong_types_are_coerced():
    parsed = parse_reply('{"keywords": "alpha, beta; gamma", "context": ["first", "second"]}', LIST_SCHEMA)
    assert parsed.valid is False
    assert parsed.data == {"keywords": ["alpha", " beta", " gamma"], "context": "first"}


def test_unknown_keys_are_not_passed_on():
    parsed = parse_reply('{"keywords": [], "context": "x", "links": ["evil"], "content": "rewritten"}', LIST_SCHEMA)
    assert set(parsed.data) == {"keywords", "context"}


def test_bare_list_for_single_list_schema():
    schema = {"type": "object", "properties": {"links": {"type": "array", "items": {"type": "integer"}}}}
    parsed = parse_reply("[1, 2]", schema)
    assert parsed.valid is False
    assert parsed.data == {"links": [1, 2]}


def test_integer_items_from_strings_and_unknown_items_kept_for_the_caller():
    schema = prompts.link_schema(3, 2)
    parsed = parse_reply('{"links": ["2", "abc", 7]}', schema)
    assert parsed.valid is False
    assert parsed.data == {"links": [2, "abc", 7]}


def test_validate_enum_pattern_and_bool_not_integer():
    assert validate(3, {"type": "integer", "enum": [1, 2]})
    assert validate(True, {"type": "integer"})
    assert validate("a]b", prompts._item_schema(10))
    assert validate("fine words", prompts._item_schema(10)) == []
    assert validate("x" * 11, prompts._item_schema(10))


def test_validate_additional_properties():
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False}
    assert validate({"a": "x", "b": 1}, schema) == ["$: unexpected 'b'"]


def assert_sound(parsed, schema) -> None:
    """What every Parsed promises: valid means usable data that meets the schema and no
    problem; anything else says what was wrong."""
    assert parsed.valid is (not parsed.problems and not parsed.repaired)
    if parsed.valid:
        assert isinstance(parsed.data, dict) and validate(parsed.data, schema) == []
    else:
        assert parsed.problems
    assert parsed.data is None or set(parsed.data) <= set(schema["properties"])


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_parse_reply_never_raises(text):
    assert_sound(parse_reply(text, LIST_SCHEMA), LIST_SCHEMA)


@settings(max_examples=100, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=20))
def test_parse_reply_never_raises_on_any_json(value):
    assert_sound(parse_reply(json.dumps(value), LIST_SCHEMA), LIST_SCHEMA)
    schema = prompts.construct_schema(["keywords", "tags", "context"])
    cut = parse_reply(json.dumps(value)[:-1], schema)  # cut off: never valid
    assert_sound(cut, schema)
    assert not cut.valid


def test_parse_reply_survives_pathological_nesting():
    parsed = parse_reply('{"keywords": ' + "[" * 100_000 + "]" * 100_000 + "}", LIST_SCHEMA)
    assert_sound(parsed, LIST_SCHEMA)
    assert not parsed.valid


@settings(max_examples=200, deadline=None)
@given(st.fixed_dictionaries({"keywords": st.lists(st.text(max_size=24), max_size=4), "context": st.text(max_size=90)}))
def test_a_reply_is_valid_exactly_when_it_meets_the_schema(value):
    parsed = parse_reply(f"Here you are:\n{json.dumps(value)}", LIST_SCHEMA)
    assert parsed.valid is (validate(value, LIST_SCHEMA) == [])
    assert parsed.data == value  # well-typed: kept as it is, valid or not


# -- cleaning -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("the the the cat", "the cat"),
        ("the cat sat on the mat", "the cat sat on the mat"),
        ("I know that that is true", "I know that that is true"),
        ("green tea green tea green tea", "green tea"),
        ("a b c a b c", "a b c"),
        ("Tea, tea, tea, tea", "Tea,"),
        ("hahahahahaha", "ha"),
        ("loop loop loop loop loop loop loop loop", "loop"),
    ],
)
def test_collapse_repeats(text, expected):
    assert collapse_repeats(text) == expected


def test_degenerate_text():
    assert is_degenerate("go go go go go go go go go go")  # after no collapse: few distinct words
    assert is_degenerate("]}{}[]][ ,,,")
    assert is_degenerate("")
    assert not is_degenerate("A perfectly ordinary sentence about tea.")


def test_clean_list_dedupes_strips_and_caps():
    items = ["  Eiffel Tower ", "eiffel tower", "", "Paris.", "#travel", "PARIS", "x" * 60, "a b c d e f", "1889", "World's Fair"]
    assert clean_list(items, max_items=4) == ["Eiffel Tower", "Paris", "travel", "1889"]


def test_clean_list_drops_markup_and_repetition():
    items = ['"]}\n```\nProvide a new', "green_tea", "tea tea tea tea", "<b>bold</b>", "a|b", 42, None, {"x": 1}]
    assert clean_list(items) == ["green_tea", "tea", "42"]


def test_clean_list_treats_separators_alike_and_honours_exclude():
    assert clean_list(["green tea", "green-tea", "Green_Tea"]) == ["green tea"]
    assert clean_list(["ci", "jenkins", "github actions"], exclude=["CI"]) == ["jenkins", "github actions"]


def test_clean_list_accepts_a_string_and_rejects_other_things():
    assert clean_list("single") == ["single"]
    assert clean_list(None) == []
    assert clean_list({"a": 1}) == []


def test_clean_item_keeps_plus_and_hash_inside():
    assert clean_item("C++") == "C++"
    assert clean_item("C#") == "C#"
    assert clean_item("Node.js") == "Node.js"


def test_clean_sentence_takes_the_first_sentence():
    assert clean_sentence("Context: The tower is tall. It is in Paris.") == "The tower is tall."


def test_clean_sentence_bounds_length_on_a_word():
    out = clean_sentence("word " * 50, max_words=30)
    assert out == ""  # a loop, not a sentence
    long = " ".join(f"w{i}" for i in range(50))
    out = clean_sentence(long, max_words=10)
    assert out.endswith("…") and len(out.split()) == 10
    out = clean_sentence("Short words only here and then some more words follow", max_chars=30)
    assert len(out) <= 31 and out.endswith("…")


def test_clean_sentence_collapses_loops_and_adds_a_full_stop():
    assert clean_sentence("The the the deploy failed") == "The deploy failed."


@pytest.mark.parametrize("bad", [None, 3, ["a"], "", "   ", '{"x": 1}', "```code```", "!!! ??? ..."])
def test_clean_sentence_rejects_non_sentences(bad):
    assert clean_sentence(bad) == ""


# -- fakes ----------------------------------------------------------------------------


def test_scripted_llm_replays_in_order_and_records_calls():
    llm = ScriptedLLM(["raw text", {"a": 1}, lambda messages, schema: {"n": len(messages)}, None])
    msgs = [{"role": "user", "content": "hello"}]
    assert llm.complete_json(msgs, {"type": "object"}, max_tokens=5) == "raw text"
    assert json.loads(llm.complete_json(msgs, {}, max_tokens=5)) == {"a": 1}
    assert json.loads(llm.complete_json(msgs, {}, max_tokens=5)) == {"n": 1}
    assert llm.complete_json(msgs, {}, max_tokens=5) is None
    assert llm.complete_json(msgs, {}, max_tokens=5) is None  # queue empty: default
    assert len(llm.calls) == 5
    assert llm.calls[0].schema == {"type": "object"}
    assert llm.calls[0].max_tokens == 5
    assert "hello" in llm.calls[0].prompt
    assert llm.identity == "fake"


def test_scripted_llm_calls_are_copies():
    llm = ScriptedLLM(["x"])
    msgs = [{"role": "user", "content": "a"}]
    llm.complete_json(msgs, {}, max_tokens=1)
    msgs[0]["content"] = "changed"
    assert llm.calls[0].messages[0]["content"] == "a"


def test_no_llm():
    llm = NoLLM()
    assert llm.identity == "none"
    assert llm.complete_json([], {}, max_tokens=10) is None


@pytest.mark.parametrize(
    "schema",
    [
        prompts.construct_schema(["keywords", "tags", "context"]),
        prompts.construct_schema(["context"]),
        prompts.link_schema(4, 2),
        prompts.evolve_schema(3),
    ],
)
def test_schema_example_is_parseable(schema):
    reply = json.dumps(schema_example([], schema))
    parsed = parse_reply(reply, schema)
    assert parsed.data is not None
    assert set(parsed.data) == set(schema["required"])


# -- prompts --------------------------------------------------------------------------


def test_few_shot_answers_satisfy_their_schemas():
    for messages, schema in [
        (prompts.construct_messages("A note.", ["keywords", "tags", "context"]), prompts.construct_schema(["keywords", "tags", "context"])),
        (prompts.construct_messages("A note.", ["tags"], keywords=["note"]), prompts.construct_schema(["tags"])),
        (prompts.link_messages("n", [], ["a", "b", "c"]), prompts.link_schema(3, 2)),
        (prompts.evolve_messages("n", [], "", [("o", "", []), ("p", "", [])]), prompts.evolve_schema(2)),
    ]:
        answers = [m["content"] for m in messages if m["role"] == "assistant"]
        assert answers
        for answer in answers:
            assert validate(json.loads(answer), schema) == [], answer


def test_construct_prompt_asks_only_for_missing_fields():
    msgs = prompts.construct_messages("Tea is good.", ["context"], keywords=["tea"], tags=["drinks"])
    assert "keywords:" not in msgs[0]["content"]
    assert "context:" in msgs[0]["content"]
    assert json.loads(msgs[2]["content"]).keys() == {"context"}
    assert "Keywords: tea" in msgs[-1]["content"]
    assert "Tags: drinks" in msgs[-1]["content"]
    assert set(prompts.construct_schema(["context"])["properties"]) == {"context"}


def test_long_note_is_clipped_in_prompts():
    msgs = prompts.construct_messages("word " * 2000, ["context"])
    assert len(msgs[-1]["content"]) < prompts.MAX_NOTE_CHARS + 50
