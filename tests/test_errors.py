"""The errors of acp_adapters.errors: one home for every error the package raises."""

from __future__ import annotations

import pytest

import acp_adapters
from acp_adapters import errors


@pytest.mark.parametrize(
    "name", ["AgentNotFoundError", "ProtocolVersionError", "AuthenticationRequiredError"]
)
def test_the_client_errors_live_in_errors(name: str) -> None:
    error = getattr(errors, name)
    assert issubclass(error, errors.AcpAdaptersError)
    assert error.__module__ == "acp_adapters.errors"
    assert issubclass(getattr(acp_adapters, name), errors.AcpAdaptersError)


def test_authentication_required_names_the_ways_to_authenticate() -> None:
    error = errors.AuthenticationRequiredError(
        "needs a key", [{"id": "api-key"}, {"methodId": "oauth"}]
    )
    assert str(error) == "needs a key; authenticate with one of: api-key, oauth"
    assert error.methods == [{"id": "api-key"}, {"methodId": "oauth"}]
    assert "none offered" in str(errors.AuthenticationRequiredError("needs a key", []))
