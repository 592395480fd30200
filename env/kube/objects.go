package kube

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/proctor-eval/proctor/env/kube/kubespec"
	"github.com/proctor-eval/proctor/env/remote"
)

// Labels every object a run makes carries, so that one selector finds
// them all (proctor kube clean).
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelName      = "app.kubernetes.io/name"
	LabelRun       = "proctor.dev/run"
	LabelIndex     = "proctor.dev/pod"
	managedBy      = "proctor"
	guestName      = "proctor-guest"
)

// The guest daemon's port and where the run's secret is mounted.
const (
	GuestPort  = 7400
	secretPath = "/var/run/proctor"
	// gracePeriod is the pods' termination grace: the daemon stops its
	// desktop in well under it.
	gracePeriod = 2
)

// Run is one run's identity on the cluster: its id, the token its guest
// daemons accept, and the TLS key pair they serve, whose certificate the
// runner pins. Each run makes its own.
type Run struct {
	ID          string
	Token       string
	CertPEM     []byte
	KeyPEM      []byte
	Fingerprint string // of the certificate, as remote.Target pins it
}

// NewRun makes a run's id, token and key pair.
func NewRun() (*Run, error) {
	id := make([]byte, 4)
	tok := make([]byte, 24)
	if _, err := rand.Read(id); err != nil {
		return nil, err
	}
	if _, err := rand.Read(tok); err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "proctor guest " + hex.EncodeToString(id)},
		// The runner pins the certificate and reads neither its dates nor
		// its names: pods are reached by a forwarded port or an address
		// known only once they run.
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(0, 0, 30),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("make the guests' certificate: %w", err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &Run{
		ID:          hex.EncodeToString(id),
		Token:       hex.EncodeToString(tok),
		CertPEM:     pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:      pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}),
		Fingerprint: remote.Fingerprint(der),
	}, nil
}

// Labels are the labels of the run's objects.
func (r *Run) Labels() map[string]string {
	return map[string]string{LabelManagedBy: managedBy, LabelName: guestName, LabelRun: r.ID}
}

// Selector selects the run's objects.
func (r *Run) Selector() string { return labels.SelectorFromSet(r.Labels()).String() }

// ManagedSelector selects every object any run made (and not those of
// the warm pools, which outlive runs).
func ManagedSelector() string {
	return labels.SelectorFromSet(map[string]string{LabelManagedBy: managedBy, LabelName: guestName}).String() + ",!" + LabelPool
}

// SecretName is the name of the run's secret, which also owns its pods.
func (r *Run) SecretName() string { return "proctor-" + r.ID }

// PodName is the name of the run's i-th pod, from 1.
func (r *Run) PodName(i int) string { return "proctor-" + r.ID + "-" + strconv.Itoa(i) }

// Secret is the run's secret: the token and the key pair, for the pods
// to mount.
func (r *Run) Secret(ns string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: r.SecretName(), Namespace: ns, Labels: r.Labels()},
		Type:       corev1.SecretTypeOpaque,
		Data: map[string][]byte{
			"token":   []byte(r.Token),
			"tls.crt": r.CertPEM,
			"tls.key": r.KeyPEM,
		},
	}
}

// Pod is the run's i-th guest pod as spec asks, owned by the run's
// secret (owner, as created), so that deleting the secret removes the
// pods wherever a garbage collector runs.
func (r *Run) Pod(ns string, i int, s Spec, owner *corev1.Secret) *corev1.Pod {
	lbl := r.Labels()
	lbl[LabelIndex] = strconv.Itoa(i)
	res := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: s.CPU, corev1.ResourceMemory: s.Memory},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: s.MemoryLimit},
	}
	if !s.CPULimit.IsZero() {
		res.Limits[corev1.ResourceCPU] = s.CPULimit
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: r.PodName(i), Namespace: ns, Labels: lbl},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: new(int64(gracePeriod)),
			AutomountServiceAccountToken:  new(false),
			EnableServiceLinks:            new(false),
			NodeSelector:                  s.NodeSelector,
			Tolerations:                   tolerations(s.Tolerations),
			Containers: []corev1.Container{{
				Name:            "guest",
				Image:           s.Image,
				ImagePullPolicy: corev1.PullPolicy(s.PullPolicy),
				Command: []string{"proctor", "guest", "--local",
					"--listen", "0.0.0.0:" + strconv.Itoa(GuestPort),
					"--size", strconv.Itoa(s.Size.W) + "x" + strconv.Itoa(s.Size.H),
					"--token-file", secretPath + "/token",
					"--tls-cert", secretPath + "/tls.crt",
					"--tls-key", secretPath + "/tls.key"},
				Ports: []corev1.ContainerPort{{Name: "guest", ContainerPort: GuestPort, Protocol: corev1.ProtocolTCP}},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:     corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(GuestPort)}},
					PeriodSeconds:    2,
					FailureThreshold: 3,
				},
				Resources:    res,
				VolumeMounts: []corev1.VolumeMount{{Name: "proctor", MountPath: secretPath, ReadOnly: true}},
				// A guest that fails says why in its last log lines: the
				// kubelet puts them in the container's status, where the
				// run's error quotes them.
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
			}},
			Volumes: []corev1.Volume{{Name: "proctor", VolumeSource: corev1.VolumeSource{
				Secret: &corev1.SecretVolumeSource{SecretName: r.SecretName(), DefaultMode: new(int32(0o400))},
			}}},
		},
	}
	if s.RuntimeClass != "" {
		p.Spec.RuntimeClassName = new(s.RuntimeClass)
	}
	if owner != nil && owner.UID != "" {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Secret", Name: owner.Name, UID: owner.UID}}
	}
	return p
}

// tolerations are the spec's tolerations as a pod's.
func tolerations(ts []kubespec.Toleration) []corev1.Toleration {
	var out []corev1.Toleration
	for _, t := range ts {
		out = append(out, corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOperator(t.Operator), Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}
	return out
}
