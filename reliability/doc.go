// Package reliability holds the tests that prove predictkit's money
// guarantees end to end, and nothing else: no code of the engine lives
// here.
//
//   - TestMoneyModel runs seeded random sequences of deposits, trades,
//     partner bets with retries, show/hide and settlements on the memory
//     store and on PostgreSQL in lockstep, with the making of markets:
//     event proposals (the ante, approved or rejected), answers added to
//     exclusive pools with an Other market (every holder's claim kept)
//     and, on even seeds, the challenge window (a creator's close
//     proposes; disputes with a bond; the operator's decision; due
//     proposals settled). After every operation the ledger
//     audit and the escrow audit hold; the two stores give the same outcome
//     to every operation and end with the same balance in every account;
//     and every user's, sub-account's and float's balance, antes and bonds
//     included, is what the receipts say it should be.
//   - TestCrash kills the server (SIGKILL) on PostgreSQL under load,
//     restarts it, and checks that every answered trade is in the trade
//     log with its postings and that no trade exists that was not asked
//     for.
//   - TestDatabaseFaults terminates the server's database connections under
//     load and restarts a PostgreSQL cluster of its own under it: the server
//     answers 503, never 500, recovers by itself, and the checks of
//     TestCrash hold.
//   - TestStreamAcrossServers and TestStreamResumeAcrossKills hold the
//     live stream to the change log's promise across processes: a
//     subscriber on one server gets, in order, the trades made through
//     another on the same database; and one whose server is killed
//     (SIGKILL) under trading, again and again, resumes each time with its
//     last id and ends with every committed trade of its market, once.
//   - TestAmbiguousCommit cuts the connection of a transaction between its
//     COMMIT and the database's answer: the store says the outcome is
//     unknown and never runs the trade a second time.
//
// docs/guarantees.md lists them with the commands that run
// them longer.
package reliability
