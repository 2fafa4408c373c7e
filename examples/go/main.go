// The sluice Go client example: submits the README's spec, waits until
// records are committed, lists the datasource's segments and prints the
// supervisor's status. The stubs (package sluicev1) are generated from
// proto/sluice/v1/*.proto by run.sh at build time; none are committed.
//
// Exits 0 when everything worked; otherwise prints "error: <what>: <gRPC
// code>: <message>" on stderr and exits 1 (2 for bad flags).
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"
	"unicode"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	v1 "example.com/sluice/client/sluicev1"
)

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

var (
	supervisor    = flag.String("supervisor", envOr("SLUICE_SUPERVISOR", "127.0.0.1:7070"), "the supervisor's address ($SLUICE_SUPERVISOR)")
	tokenFile     = flag.String("auth_token_file", os.Getenv("SLUICE_AUTH_TOKEN_FILE"), "file with the bearer token to present ($SLUICE_AUTH_TOKEN_FILE; $SLUICE_AUTH_TOKEN holds the token itself)")
	tlsCA         = flag.String("tls_ca", "", "CA certificate (PEM): TLS instead of plaintext")
	tlsCert       = flag.String("tls_cert", "", "client certificate (PEM) for mutual TLS")
	tlsKey        = flag.String("tls_key", "", "client key (PEM) for mutual TLS")
	tlsServerName = flag.String("tls_server_name", "", "the name to verify the server certificate against (default: the address's host)")
	readme        = flag.String("readme", "README.md", "the README whose spec is submitted (the ```json block after \"A spec reads like Druid's\")")
	specFile      = flag.String("spec", "", "submit this spec file (JSON) instead of the README's")
	datasource    = flag.String("datasource", "", "override the spec's datasource")
	bootstrap     = flag.String("bootstrap", "", "override ioConfig.consumerProperties[\"bootstrap.servers\"]")
	taskDuration  = flag.String("task_duration", "", "override ioConfig.taskDuration (e.g. PT10S: groups commit at roll-over)")
	period        = flag.String("period", "", "override ioConfig.period")
	startDelay    = flag.String("start_delay", "", "override ioConfig.startDelay")
	timeout       = flag.Duration("timeout", 120*time.Second, "how long to wait for committed records")
)

// Code names as in the gRPC spec: UNAUTHENTICATED, PERMISSION_DENIED, ...
func codeName(err error) string {
	c := status.Code(err).String()
	var b strings.Builder
	for i, r := range c {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

func fail(what string, err error) {
	if s, ok := status.FromError(err); ok {
		fmt.Fprintf(os.Stderr, "error: %s: %s: %s\n", what, codeName(err), s.Message())
	} else {
		fmt.Fprintf(os.Stderr, "error: %s: %v\n", what, err)
	}
	os.Exit(1)
}

func readmeSpec(path string) ([]byte, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := regexp.MustCompile("(?s)A spec reads like Druid's.*?```json\n(.*?)```").FindSubmatch(text)
	if m == nil {
		return nil, fmt.Errorf("%s: no ```json block after \"A spec reads like Druid's\"", path)
	}
	return m[1], nil
}

// The spec as JSON with the flags' overrides applied.
func loadSpec() (*v1.SupervisorSpec, error) {
	var raw []byte
	var err error
	if *specFile != "" {
		raw, err = os.ReadFile(*specFile)
	} else {
		raw, err = readmeSpec(*readme)
	}
	if err != nil {
		return nil, err
	}
	var spec map[string]any
	if err := json.Unmarshal(raw, &spec); err != nil {
		return nil, fmt.Errorf("spec: %v", err)
	}
	if *datasource != "" {
		spec["datasource"] = *datasource
	}
	io, _ := spec["ioConfig"].(map[string]any)
	if io == nil {
		io = map[string]any{}
		spec["ioConfig"] = io
	}
	if *bootstrap != "" {
		props, _ := io["consumerProperties"].(map[string]any)
		if props == nil {
			props = map[string]any{}
			io["consumerProperties"] = props
		}
		props["bootstrap.servers"] = *bootstrap
	}
	for key, value := range map[string]string{"taskDuration": *taskDuration, "period": *period, "startDelay": *startDelay} {
		if value != "" {
			io[key] = value
		}
	}
	edited, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	out := &v1.SupervisorSpec{}
	if err := protojson.Unmarshal(edited, out); err != nil {
		return nil, fmt.Errorf("spec: %v", err)
	}
	return out, nil
}

func transport() (credentials.TransportCredentials, error) {
	if *tlsCA == "" {
		if *tlsCert != "" || *tlsKey != "" {
			return nil, fmt.Errorf("--tls_cert/--tls_key need --tls_ca")
		}
		return insecure.NewCredentials(), nil
	}
	pem, err := os.ReadFile(*tlsCA)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no PEM certificate", *tlsCA)
	}
	config := &tls.Config{RootCAs: pool, ServerName: *tlsServerName, MinVersion: tls.VersionTLS12}
	if *tlsCert != "" || *tlsKey != "" {
		pair, err := tls.LoadX509KeyPair(*tlsCert, *tlsKey)
		if err != nil {
			return nil, err
		}
		config.Certificates = []tls.Certificate{pair}
	}
	return credentials.NewTLS(config), nil
}

func token() (string, error) {
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			return "", err
		}
		return strings.TrimSpace(string(b)), nil
	}
	return strings.TrimSpace(os.Getenv("SLUICE_AUTH_TOKEN")), nil
}

func main() {
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintf(os.Stderr, "error: unexpected arguments %v\n", flag.Args())
		os.Exit(2)
	}
	spec, err := loadSpec()
	if err != nil {
		fail("spec", err)
	}
	creds, err := transport()
	if err != nil {
		fail("tls", err)
	}
	tok, err := token()
	if err != nil {
		fail("token", err)
	}
	conn, err := grpc.NewClient(*supervisor, grpc.WithTransportCredentials(creds))
	if err != nil {
		fail("connect "+*supervisor, err)
	}
	defer conn.Close()
	client := v1.NewSupervisorServiceClient(conn)
	ctx := context.Background()
	if tok != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok)
	}
	call := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, 30*time.Second) }
	ds := spec.GetDatasource()

	c, cancel := call()
	submitted, err := client.SubmitSupervisor(c, &v1.SubmitSupervisorRequest{Spec: spec})
	cancel()
	if err != nil {
		fail("SubmitSupervisor", err)
	}
	fmt.Printf("submitted datasource %s (spec version %d)\n", ds, submitted.GetVersion())

	// Committed records: the commit log's sequences, end - start per partition.
	deadline := time.Now().Add(*timeout)
	var committed int64
	for {
		c, cancel := call()
		log, err := client.GetCommitLog(c, &v1.GetCommitLogRequest{Datasource: ds})
		cancel()
		if err != nil && status.Code(err).String() != "Unavailable" {
			fail("GetCommitLog", err)
		}
		committed = 0
		for _, seq := range log.GetSequences() {
			for p, end := range seq.GetEndOffsets() {
				committed += end - seq.GetStartOffsets()[p]
			}
		}
		if committed > 0 {
			break
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "error: no records committed for %s within %v\n", ds, *timeout)
			os.Exit(1)
		}
		time.Sleep(500 * time.Millisecond)
	}
	fmt.Printf("committed records: %d\n", committed)

	c, cancel = call()
	segments, err := client.ListSegments(c, &v1.ListSegmentsRequest{Datasource: ds})
	cancel()
	if err != nil {
		fail("ListSegments", err)
	}
	fmt.Printf("segments: %d\n", len(segments.GetSegments()))
	for _, s := range segments.GetSegments() {
		fmt.Printf("  %s rows=%d bytes=%d\n", s.GetId(), s.GetNumRows(), s.GetSizeBytes())
	}

	c, cancel = call()
	st, err := client.GetSupervisorStatus(c, &v1.GetSupervisorStatusRequest{Datasource: ds})
	cancel()
	if err != nil {
		fail("GetSupervisorStatus", err)
	}
	fmt.Printf("status: %s\n", protojson.MarshalOptions{UseProtoNames: true}.Format(st.GetStatus()))
}
