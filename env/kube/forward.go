package kube

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

// forward is a port-forward to a pod's guest port through the API
// server: a local listener on 127.0.0.1 whose connections reach the pod.
type forward struct {
	port int // the local port
	stop chan struct{}
	done chan error // ForwardPorts' end
}

// Forward starts a port-forward to the pod's guest port, as kubectl
// port-forward does: over a WebSocket, or SPDY where the API server
// refuses it.
func (c *Cluster) Forward(pod string) (*forward, error) {
	if c.Config == nil {
		return nil, errors.New("port-forward needs a real cluster's configuration")
	}
	u := c.Client.CoreV1().RESTClient().Post().Resource("pods").Namespace(c.Namespace).Name(pod).SubResource("portforward").URL()
	transport, upgrader, err := spdy.RoundTripperFor(c.Config)
	if err != nil {
		return nil, err
	}
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
	ws, err := portforward.NewSPDYOverWebsocketDialer(u, c.Config)
	if err != nil {
		return nil, err
	}
	dialer = portforward.NewFallbackDialer(ws, dialer, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	f := &forward{stop: make(chan struct{}), done: make(chan error, 1)}
	ready := make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{"0:" + strconv.Itoa(GuestPort)}, f.stop, ready, io.Discard, io.Discard)
	if err != nil {
		return nil, err
	}
	go func() { f.done <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-f.done:
		return nil, fmt.Errorf("port-forward to pod %s/%s: %w", c.Namespace, pod, err)
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) == 0 {
		close(f.stop)
		return nil, fmt.Errorf("port-forward to pod %s/%s: no local port (%v)", c.Namespace, pod, err)
	}
	f.port = int(ports[0].Local)
	return f, nil
}

// Close stops the forward.
func (f *forward) Close() {
	select {
	case <-f.stop:
	default:
		close(f.stop)
	}
}
