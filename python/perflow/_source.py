"""What perflow's functions take from Python, checked by one rule for all of them.

- A path is what ``os.fspath`` takes (str, bytes, ``os.PathLike``), encoded as
  ``os.fsencode`` does, so that a name ``os.fsdecode`` made of non-UTF-8 bytes opens the same
  file; an empty path or one holding a NUL character is a ValueError naming the argument.
- Text (names, patterns, titles, JSON text) is a str of valid Unicode: a lone surrogate is a
  ValueError naming the argument.
- A dict is encoded by ``json``; what it cannot encode (bytes, a cycle, NaN, nesting deeper
  than it goes) is a TypeError or ValueError naming the argument and the JSON pointer.

The C++ part applies the same rule to the arguments it takes itself (``_perflow._path``,
``_perflow._text``: perflow/src/values.cpp).
"""
import json
import math
import os
import sys

from . import _perflow

# The values json encodes, as a message lists them.
_JSON_TYPES = "dict, list, tuple, str, int, float, bool or None"


def path(value, what):
    """A path argument as bytes, for the C++ side (which opens exactly those bytes)."""
    return _perflow._path(value, what)


def text(value, what):
    """A str argument, checked to be valid Unicode (and so UTF-8 for the C++ side)."""
    return _perflow._text(value, what)


def _pointer(base, key):
    """The JSON pointer of `key` under `base`, with the key as json.dumps writes it."""
    if isinstance(key, bool) or key is None:
        key = json.dumps(key)
    key = str(key)
    return f"{base}/{key.replace('~', '~0').replace('/', '~1')}"


def _problem(document, what, base):
    """The exception for the first value of `document` json cannot encode, or None."""
    on_path = {}  # id -> pointer of the dicts and lists being walked (a cycle refers back)
    depth = 0
    stack = [(False, document, base, 1)]
    while stack:
        leaving, value, at, level = stack.pop()
        if leaving:
            del on_path[id(value)]
            continue
        depth = max(depth, level)
        name = f"{what}: {at}" if at else what
        where = f"{name}: "
        if isinstance(value, str):
            text(value, name)
        elif isinstance(value, float) and not math.isfinite(value):
            return ValueError(f"{where}{value!r} is not a JSON number")
        elif isinstance(value, (dict, list, tuple)):
            if id(value) in on_path:
                return ValueError(f"{where}refers back to {on_path[id(value)] or 'the top level'} "
                                  "(a cycle), which json cannot encode")
            on_path[id(value)] = at
            stack.append((True, value, at, level))
            if isinstance(value, dict):
                items = []
                for key, item in value.items():
                    if not (key is None or isinstance(key, (str, int, float, bool))):
                        return TypeError(f"{where}a key of type {type(key).__name__}; json "
                                         "takes str, int, float, bool or None keys")
                    if isinstance(key, str):
                        text(key, f"{what}: {at or '/'} (a key)")
                    items.append((key, item))
            else:
                items = list(enumerate(value))
            for key, item in reversed(items):
                stack.append((False, item, _pointer(at, key), level + 1))
        elif not (value is None or isinstance(value, (int, float, bool))):
            return TypeError(f"{where}json cannot encode a value of type "
                             f"{type(value).__name__} (it encodes {_JSON_TYPES})")
    return ValueError(f"{what}: nested {depth} levels deep, deeper than json encodes (the "
                      f"recursion limit is {sys.getrecursionlimit()})")


def to_json(value, what, base=""):
    """`value` as JSON text; what json cannot encode is a TypeError or ValueError naming `what`
    and the JSON pointer (under `base`) of the value at fault."""
    try:
        encoded = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        encoded = None
    # Escaped surrogates: a pair is an astral character, a lone one is not text.
    if encoded is None or "\\ud" in encoded:
        problem = _problem(value, what, base)
        if encoded is None:
            raise problem from None
    return encoded


def source(document, what):
    """(text or path, file, is_path) for the C++ side. A dict goes as JSON text named
    "<dict>" in messages, text starting with "{" as "<string>"; anything else that is a str,
    bytes or os.PathLike is a path, read in C++ so that messages name it as the CLI does."""
    if isinstance(document, dict):
        return to_json(document, what), "<dict>", False
    if isinstance(document, str) and document.lstrip().startswith("{"):
        return text(document, what), "<string>", False
    if isinstance(document, (str, bytes, os.PathLike)):
        return path(document, what), "", True
    raise TypeError(f"{what}: expected a path, a dict or JSON text, found "
                    f"{type(document).__name__}")
