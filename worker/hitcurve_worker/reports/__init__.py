"""Weekly e-mail reports: content (content.py), Jinja2 rendering (render.py, templates/), SMTP
(mail.py, settings.py), Celery tasks (tasks.py) and a preview command (__main__.py)."""
