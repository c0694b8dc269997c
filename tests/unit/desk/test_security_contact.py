"""`[desk] security_contact` is an address a page may link to: an e-mail address or an https page,
never a script or markup (the reporter's pages print it as a link)."""

from __future__ import annotations

import pytest

from signoff.desk.config import DeskConfig
from signoff.kernel.errors import UsageError


@pytest.mark.parametrize("contact", ["security@example.org", "https://example.org/security.txt", ""])
def test_a_contact_people_can_use(contact: str) -> None:
    DeskConfig(security_contact=contact).validate()


@pytest.mark.parametrize("contact", ["javascript:alert(1)", "http://example.org", 'a@b.org" onclick="x',
                                     "<script>@x.org", "mailto:a@b.org", "security at example.org"])
def test_anything_else_is_refused_when_the_desk_loads(contact: str) -> None:
    with pytest.raises(UsageError, match="security_contact must be"):
        DeskConfig(security_contact=contact).validate()
