"""Model providers behind one interface, schema-checked proposals and spend control.

A model only ever proposes. `agent_for(role, settings).propose(task, untrusted)` returns a Proposal
whose output passed the role's schema, size and path rules, or raises ProposalRejected; metered calls
are reserved against the budget first (BudgetExceeded) and every call is recorded in the ledger.
"""

from signoff.agents import scripts as _scripts  # noqa: F401  (registers the default scripts)
from signoff.agents.agent import Agent, ProviderTraits, agent_for, attempts, make_provider, provider_traits
from signoff.agents.budget import Budget, BudgetExceeded, Usage
from signoff.agents.config import SpendLimits, limits, provider_settings
from signoff.agents.prompt import Prompt, build_prompt
from signoff.agents.proposal import Proposal, ProposalRejected, check_output
from signoff.agents.providers.base import CallFailed, Reply
from signoff.agents.providers.scripted import get_script, register_script, scripts
from signoff.agents.roles import RoleSpec, get_role, register_role, roles

__all__ = [
    "Agent",
    "Budget",
    "BudgetExceeded",
    "CallFailed",
    "Prompt",
    "Proposal",
    "ProposalRejected",
    "ProviderTraits",
    "Reply",
    "RoleSpec",
    "SpendLimits",
    "Usage",
    "agent_for",
    "attempts",
    "build_prompt",
    "check_output",
    "get_role",
    "get_script",
    "limits",
    "make_provider",
    "provider_settings",
    "provider_traits",
    "register_role",
    "register_script",
    "roles",
    "scripts",
]
