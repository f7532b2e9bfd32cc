"""engine_service.status.status_for: the one exception -> status table."""
from __future__ import annotations

import grpc
import pytest
from google.protobuf.message import DecodeError

from engine_service.rules import IllegalActionError, MalformedError, MisdealError
from engine_service.status import INTERNAL_DETAILS, MAX_DETAILS, status_for


@pytest.mark.parametrize("exc,code,details", [
    (MalformedError("state.round: bad"), grpc.StatusCode.INVALID_ARGUMENT, "state.round: bad"),
    (IllegalActionError("'6-6@E': no"), grpc.StatusCode.FAILED_PRECONDITION, "'6-6@E': no"),
    (MisdealError("misdeal: again"), grpc.StatusCode.FAILED_PRECONDITION, "misdeal: again"),
    (MisdealError("five doubles"), grpc.StatusCode.FAILED_PRECONDITION, "misdeal: five doubles"),
    (DecodeError("truncated"), grpc.StatusCode.INVALID_ARGUMENT,
     "request is not a valid protobuf message of its type"),
    (KeyError("secret internals"), grpc.StatusCode.INTERNAL, INTERNAL_DETAILS),
    (ZeroDivisionError(), grpc.StatusCode.INTERNAL, INTERNAL_DETAILS),
])
def test_mapping(exc: Exception, code: grpc.StatusCode, details: str) -> None:
    assert status_for(exc) == (code, details)


def test_long_details_are_clipped() -> None:
    code, details = status_for(MalformedError("not an action: " + "x" * 100_000))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert len(details) == MAX_DETAILS and details.endswith("...")
