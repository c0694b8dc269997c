"""The rooms domain: value objects (`model`), addressing policies, receipts and addressed decisions
(pure rules), and the aggregates (identities, tokens, membership, groups, roles, people's roles,
messages, documents, references, approval cards, identity claims, sign-in) behind the one facade
`service.RoomService`.

The aggregates hold the rules; they record ledger events and read the query tables through the
shared store (`rooms.storage.store`), so they are not free of I/O. Sign-in (`signin`) lives here and
not in `rooms.http`: it is the password and one-time link rules over the ledger, with no HTTP in it
(the pages that use it are in `signoff.web`).
"""
