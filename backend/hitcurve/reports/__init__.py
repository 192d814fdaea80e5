"""The weekly e-mail report: what it says (content), its chart (chart), text and HTML (render,
templates/), the MIME message (mail) and their one composition (message), used by the API's
preview and test mail and by the worker's weekly send."""
