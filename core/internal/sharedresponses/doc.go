// Package sharedresponses holds only tests: two gateway instances, each with its own client of
// one response store (memory, file, DynamoDB on moto, Firestore on its emulator), as a
// function's instances share DynamoDB or Firestore. It shows through the Responses door what
// no store's own conformance suite can: a response stored on one instance continued with
// previous_response_id, fetched and deleted on the other; an item_reference to one of its
// items resolved on the other; one the other's clock sees expired
// gone there; one too large for the store answered with store: false and found nowhere; a
// store that does not answer giving a 503 within its timeout, never a hang. The platforms'
// versions (two Lambda bootstraps, two Cloud Functions instances, two local server
// processes) are in functions/.
package sharedresponses
