"""Desk: a public bug desk where the reporter has the last word.

A report passes the airlock, joins a bug, is reproduced by a failing test measured in the sandbox,
confirmed by its reporter, fixed by an agent's draft that a human approves and merges, released
(checked by a recorder), and closed or reopened by the reporter. Every step is an event in the
ledger; every rule is a pure decision in `signoff.desk.decisions`, and `signoff.desk.workflow.Desk`
is the one facade the faces call.
"""

from signoff.desk.config import DeskConfig
from signoff.desk.credentials import Credentials, DeskCaller
from signoff.desk.workflow import Desk

__all__ = ["Credentials", "Desk", "DeskCaller", "DeskConfig"]
