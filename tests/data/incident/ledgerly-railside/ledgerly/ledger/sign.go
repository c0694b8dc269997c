package ledger

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Sign returns the body Ledgerly posts and its signature header value.
func Sign(event Event, secret []byte) ([]byte, string, error) {
	body, err := json.Marshal(event)
	if err != nil {
		return nil, "", err
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return body, "v1=" + hex.EncodeToString(mac.Sum(nil)), nil
}
