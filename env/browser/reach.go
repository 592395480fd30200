package browser

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/proctor-eval/proctor/env"
)

// What the browser's pages may reach.
//
// Every request of every page, frame, popup and worker goes through a
// filtering proxy in this process (--proxy-server, with
// --proxy-bypass-list=<-loopback> so that loopback addresses are no
// exception, and WebRTC kept to the proxy): it lets through only the
// origins of the episode's own pages (those its setup opens) and services
// (env.Setup.Origins), and the public web where the task says so
// (env.Setup.Web), and answers everything else itself with 403, before a
// connection to it is made. The web is reached by the address the proxy
// resolved and checked, so a name that resolves to a loopback, private or
// link-local address (the cloud metadata address 169.254.169.254) stays
// out. An address the agent navigates to is checked before the browser is
// asked, and a navigation that ends at a refused address is reported to
// the agent (env.ErrForbidden).
//
// Besides http and https (and WebSockets over them), a page may show
// data: and blob: addresses, which hold nothing of the host's, and
// about:blank; file: addresses only where the setup opened them (a page
// of the episode's folder), and the browser's own pages (chrome:,
// devtools:) never. The browser itself refuses to load file: addresses
// in pages of other schemes.

// reach is the episode's policy.
type reach struct {
	mu sync.RWMutex
	// hosts are the authorities (host:port) of the allowed origins.
	hosts map[string]bool
	// origins are the allowed origins, for messages.
	origins []string
	// files are the file: addresses the setup opened.
	files map[string]bool
	web   bool

	log     io.Writer
	refused []string // the addresses refused, newest last (at most maxRefused)
	// count is how many were refused in the episode; told, how many of
	// them Notices told.
	count, told int
}

// maxRefused bounds the record of refused addresses.
const maxRefused = 64

// set replaces the policy: origins (scheme://host[:port]) and file
// addresses that may be reached, and whether the public web may be.
func (r *reach) set(origins, files []string, web bool) {
	hosts, list := map[string]bool{}, []string(nil)
	for _, o := range origins {
		u, err := url.Parse(o)
		if err != nil || u.Host == "" {
			continue
		}
		a, ok := authority(u)
		if !ok {
			continue
		}
		if !hosts[a] {
			list = append(list, u.Scheme+"://"+u.Host)
		}
		hosts[a] = true
	}
	fs := map[string]bool{}
	for _, f := range files {
		fs[stripFragment(f)] = true
	}
	r.mu.Lock()
	r.hosts, r.origins, r.files, r.web = hosts, list, fs, web
	r.refused, r.count, r.told = nil, 0, 0
	r.mu.Unlock()
}

// authority is a web address's host:port, the port filled in from its
// scheme.
func authority(u *url.URL) (string, bool) {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "http", "ws":
			port = "80"
		case "https", "wss":
			port = "443"
		default:
			return "", false
		}
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port), true
}

func stripFragment(u string) string {
	u, _, _ = strings.Cut(u, "#")
	return u
}

// check says why the browser may not show an address, or nil where it
// may.
func (r *reach) check(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not an address", raw)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "ws", "wss":
		a, _ := authority(u)
		_, err := r.dialAddr(ctx, a)
		return err
	case "data", "blob":
		return nil
	case "about":
		if u.Opaque == "blank" || u.Opaque == "srcdoc" {
			return nil
		}
		return errors.New("the browser's own pages are not for the agent")
	case "file":
		r.mu.RLock()
		ok := r.files[stripFragment(raw)]
		r.mu.RUnlock()
		if ok {
			return nil
		}
		return errors.New("the host's files are not for the browser: only the task's own pages are")
	case "":
		return errors.New("an address needs a scheme (http or https)")
	}
	return fmt.Errorf("the browser opens web pages here (http, https, data, blob), not %s: addresses", u.Scheme)
}

// dialAddr is the address to connect to for an authority (host:port), or
// why it may not be reached.
func (r *reach) dialAddr(ctx context.Context, hostport string) (string, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return "", fmt.Errorf("%q is not host:port", hostport)
	}
	host = strings.ToLower(host)
	key := net.JoinHostPort(host, port)
	r.mu.RLock()
	ok, web, origins := r.hosts[key], r.web, r.origins
	r.mu.RUnlock()
	if ok {
		return key, nil
	}
	theTasks := "the task allows no origins of its own"
	if len(origins) > 0 {
		theTasks = "the task allows " + strings.Join(origins, ", ")
	}
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		if why := private(ip); why != "" {
			return "", fmt.Errorf("%s is %s, and %s", host, why, theTasks)
		}
		if !web {
			return "", fmt.Errorf("%s is not among the task's origins (%s; the web is not open to it)", key, theTasks)
		}
		return key, nil
	}
	if !web {
		return "", fmt.Errorf("%s is not among the task's origins (%s; the web is not open to it)", key, theTasks)
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupNetIP(rctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return "", fmt.Errorf("%s cannot be resolved: %v", host, err)
	}
	for _, ip := range ips {
		if why := private(ip); why != "" {
			return "", fmt.Errorf("%s resolves to %s, %s, and %s", host, ip, why, theTasks)
		}
	}
	return net.JoinHostPort(ips[0].Unmap().String(), port), nil
}

// cgnat is the shared address space of carriers (RFC 6598).
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// private says what kind of address outside the public web ip is, or ""
// for a public one.
func private(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast():
		return "a link-local address (the cloud's metadata service lives there)"
	case ip.IsPrivate() || cgnat.Contains(ip):
		return "a private network's address"
	case ip.IsUnspecified() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast():
		return "not a host's address"
	case ip.Is4() && ip.As4()[0] == 0:
		return "not a host's address"
	}
	return ""
}

// refuse records a refused address.
func (r *reach) refuse(addr string, err error) {
	r.mu.Lock()
	if !own(addr) {
		r.count++
	}
	r.refused = append(r.refused, addr)
	if len(r.refused) > maxRefused {
		r.refused = slices.Delete(r.refused, 0, len(r.refused)-maxRefused)
	}
	r.mu.Unlock()
	if r.log != nil {
		fmt.Fprintf(r.log, "proxy: refused %s: %v\n", addr, err)
	}
}

// ownHosts are the services Chromium itself calls (sign-in, component
// and variation updates) even with its background networking off: they
// are refused like any other, but not told to the agent as the page's.
var ownHosts = regexp.MustCompile(`^(accounts\.google\.com|clients\d*\.google\.com|[a-z0-9.-]*\.googleapis\.com|[a-z0-9.-]*\.gvt1\.com)$`)

// own reports whether a refused address is one of Chromium's own calls.
func own(addr string) bool {
	if u, err := url.Parse(addr); err == nil && u.Host != "" {
		return ownHosts.MatchString(strings.ToLower(u.Hostname()))
	}
	host, _, _ := strings.Cut(addr, ":")
	return ownHosts.MatchString(strings.ToLower(host))
}

// news returns the refusals not told yet: how many, and the last few.
func (r *reach) news(last int) (int, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.count - r.told
	r.told = r.count
	var fresh []string
	for i := len(r.refused) - 1; i >= 0 && len(fresh) < min(n, last); i-- {
		if !own(r.refused[i]) {
			fresh = append([]string{r.refused[i]}, fresh...)
		}
	}
	return n, fresh
}

// Refused lists the addresses the episode's pages were refused, newest
// last (at most the last 64).
func (b *Browser) Refused() []string {
	b.reach.mu.RLock()
	defer b.reach.mu.RUnlock()
	return slices.Clone(b.reach.refused)
}

// proxy is the filtering proxy the browser's requests go through.
type proxy struct {
	r      *reach
	ln     net.Listener
	srv    *http.Server
	rp     *httputil.ReverseProxy
	dialer net.Dialer
	conns  sync.WaitGroup
	mu     sync.Mutex
	open   map[net.Conn]bool // tunnels, closed with the proxy
}

// startProxy starts the proxy on a loopback port.
func startProxy(r *reach) (*proxy, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start the browser's proxy: %w", err)
	}
	p := &proxy{r: r, ln: ln, open: map[net.Conn]bool{}, dialer: net.Dialer{Timeout: 30 * time.Second}}
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         p.dial,
		DisableCompression:  true, // the browser's Accept-Encoding goes through as it is
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     30 * time.Second,
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.Host = pr.In.Host
			// The query as the page wrote it: ReverseProxy drops what
			// url.ParseQuery cannot read, such as the ';' separators
			// Request Tracker's links use (Update.html?Action=Comment;id=25).
			pr.Out.URL.RawQuery = pr.In.URL.RawQuery
		},
		Transport: tr,
		ErrorHandler: func(w http.ResponseWriter, req *http.Request, err error) {
			var refused refusal
			if errors.As(err, &refused) {
				p.deny(w, req.URL.String(), refused.err)
				return
			}
			http.Error(w, err.Error(), http.StatusBadGateway)
		},
		ErrorLog: nil,
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	go p.srv.Serve(ln)
	return p, nil
}

// flags point the browser at the proxy, for every address (loopback
// ones included) and for WebRTC.
func (p *proxy) flags() []string {
	return []string{
		"--proxy-server=http://" + p.ln.Addr().String(),
		"--proxy-bypass-list=<-loopback>",
		"--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
	}
}

// close stops the proxy and its tunnels.
func (p *proxy) close() {
	p.srv.Close()
	p.mu.Lock()
	for c := range p.open {
		c.Close()
	}
	p.mu.Unlock()
	p.conns.Wait()
	p.rp.Transport.(*http.Transport).CloseIdleConnections()
}

// refusal is the error of a dial the policy refuses.
type refusal struct{ err error }

func (e refusal) Error() string { return e.err.Error() }

// dial connects to an address the policy allows.
func (p *proxy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	to, err := p.r.dialAddr(ctx, addr)
	if err != nil {
		return nil, refusal{err}
	}
	return p.dialer.DialContext(ctx, network, to)
}

// deny answers a refused request.
func (p *proxy) deny(w http.ResponseWriter, addr string, err error) {
	p.r.refuse(addr, err)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusForbidden)
	fmt.Fprintf(w, "Proctor refused %s: %v\n", addr, err)
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodConnect {
		p.tunnel(w, req)
		return
	}
	if req.URL.Scheme != "http" || req.URL.Host == "" {
		http.Error(w, "a proxy request needs an absolute http address", http.StatusBadRequest)
		return
	}
	a, _ := authority(req.URL)
	if _, err := p.r.dialAddr(req.Context(), a); err != nil {
		p.deny(w, req.URL.String(), err)
		return
	}
	p.rp.ServeHTTP(w, req)
}

// tunnel connects a CONNECT request (https, WebSockets) to an allowed
// address and copies both ways.
func (p *proxy) tunnel(w http.ResponseWriter, req *http.Request) {
	upstream, err := p.dial(req.Context(), "tcp", req.Host)
	if err != nil {
		var refused refusal
		if errors.As(err, &refused) {
			p.deny(w, "https://"+req.Host, refused.err)
			return
		}
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		upstream.Close()
		http.Error(w, "no tunnel", http.StatusInternalServerError)
		return
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		upstream.Close()
		return
	}
	if _, err := conn.Write([]byte("HTTP/1.1 200 Connection Established\r\n\r\n")); err != nil {
		conn.Close()
		upstream.Close()
		return
	}
	p.mu.Lock()
	p.open[conn], p.open[upstream] = true, true
	p.mu.Unlock()
	p.conns.Add(2)
	done := func(c net.Conn) {
		p.mu.Lock()
		delete(p.open, c)
		p.mu.Unlock()
		p.conns.Done()
	}
	go func() {
		defer done(upstream)
		io.Copy(upstream, bufio.NewReader(io.MultiReader(buf.Reader, conn)))
		if tc, ok := upstream.(*net.TCPConn); ok {
			tc.CloseWrite()
		} else {
			upstream.Close()
		}
	}()
	go func() {
		defer done(conn)
		io.Copy(conn, upstream)
		conn.Close()
		upstream.Close()
	}()
}

// forbidden is the error of an address the agent may not open.
func forbidden(u string, err error) error {
	return fmt.Errorf("%w: open %s: %v", env.ErrForbidden, u, err)
}

// landed checks where a navigation of a tab ended: an address the proxy
// refused (a redirect out of what the task allows) is the agent's
// error.
func (b *Browser) landed(ctx context.Context, pctx context.Context, asked string) error {
	res, err := chromedp.Run(pctx, func(_ context.Context, t *chromedp.Target) (page.GetFrameTreeResult, error) {
		return cdp.Call(ctx, t, page.GetFrameTree, cdp.Empty{})
	})
	if err != nil || res.FrameTree == nil || res.FrameTree.Frame == nil {
		return nil
	}
	f := res.FrameTree.Frame
	at := f.UnreachableURL
	if at == "" {
		at = f.URL + f.URLFragment
	}
	if at == "" {
		return nil
	}
	if err := b.reach.check(ctx, at); err != nil {
		if at == asked {
			return forbidden(asked, err)
		}
		return fmt.Errorf("%w: open %s: it led to %s: %v", env.ErrForbidden, asked, at, err)
	}
	return nil
}

// allow sets the policy of the episode a setup begins: the origins of
// the pages its steps open and of the task's services, the files it
// opens, and the web where the task says so.
func (b *Browser) allow(s env.Setup) {
	origins := slices.Clone(s.Origins)
	var files []string
	for _, st := range s.Steps {
		if st.Open == nil {
			continue
		}
		u := st.Open.URL
		if u == "" {
			u = b.expandURL(st.Open.Path)
		}
		if strings.HasPrefix(u, "file:") {
			files = append(files, u)
		} else {
			origins = append(origins, u)
		}
	}
	b.reach.set(origins, files, s.Web)
}
