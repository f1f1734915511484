package webhook

// Control is the dialer's Control hook, for tests that check what the
// guard refuses at connection time without connecting.
func (g *Guard) Control(network, address string) error { return g.control(network, address, nil) }
