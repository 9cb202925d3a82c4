// Package emulator starts the local stand-ins for cloud services that tests run against, one
// per test, stopped when it ends: moto for AWS (DynamoDB, EventBridge, SQS, Secrets Manager)
// and the gcloud Firestore emulator.
//
//	emulator_unix.go   Moto, Firestore: launched in their own process group on a reserved port
//	emulator_other.go  elsewhere: only servers started by hand (FNGATE_MOTO_ENDPOINT,
//	                   FIRESTORE_EMULATOR_HOST)
//
// A missing tool skips the test with what to install, or fails it when
// FNGATE_REQUIRE_EMULATORS=1. A server given through FNGATE_MOTO_ENDPOINT should serialize its handling as Moto's own
// does (see serializedMoto), or tests of conditional writes can see two winners.
package emulator
