"""What the read endpoints show, composed from crud queries and the rules: the inventory
(overview), curves and their history (curves), Prometheus metric families (metrics). No HTTP."""
