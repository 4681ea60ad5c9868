"""PerFlow: predict how distributed LLM training performs, from Python.

The same C++ core as the ``perflow`` command: ``simulate(config)`` returns exactly what
``perflow simulate CONFIG --report`` writes, as Python objects.
"""

import json
import os

from ._perflow import ConfigError, Error, schedules
from . import _perflow

__all__ = ["ConfigError", "Error", "schedules", "simulate", "simulate_json", "summary"]


def _config_args(config):
    """(text, file, is_path) for the C++ side: a dict, JSON text, or a path."""
    if isinstance(config, dict):
        return json.dumps(config), "<dict>", False
    if isinstance(config, os.PathLike):
        return os.fspath(config), "", True
    if isinstance(config, str):
        if config.lstrip().startswith("{"):
            return config, "<string>", False
        return config, "", True
    raise TypeError(
        f"a config is a dict, JSON text or a path, got {type(config).__name__}")


def simulate_json(config):
    """The report of ``config`` as JSON text, byte for byte the CLI's ``--report`` file."""
    return _perflow._simulate_report(*_config_args(config))


def simulate(config):
    """Simulates ``config`` (dict, JSON text or path); returns the ``--report`` document."""
    return json.loads(simulate_json(config))


def summary(config):
    """The text summary ``perflow simulate CONFIG`` prints."""
    return _perflow._simulate_summary(*_config_args(config))
