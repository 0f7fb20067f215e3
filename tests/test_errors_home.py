"""Every public error of the package is importable from ``acp_adapters.errors``: the module
an application catches from, whichever layer raises the error."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import acp_adapters
import acp_adapters.errors as errors


def _defined_errors() -> dict[str, type[BaseException]]:
    """Each public error class of the package, by name, from the module that defines it."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(acp_adapters.__path__, "acp_adapters."):
        if info.name.endswith("__main__") or info.name.startswith("acp_adapters.cli."):
            continue  # the command line's own errors are its words, not the library's
        module = importlib.import_module(info.name)
        found.update(
            (name, value)
            for name, value in vars(module).items()
            if inspect.isclass(value)
            and issubclass(value, errors.AcpAdaptersError)
            and value.__module__ == module.__name__
            and not name.startswith("_")
        )
    return found


def test_every_public_error_of_the_package_is_in_acp_adapters_errors() -> None:
    defined = _defined_errors()
    assert "StoreError" in defined  # the walk saw the layers' own modules
    missing = sorted(set(defined) - set(errors.__all__))
    assert not missing, f"acp_adapters.errors does not have {missing}"
    for name, value in defined.items():
        assert getattr(errors, name) is value  # the same class, not a copy


def test_each_name_of_acp_adapters_errors_is_an_error() -> None:
    for name in errors.__all__:
        value = getattr(errors, name)
        assert issubclass(value, errors.AcpAdaptersError), name
