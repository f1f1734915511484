// Package jetstream carries a store's change log over NATS JetStream, for
// deployments with more server instances than one PostgreSQL should wake
// with LISTEN/NOTIFY and poll: one Relay reads the log and publishes it to
// a stream; every instance follows the stream with a Feed instead of the
// database.
//
// # Numbering
//
// The relay keeps the stream's sequence number equal to the entry's
// sequence number in the log: entry n is stream message n. A new stream
// whose log starts after 1 (older entries were pruned) is first purged up
// to that entry, which moves the stream's next number there; from then on
// the relay stores entries one after another with no holes, as the log
// numbers them. So a follower that has seen entry n starts an ordered
// consumer at stream sequence n+1, with no lookup, and a message whose
// number is not the next one proves entries missing (aged out, purged or
// deleted): the feed reports changelog.ErrPruned instead of skipping them.
// Every message also carries its entry's number in the Predictkit-Seq
// header and in the payload (the entry as JSON), and the relay and the
// feed check that the numbers agree, so that a stream written by anything
// else is refused rather than misread.
//
// # Exactly once
//
// Each entry is stored in the stream once:
//
//   - One relay runs at a time: it runs under a lock (with PostgreSQL, a
//     session advisory lock, postgres.Store.Exclusive), and the others wait
//     for it.
//   - A relay that (re)starts reads where the stream ends (its last
//     sequence number, confirmed by the last message's Predictkit-Seq
//     header) and publishes the entries after it; it keeps no state of its
//     own that could disagree with the stream.
//   - Each message's Nats-Msg-Id is the entry's number. A relay that died
//     after publishing but before the acknowledgement came back has either
//     stored the entry (its successor reads it as the stream's end and
//     starts after it) or not (its successor publishes it); if the old
//     relay's last publishes are still in flight when the successor starts
//     (a lock lost with its PostgreSQL connection while the NATS connection
//     lives), JetStream drops the second copy of each, which arrives
//     within the duplicate window (2 minutes by default). Each relay
//     publishes in order, so even then the entries are stored in order.
//   - Every acknowledgement's stream sequence must be the entry's number;
//     anything else stops the relay with an error, so a stream out of step
//     is reported, not extended.
//
// # On a NATS cluster
//
// The relay and the feeds work the same on a NATS cluster, with the
// stream kept by several nodes (Options.Replicas). When a node dies, the
// relay's publishes fail or go unanswered and it starts over from where
// the stream ends; a feed whose consumer was on that node starts a new
// one. The relay's connection must not keep publishes while it
// reconnects (NewRelay says why).
//
// Followers never deliver an entry twice: a Feed drops any entry at or
// before the last it delivered, including across the ordered consumer's
// own restarts.
package jetstream
