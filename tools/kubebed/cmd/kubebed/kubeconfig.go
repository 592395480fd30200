package main

import clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

// clientcmdapiConfig is a kubeconfig with one cluster, user and context,
// all named "kubebed", the credentials inline.
func clientcmdapiConfig(server string, ca, cert, key []byte) *clientcmdapi.Config {
	c := clientcmdapi.NewConfig()
	c.Clusters["kubebed"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	c.AuthInfos["kubebed"] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	c.Contexts["kubebed"] = &clientcmdapi.Context{Cluster: "kubebed", AuthInfo: "kubebed", Namespace: "default"}
	c.CurrentContext = "kubebed"
	return c
}
