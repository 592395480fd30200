package adbtest

import (
	"bufio"
	"net"
	"strings"
	"sync"
)

// transport is one connection from the adb server.
type transport struct {
	d  *Device
	nc net.Conn

	wmu sync.Mutex // serialises writes

	mu      sync.Mutex
	streams map[uint32]*stream
	nextID  uint32
	online  bool
	checked bool // verify checksums (before CNXN, or an old peer)
	maxData int

	closeOnce sync.Once
}

func newTransport(d *Device, nc net.Conn) *transport {
	return &transport{d: d, nc: nc, streams: map[uint32]*stream{}, nextID: 1, checked: true, maxData: 4096}
}

func (t *transport) send(m message) error {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	_, err := t.nc.Write(m.marshal())
	return err
}

// close closes the connection and ends every stream.
func (t *transport) close() {
	t.closeOnce.Do(func() {
		t.nc.Close()
		t.mu.Lock()
		streams := t.streams
		t.streams = map[uint32]*stream{}
		t.mu.Unlock()
		for _, s := range streams {
			s.ended()
		}
	})
}

// serve reads the server's messages until the connection ends or breaks
// the protocol.
func (t *transport) serve() {
	defer t.close()
	r := bufio.NewReaderSize(t.nc, 64*1024)
	for {
		t.mu.Lock()
		checked := t.checked
		t.mu.Unlock()
		m, err := readMessage(r, checked)
		if err != nil {
			return
		}
		if !t.handle(m) {
			return
		}
	}
}

// handle acts on one message; false closes the connection.
func (t *transport) handle(m message) bool {
	switch m.cmd {
	case cmdCNXN:
		if m.arg0 < 0x01000000 || m.arg1 < 4096 {
			return false
		}
		t.mu.Lock()
		t.maxData = min(int(m.arg1), ourMaxData)
		t.checked = min(m.arg0, aVersion) < aVersion
		t.mu.Unlock()
		if t.d.opts.Unauthorized {
			return t.send(message{cmd: cmdAUTH, arg0: authToken, data: randomToken()}) == nil
		}
		t.mu.Lock()
		t.online = true
		t.mu.Unlock()
		return t.send(message{cmd: cmdCNXN, arg0: aVersion, arg1: ourMaxData, data: []byte(t.d.banner)}) == nil
	case cmdAUTH:
		if !t.d.opts.Unauthorized {
			return true
		}
		switch m.arg0 {
		case authSignature:
			// No key is ever accepted: ask again, as adbd does.
			return t.send(message{cmd: cmdAUTH, arg0: authToken, data: randomToken()}) == nil
		case authRSAPublicKey:
			// adbd would now show its dialog; nobody answers it.
		}
		return true
	case cmdOPEN:
		t.mu.Lock()
		online := t.online
		t.mu.Unlock()
		if !online || m.arg0 == 0 {
			return true
		}
		name := strings.TrimRight(string(m.data), "\x00")
		svc := t.d.service(name)
		if svc == nil {
			return t.send(message{cmd: cmdCLSE, arg0: 0, arg1: m.arg0}) == nil
		}
		t.mu.Lock()
		id := t.nextID
		t.nextID++
		s := newStream(t, id, m.arg0)
		t.streams[id] = s
		t.mu.Unlock()
		if t.send(message{cmd: cmdOKAY, arg0: id, arg1: m.arg0}) != nil {
			return false
		}
		t.d.svcs.Add(1)
		go func() {
			defer t.d.svcs.Done()
			defer s.Close()
			svc(s)
		}()
		return true
	case cmdOKAY:
		if s := t.stream(m.arg1); s != nil {
			select {
			case s.ack <- struct{}{}:
			default:
			}
		}
		return true
	case cmdWRTE:
		s := t.stream(m.arg1)
		if s == nil {
			return t.send(message{cmd: cmdCLSE, arg0: 0, arg1: m.arg0}) == nil
		}
		s.put(m.data)
		return t.send(message{cmd: cmdOKAY, arg0: m.arg1, arg1: m.arg0}) == nil
	case cmdCLSE:
		t.mu.Lock()
		s := t.streams[m.arg1]
		delete(t.streams, m.arg1)
		t.mu.Unlock()
		if s != nil {
			s.ended()
		}
		return true
	}
	// SYNC, STLS: not expected from a host that was not asked for them.
	return true
}

func (t *transport) stream(id uint32) *stream {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.streams[id]
}

func (t *transport) maxdata() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.maxData
}

// stream is one open service stream, seen from the service as an
// io.ReadWriteCloser.
type stream struct {
	t             *transport
	local, remote uint32

	mu   sync.Mutex
	cond *sync.Cond
	buf  []byte
	eof  bool

	ack       chan struct{}
	done      chan struct{}
	endOnce   sync.Once
	closeOnce sync.Once
}

func newStream(t *transport, local, remote uint32) *stream {
	s := &stream{t: t, local: local, remote: remote, ack: make(chan struct{}, 1), done: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	return s
}

func (s *stream) put(b []byte) {
	s.mu.Lock()
	s.buf = append(s.buf, b...)
	s.mu.Unlock()
	s.cond.Broadcast()
}

// ended marks the stream closed by the peer or by the connection's end.
func (s *stream) ended() {
	s.endOnce.Do(func() {
		s.mu.Lock()
		s.eof = true
		s.mu.Unlock()
		s.cond.Broadcast()
		close(s.done)
	})
}

func (s *stream) Read(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.buf) == 0 && !s.eof {
		s.cond.Wait()
	}
	if len(s.buf) == 0 {
		return 0, errStreamClosed
	}
	n := copy(p, s.buf)
	s.buf = s.buf[n:]
	return n, nil
}

// Write sends p in WRTE messages, each after the previous one's OKAY.
func (s *stream) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		n := min(len(p), s.t.maxdata())
		select {
		case <-s.done:
			return written, errStreamClosed
		default:
		}
		if err := s.t.send(message{cmd: cmdWRTE, arg0: s.local, arg1: s.remote, data: p[:n]}); err != nil {
			return written, err
		}
		select {
		case <-s.ack:
		case <-s.done:
			return written, errStreamClosed
		}
		written += n
		p = p[n:]
	}
	return written, nil
}

// Close closes the stream from the device's side.
func (s *stream) Close() error {
	s.closeOnce.Do(func() {
		s.t.mu.Lock()
		_, open := s.t.streams[s.local]
		delete(s.t.streams, s.local)
		s.t.mu.Unlock()
		if open {
			s.t.send(message{cmd: cmdCLSE, arg0: s.local, arg1: s.remote})
		}
		s.ended()
	})
	return nil
}
