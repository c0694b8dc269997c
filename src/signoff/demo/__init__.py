"""The demos and the fixture code they run: `signoff demo` (`make demo`) and `signoff serve --demo`,
each workflow end to end, offline, with scripted agents and scripted people. It is a face, beside
`cli/`, `web/`, `bridges/` and `mcp/`: nothing below the faces imports it, and it ships in the wheel
because `signoff demo ...` runs it from an installed package.

- `commands` — the `signoff demo` command group and the registry every demo adds itself to;
  `ledger`, `agents`, `repair`, `notes`, `incident`, `desk` — one demo each; `serve` — the pages on
  the state the demos left behind (`signoff serve --demo`).
- `repair_room` (a ready repair room on the embedded server) and `coupon_fixer` (the scripted fixer
  of the coupon fixture), `fixture` (the examples/ folder and a fixture's git repository),
  `shoplite_agents` (the desk's scripted ShopLite agents), `shoplite_deploy` (the ShopLite shop
  served on loopback, for the desk's recorder), `incident_walkthrough` (the incident's part 1 in one
  process, people scripted: `signoff incident run`): fixture code the demos, `signoff repair run`,
  `signoff desk`, the examples and the tests share.

- `payco_shopco` — the PayCo/ShopCo fixture (where it lives, its organisations as an incident
  configuration, its simulator, its guard corpus) and the `Scenario` the incident's scripted runs
  take: the incident workflow takes organisations and evidence as data and never imports it.

No workflow package imports fixture code (tests/unit/test_layers.py holds them to it). The
fixtures' files (the coupon shop, ShopLite, PayCo/ShopCo) are data in `examples/`.
"""
