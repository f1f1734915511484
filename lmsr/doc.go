// Package lmsr prices trades with Hanson's logarithmic market scoring rule
// (LMSR): the automated market maker behind every trade, quote, subsidy and
// settlement of predictkit, usable on its own for simulations.
//
// # Model and units
//
// A market has n ≥ 2 mutually exclusive outcomes. q_i is the number of
// shares of outcome i the maker has sold; each share pays 1 if its outcome
// wins. On the platform one share pays 1 kopeck, and the liquidity b is in
// kopecks too, so every quantity here — q, b, trade sizes, costs — is in
// kopecks. The maker charges the change of the cost function
//
//	C(q) = b·ln Σ_i e^{q_i/b}
//
// computed as max(q) + b·ln Σ_i e^{(q_i − max q)/b} (log-sum-exp), which never
// overflows. The instantaneous prices p_i = e^{q_i/b}/Σ_j e^{q_j/b} are in
// (0, 1) and sum to 1; for two outcomes p_YES is the logistic function of
// (q_YES − q_NO)/b. C(q + k·1) = C(q) + k, so only differences of q matter.
//
// # Trades in closed form
//
// Buying Δ shares of outcome i costs, and selling them refunds,
//
//	cost(Δ)   = C(q + Δe_i) − C(q) = b·log1p(p_i·expm1(Δ/b))
//	refund(Δ) = C(q) − C(q − Δe_i) = −b·log1p(−p_i·(1 − e^{−Δ/b}))
//
// which never subtract two nearly equal costs (C(q') − C(q) loses all
// digits when q is large and Δ small). The net spend M buys
//
//	Δ(M) = b·ln(1 + (e^{M/b} − 1)/p_i)
//	     = M − b·ln p_i + b·ln((1 − e^{−M/b}) + p_i·e^{−M/b})   (large M/b)
//
// At the extremes (e^{Δ/b} beyond 1e304, prices below 1e-300, refunds
// where 1 − p_i·(1 − e^{−Δ/b}) cancels) the same quantities are evaluated in
// the log domain, with the integer parts (q_i − max q, Δ) kept as separate
// additions so that they stay exact for integer quantities. Results are
// accurate to about 1e-13 relative in the trading band and never NaN or
// infinite for valid input.
//
// A mixed bundle Δ (buy some outcomes, sell others) costs
// b·log1p(Σ_i p_i·expm1(Δ_i/b)); see [Market.BundleCost].
//
// # Subsidy
//
// A market opened at probabilities π has q_i = b·ln π_i ([InitialQuantities];
// [InitialQ] gives the integer, shifted binary form). From any state q the
// maker can lose at most C(q) − min_i q_i ([Binary.WorstCaseLoss]), which at
// the opening state is b·ln(1/min_i π_i) ([MaxLoss]): the subsidy the
// platform escrows ([SubsidyKopecks], rounded up). 50/50 with b = 10000
// needs 6932 kopecks.
//
// # Integer kopecks: rounding in the house's favour
//
// [BuyShares], [BuyForSpend] and [SellShares] turn the float prices into
// int64 kopecks and shares. Every rounding favours the house (the market
// escrow and the platform), so a trader can never extract a fraction of a
// kopeck the maker did not receive:
//
//   - charges and money for shares round up:   Cost = ceil(cost(Δ));
//   - payouts round down:                       Refund = floor(refund(Δ));
//   - shares for money round down:              BuyForSpend gives the most
//     whole shares whose Charge fits in the budget.
//
// Before rounding, a float is moved towards the house by the relative
// [RoundingGuard] (1e-12), well above the float error of the formulas, so
// the error can never round in the trader's favour; a positive number of
// shares costs at least 1 kopeck. See [RoundUp] and [RoundDown].
//
// The margin m (platform fee, 0 ≤ m < 1) is applied on the integer amounts
// with exact arithmetic — m is read as the shortest decimal that rounds to it,
// as shopspring/decimal does, so 0.03 is exactly 3/100:
//
//	Charge = ceil(Cost·(1 + m)),  Fee = Charge − Cost   (buy)
//	Payout = floor(Refund·(1 − m)), Fee = Refund − Payout (sell)
//
// A budget B that includes the fee buys the shares for B/(1 + m): exactly,
// the largest integer Cost with ceil(Cost·(1 + m)) ≤ B.
//
// # Guards
//
// b must be positive, finite and at most 2^53 ([ErrInvalidLiquidity]);
// quantities and trade sizes finite within ±2^53 ([ErrInvalidQuantity]), the
// range where float64 holds every integer. A trade that would push a price
// outside [MinPrice, 1 − MinPrice] is refused with [ErrPriceLimit]; MinPrice
// defaults to [DefaultMinPrice] (1e-6), which keeps |q_YES − q_NO| ≤ 13.8·b.
// All errors are sentinels to test with errors.Is.
//
// # Exclusive pools
//
// An exclusive pool ([Exclusive]) is n binary markets of which exactly one
// resolves YES, priced by one n-outcome LMSR in integer shares. YES on
// market i buys outcome i; NO on market i buys its complement, one share of
// every other outcome. Since C(q) = b·ln(e^{q_i/b} + e^{Q_i/b}) with
//
//	Q_i = b·ln Σ_{j≠i} e^{q_j/b},
//
// and buying Δ of the complement adds Δ to every q_j with j ≠ i, hence
// exactly Δ to Q_i, market i trades exactly like the binary market
// (q_i, Q_i): the pool's kopeck trades are the binary kopeck functions
// applied to that view, with the same rounding in the house's favour, and a
// two-outcome pool (Q_0 = q_1) prices every trade exactly as a [Binary]
// market does. Markets show (q_i, round(Q_i)) ([Exclusive.BinaryViews]),
// whose binary price is p_i up to p_i(1−p_i)·(0.5/b)·e^{0.5/b}, about
// 0.125/b at most. The prices sum to 1 in every state. The subsidy,
// ceil(C(q) − min_k q_k) at the opening state ([Exclusive.SubsidyKopecks]),
// covers the payout of any winning outcome after any sequence of trades.
//
// # Answers added later
//
// [SplitOther] adds an answer to an exclusive pool, taking its probability
// p_new out of an "Other" outcome o: with r = p_new/p_o the new answer gets
// q_o + b·ln r and Other q_o + b·ln(1 − r), whose terms e^{q/b} sum to
// Other's old one, so C and every other price stay. In integer shares both
// round down (the larger part first, the smaller taking what is left), so C
// drops by less than a share, in the platform's favour. [Holding] is a
// position, [Claims] what holdings pay per outcome; [Split.MapHolding] maps
// each holding so that it pays, in every outcome, what it paid before, and
// [RequiredEscrow] is the escrow that covers the claims after any later
// trades, ceil(C(q) + max_k(claims_k − q_k)), which a split raises.
//
// # Types
//
// [Binary] is the platform's two-outcome market; [Exclusive] an exclusive
// pool of binary markets; [Market] is the n-outcome maker for research;
// [LS] is the liquidity-sensitive variant of Othman, Pennock, Reeves and
// Sandholm, whose b grows with volume and whose prices sum to between 1 and
// 1 + α·n·ln n. All are value types whose methods never modify the receiver
// or the caller's slices. The hot paths (prices, trade costs, kopeck
// pricing of binary trades and of a pool's trades) do not allocate.
package lmsr
