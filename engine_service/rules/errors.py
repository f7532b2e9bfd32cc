"""The rules' two kinds of refusal, as in python-chess: bad input vs illegal here.

Each boundary maps them once: MalformedError -> gRPC INVALID_ARGUMENT -> HTTP
400; IllegalActionError -> FAILED_PRECONDITION -> HTTP 409.
"""
from __future__ import annotations


class RulesError(ValueError):
    """Base of every refusal by the rules library."""


class MalformedError(RulesError):
    """The input cannot be understood: bad notation, unknown option, corrupt state."""


class IllegalActionError(RulesError):
    """The input is well formed but the rules forbid it in this state."""


class MisdealError(IllegalActionError):
    """An explicit deal that the variant's misdeal rule refuses (RULES.md C "Deal")."""
