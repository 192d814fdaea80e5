"""The agent as operators install it: the release artefacts this Hitcurve serves and the install
block for each kind of cache host."""
