package node

import "testing"

func TestAddressToward(t *testing.T) {
	tests := []struct {
		url, want string
		err       bool
	}{
		{url: "http://127.0.0.1:8080", want: "127.0.0.1"},
		{url: "https://127.0.0.1", want: "127.0.0.1"},
		{url: "http://[::1]:8080", want: "::1"},
		{url: "not a url", err: true},
		{url: "", err: true},
	}
	for _, tc := range tests {
		got, err := AddressToward(tc.url)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("AddressToward(%q) = %q, %v; want %q (error: %v)", tc.url, got, err, tc.want, tc.err)
		}
	}
}
