// Package image builds a container image from a patched tree (buildah,
// docker buildx, or natively with go-containerregistry) and publishes it to
// a registry or an OCI layout, annotated with its provenance.
package image
