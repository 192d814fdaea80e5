"""Every Celery task name, in one place: the backend publishes by these names (hitcurve.core.tasks)
and the worker registers, schedules and re-enqueues under them. A plain module
with no imports, so the beat schedule can read it without settings."""

# published by the backend after a commit
PROCESS_SNAPSHOT = "hitcurve.process_snapshot"
# one message for every snapshot pending at the time it runs: the API publishes it only
# when none is queued (DRAIN_QUEUED_KEY), so a burst of uploads is a few messages, not one each
DRAIN_SNAPSHOTS = "hitcurve.drain_snapshots"
PROCESS_TRACE_CHUNK = "hitcurve.process_trace_chunk"
RUN_SIMULATION = "hitcurve.run_simulation"
# a turn of the batch lane's per-organization fair queue (hitcurve.core.fairqueue): runs the next
# unit of work round-robin across organizations; simulations are queued this way
FAIR_TURN = "hitcurve.fair_turn"

# the worker's own
SIMULATE_POLICY = "hitcurve.simulate_policy"
FINISH_SIMULATION = "hitcurve.finish_simulation"
COMPUTE_POLICY_CORRECTION = "hitcurve.compute_policy_correction"
REQUEUE_STALE = "hitcurve.requeue_stale"
CHECK_SILENT_AGENTS = "hitcurve.check_silent_agents"
DOWNSAMPLE_HISTORY = "hitcurve.downsample_history"
DISPATCH_WEEKLY_REPORTS = "hitcurve.dispatch_weekly_reports"
SEND_REPORT = "hitcurve.send_report"
PING = "hitcurve.ping"
DELIVER_ALERT = "hitcurve.deliver_alert"

# The broker key that says a drain is queued (suffixed with the ingest queue's name): set (NX, with
# an expiry) by whoever publishes one, deleted by a drain when it starts and before the claim that
# ends it (hitcurve.core.tasks.request_drain / drain_started).
DRAIN_QUEUED_KEY = "hitcurve:drain:queued"

# Which queue each task runs on, in one place. Two lanes, so a burst of policy runs
# never delays curves: "ingest" (an upload's own work and the jobs that keep it flowing; small,
# one task per upload) and "batch" (simulations, corrections, reports, history maintenance;
# long, bursty). Settings.celery_ingest_queue / celery_batch_queue name the Redis lists; the
# backend publishes through hitcurve.core.tasks.queue_for, the worker routes by the same table.
INGEST = "ingest"
BATCH = "batch"
LANES: dict[str, str] = {
    PROCESS_SNAPSHOT: INGEST,
    DRAIN_SNAPSHOTS: INGEST,
    PROCESS_TRACE_CHUNK: INGEST,
    REQUEUE_STALE: INGEST,
    CHECK_SILENT_AGENTS: INGEST,
    PING: INGEST,
    RUN_SIMULATION: BATCH,
    FAIR_TURN: BATCH,
    SIMULATE_POLICY: BATCH,
    FINISH_SIMULATION: BATCH,
    COMPUTE_POLICY_CORRECTION: BATCH,
    DOWNSAMPLE_HISTORY: BATCH,
    DISPATCH_WEEKLY_REPORTS: BATCH,
    SEND_REPORT: BATCH,
    # alert notifications: a slow receiver (up to HITCURVE_WEBHOOK_TIMEOUT_S per attempt) must
    # never hold up uploads
    DELIVER_ALERT: BATCH,
}
