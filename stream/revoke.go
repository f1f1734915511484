package stream

// EndUser ends every stream of user's Me topic on this hub: their Serve
// returns ErrDropped at its next wake-up, as if the hub had dropped them
// (the client may reconnect, and must then authenticate again). It is
// for a change of the user's credentials, a password reset or change,
// after which what a stream was opened with (a token, a ticket) no longer
// works. It returns how many it ended. A stream still catching up from
// the log when EndUser runs is not registered yet and is not ended; nor
// are the streams of other servers.
func (h *Hub) EndUser(user int64) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for s := range h.idx.user[user] {
		h.unindexLocked(s)
		s.mu.Lock()
		if s.state == stateLive {
			s.state = stateDropped
		}
		s.queue = nil
		s.mu.Unlock()
		s.signal()
		n++
	}
	return n
}
