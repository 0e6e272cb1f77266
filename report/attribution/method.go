package attribution

// MethodText states how the report decides what ran out and what each failure is blamed on;
// report.md prints it under "What ran out", so every sentence there can be read against it.
const MethodText = "A resource **ran out** when it was at capacity with demand waiting for it (its waiting room held someone) " +
	"or refused by it (its rejection counter grew, or a rejection was charged to it) in the same sampling interval; " +
	"at capacity with nobody waiting or refused it is **full but sufficient**, listed but never the cause. " +
	"A waiting room without a count limit is judged by how far it grew and the wait it imposed against its bound " +
	"(a pool's max wait, else the client timeout). Each failure is blamed on the first of: " +
	"(1) the target's own word: the pool, queue, breaker or connection cap its headers name (a rejection only if that pool was at capacity then), " +
	"or the resource its outcome mapping names for the class (`outcomes.blame`); " +
	"(2) a resource serving the call that ran out while it was in flight (for a rejection, at capacity is enough: the rejection is the refused demand), " +
	"or a waiting room without a count that held someone while the call lasted its bound; " +
	"(3) the dependency, when the harness measured it on its side (dependencies.csv) answering late (about the timeout or longer) or not at all " +
	"(cut, refused, closed) in that interval; (4) a class detail of the target's own that names no resource; " +
	"otherwise it is **unexplained**, and a rejection reads \"the target (no resource at capacity; reason unknown)\". " +
	"Waiting that did not fail is explained too: an endpoint's successes' median time inside the target beyond its dependencies' " +
	"median answer, when at least 10 ms or a tenth of the timeout, with the resource they waited for."
