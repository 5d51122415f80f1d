package delivery

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateURL(t *testing.T) {
	t.Parallel()
	long := "https://example.com/" + strings.Repeat("a", MaxURLLength-len("https://example.com/"))
	tests := []struct {
		url    string
		reason string // "" when valid
	}{
		{"https://example.com/webhook", ""},
		{"http://example.com", ""},
		{"HTTPS://Example.COM/x?y=1#z", ""},
		{"http://127.0.0.1:8080/hook", ""},
		{"http://[2001:db8::1]:8443/hook", ""},
		{"https://xn--bcher-kva.example/", ""},
		{long, ""},
		{long + "a", "longer than 2048 characters (2049)"},
		{"", "URL is empty"},
		{" https://example.com", "leading or trailing white space"},
		{"ftp://x", "scheme must be http or https"},
		{"example.com/hook", "scheme must be http or https"},
		{"//example.com/hook", "scheme must be http or https"},
		{"javascript:alert(1)", "scheme must be http or https"},
		{"http:example.com", "must be of the form http://host/path"},
		{"https://user:pass@example.com/", "must not contain a user name or password"},
		{"https://user@example.com/", "must not contain a user name or password"},
		{"https:///path", "host is missing"},
		{"https://:443/path", "host is missing"},
		{"https://example.com:0/", "port must be between 1 and 65535"},
		{"https://example.com:65536/", "port must be between 1 and 65535"},
		{"https://example.com:/", "port is empty"},
		{"https://example.com:abc/", `cannot be parsed: invalid port ":abc" after host`},
		{"https://exa mple.com/", `cannot be parsed: invalid character " " in host name`},
		{"https://example.com/\x7f", "cannot be parsed: net/url: invalid control character in URL"},
		{"http://[::1", `cannot be parsed: missing ']' in host`},
	}
	for _, tt := range tests {
		err := ValidateURL(tt.url)
		if tt.reason == "" {
			if err != nil {
				t.Errorf("ValidateURL(%.40q) = %v, want nil", tt.url, err)
			}
			continue
		}
		var ue *URLError
		if !errors.As(err, &ue) || !errors.Is(err, ErrInvalidURL) {
			t.Errorf("ValidateURL(%.40q) = %v, want a *URLError wrapping ErrInvalidURL", tt.url, err)
			continue
		}
		if ue.Reason != tt.reason || ue.URL != tt.url {
			t.Errorf("ValidateURL(%.40q): Reason %q, URL %.40q; want %q", tt.url, ue.Reason, ue.URL, tt.reason)
		}
	}
}

func TestURLErrorMessage(t *testing.T) {
	t.Parallel()
	err := ValidateURL("ftp://x")
	if want := `invalid endpoint URL "ftp://x": scheme must be http or https`; err == nil || err.Error() != want {
		t.Errorf("Error() = %v, want %q", err, want)
	}
	long := "ftp://" + strings.Repeat("a", 3000)
	err = ValidateURL(long)
	var ue *URLError
	if !errors.As(err, &ue) || ue.URL != long {
		t.Fatalf("ValidateURL(long) = %v", err)
	}
	if len(err.Error()) > 200 || !strings.Contains(err.Error(), "...") {
		t.Errorf("Error() of a long URL is %d bytes: %.120s", len(err.Error()), err)
	}
}
