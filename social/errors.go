package social

import "errors"

// Errors returned by the social services and stores.
var (
	ErrNotificationNotFound = errors.New("social: notification not found")
)
