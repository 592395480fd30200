// Command standin-kubelet is a node of the test bed: a kubelet written on
// virtual-kubelet that runs each pod's container as a local process, in a
// network and mount namespace of its own (so that every pod has its own
// loopback, its own ports and /tmp, and its volumes at their mount paths).
//
// A pod is Running once its process has started and Ready once its
// readiness probe's port accepts a connection inside the pod's network
// namespace; the kubelet API's port-forward dials that port there too, as
// a container runtime does. Secret, ConfigMap and emptyDir volumes are
// mounted; an image not listed in --images fails to pull (ErrImagePull,
// then ImagePullBackOff), as on a node that cannot find it.
//
// With --runner podman each pod runs instead as a podman container (with
// runc) of its image, which must be in podman's local store (nothing is
// pulled; another image fails to pull with podman's message), with the
// same volumes, environment, memory limit, readiness probe, pod IP and
// port-forward.
//
// Usage:
//
//	standin-kubelet --kubeconfig admin.kubeconfig --node-name node-1 --listen 127.0.0.1:10250 --dir /tmp/node-1 --path /path/to/bin
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"flag"
	"fmt"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node"
	"github.com/virtual-kubelet/virtual-kubelet/node/nodeutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == podInitArg {
		podInit(os.Args[2:]) // never returns
	}
	var (
		kubeconfig = flag.String("kubeconfig", "", "kubeconfig of the API server")
		nodeName   = flag.String("node-name", "standin", "name of the node")
		listen     = flag.String("listen", "127.0.0.1:10250", "address of the kubelet API (logs, exec, port-forward)")
		dir        = flag.String("dir", "", "folder for the pods' volumes and logs (default: a temporary one)")
		path       = flag.String("path", "", "folders put first on the pods' PATH, colon-separated (where their commands are)")
		images     = flag.String("images", "", "comma-separated images this node has; another image fails to pull (default: every image)")
		cpu        = flag.String("cpu", "8", "CPU capacity of the node")
		memory     = flag.String("memory", "16Gi", "memory capacity of the node")
		maxPods    = flag.Int("pods", 110, "pod capacity of the node")
		runnerKind = flag.String("runner", "process", "how pods run: process (local processes; the image is only a name) or podman (containers of images in podman's store)")
	)
	flag.Parse()
	if *dir == "" {
		d, err := os.MkdirTemp("", "standin-"+*nodeName+"-")
		if err != nil {
			log.Fatal(err)
		}
		*dir = d
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		log.Fatalf("kubeconfig: %v", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		log.Fatal(err)
	}
	host, portStr, err := net.SplitHostPort(*listen)
	if err != nil {
		log.Fatalf("--listen: %v", err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		log.Fatalf("--listen: %v", err)
	}
	cert, err := selfSigned(host)
	if err != nil {
		log.Fatal(err)
	}
	runner := &processRunner{
		client: client,
		dir:    *dir,
		path:   *path,
		images: splitList(*images),
		pods:   map[string]*podProc{},
		host:   host,
	}
	switch *runnerKind {
	case "process":
	case "podman":
		pm, err := newPodman()
		if err != nil {
			log.Fatal(err)
		}
		runner.podman = pm
	default:
		log.Fatalf("--runner %s: want process or podman", *runnerKind)
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(*cpu),
		corev1.ResourceMemory: resource.MustParse(*memory),
		corev1.ResourcePods:   *resource.NewQuantity(int64(*maxPods), resource.DecimalSI),
	}
	mux := http.NewServeMux()
	n, err := nodeutil.NewNode(*nodeName,
		func(pc nodeutil.ProviderConfig) (nodeutil.Provider, node.NodeProvider, error) {
			pc.Node.Status.Capacity = capacity
			pc.Node.Status.Allocatable = capacity
			pc.Node.Status.Addresses = []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: host},
				{Type: corev1.NodeHostName, Address: *nodeName},
			}
			pc.Node.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(port)
			pc.Node.Status.NodeInfo.KubeletVersion = "v1.37.2-standin"
			pc.Node.Status.NodeInfo.OperatingSystem = "linux"
			pc.Node.Status.NodeInfo.Architecture = "amd64"
			pc.Node.Labels["kubernetes.io/os"] = "linux"
			return runner, nil, nil
		},
		nodeutil.WithClient(client),
		nodeutil.AttachProviderRoutes(mux),
		func(c *nodeutil.NodeConfig) error {
			c.HTTPListenAddr = *listen
			c.Handler = mux
			c.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
			c.NumWorkers = 4
			c.InformerResyncPeriod = 30 * time.Second
			return nil
		},
	)
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		if err := n.Run(ctx); err != nil && ctx.Err() == nil {
			log.Fatalf("node %s: %v", *nodeName, err)
		}
	}()
	if err := n.WaitReady(ctx, time.Minute); err != nil {
		log.Fatalf("node %s: %v", *nodeName, err)
	}
	log.Printf("node %s ready; kubelet API on https://%s; pods' files under %s", *nodeName, *listen, *dir)
	<-ctx.Done()
	runner.killAll()
	<-n.Done()
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// selfSigned makes the kubelet API's serving certificate; the API server
// does not check it unless told to (--kubelet-certificate-authority).
func selfSigned(host string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "standin-kubelet"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("kubelet certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
