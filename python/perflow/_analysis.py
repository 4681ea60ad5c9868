"""Analyses, as the CLI runs them: how /model's costs were derived (``perflow explain``), GEMM
efficiencies fitted to measured costs (``perflow calibrate``), a prediction against profiles
(``perflow compare-measured``) and a chart of sweep results (``perflow plot``).

Each calls the C++ function the command calls, without the GIL, and returns an object with
the command's text (``.text``; ``str()`` of it) and its numbers; the picture, where the
command draws one, is ``.to_svg()``, ``.to_png()`` and ``.save(path)``.
"""

from . import _perflow
from ._explore import _name, _path, _profiles, _rank_stages

__all__ = ["calibrate", "compare_measured", "explain", "plot"]


def _config(config, set=None, what="config"):  # noqa: A002 (the CLI's --set)
    from . import _load  # the package defines it after importing this module
    return _load(config, set, what)


def explain(config, set=None):  # noqa: A002
    """How ``config``'s /model costs, memory and traffic were derived, per stage: an
    ``Explanation`` whose ``.text`` is what ``perflow explain CONFIG`` prints.

    ``config`` is a dict, JSON text, a path or a ``Config``; ``set`` overrides fields as
    ``--set`` does. A config without /model is a ``perflow.ConfigError``.
    """
    return _perflow._explain(_config(config, set))


def calibrate(config, measured):
    """The GEMM efficiency of each GPU type of ``config`` (a /model config with a GPU on
    every stage) fitted to ``measured`` (a config ``perflow costs`` wrote from profiles of
    the same run): a ``Calibration`` with ``.device_types`` (``GemmFit`` each), ``.text``
    (what ``perflow calibrate CONFIG MEASURED`` prints) and ``.json()`` (``--format json``).
    """
    return _perflow._calibrate(_config(config), _config(measured, what="measured"))


def compare_measured(config, paths, preset=None, pattern=None, rank_stage=None,
                     set=None):  # noqa: A002
    """``config``'s predicted step against the execution measured in the profiles at
    ``paths`` (one per rank): a ``MeasuredComparison`` with the step times, ``.stages``,
    ``.text`` (what ``perflow compare-measured CONFIG PROFILE...`` prints), ``.json()``
    (``--format json``) and the picture of both timelines (``.save("x.png")``, ``.to_svg()``).

    ``preset``, ``pattern`` and ``rank_stage`` choose the markers as for ``perflow.costs``;
    ``set`` overrides the config's fields as ``--set`` does.
    """
    return _perflow._compare_measured(
        _config(config, set), _profiles(paths), _name(preset, "preset"),
        _name(pattern, "pattern"), _rank_stages(rank_stage))


def plot(results, x, y, by=None):
    """A chart of the sweep results in the CSV file ``results`` (``perflow sweep --csv``):
    column ``y`` against column ``x``, one line per value of column ``by``. A ``Plot`` with
    ``.caption`` (what ``perflow plot`` prints), ``.series`` and the chart
    (``.save("chart.svg")``, ``.to_svg()``, ``.to_png()``) ``perflow plot -o`` writes.
    """
    for value, what in ((x, "x"), (y, "y")):
        if not isinstance(value, str):
            raise TypeError(f"{what}: expected a column name (str), found {type(value).__name__}")
    return _perflow._plot(_path(results, "results"), _name(x, "x"), _name(y, "y"),
                          _name(by, "by"))
