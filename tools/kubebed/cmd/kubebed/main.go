// Command kubebed starts a Kubernetes test bed on this machine's loopback:
// etcd, kube-apiserver, kube-scheduler and stand-in kubelets (the
// binaries build.sh builds), with certificates made here, RBAC on, and an
// administrator's kubeconfig. It runs until SIGINT or SIGTERM, then
// deletes its nodes and stops everything it started; its children die
// with it if it is killed.
//
// Usage:
//
//	kubebed --dir DIR --bin BINDIR [--nodes 2] [--path PODPATH] [--images a,b] [--runner process|podman]
//
// With --runner podman the nodes run pods as podman containers of images
// in podman's store (standin-kubelet --runner podman).
//
// It writes DIR/kubeconfig, then DIR/ready once the API server answers and
// every node is Ready, and prints "ready KUBECONFIG=DIR/kubeconfig".
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/big"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	var (
		dir     = flag.String("dir", "", "folder for the bed's certificates, data, logs and kubeconfig (required)")
		bin     = flag.String("bin", "", "folder holding etcd, kube-apiserver, kube-scheduler and standin-kubelet (required)")
		nodes   = flag.Int("nodes", 1, "stand-in nodes to start")
		podPath = flag.String("path", "", "folders first on the pods' PATH (where their commands are)")
		images  = flag.String("images", "", "comma-separated images the nodes have (default: every image)")
		cpu     = flag.String("node-cpu", "8", "CPU capacity of each node")
		memory  = flag.String("node-memory", "16Gi", "memory capacity of each node")
		runner  = flag.String("runner", "process", "how the nodes run pods: process or podman")
	)
	flag.Parse()
	if *dir == "" || *bin == "" {
		log.Fatal("give --dir and --bin")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	b := &bed{dir: *dir, bin: *bin, runner: *runner}
	err := b.up(ctx, *nodes, *podPath, *images, *cpu, *memory)
	if err == nil {
		fmt.Printf("ready KUBECONFIG=%s\n", filepath.Join(*dir, "kubeconfig"))
		<-ctx.Done()
	}
	b.down()
	if err != nil {
		log.Fatal(err)
	}
}

type bed struct {
	dir, bin string
	runner   string      // the stand-in kubelets' --runner
	procs    []*exec.Cmd // in start order
	client   kubernetes.Interface
	nodes    []string
}

func (b *bed) up(ctx context.Context, nodes int, podPath, images, cpu, memory string) error {
	pki := filepath.Join(b.dir, "pki")
	for _, d := range []string{pki, filepath.Join(b.dir, "logs")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	os.Remove(filepath.Join(b.dir, "ready"))
	if err := makePKI(pki); err != nil {
		return err
	}
	ports, err := freePorts(3 + nodes)
	if err != nil {
		return err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	apiPort := ports[2]
	os.RemoveAll(filepath.Join(b.dir, "etcd"))
	if err := b.start("etcd", "--name=bed", "--data-dir="+filepath.Join(b.dir, "etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=bed="+peerURL, "--unsafe-no-fsync", "--log-level=warn"); err != nil {
		return err
	}
	p := func(name string) string { return filepath.Join(pki, name) }
	if err := b.start("kube-apiserver",
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port="+strconv.Itoa(apiPort),
		"--tls-cert-file="+p("apiserver.crt"), "--tls-private-key-file="+p("apiserver.key"),
		"--client-ca-file="+p("ca.crt"),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+p("sa.pub"), "--service-account-signing-key-file="+p("sa.key"),
		"--service-cluster-ip-range=10.96.0.0/24",
		"--authorization-mode=RBAC",
		// No controller manager makes the namespaces' default service
		// accounts, nor takes off the not-ready taint that
		// TaintNodesByCondition puts on every new node.
		"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
		// The advertised address is loopback.
		"--endpoint-reconciler-type=none",
		"--kubelet-preferred-address-types=InternalIP",
		"--allow-privileged=true"); err != nil {
		return err
	}
	kubeconfig := filepath.Join(b.dir, "kubeconfig")
	if err := writeKubeconfig(kubeconfig, pki, "https://127.0.0.1:"+strconv.Itoa(apiPort)); err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 100, 200
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	b.client = client
	if err := b.waitFor(ctx, time.Minute, "the API server to be ready", func() bool {
		body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil && string(body) == "ok"
	}); err != nil {
		return err
	}
	if err := b.start("kube-scheduler", "--kubeconfig="+kubeconfig, "--leader-elect=false",
		"--secure-port=0", "--authentication-kubeconfig="+kubeconfig, "--authorization-kubeconfig="+kubeconfig); err != nil {
		return err
	}
	for i := range nodes {
		name := fmt.Sprintf("node-%d", i+1)
		b.nodes = append(b.nodes, name)
		if err := b.start("standin-kubelet", "--kubeconfig="+kubeconfig, "--node-name="+name,
			"--listen=127.0.0.1:"+strconv.Itoa(ports[3+i]), "--dir="+filepath.Join(b.dir, name),
			"--path="+podPath, "--images="+images, "--cpu="+cpu, "--memory="+memory, "--runner="+b.runner); err != nil {
			return err
		}
	}
	if err := b.waitFor(ctx, time.Minute, "the nodes to be Ready", func() bool {
		list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		ready := 0
		for _, n := range list.Items {
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		return ready == nodes
	}); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(b.dir, "ready"), []byte(kubeconfig+"\n"), 0o644)
}

// start starts one of the bed's programs, logging to DIR/logs/NAME.log.
func (b *bed) start(name string, args ...string) error {
	logName := name
	for _, a := range args {
		if len(a) > 12 && a[:12] == "--node-name=" {
			logName = a[12:]
		}
	}
	f, err := os.Create(filepath.Join(b.dir, "logs", logName+".log"))
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.Command(filepath.Join(b.bin, name), args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	b.procs = append(b.procs, cmd)
	go cmd.Wait()
	return nil
}

// waitFor polls ok until it holds, for at most limit.
func (b *bed) waitFor(ctx context.Context, limit time.Duration, what string, ok func() bool) error {
	deadline := time.Now().Add(limit)
	for !ok() {
		for _, c := range b.procs {
			if c.ProcessState != nil {
				return fmt.Errorf("%s ended while waiting for %s (%s): see %s", filepath.Base(c.Path), what, c.ProcessState, filepath.Join(b.dir, "logs"))
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no %s after %s: see %s", what, limit, filepath.Join(b.dir, "logs"))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return nil
}

// down deletes the bed's nodes (a stopped stand-in node would stay Ready
// with no node controller) and stops its programs, last started first.
func (b *bed) down() {
	if b.client != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		for _, n := range b.nodes {
			b.client.CoreV1().Nodes().Delete(ctx, n, metav1.DeleteOptions{})
		}
		cancel()
	}
	for i := len(b.procs) - 1; i >= 0; i-- {
		c := b.procs[i]
		c.Process.Signal(syscall.SIGTERM)
		deadline := time.Now().Add(10 * time.Second)
		for c.ProcessState == nil && syscall.Kill(c.Process.Pid, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	}
}

// freePorts returns n ports free on 127.0.0.1 now.
func freePorts(n int) ([]int, error) {
	var out []int
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

// makePKI writes the bed's certificate authority, the API server's
// serving certificate, the administrator's client certificate (group
// system:masters) and the service-account signing key.
func makePKI(dir string) error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubebed-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(1, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true, IsCA: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	if err := writeCert(dir, "ca", caDER, caKey); err != nil {
		return err
	}
	leaf := func(name string, serial int64, tmpl *x509.Certificate) error {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		tmpl.SerialNumber = big.NewInt(serial)
		tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.AddDate(1, 0, 0)
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return err
		}
		return writeCert(dir, name, der, key)
	}
	if err := leaf("apiserver", 2, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
	}); err != nil {
		return err
	}
	if err := leaf("admin", 3, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kubebed-admin", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}); err != nil {
		return err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	der, err := x509.MarshalECPrivateKey(saKey)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "sa.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644)
}

func writeCert(dir, name string, der []byte, key *ecdsa.PrivateKey) error {
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, name+".crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name+".key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
}

// writeKubeconfig writes the administrator's kubeconfig, context "kubebed".
func writeKubeconfig(path, pki, server string) error {
	read := func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(pki, name)) }
	ca, err := read("ca.crt")
	if err != nil {
		return err
	}
	cert, err := read("admin.crt")
	if err != nil {
		return err
	}
	key, err := read("admin.key")
	if err != nil {
		return err
	}
	cfg := clientcmdapiConfig(server, ca, cert, key)
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return errors.Join(errors.New("write the kubeconfig"), err)
	}
	return nil
}
