"""How rooms keep their state: the store every aggregate shares (`store`), the query tables
(`tables`) and the projection handlers that fill them from the ledger's `rooms.*` events
(`projection`, `projection_access`), each agent's delivery stream (`delivery`), wake-ups (`notify`)
and the fan-out between replicas on one PostgreSQL (`fanout`).

`connections` is here too: the live agent connections are not a projection but a table every
replica shares (heartbeats, room slots, role leases), which the store reloads on fan-out.
"""
