"""Sizing for money: the total monthly cost of a cache at each size (model.py, pure), the
cost-optimal size with its band and knowledge state from a sizing Basis (answer.py, pure), what a
miss costs and how many reads a subject serves (prices.py, from the database), and the managed
node types (catalogue.py over the dated node_types.json)."""
