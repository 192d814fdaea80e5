"""Every Celery task name, in one place: the backend publishes by these names (hitcurve.core.tasks)
and the worker registers, schedules and re-enqueues under them (hitcurve_worker). A plain module
with no imports, so the beat schedule can read it without settings."""

# published by the backend after a commit
PROCESS_SNAPSHOT = "hitcurve.process_snapshot"
PROCESS_TRACE_CHUNK = "hitcurve.process_trace_chunk"
RUN_SIMULATION = "hitcurve.run_simulation"

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
