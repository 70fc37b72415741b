"""A recorded answer's ``.npz`` file is checked from its zip directory and ``.npy`` headers
before its arrays are loaded (:mod:`autograder.checks.results_file`).

Formats as their owners define them: the zip's end of central directory record and zip64
locator in PKWARE's APPNOTE.TXT (4.3.15, 4.3.16); the ``.npy`` header in NumPy's
``numpy/lib/format.py``. The honest files are written by the protocol's own ``record``.
"""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

from autograder.checks import results_file as rf
from coursedata.grading import RESULTS_ENV, record

LIMITS = rf.Limits.of_sizes([240, 6])


def _recorded(tmp_path, monkeypatch, value):
    monkeypatch.setenv(RESULTS_ENV, str(tmp_path))
    record("case", lambda: value)
    return tmp_path / "case.npz"


@pytest.mark.parametrize(
    "value",
    [
        (np.ones((40, 6)), np.arange(6.0)),
        (np.ones((40, 6), bool), np.arange(6)),
        (np.ones((40, 6), np.complex128), np.arange(6, dtype=np.uint8)),
        (np.float32(3.0), np.int16(2)),
    ],
)
def test_what_record_writes_is_read_as_written(tmp_path, monkeypatch, value):
    path = _recorded(tmp_path, monkeypatch, value)
    members = rf.examine(path, LIMITS)
    loaded = rf.load(path, members)
    assert [m.key for m in members] == ["out_0", "out_1"]
    for got, want in zip(loaded, value):
        np.testing.assert_array_equal(got, want)
        assert got.dtype == np.asarray(want).dtype


def test_one_value_is_out(tmp_path, monkeypatch):
    path = _recorded(tmp_path, monkeypatch, np.arange(5.0))
    assert [m.key for m in rf.examine(path, rf.Limits.of_sizes([5]))] == ["out"]


def _refused(path, limits=LIMITS) -> str:
    with pytest.raises(rf.UnreadableResult) as info:
        rf.examine(path, limits)
    return str(info.value)


def test_a_shape_beyond_the_limit_is_refused_from_its_header(tmp_path):
    path = tmp_path / "case.npz"
    np.savez_compressed(path, out_0=np.zeros(rf.MIN_VALUES * 40, bool), out_1=np.zeros(6))
    assert path.stat().st_size < 100_000
    refused = _refused(path)
    assert f"at most {LIMITS.of(0):,} are read" in refused
    assert "2,621,440" not in refused  # a size the student's code chose is no message


def test_a_refusal_quotes_nothing_the_students_code_wrote(tmp_path):
    """Issue 37: a structured dtype's field names and a header's text are the student's: a
    refusal states the kind of value in fixed words and never the header."""
    path = tmp_path / "case.npz"
    secret = "aGlkZGVu"
    np.savez(path, out=np.zeros(2, dtype=[(secret, "f8")]))
    assert secret not in _refused(path, rf.Limits.of_sizes([2]))
    buffer = io.BytesIO(b"\x93NUMPY\x01\x00" + (40).to_bytes(2, "little")
                        + f"{{'{secret}': 1}}".ljust(39).encode() + b"\n")
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("out.npy", buffer.getvalue())
    refused = _refused(path, rf.Limits.of_sizes([2]))
    assert "no readable array header" in refused and secret not in refused


def test_a_header_that_lies_about_its_data_is_refused(tmp_path):
    """A member whose header declares more values than it stores (or fewer)."""
    path = tmp_path / "case.npz"
    np.savez(path, out_0=np.zeros((40, 6)), out_1=np.zeros(6))
    with zipfile.ZipFile(path) as z:
        data, second = z.read("out_0.npy"), z.read("out_1.npy")
    forged = data.replace(b"(40, 6)", b"(50, 6)")
    assert forged != data
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("out_0.npy", forged)
        z.writestr("out_1.npy", second)
    assert "does not hold the values its header declares" in _refused(path)


@pytest.mark.parametrize("dtype", ["U3", "S3", "V8", "O", "f8,f8", "(3,)f8", "M8[s]", "m8[s]"])
def test_a_dtype_record_never_writes_is_refused(tmp_path, dtype):
    path = tmp_path / "case.npz"
    header = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False,
              "shape": (2,)}
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, header)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("out.npy", buffer.getvalue() + bytes(2 * np.dtype(dtype).itemsize))
    assert "holds values of type" in _refused(path, rf.Limits.of_sizes([2]))


def test_names_count_and_order_are_record_s(tmp_path):
    for names, expected in [(["payload"], "not named"), (["out_1", "out_0"], "in order"),
                            (["out_0", "out_1", "out_2"], "holds 3 values where the answer has 2"),
                            (["out", "out_0"], "in order")]:
        path = tmp_path / "case.npz"
        np.savez(path, **{n: np.zeros(2) for n in names})
        assert expected in _refused(path), names


def test_zip64_and_a_large_directory_are_refused_before_parsing(tmp_path):
    path = tmp_path / "case.npz"
    path.write_bytes(b"junk")
    assert "not a zip file" in _refused(path)
    with zipfile.ZipFile(path, "w") as z:
        for i in range(3000):
            z.writestr(f"out_{i}.npy", b"")
    assert "directory is too large" in _refused(path)
    np.savez(path, out_0=np.zeros(2), out_1=np.zeros(2))
    data = path.read_bytes()
    at = data.rfind(b"PK\x05\x06")
    locator = b"PK\x06\x07" + bytes(16)
    path.write_bytes(data[:at] + locator + data[at:])
    assert "zip64" in _refused(path)


def test_a_function_that_ran_out_of_memory_is_told_the_limit(tmp_path, monkeypatch):
    """A function that asks numpy for more memory than a graded process may use: the message
    the check and the feedback read back says what the limit is."""
    from coursedata.grading import MEMORY_MB, record
    from coursedata.results import AnswerUnavailable, read

    monkeypatch.setenv("GRADER_RESULTS_DIR", str(tmp_path))

    def greedy():
        raise MemoryError("Unable to allocate 2.24 GiB for an array with shape (300000000,)")

    record("greedy", greedy)
    with pytest.raises(AnswerUnavailable, match=f"may use {MEMORY_MB} MB"):
        read(tmp_path, "greedy")


def test_json_nested_past_reading_is_the_students_answer_not_a_fault(tmp_path):
    """A student's code writes an error file and a rules-log line of 200,000 nested brackets:
    read as an unreadable answer and a skipped line, never a RecursionError in the grader (which
    made the submission a grader fault, its zero never recorded)."""
    from coursedata.guard import read_log
    from coursedata.results import AnswerUnavailable, read

    (tmp_path / "center.error.json").write_text("[" * 16_000)
    with pytest.raises(AnswerUnavailable):
        read(tmp_path, "center")
    log = tmp_path / "_rules.jsonl"
    log.write_text('{"event": "installed"}\n' + "[" * 200_000 + "\n")
    assert read_log(log) == [{"event": "installed"}]


@pytest.mark.parametrize("made", ["fifo", "device", "answer_elsewhere"])
@pytest.mark.parametrize("suffix", [".npz", ".error.json"])
def test_a_file_that_is_not_a_regular_file_is_never_opened(tmp_path, monkeypatch, made, suffix):
    """A case's file replaced by a named pipe (opened for reading, it blocks), a link to a
    device that never ends, or a link to a right answer recorded outside the results folder: the
    answer could not be read back, as it is not a regular file; nothing is opened or followed."""
    import os

    from coursedata.results import AnswerUnavailable, read

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    folder = tmp_path / "results"
    folder.mkdir()
    monkeypatch.setenv(RESULTS_ENV, str(elsewhere))
    record("case", lambda: np.ones(3))
    path = folder / f"case{suffix}"
    if made == "fifo":
        os.mkfifo(path)
    else:
        os.symlink("/dev/zero" if made == "device" else elsewhere / "case.npz", path)
    with pytest.raises(AnswerUnavailable, match="not a regular file"):
        read(folder, "case")


def test_a_tuple_of_an_arrays_entries_is_that_array(tmp_path, monkeypatch):
    """A gradient returned as ``return d_a, d_b`` where the answer is one array of shape (2,):
    the grader lets the two members through and the reader stacks them (issue 36: a sequence
    the student chose never costs points), in the grader's and the check's reader alike."""
    from coursedata.results import read, unpack

    path = _recorded(tmp_path, monkeypatch, (np.float64(1.5), np.float64(-2.0)))
    limits = rf.Limits.of_sizes([2])
    grader = unpack(rf.load(path, rf.examine(path, limits)), 1)
    check = unpack(read(tmp_path, "case"), 1)
    for got in (grader, check):
        assert len(got) == 1
        np.testing.assert_array_equal(got[0], [1.5, -2.0])


def test_a_tuple_past_one_arrays_limit_is_refused_and_unlike_shapes_are_named(tmp_path,
                                                                             monkeypatch):
    from coursedata.results import AnswerUnavailable, unpack

    path = tmp_path / "case.npz"
    np.savez(path, **{f"out_{i}": np.zeros(40_000) for i in range(2)})
    assert "far more values" in _refused(path, rf.Limits.of_sizes([2]))
    path = _recorded(tmp_path, monkeypatch, (np.zeros(2), np.float64(3.0)))
    with pytest.raises(AnswerUnavailable, match="should return one value .one array.; it "
                                                "returned 2"):
        unpack(rf.load(path, rf.examine(path, rf.Limits.of_sizes([2]))), 1)
