package router

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"time"

	"github.com/hangar-ml/hangar/internal/serving"
)

// mirror sends copies of a request to the mirrored deployments its draws chose, in the
// background: the caller's answer never waits for them and never sees them. A copy goes only
// where a slot is free at once and only while fewer than MaxMirrors copies are in flight;
// otherwise it is dropped (and counted), so a slow shadow cannot pile copies up.
func (r *Router) mirror(req *http.Request, rt *route, live, path string, body []byte) {
	if len(rt.mirror) == 0 {
		return
	}
	for _, name := range serving.Mirrors(rt.mirror, r.cfg.Rand) {
		d := rt.deps[name]
		if d == nil || name == live {
			continue
		}
		select {
		case r.mirrors <- struct{}{}:
		default:
			d.stats.mirrorDropped.Add(1)
			continue
		}
		rs, l, ok := d.tryAcquire(r.cfg.Now())
		if !ok {
			<-r.mirrors
			d.stats.mirrorDropped.Add(1)
			continue
		}
		out, err := r.mirrorRequest(req, d, rs, path, body, l.timeout)
		if err != nil {
			d.release(rs)
			<-r.mirrors
			d.stats.mirrorDropped.Add(1)
			continue
		}
		d.stats.mirrored.Add(1)
		go r.sendMirror(out, d, rs)
	}
}

type mirrorCall struct {
	req    *http.Request
	cancel context.CancelFunc
}

// mirrorRequest is the copy for replica rs: a context of its own (the caller's may end first)
// bounded by the shadow's request timeout, and the caller's headers less its key.
func (r *Router) mirrorRequest(in *http.Request, d *depState, rs *replicaState, path string, body []byte, timeout time.Duration) (mirrorCall, error) {
	path = d.path(path)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	u := "http://" + rs.addr + path
	if in.URL.RawQuery != "" {
		u += "?" + in.URL.RawQuery
	}
	out, err := http.NewRequestWithContext(ctx, in.Method, u, bytes.NewReader(body))
	if err != nil {
		cancel()
		return mirrorCall{}, err
	}
	out.Header = in.Header.Clone()
	out.Header.Del("Authorization")
	rs.sign(out.Header)
	out.Header.Del("Connection")
	return mirrorCall{out, cancel}, nil
}

func (r *Router) sendMirror(c mirrorCall, d *depState, rs *replicaState) {
	defer func() { <-r.mirrors }()
	defer d.release(rs)
	defer c.cancel()
	resp, err := r.transport.RoundTrip(c.req)
	if err != nil {
		d.stats.mirrorFailed.Add(1)
		if unreached(err) {
			r.takeOut(d, rs, "unreachable: "+err.Error())
		}
		return
	}
	if draining(resp.Header) {
		r.takeOut(d, rs, "it is draining (its supervisor is gone)")
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 500 {
		d.stats.mirrorFailed.Add(1)
	}
}
