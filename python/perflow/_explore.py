"""Explorations, as the CLI runs them: costs measured in profiles (``perflow costs``),
sweeps (``perflow sweep``) and searches (``perflow search``).

Each calls the C++ the command calls, without the GIL, and returns what the command writes:
the costs config, the sweep's JSON Lines rows, the search's plans. Options are the CLI's,
as keyword arguments (``--rank-stage`` is ``rank_stage``); errors are ``perflow.Error``
subclasses with the CLI's message, except that a bad argument (``perflow.OptionError``)
is named as the keyword argument it is (``rank_stage='0-1'`` where the CLI says
``--rank-stage '0-1'``).
"""

import json
import numbers
import os
import warnings

from . import _perflow
from ._source import path, source, text

__all__ = ["costs", "costs_json", "search", "sweep"]

# --jobs takes 1 to 4096 threads; None is the CLI's default, every core (0 below).
_MAX_JOBS = 4096


def _path(value, what):
    """A path as the CLI takes it (str, bytes or os.PathLike, relative to the current
    directory), as the bytes the C++ side opens (_source.path)."""
    if isinstance(value, (str, bytes, os.PathLike)):
        return path(value, what)
    raise TypeError(f"{what}: expected a path (str, bytes or os.PathLike), found "
                    f"{type(value).__name__}")


def _profiles(paths):
    """PROFILE...: one path, or a list of them."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        return [_path(paths, "paths")]
    if not isinstance(paths, (list, tuple)):
        raise TypeError("paths: expected a profile's path or a list of paths, found "
                        f"{type(paths).__name__}")
    if not paths:
        raise ValueError("paths: expected at least one profile")
    return [_path(p, "paths") for p in paths]


def _name(value, what):
    """A name option (--preset, --pattern, --schedule) as the CLI's text; "" is not given."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TypeError(f"{what}: expected a str, found {type(value).__name__}")
    return text(value, what)


def _whole(value, what):
    """A whole number option (--stages, --microbatches, ...); None is not given. Its range is
    checked in C++ (a perflow.OptionError naming the argument)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{what}: expected a whole number (int), found {type(value).__name__}")
    return int(value)


def _factor(value, what):
    """A number option (--scale); None is not given."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{what}: expected a number, found {type(value).__name__}")
    return float(value)


def _rank_stages(rank_stage):
    """--rank-stage: {rank: stage}, "R=S" or "R=S,R=S", or a list of such strings."""
    if rank_stage is None:
        return []
    if isinstance(rank_stage, dict):
        return [text(f"{rank}={stage}", "rank_stage") for rank, stage in rank_stage.items()]
    if isinstance(rank_stage, str):
        rank_stage = [rank_stage]
    if isinstance(rank_stage, (list, tuple)) and all(isinstance(r, str) for r in rank_stage):
        # As the CLI splits each --rank-stage value at commas.
        return [item for r in rank_stage for item in text(r, "rank_stage").split(",")]
    raise TypeError("rank_stage: expected a dict {rank: stage}, 'RANK=STAGE' or a list of "
                    f"'RANK=STAGE' strings, found {type(rank_stage).__name__}")


def _jobs(jobs):
    if jobs is None:
        return 0
    if isinstance(jobs, bool) or not isinstance(jobs, numbers.Integral) \
            or not 1 <= jobs <= _MAX_JOBS:
        raise ValueError(f"jobs: expected a whole number from 1 to {_MAX_JOBS}, found {jobs!r}")
    return int(jobs)


def _document(config, what, keys_at):
    """(source, file, is_path, order) for the C++ side: a path is read there, as the CLI
    reads it; a dict (named "<dict>") or JSON text ("<string>") goes as text, with the keys
    of the object at `keys_at` in the order written, which the C++ JSON objects forget."""
    document, file, is_path = source(config, what)
    if is_path:
        return document, file, True, []
    try:
        # As the C++ reads it (a dict's non-str keys as json.dumps writes them).
        node = json.loads(document)
        for key in keys_at:
            node = node.get(key) if isinstance(node, dict) else None
        # Keys that are not text (an escaped lone surrogate) are the C++ parser's to report.
        return document, file, False, [text(k, what) for k in node] \
            if isinstance(node, dict) else []
    except (ValueError, RecursionError):
        return document, file, False, []  # the C++ reports where the text is wrong


def costs_json(paths, preset=None, pattern=None, rank_stage=None, schedule=None, stages=None,
               microbatches=None, scale=None, layers_per_stage=None, profiled_layers=None):
    """The config ``perflow costs PROFILE... -o costs.json`` writes, as text, byte for byte.

    ``paths`` is a profile's path or a list of them (one per rank). The other arguments are
    the CLI's options: ``preset`` or ``pattern`` (the markers), ``rank_stage`` ({rank:
    stage}, ``"0=1,1=0"`` or a list of ``"R=S"``), ``schedule``, ``stages``,
    ``microbatches``, and ``scale`` or ``layers_per_stage`` with ``profiled_layers``. The
    config is checked as ``perflow simulate`` checks it; a config the schedule refuses is
    named ``<costs>`` in the message, where the CLI names its output file.
    """
    text, notes = _perflow._costs_json(
        _profiles(paths), _name(preset, "preset"), _name(pattern, "pattern"),
        _rank_stages(rank_stage), _name(schedule, "schedule"), _whole(stages, "stages"),
        _whole(microbatches, "microbatches"), _factor(scale, "scale"),
        _whole(layers_per_stage, "layers_per_stage"),
        _whole(profiled_layers, "profiled_layers"))
    # The CLI's "notes:" (what was assumed, e.g. W treated as free): warnings, so that the
    # return value stays the config text.
    for note in notes:
        warnings.warn(note, CostsNote, stacklevel=2)
    return text


class CostsNote(UserWarning):
    """What ``perflow.costs`` assumed or could not measure: the notes ``perflow costs``
    prints (``warnings.catch_warnings(record=True)`` collects them)."""


def costs(paths, preset=None, pattern=None, rank_stage=None, schedule=None, stages=None,
          microbatches=None, scale=None, layers_per_stage=None, profiled_layers=None):
    """The config ``perflow costs`` writes, as a dict: ``perflow.simulate(costs(...))`` runs
    it. Arguments as for ``costs_json``."""
    return json.loads(costs_json(paths, preset, pattern, rank_stage, schedule, stages,
                                 microbatches, scale, layers_per_stage, profiled_layers))


def sweep(sweep_config, jobs=None):
    """Every run of a sweep: the rows ``perflow sweep SWEEP --jsonl FILE`` writes, as dicts in
    run order (``run``, each axis's pointer with its value, then ``makespan_ns`` ...
    ``error``; an invalid combination is a row with its ``error``).

    ``sweep_config`` is a path (a base path in it is relative to the file, as for the CLI),
    a dict (named ``<dict>`` in errors; a base path is relative to the current directory)
    or JSON text. ``jobs`` is ``--jobs``: threads to run on (default: every core); the rows
    are the same whatever it is.
    """
    source, file, is_path, order = _document(sweep_config, "sweep_config", ["axes"])
    text = _perflow._sweep_jsonl(source, file, is_path, order, _jobs(jobs))
    # Split at "\n" only: a row's strings may hold other line separators (U+2028) unescaped.
    return [json.loads(line) for line in text.split("\n") if line]


def search(search_config, jobs=None):
    """The best plans of a model on a cluster: what ``perflow search SEARCH -o PLANS.json``
    writes, as a dict (``considered``, ``pruned``, ..., ``best`` and ``pareto``, each plan
    with its ``config``).

    ``search_config`` is a path, a dict (named ``<dict>`` in errors) or JSON text; ``jobs``
    is ``--jobs`` (default: every core; the plans are the same whatever it is).
    """
    source, file, is_path, order = _document(search_config, "search_config",
                                             ["cluster", "gpus"])
    return json.loads(_perflow._search_json(source, file, is_path, order, _jobs(jobs)))
