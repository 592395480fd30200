module k8s.io/sample-controller
