package withdrawal_test

import (
	"context"
	"fmt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/storage/memory"
	"github.com/predictkit/predictkit/withdrawal"
)

// A user asks for 300 RUB to their Ethereum address; the operator pays
// it from a wallet outside the server and records the transaction.
func Example() {
	ctx := context.Background()
	store := memory.New()
	accounts := account.NewService(store)
	u, _, _ := accounts.Register(ctx, account.Registration{Email: "wendy@example.com", Password: "correct horse battery", Name: "Wendy"})
	_, _ = accounts.Credit(ctx, u.ID, 100_000, false)

	wd := withdrawal.NewService(store, accounts)
	wd.DailyLimit = 50_000
	w, err := wd.Request(ctx, withdrawal.Request{UserID: u.ID, Chain: "ethereum", Address: "0x52908400098527886E0F7030069857D2E4169EE7", Amount: 30_000})
	fmt.Println(w.Status, err)
	b, _ := accounts.Balances(ctx, u.ID)
	fmt.Println("balance", b.Balance)

	_, err = wd.Request(ctx, withdrawal.Request{UserID: u.ID, Chain: "ethereum", Address: "0x52908400098527886E0F7030069857D2E4169EE7", Amount: 30_000})
	fmt.Println(err)

	paid, _ := wd.Approve(ctx, w.ID, "0x88DF016429689C079F3B2F6AD39FA052532C56795B733DA78A91EBE6A713944B")
	fmt.Println(paid.Status, paid.TxHash)
	_, err = wd.Cancel(ctx, u.ID, w.ID)
	fmt.Println(err)
	// Output:
	// pending <nil>
	// balance 70000
	// withdrawal: past the daily limit
	// paid 0x88df016429689c079f3b2f6ad39fa052532c56795b733da78a91ebe6a713944b
	// withdrawal: not pending
}
