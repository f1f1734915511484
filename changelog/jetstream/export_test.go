package jetstream

// Internals the external tests reach.
var (
	Encode = encode
	Decode = decode
)
