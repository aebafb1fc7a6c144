"""Leaves every layer may use; none imports another layer of the package: ``schema`` (vetting a
server's schemas), ``plainschema``, ``patterns`` (bounded regular expressions), ``redact`` (secrets
masked), ``sanitise`` (server text), ``coerce`` (edited values), ``headers``, ``sync`` (the sync
loop), ``pace`` (giving the event loop turns), ``buildcache`` (a single-flight cache)."""
