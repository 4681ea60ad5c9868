"""PerFlow: predict how distributed LLM training performs, from Python.

The same C++ core as the ``perflow`` command, in process:

- configs, as the CLI reads them: ``simulate(config)`` returns exactly what
  ``perflow simulate CONFIG --report`` writes, as Python objects; ``load_config(config)``
  gives a ``Config`` whose ``simulate()`` is a ``Run``;
- graphs, as the C++ API builds them: ``build_schedule`` with ``TaskCosts``, the trace
  operators ``filter`` / ``merge`` / ``remap`` / ``scale``, ``simulate_graph`` (ordered or
  greedy);
- explorations, as the CLI runs them: ``costs`` (profiles to a config), ``sweep``, ``search``;
- analyses, as the CLI runs them, as objects with the command's text and picture:
  ``explain``, ``calibrate``, ``compare_measured`` (a prediction against profiles), ``plot``
  (a chart of sweep results);
- a ``Run``'s trace as NumPy columns (``run.columns()``, no copy), its metrics, and its
  timeline (``to_svg()``, ``save("x.png")``, shown inline in a notebook).

Durations are nanoseconds (ints) or strings with a unit ("1315us"). Errors are
``perflow.Error`` subclasses carrying the CLI's message (file, JSON pointer, expectation);
a bad keyword argument is a ``perflow.OptionError`` whose ``.field`` names it.
"""

import collections
import json
import os
import shlex

from . import _perflow
from ._perflow import (KINDS, Calibration, Config, ConfigError, CostTable, CycleError, Error,
                       Explanation, FormatError, GemmFit, Graph, IoError, Link,
                       MeasuredComparison, OptionError, Part, Plot, ProfileError,
                       ResourceError, Run, ScheduleError, TaskCosts, UnknownNameError,
                       build_schedule, filter, format_duration, format_memory, merge, remap,
                       scale, schedules, simulate_graph)
from ._analysis import calibrate, compare_measured, explain, plot
from ._explore import CostsNote, costs, costs_json, search, sweep
from ._source import source
from ._source import text as _text
from ._source import to_json as _to_json

__all__ = [
    "KINDS", "Calibration", "Config", "ConfigError", "CostTable", "CycleError", "Error",
    "Explanation", "FormatError", "GemmFit", "Graph", "IoError", "Link", "MeasuredComparison",
    "OptionError", "Part", "Plot", "ProfileError", "ResourceError", "Run", "ScheduleError",
    "TaskCosts", "UnknownNameError", "build_schedule", "calibrate", "compare_measured",
    "CostsNote", "costs", "costs_json", "explain", "filter", "format_duration", "format_memory",
    "Imported", "import_megatron", "import_torchtitan", "load_config", "merge", "plot", "remap", "scale", "schedules", "search", "simulate",
    "simulate_graph", "simulate_json", "summary", "sweep",
]


def _overrides(set):  # noqa: A002 (the CLI's --set)
    """The overrides as "POINTER=VALUE" strings, from a dict or a list of such strings."""
    if set is None:
        return []
    if isinstance(set, dict):
        overrides = []
        for pointer, value in set.items():
            if not isinstance(pointer, str):
                raise TypeError("set: expected JSON pointers (str) as keys, found "
                                f"{type(pointer).__name__}")
            pointer = _text(pointer, "set")
            overrides.append(f"{pointer}={_to_json(value, 'set', pointer)}")
        return overrides
    if isinstance(set, (list, tuple)) and all(isinstance(o, str) for o in set):
        return [_text(o, "set") for o in set]
    raise TypeError("set: expected a dict {pointer: value} or a list of 'POINTER=VALUE' "
                    f"strings, found {type(set).__name__}")


def load_config(config, set=None):  # noqa: A002
    """A checked ``Config``, as ``perflow simulate`` reads it.

    ``config`` is a dict, JSON text, or a path (str, bytes or ``os.PathLike``); errors name
    ``<dict>``, ``<string>`` or the file. ``set`` overrides fields first, as ``--set`` does:
    ``{"/pipeline/stages": 16}`` or ``["/pipeline/stages=16"]``. A ``Config`` is returned
    as it is (without ``set``). The schedule's rules are checked here too, so that sizes it
    refuses (``zb-h1`` with 5 chunks) are a ``ConfigError`` at the field, not at
    ``simulate()``.
    """
    return _load(config, set, "config")


def _load(config, set, what):  # noqa: A002
    """load_config, with `what` naming the argument in errors (calibrate's ``measured``)."""
    if isinstance(config, Config):
        if set:
            raise TypeError("set: a Config is already checked; pass the dict, text or path")
        return config
    return _perflow._load_config(*source(config, what), _overrides(set))


def simulate_json(config, set=None):  # noqa: A002
    """The report of ``config`` as JSON text, byte for byte the CLI's ``--report`` file."""
    return load_config(config, set).simulate().report_json()


def simulate(config, set=None):  # noqa: A002
    """Simulates ``config`` (dict, JSON text, path or Config); the ``--report`` document."""
    return json.loads(simulate_json(config, set))


def summary(config, set=None):  # noqa: A002
    """The text summary ``perflow simulate CONFIG`` prints."""
    return load_config(config, set).simulate().summary()


Imported = collections.namedtuple("Imported", ["config", "unknown", "warnings"])
Imported.__doc__ = """What ``import_megatron`` and ``import_torchtitan`` return: ``config``, the
config dict ``perflow import`` writes (``simulate(config)`` runs it); ``unknown``, the flags or
keys not recognised, as written; ``warnings``, the settings whose feature PerFlow does not
model, each naming the setting."""


def _count(value, what):
    """An optional count argument: None or a positive int."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what}: expected an int, found {type(value).__name__}")
    if value < 1 or value > 0xFFFFFFFF:
        error = OptionError(f"{what}={value}: expected an integer >= 1")
        error.field = what
        raise error
    return value


def import_megatron(args=(), gpu=None, nodes=None, gpus_per_node=None, vocab=None,
                    args_file=None):
    """A config from Megatron-LM's command-line flags, as ``perflow import megatron`` writes it.

    ``args`` is a list of words (``["--num-layers", "96", ...]``) or one string split as a
    shell splits it; ``args_file`` a file of flags (a launch script's argument lines), read
    first, so that ``args`` override it. ``gpu`` (a device preset) and ``nodes`` are what the
    flags cannot say; ``gpus_per_node`` defaults to 8 (or torchrun's ``--nproc_per_node``),
    ``vocab`` is the tokenizer's vocabulary when the flags give no ``--vocab-size``. Returns
    an ``Imported`` (config, unknown, warnings); raises ``OptionError`` for a missing
    ``gpu`` or ``nodes``, ``Error`` for a malformed flag.
    """
    if isinstance(args, str):
        args = shlex.split(_text(args, "args"), comments=True)
    elif not isinstance(args, (list, tuple)):
        raise TypeError(f"args: expected a list of str or a str, found {type(args).__name__}")
    words = []
    source = ""
    if args_file is not None:
        words = list(_perflow._read_args_file(args_file))
        if not args:
            source = os.fsdecode(os.fspath(args_file))
    words += [_text(a, "args") for a in args]
    text, unknown, warnings = _perflow._import_megatron(
        words, "" if gpu is None else _text(gpu, "gpu"), _count(nodes, "nodes"),
        _count(gpus_per_node, "gpus_per_node"), _count(vocab, "vocab"), source)
    return Imported(json.loads(text), list(unknown), list(warnings))


def import_torchtitan(job, gpu=None, nodes=None, gpus_per_node=None):
    """A config from a torchtitan job file (TOML), as ``perflow import torchtitan`` writes it.

    ``job`` is the file's path; ``gpu``, ``nodes`` and ``gpus_per_node`` as for
    ``import_megatron``. Returns an ``Imported`` (config, unknown keys, warnings); raises
    ``FormatError`` for TOML that does not parse or a value of the wrong type.
    """
    text, unknown, warnings = _perflow._import_torchtitan(
        job, "" if gpu is None else _text(gpu, "gpu"), _count(nodes, "nodes"),
        _count(gpus_per_node, "gpus_per_node"))
    return Imported(json.loads(text), list(unknown), list(warnings))
