"""What each incident agent does with the events the room server delivers to it.

- `Mediator` (role incident-commander): opens the incident, keeps the incident record as a room
  document only it can write, routes evidence requests between the companies and refuses any
  other cross-company request, asks the notary to compare, proposes the root cause, records both
  humans' confirmations and both fix approvals, asks for the end-to-end check and closes.
- `NotaryService` (role notary): issues the incident's salt and compares two crossed fingerprints.
- `ApproverService`: shows each draft for review (its digest and the exact command) and signs a
  disclosure only for the organisation's named human, in its private room, with that command
  naming the digest of what was shown (part 1's `Approver` holds the rules and the key).
- `CompanyAgent` (provider-/consumer-responder): investigates at home through its evidence server
  (counts, lengths, fingerprints only), drafts disclosures in its private room (the text comes from
  the `responder` agent role: scripted by default, any configured provider otherwise), and posts
  to the shared room only through its guard, from an outbox job.

Every handler is idempotent: it looks at the room before it acts, so a redelivered event (after a
crash or restart) never posts, signs or discloses twice.
"""

from signoff.incident.playbooks.approver import ApproverService
from signoff.incident.playbooks.company import CompanyAgent
from signoff.incident.playbooks.mediator import Mediator
from signoff.incident.playbooks.notary import NotaryService
from signoff.incident.playbooks.posts import PUBLISH_TOPIC, REVIEW_LINE, parse_disclosure_post

__all__ = ["PUBLISH_TOPIC", "REVIEW_LINE", "ApproverService", "CompanyAgent", "Mediator", "NotaryService",
           "parse_disclosure_post"]
