"""A recorded answer's ``.npz`` file, checked before a byte of its arrays is loaded.

The hidden cells write each answer as ``<case>.npz`` (:func:`coursedata.grading.record`), but the
folder they write into belongs to the student's kernel: student code can write any file there,
under any name. So a results file is data from an adversary, and it is read in two steps.
:func:`examine` reads only the zip's central directory and each member's ``.npy`` header (its
dtype and shape, never its data) and refuses, with a message for the student, a file that is
not what ``record`` writes:

- a zip whose central directory is larger than :data:`MAX_DIRECTORY_BYTES` or that uses the
  zip64 extension (``record`` writes a few small members);
- a member not named ``out``, or ``out_0``, ``out_1``, ... in order, or more members than the
  case has outputs (where the case has one output, a tuple of values is that output's entries,
  :func:`coursedata.results.unpack`: refused only beyond its limit of values);
- a member that is not a ``.npy`` array of version 1.0 or 2.0, or whose dtype is not one of the
  kinds ``record`` writes (:data:`KINDS`: booleans, integers, floats, complex numbers; no strings,
  bytes, records, objects or sub-arrays), or whose stored size is not its header's;
- a member with more values than its :class:`Limits` allow, checked against the shape in its
  header, so that a tiny compressed file declaring forty million booleans costs nothing.

Only then does :func:`load` read the arrays (``allow_pickle=False``). The limits come from the
declared outputs (:func:`autograder.checks.answers.Answers`): a value may hold :data:`SLACK`
times the reference's number of values, and never fewer than :data:`MIN_VALUES`.

The zip format: PKWARE's APPNOTE.TXT (sections 4.3.12, the central directory header, and
4.3.16, the end of central directory record); the ``.npy`` header: NumPy's
``numpy/lib/format.py`` (``read_magic``, ``read_array_header_1_0``/``_2_0``).
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.lib import format as npy

__all__ = [
    "KINDS",
    "MIN_VALUES",
    "SLACK",
    "DEFAULT_VALUES",
    "MAX_DIRECTORY_BYTES",
    "Limits",
    "Member",
    "TooManyValues",
    "UnreadableResult",
    "examine",
    "load",
]

#: The dtype kinds :func:`coursedata.grading.record` writes: bool, int, unsigned, float, complex.
KINDS = "biufc"
#: The widest item of those kinds (complex long double).
MAX_ITEMSIZE = 32
#: A value may hold this many times the reference's number of values (a wrong shape still gets
#: its message), and never fewer than :data:`MIN_VALUES`.
SLACK = 16
MIN_VALUES = 2**16
#: The values a member may hold when the case declares no reference (a hand-written check).
DEFAULT_VALUES = 2**22
#: The members a file may hold when the case declares no outputs.
DEFAULT_MEMBERS = 32
#: A central directory larger than this is refused before it is parsed (``record``'s is a few
#: hundred bytes).
MAX_DIRECTORY_BYTES = 64 * 2**10

_END = b"PK\x05\x06"  # end of central directory record (APPNOTE 4.3.16)
_ZIP64_LOCATOR = b"PK\x06\x07"  # zip64 end of central directory locator (APPNOTE 4.3.15)
_NAME = re.compile(r"out(?:_(0|[1-9][0-9]{0,3}))?\.npy")


class UnreadableResult(ValueError):
    """A results file that is not what ``record`` writes; the message is for the student.

    ``hint`` says what to return instead (:func:`coursedata.results.read` adds it).
    """

    hint = "return numbers or numpy arrays"


class TooManyValues(UnreadableResult):
    """A results file holding more values than the case's answer has."""

    hint = "return only the values the question asks for"


@dataclass(frozen=True)
class Limits:
    """How large a results file's arrays may be.

    Attributes
    ----------
    values : tuple of int
        The most values each output may hold, in order; the number of outputs is its length.
    """

    values: tuple[int, ...]

    @classmethod
    def of_sizes(cls, sizes: Sequence[int]) -> Limits:
        """The limits for outputs whose reference values hold ``sizes`` values."""
        return cls(tuple(max(MIN_VALUES, SLACK * int(n)) for n in sizes))

    @classmethod
    def default(cls) -> Limits:
        """The limits of a case with no declared outputs."""
        return cls((DEFAULT_VALUES,) * DEFAULT_MEMBERS)

    def of(self, index: int) -> int:
        return self.values[min(index, len(self.values) - 1)]


@dataclass(frozen=True)
class Member:
    """One array of a results file, as its ``.npy`` header describes it."""

    key: str
    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=object))


def _directory_size(path: Path) -> int:
    """The size of the zip's central directory, from its end record (refusing zip64)."""
    with open(path, "rb") as f:
        f.seek(0, 2)
        length = f.tell()
        tail = min(length, 22 + 2**16)
        f.seek(length - tail)
        data = f.read(tail)
    at = data.rfind(_END)
    if at < 0 or len(data) - at < 22:
        raise UnreadableResult("it is not a zip file")
    if at >= 20 and data[at - 20 : at - 16] == _ZIP64_LOCATOR:
        raise UnreadableResult("it uses the zip64 extension")
    return int.from_bytes(data[at + 12 : at + 16], "little")


def _header(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> tuple[tuple[int, ...], np.dtype, int]:
    """``(shape, dtype, header length)`` of one ``.npy`` member, its data left unread."""
    with zf.open(info) as fp:
        version = npy.read_magic(fp)
        if version == (1, 0):
            shape, _, dtype = npy.read_array_header_1_0(fp)
        elif version == (2, 0):
            shape, _, dtype = npy.read_array_header_2_0(fp)
        else:
            raise UnreadableResult(f"{info.filename} is a .npy file of version {version}")
        return tuple(int(n) for n in shape), dtype, fp.tell()


#: The kinds of value record never saves, in fixed words: a refusal names no dtype as written,
#: since a structured dtype's field names are text the student's code chose.
_KIND_WORDS = {
    "U": "text",
    "S": "bytes",
    "V": "raw bytes or records",
    "O": "Python objects",
    "M": "dates",
    "m": "time spans",
}


def _kind(dtype: np.dtype) -> str:
    """The kind of a refused dtype in :data:`_KIND_WORDS`' words."""
    if dtype.shape != ():
        return "arrays within each value"
    if dtype.kind in KINDS:
        return f"numbers of {dtype.itemsize} bytes each"
    return _KIND_WORDS.get(dtype.kind, "an unknown kind")


def _what(key: str) -> str:
    """A member's name in the student's words."""
    return "the return value" if key == "out" else f"element {key[4:]} of the returned tuple"


def _member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> Member:
    try:
        shape, dtype, offset = _header(zf, info)
    except UnreadableResult:
        raise
    except Exception:  # noqa: BLE001 - any malformed header is the file's fault
        # numpy's text quotes the header, which the student's code wrote: not shown
        raise UnreadableResult(f"{info.filename} has no readable array header") from None
    key = info.filename[: -len(".npy")]
    what = _what(key)
    if dtype.kind not in KINDS or dtype.shape != () or dtype.itemsize > MAX_ITEMSIZE:
        raise UnreadableResult(
            f"{what} holds values of type {_kind(dtype)} (record saves numbers: booleans, integers, "
            f"floats or complex numbers)"
        )
    member = Member(key, shape, dtype)
    if member.size > limit:
        raise UnreadableResult(
            f"{what} has far more values than this answer holds (at most {limit:,} are read)"
        )
    if info.file_size != offset + member.size * dtype.itemsize:
        raise UnreadableResult(f"{what} does not hold the values its header declares")
    return member


def examine(path: str | Path, limits: Limits) -> list[Member]:
    """The arrays of the results file ``path``, checked without loading them.

    Parameters
    ----------
    path : path-like
        A ``<case>.npz`` in the student's results folder.
    limits : Limits
        How many outputs, and how many values each, the case's answer may have.

    Returns
    -------
    list of Member
        ``out``, or ``out_0``, ``out_1``, ... in order.

    Raises
    ------
    UnreadableResult
        With a message for the student (see the module docstring).
    OSError
        The file cannot be read.
    """
    path = Path(path)
    if _directory_size(path) > MAX_DIRECTORY_BYTES:
        raise UnreadableResult("its zip directory is too large")
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, ValueError, EOFError):
        raise UnreadableResult("it is not a zip file") from None
    with zf:
        infos = zf.infolist()
        names = [i.filename for i in infos]
        if not all(_NAME.fullmatch(n) for n in names) or not names:
            raise UnreadableResult("it holds arrays not named as record names them (out_0, ...)")
        if names != ["out.npy"] and names != [f"out_{i}.npy" for i in range(len(names))]:
            raise UnreadableResult("its arrays are not out, or out_0, out_1, ... in order")
        one = len(limits.values) == 1  # one array's entries returned as a tuple are that array
        if len(names) > (limits.values[0] if one else len(limits.values)):
            raise TooManyValues(
                f"it holds {len(names)} values where the answer has {len(limits.values)}"
            )
        members = [_member(zf, info, limits.of(i)) for i, info in enumerate(infos)]
        if one and sum(m.size for m in members) > limits.values[0]:
            raise UnreadableResult(
                f"it holds far more values than this answer holds (at most {limits.values[0]:,} "
                "are read)"
            )
        return members


def load(path: str | Path, members: Sequence[Member]) -> tuple[np.ndarray, ...]:
    """The arrays :func:`examine` found in ``path``, loaded (no pickles)."""
    with np.load(path, allow_pickle=False) as z:
        out = tuple(np.array(z[m.key]) for m in members)
    for m, value in zip(members, out):
        if value.shape != m.shape or value.dtype != m.dtype:  # the file changed in between
            raise UnreadableResult(f"{m.key} changed while it was read")
    return out
