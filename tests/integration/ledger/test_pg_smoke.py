from signoff.ledger import NewEvent, SqlLedger, verify_chain


def test_append_and_verify_on_each_database(db_url: str) -> None:
    ledger = SqlLedger.from_url(db_url)
    ledger.append("c", 0, [NewEvent("a", {"n": 1}), NewEvent("b", {})])
    assert [e.type for e in ledger.read("c")] == ["a", "b"]
    assert verify_chain(ledger).ok
    ledger.close()
