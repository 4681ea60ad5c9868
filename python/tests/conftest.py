import os
import pathlib

import pytest


@pytest.fixture
def source_dir():
    return pathlib.Path(os.environ["PERFLOW_SOURCE_DIR"])


@pytest.fixture
def cli():
    return os.environ["PERFLOW_CLI"]
