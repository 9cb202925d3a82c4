package config

import (
	"errors"
	"net/url"
	"strings"
)

// JoinURL appends path (which starts with a slash) to the path of base and keeps base's
// query: an Azure-style base_url, https://x/openai/deployments/d?api-version=2024-10-21,
// calls https://x/openai/deployments/d/chat/completions?api-version=2024-10-21, where
// appending to the string would bury the path in the query. The error does not quote base,
// whose query may hold a credential.
func JoinURL(base, path string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", errors.New("not a valid URL: " + err.Error())
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	if u.RawPath != "" {
		u.RawPath = strings.TrimSuffix(u.RawPath, "/") + path
	}
	return u.String(), nil
}
