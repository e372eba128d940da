package server

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
)

// The Jupyter proxy's second line: an agent relays to a Jupyter that holds no token (its key is
// the relay's, which Jupyter never sees), but an agent of an older version runs Jupyter with the
// token this proxy sends, and Jupyter's pages embed it (page config, links, cookies). Whatever
// Jupyter answers, the secret the proxy sent is taken out of the response before it reaches the
// browser: headers, and every byte of a body (decompressed: the proxy leaves the browser's
// Accept-Encoding behind, so the transport asks for gzip and decompresses). Websocket frames after
// an upgrade are not filtered.

// hiddenSecret replaces the secret in what the browser gets.
const hiddenSecret = "<hidden>"

// hideSecret takes secret out of resp's headers and body.
func hideSecret(resp *http.Response, secret string) error {
	if secret == "" {
		return nil
	}
	for k, vs := range resp.Header {
		for i, v := range vs {
			if strings.Contains(v, secret) {
				resp.Header[k][i] = strings.ReplaceAll(v, secret, hiddenSecret)
			}
		}
	}
	if resp.StatusCode == http.StatusSwitchingProtocols || resp.Body == nil || resp.Body == http.NoBody {
		return nil
	}
	body := resp.Body
	if strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
		zr, err := gzip.NewReader(body)
		if err != nil {
			return err
		}
		body = readCloser{zr, body}
		resp.Header.Del("Content-Encoding")
	}
	resp.Body = &secretHider{r: body, secret: []byte(secret)}
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
	return nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// secretHider is a body with every occurrence of secret replaced, also one split across reads:
// it holds back the last len(secret)-1 bytes until what follows shows whether they start it.
type secretHider struct {
	r      io.ReadCloser
	secret []byte
	buf    []byte // read, not yet given out
	out    []byte // ready to give out
	eof    bool
}

func (h *secretHider) Read(p []byte) (int, error) {
	for len(h.out) == 0 {
		if h.eof {
			if len(h.buf) == 0 {
				return 0, io.EOF
			}
			h.out, h.buf = h.buf, nil
			break
		}
		chunk := make([]byte, 32<<10)
		n, err := h.r.Read(chunk)
		h.buf = append(h.buf, chunk[:n]...)
		if err == io.EOF {
			h.eof = true
		} else if err != nil {
			return 0, err
		}
		h.buf = bytes.ReplaceAll(h.buf, h.secret, []byte(hiddenSecret))
		if keep := len(h.secret) - 1; !h.eof && len(h.buf) > keep {
			cut := len(h.buf) - keep
			h.out, h.buf = h.buf[:cut:cut], append([]byte(nil), h.buf[cut:]...)
		}
	}
	n := copy(p, h.out)
	h.out = h.out[n:]
	return n, nil
}

func (h *secretHider) Close() error { return h.r.Close() }
