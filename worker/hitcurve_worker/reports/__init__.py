"""Weekly e-mail reports, the worker's part: dispatch and send (tasks.py, schedule.py) and a
preview command (__main__.py). What a report says and how it is rendered live in hitcurve.reports
(backend/hitcurve/reports/README.md)."""
