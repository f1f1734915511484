package deposit

import (
	"encoding/json"
	"time"
)

// View is a deposit as its user sees it, in the API and on the me
// stream.
type View struct {
	ID                    int64   `json:"id"`
	Chain                 string  `json:"chain"`
	TxHash                string  `json:"tx_hash"`
	LogIndex              int64   `json:"log_index"`
	BlockNumber           int64   `json:"block_number"`
	Address               string  `json:"address"`
	TokenAmount           string  `json:"token_amount"`
	AmountKopecks         int64   `json:"amount_kopecks"`
	Confirmations         int64   `json:"confirmations"`
	ConfirmationsRequired int     `json:"confirmations_required"`
	Status                string  `json:"status"`
	CreatedAt             string  `json:"created_at"`
	CreditedAt            *string `json:"credited_at"`
}

// View returns d as its user sees it.
func (d *Deposit) View() View {
	v := View{ID: d.ID, Chain: d.Chain, TxHash: d.TxHash, LogIndex: d.LogIndex, BlockNumber: d.BlockNumber,
		Address: d.Address, TokenAmount: d.TokenAmount(), AmountKopecks: d.AmountKopecks,
		Confirmations: max(d.Confirmations, 0), ConfirmationsRequired: d.ConfirmationsRequired,
		Status: d.Status, CreatedAt: d.CreatedAt.UTC().Format(time.RFC3339Nano)}
	if d.CreditedAt != nil {
		s := d.CreditedAt.UTC().Format(time.RFC3339Nano)
		v.CreditedAt = &s
	}
	return v
}

// JSON is v's JSON object.
func (v View) JSON() json.RawMessage {
	// A View holds nothing encoding/json cannot write.
	b, _ := json.Marshal(v)
	return b
}
