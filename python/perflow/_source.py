"""Configs, sweeps and searches given to perflow as a dict, JSON text or a path."""
import json
import os


def source(document, what):
    """(text or path, file, is_path) for the C++ side. A dict goes as JSON text named
    "<dict>" in messages, text starting with "{" as "<string>"; anything else that is a str
    or os.PathLike is a path, read in C++ so that messages name it as the CLI does."""
    if isinstance(document, dict):
        return json.dumps(document), "<dict>", False
    if isinstance(document, str) and document.lstrip().startswith("{"):
        return document, "<string>", False
    if isinstance(document, (str, os.PathLike)):
        path = os.fspath(document)
        if isinstance(path, str):
            return path, "", True
    raise TypeError(f"{what}: expected a path, a dict or JSON text, found "
                    f"{type(document).__name__}")
