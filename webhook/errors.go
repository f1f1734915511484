package webhook

import "errors"

// Errors of the webhook service and its store.
var (
	// ErrNoWebhook: the partner has no webhook.
	ErrNoWebhook = errors.New("webhook: the partner has no webhook")
	// ErrDeliveryNotFound: the partner has no delivery with that id.
	ErrDeliveryNotFound = errors.New("webhook: no such delivery")
	// ErrDestination: the URL names a destination that is not allowed
	// (see Guard); the error's text says why.
	ErrDestination = errors.New("webhook: destination not allowed")
)
