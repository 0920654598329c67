package upstream

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
)

// tlsSettings are the values of git's TLS variables, which gitTLS reads.
func tlsSettings() string {
	v, noVerify := os.LookupEnv("GIT_SSL_NO_VERIFY")
	return fmt.Sprintf("%t %q %q %q", noVerify, v, os.Getenv("GIT_SSL_CAINFO"), os.Getenv("GIT_SSL_CAPATH"))
}

// gitTLS is the TLS configuration of an https listing: the one the git CLI's
// fetch after it uses, from the variables fetchEnv passes it. GIT_SSL_CAINFO
// (a file) and GIT_SSL_CAPATH (a directory) add certificate authorities to
// the system's. With a bundle named, Debian's git does the same (its libcurl
// keeps its default directory, /etc/ssl/certs); with a directory named it
// may trust only that one, and the listing still trusts the system's too,
// so that it never refuses an upstream the fetch would reach.
// GIT_SSL_NO_VERIFY, set to anything, verifies nothing. nil when none is
// set.
func gitTLS() (*tls.Config, error) {
	if _, ok := os.LookupEnv("GIT_SSL_NO_VERIFY"); ok {
		// What the user asked git for: the fetch verifies nothing either.
		return &tls.Config{InsecureSkipVerify: true}, nil
	}
	cainfo, capath := os.Getenv("GIT_SSL_CAINFO"), os.Getenv("GIT_SSL_CAPATH")
	if cainfo == "" && capath == "" {
		return nil, nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if cainfo != "" {
		pem, err := os.ReadFile(cainfo)
		if err != nil {
			return nil, fmt.Errorf("the certificates git is given: %w", err)
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("GIT_SSL_CAINFO: %s holds no PEM certificate", cainfo)
		}
	}
	if capath != "" {
		entries, err := os.ReadDir(capath)
		if err != nil {
			return nil, fmt.Errorf("GIT_SSL_CAPATH: %w", err)
		}
		// git's libcurl reads every certificate in the directory (GnuTLS);
		// OpenSSL's hashed names are links to them. Other files hold none.
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			pem, err := os.ReadFile(filepath.Join(capath, e.Name()))
			if err != nil {
				return nil, fmt.Errorf("the certificates git is given: %w", err)
			}
			pool.AppendCertsFromPEM(pem)
		}
	}
	return &tls.Config{RootCAs: pool}, nil
}
