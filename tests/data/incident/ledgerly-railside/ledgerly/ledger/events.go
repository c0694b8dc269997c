package ledger

// Event is one payment webhook, serialised with encoding/json.
type Event struct {
	ID          string `json:"id"`
	AmountCents int64  `json:"amount_cents"`
	Currency    string `json:"currency"`
	Memo        string `json:"memo"`
	Account     string `json:"account"`
}

func Batch(accounts []string, memos []string) []Event {
	events := make([]Event, 0, len(memos))
	for i, memo := range memos {
		events = append(events, Event{ID: txnID(1001 + i), AmountCents: int64(1250 * (i + 1)), Currency: "EUR",
			Memo: memo, Account: accounts[i%len(accounts)]})
	}
	return events
}
