"""ingest/sources/bodies.py: a body read as blocks of whole lines, or as the elements of a
JSON array one at a time, however its chunks are cut."""

import json

import pytest

from ingest.sources.bodies import Body, BodyError


def cut(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


@pytest.mark.parametrize("chunk", [1, 2, 5, 1000])
def test_blocks_hold_whole_lines_numbered_as_in_the_body(chunk: int) -> None:
    blocks = list(Body(cut(b"a\nbb\r\nccc", chunk)).blocks(3))
    assert [(b.data, b.first_line_no, b.start_offset) for b in blocks] in (
        [(b"a\n", 1, 0), (b"bb\r\n", 2, 2), (b"ccc\n", 3, 6)],
        [(b"a\nbb\r\n", 1, 0), (b"ccc\n", 3, 6)],
        [(b"a\nbb\r\nccc\n", 1, 0)],
    )
    assert b"".join(b.data for b in blocks) == b"a\nbb\r\nccc\n"


def test_a_line_longer_than_a_block_is_one_block() -> None:
    line = b"x" * 50 + b"\n"
    assert [b.data for b in Body(cut(line + b"y\n", 1)).blocks(10)] == [line, b"y\n"]


def test_the_shape_is_told_from_the_first_byte_that_is_not_whitespace() -> None:
    assert Body([b"  ", b"\n", b" [1]"]).is_array
    assert not Body([b'{"a": [1]}\n']).is_array
    assert Body([b" \n "]).is_empty and Body([]).is_empty


ITEMS = [{"a": i, "s": "é" * i, "n": [1, 2.5, None, True]} for i in range(40)] + [
    123456789,
    "x",
    [],
    {},
]


@pytest.mark.parametrize("chunk", [1, 3, 7, 100, 10**6])
def test_array_elements_come_one_at_a_time_however_the_chunks_are_cut(chunk: int) -> None:
    raw = b" \n" + json.dumps(ITEMS, ensure_ascii=False).encode() + b"\n "
    elements = list(Body(cut(raw, chunk)).elements())
    assert [e.value for e in elements] == ITEMS
    assert [e.index for e in elements] == list(range(len(ITEMS)))
    assert elements[-4].chars == len("123456789")


def test_batches_of_elements_are_cut_by_their_size() -> None:
    batches = list(Body([b'[{"a":1}, 22, "xyz"]']).element_batches(5))
    assert [[(e.value, e.index, e.chars) for e in b] for b in batches] == [
        [({"a": 1}, 0, 7)],
        [(22, 1, 2), ("xyz", 2, 5)],
    ]
    assert list(Body([b"[]"]).elements()) == []


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"[1,2", "body is not a valid JSON array at character 4: expected ',' or ']'"),
        (b"[1 2]", "body is not a valid JSON array at character 3: expected ',' or ']'"),
        (b"[1,]", "body is not a valid JSON array at character 3: Expecting value"),
        (b"[1] x", "body is not a valid JSON array at character 4: data after the array"),
        (b"[NaN]", "body holds NaN, which is not JSON"),
        (b"[1, Infinity]", "body holds Infinity, which is not JSON"),
        (b'["\xff"]', "body is not UTF-8"),
        (b"[", "body is not a valid JSON array at character 1: Expecting value"),
    ],
)
@pytest.mark.parametrize("chunk", [1, 3, 100])
def test_a_broken_array_is_one_line_saying_where(body: bytes, reason: str, chunk: int) -> None:
    with pytest.raises(BodyError) as caught:
        list(Body(cut(body, chunk)).elements())
    assert str(caught.value) == reason


def test_an_element_past_the_bound_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from ingest.sources import bodies

    monkeypatch.setattr(bodies, "MAX_ELEMENT_BYTES", 100)
    with pytest.raises(BodyError, match="an array element is larger than 0 MiB"):
        list(Body(cut(b'["' + b"x" * 1000 + b'"]', 10)).elements())


def test_integers_past_64_bits_are_read_as_orjson_reads_a_line() -> None:
    # orjson (the JSON-lines path) keeps -2^63 .. 2^64 - 1 as integers and reads the rest as
    # floats; an array body must hand the parsers the same values, which orjson can write.
    raw = (
        b"[-9223372036854775809, -9223372036854775808, 18446744073709551615, 18446744073709551616]"
    )
    values = [e.value for e in Body([raw]).elements()]
    assert values == [-9.223372036854775809e18, -(2**63), 2**64 - 1, 1.8446744073709551616e19]
    assert [type(v) for v in values] == [float, int, int, float]
