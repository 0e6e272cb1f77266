// Package newcomer is issue 22's proof that a newcomer can test a service of their own with
// nothing but the docs: storefront/ is a small service written for it (not the built-in one,
// not the Node example), and newcomer_test.go follows docs/own-service.md's walkthrough as
// written: it builds bulkhead and the storefront, runs the walkthrough's bulkhead commands
// (`bulkhead new`, `validate`, `plan`), makes its edit for a one-minute first run, runs it and
// checks seed 004's P1 and P2 verdicts. A change to the walkthrough changes what the test runs.
package newcomer
